import CSdBus
import NIOConcurrencyHelpers
import Logging
import QuickActions
import QuickActionsProtocol
import Synchronization
import SystemCalls

import Glibc

/// Serves the live quicklist: a `com.canonical.dbusmenu` menu of the displayed
/// dynamic items on the session bus, announced to docks by `com.canonical.Unity.LauncherEntry.Update`
/// (Dash to Dock, Ubuntu Dock and Plank read it and show the menu in the icon's right-click menu).
///
/// sd-bus is single-threaded, so one connection lives on a thread of its own (`qactd-bus`),
/// blocked in `poll` on the bus and a wake-up socket. The core hands it the wanted content
/// through a lock-protected mailbox (`publish`); the thread re-exports and re-announces it. A
/// click comes back as `activate(entry)`, which starts the trigger on the core and returns at once,
/// so the bus never waits for the core or the app. The bus going away (dbus-daemon stopped) is
/// survived: the thread reconnects with backoff and exports and announces everything again.
final class QuicklistExporter: Sendable {
    static let menuPath = "/io/qactd/QuickActions/menu"
    static let launcherEntryPath = "/io/qactd/QuickActions/LauncherEntry"

    /// The first retry after the bus could not be reached; each failure doubles it up to `maxRetry`.
    static let firstRetry: Duration = .milliseconds(100)
    static let maxRetry: Duration = .seconds(2)

    /// What the core wants shown: the content, or why there is none.
    enum Wanted: Sendable, Equatable {
        case off(reason: String)
        case on(QuicklistContent)
    }

    /// The thread's mailbox: what the core wants shown, and the favorites' faces the
    /// desktop-entry writer made for it (by contact identifier), which come a little later.
    struct Mail: Sendable, Equatable {
        var wanted: Wanted
        var faces: [String: [UInt8]] = [:]
    }

    /// The session bus's address, or why there is none.
    private let address: Result<String, SessionBus.Missing>
    private let logger: Logger
    /// The `qactd-bus` thread, made with the first content that turns the quicklist on (a
    /// daemon that never does opens no descriptor), and what the core wants shown.
    private let thread: MailboxThread<Mail>
    private let current: NIOLockedValueBox<QuicklistInfo>
    private let activation = NIOLockedValueBox<(@Sendable (QuicklistEntry) -> Void)?>(nil)
    private let infoObserver = NIOLockedValueBox<(@Sendable () -> Void)?>(nil)
    private let readersObserver = NIOLockedValueBox<(@Sendable (Set<String>) -> Void)?>(nil)
    private let runningAppsObserver = NIOLockedValueBox<(@Sendable () -> Void)?>(nil)

    init(environment: [String: String], logger: Logger) {
        address = SessionBus.address(environment: environment)
        self.logger = logger
        let notYet = "the daemon has not published its quick actions yet"
        thread = MailboxThread(named: "qactd-bus", for: "the session bus thread", mail: Mail(wanted: .off(reason: notYet)), logger: logger)
        current = NIOLockedValueBox(QuicklistInfo(state: .off, message: notYet))
    }

    /// What `Status` shows.
    var info: QuicklistInfo { current.withLockedValue { $0 } }

    /// Told after every change of `info` (made on the bus thread as often as by the core), so
    /// a `Status` reply encoded before it is not served after it.
    func onInfoChange(_ observer: @escaping @Sendable () -> Void) {
        infoObserver.withLockedValue { $0 = observer }
    }

    private func setInfo(_ info: QuicklistInfo) {
        let changed = current.withLockedValue { current -> Bool in
            guard current != info else { return false }
            current = info
            return true
        }
        if changed { infoObserver.withLockedValue { $0 }?() }
    }

    /// Told, on the bus thread, who reads the quicklist (the bus names whose owner shows it),
    /// first when the thread knows and then at each change; empty when nobody does or there is
    /// no bus to ask.
    func onReadersChange(_ observer: @escaping @Sendable (Set<String>) -> Void) {
        readersObserver.withLockedValue { $0 = observer }
    }

    /// Told, on the bus thread, when qactd's GNOME Shell extension says the running apps changed
    /// (or its name changed hands).
    func onRunningAppsChange(_ observer: @escaping @Sendable () -> Void) {
        runningAppsObserver.withLockedValue { $0 = observer }
    }

    private func tellReaders(_ readers: Set<String>, last: inout Set<String>?) {
        guard readers != last else { return }
        last = readers
        readersObserver.withLockedValue { $0 }?(readers)
    }

    /// Where a click on an item goes (the core's trigger path); set once the core exists.
    func onActivate(_ handler: @escaping @Sendable (QuicklistEntry) -> Void) {
        activation.withLockedValue { $0 = handler }
    }

    /// Hands the thread what to show; it exports and announces it (only a change is announced).
    /// The thread starts with the first content that turns the quicklist on.
    func publish(_ wanted: Wanted) {
        if case .on = wanted, case .failure(let missing) = address {
            // Without a session bus there is nothing to connect to: say why, keep everything else.
            setInfo(QuicklistInfo(state: .off, message: missing.description))
            readersObserver.withLockedValue { $0 }?([])
            return
        }
        // Every change of the core's state comes here; only a change of the quicklist wakes the thread.
        let changed = thread.withMail { current -> Bool in
            defer { current.wanted = wanted }
            return current.wanted != wanted
        }
        if thread.isRunning || thread.isStopping {
            if changed { thread.wake() }
            return
        }
        guard case .on = wanted, case .success(let address) = address else {
            if case .off(let reason) = wanted { setInfo(QuicklistInfo(state: .off, message: reason)) }
            return
        }
        do {
            try thread.start { [self] in run(address: address) }
        } catch {
            logger.error("Cannot start the session bus thread: \(error) The quicklist is off.")
            setInfo(QuicklistInfo(state: .off, message: "the session bus thread could not start: \(error)"))
        }
    }

    /// The faces of the favorites to show instead of their icon names (each an image for
    /// `icon-data`, by contact identifier); a change wakes a running thread, which tells the
    /// docks with `ItemsPropertiesUpdated`.
    func show(faces: [String: [UInt8]]) {
        let changed = thread.withMail { current -> Bool in
            defer { current.faces = faces }
            return current.faces != faces
        }
        if changed, thread.isRunning { thread.wake() }
    }

    /// Leaves the bus (the docks drop the menu) and ends the thread; returns once it has.
    func stop() async {
        await thread.stop()
    }

    // MARK: - The bus thread

    private func run(address: String) {
        var session: QuicklistBusSession?
        var retryDelay = Self.firstRetry
        var nextAttempt = ContinuousClock.now
        var lastFailure: String?
        var lastReaders: Set<String>?
        var descriptors: [pollfd] = []
        while !thread.isStopping {
            descriptors = []
            let content: QuicklistContent
            let mail = thread.withMail { $0 }
            switch mail.wanted {
            case .on(let wanted): content = wanted.showing(faces: mail.faces)
            case .off(let reason):
                if session != nil { logger.info("Leaving the session bus: the quicklist is off.") }
                session?.close()
                session = nil
                setInfo(QuicklistInfo(state: .off, message: reason))
                tellReaders([], last: &lastReaders)
                retryDelay = Self.firstRetry
                thread.sleep(polling: &descriptors, timeoutMilliseconds: -1)
                continue
            }
            do {
                // What the bus sent while the thread slept (calls from docks, a dropped connection).
                try session?.processPending()
                if session == nil {
                    guard ContinuousClock.now >= nextAttempt else {
                        thread.sleep(polling: &descriptors, timeoutMilliseconds: WakeUpSocket.milliseconds(until: nextAttempt))
                        continue
                    }
                    do {
                        session = try QuicklistBusSession(address: address, logger: logger) { [self] entry in
                            activation.withLockedValue { $0 }?(entry)
                        }
                        retryDelay = Self.firstRetry
                        lastFailure = nil
                    } catch {
                        let failure = "the session bus at '\(address)' cannot be reached (\(error)); retrying"
                        if failure != lastFailure {
                            logger.warning("The quicklist waits for the session bus: \(failure).")
                            lastFailure = failure
                        }
                        setInfo(QuicklistInfo(state: .waiting, message: failure, busAddress: address))
                        tellReaders([], last: &lastReaders)
                        nextAttempt = ContinuousClock.now + retryDelay
                        retryDelay = min(retryDelay * 2, Self.maxRetry)
                        continue
                    }
                }
                guard let connected = session else { continue }
                try connected.show(content)
                try connected.processPending()
                _ = connected.refreshReaders()
                tellReaders(Set(connected.readers.keys), last: &lastReaders)
                if connected.takeRunningAppsChange() { runningAppsObserver.withLockedValue { $0 }?() }
                setInfo(
                    QuicklistInfo(
                        state: .on, busAddress: address, busName: connected.uniqueName, objectPath: Self.menuPath,
                        applicationURI: content.applicationURI, items: content.entries.count,
                        readers: connected.readers.sorted(by: { $0.key < $1.key }).map { "\($0.key) (\($0.value))" }))
                descriptors = [pollfd(fd: connected.descriptor, events: connected.pollEvents, revents: 0)]
                thread.sleep(polling: &descriptors, timeoutMilliseconds: connected.timeoutMilliseconds ?? -1)
            } catch {
                logger.warning("Lost the session bus (\(error)); reconnecting to export the quicklist again.")
                session?.close()
                session = nil
                lastFailure = nil
                setInfo(QuicklistInfo(state: .waiting, message: "the session bus went away (\(error)); reconnecting", busAddress: address))
                tellReaders([], last: &lastReaders)
                nextAttempt = ContinuousClock.now + retryDelay
            }
        }
        session?.close()
        setInfo(QuicklistInfo(state: .off, message: "the daemon stopped"))
    }

    // MARK: - What to show

    /// The quicklist for a publication: with `DynamicItems=quicklist` or `auto`, the displayed
    /// dynamic items (static items go into the desktop entry), for `application://<desktop-file ID>`.
    static func wanted(for publication: LauncherPublication) -> Wanted {
        let configuration = publication.configuration
        guard let desktopFileID = configuration.launcherDesktopFileID else {
            return .off(reason: "DesktopFile= is empty")
        }
        guard configuration.launcherDynamicItems != .desktopEntry else {
            return .off(reason: "DynamicItems=desktop-entry: the favorites are in the desktop entry")
        }
        let entries = publication.displayed.items.filter { $0.displayed && $0.source == .dynamic }.map { row in
            QuicklistEntry(
                label: row.item.title, iconName: FreedesktopIconName.icon(for: row.item.icon, fallback: nil),
                type: row.item.type, contactIdentifier: row.item.contactIdentifier)
        }
        return .on(QuicklistContent(applicationURI: "application://\(desktopFileID)", entries: entries))
    }
}

extension QuicklistInfo {
    init(
        state: State, message: String? = nil, busAddress: String? = nil, busName: String? = nil, objectPath: String? = nil,
        applicationURI: String? = nil, items: Int = 0, readers: [String] = []
    ) {
        self.init(
            state: state.rawValue, message: message, busAddress: busAddress, busName: busName, objectPath: objectPath,
            applicationURI: applicationURI, items: items, readers: readers)
    }
}
