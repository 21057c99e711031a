import Contacts
import Logging
import QuickActions
import QuickActionsProtocol

// MARK: - The core's values

/// The errors a client can meet when it calls the daemon; each maps to one
/// stable Varlink error name (see `QuickActionsHandler`).
enum QuickActionsCallError: Error, Equatable, CustomStringConvertible {
    case noSuchShortcut(String)
    case contactRemoved(identifier: String)
    case contactNotFound(identifier: String)
    case invalidConfiguration(String)
    case invalidParameter(name: String)
    case appNotResponding(timeoutSeconds: Int)
    case appDisconnected(token: String)
    case appReplaced
    case noSuchAction(token: String)
    /// The item's values cannot go into its `[Actions]` command; nothing ran.
    case commandRefused(String)
    case noSuchPin(String)
    /// The pinned item is gone; the message is what the person was told.
    case pinDisabled(identifier: String, message: String)
    case pinningUnavailable(String)
    /// The app's own items were refused; nothing changed.
    case appItemRefused(AppItemError)

    var description: String {
        switch self {
        case .noSuchShortcut(let message): message
        case .contactRemoved: "This contact is no longer available"
        case .contactNotFound(let identifier): "No contact with identifier '\(identifier)'."
        case .invalidConfiguration(let message): message
        case .invalidParameter(let name): "Invalid parameter '\(name)'."
        case .appNotResponding(let seconds): "The app did not answer within \(seconds) s."
        case .appDisconnected(let token): "The app disconnected before answering action '\(token)'."
        case .appReplaced: "A newer app process connected and took over."
        case .commandRefused(let reason): "The quick action's command was not run: \(reason)."
        case .noSuchPin(let identifier): "No pin '\(identifier)'."
        case .pinDisabled(_, let message): message
        case .pinningUnavailable(let message): message
        case .appItemRefused(let error): error.description
        case .noSuchAction(let token): "No action with token '\(token)' waits for an answer (unknown, already answered, or timed out)."
        }
    }
}

/// Everything the daemon derives from its configuration file and static items:
/// replaced as a whole on reload, so a reload that fails leaves it untouched.
struct DaemonSettings: Sendable {
    var configuration: DaemonConfiguration
    var staticItems: StaticItemsFile
    /// The translations beside the static-items file; static items keep their keys.
    var localization = Localization()
    /// The daemon's own language (from its environment): `Watch`, and `List` without `language`.
    var language = LanguagePreference(languages: [])
    var dynamicItemConfiguration: DynamicItemConfiguration {
        DynamicItemConfiguration(
            favoriteType: configuration.favoriteType, favoriteIcon: configuration.favoriteIcon, order: configuration.favoriteOrder,
            maxItems: configuration.maxDynamicItems)
    }
    var appItemRules: AppItemRules { AppItemRules(maxItems: configuration.maxAppItems) }
    /// The app version the files declare: `AppVersion=` wins over `CFBundleShortVersionString`.
    var declaredAppVersion: String? {
        configuration.appVersion ?? staticItems.appVersion
    }
}

/// Counters that let tests and users see how much work the daemon did.
struct ActivityCounters: Sendable, Equatable {
    var eventsHandled = 0
    var filesParsed = 0
    var rescans = 0
}

/// What `Status` shows, as the core knows it.
struct StatusSnapshot: Sendable {
    var instance: InstanceName
    var configuration: DaemonConfiguration
    var stateFile: String
    var socket: String
    var contacts: Int
    var favorites: Int
    var invalidFiles: [ContactIndex.InvalidFile]
    var duplicates: Int
    var generation: UInt64
    var launched: Bool
    var appVersion: String
    var appConnected: Bool
    var staticItems: Int
    var dynamicItems: Int
    var watch: WatchHealthInfo
    /// A long scan under way (told by the scanner, not the watcher's last update).
    var scanProgress: ContactsScanProgress?
    var activity: ActivityCounters
    var usage: [String: Int]
    var stateError: String?
    /// Whether the state file holds the current state: false while a write is pending or fails.
    var persisted: Bool
    /// While the file does not hold the current state: the generation it holds (nil when there is none).
    var savedGeneration: UInt64?
    var pendingLaunchItem: ShortcutItem?
    var watchers: Int
    var launchers: LauncherExportStatus
    var notifications: NotificationsInfo
    var evolution: EvolutionSourcesInfo?
    var khard: KhardSourcesInfo?
    /// Whether the set follows the contacts now (`DaemonCore.followsContacts`).
    var followsContacts = false
    var commands: CommandsInfo
    /// `PublishedReplies.statusEpoch` when this was taken.
    var epoch: UInt64
}

/// A resolved trigger and what became of its delivery.
struct TriggerOutcome: Sendable {
    enum Delivery: Sendable {
        /// Delivered to the connected app with `token`; `results` yields its answer (or
        /// why none came).
        case running(token: String, results: AsyncStream<AppDeliveryResult>)
        /// The item is the pending launch item; the `LaunchCommand`'s outcome, nil when
        /// none is configured.
        case launch(LaunchOutcome?)
        /// The item's `[Actions]` command: its pid, or why it could not start.
        case command(CommandOutcome)
    }

    var resolution: TriggerResolution
    var delivery: Delivery
}

/// What starting an item's `[Actions]` command came to.
struct CommandOutcome: Sendable, Equatable {
    var program: String
    var place: CommandPlace?
    var error: String?
}

/// How a delivered action ended, as the waiting `Trigger` learns it.
enum AppDeliveryResult: Sendable, Equatable {
    case handled(Bool)
    case notResponding
    case appDisconnected
}

/// What the connected app is told on its `Connect` stream.
enum AppMessage: Sendable, Equatable {
    /// The first message: the pending launch item the app was started for, if any.
    case connected(pendingItem: ShortcutItem?, contact: Contact?, stale: Bool?)
    /// Perform this action and answer `Complete(token, handled)`.
    case perform(ShortcutItem, contact: Contact?, token: String, stale: Bool)
}

typealias AppMessages = AsyncThrowingStream<AppMessage, any Error>.Continuation

/// One change to the contacts index, parsed outside the actor so that reading
/// and parsing files never holds up socket calls.
enum ContactIndexChange: Sendable {
    case file(path: String, result: Result<[Contact], ContactFileProblem>)
    case removed(path: String)
    case removedTree(directory: String)
}

extension DaemonConfiguration {
    /// The configuration file in effect, or nil for built-in defaults.
    var configFile: String? {
        if case .file(let path) = source { return path }
        return nil
    }
}
