import QuickActionsProtocol
import Varlink

/// The `Watch` streams (SPEC §6): each watcher gets the current set, then one reply per
/// change, in generation order.
///
/// A watcher that stops reading must neither grow the daemon's memory nor slow anyone
/// down. Each watcher's stream keeps at most one unsent set — the newest — so announcing
/// never waits and a slow watcher skips to the latest generation. Together with the
/// server writing one reply at a time (the next is taken only after the previous reached
/// the socket), a stuck watcher costs at most two sets and its socket buffer.
struct WatchBroadcaster {
    typealias Replies = AsyncThrowingStream<VarlinkReply, any Error>.Continuation

    /// Only the latest unsent set is kept per watcher.
    static let bufferingPolicy = AsyncThrowingStream<VarlinkReply, any Error>.Continuation.BufferingPolicy.bufferingNewest(1)

    private var watchers: [UInt64: Replies] = [:]
    private var lastWatcherNumber: UInt64 = 0
    /// What watchers were last told, so an event that leaves the set as it was (a
    /// trigger's usage count, an unchanged recompute) sends nothing.
    private var lastAnnounced: ListReply?

    var count: Int { watchers.count }

    /// Registers a watcher and sends it `current`. Returns nil when its stream has
    /// already ended (the peer went away before we got here).
    mutating func add(_ replies: Replies, current: ListReply) -> UInt64? {
        guard let reply = try? VarlinkReply(encoding: current, continues: true) else {
            let failure = VarlinkConnectionError.internalError(message: "the quick-action set cannot be encoded")
            replies.finish(throwing: failure.varlinkError(in: QuickActionsInterface.name))
            return nil
        }
        if case .terminated = replies.yield(reply) { return nil }
        lastWatcherNumber += 1
        watchers[lastWatcherNumber] = replies
        lastAnnounced = current
        return lastWatcherNumber
    }

    mutating func remove(_ watcher: UInt64) {
        watchers[watcher] = nil
        if watchers.isEmpty { lastAnnounced = nil }
    }

    /// Sends `listing` to every watcher if it differs from the last one sent; never waits.
    mutating func announce(_ listing: ListReply) {
        guard !watchers.isEmpty, listing != lastAnnounced else { return }
        lastAnnounced = listing
        guard let reply = try? VarlinkReply(encoding: listing, continues: true) else { return }
        for (watcher, replies) in watchers {
            if case .terminated = replies.yield(reply) { watchers[watcher] = nil }
        }
    }

    /// Ends every stream (the daemon stops).
    mutating func finishAll() {
        for replies in watchers.values { replies.finish() }
        watchers.removeAll()
        lastAnnounced = nil
    }
}
