import Contacts

#if canImport(Glibc)
import Glibc  // exp2 and log2
#elseif canImport(Musl)
import Musl
#endif

/// How the favorites' items are ordered: `[Shortcuts] Order=`. The raw values are the
/// configuration's spelling.
public enum FavoriteOrder: String, Hashable, Sendable, CaseIterable {
    /// Most used first, by a score in which recent triggers weigh more; ties by name.
    case usage = "usage"
    /// By name, as the contacts index orders favorites.
    case name = "name"
}

/// When each item was last chosen, kept to rank favorites by use.
///
/// An item's score is the sum over its triggers of `0.5 ^ (age / halfLife)`: a trigger just
/// made counts 1, one `halfLife` old counts ½, and so on. Because every trigger decays by the
/// same factor as time passes, the order of two items never changes while nobody triggers
/// anything: the order is derived from `rank`, which needs no clock, and only a shown score
/// needs the time it is shown at. Times are whole seconds since 1970 (UTC); the core never
/// reads a clock, the daemon passes the time in.
public struct UsageHistory: Hashable, Sendable {
    /// Fourteen days: a favorite written to every day for a week outranks one written to
    /// ten times a month ago.
    public static let halfLifeSeconds: Int64 = 14 * 86_400
    /// The most recent triggers kept per item. A trigger older than the last 32 of its item
    /// adds at most what the 32nd does, already far decayed for a favorite used that often.
    public static let timesKept = 32

    /// Trigger times per item, oldest first, keyed by `ShortcutItem.usageKey`.
    public private(set) var times: [String: [Int64]]

    /// A history of these trigger times (seconds since 1970), each item's latest `timesKept` kept.
    public init(times: [String: [Int64]] = [:]) {
        self.times = times.mapValues { Array($0.sorted().suffix(Self.timesKept)) }
    }

    /// Whether no item was ever triggered.
    public var isEmpty: Bool { times.isEmpty }

    /// A trigger of the item counted under `key`, at `time`.
    public mutating func record(_ key: String, at time: Int64) {
        var kept = times[key] ?? []
        // A clock set back still keeps the list in order, so the newest is always last.
        let place = kept.lastIndex { $0 <= time }.map { $0 + 1 } ?? 0
        kept.insert(time, at: place)
        if kept.count > Self.timesKept { kept.removeFirst(kept.count - Self.timesKept) }
        times[key] = kept
    }

    /// The score of the item counted under `key` at `now`; 0 for an item never triggered.
    public func score(of key: String, at now: Int64) -> Double {
        guard let kept = times[key] else { return 0 }
        return Self.score(kept, at: now)
    }

    /// The item's usage as a listing shows it: its score at its last trigger, and when that was.
    public func usage(of key: String) -> ShortcutUsage? {
        guard let kept = times[key], let last = kept.last else { return nil }
        return ShortcutUsage(score: Self.score(kept, at: last), lastUsed: last)
    }

    /// A value that orders items as their scores do at any one time, without a clock:
    /// log₂ of the score at the time 0. Written as the last trigger's time in half-lives plus
    /// log₂ of the score then, so it neither overflows nor loses the older triggers.
    public func rank(of key: String) -> Double? {
        guard let kept = times[key], let last = kept.last else { return nil }
        return Double(last) / Double(Self.halfLifeSeconds) + log2(Self.score(kept, at: last))
    }

    static func score(_ kept: [Int64], at now: Int64) -> Double {
        kept.reduce(0) { sum, time in sum + exp2(-Double(now - time) / Double(halfLifeSeconds)) }
    }

    /// The favorites in the order `order` wants: by usage, the ones with a score first, highest
    /// first, each tie and every favorite never triggered kept in the order given (the contacts
    /// index's, by name). `favoriteType` is the type their items are counted under.
    public func ordered(_ favorites: [Contact], by order: FavoriteOrder, favoriteType: String) -> [Contact] {
        guard order == .usage, !times.isEmpty else { return favorites }
        // The few items ever triggered, by contact: looking up every favorite's key would
        // make a string per favorite.
        let prefix = favoriteType + "/"
        var ranks: [String: Double] = [:]
        for key in times.keys where key.hasPrefix(prefix) {
            if let rank = rank(of: key) { ranks[String(key.dropFirst(prefix.count))] = rank }
        }
        guard !ranks.isEmpty else { return favorites }
        var used: [(offset: Int, rank: Double)] = []
        for (offset, contact) in favorites.enumerated() {
            if let rank = ranks[contact.identifier] { used.append((offset, rank)) }
        }
        guard !used.isEmpty else { return favorites }
        used.sort { $0.rank != $1.rank ? $0.rank > $1.rank : $0.offset < $1.offset }
        var ordered: [Contact] = []
        ordered.reserveCapacity(favorites.count)
        var isUsed = [Bool](repeating: false, count: favorites.count)
        for entry in used {
            ordered.append(favorites[entry.offset])
            isUsed[entry.offset] = true
        }
        for (offset, contact) in favorites.enumerated() where !isUsed[offset] { ordered.append(contact) }
        return ordered
    }
}

/// How much an item has been used, as `List` and `Watch` show it: `score` is its score at
/// `lastUsed` (seconds since 1970); `score(at:)` is what it has decayed to since. Both stay the
/// same until the item is chosen again, so a listing can be kept and sent again unchanged.
public struct ShortcutUsage: Hashable, Sendable {
    /// The score at `lastUsed`: 1 per trigger, each halved every `UsageHistory.halfLifeSeconds` since.
    public var score: Double
    /// When the item was last chosen, in seconds since 1970.
    public var lastUsed: Int64

    /// A usage with each field.
    public init(score: Double, lastUsed: Int64) {
        self.score = score
        self.lastUsed = lastUsed
    }

    /// The score at `now`: each half-life since `lastUsed` halves it.
    public func score(at now: Int64) -> Double {
        score * exp2(-Double(now - lastUsed) / Double(UsageHistory.halfLifeSeconds))
    }
}
