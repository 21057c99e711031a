import NIOConcurrencyHelpers
import Logging
import Synchronization
import SystemCalls

#if canImport(Glibc)
import Glibc
#endif

/// Keeps the contacts of Evolution Data Server's address books live: a thread of its own
/// sleeps in `poll` on an inotify descriptor (the address-book folders) and a wake-up socket,
/// reads only what changed in a book when its folder says it was written, and hands the
/// index changes, in order, to the core — as `DirectoryWatcher` does for the contacts folder.
/// With `Evolution=none` it holds no descriptor and starts no thread.
final class EvolutionWatcher: Sendable {
    private enum Request {
        case reload(EvolutionSettings, CheckedContinuation<Void, Never>)
        case stop(CheckedContinuation<Void, Never>)
        case indexTheRest
    }

    private struct Control {
        var requests: [Request] = []
        var running = false
        var closed = false
        var deliver: (@Sendable (EvolutionUpdate) async -> Void)?
    }

    private let engine: Mutex<EvolutionEngine>
    private let control = NIOLockedValueBox(Control())
    private let wakeUp: WakeUpSocket

    init(settings: EvolutionSettings, location: EvolutionLocation, logger: Logger) {
        engine = Mutex(EvolutionEngine(settings: settings, location: location, logger: logger))
        wakeUp = WakeUpSocket.make(for: "the Evolution address-book watcher", logger: logger)
    }

    /// Watches and reads every chosen book once, on the caller's thread (the daemon is not
    /// serving yet); the returned update is their favorites and the contacts in `wanted` (see
    /// `EvolutionEngine.start(favoritesFirst:)`). `indexTheRest` hands over the others.
    func attach(wanted: Set<String>) -> EvolutionUpdate {
        engine.withLock { engine in
            engine.start(favoritesFirst: wanted)
            return engine.takeUpdate(force: true) ?? EvolutionUpdate(changes: [], info: nil)
        }
    }

    /// Once the daemon serves (READY=1 sent, so the work does not compete with start-up): the
    /// thread parses and indexes the rows `attach` left, before anything else.
    func indexTheRest() async {
        let queued = control.withLockedValue { control -> Bool in
            guard control.running, !control.closed else { return false }
            control.requests.append(.indexTheRest)
            wakeUp.wake()
            return true
        }
        guard !queued else { return }
        // No thread (it could not start): here, then.
        let deliver = control.withLockedValue { $0.closed ? nil : $0.deliver }
        let update = engine.withLock { engine in engine.finishFirstReads() ? engine.takeUpdate(force: false) : nil }
        if let update, let deliver { await deliver(update) }
    }

    /// Starts the thread if any book is chosen (or when a reload chooses one later).
    func run(delivering deliver: @escaping @Sendable (EvolutionUpdate) async -> Void) {
        control.withLockedValue { $0.deliver = deliver }
        startThreadIfNeeded()
    }

    private func startThreadIfNeeded() {
        let enabled = engine.withLock { $0.isEnabled }
        let deliver = control.withLockedValue { control -> (@Sendable (EvolutionUpdate) async -> Void)? in
            guard enabled, !control.running, !control.closed, let deliver = control.deliver else { return nil }
            control.running = true
            return deliver
        }
        guard let deliver else { return }
        do {
            try startDetachedThread(named: "qactd-evolution") { [self] in loop(deliver) }
        } catch {
            control.withLockedValue { $0.running = false }
            engine.withLock { $0.logger.error("Cannot start the Evolution address-book watcher's thread: \(error) Address books are not followed.") }
        }
    }

    /// New settings (another selection, other favorite rules): every book is read again; returns
    /// once the result reached the core.
    func reload(_ settings: EvolutionSettings) async {
        var queued = false
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queued = control.withLockedValue { control -> Bool in
                guard control.running, !control.closed else { return false }
                control.requests.append(.reload(settings, continuation))
                wakeUp.wake()
                return true
            }
            if !queued { continuation.resume() }
        }
        guard !queued else { return }
        // No thread yet (`Evolution=none` so far) or any more: read here and deliver directly;
        // the settings may turn the watcher on.
        let (closed, deliver) = control.withLockedValue { ($0.closed, $0.deliver) }
        guard !closed else { return }
        let update = engine.withLock { engine -> EvolutionUpdate? in
            engine.reload(settings)
            return engine.takeUpdate(force: true)
        }
        if let update, let deliver { await deliver(update) }
        startThreadIfNeeded()
    }

    func stop() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let queued = control.withLockedValue { control -> Bool in
                if control.closed { return false }
                if control.running {
                    control.requests.append(.stop(continuation))
                    wakeUp.wake()
                    return true
                }
                control.closed = true
                return false
            }
            if !queued {
                closeDescriptors()
                continuation.resume()
            }
        }
    }

    // MARK: - The thread

    private func loop(_ deliver: @escaping @Sendable (EvolutionUpdate) async -> Void) {
        var stopRequests: [CheckedContinuation<Void, Never>] = []
        while stopRequests.isEmpty {
            let (inotify, timeout) = engine.withLock { ($0.inotify, $0.pollTimeoutMilliseconds()) }
            var descriptors = inotify >= 0 ? [pollfd(fd: inotify, events: Int16(POLLIN), revents: 0)] : []
            let (ready, pollError) = wakeUp.sleep(polling: &descriptors, timeoutMilliseconds: timeout)
            if ready < 0 && pollError != EINTR {
                engine.withLock { $0.logger.error("poll() on the address books' inotify descriptor failed: \(errnoText(pollError)).") }
                usleep(100_000)
            }
            let requests = control.withLockedValue { control -> [Request] in
                defer { control.requests = [] }
                return control.requests
            }
            var reloads: [CheckedContinuation<Void, Never>] = []
            var abandoned = false
            let eventsReady = ready > 0 && descriptors.first.map { $0.revents != 0 } == true
            let updates = engine.withLock { engine -> [EvolutionUpdate] in
                engine.handleEvents(ready: eventsReady)
                for request in requests {
                    switch request {
                    case .reload(let settings, let continuation):
                        engine.reload(settings)
                        reloads.append(continuation)
                    case .stop(let continuation):
                        stopRequests.append(continuation)
                    case .indexTheRest:
                        _ = engine.finishFirstReads()
                    }
                }
                // Stopping before the rest was indexed: the core stops waiting for it.
                if !stopRequests.isEmpty { abandoned = engine.abandonFirstReads() }
                return engine.takeUpdates(force: !reloads.isEmpty)
            }
            if stopRequests.isEmpty || !reloads.isEmpty || abandoned {
                for update in updates { deliverAndWait(update, deliver) }
            }
            for continuation in reloads { continuation.resume() }
        }
        let late = control.withLockedValue { control -> [Request] in
            control.closed = true
            control.running = false
            defer { control.requests = [] }
            return control.requests
        }
        closeDescriptors()
        for continuation in stopRequests { continuation.resume() }
        for request in late {
            switch request {
            case .reload(_, let continuation), .stop(let continuation): continuation.resume()
            case .indexTheRest: break
            }
        }
    }

    /// Waits on this dedicated thread (never a cooperative one) for the async consumer.
    private func deliverAndWait(_ update: EvolutionUpdate, _ deliver: @escaping @Sendable (EvolutionUpdate) async -> Void) {
        EventLoopExecution.runBlocking { await deliver(update) }
    }

    private func closeDescriptors() {
        engine.withLock { $0.closeInotify() }
        wakeUp.close()
    }
}
