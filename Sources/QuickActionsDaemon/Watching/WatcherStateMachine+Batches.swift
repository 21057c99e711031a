import Glibc

/// The state machine's pure helpers: trimming a batch of actions, classifying errors,
/// comparing paths.
extension WatcherStateMachine {
    // MARK: Batches

    /// Trims the actions of one batch of events without changing the outcome:
    /// - a rescan of the root replaces everything, so file and folder work before it is moot
    ///   (watch removals are kept: they release kernel resources);
    /// - of several actions on one file only the last matters, each replacing the file's entry
    ///   whole — so a burst of saves to one file parses it once.
    static func coalesce(_ actions: [Action], root: String) -> [Action] {
        var actions = actions
        if let rescan = actions.lastIndex(where: { action in
            // Not `.attach`: that walk forgets nothing when the root turns out to be missing.
            if case .scanTree(let tree, let reason) = action { return tree == root && reason.isRescan }
            return false
        }) {
            let kept = actions[..<rescan].filter { action in
                switch action {
                case .removeWatches, .watchParent: return true
                default: return false
                }
            }
            actions = kept + actions[rescan...]
        }
        var lastPosition: [String: Int] = [:]
        for (position, action) in actions.enumerated() {
            if let path = action.filePath { lastPosition[path] = position }
        }
        return actions.enumerated().compactMap { position, action in
            guard let path = action.filePath else { return action }
            return lastPosition[path] == position ? action : nil
        }
    }

    /// Errors of `inotify_add_watch` / `inotify_init1` that mean "no more watches here", not
    /// "this folder is a problem": ENOSPC is the `max_user_watches` limit.
    static func isResourceShortage(_ error: Int32) -> Bool {
        error == ENOSPC || error == ENOMEM || error == EMFILE || error == ENFILE
    }

    // MARK: Paths

    /// `path` is `tree` or below it ("/a/b" holds "/a/b/c", not "/a/bc").
    static func isInside(_ path: String, _ tree: String) -> Bool {
        path == tree || isStrictlyInside(path, tree)
    }

    static func isStrictlyInside(_ path: String, _ tree: String) -> Bool {
        let prefix = tree == "/" ? "/" : tree + "/"
        return path.count > prefix.count && path.utf8.starts(with: prefix.utf8)
    }
}
