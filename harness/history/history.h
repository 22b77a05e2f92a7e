/*
 * history.h: the SQLite history of faultline runs (DESIGN §3.6): a recorder that
 * the run loop, the clients, the servers and the checkers append to, and a small
 * reader for reports, the run summary and `faultline check`.
 *
 * One struct hist_db is one SQLite connection. Several runs may share a database
 * (runs.run_id tells them apart); a handle records into one run at a time, the
 * "current run" set by hist_run_begin (or hist_run_attach for an existing one).
 *
 * Writes go through prepared statements inside a transaction that is committed
 * every batch_rows rows (default HIST_BATCH_ROWS_DEFAULT) or HIST_BATCH_WALL_MS after
 * the batch began, on hist_flush, at
 * hist_run_end and at hist_close, in WAL mode with synchronous=NORMAL: recording
 * is never the bottleneck, and a process killed at any point (SIGKILL, abort of
 * an FL_ASSERT, SIGINT) leaves a database that opens and passes
 * `PRAGMA integrity_check`, with every committed batch present. The runs row is
 * inserted and committed by hist_run_begin with verdict 'running', and finalised by
 * hist_run_end only once every batch of the run has committed: a run that never
 * reaches hist_run_end stays 'running', and a run one of whose writes failed (a full
 * disk, an I/O error) ends 'error' whatever verdict the caller asked for, with the
 * failure in runs.reason. Readers (`faultline check`) refuse 'running' and 'error'
 * runs: their histories are incomplete.
 *
 * The digest (DESIGN §2): every row written for the current run is also folded
 * into the struct fl_digest given to hist_run_begin (one tag per table, then every
 * column in schema order, NULL distinguished from empty), never wall-clock fields
 * (runs.started_at, runs.wall_ms, checks.elapsed_ms) and never the run_id (which
 * depends on what else is in the database). Equal rows give equal digests; any
 * changed column changes it.
 *
 * Schema: exactly the tables and columns of DESIGN §3.6, plus these additions
 * (columns may be added in later versions; none is ever renamed):
 *   ops          value BLOB        value written (put, cas) or read (get/range of one
 *                                  key); NULL when none or the key was absent
 *                expect BLOB       compared value of a cas / txn compare, NULL if none
 *                mod_rev, create_rev, version INTEGER
 *                                  of the key read (get) or written, NULL when unknown
 *                succeeded INTEGER txn/cas outcome 1/0, NULL when not a txn
 *                deleted INTEGER   number of keys a delete removed, NULL otherwise
 *                UNIQUE index ops_by_run (run_id, op_id) on a rowid table (rows
 *                                  are appended in recording order; databases of
 *                                  schema 1 written before this may have the table
 *                                  WITHOUT ROWID with PRIMARY KEY (run_id, op_id):
 *                                  the same columns and uniqueness, read alike)
 *   watches      UNIQUE index (run_id, watch_id)
 *                node_id INTEGER, prev_kv INTEGER (1: asked for prev_kv),
 *                progress_notify INTEGER, filters TEXT (e.g. "noput"),
 *                request TEXT (JSON of the watch create request)
 *   watch_events revision INTEGER  header revision of the response; for 'progress'
 *                                  the revision the watch is known to have reached
 *                prev_kv INTEGER   1 when the event carried a previous key-value
 *                                  (prev_value NULL then means "value was NULL/absent"),
 *                                  0 when it carried none
 *                prev_mod_rev INTEGER mod revision of the previous key-value
 *                UNIQUE index watch_events_by_run (run_id, watch_id, seq) on a
 *                                  rowid table (older: WITHOUT ROWID, the same key)
 *   faults       seq INTEGER       insertion order in the run (ties of at_ns)
 *   node_events  seq INTEGER       insertion order in the run (ties of at_ns)
 *   checks       seq INTEGER       insertion order in the run
 *   runs         reason TEXT       why the run ended 'error' or 'unknown' (NULL otherwise)
 *                seed_text TEXT    the seed in decimal, 0..18446744073709551615
 *   runs.seed is the seed's 64-bit pattern as a signed INTEGER (SQLite has no unsigned
 *   integers): seeds of 2^63 and above read as seed - 2^64 there, and faultline reads
 *   them back as the unsigned value (hist_run_get); seed_text has the exact decimal
 *   for other tools. Databases without seed_text or reason load as before, and gain
 *   the columns when opened for writing.
 * A damaged database (SQLITE_CORRUPT/NOTADB, or PRAGMA quick_check failing on open
 * for files up to HIST_QUICK_CHECK_BYTES_MAX) is refused with FL_ECORRUPT and a message
 * saying it is corrupt. Read-only opens of a WAL database in a read-only folder read
 * the main file alone (immutable) when its write-ahead log is empty.
 * PRAGMA user_version is HIST_SCHEMA_VERSION and PRAGMA application_id is 'FLTH'; a
 * newer database, or a non-empty SQLite file without that id, is refused. New
 * databases use 4 KiB pages (measured fastest for recording once the history tables
 * became rowid tables: the last page of a table is what a commit rewrites).
 *
 * Keys and values are arbitrary bytes (BLOB; NUL bytes are fine). A (pointer,
 * length) pair with a NULL pointer is SQL NULL; a non-NULL pointer with length 0
 * is the empty blob. Integers that may be NULL use the sentinel HIST_NULL.
 *
 * JSON columns (request, response, detail, options) are TEXT that the caller
 * produces; hist_json_bytes/hist_json_bytes_get give one convention for bytes in
 * JSON. For a digest that is equal across runs, JSON must be produced
 * deterministically (jansson keeps insertion order; use JSON_SORT_KEYS or build in
 * a fixed order, never from hash-table iteration).
 *
 * Errors: every function returning int returns FL_OK or an enum fl_err code, and
 * leaves a message naming the database path in hist_errmsg. Errors are sticky: after
 * a failed write the handle refuses further writes with the same code (the CLI turns
 * that into exit 2 for a bad path, 3 otherwise).
 *
 * Every read that feeds a report or a decision has an ORDER BY (DESIGN §6).
 * This module owns all SQLite access; nothing else includes sqlite3.h.
 * It reads clocks only for runs.started_at (wall time, reports only) and to bound how
 * long a batch stays open (HIST_BATCH_WALL_MS); neither enters a row's content or a
 * digest.
 *
 * Several processes may record into one database at once (a sweep with one --db):
 * each run gets its own run_id, batches take the write lock with BEGIN IMMEDIATE and
 * wait up to 60 s for it (busy_timeout).
 */
#ifndef FL_HISTORY_H
#define FL_HISTORY_H

#include "harness/common/common.h"

#include <jansson.h>

#define HIST_SCHEMA_VERSION 1
#define HIST_APPLICATION_ID 0x464c5448 /* "FLTH" */

/* Whether a database with these PRAGMA application_id and user_version values is a
 * faultline history this build reads: FL_OK, or FL_EINVAL with the reason in why
 * ("not a faultline history (application_id 7)", "schema version 3 is newer..."). */
int hist_identity_check(int64_t application_id, int64_t user_version, char *why, size_t why_len);
#define HIST_BATCH_ROWS_DEFAULT 4096
/* hist_open runs PRAGMA quick_check on existing files up to this size (larger ones
 * rely on every query's SQLITE_CORRUPT check). */
#define HIST_QUICK_CHECK_BYTES_MAX (64LL << 20)
/* A batch is committed at the latest this many wall milliseconds after it began (at
 * the next row written): commit timing never changes content or digests. */
#ifndef HIST_BATCH_WALL_MS /* a profiling build may raise it: see README (profiling) */
#define HIST_BATCH_WALL_MS 200
#endif
/* Sentinel for an INTEGER column that is NULL. */
#define HIST_NULL INT64_MIN

struct hist_db; /* opaque */

/* ---- opening and closing ------------------------------------------------------- */

enum hist_open_flags {
    HIST_OPEN_WRITE = 0,    /* create if missing, create the schema, refuse read-only */
    HIST_OPEN_READONLY = 1, /* must exist and carry the faultline schema */
    /* With HIST_OPEN_WRITE, for a new database that receives whole runs copied in
     * (a sweep's): not checked with quick_check on open (it is created fresh). */
    HIST_OPEN_MERGE_TARGET = 2
};

/*
 * Opens (and with HIST_OPEN_WRITE creates) the database at path. On success *out
 * is a new handle the caller closes with hist_close. On failure *out is NULL,
 * nothing needs closing, and err (if not NULL) receives a one-line message naming
 * the path, e.g. "history database 'x.db': file is not a database". Returns
 * FL_EINVAL for "not a faultline/SQLite database" or a newer schema, FL_EIO for a
 * path that cannot be opened or written (missing directory, read-only file or
 * directory), FL_ENOENT for a missing file with HIST_OPEN_READONLY.
 */
int hist_open(const char *path, int flags, struct hist_db **out, char *err, size_t err_size);

/* Commits what is pending (the current run stays as it is: a run without
 * hist_run_end remains 'running'), finalizes statements and closes. NULL is fine.
 * Returns the sticky error, if any. */
int hist_close(struct hist_db *db);

/* Removes the database file at path and its side files (path-wal, path-shm,
 * path-journal), each where it exists: a scratch database's cleanup. Call it on a
 * closed database only. FL_OK, or FL_EIO when one that exists could not be removed. */
int hist_remove(const char *path);

/* The last error message ("" when none); owned by db, valid until the next call. */
const char *hist_errmsg(const struct hist_db *db);
/* The sticky error code (FL_OK when none). */
int hist_error(const struct hist_db *db);
/* The path given to hist_open (owned by db). */
const char *hist_path(const struct hist_db *db);

/* Rows per transaction (>= 1). Larger is faster; a kill loses at most one batch. */
void hist_set_batch_rows(struct hist_db *db, int batch_rows);
/* Commits the open transaction now (a no-op when none is open). */
int hist_flush(struct hist_db *db);

/* ---- run lifecycle ------------------------------------------------------------- */

/*
 * Inserts a runs row (scenario, seed, options JSON text or NULL, started_at = now in
 * UTC "YYYY-MM-DDTHH:MM:SSZ", verdict 'running') and commits it at once, then makes it
 * the current run. digest (may be NULL: no folding) is borrowed until hist_run_end;
 * every later row of the run is folded into it. seed is stored as the signed 64-bit
 * pattern of the uint64 (read back with hist_run_get as uint64). *run_id_out (may be
 * NULL) receives the new run_id. Fails with FL_EBUSY if a run is current.
 */
int hist_run_begin(struct hist_db *db, const char *scenario, uint64_t seed,
                   const char *options_json, struct fl_digest *digest, int64_t *run_id_out);

/*
 * Makes an existing run current without changing its row, e.g. for `faultline
 * check DB --run ID` to add checks rows. digest may be NULL. FL_ENOENT if no such run.
 */
int hist_run_attach(struct hist_db *db, int64_t run_id, struct fl_digest *digest);

/*
 * Finishes the current run: commits pending rows and stores sim_end_ns, wall_ms,
 * digest (16 lowercase hex digits, or NULL) and verdict, one of "pass", "fail",
 * "unknown", "error" (anything else is FL_EINVAL), with the reason given to
 * hist_run_reason (if any). Compute the digest text after the last row is recorded
 * (checks included). The handle then has no current run. The verdict is written only
 * after the run's last batch committed; on a sticky error, or when that commit fails,
 * the row gets verdict 'error' with the error as its reason instead (if SQLite still
 * allows a write; else it stays 'running'), and the error is returned.
 */
int hist_run_end(struct hist_db *db, int64_t sim_end_ns, int64_t wall_ms, const char *digest,
                 const char *verdict);
/* The reason hist_run_end stores with the current run (copied; NULL clears), e.g. the
 * script error of an 'error' run. A write error of the run takes precedence. */
void hist_run_reason(struct hist_db *db, const char *reason);

/* The current run_id, or 0 when none. */
int64_t hist_run_current(const struct hist_db *db);

/* ---- SIGINT ------------------------------------------------------------------------ */

/*
 * Installs SIGINT, SIGTERM and SIGHUP handlers that only set a flag the run loop polls
 * with hist_interrupted(); the runner then stops, flushes and ends the run as 'error'
 * ("interrupted by SIGHUP"). A second signal restores the default action and re-raises
 * (hard stop; the database is still consistent, the run left 'running', which `check`
 * refuses as never finished). Idempotent.
 */
void hist_sigint_install(void);
bool hist_interrupted(void);
/* The first signal's name ("SIGINT", "SIGTERM", "SIGHUP"), or NULL when none came. */
const char *hist_interrupt_name(void);
/* Clears the flag (tests, or a sweep that carries on with cleanup). */
void hist_interrupt_clear(void);

/* ---- recording: ops ----------------------------------------------------------- */

enum hist_status { HIST_STATUS_OK = 0, HIST_STATUS_FAIL, HIST_STATUS_UNKNOWN };
const char *hist_status_name(enum hist_status s); /* "ok" | "fail" | "unknown" */
/* Parses "ok"/"fail"/"unknown"; false when s is none of them. */
bool hist_status_parse(const char *s, enum hist_status *out);

/*
 * One client operation, as the client saw it. Call hist_op_init first: it sets every
 * nullable integer to HIST_NULL, every pointer to NULL and status to UNKNOWN. All
 * pointers are borrowed for the call only.
 */
struct hist_op {
    int64_t op_id;     /* unique in the run; HIST_NULL or <= 0: assigned (max + 1) */
    int64_t client_id; /* HIST_NULL allowed */
    int64_t node_id;   /* member the request went to; HIST_NULL when unknown */
    const char *kind;  /* "put", "get", "range", "delete", "txn", "cas", "compact", ... */
    const void *key;   /* BLOB; NULL: SQL NULL */
    size_t key_len;
    const void *range_end; /* NULL for a single key */
    size_t range_end_len;
    const void *value; /* added column: value written or read */
    size_t value_len;
    const void *expect; /* added column: compared value */
    size_t expect_len;
    const char *request; /* JSON text of the full request, or NULL */
    int64_t call_ns;     /* simulated time of the call */
    int64_t return_ns;   /* HIST_NULL: no answer seen */
    enum hist_status status;
    const char *error; /* error text (etcd's message), or NULL */
    int64_t revision;  /* response header revision, or HIST_NULL */
    int64_t mod_rev;   /* added columns, HIST_NULL when unknown */
    int64_t create_rev;
    int64_t version;
    int64_t succeeded;    /* 1/0 for txn/cas, HIST_NULL otherwise */
    int64_t deleted;      /* delete: number of keys removed */
    const char *response; /* JSON text of the full response, or NULL */
};
void hist_op_init(struct hist_op *op);

/* Appends one ops row to the current run; *op_id_out (may be NULL) gets its op_id.
 * Usually called when the outcome is known (or at run end for ops still pending,
 * with status unknown and return_ns HIST_NULL). FL_EEXIST for a repeated op_id. */
int hist_op_add(struct hist_db *db, const struct hist_op *op, int64_t *op_id_out);

/* ---- recording: watches and watch events ----------------------------------------- */

struct hist_watch {
    int64_t watch_id; /* unique in the run (the client's numbering is fine) */
    int64_t client_id;
    int64_t node_id; /* added; HIST_NULL when unknown */
    const void *key;
    size_t key_len;
    const void *range_end;
    size_t range_end_len;
    int64_t start_rev; /* HIST_NULL or 0: from the current revision */
    int64_t opened_ns;
    int64_t closed_ns;        /* reading only: HIST_NULL while open */
    const char *close_reason; /* reading only */
    int64_t prev_kv;          /* added: 1 if prev_kv was asked for, 0 if not */
    int64_t progress_notify;  /* added: 1/0 */
    const char *filters;      /* added: e.g. "noput,nodelete", or NULL */
    const char *request;      /* added: JSON of the create request, or NULL */
};
void hist_watch_init(struct hist_watch *w);

/* Inserts the watches row (closed_ns NULL). closed_ns/close_reason in w are ignored. */
int hist_watch_open(struct hist_db *db, const struct hist_watch *w);
/* Sets closed_ns and close_reason (e.g. "cancel", "compacted", "client_close",
 * "run_end"). FL_ENOENT if the watch was never opened in this run. */
int hist_watch_close(struct hist_db *db, int64_t watch_id, int64_t closed_ns,
                     const char *close_reason);

struct hist_watch_event {
    int64_t watch_id;
    int64_t seq;          /* order of delivery; HIST_NULL: assigned run-wide (1, 2, ...).
                             Either always give it or never. */
    int64_t response_seq; /* numbers the watch response carrying the event */
    const char *kind;     /* "put" | "delete" | "progress" */
    const void *key;
    size_t key_len;
    const void *value;
    size_t value_len;
    int64_t create_rev;
    int64_t mod_rev;
    int64_t version;
    int64_t prev_kv; /* added: 1 when the event carried a prev kv, else 0/HIST_NULL */
    const void *prev_value;
    size_t prev_value_len;
    int64_t prev_mod_rev; /* added */
    int64_t revision;     /* added: response header revision (progress: reached rev) */
    int64_t delivered_ns;
};
void hist_watch_event_init(struct hist_watch_event *ev);
int hist_watch_event_add(struct hist_db *db, const struct hist_watch_event *ev);

/* ---- recording: faults, node events, checks --------------------------------------- */

/* kind e.g. "partition", "heal", "kill", "restart", "pause", "clog", "failpoint";
 * target e.g. "n1", "n1|n2,n3"; detail JSON or NULL. */
int hist_fault_add(struct hist_db *db, int64_t at_ns, const char *kind, const char *target,
                   const char *detail);
/* kind e.g. "leader", "follower", "crash", "restart", "snapshot", "compact"; term may
 * be HIST_NULL. */
int hist_node_event_add(struct hist_db *db, int64_t at_ns, int64_t node_id, const char *kind,
                        int64_t term, const char *detail);
/* The typed facts of a node event (columns peer, log_index, from_state, to_state, reason,
 * pre): HIST_NULL / NULL when the event has none. pre is 0 or 1 for vote events. */
struct hist_node_fields {
    int64_t peer, log_index;
    const char *from_state, *to_state, *reason;
    int64_t pre;
};
/* hist_node_event_add with the typed columns (f NULL: all NULL). */
int hist_node_event_add_typed(struct hist_db *db, int64_t at_ns, int64_t node_id, const char *kind,
                              int64_t term, const char *detail, const struct hist_node_fields *f);
/* checker "linearizability" | "watch" | "raft_safety" | "converge" | "expect" | ...;
 * verdict "pass" | "fail" | "unknown" | "error"; elapsed_ms wall time (not digested). */
int hist_check_add(struct hist_db *db, const char *checker, const char *verdict, int64_t elapsed_ms,
                   const char *detail);

/* A client's own figures at the end of the run (what the history's ops cannot tell: its
 * balancer's connections, endpoints, retries, failovers), stats the JSON object of
 * kvc_stats_json, attempts the JSON array of its last attempts (kvc_attempts_json); one
 * row per client and run. */
int hist_client_add(struct hist_db *db, int64_t client_id, const char *balancer, const char *stats,
                    const char *attempts);

/* ---- reading ----------------------------------------------------------------------- */

/* Text fields are owned by the row and freed by hist_run_row_free. */
struct hist_run_row {
    int64_t run_id;
    char *scenario;
    uint64_t seed;
    char *options; /* may be NULL */
    char *started_at;
    int64_t sim_end_ns; /* HIST_NULL while unfinished */
    int64_t wall_ms;    /* HIST_NULL while unfinished */
    char *digest;       /* may be NULL */
    char *verdict;      /* "running" while unfinished */
    char *reason;       /* why 'error'/'unknown'; NULL when none or an older database */
};
void hist_run_row_free(struct hist_run_row *r);

/* All run_ids in ascending order; *ids_out is fl_malloc'ed (caller frees), NULL if none. */
int hist_runs_list(struct hist_db *db, int64_t **ids_out, size_t *count_out);
/* The largest run_id, 0 when the database has none. */
int hist_run_latest(struct hist_db *db, int64_t *run_id_out);
/* FL_ENOENT if absent. */
int hist_run_get(struct hist_db *db, int64_t run_id, struct hist_run_row *out);

struct hist_op_counts {
    int64_t total, ok, fail, unknown;
};
int hist_ops_count(struct hist_db *db, int64_t run_id, struct hist_op_counts *out);

/*
 * Iterators: fn is called once per row in a fixed order; pointers in the row are valid
 * only during the call. A non-zero return from fn stops the iteration and is returned.
 *   ops           ORDER BY op_id
 *   watches       ORDER BY watch_id
 *   watch_events  ORDER BY watch_id, seq
 *   faults        ORDER BY at_ns, seq
 *   node_events   ORDER BY at_ns, seq
 *   checks        ORDER BY seq
 */
struct hist_fault {
    int64_t at_ns, seq;
    const char *kind, *target, *detail;
};
struct hist_node_event {
    int64_t at_ns, seq, node_id, term;
    const char *kind, *detail;
    struct hist_node_fields f; /* all NULL in a database older than the columns */
};
struct hist_check {
    int64_t seq, elapsed_ms;
    const char *checker, *verdict, *detail;
};
int hist_ops_each(struct hist_db *db, int64_t run_id,
                  int (*fn)(void *arg, const struct hist_op *op), void *arg);
int hist_watches_each(struct hist_db *db, int64_t run_id,
                      int (*fn)(void *arg, const struct hist_watch *w), void *arg);
int hist_watch_events_each(struct hist_db *db, int64_t run_id,
                           int (*fn)(void *arg, const struct hist_watch_event *ev), void *arg);
int hist_faults_each(struct hist_db *db, int64_t run_id,
                     int (*fn)(void *arg, const struct hist_fault *f), void *arg);
int hist_node_events_each(struct hist_db *db, int64_t run_id,
                          int (*fn)(void *arg, const struct hist_node_event *e), void *arg);
int hist_checks_each(struct hist_db *db, int64_t run_id,
                     int (*fn)(void *arg, const struct hist_check *c), void *arg);
/* clients ORDER BY client_id; a database older than the table has no rows. */
struct hist_client {
    int64_t client_id;
    const char *balancer, *stats, *attempts; /* stats/attempts JSON text, may be NULL */
};
int hist_clients_each(struct hist_db *db, int64_t run_id,
                      int (*fn)(void *arg, const struct hist_client *c), void *arg);

/* The seed in JSON: a number up to INT64_MAX, above it the decimal string (jansson's
 * integers are signed); hist_seed_from_json reads either back. New reference. */
json_t *hist_seed_json(uint64_t seed);
bool hist_seed_from_json(const json_t *j, uint64_t *out);

/* The underlying connection, for other files of this module (the loaders) that need a
 * query the reader above lacks; they keep every ORDER BY rule. Borrowed. */
struct sqlite3 *hist_sqlite(struct hist_db *db);

/* ---- bytes in JSON ------------------------------------------------------------------ */

/*
 * The convention for keys and values inside request/response JSON: a JSON string when
 * the bytes are valid UTF-8 (NUL bytes included, as \u0000), else {"hex":"..."} with
 * lowercase hex digits; NULL pointer gives JSON null. Returns a new reference.
 */
json_t *hist_json_bytes(const void *p, size_t n);
/* The inverse: string or {"hex":...} into out (appended after out->len is reset);
 * *is_null set for JSON null. FL_EINVAL for anything else. */
int hist_json_bytes_get(const json_t *j, struct fl_buf *out, bool *is_null);

/*
 * JSON text written straight into a buffer, for the recorder's per-operation rows
 * (building jansson values and dumping them costs more than the rest of recording).
 * Each call appends exactly the bytes that json_dumps(v, JSON_COMPACT |
 * JSON_ENSURE_ASCII) gives for the corresponding jansson value v, so a row's text,
 * and the digest, do not depend on which of the two wrote it
 * (tests/unit/history/test_json_text.c compares them on random input).
 *   hist_jt_bytes  v = hist_json_bytes(p, n)
 *   hist_jt_str    v = json_string(s): s must be valid UTF-8 (names, method texts)
 *   hist_jt_int    v = json_integer(x)
 *   hist_jt_key    the member name of an object: ',' unless first, then "name":
 *                  (name plain ASCII: no quote, backslash or control character)
 * The caller writes the braces and brackets. hist_jt_bytes returns true when the text
 * it wrote holds a \u0000 escape (a NUL byte inside a string), which jansson's
 * parser refuses by default.
 */
bool hist_jt_bytes(struct fl_buf *out, const void *p, size_t n);
void hist_jt_str(struct fl_buf *out, const char *s);
void hist_jt_int(struct fl_buf *out, int64_t x);
/* hist_jt_int's text written at dst (room for HIST_JT_INT_MAX bytes): its length. For a
 * caller that reserved the space already (the recorder's fixed-size kv fields). */
#define HIST_JT_INT_MAX 24
size_t hist_jt_int_put(char *dst, int64_t x);
void hist_jt_key(struct fl_buf *out, bool first, const char *name);

#endif
