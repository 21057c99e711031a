/// The tables and columns of one kind of EDS address-book database, as the reader's statements
/// name them. Both kinds keep one row per contact, keyed by its uid, with its `REV` and vCard,
/// rewrite a changed row with `INSERT OR REPLACE` (a new, higher rowid) and change a `revision`
/// key on every write, so one reader serves both.
struct EvolutionBookSchema: Equatable, Sendable {
    let table: String
    let uid: String
    let rev: String
    let vcard: String
    /// What a row must meet to be a contact: `EBookCache` keeps a contact deleted while the
    /// account was offline, marked `ECacheState` 3 (`E_OFFLINE_STATE_LOCALLY_DELETED`) in place,
    /// until the server has it deleted too.
    let visible: String?
    /// The statement giving the `revision` key's value.
    let revisionQuery: String

    /// `EBookSqlite` (`e-book-sqlite.c`), a local book's `contacts.db` in the data home.
    static let local = EvolutionBookSchema(
        table: "folder_id", uid: "uid", rev: "Rev", vcard: "vcard", visible: nil,
        revisionQuery: "SELECT value FROM keys WHERE key = 'revision' AND folder_id = 'folder_id'")

    /// `EBookCache` (`e-book-cache.c`, on `e-cache.c`), an online account's `cache.db` in the
    /// cache home.
    static let cache = EvolutionBookSchema(
        table: "ECacheObjects", uid: "ECacheUID", rev: "ECacheREV", vcard: "ECacheOBJ", visible: "ECacheState IS NOT 3",
        revisionQuery: "SELECT value FROM ECacheKeys WHERE key = 'revision'")

    static func of(_ store: EvolutionBookStore) -> EvolutionBookSchema {
        store == .local ? local : cache
    }

    /// `rowid, uid, rev, vcard`: a row read whole.
    var wholeRow: String { "rowid, \(uid), \(rev), \(vcard)" }
    /// `rowid, uid, rev`: a row's version.
    var version: String { "rowid, \(uid), \(rev)" }

    /// `SELECT columns FROM table`, the visible rows only, meeting `condition` too, then `suffix`
    /// (an `ORDER BY`, a `LIMIT`).
    func select(_ columns: String, where condition: String? = nil, _ suffix: String = "") -> String {
        let conditions = [visible, condition].compactMap { $0 }
        let filter = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
        return "SELECT \(columns) FROM \(table)\(filter)" + (suffix.isEmpty ? "" : " " + suffix)
    }
}
