/* Unit tests of nodes/raft elections, driven step by step on an in-test cluster:
 * election from a fresh cluster, the election restriction (a staler log is refused,
 * and the bug switch that breaks it), pre-vote keeping a rejoining node from
 * disrupting the leader (and the disruption without it), check-quorum step-down,
 * the check-quorum leader lease, and restart from disk. */
#include "raft/tcluster.h"

static int leaders_at_term(struct tc *c, uint64_t term)
{
    int k = 0;
    for (int i = 1; i <= c->n; i++)
        if (raft_role(tc_r(c, (uint64_t)i)) == RAFT_LEADER &&
            raft_term(tc_r(c, (uint64_t)i)) == term)
            k++;
    return k;
}

static void test_fresh_election(void)
{
    struct tc c;
    tc_init(&c, 3, 3, 42, true);
    for (int i = 1; i <= 3; i++) {
        CHECK_EQ_INT(raft_commit_index(tc_r(&c, (uint64_t)i)), 3);
        CHECK_EQ_INT(raft_conf(tc_r(&c, (uint64_t)i))->voters_count, 3);
        CHECK_EQ_INT(tc_node(&c, (uint64_t)i)->applied_count, 3); /* bootstrap conf entries */
    }
    /* Within two election timeouts (20 ticks) exactly one leader. */
    int ticks = 0;
    while (tc_leader(&c) == 0 && ticks < 20) {
        tc_tick_all(&c, 1);
        ticks++;
    }
    uint64_t lead = tc_leader(&c);
    CHECK(lead != 0);
    CHECK(ticks <= 20);
    uint64_t term = raft_term(tc_r(&c, lead));
    CHECK_EQ_INT(leaders_at_term(&c, term), 1);
    CHECK_EQ_INT(term, 2);
    tc_tick_all(&c, 2);
    for (int i = 1; i <= 3; i++) {
        CHECK_EQ_INT(raft_leader(tc_r(&c, (uint64_t)i)), lead);
        CHECK_EQ_INT(raft_commit_index(tc_r(&c, (uint64_t)i)), 4); /* leader's empty entry */
    }
    CHECK(tc_node(&c, lead)->events[RAFT_EV_LEADER] == 1);
    CHECK(tc_node(&c, lead)->events[RAFT_EV_PREVOTE] >= 1);
    CHECK(tc_node(&c, lead)->events[RAFT_EV_CAMPAIGN] >= 1);
    /* Heartbeats keep the leader: many ticks later, same leader and term. */
    tc_tick_all(&c, 100);
    CHECK_EQ_INT(tc_leader(&c), lead);
    CHECK_EQ_INT(raft_term(tc_r(&c, lead)), term);
    CHECK(tc_applied_agree(&c));
    tc_close(&c);
}

static void no_check_quorum(struct raft_config *cfg)
{
    cfg->check_quorum = false;
}

/* Node 3 misses the last writes; with the leader down it campaigns and node 2 refuses
 * it (last term equal, last index smaller); node 2 then wins. */
static void run_stale_candidate(bool bug)
{
    struct tc c;
    tc_cfg_hook = no_check_quorum; /* no lease: this test is about the log check alone */
    tc_init(&c, 3, 3, 7, false);
    tc_cfg_hook = NULL;
    CHECK(tc_elect(&c, 1));
    c.cut[1][3] = true;
    tc_propose(&c, 1, "a");
    tc_propose(&c, 1, "b");
    tc_stabilize(&c);
    CHECK_EQ_INT(raft_last_index(tc_r(&c, 2)), 6);
    CHECK_EQ_INT(raft_last_index(tc_r(&c, 3)), 4);
    c.cut[1][3] = false;
    tc_node(&c, 1)->down = true;
    fl_bug_set(FL_BUG_RAFT_VOTE_IGNORES_LOG, bug);
    raft_campaign(tc_r(&c, 3));
    tc_stabilize(&c);
    fl_bug_set(FL_BUG_RAFT_VOTE_IGNORES_LOG, false);
    if (!bug) {
        CHECK(raft_role(tc_r(&c, 3)) != RAFT_LEADER);
        CHECK(tc_node(&c, 2)->events[RAFT_EV_VOTE_REJECTED] >= 1);
        CHECK(strstr(tc_node(&c, 2)->last_reject, "log not up to date") != NULL);
        CHECK(tc_elect(&c, 2));
        tc_stabilize(&c);
        CHECK_EQ_INT(raft_last_index(tc_r(&c, 3)), 7);
        CHECK_EQ_INT(raft_commit_index(tc_r(&c, 3)), 7);
    } else {
        /* The bug: node 3 wins with a log that lacks committed entries. */
        CHECK(raft_role(tc_r(&c, 3)) == RAFT_LEADER);
        CHECK(raft_last_index(tc_r(&c, 3)) < raft_commit_index(tc_r(&c, 2)) + 1);
    }
    tc_close(&c);
}

/* Node 3 is cut off for many election timeouts, then rejoins. */
static void run_rejoin(bool pre_vote, uint64_t *term_before, uint64_t *term_after,
                       uint64_t *lead_after, uint64_t *isolated_term)
{
    struct tc c;
    tc_init_led(&c, 3, 3, 11, pre_vote);
    tc_tick_all(&c, 3);
    *term_before = raft_term(tc_r(&c, 1));
    for (int i = 1; i <= 3; i++) {
        c.cut[3][i] = true;
        c.cut[i][3] = true;
    }
    tc_tick_all(&c, 100); /* ten election timeouts */
    *isolated_term = raft_term(tc_r(&c, 3));
    CHECK_EQ_INT(tc_leader(&c), 1);
    for (int i = 1; i <= 3; i++)
        c.cut[3][i] = c.cut[i][3] = false;
    tc_tick_all(&c, 30);
    *term_after = raft_term(tc_r(&c, 1));
    *lead_after = tc_leader(&c);
    CHECK(*lead_after != 0);
    CHECK(tc_applied_agree(&c));
    tc_close(&c);
}

static void test_prevote_rejoin(void)
{
    uint64_t before, after, lead, iso;
    run_rejoin(true, &before, &after, &lead, &iso);
    CHECK_EQ_INT(iso, before); /* pre-votes fail, the term never moves */
    CHECK_EQ_INT(after, before);
    CHECK_EQ_INT(lead, 1);
    run_rejoin(false, &before, &after, &lead, &iso);
    CHECK(iso > before + 5); /* it campaigned again and again */
    CHECK(after > before);   /* the rejoin disrupted the leader */
}

/* An isolated node's pre-vote rounds go unanswered; like etcd's raft (becomePreCandidate
 * does not call reset, so resetRandomizedElectionTimeout is not called) it keeps one
 * randomised timeout across them: the rounds come at one fixed interval. A rejected
 * pre-vote makes it a follower again, which draws a new timeout. */
static void test_prevote_timeout_kept(void)
{
    struct tc c;
    tc_init(&c, 3, 3, 11, true);
    CHECK(tc_elect(&c, 1));
    tc_tick_all(&c, 3);
    for (int i = 1; i <= 3; i++)
        c.cut[3][i] = c.cut[i][3] = true;
    struct tc_node *nd = tc_node(&c, 3);
    int last = -1, interval = -1, rounds = 0, same = 0;
    for (int t = 0; t < 400; t++) {
        size_t before = nd->events[RAFT_EV_PREVOTE];
        tc_tick_all(&c, 1);
        if (nd->events[RAFT_EV_PREVOTE] == before)
            continue;
        rounds++;
        if (last >= 0 && interval >= 0 && t - last == interval)
            same++;
        if (last >= 0)
            interval = t - last;
        last = t;
    }
    CHECK(rounds >= 20);
    CHECK(interval >= 10 && interval < 20); /* [election_ticks, 2 * election_ticks) */
    CHECK_EQ_INT(same, rounds - 2);         /* every interval equals the first */
    CHECK_EQ_INT(raft_role(tc_r(&c, 3)), RAFT_PRE_CANDIDATE);
    CHECK_EQ_INT(raft_leader(tc_r(&c, 1)), 1);
    tc_close(&c);
}

static void test_check_quorum(void)
{
    struct tc c;
    tc_init_led(&c, 3, 3, 5, true);
    for (int i = 2; i <= 3; i++)
        c.cut[1][i] = c.cut[i][1] = true;
    /* Followers' elections are expected; tick only the leader. */
    for (int k = 0; k < 25 && raft_role(tc_r(&c, 1)) == RAFT_LEADER; k++) {
        tc_tick(&c, 1, 1);
        tc_stabilize(&c);
    }
    CHECK(raft_role(tc_r(&c, 1)) == RAFT_FOLLOWER);
    CHECK(tc_node(&c, 1)->events[RAFT_EV_STEP_DOWN] == 1);
    tc_close(&c);
}

/* A follower that heard from its leader within the election timeout ignores vote
 * requests (check-quorum lease); with pre-vote on a node cannot even start. */
static void test_lease(void)
{
    struct tc c;
    tc_init_led(&c, 3, 3, 9, true);
    uint64_t term = raft_term(tc_r(&c, 1));
    raft_campaign(tc_r(&c, 2));
    tc_stabilize(&c);
    CHECK_EQ_INT(tc_leader(&c), 1);
    CHECK_EQ_INT(raft_term(tc_r(&c, 1)), term);
    CHECK_EQ_INT(raft_term(tc_r(&c, 2)), term);
    CHECK(tc_node(&c, 3)->events[RAFT_EV_VOTE_REJECTED] >= 1);
    tc_close(&c);
}

static void test_restart(void)
{
    struct tc c;
    tc_init_led(&c, 3, 3, 3, true);
    tc_propose_n(&c, 1, 20, "v");
    tc_tick_all(&c, 2);
    uint64_t commit = raft_commit_index(tc_r(&c, 2));
    uint64_t term = raft_term(tc_r(&c, 2));
    tc_restart(&c, 2);
    CHECK_EQ_INT(raft_term(tc_r(&c, 2)), term);
    CHECK_EQ_INT(raft_last_index(tc_r(&c, 2)), commit);
    CHECK_EQ_INT(raft_commit_index(tc_r(&c, 2)), commit);
    tc_process_all(&c); /* re-applies from the start */
    CHECK_EQ_INT(tc_last_applied(&c, 2), commit);
    tc_tick_all(&c, 3);
    tc_propose(&c, 1, "w");
    tc_stabilize(&c);
    tc_tick_all(&c, 2);
    CHECK_EQ_INT(tc_last_applied(&c, 2), commit + 1);
    CHECK(tc_applied_agree(&c));
    tc_close(&c);
}

/* ticks_to_deadline: ticking that many times with nothing else happening changes
 * nothing before the last tick. */
static void test_deadline(void)
{
    struct tc c;
    tc_init(&c, 3, 3, 21, true);
    uint32_t d = raft_ticks_to_deadline(tc_r(&c, 2));
    CHECK(d >= 10 && d < 20);
    tc_tick(&c, 2, (int)d - 1);
    CHECK(!raft_has_ready(tc_r(&c, 2)) ||
          raft_role(tc_r(&c, 2)) == RAFT_FOLLOWER); /* nothing yet */
    CHECK_EQ_INT(tc_node(&c, 2)->events[RAFT_EV_PREVOTE], 0);
    tc_tick(&c, 2, 1);
    tc_process_all(&c);
    CHECK_EQ_INT(tc_node(&c, 2)->events[RAFT_EV_PREVOTE], 1);
    tc_close(&c);
}

/* A one-member cluster elects itself at once and commits alone. */
static void test_single_node(void)
{
    struct tc c;
    tc_init(&c, 1, 1, 17, true);
    CHECK_EQ_INT(raft_campaign(tc_r(&c, 1)), FL_OK);
    CHECK(raft_role(tc_r(&c, 1)) == RAFT_LEADER);
    CHECK_EQ_INT(raft_term(tc_r(&c, 1)), 2);
    uint64_t idx = tc_propose(&c, 1, "solo");
    CHECK_EQ_INT(idx, 3);
    CHECK_EQ_INT(raft_commit_index(tc_r(&c, 1)), 3);
    CHECK_EQ_INT(raft_read_index(tc_r(&c, 1), 5), FL_OK);
    tc_stabilize(&c);
    CHECK_EQ_INT(tc_last_applied(&c, 1), 3);
    CHECK_EQ_INT(tc_node(&c, 1)->reads_count, 1);
    CHECK_EQ_INT(tc_node(&c, 1)->reads[0].index, 3);
    CHECK_EQ_INT(c.q_count, 0);
    tc_close(&c);
}

/* Followers forward proposals to the leader; without a leader they are refused. */
static void test_forwarding(void)
{
    struct tc c;
    tc_init(&c, 3, 3, 19, true);
    CHECK_EQ_INT(raft_propose(tc_r(&c, 2), "x", 1, NULL), FL_ENOENT);
    CHECK_EQ_INT(raft_read_index(tc_r(&c, 2), 1), FL_ENOENT);
    CHECK(tc_elect(&c, 1));
    CHECK(tc_node(&c, 2)->events[RAFT_EV_VOTE_GRANTED] >= 1);
    uint64_t idx = 99;
    CHECK_EQ_INT(raft_propose(tc_r(&c, 2), "fwd", 3, &idx), FL_OK);
    CHECK_EQ_INT(idx, 0);
    tc_stabilize(&c);
    tc_tick_all(&c, 1);
    uint64_t h = tc_hash("fwd", 3, RAFT_ENTRY_NORMAL);
    for (int i = 1; i <= 3; i++) {
        struct tc_node *nd = tc_node(&c, (uint64_t)i);
        CHECK(nd->applied_count > 0 && nd->applied[nd->applied_count - 1].hash == h);
    }
    CHECK(c.sent[RAFT_MSG_PROPOSE] == 1);
    tc_close(&c);
}

int main(void)
{
    FL_TEST(test_single_node);
    FL_TEST(test_forwarding);
    FL_TEST(test_fresh_election);
    run_stale_candidate(false);
    run_stale_candidate(true);
    FL_TEST(test_prevote_rejoin);
    FL_TEST(test_prevote_timeout_kept);
    FL_TEST(test_check_quorum);
    FL_TEST(test_lease);
    FL_TEST(test_restart);
    FL_TEST(test_deadline);
    return fl_test_end();
}
