/*
 * client_index.c: the indexes that keep a client's stream and call bookkeeping
 * linear in the number of streams and calls (issue 12, item 7: with plain arrays,
 * each reconcile looked up every stream, and every call, by id in that array, so N
 * watches, or N calls in flight, cost O(N^3)).
 *
 *   - kvc_idmap: a 64-bit id -> stream or call map (open addressing, linear probing,
 *     backward-shift deletion). It is for lookups only and is never iterated, so its
 *     slot order (a hash order) can never reach a run's behaviour (DESIGN §6).
 *   - kvc_slist: an unordered intrusive set of streams (one per stream state queue:
 *     waiting streams, open streams per endpoint). Whoever acts on several members of
 *     one sorts them by id first, so the order of actions is the id (= creation)
 *     order the plain array gave.
 *
 * Nothing here calls back into the client or the simulator.
 */
#include "nodes/client/client_int.h"
#include "harness/common/list.h"

/* ---------------------------------------------------------------- id map ------ */

static size_t kvc_idmap_slot(uint64_t key, size_t cap)
{
    /* A fixed multiplicative mix (no seed): ids are small consecutive integers. */
    uint64_t h = key * 0x9E3779B97F4A7C15ull;
    h ^= h >> 29;
    return (size_t)(h & (cap - 1));
}

static void kvc_idmap_grow(struct kvc_idmap *m)
{
    size_t old_cap = m->cap;
    uint64_t *old_keys = m->keys;
    void **old_vals = m->vals;
    m->cap = fl_grow_cap(old_cap, old_cap + 1, 16, sizeof(*m->keys));
    m->keys = fl_calloc(m->cap, sizeof(*m->keys));
    m->vals = fl_calloc(m->cap, sizeof(*m->vals));
    m->len = 0;
    for (size_t i = 0; i < old_cap; i++) {
        if (old_keys[i] != 0)
            kvc_idmap_put(m, old_keys[i], old_vals[i]);
    }
    free(old_keys);
    free(old_vals);
}

void kvc_idmap_put(struct kvc_idmap *m, uint64_t key, void *val)
{
    FL_ASSERT(key != 0 && val != NULL);
    if ((m->len + 1) * 4 > m->cap * 3)
        kvc_idmap_grow(m);
    size_t i = kvc_idmap_slot(key, m->cap);
    while (m->keys[i] != 0) {
        FL_ASSERT(m->keys[i] != key); /* ids are never reused */
        i = (i + 1) & (m->cap - 1);
    }
    m->keys[i] = key;
    m->vals[i] = val;
    m->len++;
}

void *kvc_idmap_get(const struct kvc_idmap *m, uint64_t key)
{
    if (key == 0 || m->cap == 0)
        return NULL;
    size_t i = kvc_idmap_slot(key, m->cap);
    while (m->keys[i] != 0) {
        if (m->keys[i] == key)
            return m->vals[i];
        i = (i + 1) & (m->cap - 1);
    }
    return NULL;
}

void kvc_idmap_del(struct kvc_idmap *m, uint64_t key)
{
    if (key == 0 || m->cap == 0)
        return;
    size_t mask = m->cap - 1;
    size_t i = kvc_idmap_slot(key, m->cap);
    while (m->keys[i] != key) {
        FL_ASSERT(m->keys[i] != 0); /* deleting a key that is not there */
        i = (i + 1) & mask;
    }
    /* Backward-shift: move later members of the probe run into the hole when their
     * home slot does not lie (cyclically) between the hole and them. */
    size_t j = i;
    for (;;) {
        j = (j + 1) & mask;
        if (m->keys[j] == 0)
            break;
        size_t home = kvc_idmap_slot(m->keys[j], m->cap);
        bool stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
        if (stays)
            continue;
        m->keys[i] = m->keys[j];
        m->vals[i] = m->vals[j];
        i = j;
    }
    m->keys[i] = 0;
    m->vals[i] = NULL;
    m->len--;
}

void kvc_idmap_free(struct kvc_idmap *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof(*m));
}

/* ---------------------------------------------------------------- stream sets - */

void kvc_slist_add(struct kvc_slist *l, struct kvc_stream *st)
{
    FL_ASSERT(st->q_list == NULL);
    st->q_list = l;
    FL_LIST_INSERT_HEAD(l->head, st, q_prev, q_next);
    l->len++;
}

void kvc_slist_unlink(struct kvc_stream *st)
{
    struct kvc_slist *l = st->q_list;
    if (l == NULL)
        return;
    FL_ASSERT(l->len > 0);
    FL_LIST_REMOVE(l->head, st, q_prev, q_next);
    st->q_list = NULL;
    l->len--;
}

static int kvc_stream_id_cmp(const void *a, const void *b)
{
    const struct kvc_stream *x = *(struct kvc_stream *const *)a;
    const struct kvc_stream *y = *(struct kvc_stream *const *)b;
    return x->id < y->id ? -1 : x->id > y->id;
}

void kvc_svec_push_list(struct kvc_svec *v, const struct kvc_slist *l)
{
    FL_GROW(v->p, v->cap, v->len + l->len, 16);
    for (struct kvc_stream *st = l->head; st; st = st->q_next)
        v->p[v->len++] = st;
}

void kvc_svec_sort(struct kvc_svec *v)
{
    /* Ids are unique, so the order is total and qsort's instability cannot show. */
    if (v->len > 1)
        qsort(v->p, v->len, sizeof(*v->p), kvc_stream_id_cmp);
}

/* ---------------------------------------------------------------- call queues - */

void kvc_clist_append(struct kvc_clist *l, struct kvc_call *call)
{
    FL_ASSERT(call->q_list == NULL);
    call->q_list = l;
    FL_TAILQ_INSERT_TAIL(l->head, l->tail, call, q_prev, q_next);
    l->len++;
}

void kvc_clist_unlink(struct kvc_call *call)
{
    struct kvc_clist *l = call->q_list;
    if (l == NULL)
        return;
    FL_ASSERT(l->len > 0);
    FL_TAILQ_REMOVE(l->head, l->tail, call, q_prev, q_next);
    call->q_list = NULL;
    l->len--;
}

static int kvc_u64_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

void kvc_ids_push_clist(struct kvc_ids *v, const struct kvc_clist *l, bool reads_only)
{
    FL_GROW(v->p, v->cap, v->len + l->len, 16);
    for (const struct kvc_call *call = l->head; call; call = call->q_next) {
        if (!reads_only || (!call->mutating && call->target < 0))
            v->p[v->len++] = call->id;
    }
}

void kvc_ids_sort(struct kvc_ids *v)
{
    if (v->len > 1)
        qsort(v->p, v->len, sizeof(*v->p), kvc_u64_cmp);
}
