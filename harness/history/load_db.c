/*
 * load_db.c: one run of a faultline SQLite history (DESIGN §3.6) into a checker
 * history, the run driver's check call, and storing verdicts into `checks`.
 *
 * ops rows carry the full request/response JSON; the columns (key, range_end,
 * revision and the added value/expect/mod_rev/create_rev/version/succeeded/deleted
 * when the database has them) fill whatever the JSON leaves out. Every query has an
 * ORDER BY (DESIGN §6). Reads go through this module's own SQLite connection
 * (hist_sqlite), so nothing outside harness/history touches SQLite.
 */
#include "harness/history/history.h"
#include "harness/history/load_int.h"

#include <sqlite3.h>
#include <time.h>

struct dbl {
    sqlite3 *db;
    const char *name;
    struct chk_history *h;
    struct fl_buf *err;
    struct fl_buf b;
    bool has_col[8];
};

enum { C_VALUE, C_EXPECT, C_MOD, C_CREATE, C_VERSION, C_SUCC, C_DELETED, C_COUNT };
static const char *const extra_cols[C_COUNT] = {"value",   "expect",    "mod_rev", "create_rev",
                                                "version", "succeeded", "deleted"};

static bool table_has(sqlite3 *db, const char *table, const char *col)
{
    char sql[128];
    snprintf(sql, sizeof(sql), "SELECT 1 FROM pragma_table_info('%s') WHERE name = ?", table);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return false;
    sqlite3_bind_text(st, 1, col, -1, SQLITE_STATIC);
    bool has = sqlite3_step(st) == SQLITE_ROW;
    sqlite3_finalize(st);
    return has;
}

/* One ops row, whichever way it arrives: read back from the database (db_op) or
 * handed over as the recorder wrote it (hist_load_op). Pointers NULL and integers
 * HIST_NULL are SQL NULL; has[] says which added columns the table has. */
struct ld_row {
    int64_t op_id, client_id, call_ns, return_ns, revision;
    const char *kind, *status, *error, *request, *response;
    const void *key, *range_end, *value, *expect;
    size_t key_len, range_end_len, value_len, expect_len;
    int64_t ints[5]; /* mod_rev, create_rev, version, succeeded, deleted */
    bool has[C_COUNT];
};

static json_t *blob_json(const void *p, size_t n)
{
    if (!p)
        return json_null();
    return chk_json_bytes(p, n);
}

static json_t *text_json(const char *t)
{
    if (!t || !*t)
        return json_object();
    json_t *j = json_loads(t, 0, NULL);
    if (!j || !json_is_object(j)) {
        json_decref(j);
        return NULL;
    }
    return j;
}

static void set_missing(json_t *o, const char *k, json_t *v)
{
    if (!json_object_get(o, k) && !json_is_null(v))
        json_object_set_new(o, k, v);
    else
        json_decref(v);
}

static int row_op(const char *name, struct chk_history *h, struct fl_buf *err,
                  const struct ld_row *r)
{
    struct ld_op d;
    memset(&d, 0, sizeof(d));
    d.op_id = r->op_id;
    d.client = (int32_t)(r->client_id == HIST_NULL ? 0 : r->client_id);
    d.kind = r->kind;
    d.call_ns = r->call_ns == HIST_NULL ? 0 : r->call_ns;
    d.return_ns = r->return_ns == HIST_NULL ? CHK_NEVER : r->return_ns;
    const char *status = r->status;
    d.error = r->error;
    d.rev = r->revision == HIST_NULL ? CHK_NO_REV : r->revision;
    if (!status || !d.kind) {
        fl_buf_printf(err, "%s: op %lld: missing kind or status", name, (long long)d.op_id);
        return FL_EINVAL;
    }
    d.status = !strcmp(status, "ok")        ? CHK_ST_OK
               : !strcmp(status, "fail")    ? CHK_ST_FAIL
               : !strcmp(status, "unknown") ? CHK_ST_UNKNOWN
                                            : -1;
    if (d.status < 0) {
        fl_buf_printf(err, "%s: op %lld: unknown status \"%s\"", name, (long long)d.op_id, status);
        return FL_EINVAL;
    }
    if (d.return_ns != CHK_NEVER && d.return_ns < d.call_ns) {
        fl_buf_printf(err, "%s: op %lld: return before call", name, (long long)d.op_id);
        return FL_EINVAL;
    }
    if (d.status == CHK_ST_OK && d.return_ns == CHK_NEVER)
        d.status = CHK_ST_UNKNOWN;
    d.lenient = true;
    d.req = text_json(r->request);
    d.resp = text_json(r->response);
    int rc = FL_OK;
    if (!d.req || !d.resp) {
        fl_buf_printf(err, "%s: op %lld: request/response is not a JSON object", name,
                      (long long)d.op_id);
        rc = FL_EINVAL;
        goto out;
    }
    set_missing(d.req, "key", blob_json(r->key, r->key_len));
    set_missing(d.req, "range_end", blob_json(r->range_end, r->range_end_len));
    bool is_read = !strcmp(d.kind, "get") || !strcmp(d.kind, "range");
    if (r->has[C_VALUE])
        set_missing(is_read ? d.resp : d.req, "value", blob_json(r->value, r->value_len));
    if (r->has[C_EXPECT])
        set_missing(d.req, "expect", blob_json(r->expect, r->expect_len));
    static const char *const resp_int[] = {"mod_rev", "create_rev", "version"};
    for (int i = 0; i < 3; i++) {
        if (r->has[C_MOD + i] && r->ints[i] != HIST_NULL)
            set_missing(d.resp, resp_int[i], json_integer(r->ints[i]));
    }
    if (r->has[C_SUCC] && r->ints[3] != HIST_NULL)
        set_missing(d.resp, "succeeded", json_boolean(r->ints[3] != 0));
    if (r->has[C_DELETED] && r->ints[4] != HIST_NULL)
        set_missing(d.resp, "deleted", json_integer(r->ints[4]));
    if (d.rev == CHK_NO_REV) {
        json_t *hd = json_object_get(d.resp, "header");
        json_t *rv = hd ? json_object_get(hd, "revision") : json_object_get(d.resp, "revision");
        if (rv && json_is_integer(rv) && d.status == CHK_ST_OK)
            d.rev = json_integer_value(rv);
    }
    char msg[256];
    if (ld_build_op(h, &d, msg, sizeof(msg)) < 0) {
        fl_buf_printf(err, "%s: op %lld: %s", name, (long long)d.op_id, msg);
        rc = FL_EINVAL;
    }
out:
    json_decref(d.req);
    json_decref(d.resp);
    return rc;
}

static int64_t col_int(sqlite3_stmt *st, int col, int64_t dflt)
{
    return sqlite3_column_type(st, col) == SQLITE_NULL ? dflt : sqlite3_column_int64(st, col);
}

/* A BLOB column: NULL pointer for SQL NULL, else the bytes ("" when empty). */
static const void *col_blob(sqlite3_stmt *st, int col, size_t *n)
{
    *n = 0;
    if (col < 0 || sqlite3_column_type(st, col) == SQLITE_NULL)
        return NULL;
    const void *p = sqlite3_column_blob(st, col);
    *n = (size_t)sqlite3_column_bytes(st, col);
    return p ? p : (const void *)"";
}

/* Columns: 0 op_id 1 client_id 2 kind 3 key 4 range_end 5 request 6 call_ns 7 return_ns
 * 8 status 9 error 10 revision 11 response, then the extra columns in order. */
static int db_op(struct dbl *l, sqlite3_stmt *st, int extra_at[C_COUNT])
{
    struct ld_row r;
    memset(&r, 0, sizeof r);
    r.op_id = sqlite3_column_int64(st, 0);
    r.client_id = col_int(st, 1, HIST_NULL);
    r.kind = (const char *)sqlite3_column_text(st, 2);
    r.key = col_blob(st, 3, &r.key_len);
    r.range_end = col_blob(st, 4, &r.range_end_len);
    r.request = (const char *)sqlite3_column_text(st, 5);
    r.call_ns = col_int(st, 6, HIST_NULL);
    r.return_ns = col_int(st, 7, HIST_NULL);
    r.status = (const char *)sqlite3_column_text(st, 8);
    r.error = (const char *)sqlite3_column_text(st, 9);
    r.revision = col_int(st, 10, HIST_NULL);
    r.response = (const char *)sqlite3_column_text(st, 11);
    for (int i = 0; i < C_COUNT; i++)
        r.has[i] = extra_at[i] >= 0;
    r.value = col_blob(st, extra_at[C_VALUE], &r.value_len);
    r.expect = col_blob(st, extra_at[C_EXPECT], &r.expect_len);
    for (int i = 0; i < 5; i++)
        r.ints[i] =
            extra_at[C_MOD + i] >= 0 ? col_int(st, extra_at[C_MOD + i], HIST_NULL) : HIST_NULL;
    return row_op(l->name, l->h, l->err, &r);
}

int hist_load_op(struct chk_history *h, const char *name, int64_t op_id, const struct hist_op *op,
                 struct fl_buf *err)
{
    struct ld_row r;
    memset(&r, 0, sizeof r);
    r.op_id = op_id;
    r.client_id = op->client_id;
    r.kind = op->kind;
    r.key = op->key;
    r.key_len = op->key ? op->key_len : 0;
    r.range_end = op->range_end;
    r.range_end_len = op->range_end ? op->range_end_len : 0;
    r.request = op->request;
    r.call_ns = op->call_ns;
    r.return_ns = op->return_ns;
    r.status = hist_status_name(op->status);
    r.error = op->error;
    r.revision = op->revision;
    r.response = op->response;
    for (int i = 0; i < C_COUNT; i++)
        r.has[i] = true;
    r.value = op->value;
    r.value_len = op->value ? op->value_len : 0;
    r.expect = op->expect;
    r.expect_len = op->expect ? op->expect_len : 0;
    int64_t ints[5] = {op->mod_rev, op->create_rev, op->version, op->succeeded, op->deleted};
    memcpy(r.ints, ints, sizeof ints);
    return row_op(name, h, err, &r);
}

int hist_load_error_kind(const char *error)
{
    return ld_error_kind(error);
}

int hist_load_finish(const char *name, struct chk_history *h, struct fl_buf *err)
{
    return ld_finish(name, h, err);
}

static int db_ops(struct dbl *l, int64_t run_id)
{
    struct fl_buf sql;
    fl_buf_init(&sql);
    fl_buf_printf(&sql, "SELECT op_id, client_id, kind, key, range_end, request, call_ns, "
                        "return_ns, status, error, revision, response");
    int extra_at[C_COUNT];
    int ncol = 12;
    for (int i = 0; i < C_COUNT; i++) {
        extra_at[i] = -1;
        if (table_has(l->db, "ops", extra_cols[i])) {
            fl_buf_printf(&sql, ", \"%s\"", extra_cols[i]);
            extra_at[i] = ncol++;
        }
    }
    fl_buf_printf(&sql, " FROM ops WHERE run_id = ? ORDER BY op_id");
    sqlite3_stmt *st;
    int rc = FL_OK;
    if (sqlite3_prepare_v2(l->db, fl_buf_cstr(&sql), -1, &st, NULL) != SQLITE_OK) {
        fl_buf_printf(l->err, "%s: not a faultline history (ops: %s)", l->name,
                      sqlite3_errmsg(l->db));
        fl_buf_close(&sql);
        return FL_EINVAL;
    }
    sqlite3_bind_int64(st, 1, run_id);
    int s;
    while (!rc && (s = sqlite3_step(st)) == SQLITE_ROW)
        rc = db_op(l, st, extra_at);
    if (!rc && s != SQLITE_DONE) {
        fl_buf_printf(l->err, "%s: reading ops: %s", l->name, sqlite3_errmsg(l->db));
        rc = FL_EIO;
    }
    sqlite3_finalize(st);
    fl_buf_close(&sql);
    return rc;
}

static int32_t blob_key(struct dbl *l, sqlite3_stmt *st, int col, bool range_end)
{
    if (sqlite3_column_type(st, col) == SQLITE_NULL)
        return range_end ? CHK_RANGE_ONE : chk_history_key(l->h, "", 0);
    const void *p = sqlite3_column_blob(st, col);
    int n = sqlite3_column_bytes(st, col);
    if (range_end && n == 1 && ((const uint8_t *)p)[0] == 0)
        return CHK_RANGE_ALL;
    return chk_history_key(l->h, p ? p : (const void *)"", (size_t)n);
}

static int32_t blob_value(struct dbl *l, sqlite3_stmt *st, int col)
{
    if (sqlite3_column_type(st, col) == SQLITE_NULL)
        return CHK_NIL;
    const void *p = sqlite3_column_blob(st, col);
    return chk_history_value(l->h, p ? p : (const void *)"", (size_t)sqlite3_column_bytes(st, col));
}

static int db_watches(struct dbl *l, int64_t run_id)
{
    bool pk = table_has(l->db, "watches", "prev_kv");
    bool pn = table_has(l->db, "watches", "progress_notify");
    bool fi = table_has(l->db, "watches", "filters");
    char sql[400];
    snprintf(sql, sizeof(sql),
             "SELECT watch_id, client_id, key, range_end, start_rev, opened_ns, closed_ns, %s, %s, "
             "%s FROM watches WHERE run_id = ? ORDER BY watch_id",
             pk ? "prev_kv" : "0", pn ? "progress_notify" : "0", fi ? "filters" : "NULL");
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(l->db, sql, -1, &st, NULL) != SQLITE_OK)
        return FL_OK; /* no watches table: no watches */
    sqlite3_bind_int64(st, 1, run_id);
    while (sqlite3_step(st) == SQLITE_ROW) {
        struct chk_watch *w = chk_history_watch_add(l->h);
        w->watch_id = sqlite3_column_int64(st, 0);
        w->client = (int32_t)col_int(st, 1, 0);
        w->key = blob_key(l, st, 2, false);
        w->range_end = blob_key(l, st, 3, true);
        w->start_rev = col_int(st, 4, 0);
        w->opened_ns = col_int(st, 5, 0);
        w->closed_ns = col_int(st, 6, CHK_NEVER);
        if (col_int(st, 7, 0) == 1)
            w->flags |= CHK_WF_PREV_KV;
        if (col_int(st, 8, 0) == 1)
            w->flags |= CHK_WF_PROGRESS_NOTIFY;
        const char *filters = (const char *)sqlite3_column_text(st, 9);
        if (filters && strstr(filters, "noput"))
            w->flags |= CHK_WF_NOPUT;
        if (filters && strstr(filters, "nodelete"))
            w->flags |= CHK_WF_NODELETE;
    }
    sqlite3_finalize(st);
    bool epk = table_has(l->db, "watch_events", "prev_kv");
    bool erev = table_has(l->db, "watch_events", "revision");
    snprintf(sql, sizeof(sql),
             "SELECT watch_id, seq, response_seq, kind, key, value, create_rev, mod_rev, version, "
             "prev_value, delivered_ns, %s, %s FROM watch_events WHERE run_id = ? "
             "ORDER BY watch_id, seq",
             epk ? "prev_kv" : "NULL", erev ? "revision" : "NULL");
    if (sqlite3_prepare_v2(l->db, sql, -1, &st, NULL) != SQLITE_OK)
        return FL_OK;
    sqlite3_bind_int64(st, 1, run_id);
    int rc = FL_OK;
    while (!rc && sqlite3_step(st) == SQLITE_ROW) {
        const char *kind = (const char *)sqlite3_column_text(st, 3);
        int k = !kind                       ? -1
                : !strcmp(kind, "put")      ? CHK_EV_PUT
                : !strcmp(kind, "delete")   ? CHK_EV_DELETE
                : !strcmp(kind, "progress") ? CHK_EV_PROGRESS
                                            : -1;
        if (k < 0) {
            fl_buf_printf(l->err, "%s: watch %lld: unknown event kind \"%s\"", l->name,
                          (long long)sqlite3_column_int64(st, 0), kind ? kind : "NULL");
            rc = FL_EINVAL;
            break;
        }
        struct chk_wevent *e = chk_history_event_add(l->h);
        e->watch_id = sqlite3_column_int64(st, 0);
        e->seq = col_int(st, 1, 0);
        e->response = col_int(st, 2, e->seq);
        e->kind = (uint8_t)k;
        e->t_ns = col_int(st, 10, 0);
        if (k == CHK_EV_PROGRESS) {
            e->mod_rev = col_int(st, 12, col_int(st, 7, 0));
            continue;
        }
        e->key = blob_key(l, st, 4, false);
        e->value = k == CHK_EV_PUT ? blob_value(l, st, 5) : CHK_NIL;
        e->create_rev = col_int(st, 6, CHK_NO_REV);
        e->mod_rev = col_int(st, 7, 0);
        e->version = col_int(st, 8, CHK_NO_REV);
        bool given = epk ? col_int(st, 11, 0) == 1 : sqlite3_column_type(st, 9) != SQLITE_NULL;
        e->prev_value = given ? blob_value(l, st, 9) : CHK_NOT_GIVEN;
    }
    sqlite3_finalize(st);
    return rc;
}

static int pick_run(struct dbl *l, int64_t run_id, int64_t *out)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(l->db, "SELECT run_id FROM runs ORDER BY run_id", -1, &st, NULL) !=
        SQLITE_OK) {
        fl_buf_printf(l->err, "%s: not a faultline history (no runs table)", l->name);
        return FL_EINVAL;
    }
    int64_t n = 0, only = 0;
    bool found = false;
    struct fl_buf ids;
    fl_buf_init(&ids);
    while (sqlite3_step(st) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(st, 0);
        if (n < 20)
            fl_buf_printf(&ids, "%s%lld", n ? ", " : "", (long long)id);
        n++;
        only = id;
        found |= id == run_id;
    }
    sqlite3_finalize(st);
    int rc = FL_OK;
    if (run_id > 0 && !found) {
        fl_buf_printf(l->err, "%s: no run %lld (runs: %s)", l->name, (long long)run_id,
                      n ? fl_buf_cstr(&ids) : "none");
        rc = FL_EINVAL;
    } else if (run_id <= 0 && n != 1) {
        if (n == 0)
            fl_buf_printf(l->err, "%s: the database holds no run", l->name);
        else
            fl_buf_printf(l->err, "%s: the database holds %lld runs (%s); choose one with --run ID",
                          l->name, (long long)n, fl_buf_cstr(&ids));
        rc = FL_EINVAL;
    } else {
        *out = run_id > 0 ? run_id : only;
    }
    fl_buf_close(&ids);
    return rc;
}

static int load_sqlite(sqlite3 *db, const char *name, int64_t run_id, struct chk_history *h,
                       int64_t *run_id_out, struct fl_buf *err)
{
    struct dbl l = {db, name, h, err, {0}, {0}};
    int64_t rid;
    int rc = pick_run(&l, run_id, &rid);
    if (rc)
        return rc;
    if (run_id_out)
        *run_id_out = rid;
    rc = db_ops(&l, rid);
    if (!rc)
        rc = db_watches(&l, rid);
    if (!rc)
        rc = ld_finish(name, h, err);
    return rc;
}

int hist_load_db(struct hist_db *db, int64_t run_id, struct chk_history *h, struct fl_buf *err)
{
    return load_sqlite(hist_sqlite(db), hist_path(db), run_id, h, NULL, err);
}

int hist_load_db_path(const char *path, int64_t run_id, struct chk_history *h, int64_t *run_id_out,
                      struct fl_buf *err)
{
    sqlite3 *db = NULL;
    char *data;
    size_t len;
    int rc = ld_read_file(path, &data, &len, err); /* existence, regular file */
    if (rc)
        return rc;
    bool is_sqlite = len >= 16 && !memcmp(data, "SQLite format 3", 16);
    free(data);
    if (!is_sqlite) {
        fl_buf_printf(err, "%s: not a SQLite database", path);
        return FL_EINVAL;
    }
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        fl_buf_printf(err, "%s: cannot open: %s", path, db ? sqlite3_errmsg(db) : "?");
        sqlite3_close(db);
        return FL_EIO;
    }
    sqlite3_busy_timeout(db, 2000);
    rc = load_sqlite(db, path, run_id, h, run_id_out, err);
    sqlite3_close(db);
    return rc;
}

/* ---- the run driver's calls ------------------------------------------------------ */

static int64_t wall_ms_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts); /* wall time for checks.elapsed_ms only */
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int hist_check_run(struct hist_db *db, int64_t run_id, const struct chk_limits *lim,
                   struct chk_result *out, int64_t *elapsed_ms, struct fl_buf *err)
{
    memset(out, 0, sizeof(*out));
    int64_t t0 = wall_ms_now();
    struct chk_history h;
    chk_history_init(&h);
    int rc = hist_load_db(db, run_id, &h, err);
    if (!rc)
        rc = chk_check(&h, lim, out);
    if (!rc && out->lin.detail == NULL)
        out->lin.detail = json_object();
    /* The JSON of results refers to the history; keep what reports need inside the
     * result's detail objects before the history goes away. */
    if (!rc) {
        json_decref(out->watch.detail);
        out->watch.detail = chk_watch_json(&h, &out->watch);
        json_t *lj = chk_lin_json(&h, &out->lin);
        json_decref(out->lin.detail);
        out->lin.detail = lj;
    }
    chk_history_close(&h);
    if (elapsed_ms)
        *elapsed_ms = wall_ms_now() - t0;
    return rc;
}

int hist_checks_store(struct hist_db *db, const struct chk_history *h, const struct chk_result *r,
                      int64_t elapsed_ms)
{
    json_t *lj = h ? chk_lin_json(h, &r->lin) : json_incref(r->lin.detail);
    json_t *wj = h ? chk_watch_json(h, &r->watch) : json_incref(r->watch.detail);
    char *ls = lj ? json_dumps(lj, JSON_COMPACT) : NULL;
    char *ws = wj ? json_dumps(wj, JSON_COMPACT) : NULL;
    int rc =
        hist_check_add(db, "linearizability", chk_verdict_name(r->lin.verdict), elapsed_ms, ls);
    if (!rc)
        rc = hist_check_add(db, "watch", chk_verdict_name(r->watch.verdict), elapsed_ms, ws);
    free(ls);
    free(ws);
    json_decref(lj);
    json_decref(wj);
    return rc;
}

json_t *hist_check_result_json(const struct chk_result *r)
{
    json_t *o = json_object();
    json_object_set_new(o, "linearizability",
                        r->lin.detail ? json_deep_copy(r->lin.detail) : json_object());
    json_object_set_new(o, "watch",
                        r->watch.detail ? json_deep_copy(r->watch.detail) : json_object());
    return o;
}
