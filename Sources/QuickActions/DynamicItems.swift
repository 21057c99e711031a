import Contacts

/// How favorites become dynamic items; set from `[Shortcuts]` in the configuration.
public struct DynamicItemConfiguration: Hashable, Sendable {
    public var favoriteType: String
    public var favoriteIcon: ShortcutIcon?
    /// The order of the favorites' items (`UsageHistory.ordered`).
    public var order: FavoriteOrder
    /// How many favorites become items, the first in `order`; the rest are ranked out, as
    /// Android caps an app's dynamic shortcuts. Nil: every favorite.
    public var maxItems: Int?

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
    public static let contactIdentifier = "contactIdentifier"
    public static let appVersion = "appVersion"
}

/// Computes `count` values, the one at each index by `transform(index)`, on several threads
/// at once, in the order of their indices: the daemon, which has the threads, hands one to the
/// pure core for deriving a large set of items.
public typealias ParallelMap<Value> = (_ count: Int, _ transform: @escaping (Int) -> Value) -> [Value]

/// One item per favorite, in the order given (the contacts index already orders
/// favorites). Not capped: the display limit applies only when the set is shown,
/// as the seeds advise.
public func dynamicItems(for favorites: [Contact], appVersion: String, configuration: DynamicItemConfiguration) -> [ShortcutItem] {
    dynamicItems(for: favorites[...], appVersion: appVersion, configuration: configuration)
}

/// `dynamicItems(for:…)` in parts of `favoritesAPart` favorites, derived at once by
/// `parallelMap`, each part's items written as the state file holds them as soon as they are
/// made (`JSONTextWriter.dynamicItemsPart`; a part that cannot be written has its items and no
/// text): a new app version changes every item, and each costs a few allocations and a cache
/// miss for each of its contact's strings, which threads wait for side by side, then as much
/// again to write, which the state writer then need not do.
public func dynamicItemParts(
    for favorites: [Contact], appVersion: String, configuration: DynamicItemConfiguration, parallelMap: ParallelMap<ShortcutItemTexts>
) -> [ShortcutItemTexts] {
    parallelMap((favorites.count + favoritesAPart - 1) / favoritesAPart) { part in
        let start = part * favoritesAPart
        let items = dynamicItems(for: favorites[start..<min(favorites.count, start + favoritesAPart)], appVersion: appVersion, configuration: configuration)
        return (try? JSONTextWriter.dynamicItemsPart(items[...], first: part == 0, pretty: true)) ?? ShortcutItemTexts(itemsWithoutText: items)
    }
}

/// Favorites a part when a set is derived on several threads: small enough that the threads
/// end close together, large enough that handing a part over costs little beside it.
public let favoritesAPart = 64

private func dynamicItems(
    for favorites: ArraySlice<Contact>, appVersion: String, configuration: DynamicItemConfiguration
) -> [ShortcutItem] {
    // One `userInfo` made for the whole set and copied per item with only its contact set:
    // a dictionary literal per item allocated an array of pairs, hashed both keys and grew a
    // new dictionary, most of deriving a thousand items anew (as every new app version does).
    var userInfo = dynamicItemUserInfo(contactIdentifier: "", appVersion: appVersion)
    // Each contact's fields read where they lie: a copy of a contact retained and released
    // every one of its fields, those an item does not hold too.
    return favorites.withUnsafeBufferPointer { contacts in
        contacts.indices.map { index in
            userInfo[DynamicItemUserInfoKey.contactIdentifier] = .string(contacts[index].identifier)
            return ShortcutItem(type: configuration.favoriteType, title: contacts[index].name, subtitle: contacts[index].email,
                                icon: configuration.favoriteIcon, userInfo: userInfo)
        }
    }
}

/// The dynamic item of one favorite.
public func dynamicItem(for contact: Contact, appVersion: String, configuration: DynamicItemConfiguration) -> ShortcutItem {
    dynamicItem(for: contact, userInfo: dynamicItemUserInfo(contactIdentifier: contact.identifier, appVersion: appVersion),
                configuration: configuration)
}

private func dynamicItemUserInfo(contactIdentifier: String, appVersion: String) -> [String: PropertyListValue] {
    [
        DynamicItemUserInfoKey.contactIdentifier: .string(contactIdentifier),
        DynamicItemUserInfoKey.appVersion: .string(appVersion),
    ]
}

private func dynamicItem(for contact: Contact, userInfo: [String: PropertyListValue], configuration: DynamicItemConfiguration) -> ShortcutItem {
    ShortcutItem(type: configuration.favoriteType, title: contact.name, subtitle: contact.email, icon: configuration.favoriteIcon, userInfo: userInfo)
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
