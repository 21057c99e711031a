import Contacts
import Logging
import QuickActions
import QuickActionsProtocol

extension DaemonCore {
    // MARK: The app's Connect stream and the Watch streams

    /// Messages queued for an app that does not read its `Connect` stream; beyond this a
    /// trigger fails with `AppNotResponding` at once instead of queueing without bound.
    static let maxQueuedMessagesPerApp = 16
    static let appBufferingPolicy = AppMessages.BufferingPolicy.bufferingOldest(maxQueuedMessagesPerApp)

    /// An app process called `Connect`: it becomes the one app (a previous one is
    /// replaced), counts as launched, and its first message carries the pending launch
    /// item, which is thereby consumed.
    func connectApp(appVersion: String?, messages: AppMessages) {
        guard case .acceptApp(let session, let replaced, let abandoned) = appMachine.handle(.appConnected) else { return }
        launcher.noteAppConnected()
        if let replaced, let previous = appStreams.removeValue(forKey: replaced) {
            logger.notice("A new app process connected (\(session)); ending \(replaced).")
            previous.finish(throwing: QuickActionsCallError.appReplaced)
        }
        finishTriggers(abandoned, with: .appDisconnected)

        appHasSpoken = true
        state.recordLifecycleMessage(appVersion: appVersion)
        let pending = state.takePendingLaunchItem()
        persist()
        appStreams[session] = messages
        messages.onTermination = { [events] _ in events.yield(.appStreamEnded(session)) }
        logger.info("The app connected (\(session))\(pending.map { ", handing it the pending item '\($0.type)'" } ?? "").")
        let first = AppMessage.connected(
            pendingItem: pending.map(forTheApp), contact: pending.flatMap(contact(for:)), stale: pending.map(state.isStale))
        if case .terminated = messages.yield(first) {
            // The peer left before the stream was registered: no termination handler will
            // run, and the item it was to be handed still waits for an app.
            if let pending {
                state.restorePendingLaunchItem(pending)
                persist()
            }
            appStreamEnded(session)
        }
    }

    /// The app's `Connect` stream ended (connection closed, or replaced by a newer app).
    func appStreamEnded(_ session: AppSessionID) {
        perform(appMachine.handle(.appDisconnected(session)))
    }

    func contact(for item: ShortcutItem) -> Contact? {
        item.contactIdentifier.flatMap { index.contact(identifier: $0) }
    }

    /// A `Watch` call: the current set now, then one listing per change.
    func watch(_ listings: WatchBroadcaster.Listings) {
        guard let watcher = watchers.add(listings, current: watchedListing()) else { return }
        listings.onTermination = { [events] _ in events.yield(.watcherEnded(watcher)) }
    }
}
