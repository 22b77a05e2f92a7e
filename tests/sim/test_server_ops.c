/*
 * test_ops.c: membership and maintenance through the cluster helper: learner add,
 * promotion refused while behind then accepted, member removal, the strict
 * reconfiguration check, NOSPACE (exact error, reads served, recovery after compact +
 * defrag + disarm), defrag blocking reads for its duration, and backup/restore
 * (hash checked, corruption refused, raw copy needs skip_hash_check, new identities,
 * a stale member of the old cluster refused by the restored one).
 */
#include "server/tfixture.h"

#include "nodes/proto/errors.h"

static void test_learner_promote_remove(void)
{
    struct fixture f;
    int l = setup_snapshots(&f, 11, 50, 10);
    CHECK_EQ_INT(write_keys(&f, l, 0, 200), 200);
    /* etcd's strict reconfiguration check: every voter connected for 5 s first */
    sim_run_for(f.w, 5 * FL_S);

    struct ctl add = {0};
    srv_cluster_member_add(f.cl, 0, true, ctl_done, &add);
    CHECK(ctl_wait(&f, &add, 5 * FL_S));
    CHECK_EQ_INT(add.code, 0);
    int n4 = add.res.node;
    CHECK_EQ_INT(n4, 4);
    CHECK(add.res.member_id != 0 && add.res.member_id == srv_cluster_member_id(f.cl, 4));
    CHECK(srv_cluster_is_learner(f.cl, n4));

    /* The learner goes down and falls behind: promotion refused with etcd's text. */
    srv_cluster_kill(f.cl, n4);
    CHECK_EQ_INT(write_keys(&f, l, 200, 100), 100);
    struct ctl pr = {0};
    srv_cluster_member_promote(f.cl, 0, n4, ctl_done, &pr);
    CHECK(ctl_wait(&f, &pr, FL_S));
    CHECK_EQ_STR(pr.text,
                 "etcdserver: can only promote a learner member which is in sync with leader");
    CHECK_EQ_INT(pr.code, RPC_CODE_FAILED_PRECONDITION);
    /* Only one learner at a time. */
    struct ctl add2 = {0};
    srv_cluster_member_add(f.cl, 0, true, ctl_done, &add2);
    CHECK(ctl_wait(&f, &add2, FL_S));
    CHECK_EQ_STR(add2.text, "etcdserver: too many learner members in cluster");
    srv_cluster_restart(f.cl, n4);

    CHECK(wait_converged(&f, 5 * FL_S));
    CHECK(count_events("snapshot_applied", n4) >= 1);
    /* A learner serves Status and serializable reads only. */
    {
        struct tclient lc;
        tc_open_node(&lc, &f, n4);
        Rpc__ServerMsg *pm = tc_put(&lc, "x", "1");
        CHECK_EQ_STR(tc_err(pm), "etcdserver: rpc not supported for learner");
        tc_free(pm);
        CHECK(read_is(&f, n4, "k150", "v150", true));
        Rpc__ServerMsg *gm = tc_get(&lc, "k150", false);
        CHECK_EQ_STR(tc_err(gm), "etcdserver: rpc not supported for learner");
        tc_free(gm);
        tc_close(&lc);
    }
    /* Promoting a voter is refused with its own text. */
    struct ctl prv = {0};
    srv_cluster_member_promote(f.cl, 0, l == 1 ? 2 : 1, ctl_done, &prv);
    CHECK(ctl_wait(&f, &prv, FL_S));
    CHECK_EQ_STR(prv.text, "etcdserver: can only promote a learner member");
    struct ctl pr2 = {0};
    srv_cluster_member_promote(f.cl, 0, n4, ctl_done, &pr2);
    CHECK(ctl_wait(&f, &pr2, 5 * FL_S));
    CHECK_EQ_STR(pr2.text, "");
    int voters[8];
    sim_run_for(f.w, 200 * FL_MS);
    CHECK_EQ_INT(srv_cluster_voters(f.cl, voters, 8), 4);

    /* Remove a follower: it stops, three voters remain, writes still commit. */
    l = srv_cluster_leader(f.cl);
    int victim = l == 1 ? 2 : 1;
    struct ctl rm = {0};
    srv_cluster_member_remove(f.cl, 0, victim, ctl_done, &rm);
    CHECK(ctl_wait(&f, &rm, 5 * FL_S));
    CHECK_EQ_INT(rm.code, 0);
    sim_run_for(f.w, 500 * FL_MS);
    CHECK(srv_cluster_is_removed(f.cl, victim));
    CHECK(!srv_cluster_is_alive(f.cl, victim));
    CHECK_EQ_INT(srv_cluster_voters(f.cl, voters, 8), 3);
    CHECK_EQ_INT(write_keys(&f, srv_cluster_leader(f.cl), 300, 5), 5);
    CHECK(wait_converged(&f, 3 * FL_S));
    CHECK(srv_cluster_safety_violation(f.cl) == NULL);
    teardown(&f);
}

/* etcd 3.4's strict reconfiguration check, connectivity half: with every voter connected
 * for 5 s nothing is refused; with a follower down, an add (voter or learner) and the
 * removal of a live voter that would leave too few connected are refused as an
 * unhealthy cluster; the member that is down may be removed. */
static void test_strict_reconfig(void)
{
    struct fixture f;
    int l = setup_default(&f, 12);
    /* Right after the start the peers have been connected for less than 5 s. */
    struct ctl early = {0};
    srv_cluster_member_add(f.cl, 0, true, ctl_done, &early);
    CHECK(ctl_wait(&f, &early, 2 * FL_S));
    CHECK_EQ_STR(early.text, "etcdserver: unhealthy cluster");
    sim_run_for(f.w, 5 * FL_S);
    l = wait_leader(&f, 3 * FL_S);
    int a = l == 1 ? 2 : 1, b = 6 - l - a;
    srv_cluster_kill(f.cl, a);
    sim_run_for(f.w, 500 * FL_MS);
    /* Removing b would leave {leader, a} with only the leader connected: refused. */
    struct ctl rm = {0};
    srv_cluster_member_remove(f.cl, 0, b, ctl_done, &rm);
    CHECK(ctl_wait(&f, &rm, 2 * FL_S));
    CHECK_EQ_STR(rm.text, "etcdserver: unhealthy cluster");
    CHECK_EQ_INT(rm.code, RPC_CODE_UNAVAILABLE);
    /* a has started once, so the started-members count passes; it is not connected. */
    struct ctl add = {0};
    srv_cluster_member_add(f.cl, 0, false, ctl_done, &add);
    CHECK(ctl_wait(&f, &add, 2 * FL_S));
    CHECK_EQ_STR(add.text, "etcdserver: unhealthy cluster");
    /* Removing the dead one is fine: it is not part of the active quorum. */
    struct ctl rm2 = {0};
    srv_cluster_member_remove(f.cl, 0, a, ctl_done, &rm2);
    CHECK(ctl_wait(&f, &rm2, 3 * FL_S));
    CHECK_EQ_INT(rm2.code, 0);
    teardown(&f);
}

/* member_add{start = false}: a learner added without starting it is in the
 * configuration but runs nowhere (peers are refused, it applies nothing) until
 * srv_cluster_member_start starts it, once; then it catches up and can be promoted. */
static void test_add_unstarted(void)
{
    struct fixture f;
    int l = setup_default(&f, 13);
    CHECK_EQ_INT(write_keys(&f, l, 0, 20), 20);
    sim_run_for(f.w, 5 * FL_S);
    struct ctl add = {0};
    srv_cluster_member_add_unstarted(f.cl, 0, true, ctl_done, &add);
    CHECK(ctl_wait(&f, &add, 2 * FL_S));
    CHECK_EQ_INT(add.code, 0);
    int n4 = add.res.node;
    CHECK(n4 == 4 && srv_cluster_awaits_start(f.cl, n4));
    sim_run_for(f.w, 2 * FL_S);
    CHECK(srv_cluster_member(f.cl, n4) == NULL);
    CHECK(srv_cluster_is_learner(f.cl, n4));
    CHECK_EQ_INT(srv_cluster_member_start(f.cl, 2), FL_ENOENT); /* a running member */
    CHECK_EQ_INT(srv_cluster_member_start(f.cl, n4), FL_OK);
    CHECK_EQ_INT(srv_cluster_member_start(f.cl, n4), FL_ENOENT); /* once */
    CHECK(!srv_cluster_awaits_start(f.cl, n4));
    CHECK(srv_cluster_member(f.cl, n4) != NULL);
    sim_run_for(f.w, 3 * FL_S);
    struct ctl pr = {0};
    srv_cluster_member_promote(f.cl, 0, n4, ctl_done, &pr);
    CHECK(ctl_wait(&f, &pr, 3 * FL_S));
    CHECK_EQ_INT(pr.code, 0);
    CHECK(wait_converged(&f, 5 * FL_S));
    CHECK(srv_cluster_safety_violation(f.cl) == NULL);
    teardown(&f);
}

static Rpc__ServerMsg *put_big(struct tclient *c, int i, size_t size)
{
    char k[32];
    snprintf(k, sizeof k, "big%d", i);
    char *v = malloc(size + 1);
    memset(v, 'x', size);
    v[size] = 0;
    Rpc__ServerMsg *m = tc_put(c, k, v);
    free(v);
    return m;
}

static void test_nospace_and_defrag(void)
{
    struct fixture f;
    struct srv_config cfg;
    srv_config_default(&cfg);
    cfg.quota_backend_bytes = 256 * 1024;
    int l = setup_leader(&f, 13, &cfg);
    struct tclient c;
    tc_open_node(&c, &f, l);
    int ok = 0;
    const char *last_err = "";
    Rpc__ServerMsg *m = NULL;
    for (int i = 0; i < 1000; i++) {
        m = put_big(&c, i % 20, 4096);
        if (!m || m->error)
            break;
        ok++;
        rpc__server_msg__free_unpacked(m, NULL);
        m = NULL;
    }
    last_err = tc_err(m);
    CHECK(ok > 10);
    CHECK_EQ_STR(last_err, "etcdserver: mvcc: database space exceeded");
    CHECK(m && m->error && m->error->code == RPC_CODE_RESOURCE_EXHAUSTED);
    tc_free(m);
    sim_run_for(f.w, 200 * FL_MS);
    /* The alarm is cluster-wide: every member refuses, reads and deletes work. */
    for (int i = 1; i <= 3; i++) {
        struct srv_member_status st;
        srv_cluster_status(f.cl, i, &st);
        CHECK(st.nospace_alarm);
    }
    CHECK(count_events("alarm", 0) >= 3);
    Rpc__ServerMsg *g = tc_get(&c, "big1", false);
    CHECK(g && !g->error && g->range->n_kvs == 1);
    tc_free(g);
    int other = l == 1 ? 2 : 1;
    struct tclient c2;
    tc_open_node(&c2, &f, other);
    Rpc__ServerMsg *m2 = tc_put(&c2, "small", "1");
    CHECK_EQ_STR(tc_err(m2), "etcdserver: mvcc: database space exceeded");
    tc_free(m2);

    /* Recovery: compact to the current revision, defrag every member, disarm. */
    struct srv_member_status st;
    srv_cluster_status(f.cl, l, &st);
    int64_t size_before = st.db_size_bytes;
    struct ctl cp = {0};
    srv_cluster_compact(f.cl, 0, st.revision, ctl_done, &cp);
    CHECK(ctl_wait(&f, &cp, 3 * FL_S));
    CHECK_EQ_INT(cp.code, 0);
    sim_run_for(f.w, 100 * FL_MS);
    for (int i = 1; i <= 3; i++) {
        struct ctl df = {0};
        int64_t t0 = sim_now_ns(f.w);
        srv_cluster_defrag(f.cl, i, ctl_done, &df);
        /* A read issued during the defrag waits until it is over. */
        struct tclient c3;
        tc_open_node(&c3, &f, i);
        Rpc__ServerMsg *r = tc_get(&c3, "big2", true);
        int64_t t_read = sim_now_ns(f.w);
        CHECK(ctl_wait(&f, &df, 5 * FL_S));
        int64_t t_done = sim_now_ns(f.w);
        CHECK(r && !r->error);
        CHECK(t_read - t0 >= 10 * FL_MS); /* at least the defrag's base time */
        (void)t_done;
        tc_free(r);
        tc_close(&c3);
    }
    CHECK(count_events("defrag", 0) >= 6);
    /* A member killed during its defrag answers the control call as stopped. */
    struct ctl dk = {0};
    srv_cluster_defrag(f.cl, other, ctl_done, &dk);
    sim_run_for(f.w, FL_MS);
    srv_cluster_kill(f.cl, other);
    CHECK(dk.done);
    CHECK_EQ_STR(dk.text, "etcdserver: server stopped");
    srv_cluster_restart(f.cl, other);
    srv_cluster_status(f.cl, l, &st);
    CHECK(st.db_size_bytes < size_before);
    struct ctl da = {0};
    srv_cluster_alarm_disarm(f.cl, 0, ctl_done, &da);
    CHECK(ctl_wait(&f, &da, 3 * FL_S));
    CHECK_EQ_INT(da.code, 0);
    sim_run_for(f.w, 100 * FL_MS);
    tc_close(&c2);
    tc_open_node(&c2, &f, other);
    Rpc__ServerMsg *m3 = tc_put(&c2, "small", "2");
    CHECK(m3 && !m3->error);
    if (m3 && m3->error)
        fprintf(stderr, "put after recovery: %s\n", m3->error->message);
    tc_free(m3);
    CHECK(wait_converged(&f, 3 * FL_S));
    tc_close(&c);
    tc_close(&c2);
    teardown(&f);
}

static void test_backup_restore(void)
{
    struct fixture f;
    int l = setup_default(&f, 14);
    CHECK_EQ_INT(write_keys(&f, l, 0, 30), 30);
    struct ctl snap = {0};
    srv_cluster_snapshot_save(f.cl, l, ctl_done, &snap);
    CHECK(ctl_wait(&f, &snap, 2 * FL_S));
    CHECK(snap.code == 0 && snap.len > 100);
    uint64_t old_cluster = srv_cluster_id(f.cl, 1);
    uint64_t old_ids[4];
    for (int i = 1; i <= 3; i++)
        old_ids[i] = srv_cluster_member_id(f.cl, i);

    /* Corruption is refused; a raw db copy needs skip_hash_check. */
    struct srv_status st;
    snap.data[snap.len / 2] ^= 0x10;
    int nodes12[2] = {1, 2};
    CHECK(srv_cluster_restore(f.cl, snap.data, snap.len, nodes12, 2, false, &st) != FL_OK);
    CHECK(strncmp(st.text, "expected sha256 [", 17) == 0 && strstr(st.text, "], got [") != NULL);
    snap.data[snap.len / 2] ^= 0x10;
    uint8_t *raw = NULL;
    size_t raw_len = 0;
    CHECK_EQ_INT(srv_cluster_copy_db(f.cl, l, &raw, &raw_len), FL_OK);
    CHECK(srv_cluster_restore(f.cl, raw, raw_len, nodes12, 2, false, &st) != FL_OK);
    CHECK_EQ_STR(st.text, "snapshot missing hash but --skip-hash-check=false");
    free(raw);

    /* Node 3 goes down with its old data; nodes 1 and 2 become a restored cluster. */
    srv_cluster_kill(f.cl, 3);
    CHECK_EQ_INT(srv_cluster_restore(f.cl, snap.data, snap.len, nodes12, 2, false, &st), FL_OK);
    CHECK(srv_cluster_id(f.cl, 1) != old_cluster);
    CHECK(srv_cluster_id(f.cl, 1) == srv_cluster_id(f.cl, 2));
    CHECK(srv_cluster_member_id(f.cl, 1) != old_ids[1]);
    CHECK(srv_cluster_member_id(f.cl, 2) != old_ids[2]);
    int l2 = wait_leader(&f, 5 * FL_S);
    CHECK(l2 == 1 || l2 == 2);
    if (!l2) {
        for (int i = 0; i < n_evs; i++)
            fprintf(stderr, "%d %s %s\n", evs[i].node, evs[i].kind, evs[i].detail);
        teardown(&f);
        return;
    }
    CHECK(read_is(&f, l2, "k29", "v29", false));
    CHECK_EQ_INT(write_keys(&f, l2, 30, 3), 3);
    /* The stale member of the old cluster comes back: refused by the new one. */
    srv_cluster_restart(f.cl, 3);
    sim_run_for(f.w, 3 * FL_S);
    CHECK(count_events("peer_refused", 3) >= 1);
    CHECK(srv_cluster_id(f.cl, 3) == old_cluster);
    CHECK(
        read_is(&f, srv_cluster_leader(f.cl) ? srv_cluster_leader(f.cl) : 1, "k31", "v31", false));
    CHECK(srv_cluster_safety_violation(f.cl) == NULL);
    free(snap.data);
    teardown(&f);
}

int main(void)
{
    fl_log_level = FL_LOG_WARN;
    FL_TEST(test_learner_promote_remove);
    FL_TEST(test_strict_reconfig);
    FL_TEST(test_add_unstarted);
    FL_TEST(test_nospace_and_defrag);
    FL_TEST(test_backup_restore);
    return fl_test_end();
}
