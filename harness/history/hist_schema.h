/*
 * hist_schema.h: the history's columns, each written once (DESIGN §3.6). Every table
 * is an X-macro list of its columns in schema order, run_id (always the first column)
 * left out; each entry is
 *
 *     X(column, field, kind, role, since, load)
 *
 *   column  the SQL name;
 *   field   the member of the table's row struct (history.h) that carries it;
 *   kind    I64 (int64_t, HIST_NULL is NULL), ID (an I64 declared NOT NULL), TEXT (const char *,
 * NULL is NULL), BLOB (const void *field + size_t field##_len, NULL is NULL) or STATUS (enum
 *           hist_status, stored as its name);
 *   role    DIG: inserted and folded into the run digest, in list order;
 *           KEEP: inserted, never folded (wall time, or a function of folded columns);
 *           LATE: not inserted (an UPDATE writes it later), never folded;
 *   since   0: in the first schema; N >= 1: added while the schema version was N, so
 *           an older database may lack it: opening for writing adds it, reading takes
 *           it as NULL;
 *   load    what the database loader (load_db.c) accepts in it: HIST_LD_* flags (ops,
 *           watches and watch_events; the other tables are not loaded for checking).
 *
 * From these lists come, with nothing else to keep in step: the CREATE TABLE text and
 * the ALTER TABLE of missing columns (history_db.c), the INSERT statements, their
 * binding and the digest (history_rec.c), the SELECTs and row readers
 * (history_read.c) and the ops loader's column checks (load_db.c). Adding a column is
 * one line here plus the struct member it names. A column is never renamed or
 * removed, and the digest fold of DIG columns is part of every recorded digest:
 * adding a DIG column changes digests (say so), a KEEP column does not.
 */
#ifndef FL_HIST_SCHEMA_H
#define FL_HIST_SCHEMA_H

/* What the database loader accepts in a column. An integer column without HIST_LD_NULL
 * must not be NULL; TEXT/BLOB columns always accept NULL. */
#define HIST_LD_NULL   1u  /* NULL allowed (read as HIST_NULL) */
#define HIST_LD_NONNEG 2u  /* >= 0 */
#define HIST_LD_BOOL   4u  /* 0 or 1 */
#define HIST_LD_I32    8u  /* 0..INT32_MAX */
#define HIST_LD_SKIP   16u /* not read by the loader */

#define HIST_LD_OPT (HIST_LD_NULL | HIST_LD_NONNEG)

/* clang-format off */
#define HIST_RUNS_COLUMNS(X)                                   \
    X(scenario,   scenario,   TEXT, LATE, 0, 0)                \
    X(seed,       seed,       I64,  LATE, 0, 0)                \
    X(options,    options,    TEXT, LATE, 0, 0)                \
    X(started_at, started_at, TEXT, LATE, 0, 0)                \
    X(sim_end_ns, sim_end_ns, I64,  LATE, 0, 0)                \
    X(wall_ms,    wall_ms,    I64,  LATE, 0, 0)                \
    X(digest,     digest,     TEXT, LATE, 0, 0)                \
    X(verdict,    verdict,    TEXT, LATE, 0, 0)                \
    X(reason,     reason,     TEXT, LATE, 1, 0)                \
    X(seed_text,  seed_text,  TEXT, LATE, 1, 0)

#define HIST_OPS_COLUMNS(X)                                                \
    X(op_id,      op_id,      ID,     DIG, 0, 0)                           \
    X(client_id,  client_id,  I64,    DIG, 0, HIST_LD_NULL | HIST_LD_I32)  \
    X(node_id,    node_id,    I64,    DIG, 0, HIST_LD_SKIP)                \
    X(kind,       kind,       TEXT,   DIG, 0, 0)                           \
    X(key,        key,        BLOB,   DIG, 0, 0)                           \
    X(range_end,  range_end,  BLOB,   DIG, 0, 0)                           \
    X(request,    request,    TEXT,   DIG, 0, 0)                           \
    X(call_ns,    call_ns,    I64,    DIG, 0, HIST_LD_NONNEG)              \
    X(return_ns,  return_ns,  I64,    DIG, 0, HIST_LD_OPT)                 \
    X(status,     status,     STATUS, DIG, 0, 0)                           \
    X(error,      error,      TEXT,   DIG, 0, 0)                           \
    X(revision,   revision,   I64,    DIG, 0, HIST_LD_OPT)                 \
    X(response,   response,   TEXT,   DIG, 0, 0)                           \
    X(value,      value,      BLOB,   DIG, 1, 0)                           \
    X(expect,     expect,     BLOB,   DIG, 1, 0)                           \
    X(mod_rev,    mod_rev,    I64,    DIG, 1, HIST_LD_OPT)                 \
    X(create_rev, create_rev, I64,    DIG, 1, HIST_LD_OPT)                 \
    X(version,    version,    I64,    DIG, 1, HIST_LD_OPT)                 \
    X(succeeded,  succeeded,  I64,    DIG, 1, HIST_LD_NULL | HIST_LD_BOOL) \
    X(deleted,    deleted,    I64,    DIG, 1, HIST_LD_OPT)

#define HIST_WATCHES_COLUMNS(X)                                                        \
    X(watch_id,        watch_id,        ID,   DIG,  0, 0)                              \
    X(client_id,       client_id,       I64,  DIG,  0, HIST_LD_NULL | HIST_LD_I32)     \
    X(key,             key,             BLOB, DIG,  0, 0)                              \
    X(range_end,       range_end,       BLOB, DIG,  0, 0)                              \
    X(start_rev,       start_rev,       I64,  DIG,  0, HIST_LD_OPT)                    \
    X(opened_ns,       opened_ns,       I64,  DIG,  0, HIST_LD_OPT)                    \
    X(closed_ns,       closed_ns,       I64,  LATE, 0, HIST_LD_OPT)                    \
    X(close_reason,    close_reason,    TEXT, LATE, 0, HIST_LD_SKIP)                   \
    X(node_id,         node_id,         I64,  DIG,  1, HIST_LD_SKIP)                   \
    X(prev_kv,         prev_kv,         I64,  DIG,  1, HIST_LD_NULL | HIST_LD_BOOL)    \
    X(progress_notify, progress_notify, I64,  DIG,  1, HIST_LD_NULL | HIST_LD_BOOL)    \
    X(filters,         filters,         TEXT, DIG,  1, 0)                              \
    X(request,         request,         TEXT, DIG,  1, HIST_LD_SKIP)

#define HIST_WATCH_EVENTS_COLUMNS(X)                                               \
    X(watch_id,     watch_id,     ID,   DIG, 0, 0)                                 \
    X(seq,          seq,          I64,  DIG, 0, HIST_LD_NONNEG)                    \
    X(response_seq, response_seq, I64,  DIG, 0, HIST_LD_OPT)                       \
    X(kind,         kind,         TEXT, DIG, 0, 0)                                 \
    X(key,          key,          BLOB, DIG, 0, 0)                                 \
    X(value,        value,        BLOB, DIG, 0, 0)                                 \
    X(create_rev,   create_rev,   I64,  DIG, 0, HIST_LD_OPT)                       \
    X(mod_rev,      mod_rev,      I64,  DIG, 0, HIST_LD_OPT)                       \
    X(version,      version,      I64,  DIG, 0, HIST_LD_OPT)                       \
    X(prev_value,   prev_value,   BLOB, DIG, 0, 0)                                 \
    X(delivered_ns, delivered_ns, I64,  DIG, 0, HIST_LD_OPT)                       \
    X(revision,     revision,     I64,  DIG, 1, HIST_LD_OPT)                       \
    X(prev_kv,      prev_kv,      I64,  DIG, 1, HIST_LD_NULL | HIST_LD_BOOL)       \
    X(prev_mod_rev, prev_mod_rev, I64,  DIG, 1, HIST_LD_SKIP)

#define HIST_FAULTS_COLUMNS(X)                  \
    X(at_ns,  at_ns,  I64,  DIG, 0, 0)          \
    X(kind,   kind,   TEXT, DIG, 0, 0)          \
    X(target, target, TEXT, DIG, 0, 0)          \
    X(detail, detail, TEXT, DIG, 0, 0)          \
    X(seq,    seq,    I64,  DIG, 0, 0)

/* The typed columns are KEEP: each is a function of the event whose kind, term and
 * detail are folded (DESIGN §2), so adding them left every digest as it was. */
#define HIST_NODE_EVENTS_COLUMNS(X)                       \
    X(at_ns,      at_ns,        I64,  DIG,  0, 0)         \
    X(node_id,    node_id,      I64,  DIG,  0, 0)         \
    X(kind,       kind,         TEXT, DIG,  0, 0)         \
    X(term,       term,         I64,  DIG,  0, 0)         \
    X(detail,     detail,       TEXT, DIG,  0, 0)         \
    X(seq,        seq,          I64,  DIG,  0, 0)         \
    X(peer,       f.peer,       I64,  KEEP, 1, 0)         \
    X(log_index,  f.log_index,  I64,  KEEP, 1, 0)         \
    X(from_state, f.from_state, TEXT, KEEP, 1, 0)         \
    X(to_state,   f.to_state,   TEXT, KEEP, 1, 0)         \
    X(reason,     f.reason,     TEXT, KEEP, 1, 0)         \
    X(pre,        f.pre,        I64,  KEEP, 1, 0)

/* elapsed_ms is wall time: never folded. */
#define HIST_CHECKS_COLUMNS(X)                            \
    X(checker,    checker,    TEXT, DIG,  0, 0)           \
    X(verdict,    verdict,    TEXT, DIG,  0, 0)           \
    X(elapsed_ms, elapsed_ms, I64,  KEEP, 0, 0)           \
    X(detail,     detail,     TEXT, DIG,  0, 0)           \
    X(seq,        seq,        I64,  DIG,  0, 0)

#define HIST_CLIENTS_COLUMNS(X)                       \
    X(client_id, client_id, ID,   DIG, 0, 0)          \
    X(balancer,  balancer,  TEXT, DIG, 0, 0)          \
    X(stats,     stats,     TEXT, DIG, 0, 0)          \
    X(attempts,  attempts,  TEXT, DIG, 0, 0)

/* Every table: X(name, COLUMNS-list, the run_id column's SQL, after the columns). */
#define HIST_TABLES(X)                                                                  \
    X(runs, HIST_RUNS_COLUMNS, "run_id INTEGER PRIMARY KEY", ");")                      \
    X(ops, HIST_OPS_COLUMNS, "run_id INTEGER NOT NULL", ");")                           \
    X(watches, HIST_WATCHES_COLUMNS, "run_id INTEGER NOT NULL",                         \
      ");CREATE UNIQUE INDEX IF NOT EXISTS watches_by_run ON watches(run_id, watch_id);") \
    X(watch_events, HIST_WATCH_EVENTS_COLUMNS, "run_id INTEGER NOT NULL", ");")         \
    X(faults, HIST_FAULTS_COLUMNS, "run_id INTEGER NOT NULL",                           \
      ");CREATE INDEX IF NOT EXISTS faults_by_run ON faults(run_id, at_ns, seq);")      \
    X(node_events, HIST_NODE_EVENTS_COLUMNS, "run_id INTEGER NOT NULL",                 \
      ");CREATE INDEX IF NOT EXISTS node_events_by_run ON node_events(run_id, at_ns, seq);") \
    X(checks, HIST_CHECKS_COLUMNS, "run_id INTEGER NOT NULL",                           \
      ");CREATE INDEX IF NOT EXISTS checks_by_run ON checks(run_id, seq);")             \
    X(clients, HIST_CLIENTS_COLUMNS, "run_id INTEGER NOT NULL",                         \
      ", PRIMARY KEY(run_id, client_id)) WITHOUT ROWID;")

/* The keys of ops and watch_events, for a new database only. Both tables are rowid
 * tables with a separate unique index (schema 1 had them WITHOUT ROWID, keyed by these
 * columns): a history row is appended at the end of its table, where SQLite's B-tree
 * takes a row of any size by starting a new page (balance_quick), while a WITHOUT ROWID
 * B-tree redistributes its last pages, range responses of 10 KiB included, every few
 * rows (measured in the e2e bench: 30,400 -> 24,800 instructions per hist_op_add,
 * 64 KiB pages both). A database that
 * already has the tables keeps them as they are: both layouts have the same columns
 * and the same uniqueness, and every query reads them alike. */
#define HIST_NEW_DB_INDEXES_SQL                                                         \
    "CREATE UNIQUE INDEX IF NOT EXISTS ops_by_run ON ops(run_id, op_id);"               \
    "CREATE UNIQUE INDEX IF NOT EXISTS watch_events_by_run"                             \
    " ON watch_events(run_id, watch_id, seq);"
/* clang-format on */

/* ---- SQL text, at compile time ---------------------------------------------------- */

#define HIST_SQLTYPE_I64    "INTEGER"
#define HIST_SQLTYPE_ID     "INTEGER NOT NULL"
#define HIST_SQLTYPE_TEXT   "TEXT"
#define HIST_SQLTYPE_BLOB   "BLOB"
#define HIST_SQLTYPE_STATUS "TEXT"

/* ", column TYPE" of every column: the body of CREATE TABLE. */
#define HIST_DDL_COL(col, field, kind, role, since, load) ", " #col " " HIST_SQLTYPE_##kind
#define HIST_CREATE_SQL(table, list, first, tail)                                                  \
    "CREATE TABLE IF NOT EXISTS " #table "(" first list(HIST_DDL_COL) tail

/* ", column" and ", ?" of each inserted column: INSERT INTO t(run_id, ...) VALUES(?1, ...);
 * an unnumbered ? takes the number after the largest one before it. */
#define HIST_INS_NAME_DIG(col)  ", " #col
#define HIST_INS_NAME_KEEP(col) ", " #col
#define HIST_INS_NAME_LATE(col)
#define HIST_INS_Q_DIG  ", ?"
#define HIST_INS_Q_KEEP ", ?"
#define HIST_INS_Q_LATE
#define HIST_INS_NAME(col, field, kind, role, since, load) HIST_INS_NAME_##role(col)
#define HIST_INS_Q(col, field, kind, role, since, load)    HIST_INS_Q_##role
#define HIST_INSERT_SQL(table, list)                                                               \
    "INSERT INTO " #table "(run_id" list(HIST_INS_NAME) ") VALUES(?1" list(HIST_INS_Q) ")"

/* ---- the same lists at run time ---------------------------------------------------- */

struct hist_col {
    const char *name;
    const char *sql_type;
    int since;
};

#define HIST_COL_DESC(col, field, kind, role, since, load) {#col, HIST_SQLTYPE_##kind, since},

struct hist_table {
    const char *name;
    const struct hist_col *cols;
    int n_cols;
};

/* Indexes into hist_tables[]. */
enum hist_table_id {
#define HIST_TABLE_ID(table, list, first, tail) HIST_T_##table,
    HIST_TABLES(HIST_TABLE_ID)
#undef HIST_TABLE_ID
        HIST_T_COUNT
};

extern const struct hist_table hist_tables[HIST_T_COUNT];

#endif
