import Contacts

/// A row's version: EDS writes a changed contact with `INSERT OR REPLACE`, which gives the row
/// a new rowid. `Rev` alone is not enough: it has a resolution of one second, so two edits in
/// the same second (star, then unstar) leave it unchanged.
struct EvolutionRowVersion: Hashable, Sendable {
    var rowID: Int64
    var rev: String
}

/// What the daemon knows of one address book: the book's `revision` key when last read, each
/// row's version, and what each row contributed. Pure: `EvolutionBookReader` lists the rows'
/// rowids, uids and `Rev`s, asks `isCurrent` of each (no string is made for a row that did not
/// change), reads whole only the others, and `removedUIDs` names the known rows that are gone;
/// `record` and `remove` keep the counts `Status` shows.
struct EvolutionBookContents: Sendable {
    struct Row: Hashable, Sendable {
        var version: EvolutionRowVersion
        var contacts: Int
        var favorites: Int
        var invalid: Bool
    }

    /// The `keys` table's `revision` value, which EDS changes on every write; nil before the
    /// first read.
    var revision: String?
    private(set) var rows: [String: Row] = [:]
    /// Each row's uid and `Rev` by rowid: the one lookup a listed row costs.
    private var byRowID: [Int64: (uid: String, rev: String)] = [:]
    private(set) var contacts = 0
    private(set) var favorites = 0
    private(set) var invalidCards = 0
    /// The highest rowid among the known rows, unless the row that had it went away (then
    /// `highestRowID` looks for the next one). Writes since the last read have higher rowids.
    private var highest: Int64?
    private var highestIsStale = false

    init() {}

    var isEmpty: Bool { rows.isEmpty }
    var count: Int { rows.count }

    /// Room for `count` rows, so a book's first read does not grow the tables step by step.
    mutating func reserveCapacity(_ count: Int) {
        rows.reserveCapacity(count)
        byRowID.reserveCapacity(count)
    }

    /// The highest rowid of a known row; nil when no row is known. One lookup, unless the row
    /// that had it was deleted and no higher one recorded since (then a pass over the rowids).
    var highestRowID: Int64? {
        highestIsStale ? byRowID.keys.max() : highest
    }

    /// Whether the row at `rowID` is the known one, unchanged: the same uid and `Rev` there.
    /// A row EDS rewrote has a new rowid; a rowid SQLite gave again to another row (after the
    /// book's last rows were deleted) holds another uid or `Rev`.
    func isCurrent<Bytes: Collection<UInt8>>(rowID: Int64, uid: Bytes, rev: Bytes) -> Bool {
        guard let known = byRowID[rowID] else { return false }
        return known.uid.utf8.elementsEqual(uid) && known.rev.utf8.elementsEqual(rev)
    }

    /// The known rows whose rowid is not among `current` (deleted, or rewritten elsewhere), in uid order.
    func removedUIDs(current: Set<Int64>) -> [String] {
        byRowID.filter { !current.contains($0.key) }.map(\.value.uid).sorted()
    }

    mutating func record(uid: String, version: EvolutionRowVersion, result: Result<[Contact], ContactFileProblem>) {
        var row = Row(version: version, contacts: 0, favorites: 0, invalid: false)
        switch result {
        case .success(let cards):
            row.contacts = cards.count
            row.favorites = cards.count { $0.favorite }
        case .failure:
            row.invalid = true
        }
        // One lookup of the uid, whether the row is new (every row of a first read) or known.
        if let old = rows.updateValue(row, forKey: uid) { forget(old, uid: uid) }
        byRowID[version.rowID] = (uid, version.rev)
        // A row EDS rewrote comes back above every other, so an edit of the highest row keeps
        // this one lookup.
        if let highest, highest > version.rowID {
            if highestIsStale { self.highest = byRowID.keys.max() }
        } else {
            highest = version.rowID
        }
        highestIsStale = false
        contacts += row.contacts
        favorites += row.favorites
        invalidCards += row.invalid ? 1 : 0
    }

    mutating func remove(uid: String) {
        guard let old = rows.removeValue(forKey: uid) else { return }
        forget(old, uid: uid)
    }

    /// Takes a row no longer in `rows` out of the rowids and the counts.
    private mutating func forget(_ old: Row, uid: String) {
        if byRowID[old.version.rowID]?.uid == uid {
            byRowID[old.version.rowID] = nil
            if old.version.rowID == highest { highestIsStale = true }
        }
        contacts -= old.contacts
        favorites -= old.favorites
        invalidCards -= old.invalid ? 1 : 0
    }
}

/// How an address book's rows become contacts of the one index.
enum EvolutionCards {
    /// The index path of a row: `eds:<book UID>/<row uid>`, so contacts of every source merge
    /// into one set and a book's rows can be dropped together (`treePrefix`). The row's uid is
    /// escaped (`/` and `%`), so the last `/` always ends the book's part.
    static func path(book: String, uid: String) -> String {
        path(treePrefix: treePrefix(book: book), uid: uid)
    }

    /// `path(book:uid:)` with the book's `treePrefix` made once for many rows.
    static func path(treePrefix: String, uid: String) -> String {
        treePrefix + "/" + escaped(uid)
    }

    static func treePrefix(book: String) -> String { "eds:" + escaped(book) }

    /// The book and the row's uid of an index path `path(book:uid:)` made; nil for any other path.
    static func bookAndUID(ofPath path: String) -> (book: String, uid: String)? {
        guard path.hasPrefix("eds:"), let slash = path.lastIndex(of: "/") else { return nil }
        let book = path[path.index(path.startIndex, offsetBy: 4)..<slash]
        return (unescaped(book), unescaped(path[path.index(after: slash)...]))
    }

    private static func unescaped(_ text: Substring) -> String {
        String(text).replacing("%2F", with: "/").replacing("%25", with: "%")
    }

    private static func escaped(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "%") }) else { return text }
        var result = ""
        for character in text {
            switch character {
            case "%": result += "%25"
            case "/": result += "%2F"
            default: result.append(character)
            }
        }
        return result
    }

    /// The category Google address books star a contact with.
    static let googleStarredCategory = "starred in android"

    /// The configured rules plus how GNOME Contacts (folks: `X-FOLKS-FAVOURITE:true`) and
    /// Google ("Starred in Android") mark a favorite.
    static func parsingOptions(favoriteCategories: [String]) -> ContactParsingOptions {
        ContactParsingOptions(favoriteCategories: Set(favoriteCategories).union([googleStarredCategory]), folksFavourite: true)
    }
}
