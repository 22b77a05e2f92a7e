/*
 * chk_sort.c: a stable least-significant-digit radix sort of (64-bit key, 32-bit
 * value) pairs for the revision engine's time orders (ops by call, ops by return).
 *
 * qsort with a comparator that reaches into the op array was a fifth of the revision
 * engine's instructions at 1M operations (two sorts, ~20 comparisons per op, each two
 * cache misses). Here the keys are copied once and each pass is one counting sweep
 * over 8 bits; passes over a byte every key shares are skipped, so a history spanning
 * 100 s of nanosecond times takes 5 passes. Stable: equal keys keep their input
 * order, which is how callers get ties broken by op index.
 *
 * Owns nothing after it returns; allocates two scratch arrays of n pairs.
 *
 * chk__sort_wev orders watch events by (mod revision, key rank, watch id, index) for
 * the revision engine (chk_gap.c's wev): the first two packed into one key for the
 * radix sort, then each run of equal (revision, key), a few events (one per watch that
 * saw the change), by watch id. qsort with a comparator reading the events was 19% of
 * the engine's instructions at 1M generated operations (1.5M events).
 */
#include "checkers/chk_rev_int.h"

/* One counting pass on byte `shift / 8` of the keys, from (k, v) into (k2, v2). */
static void radix_pass(const uint64_t *k, const uint32_t *v, uint64_t *k2, uint32_t *v2, uint32_t n,
                       unsigned shift)
{
    uint32_t count[257] = {0};
    for (uint32_t i = 0; i < n; i++)
        count[((k[i] >> shift) & 0xff) + 1]++;
    for (uint32_t b = 0; b < 256; b++)
        count[b + 1] += count[b];
    FL_ASSERT(count[256] == n);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t d = (uint32_t)((k[i] >> shift) & 0xff);
        uint32_t at = count[d]++;
        k2[at] = k[i];
        v2[at] = v[i];
    }
}

void chk__sort_keyed(uint64_t *key, uint32_t *val, uint32_t n)
{
    if (n < 2)
        return;
    uint64_t lo = key[0], diff = 0;
    for (uint32_t i = 1; i < n; i++)
        lo = FL_MIN(lo, key[i]);
    for (uint32_t i = 0; i < n; i++)
        diff |= key[i] ^ lo; /* the bits that differ between some key and the least */
    uint64_t *k2 = fl_malloc((size_t)n * sizeof(uint64_t));
    uint32_t *v2 = fl_malloc((size_t)n * sizeof(uint32_t));
    uint64_t *ka = key, *kb = k2;
    uint32_t *va = val, *vb = v2;
    for (unsigned shift = 0; shift < 64; shift += 8) {
        if (!((diff >> shift) & 0xff))
            continue; /* every key has the same byte here: the pass would keep the order */
        radix_pass(ka, va, kb, vb, n, shift);
        uint64_t *tk = ka;
        ka = kb;
        kb = tk;
        uint32_t *tv = va;
        va = vb;
        vb = tv;
    }
    if (ka != key) {
        memcpy(key, ka, (size_t)n * sizeof(uint64_t));
        memcpy(val, va, (size_t)n * sizeof(uint32_t));
    }
    for (uint32_t i = 1; i < n; i++)
        FL_ASSERT(key[i - 1] <= key[i]);
    free(k2);
    free(v2);
}

/* Bits needed for values below n (0 for n <= 1). */
static unsigned bits_below(uint64_t n)
{
    unsigned b = 0;
    while (b < 64 && (n - 1) >> b)
        b++;
    return n <= 1 ? 0 : b;
}

/* Within runs of equal (mod revision, key), orders by watch id, ties by index (the
 * input order the stable sort kept). Insertion sort: runs are a few events. */
static void wev_runs_by_watch(const struct chk_history *h, uint32_t *idx, uint32_t n)
{
    for (uint32_t a = 0, b; a < n; a = b) {
        const struct chk_wevent *x = &h->events[idx[a]];
        for (b = a + 1; b < n; b++) {
            const struct chk_wevent *y = &h->events[idx[b]];
            if (y->mod_rev != x->mod_rev || y->key != x->key)
                break;
        }
        for (uint32_t i = a + 1; i < b; i++) {
            uint32_t v = idx[i], j = i;
            int64_t w = h->events[v].watch_id;
            while (j > a && (h->events[idx[j - 1]].watch_id > w ||
                             (h->events[idx[j - 1]].watch_id == w && idx[j - 1] > v))) {
                idx[j] = idx[j - 1];
                j--;
            }
            idx[j] = v;
        }
    }
}

bool chk__sort_wev(const struct chk_history *h, uint32_t *idx, uint32_t n)
{
    if (n < 2)
        return true;
    unsigned kb = bits_below(h->keys.count);
    int64_t hi = 0;
    for (uint32_t i = 0; i < n; i++) {
        const struct chk_wevent *e = &h->events[idx[i]];
        FL_ASSERT(e->mod_rev >= 0 && e->key >= 0 && (uint32_t)e->key < h->keys.count);
        hi = FL_MAX(hi, e->mod_rev);
    }
    if (kb >= 64 || bits_below((uint64_t)hi + 1) > 64 - kb)
        return false; /* does not pack into 64 bits: the caller sorts otherwise */
    uint64_t *key = fl_malloc((size_t)n * sizeof(uint64_t));
    for (uint32_t i = 0; i < n; i++) {
        const struct chk_wevent *e = &h->events[idx[i]];
        key[i] = (uint64_t)e->mod_rev << kb | h->key_rank[e->key];
    }
    chk__sort_keyed(key, idx, n);
    free(key);
    wev_runs_by_watch(h, idx, n);
    return true;
}
