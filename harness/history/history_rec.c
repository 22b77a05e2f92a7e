/*
 * history_rec.c: the recording side of the history: one function per table, each
 * binding a prepared statement, writing it inside the batch transaction and folding
 * the same row into the run digest.
 *
 * Digest format of a row: a tag naming the table, then every column the row carries
 * in schema order (the run_id excepted: it depends on what else the database holds),
 * integers as 8 little-endian bytes with HIST_NULL for NULL, texts and blobs length-
 * prefixed with a distinct marker for NULL. Wall-clock columns (checks.elapsed_ms) are
 * never folded.
 */
#include "harness/history/history_int.h"

/* ---- binding and folding helpers ---------------------------------------------------- */

void hist__bind_i64(sqlite3_stmt *st, int col, int64_t v)
{
    if (v == HIST_NULL)
        sqlite3_bind_null(st, col);
    else
        sqlite3_bind_int64(st, col, v);
}

void hist__bind_text(sqlite3_stmt *st, int col, const char *s)
{
    if (!s)
        sqlite3_bind_null(st, col);
    else
        sqlite3_bind_text(st, col, s, -1, SQLITE_STATIC);
}

void hist__bind_blob(sqlite3_stmt *st, int col, const void *p, size_t n)
{
    if (!p)
        sqlite3_bind_null(st, col);
    else if (n == 0)
        sqlite3_bind_zeroblob(st, col, 0);
    else
        sqlite3_bind_blob64(st, col, p, (sqlite3_uint64)n, SQLITE_STATIC);
}

/* The row's digest bytes are gathered in db->dig and handed to the digest in one
 * update per row (hist__dig_end), long fields apart (dig_bytes): the same bytes as
 * folding field by field, since the hash is streaming, at a fraction of the per-call
 * cost. */
static void dig_u64(struct hist_db *db, uint64_t v)
{
    uint8_t b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (uint8_t)(v >> (8 * i));
    fl_buf_append(&db->dig, b, 8);
}

void hist__dig_tag(struct hist_db *db, const char *tag)
{
    hist__dig_str(db, tag);
}

void hist__dig_i64(struct hist_db *db, int64_t v)
{
    if (db->digest)
        dig_u64(db, (uint64_t)v);
}

/* Bytes of a field: gathered, or when long (a range response's JSON) handed over
 * where they are after what was gathered, without a copy: the same byte stream. */
static void dig_bytes(struct hist_db *db, const void *p, size_t n)
{
    if (n < 512) {
        fl_buf_append(&db->dig, p, n);
        return;
    }
    if (db->dig.len)
        fl_digest_update(db->digest, db->dig.data, db->dig.len);
    fl_buf_reset(&db->dig);
    fl_digest_update(db->digest, p, n);
}

void hist__dig_str(struct hist_db *db, const char *s)
{
    if (!db->digest)
        return;
    if (!s) {
        dig_u64(db, UINT64_MAX);
        return;
    }
    size_t n = strlen(s);
    dig_u64(db, n);
    dig_bytes(db, s, n);
}

void hist__dig_blob(struct hist_db *db, const void *p, size_t n)
{
    if (!db->digest)
        return;
    if (!p) {
        dig_u64(db, UINT64_MAX);
        return;
    }
    dig_u64(db, n);
    dig_bytes(db, p, n);
}

void hist__dig_end(struct hist_db *db)
{
    if (db->digest && db->dig.len)
        fl_digest_update(db->digest, db->dig.data, db->dig.len);
    fl_buf_reset(&db->dig);
}

/* Checks that recording is possible: a current run and no sticky error. */
static int ready(struct hist_db *db)
{
    FL_ASSERTF(db->run_id > 0, "history: recording outside a run (%s)", db->path);
    if (db->err)
        return db->err;
    return hist__tx(db);
}

/* ---- status names ------------------------------------------------------------------- */

static const char *const status_names[] = {"ok", "fail", "unknown"};

const char *hist_status_name(enum hist_status s)
{
    FL_ASSERT((unsigned)s < FL_ARRAY_LEN(status_names));
    return status_names[s];
}

bool hist_status_parse(const char *s, enum hist_status *out)
{
    for (size_t i = 0; s && i < FL_ARRAY_LEN(status_names); i++) {
        if (!strcmp(s, status_names[i])) {
            *out = (enum hist_status)i;
            return true;
        }
    }
    return false;
}

/* ---- ops ------------------------------------------------------------------------------ */

void hist_op_init(struct hist_op *op)
{
    memset(op, 0, sizeof *op);
    op->op_id = HIST_NULL;
    op->client_id = HIST_NULL;
    op->node_id = HIST_NULL;
    op->call_ns = HIST_NULL;
    op->return_ns = HIST_NULL;
    op->status = HIST_STATUS_UNKNOWN;
    op->revision = HIST_NULL;
    op->mod_rev = HIST_NULL;
    op->create_rev = HIST_NULL;
    op->version = HIST_NULL;
    op->succeeded = HIST_NULL;
    op->deleted = HIST_NULL;
}

static void op_digest(struct hist_db *d, int64_t op_id, const struct hist_op *op)
{
    hist__dig_tag(d, "op");
    hist__dig_i64(d, op_id);
    hist__dig_i64(d, op->client_id);
    hist__dig_i64(d, op->node_id);
    hist__dig_str(d, op->kind);
    hist__dig_blob(d, op->key, op->key_len);
    hist__dig_blob(d, op->range_end, op->range_end_len);
    hist__dig_str(d, op->request);
    hist__dig_i64(d, op->call_ns);
    hist__dig_i64(d, op->return_ns);
    hist__dig_i64(d, op->status);
    hist__dig_str(d, op->error);
    hist__dig_i64(d, op->revision);
    hist__dig_str(d, op->response);
    hist__dig_blob(d, op->value, op->value_len);
    hist__dig_blob(d, op->expect, op->expect_len);
    hist__dig_i64(d, op->mod_rev);
    hist__dig_i64(d, op->create_rev);
    hist__dig_i64(d, op->version);
    hist__dig_i64(d, op->succeeded);
    hist__dig_i64(d, op->deleted);
    hist__dig_end(d);
}

int hist_op_add(struct hist_db *db, const struct hist_op *op, int64_t *op_id_out)
{
    int rc = ready(db);
    if (rc)
        return rc;
    int64_t op_id = op->op_id == HIST_NULL || op->op_id <= 0 ? db->op_id_max + 1 : op->op_id;
    sqlite3_stmt *st = db->st[HIST_ST_OP];
    sqlite3_bind_int64(st, 1, db->run_id);
    sqlite3_bind_int64(st, 2, op_id);
    hist__bind_i64(st, 3, op->client_id);
    hist__bind_i64(st, 4, op->node_id);
    hist__bind_text(st, 5, op->kind);
    hist__bind_blob(st, 6, op->key, op->key_len);
    hist__bind_blob(st, 7, op->range_end, op->range_end_len);
    hist__bind_text(st, 8, op->request);
    hist__bind_i64(st, 9, op->call_ns);
    hist__bind_i64(st, 10, op->return_ns);
    sqlite3_bind_text(st, 11, hist_status_name(op->status), -1, SQLITE_STATIC);
    hist__bind_text(st, 12, op->error);
    hist__bind_i64(st, 13, op->revision);
    hist__bind_text(st, 14, op->response);
    hist__bind_blob(st, 15, op->value, op->value_len);
    hist__bind_blob(st, 16, op->expect, op->expect_len);
    hist__bind_i64(st, 17, op->mod_rev);
    hist__bind_i64(st, 18, op->create_rev);
    hist__bind_i64(st, 19, op->version);
    hist__bind_i64(st, 20, op->succeeded);
    hist__bind_i64(st, 21, op->deleted);
    rc = hist__write(db, st, "ops");
    if (rc)
        return rc;
    if (op_id > db->op_id_max)
        db->op_id_max = op_id;
    op_digest(db, op_id, op);
    if (op_id_out)
        *op_id_out = op_id;
    return FL_OK;
}

/* ---- watches -------------------------------------------------------------------------- */

void hist_watch_init(struct hist_watch *w)
{
    memset(w, 0, sizeof *w);
    w->watch_id = HIST_NULL;
    w->client_id = HIST_NULL;
    w->node_id = HIST_NULL;
    w->start_rev = HIST_NULL;
    w->opened_ns = HIST_NULL;
    w->closed_ns = HIST_NULL;
    w->prev_kv = HIST_NULL;
    w->progress_notify = HIST_NULL;
}

int hist_watch_open(struct hist_db *db, const struct hist_watch *w)
{
    int rc = ready(db);
    if (rc)
        return rc;
    FL_ASSERT(w->watch_id != HIST_NULL);
    sqlite3_stmt *st = db->st[HIST_ST_WATCH];
    sqlite3_bind_int64(st, 1, db->run_id);
    sqlite3_bind_int64(st, 2, w->watch_id);
    hist__bind_i64(st, 3, w->client_id);
    hist__bind_blob(st, 4, w->key, w->key_len);
    hist__bind_blob(st, 5, w->range_end, w->range_end_len);
    hist__bind_i64(st, 6, w->start_rev);
    hist__bind_i64(st, 7, w->opened_ns);
    hist__bind_i64(st, 8, w->node_id);
    hist__bind_i64(st, 9, w->prev_kv);
    hist__bind_i64(st, 10, w->progress_notify);
    hist__bind_text(st, 11, w->filters);
    hist__bind_text(st, 12, w->request);
    rc = hist__write(db, st, "watches");
    if (rc)
        return rc;
    struct hist_db *d = db;
    hist__dig_tag(d, "watch");
    hist__dig_i64(d, w->watch_id);
    hist__dig_i64(d, w->client_id);
    hist__dig_blob(d, w->key, w->key_len);
    hist__dig_blob(d, w->range_end, w->range_end_len);
    hist__dig_i64(d, w->start_rev);
    hist__dig_i64(d, w->opened_ns);
    hist__dig_i64(d, w->node_id);
    hist__dig_i64(d, w->prev_kv);
    hist__dig_i64(d, w->progress_notify);
    hist__dig_str(d, w->filters);
    hist__dig_str(d, w->request);
    hist__dig_end(d);
    return FL_OK;
}

int hist_watch_close(struct hist_db *db, int64_t watch_id, int64_t closed_ns,
                     const char *close_reason)
{
    int rc = ready(db);
    if (rc)
        return rc;
    sqlite3_stmt *st = db->st[HIST_ST_WATCH_CLOSE];
    sqlite3_bind_int64(st, 1, db->run_id);
    sqlite3_bind_int64(st, 2, watch_id);
    hist__bind_i64(st, 3, closed_ns);
    hist__bind_text(st, 4, close_reason);
    rc = hist__write(db, st, "watches");
    if (rc)
        return rc;
    if (sqlite3_changes(db->db) == 0)
        return hist__fail(db, FL_ENOENT, "closing watch %lld that was never opened",
                          (long long)watch_id);
    struct hist_db *d = db;
    hist__dig_tag(d, "watch_close");
    hist__dig_i64(d, watch_id);
    hist__dig_i64(d, closed_ns);
    hist__dig_str(d, close_reason);
    hist__dig_end(d);
    return FL_OK;
}

void hist_watch_event_init(struct hist_watch_event *ev)
{
    memset(ev, 0, sizeof *ev);
    ev->watch_id = HIST_NULL;
    ev->seq = HIST_NULL;
    ev->response_seq = HIST_NULL;
    ev->create_rev = HIST_NULL;
    ev->mod_rev = HIST_NULL;
    ev->version = HIST_NULL;
    ev->prev_kv = HIST_NULL;
    ev->prev_mod_rev = HIST_NULL;
    ev->revision = HIST_NULL;
    ev->delivered_ns = HIST_NULL;
}

static void wev_digest(struct hist_db *d, int64_t seq, const struct hist_watch_event *ev)
{
    hist__dig_tag(d, "watch_event");
    hist__dig_i64(d, ev->watch_id);
    hist__dig_i64(d, seq);
    hist__dig_i64(d, ev->response_seq);
    hist__dig_str(d, ev->kind);
    hist__dig_blob(d, ev->key, ev->key_len);
    hist__dig_blob(d, ev->value, ev->value_len);
    hist__dig_i64(d, ev->create_rev);
    hist__dig_i64(d, ev->mod_rev);
    hist__dig_i64(d, ev->version);
    hist__dig_blob(d, ev->prev_value, ev->prev_value_len);
    hist__dig_i64(d, ev->delivered_ns);
    hist__dig_i64(d, ev->revision);
    hist__dig_i64(d, ev->prev_kv);
    hist__dig_i64(d, ev->prev_mod_rev);
    hist__dig_end(d);
}

int hist_watch_event_add(struct hist_db *db, const struct hist_watch_event *ev)
{
    int rc = ready(db);
    if (rc)
        return rc;
    FL_ASSERT(ev->watch_id != HIST_NULL);
    int64_t seq = ev->seq == HIST_NULL ? db->wev_seq + 1 : ev->seq;
    sqlite3_stmt *st = db->st[HIST_ST_WATCH_EVENT];
    sqlite3_bind_int64(st, 1, db->run_id);
    sqlite3_bind_int64(st, 2, ev->watch_id);
    sqlite3_bind_int64(st, 3, seq);
    hist__bind_i64(st, 4, ev->response_seq);
    hist__bind_text(st, 5, ev->kind);
    hist__bind_blob(st, 6, ev->key, ev->key_len);
    hist__bind_blob(st, 7, ev->value, ev->value_len);
    hist__bind_i64(st, 8, ev->create_rev);
    hist__bind_i64(st, 9, ev->mod_rev);
    hist__bind_i64(st, 10, ev->version);
    hist__bind_blob(st, 11, ev->prev_value, ev->prev_value_len);
    hist__bind_i64(st, 12, ev->delivered_ns);
    hist__bind_i64(st, 13, ev->revision);
    hist__bind_i64(st, 14, ev->prev_kv);
    hist__bind_i64(st, 15, ev->prev_mod_rev);
    rc = hist__write(db, st, "watch_events");
    if (rc)
        return rc;
    if (seq > db->wev_seq)
        db->wev_seq = seq;
    wev_digest(db, seq, ev);
    return FL_OK;
}

/* ---- faults, node events, checks ------------------------------------------------------- */

int hist_fault_add(struct hist_db *db, int64_t at_ns, const char *kind, const char *target,
                   const char *detail)
{
    int rc = ready(db);
    if (rc)
        return rc;
    int64_t seq = db->fault_seq + 1;
    sqlite3_stmt *st = db->st[HIST_ST_FAULT];
    sqlite3_bind_int64(st, 1, db->run_id);
    hist__bind_i64(st, 2, at_ns);
    hist__bind_text(st, 3, kind);
    hist__bind_text(st, 4, target);
    hist__bind_text(st, 5, detail);
    sqlite3_bind_int64(st, 6, seq);
    rc = hist__write(db, st, "faults");
    if (rc)
        return rc;
    db->fault_seq = seq;
    struct hist_db *d = db;
    hist__dig_tag(d, "fault");
    hist__dig_i64(d, at_ns);
    hist__dig_str(d, kind);
    hist__dig_str(d, target);
    hist__dig_str(d, detail);
    hist__dig_i64(d, seq);
    hist__dig_end(d);
    return FL_OK;
}

int hist_node_event_add(struct hist_db *db, int64_t at_ns, int64_t node_id, const char *kind,
                        int64_t term, const char *detail)
{
    return hist_node_event_add_typed(db, at_ns, node_id, kind, term, detail, NULL);
}

/* NULL for an absent typed integer (HIST_NULL) or string. */
static void bind_typed(sqlite3_stmt *st, const struct hist_node_fields *f)
{
    struct hist_node_fields none = {HIST_NULL, HIST_NULL, NULL, NULL, NULL, HIST_NULL};
    if (!f)
        f = &none;
    hist__bind_i64(st, 8, f->peer);
    hist__bind_i64(st, 9, f->log_index);
    hist__bind_text(st, 10, f->from_state);
    hist__bind_text(st, 11, f->to_state);
    hist__bind_text(st, 12, f->reason);
    hist__bind_i64(st, 13, f->pre);
}

int hist_node_event_add_typed(struct hist_db *db, int64_t at_ns, int64_t node_id, const char *kind,
                              int64_t term, const char *detail, const struct hist_node_fields *f)
{
    int rc = ready(db);
    if (rc)
        return rc;
    int64_t seq = db->node_seq + 1;
    sqlite3_stmt *st = db->st[HIST_ST_NODE_EVENT];
    sqlite3_bind_int64(st, 1, db->run_id);
    hist__bind_i64(st, 2, at_ns);
    hist__bind_i64(st, 3, node_id);
    hist__bind_text(st, 4, kind);
    hist__bind_i64(st, 5, term);
    hist__bind_text(st, 6, detail);
    sqlite3_bind_int64(st, 7, seq);
    /* The typed columns are not folded into the digest: each is a function of the event
     * whose kind, term and detail are (DESIGN §2), so bundled digests stay as they were. */
    bind_typed(st, f);
    rc = hist__write(db, st, "node_events");
    if (rc)
        return rc;
    db->node_seq = seq;
    struct hist_db *d = db;
    hist__dig_tag(d, "node_event");
    hist__dig_i64(d, at_ns);
    hist__dig_i64(d, node_id);
    hist__dig_str(d, kind);
    hist__dig_i64(d, term);
    hist__dig_str(d, detail);
    hist__dig_i64(d, seq);
    hist__dig_end(d);
    return FL_OK;
}

int hist_client_add(struct hist_db *db, int64_t client_id, const char *balancer, const char *stats,
                    const char *attempts)
{
    int rc = ready(db);
    if (rc)
        return rc;
    sqlite3_stmt *st = db->st[HIST_ST_CLIENT];
    sqlite3_bind_int64(st, 1, db->run_id);
    hist__bind_i64(st, 2, client_id);
    hist__bind_text(st, 3, balancer);
    hist__bind_text(st, 4, stats);
    hist__bind_text(st, 5, attempts);
    rc = hist__write(db, st, "clients");
    if (rc)
        return rc;
    struct hist_db *d = db;
    hist__dig_tag(d, "client");
    hist__dig_i64(d, client_id);
    hist__dig_str(d, balancer);
    hist__dig_str(d, stats);
    hist__dig_str(d, attempts);
    hist__dig_end(d);
    return FL_OK;
}

int hist_check_add(struct hist_db *db, const char *checker, const char *verdict, int64_t elapsed_ms,
                   const char *detail)
{
    if (!verdict || (strcmp(verdict, "pass") && strcmp(verdict, "fail") &&
                     strcmp(verdict, "unknown") && strcmp(verdict, "error")))
        return hist__fail(db, FL_EINVAL, "check '%s': bad verdict '%s'",
                          checker ? checker : "(null)", verdict ? verdict : "(null)");
    int rc = ready(db);
    if (rc)
        return rc;
    int64_t seq = db->check_seq + 1;
    sqlite3_stmt *st = db->st[HIST_ST_CHECK];
    sqlite3_bind_int64(st, 1, db->run_id);
    hist__bind_text(st, 2, checker);
    hist__bind_text(st, 3, verdict);
    hist__bind_i64(st, 4, elapsed_ms);
    hist__bind_text(st, 5, detail);
    sqlite3_bind_int64(st, 6, seq);
    rc = hist__write(db, st, "checks");
    if (rc)
        return rc;
    db->check_seq = seq;
    struct hist_db *d = db;
    hist__dig_tag(d, "check");
    hist__dig_str(d, checker);
    hist__dig_str(d, verdict);
    hist__dig_str(d, detail); /* elapsed_ms is wall time: never folded */
    hist__dig_i64(d, seq);
    hist__dig_end(d);
    return FL_OK;
}
