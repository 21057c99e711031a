/// An immutable quick action, as `UIApplicationShortcutItem` is. The dynamic set is always replaced as
/// a whole, never edited in place, so there are no mutating members.
public struct ShortcutItem: Hashable, Sendable {
    /// Identifies the kind of action; favorites use the configured favorite type.
    public let type: String
    /// The title a person sees.
    public let title: String
    /// A second line under the title; nil: none.
    public let subtitle: String?
    /// The icon; nil: none.
    public let icon: ShortcutIcon?
    /// Property-list values for the app; favorites carry `contactIdentifier` and `appVersion`.
    public let userInfo: [String: PropertyListValue]

    /// An item with each field.
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
