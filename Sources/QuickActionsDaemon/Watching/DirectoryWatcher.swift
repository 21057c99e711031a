import Contacts
import NIOConcurrencyHelpers
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
import SystemCalls

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
    private enum Request {
        case reload(ContactsDirectoryScanner, CheckedContinuation<Void, Never>)
        case stop(CheckedContinuation<Void, Never>)
    }

    private struct Control {
        var requests: [Request] = []
        var running = false
        var closed = false
    }

    private let engine: Mutex<WatcherEngine>
    private let control = NIOLockedValueBox(Control())
    /// Wakes the thread out of `poll` for requests.
    private let wakeUp: WakeUpSocket

    init(
        scanner: ContactsDirectoryScanner, logger: Logger, timing: DirectoryWatcherTiming = DirectoryWatcherTiming(),
        addWatch: @escaping InotifyAddWatch = { inotify_add_watch($0, $1, $2) },
        probeWriter: @escaping WriterProbe = OpenForWritingProbe.acquireReadLease
    ) {
        engine = Mutex(WatcherEngine(scanner: scanner, logger: logger, timing: timing, addWatch: addWatch, probeWriter: probeWriter))
        wakeUp = WakeUpSocket.make(for: "the contacts watcher", logger: logger)
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
        let start = control.withLockedValue { control -> Bool in
            guard !control.running, !control.closed else { return false }
            control.running = true
            return true
        }
        guard start else { return }
        do {
            try startDetachedThread(named: "qactd-watcher") { [self] in loop(deliver) }
        } catch {
            control.withLockedValue { $0.running = false }  // so `stop` and `reload` do not wait for it
            engine.withLock { $0.logger.error("Cannot start the contacts watcher's thread: \(error) Contacts are not watched.") }
        }
    }

    /// Re-reads the whole tree with new settings (maybe another root); returns once the
    /// result has been delivered, so a `Reload` reply comes after the index is current.
    func reload(scanner: ContactsDirectoryScanner) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            // Woken under the lock: once `stop` has marked the watcher closed nobody sends,
            // so the wake socket's number, closed and perhaps reused, never gets a stray byte.
            let queued = control.withLockedValue { control -> Bool in
                guard control.running, !control.closed else { return false }
                control.requests.append(.reload(scanner, continuation))
                wake()
                return true
            }
            if !queued {
                continuation.resume()
            }
        }
    }

    /// Stops the thread and closes every descriptor; nothing is delivered afterwards.
    func stop() async {
        enum Step { case queued, closeNow, alreadyClosed }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let step = control.withLockedValue { control -> Step in
                if control.closed { return .alreadyClosed }
                if control.running {
                    control.requests.append(.stop(continuation))
                    wake()  // under the lock, as in `reload`
                    return .queued
                }
                control.closed = true
                return .closeNow
            }
            switch step {
            case .queued:
                break
            case .closeNow:
                closeDescriptors()
                continuation.resume()
            case .alreadyClosed:
                continuation.resume()
            }
        }
    }

    // MARK: - The thread

    private func loop(_ deliver: @escaping @Sendable (ContactsDirectoryUpdate) async -> Void) {
        var stopRequests: [CheckedContinuation<Void, Never>] = []
        while stopRequests.isEmpty {
            let (inotify, timeout) = engine.withLock { ($0.inotify, $0.pollTimeoutMilliseconds()) }
            var descriptors = [pollfd(fd: inotify, events: Int16(POLLIN), revents: 0)]
            let (ready, pollError) = wakeUp.sleep(polling: &descriptors, timeoutMilliseconds: timeout)
            if ready < 0 && pollError != EINTR {
                // Not expected with valid descriptors; back off instead of spinning.
                engine.withLock { $0.logger.error("poll() on the inotify descriptor failed: \(errnoText(pollError)).") }
                usleep(100_000)
            }
            var reloads: [(ContactsDirectoryScanner, CheckedContinuation<Void, Never>)] = []
            let requests = control.withLockedValue { control -> [Request] in
                defer { control.requests = [] }
                return control.requests
            }
            for request in requests {
                switch request {
                case .reload(let scanner, let continuation): reloads.append((scanner, continuation))
                case .stop(let continuation): stopRequests.append(continuation)
                }
            }
            let eventsReady = ready > 0 && descriptors[0].revents != 0
            let update = engine.withLock { engine -> ContactsDirectoryUpdate? in
                if eventsReady || engine.hasCreationsForNextBatch { engine.readAndHandleEvents() }
                engine.probeWaitingWritersIfDue()
                engine.tickIfDue()
                for (scanner, _) in reloads { engine.reload(scanner) }
                return engine.takeUpdate(force: false)
            }
            if let update, stopRequests.isEmpty || !reloads.isEmpty {
                deliverAndWait(update, deliver)
            }
            for (_, continuation) in reloads { continuation.resume() }
        }
        // Requests that raced with the stop are answered too: nothing waits forever.
        let late = control.withLockedValue { control -> [Request] in
            control.closed = true
            defer { control.requests = [] }
            return control.requests
        }
        closeDescriptors()
        for continuation in stopRequests { continuation.resume() }
        for request in late {
            switch request {
            case .reload(_, let continuation), .stop(let continuation): continuation.resume()
            }
        }
    }

    /// Waits on this dedicated thread (never a cooperative one) for the async consumer.
    private func deliverAndWait(_ update: ContactsDirectoryUpdate, _ deliver: @escaping @Sendable (ContactsDirectoryUpdate) async -> Void) {
        EventLoopExecution.runBlocking { await deliver(update) }
    }

    private func wake() {
        wakeUp.wake()
    }

    private func closeDescriptors() {
        engine.withLock { $0.closeInotify() }
        wakeUp.close()
    }
}
