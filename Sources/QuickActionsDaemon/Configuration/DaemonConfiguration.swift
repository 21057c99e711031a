import QuickActions

/// When the dynamic set is derived from the contacts index.
enum RecomputePolicy: String, Equatable, Sendable, CaseIterable {
    /// As `change` until an app speaks the socket (connects, or sends a lifecycle message),
    /// then as `resign-active`: an app that never speaks it never resigns active, and its
    /// favorites must still follow the contacts.
    case auto
    case resignActive = "resign-active"
    case change
}

/// `[Launcher] DesktopFile=` as written: the app is named, chosen as the person's mail app, or none.
enum DesktopFileSetting: Equatable, Sendable {
    /// The default application for `mailto:` URIs, per `mimeapps.list`.
    case auto
    case none
    /// A desktop-file ID, or an absolute path ending in ".desktop".
    case named(String)
}

/// Which app the daemon serves when `DesktopFile=auto`, and why; or why none.
struct DefaultAppChoice: Equatable, Sendable {
    /// The MIME type whose default application is served.
    static let mimeType = "x-scheme-handler/mailto"

    var choice: MimeAppsChoice?
    /// The app's own entry, where it was found.
    var entryPath: String?
    /// Why no app, or why the app gives no favorite action.
    var problem: String?
}

/// Where the favorites' command (`[Actions]` for `FavoriteType=`) came from.
enum FavoriteActionSource: Equatable, Sendable {
    /// Written in `[Actions]`.
    case configured
    /// Made from the app's own `Exec` with a `mailto:` URI (the entry at this path).
    case appExec(entryPath: String)
    /// None: a favorite goes to the app over the socket.
    case none
}

/// Where the favorites' quick actions are shown besides the socket: in the
/// exported desktop entry, which every launcher reads, or only in the live D-Bus quicklist.
enum LauncherDynamicItems: String, Equatable, Sendable, CaseIterable {
    /// The quicklist always, the desktop entry too while no reader of the quicklist is on the
    /// session bus (`DynamicItemsPlacement`): live where a dock or the shell extension reads it,
    /// each item once, and in the entry where only that is read.
    case auto
    case desktopEntry = "desktop-entry"
    case quicklist
}

/// Whether a favorite's launcher icon is the contact's face (`FaceFiles`) or `FavoriteIcon=`.
enum FavoriteFaces: String, Equatable, Sendable, CaseIterable {
    case yes
    case no
}

/// Whether the address books khard's configuration names are read besides the contacts folder.
enum KhardBooks: String, Equatable, Sendable, CaseIterable {
    /// Those of `$XDG_CONFIG_HOME/khard/khard.conf`, followed as it changes (none while it is missing).
    case auto
    case none
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
/// `ConfigurationKeys.all` says which key sets which field and its default: it overwrites every
/// field of the table with the user's value or that default before anyone reads it, so the
/// initial values written here are placeholders only.
struct DaemonConfiguration: Equatable, Sendable {
    var source: ConfigurationSource

    // [Contacts]
    /// Empty: no contacts folder.
    var contactsDirectory = ""
    var favoriteCategories: [String] = []
    var maxFileBytes = 0
    /// The Evolution Data Server address books read besides the directory.
    var evolution: EvolutionSelection = .none
    /// khard's address books read besides the directory.
    var khard: KhardBooks = .none

    // [Shortcuts]
    var staticItemsPath = ""
    var displayLimit = 0
    var favoriteType = ""
    /// A `file:` icon's path is already absolute.
    var favoriteIcon: ShortcutIcon = .symbol("")
    var favoriteOrder: FavoriteOrder = .usage
    /// How many favorites become dynamic items, the first in `favoriteOrder`.
    var maxDynamicItems = 0
    /// How many items of its own the app may set (`MaxAppItems=`).
    var maxAppItems = 15
    /// nil when unset, so the version from the static-items plist applies.
    var appVersion: String?
    /// Replaces `$(PRODUCT_BUNDLE_IDENTIFIER)` in static item types; when unset, the
    /// desktop-file ID of `launcherDesktopFile` without ".desktop"; empty leaves the types as written.
    var bundleIdentifier = ""
    var recompute: RecomputePolicy = .auto
    var recomputeSettle: Duration = .zero

    // [App]
    var launchCommand: [String] = []
    var responseTimeout: Duration = .zero

    // [Actions]
    /// Item type → the command that handles an item of that type instead of the app.
    var actions: [String: CommandTemplate] = [:]

    // [Feedback]
    var notifications: FeedbackNotifications = .auto

    // [Commands]
    /// How many `[Actions]` commands may run at once; another is refused until one ends.
    var maxRunningCommands = 0

    // [Launcher]
    /// As written; `launcherDesktopFile` is what it resolved to.
    var launcherDesktopFileSetting: DesktopFileSetting = .auto
    /// A desktop-file ID, or an absolute path ending in ".desktop"; empty: nothing is exported.
    var launcherDesktopFile = ""
    /// With `DesktopFile=auto`: which app was chosen, and why.
    var defaultApp: DefaultAppChoice?
    var favoriteActionSource: FavoriteActionSource = .none
    var launcherDynamicItems: LauncherDynamicItems = .auto
    var favoriteFaces: FavoriteFaces = .yes

    // [Daemon]
    var socketPath = ""
    var maxConnections = 0
    var maxMessageBytes = 0
}

extension DaemonConfiguration {
    /// The desktop-file ID the exported entry gets: `DesktopFile=` itself, or a path's file name.
    var launcherDesktopFileID: String? {
        guard !launcherDesktopFile.isEmpty else { return nil }
        return launcherDesktopFile.split(separator: "/").last.map(String.init)
    }

    /// Defaults that depend on another key, which the table's per-key defaults cannot express:
    /// `BundleIdentifier=` follows `DesktopFile=`, as an app's bundle identifier
    /// and its desktop-file ID name the same app. `DesktopFile=auto` is resolved later, by
    /// the settings loader's `desktopDefaults` (they read files), which call this again.
    mutating func applyDefaultsDerivedFromOtherKeys() {
        if case .named(let desktopFile) = launcherDesktopFileSetting { launcherDesktopFile = desktopFile }
        if actions[favoriteType] != nil, favoriteActionSource == .none { favoriteActionSource = .configured }
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
