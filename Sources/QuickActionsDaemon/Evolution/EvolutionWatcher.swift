import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Keeps the contacts of Evolution Data Server's address books live: a thread of its own
/// sleeps in `poll` on an inotify descriptor (the address-book folders) and a wake-up socket,
/// reads only what changed in a book when its folder says it was written, and hands the
/// index changes, in order, to the core — as `DirectoryWatcher` does for the contacts folder.
/// With `Evolution=none` it holds no descriptor and starts no thread.
final class EvolutionWatcher: Sendable {
    private enum Request: Sendable {
        case reload(EvolutionSettings, MailboxReply<Void>)
        case indexTheRest
    }

    private struct Mail: Sendable {
        var requests: [Request] = []
        var deliver: (@Sendable (EvolutionUpdate) async -> Void)?
    }

    private let engine: Mutex<EvolutionEngine>
    /// The `qactd-evolution` thread and its queue of requests.
    private let thread: MailboxThread<Mail>

    init(settings: EvolutionSettings, location: EvolutionLocation, logger: Logger) {
        engine = Mutex(EvolutionEngine(settings: settings, location: location, logger: logger))
        thread = MailboxThread(named: "qactd-evolution", for: "the Evolution address-book watcher", mail: Mail(), logger: logger)
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
        guard !thread.post({ $0.requests.append(.indexTheRest) }) else { return }
        // No thread (it could not start): here, then.
        guard !thread.isStopping, let deliver = thread.withMail({ $0.deliver }) else { return }
        let update = engine.withLock { engine in engine.finishFirstReads() ? engine.takeUpdate(force: false) : nil }
        if let update { await deliver(update) }
    }

    /// Starts the thread if any book is chosen (or when a reload chooses one later).
    func run(delivering deliver: @escaping @Sendable (EvolutionUpdate) async -> Void) {
        thread.withMail { $0.deliver = deliver }
        startThreadIfNeeded()
    }

    private func startThreadIfNeeded() {
        guard engine.withLock({ $0.isEnabled }), !thread.isRunning, let deliver = thread.withMail({ $0.deliver }) else { return }
        do {
            try thread.start { [self] in loop(deliver) }
        } catch {
            engine.withLock { $0.logger.error("Cannot start the Evolution address-book watcher's thread: \(error) Address books are not followed.") }
        }
    }

    /// New settings (another selection, other favorite rules): every book is read again; returns
    /// once the result reached the core.
    func reload(_ settings: EvolutionSettings) async {
        let queued: Void? = await thread.ask { mail, reply in
            mail.requests.append(.reload(settings, reply))
            return nil
        }
        // No thread yet (`Evolution=none` so far) or any more: read here and deliver directly;
        // the settings may turn the watcher on.
        guard queued == nil, !thread.isStopping else { return }
        let deliver = thread.withMail { $0.deliver }
        let update = engine.withLock { engine -> EvolutionUpdate? in
            engine.reload(settings)
            return engine.takeUpdate(force: true)
        }
        if let update, let deliver { await deliver(update) }
        startThreadIfNeeded()
    }

    func stop() async {
        await thread.stop()
        engine.withLock { $0.closeInotify() }
    }

    // MARK: - The thread

    private func loop(_ deliver: @escaping @Sendable (EvolutionUpdate) async -> Void) {
        var descriptors: [pollfd] = []
        while true {
            // What `attach` read was delivered already: the thread begins by sleeping.
            let (inotify, timeout) = engine.withLock { ($0.inotify, $0.pollTimeoutMilliseconds()) }
            descriptors = inotify >= 0 ? [pollfd(fd: inotify, events: Int16(POLLIN), revents: 0)] : []
            thread.sleep(polling: &descriptors, timeoutMilliseconds: timeout)
            let stopping = thread.isStopping
            let requests = thread.withMail { mail in
                defer { mail.requests = [] }
                return mail.requests
            }
            var reloads: [MailboxReply<Void>] = []
            var abandoned = false
            let eventsReady = descriptors.first.map { $0.revents != 0 } == true
            let updates = engine.withLock { engine -> [EvolutionUpdate] in
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
                return engine.takeUpdates(force: !reloads.isEmpty)
            }
            if !stopping || !reloads.isEmpty || abandoned {
                for update in updates { EventLoopExecution.runBlocking { await deliver(update) } }
            }
            for reply in reloads { reply.answer() }
            if stopping { break }
        }
    }
}
