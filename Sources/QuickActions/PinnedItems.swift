/// One quick action pinned as a launcher of its own, as Android pins a shortcut to the Home
/// Screen: it outlives the displayed set, follows its contact's renames, and stays in place,
/// disabled, while the item behind it is gone.
public struct PinnedItem: Codable, Hashable, Sendable {
    /// Where the launcher's state comes from, and what choosing it does.
    public enum State: String, Codable, Hashable, Sendable {
        /// The item exists: choosing the launcher triggers it.
        case enabled
        /// The item is gone (its contact removed, the static item dropped): choosing the
        /// launcher shows `disabledMessage` and triggers nothing.
        case disabled
    }

    /// Stable across restarts and renames: made from the type and contact identifier only,
    /// of `A-Za-z0-9-`, so it is safe inside a desktop-file ID.
    public var identifier: String
    /// The item as it was last seen (a static item's title is its localization key).
    public var item: ShortcutItem
    /// Whether the item behind the pin exists.
    public var state: State

    /// A pin with each field, enabled unless told.
    public init(identifier: String, item: ShortcutItem, state: State = .enabled) {
        self.identifier = identifier
        self.item = item
        self.state = state
    }

    /// The identifier of the pin for an item: its type and, for a favorite, its contact.
    public static func identifier(for item: ShortcutItem) -> String {
        DesktopActionIdentifier.stem(type: item.type, contactIdentifier: item.contactIdentifier)
    }

    /// What a person is told when they choose a disabled pin.
    public var disabledMessage: String {
        item.contactIdentifier == nil
            ? "The app no longer offers this quick action."
            : "This contact is no longer in your contacts."
    }
}

/// The pins of one app and every rule that changes them: events in, actions out, no I/O. The
/// daemon persists the board with the state and writes one desktop entry per pin.
public struct PinBoard: Codable, Hashable, Sendable {
    /// The pins, in the order they were made.
    public private(set) var pins: [PinnedItem]

    /// A board holding `pins`.
    public init(pins: [PinnedItem] = []) {
        self.pins = pins
    }

    /// What happens to the pins, as the daemon reports it.
    public enum Event: Hashable, Sendable {
        /// A person pins a displayed item (already resolved from its position or type).
        case pin(ShortcutItem)
        case unpin(identifier: String)
        /// `qactl unpin --all`, or the app's configuration (`DesktopFile=`) removed.
        case unpinAll
        /// What each pin's item is now, by pin identifier; a pin missing here has no item
        /// (its contact was removed, its static item dropped).
        case itemsResolved([String: ShortcutItem])
        /// Pins read back from their launchers by a daemon that starts without its state (none
        /// yet, or moved aside as corrupt): each launcher is a pin the person made, and nothing
        /// proves it stale, so the board takes it rather than its launcher being removed.
        case adopt([PinnedItem])
    }

    /// What the daemon must do to the pins' launchers after an event.
    public enum Action: Hashable, Sendable {
        /// A new pin, or one whose title, icon or state changed: its launcher is (re)written.
        case write(PinnedItem)
        /// A pin removed: its launcher goes.
        case remove(identifier: String)
    }

    /// Why an event changed nothing.
    public enum Refusal: Error, Hashable, Sendable {
        case noSuchPin(String)
    }

    /// The pin with `identifier`, if there is one.
    public func pin(identifier: String) -> PinnedItem? {
        pins.first { $0.identifier == identifier }
    }

    /// The transition for `event`: the board changes, and each action names what its
    /// launchers must follow. An empty list: nothing changed.
    public mutating func handle(_ event: Event) -> Result<[Action], Refusal> {
        switch event {
        case .pin(let item):
            let identifier = PinnedItem.identifier(for: item)
            let pinned = PinnedItem(identifier: identifier, item: item)
            if let offset = pins.firstIndex(where: { $0.identifier == identifier }) {
                // Pinning again refreshes it (and enables it: the item is displayed, so it exists).
                guard pins[offset] != pinned else { return .success([]) }
                pins[offset] = pinned
            } else {
                pins.append(pinned)
            }
            return .success([.write(pinned)])
        case .unpin(let identifier):
            guard let offset = pins.firstIndex(where: { $0.identifier == identifier }) else { return .failure(.noSuchPin(identifier)) }
            pins.remove(at: offset)
            return .success([.remove(identifier: identifier)])
        case .unpinAll:
            defer { pins = [] }
            return .success(pins.map { .remove(identifier: $0.identifier) })
        case .itemsResolved(let current):
            var actions: [Action] = []
            for offset in pins.indices {
                var pin = pins[offset]
                if let item = current[pin.identifier] {
                    pin.item = item
                    pin.state = .enabled
                } else {
                    // Disabled, with the last title it had, so the person still recognises it.
                    pin.state = .disabled
                }
                guard pin != pins[offset] else { continue }
                pins[offset] = pin
                actions.append(.write(pin))
            }
            return .success(actions)
        case .adopt(let found):
            var actions: [Action] = []
            for pin in found where pin.identifier == PinnedItem.identifier(for: pin.item) && self.pin(identifier: pin.identifier) == nil {
                pins.append(pin)
                actions.append(.write(pin))
            }
            return .success(actions)
        }
    }
}

/// A pinned item's launcher: a desktop entry of its own, which docks and app grids show as a
/// separate icon, escaped by the same rules as the exported entry.
public enum PinnedDesktopEntry {
    /// The pin's identifier: what `qactd` finds its own pinned launchers by.
    public static let pinnedKey = "X-Qactd-Pinned"
    /// `enabled` or `disabled`, for people and tests reading the file.
    public static let stateKey = "X-Qactd-Pin-State"
    /// The item's type and, for a favorite, its contact: what the pin is, so a daemon that lost
    /// its state can take the pin back (`pin(from:)`) instead of removing its launcher.
    public static let typeKey = "X-Qactd-Pin-Type"
    /// The key holding a favorite's contact identifier.
    public static let contactKey = "X-Qactd-Pin-Contact"
    /// Between the app's ID and the pin's in a pinned launcher's file name.
    public static let infix = ".pinned."

    /// `<app-id>.pinned.<pin>.desktop`, beside the app's exported entry; nil when the app's
    /// desktop-file ID is no valid one.
    public static func fileName(appDesktopFileID: String, pin identifier: String) -> String? {
        guard DesktopFileID.isValid(appDesktopFileID) else { return nil }
        let app = appDesktopFileID.dropLast(DesktopFileID.suffix.count)
        return app + infix + identifier + DesktopFileID.suffix
    }

    /// The entry's text. `name` is the title as the person reads it (a static title already
    /// translated); `command` triggers the pin; a disabled pin says why in `Comment`.
    public static func compose(
        pin: PinnedItem, name: String, icon: String?, command: [String], socketPath: String
    ) -> String {
        var lines = [
            "[Desktop Entry]",
            "Type=Application",
            "Name=\(DesktopEntryEscaping.value(name))",
        ]
        let comment = pin.state == .disabled ? pin.disabledMessage : pin.item.subtitle
        if let comment, !comment.isEmpty { lines.append("Comment=\(DesktopEntryEscaping.value(comment))") }
        if let icon { lines.append("Icon=\(DesktopEntryEscaping.value(icon))") }
        lines += [
            "Exec=\(DesktopEntryEscaping.exec(command))",
            "Terminal=false",
            "StartupNotify=false",
            "\(DesktopEntryExport.generatedMarkKey)=true",
            "\(DesktopEntryExport.socketKey)=\(DesktopEntryEscaping.value(socketPath))",
            "\(pinnedKey)=\(pin.identifier)",
            "\(stateKey)=\(pin.state.rawValue)",
            "\(typeKey)=\(DesktopEntryEscaping.value(pin.item.type))",
        ]
        if let contact = pin.item.contactIdentifier { lines.append("\(contactKey)=\(DesktopEntryEscaping.value(contact))") }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The pin a launcher says it is: its identifier, the item's type and contact, and the name it
    /// shows as the title until the item is resolved again. nil when a key is missing (a launcher
    /// of an older version) or the identifier is not the one its type and contact make.
    public static func pin(from document: DesktopEntryDocument) -> PinnedItem? {
        guard let identifier = document.value(of: pinnedKey),
              let type = document.value(of: typeKey).map(DesktopEntryEscaping.unescapedValue), !type.isEmpty
        else { return nil }
        let contact = document.value(of: contactKey).map(DesktopEntryEscaping.unescapedValue)
        let title = document.value(of: "Name").map(DesktopEntryEscaping.unescapedValue) ?? type
        let item = ShortcutItem(
            type: type, title: title,
            userInfo: contact.map { [DynamicItemUserInfoKey.contactIdentifier: .string($0)] } ?? [:])
        guard PinnedItem.identifier(for: item) == identifier else { return nil }
        let state = document.value(of: stateKey).flatMap(PinnedItem.State.init(rawValue:)) ?? .enabled
        return PinnedItem(identifier: identifier, item: item, state: state)
    }
}
