/*
 * test_compact_reach.c: the revision engine's check of reads that failed as compacted
 * (chk_rev_time.c). Such a read is possible when some recorded compaction that did not
 * fail was called by the read's return and compacted its revision or later. The check
 * answers that through an index of the compactions by call time with the highest
 * revision compacted so far (one binary search a read, not a scan of every op); these
 * cases pin the rule the index must keep:
 *   - compactions recorded out of call order (the index sorts them);
 *   - a compaction called after the read returned does not count, one called at the
 *     very return time does;
 *   - the highest revision of the earlier calls counts, not the last call's (two
 *     concurrent compactions applied in the other order);
 *   - a failed compaction counts for nothing, one of unknown outcome counts;
 *   - without any recorded compaction the error cannot be refuted.
 */
#include "fl_test.h"

#include "checkers/checkers.h"
#include "finish_fixture.h"

struct cmp_spec {
    int64_t call, ret; /* ret CHK_NEVER: no answer */
    int status;
    int64_t compact_rev, rev;
};

/* Puts at revisions 2..9 (called 1..8 ns), then the compactions, then one read of key
 * "a" at req_rev that failed as compacted, returning at read_ret. The engine's verdict. */
static int verdict(const struct cmp_spec *c, size_t nc, int64_t req_rev, int64_t read_ret)
{
    struct chk_history h;
    chk_history_init(&h);
    int32_t k = chk_history_key(&h, "a", 1);
    char b[8];
    for (int i = 0; i < 8; i++) {
        int n = snprintf(b, sizeof b, "v%d", i);
        int32_t v = chk_history_value(&h, b, (size_t)n);
        chk_history_put(&h, 1, k, v, 1 + i, 1 + i, CHK_ST_OK, 2 + i);
    }
    for (size_t i = 0; i < nc; i++) {
        struct chk_op *op = chk_history_op_add(&h);
        op->kind = CHK_OP_COMPACT;
        op->client = 2;
        op->call_ns = c[i].call;
        op->return_ns = c[i].ret;
        op->status = (uint8_t)c[i].status;
        op->compact_rev = c[i].compact_rev;
        op->rev = c[i].status == CHK_ST_OK ? c[i].rev : CHK_NO_REV;
        if (c[i].status == CHK_ST_OK)
            op->flags |= CHK_OPF_HAS_RESULT;
        if (c[i].status == CHK_ST_FAIL)
            op->err = CHK_ERR_OTHER;
    }
    struct chk_op *rd = chk_history_get(&h, 3, k, CHK_NIL, 50, read_ret, CHK_ST_FAIL, CHK_NO_REV,
                                        CHK_NO_REV, CHK_NO_REV, CHK_NO_REV);
    rd->err = CHK_ERR_COMPACTED;
    h.subs[rd->sub_first].req_rev = req_rev;
    CHECK(finish(&h));
    struct chk_limits lim = {0};
    lim.engine = CHK_ENGINE_REVISION;
    struct chk_lin_result r;
    CHECK(chk_lin_check(&h, &lim, &r) == FL_OK);
    int v = r.verdict;
    if (v == CHK_FAIL)
        CHECK(strstr(r.reason, "failed as compacted, but no compaction reached it") != NULL);
    chk_lin_result_close(&r);
    chk_history_close(&h);
    return v;
}

/* Recorded out of call order: the later call (reaching 7) first, the earlier (4) last. */
static void case_call_order(void)
{
    const struct cmp_spec c[] = {{300, 310, CHK_ST_OK, 7, 9}, {100, 110, CHK_ST_OK, 4, 9}};
    CHECK_EQ_INT(verdict(c, 2, 4, 200), CHK_PASS);  /* the call at 100 reached 4 */
    CHECK_EQ_INT(verdict(c, 2, 3, 200), CHK_PASS);  /* ... and everything below */
    CHECK_EQ_INT(verdict(c, 2, 5, 200), CHK_FAIL);  /* 7 was called after the return */
    CHECK_EQ_INT(verdict(c, 2, 5, 299), CHK_FAIL);  /* one ns before that call */
    CHECK_EQ_INT(verdict(c, 2, 5, 300), CHK_PASS);  /* called at the very return: counts */
    CHECK_EQ_INT(verdict(c, 2, 7, 1000), CHK_PASS); /* both called by then */
    CHECK_EQ_INT(verdict(c, 2, 8, 1000), CHK_FAIL); /* nothing reached 8 */
}

/* Two concurrent compactions: the one called first (at 100) compacted 6 and was applied
 * last; the one called at 120 compacted 3. A read returned at 130 may have seen 6. */
static void case_highest_earlier(void)
{
    const struct cmp_spec c[] = {{120, 140, CHK_ST_OK, 3, 9}, {100, 150, CHK_ST_OK, 6, 9}};
    CHECK_EQ_INT(verdict(c, 2, 6, 130), CHK_PASS);
    CHECK_EQ_INT(verdict(c, 2, 6, 110), CHK_PASS);
    CHECK_EQ_INT(verdict(c, 2, 7, 130), CHK_FAIL);
    CHECK_EQ_INT(verdict(c, 2, 3, 99), CHK_FAIL); /* before both calls */
}

/* A failed compaction proves nothing; one without an answer may have taken effect. */
static void case_status(void)
{
    const struct cmp_spec failed[] = {{100, 110, CHK_ST_FAIL, 8, 9}, {120, 130, CHK_ST_OK, 2, 9}};
    CHECK_EQ_INT(verdict(failed, 2, 5, 200), CHK_FAIL);
    CHECK_EQ_INT(verdict(failed, 2, 2, 200), CHK_PASS);
    const struct cmp_spec unknown[] = {{100, CHK_NEVER, CHK_ST_UNKNOWN, 8, 0}};
    CHECK_EQ_INT(verdict(unknown, 1, 5, 200), CHK_PASS);
    CHECK_EQ_INT(verdict(unknown, 1, 5, 99), CHK_FAIL);
    /* no compaction recorded at all: the error cannot be refuted */
    CHECK_EQ_INT(verdict(NULL, 0, 5, 200), CHK_PASS);
}

/* Many compactions, reads against each: the index over 200 calls (built once) agrees
 * with the rule read directly off the specs. */
static void case_many(void)
{
    enum { N = 200 };
    struct cmp_spec c[N];
    uint64_t x = 0x9e3779b97f4a7c15u;
    for (int i = 0; i < N; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        c[i].call = 100 + (int64_t)(x % 1000);
        c[i].ret = c[i].call + 5;
        c[i].status = x % 5 == 0 ? CHK_ST_FAIL : CHK_ST_UNKNOWN;
        c[i].ret = c[i].status == CHK_ST_FAIL ? c[i].ret : CHK_NEVER;
        c[i].compact_rev = 1 + (int64_t)((x >> 20) % 9);
        c[i].rev = 0;
    }
    for (int q = 0; q < 40; q++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        int64_t req = 1 + (int64_t)(x % 9), ret = 100 + (int64_t)((x >> 16) % 1000);
        bool possible = false;
        for (int i = 0; i < N; i++)
            possible |= c[i].status != CHK_ST_FAIL && c[i].compact_rev >= req && c[i].call <= ret;
        CHECK_EQ_INT(verdict(c, N, req, ret), possible ? CHK_PASS : CHK_FAIL);
    }
}

int main(void)
{
    FL_TEST(case_call_order);
    FL_TEST(case_highest_earlier);
    FL_TEST(case_status);
    FL_TEST(case_many);
    return fl_test_end();
}
