/*
 * test_fault_apply.c: every fault kind takes its ordinal and ends its application in
 * one call (run_fault_apply, harness/run/run_fault.c), so no kind can take an ordinal
 * and leave its application open: after each call, skipped or not, no application is
 * in progress (run_fault_current is 0) and exactly one ordinal was taken. A kind that
 * left one open would make every later fault part of it (no ordinal of its own), and
 * the ordinals shrinking names would shift; the ordinal counts below would show it.
 * The nemesis ticks (each one an application) are checked the same way while they run.
 */
#include "harness/run/run.h"

#include "fl_test.h"
#include "run_fixture.h"

/* One call of a fault kind (on a three-member cluster with one client). */
struct kind {
    const char *name;
    int (*call)(struct run_world *rw);
};

static int k_kill(struct run_world *rw)
{
    return run_kill(rw, 3);
}
static int k_restart(struct run_world *rw)
{
    return run_restart(rw, 3);
}
static int k_pause(struct run_world *rw)
{
    return run_pause(rw, 2);
}
static int k_resume(struct run_world *rw)
{
    return run_resume(rw, 2);
}
static int k_skew(struct run_world *rw)
{
    return run_skew(rw, 1, 2000000);
}
static int k_partition(struct run_world *rw)
{
    return run_partition(rw, (int[]){1}, 1, (int[]){2, 3}, 2, false);
}
static int k_isolate(struct run_world *rw)
{
    return run_isolate(rw, 1);
}
static int k_heal(struct run_world *rw)
{
    return run_heal(rw);
}
static int k_net(struct run_world *rw)
{
    return run_net(rw, 1000, 0, 5);
}
static int k_net_links(struct run_world *rw)
{
    return run_net_links(rw, (int[]){1}, 1, (int[]){2}, 1, true, 0, 0, 10);
}
static int k_hold(struct run_world *rw)
{
    return run_hold(rw, 1, 2);
}
static int k_release(struct run_world *rw)
{
    return run_release(rw, 1, 2);
}
static int k_clog(struct run_world *rw)
{
    return run_clog(rw, 2, 3, true);
}
static int k_unclog(struct run_world *rw)
{
    return run_clog(rw, 2, 3, false);
}
static int k_failpoint(struct run_world *rw)
{
    char err[160];
    return run_failpoint(rw, "raft/before_save", 2, "delay", 1000000, 0, 1, err, sizeof err);
}
static int k_failpoint_off(struct run_world *rw)
{
    char err[160];
    return run_failpoint(rw, "raft/before_save", 2, "off", 0, 0, 0, err, sizeof err);
}
static int k_nemesis(struct run_world *rw)
{
    return run_nemesis(rw, RUN_NEMESIS_ALL, 300 * FL_MS, 2 * FL_S);
}

static const struct kind kinds[] = {
    {"kill", k_kill},
    {"restart", k_restart},
    {"pause", k_pause},
    {"resume", k_resume},
    {"skew", k_skew},
    {"partition", k_partition},
    {"isolate", k_isolate},
    {"heal", k_heal},
    {"net", k_net},
    {"net_links", k_net_links},
    {"hold", k_hold},
    {"release", k_release},
    {"clog", k_clog},
    {"unclog", k_unclog},
    {"failpoint", k_failpoint},
    {"failpoint off", k_failpoint_off},
    {"nemesis", k_nemesis},
};
#define N_KINDS (sizeof kinds / sizeof kinds[0])

/* run_advance takes a time; this, a duration. */
static void advance(struct run_world *rw, int64_t d_ns)
{
    run_advance(rw, run_now_ns(rw) + d_ns);
}

static struct run_world *open_world(const int64_t *skip, int n_skip)
{
    struct run_options o = {.scenario = "test_fault_apply.c", .seed = 11};
    struct run_world *rw = fx_open(&o);
    run_skip_faults(rw, skip, n_skip);
    struct fx_config x;
    fx_config_default(&x);
    x.w.rate = 20;
    fx_setup(rw, &x, RUN_CHECK_ALL);
    return rw;
}

/* Every kind once, each 200 ms apart; odd ordinals skipped when skip_odd. */
static void every_kind(bool skip_odd)
{
    int64_t skip[N_KINDS];
    int n_skip = 0;
    for (int64_t o = 1; skip_odd && o <= (int64_t)N_KINDS; o += 2)
        skip[n_skip++] = o;
    struct run_world *rw = open_world(skip, n_skip);
    advance(rw, 2 * FL_S);
    for (size_t i = 0; i < N_KINDS; i++) {
        int64_t before = run_fault_ordinals(rw);
        CHECK_EQ_INT(kinds[i].call(rw), FL_OK);
        if (run_fault_ordinals(rw) != before + 1 || run_fault_current(rw) != 0)
            fprintf(stderr, "kind %s: ordinals %lld -> %lld, current %lld\n", kinds[i].name,
                    (long long)before, (long long)run_fault_ordinals(rw),
                    (long long)run_fault_current(rw));
        CHECK_EQ_INT(run_fault_ordinals(rw), before + 1);
        CHECK_EQ_INT(run_fault_current(rw), 0);
        advance(rw, 200 * FL_MS);
        CHECK_EQ_INT(run_fault_current(rw), 0); /* nemesis ticks end theirs too */
    }
    /* The nemesis's ticks took ordinals of their own and closed them. */
    int64_t before = run_fault_ordinals(rw);
    advance(rw, 2 * FL_S);
    CHECK(run_fault_ordinals(rw) > before);
    CHECK_EQ_INT(run_fault_current(rw), 0);
    /* A refused call takes none. */
    before = run_fault_ordinals(rw);
    CHECK_EQ_INT(run_kill(rw, 99), FL_ENOENT);
    CHECK_EQ_INT(run_fault_ordinals(rw), before);
    run_heal_all(rw);
    CHECK_EQ_INT(run_fault_current(rw), 0);
    fx_finish(rw);
}

static void test_applied(void)
{
    every_kind(false);
}

static void test_skipped(void)
{
    every_kind(true);
}

/* Faults applied inside a rule firing's scope (run_scope). */
static void pause_and_isolate(struct run_world *rw, void *arg)
{
    int *calls = arg;
    (*calls)++;
    CHECK_EQ_INT(run_pause(rw, 2), FL_OK);
    CHECK_EQ_INT(run_isolate(rw, 1), FL_OK);
    CHECK(run_fault_current(rw) >= RUN_FIRING_BASE);
}

static bool paused(struct run_world *rw, int id)
{
    struct run_node_status st;
    CHECK_EQ_INT(run_node_status(rw, id, &st), FL_OK);
    return st.paused;
}

/* A rule firing's scope (Lua's on()): faults inside it take no ordinal of their own,
 * and leaving it returns to no application. A skipped firing runs its function only
 * with RUN_SCOPE_ALWAYS (a Lua coroutine goes on), and its faults do nothing. */
static void test_rule_scope(void)
{
    int64_t rule = 1, skipped = rule * RUN_FIRING_BASE + 2;
    struct run_world *rw = open_world(&skipped, 1);
    advance(rw, 2 * FL_S);
    CHECK(run_rule_begin(rw, &rule));
    CHECK_EQ_INT(rule, 1);
    CHECK_EQ_INT(run_fault_current(rw), 0);
    int64_t before = run_fault_ordinals(rw);
    int calls = 0;
    CHECK(run_scope(rw, rule * RUN_FIRING_BASE + 1, RUN_SCOPE_LIVE, pause_and_isolate, &calls));
    CHECK_EQ_INT(calls, 1);
    CHECK(paused(rw, 2));
    CHECK_EQ_INT(run_fault_ordinals(rw), before);
    CHECK_EQ_INT(run_fault_current(rw), 0);
    CHECK_EQ_INT(run_resume(rw, 2), FL_OK);
    before = run_fault_ordinals(rw);
    CHECK(!run_scope(rw, skipped, RUN_SCOPE_LIVE, pause_and_isolate, &calls));
    CHECK_EQ_INT(calls, 1); /* not run */
    CHECK(!run_scope(rw, skipped, RUN_SCOPE_ALWAYS, pause_and_isolate, &calls));
    CHECK_EQ_INT(calls, 2); /* run, its faults skipped */
    CHECK(!paused(rw, 2));
    CHECK_EQ_INT(run_fault_ordinals(rw), before);
    CHECK_EQ_INT(run_fault_current(rw), 0);
    run_heal_all(rw);
    fx_finish(rw);
}

static void replace_nemesis(struct run_world *rw, void *arg)
{
    (void)arg;
    CHECK_EQ_INT(run_nemesis(rw, RUN_NEMESIS_PAUSE, 10 * FL_S, 0), FL_OK);
}

/* A nemesis replaced while its pause is in force undoes that pause in the scope of the
 * draw that applied it (run_scope), whatever scope the caller is in: from a skipped
 * rule firing (on() whose firing shrinking drops) the resume still happens. It used
 * to set the ordinal alone and keep the caller's "skipped", so the member stayed
 * paused for the rest of the run. */
static void test_nemesis_undo_scope(void)
{
    int64_t skipped = 1 * RUN_FIRING_BASE + 1;
    struct run_world *rw = open_world(&skipped, 1);
    advance(rw, 2 * FL_S);
    int64_t rule;
    CHECK(run_rule_begin(rw, &rule));
    CHECK_EQ_INT(rule, 1);
    CHECK_EQ_INT(run_nemesis(rw, RUN_NEMESIS_PAUSE, 500 * FL_MS, 0), FL_OK);
    /* the first tick (an apply slot) pauses one member */
    int who = 0;
    for (int t = 0; t < 20 && !who; t++) {
        advance(rw, 100 * FL_MS);
        for (int id = 1; id <= 3; id++)
            if (paused(rw, id))
                who = id;
    }
    CHECK(who != 0);
    CHECK(!run_scope(rw, skipped, RUN_SCOPE_ALWAYS, replace_nemesis, NULL));
    CHECK(!paused(rw, who));
    CHECK_EQ_INT(run_fault_current(rw), 0);
    run_heal_all(rw);
    fx_finish(rw);
}

int main(void)
{
    FL_TEST(test_applied);
    FL_TEST(test_skipped);
    FL_TEST(test_rule_scope);
    FL_TEST(test_nemesis_undo_scope);
    return fl_test_end();
}
