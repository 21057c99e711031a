import Contacts

/// How favorites become dynamic items; set from `[Shortcuts]` in the configuration.
public struct DynamicItemConfiguration: Hashable, Sendable {
    /// The type of every favorite's item (`[Shortcuts] FavoriteType=`).
    public var favoriteType: String
    /// The icon of every favorite's item (`[Shortcuts] FavoriteIcon=`); nil: none.
    public var favoriteIcon: ShortcutIcon?
    /// The order of the favorites' items (`UsageHistory.ordered`).
    public var order: FavoriteOrder
    /// How many favorites become items, the first in `order`; the rest are ranked out, as
    /// Android caps an app's dynamic shortcuts. Nil: every favorite.
    public var maxItems: Int?

    /// A configuration with each setting; the defaults are the configuration file's.
    public init(
        favoriteType: String = "FavoriteAction", favoriteIcon: ShortcutIcon? = .symbol("star.fill"), order: FavoriteOrder = .name,
        maxItems: Int? = nil
    ) {
        self.favoriteType = favoriteType
        self.favoriteIcon = favoriteIcon
        self.order = order
        self.maxItems = maxItems
    }

    /// The favorites that become items, in their items' order: ranked by `usage` when the
    /// order says so, then cut at `maxItems`.
    public func chosen(from favorites: [Contact], usage: UsageHistory) -> [Contact] {
        let ordered = usage.ordered(favorites, by: order, favoriteType: favoriteType)
        guard let maxItems, ordered.count > maxItems else { return ordered }
        return Array(ordered.prefix(max(0, maxItems)))
    }
}

/// The `userInfo` keys a dynamic item carries.
public enum DynamicItemUserInfoKey {
    /// The favorite's contact identifier.
    public static let contactIdentifier = "contactIdentifier"
    /// The app version the item was made for.
    public static let appVersion = "appVersion"
}

/// One item per favorite, in the order given (the contacts index already orders
/// favorites). Not capped: the display limit applies only when the set is shown,
/// as the seeds advise.
public func dynamicItems(for favorites: [Contact], appVersion: String, configuration: DynamicItemConfiguration) -> [ShortcutItem] {
    favorites.map { dynamicItem(for: $0, appVersion: appVersion, configuration: configuration) }
}

/// The dynamic item of one favorite.
public func dynamicItem(for contact: Contact, appVersion: String, configuration: DynamicItemConfiguration) -> ShortcutItem {
    ShortcutItem(
        type: configuration.favoriteType, title: contact.name, subtitle: contact.email, icon: configuration.favoriteIcon,
        userInfo: [DynamicItemUserInfoKey.contactIdentifier: .string(contact.identifier), DynamicItemUserInfoKey.appVersion: .string(appVersion)])
}

extension ShortcutItem {
    /// The contact a favorite item points at; nil for items without one.
    public var contactIdentifier: String? {
        guard case .string(let identifier)? = userInfo[DynamicItemUserInfoKey.contactIdentifier] else { return nil }
        return identifier
    }

    /// The key usage is counted under: the type, plus `/identifier` for a favorite,
    /// because every favorite shares one type.
    public var usageKey: String {
        contactIdentifier.map { "\(type)/\($0)" } ?? type
    }
}
