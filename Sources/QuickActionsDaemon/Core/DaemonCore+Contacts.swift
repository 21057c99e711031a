import CLinux
import Contacts
import Logging
import QuickActions
import QuickActionsProtocol

extension DaemonCore {
    // MARK: The contacts index

    static let largeBatch = 4096

    /// Applies what the `DirectoryWatcher` found. With `Recompute=change`, a change of
    /// favorites restarts the settle timer (`RecomputeSettleMSec`), so a burst of saves —
    /// a sync run, a folder moved in — makes one new generation, not many.
    func applyWatcherUpdate(_ update: ContactsDirectoryUpdate) {
        watchHealth = update.health
        // The version, not a copy of every favorite to compare: at 1k favorites the two
        // copies cost more than the change itself. A favorite rewritten unchanged bumps it
        // too; the recompute then finds the same set and writes nothing.
        let favoritesBefore = index.favoritesVersion
        if update.changes.count >= Self.largeBatch {
            applyLargeBatch(update.changes)
        } else {
            for change in update.changes { apply(change, to: &index) }
        }
        activity.filesParsed += update.work.filesParsed
        activity.rescans += update.work.rescans
        activity.eventsHandled += update.work.eventsHandled
        // A rescan may have shown its progress in `STATUS=`: the summary replaces it even if unchanged.
        if update.work.rescans > 0 { lastStatusLine = "" }
        publishStatus()
        if update.changes.count >= Self.largeBatch { Self.releaseFreeHeapMemorySoon() }
        if index.favoritesVersion != favoritesBefore { scheduleRecomputeIfFollowingContacts() }
    }

    /// A large batch (the start-up scan, a rescan after an overflow) was read, parsed and
    /// queued in buffers that are freed only when the watcher (or the start sequence) lets go
    /// of the batch, after `applyWatcherUpdate` returns; trimmed before that, the heap kept
    /// their pages for good (~40 MiB at 100k contacts, measured with `malloc_info`). So the
    /// trim runs later, off the actor, and again in case the holder was slow (a loaded
    /// machine); each costs milliseconds and only hands free pages back, changing no state.
    static func releaseFreeHeapMemorySoon() {
        Task.detached(priority: .utility) {
            for delay in [200, 800, 4000] {
                try? await Task.sleep(for: .milliseconds(delay))
                _ = CLinux_releaseFreeHeapMemory()
            }
        }
    }

    func apply(_ change: ContactIndexChange, to index: inout ContactIndex) {
        switch change {
        case .file(let path, let result): index.apply(path: path, result: result)
        case .removed(let path): index.remove(path: path)
        case .removedTree(let directory): index.removeAll(under: directory)
        }
    }

    /// A large batch (the start-up scan, a rescan) goes to the index's bulk path, run by run
    /// of files, in order (a removal between two runs is applied between them).
    func applyLargeBatch(_ changes: [ContactIndexChange]) {
        var files: [(path: String, result: Result<[Contact], ContactFileProblem>)] = []
        for change in changes {
            if case .file(let path, let result) = change {
                files.append((path, result))
                continue
            }
            if !files.isEmpty { index.apply(files: files) }
            files.removeAll()
            apply(change, to: &index)
        }
        if !files.isEmpty { index.apply(files: files) }
    }

    /// With `Recompute=change`, (re)starts the settle timer; also called at start, so the set
    /// follows changes made while the daemon was stopped.
    func scheduleRecomputeIfFollowingContacts() {
        guard settings.configuration.recompute == .change else { return }
        pendingRecompute?.cancel()
        let settle = settings.configuration.recomputeSettle
        pendingRecompute = Task {
            do {
                try await Task.sleep(for: settle)
            } catch {
                return  // a later change restarted the delay, or the daemon is stopping
            }
            self.settleElapsed()
        }
    }

    func settleElapsed() {
        pendingRecompute = nil
        // A reload during the delay may have switched back to `resign-active`.
        guard settings.configuration.recompute == .change else { return }
        recomputeAfterIndexChange()
    }
}
