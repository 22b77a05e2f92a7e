/*
 * test_explore_aim.c: harness/cli/explore_mutate.c xp_aim never places an aimed fault
 * before the parent's fault phase. A risky moment before the phase (the first
 * `leader` event of a run, at 200 ms) aimed at with a power loss used to land at
 * 1 ms..200 ms, before the scenario's quiet start was over, and its "a leader is
 * elected" then failed: a false alarm (explore3, seed 15).
 */
#include "fl_test.h"

#include "harness/cli/explore.h"
#include "harness/run/run.h"

#include <jansson.h>

static json_t *summary(void)
{
    json_error_t err;
    json_t *sum = json_loads(
        "{\"script_end_ms\": 20000,"
        " \"workload\": {\"nodes\": 3},"
        " \"swarm\": {\"cluster\": {\"election_ms\": 1000}},"
        " \"faults\": ["
        "   {\"ordinal\": 1, \"kind\": \"kill\", \"target\": \"n2\", \"at_ms\": 2000},"
        "   {\"ordinal\": 1, \"kind\": \"restart\", \"target\": \"n2\", \"at_ms\": 3000},"
        "   {\"kind\": \"heal_all\", \"at_ms\": 14000}],"
        " \"coverage\": {\"risky\": ["
        "   {\"what\": \"leader_elected\", \"at_ms\": 200, \"node\": 1, \"on\": \"leader\"},"
        "   {\"what\": \"leader_elected\", \"at_ms\": 2300, \"node\": 1, \"on\": \"leader\"}]}}",
        0, &err);
    FL_ASSERTF(sum != NULL, "json: %s", err.text);
    return sum;
}

static void test_aim_in_phase(void)
{
    json_t *sum = summary();
    struct xp_sched s;
    xp_sched_init(&s);
    s.seed = 15;
    struct xp_entry e;
    xp_entry_from_summary(&e, &s, sum, 1);
    CHECK_EQ_INT(e.phase_from, 2000 * FL_MS);
    CHECK_EQ_INT(e.phase_to, 14000 * FL_MS);
    CHECK_EQ_INT(e.n_risky, 2);
    int early = 0, in_window = 0;
    for (uint64_t seed = 1; seed <= 200; seed++) {
        struct sim_rng r;
        sim_rng_seed(&r, seed);
        for (int which = 0; which < 2; which++) {
            struct xp_sched out;
            xp_sched_init(&out);
            xp_aim(&r, &e, which, &out);
            CHECK_EQ_INT(out.d.n_add, 1);
            const struct run_added_fault *f = &out.d.add[out.d.n_add - 1];
            if (f->at_ns < e.phase_from)
                early++;
            /* a moment in the phase keeps its window: up to half an election before */
            if (which == 1 && f->at_ns >= 1800 * FL_MS && f->at_ns <= 2300 * FL_MS)
                in_window++;
            xp_sched_close(&out);
        }
    }
    CHECK_EQ_INT(early, 0);
    CHECK_EQ_INT(in_window, 200);
    xp_entry_close(&e);
    xp_sched_close(&s);
    json_decref(sum);
}

int main(void)
{
    FL_TEST(test_aim_in_phase);
    return fl_test_end();
}
