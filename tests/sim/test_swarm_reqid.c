/*
 * test_swarm_reqid.c: a member's proposal ids never repeat across its restarts. A
 * follower forwards a client write and dies before its slow disk stored the entry;
 * the leader commits it with the other follower. The follower comes back (its disk
 * still slow), hears of the leader, and takes new writes while it stores the old
 * entry again. When it applies the old entry it must apply what the entry holds, not
 * the new request waiting under the same id: before the fix ids restarted at 1 with
 * every incarnation, the member applied a new write in place of the old one and the
 * members' stores diverged at one revision (found by the swarm, chaos seed 58).
 */
#include "server/tfixture.h"

static void test_reqid_across_restart(uint64_t seed)
{
    struct srv_config cfg;
    srv_config_default(&cfg);
    struct fixture f;
    setup(&f, seed, &cfg);
    int l = wait_leader(&f, 10 * FL_S);
    CHECK(l != 0);
    int fol = l == 1 ? 2 : 1;
    int fproc = srv_cluster_node_proc(f.cl, fol);
    CHECK(write_keys(&f, fol, 1, 3) == 3); /* proposal ids 1..3 on the follower */

    /* the fourth write through the follower: committed by the leader and the other
     * follower while the follower's fsync takes 2 s; the follower dies before it */
    disk_set_fsync_latency(f.w, fproc, 2 * FL_S);
    struct tclient c;
    tc_open(&c, f.w, f.cproc, fproc);
    tc_put_send(&c, "old", "A", 0);
    sim_run_for(f.w, 300 * FL_MS);
    srv_cluster_kill(f.cl, fol);
    tc_close(&c);
    srv_cluster_restart(f.cl, fol);

    /* new writes through it while it stores the old entry again */
    struct tclient c2;
    tc_open(&c2, f.w, f.cproc, fproc);
    sim_run_for(f.w, 300 * FL_MS);
    for (int i = 0; i < 8; i++) {
        char k[16], v[16];
        snprintf(k, sizeof k, "new%d", i);
        snprintf(v, sizeof v, "B%d", i);
        tc_put_send(&c2, k, v, 0);
    }
    sim_run_for(f.w, 3 * FL_S);
    disk_set_fsync_latency(f.w, fproc, FL_MS);
    tc_close(&c2);
    CHECK(wait_converged(&f, 10 * FL_S));
    CHECK(read_is(&f, fol, "old", "A", true));
    CHECK(read_is(&f, l, "old", "A", true));
    teardown(&f);
}

int main(void)
{
    fl_log_level = FL_LOG_WARN;
    for (uint64_t seed = 1; seed <= 3; seed++)
        test_reqid_across_restart(seed);
    return fl_test_end();
}
