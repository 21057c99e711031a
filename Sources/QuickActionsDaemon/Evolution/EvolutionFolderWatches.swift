/// Which folders the Evolution watcher watches to see books and sources come and go, and what
/// each of their events means. Other programs write in the homes all the time (GTK rewrites
/// `recently-used.xbel` in the data home at every file opened), so only what leads to a wanted
/// folder is watched: the wanted folder itself when it exists; else its deepest existing
/// ancestor, for the one sub-folder that leads there; and the ancestors above that one for their
/// own move or deletion only, which no write inside them reports. Pure: the engine adds and
/// removes the watches (`planned`) and asks `verdict` about each event.
struct EvolutionFolderWatches: Equatable, Sendable {
    /// A folder the watcher wants, and the home it hangs from (watched no higher).
    struct Wanted: Equatable, Sendable {
        var home: String
        var folder: String
        /// Only entries whose name ends so count (`.source`); nil: every entry.
        var nameSuffix: String?
    }

    /// One folder's watch.
    struct Watch: Equatable, Sendable {
        var mask: InotifyEventMask
        /// The wanted folder itself: every entry added, removed or written (with `nameSuffix`) counts.
        var isWanted = false
        var nameSuffix: String?
        /// A deepest existing ancestor's: the names of the sub-folders that lead on.
        var awaited: Set<String> = []
    }

    /// What an event asks of the engine.
    enum Verdict: Equatable, Sendable {
        /// Look again at which books there are (and plan the watches again).
        case refresh
        /// An entry of no interest in a folder watched for a sub-folder to appear: its watch is
        /// narrowed to its own moves until `quietPeriod` has passed (`mute`).
        case mute(String)
        case ignore
    }

    static let ownMoves: InotifyEventMask = [.deleteSelf, .moveSelf, .onlyDirectory]
    static let awaiting: InotifyEventMask = [.create, .movedTo, .deleteSelf, .moveSelf, .onlyDirectory]
    static let wantedFolder: InotifyEventMask = [.create, .movedTo, .movedFrom, .delete, .closeWrite, .deleteSelf, .moveSelf, .onlyDirectory]

    /// How long a folder that woke the watcher for nothing stays watched for its own moves only.
    /// While another program writes there continuously, this bounds the wake-ups to two per
    /// period; a sub-folder that appeared meanwhile is seen when the period ends.
    static let quietPeriod: Duration = .seconds(30)

    /// The watches the folders need, given which folders exist.
    static func plan(_ wanted: [Wanted], exists: (String) -> Bool) -> [String: Watch] {
        var watches: [String: Watch] = [:]
        for target in wanted {
            let chain = chain(from: target.home, to: target.folder)
            guard let first = chain.first, exists(first) else { continue }
            var deepest = 0
            while deepest + 1 < chain.count, exists(chain[deepest + 1]) { deepest += 1 }
            for folder in chain[..<deepest] where watches[folder] == nil {
                watches[folder] = Watch(mask: Self.ownMoves)
            }
            var watch = watches[chain[deepest]] ?? Watch(mask: Self.ownMoves)
            if deepest == chain.count - 1 {
                watch.mask = Self.wantedFolder
                watch.isWanted = true
                watch.nameSuffix = target.nameSuffix
            } else {
                watch.mask.formUnion(Self.awaiting)
                watch.awaited.insert(name(of: chain[deepest + 1]))
            }
            watches[chain[deepest]] = watch
        }
        return watches
    }

    /// The folders from `home` down to `folder` (just `folder` when it is not under `home`).
    static func chain(from home: String, to folder: String) -> [String] {
        let prefix = home.hasSuffix("/") ? home : home + "/"
        guard folder.hasPrefix(prefix) else { return [folder] }
        var chain = [home]
        for component in folder.dropFirst(prefix.count).split(separator: "/") {
            chain.append((chain.last == "/" ? "" : chain.last!) + "/" + component)
        }
        return chain
    }

    private static func name(of folder: String) -> String {
        folder.split(separator: "/").last.map(String.init) ?? folder
    }

    /// The watches wanted now, by folder.
    private(set) var planned: [String: Watch] = [:]
    /// Folders narrowed to their own moves, until `rearmAt`.
    private(set) var muted: Set<String> = []
    private(set) var rearmAt: ContinuousClock.Instant?

    init() {}

    /// A new plan; returns whether it differs from the last (a folder appeared or went).
    mutating func replan(_ plan: [String: Watch]) -> Bool {
        defer { planned = plan }
        muted.formIntersection(plan.keys)
        if muted.isEmpty { rearmAt = nil }
        return plan != planned
    }

    /// The mask to watch `folder` with now.
    func mask(of folder: String) -> InotifyEventMask? {
        guard let watch = planned[folder] else { return nil }
        return muted.contains(folder) ? Self.ownMoves : watch.mask
    }

    /// What the event on `folder`'s watch asks for.
    func verdict(_ event: InotifyEvent, on folder: String) -> Verdict {
        guard let watch = planned[folder] else { return .ignore }
        if !event.mask.isDisjoint(with: [.deleteSelf, .moveSelf, .ignored, .queueOverflow]) { return .refresh }
        guard let name = event.name else { return .ignore }
        if watch.isWanted {
            return watch.nameSuffix.map(name.hasSuffix) ?? true ? .refresh : .ignore
        }
        if watch.awaited.contains(name) { return .refresh }
        return muted.contains(folder) ? .ignore : .mute(folder)
    }

    /// Narrows `folder`'s watch until the quiet period ends; the engine re-adds it with `mask(of:)`.
    mutating func mute(_ folder: String, now: ContinuousClock.Instant) {
        muted.insert(folder)
        if rearmAt == nil { rearmAt = now + Self.quietPeriod }
    }

    /// The quiet period is over: every watch back to its planned mask. Returns the folders to re-add.
    mutating func rearm() -> [String] {
        defer {
            muted = []
            rearmAt = nil
        }
        return muted.sorted()
    }
}
