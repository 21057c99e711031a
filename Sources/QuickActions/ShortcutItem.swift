/// An immutable quick action, as `UIApplicationShortcutItem` is. The dynamic set is always replaced as
/// a whole, never edited in place, so there are no mutating members.
///
/// Its fields live in one shared, immutable box: an item is copied far more often than made
/// (into each listing, the watchers' copy, the state handed to the writer), and a copy of five
/// separately counted fields costs five reference counts per item per copy, which at a thousand
/// favorites is a large part of an edit; a copy is one reference, and two copies of one item
/// compare equal without reading their fields.
public struct ShortcutItem: Hashable, Sendable {
    /// Internal for the JSON writer, which reads each field once where it lies.
    final class Fields: Sendable {
        let type: String
        let title: String
        let subtitle: String?
        let icon: ShortcutIcon?
        let userInfo: UserInfo

        init(type: String, title: String, subtitle: String?, icon: ShortcutIcon?, userInfo: UserInfo) {
            self.type = type
            self.title = title
            self.subtitle = subtitle
            self.icon = icon
            self.userInfo = userInfo
        }
    }

    /// The `userInfo` as held. A favorite's (exactly its contact's identifier and the app
    /// version, both strings) is its two strings: making, comparing and writing a thousand
    /// favorites' items then builds and hashes no dictionary. Every `userInfo` of that shape is
    /// held so, however the item was made, so equal items hold equal cases.
    enum UserInfo: Hashable, Sendable {
        case favorite(contactIdentifier: String, appVersion: String)
        case dictionary([String: PropertyListValue])

        init(_ dictionary: [String: PropertyListValue]) {
            if dictionary.count == 2,
               case .string(let contactIdentifier)? = dictionary[DynamicItemUserInfoKey.contactIdentifier],
               case .string(let appVersion)? = dictionary[DynamicItemUserInfoKey.appVersion] {
                self = .favorite(contactIdentifier: contactIdentifier, appVersion: appVersion)
            } else {
                self = .dictionary(dictionary)
            }
        }

        var dictionary: [String: PropertyListValue] {
            switch self {
            case .favorite(let contactIdentifier, let appVersion):
                [DynamicItemUserInfoKey.contactIdentifier: .string(contactIdentifier), DynamicItemUserInfoKey.appVersion: .string(appVersion)]
            case .dictionary(let dictionary): dictionary
            }
        }

        subscript(key: String) -> PropertyListValue? {
            switch self {
            case .favorite(let contactIdentifier, let appVersion):
                switch key {
                case DynamicItemUserInfoKey.contactIdentifier: .string(contactIdentifier)
                case DynamicItemUserInfoKey.appVersion: .string(appVersion)
                default: nil
                }
            case .dictionary(let dictionary): dictionary[key]
            }
        }
    }

    let fields: Fields

    public var type: String { fields.type }
    public var title: String { fields.title }
    public var subtitle: String? { fields.subtitle }
    public var icon: ShortcutIcon? { fields.icon }
    public var userInfo: [String: PropertyListValue] { fields.userInfo.dictionary }

    public init(
        type: String, title: String, subtitle: String? = nil, icon: ShortcutIcon? = nil,
        userInfo: [String: PropertyListValue] = [:]
    ) {
        self.init(type: type, title: title, subtitle: subtitle, icon: icon, userInfo: UserInfo(userInfo))
    }

    init(type: String, title: String, subtitle: String?, icon: ShortcutIcon?, userInfo: UserInfo) {
        fields = Fields(type: type, title: title, subtitle: subtitle, icon: icon, userInfo: userInfo)
    }

    public static func == (lhs: ShortcutItem, rhs: ShortcutItem) -> Bool {
        if lhs.fields === rhs.fields { return true }
        return lhs.type == rhs.type && lhs.title == rhs.title && lhs.subtitle == rhs.subtitle
            && lhs.icon == rhs.icon && lhs.fields.userInfo == rhs.fields.userInfo
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(type)
        hasher.combine(title)
        hasher.combine(subtitle)
        hasher.combine(icon)
        hasher.combine(fields.userInfo)
    }
}
