extension SystemIconType {
    /// The prefix UIKit's Info.plist spelling carries (`UIApplicationShortcutIconTypeSearch`).
    public static let infoPlistPrefix = "UIApplicationShortcutIconType"

    /// Accepts `UIApplicationShortcutIconTypeSearch`, `Search` and `search`: the
    /// first letter's case is ignored because the prefixed spelling capitalises it.
    public init?(spelling: String) {
        var name = Substring(spelling)
        if name.hasPrefix(Self.infoPlistPrefix) { name = name.dropFirst(Self.infoPlistPrefix.count) }
        guard let first = name.first else { return nil }
        self.init(rawValue: first.lowercased() + name.dropFirst())
    }

    /// "compose, play, pause, …" for error messages that list the choices.
    public static var allSpellings: String {
        allCases.map(\.rawValue).joined(separator: ", ")
    }
}
