// SQLite's C API. qactd opens libsqlite3 when it first reads an Evolution Data Server address
// book (`SQLiteLibrary`), so it is not linked: these are the types of the functions it looks up,
// taken from their declarations.
#include <sqlite3.h>

typedef __typeof__(sqlite3_open_v2) *qactd_sqlite3_open_v2;
typedef __typeof__(sqlite3_close_v2) *qactd_sqlite3_close_v2;
typedef __typeof__(sqlite3_errmsg) *qactd_sqlite3_errmsg;
typedef __typeof__(sqlite3_errstr) *qactd_sqlite3_errstr;
typedef __typeof__(sqlite3_extended_errcode) *qactd_sqlite3_extended_errcode;
typedef __typeof__(sqlite3_extended_result_codes) *qactd_sqlite3_extended_result_codes;
typedef __typeof__(sqlite3_busy_timeout) *qactd_sqlite3_busy_timeout;
typedef __typeof__(sqlite3_exec) *qactd_sqlite3_exec;
typedef __typeof__(sqlite3_prepare_v2) *qactd_sqlite3_prepare_v2;
typedef __typeof__(sqlite3_finalize) *qactd_sqlite3_finalize;
typedef __typeof__(sqlite3_step) *qactd_sqlite3_step;
typedef __typeof__(sqlite3_reset) *qactd_sqlite3_reset;
typedef __typeof__(sqlite3_clear_bindings) *qactd_sqlite3_clear_bindings;
typedef __typeof__(sqlite3_bind_text) *qactd_sqlite3_bind_text;
typedef __typeof__(sqlite3_bind_int64) *qactd_sqlite3_bind_int64;
typedef __typeof__(sqlite3_column_int64) *qactd_sqlite3_column_int64;
typedef __typeof__(sqlite3_column_text) *qactd_sqlite3_column_text;
typedef __typeof__(sqlite3_column_bytes) *qactd_sqlite3_column_bytes;
