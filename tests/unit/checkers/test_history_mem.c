/*
 * test_history_mem.c: what chk_history_finish does to keep a finished history small,
 * with the content unchanged:
 *   - the interners' lookup tables are freed (checking looks bytes up by id), and an
 *     add after that (an append's result while checking) rebuilds them: existing bytes
 *     keep their ids, new bytes get the next one; the hashes are freed with them, and
 *     lengths come from the offsets;
 *   - a watch event takes 72 bytes (it took 80 with a 64-bit seq), an op 64 (72 with a
 *     64-bit op id), a sub-operation 40 (48 with its lease: leases are kept aside);
 *   - watch events are sorted by (watch, seq, line) through an index permutation
 *     (instead of qsort's copy of the events), stably, into the same order a stable
 *     sort gives, also when they were out of order across and within watches.
 */
#include "fl_test.h"

#include "checkers/checkers.h"
#include "finish_fixture.h"

static void case_intern_released(void)
{
    struct chk_history h;
    chk_history_init(&h);
    char b[16];
    int32_t k = chk_history_key(&h, "k", 1);
    for (int i = 0; i < 3000; i++) { /* past the first table size: a rehash happened */
        int n = snprintf(b, sizeof b, "v%d", i);
        CHECK_EQ_INT(chk_history_value(&h, b, (size_t)n), i);
        chk_history_put(&h, 1, k, i, 10 * i + 1, 10 * i + 5, CHK_ST_OK, i + 2);
    }
    CHECK(h.values.slots != NULL);
    CHECK(finish(&h));
    CHECK(h.values.slots == NULL && h.values.slot_mask == 0);
    CHECK(h.keys.slots == NULL);
    /* the hashes go too (a rehash recomputes them from the bytes) */
    CHECK(h.values.hash == NULL && h.keys.hash == NULL);
    /* after finish (as an append's result while checking): same ids for known bytes */
    CHECK_EQ_INT(chk_history_value(&h, "v0", 2), 0);
    CHECK_EQ_INT(chk_history_value(&h, "v2999", 5), 2999);
    CHECK_EQ_INT(chk_history_value(&h, "new", 3), 3000);
    CHECK_EQ_INT(chk_history_value(&h, "new", 3), 3000);
    CHECK((uint64_t)h.values.slot_mask + 1 >= 2 * (uint64_t)h.values.count);
    size_t n;
    const uint8_t *p = chk_value_bytes(&h, 1234, &n);
    CHECK(n == 5 && memcmp(p, "v1234", 5) == 0);
    p = chk_value_bytes(&h, 3000, &n); /* the last id: its length from the end offset */
    CHECK(n == 3 && memcmp(p, "new", 3) == 0);
    struct chk_result r;
    CHECK(chk_check(&h, NULL, &r) == FL_OK);
    CHECK_EQ_INT(r.verdict, CHK_PASS);
    chk_result_close(&r);
    chk_history_close(&h);
}

/* Empty and non-empty bytes interned before and after finish: lengths come from the
 * offsets (no length array), an empty first string has no bytes at all, and the
 * rebuilt hashes find every earlier id. */
static void case_intern_lengths(void)
{
    struct chk_history h;
    chk_history_init(&h);
    CHECK_EQ_INT(chk_history_value(&h, "", 0), 0);
    CHECK_EQ_INT(chk_history_value(&h, "ab", 2), 1);
    CHECK_EQ_INT(chk_history_value(&h, "", 0), 0);
    int32_t k = chk_history_key(&h, "", 0);
    CHECK_EQ_INT(k, 0);
    CHECK_EQ_INT(chk_history_key(&h, "k", 1), 1);
    chk_history_put(&h, 1, k, 1, 1, 5, CHK_ST_OK, 2);
    CHECK(finish(&h));
    CHECK(h.values.hash == NULL);
    size_t n = 99;
    (void)chk_value_bytes(&h, 0, &n);
    CHECK(n == 0);
    const uint8_t *p = chk_value_bytes(&h, 1, &n);
    CHECK(n == 2 && memcmp(p, "ab", 2) == 0);
    CHECK_EQ_INT(chk_history_value(&h, "ab", 2), 1); /* rebuilt from the bytes */
    CHECK_EQ_INT(chk_history_value(&h, "", 0), 0);
    CHECK_EQ_INT(chk_history_value(&h, "abc", 3), 2);
    p = chk_value_bytes(&h, 2, &n);
    CHECK(n == 3 && memcmp(p, "abc", 3) == 0);
    p = chk_key_bytes(&h, 1, &n);
    CHECK(n == 1 && p[0] == 'k');
    chk_history_close(&h);
}

/* Leases of puts kept aside by sub-operation index: set in order, changed or cleared
 * on the last one set, read back by binary search; a history cut keeps them, and
 * equality compares them. */
static void case_sub_leases(void)
{
    struct chk_history h;
    chk_history_init(&h);
    int32_t k = chk_history_key(&h, "k", 1);
    int32_t v = chk_history_value(&h, "v", 1);
    enum { N = 1000 };
    for (int i = 0; i < N; i++) {
        chk_history_put(&h, 1, k, v, 10 * i + 1, 10 * i + 5, CHK_ST_OK, i + 2);
        struct chk_sub *s = &h.subs[h.sub_count - 1];
        chk_history_sub_lease_set(&h, s, i % 3 == 0 ? 100 + i : 0);
        if (i % 7 == 0) /* changed after it was set */
            chk_history_sub_lease_set(&h, s, i % 3 == 0 ? 0 : 5);
    }
    for (int i = 0; i < N; i++) {
        int64_t want = i % 7 == 0 ? (i % 3 == 0 ? 0 : 5) : (i % 3 == 0 ? 100 + i : 0);
        CHECK_EQ_INT(chk_sub_lease(&h, &h.subs[i]), want);
    }
    CHECK(finish(&h));
    struct chk_history c;
    chk_history_cut(&h, INT64_MAX, &c, NULL);
    CHECK(finish(&c));
    char why[128];
    CHECK(chk_history_equal(&h, &c, why, sizeof why));
    chk_history_sub_lease_set(&c, &c.subs[N - 1], 77); /* the last one: a change */
    CHECK(!chk_history_equal(&h, &c, why, sizeof why));
    CHECK(strstr(why, "sub leases") != NULL);
    chk_history_close(&c);
    chk_history_close(&h);
}

/* Events of three watches added in a scrambled order: after finish they are grouped
 * per watch by seq, equal (watch, seq) kept in the order they were added (line ties
 * too), each watch's slice right. */
static void case_events_sorted(void)
{
    struct chk_history h;
    chk_history_init(&h);
    int32_t k = chk_history_key(&h, "k", 1);
    for (int w = 0; w < 3; w++) {
        struct chk_watch *cw = chk_history_watch_add(&h);
        cw->watch_id = 30 - 10 * w; /* 30, 20, 10 */
        cw->key = k;
    }
    enum { N = 600 };
    uint64_t x = 88172645463325252u;
    for (int i = 0; i < N; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        struct chk_wevent *e = chk_history_event_add(&h);
        e->watch_id = 10 * (int64_t)(1 + x % 3);
        e->seq = (uint32_t)((x >> 8) % 150); /* duplicates on purpose */
        e->kind = CHK_EV_PROGRESS;
        e->key = k;
        e->mod_rev = i; /* the order added, to check the ties */
        e->line = 7;
    }
    CHECK(finish(&h));
    CHECK_EQ_INT(h.event_count, N);
    for (uint32_t i = 1; i < h.event_count; i++) {
        const struct chk_wevent *a = &h.events[i - 1], *b = &h.events[i];
        CHECK(a->watch_id < b->watch_id ||
              (a->watch_id == b->watch_id &&
               (a->seq < b->seq || (a->seq == b->seq && a->mod_rev < b->mod_rev))));
    }
    uint32_t total = 0;
    for (uint32_t w = 0; w < h.watch_count; w++) {
        const struct chk_watch *cw = &h.watches[w];
        for (uint32_t i = 0; i < cw->ev_count; i++)
            CHECK(h.events[cw->ev_first + i].watch_id == cw->watch_id);
        total += cw->ev_count;
    }
    CHECK_EQ_INT(total, N);
    chk_history_close(&h);
}

/* The layout the arrays are sized by: a test that fails when a field grows them. */
static void case_layout(void)
{
    CHECK_EQ_INT(sizeof(struct chk_wevent), 72);
    CHECK_EQ_INT(sizeof(struct chk_op), 64);  /* 72 with a 64-bit op id */
    CHECK_EQ_INT(sizeof(struct chk_sub), 40); /* 48 with the lease inside */
    CHECK(chk_op_id_fits(0) && chk_op_id_fits(UINT32_MAX));
    CHECK(!chk_op_id_fits(-1) && !chk_op_id_fits((int64_t)UINT32_MAX + 1));
}

int main(void)
{
    FL_TEST(case_layout);
    FL_TEST(case_intern_released);
    FL_TEST(case_intern_lengths);
    FL_TEST(case_sub_leases);
    FL_TEST(case_events_sorted);
    return fl_test_end();
}
