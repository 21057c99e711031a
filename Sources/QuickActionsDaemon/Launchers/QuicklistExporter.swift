import CSdBus
import NIOConcurrencyHelpers
import Logging
import QuickActions
import QuickActionsProtocol
import Synchronization
import SystemCalls

#if canImport(Glibc)
import Glibc
#endif

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

    struct Timing: Sendable {
        /// The first retry after the bus could not be reached; each failure doubles it up to `maxRetry`.
        var firstRetry: Duration = .milliseconds(100)
        var maxRetry: Duration = .seconds(2)
    }

    /// What the core wants shown: the content, or why there is none.
    enum Wanted: Sendable, Equatable {
        case off(reason: String)
        case on(QuicklistContent)
    }

    private struct Mailbox {
        var wanted = Wanted.off(reason: "the daemon has not published its quick actions yet")
        var threadStarted = false
        /// Made with the thread (a daemon that never turns the quicklist on opens no descriptor);
        /// used under the lock, so it is never written to after the thread closed it.
        var wakeUp: WakeUpSocket?
        var stopRequests: [CheckedContinuation<Void, Never>] = []
        var stopped = false
    }

    /// The session bus's address, or why there is none.
    private let address: Result<String, NoSessionBus>
    private let logger: Logger
    private let timing: Timing
    private let mailbox = NIOLockedValueBox(Mailbox())
    private let current: NIOLockedValueBox<QuicklistInfo>
    private let activation = NIOLockedValueBox<(@Sendable (QuicklistEntry) -> Void)?>(nil)
    private let infoObserver = NIOLockedValueBox<(@Sendable () -> Void)?>(nil)

    init(environment: [String: String], logger: Logger, timing: Timing = Timing()) {
        address = Self.sessionBusAddress(environment: environment)
        self.logger = logger
        self.timing = timing
        current = NIOLockedValueBox(QuicklistInfo(state: .off, message: "the daemon has not published its quick actions yet"))
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
            return
        }
        let startThread = mailbox.withLockedValue { mailbox -> WakeUpSocket? in
            guard !mailbox.stopped else { return nil }
            // Every change of the core's state comes here; only a change of the quicklist wakes the thread.
            guard mailbox.wanted != wanted || !mailbox.threadStarted else { return nil }
            mailbox.wanted = wanted
            if mailbox.threadStarted {
                mailbox.wakeUp?.wake()
                return nil
            }
            guard case .on = wanted else { return nil }
            mailbox.threadStarted = true
            mailbox.wakeUp = WakeUpSocket.make(for: "the session bus thread", logger: logger)
            return mailbox.wakeUp
        }
        if case .off(let reason) = wanted, startThread == nil, mailbox.withLockedValue({ !$0.threadStarted }) {
            setInfo(QuicklistInfo(state: .off, message: reason))
        }
        guard let wakeUp = startThread, case .success(let address) = address else { return }
        do {
            try startDetachedThread(named: "qactd-bus") { [self] in run(address: address, wakeUp: wakeUp) }
        } catch {
            mailbox.withLockedValue {
                $0.threadStarted = false
                $0.wakeUp?.close()
                $0.wakeUp = nil
            }
            logger.error("Cannot start the session bus thread: \(error) The quicklist is off.")
            setInfo(QuicklistInfo(state: .off, message: "the session bus thread could not start: \(error)"))
        }
    }

    /// Leaves the bus (the docks drop the menu) and ends the thread; returns once it has.
    func stop() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let waitForThread = mailbox.withLockedValue { mailbox -> Bool in
                guard mailbox.threadStarted, !mailbox.stopped else {
                    mailbox.stopped = true
                    return false
                }
                mailbox.stopRequests.append(continuation)
                mailbox.wakeUp?.wake()
                return true
            }
            if !waitForThread {
                continuation.resume()
            }
        }
    }

    // MARK: - The bus thread

    private func run(address: String, wakeUp: WakeUpSocket) {
        var session: QuicklistBusSession?
        var retryDelay = timing.firstRetry
        var nextAttempt = ContinuousClock.now
        var lastFailure: String?
        while true {
            let (wanted, stopRequests) = mailbox.withLockedValue { mailbox in
                if !mailbox.stopRequests.isEmpty {
                    mailbox.stopped = true
                    mailbox.wakeUp = nil  // closed below; nobody wakes a stopped thread
                }
                return (mailbox.wanted, mailbox.stopRequests)
            }
            if !stopRequests.isEmpty {
                session?.close()
                setInfo(QuicklistInfo(state: .off, message: "the daemon stopped"))
                wakeUp.close()
                for request in stopRequests { request.resume() }
                return
            }
            guard case .on(let content) = wanted else {
                if session != nil { logger.info("Leaving the session bus: the quicklist is off.") }
                session?.close()
                session = nil
                if case .off(let reason) = wanted { setInfo(QuicklistInfo(state: .off, message: reason)) }
                retryDelay = timing.firstRetry
                waitForWork(wakeUp, bus: nil, until: nil)
                continue
            }
            if session == nil {
                guard ContinuousClock.now >= nextAttempt else {
                    waitForWork(wakeUp, bus: nil, until: nextAttempt)
                    continue
                }
                do {
                    session = try QuicklistBusSession(address: address, logger: logger) { [self] entry in
                        activation.withLockedValue { $0 }?(entry)
                    }
                    retryDelay = timing.firstRetry
                    lastFailure = nil
                } catch {
                    let failure = "the session bus at '\(address)' cannot be reached (\(error)); retrying"
                    if failure != lastFailure {
                        logger.warning("The quicklist waits for the session bus: \(failure).")
                        lastFailure = failure
                    }
                    setInfo(QuicklistInfo(state: .waiting, message: failure, busAddress: address))
                    nextAttempt = ContinuousClock.now + retryDelay
                    retryDelay = min(retryDelay * 2, timing.maxRetry)
                    continue
                }
            }
            guard let connected = session else { continue }
            do {
                try connected.show(content)
                try connected.processPending()
                setInfo(
                    QuicklistInfo(
                        state: .on, busAddress: address, busName: connected.uniqueName, objectPath: Self.menuPath,
                        applicationURI: content.applicationURI, items: content.entries.count))
                waitForWork(wakeUp, bus: connected, until: nil)
                try connected.processPending()
            } catch {
                logger.warning("Lost the session bus (\(error)); reconnecting to export the quicklist again.")
                connected.close()
                session = nil
                lastFailure = nil
                setInfo(QuicklistInfo(state: .waiting, message: "the session bus went away (\(error)); reconnecting", busAddress: address))
                nextAttempt = ContinuousClock.now + retryDelay
            }
        }
    }

    /// Sleeps in `poll` until the bus has work, the core published or asked to stop, or `deadline`.
    private func waitForWork(_ wakeUp: WakeUpSocket, bus: QuicklistBusSession?, until deadline: ContinuousClock.Instant?) {
        var descriptors: [pollfd] = []
        var timeout = WakeUpSocket.milliseconds(until: deadline)
        if let bus {
            descriptors.append(pollfd(fd: bus.descriptor, events: bus.pollEvents, revents: 0))
            if let busTimeout = bus.timeoutMilliseconds { timeout = timeout < 0 ? busTimeout : min(timeout, busTimeout) }
        }
        wakeUp.sleep(polling: &descriptors, timeoutMilliseconds: timeout)
    }

    // MARK: - What to show

    /// The quicklist for a publication: with `DynamicItems=quicklist`, the displayed dynamic items
    /// (static items go into the desktop entry), for `application://<desktop-file ID>`.
    static func wanted(for publication: LauncherPublication) -> Wanted {
        let configuration = publication.configuration
        guard let desktopFileID = configuration.launcherDesktopFileID else {
            return .off(reason: "DesktopFile= is empty")
        }
        guard configuration.launcherDynamicItems == .quicklist else {
            return .off(reason: "DynamicItems=desktop-entry: the favorites are in the desktop entry")
        }
        let entries = publication.displayed.items.filter { $0.displayed && $0.source == .dynamic }.map { row in
            QuicklistEntry(
                label: row.item.title, iconName: FreedesktopIconName.icon(for: row.item.icon, fallback: nil),
                type: row.item.type, contactIdentifier: row.item.contactIdentifier)
        }
        return .on(QuicklistContent(applicationURI: "application://\(desktopFileID)", entries: entries))
    }

    // MARK: - The session bus's address

    /// Why there is no session bus to connect to.
    struct NoSessionBus: Error, CustomStringConvertible {
        let description: String
    }

    /// `DBUS_SESSION_BUS_ADDRESS`, else the bus a systemd user session keeps at
    /// `$XDG_RUNTIME_DIR/bus` (what sd-bus's own `sd_bus_open_user` looks for).
    static func sessionBusAddress(environment: [String: String]) -> Result<String, NoSessionBus> {
        if let address = environment["DBUS_SESSION_BUS_ADDRESS"], !address.isEmpty {
            return .success(address)
        }
        if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty {
            let path = "\(runtime)/bus"
            if (try? FileIO.fileExists(path)) == true {
                return .success("unix:path=\(path)")
            }
            return .failure(NoSessionBus(description: "no session bus: DBUS_SESSION_BUS_ADDRESS is not set and '\(path)' does not exist"))
        }
        return .failure(NoSessionBus(description: "no session bus: neither DBUS_SESSION_BUS_ADDRESS nor XDG_RUNTIME_DIR is set"))
    }
}

extension QuicklistInfo {
    init(
        state: State, message: String? = nil, busAddress: String? = nil, busName: String? = nil, objectPath: String? = nil,
        applicationURI: String? = nil, items: Int = 0
    ) {
        self.init(
            state: state.rawValue, message: message, busAddress: busAddress, busName: busName, objectPath: objectPath,
            applicationURI: applicationURI, items: items)
    }
}
