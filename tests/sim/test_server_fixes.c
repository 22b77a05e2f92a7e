/*
 * test_server_fixes.c: member behaviours the MVCC scenarios rely on: a lease keep-alive
 * kept through a follower outlives a leader crash (the follower forwards it to the new
 * leader) and ends with "etcdserver: request timed out" when no leader answers; a
 * follower asks the leader how long a lease has left (LeaseTimeToLive); an expiry's
 * node event names the lease, its keys and the revision of the deletes; the
 * failpoint watch/before_send "delay" holds watch responses in the store and then sends
 * them all, in order; a compaction's node event carries its revision and the store
 * revision; mvcc.watch_old_after_partition makes an isolated follower resend old
 * revisions once it hears the leader again, and nothing is resent without the bug;
 * raft.ack_before_fsync sends acknowledgements early but still writes the WAL (its
 * records once went with the scratch buffer the early send reused), so writes that
 * were fsynced survive every member's restart.
 */
#include "server/tfixture.h"

#include "harness/fault/fault.h"
#include "nodes/proto/errors.h"

/* Keeps `lease` alive through `node` like clientv3: the next request TTL/3 after
 * an answer; a TTL without answer ends it. Runs for `dur`; returns the answers, or
 * -1 when the keep-alive gave up. */
static int keep_alive_for(struct fixture *f, int node, int64_t lease, int64_t ttl_s, int64_t dur)
{
    struct tclient k;
    tc_open_node(&k, f, node);
    uint64_t stream = k.next_call++;
    int answers = 0;
    int64_t end = sim_now_ns(f->w) + dur, last = sim_now_ns(f->w);
    tc_keepalive(&k, stream, lease);
    while (sim_now_ns(f->w) < end) {
        sim_run_for(f->w, 50 * FL_MS);
        Rpc__ServerMsg *m;
        bool got = false;
        while ((m = tc_take(&k, stream))) {
            got = got || (m->lease_keepalive && m->lease_keepalive->ttl > 0);
            rpc__server_msg__free_unpacked(m, NULL);
        }
        if (got) {
            answers++;
            last = sim_now_ns(f->w);
            sim_run_for(f->w, ttl_s * FL_S / 3);
            tc_keepalive(&k, stream, lease);
        } else if (sim_now_ns(f->w) - last > ttl_s * FL_S) {
            answers = -1;
            break;
        }
    }
    tc_close(&k);
    return answers;
}

static void put_lease(struct fixture *f, int node, const char *k, int64_t lease)
{
    struct tclient c;
    tc_open_node(&c, f, node);
    CHECK(tc_ok(tc_wait(&c, tc_put_send(&c, k, "", lease), 3 * FL_S)));
    tc_close(&c);
}

static void test_keepalive_across_leader_crash(void)
{
    struct fixture f;
    int l = setup_default(&f, 31);
    int64_t lease = tc_grant_on(&f, l, 5);
    CHECK(lease > 0);
    put_lease(&f, l, "ka", lease);
    int fol = l == 1 ? 2 : 1;
    CHECK(keep_alive_for(&f, fol, lease, 5, 3 * FL_S) > 0);
    srv_cluster_kill(f.cl, l);
    /* The follower keeps forwarding to whoever leads: no TTL passes without answer. */
    int answers = keep_alive_for(&f, fol, lease, 5, 15 * FL_S);
    CHECK(answers >= 5);
    CHECK(key_exists(&f, fol, "ka"));
    srv_cluster_restart(f.cl, l);
    CHECK(wait_converged(&f, 5 * FL_S));
    CHECK(key_exists(&f, l, "ka"));
    teardown(&f);
}

static void test_keepalive_no_leader_times_out(void)
{
    struct fixture f;
    int l = setup_default(&f, 32);
    int64_t lease = tc_grant_on(&f, l, 30);
    int lone = l == 1 ? 2 : 1;
    cut_off(&f, lone);
    sim_run_for(f.w, 3 * FL_S); /* it has given up on its leader */
    struct tclient k;
    tc_open_node(&k, &f, lone);
    uint64_t stream = k.next_call++;
    tc_keepalive(&k, stream, lease);
    Rpc__ServerMsg *m = tc_wait(&k, stream, 10 * FL_S);
    CHECK(m && m->stream_end && m->error);
    CHECK_EQ_STR(m && m->error ? m->error->message : "", "etcdserver: request timed out");
    CHECK(m && m->error && m->error->code == RPC_CODE_UNAVAILABLE);
    tc_free(m);
    tc_close(&k);
    net_heal(f.w);
    teardown(&f);
}

static void test_lease_ttl_from_follower(void)
{
    struct fixture f;
    int l = setup_default(&f, 36);
    int64_t lease = tc_grant_on(&f, l, 10);
    sim_run_for(f.w, 3 * FL_S);
    int fol = l == 1 ? 2 : 1;
    struct tclient c;
    tc_open_node(&c, &f, fol);
    Rpc__ServerMsg *m = tc_lease_ttl(&c, lease);
    /* The leader's lessor has 7 s left (rounded up); the follower asks it. */
    CHECK(m && m->lease_ttl && m->lease_ttl->ttl >= 6 && m->lease_ttl->ttl <= 7);
    CHECK(m && m->lease_ttl && m->lease_ttl->grantedttl == 10);
    tc_free(m);
    m = tc_lease_ttl(&c, lease + 1);
    CHECK(m && m->lease_ttl && m->lease_ttl->ttl == -1);
    tc_free(m);
    /* Cut off from the leader, the follower cannot know: the request times out. */
    cut_off(&f, fol);
    sim_run_for(f.w, 3 * FL_S);
    m = tc_lease_ttl(&c, lease);
    CHECK_EQ_STR(tc_err(m), "etcdserver: request timed out");
    tc_free(m);
    tc_close(&c);
    net_heal(f.w);
    teardown(&f);
}

static void test_lease_end_event(void)
{
    struct fixture f;
    int l = setup_default(&f, 37);
    int64_t lease = tc_grant_on(&f, l, 2);
    put_lease(&f, l, "le/b", lease);
    put_lease(&f, l, "le/a", lease); /* revisions 2, 3 */
    sim_run_for(f.w, 6 * FL_S);
    int seen = 0;
    for (int i = 0; i < n_evs; i++) {
        if (strcmp(evs[i].kind, SRV_EV_LEASE_END))
            continue;
        seen++;
        CHECK_EQ_INT(evs[i].lease_id, lease);
        CHECK_EQ_INT(evs[i].n_keys, 2);
        CHECK_EQ_STR(evs[i].key0, "le/a");
        CHECK_EQ_INT(evs[i].revision, 4);
    }
    CHECK_EQ_INT(seen, 3); /* every member applied the expiry */
    CHECK(wait_converged(&f, 2 * FL_S));
    teardown(&f);
}

static void test_watch_delay_failpoint(void)
{
    struct fixture f;
    int l = setup_default(&f, 33);
    struct tclient w;
    tc_open_node(&w, &f, l);
    uint64_t id = watch_open(&w, "k", "l", false);
    struct flt_spec sp = {
        .node = srv_cluster_node_proc(f.cl, l), .action = SIM_FAULT_DELAY, .delay_ms = 300};
    CHECK_EQ_INT(flt_enable(f.w, "watch/before_send", &sp), FL_OK);
    CHECK_EQ_INT(write_keys(&f, l, 0, 10), 10);
    int64_t revs[64];
    int n = tc_events(&w, id, revs, 0, 64, NULL);
    CHECK(n < 10); /* held while the failpoint delays every send */
    flt_disable_all(f.w);
    sim_run_for(f.w, FL_S);
    n = tc_events(&w, id, revs, n, 64, NULL);
    CHECK_EQ_INT(n, 10);
    int bad = 0;
    for (int i = 0; i < n; i++)
        bad += revs[i] != i + 2;
    CHECK_EQ_INT(bad, 0);
    CHECK(flt_fired(f.w, FLT_WATCH_BEFORE_SEND) > 0);
    tc_close(&w);
    teardown(&f);
}

static void test_compact_event(void)
{
    struct fixture f;
    int l = setup_default(&f, 34);
    CHECK_EQ_INT(write_keys(&f, l, 0, 10), 10); /* revisions 2..11 */
    struct ctl c = {0};
    srv_cluster_compact(f.cl, 0, 7, ctl_done, &c);
    CHECK(ctl_wait(&f, &c, 3 * FL_S) && c.code == 0);
    sim_run_for(f.w, 500 * FL_MS);
    int seen = 0;
    for (int i = 0; i < n_evs; i++) {
        if (strcmp(evs[i].kind, SRV_EV_COMPACT))
            continue;
        seen++;
        CHECK_EQ_INT(evs[i].revision, 7);
        CHECK_EQ_INT(evs[i].store_rev, 11);
    }
    CHECK_EQ_INT(seen, 3); /* every member applied it */
    teardown(&f);
}

/* A follower with a watch is cut off for 3 s while the leader takes writes, then
 * healed; returns how many revisions its watch delivered more than once. */
static int isolated_watch_dups(bool bug)
{
    fl_bug_reset();
    if (bug)
        fl_bug_enable("mvcc.watch_old_after_partition");
    struct fixture f;
    int l = setup_default(&f, 35);
    int fol = l == 1 ? 2 : 1;
    struct tclient w;
    tc_open_node(&w, &f, fol);
    uint64_t id = watch_open(&w, "k", "l", false);
    CHECK_EQ_INT(write_keys(&f, l, 0, 5), 5);
    cut_off(&f, fol);
    CHECK_EQ_INT(write_keys(&f, l, 5, 5), 5);
    sim_run_for(f.w, 3 * FL_S);
    net_heal(f.w);
    sim_run_for(f.w, 2 * FL_S);
    int64_t revs[256];
    int n = tc_events(&w, id, revs, 0, 256, NULL);
    int dups = 0;
    for (int i = 1; i < n; i++)
        dups += revs[i] <= revs[i - 1];
    CHECK(n >= 10);
    tc_close(&w);
    teardown(&f);
    fl_bug_reset();
    return dups;
}

static void test_watch_old_after_partition(void)
{
    CHECK_EQ_INT(isolated_watch_dups(false), 0);
    CHECK(isolated_watch_dups(true) > 0);
}

/* raft.ack_before_fsync only moves the acknowledgement ahead of the fsync: once the
 * fsyncs are done, every acknowledged write is on every member's disk, so a restart of
 * the whole cluster loses none of them. */
static void test_ack_before_fsync_keeps_wal(void)
{
    CHECK(fl_bug_enable("raft.ack_before_fsync"));
    struct fixture f;
    int l = setup_default(&f, 51);
    CHECK_EQ_INT(write_keys(&f, l, 0, 40), 40);
    sim_run_for(f.w, 1 * FL_S); /* every fsync has completed */
    for (int n = 1; n <= 3; n++)
        srv_cluster_kill(f.cl, n);
    for (int n = 1; n <= 3; n++)
        srv_cluster_restart(f.cl, n);
    l = wait_leader(&f, 5 * FL_S);
    CHECK(l > 0);
    for (int n = 1; n <= 3; n++) {
        struct srv_member_status st;
        srv_cluster_status(f.cl, n, &st);
        CHECK(st.raft_index >= 40);
    }
    CHECK(read_is(&f, l, "k39", "v39", false));
    teardown(&f);
    fl_bug_reset();
}

int main(void)
{
    fl_log_level = FL_LOG_WARN;
    FL_TEST(test_keepalive_across_leader_crash);
    FL_TEST(test_keepalive_no_leader_times_out);
    FL_TEST(test_lease_ttl_from_follower);
    FL_TEST(test_lease_end_event);
    FL_TEST(test_watch_delay_failpoint);
    FL_TEST(test_compact_event);
    FL_TEST(test_watch_old_after_partition);
    FL_TEST(test_ack_before_fsync_keeps_wal);
    return fl_test_end();
}
