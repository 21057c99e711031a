import Contacts
import Logging
import NIOCore
import QuickActions
import QuickActionsProtocol

/// The daemon's state and every rule that changes it, in one actor: each change (a
/// trigger, a recompute, a batch of contact changes, a settings swap) runs whole and in
/// order. The state file is written by the `StateWriter`'s thread, never on the actor, so
/// a slow disk holds up no change, call or `Watch` event.
///
/// Read top to bottom: what it holds; the queries; the app's lifecycle and recompute;
/// triggers and their delivery to the app; the app's `Connect` and the `Watch` streams;
/// the contacts index (fed by the watcher, with the `Recompute=change` debounce); settings;
/// persistence. It speaks domain values only (`QuickActionsListing`, `RecomputeOutcome`,
/// `TriggerOutcome`, `StatusSnapshot`, `AppMessage`); `QuickActionsHandler` maps them to the
/// Varlink wire once, at the edge. It never reads the contacts folder or a socket itself.
actor DaemonCore {
    // MARK: State

    // Every property `List` or `Status` shows tells `replies` when it changes (`didSet`),
    // so a reply encoded before the change is never served after it, however the
    // property was changed.
    var settings: DaemonSettings {
        didSet {
            settingsEpoch &+= 1
            publishListingKey()
        }
    }
    var state: QuickActionsState { didSet { publishListingKey() } }
    var index: ContactIndex { didSet { replies.statusChanged() } }
    /// Writes the state file on a thread of its own (newest state wins); `Status` reads its outcome.
    let writer: StateWriter
    /// The state last handed to the writer, so an unchanged state is not handed again.
    var lastSubmitted: PersistedState?
    /// The ticket of that state: the file holds the current state once the writer wrote it.
    var submittedTicket: StateWriter.Ticket = 0
    let logger: Logger
    let socketPath: String
    /// The plain daemon or one app's, named in `Status`.
    let instance: InstanceName
    let notifier: any ServiceManagerNotifier
    var activity = ActivityCounters() { didSet { replies.statusChanged() } }
    /// Replaced by the watcher's first update, which the daemon applies before it listens.
    var watchHealth = WatchHealthInfo(state: "starting", message: "the contacts folder has not been scanned yet") {
        didSet { replies.statusChanged() }
    }
    /// The Evolution address books, as the Evolution watcher last reported them (nil: `Evolution=none`).
    var evolution: EvolutionSourcesInfo? { didSet { replies.statusChanged() } }
    /// khard's address books, as the khard watcher last reported them (nil: `Khard=none`).
    var khard: KhardSourcesInfo? { didSet { replies.statusChanged() } }
    /// `GetContact` calls for a contact not indexed yet while an address book's other contacts
    /// are indexed after start-up: answered once that is done.
    var contactWaiters: [CheckedContinuation<Void, Never>] = []
    var lastStatusLine = ""
    /// Counts settings swaps, so a listing composed under older settings is known stale.
    var settingsEpoch: UInt64 = 0
    /// The encoded `List` and `Status` replies, read by the socket's event loops directly.
    nonisolated let replies: PublishedReplies

    /// Which app is connected and which delivered actions wait for its `Complete` (pure).
    var appMachine: AppConnectionStateMachine { didSet { replies.statusChanged() } }
    var appStreams: [AppSessionID: AppMessages] = [:]
    var waitingTriggers: [String: AsyncStream<AppDeliveryResult>.Continuation] = [:]
    /// One per waiting trigger, cancelled when it ends some other way, so a high trigger rate
    /// with a long `ResponseTimeoutSec` leaves no sleeping tasks behind.
    var responseTimers: [String: Scheduled<Void>] = [:]
    /// Tokens of actions chosen in a launcher: nobody waits for their answer, which is logged.
    var launcherTokens: Set<String> = []
    var watchers = WatchBroadcaster() { didSet { replies.statusChanged() } }
    let launcher: LaunchCommandRunner
    /// Which way commands start (a unit of the user manager, or directly), for `Status`.
    nonisolated let commandStarter: CommandStarter
    /// The `[Actions]` commands running now, against `[Commands] MaxRunning=`.
    var runningCommands = RunningCommands() { didSet { replies.statusChanged() } }
    /// Where the Evolution address books live, for the whole card of one of their contacts.
    let evolutionLocation: EvolutionLocation
    /// Desktop notifications of failures a person should see (`[Feedback] Notifications=`).
    nonisolated let feedback: DesktopNotifier
    /// The titles of actions delivered to the app, by token, to name them if they fail.
    var deliveredTitles: [String: String] = [:]
    /// `Recompute=change`: the settle timer restarted by each favorites change, and its round
    /// (a timer that fired just before it was restarted is recognised as an old one).
    var pendingRecompute: Scheduled<Void>?
    var settleRound: UInt64 = 0
    /// Whether an app spoke the socket since start (`Connect`, a lifecycle message, `ResignActive`):
    /// `Recompute=auto` follows the contacts until then.
    var appHasSpoken = false
    /// What happens to the core from outside a call: timers, streams ending, a launcher's
    /// click. They queue here and `runEvents` carries them into the actor in order.
    nonisolated let events: AsyncStream<CoreEvent>.Continuation
    let eventQueue: AsyncStream<CoreEvent>
    /// Where the displayed quick actions go besides the socket: launchers' menus.
    let launchers: LauncherExporters
    /// The ticket of the last publication handed to the desktop-entry writer.
    var launcherTicket: DesktopEntryWriter.Ticket = 0
    /// What the launchers were last handed (see `publishToLaunchers`), so an event that
    /// changes nothing they show composes nothing for them.
    var launcherPublicationKey: PublishedReplies.ListingKey?
    /// The pins the launchers were last handed (they change apart from the listing).
    var launcherPublishedPins: [PinnedItem] = []
    /// The cards the launchers' faces were last read from, and a count of changes to them: a
    /// new photo changes no contact the index keeps, so a change of one of these files is what
    /// makes the faces be read again.
    var launcherFaceCards: Set<String> = []
    var faceCardChanges: UInt64 = 0
    var launcherPublishedFaceCardChanges: UInt64 = 0
    /// False while start-up reads the contact sources one after the other, so a pin whose
    /// contact comes from the source read second is not disabled in between.
    var pinsFollowContacts = true
    /// When a trigger happened, for ranking the favorites by use (tests may set their own clock).
    var wallClock: @Sendable () -> Int64 = WallClock.secondsSince1970

    init(
        settings: DaemonSettings, restored: PersistedState?, index: ContactIndex, store: StateStore<PersistedState>,
        socketPath: String, logger: Logger, notifier: any ServiceManagerNotifier,
        launchers: LauncherExporters = LauncherExporters(environment: [:], qactlPath: nil), instance: InstanceName = .plain,
        commandStarter: CommandStarter? = nil
    ) {
        self.settings = settings
        self.instance = instance
        self.index = index
        lastSubmitted = store.lastPersisted
        self.logger = logger
        self.socketPath = socketPath
        self.notifier = notifier
        self.launchers = launchers
        // A prefix per daemon run, so tokens of a previous run never match.
        appMachine = AppConnectionStateMachine(tokenPrefix: String(UInt32.random(in: .min ... .max), radix: 16))
        let (eventQueue, events) = AsyncStream<CoreEvent>.makeStream(of: CoreEvent.self)
        (self.eventQueue, self.events) = (eventQueue, events)
        let starter = commandStarter ?? .direct(logger: logger)
        self.commandStarter = starter
        launcher = LaunchCommandRunner(logger: logger, starter: starter) { exit in events.yield(.commandExited(exit)) }
        evolutionLocation = EvolutionLocation(environment: launchers.desktopEntry.environment)
        feedback = DesktopNotifier(environment: launchers.desktopEntry.environment, logger: logger)
        var state = restored.map { QuickActionsState(restoring: $0, staticItems: settings.staticItems.items) }
            ?? QuickActionsState(staticItems: settings.staticItems.items)
        if let declared = settings.declaredAppVersion { state.appVersion = declared }
        // Pins belong to the app of `DesktopFile=`: with none, they are gone (and so are their launchers).
        if settings.configuration.launcherDesktopFileID == nil { _ = state.pinBoard.handle(.unpinAll) }
        self.state = state
        let replies = PublishedReplies(listingKey: .init(generation: state.generation, launched: state.launched, settingsEpoch: 0))
        self.replies = replies
        // Each outcome of a write changes what `Status` shows (`persisted`, `stateError`).
        writer = StateWriter(store: store, logger: logger, onOutcome: { replies.statusChanged() })
        // Last, once the core is whole: a click in a dock's quicklist takes the path of `Trigger`.
        // (The exporter is a class, shared with the stored copy.)
        launchers.quicklist.onActivate { [events] entry in
            events.yield(.chosenInLauncher(entry.target))
        }
        // The quicklist's state changes on the bus thread (a bus lost or found): a `Status`
        // reply encoded before that must not be served after it.
        launchers.quicklist.onInfoChange { [replies] in replies.statusChanged() }
        launchers.desktopEntry.onStatusChange { [replies] in replies.statusChanged() }
        feedback.onInfoChange { [replies] in replies.statusChanged() }
    }

    /// What every listing is composed from, as `PublishedReplies` keys it.
    var listingKey: PublishedReplies.ListingKey {
        .init(generation: state.generation, launched: state.launched, settingsEpoch: settingsEpoch, usage: state.usageVersion)
    }

    func publishListingKey() {
        replies.publish(listingKey: listingKey)
        replies.statusChanged()
    }

    // MARK: Queries

    func status() -> StatusSnapshot {
        // The epoch first: a write that ends after this bumps it, so this snapshot is not served after it.
        let (scanProgress, epoch) = replies.scanProgressAndStatusEpoch
        let written = writer.outcome
        let persisted = written.writtenTicket >= submittedTicket
        return StatusSnapshot(
            instance: instance, configuration: settings.configuration, stateFile: writer.stateFile, socket: socketPath,
            contacts: index.contactCount, favorites: index.favoriteCount, invalidFiles: index.invalidFiles,
            duplicates: index.duplicateCount, generation: state.generation, launched: state.launched,
            appVersion: state.appVersion, appConnected: appMachine.isAppConnected,
            staticItems: state.staticItems.count, dynamicItems: state.dynamicItems.count, watch: watchHealth, scanProgress: scanProgress,
            activity: activity, usage: state.usageCounts, stateError: written.error, persisted: persisted,
            savedGeneration: persisted ? nil : written.savedGeneration,
            pendingLaunchItem: state.pendingLaunchItem, watchers: watchers.count, launchers: launchers.status,
            notifications: settings.configuration.notifications == .off
                ? NotificationsInfo(state: NotificationsInfo.State.off.rawValue, shown: feedback.info.shown) : feedback.info,
            evolution: evolution, khard: khard, followsContacts: followsContacts, commands: commandsInfo, epoch: epoch)
    }

    /// Which way commands start and how many run.
    var commandsInfo: CommandsInfo {
        var info = commandStarter.info
        info.running = runningCommands.count
        info.limit = settings.configuration.maxRunningCommands
        return info
    }

    /// What the launcher shows (`all`: every item, each marked displayed or not).
    /// Static titles and subtitles are translated for `language` (one language or a
    /// `LANGUAGE`-style list), else for the daemon's own language.
    func listing(all: Bool, limit: Int? = nil, language: String? = nil) throws(QuickActionsCallError) -> QuickActionsListing {
        if let limit, limit < 0 { throw .invalidParameter(name: "limit") }
        return composedListing(all: all, limit: limit, language: language.map(LanguagePreference.init(requested:)))
    }

    /// A listing and the key it was composed at, for the wire edge to encode and publish.
    func keyedListing(_ request: PublishedReplies.ListingRequest) throws(QuickActionsCallError) -> (QuickActionsListing, PublishedReplies.ListingKey) {
        (try listing(all: request.all, limit: request.limit, language: request.language), listingKey)
    }

    /// What `Watch` streams carry: every item, in the daemon's language.
    func watchedListing() -> QuickActionsListing {
        composedListing(all: true)
    }

    /// The one composition behind `List`, `Watch` and the launchers; nil `language`: the daemon's
    /// own. Static titles are localization keys until translated here.
    /// `usage`: each row with how much its item was used (`List` and `Watch`; the launchers have no use for it).
    func composedListing(
        all: Bool, limit: Int? = nil, language: LanguagePreference? = nil, translated: Bool = true, usage: Bool = true
    ) -> QuickActionsListing {
        let listing = state.currentListing(all: all, limit: limit, displayLimit: settings.configuration.displayLimit, usage: usage)
        return translated ? settings.localization.localizing(listing, for: language ?? settings.language) : listing
    }

    /// The contact, or, while an address book is still indexing its other contacts after
    /// start-up, the contact once that is done: not found means not there.
    func contact(identifier: String) async throws(QuickActionsCallError) -> Contact {
        while true {
            if let contact = index.contact(identifier: identifier) { return contact }
            guard isIndexingAddressBooks else { throw .contactNotFound(identifier: identifier) }
            await withCheckedContinuation { contactWaiters.append($0) }
        }
    }

    /// Whether a book's other contacts are being indexed now (not held up by a fault).
    var isIndexingAddressBooks: Bool {
        evolution?.books.contains { $0.indexing == true && $0.problem == nil } ?? false
    }

    /// The contacts the pins name, which start-up indexes before the others.
    var pinnedContactIdentifiers: Set<String> {
        Set(state.pinBoard.pins.compactMap(\.item.contactIdentifier))
    }

    /// The one-line summary systemd shows (`STATUS=`) and the start-up log repeats.
    func statusLine() -> String {
        let line = "\(index.contactCount) contacts, \(index.favoriteCount) favorites, generation \(state.generation)"
        return isIndexingAddressBooks ? line + ", indexing the address books' other contacts" : line
    }

    var responseTimeoutSeconds: Int {
        let components = settings.configuration.responseTimeout.components
        return Int(components.seconds) + (components.attoseconds > 0 ? 1 : 0)
    }
}
