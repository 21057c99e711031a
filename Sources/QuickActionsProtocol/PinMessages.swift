import QuickActions

/// `Pin` names an item as `Trigger` does (but never by a pin: the daemon refuses `pinned`).
public typealias PinParameters = TriggerParameters

/// One pin: an item with a launcher of its own.
public struct PinnedItemInfo: Codable, Sendable, Equatable {
    /// Made from the item's type and contact identifier, so it stays the same across renames and restarts.
    public var identifier: String
    /// The pinned item.
    public var item: ShortcutItem
    /// `enabled`, or `disabled` while the item is gone.
    public var state: PinnedItem.State
    /// `disabled` only: what choosing the launcher says.
    public var message: String?
    /// The pin's desktop entry beside the exported one; nil while there is no folder to write to.
    public var desktopFile: String?
    /// A pin with each field.
    public init(identifier: String, item: ShortcutItem, state: PinnedItem.State, message: String? = nil, desktopFile: String? = nil) {
        self.identifier = identifier
        self.item = item
        self.state = state
        self.message = message
        self.desktopFile = desktopFile
    }
}

/// The reply of `Pin`.
public struct PinReply: Codable, Sendable, Equatable {
    /// The pin made or refreshed.
    public var pin: PinnedItemInfo
    /// A reply with `pin`.
    public init(pin: PinnedItemInfo) { self.pin = pin }
}

/// `Unpin`: one pin by identifier or by position, or every pin with `all`.
public struct UnpinParameters: Codable, Sendable, Equatable {
    /// The pin's identifier.
    public var identifier: String?
    /// The pin's 1-based position in `Pins`.
    public var position: Int?
    /// Every pin.
    public var all: Bool?
    /// Parameters naming the pin (or `all`).
    public init(identifier: String? = nil, position: Int? = nil, all: Bool? = nil) {
        self.identifier = identifier
        self.position = position
        self.all = all
    }
}

/// The reply of `Unpin`.
public struct UnpinReply: Codable, Sendable, Equatable {
    /// The identifiers of the pins removed.
    public var removed: [String]
    /// A reply with the identifiers removed.
    public init(removed: [String]) { self.removed = removed }
}

/// The reply of `Pins`.
public struct PinsReply: Codable, Sendable, Equatable {
    /// The pins, in the order they were made.
    public var pins: [PinnedItemInfo]
    /// A reply with `pins`.
    public init(pins: [PinnedItemInfo]) { self.pins = pins }
}
