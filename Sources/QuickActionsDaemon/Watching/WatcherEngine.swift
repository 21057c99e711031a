import Contacts
import Dispatch
import FoundationEssentials
import Logging
import Synchronization
import QuickActionsProtocol

import Glibc
import SystemCalls

/// The watcher's mutable part, touched only under the `DirectoryWatcher`'s lock:
/// by `attach` before the thread starts, then by the thread alone.
final class WatcherEngine {
    typealias Action = WatcherStateMachine.Action

    // Not private where the engine's extensions (WatcherEngine+Events, +Timers, +Scanning),
    // in files of their own, use it.
    var machine: WatcherStateMachine
    var scanner: ContactsDirectoryScanner
    let logger: Logger
    let timing: DirectoryWatcherTiming
    private let addWatch: InotifyAddWatch
    let probeWriter: WriterProbe
    /// Wall-clock time of `startInstant`, so a monotonic instant can be shown as a date that
    /// stays the same from one status to the next.
    private let startInstant = ContinuousClock.now
    private let startDate = Date()
    private(set) var inotify: Int32 = -1
    /// Why `inotify_init1` failed; every folder then counts as unwatchable (periodic rescans).
    private var inotifyError: Int32 = 0

    var changes: [ContactIndexChange] = []
    var work = ActivityCounters()
    private var deliveredHealth: WatchHealthInfo?
    private var loggedHealth: WatcherHealth?
    var nextTick: ContinuousClock.Instant?
    var tickInterval: Duration?
    var buffer = [UInt8](repeating: 0, count: 64 * 1024)
    /// Files created at the very end of a batch, read at the start of the next one together
    /// with the IN_CLOSE_WRITE already queued for them (see `readAndHandleEvents`).
    var creationsForNextBatch: [Action] = []
    /// How log lines name the folder: the contacts folder, or one of khard's address books.
    var folderName = "the contacts folder"

    init(
        scanner: ContactsDirectoryScanner, logger: Logger, timing: DirectoryWatcherTiming,
        addWatch: @escaping InotifyAddWatch, probeWriter: @escaping WriterProbe
    ) {
        self.machine = WatcherStateMachine(root: scanner.root)
        self.scanner = scanner
        self.logger = logger
        self.timing = timing
        self.addWatch = addWatch
        self.probeWriter = probeWriter
    }

    /// `Directory=` is empty: no folder, no watch, no timer (contacts come from Evolution only, or none).
    var isOff: Bool { machine.root.isEmpty }

    var healthInfo: WatchHealthInfo {
        if isOff { return WatchHealthInfo(state: "off", message: "no contacts folder: Directory= is empty") }
        var info = machine.health.info(root: machine.root, retryInterval: timing.degradedRescanInterval)
        let waits = machine.writerWaits.sorted { ($0.value.since, $0.key) < ($1.value.since, $1.key) }
        info.waitingForWriterCount = waits.count
        info.waitingForWriter = waits.prefix(WatchHealthInfo.listedWriterWaits).map { path, wait in
            let since = startDate.addingTimeInterval(TimeInterval((wait.since - startInstant) / .milliseconds(1)) / 1000)
            return WriterWaitInfo(path: path, since: since.formatted(.iso8601))
        }
        return info
    }

    func start() {
        guard !isOff else { return }
        openInotify()
        perform(machine.start())
    }

    private func openInotify() {
        guard inotify < 0 else { return }
        switch Inotify.open(logger: logger, failure: "Cannot watch \(folderName), falling back to periodic rescans:") {
        case .success(let descriptor): inotify = descriptor
        case .failure(let error): inotifyError = error.errno
        }
    }

    func closeInotify() {
        if inotify >= 0 { close(inotify) }
        inotify = -1
    }

    func reload(_ newScanner: ContactsDirectoryScanner) {
        if WatcherStateMachine(root: newScanner.root).root != machine.root {
            if !isOff { perform(machine.detach()) }
            creationsForNextBatch = []
            machine = WatcherStateMachine(root: newScanner.root)
            scanner = newScanner
            if isOff {
                logger.notice("No contacts folder any more (Directory= is empty).")
                scheduleTick()
                return
            }
            logger.notice("The contacts folder changed to '\(newScanner.root)'.", metadata: ["QACTD_PATH": "\(newScanner.root)"])
            openInotify()
            work.rescans += 1
            perform(machine.start())
        } else {
            scanner = newScanner
            if !isOff { perform(machine.reloadRequested()) }
        }
    }

    /// What changed since the last call; nil when there is nothing to tell.
    func takeUpdate(force: Bool) -> ContactsDirectoryUpdate? {
        let health = healthInfo
        let workDone = work.eventsHandled != 0 || work.filesParsed != 0 || work.rescans != 0
        guard force || !changes.isEmpty || workDone || health != deliveredHealth else { return nil }
        defer {
            changes = []
            work = ActivityCounters()
            deliveredHealth = health
        }
        return ContactsDirectoryUpdate(changes: changes, work: work, health: health)
    }

    // MARK: Carrying out actions

    /// Runs the actions and those they lead to, in order.
    func perform(_ initial: [Action]) {
        var queue = initial
        var position = 0
        while position < queue.count {
            let action = queue[position]
            position += 1
            queue += execute(action)
        }
        logHealthChange()
        scheduleTick()
    }

    private func execute(_ action: Action) -> [Action] {
        switch action {
        case .readFile(let path):
            return refresh(action, path, onlyIfComplete: false)
        case .readFileIfComplete(let path):
            return refresh(action, path, onlyIfComplete: true)
        case .forgetFile(let path):
            changes.append(.removed(path: path))
            return []
        case .forgetTree(let tree):
            changes.append(.removedTree(directory: tree))
            return []
        case .removeWatches(let descriptors):
            // EINVAL means the kernel already dropped the watch (its folder was deleted).
            for descriptor in descriptors where inotify >= 0 { inotify_rm_watch(inotify, descriptor) }
            return []
        case .watchParent(let parent):
            switch addWatch(parent, mask: .rootParent) {
            case .success(let descriptor):
                return machine.parentWatchAdded(descriptor: descriptor)
            case .failure(let error):
                logger.debug("Cannot watch '\(parent)' for the contacts folder's return: \(error)", metadata: ["QACTD_PATH": "\(parent)"])
                return machine.parentWatchFailed()
            }
        case .scanTree(let tree, let reason):
            return scan(tree, reason)
        }
    }

    func addWatch(_ path: String, mask: InotifyEventMask) -> Result<Int32, SystemCallError> {
        guard inotify >= 0 else { return .failure(SystemCallError(call: "inotify_init1", errno: inotifyError)) }
        let inotify = inotify
        do {
            return .success(try retryingSystemCall("inotify_add_watch", path: path) { addWatch(inotify, path, mask.rawValue) })
        } catch {
            return .failure(error)
        }
    }

    private func logHealthChange() {
        guard !isOff else { return }
        let health = machine.health
        guard health != loggedHealth else { return }
        defer { loggedHealth = health }
        switch health {
        case .watching:
            logger.info("Watching \(folderName) '\(machine.root)' with inotify (\(machine.watchedFolderCount) folders).",
                        metadata: ["QACTD_PATH": "\(machine.root)"])
        case .degraded(let trees, let reason):
            logger.warning("Contacts watching is degraded (\(reason)); rescanning every \(timing.degradedRescanInterval.wholeSeconds) s: \(trees.map { "'\($0)'" }.joined(separator: ", ")).",
                           metadata: ["QACTD_PATH": "\(trees.first ?? machine.root)"])
        case .reattaching:
            logger.warning("\(folderName.prefix(1).uppercased() + folderName.dropFirst()) '\(machine.root)' is missing; serving none of its contacts until it appears again.",
                           metadata: ["QACTD_PATH": "\(machine.root)"])
        }
    }

}
