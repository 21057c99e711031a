import QuickActions

/// When the dynamic set is derived from the contacts index.
enum RecomputePolicy: String, Equatable, Sendable, CaseIterable {
    case resignActive = "resign-active"
    case change
}

/// Where the favorites' quick actions are shown besides the socket: in the
/// exported desktop entry, which every launcher reads, or only in the live D-Bus quicklist.
enum LauncherDynamicItems: String, Equatable, Sendable, CaseIterable {
    case desktopEntry = "desktop-entry"
    case quicklist
}

/// Whether failures a person should see become desktop notifications.
enum FeedbackNotifications: String, Equatable, Sendable, CaseIterable {
    /// When a session bus has a notification server; otherwise logged only.
    case auto
    case off
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

/// Every key of qactd.conf(5), validated and with paths already made absolute.
/// `ConfigurationKeys.all` says which key sets which field and its default.
struct DaemonConfiguration: Equatable, Sendable {
    var source: ConfigurationSource

    // [Contacts]
    /// Empty: no contacts folder.
    var contactsDirectory: String
    var favoriteCategories: [String]
    var maxFileBytes: Int
    /// The Evolution Data Server address books read besides the directory.
    var evolution: EvolutionSelection

    // [Shortcuts]
    var staticItemsPath: String
    var displayLimit: Int
    var favoriteType: String
    /// A `file:` icon's path is already absolute.
    var favoriteIcon: ShortcutIcon
    /// nil when unset, so the version from the static-items plist applies.
    var appVersion: String?
    /// Replaces `$(PRODUCT_BUNDLE_IDENTIFIER)` in static item types; when unset, the
    /// desktop-file ID of `launcherDesktopFile` without ".desktop"; empty leaves the types as written.
    var bundleIdentifier: String
    var recompute: RecomputePolicy
    var recomputeSettle: Duration

    // [App]
    var launchCommand: [String]
    var responseTimeout: Duration

    // [Actions]
    /// Item type → the command that handles an item of that type instead of the app.
    var actions: [String: CommandTemplate] = [:]

    // [Feedback]
    var notifications: FeedbackNotifications = .auto

    // [Commands]
    /// How many `[Actions]` commands may run at once; another is refused until one ends.
    var maxRunningCommands = 16

    // [Launcher]
    /// A desktop-file ID, or an absolute path ending in ".desktop"; empty: nothing is exported.
    var launcherDesktopFile: String
    var launcherDynamicItems: LauncherDynamicItems

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
            source: source, contactsDirectory: "", favoriteCategories: [], maxFileBytes: 0, evolution: .none, staticItemsPath: "",
            displayLimit: 0, favoriteType: "", favoriteIcon: .symbol(""), appVersion: nil, bundleIdentifier: "",
            recompute: .resignActive,
            recomputeSettle: .zero, launchCommand: [], responseTimeout: .zero, launcherDesktopFile: "",
            launcherDynamicItems: .desktopEntry, socketPath: "", maxConnections: 0, maxMessageBytes: 0)
    }

    /// The desktop-file ID the exported entry gets: `DesktopFile=` itself, or a path's file name.
    var launcherDesktopFileID: String? {
        guard !launcherDesktopFile.isEmpty else { return nil }
        return launcherDesktopFile.split(separator: "/").last.map(String.init)
    }

    /// Defaults that depend on another key, which the table's per-key defaults cannot express:
    /// `BundleIdentifier=` follows `DesktopFile=`, as an app's bundle identifier
    /// and its desktop-file ID name the same app.
    mutating func applyDefaultsDerivedFromOtherKeys() {
        if bundleIdentifier.isEmpty, let identifier = launcherDesktopFileID {
            bundleIdentifier = String(identifier.dropLast(DesktopFileID.suffix.count))
        }
    }
}

/// The configuration plus the non-fatal findings made while reading it.
struct LoadedConfiguration: Equatable, Sendable {
    let configuration: DaemonConfiguration
    let warnings: [ConfigurationWarning]
}
