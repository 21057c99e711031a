/// An immutable quick action, as `UIApplicationShortcutItem` is. The dynamic set is always replaced as
/// a whole, never edited in place, so there are no mutating members.
public struct ShortcutItem: Hashable, Sendable {
    public let type: String
    public let title: String
    public let subtitle: String?
    public let icon: ShortcutIcon?
    public let userInfo: [String: PropertyListValue]

    public init(
        type: String, title: String, subtitle: String? = nil, icon: ShortcutIcon? = nil,
        userInfo: [String: PropertyListValue] = [:]
    ) {
        self.type = type
        self.title = title
        self.subtitle = subtitle
        self.icon = icon
        self.userInfo = userInfo
    }
}
