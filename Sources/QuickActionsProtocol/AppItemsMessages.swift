import QuickActions

// The messages through which an app publishes quick actions of its own: `SetItems`,
// `PushItem`, `RemoveItems`, `ReportItemUsed` and `Items`. Each item is the model's own
// `ShortcutItem` (the IDL's `Item`), checked by `AppItemRules` when it arrives.

/// `SetItems`: the app's whole list, replacing the one before.
public struct SetItemsParameters: Codable, Sendable, Equatable {
    /// The app's items, in the order it wants them shown.
    public var items: [ShortcutItem]
    /// Parameters replacing the app's items with `items`.
    public init(items: [ShortcutItem]) { self.items = items }
}

/// `PushItem`: one item, put first.
public struct PushItemParameters: Codable, Sendable, Equatable {
    /// The item; one of the same type is replaced.
    public var item: ShortcutItem
    /// Parameters putting `item` first.
    public init(item: ShortcutItem) { self.item = item }
}

/// `RemoveItems`: the types of the items to remove.
public struct RemoveItemsParameters: Codable, Sendable, Equatable {
    /// The types to remove; a type the app does not have is passed over.
    public var types: [String]
    /// Parameters removing the items of these types.
    public init(types: [String]) { self.types = types }
}

/// `ReportItemUsed`: the type of the item the app just did the work of.
public struct ReportItemUsedParameters: Codable, Sendable, Equatable {
    /// The item's type.
    public var type: String
    /// Parameters reporting the item of `type` used.
    public init(type: String) { self.type = type }
}

/// The reply of `SetItems`, `PushItem` and `RemoveItems`.
public struct AppItemsReply: Codable, Sendable, Equatable {
    /// Whether the app's list differs from the one before (an unchanged list writes nothing).
    public var changed: Bool
    /// The generation of the quick-action set now.
    public var generation: UInt64
    /// How many items of its own the app has now.
    public var count: Int
    /// The types removed: by `RemoveItems`, or to make room for a pushed item.
    public var removed: [String]
    /// Whether the state file holds the change.
    public var persisted: Bool

    /// A reply with each field.
    public init(changed: Bool, generation: UInt64, count: Int, removed: [String], persisted: Bool) {
        self.changed = changed
        self.generation = generation
        self.count = count
        self.removed = removed
        self.persisted = persisted
    }
}

/// The reply of `Items`: the app's own items, in its order.
public struct ItemsReply: Codable, Sendable, Equatable {
    /// The app's items, in its order.
    public var items: [ShortcutItem]
    /// A reply with the app's items.
    public init(items: [ShortcutItem]) { self.items = items }
}

extension SetItemsParameters: BoundedParameters {
    /// The items' own limits are `AppItemRules`', whose error names the field.
    public var oversizedParameter: String? { nil }
}

extension PushItemParameters: BoundedParameters {
    /// Always nil: the item's own limits are checked by `AppItemRules`.
    public var oversizedParameter: String? { nil }
}

extension RemoveItemsParameters: BoundedParameters {
    /// At most as many types as an app could have, each within an identifier's bound.
    public var oversizedParameter: String? {
        guard types.count <= ParameterLimits.maxListedTypes,
              types.allSatisfy({ $0.utf8.count <= ParameterLimits.identifierBytes })
        else { return "types" }
        return nil
    }
}

extension ReportItemUsedParameters: BoundedParameters {
    /// `type` when it is longer than `ParameterLimits.identifierBytes`.
    public var oversizedParameter: String? { Self.name("type", of: type, ifOver: ParameterLimits.identifierBytes) }
}
