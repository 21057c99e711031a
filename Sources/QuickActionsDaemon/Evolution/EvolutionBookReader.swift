import Contacts

/// Why an address book gives no (new) contacts, while it lasts. Descriptions are sentences
/// without the database's path, which `Status` and the log pair them with.
enum EvolutionBookFault: Error, Hashable, Sendable, CustomStringConvertible {
    /// A configured UID with no folder of that name.
    case noSuchBook
    /// The book's folder holds no database (yet): `contacts.db` for a local book, `cache.db` for
    /// the others.
    case noDatabase
    /// Another program held a lock longer than the busy timeout.
    case locked(timeoutMilliseconds: Int32)
    /// The tables or columns this reader needs are not there (another EDS version).
    case unknownSchema(detail: String)
    /// Not an SQLite database, or a damaged one.
    case corrupt(detail: String)
    /// Any other failure to open or read it.
    case unreadable(detail: String)

    var description: String {
        switch self {
        case .noSuchBook:
            return "There is no such address book."
        case .noDatabase:
            return "The address book has no database yet."
        case .locked(let timeout):
            return "The database stayed locked by another program for more than \(timeout) ms; retrying."
        case .unknownSchema(let detail):
            return "The database's schema is not one this qactd knows (\(detail)); is Evolution Data Server newer than qactd?"
        case .corrupt(let detail):
            return "The database is damaged or not an SQLite database (\(detail))."
        case .unreadable(let detail):
            return "The database cannot be read (\(detail)); retrying."
        }
    }

    /// A lock or a read error may end with no change the watches see: retried on a timer.
    /// The others end with a write in the book's folder, which inotify reports.
    var retriesOnTimer: Bool {
        switch self {
        case .locked, .unreadable: return true
        case .noSuchBook, .noDatabase, .unknownSchema, .corrupt: return false
        }
    }
}

/// What one read of an address book found changed since `EvolutionBookContents` was current.
struct EvolutionBookPass: Sendable {
    struct ReadRow: Sendable {
        var uid: String
        var version: EvolutionRowVersion
        var result: Result<[Contact], ContactFileProblem>
    }

    var revision: String
    /// Rows new or of another version, read whole and parsed.
    var read: [ReadRow] = []
    /// Known rows no longer in the book.
    var removed: [String] = []
}

/// Reads one EDS address book (`contacts.db` or `cache.db`, in either schema: `EvolutionBookSchema`) read-only, in one
/// short read transaction: the `revision` key first (unchanged: nothing else is read), then
/// the rows with a rowid above the highest known one (added or rewritten) and the count of
/// rows (lower than expected: the rowids are listed to name the rows that went away). The
/// first read of a book, and a read where SQLite may have given a known rowid again, take
/// every row's vCard in one pass and compare each row with the known ones. The vCards are
/// parsed once the transaction has ended, many of them on every CPU.
enum EvolutionBookReader {
    static let busyTimeoutMilliseconds: Int32 = 1000

    /// What changed since `known`; nil when the `revision` key says nothing did. `whole`: the
    /// book read whole and compared with `known` whatever the key says, as after start-up's
    /// favorites, where `known` holds only some of its rows (then the result is never nil).
    static func read(
        database path: String, schema: EvolutionBookSchema = .local, known: EvolutionBookContents, whole: Bool = false,
        maxCardBytes: Int, options: ContactParsingOptions, busyTimeoutMilliseconds: Int32 = busyTimeoutMilliseconds
    ) throws(EvolutionBookFault) -> EvolutionBookPass? {
        let found = try inReadTransaction(path, busyTimeoutMilliseconds: busyTimeoutMilliseconds) { database in
            try read(database, schema, known: known, whole: whole, maxCardBytes: maxCardBytes)
        }
        guard let found else { return nil }
        let rows = found.rows
        guard found.isWholeBook, !known.isEmpty else {
            return EvolutionBookPass(revision: found.revision, read: rows.parsed(options: options), removed: found.removed)
        }
        // Every row that is not a known one as it is now is parsed; the known rows not there are gone.
        var current = Set<Int64>()
        let fresh = rows.rows.indices.filter { index in
            let known = rows.withRow(index) { rowID, uid, rev in known.isCurrent(rowID: rowID, uid: uid, rev: rev) ? rowID : nil }
            if let known { current.insert(known) }
            return known == nil
        }
        let gone = known.removedUIDs(current: current)
        // A row rewritten since is read again under its uid, so it is not gone (the set is made
        // only when some known row is not current, which is rare).
        let reread = gone.isEmpty ? [] : Set(fresh.map(rows.uid))
        return EvolutionBookPass(revision: found.revision, read: rows.parsed(fresh, options: options), removed: gone.filter { !reread.contains($0) })
    }

    /// A book's first read at start-up, in one pass: each row's vCard is looked at where SQLite
    /// holds it (`VCardTriage`), and only a row that is not plain is copied, to be parsed.
    static func readFavoritesFirst(
        database path: String, schema: EvolutionBookSchema = .local, maxCardBytes: Int,
        busyTimeoutMilliseconds: Int32 = busyTimeoutMilliseconds
    ) throws(EvolutionBookFault) -> EvolutionFirstRead {
        try inReadTransaction(path, busyTimeoutMilliseconds: busyTimeoutMilliseconds) { database in
            var read = EvolutionFirstRead(revision: try self.revision(database, schema) ?? "", rows: EvolutionUnparsedRows(maxCardBytes: maxCardBytes))
            let rows = try schemaChecked(database, schema.select(schema.wholeRow))
            while try rows.step() {
                let plain = rows.withOptionalBytes(1) { uid in
                    rows.withOptionalBytes(3) { card in
                        guard let card, let uid, card.count <= maxCardBytes else { return false }
                        return VCardTriage.isPlain(card, identifier: uid)
                    }
                }
                if plain { read.plain += 1 } else { append(rows, to: &read.rows) }
            }
            return read
        }
    }

    /// The rows whose uid is one of `uids` (the table's key: one lookup each), read whole in one
    /// transaction.
    static func readRows(
        database path: String, schema: EvolutionBookSchema = .local, uids: [String], maxCardBytes: Int,
        busyTimeoutMilliseconds: Int32 = busyTimeoutMilliseconds
    ) throws(EvolutionBookFault) -> EvolutionUnparsedRows {
        try inReadTransaction(path, busyTimeoutMilliseconds: busyTimeoutMilliseconds) { database in
            var found = EvolutionUnparsedRows(maxCardBytes: maxCardBytes)
            let row = try schemaChecked(database, schema.select(schema.wholeRow, where: "\(schema.uid) = ?1"))
            for uid in uids {
                row.reset()
                try row.bind(uid, at: 1)
                if try row.step() { append(row, to: &found) }
            }
            return found
        }
    }

    /// The vCard of the row `uid`, as EDS stores it (nil: no such row); a short read
    /// transaction, for a command's `{file}` and a favorite's face. At most `limit` + 1 bytes are
    /// copied, so a caller with a limit sees a card over it by its count.
    static func card(
        database path: String, schema: EvolutionBookSchema = .local, uid: String, atMost limit: Int = .max,
        busyTimeoutMilliseconds: Int32 = busyTimeoutMilliseconds
    ) throws(EvolutionBookFault) -> [UInt8]? {
        try inReadTransaction(path, busyTimeoutMilliseconds: busyTimeoutMilliseconds) { database in
            let row = try schemaChecked(database, schema.select(schema.vcard, where: "\(schema.uid) = ?1"))
            try row.bind(uid, at: 1)
            guard try row.step() else { return nil }
            return row.withBytes(0) { Array($0.prefix(limit == .max ? limit : limit + 1)) }
        }
    }

    /// Opens the database read-only and runs `body` in one read transaction; SQLite's errors
    /// become the book's faults.
    private static func inReadTransaction<R>(
        _ path: String, busyTimeoutMilliseconds: Int32, _ body: (SQLiteReadOnlyDatabase) throws -> R
    ) throws(EvolutionBookFault) -> R {
        do {
            let database = try SQLiteReadOnlyDatabase(path: path, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
            try database.execute("BEGIN")
            do {
                let result = try body(database)
                try database.execute("COMMIT")
                return result
            } catch {
                try? database.execute("ROLLBACK")
                throw error
            }
        } catch let error as EvolutionBookFault {
            throw error
        } catch let error as SQLiteError {
            throw fault(error, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
        } catch {
            throw .unreadable(detail: "\(error)")
        }
    }

    /// What the read transaction found: the rows to parse and the known rows gone.
    private struct Found {
        var revision: String
        var rows: EvolutionUnparsedRows
        var removed: [String] = []
        /// Every row of the book, to be compared with the known ones.
        var isWholeBook = false
    }

    private static func read(
        _ database: SQLiteReadOnlyDatabase, _ schema: EvolutionBookSchema, known: EvolutionBookContents, whole: Bool, maxCardBytes: Int
    ) throws -> Found? {
        let revision = try self.revision(database, schema)
        if !whole, let revision, revision == known.revision { return nil }
        var found = Found(revision: revision ?? "", rows: EvolutionUnparsedRows(maxCardBytes: maxCardBytes))
        if !whole, let highest = known.highestRowID, try isUnchanged(upTo: highest, database, schema, known: known) {
            try readWritten(after: highest, database, schema, known: known, into: &found)
            return found
        }
        // The database's size bounds its vCards' (it holds them, and the other columns).
        found.rows.reserveCapacity(bytes: try databaseBytes(database))
        let rows = try schemaChecked(database, schema.select(schema.wholeRow))
        while try rows.step() { append(rows, to: &found.rows) }
        found.isWholeBook = true
        return found
    }

    /// Whether every row up to `highest` is still a known one or gone: SQLite gives a new row
    /// the highest rowid plus one, so a lower rowid is given again only after every row above it
    /// went away, and then the highest row left at or below `highest` is not a known one.
    private static func isUnchanged(upTo highest: Int64, _ database: SQLiteReadOnlyDatabase, _ schema: EvolutionBookSchema, known: EvolutionBookContents) throws -> Bool {
        let top = try schemaChecked(database, schema.select(schema.version, where: "rowid <= ?1", "ORDER BY rowid DESC LIMIT 1"))
        try top.bind(highest, at: 1)
        guard try top.step() else { return true }
        let rowID = top.int64(0)
        return top.withBytes(1) { uid in
            top.withBytes(2) { rev in known.isCurrent(rowID: rowID, uid: uid, rev: rev) } ?? false
        } ?? false
    }

    /// What changed when no rowid was given again: EDS adds and rewrites rows with
    /// `INSERT OR REPLACE`, so every row written since has a rowid above `highest`, and the
    /// count of rows tells whether any went away; only then are the rowids listed, to name them.
    /// A row another program changed in place (an `UPDATE` of its vCard, which EDS never makes)
    /// below the highest one is seen when the book is next read from scratch (reload, restart).
    private static func readWritten(
        after highest: Int64, _ database: SQLiteReadOnlyDatabase, _ schema: EvolutionBookSchema, known: EvolutionBookContents, into pass: inout Found
    ) throws {
        let rows = try schemaChecked(database, schema.select(schema.wholeRow, where: "rowid > ?1", "ORDER BY rowid"))
        try rows.bind(highest, at: 1)
        while try rows.step() { append(rows, to: &pass.rows) }
        let added = pass.rows.uids.count { known.rows[$0] == nil }
        let count = try schemaChecked(database, schema.select("count(*)"))
        guard try count.step() else { return }
        // Rows rewritten replaced known ones (the uid is the key), so with no deletion the book
        // holds exactly the known rows plus the new uids.
        if Int(count.int64(0)) == known.count + added { return }
        var current = Set<Int64>()
        current.reserveCapacity(known.count)
        let rowIDs = try schemaChecked(database, schema.select("rowid", where: "rowid <= ?1"))
        try rowIDs.bind(highest, at: 1)
        while try rowIDs.step() { current.insert(rowIDs.int64(0)) }
        let reread = Set(pass.rows.uids)
        pass.removed = known.removedUIDs(current: current).filter { !reread.contains($0) }
    }

    /// The current row of a statement selecting `rowid, uid, Rev, vcard`, copied whole.
    private static func append(_ row: SQLiteReadOnlyDatabase.Statement, to rows: inout EvolutionUnparsedRows) {
        let rowID = row.int64(0)
        row.withOptionalBytes(1) { uid in
            row.withOptionalBytes(2) { rev in
                row.withOptionalBytes(3) { card in rows.append(rowID: rowID, uid: uid, rev: rev, card: card) }
            }
        }
    }

    /// The database's size in bytes: its pages times their size.
    private static func databaseBytes(_ database: SQLiteReadOnlyDatabase) throws -> Int {
        let pages = try database.prepare("PRAGMA page_count")
        let size = try database.prepare("PRAGMA page_size")
        guard try pages.step(), try size.step() else { return 0 }
        return Int(pages.int64(0) * size.int64(0))
    }

    /// The `revision` key (`2026-11-25T00:25:18Z(0)`); nil when the book has none yet.
    private static func revision(_ database: SQLiteReadOnlyDatabase, _ schema: EvolutionBookSchema) throws -> String? {
        let statement = try schemaChecked(database, schema.revisionQuery)
        return try statement.step() ? statement.text(0) : nil
    }

    /// Prepares `sql`; a table or column this reader needs that is not there is an unknown schema.
    private static func schemaChecked(_ database: SQLiteReadOnlyDatabase, _ sql: String) throws -> SQLiteReadOnlyDatabase.Statement {
        do {
            return try database.prepare(sql)
        } catch {
            if error.primaryCode == 1 /* SQLITE_ERROR */,
               error.message.hasPrefix("no such table") || error.message.hasPrefix("no such column") {
                throw EvolutionBookFault.unknownSchema(detail: error.message)
            }
            throw error
        }
    }

    static func fault(_ error: SQLiteError, busyTimeoutMilliseconds: Int32) -> EvolutionBookFault {
        if error.isBusy { return .locked(timeoutMilliseconds: busyTimeoutMilliseconds) }
        if error.isCorrupt { return .corrupt(detail: error.message) }
        if error.isCannotOpen { return .noDatabase }
        return .unreadable(detail: error.description)
    }
}
