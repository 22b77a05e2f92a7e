/*
 * test_swarm_wal.c: a member's durable log at restart. (1) A WAL that is not a Raft log
 * (an entry past a gap) is a safety violation reported by the online checker, never an
 * assertion that aborts the run (the swarm found one with raft.ack_before_fsync: chaos
 * seeds 5, 24, 73, 102 aborted). (2) With raft.ack_before_fsync on, a follower still
 * writes every entry to its WAL; only the fsync comes after its acknowledgement
 * (the switch used to send the acknowledgements through the buffer that held the WAL
 * bytes, so the entries were never written at all): a follower killed after its writes
 * synced restarts with its whole log and the cluster converges.
 */
#include "server/tfixture.h"

#include "nodes/server/wal.h"

static void noop_synced(struct sim_world *w, int proc, int err, void *ctx)
{
    (void)w;
    (void)proc;
    (void)err;
    (void)ctx;
}

static void test_wal_gap_is_a_violation(void)
{
    struct srv_config cfg;
    srv_config_default(&cfg);
    struct fixture f;
    setup(&f, 7, &cfg);
    int l = wait_leader(&f, 10 * FL_S);
    CHECK(l != 0);
    CHECK(write_keys(&f, l, 1, 5) == 5);
    sim_run_for(f.w, 500 * FL_MS);
    int fol = l == 1 ? 2 : 1;
    int proc = srv_cluster_node_proc(f.cl, fol);
    /* an entry far past the end of the log, synced, then the member dies */
    struct fl_buf b;
    fl_buf_init(&b);
    srv_wal_put_entry(&b, 9, 1000, 0, (const uint8_t *)"x", 1);
    const char *name = "wal/0000000000000001.wal"; /* the first segment (no snapshot yet) */
    CHECK(disk_append(f.w, proc, name, b.data, b.len) == FL_OK);
    fl_buf_close(&b);
    CHECK(disk_fsync(f.w, proc, name, noop_synced, NULL) == FL_OK);
    sim_run_for(f.w, 10 * FL_MS);
    srv_cluster_kill(f.cl, fol);
    CHECK(srv_cluster_safety_violation(f.cl) == NULL);
    srv_cluster_restart(f.cl, fol); /* used to abort: raft_restore refused the log */
    const char *v = srv_cluster_safety_violation(f.cl);
    CHECK(v != NULL && strstr(v, "durable_log") != NULL);
    CHECK(srv_cluster_is_alive(f.cl, fol));
    teardown(&f);
}

static void test_ack_before_fsync_still_writes(void)
{
    fl_bug_enable("raft.ack_before_fsync");
    struct srv_config cfg;
    srv_config_default(&cfg);
    struct fixture f;
    setup(&f, 3, &cfg);
    int l = wait_leader(&f, 10 * FL_S);
    CHECK(l != 0);
    CHECK(write_keys(&f, l, 1, 20) == 20);
    sim_run_for(f.w, 1 * FL_S); /* every write synced everywhere */
    int fol = l == 1 ? 2 : 1;
    struct srv_member_status before, after;
    srv_cluster_status(f.cl, fol, &before);
    CHECK(before.raft_index >= 23); /* 3 configuration entries, a no-op, 20 writes */
    /* it comes back cut off from its peers: its log is what its disk held */
    int fproc = srv_cluster_node_proc(f.cl, fol);
    srv_cluster_kill(f.cl, fol);
    net_isolate(f.w, fproc);
    srv_cluster_restart(f.cl, fol);
    srv_cluster_status(f.cl, fol, &after);
    CHECK(after.raft_index == before.raft_index);
    net_heal(f.w);
    CHECK(wait_converged(&f, 10 * FL_S));
    /* the switch's own signature only: raft_safety's commit_quorum sees the leader count
     * acknowledgements of entries its followers have not persisted yet */
    const char *v = srv_cluster_safety_violation(f.cl);
    CHECK(v == NULL || strstr(v, "\"commit_quorum\"") != NULL);
    CHECK(read_is(&f, fol, "k20", "v20", true));
    teardown(&f);
    fl_bug_reset();
}

int main(void)
{
    fl_log_level = FL_LOG_WARN;
    FL_TEST(test_wal_gap_is_a_violation);
    FL_TEST(test_ack_before_fsync_still_writes);
    return fl_test_end();
}
