/*
 * history_rec.c: the recording side of the history: one function per table, each
 * binding a prepared statement, writing it inside the batch transaction and folding
 * the same row into the run digest.
 *
 * Binding and folding come from the column lists of hist_schema.h (one row function
 * per table, row_TABLE below). Digest format of a row: a tag naming the table, then
 * every DIG column in schema order (the run_id excepted: it depends on what else the
 * database holds),
 * integers as 8 little-endian bytes with HIST_NULL for NULL, texts and blobs length-
 * prefixed with a distinct marker for NULL. Wall-clock columns (checks.elapsed_ms) are
 * never folded.
 */
#include "harness/history/history_int.h"

#include <endian.h>

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
 * cost. The appends are inline and check the room once each (the buffer keeps its
 * capacity from row to row): folding an ops row took ~3,500 instructions through
 * fl_buf_append, ~1,100 this way. */
static inline void dig_put(struct hist_db *db, const void *p, size_t n)
{
    if (db->dig.cap - db->dig.len < n)
        fl_buf_reserve(&db->dig, n);
    memcpy(db->dig.data + db->dig.len, p, n);
    db->dig.len += n;
}

/* A whole little-endian store: the byte loop it replaces was not merged by gcc and
 * cost 16.5 M of the e2e bench's instructions (about 1,000 per recorded op). */
static inline void dig_u64(struct hist_db *db, uint64_t v)
{
    v = htole64(v);
    dig_put(db, &v, 8);
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
static inline void dig_bytes(struct hist_db *db, const void *p, size_t n)
{
    if (n < 512) {
        if (n)
            dig_put(db, p, n);
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

/* ---- one row function per table, from hist_schema.h -------------------------------- */

/* Binds row (a struct TYPE) to the table's INSERT, writes it and folds its DIG columns
 * under the tag. */
#define HIST_ROW_FN(fn, TYPE, list, stmt, tag, what)                                               \
    static int fn(struct hist_db *hist__db, const TYPE *hist__row)                                 \
    {                                                                                              \
        sqlite3_stmt *hist__st = hist__db->st[stmt];                                               \
        int hist__c = 1;                                                                           \
        sqlite3_bind_int64(hist__st, 1, hist__db->run_id);                                         \
        list(HIST_BIND_COL);                                                                       \
        int rc = hist__write(hist__db, hist__st, what);                                            \
        if (rc)                                                                                    \
            return rc;                                                                             \
        hist__dig_tag(hist__db, tag);                                                              \
        list(HIST_DIG_COL);                                                                        \
        hist__dig_end(hist__db);                                                                   \
        (void)hist__c;                                                                             \
        return FL_OK;                                                                              \
    }

HIST_ROW_FN(row_ops, struct hist_op, HIST_OPS_COLUMNS, HIST_ST_OP, "op", "ops")
HIST_ROW_FN(row_watches, struct hist_watch, HIST_WATCHES_COLUMNS, HIST_ST_WATCH, "watch", "watches")
HIST_ROW_FN(row_watch_events, struct hist_watch_event, HIST_WATCH_EVENTS_COLUMNS,
            HIST_ST_WATCH_EVENT, "watch_event", "watch_events")
HIST_ROW_FN(row_faults, struct hist_fault, HIST_FAULTS_COLUMNS, HIST_ST_FAULT, "fault", "faults")
HIST_ROW_FN(row_node_events, struct hist_node_event, HIST_NODE_EVENTS_COLUMNS, HIST_ST_NODE_EVENT,
            "node_event", "node_events")
HIST_ROW_FN(row_checks, struct hist_check, HIST_CHECKS_COLUMNS, HIST_ST_CHECK, "check", "checks")
HIST_ROW_FN(row_clients, struct hist_client, HIST_CLIENTS_COLUMNS, HIST_ST_CLIENT, "client",
            "clients")

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
    struct hist_op *hist__row = op;
    memset(op, 0, sizeof *op);
    HIST_OPS_COLUMNS(HIST_INIT_COL)
}

int hist_op_add(struct hist_db *db, const struct hist_op *op, int64_t *op_id_out)
{
    int rc = ready(db);
    if (rc)
        return rc;
    struct hist_op row = *op;
    row.op_id = op->op_id == HIST_NULL || op->op_id <= 0 ? db->op_id_max + 1 : op->op_id;
    rc = row_ops(db, &row);
    if (rc)
        return rc;
    if (row.op_id > db->op_id_max)
        db->op_id_max = row.op_id;
    if (op_id_out)
        *op_id_out = row.op_id;
    return FL_OK;
}

/* ---- watches -------------------------------------------------------------------------- */

void hist_watch_init(struct hist_watch *w)
{
    struct hist_watch *hist__row = w;
    memset(w, 0, sizeof *w);
    HIST_WATCHES_COLUMNS(HIST_INIT_COL)
}

int hist_watch_open(struct hist_db *db, const struct hist_watch *w)
{
    int rc = ready(db);
    if (rc)
        return rc;
    FL_ASSERT(w->watch_id != HIST_NULL);
    return row_watches(db, w);
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
    struct hist_watch_event *hist__row = ev;
    memset(ev, 0, sizeof *ev);
    HIST_WATCH_EVENTS_COLUMNS(HIST_INIT_COL)
}

int hist_watch_event_add(struct hist_db *db, const struct hist_watch_event *ev)
{
    int rc = ready(db);
    if (rc)
        return rc;
    FL_ASSERT(ev->watch_id != HIST_NULL);
    struct hist_watch_event row = *ev;
    row.seq = ev->seq == HIST_NULL ? db->wev_seq + 1 : ev->seq;
    rc = row_watch_events(db, &row);
    if (rc)
        return rc;
    if (row.seq > db->wev_seq)
        db->wev_seq = row.seq;
    return FL_OK;
}

/* ---- faults, node events, checks ------------------------------------------------------- */

int hist_fault_add(struct hist_db *db, int64_t at_ns, const char *kind, const char *target,
                   const char *detail)
{
    int rc = ready(db);
    if (rc)
        return rc;
    struct hist_fault row = {
        .at_ns = at_ns, .seq = db->fault_seq + 1, .kind = kind, .target = target, .detail = detail};
    rc = row_faults(db, &row);
    if (!rc)
        db->fault_seq = row.seq;
    return rc;
}

int hist_node_event_add(struct hist_db *db, int64_t at_ns, int64_t node_id, const char *kind,
                        int64_t term, const char *detail)
{
    return hist_node_event_add_typed(db, at_ns, node_id, kind, term, detail, NULL);
}

int hist_node_event_add_typed(struct hist_db *db, int64_t at_ns, int64_t node_id, const char *kind,
                              int64_t term, const char *detail, const struct hist_node_fields *f)
{
    int rc = ready(db);
    if (rc)
        return rc;
    /* NULL for an absent typed integer (HIST_NULL) or string. */
    struct hist_node_fields none = {HIST_NULL, HIST_NULL, NULL, NULL, NULL, HIST_NULL};
    struct hist_node_event row = {.at_ns = at_ns,
                                  .seq = db->node_seq + 1,
                                  .node_id = node_id,
                                  .term = term,
                                  .kind = kind,
                                  .detail = detail,
                                  .f = f ? *f : none};
    rc = row_node_events(db, &row);
    if (!rc)
        db->node_seq = row.seq;
    return rc;
}

int hist_client_add(struct hist_db *db, int64_t client_id, const char *balancer, const char *stats,
                    const char *attempts)
{
    int rc = ready(db);
    if (rc)
        return rc;
    struct hist_client row = {
        .client_id = client_id, .balancer = balancer, .stats = stats, .attempts = attempts};
    return row_clients(db, &row);
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
    struct hist_check row = {.seq = db->check_seq + 1,
                             .elapsed_ms = elapsed_ms,
                             .checker = checker,
                             .verdict = verdict,
                             .detail = detail};
    rc = row_checks(db, &row);
    if (!rc)
        db->check_seq = row.seq;
    return rc;
}
