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
        activity.filesParsed += update.work.filesParsed
        activity.rescans += update.work.rescans
        activity.eventsHandled += update.work.eventsHandled
        // A rescan may have shown its progress in `STATUS=`: the summary replaces it even if unchanged.
        if update.work.rescans > 0 { lastStatusLine = "" }
        applyIndexChanges(update.changes)
    }

    /// Applies what the `KhardWatcher` read from khard's address books: their files join the
    /// same index under their own paths, with the same debounce.
    func applyKhardUpdate(_ update: KhardUpdate) {
        khard = update.info
        activity.filesParsed += update.work.filesParsed
        activity.rescans += update.work.rescans
        activity.eventsHandled += update.work.eventsHandled
        applyIndexChanges(update.changes)
    }

    /// Applies what the `EvolutionWatcher` read from the address books: their rows join the
    /// same index as the directory's files (paths `eds:<book>/<row>`), with the same debounce.
    func applyEvolutionUpdate(_ update: EvolutionUpdate) {
        evolution = update.info
        applyIndexChanges(update.changes)
        if !isIndexingAddressBooks, !contactWaiters.isEmpty {
            let waiters = contactWaiters
            contactWaiters = []
            for waiter in waiters { waiter.resume() }
        }
    }

    /// Changes from either source into the one index; then `STATUS=`, the heap after a large
    /// batch, and the settle timer when favorites changed.
    private func applyIndexChanges(_ changes: [ContactIndexChange]) {
        // The version, not a copy of every favorite to compare: with many favorites the two
        // copies would cost more than the change itself. A favorite rewritten unchanged bumps
        // it too; the recompute then finds the same set and writes nothing.
        let favoritesBefore = index.favoritesVersion
        if changes.count >= Self.largeBatch {
            applyLargeBatch(changes)
        } else {
            for change in changes { apply(change, to: &index) }
        }
        publishStatus()
        refreshPins()
        // A card whose face a launcher shows was rewritten: its photo may be new.
        if !launcherFaceCards.isEmpty, changes.contains(where: { change in
            if case .file(let path, _) = change { launcherFaceCards.contains(path) } else { false }
        }) {
            faceCardChanges &+= 1
            publishToLaunchers()
        }
        if changes.count >= Self.largeBatch { HeapTrimming.releaseFreeMemorySoon() }
        if index.favoritesVersion != favoritesBefore { scheduleRecomputeIfFollowingContacts() }
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

    /// While the set follows the contacts (`Recompute=change`, or `auto` until an app speaks),
    /// (re)starts the settle timer; also called at start, so the set follows changes made while
    /// the daemon was stopped.
    /// At start-up, once the first reads are in the index and before anything is published: a
    /// daemon that follows the contacts derives the set now, so the launchers' first export
    /// already holds the favorites. A shell that reads the entry once, at login, keeps what it
    /// read; an export without them, even for a moment, could stay until the next login.
    func recomputeBeforeFirstPublication() {
        guard followsContacts else { return }
        recomputeAfterIndexChange()
    }

    func scheduleRecomputeIfFollowingContacts() {
        guard followsContacts else { return }
        pendingRecompute?.cancel()
        settleRound &+= 1
        pendingRecompute = EventLoopExecution.schedule(in: settings.configuration.recomputeSettle) { [events, settleRound] in
            events.yield(.settleElapsed(round: settleRound))
        }
    }

    func settleElapsed(round: UInt64) {
        // A change restarted the delay (or the daemon is stopping) after this timer fired.
        guard round == settleRound, pendingRecompute != nil else { return }
        pendingRecompute = nil
        // A reload during the delay may have switched to `resign-active`, or an app spoke.
        guard followsContacts else { return }
        recomputeAfterIndexChange()
    }
}
