/*
 * test_server_clock.c: a member measures its own intervals on its own clock
 * (srv_member_now, the environment's local clock), never on the run's reference
 * clock: periodic auto compaction on a leader whose clock runs 4x fast compacts after
 * about a quarter of the retention in world time, and on an exact clock after the
 * whole retention. (Before the node environment the compactor read the world clock,
 * so the skewed leader compacted at the same world time as the exact one.)
 */
#include "server/tfixture.h"

/* World time from the leader's skew until the first compaction event; -1 if none
 * within 20 s. */
static int64_t first_compact_after(int64_t rate_ppm)
{
    struct fixture f;
    struct srv_config cfg;
    srv_config_default(&cfg);
    cfg.auto_compaction_mode = SRV_AUTOCOMPACT_PERIODIC;
    cfg.auto_compaction_retention = 8 * FL_S;
    int l = setup_leader(&f, 41, &cfg);
    CHECK_EQ_INT(sim_proc_set_rate(f.w, srv_cluster_node_proc(f.cl, l), rate_ppm), FL_OK);
    int64_t t0 = sim_now_ns(f.w), found = -1;
    for (int i = 0; sim_now_ns(f.w) - t0 < 20 * FL_S; i++) {
        write_keys(&f, l, i, 1); /* revisions keep coming for the compactor to sample */
        sim_run_for(f.w, 100 * FL_MS);
        if (count_events(SRV_EV_COMPACT, 0) > 0) {
            found = sim_now_ns(f.w) - t0;
            break;
        }
    }
    teardown(&f);
    return found;
}

static void test_periodic_compaction_on_member_clock(void)
{
    int64_t exact = first_compact_after(1000000);
    int64_t fast = first_compact_after(4000000);
    fprintf(stderr, "first compaction: exact clock %" PRId64 " ms, 4x clock %" PRId64 " ms\n",
            exact / FL_MS, fast / FL_MS);
    CHECK(exact >= 5 * FL_S);
    CHECK(fast > 0 && fast < 4 * FL_S);
}

int main(void)
{
    FL_TEST(test_periodic_compaction_on_member_clock);
    return fl_test_end();
}
