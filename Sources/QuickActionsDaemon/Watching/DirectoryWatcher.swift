import Contacts
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging
import Synchronization
import QuickActionsProtocol

#if canImport(Glibc)
import Glibc
#endif

/// What the watcher hands the daemon after each batch of work: per-file index changes,
/// the work it cost, and its health.
struct ContactsDirectoryUpdate: Sendable {
    var changes: [ContactIndexChange]
    var work: ActivityCounters
    var health: WatchHealthInfo
}

/// `inotify_add_watch`, injectable: the one place a watch is added, so tests can make it
/// fail the way a full watch table does (`ENOSPC`) without touching the system limit.
/// Returns the watch descriptor, or -1 with `errno` set.
typealias InotifyAddWatch = @Sendable (_ inotify: Int32, _ path: String, _ mask: UInt32) -> Int32


struct DirectoryWatcherTiming: Sendable {
    /// How often a tree without watches (the watch limit was hit) is re-read.
    var degradedRescanInterval: Duration = .seconds(30)
    /// How often a missing root is looked for when its parent cannot be watched.
    var reattachRetryInterval: Duration = .seconds(2)

    init(degradedRescanInterval: Duration = .seconds(30), reattachRetryInterval: Duration = .seconds(2)) {
        self.degradedRescanInterval = degradedRescanInterval
        self.reattachRetryInterval = reattachRetryInterval
    }
}

/// Keeps the contacts index live as files change: watches the vdir tree recursively with
/// inotify on a thread of its own, turns events into per-file index changes (parsing
/// happens here, never on the core actor or the socket's event loop), and hands them,
/// in order, to the daemon. `WatcherStateMachine` decides; this class only carries out.
final class DirectoryWatcher: Sendable {
    /// A reload waiting for the thread: the new settings, and whom to answer once delivered.
    private struct Reload: Sendable {
        var scanner: ContactsDirectoryScanner
        var reply: MailboxReply<Void>
    }

    private let engine: Mutex<WatcherEngine>
    /// The `qactd-watcher` thread and its queue of reloads.
    private let thread: MailboxThread<[Reload]>

    init(
        scanner: ContactsDirectoryScanner, logger: Logger, timing: DirectoryWatcherTiming = DirectoryWatcherTiming(),
        addWatch: @escaping InotifyAddWatch = { inotify_add_watch($0, $1, $2) },
        probeWriter: @escaping WriterProbe = OpenForWritingProbe.acquireReadLease
    ) {
        engine = Mutex(WatcherEngine(scanner: scanner, logger: logger, timing: timing, addWatch: addWatch, probeWriter: probeWriter))
        thread = MailboxThread(named: "qactd-watcher", for: "the contacts watcher", mail: [], logger: logger)
    }

    /// Creates the inotify instance and walks the tree once, adding a watch to each folder
    /// before listing it. Runs on the caller's thread (the daemon is not serving yet); the
    /// returned update is the first index. Events from now on queue in the kernel until `run`.
    func attach() -> ContactsDirectoryUpdate {
        engine.withLock { engine in
            engine.start()
            return engine.takeUpdate(force: true) ?? ContactsDirectoryUpdate(changes: [], work: ActivityCounters(), health: engine.healthInfo)
        }
    }

    /// Starts the watcher thread. `deliver` is awaited before the next batch is read, so
    /// changes reach the index in order and a slow consumer leaves events queued in the
    /// kernel (where an overflow turns into a rescan) rather than in memory.
    func run(delivering deliver: @escaping @Sendable (ContactsDirectoryUpdate) async -> Void) {
        do {
            try thread.start { [self] in loop(deliver) }
        } catch {
            engine.withLock { $0.logger.error("Cannot start the contacts watcher's thread: \(error) Contacts are not watched.") }
        }
    }

    /// Re-reads the whole tree with new settings (maybe another root); returns once the
    /// result has been delivered, so a `Reload` reply comes after the index is current.
    func reload(scanner: ContactsDirectoryScanner) async {
        _ = await thread.ask { reloads, reply in
            reloads.append(Reload(scanner: scanner, reply: reply))
            return nil
        }
    }

    /// Stops the thread and closes every descriptor; nothing is delivered afterwards.
    func stop() async {
        await thread.stop()
        engine.withLock { $0.closeInotify() }
    }

    // MARK: - The thread

    private func loop(_ deliver: @escaping @Sendable (ContactsDirectoryUpdate) async -> Void) {
        var descriptors: [pollfd] = []
        while true {
            // The first index was delivered by `attach`: the thread begins by sleeping.
            let (inotify, timeout) = engine.withLock { ($0.inotify, $0.pollTimeoutMilliseconds()) }
            descriptors = [pollfd(fd: inotify, events: Int16(POLLIN), revents: 0)]
            thread.sleep(polling: &descriptors, timeoutMilliseconds: timeout)
            let stopping = thread.isStopping
            let reloads = thread.withMail { reloads in
                defer { reloads = [] }
                return reloads
            }
            let eventsReady = descriptors.first.map { $0.revents != 0 } == true
            let update = engine.withLock { engine -> ContactsDirectoryUpdate? in
                if eventsReady || engine.hasCreationsForNextBatch { engine.readAndHandleEvents() }
                engine.probeWaitingWritersIfDue()
                engine.tickIfDue()
                for reload in reloads { engine.reload(reload.scanner) }
                return engine.takeUpdate(force: false)
            }
            if let update, !stopping || !reloads.isEmpty {
                EventLoopExecution.runBlocking { await deliver(update) }
            }
            for reload in reloads { reload.reply.answer() }
            if stopping { break }
        }
    }
}
