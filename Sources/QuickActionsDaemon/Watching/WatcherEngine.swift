import Contacts
import Dispatch
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

/// The watcher's mutable part, touched only under the `DirectoryWatcher`'s lock:
/// by `attach` before the thread starts, then by the thread alone.
final class WatcherEngine {
    typealias Action = WatcherStateMachine.Action

    private(set) var machine: WatcherStateMachine
    private var scanner: ContactsDirectoryScanner
    let logger: Logger
    private let timing: DirectoryWatcherTiming
    private let addWatch: InotifyAddWatch
    private let probeWriter: WriterProbe
    /// Wall-clock time of `startInstant`, so a monotonic instant can be shown as a date that
    /// stays the same from one status to the next.
    private let startInstant = ContinuousClock.now
    private let startDate = Date()
    private(set) var inotify: Int32 = -1
    /// Why `inotify_init1` failed; every folder then counts as unwatchable (periodic rescans).
    private var inotifyError: Int32 = 0

    private var changes: [ContactIndexChange] = []
    private var work = ActivityCounters()
    private var deliveredHealth: WatchHealthInfo?
    private var loggedHealth: WatcherHealth?
    private var nextTick: ContinuousClock.Instant?
    private var tickInterval: Duration?
    private var buffer = [UInt8](repeating: 0, count: 64 * 1024)
    /// Files created at the very end of a batch, read at the start of the next one together
    /// with the IN_CLOSE_WRITE already queued for them (see `readAndHandleEvents`).
    private var creationsForNextBatch: [Action] = []

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

    var healthInfo: WatchHealthInfo {
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
        openInotify()
        perform(machine.start())
    }

    private func openInotify() {
        guard inotify < 0 else { return }
        do {
            inotify = try retryingSystemCall("inotify_init1") { inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK)) }
        } catch {
            inotifyError = error.errno
            logger.error("Cannot watch the contacts folder: \(error) Falling back to periodic rescans.")
        }
    }

    func closeInotify() {
        if inotify >= 0 { close(inotify) }
        inotify = -1
    }

    // MARK: Inputs

    /// Reads what the kernel has queued (bounded per batch) and handles it as one batch,
    /// so an overflow at the end of a long queue makes the work before it moot.
    func readAndHandleEvents() {
        var actions = creationsForNextBatch + handle(readQueuedEvents())
        creationsForNextBatch = []
        // The state machine decides what becomes of each file seen only through IN_CREATE
        // (`probed`) and whether the queue is read once more (`readsQueueAgain`).
        var drains = 0
        var lastRead: [Action] = []
        while true {
            actions = WatcherStateMachine.coalesce(actions, root: machine.root)
            let finishedCreations: Bool
            (actions, finishedCreations) = probeCreatedFiles(actions)
            guard WatcherStateMachine.readsQueueAgain(afterFinishedCreations: finishedCreations, rereadsSoFar: drains) else {
                if finishedCreations {
                    // Cut short by the bound: the files created in the last read that the probe
                    // found finished have their IN_CLOSE_WRITE queued (if they were written),
                    // and reading them now would parse them twice. They start the next batch.
                    let lastCreations = Set(lastRead.compactMap { action -> String? in
                        if case .readFileIfComplete(let path) = action { return path } else { return nil }
                    })
                    creationsForNextBatch = actions.filter { action in
                        if case .readFileIfComplete(let path) = action { return lastCreations.contains(path) } else { return false }
                    }
                    actions.removeAll { creationsForNextBatch.contains($0) }
                }
                break
            }
            drains += 1
            let more = readQueuedEvents()
            if more.isEmpty { break }
            lastRead = handle(more)
            actions += lastRead
        }
        perform(actions)
    }

    /// Whether the next batch is due now, without waiting for an event: it has files to read.
    var hasCreationsForNextBatch: Bool { !creationsForNextBatch.isEmpty }

    /// Probes each file seen only by `IN_CREATE` (`WatcherStateMachine.probed` decides): one
    /// still being written waits for its writer; a finished one (a hard link, or a file whose
    /// close is already queued) is read. Also says whether any turned out finished.
    private func probeCreatedFiles(_ actions: [Action]) -> (actions: [Action], finishedCreations: Bool) {
        let now = ContinuousClock.now
        var finishedCreations = false
        let probed = actions.compactMap { action -> Action? in
            guard case .readFileIfComplete(let path) = action else { return action }
            let answer = WatcherStateMachine.WriterProbeAnswer(OpenForWritingProbe.isOpenForWriting(path, acquire: probeWriter))
            if answer == .noWriter { finishedCreations = true }
            return machine.probed(action, answer, now: now)
        }
        return (probed, finishedCreations)
    }

    /// Tries again to read the files that wait for their writer.
    func probeWaitingWritersIfDue() {
        let due = machine.writerProbesDue(now: ContinuousClock.now)
        if !due.isEmpty { perform(due) }
    }

    private func handle(_ events: [InotifyEvent]) -> [Action] {
        work.eventsHandled += events.count
        var actions: [Action] = []
        for event in events {
            if logger.logLevel <= .debug {
                logger.debug("inotify: watch \(event.watchDescriptor) \(event.mask) '\(event.name ?? "")'.")
            }
            actions += machine.handle(event)
        }
        return actions
    }

    private func readQueuedEvents() -> [InotifyEvent] {
        guard inotify >= 0 else { return [] }
        var events: [InotifyEvent] = []
        var total = 0
        while total < 1 << 20 {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(inotify, $0.baseAddress, $0.count) }
            if count < 0 {
                let error = errno
                if error == EINTR { continue }
                if error != EAGAIN {
                    logger.error("Reading inotify events failed: \(errnoText(error)), ignoring.")
                }
                break
            }
            if count == 0 { break }
            let decoded = buffer.withUnsafeBytes { InotifyEventDecoder.decode(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
            if decoded.trailingBytes != 0 {
                logger.warning("An inotify read ended inside an event (\(decoded.trailingBytes) bytes), ignoring them.")
            }
            events += decoded.events
            total += count
        }
        return events
    }

    func tickIfDue() {
        guard let nextTick, ContinuousClock.now >= nextTick else { return }
        self.nextTick = nil
        perform(machine.periodicTick())
    }

    func reload(_ newScanner: ContactsDirectoryScanner) {
        if WatcherStateMachine(root: newScanner.root).root != machine.root {
            logger.notice("The contacts folder changed to '\(newScanner.root)'.", metadata: ["QACTD_PATH": "\(newScanner.root)"])
            perform(machine.detach())
            creationsForNextBatch = []
            machine = WatcherStateMachine(root: newScanner.root)
            scanner = newScanner
            work.rescans += 1
            perform(machine.start())
        } else {
            scanner = newScanner
            perform(machine.reloadRequested())
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

    func pollTimeoutMilliseconds() -> Int32 {
        if hasCreationsForNextBatch { return 0 }
        let deadlines = [nextTick, machine.nextWriterProbe].compactMap { $0 }
        guard let next = deadlines.min() else { return -1 }
        let remaining = next - ContinuousClock.now
        if remaining <= .zero { return 0 }
        let (seconds, attoseconds) = remaining.components
        let milliseconds = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(clamping: milliseconds)
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

    private func addWatch(_ path: String, mask: InotifyEventMask) -> Result<Int32, SystemCallError> {
        guard inotify >= 0 else { return .failure(SystemCallError(call: "inotify_init1", errno: inotifyError)) }
        let inotify = inotify
        do {
            return .success(try retryingSystemCall("inotify_add_watch", path: path) { addWatch(inotify, path, mask.rawValue) })
        } catch {
            return .failure(error)
        }
    }

    private func watch(_ folder: String) -> [Action] {
        // The configured root may be a link the user chose; folders below it never are followed.
        let mask: InotifyEventMask = folder == machine.root ? .treeFolder : InotifyEventMask.treeFolder.union(.dontFollow)
        switch addWatch(folder, mask: mask) {
        case .success(let descriptor):
            return machine.watchAdded(folder: folder, descriptor: descriptor)
        case .failure(let error):
            let reason = error.errno == ENOSPC
                ? "the inotify watch limit fs.inotify.max_user_watches is reached"
                : errnoText(error.errno)
            if WatcherStateMachine.isResourceShortage(error.errno) {
                logger.warning("Cannot watch '\(folder)' with inotify: \(reason); rescanning it every \(timing.degradedRescanInterval.wholeSeconds) s instead.",
                               metadata: ["QACTD_PATH": "\(folder)"])
            } else if error.errno == ENOENT || error.errno == ENOTDIR {
                logger.debug("'\(folder)' went away before it could be watched, ignoring.", metadata: ["QACTD_PATH": "\(folder)"])
            } else {
                logger.warning("Cannot watch '\(folder)' with inotify: \(reason), ignoring.", metadata: ["QACTD_PATH": "\(folder)"])
            }
            return machine.watchFailed(folder: folder, errno: error.errno, reason: reason)
        }
    }

    private func scan(_ tree: String, _ reason: TreeScanReason) -> [Action] {
        if tree != machine.root {
            // A folder below the root must still be a real folder, never a link to elsewhere.
            var info = stat()
            guard lstat(tree, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else { return machine.treeMissing(tree) }
        }
        var actions: [Action] = []
        let scanner = self.scanner
        let result = scanner.scan(under: tree) { folder in
            guard machine.shouldWatch(folder) else { return }
            actions += watch(folder)
        }
        if result.problems.contains(where: { $0.path == tree && ($0.kind == .missing || $0.kind == .notADirectory) }) {
            return actions + machine.treeMissing(tree)
        }
        for problem in result.problems {
            logger.warning("\(problem.description.dropLast()), ignoring.", metadata: ["QACTD_PATH": "\(problem.path)"])
        }
        if reason.isRescan {
            work.rescans += 1
            logger.log(level: reason == .periodic ? .debug : .notice,
                       "Rescanned '\(tree)' (\(reason.logDescription)): \(result.files.count) contact files.",
                       metadata: ["QACTD_PATH": "\(tree)"])
        }
        if reason.isRescan || reason == .attach {
            // The walk is the whole truth for this tree: whatever the index held there goes.
            changes.append(.removedTree(directory: tree))
        }
        for file in result.files {
            work.filesParsed += 1
            // A new folder is often filled as it is made (`cp -r`, a sync run): a file still
            // being written was read half-done, and its IN_CLOSE_WRITE will come, as the folder
            // was watched before it was listed. (Not done on every walk: it costs a probe per file.)
            if reason == .appeared, OpenForWritingProbe.isOpenForWriting(file.path, acquire: probeWriter) == true {
                machine.writerFoundDuringWalk(file.path, now: ContinuousClock.now)
                continue
            }
            logIfInvalid(file.path, file.result)
            changes.append(.file(path: file.path, result: file.result))
        }
        return actions + machine.treeScanned(tree, folders: result.directories)
    }

    /// Reads one file as it is now, under a read lease so that no writer is there or can
    /// start meanwhile (a file some process has open for writing waits for it: see
    /// `WatcherStateMachine.probed`). Links and other non-regular entries are not contacts
    /// (as in the scan), so a path that is gone or became one leaves the index.
    private func refresh(_ action: Action, _ path: String, onlyIfComplete: Bool) -> [Action] {
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            _ = machine.probed(action, .noWriter, now: ContinuousClock.now)
            changes.append(.removed(path: path))
            return []
        }
        // After IN_CREATE an empty file is one whose creator has not opened it for writing
        // yet (or where leases cannot tell): its IN_CLOSE_WRITE will come.
        if onlyIfComplete && info.st_size == 0 {
            return []
        }
        switch scanner.read(path: path, underLease: probeWriter) {
        case .writerOpen:
            return machine.probed(action, .writerOpen, now: ContinuousClock.now).map { [$0] } ?? []
        case .vanished:
            _ = machine.probed(action, .noWriter, now: ContinuousClock.now)
            changes.append(.removed(path: path))
            return []
        case .read(let result):
            _ = machine.probed(action, .noWriter, now: ContinuousClock.now)
            work.filesParsed += 1
            logIfInvalid(path, result)
            changes.append(.file(path: path, result: result))
            return []
        }
    }

    private func logIfInvalid(_ path: String, _ result: Result<[Contact], ContactFileProblem>) {
        if case .failure(let problem) = result {
            logger.warning("Skipping '\(path)': \(problem), ignoring.", metadata: ["QACTD_PATH": "\(path)"])
        }
    }

    private func logHealthChange() {
        let health = machine.health
        guard health != loggedHealth else { return }
        defer { loggedHealth = health }
        switch health {
        case .watching:
            logger.info("Watching the contacts folder '\(machine.root)' with inotify (\(machine.watchedFolderCount) folders).",
                        metadata: ["QACTD_PATH": "\(machine.root)"])
        case .degraded(let trees, let reason):
            logger.warning("Contacts watching is degraded (\(reason)); rescanning every \(timing.degradedRescanInterval.wholeSeconds) s: \(trees.map { "'\($0)'" }.joined(separator: ", ")).",
                           metadata: ["QACTD_PATH": "\(trees.first ?? machine.root)"])
        case .reattaching:
            logger.warning("The contacts folder '\(machine.root)' is missing; serving no contacts until it appears again.",
                           metadata: ["QACTD_PATH": "\(machine.root)"])
        }
    }

    private func scheduleTick() {
        guard machine.needsPeriodicWork else {
            nextTick = nil
            tickInterval = nil
            return
        }
        let interval = machine.attached ? timing.degradedRescanInterval : timing.reattachRetryInterval
        if nextTick == nil || tickInterval != interval {
            nextTick = ContinuousClock.now + interval
            tickInterval = interval
        }
    }
}

extension TreeScanReason {
    var logDescription: String {
        switch self {
        case .appeared: "a new folder"
        case .attach: "attaching"
        case .overflow: "the inotify queue overflowed"
        case .periodic: "no inotify watch"
        case .reload: "reload"
        }
    }
}
