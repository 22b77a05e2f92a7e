/*
 * test_gen.c: property test. Random histories from a model execution (etcd-like KV
 * with revisions, unknown and failed outcomes, watches) must pass both checkers;
 * each mutation must fail the right checker with the right guarantee named, and must
 * not fail the other one (a stale read is not a watch violation; a dropped event is
 * not a linearizability violation). Both linearizability engines run on every
 * history and must agree whenever both decide. Seeds are fixed.
 */
#include "checkers/checkers.h"
#include "checkers/gen.h"
#include "fl_test.h"

static int agree_checked, agree_undecided, watch_undecided, watch_cases;
static int open_checked, open_undecided;

/* A watch verdict may be "unknown" only when the linearizability engine could not
 * establish the changes (an ambiguous revision gap); such cases are counted and must
 * stay rare. */
static bool watch_undecidable(const struct chk_result *r, int g)
{
    bool needs = g < 0 || g == CHK_G_RESUMABLE || g == CHK_G_IS_CREATE || g == CHK_G_PREV_KV ||
                 g == CHK_G_RELIABLE;
    return !r->lin.changes_known && needs &&
           (g < 0 ? r->watch.verdict == CHK_UNKNOWN : r->watch.g_verdict[g] == CHK_UNKNOWN);
}

static int lin_with(struct chk_history *h, int engine, char *reason, size_t n)
{
    struct chk_limits lim = {0};
    lim.engine = engine;
    lim.steps_max = 3000000;
    lim.mem_bytes_max = (uint64_t)256 << 20;
    struct chk_lin_result r;
    chk_lin_check(h, &lim, &r);
    int v = r.verdict;
    if (reason)
        snprintf(reason, n, "%s", r.reason);
    chk_lin_result_close(&r);
    return v;
}

static void run_case(const struct chk_gen_opts *o, int mut)
{
    struct chk_history h;
    chk_history_init(&h);
    if (chk_gen_history(o, mut, &h) != FL_OK) {
        chk_history_close(&h);
        return; /* no place for this mutation in this history */
    }
    struct chk_result r;
    chk_check(&h, NULL, &r);
    int g = chk_gen_mutation_guarantee(mut);
    char why[256];
    watch_cases++;
    if (watch_undecidable(&r, g)) {
        watch_undecided++;
        CHECK(r.lin.verdict != CHK_UNKNOWN || g >= 0);
        CHECK(r.watch.verdict != CHK_FAIL || g >= 0);
        if (g < 0 && mut != CHK_MUT_NONE)
            CHECK_EQ_INT(r.lin.verdict, CHK_FAIL);
        if (mut == CHK_MUT_NONE)
            CHECK_EQ_INT(r.lin.verdict, CHK_PASS);
    } else if (mut == CHK_MUT_NONE) {
        if (r.lin.verdict != CHK_PASS || r.watch.verdict != CHK_PASS) {
            struct fl_buf t;
            fl_buf_init(&t);
            chk_result_explain(&h, &r, &t);
            fprintf(stderr, "seed %llu unmutated:\n%s", (unsigned long long)o->seed,
                    fl_buf_cstr(&t));
            fl_buf_close(&t);
        }
        CHECK_EQ_INT(r.lin.verdict, CHK_PASS);
        CHECK_EQ_INT(r.watch.verdict, CHK_PASS);
    } else if (g < 0) {
        if (r.lin.verdict != CHK_FAIL)
            fprintf(stderr, "seed %llu %s: lin %s\n", (unsigned long long)o->seed,
                    chk_gen_mutation_name(mut), chk_verdict_name(r.lin.verdict));
        CHECK_EQ_INT(r.lin.verdict, CHK_FAIL);
        CHECK(r.lin.reason[0] != 0);
        if (mut != CHK_MUT_REORDER_WRITES) {
            if (r.watch.verdict != CHK_PASS && r.watch.viol_count)
                fprintf(stderr, "seed %llu %s: watch %s: %s\n", (unsigned long long)o->seed,
                        chk_gen_mutation_name(mut), chk_guarantee_name(r.watch.viol[0].guarantee),
                        r.watch.viol[0].msg);
            CHECK_EQ_INT(r.watch.verdict, CHK_PASS);
        }
    } else {
        if (r.lin.verdict != CHK_PASS || r.watch.g_verdict[g] != CHK_FAIL)
            fprintf(stderr, "seed %llu %s: lin %s (%s), %s %s\n", (unsigned long long)o->seed,
                    chk_gen_mutation_name(mut), chk_verdict_name(r.lin.verdict), r.lin.reason,
                    chk_guarantee_name(g), chk_verdict_name(r.watch.g_verdict[g]));
        CHECK_EQ_INT(r.lin.verdict, CHK_PASS);
        CHECK_EQ_INT(r.watch.verdict, CHK_FAIL);
        CHECK_EQ_INT(r.watch.g_verdict[g], CHK_FAIL);
        /* the violation names the watch, the revision and the guarantee */
        bool named = false;
        for (uint32_t i = 0; i < r.watch.viol_count; i++)
            named |= r.watch.viol[i].guarantee == g && r.watch.viol[i].watch_id > 0;
        CHECK(named);
    }
    /* engines agree where both decide */
    int v1 = lin_with(&h, CHK_ENGINE_REVISION, why, sizeof(why));
    int v2 = lin_with(&h, CHK_ENGINE_SEARCH, NULL, 0);
    if (v1 != CHK_UNKNOWN && v2 != CHK_UNKNOWN) {
        if (v1 != v2)
            fprintf(stderr, "seed %llu %s: revision %s (%s), search %s\n",
                    (unsigned long long)o->seed, chk_gen_mutation_name(mut), chk_verdict_name(v1),
                    why, chk_verdict_name(v2));
        CHECK_EQ_INT(v1, v2);
        agree_checked++;
    } else {
        agree_undecided++;
    }
    /* and where revisions may come from outside the history: both engines read an
     * unexplained revision the same way */
    if (h.revisions_complete) {
        h.revisions_complete = false;
        v1 = lin_with(&h, CHK_ENGINE_REVISION, why, sizeof(why));
        v2 = lin_with(&h, CHK_ENGINE_SEARCH, NULL, 0);
        if (v1 != CHK_UNKNOWN && v2 != CHK_UNKNOWN) {
            if (v1 != v2)
                fprintf(stderr, "seed %llu %s, not complete: revision %s (%s), search %s\n",
                        (unsigned long long)o->seed, chk_gen_mutation_name(mut),
                        chk_verdict_name(v1), why, chk_verdict_name(v2));
            CHECK_EQ_INT(v1, v2);
            open_checked++;
        } else {
            open_undecided++;
        }
        h.revisions_complete = true;
    }
    chk_result_close(&r);
    chk_history_close(&h);
}

/* Writes from outside the history (lease expiries), seen only by a watch: the
 * unmutated history passes both engines and the watch checker. */
static int outside_case(uint64_t seed)
{
    struct chk_gen_opts o;
    chk_gen_opts_default(&o, seed);
    o.outside_pm = 80;
    if (seed % 2)
        o.unknown_pm = 0;
    struct chk_history h;
    chk_history_init(&h);
    CHECK_EQ_INT(chk_gen_history(&o, CHK_MUT_NONE, &h), FL_OK);
    CHECK(!h.revisions_complete);
    struct chk_result r;
    chk_check(&h, NULL, &r);
    if (r.verdict != CHK_PASS) {
        struct fl_buf t;
        fl_buf_init(&t);
        chk_result_explain(&h, &r, &t);
        fprintf(stderr, "seed %llu outside writes:\n%s", (unsigned long long)seed, fl_buf_cstr(&t));
        fl_buf_close(&t);
    }
    CHECK_EQ_INT(r.lin.verdict, CHK_PASS);
    CHECK_EQ_INT(r.watch.verdict, CHK_PASS);
    int v1 = lin_with(&h, CHK_ENGINE_REVISION, NULL, 0);
    char why2[256];
    int v2 = lin_with(&h, CHK_ENGINE_SEARCH, why2, sizeof(why2));
    if (v2 == CHK_FAIL)
        fprintf(stderr, "seed %llu outside writes, search: %s\n", (unsigned long long)seed, why2);
    CHECK(v1 != CHK_FAIL);
    CHECK(v2 != CHK_FAIL);
    chk_result_close(&r);
    chk_history_close(&h);
    return v1 == CHK_PASS && v2 == CHK_PASS;
}

/* Big histories with 0.5% unknown outcomes and reads only (no watch pins the early
 * revisions): engine 1 must decide them (pass), not give up. */
static void big_unknown_case(uint64_t seed)
{
    struct chk_gen_opts o;
    chk_gen_opts_default(&o, seed);
    o.ops = 100000;
    o.clients = 8;
    o.keys = 1000;
    o.watches = 4;
    o.unknown_pm = 5;
    o.fail_pm = 5;
    o.window = 40;
    struct chk_history h;
    chk_history_init(&h);
    CHECK_EQ_INT(chk_gen_history(&o, CHK_MUT_NONE, &h), FL_OK);
    char why[256];
    int v = lin_with(&h, CHK_ENGINE_REVISION, why, sizeof(why));
    if (v != CHK_PASS)
        fprintf(stderr, "seed %llu, 100000 ops, 0.5%% unknown: %s (%s)\n", (unsigned long long)seed,
                chk_verdict_name(v), why);
    CHECK_EQ_INT(v, CHK_PASS);
    chk_history_close(&h);
}

int main(void)
{
    /* FL_TEST_SEED=N runs seed N of each family alone (the totals are then not judged). */
    uint64_t first = 1, last = 60;
    bool one = fl_test_seed_range(&first, &last);
    int cases = 0;
    for (uint64_t seed = first; seed <= last; seed++) {
        struct chk_gen_opts o;
        chk_gen_opts_default(&o, seed);
        if (seed % 3 == 1) {
            o.txn = false;
            o.deletes = false;
        } else if (seed % 3 == 2) {
            o.clients = 6;
            o.keys = 3;
            o.ops = 150;
        }
        for (int m = 0; m < CHK_MUT_COUNT; m++) {
            run_case(&o, m);
            cases++;
        }
    }
    /* seeds 1, 3, 4 ended "unknown" before */
    for (uint64_t seed = first; seed <= (one ? last : 4); seed++)
        big_unknown_case(seed);
    int outside_both = 0;
    for (uint64_t seed = first; seed <= (one ? last : 40); seed++)
        outside_both += outside_case(seed);
    if (one)
        return fl_test_end();
    printf("%d cases, engines compared on %d, undecided by one engine %d, watch undecided %d\n",
           cases, agree_checked, agree_undecided, watch_undecided);
    printf("not complete: engines compared on %d, undecided %d; outside writes: 40 histories, "
           "both engines pass %d\n",
           open_checked, open_undecided, outside_both);
    CHECK(open_checked > cases / 2);
    CHECK(outside_both >= 30);
    CHECK(agree_checked > cases / 2);
    CHECK(watch_undecided * 10 < watch_cases);
    return fl_test_end();
}
