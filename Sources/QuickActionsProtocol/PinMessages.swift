import QuickActions

/// `Pin` names an item as `Trigger` does (but never by a pin: the daemon refuses `pinned`).
public typealias PinParameters = TriggerParameters

public struct PinnedItemInfo: Codable, Sendable, Equatable {
    public var identifier: String
    public var item: ShortcutItem
    public var state: PinnedItem.State
    /// `disabled` only: what choosing the launcher says.
    public var message: String?
    public var desktopFile: String?
    public init(identifier: String, item: ShortcutItem, state: PinnedItem.State, message: String? = nil, desktopFile: String? = nil) {
        self.identifier = identifier
        self.item = item
        self.state = state
        self.message = message
        self.desktopFile = desktopFile
    }
}

public struct PinReply: Codable, Sendable, Equatable {
    public var pin: PinnedItemInfo
    public init(pin: PinnedItemInfo) { self.pin = pin }
}

public struct UnpinParameters: Codable, Sendable, Equatable {
    public var identifier: String?
    public var position: Int?
    public var all: Bool?
    public init(identifier: String? = nil, position: Int? = nil, all: Bool? = nil) {
        self.identifier = identifier
        self.position = position
        self.all = all
    }
}

public struct UnpinReply: Codable, Sendable, Equatable {
    public var removed: [String]
    public init(removed: [String]) { self.removed = removed }
}

public struct PinsReply: Codable, Sendable, Equatable {
    public var pins: [PinnedItemInfo]
    public init(pins: [PinnedItemInfo]) { self.pins = pins }
}
