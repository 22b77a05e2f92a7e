/* Unit tests of nodes/raft membership (DESIGN §3.4): a change is in force as soon as
 * it is appended (leader and follower), rolls back when a new leader truncates it,
 * one uncommitted change at a time (and the bug switch that allows more), learners
 * replicate but neither vote nor count, promotion waits for the learner to catch up,
 * removing the leader (quorum counted without it; it stays leader once the removal
 * commits, as etcd 3.4's raft does, until its server stops it; then a new election), a joiner
 * catching up by snapshot, and the strict reconfiguration helper. */
#include "raft/tcluster.h"

static void test_append_time_effect(void)
{
    struct tc c;
    tc_init_led(&c, 4, 3, 31, true);
    tc_node(&c, 4)->down = true; /* the new member is not running yet */
    uint64_t idx = 0;
    CHECK_EQ_INT(tc_conf(&c, 1, RAFT_CC_ADD_VOTER, 4, &idx), FL_OK);
    /* In force on the leader before it commits. */
    CHECK(idx > raft_commit_index(tc_r(&c, 1)));
    CHECK_EQ_INT(raft_conf(tc_r(&c, 1))->voters_count, 4);
    CHECK(raft_conf_is_voter(raft_conf(tc_r(&c, 1)), 4));
    /* On a follower as soon as it appends it (one delivery), before it commits. */
    tc_process_all(&c);
    tc_deliver(&c);
    CHECK_EQ_INT(raft_last_index(tc_r(&c, 2)), idx);
    CHECK(raft_commit_index(tc_r(&c, 2)) < idx);
    CHECK_EQ_INT(raft_conf(tc_r(&c, 2))->voters_count, 4);
    tc_process_all(&c);
    CHECK(tc_node(&c, 2)->events[RAFT_EV_CONF_CHANGE] >= 4);
    /* The new configuration's quorum is 3 of 4: with node 3 cut off, 1 and 2 alone
     * cannot commit it. */
    c.cut[1][3] = c.cut[3][1] = true;
    tc_stabilize(&c);
    CHECK(raft_commit_index(tc_r(&c, 1)) < idx);
    c.cut[1][3] = c.cut[3][1] = false;
    tc_tick_all(&c, 2);
    CHECK(raft_commit_index(tc_r(&c, 1)) >= idx);
    tc_close(&c);
}

static void test_rollback_on_truncation(void)
{
    struct tc c;
    uint64_t idx = 0;
    /* The deposed leader holds the only copy of its conf entry. */
    tc_init_led(&c, 4, 3, 32, true);
    tc_node(&c, 4)->down = true;
    for (int i = 2; i <= 3; i++)
        c.cut[1][i] = c.cut[i][1] = true;
    CHECK_EQ_INT(tc_conf(&c, 1, RAFT_CC_ADD_VOTER, 4, &idx), FL_OK);
    tc_stabilize(&c);
    CHECK_EQ_INT(raft_conf(tc_r(&c, 1))->voters_count, 4);
    /* 2 and 3 elect a new leader and write at the same index. */
    for (int k = 0;
         k < 40 && raft_role(tc_r(&c, 2)) != RAFT_LEADER && raft_role(tc_r(&c, 3)) != RAFT_LEADER;
         k++) {
        tc_tick(&c, 2, 1);
        tc_tick(&c, 3, 1);
        tc_stabilize(&c);
    }
    uint64_t nl = raft_role(tc_r(&c, 2)) == RAFT_LEADER ? 2 : 3;
    CHECK(raft_role(tc_r(&c, nl)) == RAFT_LEADER);
    tc_propose(&c, nl, "w");
    tc_stabilize(&c);
    size_t ev_before = tc_node(&c, 1)->events[RAFT_EV_CONF_CHANGE];
    for (int i = 2; i <= 3; i++)
        c.cut[1][i] = c.cut[i][1] = false;
    tc_tick_all(&c, 4);
    /* Node 1's conf entry was overwritten: back to three voters. */
    CHECK(raft_role(tc_r(&c, 1)) == RAFT_FOLLOWER);
    CHECK_EQ_INT(raft_conf(tc_r(&c, 1))->voters_count, 3);
    CHECK(!raft_conf_is_voter(raft_conf(tc_r(&c, 1)), 4));
    CHECK(tc_node(&c, 1)->events[RAFT_EV_CONF_CHANGE] > ev_before);
    CHECK(raft_entry_term(tc_r(&c, 1), idx) == raft_entry_term(tc_r(&c, nl), idx));
    CHECK(tc_applied_agree(&c));
    tc_close(&c);
}

static void run_one_at_a_time(bool bug)
{
    struct tc c;
    tc_init_led(&c, 5, 3, 33, true);
    tc_node(&c, 4)->down = true;
    tc_node(&c, 5)->down = true;
    CHECK_EQ_INT(tc_conf(&c, 1, RAFT_CC_ADD_LEARNER, 4, NULL), FL_OK);
    fl_bug_set(FL_BUG_RAFT_MULTIPLE_CONF_CHANGES, bug);
    int rc = tc_conf(&c, 1, RAFT_CC_ADD_VOTER, 5, NULL);
    fl_bug_set(FL_BUG_RAFT_MULTIPLE_CONF_CHANGES, false);
    if (bug) {
        CHECK_EQ_INT(rc, FL_OK);
        CHECK_EQ_INT(raft_conf(tc_r(&c, 1))->voters_count, 4);
    } else {
        CHECK_EQ_INT(rc, FL_EBUSY);
        struct raft_status st;
        raft_status_get(tc_r(&c, 1), &st);
        CHECK(st.pending_conf_index > st.commit);
        tc_stabilize(&c);
        /* Once the first commits, the next is accepted. */
        CHECK_EQ_INT(tc_conf(&c, 1, RAFT_CC_ADD_VOTER, 5, NULL), FL_OK);
        /* A change that does not fit is refused. */
        tc_stabilize(&c);
        CHECK_EQ_INT(tc_conf(&c, 1, RAFT_CC_ADD_VOTER, 2, NULL), FL_EEXIST);
        CHECK_EQ_INT(tc_conf(&c, 1, RAFT_CC_PROMOTE, 2, NULL), FL_ENOENT);
        CHECK_EQ_INT(tc_conf(&c, 2, RAFT_CC_REMOVE, 3, NULL), FL_ENOENT); /* not leader */
    }
    tc_close(&c);
}

static void test_learner(void)
{
    struct tc c;
    tc_init_led(&c, 4, 3, 34, true);
    c.cut[1][4] = c.cut[4][1] = true;
    CHECK_EQ_INT(tc_conf(&c, 1, RAFT_CC_ADD_LEARNER, 4, NULL), FL_OK);
    CHECK_EQ_INT(tc_conf(&c, 1, RAFT_CC_ADD_LEARNER, 3, NULL), FL_EBUSY);
    tc_stabilize(&c);
    /* At most one learner. */
    struct raft_conf_state cs = *raft_conf(tc_r(&c, 1));
    struct raft_conf_change cc = {RAFT_CC_ADD_LEARNER, 9, NULL, 0};
    CHECK_EQ_INT(raft_conf_apply(&cs, &cc), FL_EFULL);
    tc_propose_n(&c, 1, 50, "data");
    CHECK(!raft_learner_in_sync(tc_r(&c, 1), 4)); /* behind: promotion must wait */
    c.cut[1][4] = c.cut[4][1] = false;
    tc_tick_all(&c, 3);
    CHECK_EQ_INT(raft_last_index(tc_r(&c, 4)), raft_last_index(tc_r(&c, 1)));
    CHECK(raft_learner_in_sync(tc_r(&c, 1), 4));
    CHECK(!raft_learner_in_sync(tc_r(&c, 1), 2)); /* not a learner */
    struct raft_progress p;
    CHECK_EQ_INT(raft_progress_get(tc_r(&c, 1), 4, &p), FL_OK);
    CHECK(p.learner);
    CHECK_EQ_INT(p.match, raft_last_index(tc_r(&c, 1)));
    /* The learner does not count: with 2 and 3 cut off nothing commits although the
     * learner has everything. */
    for (int i = 2; i <= 3; i++)
        c.cut[1][i] = c.cut[i][1] = true;
    uint64_t commit = raft_commit_index(tc_r(&c, 1));
    tc_propose(&c, 1, "x");
    tc_stabilize(&c);
    CHECK_EQ_INT(raft_last_index(tc_r(&c, 4)), commit + 1);
    CHECK_EQ_INT(raft_commit_index(tc_r(&c, 1)), commit);
    for (int i = 2; i <= 3; i++)
        c.cut[1][i] = c.cut[i][1] = false;
    tc_tick_all(&c, 2);
    /* A learner never campaigns. */
    tc_tick(&c, 4, 100);
    tc_process_all(&c);
    CHECK_EQ_INT(tc_node(&c, 4)->events[RAFT_EV_PREVOTE] + tc_node(&c, 4)->events[RAFT_EV_CAMPAIGN],
                 0);
    CHECK_EQ_INT(raft_campaign(tc_r(&c, 4)), FL_EINVAL);
    tc_drop_queue(&c);
    /* Promotion. */
    uint64_t idx = 0;
    CHECK_EQ_INT(tc_conf(&c, 1, RAFT_CC_PROMOTE, 4, &idx), FL_OK);
    tc_stabilize(&c);
    tc_tick_all(&c, 2);
    CHECK_EQ_INT(raft_conf(tc_r(&c, 4))->voters_count, 4);
    CHECK_EQ_INT(raft_conf(tc_r(&c, 4))->learners_count, 0);
    CHECK(raft_commit_index(tc_r(&c, 4)) >= idx);
    CHECK(tc_applied_agree(&c));
    tc_close(&c);
}

static size_t msgs_from(struct tc *c, uint64_t id)
{
    size_t n = 0;
    for (size_t i = 0; i < c->q_count; i++)
        n += c->q[i].m.from == id;
    return n;
}

static void test_remove_leader_stays_leader_as_etcd34(void)
{
    struct tc c;
    tc_init_led(&c, 4, 4, 35, true);
    tc_stabilize(&c);
    /* Node 4 does not receive appends: the removal must not commit on 1, 2, 3 alone
     * (quorum counted without the leader: 3 of the other 3). */
    c.drop_types[4] = 1u << RAFT_MSG_APPEND;
    uint64_t idx = 0;
    CHECK_EQ_INT(tc_conf(&c, 1, RAFT_CC_REMOVE, 1, &idx), FL_OK);
    CHECK(!raft_conf_is_voter(raft_conf(tc_r(&c, 1)), 1));
    CHECK(raft_role(tc_r(&c, 1)) == RAFT_LEADER);
    /* A write after the removal entry, before it commits: replicated the same way. */
    uint64_t widx = tc_propose(&c, 1, "late write");
    CHECK_EQ_INT(widx, idx + 1);
    tc_stabilize(&c);
    CHECK_EQ_INT(raft_last_index(tc_r(&c, 2)), widx);
    CHECK_EQ_INT(raft_last_index(tc_r(&c, 3)), widx);
    CHECK(raft_commit_index(tc_r(&c, 1)) < idx);
    CHECK(raft_role(tc_r(&c, 1)) == RAFT_LEADER);
    c.drop_types[4] = 0;
    tc_tick(&c, 1, 1);
    tc_stabilize(&c);
    /* Committed once all three others have it. etcd 3.4's raft does not step a removed
     * leader down (raft.go switchToConfig: "This node is leader and was removed ...
     * TODO(tbg): step down", it returns as leader): it stays leader of its term, keeps
     * sending heartbeats to the others, which keep following it, and drops new
     * proposals, local or forwarded (stepLeader MsgProp: ErrProposalDropped). */
    CHECK(raft_commit_index(tc_r(&c, 1)) >= widx);
    CHECK(raft_commit_index(tc_r(&c, 2)) >= widx);
    CHECK(raft_role(tc_r(&c, 1)) == RAFT_LEADER);
    CHECK_EQ_INT(tc_node(&c, 1)->events[RAFT_EV_STEP_DOWN], 0);
    uint64_t last = raft_last_index(tc_r(&c, 1)), term = raft_term(tc_r(&c, 1));
    CHECK_EQ_INT(raft_propose(tc_r(&c, 1), "dropped", 7, NULL), FL_EBUSY);
    struct raft_conf_change rm2 = {RAFT_CC_REMOVE, 2, NULL, 0};
    CHECK_EQ_INT(raft_propose_conf_change(tc_r(&c, 1), &rm2, NULL), FL_EBUSY);
    CHECK_EQ_INT(raft_propose(tc_r(&c, 2), "forwarded", 9, NULL), FL_OK);
    tc_stabilize(&c);
    CHECK_EQ_INT(raft_last_index(tc_r(&c, 1)), last);
    size_t heartbeats = 0;
    for (int k = 0; k < 30; k++) {
        for (uint64_t i = 1; i <= 4; i++)
            tc_tick(&c, i, 1);
        tc_process_all(&c);
        heartbeats += msgs_from(&c, 1);
        tc_stabilize(&c);
    }
    CHECK(heartbeats > 0);
    CHECK(raft_role(tc_r(&c, 1)) == RAFT_LEADER);
    for (uint64_t i = 2; i <= 4; i++) {
        CHECK_EQ_INT(raft_leader(tc_r(&c, i)), 1);
        CHECK_EQ_INT(raft_term(tc_r(&c, i)), term);
    }
    /* Its server stops it once it applied its removal (etcdserver applyAll:
     * stopWithDelay, "the member has been permanently removed from the cluster"). */
    tc_node(&c, 1)->down = true;
    /* The others elect a new leader and keep going. */
    for (int k = 0; k < 40 && tc_leader(&c) == 0; k++) {
        for (uint64_t i = 2; i <= 4; i++)
            tc_tick(&c, i, 1);
        tc_stabilize(&c);
    }
    uint64_t nl = tc_leader(&c);
    CHECK(nl >= 2 && nl <= 4);
    CHECK_EQ_INT(raft_conf(tc_r(&c, nl))->voters_count, 3);
    uint64_t x = tc_propose(&c, nl, "after");
    tc_stabilize(&c);
    CHECK(x > 0 && raft_commit_index(tc_r(&c, nl)) >= x);
    CHECK(tc_applied_agree(&c));
    tc_close(&c);
}

/* A member joining a cluster whose log was compacted catches up by snapshot and
 * learns the configuration from it. */
static void test_join_by_snapshot(void)
{
    struct tc c;
    tc_init_led(&c, 4, 3, 36, true);
    tc_propose_n(&c, 1, 40, "history");
    tc_tick_all(&c, 2);
    for (uint64_t i = 1; i <= 3; i++) {
        struct tc_node *nd = tc_node(&c, i);
        uint64_t a = tc_last_applied(&c, i);
        CHECK_EQ_INT(raft_compact(nd->r, a, &nd->app_state, sizeof(nd->app_state)), FL_OK);
    }
    CHECK_EQ_INT(tc_conf(&c, 1, RAFT_CC_ADD_LEARNER, 4, NULL), FL_OK);
    tc_stabilize(&c);
    tc_tick_all(&c, 3);
    CHECK_EQ_INT(tc_node(&c, 4)->events[RAFT_EV_SNAPSHOT_APPLIED], 1);
    CHECK(raft_conf_is_learner(raft_conf(tc_r(&c, 4)), 4));
    CHECK_EQ_INT(raft_last_index(tc_r(&c, 4)), raft_last_index(tc_r(&c, 1)));
    CHECK_EQ_INT(tc_node(&c, 4)->app_state, tc_node(&c, 1)->app_state);
    tc_close(&c);
}

static void test_strict_reconfig(void)
{
    struct raft_conf_state cs;
    memset(&cs, 0, sizeof(cs));
    for (uint64_t i = 1; i <= 5; i++) {
        struct raft_conf_change add = {RAFT_CC_ADD_VOTER, i, NULL, 0};
        CHECK_EQ_INT(raft_conf_apply(&cs, &add), FL_OK);
    }
    /* Node 5 is down; removals accepted until fewer started members than quorum. */
    uint64_t started[4] = {1, 2, 3, 4};
    struct raft_conf_change rm = {RAFT_CC_REMOVE, 1, NULL, 0};
    CHECK(raft_conf_change_quorum_ok(&cs, &rm, started, 4)); /* {2,3,4,5}: 3 of 3 */
    raft_conf_apply(&cs, &rm);
    rm.node_id = 2;
    CHECK(raft_conf_change_quorum_ok(&cs, &rm, started + 1, 3)); /* {3,4,5}: 2 of 2 */
    raft_conf_apply(&cs, &rm);
    rm.node_id = 3;
    CHECK(!raft_conf_change_quorum_ok(&cs, &rm, started + 2, 2)); /* {4,5}: 1 < 2 */
    /* Removing the down member itself is fine. */
    rm.node_id = 5;
    CHECK(raft_conf_change_quorum_ok(&cs, &rm, started + 2, 2));
    /* Adding a voter to {3,4,5} with only 3, 4 started: 2 < quorum(4) = 3. */
    struct raft_conf_change add = {RAFT_CC_ADD_VOTER, 9, NULL, 0};
    CHECK(!raft_conf_change_quorum_ok(&cs, &add, started + 2, 2));
    add.type = RAFT_CC_ADD_LEARNER;
    CHECK(raft_conf_change_quorum_ok(&cs, &add, started + 2, 2));
    /* One member may always add a second. */
    struct raft_conf_state one;
    memset(&one, 0, sizeof(one));
    struct raft_conf_change a1 = {RAFT_CC_ADD_VOTER, 1, NULL, 0};
    raft_conf_apply(&one, &a1);
    a1.node_id = 2;
    CHECK(raft_conf_change_quorum_ok(&one, &a1, started, 1));
    /* The last voter cannot be removed. */
    a1.type = RAFT_CC_REMOVE;
    a1.node_id = 1;
    CHECK_EQ_INT(raft_conf_apply(&one, &a1), FL_EINVAL);
}

int main(void)
{
    FL_TEST(test_append_time_effect);
    FL_TEST(test_rollback_on_truncation);
    run_one_at_a_time(false);
    run_one_at_a_time(true);
    FL_TEST(test_learner);
    FL_TEST(test_remove_leader_stays_leader_as_etcd34);
    FL_TEST(test_join_by_snapshot);
    FL_TEST(test_strict_reconfig);
    return fl_test_end();
}
