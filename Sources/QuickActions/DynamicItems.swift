import Contacts

/// How favorites become dynamic items; set from `[Shortcuts]` in the configuration.
public struct DynamicItemConfiguration: Hashable, Sendable {
    public var favoriteType: String
    public var favoriteIcon: ShortcutIcon?

    public init(favoriteType: String = "FavoriteAction", favoriteIcon: ShortcutIcon? = .symbol("star.fill")) {
        self.favoriteType = favoriteType
        self.favoriteIcon = favoriteIcon
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
/// as the seeds advise. With `parallelMap`, a large set is derived in parts of
/// `favoritesAPart` at once: each item costs a few allocations and a cache miss for each of
/// its contact's strings, which two threads wait for side by side.
public func dynamicItems(
    for favorites: [Contact], appVersion: String, configuration: DynamicItemConfiguration,
    parallelMap: ParallelMap<[ShortcutItem]>? = nil
) -> [ShortcutItem] {
    guard let parallelMap, favorites.count >= 4 * favoritesAPart else {
        return dynamicItems(for: favorites[...], appVersion: appVersion, configuration: configuration)
    }
    let parts = parallelMap((favorites.count + favoritesAPart - 1) / favoritesAPart) { part in
        let start = part * favoritesAPart
        return dynamicItems(for: favorites[start..<min(favorites.count, start + favoritesAPart)], appVersion: appVersion, configuration: configuration)
    }
    var items: [ShortcutItem] = []
    items.reserveCapacity(favorites.count)
    for part in parts { items += part }
    return items
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
    return favorites.map { contact in
        userInfo[DynamicItemUserInfoKey.contactIdentifier] = .string(contact.identifier)
        return dynamicItem(for: contact, userInfo: userInfo, configuration: configuration)
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
