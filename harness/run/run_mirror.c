/*
 * run_mirror.c: the history the checkers judge at the end of a run, kept in memory
 * while the run records it, so the checkers need not read every row back from SQLite
 * and parse its JSON again (that reload was half of what a recorded run cost).
 *
 * The mirror must be exactly what hist_load_db would load from the database: the same
 * operations in op_id order, the same interned ids in the same first-seen order, the
 * same watches (by watch_id) and events (by watch_id, seq), the same flags. Rows go in
 * two ways:
 *   - the workload's kinds (get/range, put, delete, txn) straight from the client's
 *     request and result, following the loader's rules for the JSON the recorder
 *     writes for them (load_op.c: add_sub, range_result, build_txn), without JSON;
 *   - everything else (leases, compactions, members, system ops, odd shapes) through
 *     hist_load_op, the loader's own code on the row's text.
 * Watches and events are kept as rows and interned at the end, in the loader's order.
 * Whatever the mirror cannot follow (a failed write, an op the loader would refuse,
 * a NUL inside a JSON string) marks it broken, and the checkers then load the
 * database as before. Two cross-checks keep the paths together:
 *   - every RUN_MIRROR_SPOT_EVERY-th op of every run, whatever its size, goes both
 *     ways into two scratch histories (the fast path, and hist_load_op on the row's
 *     text, which is what the database load runs on each row) and they must be equal,
 *     as long as the ops checked so far hold at most 1/RUN_MIRROR_SPOT_SHARE of the
 *     request and response text recorded (the check parses JSON with jansson, ~270
 *     instructions a byte: every 32nd op of a saturated run, whose range responses
 *     are 10 KiB, cost 8,500 instructions per recorded op, a fifth of recording;
 *     within the share it costs about 1,000, and any kind and size of op is still
 *     picked as the run goes);
 *   - histories of up to RUN_MIRROR_VERIFY_OPS operations, and every history when the
 *     run asks for it (verify_history, or FAULTLINE_VERIFY_HISTORY=1 in the
 *     environment, as the test suite sets for all its runs), are also loaded from the
 *     database and compared whole.
 * A difference is an internal error of the run (exit 3, the run recorded 'error' with the reason,
 * never an abort that leaves its row unfinished): the two paths cannot drift apart
 * unnoticed. A database that cannot be read back (damaged) is FL_ECORRUPT.
 */
#include "harness/run/run_int.h"

#include "harness/history/load.h"

#define RUN_MIRROR_VERIFY_OPS 3000
#define RUN_MIRROR_SPOT_EVERY 32
#define RUN_MIRROR_SPOT_SHARE 256

/* A watches row as hist_watch_open wrote it (and its close), bytes kept in the mirror. */
/* The row as the loader will be given it (w, ev: the caller's, its pointers NULL), and
 * where its bytes are kept. */
struct run_mirror_watch {
    struct hist_watch w;
    int64_t key_off, range_end_off, filters_off; /* into bytes; -1: NULL */
    size_t filters_len;
};

struct run_mirror_event {
    struct hist_watch_event ev;
    int64_t key_off, value_off, prev_off; /* into bytes; -1: NULL */
    int kind;                             /* enum chk_ev_kind */
};

void run_mirror_init(struct run_world *rw)
{
    struct run_mirror *m = &rw->mirror;
    memset(m, 0, sizeof *m);
    chk_history_init(&m->h);
    fl_buf_init(&m->bytes);
    m->on = rw->db != NULL;
}

void run_mirror_close(struct run_world *rw)
{
    struct run_mirror *m = &rw->mirror;
    chk_history_close(&m->h);
    fl_buf_close(&m->bytes);
    free(m->watches);
    free(m->watch_ids);
    free(m->watch_at);
    free(m->events);
    memset(m, 0, sizeof *m);
}

void run_mirror_break(struct run_world *rw)
{
    rw->mirror.broken = true;
}

/* Copies p[0..n) into the mirror's bytes: *off where it went (-1 for NULL), *len its
 * length (0 for NULL). */
static void keep(struct run_mirror *m, const void *p, size_t n, int64_t *off, size_t *len)
{
    *off = p ? (int64_t)m->bytes.len : -1;
    *len = p ? n : 0;
    if (p)
        fl_buf_append(&m->bytes, p, n);
}

static const void *kept(const struct run_mirror *m, int64_t off)
{
    return off < 0 ? NULL : m->bytes.data ? m->bytes.data + off : (const void *)"";
}

/* ---- operations: the fast path --------------------------------------------------- */

static const void *bp(struct kvc_bytes b)
{
    return b.p ? (const void *)b.p : "";
}

static int sub_kind(enum kvc_op_kind k)
{
    return k == KVC_OP_RANGE ? CHK_SUB_RANGE : k == KVC_OP_PUT ? CHK_SUB_PUT : CHK_SUB_DELETE;
}

static void add_kv(struct chk_history *h, const struct kvc_kv *kv)
{
    int32_t key = chk_history_key(h, bp(kv->key), kv->key.n);
    int32_t value = chk_history_value(h, bp(kv->value), kv->value.n);
    struct chk_kv *k = chk_history_kv_add(h);
    k->key = key;
    k->value = value;
    k->create_rev = kv->create_rev;
    k->mod_rev = kv->mod_rev;
    k->version = kv->version;
}

/* load_op.c add_sub for the request JSON of op and, when r is not NULL, the result
 * JSON of r (whose kind is op's: checked by the caller). top: the call's own op, whose
 * row also carries range_end in its column (a txn's put has none in its JSON). */
static void add_sub(struct chk_history *h, const struct kvc_op *op, const struct kvc_op_result *r,
                    bool else_branch, bool top)
{
    int kind = sub_kind(op->kind);
    int32_t key = chk_history_key(h, bp(op->key), op->key.n);
    int32_t end = CHK_RANGE_ONE;
    if (op->range_end.n && (top || op->kind != KVC_OP_PUT))
        end = op->range_end.n == 1 && op->range_end.p[0] == 0
                  ? CHK_RANGE_ALL
                  : chk_history_key(h, op->range_end.p, op->range_end.n);
    int32_t value =
        kind == CHK_SUB_PUT ? chk_history_value(h, bp(op->value), op->value.n) : CHK_NIL;
    struct chk_sub *s = chk_history_sub_add(h, else_branch);
    s->kind = (uint8_t)kind;
    s->key = key;
    s->range_end = end;
    s->value = value;
    s->req_rev = kind == CHK_SUB_RANGE ? op->revision : 0;
    if (kind == CHK_SUB_PUT) {
        chk_history_sub_lease_set(h, s, op->lease);
        if (op->lease != 0)
            h->revisions_complete = false;
    }
    s->limit = kind == CHK_SUB_RANGE ? chk_limit32(op->limit) : 0;
    if (op->prev_kv && kind != CHK_SUB_RANGE)
        s->flags |= CHK_SUBF_PREV_KV;
    if (!r)
        return;
    uint32_t si = h->sub_count - 1;
    s->flags |= CHK_SUBF_RESULT_SET;
    if (kind == CHK_SUB_RANGE) {
        s->flags |= CHK_SUBF_KVS_SET;
        for (size_t i = 0; i < r->kv_count; i++)
            add_kv(h, &r->kvs[i]);
        s = &h->subs[si];
        if (chk_count_fits(r->count)) { /* else not a real count: left unjudged */
            s->count = (int32_t)r->count;
            s->flags |= CHK_SUBF_COUNT_SET;
        }
    } else if (kind == CHK_SUB_DELETE) {
        if (chk_count_fits(r->deleted)) {
            s->count = (int32_t)r->deleted;
            s->flags |= CHK_SUBF_COUNT_SET;
        }
        if (r->prev_kv_count && (s->flags & CHK_SUBF_PREV_KV)) {
            s->flags |= CHK_SUBF_KVS_SET;
            for (size_t i = 0; i < r->prev_kv_count; i++)
                add_kv(h, &r->prev_kvs[i]);
        }
    } else if (s->flags & CHK_SUBF_PREV_KV) {
        s->flags |= CHK_SUBF_KVS_SET;
        if (r->has_prev_kv)
            add_kv(h, &r->prev_kv);
    }
}

static enum kvc_op_kind method_kind(enum kvc_method m)
{
    return m == KVC_RANGE ? KVC_OP_RANGE : m == KVC_PUT ? KVC_OP_PUT : KVC_OP_DELETE;
}

/* Whether the fast path gives what the loader would: a workload kind whose JSON has
 * the shapes add_sub/build_txn read, with results of the kinds asked for. */
static bool fast_ok(const struct kvc_request *req, const struct kvc_result *res, bool ok)
{
    switch (req->method) {
    case KVC_RANGE:
    case KVC_PUT:
    case KVC_DELETE:
        return req->op.kind == method_kind(req->method) && (!ok || res->op.kind == req->op.kind);
    case KVC_TXN:
        for (size_t i = 0; i < req->cmp_count; i++)
            if (req->cmps[i].target == KVC_CMP_LEASE || (unsigned)req->cmps[i].target > 4 ||
                (unsigned)req->cmps[i].result > 3)
                return false; /* the loader refuses a lease compare: let it say so */
        if (ok) {
            const struct kvc_op *taken = res->succeeded ? req->then_ops : req->else_ops;
            size_t n = res->succeeded ? req->then_count : req->else_count;
            for (size_t i = 0; i < n && i < res->op_count; i++)
                if (res->ops[i].kind != taken[i].kind)
                    return false;
        }
        return true;
    default:
        return false;
    }
}

static void add_cmp(struct chk_history *h, const struct kvc_compare *c)
{
    static const uint8_t targets[] = {[KVC_CMP_VERSION] = CHK_CMP_VERSION,
                                      [KVC_CMP_CREATE] = CHK_CMP_CREATE,
                                      [KVC_CMP_MOD] = CHK_CMP_MOD,
                                      [KVC_CMP_VALUE] = CHK_CMP_VALUE};
    static const uint8_t results[] = {[KVC_CMP_EQUAL] = CHK_CMP_EQ,
                                      [KVC_CMP_GREATER] = CHK_CMP_GT,
                                      [KVC_CMP_LESS] = CHK_CMP_LT,
                                      [KVC_CMP_NOT_EQUAL] = CHK_CMP_NE};
    int32_t key = chk_history_key(h, bp(c->key), c->key.n);
    int64_t operand = c->number;
    if (c->target == KVC_CMP_VALUE)
        operand = chk_history_value(h, bp(c->value), c->value.n);
    struct chk_cmp *cmp = chk_history_cmp_add(h);
    cmp->key = key;
    cmp->target = targets[c->target];
    cmp->result = results[c->result];
    cmp->operand = operand;
}

/* load_op.c build_txn. */
static void add_txn(struct chk_history *h, const struct kvc_request *req,
                    const struct kvc_result *res, bool ok)
{
    for (size_t i = 0; i < req->cmp_count; i++)
        add_cmp(h, &req->cmps[i]);
    if (ok) {
        struct chk_op *op = &h->ops[h->op_count - 1];
        op->flags |= CHK_OPF_SUCCEEDED_SET;
        if (res->succeeded)
            op->flags |= CHK_OPF_SUCCEEDED;
    }
    for (int b = 0; b < 2; b++) {
        const struct kvc_op *list = b ? req->else_ops : req->then_ops;
        size_t n = b ? req->else_count : req->then_count;
        bool taken = ok && (b == 0) == res->succeeded;
        for (size_t i = 0; i < n; i++)
            add_sub(h, &list[i], taken && i < res->op_count ? &res->ops[i] : NULL, b == 1, false);
    }
}

/* The row as on_op_done gave it to hist_op_add, into the mirror (ld_build_op). */
static void fast_op(struct chk_history *h, int64_t op_id, const struct hist_op *row,
                    const struct kvc_request *req, const struct kvc_result *res)
{
    int64_t call_ns = row->call_ns == HIST_NULL ? 0 : row->call_ns;
    int64_t return_ns = row->return_ns == HIST_NULL ? CHK_NEVER : row->return_ns;
    int status = row->status == HIST_STATUS_OK     ? CHK_ST_OK
                 : row->status == HIST_STATUS_FAIL ? CHK_ST_FAIL
                                                   : CHK_ST_UNKNOWN;
    if (status == CHK_ST_OK && return_ns == CHK_NEVER)
        status = CHK_ST_UNKNOWN;
    int64_t rev = row->revision == HIST_NULL ? CHK_NO_REV : row->revision;
    if (rev == CHK_NO_REV && status == CHK_ST_OK)
        rev = res->header.revision; /* the response's header.revision */
    bool ok = status == CHK_ST_OK;
    struct chk_op *op = chk_history_op_add(h);
    op->client = (int32_t)(row->client_id == HIST_NULL ? 0 : row->client_id);
    op->call_ns = call_ns;
    op->return_ns = return_ns;
    op->status = (uint8_t)status;
    op->rev = rev;
    if (ok)
        op->flags |= CHK_OPF_HAS_RESULT;
    if (req->method == KVC_TXN)
        add_txn(h, req, res, ok);
    else
        add_sub(h, &req->op, ok ? &res->op : NULL, false, true);
    op = &h->ops[h->op_count - 1];
    if (req->method == KVC_RANGE && req->op.serializable)
        op->flags |= CHK_OPF_SERIALIZABLE;
    FL_ASSERT(chk_op_id_fits(op_id)); /* the recorder numbers a run's ops from 1 */
    op->op_id = (uint32_t)op_id;
    op->line = 0;
    op->err = (uint8_t)(status == CHK_ST_FAIL ? hist_load_error_kind(row->error) : CHK_ERR_NONE);
}

/* The op both ways, each into a history of its own: what fast_op made of it must be
 * what the loader makes of the row. A difference is kept for run_mirror_take. */
static void spot_check(struct run_world *rw, int64_t op_id, const struct hist_op *row,
                       const struct kvc_request *req, const struct kvc_result *res)
{
    struct run_mirror *m = &rw->mirror;
    struct chk_history fast, slow;
    struct fl_buf err;
    chk_history_init(&fast);
    chk_history_init(&slow);
    fl_buf_init(&err);
    fast_op(&fast, op_id, row, req, res);
    char why[128];
    if (hist_load_op(&slow, hist_path(rw->db), op_id, row, &err) != FL_OK)
        snprintf(m->spot_err, sizeof m->spot_err, "op %lld: the loader refuses it: %s",
                 (long long)op_id, fl_buf_cstr(&err));
    else if (!chk_history_equal(&fast, &slow, why, sizeof why))
        snprintf(m->spot_err, sizeof m->spot_err, "op %lld: %s", (long long)op_id, why);
    m->spot_checks++;
    chk_history_close(&fast);
    chk_history_close(&slow);
    fl_buf_close(&err);
}

void run_mirror_op(struct run_world *rw, int64_t op_id, const struct hist_op *row,
                   const struct kvc_request *req, const struct kvc_result *res, bool nul)
{
    struct run_mirror *m = &rw->mirror;
    if (!m->on || m->broken)
        return;
    if (op_id <= m->last_op_id) { /* the loader reads ops in op_id order */
        m->broken = true;
        return;
    }
    m->last_op_id = op_id;
    m->ops++;
    bool ok = row->status == HIST_STATUS_OK && row->return_ns != HIST_NULL;
    bool in_order =
        row->return_ns == HIST_NULL || row->call_ns == HIST_NULL || row->return_ns >= row->call_ns;
    int64_t text = (int64_t)(row->request ? strlen(row->request) : 0) +
                   (int64_t)(row->response ? strlen(row->response) : 0);
    m->text_bytes += text;
    if (req && res && !nul && in_order && row->kind && fast_ok(req, res, ok)) {
        fast_op(&m->h, op_id, row, req, res);
        if (m->ops % RUN_MIRROR_SPOT_EVERY == 1 && !m->spot_err[0] &&
            m->spot_bytes <= m->text_bytes / RUN_MIRROR_SPOT_SHARE) {
            m->spot_bytes += text;
            spot_check(rw, op_id, row, req, res);
        }
        return;
    }
    struct fl_buf err;
    fl_buf_init(&err);
    if (hist_load_op(&m->h, hist_path(rw->db), op_id, row, &err) != FL_OK)
        m->broken = true; /* the database load will report it */
    fl_buf_close(&err);
}

/* ---- watches ------------------------------------------------------------------------ */

/* Watch ids are client * 1,000,000 + the client's own id, so the watches array is not
 * in id order: closes find their watch through a small id map (a close used to scan
 * the array from the end, which made N watches closed in opening order cost N^2/2). */

static size_t watch_slot(int64_t watch_id, size_t slots)
{
    uint64_t h = (uint64_t)watch_id * 0x9E3779B97F4A7C15ull;
    return (size_t)((h ^ (h >> 29)) & (slots - 1));
}

/* watch_ids[k] == 0 is an empty slot: ids are client * 1e6 + id >= 1 (an id 0 is not
 * mapped, and its close breaks the mirror as an unknown id did). A repeated id maps
 * to its latest watch, as the scan from the end found. */
static void watch_map_insert(struct run_mirror *m, int64_t watch_id, size_t i)
{
    size_t k = watch_slot(watch_id, m->watch_slots);
    while (m->watch_ids[k] != 0 && m->watch_ids[k] != watch_id)
        k = (k + 1) & (m->watch_slots - 1);
    m->watch_ids[k] = watch_id;
    m->watch_at[k] = i;
}

/* Maps every watch in [0, n_watches), in order, into at least `want` slots. */
static void watch_map_rebuild(struct run_mirror *m, size_t want)
{
    size_t slots = 64;
    while (slots < want)
        slots *= 2;
    free(m->watch_ids);
    free(m->watch_at);
    m->watch_ids = fl_calloc(slots, sizeof *m->watch_ids);
    m->watch_at = fl_calloc(slots, sizeof *m->watch_at);
    m->watch_slots = slots;
    m->watch_steps += m->n_watches;
    for (size_t i = 0; i < m->n_watches; i++)
        if (m->watches[i].w.watch_id != 0)
            watch_map_insert(m, m->watches[i].w.watch_id, i);
}

static struct run_mirror_watch *watch_map_get(struct run_mirror *m, int64_t watch_id)
{
    if (m->watch_slots == 0 || watch_id == 0)
        return NULL;
    for (size_t k = watch_slot(watch_id, m->watch_slots); m->watch_ids[k] != 0;
         k = (k + 1) & (m->watch_slots - 1)) {
        m->watch_steps++;
        if (m->watch_ids[k] == watch_id)
            return &m->watches[m->watch_at[k]];
    }
    return NULL;
}

void run_mirror_watch_open(struct run_world *rw, const struct hist_watch *w)
{
    struct run_mirror *m = &rw->mirror;
    if (!m->on || m->broken)
        return;
    FL_GROW(m->watches, m->cap_watches, m->n_watches + 1, 16);
    struct run_mirror_watch *x = &m->watches[m->n_watches];
    memset(x, 0, sizeof *x);
    /* whole: hist_load_watch reads only the scalars kept here and the bytes kept below;
     * the caller's pointers do not outlive the call */
    x->w = *w;
    x->w.key = x->w.range_end = NULL;
    x->w.close_reason = x->w.filters = x->w.request = NULL;
    if (2 * (m->n_watches + 1) > m->watch_slots)
        watch_map_rebuild(m, 4 * (m->n_watches + 1));
    if (w->watch_id != 0)
        watch_map_insert(m, w->watch_id, m->n_watches);
    m->n_watches++;
    keep(m, w->key, w->key_len, &x->key_off, &x->w.key_len);
    keep(m, w->range_end, w->range_end_len, &x->range_end_off, &x->w.range_end_len);
    /* with its NUL, so that it reads back as a string */
    keep(m, w->filters, w->filters ? strlen(w->filters) + 1 : 0, &x->filters_off, &x->filters_len);
}

void run_mirror_watch_close(struct run_world *rw, int64_t watch_id, int64_t closed_ns)
{
    struct run_mirror *m = &rw->mirror;
    if (!m->on || m->broken)
        return;
    struct run_mirror_watch *x = watch_map_get(m, watch_id);
    if (x)
        x->w.closed_ns = closed_ns;
    else
        m->broken = true;
}

void run_mirror_event(struct run_world *rw, const struct hist_watch_event *ev)
{
    struct run_mirror *m = &rw->mirror;
    if (!m->on || m->broken)
        return;
    int kind = !ev->kind                       ? -1
               : !strcmp(ev->kind, "put")      ? CHK_EV_PUT
               : !strcmp(ev->kind, "delete")   ? CHK_EV_DELETE
               : !strcmp(ev->kind, "progress") ? CHK_EV_PROGRESS
                                               : -1;
    if (kind < 0 || ev->seq != HIST_NULL) {
        m->broken = true;
        return;
    }
    FL_GROW_ZERO(m->events, m->n_events, m->cap_events, m->n_events + 1, 64);
    struct run_mirror_event *x = &m->events[m->n_events - 1];
    x->ev = *ev;              /* as the watch above */
    x->ev.seq = ++m->wev_seq; /* hist_watch_event_add numbers them 1, 2, ... in the run */
    x->ev.kind = NULL;
    x->ev.key = x->ev.value = x->ev.prev_value = NULL;
    x->kind = kind;
    keep(m, ev->key, ev->key_len, &x->key_off, &x->ev.key_len);
    keep(m, ev->value, ev->value_len, &x->value_off, &x->ev.value_len);
    keep(m, ev->prev_value, ev->prev_value_len, &x->prev_off, &x->ev.prev_value_len);
}

/* ---- the end: the loader's watch part, finish --------------------------------------- */

static int watch_cmp(const void *a, const void *b)
{
    const struct hist_watch *x = &((const struct run_mirror_watch *)a)->w;
    const struct hist_watch *y = &((const struct run_mirror_watch *)b)->w;
    return (x->watch_id > y->watch_id) - (x->watch_id < y->watch_id);
}

static int event_cmp(const void *a, const void *b)
{
    const struct hist_watch_event *x = &((const struct run_mirror_event *)a)->ev;
    const struct hist_watch_event *y = &((const struct run_mirror_event *)b)->ev;
    if (x->watch_id != y->watch_id)
        return (x->watch_id > y->watch_id) - (x->watch_id < y->watch_id);
    return (x->seq > y->seq) - (x->seq < y->seq);
}

/* The kept rows, as load_db.c db_watches reads them: watches by watch_id, then events
 * by (watch_id, seq), each through the loader's own hist_load_watch(_event). */
static void add_watches(struct run_mirror *m)
{
    if (m->n_watches) {
        qsort(m->watches, m->n_watches, sizeof *m->watches, watch_cmp);
        watch_map_rebuild(m, 2 * m->n_watches); /* the indexes moved */
    }
    for (size_t i = 0; i < m->n_watches; i++) {
        const struct run_mirror_watch *x = &m->watches[i];
        struct hist_watch w = x->w;
        w.key = kept(m, x->key_off);
        w.range_end = kept(m, x->range_end_off);
        w.filters = kept(m, x->filters_off);
        hist_load_watch(&m->h, &w);
    }
    if (m->n_events)
        qsort(m->events, m->n_events, sizeof *m->events, event_cmp);
    for (size_t i = 0; i < m->n_events; i++) {
        const struct run_mirror_event *x = &m->events[i];
        struct hist_watch_event ev = x->ev;
        ev.key = kept(m, x->key_off);
        ev.value = kept(m, x->value_off);
        ev.prev_value = kept(m, x->prev_off);
        hist_load_watch_event(&m->h, &ev, x->kind);
    }
}

/* The mirror against a fresh load of the database. A database that cannot be read
 * back (damaged under the run: FL_ECORRUPT) or a difference between the two (a bug of
 * ours: FL_EINTERNAL) is an error of the run with the reason in err, never an abort
 * that would leave the run's row unfinished. */
static int verify(struct run_world *rw, struct fl_buf *err)
{
    struct run_mirror *m = &rw->mirror;
    struct chk_history db;
    struct fl_buf e2;
    chk_history_init(&db);
    fl_buf_init(&e2);
    int rc = hist_load_db(rw->db, rw->run_id, &db, &e2);
    char why[128];
    if (rc) {
        fl_buf_printf(err, "the history database cannot be read back: %s", fl_buf_cstr(&e2));
        rc = rc == FL_ECORRUPT ? FL_ECORRUPT : FL_EINTERNAL;
    } else if (!chk_history_equal(&m->h, &db, why, sizeof why)) {
        fl_buf_printf(err,
                      "internal error: the in-memory history differs from the database's "
                      "(%s; %s)",
                      why, hist_path(rw->db));
        rc = FL_EINTERNAL;
    }
    chk_history_close(&db);
    fl_buf_close(&e2);
    return rc;
}

static bool verify_all(void)
{
    const char *e = getenv("FAULTLINE_VERIFY_HISTORY");
    return e && e[0] && strcmp(e, "0") != 0;
}

int run_mirror_take(struct run_world *rw, struct chk_history *out, struct fl_buf *err)
{
    struct run_mirror *m = &rw->mirror;
    if (m->on && m->spot_err[0]) {
        fl_buf_printf(err,
                      "internal error: the in-memory history differs from the loader's (%s; "
                      "%s)",
                      m->spot_err, hist_path(rw->db));
        return FL_EINTERNAL;
    }
    if (!m->on || m->broken)
        return hist_load_db(rw->db, rw->run_id, out, err);
    add_watches(m);
    int rc = hist_load_finish(hist_path(rw->db), &m->h, err);
    if (rc) {
        fl_buf_reset(err); /* let the database load say it, as before */
        return hist_load_db(rw->db, rw->run_id, out, err);
    }
    if (m->ops <= RUN_MIRROR_VERIFY_OPS || m->verify || verify_all()) {
        int vrc = verify(rw, err);
        if (vrc)
            return vrc;
    }
    *out = m->h; /* moved: the mirror is done */
    chk_history_init(&m->h);
    m->on = false;
    return FL_OK;
}
