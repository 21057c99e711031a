import Glibc

/// An engine that watches the chain of folders leading to folders it wants (`EvolutionFolderWatches`
/// decides which, and what each event means): the Evolution engine (address books and sources) and
/// the khard engine (khard's configuration folder). The watches are added on the engine's
/// `inotify` and kept by descriptor in `watchedFolders`.
protocol FolderWatching: AnyObject {
    var inotify: Int32 { get }
    var wantedFolders: [EvolutionFolderWatches.Wanted] { get }
    var folderWatches: EvolutionFolderWatches { get set }
    var watchedFolders: [Int32: String] { get set }
}

extension FolderWatching {
    /// Plans the watches for the folders as they are and adds or removes them, until a plan
    /// holds. Each watch is added before the folders below it are looked at, so one made
    /// meanwhile is seen either way.
    func refreshFolderWatches() {
        for _ in 0..<8 {
            let plan = EvolutionFolderWatches.plan(wantedFolders, exists: isDirectory)
            guard folderWatches.replan(plan) else { break }
            applyFolderWatches()
        }
    }

    /// Adds (or narrows, or widens) each planned watch and removes the others.
    private func applyFolderWatches() {
        guard inotify >= 0 else { return }
        for (descriptor, folder) in watchedFolders where folderWatches.mask(of: folder) == nil {
            inotify_rm_watch(inotify, descriptor)
            watchedFolders[descriptor] = nil
        }
        for folder in folderWatches.planned.keys.sorted() { addFolderWatch(folder) }
    }

    private func addFolderWatch(_ folder: String) {
        guard inotify >= 0, let mask = folderWatches.mask(of: folder) else { return }
        let descriptor = inotify_add_watch(inotify, folder, mask.rawValue)
        guard descriptor >= 0 else { return }
        // The kernel gives the folder's watch its descriptor again, unless the folder was made anew.
        watchedFolders = watchedFolders.filter { $0.value != folder }
        watchedFolders[descriptor] = folder
    }

    /// What an event on one of the folders' watches asks for; nil when the event is another watch's.
    /// A folder watched for a sub-folder to appear that woke the watcher for another entry is
    /// watched for its own moves only until the quiet period ends.
    func folderVerdict(_ event: InotifyEvent) -> EvolutionFolderWatches.Verdict? {
        guard let folder = watchedFolders[event.watchDescriptor] else { return nil }
        if event.mask.contains(.ignored) { watchedFolders[event.watchDescriptor] = nil }
        let verdict = folderWatches.verdict(event, on: folder)
        if case .mute(let folder) = verdict {
            folderWatches.mute(folder, now: .now)
            addFolderWatch(folder)
        }
        return verdict
    }

    /// Whether the quiet period of the muted watches has ended.
    var folderWatchesRearmDue: Bool { folderWatches.rearmAt.map { $0 <= .now } ?? false }

    /// The quiet period ended: the muted watches widened again. Returns whether the folders
    /// changed meanwhile (what was awaited may have appeared), so the engine looks again.
    func widenMutedFolderWatches() -> Bool {
        for folder in folderWatches.rearm() { addFolderWatch(folder) }
        return EvolutionFolderWatches.plan(wantedFolders, exists: isDirectory) != folderWatches.planned
    }

    func isDirectory(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFDIR
    }
}
