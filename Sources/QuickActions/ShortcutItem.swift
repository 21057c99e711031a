/// An immutable quick action, as `UIApplicationShortcutItem` is. The dynamic set is always replaced as
/// a whole, never edited in place, so there are no mutating members.
///
/// Its fields live in one shared, immutable box: an item is copied far more often than made
/// (into each listing, the watchers' copy, the state handed to the writer, the texts kept for
/// the next encoding), and a copy of five separately counted fields costs five reference counts
/// per item per copy, which at a thousand favorites is a large part of an edit; a copy is one
/// reference, and two copies of one item compare equal without reading their fields.
public struct ShortcutItem: Hashable, Sendable {
    /// Internal for the JSON writer, which reads each field once where it lies.
    final class Fields: Sendable {
        let type: String
        let title: String
        let subtitle: String?
        let icon: ShortcutIcon?
        let userInfo: [String: PropertyListValue]

        init(type: String, title: String, subtitle: String?, icon: ShortcutIcon?, userInfo: [String: PropertyListValue]) {
            self.type = type
            self.title = title
            self.subtitle = subtitle
            self.icon = icon
            self.userInfo = userInfo
        }
    }

    let fields: Fields

    public var type: String { fields.type }
    public var title: String { fields.title }
    public var subtitle: String? { fields.subtitle }
    public var icon: ShortcutIcon? { fields.icon }
    public var userInfo: [String: PropertyListValue] { fields.userInfo }

    public init(
        type: String, title: String, subtitle: String? = nil, icon: ShortcutIcon? = nil,
        userInfo: [String: PropertyListValue] = [:]
    ) {
        fields = Fields(type: type, title: title, subtitle: subtitle, icon: icon, userInfo: userInfo)
    }

    public static func == (lhs: ShortcutItem, rhs: ShortcutItem) -> Bool {
        if lhs.fields === rhs.fields { return true }
        return lhs.type == rhs.type && lhs.title == rhs.title && lhs.subtitle == rhs.subtitle
            && lhs.icon == rhs.icon && lhs.userInfo == rhs.userInfo
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(type)
        hasher.combine(title)
        hasher.combine(subtitle)
        hasher.combine(icon)
        hasher.combine(userInfo)
    }
}
