import CSQLite

/// An error of libsqlite3: the call, its result code and the library's message.
struct SQLiteError: Error, Equatable, Sendable, CustomStringConvertible {
    var call: String
    var code: Int32
    var message: String

    /// The primary result code (the low byte: `SQLITE_BUSY` for `SQLITE_BUSY_SNAPSHOT`, …).
    var primaryCode: Int32 { code & 0xff }
    var isBusy: Bool { primaryCode == SQLITE_BUSY || primaryCode == SQLITE_LOCKED }
    var isCorrupt: Bool { primaryCode == SQLITE_CORRUPT || primaryCode == SQLITE_NOTADB }
    var isCannotOpen: Bool { primaryCode == SQLITE_CANTOPEN }

    var description: String { "\(call): \(message) (SQLite result \(code))" }
}

/// One read-only connection to an SQLite file, through libsqlite3's C API. Opened with
/// `SQLITE_OPEN_READONLY`, so it never creates, writes or rolls back the file (another
/// program's database), and with a busy timeout, so a writer's lock is waited for, not failed on.
final class SQLiteReadOnlyDatabase {
    private let handle: OpaquePointer
    fileprivate let sqlite: SQLiteLibrary

    init(path: String, busyTimeoutMilliseconds: Int32) throws(SQLiteError) {
        let sqlite = try SQLiteLibrary.loaded.get()
        self.sqlite = sqlite
        var opened: OpaquePointer?
        let result = sqlite.sqlite3_open_v2(path, &opened, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nil)
        guard result == SQLITE_OK, let opened else {
            let message = opened.map { sqlite.text(sqlite.sqlite3_errmsg($0)) } ?? sqlite.text(sqlite.sqlite3_errstr(result))
            if let opened { _ = sqlite.sqlite3_close_v2(opened) }
            throw SQLiteError(call: "sqlite3_open_v2", code: result, message: message)
        }
        handle = opened
        _ = sqlite.sqlite3_extended_result_codes(handle, 1)
        _ = sqlite.sqlite3_busy_timeout(handle, busyTimeoutMilliseconds)
    }

    deinit {
        _ = sqlite.sqlite3_close_v2(handle)
    }

    /// Runs statements that return no rows (`BEGIN`, `COMMIT`, `ROLLBACK`).
    func execute(_ sql: String) throws(SQLiteError) {
        let result = sqlite.sqlite3_exec(handle, sql, nil, nil, nil)
        guard result == SQLITE_OK else { throw error(call: sql, result) }
    }

    func prepare(_ sql: String) throws(SQLiteError) -> Statement {
        var statement: OpaquePointer?
        let result = sqlite.sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
        guard result == SQLITE_OK, let statement else { throw error(call: sql, result) }
        return Statement(statement, database: self, sql: sql)
    }

    fileprivate func error(call: String, _ result: Int32) -> SQLiteError {
        SQLiteError(call: call, code: sqlite.sqlite3_extended_errcode(handle), message: sqlite.text(sqlite.sqlite3_errmsg(handle)))
    }

    /// A prepared statement; finalized when released.
    final class Statement {
        private let statement: OpaquePointer
        private let database: SQLiteReadOnlyDatabase
        private let sql: String

        fileprivate init(_ statement: OpaquePointer, database: SQLiteReadOnlyDatabase, sql: String) {
            self.statement = statement
            self.database = database
            self.sql = sql
        }

        deinit {
            _ = database.sqlite.sqlite3_finalize(statement)
        }

        /// True when a row is ready to be read, false when the statement is done.
        func step() throws(SQLiteError) -> Bool {
            switch database.sqlite.sqlite3_step(statement) {
            case SQLITE_ROW: return true
            case SQLITE_DONE: return false
            case let result: throw database.error(call: sql, result)
            }
        }

        func reset() {
            _ = database.sqlite.sqlite3_reset(statement)
            _ = database.sqlite.sqlite3_clear_bindings(statement)
        }

        /// Binds text to the 1-based parameter `index` (copied by SQLite).
        func bind(_ text: String, at index: Int32) throws(SQLiteError) {
            // SQLITE_TRANSIENT: SQLite copies the bytes before this call returns.
            let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)
            let result = database.sqlite.sqlite3_bind_text(statement, index, text, -1, transient)
            guard result == SQLITE_OK else { throw database.error(call: sql, result) }
        }

        func bind(_ value: Int64, at index: Int32) throws(SQLiteError) {
            let result = database.sqlite.sqlite3_bind_int64(statement, index, value)
            guard result == SQLITE_OK else { throw database.error(call: sql, result) }
        }

        func int64(_ column: Int32) -> Int64 { database.sqlite.sqlite3_column_int64(statement, column) }

        /// The column as text; nil for NULL.
        func text(_ column: Int32) -> String? {
            guard let bytes = database.sqlite.sqlite3_column_text(statement, column) else { return nil }
            let count = Int(database.sqlite.sqlite3_column_bytes(statement, column))
            return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
        }

        /// The column's bytes as they are stored (a vCard is parsed from its bytes); nil for NULL.
        func withBytes<R>(_ column: Int32, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R? {
            withOptionalBytes(column) { bytes in bytes.map(body) }
        }

        /// The column's bytes as they are stored, nil for NULL; valid until the next step.
        func withOptionalBytes<R>(_ column: Int32, _ body: (UnsafeBufferPointer<UInt8>?) -> R) -> R {
            guard let bytes = database.sqlite.sqlite3_column_text(statement, column) else { return body(nil) }
            let count = Int(database.sqlite.sqlite3_column_bytes(statement, column))
            return body(UnsafeBufferPointer(start: bytes, count: count))
        }
    }
}
