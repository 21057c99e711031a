/// Where an item came from. The raw values are the wire spelling (`source` in `List`).
public enum ShortcutSource: String, Hashable, Sendable, Codable {
    case `static` = "static"
    case dynamic = "dynamic"
}

/// One row of a listing: `position` is 1-based in the full list (static items in
/// file order, then dynamic items), and because the displayed items are always a
/// prefix, a displayed item's position is also its displayed position.
public struct ListedShortcut: Hashable, Sendable {
    /// The item.
    public var item: ShortcutItem
    /// Whether it is a static item or a dynamic one.
    public var source: ShortcutSource
    /// Whether it is within the display limit.
    public var displayed: Bool
    /// Its 1-based position in the full list (static items first).
    public var position: Int
    /// How much the item was used; nil when it never was, and in the launchers' copy.
    public var usage: ShortcutUsage?

    /// A row with each field.
    public init(item: ShortcutItem, source: ShortcutSource, displayed: Bool, position: Int, usage: ShortcutUsage? = nil) {
        self.item = item
        self.source = source
        self.displayed = displayed
        self.position = position
        self.usage = usage
    }
}

/// What the launcher shows: the static items first, then the dynamic ones, up to the limit.
public enum ShortcutListing {
    /// Every item, each marked displayed or not. Before the app's first launch
    /// only static items are displayed: iOS shows dynamic items only after the
    /// app has run and set them.
    public static func compose(
        staticItems: [ShortcutItem], dynamicItems: [ShortcutItem], launched: Bool, displayLimit: Int
    ) -> [ListedShortcut] {
        let limit = max(0, displayLimit)
        var listing: [ListedShortcut] = []
        listing.reserveCapacity(staticItems.count + dynamicItems.count)
        for item in staticItems {
            let position = listing.count + 1
            listing.append(ListedShortcut(item: item, source: .static, displayed: position <= limit, position: position))
        }
        for item in dynamicItems {
            let position = listing.count + 1
            listing.append(ListedShortcut(item: item, source: .dynamic, displayed: launched && position <= limit, position: position))
        }
        return listing
    }
}

/// A listing as `List` and `Watch` carry it: the generation the rows were composed from,
/// whether the app has launched (before that only static items are displayed), and the rows.
/// The model's value is also the wire message, so the two cannot drift apart.
public struct QuickActionsListing: Hashable, Sendable, Codable {
    /// The generation of the set listed.
    public var generation: UInt64
    /// Whether the app has sent its first lifecycle message.
    public var launched: Bool
    /// The rows, in display order.
    public var items: [ListedShortcut]

    /// A listing with each field.
    public init(generation: UInt64, launched: Bool, items: [ListedShortcut]) {
        self.generation = generation
        self.launched = launched
        self.items = items
    }
}
