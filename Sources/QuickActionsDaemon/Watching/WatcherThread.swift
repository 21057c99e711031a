import Logging
import Synchronization

import Glibc

/// What a source of contacts offers the thread that watches it (`WatcherThread`): the
/// contacts folder's `WatcherEngine` and the address books' `EvolutionEngine`. The engine is
/// touched only under the watcher's lock: by `attach` before the thread starts, then by the
/// thread alone (or by the caller, when no thread runs).
protocol WatchedSource: AnyObject, SendableMetatype {
    /// New settings, handed over by `reload`.
    associatedtype Settings: Sendable
    /// What the core is handed after each round.
    associatedtype Update: Sendable

    var logger: Logger { get }
    /// The inotify descriptor the thread polls (-1: none).
    var inotify: Int32 { get }
    /// Whether there is anything to watch, so the thread starts (or, later, a reload starts it).
    var isEnabled: Bool { get }
    /// How long the thread may sleep before a timer of the engine's is due (-1: no timer).
    func pollTimeoutMilliseconds() -> Int32
    /// One round after the thread woke: the queued events when `ready`, then what is due.
    func handleEvents(ready: Bool)
    func reload(_ settings: Settings)
    /// What changed since the last call, in order; `afterReload`: a reload was handled this round.
    func takeUpdates(afterReload: Bool) -> [Update]
    /// The contacts start-up left to be indexed once the daemon serves; true when there were any.
    func finishFirstReads() -> Bool
    /// Stopping before `finishFirstReads`: nobody waits for those contacts any more; true when there were any.
    func abandonFirstReads() -> Bool
    func closeInotify()
    /// Every descriptor the thread polls: `inotify`, unless the engine keeps several.
    var pollDescriptors: [Int32] { get }
}

extension WatchedSource {
    var pollDescriptors: [Int32] { inotify >= 0 ? [inotify] : [] }
}

/// The one control of a watcher: a source's engine behind a lock and a `MailboxThread` that
/// sleeps in `poll` on the engine's inotify descriptor, reads what changed, and hands the
/// updates, in order, to the core; reloads and the rest of start-up's reads are requests the
/// thread answers once their result is delivered. `DirectoryWatcher` (the contacts folder,
/// `qactd-watcher`) and `EvolutionWatcher` (the address books, `qactd-evolution`) are each one.
final class WatcherThread<Engine: WatchedSource>: Sendable {
    private enum Request: Sendable {
        case reload(Engine.Settings, MailboxReply<Void>)
        case indexTheRest
    }

    private struct Mail: Sendable {
        var requests: [Request] = []
        var deliver: (@Sendable (Engine.Update) async -> Void)?
    }

    private let engine: Mutex<Engine>
    private let thread: MailboxThread<Mail>

    /// `name` is the thread's, `purpose` how logs name the watcher.
    init(_ engine: sending Engine, named name: String, for purpose: String) {
        let logger = engine.logger
        self.engine = Mutex(engine)
        thread = MailboxThread(named: name, for: purpose, mail: Mail(), logger: logger)
    }

    /// Runs `first` on the engine on the caller's thread (the daemon is not serving yet), before
    /// any thread: the first reading of the source. Events from then on queue in the kernel until `run`.
    func attach<Result: Sendable>(_ first: @Sendable (Engine) -> Result) -> Result {
        engine.withLock { first($0) }
    }

    /// Starts the thread (if the engine is enabled; a reload may start it later). `deliver` is
    /// awaited before the next round is read, so changes reach the index in order and a slow
    /// consumer leaves events queued in the kernel (where an overflow turns into a rescan)
    /// rather than in memory.
    func run(delivering deliver: @escaping @Sendable (Engine.Update) async -> Void) {
        thread.withMail { $0.deliver = deliver }
        startThreadIfNeeded()
    }

    private func startThreadIfNeeded() {
        guard engine.withLock({ $0.isEnabled }), !thread.isRunning, let deliver = thread.withMail({ $0.deliver }) else { return }
        do {
            try thread.start { [self] in loop(deliver) }
        } catch {
            engine.withLock { $0.logger.error("Cannot start \(thread.purpose)'s thread: \(error) Its contacts are not followed.") }
        }
    }

    /// New settings: the source is read again; returns once the result reached the core, so a
    /// `Reload` reply comes after the index is current.
    func reload(_ settings: Engine.Settings) async {
        let queued: Void? = await thread.ask { mail, reply in
            mail.requests.append(.reload(settings, reply))
            return nil
        }
        // No thread yet (nothing to watch so far) or any more: read here and deliver directly;
        // the settings may turn the watcher on.
        guard queued == nil, !thread.isStopping else { return }
        let deliver = thread.withMail { $0.deliver }
        let updates = engine.withLock { engine in
            engine.reload(settings)
            return engine.takeUpdates(afterReload: true)
        }
        if let deliver { for update in updates { await deliver(update) } }
        startThreadIfNeeded()
    }

    /// Once the daemon serves (READY=1 sent, so the work does not compete with start-up): the
    /// thread indexes the contacts `attach` left, before anything else.
    func indexTheRest() async {
        guard !thread.post({ $0.requests.append(.indexTheRest) }) else { return }
        // No thread (it could not start): here, then.
        guard !thread.isStopping, let deliver = thread.withMail({ $0.deliver }) else { return }
        let updates = engine.withLock { engine in engine.finishFirstReads() ? engine.takeUpdates(afterReload: false) : [] }
        for update in updates { await deliver(update) }
    }

    /// Stops the thread and closes every descriptor; nothing is delivered afterwards.
    func stop() async {
        await thread.stop()
        engine.withLock { $0.closeInotify() }
    }

    // MARK: - The thread

    private func loop(_ deliver: @escaping @Sendable (Engine.Update) async -> Void) {
        var descriptors: [pollfd] = []
        while true {
            // What `attach` read was delivered already: the thread begins by sleeping.
            let (polled, timeout) = engine.withLock { ($0.pollDescriptors, $0.pollTimeoutMilliseconds()) }
            descriptors = polled.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            thread.sleep(polling: &descriptors, timeoutMilliseconds: timeout)
            let stopping = thread.isStopping
            let requests = thread.withMail { mail in
                defer { mail.requests = [] }
                return mail.requests
            }
            var reloads: [MailboxReply<Void>] = []
            var abandoned = false
            let eventsReady = descriptors.contains { $0.revents != 0 }
            let updates = engine.withLock { engine -> [Engine.Update] in
                engine.handleEvents(ready: eventsReady)
                for request in requests {
                    switch request {
                    case .reload(let settings, let reply):
                        engine.reload(settings)
                        reloads.append(reply)
                    case .indexTheRest:
                        _ = engine.finishFirstReads()
                    }
                }
                // Stopping before the rest was indexed: the core stops waiting for it.
                if stopping { abandoned = engine.abandonFirstReads() }
                return engine.takeUpdates(afterReload: !reloads.isEmpty)
            }
            if !stopping || !reloads.isEmpty || abandoned {
                for update in updates { EventLoopExecution.runBlocking { await deliver(update) } }
            }
            for reply in reloads { reply.answer() }
            if stopping { break }
        }
    }
}
