import QuickActions

/// Every state change ends in `persist()`: the state file, and from there everything that shows the state.
extension DaemonCore {
    /// Every state change passes through here: watchers hear of it, systemd's `STATUS=`
    /// follows, and the persisted part, if it changed, goes to the writer's thread (which
    /// keeps the previous file when a write fails, and retries). Returns the ticket the
    /// writer gives the current state; `writer.waitUntilWritten` tells when it is on disk.
    @discardableResult
    func persist() -> StateWriter.Ticket {
        let persisted = PersistedState(state)
        // Cheap when nothing changed: the arrays and dictionary share their storage.
        let changed = persisted != lastSubmitted
        if changed {
            // Handed over first: the writer's thread encodes and writes while this turn tells
            // the watchers, the launchers and systemd, rather than after (the reply to a
            // `ResignActive` waits for the write, not for them).
            lastSubmitted = persisted
            submittedTicket = writer.submit(persisted)
        }
        watchers.announce(watchedListing())
        publishToLaunchers()
        publishStatus()
        if changed { replies.statusChanged() }
        return submittedTicket
    }

    /// Called before exit: no recompute starts any more, and the last state is on disk when
    /// this returns (a write still failing is tried once more, so nothing is lost that can be kept).
    func finishPendingWork() async {
        pendingRecompute?.cancel()
        pendingRecompute = nil
        feedback.stop()
        let ticket = persist()
        _ = await writer.waitUntilWritten(ticket)
    }
}
