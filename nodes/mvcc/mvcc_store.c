/*
 * mvcc_store.c: the store object, its key index (sorted array with a lazily merged
 * tail, plus a lookup-only hash table), error texts, statistics, the backend size
 * model and the invariant checker. See mvcc_int.h for the layout.
 *
 * Must never iterate the hash table for anything that is observable: ordered work
 * goes through mvcc__index_sort and the sorted array.
 */
#include "nodes/mvcc/mvcc_int.h"
#include "harness/common/lower_bound.h"

static const struct {
    const char *text;
    enum mvcc_grpc_code code;
} mvcc_errs[MVCC_ERR_COUNT] = {
    [MVCC_OK] = {"", MVCC_GRPC_OK},
    [MVCC_ERR_COMPACTED] = {"etcdserver: mvcc: required revision has been compacted",
                            MVCC_GRPC_OUT_OF_RANGE},
    [MVCC_ERR_FUTURE_REV] = {"etcdserver: mvcc: required revision is a future revision",
                             MVCC_GRPC_OUT_OF_RANGE},
    [MVCC_ERR_DUPLICATE_KEY] = {"etcdserver: duplicate key given in txn request",
                                MVCC_GRPC_INVALID_ARGUMENT},
    [MVCC_ERR_KEY_NOT_GIVEN] = {"etcdserver: key is not provided", MVCC_GRPC_INVALID_ARGUMENT},
    [MVCC_ERR_TOO_MANY_OPS] = {"etcdserver: too many operations in txn request",
                               MVCC_GRPC_INVALID_ARGUMENT},
    [MVCC_ERR_LEASE_NOT_FOUND] = {"etcdserver: requested lease not found", MVCC_GRPC_NOT_FOUND},
    [MVCC_ERR_LEASE_EXISTS] = {"etcdserver: lease already exists", MVCC_GRPC_FAILED_PRECONDITION},
    [MVCC_ERR_LEASE_TTL_LARGE] = {"etcdserver: too large lease TTL", MVCC_GRPC_OUT_OF_RANGE},
    [MVCC_ERR_KEY_NOT_FOUND] = {"etcdserver: key not found", MVCC_GRPC_INVALID_ARGUMENT},
    [MVCC_ERR_NO_SPACE] = {"etcdserver: mvcc: database space exceeded",
                           MVCC_GRPC_RESOURCE_EXHAUSTED},
    [MVCC_ERR_NOT_LEADER] = {"etcdserver: not leader", MVCC_GRPC_FAILED_PRECONDITION},
    [MVCC_ERR_WATCH_NOT_FOUND] = {"etcdserver: watch canceled", MVCC_GRPC_CANCELLED},
    /* The two below are faultline's own, not etcd wire errors. */
    [MVCC_ERR_BAD_SNAPSHOT] = {"mvcc: snapshot data is corrupt or truncated", MVCC_GRPC_DATA_LOSS},
    [MVCC_ERR_INVALID] = {"mvcc: invalid request", MVCC_GRPC_INVALID_ARGUMENT},
};

const char *mvcc_err_text(enum mvcc_err err)
{
    if ((int)err < 0 || err >= MVCC_ERR_COUNT)
        return "mvcc: unknown error";
    return mvcc_errs[err].text;
}

enum mvcc_grpc_code mvcc_err_code(enum mvcc_err err)
{
    if ((int)err < 0 || err >= MVCC_ERR_COUNT)
        return MVCC_GRPC_UNKNOWN;
    return mvcc_errs[err].code;
}

void mvcc_config_default(struct mvcc_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->lease_min_ttl_s = 0;
    cfg->lease_max_ttl_s = INT64_C(9000000000);
    cfg->max_txn_ops = 128;
    cfg->watch_batch_events_max = 1000;
    cfg->watch_sync_events_max = 0;
    cfg->watch_queue_max = 0;
    cfg->backend_base_bytes = 16384;
    cfg->backend_rev_overhead_bytes = 64;
    cfg->defrag_base_ns = 10 * FL_MS;
    cfg->defrag_ns_per_kib = 10 * FL_US;
}

struct mvcc_store *mvcc_open(const struct mvcc_config *cfg)
{
    struct mvcc_store *s = fl_calloc(1, sizeof(*s));
    if (cfg)
        s->cfg = *cfg;
    else
        mvcc_config_default(&s->cfg);
    FL_ASSERT(s->cfg.watch_batch_events_max > 0);
    FL_ASSERT(s->cfg.backend_base_bytes >= 0 && s->cfg.backend_rev_overhead_bytes >= 0);
    s->current_rev = 1;
    s->size_bytes = s->cfg.backend_base_bytes;
    s->live_bytes = s->cfg.backend_base_bytes;
    s->next_watch_id = 1;
    s->next_resp_seq = 1;
    return s;
}

#define VCHUNK_MIN 192u
#define VCHUNK_MAX 32768u

static void vchunks_free(struct mvcc_vchunk *c)
{
    while (c) {
        struct mvcc_vchunk *next = c->next;
        free(c);
        c = next;
    }
}

uint8_t *mvcc__val_store(struct mvcc_key *k, const void *p, size_t n)
{
    if (n == 0)
        return NULL;
    FL_ASSERT(n <= UINT32_MAX);
    struct mvcc_vchunk *c = k->vals;
    if (!c || c->cap - c->used < n) {
        size_t cap = c ? FL_MIN((size_t)c->cap * 2, (size_t)VCHUNK_MAX) : VCHUNK_MIN;
        if (cap < n)
            cap = n;
        c = fl_malloc(sizeof(*c) + cap);
        c->next = k->vals;
        c->cap = (uint32_t)cap;
        c->used = 0;
        k->vals = c;
    }
    uint8_t *dst = c->data + c->used;
    memcpy(dst, p, n);
    c->used += (uint32_t)n;
    k->vals_live += n;
    k->vals_alloc += n;
    return dst;
}

void mvcc__val_drop(struct mvcc_key *k, const struct mvcc_rev *r)
{
    FL_ASSERT(k->vals_live >= r->val_len);
    k->vals_live -= r->val_len;
}

void mvcc__vals_maybe_rebuild(struct mvcc_key *k)
{
    if (k->vals_alloc <= 2 * k->vals_live + VCHUNK_MAX)
        return;
    struct mvcc_vchunk *old = k->vals;
    k->vals = NULL;
    k->vals_live = k->vals_alloc = 0;
    for (size_t i = 0; i < k->revs_len; i++)
        k->revs[i].val = mvcc__val_store(k, k->revs[i].val, k->revs[i].val_len);
    vchunks_free(old);
}

void mvcc__key_free(struct mvcc_key *k)
{
    vchunks_free(k->vals);
    free(k->revs);
    free(k->key);
    free(k);
}

void mvcc_close(struct mvcc_store *s)
{
    if (!s)
        return;
    mvcc__watch_close_all(s);
    for (size_t i = 0; i < s->keys_len; i++)
        mvcc__key_free(s->keys[i]);
    for (size_t i = 0; i < s->leases_len; i++)
        mvcc__lease_free(s->leases[i]);
    free(s->leases);
    free(s->keys);
    free(s->table);
    free(s->log);
    free(s);
}

int64_t mvcc_current_rev(const struct mvcc_store *s)
{
    return s->current_rev;
}

int64_t mvcc_compact_rev(const struct mvcc_store *s)
{
    return s->compact_rev;
}

uint64_t mvcc_applied_index(const struct mvcc_store *s)
{
    return s->applied_index;
}

void mvcc_set_applied_index(struct mvcc_store *s, uint64_t index)
{
    s->applied_index = index;
}

/* ---------------------------------------------------------------- key index */

int mvcc__bytes_cmp(const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
    size_t n = an < bn ? an : bn;
    int c = n ? memcmp(a, b, n) : 0;
    if (c)
        return c;
    return an < bn ? -1 : (an > bn ? 1 : 0);
}

bool mvcc__in_range(const uint8_t *k, size_t kn, const uint8_t *key, size_t key_len,
                    const uint8_t *end, size_t end_len)
{
    if (end_len == 0)
        return kn == key_len && (kn == 0 || memcmp(k, key, kn) == 0);
    if (mvcc__bytes_cmp(k, kn, key, key_len) < 0)
        return false;
    if (end_len == 1 && end[0] == 0)
        return true;
    return mvcc__bytes_cmp(k, kn, end, end_len) < 0;
}

static void table_insert(struct mvcc_store *s, struct mvcc_key *k)
{
    size_t mask = s->table_cap - 1;
    size_t i = (size_t)k->hash & mask;
    while (s->table[i])
        i = (i + 1) & mask;
    s->table[i] = k;
    s->table_used++;
}

static void table_rebuild(struct mvcc_store *s, size_t want)
{
    size_t cap = fl_grow_cap(0, want * 2, 16, sizeof(*s->table));
    free(s->table);
    s->table = fl_calloc(cap, sizeof(*s->table));
    s->table_cap = cap;
    s->table_used = 0;
    for (size_t i = 0; i < s->keys_len; i++)
        table_insert(s, s->keys[i]);
}

/* Equal bytes; short keys (the usual) compared in 8-byte words without a call. */
static inline bool key_bytes_eq(const uint8_t *a, const uint8_t *b, size_t n)
{
    if (n > 16)
        return memcmp(a, b, n) == 0;
    uint64_t x = 0, y = 0, u = 0, v = 0;
    if (n >= 8) {
        memcpy(&x, a, 8);
        memcpy(&y, b, 8);
        memcpy(&u, a + n - 8, 8); /* overlapping tail */
        memcpy(&v, b + n - 8, 8);
        return x == y && u == v;
    }
    memcpy(&x, a, n);
    memcpy(&y, b, n);
    return x == y;
}

struct mvcc_key *mvcc__key_find(const struct mvcc_store *s, const uint8_t *k, size_t n)
{
    if (!s->table_cap)
        return NULL;
    uint64_t h = fl_hash64(k, n);
    size_t mask = s->table_cap - 1;
    for (size_t i = (size_t)h & mask;; i = (i + 1) & mask) {
        struct mvcc_key *e = s->table[i];
        if (!e)
            return NULL;
        if (e->hash == h && e->key_len == n && key_bytes_eq(e->key, k, n))
            return e;
    }
}

struct mvcc_key *mvcc__key_get_or_add(struct mvcc_store *s, const uint8_t *k, size_t n)
{
    struct mvcc_key *e = mvcc__key_find(s, k, n);
    if (e)
        return e;
    FL_ASSERT(n > 0);
    e = fl_calloc(1, sizeof(*e));
    e->key = fl_memdup(k, n);
    e->key_len = n;
    e->hash = fl_hash64(k, n);
    FL_GROW(s->keys, s->keys_cap, s->keys_len + 1, 64);
    s->keys[s->keys_len++] = e;
    if ((s->table_used + 1) * 2 > s->table_cap)
        table_rebuild(s, s->keys_len);
    else
        table_insert(s, e);
    return e;
}

static int key_ptr_cmp(const void *a, const void *b)
{
    const struct mvcc_key *x = *(struct mvcc_key *const *)a;
    const struct mvcc_key *y = *(struct mvcc_key *const *)b;
    /* Keys are unique, so this is a total order. */
    return mvcc__bytes_cmp(x->key, x->key_len, y->key, y->key_len);
}

void mvcc__index_sort(struct mvcc_store *s)
{
    if (s->sorted_len == s->keys_len)
        return;
    size_t tail = s->keys_len - s->sorted_len;
    qsort(s->keys + s->sorted_len, tail, sizeof(*s->keys), key_ptr_cmp);
    if (s->sorted_len > 0) {
        /* Merge the sorted prefix and the sorted tail. */
        struct mvcc_key **out = fl_malloc(s->keys_cap * sizeof(*out));
        size_t i = 0, j = s->sorted_len, o = 0;
        while (i < s->sorted_len && j < s->keys_len)
            out[o++] = key_ptr_cmp(&s->keys[i], &s->keys[j]) < 0 ? s->keys[i++] : s->keys[j++];
        while (i < s->sorted_len)
            out[o++] = s->keys[i++];
        while (j < s->keys_len)
            out[o++] = s->keys[j++];
        FL_ASSERT(o == s->keys_len);
        free(s->keys);
        s->keys = out;
    }
    s->sorted_len = s->keys_len;
}

size_t mvcc__index_lower(const struct mvcc_store *s, const uint8_t *k, size_t n)
{
    FL_ASSERT(s->sorted_len == s->keys_len);
    size_t lo;
    FL_LOWER_BOUND(lo, s->keys_len, mid,
                   mvcc__bytes_cmp(s->keys[mid]->key, s->keys[mid]->key_len, k, n) < 0);
    return lo;
}

void mvcc__index_prune(struct mvcc_store *s)
{
    mvcc__index_sort(s);
    size_t o = 0;
    for (size_t i = 0; i < s->keys_len; i++) {
        struct mvcc_key *k = s->keys[i];
        if (k->revs_len == 0) {
            FL_ASSERT(k->lease == 0);
            mvcc__key_free(k);
        } else {
            s->keys[o++] = k;
        }
    }
    if (o != s->keys_len) {
        s->keys_len = o;
        s->sorted_len = o;
        table_rebuild(s, o);
    }
}

long mvcc__key_at(const struct mvcc_key *k, int64_t rev)
{
    if (k->revs_len == 0)
        return -1;
    if (k->revs[k->revs_len - 1].mod_rev <= rev)
        return (long)k->revs_len - 1;
    size_t lo; /* first with mod_rev > rev */
    FL_LOWER_BOUND(lo, k->revs_len, mid, k->revs[mid].mod_rev <= rev);
    return (long)lo - 1;
}

int64_t mvcc__rev_cost(const struct mvcc_store *s, const struct mvcc_key *k,
                       const struct mvcc_rev *r)
{
    return (int64_t)k->key_len + (int64_t)r->val_len + s->cfg.backend_rev_overhead_bytes;
}

/* splitmix64's finalizer: every input bit moves every output bit. */
static uint64_t state_mix(uint64_t x)
{
    x ^= x >> 30;
    x *= UINT64_C(0xBF58476D1CE4E5B9);
    x ^= x >> 27;
    x *= UINT64_C(0x94D049BB133111EB);
    return x ^ (x >> 31);
}

uint64_t mvcc__rev_state_hash(const struct mvcc_key *k, const struct mvcc_rev *r)
{
    FL_ASSERT(!mvcc__rev_is_tomb(r));
    uint64_t x = state_mix(k->hash);
    x = state_mix(x ^ (uint64_t)r->create_rev);
    x = state_mix(x ^ (uint64_t)r->mod_rev);
    x = state_mix(x ^ (uint64_t)r->version);
    x = state_mix(x ^ (uint64_t)r->lease);
    return state_mix(x ^ fl_hash64(r->val ? (const void *)r->val : "", r->val_len));
}

uint64_t mvcc__state_hash_full(struct mvcc_store *s)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < s->keys_len; i++) {
        struct mvcc_key *k = s->keys[i];
        if (k->revs_len && !mvcc__rev_is_tomb(&k->revs[k->revs_len - 1])) {
            k->live_hash = mvcc__rev_state_hash(k, &k->revs[k->revs_len - 1]);
            sum += k->live_hash;
        }
    }
    return sum;
}

uint64_t mvcc_state_hash(const struct mvcc_store *s)
{
    return s->state_hash;
}

/* ---------------------------------------------------------------- stats, size */

void mvcc_stats_get(const struct mvcc_store *s, struct mvcc_stats *out)
{
    memset(out, 0, sizeof(*out));
    out->current_rev = s->current_rev;
    out->compact_rev = s->compact_rev;
    out->keys = (int64_t)s->keys_len;
    for (size_t i = 0; i < s->keys_len; i++) {
        const struct mvcc_key *k = s->keys[i];
        out->revisions += (int64_t)k->revs_len;
        if (k->revs_len && !mvcc__rev_is_tomb(&k->revs[k->revs_len - 1]))
            out->live_keys++;
    }
    out->leases = (int64_t)s->leases_len;
    out->watchers = (int64_t)s->watchers_live;
    /* Unsynced, as the watchers' flags say: catching up, or canceled. */
    out->unsynced_watchers = (int64_t)(s->unsynced_len + s->canceled_len);
    out->size_bytes = s->size_bytes;
    out->live_bytes = s->live_bytes;
    out->last_compact_removed = s->last_compact_removed;
}

int64_t mvcc_size_bytes(const struct mvcc_store *s)
{
    return s->size_bytes;
}

int64_t mvcc_live_bytes(const struct mvcc_store *s)
{
    return s->live_bytes;
}

int64_t mvcc_defrag_duration_ns(const struct mvcc_store *s)
{
    /* Rewriting reads the whole file and writes the live part: linear in size. */
    return s->cfg.defrag_base_ns + s->size_bytes / 1024 * s->cfg.defrag_ns_per_kib +
           (s->size_bytes % 1024) * s->cfg.defrag_ns_per_kib / 1024;
}

int64_t mvcc_defrag(struct mvcc_store *s)
{
    int64_t d = mvcc_defrag_duration_ns(s);
    FL_ASSERT(s->live_bytes <= s->size_bytes);
    s->size_bytes = s->live_bytes;
    return d;
}

int64_t mvcc_put_cost_bytes(const struct mvcc_store *s, size_t key_len, size_t value_len)
{
    return (int64_t)key_len + (int64_t)value_len + s->cfg.backend_rev_overhead_bytes;
}
