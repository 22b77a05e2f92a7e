/*
 * test_markers.c: every FL_TESTCASE in checkers/ is reached (SQLite's testcase()
 * discipline, harness/common/marker.h). Each case below builds the smallest history
 * that takes one rare branch of the linearizability engines, checks the verdict the
 * branch must lead to and that its marker counted; the last check walks every marker
 * linked in from checkers/ and fails on one that no case reached, so a new rare
 * branch needs a case here.
 */
#include "fl_test.h"

#include "checkers/checkers.h"
#include "harness/common/marker.h"

/* Cases that ran to their end: all_reached judges only after all five. */
static int cases_done;

#define OK  CHK_ST_OK
#define UNK CHK_ST_UNKNOWN

static int32_t key(struct chk_history *h, const char *k)
{
    return chk_history_key(h, k, strlen(k));
}

static int32_t val(struct chk_history *h, const char *v)
{
    return chk_history_value(h, v, strlen(v));
}

/* Finishes h, runs engine (0 auto, 1 revision, 2 search), returns the verdict. */
static int judge(struct chk_history *h, int engine)
{
    struct fl_buf err;
    fl_buf_init(&err);
    int rc = chk_history_finish(h, &err);
    CHECK(rc == FL_OK);
    if (rc != FL_OK)
        fprintf(stderr, "finish: %s\n", fl_buf_cstr(&err));
    fl_buf_close(&err);
    struct chk_limits lim = {0};
    lim.engine = engine;
    struct chk_lin_result r;
    chk_lin_check(h, &lim, &r);
    int v = r.verdict;
    chk_lin_result_close(&r);
    chk_history_close(h);
    return v;
}

/* Hits of the marker in file (a suffix) with condition cond; -1 when it is missing. */
static long long hits(const char *file, const char *cond)
{
    struct fl_marker *m = fl_marker_find(file, cond);
    if (!m)
        fprintf(stderr, "no marker %s: %s\n", file, cond);
    return m ? (long long)m->hits : -1;
}

/* Two acknowledged puts answered at the same revision: a violation. */
static void case_two_writes_one_revision(void)
{
    struct chk_history h;
    chk_history_init(&h);
    chk_history_put(&h, 1, key(&h, "a"), val(&h, "1"), 0, 10, OK, 2);
    chk_history_put(&h, 2, key(&h, "b"), val(&h, "2"), 20, 30, OK, 2);
    CHECK_EQ_INT(judge(&h, 1), CHK_FAIL);
    CHECK(hits("chk_revision.c", "r->claim[op->rev] >= 0") == 1);
    cases_done++;
}

/* revisions_complete and a revision no op can have written: a phantom write. */
static void case_phantom_revision(void)
{
    struct chk_history h;
    chk_history_init(&h);
    h.revisions_complete = true;
    chk_history_put(&h, 1, key(&h, "a"), val(&h, "1"), 0, 10, OK, 3);
    CHECK_EQ_INT(judge(&h, 1), CHK_FAIL);
    CHECK(hits("chk_rev_replay.c", "phantom") >= 1);
    cases_done++;
}

/* A watch that shows what happened at revision 2, written outside the history; with
 * the search engine, a read that contradicts that content is judged again without
 * it (watch events never fail linearizability). */
static void outside_write(struct chk_history *h, int32_t b, bool read_b)
{
    chk_history_put(h, 1, key(h, "a"), val(h, "1"), 0, 10, OK, 3);
    struct chk_watch *w = chk_history_watch_add(h);
    w->watch_id = 1;
    w->client = 9;
    w->key = b;
    w->start_rev = 1;
    struct chk_wevent *e = chk_history_event_add(h);
    e->watch_id = 1;
    e->response = 1;
    e->kind = CHK_EV_PUT;
    e->key = b;
    e->value = val(h, "5");
    e->create_rev = e->mod_rev = 2;
    e->version = 1;
    e->t_ns = 5;
    if (read_b)
        chk_history_get(h, 2, b, CHK_NIL, 20, 30, OK, 3, CHK_NO_REV, CHK_NO_REV, CHK_NO_REV);
}

static void case_watch_shows_gap(void)
{
    struct chk_history h;
    chk_history_init(&h);
    outside_write(&h, key(&h, "b"), false);
    CHECK_EQ_INT(judge(&h, 1), CHK_PASS);
    CHECK(hits("chk_rev_replay.c", "shown > 0") >= 1);
    chk_history_init(&h);
    outside_write(&h, key(&h, "b"), true);
    CHECK_EQ_INT(judge(&h, 2), CHK_PASS);
    CHECK(hits("chk_search.c", "retry") == 1);
    cases_done++;
}

/* Unknown puts of n different keys, all viable writers of the gap at revision 2
 * (nothing reads them), and a read of the first key whose count (no kvs) says it is
 * absent: the first guess fails, a retry takes another choice and passes. */
static void gap_with_choices(struct chk_history *h, int n, bool count_read)
{
    char k[16];
    for (int i = 0; i < n; i++) {
        snprintf(k, sizeof(k), "k%d", i);
        chk_history_put(h, 10 + i, key(h, k), val(h, "1"), 0, CHK_NEVER, UNK, CHK_NO_REV);
    }
    chk_history_put(h, 1, key(h, "z"), val(h, "1"), 100, 200, OK, 3);
    if (!count_read)
        return;
    struct chk_op *op = chk_history_op_add(h);
    op->client = 2;
    op->call_ns = 300;
    op->return_ns = 400;
    op->status = OK;
    op->rev = 3;
    op->flags |= CHK_OPF_HAS_RESULT;
    struct chk_sub *s = chk_history_sub_add(h, false);
    s->kind = CHK_SUB_RANGE;
    s->key = key(h, "k0");
    s->flags |= CHK_SUBF_RESULT_SET | CHK_SUBF_COUNT_SET;
    s->count = 0;
}

static void case_gap_choices(void)
{
    struct chk_history h;
    chk_history_init(&h);
    gap_with_choices(&h, 2, false);
    CHECK_EQ_INT(judge(&h, 1), CHK_PASS);
    CHECK(hits("chk_rev_replay.c", "p->guessed_rev == rev") >= 1);
    chk_history_init(&h);
    gap_with_choices(&h, 9, false);
    CHECK_EQ_INT(judge(&h, 1), CHK_PASS);
    CHECK(hits("chk_gap.c", "ch->n == GAP_CHOICES_MAX") >= 1);
    chk_history_init(&h);
    gap_with_choices(&h, 2, true);
    CHECK_EQ_INT(judge(&h, 1), CHK_PASS);
    CHECK(hits("chk_gap.c", "pick > 0") >= 1);
    cases_done++;
}

/* 16 overlapping puts of one key and a read of a value none wrote: the per-key
 * search needs more than its first round's 20,000 steps, resumes, and fails. */
static void case_per_key_resumes(void)
{
    struct chk_history h;
    chk_history_init(&h);
    int32_t a = key(&h, "a");
    char v[16];
    for (int i = 0; i < 16; i++) {
        snprintf(v, sizeof(v), "%d", i);
        chk_history_put(&h, 1 + i, a, val(&h, v), 0, 1000, OK, CHK_NO_REV);
    }
    chk_history_get(&h, 20, a, val(&h, "999"), 1001, 1002, OK, CHK_NO_REV, CHK_NO_REV, CHK_NO_REV,
                    CHK_NO_REV);
    CHECK_EQ_INT(judge(&h, 2), CHK_FAIL);
    CHECK(hits("chk_search.c", "before > 0") >= 1);
    cases_done++;
}

/* Every marker of checkers/ was reached by some case above. */
static void all_reached(void)
{
    if (cases_done < 5) { /* run alone (FL_TEST_CASE) or after a stopped case */
        fprintf(stderr, "all_reached: judged only after every case ran to its end\n");
        CHECK(getenv("FL_TEST_CASE") != NULL);
        return;
    }
    size_t n;
    struct fl_marker *m = fl_markers(&n);
    int ours = 0;
    for (size_t i = 0; i < n; i++) {
        if (!strstr(m[i].file, "checkers/") || m[i].kind != FL_MARKER_TESTCASE)
            continue;
        ours++;
        if (m[i].hits == 0)
            fprintf(stderr, "unreached: %s:%d: FL_TESTCASE(%s)\n", m[i].file, m[i].line, m[i].cond);
        CHECK(m[i].hits > 0);
    }
    CHECK(ours >= 8);
}

int main(void)
{
    fl_markers_reset();
    FL_TEST(case_two_writes_one_revision);
    FL_TEST(case_phantom_revision);
    FL_TEST(case_watch_shows_gap);
    FL_TEST(case_gap_choices);
    FL_TEST(case_per_key_resumes);
    FL_TEST(all_reached);
    return fl_test_end();
}
