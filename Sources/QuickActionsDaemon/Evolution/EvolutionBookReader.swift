import Contacts

/// Why an address book gives no (new) contacts, while it lasts. Descriptions are sentences
/// without the database's path, which `Status` and the log pair them with.
enum EvolutionBookFault: Error, Hashable, Sendable, CustomStringConvertible {
    /// A configured UID with no folder of that name.
    case noSuchBook
    /// The book's folder holds no `contacts.db` (yet).
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
            return "The address book has no \(EvolutionLocation.databaseName)."
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

/// Reads one EDS address book (`contacts.db`, schema of `e-book-sqlite.c`) read-only, in one
/// short read transaction: the `revision` key first (unchanged: nothing else is read), then
/// each row's uid, rowid and `Rev`, and the vCard of only the rows that changed. The first
/// read of a book takes every row's vCard in the same single pass.
enum EvolutionBookReader {
    static let busyTimeoutMilliseconds: Int32 = 1000

    static func read(
        database path: String, known: EvolutionBookContents, maxCardBytes: Int, options: ContactParsingOptions,
        busyTimeoutMilliseconds: Int32 = busyTimeoutMilliseconds
    ) throws(EvolutionBookFault) -> EvolutionBookPass? {
        do {
            let database = try SQLiteReadOnlyDatabase(path: path, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
            try database.execute("BEGIN")
            do {
                let pass = try read(database, known: known, maxCardBytes: maxCardBytes, options: options)
                try database.execute("COMMIT")
                return pass
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

    private static func read(
        _ database: SQLiteReadOnlyDatabase, known: EvolutionBookContents, maxCardBytes: Int, options: ContactParsingOptions
    ) throws -> EvolutionBookPass? {
        let revision = try self.revision(database)
        if let revision, revision == known.revision { return nil }
        var pass = EvolutionBookPass(revision: revision ?? "")
        if known.isEmpty {
            let rows = try schemaChecked(database, "SELECT uid, rowid, Rev, vcard FROM folder_id ORDER BY uid")
            while try rows.step() {
                let uid = rows.text(0) ?? ""
                let version = EvolutionRowVersion(rowID: rows.int64(1), rev: rows.text(2) ?? "")
                let result = rows.withBytes(3) {
                    EvolutionCards.contacts(fromVCard: $0, uid: uid, maxBytes: maxCardBytes, options: options)
                } ?? EvolutionCards.contacts(fromVCard: nil, uid: uid, maxBytes: maxCardBytes, options: options)
                pass.read.append(.init(uid: uid, version: version, result: result))
            }
            return pass
        }
        var listed: [String: EvolutionRowVersion] = [:]
        let versions = try schemaChecked(database, "SELECT uid, rowid, Rev FROM folder_id")
        while try versions.step() {
            listed[versions.text(0) ?? ""] = EvolutionRowVersion(rowID: versions.int64(1), rev: versions.text(2) ?? "")
        }
        let plan = known.plan(listed: listed)
        pass.removed = plan.removed
        if !plan.read.isEmpty {
            let card = try schemaChecked(database, "SELECT vcard FROM folder_id WHERE uid = ?1")
            for uid in plan.read {
                guard let version = listed[uid] else { continue }
                card.reset()
                try card.bind(uid, at: 1)
                guard try card.step() else { continue }
                let result = card.withBytes(0) {
                    EvolutionCards.contacts(fromVCard: $0, uid: uid, maxBytes: maxCardBytes, options: options)
                } ?? EvolutionCards.contacts(fromVCard: nil, uid: uid, maxBytes: maxCardBytes, options: options)
                pass.read.append(.init(uid: uid, version: version, result: result))
            }
        }
        return pass
    }

    /// The `revision` key (`2026-11-25T00:25:18Z(0)`); nil when the book has none yet.
    private static func revision(_ database: SQLiteReadOnlyDatabase) throws -> String? {
        let statement = try schemaChecked(database, "SELECT value FROM keys WHERE key = 'revision' AND folder_id = 'folder_id'")
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
