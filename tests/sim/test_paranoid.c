/*
 * test_paranoid.c: --paranoid (run_options.paranoid) catches a member whose core is
 * broken on purpose, at the next simulated event, and fails the run with the seed, the
 * simulated time and the event number:
 *   - an MVCC store whose state hash no longer matches its data (what a write path
 *     that forgot to account a revision would leave) fails `converge` (mvcc_invariant);
 *   - a Raft leader whose vote is not itself (what a restart that lost its vote would
 *     leave) fails `raft_safety` (raft_invariant);
 * and a run with --paranoid and no broken member passes with the same digest as the
 * same run without it (the checks only read).
 *
 * The members are broken from here, through the internal headers, between two events:
 * no bug switch models "the store's own bookkeeping is wrong", and none should.
 */
#include "harness/run/run_int.h"
#include "nodes/mvcc/mvcc_int.h"
#include "nodes/raft/raft_int.h"
#include "nodes/server/srv_int.h"

#include "fl_test.h"
#include "run_fixture.h"

static struct run_world *world(uint64_t seed, bool paranoid)
{
    struct run_options o = {.scenario = "test_paranoid.c", .seed = seed, .paranoid = paranoid};
    struct run_world *rw = fx_open(&o);
    struct fx_config x;
    fx_config_default(&x);
    x.w.rate = 50;
    /* (no database: the checks that judge the history would be left unjudged) */
    fx_setup(rw, &x, RUN_CHECK_RAFT_SAFETY | RUN_CHECK_CONVERGE);
    run_advance(rw, 3 * FL_S);
    CHECK(run_leader(rw) > 0);
    return rw;
}

/* Finishes rw; returns the detail text of check name (caller frees) and the digest. */
static char *finish(struct run_world *rw, const char *name, enum run_verdict want, char *digest)
{
    struct run_result res;
    CHECK_EQ_INT(run_world_finish(rw, NULL, &res), FL_OK);
    CHECK_EQ_INT(res.verdict, want);
    memcpy(digest, res.digest, 17);
    json_t *c = json_object_get(json_object_get(res.summary, "checks"), name);
    CHECK(c != NULL);
    char *text = c ? json_dumps(c, JSON_COMPACT) : NULL;
    json_t *p = json_object_get(res.summary, "paranoid");
    CHECK(p == NULL || json_integer_value(json_object_get(p, "events_checked")) > 1000);
    run_result_close(&res);
    run_world_close(rw);
    return text;
}

static void expect_in(const char *text, const char *part)
{
    bool yes = text && strstr(text, part);
    CHECK(yes);
    if (!yes)
        fprintf(stderr, "  no '%s' in %s\n", part, text ? text : "(null)");
}

static void test_same_digest(void)
{
    char a[17], b[17];
    free(finish(world(5, false), "raft_safety", RUN_PASS, a));
    free(finish(world(5, true), "raft_safety", RUN_PASS, b));
    CHECK_EQ_STR(a, b);
}

static void test_mvcc_broken(void)
{
    struct run_world *rw = world(7, true);
    int victim = run_leader(rw) == 1 ? 2 : 1;
    struct srv_member *m = srv_cluster_member(rw->cl, victim);
    CHECK(m != NULL);
    uint64_t before = sim_event_count(rw->w);
    m->kv->state_hash ^= 1; /* the store's bookkeeping no longer matches its data */
    for (int i = 0; i < 1000 && !run_world_stopped(rw); i++)
        run_step(rw);
    CHECK(run_world_stopped(rw));
    CHECK(sim_event_count(rw->w) == before + 1); /* caught after the very next event */
    char digest[17];
    char *text = finish(rw, "converge", RUN_FAIL, digest);
    expect_in(text, "mvcc_invariant");
    expect_in(text, "state hash");
    expect_in(text, "\\\"seed\\\":7");
    expect_in(text, "\\\"event\\\":");
    expect_in(text, "\\\"at_ns\\\":");
    free(text);
}

static void test_raft_broken(void)
{
    struct run_world *rw = world(9, true);
    int l = run_leader(rw);
    struct srv_member *m = srv_cluster_member(rw->cl, l);
    CHECK(m != NULL);
    m->raft->vote = m->raft->cfg.id + 1; /* a leader that did not vote for itself */
    for (int i = 0; i < 1000 && !run_world_stopped(rw); i++)
        run_step(rw);
    CHECK(run_world_stopped(rw));
    char digest[17];
    char *text = finish(rw, "raft_safety", RUN_FAIL, digest);
    expect_in(text, "raft_invariant");
    expect_in(text, "voted for");
    expect_in(text, "\\\"seed\\\":9");
    free(text);
}

int main(void)
{
    FL_TEST(test_same_digest);
    FL_TEST(test_mvcc_broken);
    FL_TEST(test_raft_broken);
    return fl_test_end();
}
