import QuickActions

/// When the dynamic set is derived from the contacts index (SPEC §2.8).
public enum RecomputePolicy: String, Equatable, Sendable, CaseIterable {
    case resignActive = "resign-active"
    case change
}

/// Where the effective configuration came from, for status output and log lines.
public enum ConfigurationSource: Equatable, Sendable, CustomStringConvertible {
    case file(String)
    case builtInDefaults

    public var description: String {
        switch self {
        case .file(let path): return "\"\(path)\""
        case .builtInDefaults: return "built-in defaults"
        }
    }
}

/// Every key of SPEC §5, validated and with paths already made absolute.
/// `ConfigurationKeys.all` says which key sets which field and its default.
public struct DaemonConfiguration: Equatable, Sendable {
    public var source: ConfigurationSource

    // [Contacts]
    public var contactsDirectory: String
    public var favoriteCategories: [String]
    public var maxFileBytes: Int

    // [Shortcuts]
    public var staticItemsPath: String
    public var displayLimit: Int
    public var favoriteType: String
    /// A `file:` icon's path is already absolute.
    public var favoriteIcon: ShortcutIcon
    /// nil when unset, so the version from the static-items plist applies.
    public var appVersion: String?
    public var recompute: RecomputePolicy
    public var recomputeSettle: Duration

    // [App]
    public var launchCommand: [String]
    public var responseTimeout: Duration

    // [Daemon]
    public var socketPath: String
    public var maxConnections: Int
    public var maxMessageBytes: Int
}

extension DaemonConfiguration {
    /// Only a starting point for `ConfigurationKeys`, which overwrites every field with
    /// the user's value or the key's default before anyone reads it.
    init(placeholdersFor source: ConfigurationSource) {
        self.init(
            source: source, contactsDirectory: "", favoriteCategories: [], maxFileBytes: 0, staticItemsPath: "",
            displayLimit: 0, favoriteType: "", favoriteIcon: .symbol(""), appVersion: nil, recompute: .resignActive,
            recomputeSettle: .zero, launchCommand: [], responseTimeout: .zero, socketPath: "", maxConnections: 0,
            maxMessageBytes: 0)
    }
}

/// The configuration plus the non-fatal findings made while reading it.
public struct LoadedConfiguration: Equatable, Sendable {
    public let configuration: DaemonConfiguration
    public let warnings: [ConfigurationWarning]
}
