/*
 * test_ivtree.c: the byte-string interval tree (harness/common/ivtree.c) against a
 * brute-force scan: random exact keys, bounded ranges, open-ended ranges and empty
 * ranges over a small alphabet (so keys share prefixes and bounds collide, and 0x00
 * bytes sit next to the virtual 0x00 of exact bounds), inserted and removed at random,
 * every invariant checked after each change, every query compared. Then the work
 * bound: a stab in a tree of exact keys examines O(height) nodes, not O(n).
 */
#include "fl_test.h"

#include "harness/common/common.h"
#include "harness/common/ivtree.h"

#define N 600

struct item {
    struct fl_ivnode iv;
    uint8_t key[4], end[4];
    size_t key_len, end_len;
    bool in, valid;
    int hits;
};

static struct item items[N];
static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t next_u64(void)
{
    uint64_t z = (rng += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static size_t rand_bytes(uint8_t *p, size_t max)
{
    size_t n = (size_t)(next_u64() % (max + 1));
    static const uint8_t alphabet[] = {0x00, 0x01, 'a', 'b', 0xff};
    for (size_t i = 0; i < n; i++)
        p[i] = alphabet[next_u64() % sizeof(alphabet)];
    return n;
}

static int cmp(const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
    size_t n = an < bn ? an : bn;
    int r = n ? memcmp(a, b, n) : 0;
    return r ? r : (an < bn ? -1 : an > bn);
}

/* etcd's rule, written out independently (mvcc__in_range). */
static bool brute_holds(const struct item *it, const uint8_t *k, size_t kn)
{
    if (it->end_len == 0)
        return kn == it->key_len && cmp(k, kn, it->key, it->key_len) == 0;
    if (cmp(k, kn, it->key, it->key_len) < 0)
        return false;
    if (it->end_len == 1 && it->end[0] == 0)
        return true;
    return cmp(k, kn, it->end, it->end_len) < 0;
}

static void on_hit(void *ctx, struct fl_ivnode *n)
{
    (void)ctx;
    struct item *it = (struct item *)((char *)n - offsetof(struct item, iv));
    it->hits++;
}

static void make_item(struct item *it, uint64_t id)
{
    it->key_len = rand_bytes(it->key, 3);
    switch (next_u64() % 4) {
    case 0:
        it->end_len = 0; /* exact key */
        break;
    case 1:
        it->end[0] = 0; /* every key >= key */
        it->end_len = 1;
        break;
    default:
        it->end_len = rand_bytes(it->end, 3);
        if (it->end_len == 0) {
            it->end[0] = 'b';
            it->end_len = 1;
        }
        break;
    }
    it->valid = fl_ivnode_set_etcd(&it->iv, id, it->key, it->key_len, it->end, it->end_len);
}

static void random_ops(void)
{
    struct fl_ivtree t = {0};
    uint64_t next_id = 1;
    int mismatches = 0, queries = 0;
    for (int step = 0; step < 20000; step++) {
        struct item *it = &items[next_u64() % N];
        if (it->in) {
            fl_ivtree_remove(&t, &it->iv);
            it->in = false;
        } else {
            make_item(it, next_id++);
            if (it->valid) {
                fl_ivtree_insert(&t, &it->iv);
                it->in = true;
            }
        }
        if (step % 50 == 0)
            fl_ivtree_check(&t);
        uint8_t k[4];
        size_t kn = rand_bytes(k, 3);
        for (size_t i = 0; i < N; i++)
            items[i].hits = 0;
        fl_ivtree_stab(&t, k, kn, on_hit, NULL);
        queries++;
        for (size_t i = 0; i < N; i++) {
            int want = items[i].in && brute_holds(&items[i], k, kn);
            if (items[i].hits != want)
                mismatches++;
            if (items[i].in &&
                fl_ivnode_holds(&items[i].iv, k, kn) != brute_holds(&items[i], k, kn))
                mismatches++;
        }
    }
    fl_ivtree_check(&t);
    CHECK_EQ_INT(mismatches, 0);
    CHECK(queries == 20000);
    /* An empty range is refused. */
    struct fl_ivnode n;
    CHECK(!fl_ivnode_set_etcd(&n, 1, (const uint8_t *)"b", 1, (const uint8_t *)"a", 1));
    CHECK(!fl_ivnode_set_etcd(&n, 1, (const uint8_t *)"b", 1, (const uint8_t *)"b", 1));
    CHECK(fl_ivnode_set_etcd(&n, 1, (const uint8_t *)"b", 1, (const uint8_t *)"b\0", 2));
}

/* 20000 exact keys: a stab that finds one examines a few nodes per level. */
#define BIG 20000
static struct fl_ivnode big[BIG];
static char big_keys[BIG][8];

static void count_hit(void *ctx, struct fl_ivnode *n)
{
    (void)n;
    (*(int *)ctx)++;
}

static void work_bound(void)
{
    struct fl_ivtree t = {0};
    for (int i = 0; i < BIG; i++) {
        snprintf(big_keys[i], sizeof(big_keys[i]), "k%05d", (i * 7919) % BIG);
        fl_ivnode_set_etcd(&big[i], (uint64_t)i + 1, (const uint8_t *)big_keys[i], 6, NULL, 0);
        fl_ivtree_insert(&t, &big[i]);
    }
    fl_ivtree_check(&t);
    size_t worst = 0;
    int found = 0;
    for (int i = 0; i < BIG; i += 7) {
        char k[16];
        snprintf(k, sizeof(k), "k%05d", i);
        int hits = 0;
        size_t v = fl_ivtree_stab(&t, (const uint8_t *)k, 6, count_hit, &hits);
        found += hits == 1;
        worst = v > worst ? v : worst;
    }
    printf("exact keys: %d, worst stab examined %zu nodes, root height %d\n", BIG, worst,
           t.root->height);
    CHECK_EQ_INT(found, (BIG + 6) / 7);
    CHECK(worst <= (size_t)(2 * t.root->height + 2));
    /* Remove every other one; the rest still answer. */
    for (int i = 0; i < BIG; i += 2)
        fl_ivtree_remove(&t, &big[i]);
    fl_ivtree_check(&t);
    CHECK_EQ_INT((long long)t.len, BIG / 2);
    int hits = 0;
    fl_ivtree_stab(&t, (const uint8_t *)big_keys[1], 6, count_hit, &hits);
    CHECK_EQ_INT(hits, 1);
    hits = 0;
    fl_ivtree_stab(&t, (const uint8_t *)big_keys[0], 6, count_hit, &hits);
    CHECK_EQ_INT(hits, 0);
}

int main(void)
{
    FL_TEST(random_ops);
    FL_TEST(work_bound);
    return fl_test_end();
}
