import CLinux
import Contacts
import Logging
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
    private(set) var settings: DaemonSettings {
        didSet {
            settingsEpoch &+= 1
            publishListingKey()
        }
    }
    private var state: QuickActionsState { didSet { publishListingKey() } }
    private(set) var index: ContactIndex { didSet { replies.statusChanged() } }
    /// Writes the state file on a thread of its own (newest state wins); `Status` reads its outcome.
    private let writer: StateWriter
    /// The state last handed to the writer, so an unchanged state is not handed again.
    private var lastSubmitted: PersistedState?
    /// The ticket of that state: the file holds the current state once the writer wrote it.
    private var submittedTicket: StateWriter.Ticket = 0
    private let logger: Logger
    private let socketPath: String
    private let notifier: any ServiceManagerNotifier
    private var activity = ActivityCounters() { didSet { replies.statusChanged() } }
    /// Replaced by the watcher's first update, which the daemon applies before it listens.
    private var watchHealth = WatchHealthInfo(state: "starting", message: "the contacts folder has not been scanned yet") {
        didSet { replies.statusChanged() }
    }
    private var lastStatusLine = ""
    /// Counts settings swaps, so a listing composed under older settings is known stale.
    private var settingsEpoch: UInt64 = 0
    /// The encoded `List` and `Status` replies, read by the socket's event loops directly.
    nonisolated let replies: PublishedReplies
    /// The listing `Watch` streams carry, composed once per `ListingKey`: every watcher
    /// gets the same value, so comparing and encoding it is done once.
    private var watchedListingCache: (key: PublishedReplies.ListingKey, listing: QuickActionsListing)?

    /// Which app is connected and which delivered actions wait for its `Complete` (pure).
    private var appMachine: AppConnectionStateMachine { didSet { replies.statusChanged() } }
    private var appStreams: [AppSessionID: AppMessages] = [:]
    private var waitingTriggers: [String: AsyncStream<AppDeliveryResult>.Continuation] = [:]
    /// One per waiting trigger, cancelled when it ends some other way, so a high trigger rate
    /// with a long `ResponseTimeoutSec` leaves no sleeping tasks behind.
    private var responseTimers: [String: Task<Void, Never>] = [:]
    private var watchers = WatchBroadcaster() { didSet { replies.statusChanged() } }
    private let launcher: LaunchCommandRunner
    /// `Recompute=change`: the settle timer restarted by each favorites change.
    private var pendingRecompute: Task<Void, Never>?
    /// Where the displayed quick actions go besides the socket: launchers' menus (issue 13).
    private var launchers: LauncherExporters { didSet { replies.statusChanged() } }
    /// What the launchers were last handed (see `publishToLaunchers`), so an event that
    /// changes nothing they show composes nothing for them.
    private var launcherPublicationKey: PublishedReplies.ListingKey?

    init(
        settings: DaemonSettings, restored: PersistedState?, index: ContactIndex, store: StateStore<PersistedState>,
        socketPath: String, logger: Logger, notifier: any ServiceManagerNotifier,
        launchers: LauncherExporters = LauncherExporters(environment: [:], qactlPath: nil)
    ) {
        self.settings = settings
        self.index = index
        lastSubmitted = store.lastPersisted
        self.logger = logger
        self.socketPath = socketPath
        self.notifier = notifier
        self.launchers = launchers
        // A prefix per daemon run, so tokens of a previous run never match.
        appMachine = AppConnectionStateMachine(tokenPrefix: String(UInt32.random(in: .min ... .max), radix: 16))
        launcher = LaunchCommandRunner(logger: logger)
        var state = restored.map { QuickActionsState(restoring: $0, staticItems: settings.staticItems.items) }
            ?? QuickActionsState(staticItems: settings.staticItems.items)
        if let declared = settings.declaredAppVersion { state.appVersion = declared }
        self.state = state
        let replies = PublishedReplies(listingKey: .init(generation: state.generation, launched: state.launched, settingsEpoch: 0))
        self.replies = replies
        // Each outcome of a write changes what `Status` shows (`persisted`, `stateError`).
        writer = StateWriter(store: store, logger: logger, onOutcome: { replies.statusChanged() })
        // Last, once the core is whole: a click in a dock's quicklist takes the path of `Trigger`.
        // (The exporter is a class, shared with the stored copy.)
        launchers.quicklist.onActivate { [weak self] entry in
            Task { await self?.triggerFromLauncher(entry.target) }
        }
        // The quicklist's state changes on the bus thread (a bus lost or found): a `Status`
        // reply encoded before that must not be served after it.
        launchers.quicklist.onInfoChange { [replies] in replies.statusChanged() }
    }

    /// What every listing is composed from, as `PublishedReplies` keys it.
    var listingKey: PublishedReplies.ListingKey {
        .init(generation: state.generation, launched: state.launched, settingsEpoch: settingsEpoch)
    }

    private func publishListingKey() {
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
            configuration: settings.configuration, stateFile: writer.stateFile, socket: socketPath,
            contacts: index.contactCount, favorites: index.favoriteCount, invalidFiles: index.invalidFiles,
            duplicates: index.duplicateCount, generation: state.generation, launched: state.launched,
            appVersion: state.appVersion, appConnected: appMachine.isAppConnected,
            staticItems: state.staticItems.count, dynamicItems: state.dynamicItems.count, watch: watchHealth, scanProgress: scanProgress,
            activity: activity, usage: state.usageCounts, stateError: written.error, persisted: persisted,
            savedGeneration: persisted ? nil : written.savedGeneration,
            pendingLaunchItem: state.pendingLaunchItem, watchers: watchers.count, launchers: launchers.status,
            epoch: epoch)
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
        if request == .watched { return (watchedListing(), listingKey) }
        return (try listing(all: request.all, limit: request.limit, language: request.language), listingKey)
    }

    /// What `Watch` streams carry: every item, in the daemon's language.
    private func watchedListing() -> QuickActionsListing {
        let key = listingKey
        if let cached = watchedListingCache, cached.key == key { return cached.listing }
        let listing = composedListing(all: true)
        watchedListingCache = (key, listing)
        return listing
    }

    /// The one composition behind `List`, `Watch` and the launchers; nil `language`: the daemon's
    /// own. Static titles are localization keys until translated here.
    private func composedListing(all: Bool, limit: Int? = nil, language: LanguagePreference? = nil, translated: Bool = true) -> QuickActionsListing {
        let listing = state.currentListing(all: all, limit: limit, displayLimit: settings.configuration.displayLimit)
        return translated ? settings.localization.localizing(listing, for: language ?? settings.language) : listing
    }

    func contact(identifier: String) throws(QuickActionsCallError) -> Contact {
        guard let contact = index.contact(identifier: identifier) else { throw .contactNotFound(identifier: identifier) }
        return contact
    }

    /// The one-line summary systemd shows (`STATUS=`) and the start-up log repeats.
    func statusLine() -> String {
        "\(index.contactCount) contacts, \(index.favoriteCount) favorites, generation \(state.generation)"
    }

    var responseTimeoutSeconds: Int {
        let components = settings.configuration.responseTimeout.components
        return Int(components.seconds) + (components.attoseconds > 0 ? 1 : 0)
    }

    // MARK: App lifecycle and recompute

    /// The Linux twin of `sceneWillResignActive(_:)`: derive the dynamic set from
    /// the live index; only a set that differs bumps the generation and is written.
    /// `persisted` tells the app whether the state file holds the result: the wait for the
    /// write happens outside the actor, so other calls and contact changes go on meanwhile.
    nonisolated func resignActive(appVersion: String?) async -> RecomputeOutcome {
        let (recomputed, ticket) = await recomputeOnResignActive(appVersion: appVersion)
        var outcome = recomputed
        outcome.persisted = await writer.waitUntilWritten(ticket)
        return outcome
    }

    /// A `ResignActive` that would change nothing (the same call as the last one, nothing
    /// changed since, its state on disk), answered on the event loop without a hop to the
    /// actor; nil when the actor must decide.
    nonisolated func unchangedResignActive(appVersion: String?) -> RecomputeOutcome? {
        guard let unchanged = replies.unchangedResignActive(appVersion: appVersion),
              writer.outcome.writtenTicket >= unchanged.ticket
        else { return nil }
        return unchanged.outcome
    }

    /// `ResignActive`'s change of state, and the ticket of the write that holds it.
    private func recomputeOnResignActive(appVersion: String?) -> (RecomputeOutcome, StateWriter.Ticket) {
        let outcome = state.resignActive(
            favorites: index.favorites, favoritesVersion: index.favoritesVersion, appVersion: appVersion,
            configuration: settings.dynamicItemConfiguration)
        if outcome.changed {
            logger.info("Quick actions changed: \(outcome.dynamicCount) dynamic items, generation \(outcome.generation).",
                        metadata: ["QACTD_GENERATION": .string(String(outcome.generation))])
        }
        let ticket = persist()
        // Last in this turn: every change above cleared the previous one.
        replies.publish(unchangedResignActive: .init(
            appVersion: appVersion, outcome: RecomputeOutcome(changed: false, generation: outcome.generation, dynamicCount: outcome.dynamicCount),
            ticket: ticket))
        return (outcome, ticket)
    }

    /// `BecomeActive` and `EnterBackground`: the app counts as launched from its first message.
    func recordLifecycleMessage(appVersion: String?) {
        state.recordLifecycleMessage(appVersion: appVersion)
        persist()
    }

    /// `Recompute=change`: the dynamic set follows the index without the app's say-so,
    /// so this is not a launch; an unchanged set writes nothing.
    func recomputeAfterIndexChange() {
        let outcome = state.recompute(
            favorites: index.favorites, favoritesVersion: index.favoritesVersion, configuration: settings.dynamicItemConfiguration)
        guard outcome.changed else { return }
        logger.info("Quick actions changed with the contacts: \(outcome.dynamicCount) dynamic items, generation \(outcome.generation).",
                    metadata: ["QACTD_GENERATION": .string(String(outcome.generation))])
        persist()
    }

    // MARK: Triggers

    /// Resolves a trigger (`QuickActionsState.trigger` counts it and decides between the
    /// connected app and a cold launch) and carries out its delivery. A `running` delivery
    /// is answered later by the app: the outcome carries a stream the caller waits on
    /// *outside* the actor, so a slow app never holds up other calls.
    func trigger(_ target: TriggerTarget) throws(QuickActionsCallError) -> TriggerOutcome {
        let index = self.index
        let resolution: TriggerResolution
        switch state.trigger(
            target, displayLimit: settings.configuration.displayLimit,
            contactLookup: { index.contact(identifier: $0) }, appConnected: appMachine.isAppConnected)
        {
        case .success(let resolved): resolution = resolved
        case .failure(.noSuchShortcut(let message)): throw .noSuchShortcut(message)
        case .failure(.contactRemoved(let identifier)): throw .contactRemoved(identifier: identifier)
        }
        persist()
        let contactIdentifier = resolution.contact?.identifier ?? ""
        logger.info("Triggered '\(resolution.item.type)'\(contactIdentifier.isEmpty ? "" : " for contact '\(contactIdentifier)'"), delivery \(resolution.delivery.rawValue).",
                    metadata: ["QACTD_SHORTCUT_TYPE": .string(resolution.item.type), "QACTD_CONTACT_ID": .string(contactIdentifier)])
        var delivered = resolution
        delivered.item = forTheApp(resolution.item)
        return TriggerOutcome(resolution: delivered, delivery: deliver(delivered))
    }

    /// An item as the app and the caller see it: a static item's title and subtitle in the
    /// daemon's language, as `List` shows them (iOS hands the app `localizedTitle`). The state
    /// keeps the keys — the pending launch item too — so a later language applies on delivery.
    /// Only the static items' titles are keys: a favorite's title is a name, never looked up.
    private func forTheApp(_ item: ShortcutItem) -> ShortcutItem {
        guard state.staticItems.contains(item) else { return item }
        return settings.localization.localizing(item, for: settings.language)
    }

    /// A launcher's menu item was chosen (a click in the quicklist): the same path as `Trigger`,
    /// to the connected app or as the pending launch item with the `LaunchCommand` started.
    /// Nobody waits on the bus for the app's answer; it is logged when it comes.
    func triggerFromLauncher(_ target: TriggerTarget) {
        let outcome: TriggerOutcome
        do {
            outcome = try trigger(target)
        } catch {
            logger.warning("A quick action chosen in a launcher could not be triggered: \(error.description)")
            return
        }
        guard case .running(let token, let results) = outcome.delivery else { return }
        let logger = self.logger
        Task {
            for await result in results {
                logger.debug("The app answered the launcher's action '\(token)': \(result).")
            }
        }
    }

    /// The app's `Complete(token, handled)`.
    func complete(token: String, handled: Bool) throws(QuickActionsCallError) {
        let action = appMachine.handle(.completed(token: token, handled: handled))
        if case .rejectCompletion(let token) = action { throw .noSuchAction(token: token) }
        perform(action)
    }

    /// To the connected app (asking the machine again, within the same actor turn as the
    /// resolution), or as the pending launch item with the `LaunchCommand` started.
    private func deliver(_ resolution: TriggerResolution) -> TriggerOutcome.Delivery {
        switch appMachine.handle(.actionTriggered) {
        case .deliver(let token, let session):
            let (results, waiting) = AsyncStream<AppDeliveryResult>.makeStream(bufferingPolicy: .bufferingNewest(1))
            waitingTriggers[token] = waiting
            let message = AppMessage.perform(resolution.item, contact: resolution.contact, token: token, stale: resolution.stale)
            switch appStreams[session]?.yield(message) {
            case .enqueued?:
                let timeout = settings.configuration.responseTimeout
                responseTimers[token] = Task {
                    try? await Task.sleep(for: timeout)
                    guard !Task.isCancelled else { return }
                    self.responseTimedOut(token: token)
                }
            case .terminated?:
                // The connection closed and its end has not reached us yet: the app is gone,
                // which fails this token (and any other in flight) with AppDisconnected.
                appStreamEnded(session)
            case .dropped?, nil:
                logger.warning("The app (\(session)) is not reading its actions; failing '\(token)'.")
                perform(appMachine.handle(.deliveryRefused(token: token)))
            @unknown default:
                perform(appMachine.handle(.deliveryRefused(token: token)))
            }
            return .running(token: token, results: results)
        case .launch:
            let command = settings.configuration.launchCommand
            guard !command.isEmpty else { return .launch(nil) }
            return .launch(launcher.launch(LaunchRequest(
                command: command, shortcutType: resolution.item.type,
                contactIdentifier: resolution.item.contactIdentifier, socketPath: socketPath)))
        default:
            return .launch(nil)
        }
    }

    private func responseTimedOut(token: String) {
        perform(appMachine.handle(.responseTimedOut(token: token)))
    }

    private func perform(_ action: AppConnectionStateMachine.Action) {
        switch action {
        case .resumeTrigger(let token, let handled):
            finishTriggers([token], with: .handled(handled))
        case .failTrigger(let token, let failure):
            logger.warning("The app did not answer action '\(token)' (\(failure)).")
            finishTriggers([token], with: failure == .notResponding ? .notResponding : .appDisconnected)
        case .releaseApp(let session, let abandoned):
            appStreams[session] = nil
            logger.info("The app disconnected (\(session))\(abandoned.isEmpty ? "" : "; \(abandoned.count) actions in flight fail").")
            finishTriggers(abandoned, with: .appDisconnected)
        case .acceptApp, .deliver, .launch, .rejectCompletion, .none:
            break
        }
    }

    private func finishTriggers(_ tokens: [String], with result: AppDeliveryResult) {
        for token in tokens {
            responseTimers.removeValue(forKey: token)?.cancel()
            guard let waiting = waitingTriggers.removeValue(forKey: token) else { continue }
            waiting.yield(result)
            waiting.finish()
        }
    }

    // MARK: The app's Connect stream and the Watch streams

    /// Messages queued for an app that does not read its `Connect` stream; beyond this a
    /// trigger fails with `AppNotResponding` at once instead of queueing without bound.
    static let maxQueuedMessagesPerApp = 16
    static let appBufferingPolicy = AppMessages.BufferingPolicy.bufferingOldest(maxQueuedMessagesPerApp)

    /// An app process called `Connect`: it becomes the one app (a previous one is
    /// replaced), counts as launched, and its first message carries the pending launch
    /// item, which is thereby consumed.
    func connectApp(appVersion: String?, messages: AppMessages) {
        guard case .acceptApp(let session, let replaced, let abandoned) = appMachine.handle(.appConnected) else { return }
        launcher.noteAppConnected()
        if let replaced, let previous = appStreams.removeValue(forKey: replaced) {
            logger.notice("A new app process connected (\(session)); ending \(replaced).")
            previous.finish(throwing: QuickActionsCallError.appReplaced)
        }
        finishTriggers(abandoned, with: .appDisconnected)

        state.recordLifecycleMessage(appVersion: appVersion)
        let pending = state.takePendingLaunchItem()
        persist()
        appStreams[session] = messages
        messages.onTermination = { _ in Task { await self.appStreamEnded(session) } }
        logger.info("The app connected (\(session))\(pending.map { ", handing it the pending item '\($0.type)'" } ?? "").")
        let first = AppMessage.connected(
            pendingItem: pending.map(forTheApp), contact: pending.flatMap(contact(for:)), stale: pending.map(state.isStale))
        if case .terminated = messages.yield(first) {
            // The peer left before the stream was registered: no termination handler will
            // run, and the item it was to be handed still waits for an app.
            if let pending {
                state.restorePendingLaunchItem(pending)
                persist()
            }
            appStreamEnded(session)
        }
    }

    /// The app's `Connect` stream ended (connection closed, or replaced by a newer app).
    private func appStreamEnded(_ session: AppSessionID) {
        perform(appMachine.handle(.appDisconnected(session)))
    }

    private func contact(for item: ShortcutItem) -> Contact? {
        item.contactIdentifier.flatMap { index.contact(identifier: $0) }
    }

    /// A `Watch` call: the current set now, then one listing per change.
    func watch(_ listings: WatchBroadcaster.Listings) {
        guard let watcher = watchers.add(listings, current: watchedListing()) else { return }
        listings.onTermination = { _ in Task { await self.watcherEnded(watcher) } }
    }

    private func watcherEnded(_ watcher: UInt64) {
        watchers.remove(watcher)
    }

    // MARK: The contacts index

    static let largeBatch = 4096

    /// Applies what the `DirectoryWatcher` found. With `Recompute=change`, a change of
    /// favorites restarts the settle timer (`RecomputeSettleMSec`), so a burst of saves —
    /// a sync run, a folder moved in — makes one new generation, not many.
    func applyWatcherUpdate(_ update: ContactsDirectoryUpdate) {
        watchHealth = update.health
        // The version, not a copy of every favorite to compare: at 1k favorites the two
        // copies cost more than the change itself. A favorite rewritten unchanged bumps it
        // too; the recompute then finds the same set and writes nothing.
        let favoritesBefore = index.favoritesVersion
        if update.changes.count >= Self.largeBatch {
            applyLargeBatch(update.changes)
        } else {
            for change in update.changes { apply(change, to: &index) }
        }
        activity.filesParsed += update.work.filesParsed
        activity.rescans += update.work.rescans
        activity.eventsHandled += update.work.eventsHandled
        // A rescan may have shown its progress in `STATUS=`: the summary replaces it even if unchanged.
        if update.work.rescans > 0 { lastStatusLine = "" }
        publishStatus()
        if update.changes.count >= Self.largeBatch { Self.releaseFreeHeapMemorySoon() }
        if index.favoritesVersion != favoritesBefore { scheduleRecomputeIfFollowingContacts() }
    }

    /// A large batch (the start-up scan, a rescan after an overflow) was read, parsed and
    /// queued in buffers that are freed only when the watcher (or the start sequence) lets go
    /// of the batch, after `applyWatcherUpdate` returns; trimmed before that, the heap kept
    /// their pages for good (~40 MiB at 100k contacts, measured with `malloc_info`). So the
    /// trim runs later, off the actor, and again in case the holder was slow (a loaded
    /// machine); each costs milliseconds and only hands free pages back, changing no state.
    private static func releaseFreeHeapMemorySoon() {
        Task.detached(priority: .utility) {
            for delay in [200, 800, 4000] {
                try? await Task.sleep(for: .milliseconds(delay))
                _ = CLinux_releaseFreeHeapMemory()
            }
        }
    }

    private func apply(_ change: ContactIndexChange, to index: inout ContactIndex) {
        switch change {
        case .file(let path, let result): index.apply(path: path, result: result)
        case .removed(let path): index.remove(path: path)
        case .removedTree(let directory): index.removeAll(under: directory)
        }
    }

    /// A large batch (the start-up scan, a rescan) goes to the index's bulk path, run by run
    /// of files, in order (a removal between two runs is applied between them).
    private func applyLargeBatch(_ changes: [ContactIndexChange]) {
        var files: [(path: String, result: Result<[Contact], ContactFileProblem>)] = []
        for change in changes {
            if case .file(let path, let result) = change {
                files.append((path, result))
                continue
            }
            if !files.isEmpty { index.apply(files: files) }
            files.removeAll()
            apply(change, to: &index)
        }
        if !files.isEmpty { index.apply(files: files) }
    }

    /// With `Recompute=change`, (re)starts the settle timer; also called at start, so the set
    /// follows changes made while the daemon was stopped.
    func scheduleRecomputeIfFollowingContacts() {
        guard settings.configuration.recompute == .change else { return }
        pendingRecompute?.cancel()
        let settle = settings.configuration.recomputeSettle
        pendingRecompute = Task {
            do {
                try await Task.sleep(for: settle)
            } catch {
                return  // a later change restarted the delay, or the daemon is stopping
            }
            self.settleElapsed()
        }
    }

    private func settleElapsed() {
        pendingRecompute = nil
        // A reload during the delay may have switched back to `resign-active`.
        guard settings.configuration.recompute == .change else { return }
        recomputeAfterIndexChange()
    }

    // MARK: Settings

    /// A reload: new settings replace the old ones whole; settings that failed to load
    /// (a malformed value, a broken static-items file) leave every old one in place.
    func reload(_ loaded: Result<DaemonSettings, DaemonStartupError>) throws(QuickActionsCallError) {
        let newSettings: DaemonSettings
        switch loaded {
        case .success(let loaded): newSettings = loaded
        case .failure(let error):
            logger.error("Reload failed, keeping the previous configuration: \(error.description)")
            throw .invalidConfiguration(error.description)
        }
        if newSettings.configuration.socketPath != settings.configuration.socketPath {
            logger.warning("Socket changed to '\(newSettings.configuration.socketPath)'; it takes effect at the next start.")
        }
        replaceSettings(newSettings)
    }

    private func replaceSettings(_ newSettings: DaemonSettings) {
        settings = newSettings
        // A reload also retries an export that failed (a foreign file moved away, a folder made writable).
        launchers.forgetLastPublication()
        launcherPublicationKey = nil
        state.replaceStaticItems(newSettings.staticItems.items)
        if let declared = newSettings.declaredAppVersion { state.appVersion = declared }
        persist()
    }

    /// Called before exit: no recompute starts any more, and the last state is on disk when
    /// this returns (a write still failing is tried once more, so nothing is lost that can be kept).
    func finishPendingWork() async {
        pendingRecompute?.cancel()
        pendingRecompute = nil
        let ticket = persist()
        _ = await writer.waitUntilWritten(ticket)
    }

    // MARK: Persistence

    /// Every state change passes through here: watchers hear of it, systemd's `STATUS=`
    /// follows, and the persisted part, if it changed, goes to the writer's thread (which
    /// keeps the previous file when a write fails, and retries). Returns the ticket the
    /// writer gives the current state; `writer.waitUntilWritten` tells when it is on disk.
    @discardableResult
    private func persist() -> StateWriter.Ticket {
        watchers.announce(watchedListing(), version: listingKey)
        publishToLaunchers()
        publishStatus()
        let persisted = PersistedState(state)
        // Cheap when nothing changed: the arrays and dictionary share their storage.
        if persisted != lastSubmitted {
            lastSubmitted = persisted
            submittedTicket = writer.submit(persisted)
            replies.statusChanged()
        }
        return submittedTicket
    }

    /// Hands what `List` shows (without `all`, in the daemon's language) to every launcher
    /// exporter: called from `persist()`, so every change reaches them, and once at start-up.
    /// Each exporter does nothing when the publication is the one it already has.
    func publishToLaunchers() {
        // Without `DesktopFile=` the exporters use nothing of the rows, so once per settings
        // epoch is enough; otherwise once per listing key (what the rows are composed from).
        let key = settings.configuration.launcherDesktopFileID == nil
            ? PublishedReplies.ListingKey(generation: 0, launched: false, settingsEpoch: settingsEpoch) : listingKey
        guard key != launcherPublicationKey else { return }
        launcherPublicationKey = key
        let untranslated = composedListing(all: false, translated: false)
        launchers.publish(
            LauncherPublication(
                displayed: settings.localization.localizing(untranslated, for: settings.language),
                untranslated: untranslated, localization: settings.localization,
                configuration: settings.configuration, socketPath: socketPath),
            logger: logger)
    }

    /// Keeps systemd's `STATUS=` current; sends only when the line changed.
    private func publishStatus() {
        let line = statusLine()
        guard line != lastStatusLine else { return }
        lastStatusLine = line
        notifier.notify(.status(line))
    }
}

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
    /// The translations beside the static-items file; static items keep their keys.
    var localization = Localization()
    /// The daemon's own language (from its environment): `Watch`, and `List` without `language`.
    var language = LanguagePreference(languages: [])
    var dynamicItemConfiguration: DynamicItemConfiguration {
        DynamicItemConfiguration(favoriteType: configuration.favoriteType, favoriteIcon: configuration.favoriteIcon)
    }
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
    }

    var resolution: TriggerResolution
    var delivery: Delivery
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
