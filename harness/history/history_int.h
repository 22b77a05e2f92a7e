/*
 * history_int.h: what the files of harness/history share and nobody else sees: the
 * handle's layout, the prepared-statement table and the write helpers (transaction
 * batching, sticky errors, digest folding). history.h is the public face.
 */
#ifndef FL_HISTORY_INT_H
#define FL_HISTORY_INT_H

/* Internal to harness/history: compiled only into fl_history (which defines FL_INTERNAL_history)
 * and into the white-box tests that declare it (tests/CMakeLists.txt). */
#ifndef FL_INTERNAL_history
#error                                                                                             \
    "harness/history/history_int.h is internal to harness/history: include its public header instead"
#endif

#include "harness/history/hist_schema.h"
#include "harness/history/history.h"

#include <sqlite3.h>

/* Prepared statements, built once per handle in hist_open (write mode only). */
enum hist_stmt {
    HIST_ST_BEGIN,
    HIST_ST_COMMIT,
    HIST_ST_RUN_INSERT,
    HIST_ST_RUN_END,
    HIST_ST_OP,
    HIST_ST_WATCH,
    HIST_ST_WATCH_CLOSE,
    HIST_ST_WATCH_EVENT,
    HIST_ST_FAULT,
    HIST_ST_NODE_EVENT,
    HIST_ST_CHECK,
    HIST_ST_CLIENT,
    HIST_ST_COUNT
};

struct hist_db {
    sqlite3 *db;
    char *path;
    bool readonly;
    bool merge_target; /* HIST_OPEN_MERGE_TARGET */
    int err;           /* sticky write error, FL_OK when none */
    char errmsg[512];  /* last message, "" when none */
    int batch_rows;
    int pending_rows;    /* rows written in the open transaction */
    int64_t tx_start_ms; /* monotonic wall time the transaction began */
    bool in_tx;
    int64_t run_id;           /* current run, 0 when none */
    struct fl_digest *digest; /* borrowed from hist_run_begin, may be NULL */
    struct fl_buf dig;        /* digest bytes of the row being written */
    int64_t op_id_max;        /* per current run: for op_id assignment */
    int64_t wev_seq;          /* last assigned watch-event seq */
    int64_t fault_seq, node_seq, check_seq;
    char reason[512]; /* why the current run ends 'error' (hist_run_set_error), "" */
    sqlite3_stmt *st[HIST_ST_COUNT];
};

/* Sets errmsg to "history database 'PATH': ..." and returns code (not sticky). */
int hist__fail(struct hist_db *db, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Same, and makes the error sticky. */
int hist__fail_sticky(struct hist_db *db, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Maps an SQLite result code to an enum fl_err. */
int hist__code(int rc);

/* history_ro.c: whether table has column col. */
bool hist__has_column(sqlite3 *db, const char *table, const char *col);
/* Whether an SQLite result code says the file is damaged or not a database. */
bool hist__is_corrupt(int rc);
/* The message for an SQLITE_CORRUPT/NOTADB on path: FL_EINVAL "not a SQLite database
 * (detail)" for a file without SQLite's header, else FL_ECORRUPT "the database is
 * corrupt (detail)". */
int hist__corrupt_why(const char *path, const char *detail, char *why, size_t why_len);
/* Opens path read-only (falling back to immutable=1 for a WAL database in a read-only
 * folder whose log is empty); FL_OK with *out open, else an fl_err code, *out NULL and
 * the reason in why ("the database is corrupt (...)", "cannot read: ..."). */
int hist__open_ro(const char *path, sqlite3 **out, char *why, size_t why_len);
/* PRAGMA quick_check when path is at most HIST_QUICK_CHECK_BYTES_MAX bytes: FL_OK, or
 * FL_ECORRUPT with the first problem in why. */
int hist__quick_check(sqlite3 *db, const char *path, char *why, size_t why_len);

/* Opens a transaction if none is open. */
int hist__tx(struct hist_db *db);
/* Steps a bound INSERT/UPDATE statement to completion and resets it; counts the row
 * and commits when the batch is full. what names the table for messages. */
int hist__write(struct hist_db *db, sqlite3_stmt *st, const char *what);

/* Binding helpers; column numbers start at 1. NULL pointer / HIST_NULL bind NULL. */
void hist__bind_i64(sqlite3_stmt *st, int col, int64_t v);
void hist__bind_text(sqlite3_stmt *st, int col, const char *s);
void hist__bind_blob(sqlite3_stmt *st, int col, const void *p, size_t n);

/* Column readers: NULL column gives HIST_NULL / NULL pointer. A NULL blob sets *n 0. */
int64_t hist__col_i64(sqlite3_stmt *st, int col);
const char *hist__col_text(sqlite3_stmt *st, int col);
const void *hist__col_blob(sqlite3_stmt *st, int col, size_t *n);

/* Digest folding into db->dig (no-op when the run has no digest); hist__dig_end hands
 * the row to the digest. A NULL blob differs from an empty one. */
void hist__dig_tag(struct hist_db *db, const char *tag);
void hist__dig_i64(struct hist_db *db, int64_t v);
void hist__dig_str(struct hist_db *db, const char *s);
void hist__dig_blob(struct hist_db *db, const void *p, size_t n);
void hist__dig_end(struct hist_db *db);

/* ---- one row of a table, from its column list (hist_schema.h) --------------------------
 *
 * Each expands a table's list in a function that names its statement hist__st, the
 * last parameter number used hist__c, the row struct pointer hist__row and the
 * handle hist__db. */

#define HIST_BIND_I64(st, c, r, f)  hist__bind_i64(st, c, (r)->f)
#define HIST_BIND_ID                HIST_BIND_I64
#define HIST_BIND_TEXT(st, c, r, f) hist__bind_text(st, c, (r)->f)
#define HIST_BIND_BLOB(st, c, r, f) hist__bind_blob(st, c, (r)->f, (r)->f##_len)
#define HIST_BIND_STATUS(st, c, r, f)                                                              \
    sqlite3_bind_text(st, c, hist_status_name((r)->f), -1, SQLITE_STATIC)
#define HIST_BIND_ROLE_DIG(kind, f)  HIST_BIND_##kind(hist__st, ++hist__c, hist__row, f);
#define HIST_BIND_ROLE_KEEP(kind, f) HIST_BIND_##kind(hist__st, ++hist__c, hist__row, f);
#define HIST_BIND_ROLE_LATE(kind, f)
/* Binds every inserted column, from parameter 2 on (1 is run_id). */
#define HIST_BIND_COL(col, field, kind, role, since, load) HIST_BIND_ROLE_##role(kind, field)

#define HIST_DIG_I64(d, r, f)      hist__dig_i64(d, (r)->f)
#define HIST_DIG_ID                HIST_DIG_I64
#define HIST_DIG_TEXT(d, r, f)     hist__dig_str(d, (r)->f)
#define HIST_DIG_BLOB(d, r, f)     hist__dig_blob(d, (r)->f, (r)->f##_len)
#define HIST_DIG_STATUS(d, r, f)   hist__dig_i64(d, (int64_t)(r)->f)
#define HIST_DIG_ROLE_DIG(kind, f) HIST_DIG_##kind(hist__db, hist__row, f);
#define HIST_DIG_ROLE_KEEP(kind, f)
#define HIST_DIG_ROLE_LATE(kind, f)
/* Folds every DIG column, in list order. */
#define HIST_DIG_COL(col, field, kind, role, since, load) HIST_DIG_ROLE_##role(kind, field)

#define HIST_READ_I64(st, c, r, f)    (r)->f = hist__col_i64(st, c)
#define HIST_READ_ID                  HIST_READ_I64
#define HIST_READ_TEXT(st, c, r, f)   (r)->f = hist__col_text(st, c)
#define HIST_READ_BLOB(st, c, r, f)   (r)->f = hist__col_blob(st, c, &(r)->f##_len)
#define HIST_READ_STATUS(st, c, r, f) (r)->f = hist__col_status(st, c)
/* Reads every column, from result column 1 on (0 is run_id), as hist__select_sql
 * lists them. */
#define HIST_READ_COL(col, field, kind, role, since, load)                                         \
    HIST_READ_##kind(hist__st, ++hist__c, hist__row, field);

/* An unset row: every integer HIST_NULL, every pointer NULL, a status unknown. */
#define HIST_INIT_I64(r, f)                                (r)->f = HIST_NULL
#define HIST_INIT_ID                                       HIST_INIT_I64
#define HIST_INIT_TEXT(r, f)                               (r)->f = NULL
#define HIST_INIT_BLOB(r, f)                               ((r)->f = NULL, (r)->f##_len = 0)
#define HIST_INIT_STATUS(r, f)                             (r)->f = HIST_STATUS_UNKNOWN
#define HIST_INIT_COL(col, field, kind, role, since, load) HIST_INIT_##kind(hist__row, field);

/* A status column: HIST_STATUS_UNKNOWN for NULL or a name nobody knows. */
enum hist_status hist__col_status(sqlite3_stmt *st, int col);

/* Appends "SELECT run_id, c1, c2, ... FROM table WHERE run_id = ?1 ORDER BY order" to
 * sql: every column of the table in schema order, NULL in place of one an older
 * database lacks (since >= 1); the caller binds the run id to ?1. */
void hist__select_sql(sqlite3 *db, enum hist_table_id t, const char *order, struct fl_buf *sql);

#endif
