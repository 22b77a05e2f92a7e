/*
 * chk_rev_time.c: the revision engine's real-time check (check 3 of chk_revision.c),
 * its lenient check of reads that failed as compacted, and the explanation of the
 * violations found.
 *
 * Invariants, asserted:
 *   - ops sorted by call or return time are in that order, ties by op index (the sort
 *     is stable on index-ordered input);
 *   - the sweep takes every op that returned before a call into the running maximum
 *     before judging that call, in (return time, op index) order, so a violation
 *     names an op that truly returned first;
 *   - violations are explained in position order, at most VIOL_MAX of viol_total kept.
 */
#include "checkers/chk_rev_int.h"
#include "harness/common/lower_bound.h"

/* ---- real time ------------------------------------------------------------------- */

static const struct chk_history *g_rt_h;

static int by_call(const void *a, const void *b)
{
    const struct chk_op *x = &g_rt_h->ops[*(const uint32_t *)a];
    const struct chk_op *y = &g_rt_h->ops[*(const uint32_t *)b];
    if (x->call_ns != y->call_ns)
        return x->call_ns < y->call_ns ? -1 : 1;
    return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static int by_return(const void *a, const void *b)
{
    const struct chk_op *x = &g_rt_h->ops[*(const uint32_t *)a];
    const struct chk_op *y = &g_rt_h->ops[*(const uint32_t *)b];
    if (x->return_ns != y->return_ns)
        return x->return_ns < y->return_ns ? -1 : 1;
    return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

/* Sorts idx (op indexes, ascending) by call or return time, ties by op index:
 * skipped when already in order (the common case: a recorder appends ops as they
 * return or as they are called), else a stable radix sort of the times. */
void chk__rv_sort_ops(const struct chk_history *h, uint32_t *idx, uint32_t n, bool by_ret)
{
    int (*cmp)(const void *, const void *) = by_ret ? by_return : by_call;
    g_rt_h = h;
    bool sorted = true;
    for (uint32_t i = 1; i < n && sorted; i++)
        sorted = cmp(&idx[i - 1], &idx[i]) <= 0;
    if (sorted)
        return;
    for (uint32_t i = 1; i < n; i++)
        FL_ASSERT(idx[i - 1] < idx[i]); /* a stable sort then breaks ties by op index */
    uint64_t *key = fl_malloc(((size_t)n + 1) * sizeof(uint64_t));
    for (uint32_t i = 0; i < n; i++) {
        const struct chk_op *op = &h->ops[idx[i]];
        int64_t t = by_ret ? op->return_ns : op->call_ns;
        key[i] = (uint64_t)t ^ (UINT64_C(1) << 63); /* signed order as unsigned */
    }
    chk__sort_keyed(key, idx, n); /* asserts the keys' order */
    free(key);
}

/* The ops called so far that have returned, not yet taken into the sweep's maximum:
 * a binary min-heap by (return time, op index). Its size is the number of ops in
 * flight at a call, not the history's length. */
struct rt_ent {
    int64_t ret;
    uint32_t op;
};

struct rt_heap {
    struct rt_ent *v;
    uint32_t n, cap;
};

static bool rt_less(const struct rt_ent *x, const struct rt_ent *y)
{
    return x->ret != y->ret ? x->ret < y->ret : x->op < y->op;
}

static void rt_push(struct rt_heap *q, int64_t ret, uint32_t op)
{
    FL_GROW(q->v, q->cap, (size_t)q->n + 1, 256);
    uint32_t at = q->n++;
    struct rt_ent e = {ret, op};
    while (at > 0 && rt_less(&e, &q->v[(at - 1) / 2])) {
        q->v[at] = q->v[(at - 1) / 2];
        at = (at - 1) / 2;
    }
    q->v[at] = e;
}

static struct rt_ent rt_pop(struct rt_heap *q)
{
    FL_ASSERT(q->n > 0);
    struct rt_ent top = q->v[0], last = q->v[--q->n];
    uint32_t at = 0;
    for (;;) {
        uint32_t c = 2 * at + 1;
        if (c >= q->n)
            break;
        if (c + 1 < q->n && rt_less(&q->v[c + 1], &q->v[c]))
            c++;
        if (!rt_less(&q->v[c], &last))
            break;
        q->v[at] = q->v[c];
        at = c;
    }
    if (q->n)
        q->v[at] = last;
    return top;
}

static void rt_violation(struct rv *r, uint32_t b, uint32_t maxop, int64_t maxpos)
{
    const struct chk_history *h = r->h;
    char msg[200];
    const struct chk_op *a = &h->ops[maxop];
    snprintf(msg, sizeof(msg),
             "op %lld (revision %lld) returned before op %lld was called, yet op "
             "%lld is ordered at revision %lld: %s",
             (long long)a->op_id, (long long)(maxpos / 2), (long long)h->ops[b].op_id,
             (long long)h->ops[b].op_id, (long long)(r->pos[b] / 2),
             r->pos[b] % 2 ? "a stale read" : "a write ordered before it");
    chk__rv_viol_add(r, 1, b, maxop, r->pos[b] / 2, r->pos[b], msg, NULL);
}

/* If A returned before B was called, pos(A) <= pos(B). One sweep over the ops by call
 * time, carrying the largest position of the ops returned before the current call.
 * Those are taken in (return time, op index) order from a heap of the ops called so
 * far (an op returns after its call, so every op that returned before a call was
 * called before it and is in the heap): the order a sort of every op by return time
 * would give, without that sort's arrays (20 bytes per op at its peak). */
void chk__rv_realtime(struct rv *r)
{
    const struct chk_history *h = r->h;
    uint32_t *bc = fl_malloc((h->op_count + 1) * sizeof(uint32_t));
    uint32_t nc = 0;
    for (uint32_t i = 0; i < h->op_count; i++) {
        if (r->pos[i] != INT64_MIN && !(h->ops[i].flags & CHK_OPF_SERIALIZABLE))
            bc[nc++] = i;
    }
    chk__rv_sort_ops(h, bc, nc, false);
    FL_ASSERT(nc <= h->op_count);
    struct rt_heap q = {NULL, 0, 0};
    struct rt_ent last = {INT64_MIN, 0};
    int64_t maxpos = INT64_MIN;
    uint32_t maxop = UINT32_MAX;
    for (uint32_t k = 0; k < nc; k++) {
        uint32_t b = bc[k];
        const struct chk_op *op = &h->ops[b];
        FL_ASSERT(k == 0 || h->ops[bc[k - 1]].call_ns <= op->call_ns); /* by call */
        while (q.n && q.v[0].ret < op->call_ns) {
            struct rt_ent e = rt_pop(&q);
            FL_ASSERT(!rt_less(&e, &last)); /* taken in (return, index) order */
            last = e;
            if (r->pos[e.op] > maxpos) {
                maxpos = r->pos[e.op];
                maxop = e.op;
            }
        }
        if (r->pos[b] < maxpos) {
            /* ordered before an op that returned before it was called */
            FL_ASSERT(maxop != UINT32_MAX && h->ops[maxop].return_ns < op->call_ns);
            rt_violation(r, b, maxop, maxpos);
        }
        if (op->return_ns != CHK_NEVER && r->role[b] != ROLE_PLACED) {
            FL_ASSERT(op->return_ns >= op->call_ns); /* chk_history_finish checked it */
            rt_push(&q, op->return_ns, b);
        }
    }
    free(q.v);
    free(bc);
}

/* The recorded compactions that may have taken effect (not failed), by call time, with
 * the highest revision any of the first k compacted: the question "did a compaction
 * called by T reach revision R" is one binary search instead of a scan of every op
 * (which made the check quadratic: a scan per failed read). */
struct compact_ix {
    int64_t *call;  /* call times, ascending */
    int64_t *reach; /* reach[k]: max compacted revision of call[0..k] */
    uint32_t n;
};

static void compact_ix_build(const struct chk_history *h, struct compact_ix *ix)
{
    uint32_t n = 0;
    for (uint32_t c = 0; c < h->op_count; c++)
        n += h->ops[c].kind == CHK_OP_COMPACT && h->ops[c].status != CHK_ST_FAIL;
    ix->n = n;
    ix->call = fl_malloc(((size_t)n + 1) * sizeof(int64_t));
    ix->reach = fl_malloc(((size_t)n + 1) * sizeof(int64_t));
    uint32_t *idx = fl_malloc(((size_t)n + 1) * sizeof(uint32_t));
    uint32_t k = 0;
    for (uint32_t c = 0; c < h->op_count; c++)
        if (h->ops[c].kind == CHK_OP_COMPACT && h->ops[c].status != CHK_ST_FAIL)
            idx[k++] = c;
    FL_ASSERT(k == n);
    chk__rv_sort_ops(h, idx, n, false);
    for (k = 0; k < n; k++) {
        const struct chk_op *co = &h->ops[idx[k]];
        ix->call[k] = co->call_ns;
        ix->reach[k] = k ? FL_MAX(ix->reach[k - 1], co->compact_rev) : co->compact_rev;
        FL_ASSERT(k == 0 || ix->call[k - 1] <= ix->call[k]);
    }
    free(idx);
}

/* Did a compaction called at or before t compact revision rev or later? */
static bool compact_ix_reached(const struct compact_ix *ix, int64_t t, int64_t rev)
{
    size_t lo; /* the first call after t */
    FL_LOWER_BOUND(lo, ix->n, mid, ix->call[mid] <= t);
    return lo > 0 && ix->reach[lo - 1] >= rev;
}

/* Failed reads that blamed compaction or a future revision: lenient checks (etcd's
 * answer must be possible at some point of the operation). */
void chk__rv_failed(struct rv *r)
{
    const struct chk_history *h = r->h;
    if (!h->compactions_known)
        return; /* without recorded compactions the error cannot be refuted */
    struct compact_ix ix = {NULL, NULL, 0};
    bool built = false;
    for (uint32_t i = 0; i < h->op_count; i++) {
        const struct chk_op *op = &h->ops[i];
        if (r->role[i] != ROLE_FAILED || op->err != CHK_ERR_COMPACTED || op->kind != CHK_OP_TXN)
            continue;
        for (uint32_t j = 0; j < op->then_count; j++) {
            const struct chk_sub *s = &h->subs[op->sub_first + j];
            if (s->kind != CHK_SUB_RANGE || s->req_rev <= 0)
                continue;
            if (!built) {
                compact_ix_build(h, &ix);
                built = true;
            }
            if (!compact_ix_reached(&ix, op->return_ns, s->req_rev)) {
                FL_ASSERT(op->status == CHK_ST_FAIL); /* ROLE_FAILED: a failed call */
                char msg[200];
                snprintf(msg, sizeof(msg),
                         "read at revision %lld failed as compacted, but no compaction "
                         "reached it",
                         (long long)s->req_rev);
                chk__rv_viol_add(r, 0, i, UINT32_MAX, s->req_rev, INT64_MAX, msg, NULL);
            }
        }
    }
    free(ix.call);
    free(ix.reach);
}

static int viol_cmp(const void *a, const void *b)
{
    const struct rv_viol *x = a, *y = b;
    if (x->pos != y->pos)
        return x->pos < y->pos ? -1 : 1;
    return x->op < y->op ? -1 : x->op > y->op;
}

void chk__rv_explain(struct rv *r)
{
    struct chk_history *h = r->h;
    struct chk_lin_result *out = r->out;
    qsort(r->viol, r->viol_count, sizeof(r->viol[0]), viol_cmp);
    FL_ASSERT(r->viol_count <= VIOL_MAX && r->viol_count <= r->viol_total);
    for (uint32_t i = 1; i < r->viol_count; i++)
        FL_ASSERT(viol_cmp(&r->viol[i - 1], &r->viol[i]) <= 0); /* first violation first */
    json_t *d = json_object();
    json_object_set_new(d, "engine", json_string("revision"));
    static const char *const kinds[] = {"value", "real_time", "duplicate_revision"};
    json_t *arr = json_array();
    for (uint32_t i = 0; i < r->viol_count; i++) {
        struct rv_viol *v = &r->viol[i];
        json_t *o = json_object();
        json_object_set_new(o, "kind", json_string(kinds[v->kind]));
        json_object_set_new(o, "revision", json_integer(v->rev));
        json_object_set_new(o, "message", json_string(v->msg));
        json_t *ops = json_array();
        json_array_append_new(ops, chk_json_op(h, &h->ops[v->op]));
        if (v->other != UINT32_MAX)
            json_array_append_new(ops, chk_json_op(h, &h->ops[v->other]));
        json_object_set_new(o, "ops", ops);
        if (v->state) {
            json_object_set_new(o, "state", v->state);
            v->state = NULL;
        }
        json_array_append_new(arr, o);
    }
    json_object_set_new(d, "violations", arr);
    json_object_set_new(d, "violation_count", json_integer(r->viol_total));
    /* Longest prefix: the ops ordered before the first violation. */
    int64_t first = r->viol_count ? r->viol[0].pos : INT64_MAX;
    uint64_t prefix = 0;
    for (uint32_t i = 0; i < h->op_count; i++)
        prefix += r->pos[i] != INT64_MIN && r->pos[i] < first;
    json_object_set_new(d, "prefix_length", json_integer((json_int_t)prefix));
    json_object_set_new(d, "prefix_revision",
                        json_integer(first == INT64_MAX ? r->max_rev : (first - 1) / 2));
    if (r->viol_count) {
        json_t *unord = json_array();
        json_array_append_new(unord, chk_json_op(h, &h->ops[r->viol[0].op]));
        if (r->viol[0].other != UINT32_MAX)
            json_array_append_new(unord, chk_json_op(h, &h->ops[r->viol[0].other]));
        json_object_set_new(d, "unordered_ops", unord);
        struct fl_buf t;
        fl_buf_init(&t);
        chk_op_text(h, &h->ops[r->viol[0].op], &t);
        snprintf(out->reason, sizeof(out->reason), "%s (client %d) at revision %lld: %s",
                 fl_buf_cstr(&t), h->ops[r->viol[0].op].client, (long long)r->viol[0].rev,
                 r->viol[0].msg);
        fl_buf_close(&t);
    }
    json_object_set_new(d, "revealed", json_integer(out->revealed));
    json_object_set_new(d, "gaps", json_integer(r->gaps));
    json_decref(out->detail);
    out->detail = d;
}
