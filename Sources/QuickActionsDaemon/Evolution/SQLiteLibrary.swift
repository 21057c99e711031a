import CSQLite

/// libsqlite3, opened the first time an Evolution Data Server address book is read instead of
/// linked: a daemon that reads none (no EDS, `Evolution=none`, only vdir folders) and every
/// `qactl` never map it. Opened once, never closed; a library that cannot be opened makes every
/// read of a book fail with the loader's words, as a book that cannot be opened does.
struct SQLiteLibrary: @unchecked Sendable {  // C function addresses, immutable
    let sqlite3_open_v2: qactd_sqlite3_open_v2
    let sqlite3_close_v2: qactd_sqlite3_close_v2
    let sqlite3_errmsg: qactd_sqlite3_errmsg
    let sqlite3_errstr: qactd_sqlite3_errstr
    let sqlite3_extended_errcode: qactd_sqlite3_extended_errcode
    let sqlite3_extended_result_codes: qactd_sqlite3_extended_result_codes
    let sqlite3_busy_timeout: qactd_sqlite3_busy_timeout
    let sqlite3_exec: qactd_sqlite3_exec
    let sqlite3_prepare_v2: qactd_sqlite3_prepare_v2
    let sqlite3_finalize: qactd_sqlite3_finalize
    let sqlite3_step: qactd_sqlite3_step
    let sqlite3_reset: qactd_sqlite3_reset
    let sqlite3_clear_bindings: qactd_sqlite3_clear_bindings
    let sqlite3_bind_text: qactd_sqlite3_bind_text
    let sqlite3_bind_int64: qactd_sqlite3_bind_int64
    let sqlite3_column_int64: qactd_sqlite3_column_int64
    let sqlite3_column_text: qactd_sqlite3_column_text
    let sqlite3_column_bytes: qactd_sqlite3_column_bytes

    /// The library by the soname of Debian's `libsqlite3-0`; a failure is `SQLITE_CANTOPEN`,
    /// which the callers treat as a book that cannot be opened.
    static let loaded: Result<SQLiteLibrary, SQLiteError> = Result { () throws(SQLiteError) in
        do throws(SharedLibrary.LoadFailure) {
            let library = try SharedLibrary(soname: "libsqlite3.so.0")
            return SQLiteLibrary(
                sqlite3_open_v2: try library.function("sqlite3_open_v2"),
                sqlite3_close_v2: try library.function("sqlite3_close_v2"),
                sqlite3_errmsg: try library.function("sqlite3_errmsg"),
                sqlite3_errstr: try library.function("sqlite3_errstr"),
                sqlite3_extended_errcode: try library.function("sqlite3_extended_errcode"),
                sqlite3_extended_result_codes: try library.function("sqlite3_extended_result_codes"),
                sqlite3_busy_timeout: try library.function("sqlite3_busy_timeout"),
                sqlite3_exec: try library.function("sqlite3_exec"),
                sqlite3_prepare_v2: try library.function("sqlite3_prepare_v2"),
                sqlite3_finalize: try library.function("sqlite3_finalize"),
                sqlite3_step: try library.function("sqlite3_step"),
                sqlite3_reset: try library.function("sqlite3_reset"),
                sqlite3_clear_bindings: try library.function("sqlite3_clear_bindings"),
                sqlite3_bind_text: try library.function("sqlite3_bind_text"),
                sqlite3_bind_int64: try library.function("sqlite3_bind_int64"),
                sqlite3_column_int64: try library.function("sqlite3_column_int64"),
                sqlite3_column_text: try library.function("sqlite3_column_text"),
                sqlite3_column_bytes: try library.function("sqlite3_column_bytes"))
        } catch {
            throw SQLiteError(call: "dlopen", code: SQLITE_CANTOPEN, message: error.message)
        }
    }

    /// A message of the library's (its function pointers carry no nullability).
    func text(_ message: UnsafePointer<CChar>?) -> String {
        message.map { String(cString: $0) } ?? "no message"
    }
}
