/*
 * test_chk_sort.c: the revision engine's sorts and the duplicate-application rule's
 * quick pass give what the plain ways give:
 *   - chk__sort_wev orders watch events as a qsort by (mod revision, key rank, watch
 *     id, index) does, with ties in all four, keys whose ids are not in byte order and
 *     watch ids not in creation order; it refuses (idx unchanged) revisions and key
 *     ranks that do not pack into 64 bits;
 *   - chk_dup_applications finds a duplicate among pairs that share a value with other
 *     keys (the quick pass buckets pairs by value id), counts several writers of one
 *     pair, and passes a pair seen at as many revisions as it has writers.
 */
#include "fl_test.h"

#include "checkers/chk_rev_int.h"
#include "finish_fixture.h"
#include "harness/common/rng.h"

static const struct chk_history *g_h;

static int ref_cmp(const void *a, const void *b)
{
    uint32_t ia = *(const uint32_t *)a, ib = *(const uint32_t *)b;
    const struct chk_wevent *x = &g_h->events[ia], *y = &g_h->events[ib];
    if (x->mod_rev != y->mod_rev)
        return x->mod_rev < y->mod_rev ? -1 : 1;
    uint32_t rx = g_h->key_rank[x->key], ry = g_h->key_rank[y->key];
    if (rx != ry)
        return rx < ry ? -1 : 1;
    if (x->watch_id != y->watch_id)
        return x->watch_id < y->watch_id ? -1 : 1;
    return ia < ib ? -1 : ia > ib;
}

/* A history of 5 watches (ids 50, 10, 40, 20, 30) and n events on 37 keys (ids in
 * another order than their bytes) at revisions 2..2+revs, many ties. */
static void events_history(struct chk_history *h, uint32_t n, int64_t revs, int64_t rev_base)
{
    chk_history_init(h);
    for (int k = 0; k < 37; k++) {
        char b[8];
        int len = snprintf(b, sizeof b, "k%02d", (k * 17) % 37);
        chk_history_key(h, b, (size_t)len);
    }
    static const int64_t ids[] = {50, 10, 40, 20, 30};
    for (int w = 0; w < 5; w++) {
        struct chk_watch *cw = chk_history_watch_add(h);
        cw->watch_id = ids[w];
        cw->key = 0;
        cw->range_end = CHK_RANGE_ALL;
    }
    uint64_t x = 7;
    for (uint32_t i = 0; i < n; i++) {
        struct chk_wevent *e = chk_history_event_add(h);
        e->watch_id = ids[fl_splitmix64(&x) % 5];
        e->kind = CHK_EV_PUT;
        e->key = (int32_t)(fl_splitmix64(&x) % 37);
        e->value = CHK_NIL;
        e->mod_rev = rev_base + (int64_t)(fl_splitmix64(&x) % (uint64_t)revs);
        e->seq = i;
    }
}

static void case_wev_matches_qsort(void)
{
    struct chk_history h;
    events_history(&h, 5000, 300, 2);
    CHECK(finish(&h));
    uint32_t n = h.event_count;
    uint32_t *a = malloc(n * sizeof(uint32_t)), *b = malloc(n * sizeof(uint32_t));
    for (uint32_t i = 0; i < n; i++)
        a[i] = b[i] = n - 1 - i; /* not the index order: ties must end by index */
    CHECK(chk__sort_wev(&h, a, n));
    g_h = &h;
    qsort(b, n, sizeof(uint32_t), ref_cmp);
    CHECK(memcmp(a, b, n * sizeof(uint32_t)) == 0);
    free(a);
    free(b);
    chk_history_close(&h);
}

static void case_wev_does_not_pack(void)
{
    struct chk_history h;
    events_history(&h, 100, 3, INT64_C(1) << 60); /* 61 bits of revision + 6 of key */
    CHECK(finish(&h));
    uint32_t n = h.event_count, idx[100];
    for (uint32_t i = 0; i < n; i++)
        idx[i] = n - 1 - i;
    CHECK(!chk__sort_wev(&h, idx, n));
    for (uint32_t i = 0; i < n; i++)
        CHECK_EQ_INT(idx[i], n - 1 - i);
    chk_history_close(&h);
}

/* Keys a, b, c all written with value "v" (so one value id, three pairs); the pair
 * (b, v) has `writers` puts and is seen at `seen` distinct revisions by reads. */
static int dup_verdict(int writers, int seen)
{
    struct chk_history h;
    chk_history_init(&h);
    int32_t k[3] = {chk_history_key(&h, "a", 1), chk_history_key(&h, "b", 1),
                    chk_history_key(&h, "c", 1)};
    int32_t v = chk_history_value(&h, "v", 1);
    int64_t rev = 2, t = 10;
    chk_history_put(&h, 1, k[0], v, t, t + 5, CHK_ST_OK, rev++);
    t += 10;
    for (int i = 0; i < writers; i++, t += 10)
        chk_history_put(&h, 1, k[1], v, t, t + 5, CHK_ST_UNKNOWN, CHK_NO_REV);
    chk_history_put(&h, 1, k[2], v, t, t + 5, CHK_ST_OK, rev++);
    t += 10;
    for (int i = 0; i < seen; i++, t += 10)
        chk_history_get(&h, 2, k[1], v, t, t + 5, CHK_ST_OK, 10 + i, 10 + i, 10 + i, 1);
    int verdict = -1;
    if (finish(&h)) {
        struct chk_lin_result out;
        memset(&out, 0, sizeof out);
        out.verdict = CHK_PASS;
        chk_dup_applications(&h, &out);
        verdict = out.verdict;
        if (verdict == CHK_FAIL)
            CHECK(strstr(out.reason, "applied at revision") != NULL);
        chk_lin_result_close(&out);
    }
    chk_history_close(&h);
    return verdict;
}

static void case_dup_shared_value(void)
{
    CHECK_EQ_INT(dup_verdict(1, 1), CHK_PASS);
    CHECK_EQ_INT(dup_verdict(1, 2), CHK_FAIL);
    CHECK_EQ_INT(dup_verdict(2, 2), CHK_PASS);
    CHECK_EQ_INT(dup_verdict(2, 3), CHK_FAIL);
    CHECK_EQ_INT(dup_verdict(3, 3), CHK_PASS);
}

int main(void)
{
    FL_TEST(case_wev_matches_qsort);
    FL_TEST(case_wev_does_not_pack);
    FL_TEST(case_dup_shared_value);
    return fl_test_end();
}
