/*
 * history_read.c: the reading side of the history, for reports, the run summary,
 * `faultline check` and the loaders: runs, counts, and one iterator per table. Every
 * query that returns several rows has an ORDER BY on a total order (DESIGN §6), so a
 * report or a verdict never depends on how SQLite happens to lay rows out.
 *
 * Reading does not need a current run and works on read-only handles. Pending
 * writes of this handle are visible to its own reads (same connection).
 */
#include "harness/history/history_int.h"

#include <errno.h>

int64_t hist__col_i64(sqlite3_stmt *st, int col)
{
    if (sqlite3_column_type(st, col) == SQLITE_NULL)
        return HIST_NULL;
    return sqlite3_column_int64(st, col);
}

const char *hist__col_text(sqlite3_stmt *st, int col)
{
    if (sqlite3_column_type(st, col) == SQLITE_NULL)
        return NULL;
    return (const char *)sqlite3_column_text(st, col);
}

const void *hist__col_blob(sqlite3_stmt *st, int col, size_t *n)
{
    if (sqlite3_column_type(st, col) == SQLITE_NULL) {
        *n = 0;
        return NULL;
    }
    const void *p = sqlite3_column_blob(st, col);
    *n = (size_t)sqlite3_column_bytes(st, col);
    /* An empty blob comes back as a NULL pointer; it must stay distinct from SQL NULL. */
    return p ? p : (const void *)"";
}

/* Prepares sql and binds run_id to ?1 (when run_id is not HIST_NULL). */
static int prepare(struct hist_db *db, const char *sql, int64_t run_id, sqlite3_stmt **st)
{
    if (sqlite3_prepare_v2(db->db, sql, -1, st, NULL) != SQLITE_OK) {
        int rc = hist__fail(db, FL_EIO, "query failed: %s", sqlite3_errmsg(db->db));
        sqlite3_finalize(*st);
        *st = NULL;
        return rc;
    }
    if (run_id != HIST_NULL)
        sqlite3_bind_int64(*st, 1, run_id);
    return FL_OK;
}

/* Finishes a query loop: SQLITE_DONE is success, anything else an error. */
static int finish(struct hist_db *db, sqlite3_stmt *st, int rc_step, int stopped)
{
    int rc = stopped;
    if (!stopped && rc_step != SQLITE_DONE)
        rc = hist__fail(db, hist__code(rc_step) ? hist__code(rc_step) : FL_EIO, "query failed: %s",
                        sqlite3_errmsg(db->db));
    sqlite3_finalize(st);
    return rc;
}

void hist_run_row_free(struct hist_run_row *r)
{
    free(r->scenario);
    free(r->options);
    free(r->started_at);
    free(r->digest);
    free(r->verdict);
    free(r->reason);
    memset(r, 0, sizeof *r);
}

static char *dup_or_null(const char *s)
{
    return s ? fl_strdup(s) : NULL;
}

int hist_runs_list(struct hist_db *db, int64_t **ids_out, size_t *count_out)
{
    sqlite3_stmt *st = NULL;
    *ids_out = NULL;
    *count_out = 0;
    int rc = prepare(db, "SELECT run_id FROM runs ORDER BY run_id", HIST_NULL, &st);
    if (rc)
        return rc;
    size_t n = 0, cap = 0;
    int64_t *ids = NULL;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        FL_GROW(ids, cap, n + 1, 16);
        ids[n++] = sqlite3_column_int64(st, 0);
    }
    rc = finish(db, st, rc, 0);
    if (rc) {
        free(ids);
        return rc;
    }
    *ids_out = ids;
    *count_out = n;
    return FL_OK;
}

int hist_run_latest(struct hist_db *db, int64_t *run_id_out)
{
    sqlite3_stmt *st = NULL;
    *run_id_out = 0;
    int rc = prepare(db, "SELECT max(run_id) FROM runs", HIST_NULL, &st);
    if (rc)
        return rc;
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        *run_id_out = sqlite3_column_int64(st, 0);
        rc = SQLITE_DONE;
    }
    return finish(db, st, rc, 0);
}

int hist_run_get(struct hist_db *db, int64_t run_id, struct hist_run_row *out)
{
    sqlite3_stmt *st = NULL;
    memset(out, 0, sizeof *out);
    /* reason and seed_text were added later: an older database has neither. */
    char sql[256];
    snprintf(sql, sizeof sql,
             "SELECT run_id, scenario, seed, options, started_at, sim_end_ns, wall_ms,"
             " digest, verdict, %s, %s FROM runs WHERE run_id = ?1",
             hist__has_column(db->db, "runs", "reason") ? "reason" : "NULL",
             hist__has_column(db->db, "runs", "seed_text") ? "seed_text" : "NULL");
    int rc = prepare(db, sql, run_id, &st);
    if (rc)
        return rc;
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        out->run_id = sqlite3_column_int64(st, 0);
        out->scenario = dup_or_null(hist__col_text(st, 1));
        /* The signed pattern reads back as the unsigned seed; seed_text when present
         * and well-formed says the same in decimal (and wins if an outside tool
         * rewrote the INTEGER). */
        out->seed = (uint64_t)sqlite3_column_int64(st, 2);
        const char *stext = hist__col_text(st, 10);
        if (stext && *stext >= '0' && *stext <= '9') {
            char *end;
            errno = 0;
            unsigned long long v = strtoull(stext, &end, 10);
            if (!errno && !*end)
                out->seed = v;
        }
        out->reason = dup_or_null(hist__col_text(st, 9));
        out->options = dup_or_null(hist__col_text(st, 3));
        out->started_at = dup_or_null(hist__col_text(st, 4));
        out->sim_end_ns = hist__col_i64(st, 5);
        out->wall_ms = hist__col_i64(st, 6);
        out->digest = dup_or_null(hist__col_text(st, 7));
        out->verdict = dup_or_null(hist__col_text(st, 8));
        return finish(db, st, SQLITE_DONE, 0);
    }
    if (rc == SQLITE_DONE) {
        sqlite3_finalize(st);
        return hist__fail(db, FL_ENOENT, "no run %lld", (long long)run_id);
    }
    return finish(db, st, rc, 0);
}

int hist_ops_count(struct hist_db *db, int64_t run_id, struct hist_op_counts *out)
{
    sqlite3_stmt *st = NULL;
    memset(out, 0, sizeof *out);
    int rc = prepare(db,
                     "SELECT status, count(*) FROM ops WHERE run_id = ?1 GROUP BY status"
                     " ORDER BY status",
                     run_id, &st);
    if (rc)
        return rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *s = hist__col_text(st, 0);
        int64_t n = sqlite3_column_int64(st, 1);
        enum hist_status status;
        out->total += n;
        if (!hist_status_parse(s, &status))
            continue; /* a foreign status counts in total only */
        if (status == HIST_STATUS_OK)
            out->ok = n;
        else if (status == HIST_STATUS_FAIL)
            out->fail = n;
        else
            out->unknown = n;
    }
    return finish(db, st, rc, 0);
}

/* ---- iterators ---------------------------------------------------------------------- */

int hist_ops_each(struct hist_db *db, int64_t run_id,
                  int (*fn)(void *arg, const struct hist_op *op), void *arg)
{
    sqlite3_stmt *st = NULL;
    int rc = prepare(db,
                     "SELECT op_id, client_id, node_id, kind, key, range_end, request, call_ns,"
                     " return_ns, status, error, revision, response, value, expect, mod_rev,"
                     " create_rev, version, succeeded, deleted FROM ops WHERE run_id = ?1"
                     " ORDER BY op_id",
                     run_id, &st);
    if (rc)
        return rc;
    int stopped = 0;
    while (!stopped && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        struct hist_op op;
        hist_op_init(&op);
        op.op_id = hist__col_i64(st, 0);
        op.client_id = hist__col_i64(st, 1);
        op.node_id = hist__col_i64(st, 2);
        op.kind = hist__col_text(st, 3);
        op.key = hist__col_blob(st, 4, &op.key_len);
        op.range_end = hist__col_blob(st, 5, &op.range_end_len);
        op.request = hist__col_text(st, 6);
        op.call_ns = hist__col_i64(st, 7);
        op.return_ns = hist__col_i64(st, 8);
        if (!hist_status_parse(hist__col_text(st, 9), &op.status))
            op.status = HIST_STATUS_UNKNOWN;
        op.error = hist__col_text(st, 10);
        op.revision = hist__col_i64(st, 11);
        op.response = hist__col_text(st, 12);
        op.value = hist__col_blob(st, 13, &op.value_len);
        op.expect = hist__col_blob(st, 14, &op.expect_len);
        op.mod_rev = hist__col_i64(st, 15);
        op.create_rev = hist__col_i64(st, 16);
        op.version = hist__col_i64(st, 17);
        op.succeeded = hist__col_i64(st, 18);
        op.deleted = hist__col_i64(st, 19);
        stopped = fn(arg, &op);
    }
    return finish(db, st, rc, stopped);
}

int hist_watches_each(struct hist_db *db, int64_t run_id,
                      int (*fn)(void *arg, const struct hist_watch *w), void *arg)
{
    sqlite3_stmt *st = NULL;
    int rc = prepare(db,
                     "SELECT watch_id, client_id, key, range_end, start_rev, opened_ns,"
                     " closed_ns, close_reason, node_id, prev_kv, progress_notify, filters,"
                     " request FROM watches WHERE run_id = ?1 ORDER BY watch_id",
                     run_id, &st);
    if (rc)
        return rc;
    int stopped = 0;
    while (!stopped && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        struct hist_watch w;
        hist_watch_init(&w);
        w.watch_id = hist__col_i64(st, 0);
        w.client_id = hist__col_i64(st, 1);
        w.key = hist__col_blob(st, 2, &w.key_len);
        w.range_end = hist__col_blob(st, 3, &w.range_end_len);
        w.start_rev = hist__col_i64(st, 4);
        w.opened_ns = hist__col_i64(st, 5);
        w.closed_ns = hist__col_i64(st, 6);
        w.close_reason = hist__col_text(st, 7);
        w.node_id = hist__col_i64(st, 8);
        w.prev_kv = hist__col_i64(st, 9);
        w.progress_notify = hist__col_i64(st, 10);
        w.filters = hist__col_text(st, 11);
        w.request = hist__col_text(st, 12);
        stopped = fn(arg, &w);
    }
    return finish(db, st, rc, stopped);
}

int hist_watch_events_each(struct hist_db *db, int64_t run_id,
                           int (*fn)(void *arg, const struct hist_watch_event *ev), void *arg)
{
    sqlite3_stmt *st = NULL;
    int rc = prepare(db,
                     "SELECT watch_id, seq, response_seq, kind, key, value, create_rev,"
                     " mod_rev, version, prev_value, delivered_ns, revision, prev_kv,"
                     " prev_mod_rev FROM watch_events WHERE run_id = ?1"
                     " ORDER BY watch_id, seq",
                     run_id, &st);
    if (rc)
        return rc;
    int stopped = 0;
    while (!stopped && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        struct hist_watch_event ev;
        hist_watch_event_init(&ev);
        ev.watch_id = hist__col_i64(st, 0);
        ev.seq = hist__col_i64(st, 1);
        ev.response_seq = hist__col_i64(st, 2);
        ev.kind = hist__col_text(st, 3);
        ev.key = hist__col_blob(st, 4, &ev.key_len);
        ev.value = hist__col_blob(st, 5, &ev.value_len);
        ev.create_rev = hist__col_i64(st, 6);
        ev.mod_rev = hist__col_i64(st, 7);
        ev.version = hist__col_i64(st, 8);
        ev.prev_value = hist__col_blob(st, 9, &ev.prev_value_len);
        ev.delivered_ns = hist__col_i64(st, 10);
        ev.revision = hist__col_i64(st, 11);
        ev.prev_kv = hist__col_i64(st, 12);
        ev.prev_mod_rev = hist__col_i64(st, 13);
        stopped = fn(arg, &ev);
    }
    return finish(db, st, rc, stopped);
}

int hist_faults_each(struct hist_db *db, int64_t run_id,
                     int (*fn)(void *arg, const struct hist_fault *f), void *arg)
{
    sqlite3_stmt *st = NULL;
    int rc = prepare(db,
                     "SELECT at_ns, seq, kind, target, detail FROM faults WHERE run_id = ?1"
                     " ORDER BY at_ns, seq, rowid",
                     run_id, &st);
    if (rc)
        return rc;
    int stopped = 0;
    while (!stopped && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        struct hist_fault f = {
            .at_ns = hist__col_i64(st, 0),
            .seq = hist__col_i64(st, 1),
            .kind = hist__col_text(st, 2),
            .target = hist__col_text(st, 3),
            .detail = hist__col_text(st, 4),
        };
        stopped = fn(arg, &f);
    }
    return finish(db, st, rc, stopped);
}

int hist_node_events_each(struct hist_db *db, int64_t run_id,
                          int (*fn)(void *arg, const struct hist_node_event *e), void *arg)
{
    sqlite3_stmt *st = NULL;
    /* a database written before the typed columns (opened read-only, so not upgraded)
     * reads them as NULL */
    static const char *const typed[] = {"peer",     "log_index", "from_state",
                                        "to_state", "reason",    "pre"};
    char sql[512];
    int k = snprintf(sql, sizeof sql, "SELECT at_ns, seq, node_id, term, kind, detail");
    for (size_t i = 0; i < FL_ARRAY_LEN(typed); i++)
        k += snprintf(sql + k, sizeof sql - (size_t)k, ", %s",
                      hist__has_column(db->db, "node_events", typed[i]) ? typed[i] : "NULL");
    snprintf(sql + k, sizeof sql - (size_t)k,
             " FROM node_events WHERE run_id = ?1 ORDER BY at_ns, seq, rowid");
    int rc = prepare(db, sql, run_id, &st);
    if (rc)
        return rc;
    int stopped = 0;
    while (!stopped && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        struct hist_node_event e = {
            .at_ns = hist__col_i64(st, 0),
            .seq = hist__col_i64(st, 1),
            .node_id = hist__col_i64(st, 2),
            .term = hist__col_i64(st, 3),
            .kind = hist__col_text(st, 4),
            .detail = hist__col_text(st, 5),
            .f = {.peer = hist__col_i64(st, 6),
                  .log_index = hist__col_i64(st, 7),
                  .from_state = hist__col_text(st, 8),
                  .to_state = hist__col_text(st, 9),
                  .reason = hist__col_text(st, 10),
                  .pre = hist__col_i64(st, 11)},
        };
        stopped = fn(arg, &e);
    }
    return finish(db, st, rc, stopped);
}

int hist_clients_each(struct hist_db *db, int64_t run_id,
                      int (*fn)(void *arg, const struct hist_client *c), void *arg)
{
    sqlite3_stmt *st = NULL;
    /* a database written before the table existed (opened read-only, so not upgraded) */
    int rc = prepare(db,
                     "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND"
                     " name = 'clients'",
                     HIST_NULL, &st);
    if (rc)
        return rc;
    bool exists = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int64(st, 0) > 0;
    sqlite3_finalize(st);
    if (!exists)
        return FL_OK;
    rc = prepare(db,
                 "SELECT client_id, balancer, stats, attempts FROM clients WHERE run_id = ?1"
                 " ORDER BY client_id",
                 run_id, &st);
    if (rc)
        return rc;
    int stopped = 0;
    while (!stopped && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        struct hist_client c = {
            .client_id = hist__col_i64(st, 0),
            .balancer = hist__col_text(st, 1),
            .stats = hist__col_text(st, 2),
            .attempts = hist__col_text(st, 3),
        };
        stopped = fn(arg, &c);
    }
    return finish(db, st, rc, stopped);
}

int hist_checks_each(struct hist_db *db, int64_t run_id,
                     int (*fn)(void *arg, const struct hist_check *c), void *arg)
{
    sqlite3_stmt *st = NULL;
    int rc = prepare(db,
                     "SELECT seq, elapsed_ms, checker, verdict, detail FROM checks"
                     " WHERE run_id = ?1 ORDER BY seq, rowid",
                     run_id, &st);
    if (rc)
        return rc;
    int stopped = 0;
    while (!stopped && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        struct hist_check c = {
            .seq = hist__col_i64(st, 0),
            .elapsed_ms = hist__col_i64(st, 1),
            .checker = hist__col_text(st, 2),
            .verdict = hist__col_text(st, 3),
            .detail = hist__col_text(st, 4),
        };
        stopped = fn(arg, &c);
    }
    return finish(db, st, rc, stopped);
}
