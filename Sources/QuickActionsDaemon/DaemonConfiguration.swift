import QuickActions

/// When the dynamic set is derived from the contacts index (SPEC §2.8).
enum RecomputePolicy: String, Equatable, Sendable, CaseIterable {
    case resignActive = "resign-active"
    case change
}

/// Where the effective configuration came from, for status output and log lines.
enum ConfigurationSource: Equatable, Sendable, CustomStringConvertible {
    case file(String)
    case builtInDefaults

    var description: String {
        switch self {
        case .file(let path): return "\"\(path)\""
        case .builtInDefaults: return "built-in defaults"
        }
    }
}

/// Every key of SPEC §5, validated and with paths already made absolute.
/// `ConfigurationKeys.all` says which key sets which field and its default.
struct DaemonConfiguration: Equatable, Sendable {
    var source: ConfigurationSource

    // [Contacts]
    var contactsDirectory: String
    var favoriteCategories: [String]
    var maxFileBytes: Int

    // [Shortcuts]
    var staticItemsPath: String
    var displayLimit: Int
    var favoriteType: String
    /// A `file:` icon's path is already absolute.
    var favoriteIcon: ShortcutIcon
    /// nil when unset, so the version from the static-items plist applies.
    var appVersion: String?
    /// Replaces `$(PRODUCT_BUNDLE_IDENTIFIER)` in static item types; empty until there is a
    /// desktop-file setting to derive it from (SPEC §5), which leaves the types as written.
    var bundleIdentifier: String
    var recompute: RecomputePolicy
    var recomputeSettle: Duration

    // [App]
    var launchCommand: [String]
    var responseTimeout: Duration

    // [Daemon]
    var socketPath: String
    var maxConnections: Int
    var maxMessageBytes: Int
}

extension DaemonConfiguration {
    /// Only a starting point for `ConfigurationKeys`, which overwrites every field with
    /// the user's value or the key's default before anyone reads it.
    init(placeholdersFor source: ConfigurationSource) {
        self.init(
            source: source, contactsDirectory: "", favoriteCategories: [], maxFileBytes: 0, staticItemsPath: "",
            displayLimit: 0, favoriteType: "", favoriteIcon: .symbol(""), appVersion: nil, bundleIdentifier: "",
            recompute: .resignActive,
            recomputeSettle: .zero, launchCommand: [], responseTimeout: .zero, socketPath: "", maxConnections: 0,
            maxMessageBytes: 0)
    }
}

/// The configuration plus the non-fatal findings made while reading it.
struct LoadedConfiguration: Equatable, Sendable {
    let configuration: DaemonConfiguration
    let warnings: [ConfigurationWarning]
}
