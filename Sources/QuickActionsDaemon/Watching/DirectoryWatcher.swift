import Contacts
import FoundationEssentials
import Logging
import QuickActionsProtocol

import Glibc

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

/// The contacts watcher's timers (tests make them short).
struct DirectoryWatcherTiming: Sendable {
    /// How often a tree without watches (the watch limit was hit) is re-read.
    var degradedRescanInterval: Duration = .seconds(30)
    /// How often a missing root is looked for when its parent cannot be watched.
    var reattachRetryInterval: Duration = .seconds(2)
}

/// Keeps the contacts index live as files change: watches the vdir tree recursively with
/// inotify on a thread of its own (`qactd-watcher`), turns events into per-file index changes
/// (parsing happens there, never on the core actor or the socket's event loop), and hands them,
/// in order, to the daemon. `WatcherStateMachine` decides; `WatcherEngine` carries out.
typealias DirectoryWatcher = WatcherThread<WatcherEngine>

extension WatcherThread where Engine == WatcherEngine {
    convenience init(
        scanner: ContactsDirectoryScanner, logger: Logger, timing: DirectoryWatcherTiming = DirectoryWatcherTiming(),
        addWatch: @escaping InotifyAddWatch = { inotify_add_watch($0, $1, $2) },
        probeWriter: @escaping WriterProbe = OpenForWritingProbe.acquireReadLease
    ) {
        self.init(
            WatcherEngine(scanner: scanner, logger: logger, timing: timing, addWatch: addWatch, probeWriter: probeWriter),
            named: "qactd-watcher", for: "the contacts watcher")
    }

    /// Creates the inotify instance and walks the tree once, adding a watch to each folder
    /// before listing it. The returned update is the first index.
    func attach() -> ContactsDirectoryUpdate {
        attach { engine in
            engine.start()
            return engine.takeUpdate(force: true) ?? ContactsDirectoryUpdate(changes: [], work: ActivityCounters(), health: engine.healthInfo)
        }
    }
}

extension WatcherEngine: WatchedSource {
    /// The thread runs even without a folder (`Directory=` empty): a reload may name one.
    var isEnabled: Bool { true }

    func handleEvents(ready: Bool) {
        if ready || hasCreationsForNextBatch { readAndHandleEvents() }
        probeWaitingWritersIfDue()
        tickIfDue()
    }

    func takeUpdates(afterReload _: Bool) -> [ContactsDirectoryUpdate] {
        takeUpdate(force: false).map { [$0] } ?? []
    }

    /// The folder is read whole before READY=1: nothing is left for later.
    func finishFirstReads() -> Bool { false }
    func abandonFirstReads() -> Bool { false }
}
