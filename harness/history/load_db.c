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
#include "harness/history/history_int.h"
#include "harness/history/load_int.h"

#include <sqlite3.h>
#include <time.h>

struct dbl {
    sqlite3 *db;
    const char *name;
    struct chk_history *h;
    struct fl_buf *err;
    struct fl_buf b;
    int64_t run_id;
    /* The row being read, formatted only for a message: "ops row 3 (op_id 7)". */
    const char *table;
    int64_t row, id, seq; /* id/seq HIST_NULL until read */
};

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
 * HIST_NULL are SQL NULL, and so is a column an older database lacks. status is the
 * column's text (op.status is not used). */
struct ld_row {
    struct hist_op op;
    const char *status;
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
    json_t *j = json_loads(t, JSON_ALLOW_NUL, NULL);
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

static const char *where(const struct dbl *l, char *buf, size_t n);

/* Whether v (not NULL) is in the range the column's HIST_LD_* flags allow. */
static bool ld_in_range(int64_t v, unsigned load)
{
    if (v == HIST_NULL || (load & HIST_LD_SKIP))
        return true;
    return !(((load & HIST_LD_NONNEG) && v < 0) || ((load & HIST_LD_BOOL) && v != 0 && v != 1) ||
             ((load & HIST_LD_I32) && (v < 0 || v > INT32_MAX)));
}

#define LD_RANGE_I64(col, field, load)                                                             \
    if (!bad && !ld_in_range(op->field, load))                                                     \
        bad = #col;
#define LD_RANGE_ID LD_RANGE_I64
#define LD_RANGE_TEXT(col, field, load)
#define LD_RANGE_BLOB(col, field, load)
#define LD_RANGE_STATUS(col, field, load)
#define LD_RANGE_COL(col, field, kind, role, since, load) LD_RANGE_##kind(col, field, load)

/* The first integer column of op outside its range (hist_schema.h), or NULL. */
static const char *ld_out_of_range(const struct hist_op *op)
{
    const char *bad = NULL;
    HIST_OPS_COLUMNS(LD_RANGE_COL)
    return bad;
}

/* The row for a message: the database's, or the recorder's op id. */
static const char *row_where(const struct dbl *l, const struct ld_row *r, char *buf, size_t n)
{
    if (l)
        return where(l, buf, n);
    snprintf(buf, n, "op %lld", (long long)r->op.op_id);
    return buf;
}

/* l: the database row being read (messages name it "run 1, ops row 7 (op_id 7)"), or
 * NULL for a row handed over by the recorder ("op 7"). */
static int row_op(const char *name, const struct dbl *l, struct chk_history *h, struct fl_buf *err,
                  const struct ld_row *r)
{
    char wbuf[128];
    struct ld_op d;
    memset(&d, 0, sizeof(d));
    d.op_id = r->op.op_id;
    d.client = (int32_t)(r->op.client_id == HIST_NULL ? 0 : r->op.client_id);
    d.kind = r->op.kind;
    d.call_ns = r->op.call_ns == HIST_NULL ? 0 : r->op.call_ns;
    d.return_ns = r->op.return_ns == HIST_NULL ? CHK_NEVER : r->op.return_ns;
    const char *status = r->status;
    d.error = r->op.error;
    d.rev = r->op.revision == HIST_NULL ? CHK_NO_REV : r->op.revision;
    if (!status || !d.kind) {
        fl_buf_printf(err, "%s: %s: missing kind or status", name,
                      row_where(l, r, wbuf, sizeof wbuf));
        return FL_EINVAL;
    }
    d.status = !strcmp(status, "ok")        ? CHK_ST_OK
               : !strcmp(status, "fail")    ? CHK_ST_FAIL
               : !strcmp(status, "unknown") ? CHK_ST_UNKNOWN
                                            : -1;
    if (d.status < 0) {
        fl_buf_printf(err, "%s: %s: unknown status \"%s\"", name,
                      row_where(l, r, wbuf, sizeof wbuf), status);
        return FL_EINVAL;
    }
    if (d.return_ns != CHK_NEVER && d.return_ns < d.call_ns) {
        fl_buf_printf(err, "%s: %s: return before call", name, row_where(l, r, wbuf, sizeof wbuf));
        return FL_EINVAL;
    }
    const char *bad = ld_out_of_range(&r->op);
    if (bad) {
        fl_buf_printf(err, "%s: %s: %s out of range", name, row_where(l, r, wbuf, sizeof wbuf),
                      bad);
        return FL_EINVAL;
    }
    if (d.status == CHK_ST_OK && d.return_ns == CHK_NEVER)
        d.status = CHK_ST_UNKNOWN;
    /* Kinds the checkers do not model (leases, members, maintenance) are skipped by
     * ld_build_op; a kind nobody knows is refused, never silently dropped. */
    d.lenient = false;
    d.req = text_json(r->op.request);
    d.resp = text_json(r->op.response);
    int rc = FL_OK;
    if (!d.req || !d.resp) {
        fl_buf_printf(err, "%s: %s: request/response is not a JSON object", name,
                      row_where(l, r, wbuf, sizeof wbuf));
        rc = FL_EINVAL;
        goto out;
    }
    const struct hist_op *o = &r->op;
    set_missing(d.req, "key", blob_json(o->key, o->key_len));
    set_missing(d.req, "range_end", blob_json(o->range_end, o->range_end_len));
    bool is_read = !strcmp(d.kind, "get") || !strcmp(d.kind, "range");
    set_missing(is_read ? d.resp : d.req, "value", blob_json(o->value, o->value_len));
    set_missing(d.req, "expect", blob_json(o->expect, o->expect_len));
    const int64_t resp_int[] = {o->mod_rev, o->create_rev, o->version};
    static const char *const resp_name[] = {"mod_rev", "create_rev", "version"};
    for (int i = 0; i < 3; i++) {
        if (resp_int[i] != HIST_NULL)
            set_missing(d.resp, resp_name[i], json_integer(resp_int[i]));
    }
    if (o->succeeded != HIST_NULL)
        set_missing(d.resp, "succeeded", json_boolean(o->succeeded != 0));
    if (o->deleted != HIST_NULL)
        set_missing(d.resp, "deleted", json_integer(o->deleted));
    if (d.rev == CHK_NO_REV) {
        json_t *hd = json_object_get(d.resp, "header");
        json_t *rv = hd ? json_object_get(hd, "revision") : json_object_get(d.resp, "revision");
        if (rv && json_is_integer(rv) && d.status == CHK_ST_OK)
            d.rev = json_integer_value(rv);
    }
    char msg[256];
    if (ld_build_op(h, &d, msg, sizeof(msg)) < 0) {
        fl_buf_printf(err, "%s: %s: %s", name, row_where(l, r, wbuf, sizeof wbuf), msg);
        rc = FL_EINVAL;
    }
out:
    json_decref(d.req);
    json_decref(d.resp);
    return rc;
}

/* ---- column validation: types and ranges, with the row named --------------------- */

/* "run 1, ops row 3 (op_id 7)" into buf. */
static const char *where(const struct dbl *l, char *buf, size_t n)
{
    int k = snprintf(buf, n, "run %lld, %s row %lld", (long long)l->run_id, l->table,
                     (long long)l->row);
    if (k < 0 || (size_t)k >= n || l->id == HIST_NULL)
        return buf;
    if (l->seq != HIST_NULL)
        snprintf(buf + k, n - (size_t)k, " (watch %lld, seq %lld)", (long long)l->id,
                 (long long)l->seq);
    else
        snprintf(buf + k, n - (size_t)k, " (%s %lld)",
                 !strcmp(l->table, "ops") ? "op_id" : "watch_id", (long long)l->id);
    return buf;
}

static void at_row(struct dbl *l, const char *table, int64_t row)
{
    l->table = table;
    l->row = row;
    l->id = l->seq = HIST_NULL;
}

static const char *type_name(int t)
{
    return t == SQLITE_INTEGER ? "an integer"
           : t == SQLITE_FLOAT ? "a real number"
           : t == SQLITE_TEXT  ? "text"
           : t == SQLITE_BLOB  ? "a blob"
                               : "NULL";
}

static int bad_col(struct dbl *l, sqlite3_stmt *st, int col, const char *what, const char *want)
{
    int t = sqlite3_column_type(st, col);
    char w[128];
    fl_buf_printf(l->err, "%s: %s: %s is %s", l->name, where(l, w, sizeof w),
                  sqlite3_column_name(st, col), type_name(t));
    if (t == SQLITE_TEXT || t == SQLITE_FLOAT || t == SQLITE_INTEGER) {
        const char *v = (const char *)sqlite3_column_text(st, col);
        fl_buf_printf(l->err, " (");
        for (int i = 0; v && v[i] && i < 40; i++)
            fl_buf_printf(l->err,
                          (unsigned char)v[i] < 0x20 || (unsigned char)v[i] >= 0x7f ? "\\x%02x"
                                                                                    : "%c",
                          (unsigned char)v[i]);
        fl_buf_printf(l->err, ")");
    }
    fl_buf_printf(l->err, ", %s%s", what ? what : "", want);
    return FL_EINVAL;
}

/* INTEGER flags for vint. */
enum {
    V_NULL = HIST_LD_NULL,
    V_NONNEG = HIST_LD_NONNEG,
    V_BOOL = HIST_LD_BOOL,
    V_I32 = HIST_LD_I32
};

/* An INTEGER column (or NULL with V_NULL, read as HIST_NULL) into *out, in range. */
static int vint(struct dbl *l, sqlite3_stmt *st, int col, unsigned f, int64_t *out)
{
    int t = sqlite3_column_type(st, col);
    *out = HIST_NULL;
    if (t == SQLITE_NULL && (f & V_NULL))
        return FL_OK;
    if (t != SQLITE_INTEGER)
        return bad_col(l, st, col, NULL,
                       (f & V_NULL) ? "want an integer or NULL" : "want an integer");
    int64_t v = sqlite3_column_int64(st, col);
    if (((f & V_NONNEG) && v < 0) || ((f & V_BOOL) && v != 0 && v != 1) ||
        ((f & V_I32) && (v < 0 || v > INT32_MAX)))
        return bad_col(l, st, col, "out of range: ",
                       (f & V_BOOL)  ? "want 0 or 1"
                       : (f & V_I32) ? "want 0..2147483647"
                                     : "want a value >= 0");
    *out = v;
    return FL_OK;
}

/* A TEXT column (or NULL) into *out. */
static int vtext(struct dbl *l, sqlite3_stmt *st, int col, const char **out)
{
    int t = sqlite3_column_type(st, col);
    *out = NULL;
    if (t == SQLITE_NULL)
        return FL_OK;
    if (t != SQLITE_TEXT)
        return bad_col(l, st, col, NULL, "want text or NULL");
    *out = (const char *)sqlite3_column_text(st, col);
    return FL_OK;
}

/* A BLOB column (TEXT is taken as its bytes) or NULL: NULL pointer for SQL NULL, else the
 * bytes ("" when empty). col < 0: the table has no such column. */
static int vblob(struct dbl *l, sqlite3_stmt *st, int col, const void **p, size_t *n)
{
    *p = NULL;
    *n = 0;
    if (col < 0)
        return FL_OK;
    int t = sqlite3_column_type(st, col);
    if (t == SQLITE_NULL)
        return FL_OK;
    if (t != SQLITE_BLOB && t != SQLITE_TEXT)
        return bad_col(l, st, col, NULL, "want bytes (a blob) or NULL");
    const void *v = sqlite3_column_blob(st, col);
    *n = (size_t)sqlite3_column_bytes(st, col);
    *p = v ? v : (const void *)"";
    return FL_OK;
}

/* Reading a row of a hist__select_sql query into the struct *ldr, each column checked
 * as its HIST_LD_* flags say (hist_schema.h); a status column's text goes to
 * *ldr_status. */
#define LD_READ_I64(c, load, f)                                                                    \
    ((load)&HIST_LD_SKIP ? (ldr->f = HIST_NULL, FL_OK) : vint(l, st, c, load, &ldr->f))
#define LD_READ_ID LD_READ_I64
#define LD_READ_TEXT(c, load, f)                                                                   \
    ((load)&HIST_LD_SKIP ? (ldr->f = NULL, FL_OK) : vtext(l, st, c, &ldr->f))
#define LD_READ_BLOB(c, load, f)   vblob(l, st, c, &ldr->f, &ldr->f##_len)
#define LD_READ_STATUS(c, load, f) vtext(l, st, c, ldr_status)
#define LD_READ_COL(col, field, kind, role, since, load)                                           \
    c++;                                                                                           \
    if (!rc)                                                                                       \
        rc = LD_READ_##kind(c, load, field);

/* One row of hist__select_sql's ops query: every column after run_id, checked as its
 * HIST_LD_* flags say (hist_schema.h). */
static int db_op(struct dbl *l, sqlite3_stmt *st, int64_t row)
{
    struct ld_row r;
    memset(&r, 0, sizeof r);
    at_row(l, "ops", row);
    int rc = vint(l, st, 1, 0, &r.op.op_id); /* first, so messages name it */
    if (rc)
        return rc;
    l->id = r.op.op_id;
    struct hist_op *ldr = &r.op;
    const char **ldr_status = &r.status;
    int c = 0;
    HIST_OPS_COLUMNS(LD_READ_COL)
    if (rc)
        return rc;
    return row_op(l->name, l, l->h, l->err, &r);
}

int hist_load_op(struct chk_history *h, const char *name, int64_t op_id, const struct hist_op *op,
                 struct fl_buf *err)
{
    struct ld_row r = {.op = *op, .status = hist_status_name(op->status)};
    r.op.op_id = op_id;
    return row_op(name, NULL, h, err, &r);
}

int hist_load_error_kind(const char *error)
{
    return ld_error_kind(error);
}

int hist_load_finish(const char *name, struct chk_history *h, struct fl_buf *err)
{
    return ld_finish(name, h, err);
}

/* A query that stopped early: a damaged database says so (FL_ECORRUPT). */
static int read_fail(struct dbl *l, const char *table, int rc)
{
    if (hist__is_corrupt(rc)) {
        char why[384];
        int code = hist__corrupt_why(l->name, sqlite3_errmsg(l->db), why, sizeof why);
        fl_buf_printf(l->err, "%s: reading %s: %s", l->name, table, why);
        return code;
    }
    fl_buf_printf(l->err, "%s: reading %s: %s", l->name, table, sqlite3_errmsg(l->db));
    return FL_EIO;
}

static int db_ops(struct dbl *l, int64_t run_id)
{
    struct fl_buf sql;
    fl_buf_init(&sql);
    hist__select_sql(l->db, HIST_T_ops, "op_id", &sql);
    sqlite3_stmt *st;
    int rc = FL_OK;
    if (sqlite3_prepare_v2(l->db, fl_buf_cstr(&sql), -1, &st, NULL) != SQLITE_OK) {
        fl_buf_printf(l->err, "%s: not a faultline history (ops: %s)", l->name,
                      sqlite3_errmsg(l->db));
        fl_buf_close(&sql);
        return FL_EINVAL;
    }
    sqlite3_bind_int64(st, 1, run_id);
    int s = SQLITE_DONE;
    int64_t row = 0;
    while (!rc && (s = sqlite3_step(st)) == SQLITE_ROW)
        rc = db_op(l, st, ++row);
    if (!rc && s != SQLITE_DONE)
        rc = read_fail(l, "ops", s);
    sqlite3_finalize(st);
    fl_buf_close(&sql);
    return rc;
}

static int32_t blob_key(struct chk_history *h, const void *p, size_t n, bool range_end)
{
    if (!p)
        return range_end ? CHK_RANGE_ONE : chk_history_key(h, "", 0);
    if (range_end && n == 1 && ((const uint8_t *)p)[0] == 0)
        return CHK_RANGE_ALL;
    return chk_history_key(h, p, n);
}

static int32_t blob_value(struct chk_history *h, const void *p, size_t n)
{
    return p ? chk_history_value(h, p, n) : CHK_NIL;
}

static int64_t or_null(int64_t v, int64_t dflt)
{
    return v == HIST_NULL ? dflt : v;
}

void hist_load_watch(struct chk_history *h, const struct hist_watch *w)
{
    int32_t k = blob_key(h, w->key, w->key_len, false);
    int32_t e = blob_key(h, w->range_end, w->range_end_len, true);
    struct chk_watch *x = chk_history_watch_add(h);
    x->watch_id = w->watch_id;
    x->client = (int32_t)or_null(w->client_id, 0);
    x->key = k;
    x->range_end = e;
    x->start_rev = or_null(w->start_rev, 0);
    x->opened_ns = or_null(w->opened_ns, 0);
    x->closed_ns = or_null(w->closed_ns, CHK_NEVER);
    if (w->prev_kv == 1)
        x->flags |= CHK_WF_PREV_KV;
    if (w->progress_notify == 1)
        x->flags |= CHK_WF_PROGRESS_NOTIFY;
    if (w->filters && strstr(w->filters, "noput"))
        x->flags |= CHK_WF_NOPUT;
    if (w->filters && strstr(w->filters, "nodelete"))
        x->flags |= CHK_WF_NODELETE;
}

void hist_load_watch_event(struct chk_history *h, const struct hist_watch_event *ev, int kind)
{
    struct chk_wevent *e = chk_history_event_add(h);
    e->watch_id = ev->watch_id;
    FL_ASSERT(ev->seq >= 0 && ev->seq <= INT32_MAX); /* db_event checked it (V_I32) */
    e->seq = (uint32_t)ev->seq;
    e->response = or_null(ev->response_seq, ev->seq);
    e->kind = (uint8_t)kind;
    e->t_ns = or_null(ev->delivered_ns, 0);
    if (kind == CHK_EV_PROGRESS) {
        e->mod_rev = or_null(ev->revision, or_null(ev->mod_rev, 0));
        return;
    }
    int32_t ki = blob_key(h, ev->key, ev->key_len, false);
    int32_t vi = kind == CHK_EV_PUT ? blob_value(h, ev->value, ev->value_len) : CHK_NIL;
    int32_t pi =
        ev->prev_kv == 1 ? blob_value(h, ev->prev_value, ev->prev_value_len) : CHK_NOT_GIVEN;
    e = &h->events[h->event_count - 1];
    e->key = ki;
    e->value = vi;
    e->create_rev = or_null(ev->create_rev, CHK_NO_REV);
    e->mod_rev = or_null(ev->mod_rev, 0);
    e->version = or_null(ev->version, CHK_NO_REV);
    e->prev_value = pi;
}

/* Columns: 0 watch_id 1 client_id 2 key 3 range_end 4 start_rev 5 opened_ns 6 closed_ns
 * 7 prev_kv 8 progress_notify 9 filters. */
static int db_watch(struct dbl *l, sqlite3_stmt *st, int64_t row, int64_t *last_id)
{
    char wb[128];
    struct hist_watch w, *ldr = &w;
    hist_watch_init(&w);
    at_row(l, "watches", row);
    int rc = vint(l, st, 1, 0, &w.watch_id); /* first, so messages name it */
    if (rc)
        return rc;
    l->id = w.watch_id;
    if (row > 1 && w.watch_id == *last_id) {
        fl_buf_printf(l->err, "%s: %s: watch %lld opened twice", l->name, where(l, wb, sizeof wb),
                      (long long)w.watch_id);
        return FL_EINVAL;
    }
    *last_id = w.watch_id;
    int c = 0;
    HIST_WATCHES_COLUMNS(LD_READ_COL)
    if (rc)
        return rc;
    if (w.closed_ns != HIST_NULL && w.opened_ns != HIST_NULL && w.closed_ns < w.opened_ns) {
        fl_buf_printf(l->err, "%s: %s: closed (%lld) before it was opened (%lld)", l->name,
                      where(l, wb, sizeof wb), (long long)w.closed_ns, (long long)w.opened_ns);
        return FL_EINVAL;
    }
    hist_load_watch(l->h, &w);
    return FL_OK;
}

static int event_kind(const char *kind)
{
    return !kind                       ? -1
           : !strcmp(kind, "put")      ? CHK_EV_PUT
           : !strcmp(kind, "delete")   ? CHK_EV_DELETE
           : !strcmp(kind, "progress") ? CHK_EV_PROGRESS
                                       : -1;
}

/* Whether watch id was loaded (watches are in watch_id order). */
static bool watch_known(const struct chk_history *h, int64_t id)
{
    uint32_t lo = 0, hi = h->watch_count;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (h->watches[mid].watch_id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < h->watch_count && h->watches[lo].watch_id == id;
}

/* Columns: 0 watch_id 1 seq 2 response_seq 3 kind 4 key 5 value 6 create_rev 7 mod_rev
 * 8 version 9 prev_value 10 delivered_ns 11 prev_kv (or NULL) 12 revision (or NULL). */
static int db_event(struct dbl *l, sqlite3_stmt *st, int64_t row, bool epk)
{
    char w[128];
    struct hist_watch_event ev, *ldr = &ev;
    hist_watch_event_init(&ev);
    at_row(l, "watch_events", row);
    int rc = vint(l, st, 1, 0, &ev.watch_id); /* first, so messages name them */
    if (!rc)
        rc = vint(l, st, 2, V_I32, &ev.seq); /* chk_wevent.seq is 32-bit */
    if (rc)
        return rc;
    l->id = ev.watch_id;
    l->seq = ev.seq;
    int c = 0;
    HIST_WATCH_EVENTS_COLUMNS(LD_READ_COL)
    if (rc)
        return rc;
    int k = event_kind(ev.kind);
    if (k < 0) {
        fl_buf_printf(l->err, "%s: %s: unknown event kind \"%s\"", l->name, where(l, w, sizeof w),
                      ev.kind ? ev.kind : "NULL");
        return FL_EINVAL;
    }
    if (!watch_known(l->h, ev.watch_id)) {
        fl_buf_printf(l->err, "%s: %s: event of watch %lld that was never opened", l->name,
                      where(l, w, sizeof w), (long long)ev.watch_id);
        return FL_EINVAL;
    }
    /* a database without the prev_kv column: a prev value is given when there is one */
    if (!epk)
        ev.prev_kv = ev.prev_value != NULL;
    hist_load_watch_event(l->h, &ev, k);
    return FL_OK;
}

static int db_rows(struct dbl *l, enum hist_table_id t, const char *order, int64_t run_id,
                   sqlite3_stmt **st)
{
    struct fl_buf sql;
    fl_buf_init(&sql);
    hist__select_sql(l->db, t, order, &sql);
    int rc = sqlite3_prepare_v2(l->db, fl_buf_cstr(&sql), -1, st, NULL);
    fl_buf_close(&sql);
    if (rc != SQLITE_OK)
        return FL_ENOENT;
    sqlite3_bind_int64(*st, 1, run_id);
    return FL_OK;
}

static int db_watches(struct dbl *l, int64_t run_id)
{
    sqlite3_stmt *st;
    if (db_rows(l, HIST_T_watches, "watch_id", run_id, &st))
        return FL_OK; /* no watches table: no watches */
    int rc = FL_OK, s = SQLITE_DONE;
    int64_t row = 0, last = 0;
    while (!rc && (s = sqlite3_step(st)) == SQLITE_ROW)
        rc = db_watch(l, st, ++row, &last);
    if (!rc && s != SQLITE_DONE)
        rc = read_fail(l, "watches", s);
    sqlite3_finalize(st);
    if (rc)
        return rc;
    bool epk = table_has(l->db, "watch_events", "prev_kv");
    if (db_rows(l, HIST_T_watch_events, "watch_id, seq", run_id, &st))
        return FL_OK;
    row = 0;
    while (!rc && (s = sqlite3_step(st)) == SQLITE_ROW)
        rc = db_event(l, st, ++row, epk);
    if (!rc && s != SQLITE_DONE)
        rc = read_fail(l, "watch_events", s);
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
    int s;
    while ((s = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(st, 0);
        if (n < 20)
            fl_buf_printf(&ids, "%s%lld", n ? ", " : "", (long long)id);
        n++;
        only = id;
        found |= id == run_id;
    }
    sqlite3_finalize(st);
    int rc = FL_OK;
    if (s != SQLITE_DONE) {
        rc = read_fail(l, "runs", s);
    } else if (run_id > 0 && !found) {
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
    struct dbl l = {db, name, h, err, {0}, 0, "", 0, HIST_NULL, HIST_NULL};
    int64_t rid = 0;
    int rc = pick_run(&l, run_id, &rid);
    if (rc)
        return rc;
    if (run_id_out)
        *run_id_out = rid;
    l.run_id = rid;
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

/* A run that did not finish, or ended 'error', has an incomplete history: judging it
 * would pass over what is missing. */
static int run_finished(struct hist_db *db, const char *path, int64_t run_id, struct fl_buf *err)
{
    struct hist_run_row row;
    int rc = hist_run_get(db, run_id, &row);
    if (rc) {
        fl_buf_printf(err, "%s", hist_errmsg(db));
        return rc == FL_ENOENT ? FL_EINVAL : rc;
    }
    const char *v = row.verdict ? row.verdict : "NULL";
    if (!strcmp(v, "running"))
        fl_buf_printf(err,
                      "%s: run %lld never finished (verdict 'running': the process was killed "
                      "or a write failed before the run ended): its history is incomplete",
                      path, (long long)run_id);
    else if (!strcmp(v, "error"))
        fl_buf_printf(err, "%s: run %lld ended in error (%s): its history is incomplete", path,
                      (long long)run_id, row.reason ? row.reason : "no reason recorded");
    else if (strcmp(v, "pass") && strcmp(v, "fail") && strcmp(v, "unknown"))
        fl_buf_printf(err, "%s: run %lld has an unknown verdict '%s'", path, (long long)run_id, v);
    rc = err->len ? FL_EINVAL : FL_OK;
    hist_run_row_free(&row);
    return rc;
}

int hist_load_db_path(const char *path, int64_t run_id, struct chk_history *h, int64_t *run_id_out,
                      struct fl_buf *err)
{
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
    struct hist_db *db = NULL;
    char why[640];
    rc = hist_open(path, HIST_OPEN_READONLY, &db, why, sizeof why);
    if (rc) {
        fl_buf_printf(err, "%s", why);
        return rc == FL_ENOENT ? FL_EIO : rc;
    }
    int64_t rid = 0;
    struct fl_buf lerr;
    fl_buf_init(&lerr);
    rc = load_sqlite(hist_sqlite(db), path, run_id, h, &rid, &lerr);
    /* An unfinished or failed run is refused first: its reason explains the rest. */
    int frc = rid ? run_finished(db, path, rid, err) : FL_OK;
    if (frc)
        rc = frc;
    else if (rc)
        fl_buf_append(err, lerr.data, lerr.len);
    fl_buf_close(&lerr);
    if (!rc && run_id_out)
        *run_id_out = rid;
    hist_close(db);
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
