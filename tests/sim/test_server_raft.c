/*
 * test_server_raft.c: Raft behaviours seen through whole members: removing the leader
 * of a 4-member cluster (a new leader follows, the old one stops, writes go on), leader
 * transfer to a chosen member, a second configuration change while the first is
 * uncommitted (never applied: it times out as in etcd, and the uncommitted change is
 * rolled back after the partition heals), and pre-vote keeping a rejoining member from
 * disrupting the leader (and the disruption without it).
 */
#include "server/tfixture.h"

#include "nodes/proto/errors.h"

static void test_remove_leader(void)
{
    struct fixture f;
    struct srv_config cfg;
    srv_config_default(&cfg);
    cfg.nodes = 4;
    int l = setup_leader(&f, 31, &cfg);
    CHECK_EQ_INT(write_keys(&f, l, 0, 10), 10);
    sim_run_for(f.w, 5 * FL_S); /* the strict reconfiguration check's HealthInterval */
    struct ctl rm = {0};
    srv_cluster_member_remove(f.cl, l, l, ctl_done, &rm);
    CHECK(ctl_wait(&f, &rm, 3 * FL_S));
    CHECK_EQ_INT(rm.code, 0);
    sim_run_for(f.w, 100 * FL_MS);
    CHECK(srv_cluster_is_removed(f.cl, l));
    CHECK(!srv_cluster_is_alive(f.cl, l));
    int l2 = wait_leader(&f, 5 * FL_S);
    CHECK(l2 > 0 && l2 != l);
    int voters[8];
    CHECK_EQ_INT(srv_cluster_voters(f.cl, voters, 8), 3);
    CHECK_EQ_INT(write_keys(&f, l2, 10, 10), 10);
    CHECK(read_is(&f, l2, "k3", "v3", false));
    CHECK(wait_converged(&f, 3 * FL_S));
    CHECK(srv_cluster_safety_violation(f.cl) == NULL);
    teardown(&f);
}

static void test_move_leader(void)
{
    struct fixture f;
    int l = setup_default(&f, 32);
    CHECK_EQ_INT(write_keys(&f, l, 0, 5), 5);
    int target = l == 3 ? 1 : 3;
    struct ctl mv = {0};
    srv_cluster_move_leader(f.cl, 0, target, ctl_done, &mv);
    CHECK(ctl_wait(&f, &mv, 3 * FL_S));
    CHECK_EQ_INT(mv.code, 0);
    CHECK_EQ_INT(srv_cluster_leader(f.cl), target);
    /* A transfer to a member that is not a voter is refused with etcd's text. */
    struct ctl bad = {0};
    srv_cluster_move_leader(f.cl, 0, 9, ctl_done, &bad);
    CHECK(ctl_wait(&f, &bad, FL_S));
    CHECK_EQ_STR(bad.text, "etcdserver: bad leader transferee");
    CHECK_EQ_INT(write_keys(&f, target, 5, 5), 5);
    CHECK(srv_cluster_safety_violation(f.cl) == NULL);
    teardown(&f);
}

static void test_one_conf_change_at_a_time(void)
{
    struct fixture f;
    int l = setup_default(&f, 33);
    sim_run_for(f.w, 5 * FL_S); /* the strict reconfiguration check's HealthInterval */
    l = wait_leader(&f, 3 * FL_S);
    /* Cut the leader from its followers so its configuration entry cannot commit. */
    int lp = srv_cluster_node_proc(f.cl, l), others[2], n = 0;
    for (int i = 1; i <= 3; i++)
        if (i != l)
            others[n++] = srv_cluster_node_proc(f.cl, i);
    net_partition(f.w, &lp, 1, others, 2, false);
    struct ctl a1 = {0}, a2 = {0};
    srv_cluster_member_add(f.cl, l, false, ctl_done, &a1);
    srv_cluster_member_add(f.cl, l, false, ctl_done, &a2);
    CHECK(ctl_wait(&f, &a2, 10 * FL_S));
    CHECK_EQ_STR(a2.text, "etcdserver: request timed out");
    CHECK(ctl_wait(&f, &a1, 10 * FL_S));
    CHECK(a1.code != 0); /* the first never committed either */
    net_heal(f.w);
    sim_run_for(f.w, 3 * FL_S);
    int l2 = wait_leader(&f, 5 * FL_S);
    CHECK(l2 > 0);
    int voters[8];
    CHECK_EQ_INT(srv_cluster_voters(f.cl, voters, 8), 3); /* rolled back */
    CHECK(count_events("conf_change", l) >= 2);           /* appended, then rolled back */
    CHECK(srv_cluster_safety_violation(f.cl) == NULL);
    teardown(&f);
}

static uint64_t term_after_rejoin(bool prevote)
{
    struct fixture f;
    struct srv_config cfg;
    srv_config_default(&cfg);
    cfg.prevote = prevote;
    int l = setup_leader(&f, 34, &cfg);
    struct srv_member_status st;
    srv_cluster_status(f.cl, l, &st);
    uint64_t term0 = st.raft_term;
    int lone = l == 1 ? 2 : 1;
    net_isolate(f.w, srv_cluster_node_proc(f.cl, lone));
    sim_run_for(f.w, 10 * FL_S);
    net_heal(f.w);
    sim_run_for(f.w, 5 * FL_S);
    int l2 = wait_leader(&f, 5 * FL_S);
    srv_cluster_status(f.cl, l2, &st);
    CHECK(srv_cluster_safety_violation(f.cl) == NULL);
    teardown(&f);
    return st.raft_term - term0;
}

int main(void)
{
    fl_log_level = FL_LOG_ERROR;
    FL_TEST(test_remove_leader);
    FL_TEST(test_move_leader);
    FL_TEST(test_one_conf_change_at_a_time);
    CHECK_EQ_INT(term_after_rejoin(true), 0);
    CHECK(term_after_rejoin(false) > 0);
    return fl_test_end();
}
