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

enum hist_status hist__col_status(sqlite3_stmt *st, int col)
{
    enum hist_status s = HIST_STATUS_UNKNOWN;
    if (!hist_status_parse(hist__col_text(st, col), &s))
        s = HIST_STATUS_UNKNOWN;
    return s;
}

void hist__select_sql(sqlite3 *db, enum hist_table_id t, const char *order, struct fl_buf *sql)
{
    const struct hist_table *tb = &hist_tables[t];
    fl_buf_printf(sql, "SELECT run_id");
    for (int i = 0; i < tb->n_cols; i++) {
        const struct hist_col *c = &tb->cols[i];
        bool has = c->since == 0 || hist__has_column(db, tb->name, c->name);
        fl_buf_printf(sql, ", %s", has ? c->name : "NULL");
    }
    fl_buf_printf(sql, " FROM %s WHERE run_id = ?1 ORDER BY %s", tb->name, order);
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

/* Every row of table T of the run, in `order`, read whole (hist_schema.h) into a TYPE
 * and handed to fn until fn returns non-zero. A column an older database lacks reads
 * as NULL. */
static int rows_prepare(struct hist_db *db, enum hist_table_id t, const char *order, int64_t run_id,
                        sqlite3_stmt **st)
{
    struct fl_buf sql;
    fl_buf_init(&sql);
    hist__select_sql(db->db, t, order, &sql);
    int rc = prepare(db, fl_buf_cstr(&sql), run_id, st);
    fl_buf_close(&sql);
    return rc;
}

#define HIST_EACH_FN(fn, TYPE, T, list, order)                                                     \
    int fn(struct hist_db *db, int64_t run_id, int (*cb)(void *arg, const TYPE *row), void *arg)   \
    {                                                                                              \
        sqlite3_stmt *hist__st = NULL;                                                             \
        int rc = rows_prepare(db, T, order, run_id, &hist__st);                                    \
        if (rc)                                                                                    \
            return rc;                                                                             \
        int stopped = 0;                                                                           \
        while (!stopped && (rc = sqlite3_step(hist__st)) == SQLITE_ROW) {                          \
            TYPE row;                                                                              \
            TYPE *hist__row = &row;                                                                \
            int hist__c = 0;                                                                       \
            memset(&row, 0, sizeof row);                                                           \
            list(HIST_READ_COL);                                                                   \
            (void)hist__c;                                                                         \
            stopped = cb(arg, &row);                                                               \
        }                                                                                          \
        return finish(db, hist__st, rc, stopped);                                                  \
    }

HIST_EACH_FN(hist_ops_each, struct hist_op, HIST_T_ops, HIST_OPS_COLUMNS, "op_id")
HIST_EACH_FN(hist_watches_each, struct hist_watch, HIST_T_watches, HIST_WATCHES_COLUMNS, "watch_id")
HIST_EACH_FN(hist_watch_events_each, struct hist_watch_event, HIST_T_watch_events,
             HIST_WATCH_EVENTS_COLUMNS, "watch_id, seq")
HIST_EACH_FN(hist_faults_each, struct hist_fault, HIST_T_faults, HIST_FAULTS_COLUMNS,
             "at_ns, seq, rowid")
HIST_EACH_FN(hist_node_events_each, struct hist_node_event, HIST_T_node_events,
             HIST_NODE_EVENTS_COLUMNS, "at_ns, seq, rowid")
HIST_EACH_FN(hist_checks_each, struct hist_check, HIST_T_checks, HIST_CHECKS_COLUMNS, "seq, rowid")
static HIST_EACH_FN(clients_each, struct hist_client, HIST_T_clients, HIST_CLIENTS_COLUMNS,
                    "client_id")

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
    return clients_each(db, run_id, fn, arg);
}
