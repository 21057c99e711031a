import Contacts
import QuickActions
import QuickActionsProtocol

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
        case .noSuchAction(let token): "No action with token '\(token)' waits for an answer (unknown, already answered, or timed out)."
        }
    }
}

/// Everything the daemon derives from its configuration file and static items:
/// replaced as a whole on reload, so a reload that fails leaves it untouched.
struct DaemonSettings: Sendable {
    var configuration: DaemonConfiguration
    var staticItems: StaticItemsFile
    var favoriteIcon: ShortcutIcon?
    var dynamicItemConfiguration: DynamicItemConfiguration {
        DynamicItemConfiguration(favoriteType: configuration.favoriteType, favoriteIcon: favoriteIcon)
    }
    /// The app version the files declare: `AppVersion=` wins over `CFBundleShortVersionString`.
    var declaredAppVersion: String? {
        configuration.appVersion ?? staticItems.appVersion
    }
}

/// Counters that let tests and users see how much work the daemon did.
struct ActivityCounters: Sendable {
    var eventsHandled = 0
    var filesParsed = 0
    var rescans = 0
}

/// The daemon's state and the rules that change it: one actor, so every change
/// (a trigger, a recompute, a contacts event) is applied whole and in order.
/// It never reads the contacts directory itself: the index is fed to it.
actor DaemonCore {
    private(set) var settings: DaemonSettings
    // Internal, not private: the app delivery extension (AppDelivery.swift) works on them too.
    var state: QuickActionsState
    private(set) var index: ContactIndex
    private var store: StateStore<PersistedState>
    let logger: Logger
    private var stateError: String?
    var activity = ActivityCounters()
    /// Replaced by the watcher's first update, which the daemon applies before it listens.
    var watchHealth = WatchHealthInfo(state: "starting", message: "the contacts folder has not been scanned yet")
    /// The connected app, actions waiting for it, and the watchers (see AppDelivery.swift).
    var app: AppDeliveryRuntime
    let socketPath: String

    private let notifier: any ServiceManagerNotifier
    private var lastStatusLine = ""

    init(
        settings: DaemonSettings, restored: PersistedState?, index: ContactIndex, store: StateStore<PersistedState>,
        socketPath: String, logger: Logger, notifier: any ServiceManagerNotifier
    ) {
        self.notifier = notifier
        self.settings = settings
        self.index = index
        self.store = store
        self.logger = logger
        self.socketPath = socketPath
        self.app = AppDeliveryRuntime(logger: logger)
        var state = restored.map { QuickActionsState(restoring: $0, staticItems: settings.staticItems.items) }
            ?? QuickActionsState(staticItems: settings.staticItems.items)
        if let declared = settings.declaredAppVersion { state.appVersion = declared }
        self.state = state
    }

    // MARK: Queries

    func status() -> StatusReply {
        let configuration = settings.configuration
        return StatusReply(
            version: QactdVersion.string, configFile: configuration.configFile,
            contactsDirectory: configuration.contactsDirectory, staticItemsFile: configuration.staticItemsPath,
            stateFile: store.paths.stateFile, socket: socketPath,
            contacts: index.contactCount, favorites: index.favoriteCount,
            invalidFiles: index.invalidFiles.map { InvalidFileInfo(path: $0.path, reason: $0.reason.description) },
            duplicates: index.duplicateCount, generation: state.generation, launched: state.launched,
            appVersion: state.appVersion, appConnected: appConnected,
            staticItems: state.staticItems.count, dynamicItems: state.dynamicItems.count, watch: watchHealth,
            rescans: activity.rescans, eventsHandled: activity.eventsHandled, filesParsed: activity.filesParsed,
            usage: state.usageCounts, stateError: stateError,
            pendingLaunchItem: state.pendingLaunchItem, watchers: watcherCount)
    }

    func list(_ parameters: ListParameters) throws(QuickActionsCallError) -> ListReply {
        if let limit = parameters.limit, limit < 0 { throw .invalidParameter(name: "limit") }
        return currentListing(all: parameters.all ?? false, limit: parameters.limit)
    }

    func currentListing(all: Bool, limit: Int? = nil) -> ListReply {
        ListReply(
            generation: state.generation, launched: state.launched,
            items: state.listing(all: all, limit: limit, displayLimit: settings.configuration.displayLimit))
    }

    func contact(identifier: String) throws(QuickActionsCallError) -> Contact {
        guard let contact = index.contact(identifier: identifier) else { throw .contactNotFound(identifier: identifier) }
        return contact
    }

    // MARK: App lifecycle

    /// The Linux twin of `sceneWillResignActive(_:)`: derive the dynamic set from
    /// the live index; only a set that differs bumps the generation and is written.
    func resignActive(appVersion: String?) -> ResignActiveReply {
        let outcome = state.resignActive(favorites: index.favorites, appVersion: appVersion, configuration: settings.dynamicItemConfiguration)
        if outcome.changed {
            logger.log(.info, "Quick actions changed: \(outcome.dynamicCount) dynamic items, generation \(outcome.generation).",
                       fields: ["QACTD_GENERATION": String(outcome.generation)])
        }
        persist()
        publishStatus()
        return outcome
    }

    /// `Recompute=change`: the dynamic set follows the index without the app's say-so,
    /// so this is not a launch; an unchanged set writes nothing.
    func recomputeAfterIndexChange() {
        let outcome = state.recompute(favorites: index.favorites, configuration: settings.dynamicItemConfiguration)
        guard outcome.changed else { return }
        logger.log(.info, "Quick actions changed with the contacts: \(outcome.dynamicCount) dynamic items, generation \(outcome.generation).",
                   fields: ["QACTD_GENERATION": String(outcome.generation)])
        persist()
        publishStatus()
    }

    func recordLifecycleMessage(appVersion: String?) {
        state.recordLifecycleMessage(appVersion: appVersion)
        persist()
    }

    // MARK: Triggers

    func trigger(_ parameters: TriggerParameters) throws(QuickActionsCallError) -> TriggerDecision {
        let target: TriggerTarget
        switch (parameters.position, parameters.type) {
        case (let position?, nil):
            guard parameters.contactIdentifier == nil else { throw .invalidParameter(name: "contactIdentifier") }
            target = .position(position)
        case (nil, let type?): target = .type(type, contactIdentifier: parameters.contactIdentifier)
        case (.some, .some): throw .invalidParameter(name: "type")
        case (nil, nil): throw .invalidParameter(name: "position")
        }
        let index = self.index
        let result = state.trigger(
            target, displayLimit: settings.configuration.displayLimit,
            contactLookup: { index.contact(identifier: $0) }, appConnected: appConnected)
        switch result {
        case .success(let resolution):
            persist()
            let contactIdentifier = resolution.contact?.identifier ?? ""
            logger.log(.info, "Triggered '\(resolution.item.type)'\(contactIdentifier.isEmpty ? "" : " for contact '\(contactIdentifier)'"), delivery \(resolution.delivery == .running ? "running" : "launch").",
                       fields: ["QACTD_SHORTCUT_TYPE": resolution.item.type, "QACTD_CONTACT_ID": contactIdentifier])
            let reply = TriggerReply(
                item: resolution.item, contact: resolution.contact,
                delivery: resolution.delivery,
                handled: false, stale: resolution.stale, position: parameters.position)
            return deliver(resolution, reply: reply)
        case .failure(let error):
            switch error {
            case .noSuchShortcut(let message): throw .noSuchShortcut(message)
            case .contactRemoved(let identifier): throw .contactRemoved(identifier: identifier)
            }
        }
    }

    // MARK: Contacts and settings

    func record(_ work: ActivityCounters) {
        activity.filesParsed += work.filesParsed
        activity.rescans += work.rescans
        activity.eventsHandled += work.eventsHandled
        publishStatus()
    }

    /// The one-line summary systemd shows (`STATUS=`) and the start-up log repeats.
    func statusLine() -> String {
        "\(index.contactCount) contacts, \(index.favoriteCount) favorites, generation \(state.generation)"
    }

    /// Keeps systemd's `STATUS=` current; sends only when the line changed.
    private func publishStatus() {
        let line = statusLine()
        guard line != lastStatusLine else { return }
        lastStatusLine = line
        notifier.notify(.status(line))
    }

    /// Called before exit: a failed write is retried once more so nothing is lost.
    func finishPendingWork() {
        persist()
    }

    func replaceSettings(_ newSettings: DaemonSettings) {
        settings = newSettings
        state.replaceStaticItems(newSettings.staticItems.items)
        if let declared = newSettings.declaredAppVersion { state.appVersion = declared }
        persist()
    }

    // MARK: Persistence

    /// Writes the persisted part of the state if it changed. A failed write keeps
    /// the previous file and the in-memory state; the next change retries it.
    func persist() {
        // Every state change passes through here, so watchers hear of each one.
        announceListingIfChanged()
        do {
            if try store.saveIfChanged(PersistedState(state)) {
                logger.log(.debug, "Saved state, generation \(state.generation).", fields: ["QACTD_PATH": store.paths.stateFile])
            }
            if stateError != nil {
                logger.log(.notice, "Writing the state file '\(store.paths.stateFile)' works again.", fields: ["QACTD_PATH": store.paths.stateFile])
                stateError = nil
            }
        } catch {
            let message = String(describing: error)
            if stateError != message {
                logger.log(.error, "Could not save the state, keeping the previous file and the in-memory set: \(message)", fields: ["QACTD_PATH": store.paths.stateFile])
            }
            stateError = message
        }
    }
}

public enum QactdVersion {
    public static let string = "0.1.0"
}

extension DaemonConfiguration {
    /// The configuration file in effect, or nil for built-in defaults.
    var configFile: String? {
        if case .file(let path) = source { return path }
        return nil
    }
}

/// One change to the contacts index, parsed outside the actor so that reading
/// and parsing files never holds up socket calls.
enum ContactIndexChange: Sendable {
    case file(path: String, result: Result<[Contact], ContactFileProblem>)
    case removed(path: String)
    case removedTree(directory: String)
}

extension DaemonCore {
    /// Applies a batch of per-file changes; returns whether favorites (and so the
    /// dynamic set a `Recompute=change` would derive) may have changed.
    @discardableResult
    func apply(_ changes: [ContactIndexChange], counting work: ActivityCounters) -> Bool {
        let favoritesBefore = index.favorites
        for change in changes {
            switch change {
            case .file(let path, let result): index.apply(path: path, result: result)
            case .removed(let path): index.remove(path: path)
            case .removedTree(let directory): index.removeAll(under: directory)
            }
        }
        record(work)
        return index.favorites != favoritesBefore
    }
}
