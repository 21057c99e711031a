import QuickActions

/// The `Watch` streams: each watcher gets the current set, then one listing per
/// change, in generation order.
///
/// A watcher that stops reading must neither grow the daemon's memory nor slow anyone
/// down. Each watcher's stream keeps at most one unsent listing — the newest — so
/// announcing never waits and a slow watcher skips to the latest generation. Together with
/// the server writing one reply at a time (the next is taken only after the previous reached
/// the socket), a stuck watcher costs at most two sets and its socket buffer.
struct WatchBroadcaster {
    typealias Listings = AsyncStream<QuickActionsListing>.Continuation

    /// Only the latest unsent listing is kept per watcher.
    static let bufferingPolicy = Listings.BufferingPolicy.bufferingNewest(1)

    private var watchers: [UInt64: Listings] = [:]
    private var lastWatcherNumber: UInt64 = 0
    /// What watchers were last told, so an event that leaves the set as it was (a
    /// trigger's usage count, an unchanged recompute) sends nothing.
    private var lastAnnounced: QuickActionsListing?

    var count: Int { watchers.count }

    /// Registers a watcher and sends it `current`. Returns nil when its stream has
    /// already ended (the peer went away before we got here).
    mutating func add(_ listings: Listings, current: QuickActionsListing) -> UInt64? {
        if case .terminated = listings.yield(current) { return nil }
        lastWatcherNumber += 1
        watchers[lastWatcherNumber] = listings
        lastAnnounced = current
        return lastWatcherNumber
    }

    mutating func remove(_ watcher: UInt64) {
        watchers[watcher] = nil
        if watchers.isEmpty { lastAnnounced = nil }
    }

    /// Sends `listing` to every watcher if it differs from the last one sent; never waits.
    /// Composed only when someone watches.
    mutating func announce(_ listing: @autoclosure () -> QuickActionsListing) {
        guard !watchers.isEmpty else { return }
        let listing = listing()
        guard listing != lastAnnounced else { return }
        lastAnnounced = listing
        for (watcher, listings) in watchers {
            if case .terminated = listings.yield(listing) { watchers[watcher] = nil }
        }
    }
}
