/*
 * history_db.c: the history database handle: opening (with clear errors for a bad
 * path, a read-only file or something that is not a faultline history), the schema
 * of DESIGN §3.6, transaction batching, the run lifecycle (runs row committed as
 * 'error' at once, finished by hist_run_end) and the SIGINT flag the run loop polls.
 *
 * It reads the wall clock once per run, for runs.started_at, and a monotonic clock to
 * bound how long a batch stays open; neither is ever part of a digest, a row or a
 * decision of the run.
 */
#include "harness/history/history_int.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* 'FLTH': marks a database as a faultline history. */

/* Every table's CREATE TABLE and indexes, from hist_schema.h. */
static const char schema_sql[] = HIST_TABLES(HIST_CREATE_SQL);

#define HIST_COLS_ARRAY(table, list, first, tail)                                                  \
    static const struct hist_col table##_cols[] = {list(HIST_COL_DESC)};
HIST_TABLES(HIST_COLS_ARRAY)
#undef HIST_COLS_ARRAY

#define HIST_TABLE_DESC(table, list, first, tail)                                                  \
    [HIST_T_##table] = {#table, table##_cols, (int)FL_ARRAY_LEN(table##_cols)},
const struct hist_table hist_tables[HIST_T_COUNT] = {HIST_TABLES(HIST_TABLE_DESC)};
#undef HIST_TABLE_DESC

static const char *const stmt_sql[HIST_ST_COUNT] = {
    /* IMMEDIATE: take the write lock up front, through the busy handler, so that
     * several processes sharing a database (a sweep) wait for each other instead
     * of failing with a stale snapshot. */
    [HIST_ST_BEGIN] = "BEGIN IMMEDIATE",
    [HIST_ST_COMMIT] = "COMMIT",
    [HIST_ST_RUN_INSERT] = "INSERT INTO runs(scenario, seed, options, started_at, verdict,"
                           " seed_text) VALUES(?1, ?2, ?3, ?4, 'running', ?5)",
    [HIST_ST_RUN_END] = "UPDATE runs SET sim_end_ns = ?2, wall_ms = ?3, digest = ?4,"
                        " verdict = ?5, reason = ?6 WHERE run_id = ?1",
    [HIST_ST_OP] = HIST_INSERT_SQL(ops, HIST_OPS_COLUMNS),
    [HIST_ST_WATCH] = HIST_INSERT_SQL(watches, HIST_WATCHES_COLUMNS),
    [HIST_ST_WATCH_CLOSE] = "UPDATE watches SET closed_ns = ?3, close_reason = ?4"
                            " WHERE run_id = ?1 AND watch_id = ?2",
    [HIST_ST_WATCH_EVENT] = HIST_INSERT_SQL(watch_events, HIST_WATCH_EVENTS_COLUMNS),
    [HIST_ST_FAULT] = HIST_INSERT_SQL(faults, HIST_FAULTS_COLUMNS),
    [HIST_ST_NODE_EVENT] = HIST_INSERT_SQL(node_events, HIST_NODE_EVENTS_COLUMNS),
    [HIST_ST_CHECK] = HIST_INSERT_SQL(checks, HIST_CHECKS_COLUMNS),
    [HIST_ST_CLIENT] = HIST_INSERT_SQL(clients, HIST_CLIENTS_COLUMNS),
};

/* ---- errors ------------------------------------------------------------------------ */

static void set_msg(struct hist_db *db, const char *fmt, va_list ap)
{
    int n = snprintf(db->errmsg, sizeof db->errmsg, "history database '%s': ", db->path);
    if (n < 0 || (size_t)n >= sizeof db->errmsg)
        return;
    vsnprintf(db->errmsg + n, sizeof db->errmsg - (size_t)n, fmt, ap);
}

int hist__fail(struct hist_db *db, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set_msg(db, fmt, ap);
    va_end(ap);
    return code;
}

int hist__fail_sticky(struct hist_db *db, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set_msg(db, fmt, ap);
    va_end(ap);
    if (!db->err)
        db->err = code;
    return code;
}

int hist__code(int rc)
{
    switch (rc & 0xff) {
    case SQLITE_OK:
    case SQLITE_DONE:
    case SQLITE_ROW:
        return FL_OK;
    case SQLITE_NOMEM:
        return FL_ENOMEM;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        return FL_EBUSY;
    case SQLITE_CONSTRAINT:
        return FL_EEXIST;
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
        return FL_ECORRUPT;
    case SQLITE_FULL:
        return FL_EFULL;
    case SQLITE_MISUSE:
    case SQLITE_RANGE:
    case SQLITE_ERROR:
        return FL_EINVAL;
    default:
        return FL_EIO;
    }
}

const char *hist_errmsg(const struct hist_db *db)
{
    return db->errmsg;
}

int hist_error(const struct hist_db *db)
{
    return db->err;
}

int hist_remove(const char *path)
{
    static const char *const sides[] = {"", "-wal", "-shm", "-journal"};
    struct fl_buf b;
    fl_buf_init(&b);
    int rc = FL_OK;
    for (size_t i = 0; i < FL_ARRAY_LEN(sides); i++) {
        fl_buf_reset(&b);
        fl_buf_printf(&b, "%s%s", path, sides[i]);
        if (unlink(fl_buf_cstr(&b)) != 0 && errno != ENOENT)
            rc = FL_EIO;
    }
    fl_buf_close(&b);
    return rc;
}

const char *hist_path(const struct hist_db *db)
{
    return db->path;
}

struct sqlite3 *hist_sqlite(struct hist_db *db)
{
    return db->db;
}

/* ---- opening ----------------------------------------------------------------------- */

static int exec(struct hist_db *db, const char *sql)
{
    char *msg = NULL;
    int rc = sqlite3_exec(db->db, sql, NULL, NULL, &msg);
    if (rc != SQLITE_OK) {
        int code = hist__code(rc);
        if (code == FL_ECORRUPT) {
            char why[384];
            code = hist__corrupt_why(db->path, msg ? msg : sqlite3_errstr(rc), why, sizeof why);
            hist__fail(db, code, "%s", why);
        } else
            hist__fail(db, code, "%s", msg ? msg : sqlite3_errmsg(db->db));
        sqlite3_free(msg);
        return code;
    }
    return FL_OK;
}

static int pragma_int(struct hist_db *db, const char *sql, int64_t *out)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db->db, sql, -1, &st, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        *out = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
        return FL_OK;
    }
    int code = hist__code(rc) ? hist__code(rc) : FL_EIO;
    char why[384];
    if (code == FL_ECORRUPT) {
        code = hist__corrupt_why(db->path, sqlite3_errmsg(db->db), why, sizeof why);
        hist__fail(db, code, "%s", why);
    } else
        hist__fail(db, code, "%s", sqlite3_errmsg(db->db));
    sqlite3_finalize(st);
    return code;
}

/* Refuses a database that is not ours: another application's, a newer schema, or a
 * non-empty SQLite file without our application_id. */
static int check_identity(struct hist_db *db, bool *fresh)
{
    int64_t app = 0, ver = 0, tables = 0;
    int rc = pragma_int(db, "PRAGMA application_id", &app);
    if (!rc)
        rc = pragma_int(db, "PRAGMA user_version", &ver);
    if (!rc)
        rc = pragma_int(db, "SELECT count(*) FROM sqlite_master", &tables);
    if (rc)
        return rc;
    *fresh = app == 0 && tables == 0;
    char why[128];
    if ((rc = hist_identity_check(*fresh ? HIST_APPLICATION_ID : app, ver, why, sizeof why)))
        return hist__fail(db, rc, "%s", why);
    return FL_OK;
}

int hist_identity_check(int64_t application_id, int64_t user_version, char *why, size_t why_len)
{
    if (application_id != HIST_APPLICATION_ID) {
        snprintf(why, why_len, "not a faultline history (application_id %lld)",
                 (long long)application_id);
        return FL_EINVAL;
    }
    if (user_version > HIST_SCHEMA_VERSION) {
        snprintf(why, why_len, "schema version %lld is newer than this faultline's %d",
                 (long long)user_version, HIST_SCHEMA_VERSION);
        return FL_EINVAL;
    }
    return FL_OK;
}

/* Columns added after the first schema (since >= 1 in hist_schema.h), for a database
 * written by an older faultline (DESIGN §3.6: columns may be added, none renamed). */
static int add_columns(struct hist_db *db)
{
    for (int t = 0; t < HIST_T_COUNT; t++) {
        const struct hist_table *tb = &hist_tables[t];
        for (int i = 0; i < tb->n_cols; i++) {
            const struct hist_col *c = &tb->cols[i];
            if (c->since == 0 || hist__has_column(db->db, tb->name, c->name))
                continue;
            char sql[128];
            snprintf(sql, sizeof sql, "ALTER TABLE %s ADD COLUMN %s %s", tb->name, c->name,
                     c->sql_type);
            int rc = exec(db, sql);
            if (rc)
                return rc;
        }
    }
    return FL_OK;
}

static int create_schema(struct hist_db *db)
{
    int rc = exec(db, "BEGIN IMMEDIATE");
    if (rc)
        return rc;
    bool fresh = false;
    rc = check_identity(db, &fresh);
    if (!rc)
        rc = exec(db, schema_sql);
    if (!rc && fresh)
        rc = exec(db, HIST_NEW_DB_INDEXES_SQL);
    if (!rc)
        rc = add_columns(db);
    if (!rc) {
        char sql[128];
        snprintf(sql, sizeof sql, "PRAGMA application_id = %d; PRAGMA user_version = %d",
                 HIST_APPLICATION_ID, HIST_SCHEMA_VERSION);
        rc = exec(db, sql);
    }
    if (!rc)
        return exec(db, "COMMIT");
    sqlite3_exec(db->db, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

/* A damaged database is refused before anything is written into it. A merge target
 * (a sweep's) is created fresh. */
static int integrity(struct hist_db *db)
{
    if (db->merge_target)
        return FL_OK;
    char why[384];
    int rc = hist__quick_check(db->db, db->path, why, sizeof why);
    return rc ? hist__fail(db, rc, "%s", why) : FL_OK;
}

/* exec, waiting while another process holds a lock that SQLite does not wait for by
 * itself: switching a new file to WAL while another faultline opens it too (two runs
 * of a test, or of a user, on one new database) gets SQLITE_BUSY at once, without the
 * busy handler. Waits up to the busy timeout, 60 s, in 10 ms steps. */
static int exec_when_free(struct hist_db *db, const char *sql)
{
    for (int tries = 0; tries < 6000; tries++) {
        int rc = sqlite3_exec(db->db, sql, NULL, NULL, NULL);
        if (rc != SQLITE_BUSY && rc != SQLITE_LOCKED)
            break;
        sqlite3_sleep(10);
    }
    return exec(db, sql); /* once more, reporting what it says */
}

static int setup_write(struct hist_db *db)
{
    if (sqlite3_db_readonly(db->db, "main") == 1)
        return hist__fail(db, FL_EIO, "file is read-only");
    int rc = exec(db, "PRAGMA busy_timeout = 60000");
    /* 4 KiB pages (only takes effect on a new database): with rows appended to rowid
     * tables, a commit writes (and checksums into the WAL) the pages it filled and the
     * last partly filled one, so small pages measured fastest for recording (hist_schema.h,
     * HIST_NEW_DB_INDEXES_SQL), and a merge target rewrites only what a copied run touched. */
    if (!rc)
        rc = exec(db, "PRAGMA page_size = 4096");
    if (!rc)
        rc = integrity(db);
    if (!rc)
        rc = exec_when_free(db, "PRAGMA journal_mode = WAL");
    if (!rc)
        rc = exec(db, "PRAGMA synchronous = NORMAL");
    if (!rc)
        rc = create_schema(db);
    for (int i = 0; !rc && i < HIST_ST_COUNT; i++) {
        if (sqlite3_prepare_v3(db->db, stmt_sql[i], -1, SQLITE_PREPARE_PERSISTENT, &db->st[i],
                               NULL) != SQLITE_OK)
            rc = hist__fail(db, FL_EINTERNAL, "preparing statement %d: %s", i,
                            sqlite3_errmsg(db->db));
    }
    return rc;
}

static int setup_read(struct hist_db *db)
{
    bool fresh = false;
    int rc = exec(db, "PRAGMA busy_timeout = 60000");
    if (!rc)
        rc = check_identity(db, &fresh);
    if (!rc && !fresh)
        rc = integrity(db);
    if (!rc && fresh)
        rc = hist__fail(db, FL_EINVAL, "empty database, no faultline history in it");
    return rc;
}

/* Explains a failure to open before SQLite has a say: a missing directory or file, a
 * directory where a file should be. Returns FL_OK when nothing looks wrong. */
static int precheck_path(struct hist_db *db, int flags)
{
    struct stat sb;
    if (stat(db->path, &sb) == 0) {
        if (S_ISDIR(sb.st_mode))
            return hist__fail(db, FL_EIO, "is a directory");
        if (!(flags & HIST_OPEN_READONLY) && access(db->path, W_OK) != 0)
            return hist__fail(db, FL_EIO, "file is read-only (%s)", strerror(errno));
        return FL_OK;
    }
    if (flags & HIST_OPEN_READONLY)
        return hist__fail(db, FL_ENOENT, "no such file");
    /* A new file: its folder must exist and be writable. */
    char *dir = fl_strdup(db->path);
    char *slash = strrchr(dir, '/');
    int rc = FL_OK;
    if (slash) {
        *slash = 0;
        const char *d = slash == dir ? "/" : dir;
        if (stat(d, &sb) != 0 || !S_ISDIR(sb.st_mode))
            rc = hist__fail(db, FL_EIO, "folder '%s' does not exist", d);
        else if (access(d, W_OK) != 0)
            rc = hist__fail(db, FL_EIO, "folder '%s' is not writable", d);
    } else if (access(".", W_OK) != 0) {
        rc = hist__fail(db, FL_EIO, "the current folder is not writable");
    }
    free(dir);
    return rc;
}

/* SQLite's global memory statistics take a process-wide mutex on every allocation;
 * nothing here reads them. faultline is single-threaded (a sweep forks its workers),
 * so SQLite needs no mutexes at all: its serialized mode took and released the
 * connection's and the page cache's on every call, about 3,000 instructions per
 * recorded op. Only possible before SQLite initializes; harmless after (SQLite then
 * keeps its defaults). */
static void configure_once(void)
{
    static bool done;
    if (!done) {
        sqlite3_config(SQLITE_CONFIG_SINGLETHREAD);
        sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
    }
    done = true;
}

int hist_open(const char *path, int flags, struct hist_db **out, char *err, size_t err_size)
{
    FL_ASSERT(path != NULL && out != NULL);
    configure_once();
    *out = NULL;
    struct hist_db *db = fl_calloc(1, sizeof *db);
    db->path = fl_strdup(path);
    db->readonly = (flags & HIST_OPEN_READONLY) != 0;
    db->merge_target = (flags & HIST_OPEN_MERGE_TARGET) != 0;
    db->batch_rows = HIST_BATCH_ROWS_DEFAULT;
    fl_buf_init(&db->dig);
    int rc = precheck_path(db, flags);
    if (!rc && db->readonly) {
        char why[384];
        rc = hist__open_ro(path, &db->db, why, sizeof why);
        if (rc)
            hist__fail(db, rc, "%s", why);
    } else if (!rc) {
        int src = sqlite3_open_v2(path, &db->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
        if (src != SQLITE_OK)
            rc = hist__fail(db, FL_EIO, "cannot open: %s",
                            db->db ? sqlite3_errmsg(db->db) : sqlite3_errstr(src));
    }
    if (!rc)
        rc = db->readonly ? setup_read(db) : setup_write(db);
    if (rc) {
        if (err && err_size)
            snprintf(err, err_size, "%s", db->errmsg);
        for (int i = 0; i < HIST_ST_COUNT; i++)
            sqlite3_finalize(db->st[i]);
        sqlite3_close(db->db);
        fl_buf_close(&db->dig);
        free(db->path);
        free(db);
        return rc;
    }
    *out = db;
    return FL_OK;
}

int hist_close(struct hist_db *db)
{
    if (!db)
        return FL_OK;
    int rc = hist_flush(db);
    int sticky = db->err;
    for (int i = 0; i < HIST_ST_COUNT; i++)
        sqlite3_finalize(db->st[i]);
    if (sqlite3_close(db->db) != SQLITE_OK && !rc)
        rc = FL_EINTERNAL;
    fl_buf_close(&db->dig);
    free(db->path);
    free(db);
    return sticky ? sticky : rc;
}

/* ---- batching ---------------------------------------------------------------------- */

/* A coarse monotonic clock (a few ns per read); only decides when to commit. */
static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void hist_set_batch_rows(struct hist_db *db, int batch_rows)
{
    FL_ASSERT(batch_rows >= 1);
    db->batch_rows = batch_rows;
}

static int step_done(struct hist_db *db, sqlite3_stmt *st, const char *what)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    if (rc == SQLITE_DONE)
        return FL_OK;
    return hist__fail_sticky(db, hist__code(rc) ? hist__code(rc) : FL_EIO, "%s: %s", what,
                             sqlite3_errmsg(db->db));
}

int hist__tx(struct hist_db *db)
{
    /* SQLite may have rolled a failed transaction back by itself (disk full, I/O
     * error); autocommit mode tells. */
    if (db->in_tx && !sqlite3_get_autocommit(db->db))
        return FL_OK;
    db->in_tx = false;
    db->pending_rows = 0;
    int rc = step_done(db, db->st[HIST_ST_BEGIN], "begin");
    if (!rc) {
        db->in_tx = true;
        db->tx_start_ms = wall_ms();
    }
    return rc;
}

int hist_flush(struct hist_db *db)
{
    if (!db->in_tx || sqlite3_get_autocommit(db->db)) {
        db->in_tx = false;
        db->pending_rows = 0;
        return db->err;
    }
    db->in_tx = false;
    db->pending_rows = 0;
    int rc = step_done(db, db->st[HIST_ST_COMMIT], "commit");
    if (rc)
        sqlite3_exec(db->db, "ROLLBACK", NULL, NULL, NULL);
    return rc ? rc : db->err;
}

int hist__write(struct hist_db *db, sqlite3_stmt *st, const char *what)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    if (rc != SQLITE_DONE) {
        int code = hist__code(rc);
        /* A constraint failure (a repeated id) undoes only that statement; the batch
         * survives, so the error is the caller's alone and not sticky. */
        if (code == FL_EEXIST)
            return hist__fail(db, code, "%s: %s", what, sqlite3_errmsg(db->db));
        return hist__fail_sticky(db, code ? code : FL_EIO, "%s: %s", what, sqlite3_errmsg(db->db));
    }
    /* A batch is also committed once it has been open HIST_BATCH_WALL_MS of wall
     * time, so another process waiting for the write lock (a sweep sharing the
     * database) is never held up for long, and a kill loses little. Commit timing
     * changes nothing in the database's content or in any digest. */
    if (++db->pending_rows >= db->batch_rows || wall_ms() - db->tx_start_ms >= HIST_BATCH_WALL_MS)
        return hist_flush(db);
    return FL_OK;
}

/* ---- run lifecycle ----------------------------------------------------------------- */

static void utc_now(char out[32])
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void run_reset(struct hist_db *db, int64_t run_id, struct fl_digest *digest)
{
    db->run_id = run_id;
    db->digest = digest;
    db->op_id_max = 0;
    db->wev_seq = 0;
    db->fault_seq = db->node_seq = db->check_seq = 0;
    db->reason[0] = '\0';
}

void hist_run_reason(struct hist_db *db, const char *reason)
{
    snprintf(db->reason, sizeof db->reason, "%s", reason ? reason : "");
}

int hist_run_begin(struct hist_db *db, const char *scenario, uint64_t seed,
                   const char *options_json, struct fl_digest *digest, int64_t *run_id_out)
{
    FL_ASSERT(!db->readonly);
    if (db->err)
        return db->err;
    if (db->run_id)
        return hist__fail(db, FL_EBUSY, "run %lld is still current", (long long)db->run_id);
    char started[32];
    utc_now(started);
    int rc = hist__tx(db);
    if (rc)
        return rc;
    sqlite3_stmt *st = db->st[HIST_ST_RUN_INSERT];
    char seed_text[24];
    snprintf(seed_text, sizeof seed_text, "%llu", (unsigned long long)seed);
    hist__bind_text(st, 1, scenario);
    sqlite3_bind_int64(st, 2, (int64_t)seed); /* the 64-bit pattern: see history.h */
    hist__bind_text(st, 3, options_json);
    hist__bind_text(st, 4, started);
    hist__bind_text(st, 5, seed_text);
    rc = step_done(db, st, "runs");
    if (!rc)
        rc = hist_flush(db); /* the 'error' row must survive whatever comes next */
    if (rc)
        return rc;
    run_reset(db, sqlite3_last_insert_rowid(db->db), digest);
    if (run_id_out)
        *run_id_out = db->run_id;
    return FL_OK;
}

static int max_of(struct hist_db *db, const char *sql, int64_t run_id, int64_t *out)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db->db, sql, -1, &st, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, run_id);
        rc = sqlite3_step(st);
    }
    if (rc == SQLITE_ROW) {
        *out = sqlite3_column_int64(st, 0); /* max() of nothing is NULL, read as 0 */
        sqlite3_finalize(st);
        return FL_OK;
    }
    sqlite3_finalize(st);
    return hist__fail(db, FL_EIO, "%s", sqlite3_errmsg(db->db));
}

int hist_run_attach(struct hist_db *db, int64_t run_id, struct fl_digest *digest)
{
    FL_ASSERT(!db->readonly);
    if (db->err)
        return db->err;
    if (db->run_id)
        return hist__fail(db, FL_EBUSY, "run %lld is still current", (long long)db->run_id);
    int64_t found = 0, ops = 0, wev = 0, faults = 0, nodes = 0, checks = 0;
    int rc = max_of(db, "SELECT count(*) FROM runs WHERE run_id = ?1", run_id, &found);
    if (!rc && !found)
        return hist__fail(db, FL_ENOENT, "no run %lld", (long long)run_id);
    if (!rc)
        rc = max_of(db, "SELECT max(op_id) FROM ops WHERE run_id = ?1", run_id, &ops);
    if (!rc)
        rc = max_of(db, "SELECT max(seq) FROM watch_events WHERE run_id = ?1", run_id, &wev);
    if (!rc)
        rc = max_of(db, "SELECT max(seq) FROM faults WHERE run_id = ?1", run_id, &faults);
    if (!rc)
        rc = max_of(db, "SELECT max(seq) FROM node_events WHERE run_id = ?1", run_id, &nodes);
    if (!rc)
        rc = max_of(db, "SELECT max(seq) FROM checks WHERE run_id = ?1", run_id, &checks);
    if (rc)
        return rc;
    run_reset(db, run_id, digest);
    db->op_id_max = ops;
    db->wev_seq = wev;
    db->fault_seq = faults;
    db->node_seq = nodes;
    db->check_seq = checks;
    return FL_OK;
}

static bool verdict_ok(const char *v)
{
    return v && (!strcmp(v, "pass") || !strcmp(v, "fail") || !strcmp(v, "unknown") ||
                 !strcmp(v, "error"));
}

static bool digest_ok(const char *d)
{
    if (!d)
        return true;
    size_t n = 0;
    for (; d[n]; n++)
        if (!((d[n] >= '0' && d[n] <= '9') || (d[n] >= 'a' && d[n] <= 'f')))
            return false;
    return n == 16;
}

/* One UPDATE of the runs row in its own transaction (no rows of the run are pending). */
static int write_end(struct hist_db *db, int64_t sim_end_ns, int64_t wall_ms, const char *digest,
                     const char *verdict, const char *reason)
{
    int rc = hist__tx(db);
    if (!rc) {
        sqlite3_stmt *st = db->st[HIST_ST_RUN_END];
        sqlite3_bind_int64(st, 1, db->run_id);
        hist__bind_i64(st, 2, sim_end_ns);
        hist__bind_i64(st, 3, wall_ms);
        hist__bind_text(st, 4, digest);
        hist__bind_text(st, 5, verdict);
        hist__bind_text(st, 6, reason && reason[0] ? reason : NULL);
        rc = step_done(db, st, "runs");
    }
    int frc = hist_flush(db);
    return rc ? rc : frc;
}

int hist_run_end(struct hist_db *db, int64_t sim_end_ns, int64_t wall_ms, const char *digest,
                 const char *verdict)
{
    FL_ASSERT(db->run_id > 0);
    if (!verdict_ok(verdict))
        return hist__fail(db, FL_EINVAL, "bad verdict '%s'", verdict ? verdict : "(null)");
    if (!digest_ok(digest))
        return hist__fail(db, FL_EINVAL, "bad digest '%s' (want 16 lowercase hex digits)", digest);
    /* Every row of the run first: the verdict is written only over a complete history. */
    int rc = db->err ? db->err : hist_flush(db);
    if (!rc) {
        rc = write_end(db, sim_end_ns, wall_ms, digest, verdict, db->reason);
        run_reset(db, 0, NULL);
        return rc;
    }
    /* A write of the run failed: whatever the caller concluded, the history is
     * incomplete. Try to say so in the row (a full disk may refuse even that, and the
     * row then stays 'running'). */
    char reason[sizeof db->errmsg + 64];
    snprintf(reason, sizeof reason, "a write to the history failed: %s", db->errmsg);
    int sticky = rc;
    sqlite3_exec(db->db, "ROLLBACK", NULL, NULL, NULL);
    db->in_tx = false;
    db->err = FL_OK;
    if (write_end(db, sim_end_ns, wall_ms, digest, "error", reason))
        fl_log(FL_LOG_ERROR, "%s (the run stays 'running')", db->errmsg);
    db->err = sticky;
    snprintf(db->errmsg, sizeof db->errmsg, "%.*s", (int)sizeof db->errmsg - 1, reason);
    run_reset(db, 0, NULL);
    return sticky;
}

int64_t hist_run_current(const struct hist_db *db)
{
    return db->run_id;
}

/* ---- SIGINT ------------------------------------------------------------------------ */

static volatile sig_atomic_t interrupted; /* the first signal's number, or 0 */

static void on_signal(int sig)
{
    if (interrupted) {
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    interrupted = sig;
}

void hist_sigint_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL); /* a closed terminal or ssh session */
}

bool hist_interrupted(void)
{
    return interrupted != 0;
}

const char *hist_interrupt_name(void)
{
    switch (interrupted) {
    case 0:
        return NULL;
    case SIGINT:
        return "SIGINT";
    case SIGTERM:
        return "SIGTERM";
    case SIGHUP:
        return "SIGHUP";
    default:
        return "a signal";
    }
}

void hist_interrupt_clear(void)
{
    interrupted = 0;
}
