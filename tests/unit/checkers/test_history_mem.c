/*
 * test_history_mem.c: what chk_history_finish does to keep a finished history small,
 * with the content unchanged:
 *   - the interners' lookup tables are freed (checking looks bytes up by id), and an
 *     add after that (an append's result while checking) rebuilds them: existing bytes
 *     keep their ids, new bytes get the next one;
 *   - a watch event takes 72 bytes (it took 80 with a 64-bit seq);
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
    /* after finish (as an append's result while checking): same ids for known bytes */
    CHECK_EQ_INT(chk_history_value(&h, "v0", 2), 0);
    CHECK_EQ_INT(chk_history_value(&h, "v2999", 5), 2999);
    CHECK_EQ_INT(chk_history_value(&h, "new", 3), 3000);
    CHECK_EQ_INT(chk_history_value(&h, "new", 3), 3000);
    CHECK((uint64_t)h.values.slot_mask + 1 >= 2 * (uint64_t)h.values.count);
    size_t n;
    const uint8_t *p = chk_value_bytes(&h, 1234, &n);
    CHECK(n == 5 && memcmp(p, "v1234", 5) == 0);
    struct chk_result r;
    CHECK(chk_check(&h, NULL, &r) == FL_OK);
    CHECK_EQ_INT(r.verdict, CHK_PASS);
    chk_result_close(&r);
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
}

int main(void)
{
    FL_TEST(case_layout);
    FL_TEST(case_intern_released);
    FL_TEST(case_events_sorted);
    return fl_test_end();
}
