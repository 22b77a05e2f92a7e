/*
 * test_history_cut.c: chk_history_cut, the history a whole-cluster restore leaves the
 * linearizability and watch checkers (harness/run/run_restore.c). Hand-built histories
 * of a cluster rewound at t = 100: after it, the restored cluster serves the backup's
 * older data at lower revisions, which judged as one history is a violation (the
 * cases check that it is, so that the cut is what makes the difference); cut at the
 * restore, what happened before is judged and passes, a call pending at the restore
 * becomes an unknown outcome that never returned, and a watch ends there.
 */
#include "fl_test.h"

#include "checkers/checkers.h"
#include "finish_fixture.h"

#define OK  CHK_ST_OK
#define UNK CHK_ST_UNKNOWN
#define T   100

static int32_t key(struct chk_history *h, const char *k)
{
    return chk_history_key(h, k, strlen(k));
}

static int32_t val(struct chk_history *h, const char *v)
{
    return chk_history_value(h, v, strlen(v));
}

/* Both checkers on a finished history: lin and watch verdicts. */
static void judge(struct chk_history *h, int *lin, int *watch)
{
    struct chk_result r;
    CHECK(chk_check(h, NULL, &r) == FL_OK);
    *lin = r.lin.verdict;
    *watch = r.watch.verdict;
    chk_result_close(&r);
}

/* The old cluster: a=1 at revision 2 (the backup), a=2 at 3, a read of a=2 at 3. The
 * restore at T rewinds to revision 2: a read after it sees a=1 at 2, a put makes a=3
 * at 3 again. A put called at 90 whose answer came from the restored cluster (at 4). */
static void build(struct chk_history *h)
{
    chk_history_init(h);
    int32_t a = key(h, "a");
    int32_t v1 = val(h, "1"), v2 = val(h, "2"), v3 = val(h, "3"), v4 = val(h, "4");
    chk_history_put(h, 1, a, v1, 10, 20, OK, 2);
    chk_history_put(h, 1, a, v2, 30, 40, OK, 3);
    chk_history_get(h, 2, a, v2, 50, 60, OK, 3, 3, 2, 2);
    chk_history_put(h, 2, a, v4, 90, 130, OK, 4); /* pending at T */
    chk_history_get(h, 1, a, v1, 110, 120, OK, 2, 2, 2, 1);
    chk_history_put(h, 1, a, v3, 140, 150, OK, 3);
    /* a watch from revision 1 over a, opened before T, its events before and after */
    struct chk_watch *w = chk_history_watch_add(h);
    w->watch_id = 7;
    w->client = 3;
    w->key = a;
    w->start_rev = 1;
    w->opened_ns = 5;
    int64_t revs[] = {2, 3, 3}, ts[] = {21, 41, 151};
    int32_t vals[] = {v1, v2, v3};
    for (int i = 0; i < 3; i++) {
        struct chk_wevent *e = chk_history_event_add(h);
        e->watch_id = 7;
        e->response = i + 1;
        e->kind = CHK_EV_PUT;
        e->key = a;
        e->value = vals[i];
        e->mod_rev = revs[i];
        e->create_rev = 2;
        e->version = i + 1;
        e->t_ns = ts[i];
    }
    /* a watch opened on the restored cluster */
    w = chk_history_watch_add(h);
    w->watch_id = 8;
    w->client = 3;
    w->key = a;
    w->opened_ns = 135;
}

/* Judged whole, the rewound history fails: the cut is what makes the next case pass. */
static void case_whole_fails(void)
{
    struct chk_history h;
    build(&h);
    CHECK(finish(&h));
    int lin, watch;
    judge(&h, &lin, &watch);
    CHECK_EQ_INT(lin, CHK_FAIL);
    chk_history_close(&h);
}

static void case_cut_passes(void)
{
    struct chk_history h, c;
    build(&h);
    CHECK(finish(&h));
    struct chk_cut_stats st;
    chk_history_cut(&h, T, &c, &st);
    CHECK(finish(&c));
    CHECK_EQ_INT(st.ops_after, 2);
    CHECK_EQ_INT(st.ops_pending, 1);
    CHECK_EQ_INT(st.watches_after, 1);
    CHECK_EQ_INT(st.events_after, 1);
    CHECK_EQ_INT(c.op_count, 4);
    /* ids kept: the same key and value bytes */
    CHECK_EQ_INT(c.keys.count, h.keys.count);
    CHECK_EQ_INT(c.values.count, h.values.count);
    /* the put pending at T: unknown, never returned, no revision */
    const struct chk_op *p = &c.ops[3];
    CHECK_EQ_INT(p->status, UNK);
    CHECK(p->return_ns == CHK_NEVER);
    CHECK(p->rev == CHK_NO_REV);
    CHECK_EQ_INT(p->then_count, 1);
    /* the watch ends at T with its two events before it */
    CHECK_EQ_INT(c.watch_count, 1);
    CHECK(c.watches[0].closed_ns == T);
    CHECK_EQ_INT(c.watches[0].ev_count, 2);
    int lin, watch;
    judge(&c, &lin, &watch);
    CHECK_EQ_INT(lin, CHK_PASS);
    CHECK_EQ_INT(watch, CHK_PASS);
    chk_history_close(&c);
    chk_history_close(&h);
}

/* What the cut keeps is still judged: a stale read before T fails after the cut too. */
static void case_cut_still_judges(void)
{
    struct chk_history h, c;
    build(&h);
    int32_t a = key(&h, "a"), v1 = val(&h, "1");
    chk_history_get(&h, 2, a, v1, 70, 80, OK, 2, 2, 2, 1); /* a=1 after a=2 was read */
    CHECK(finish(&h));
    chk_history_cut(&h, T, &c, NULL);
    CHECK(finish(&c));
    int lin, watch;
    judge(&c, &lin, &watch);
    CHECK_EQ_INT(lin, CHK_FAIL);
    chk_history_close(&c);
    chk_history_close(&h);
}

/* A txn with compares and both branches, results and kvs: copied field by field. */
static void case_txn_copied(void)
{
    struct chk_history h, c;
    chk_history_init(&h);
    int32_t a = key(&h, "a"), b = key(&h, "b"), v1 = val(&h, "1");
    chk_history_put(&h, 1, a, v1, 10, 20, OK, 2);
    struct chk_op *op = chk_history_op_add(&h);
    op->client = 1;
    op->call_ns = 30;
    op->return_ns = 40;
    op->rev = 2;
    op->flags = CHK_OPF_SUCCEEDED | CHK_OPF_SUCCEEDED_SET | CHK_OPF_HAS_RESULT;
    struct chk_cmp *cm = chk_history_cmp_add(&h);
    cm->key = a;
    cm->target = CHK_CMP_VALUE;
    cm->result = CHK_CMP_EQ;
    cm->operand = v1;
    struct chk_sub *s = chk_history_sub_add(&h, false);
    s->kind = CHK_SUB_RANGE;
    s->key = a;
    s->flags = CHK_SUBF_COUNT_SET | CHK_SUBF_RESULT_SET;
    s->count = 1;
    struct chk_kv *kv = chk_history_kv_add(&h);
    kv->key = a;
    kv->value = v1;
    kv->create_rev = kv->mod_rev = 2;
    kv->version = 1;
    s = chk_history_sub_add(&h, true);
    s->kind = CHK_SUB_RANGE;
    s->key = b;
    CHECK(finish(&h));
    chk_history_cut(&h, T, &c, NULL);
    CHECK(finish(&c));
    char why[256];
    CHECK(chk_history_equal(&h, &c, why, sizeof why));
    int lin, watch;
    judge(&c, &lin, &watch);
    CHECK_EQ_INT(lin, CHK_PASS);
    chk_history_close(&c);
    chk_history_close(&h);
}

int main(void)
{
    FL_TEST(case_whole_fails);
    FL_TEST(case_cut_passes);
    FL_TEST(case_cut_still_judges);
    FL_TEST(case_txn_copied);
    return fl_test_end();
}
