/*
 * test_streams.c: watch and lease streams through a member: events in revision order
 * that survive a leader change without gap or duplicate, requested progress, a watch
 * from a compacted revision cancelled with the compaction revision, a require_leader
 * watch cancelled with "etcdserver: no leader" on an isolated member, lease expiry
 * deleting the attached key on every member, and keep-alives forwarded by a follower.
 */
#include "server/tfixture.h"

#include "nodes/proto/errors.h"

static void test_watch_across_leader_change(void)
{
    struct fixture f;
    int l = setup_default(&f, 21);
    int wnode = l == 1 ? 2 : 1;
    struct tclient w;
    tc_open_node(&w, &f, wnode);
    uint64_t id = watch_open(&w, "k", "l", false);
    CHECK_EQ_INT(write_keys(&f, l, 0, 10), 10);
    srv_cluster_kill(f.cl, l);
    int l2 = wait_leader(&f, 5 * FL_S);
    CHECK(l2 > 0 && l2 != l);
    CHECK_EQ_INT(write_keys(&f, l2, 10, 10), 10);
    sim_run_for(f.w, 500 * FL_MS);
    int64_t revs[64];
    int n = tc_events(&w, id, revs, 0, 64, NULL);
    CHECK_EQ_INT(n, 20);
    int bad = 0;
    for (int i = 0; i < n; i++)
        bad += revs[i] != i + 2; /* revisions 2..21, each exactly once, in order */
    CHECK_EQ_INT(bad, 0);

    /* Requested progress: a notification at the current revision. */
    tc_watch_progress(&w, id);
    Rpc__ServerMsg *p = tc_wait(&w, id, FL_S);
    CHECK(p && p->resp_case == RPC__SERVER_MSG__RESP_WATCH && p->watch->n_events == 0 &&
          p->header->revision == 21);
    tc_free(p);

    /* Compact, then watch from revision 1: cancelled with the compaction revision. */
    struct ctl cp = {0};
    srv_cluster_compact(f.cl, 0, 15, ctl_done, &cp);
    CHECK(ctl_wait(&f, &cp, 2 * FL_S) && cp.code == 0);
    sim_run_for(f.w, 100 * FL_MS);
    uint64_t id2 = tc_watch_send(&w, "k", "l", 1, false);
    sim_run_for(f.w, 500 * FL_MS);
    bool saw_cancel = false;
    int64_t compact_rev = 0;
    Rpc__ServerMsg *m;
    while ((m = tc_take(&w, id2))) {
        if (m->resp_case == RPC__SERVER_MSG__RESP_WATCH && m->watch->canceled) {
            saw_cancel = true;
            compact_rev = m->watch->compact_revision;
            CHECK_EQ_STR(m->error ? m->error->message : "",
                         "etcdserver: mvcc: required revision has been compacted");
        }
        rpc__server_msg__free_unpacked(m, NULL);
    }
    CHECK(saw_cancel);
    CHECK_EQ_INT(compact_rev, 15);
    tc_close(&w);
    CHECK(srv_cluster_safety_violation(f.cl) == NULL);
    teardown(&f);
}

static void test_require_leader_watch(void)
{
    struct fixture f;
    int l = setup_default(&f, 22);
    int lone = l == 1 ? 2 : 1;
    struct tclient w;
    tc_open_node(&w, &f, lone);
    uint64_t id = watch_open(&w, "a", NULL, true);
    cut_off(&f, lone); /* from its peers but not from the client (etcd#8673) */
    Rpc__ServerMsg *end = tc_wait(&w, id, 10 * FL_S);
    CHECK(end && end->stream_end && end->error);
    CHECK_EQ_STR(end && end->error ? end->error->message : "", "etcdserver: no leader");
    CHECK(end && end->error && end->error->code == RPC_CODE_UNAVAILABLE);
    tc_free(end);
    /* A linearizable read there never returns stale data: it times out. */
    Rpc__ServerMsg *g = tc_get(&w, "a", false);
    CHECK_EQ_STR(tc_err(g), "etcdserver: request timed out");
    tc_free(g);
    tc_close(&w);
    net_heal(f.w);
    teardown(&f);
}

static void test_leases(void)
{
    struct fixture f;
    int l = setup_default(&f, 23);
    struct tclient c;
    tc_open_node(&c, &f, l);
    int64_t a = tc_lease_grant(&c, 5, 5 * FL_S), b = tc_lease_grant(&c, 5, 5 * FL_S);
    CHECK(a > 0 && b > 0 && a != b);
    CHECK(tc_ok(tc_wait(&c, tc_put_send(&c, "la", "x", a), 5 * FL_S)));
    CHECK(tc_ok(tc_wait(&c, tc_put_send(&c, "lb", "x", b), 5 * FL_S)));
    /* b is kept alive through a follower (forwarded to the leader's lessor). */
    int fol = l == 1 ? 2 : 1;
    struct tclient k;
    tc_open_node(&k, &f, fol);
    uint64_t stream = k.next_call++;
    int answers = 0;
    for (int i = 0; i < 8; i++) {
        tc_keepalive(&k, stream, b);
        sim_run_for(f.w, FL_S);
        Rpc__ServerMsg *m;
        while ((m = tc_take(&k, stream))) {
            if (m->lease_keepalive && m->lease_keepalive->ttl > 0)
                answers++;
            rpc__server_msg__free_unpacked(m, NULL);
        }
    }
    CHECK(answers >= 7);
    /* 8 s later: a (TTL 5, no keep-alive) has expired on every member; b has not. */
    for (int i = 1; i <= 3; i++) {
        CHECK(!key_exists(&f, i, "la"));
        CHECK(key_exists(&f, i, "lb"));
    }
    /* Without keep-alives b goes too. */
    sim_run_for(f.w, 8 * FL_S);
    for (int i = 1; i <= 3; i++)
        CHECK(!key_exists(&f, i, "lb"));
    CHECK(wait_converged(&f, 2 * FL_S));
    tc_close(&k);
    tc_close(&c);
    teardown(&f);
}

int main(void)
{
    fl_log_level = FL_LOG_WARN;
    FL_TEST(test_watch_across_leader_change);
    FL_TEST(test_require_leader_watch);
    FL_TEST(test_leases);
    return fl_test_end();
}
