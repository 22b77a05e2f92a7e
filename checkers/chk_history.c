/*
 * chk_history.c: building the in-memory history the checkers judge: interned keys
 * and values, flat arrays of operations, compares, sub-operations, result kvs,
 * watches and watch events, and chk_history_finish, which validates the history and
 * indexes it (key ranks in byte order, watch events grouped per watch).
 *
 * Growth is by doubling, so building a history of n operations does O(log n)
 * allocations, never one per operation. Hash tables here are for lookup only; ids
 * are handed out in first-seen order, so nothing depends on hash order.
 */
#include "checkers/checkers.h"
#include "checkers/chk_int.h"
#include "harness/common/lower_bound.h"
#include "harness/common/order.h"

static void intern_init(struct chk_intern *t)
{
    memset(t, 0, sizeof(*t));
    fl_buf_init(&t->bytes);
}

static void intern_close(struct chk_intern *t)
{
    fl_buf_close(&t->bytes);
    free(t->off);
    free(t->hash);
    free(t->slots);
    memset(t, 0, sizeof(*t));
}

/* The length of id's bytes: off has count + 1 entries, off[count] the end. */
static uint32_t intern_len(const struct chk_intern *t, uint32_t id)
{
    return t->off[id + 1] - t->off[id];
}

/* Grows the lookup table to at least twice the ids (dropped by intern_release with the
 * hashes, both are rebuilt here on the next add). */
static void intern_rehash(struct chk_intern *t)
{
    uint32_t n = t->slot_mask ? (t->slot_mask + 1) * 2 : 1024;
    while ((uint64_t)n < ((uint64_t)t->count + 1) * 2) {
        FL_ASSERT(n <= UINT32_MAX / 2);
        n *= 2;
    }
    if (!t->hash && t->cap) {
        t->hash = fl_malloc(t->cap * sizeof(uint32_t));
        for (uint32_t id = 0; id < t->count; id++) {
            size_t len;
            const uint8_t *p = chk_intern_bytes(t, (int32_t)id, &len);
            t->hash[id] = (uint32_t)fl_hash64(p, len);
        }
    }
    free(t->slots);
    t->slots = fl_calloc(n, sizeof(uint32_t));
    t->slot_mask = n - 1;
    for (uint32_t id = 0; id < t->count; id++) {
        uint32_t s = t->hash[id] & t->slot_mask; /* the table has at most 2^32 slots */
        while (t->slots[s])
            s = (s + 1) & t->slot_mask;
        t->slots[s] = id + 1;
    }
}

/* Frees the lookup table and the hashes (8 to 12 bytes per id: 91 MB for the 6.1M
 * values of a 10M-op generated history) once a history is finished: checking looks
 * bytes up by id, and the rare add after that (an append's result) rebuilds both. Ids
 * are unchanged. */
static void intern_release(struct chk_intern *t)
{
    free(t->slots);
    t->slots = NULL;
    t->slot_mask = 0;
    free(t->hash);
    t->hash = NULL;
}

int32_t chk_intern_add(struct chk_intern *t, const void *p, size_t n)
{
    FL_ASSERT(n < UINT32_MAX);
    if (!t->slots || (uint64_t)(t->count + 1) * 2 > (uint64_t)t->slot_mask + 1)
        intern_rehash(t);
    uint32_t hv = (uint32_t)fl_hash64(p, n);
    uint32_t s = hv & t->slot_mask;
    while (t->slots[s]) {
        uint32_t id = t->slots[s] - 1;
        /* only empty strings so far: bytes.data is NULL (no NULL + 0, no memcmp) */
        if (t->hash[id] == hv && intern_len(t, id) == n &&
            (n == 0 || memcmp(t->bytes.data + t->off[id], p, n) == 0))
            return (int32_t)id;
        s = (s + 1) & t->slot_mask;
    }
    if (t->count == t->cap) {
        t->cap = (uint32_t)fl_grow_cap(t->cap, (size_t)t->count + 1, 256, sizeof(uint32_t));
        t->off = fl_realloc(t->off, ((size_t)t->cap + 1) * sizeof(uint32_t));
        t->hash = fl_realloc(t->hash, t->cap * sizeof(uint32_t));
    }
    FL_ASSERT(t->bytes.len + n < UINT32_MAX);
    t->off[t->count] = (uint32_t)t->bytes.len;
    t->hash[t->count] = hv;
    if (n)
        fl_buf_append(&t->bytes, p, n);
    t->off[t->count + 1] = (uint32_t)t->bytes.len;
    t->slots[s] = t->count + 1;
    return (int32_t)t->count++;
}

const uint8_t *chk_intern_bytes(const struct chk_intern *t, int32_t id, size_t *n)
{
    FL_ASSERT(id >= 0 && (uint32_t)id < t->count);
    *n = intern_len(t, (uint32_t)id);
    return t->bytes.data ? t->bytes.data + t->off[id] : (const uint8_t *)"";
}

void chk_history_init(struct chk_history *h)
{
    memset(h, 0, sizeof(*h));
    intern_init(&h->keys);
    intern_init(&h->values);
}

void chk_history_close(struct chk_history *h)
{
    intern_close(&h->keys);
    intern_close(&h->values);
    free(h->ops);
    free(h->cmps);
    free(h->subs);
    free(h->sub_leases);
    free(h->kvs);
    free(h->watches);
    free(h->events);
    free(h->key_rank);
    free(h->key_order);
    memset(h, 0, sizeof(*h));
}

int32_t chk_history_key(struct chk_history *h, const void *p, size_t n)
{
    FL_ASSERT(!h->finished);
    return chk_intern_add(&h->keys, p ? p : "", n);
}

int32_t chk_history_value(struct chk_history *h, const void *p, size_t n)
{
    if (!p || (n == 0 && h->empty_is_absent))
        return CHK_NIL;
    return chk_intern_add(&h->values, p, n);
}

const uint8_t *chk_key_bytes(const struct chk_history *h, int32_t id, size_t *n)
{
    return chk_intern_bytes(&h->keys, id, n);
}

const uint8_t *chk_value_bytes(const struct chk_history *h, int32_t id, size_t *n)
{
    return chk_intern_bytes(&h->values, id, n);
}

/* One more element in arr (count used, cap allocated): common's growth rule. */
#define GROW(arr, count, cap) FL_GROW(arr, cap, (size_t)(count) + 1, 64)

_Static_assert(sizeof(struct chk_op) == 64, "chk_op: 64 bytes (checkers.h)");
_Static_assert(sizeof(struct chk_sub) == 40, "chk_sub: 40 bytes (checkers.h)");

struct chk_op *chk_history_op_add(struct chk_history *h)
{
    FL_ASSERT(!h->finished);
    GROW(h->ops, h->op_count, h->op_cap);
    struct chk_op *op = &h->ops[h->op_count];
    memset(op, 0, sizeof(*op));
    op->return_ns = CHK_NEVER;
    op->rev = CHK_NO_REV;
    op->compact_rev = CHK_NO_REV;
    op->op_id = h->op_count + 1;
    op->cmp_first = h->cmp_count;
    op->sub_first = h->sub_count;
    h->op_count++;
    return op;
}

struct chk_cmp *chk_history_cmp_add(struct chk_history *h)
{
    FL_ASSERT(h->op_count > 0);
    struct chk_op *op = &h->ops[h->op_count - 1];
    FL_ASSERT(op->cmp_first + op->cmp_count == h->cmp_count);
    GROW(h->cmps, h->cmp_count, h->cmp_cap);
    struct chk_cmp *c = &h->cmps[h->cmp_count++];
    memset(c, 0, sizeof(*c));
    op->cmp_count++;
    return c;
}

struct chk_sub *chk_history_sub_add(struct chk_history *h, bool else_branch)
{
    FL_ASSERT(h->op_count > 0);
    struct chk_op *op = &h->ops[h->op_count - 1];
    FL_ASSERT(op->sub_first + op->then_count + op->else_count == h->sub_count);
    FL_ASSERT(else_branch || op->else_count == 0);
    GROW(h->subs, h->sub_count, h->sub_cap);
    struct chk_sub *s = &h->subs[h->sub_count++];
    memset(s, 0, sizeof(*s));
    s->range_end = CHK_RANGE_ONE;
    s->value = CHK_NIL;
    s->kv_first = h->kv_count;
    if (else_branch)
        op->else_count++;
    else
        op->then_count++;
    return s;
}

void chk_history_sub_lease_set(struct chk_history *h, const struct chk_sub *s, int64_t lease)
{
    FL_ASSERT(s >= h->subs && s < h->subs + h->sub_count);
    uint32_t i = (uint32_t)(s - h->subs);
    struct chk_sub_lease *last = h->sub_lease_count ? &h->sub_leases[h->sub_lease_count - 1] : NULL;
    FL_ASSERT(!last || last->sub <= i); /* set in sub-operation order */
    if (last && last->sub == i) {
        if (lease)
            last->lease = lease;
        else
            h->sub_lease_count--;
        return;
    }
    if (!lease)
        return;
    GROW(h->sub_leases, h->sub_lease_count, h->sub_lease_cap);
    h->sub_leases[h->sub_lease_count++] = (struct chk_sub_lease){i, lease};
}

int64_t chk_sub_lease(const struct chk_history *h, const struct chk_sub *s)
{
    if (!h->sub_lease_count)
        return 0;
    FL_ASSERT(s >= h->subs && s < h->subs + h->sub_count);
    uint32_t i = (uint32_t)(s - h->subs);
    size_t lo;
    FL_LOWER_BOUND(lo, h->sub_lease_count, mid, h->sub_leases[mid].sub < i);
    return lo < h->sub_lease_count && h->sub_leases[lo].sub == i ? h->sub_leases[lo].lease : 0;
}

struct chk_kv *chk_history_kv_add(struct chk_history *h)
{
    FL_ASSERT(h->sub_count > 0);
    struct chk_sub *s = &h->subs[h->sub_count - 1];
    if (s->kv_count == 0)
        s->kv_first = h->kv_count;
    FL_ASSERT(s->kv_first + s->kv_count == h->kv_count);
    GROW(h->kvs, h->kv_count, h->kv_cap);
    struct chk_kv *kv = &h->kvs[h->kv_count++];
    kv->key = 0;
    kv->value = CHK_NIL;
    kv->create_rev = kv->mod_rev = kv->version = CHK_NO_REV;
    s->kv_count++;
    s->flags |= CHK_SUBF_KVS_SET | CHK_SUBF_RESULT_SET;
    return kv;
}

struct chk_watch *chk_history_watch_add(struct chk_history *h)
{
    FL_ASSERT(!h->finished);
    GROW(h->watches, h->watch_count, h->watch_cap);
    struct chk_watch *w = &h->watches[h->watch_count++];
    memset(w, 0, sizeof(*w));
    w->range_end = CHK_RANGE_ONE;
    w->closed_ns = CHK_NEVER;
    return w;
}

struct chk_wevent *chk_history_event_add(struct chk_history *h)
{
    FL_ASSERT(!h->finished);
    GROW(h->events, h->event_count, h->event_cap);
    struct chk_wevent *e = &h->events[h->event_count];
    memset(e, 0, sizeof(*e));
    e->value = CHK_NIL;
    e->prev_value = CHK_NOT_GIVEN;
    e->create_rev = e->mod_rev = e->version = CHK_NO_REV;
    e->seq = h->event_count;
    h->event_count++;
    return e;
}

/* ---- convenience builders ------------------------------------------------------ */

static struct chk_op *op_begin(struct chk_history *h, int32_t client, int64_t call_ns,
                               int64_t return_ns, int status, int64_t rev)
{
    struct chk_op *op = chk_history_op_add(h);
    op->client = client;
    op->call_ns = call_ns;
    op->return_ns = return_ns;
    op->status = (uint8_t)status;
    op->rev = rev;
    if (status == CHK_ST_OK)
        op->flags |= CHK_OPF_HAS_RESULT;
    return op;
}

/* A put sub-operation of key = value; its result is recorded when the op is ok. */
static void put_fill(struct chk_sub *s, int32_t key, int32_t value, int status)
{
    s->kind = CHK_SUB_PUT;
    s->key = key;
    s->value = value;
    if (status == CHK_ST_OK)
        s->flags |= CHK_SUBF_RESULT_SET;
}

struct chk_op *chk_history_put(struct chk_history *h, int32_t client, int32_t key, int32_t value,
                               int64_t call_ns, int64_t return_ns, int status, int64_t rev)
{
    op_begin(h, client, call_ns, return_ns, status, rev);
    struct chk_sub *s = chk_history_sub_add(h, false);
    put_fill(s, key, value, status);
    return &h->ops[h->op_count - 1];
}

struct chk_op *chk_history_get(struct chk_history *h, int32_t client, int32_t key, int32_t value,
                               int64_t call_ns, int64_t return_ns, int status, int64_t rev,
                               int64_t mod_rev, int64_t create_rev, int64_t version)
{
    op_begin(h, client, call_ns, return_ns, status, rev);
    struct chk_sub *s = chk_history_sub_add(h, false);
    s->kind = CHK_SUB_RANGE;
    s->key = key;
    if (status == CHK_ST_OK) {
        s->flags |= CHK_SUBF_RESULT_SET | CHK_SUBF_KVS_SET;
        if (value != CHK_NIL) {
            struct chk_kv *kv = chk_history_kv_add(h);
            kv->key = key;
            kv->value = value;
            kv->mod_rev = mod_rev;
            kv->create_rev = create_rev;
            kv->version = version;
        }
        s = &h->subs[h->sub_count - 1];
        s->count = value == CHK_NIL ? 0 : 1;
        s->flags |= CHK_SUBF_COUNT_SET;
    }
    return &h->ops[h->op_count - 1];
}

struct chk_op *chk_history_delete(struct chk_history *h, int32_t client, int32_t key,
                                  int64_t call_ns, int64_t return_ns, int status, int64_t rev,
                                  int64_t deleted)
{
    op_begin(h, client, call_ns, return_ns, status, rev);
    struct chk_sub *s = chk_history_sub_add(h, false);
    s->kind = CHK_SUB_DELETE;
    s->key = key;
    if (status == CHK_ST_OK) {
        s->flags |= CHK_SUBF_RESULT_SET;
        if (deleted >= 0) {
            FL_ASSERT(chk_count_fits(deleted));
            s->count = (int32_t)deleted;
            s->flags |= CHK_SUBF_COUNT_SET;
        }
    }
    return &h->ops[h->op_count - 1];
}

struct chk_op *chk_history_cas(struct chk_history *h, int32_t client, int32_t key, int32_t expect,
                               int32_t value, int64_t call_ns, int64_t return_ns, int status,
                               int64_t rev, int succeeded)
{
    struct chk_op *op = op_begin(h, client, call_ns, return_ns, status, rev);
    op->flags |= CHK_OPF_LABEL_CAS;
    if (status == CHK_ST_OK && succeeded >= 0) {
        op->flags |= CHK_OPF_SUCCEEDED_SET;
        if (succeeded)
            op->flags |= CHK_OPF_SUCCEEDED;
    }
    struct chk_cmp *c = chk_history_cmp_add(h);
    c->key = key;
    if (expect == CHK_NIL) {
        c->target = CHK_CMP_CREATE;
        c->operand = 0;
    } else {
        c->target = CHK_CMP_VALUE;
        c->operand = expect;
    }
    c->result = CHK_CMP_EQ;
    struct chk_sub *s = chk_history_sub_add(h, false);
    put_fill(s, key, value, status);
    return &h->ops[h->op_count - 1];
}

struct chk_op *chk_history_append(struct chk_history *h, int32_t client, int32_t key, int32_t value,
                                  int64_t call_ns, int64_t return_ns, int status)
{
    op_begin(h, client, call_ns, return_ns, status, CHK_NO_REV);
    struct chk_sub *s = chk_history_sub_add(h, false);
    s->kind = CHK_SUB_APPEND;
    s->key = key;
    s->value = value;
    if (status == CHK_ST_OK)
        s->flags |= CHK_SUBF_RESULT_SET;
    return &h->ops[h->op_count - 1];
}

/* ---- finishing ------------------------------------------------------------------- */

static const struct chk_intern *g_sort_keys; /* only during qsort below */

static int key_cmp(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    size_t nx, ny;
    const uint8_t *px = chk_intern_bytes(g_sort_keys, (int32_t)x, &nx);
    const uint8_t *py = chk_intern_bytes(g_sort_keys, (int32_t)y, &ny);
    int c = memcmp(px, py, FL_MIN(nx, ny));
    if (c)
        return c;
    if (nx != ny)
        return nx < ny ? -1 : 1;
    return x < y ? -1 : x > y; /* equal bytes never happen (interned) */
}

static int event_cmp(const void *a, const void *b)
{
    const struct chk_wevent *x = a, *y = b;
    FL_CMP_STEP(x->watch_id, y->watch_id);
    FL_CMP_STEP(x->seq, y->seq);
    FL_CMP_STEP(x->line, y->line);
    return 0;
}

static const struct chk_wevent *g_sort_events; /* only during qsort below */

/* Event indexes in event_cmp order, ties by index (the order a stable sort gives). */
static int event_idx_cmp(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    int c = event_cmp(&g_sort_events[x], &g_sort_events[y]);
    return c ? c : (x > y) - (x < y);
}

/* Sorts the events by (watch, seq, line), stably: a sort of 4-byte indexes, then the
 * permutation applied in place cycle by cycle, so the extra memory is two index arrays
 * (8 bytes an event) instead of qsort's copy of the events themselves (80 bytes an
 * event: 800 MB at 10M events). Events already in order are left as they are. */
static void sort_events(struct chk_history *h)
{
    uint32_t n = h->event_count;
    uint32_t i = 1;
    while (i < n && event_cmp(&h->events[i - 1], &h->events[i]) <= 0)
        i++;
    if (i >= n)
        return;
    uint32_t *idx = fl_malloc((size_t)n * sizeof(uint32_t));
    for (i = 0; i < n; i++)
        idx[i] = i;
    g_sort_events = h->events;
    qsort(idx, n, sizeof(uint32_t), event_idx_cmp);
    g_sort_events = NULL;
    struct chk_wevent held; /* events[j] takes old events[idx[j]] */
    fl_permute_gather(h->events, sizeof(*h->events), idx, n, &held);
    free(idx);
}

static int watch_cmp(const void *a, const void *b)
{
    const struct chk_watch *x = a, *y = b;
    return x->watch_id < y->watch_id ? -1 : x->watch_id > y->watch_id;
}

static int finish_watches(struct chk_history *h, struct fl_buf *err)
{
    if (h->watch_count)
        qsort(h->watches, h->watch_count, sizeof(*h->watches), watch_cmp);
    for (uint32_t i = 1; i < h->watch_count; i++) {
        if (h->watches[i].watch_id == h->watches[i - 1].watch_id) {
            fl_buf_printf(err, "line %u: watch %lld opened twice", h->watches[i].line,
                          (long long)h->watches[i].watch_id);
            return FL_EINVAL;
        }
    }
    sort_events(h);
    uint32_t w = 0;
    for (uint32_t i = 0; i < h->event_count; i++) {
        const struct chk_wevent *e = &h->events[i];
        while (w < h->watch_count && h->watches[w].watch_id < e->watch_id)
            w++;
        if (w == h->watch_count || h->watches[w].watch_id != e->watch_id) {
            fl_buf_printf(err, "line %u: event of watch %lld that was never opened", e->line,
                          (long long)e->watch_id);
            return FL_EINVAL;
        }
        if (h->watches[w].ev_count == 0)
            h->watches[w].ev_first = i;
        h->watches[w].ev_count++;
    }
    return FL_OK;
}

/* One acknowledged write of a key: which lease the key held after it. */
struct lease_w {
    int32_t key;
    int64_t rev;
    int64_t lease;
};

static int lease_w_cmp(const void *a, const void *b)
{
    const struct lease_w *x = a, *y = b;
    FL_CMP_STEP(x->key, y->key);
    FL_CMP_STEP(x->rev, y->rev);
    return 0;
}

/* The acknowledged single-key writes with revisions, by (key, revision). */
static struct lease_w *lease_writes(const struct chk_history *h, uint32_t *count)
{
    struct lease_w *w = NULL;
    uint32_t n = 0, cap = 0;
    for (uint32_t i = 0; i < h->op_count; i++) {
        const struct chk_op *op = &h->ops[i];
        if (op->status != CHK_ST_OK || op->rev == CHK_NO_REV || op->kind != CHK_OP_TXN ||
            (op->cmp_count && !(op->flags & CHK_OPF_SUCCEEDED_SET)))
            continue;
        bool succ = op->cmp_count == 0 || (op->flags & CHK_OPF_SUCCEEDED);
        uint32_t first = op->sub_first + (succ ? 0 : op->then_count);
        uint32_t cnt = succ ? op->then_count : op->else_count;
        for (uint32_t j = 0; j < cnt; j++) {
            const struct chk_sub *s = &h->subs[first + j];
            if (s->kind == CHK_SUB_RANGE || s->range_end != CHK_RANGE_ONE)
                continue;
            GROW(w, n, cap);
            w[n++] =
                (struct lease_w){s->key, op->rev, s->kind == CHK_SUB_PUT ? chk_sub_lease(h, s) : 0};
        }
    }
    if (n)
        qsort(w, n, sizeof(*w), lease_w_cmp);
    *count = n;
    return w;
}

/* A lease end recorded without its keys: the keys whose last acknowledged write at or
 * before its revision was a put with its lease. "At": a revoke that deleted nothing
 * answers with the current revision, which may be a write that detached the key (a put
 * without the lease); one that deleted keys owns its revision, so no other write sits
 * there. The deletes are appended at the end of subs (an op's slice need not follow
 * the previous op's). */
static void derive_lease_ends(struct chk_history *h)
{
    struct lease_w *w = NULL;
    uint32_t n = 0;
    bool built = false;
    for (uint32_t i = 0; i < h->op_count; i++) {
        struct chk_op *op = &h->ops[i];
        if (!(op->flags & CHK_OPF_LEASE_END) || (op->flags & CHK_OPF_LEASE_KEYS) ||
            op->then_count || op->else_count || op->cmp_count || op->lease == 0)
            continue;
        if (!built) {
            w = lease_writes(h, &n);
            built = true;
        }
        int64_t before = op->rev == CHK_NO_REV ? INT64_MAX : op->rev;
        op->sub_first = h->sub_count;
        for (uint32_t a = 0; a < n;) {
            uint32_t b = a;
            int64_t lease = 0;
            while (b < n && w[b].key == w[a].key) {
                if (w[b].rev <= before)
                    lease = w[b].lease;
                b++;
            }
            if (lease == op->lease) {
                GROW(h->subs, h->sub_count, h->sub_cap);
                struct chk_sub *s = &h->subs[h->sub_count++];
                memset(s, 0, sizeof(*s));
                s->kind = CHK_SUB_DELETE;
                s->key = w[a].key;
                s->range_end = CHK_RANGE_ONE;
                s->value = CHK_NIL;
                s->kv_first = h->kv_count;
                op->then_count++;
            }
            a = b;
        }
    }
    free(w);
}

int chk_history_finish(struct chk_history *h, struct fl_buf *err)
{
    FL_ASSERT(!h->finished);
    uint32_t nk = h->keys.count;
    h->key_rank = fl_malloc((nk + 1) * sizeof(uint32_t));
    h->key_order = fl_malloc((nk + 1) * sizeof(uint32_t));
    for (uint32_t i = 0; i < nk; i++)
        h->key_order[i] = i;
    g_sort_keys = &h->keys;
    if (nk)
        qsort(h->key_order, nk, sizeof(uint32_t), key_cmp);
    g_sort_keys = NULL;
    for (uint32_t r = 0; r < nk; r++)
        h->key_rank[h->key_order[r]] = r;
    derive_lease_ends(h);
    h->has_revs = true;
    for (uint32_t i = 0; i < h->op_count; i++) {
        const struct chk_op *op = &h->ops[i];
        if (op->return_ns != CHK_NEVER && op->return_ns < op->call_ns) {
            fl_buf_printf(err, "line %u: operation %lld returns (%lld) before its call (%lld)",
                          op->line, (long long)op->op_id, (long long)op->return_ns,
                          (long long)op->call_ns);
            return FL_EINVAL;
        }
        /* etcd's revisions start at 1: a lower one is no revision a member gave, and
         * the two engines would read it differently (the revision engine set such an
         * op aside, the search placed it before everything). */
        if (op->rev != CHK_NO_REV && op->rev < 1) {
            fl_buf_printf(err, "line %u: operation %lld has revision %lld (revisions start at 1)",
                          op->line, (long long)op->op_id, (long long)op->rev);
            return FL_EINVAL;
        }
        if (op->status == CHK_ST_OK && op->rev == CHK_NO_REV)
            h->has_revs = false;
        if (op->kind == CHK_OP_COMPACT)
            h->compactions_known = true;
    }
    int rc = finish_watches(h, err);
    if (rc)
        return rc;
    /* An op's subs are &subs[sub_first] even when it has none: never NULL + 0 (fuzz: a
     * history of empty txns only). */
    if (!h->subs) {
        h->subs = fl_calloc(1, sizeof(*h->subs));
        h->sub_cap = 1;
    }
    intern_release(&h->keys);
    intern_release(&h->values);
    h->finished = true;
    return FL_OK;
}

const char *chk_verdict_name(int v)
{
    switch (v) {
    case CHK_PASS:
        return "pass";
    case CHK_FAIL:
        return "fail";
    default:
        return "unknown";
    }
}

static const char *const guarantee_names[CHK_G_COUNT] = {"ordered",   "unique",       "atomic",
                                                         "filter",    "bookmarkable", "resumable",
                                                         "is_create", "prev_kv",      "reliable"};

const char *chk_guarantee_name(int g)
{
    FL_ASSERT(g >= 0 && g < CHK_G_COUNT);
    return guarantee_names[g];
}

/* ---- a history cut at a time --------------------------------------------------- */

static void cut_op(struct chk_history *out, const struct chk_history *h, const struct chk_op *op,
                   bool pending)
{
    struct chk_op *o = chk_history_op_add(out);
    uint32_t cmp_first = o->cmp_first, sub_first = o->sub_first;
    *o = *op;
    o->cmp_first = cmp_first;
    o->sub_first = sub_first;
    o->cmp_count = 0;
    o->then_count = o->else_count = 0;
    if (pending) {
        o->status = CHK_ST_UNKNOWN;
        o->return_ns = CHK_NEVER;
        o->rev = CHK_NO_REV;
        o->err = CHK_ERR_NONE;
        o->flags &= (uint8_t) ~(CHK_OPF_SUCCEEDED | CHK_OPF_SUCCEEDED_SET | CHK_OPF_HAS_RESULT);
    }
    /* a lease end's deletes were derived at finish: they are given now */
    if (op->flags & CHK_OPF_LEASE_END)
        o->flags |= CHK_OPF_LEASE_KEYS;
    for (uint32_t c = 0; c < op->cmp_count; c++)
        *chk_history_cmp_add(out) = h->cmps[op->cmp_first + c];
    uint32_t n = (uint32_t)op->then_count + op->else_count;
    for (uint32_t k = 0; k < n; k++) {
        const struct chk_sub *in = &h->subs[op->sub_first + k];
        struct chk_sub *s = chk_history_sub_add(out, k >= op->then_count);
        uint32_t kv_first = s->kv_first;
        *s = *in;
        s->kv_first = kv_first;
        s->kv_count = 0;
        if (in->kind == CHK_SUB_PUT)
            chk_history_sub_lease_set(out, s, chk_sub_lease(h, in));
        if (pending) {
            s->flags &= (uint8_t) ~(CHK_SUBF_COUNT_SET | CHK_SUBF_KVS_SET | CHK_SUBF_RESULT_SET);
            s->count = 0;
            continue;
        }
        for (uint32_t v = 0; v < in->kv_count; v++)
            *chk_history_kv_add(out) = h->kvs[in->kv_first + v];
        s->flags = in->flags; /* kv_add sets flags a sub without kvs may not have had */
    }
}

void chk_history_cut(const struct chk_history *h, int64_t t_ns, struct chk_history *out,
                     struct chk_cut_stats *stats)
{
    struct chk_cut_stats st = {0, 0, 0, 0};
    chk_history_init(out);
    /* keys and values first, in id order: every id stays what it was */
    for (uint32_t i = 0; i < h->keys.count; i++) {
        size_t n;
        const uint8_t *p = chk_key_bytes(h, (int32_t)i, &n);
        chk_history_key(out, p, n);
    }
    for (uint32_t i = 0; i < h->values.count; i++) {
        size_t n;
        const uint8_t *p = chk_value_bytes(h, (int32_t)i, &n);
        chk_history_value(out, p ? p : (const uint8_t *)"", n);
    }
    out->empty_is_absent = h->empty_is_absent;
    out->revisions_complete = h->revisions_complete;
    for (uint32_t i = 0; i < h->op_count; i++) {
        const struct chk_op *op = &h->ops[i];
        if (op->call_ns >= t_ns) {
            st.ops_after++;
            continue;
        }
        bool pending = op->return_ns == CHK_NEVER || op->return_ns >= t_ns;
        st.ops_pending += pending && op->return_ns != CHK_NEVER;
        cut_op(out, h, op, pending);
    }
    for (uint32_t i = 0; i < h->watch_count; i++) {
        const struct chk_watch *w = &h->watches[i];
        if (w->opened_ns >= t_ns) {
            st.watches_after++;
            st.events_after += w->ev_count;
            continue;
        }
        struct chk_watch *o = chk_history_watch_add(out);
        *o = *w;
        o->ev_first = o->ev_count = 0;
        if (o->closed_ns > t_ns)
            o->closed_ns = t_ns;
        for (uint32_t k = 0; k < w->ev_count; k++) {
            const struct chk_wevent *e = &h->events[w->ev_first + k];
            if (e->t_ns >= t_ns) {
                st.events_after++;
                continue;
            }
            *chk_history_event_add(out) = *e;
        }
    }
    if (stats)
        *stats = st;
}

/* ---- equality ------------------------------------------------------------------- */

static bool intern_equal(const struct chk_intern *a, const struct chk_intern *b)
{
    if (a->count != b->count)
        return false;
    for (uint32_t i = 0; i < a->count; i++) {
        size_t na, nb;
        const uint8_t *pa = chk_intern_bytes(a, (int32_t)i, &na);
        const uint8_t *pb = chk_intern_bytes(b, (int32_t)i, &nb);
        if (na != nb || memcmp(pa, pb, na))
            return false;
    }
    return true;
}

#define NE(f) (x->f != y->f)

static bool op_equal(const struct chk_op *x, const struct chk_op *y)
{
    return !(NE(call_ns) || NE(return_ns) || NE(rev) || NE(compact_rev) || NE(op_id) || NE(lease) ||
             NE(client) || NE(line) || NE(kind) || NE(status) || NE(err) || NE(flags) ||
             NE(cmp_first) || NE(cmp_count) || NE(sub_first) || NE(then_count) || NE(else_count));
}

static bool cmp_equal(const struct chk_cmp *x, const struct chk_cmp *y)
{
    return !(NE(key) || NE(target) || NE(result) || NE(operand));
}

static bool sub_equal(const struct chk_sub *x, const struct chk_sub *y)
{
    return !(NE(kind) || NE(flags) || NE(key) || NE(range_end) || NE(value) || NE(req_rev) ||
             NE(limit) || NE(count) || NE(kv_first) || NE(kv_count));
}

static bool lease_equal(const struct chk_sub_lease *x, const struct chk_sub_lease *y)
{
    return !(NE(sub) || NE(lease));
}

static bool kv_equal(const struct chk_kv *x, const struct chk_kv *y)
{
    return !(NE(key) || NE(value) || NE(create_rev) || NE(mod_rev) || NE(version));
}

static bool watch_equal(const struct chk_watch *x, const struct chk_watch *y)
{
    return !(NE(watch_id) || NE(client) || NE(key) || NE(range_end) || NE(flags) || NE(start_rev) ||
             NE(opened_ns) || NE(closed_ns) || NE(ev_first) || NE(ev_count) || NE(line));
}

static bool event_equal(const struct chk_wevent *x, const struct chk_wevent *y)
{
    return !(NE(watch_id) || NE(seq) || NE(response) || NE(kind) || NE(key) || NE(value) ||
             NE(prev_value) || NE(create_rev) || NE(mod_rev) || NE(version) || NE(t_ns) ||
             NE(line));
}

#undef NE

#define ARRAY_EQUAL(name, count, eq)                                                               \
    do {                                                                                           \
        if (a->count != b->count) {                                                                \
            snprintf(why, why_size, "%s: %u vs %u", name, (unsigned)a->count, (unsigned)b->count); \
            return false;                                                                          \
        }                                                                                          \
        for (uint32_t i_ = 0; i_ < a->count; i_++) {                                               \
            if (!eq) {                                                                             \
                snprintf(why, why_size, "%s[%u] differs", name, (unsigned)i_);                     \
                return false;                                                                      \
            }                                                                                      \
        }                                                                                          \
    } while (0)

bool chk_history_equal(const struct chk_history *a, const struct chk_history *b, char *why,
                       size_t why_size)
{
    snprintf(why, why_size, "equal");
    if (!intern_equal(&a->keys, &b->keys)) {
        snprintf(why, why_size, "keys differ");
        return false;
    }
    if (!intern_equal(&a->values, &b->values)) {
        snprintf(why, why_size, "values differ");
        return false;
    }
    ARRAY_EQUAL("ops", op_count, op_equal(&a->ops[i_], &b->ops[i_]));
    ARRAY_EQUAL("cmps", cmp_count, cmp_equal(&a->cmps[i_], &b->cmps[i_]));
    ARRAY_EQUAL("subs", sub_count, sub_equal(&a->subs[i_], &b->subs[i_]));
    ARRAY_EQUAL("sub leases", sub_lease_count, lease_equal(&a->sub_leases[i_], &b->sub_leases[i_]));
    ARRAY_EQUAL("kvs", kv_count, kv_equal(&a->kvs[i_], &b->kvs[i_]));
    ARRAY_EQUAL("watches", watch_count, watch_equal(&a->watches[i_], &b->watches[i_]));
    ARRAY_EQUAL("events", event_count, event_equal(&a->events[i_], &b->events[i_]));
    if (a->finished != b->finished || a->has_revs != b->has_revs ||
        a->empty_is_absent != b->empty_is_absent ||
        a->revisions_complete != b->revisions_complete ||
        a->compactions_known != b->compactions_known) {
        snprintf(why, why_size, "flags differ");
        return false;
    }
    return true;
}
