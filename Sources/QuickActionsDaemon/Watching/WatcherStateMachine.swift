import Glibc
import Contacts
import QuickActionsProtocol

/// What the watcher must do for the contacts directory, decided from inotify events
/// and from the outcome of earlier actions. A value with no I/O: each input is a
/// `mutating func` that returns the `[Action]`s for the watcher to carry out, so every
/// path is tested without a kernel.
///
/// It tracks which folder each watch descriptor stands for, which trees are degraded
/// (no watches, periodic rescans), and whether the root is attached or awaited through
/// a watch on its parent.
struct WatcherStateMachine: Sendable {
    private enum ParentWatch: Hashable, Sendable {
        case none
        case requested
        case active(Int32)
        /// Could not be added, or went away; the periodic retry tries once more.
        case unavailable
    }

    let root: String
    private(set) var attached = false
    private var folders: [Int32: String] = [:]
    private var descriptors: [String: Int32] = [:]
    /// Topmost folders whose watch could not be added; everything below them is unwatched.
    private(set) var degradedTrees: Set<String> = []
    private var degradedReason = ""
    private var parentWatch = ParentWatch.none
    /// Files that were due to be read while some process still had them open for writing,
    /// by path. Each is probed again on a backoff until no writer is left, then read.
    private(set) var writerWaits: [String: WriterWait] = [:]

    init(root: String) {
        var root = root
        while root.count > 1 && root.hasSuffix("/") { root.removeLast() }
        self.root = root
    }

    var health: WatcherHealth {
        if !attached { return .reattaching }
        if degradedTrees.isEmpty { return .watching }
        return .degraded(trees: degradedTrees.sorted(), reason: degradedReason)
    }

    /// True while something must be retried on a timer (a missing root, degraded trees).
    var needsPeriodicWork: Bool { !attached || !degradedTrees.isEmpty }

    /// When the next file waiting for its writer is to be probed again.
    var nextWriterProbe: ContinuousClock.Instant? { writerWaits.values.lazy.compactMap(\.nextProbe).min() }

    /// How many folders have a watch (for log lines and tests).
    var watchedFolderCount: Int { folders.count }

    func descriptor(of folder: String) -> Int32? { descriptors[folder] }

    var rootParent: String? {
        guard root != "/", let slash = root.lastIndex(of: "/") else { return nil }
        return slash == root.startIndex ? "/" : String(root[..<slash])
    }

    private var rootName: String { ContactFileKind.fileName(ofPath: root) }

    // MARK: Inputs

    mutating func start() -> [Action] {
        [.scanTree(root, .attach)]
    }

    /// A reload asks for a full rescan: settings that decide how files parse may have changed.
    mutating func reloadRequested() -> [Action] {
        [.scanTree(root, attached ? .reload : .attach)]
    }

    /// The timer of `needsPeriodicWork` fired.
    mutating func periodicTick() -> [Action] {
        if !attached {
            if parentWatch == .unavailable { parentWatch = .none }
            return [.scanTree(root, .attach)]
        }
        return degradedTrees.sorted().map { .scanTree($0, .periodic) }
    }

    /// Whether the walk should try to watch `folder`: not below a degraded folder, whose
    /// subtree is covered by its periodic rescans (the folder itself is retried).
    func shouldWatch(_ folder: String) -> Bool {
        !degradedTrees.contains { Self.isStrictlyInside(folder, $0) }
    }

    mutating func watchAdded(folder: String, descriptor: Int32) -> [Action] {
        var actions: [Action] = []
        // The kernel hands back the existing descriptor for a folder it already watches
        // under another path: the folder was renamed while events were lost.
        if let previousPath = folders[descriptor], previousPath != folder {
            descriptors[previousPath] = nil
        }
        // The path now names another folder than before: the old watch is stale.
        if let previous = descriptors[folder], previous != descriptor {
            folders[previous] = nil
            actions.append(.removeWatches([previous]))
        }
        folders[descriptor] = folder
        descriptors[folder] = descriptor
        degradedTrees.remove(folder)
        return actions
    }

    /// `errno` from `inotify_add_watch`. Only running out of watches or memory degrades a
    /// tree; a folder that vanished or cannot be read is reported by the walk itself.
    mutating func watchFailed(folder: String, errno error: Int32, reason: String) -> [Action] {
        guard Self.isResourceShortage(error) else { return [] }
        if shouldWatch(folder) {
            // A new degraded tree swallows degraded trees below it.
            degradedTrees = degradedTrees.filter { !Self.isInside($0, folder) }
            degradedTrees.insert(folder)
        }
        degradedReason = reason
        return []
    }

    /// A walk of `tree` finished and found these folders (the tree itself first).
    mutating func treeScanned(_ tree: String, folders walked: [String]) -> [Action] {
        let walkedSet = Set(walked)
        var stale: [Int32] = []
        for (path, descriptor) in descriptors where Self.isInside(path, tree) && !walkedSet.contains(path) {
            stale.append(descriptor)
            descriptors[path] = nil
            folders[descriptor] = nil
        }
        degradedTrees = degradedTrees.filter { !Self.isInside($0, tree) || walkedSet.contains($0) }
        var actions: [Action] = stale.isEmpty ? [] : [.removeWatches(stale.sorted())]
        if tree == root {
            attached = true
            if case .active(let descriptor) = parentWatch { actions.append(.removeWatches([descriptor])) }
            parentWatch = .none
        }
        return actions
    }

    /// The walk could not start: the tree is gone (or is no longer a folder).
    mutating func treeMissing(_ tree: String) -> [Action] {
        guard tree == root else { return forgetTree(tree) }
        if attached { return rootLost() }
        if parentWatch == .none, let parent = rootParent {
            parentWatch = .requested
            return [.watchParent(parent), .scanTree(root, .attach)]
        }
        return []
    }

    /// The watcher is re-rooted (reload with another folder): every watch goes, and the
    /// index forgets the old tree.
    mutating func detach() -> [Action] {
        var parent: [Int32] = []
        if case .active(let descriptor) = parentWatch { parent = [descriptor] }
        parentWatch = .none
        return forgetWholeTree(removingAlso: parent)
    }

    mutating func parentWatchAdded(descriptor: Int32) -> [Action] {
        parentWatch = .active(descriptor)
        return []
    }

    mutating func parentWatchFailed() -> [Action] {
        parentWatch = .unavailable
        return []
    }

    mutating func handle(_ event: InotifyEvent) -> [Action] {
        if event.mask.contains(.queueOverflow) {
            return [.scanTree(root, attached ? .overflow : .attach)]
        }
        if case .active(let parent) = parentWatch, event.watchDescriptor == parent {
            return handleParentEvent(event)
        }
        guard let folder = folders[event.watchDescriptor] else { return [] }  // a watch already forgotten
        if event.mask.contains(.ignored) || event.mask.contains(.unmount) {
            // The kernel dropped the watch (its folder was deleted, or the file system unmounted).
            forgetDescriptor(event.watchDescriptor)
            return folder == root ? rootLost() : []
        }
        if event.mask.contains(.deleteSelf) || event.mask.contains(.moveSelf) {
            // Below the root the parent's IN_DELETE / IN_MOVED_FROM says the same with a name.
            return folder == root ? rootLost() : []
        }
        // Hidden entries (".git", vdirsyncer's state) are never part of the tree.
        guard let name = event.name, !name.isEmpty, !name.hasPrefix(".") else { return [] }
        let path = folder == "/" ? "/" + name : folder + "/" + name
        if event.mask.contains(.isDirectory) {
            if event.mask.contains(.create) || event.mask.contains(.movedTo) { return [.scanTree(path, .appeared)] }
            if event.mask.contains(.delete) || event.mask.contains(.movedFrom) { return forgetTree(path) }
            return []
        }
        guard ContactFileKind.classify(fileName: name) != nil else { return [] }
        if event.mask.contains(.closeWrite) || event.mask.contains(.movedTo) { return [.readFile(path)] }
        if event.mask.contains(.create) { return [.readFileIfComplete(path)] }
        if event.mask.contains(.delete) || event.mask.contains(.movedFrom) {
            writerWaits[path] = nil
            return [.forgetFile(path)]
        }
        return []
    }

    // MARK: Files with a writer

    /// Decides what becomes of a read once the probe has answered; nil: nothing now.
    ///
    /// A writer found after a close is never final. The kernel queues `IN_CLOSE_WRITE`
    /// *before* the closing writer gives up its write access, so a probe made right after
    /// that event can still see the writer that has just closed, and no later event will come
    /// for it. So the file is remembered (`writerWaits`) and probed again on a short backoff
    /// (`writerProbeBackoff`) until no writer is left, then read; a writer that closes later
    /// brings its own `IN_CLOSE_WRITE`, which reads it sooner. A file is therefore read once
    /// its last writer has closed, whatever the timing, and never while one has it open.
    ///
    /// A file found open for writing at its creation is probed on the same backoff. Its
    /// writer's close usually queues an `IN_CLOSE_WRITE` that reads it sooner, but not always:
    /// a file written unnamed (`O_TMPFILE`) and linked into the folder while still open, as
    /// Qt's `QSaveFile` and so KDE's programs save, brings an `IN_CREATE` and no close event
    /// for its name. Only the probe then finds it finished.
    mutating func probed(_ action: Action, _ answer: WriterProbeAnswer, now: ContinuousClock.Instant) -> Action? {
        guard let path = action.filePath else { return action }
        switch (action, answer) {
        case (.readFileIfComplete, .writerOpen):
            // Whatever the index held under this name (a file deleted and created again) is
            // gone while the new one is written.
            waitForWriter(path, now: now, probeAgain: true)
            return .forgetFile(path)
        case (.readFile, .writerOpen):
            // The index keeps the previous version until the writer is gone.
            waitForWriter(path, now: now, probeAgain: true)
            return nil
        case (.readFile, _), (.readFileIfComplete, _):
            writerWaits[path] = nil
            return action
        default:
            return action
        }
    }

    /// Whether to read the kernel queue once more before carrying out a batch. A file seen by
    /// `IN_CREATE` that the probe found finished may have its `IN_CLOSE_WRITE` queued already
    /// (the kernel queues it before the writer lets go): reading it now merges the two, so the
    /// file is parsed once. Bounded, so under a steady stream of new files a batch still ends.
    static func readsQueueAgain(afterFinishedCreations finishedCreations: Bool, rereadsSoFar: Int) -> Bool {
        finishedCreations && rereadsSoFar < 4
    }

    /// A walk of a new folder found `path` open for writing: its close will read it.
    mutating func writerFoundDuringWalk(_ path: String, now: ContinuousClock.Instant) {
        waitForWriter(path, now: now, probeAgain: false)
    }

    /// The files whose next probe is due, as reads that go through the probe again.
    mutating func writerProbesDue(now: ContinuousClock.Instant) -> [Action] {
        writerWaits.filter { $0.value.nextProbe.map { $0 <= now } ?? false }.keys.sorted().map { .readFile($0) }
    }

    /// 1 ms after the first probe (a writer that has just closed is gone within microseconds),
    /// doubling up to one probe a second for a file that someone keeps open.
    static func writerProbeBackoff(afterProbes probes: Int) -> Duration {
        .milliseconds(1 << min(probes, 10))
    }

    private mutating func waitForWriter(_ path: String, now: ContinuousClock.Instant, probeAgain: Bool) {
        var wait = writerWaits[path] ?? WriterWait(since: now, probes: 0, nextProbe: nil)
        if probeAgain {
            wait.nextProbe = now + Self.writerProbeBackoff(afterProbes: wait.probes)
            wait.probes += 1
        }
        writerWaits[path] = wait
    }

    private mutating func forgetWriterWaits(inside tree: String) {
        writerWaits = writerWaits.filter { !Self.isInside($0.key, tree) }
    }

    // MARK: Transitions

    private mutating func handleParentEvent(_ event: InotifyEvent) -> [Action] {
        if event.mask.contains(.ignored) || event.mask.contains(.deleteSelf) || event.mask.contains(.moveSelf) {
            parentWatch = .unavailable
            return []
        }
        // Any kind of entry: the configured root may itself be a symbolic link to a folder.
        guard !attached, event.name == rootName, event.mask.contains(.create) || event.mask.contains(.movedTo) else { return [] }
        return [.scanTree(root, .attach)]
    }

    /// The root was deleted or moved away: drop every watch (after a move they would
    /// report on a folder outside the configured path), empty the index, and wait for it.
    private mutating func rootLost() -> [Action] {
        var actions = forgetWholeTree()
        if let parent = rootParent, parentWatch == .none || parentWatch == .unavailable {
            parentWatch = .requested
            actions.append(.watchParent(parent))
        }
        // Checked after the parent watch exists, so a re-creation in between is not missed.
        actions.append(.scanTree(root, .attach))
        return actions
    }

    /// Every watch of the tree goes (and `extra`), every file waiting for its writer, and the
    /// index forgets the tree: the root is detached.
    private mutating func forgetWholeTree(removingAlso extra: [Int32] = []) -> [Action] {
        let stale = folders.keys.sorted() + extra
        folders = [:]
        descriptors = [:]
        degradedTrees = []
        writerWaits = [:]
        attached = false
        return (stale.isEmpty ? [] : [.removeWatches(stale)]) + [.forgetTree(root)]
    }

    /// A folder left the tree (deleted or moved out): forget its contacts and its watches;
    /// a moved-out folder would otherwise keep reporting events from outside the tree.
    private mutating func forgetTree(_ tree: String) -> [Action] {
        forgetWriterWaits(inside: tree)
        var stale: [Int32] = []
        for (path, descriptor) in descriptors where Self.isInside(path, tree) {
            stale.append(descriptor)
            descriptors[path] = nil
            folders[descriptor] = nil
        }
        degradedTrees = degradedTrees.filter { !Self.isInside($0, tree) }
        var actions: [Action] = stale.isEmpty ? [] : [.removeWatches(stale.sorted())]
        actions.append(.forgetTree(tree))
        return actions
    }

    private mutating func forgetDescriptor(_ descriptor: Int32) {
        guard let path = folders.removeValue(forKey: descriptor) else { return }
        if descriptors[path] == descriptor { descriptors[path] = nil }
    }
}
