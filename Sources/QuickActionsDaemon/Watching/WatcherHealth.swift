import QuickActionsProtocol

/// The watcher's health, as `Status` reports it.
enum WatcherHealth: Hashable, Sendable {
    /// Every folder of the tree has an inotify watch.
    case watching
    /// Some trees could not be watched (`reason`, e.g. the watch limit) and are re-read periodically.
    case degraded(trees: [String], reason: String)
    /// The root is missing; waiting for it to appear again.
    case reattaching
}

/// A file due to be read that some process still had open for writing.
struct WriterWait: Hashable, Sendable {
    /// When a writer was first found (shown in `Status` so a stuck file is visible).
    let since: ContinuousClock.Instant
    var probes: Int
    /// nil while the writer found has yet to close (its `IN_CLOSE_WRITE` will come).
    var nextProbe: ContinuousClock.Instant?
}

extension WatcherHealth {
    /// How `Status` shows it; `retryInterval` is how often degraded trees are rescanned.
    func info(root: String, retryInterval: Duration) -> WatchHealthInfo {
        switch self {
        case .watching:
            return WatchHealthInfo(state: "watching", message: "every folder of \"\(root)\" is watched with inotify")
        case .degraded(let trees, let reason):
            return WatchHealthInfo(
                state: "degraded", degradedTrees: trees,
                message: "cannot watch \(trees.count) folder tree(s) with inotify (\(reason)); rescanning them every \(retryInterval.wholeSeconds) s instead")
        case .reattaching:
            return WatchHealthInfo(state: "reattaching", message: "the contacts folder \"\(root)\" is missing; waiting for it to appear")
        }
    }
}

extension Duration {
    /// Rounded to at least 1, for messages.
    var wholeSeconds: Int64 {
        max(1, components.seconds + (components.attoseconds >= 500_000_000_000_000_000 ? 1 : 0))
    }
}
