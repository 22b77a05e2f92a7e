/* Unit tests of nodes/raft log replication, driven step by step: conflict
 * resolution after a partition (a deposed leader's suffix is overwritten), the
 * Figure 8 commit rule (and FL_BUG(RAFT_COMMIT_OLD_TERM) breaking it), snapshot
 * install for a follower whose entries were compacted, ReadIndex on leader and
 * follower (and waiting for a current-term commit), leader transfer, batching and
 * flow control. */
#include "raft/tcluster.h"

static void test_conflict_resolution(void)
{
    struct tc c;
    tc_init_led(&c, 3, 3, 1, true);
    tc_propose(&c, 1, "a");
    tc_stabilize(&c);
    tc_tick_all(&c, 1);
    for (int i = 2; i <= 3; i++)
        c.cut[1][i] = c.cut[i][1] = true;
    /* The deposed leader appends three entries nobody else gets. */
    tc_propose_n(&c, 1, 3, "lost");
    uint64_t old_last = raft_last_index(tc_r(&c, 1));
    CHECK_EQ_INT(old_last, 8);
    /* The majority elects node 2 or 3 (node 1 is not ticked: it stays a stale leader).
     * Up to six election timeouts: with seed 1 both time out on the same tick twice and
     * split their votes. */
    for (int k = 0; k < 120 && tc_leader(&c) != 2 && raft_role(tc_r(&c, 3)) != RAFT_LEADER; k++) {
        tc_tick(&c, 2, 1);
        tc_tick(&c, 3, 1);
        tc_stabilize(&c);
    }
    uint64_t nl = raft_role(tc_r(&c, 2)) == RAFT_LEADER ? 2 : 3;
    CHECK(raft_role(tc_r(&c, nl)) == RAFT_LEADER);
    tc_propose(&c, nl, "kept1");
    tc_propose(&c, nl, "kept2");
    tc_stabilize(&c);
    for (int i = 2; i <= 3; i++)
        c.cut[1][i] = c.cut[i][1] = false;
    tc_tick_all(&c, 5);
    CHECK(raft_role(tc_r(&c, 1)) == RAFT_FOLLOWER);
    uint64_t last = raft_last_index(tc_r(&c, nl));
    for (int i = 1; i <= 3; i++) {
        CHECK_EQ_INT(raft_last_index(tc_r(&c, (uint64_t)i)), last);
        CHECK_EQ_INT(raft_commit_index(tc_r(&c, (uint64_t)i)), last);
        for (uint64_t k = 1; k <= last; k++)
            CHECK_EQ_INT(raft_entry_term(tc_r(&c, (uint64_t)i), k),
                         raft_entry_term(tc_r(&c, nl), k));
    }
    CHECK(tc_applied_agree(&c));
    /* "lost" was never applied anywhere. */
    uint64_t lost = tc_hash("lost", 4, RAFT_ENTRY_NORMAL);
    for (int i = 1; i <= 3; i++)
        for (size_t k = 0; k < tc_node(&c, (uint64_t)i)->applied_count; k++)
            CHECK(tc_node(&c, (uint64_t)i)->applied[k].hash != lost);
    tc_close(&c);
}

static int fig8_probes;

/* Lets node 1's first probe reach node 3 (rejected: node 3 lacks X) and then only
 * appends without term-4 entries. */
static bool only_x_to_3(const struct raft_msg *m)
{
    if (m->to == 2 || m->from == 2)
        return true; /* node 2 gets everything, Z included: Z is on 2 of 5 */
    if (m->type == RAFT_MSG_HEARTBEAT)
        return m->to == 3;
    if (m->type != RAFT_MSG_APPEND)
        return (m->type == RAFT_MSG_APPEND_RESP || m->type == RAFT_MSG_HEARTBEAT_RESP) &&
               m->from == 3;
    if (m->to != 3)
        return false;
    for (size_t i = 0; i < m->entries_count; i++)
        if (m->entries[i].term == 4)
            return fig8_probes++ == 0;
    return true;
}

static void tiny_messages(struct raft_config *cfg)
{
    cfg->max_msg_bytes = 4;
    cfg->check_quorum = false; /* elections on demand, no leader lease */
}

/* Raft paper Figure 8 with five nodes. Returns node 1's commit index after it, as
 * leader of term 4, replicated the term-2 entry X to a majority (1, 2, 3) while its
 * own term-4 entry Z reached only node 2 (not a majority). */
static uint64_t run_figure8(bool bug, uint64_t *x_index, uint64_t *final_commit)
{
    struct tc c;
    tc_cfg_hook = tiny_messages;
    tc_init(&c, 5, 5, 8, false);
    tc_cfg_hook = NULL;
    /* (a) node 1 leads term 2 and replicates X to node 2 only. */
    CHECK(tc_elect(&c, 1));
    CHECK_EQ_INT(raft_term(tc_r(&c, 1)), 2);
    for (int i = 3; i <= 5; i++)
        c.cut[1][i] = c.cut[i][1] = true;
    *x_index = tc_propose(&c, 1, "XXXXXXXXXX");
    tc_stabilize(&c);
    CHECK_EQ_INT(raft_last_index(tc_r(&c, 2)), *x_index);
    CHECK_EQ_INT(raft_commit_index(tc_r(&c, 1)), *x_index - 1);
    /* (b) node 1 crashes; node 5 wins term 3 with 3, 4 and appends Y nowhere else. */
    tc_node(&c, 1)->down = true;
    for (int i = 3; i <= 5; i++)
        c.cut[1][i] = c.cut[i][1] = false;
    for (int i = 1; i <= 5; i++)
        c.drop_types[i] = 1u << RAFT_MSG_APPEND;
    for (int k = 0; k < 3 && raft_role(tc_r(&c, 5)) != RAFT_LEADER; k++)
        tc_elect(&c, 5);
    CHECK(raft_role(tc_r(&c, 5)) == RAFT_LEADER);
    CHECK_EQ_INT(raft_term(tc_r(&c, 5)), 3);
    tc_node(&c, 5)->down = true;
    /* (c) node 1 restarts and wins term 4 (votes of 2, 3, 4); it sends X to node 3
     * but its own term-4 entry reaches nobody. */
    tc_restart(&c, 1);
    for (int k = 0; k < 3 && raft_role(tc_r(&c, 1)) != RAFT_LEADER; k++)
        tc_elect(&c, 1);
    CHECK(raft_role(tc_r(&c, 1)) == RAFT_LEADER);
    CHECK_EQ_INT(raft_term(tc_r(&c, 1)), 4);
    for (int i = 1; i <= 5; i++)
        c.drop_types[i] = 0;
    fl_bug_set(FL_BUG_RAFT_COMMIT_OLD_TERM, bug);
    fig8_probes = 0;
    tc_tick(&c, 1, 1); /* a heartbeat round restarts the probes the drops stopped */
    for (int k = 0; k < 10; k++) {
        tc_process_all(&c);
        tc_deliver_if(&c, only_x_to_3);
    }
    tc_drop_queue(&c);
    CHECK_EQ_INT(raft_last_index(tc_r(&c, 3)), *x_index);
    CHECK_EQ_INT(raft_entry_term(tc_r(&c, 3), *x_index), 2);
    uint64_t commit = raft_commit_index(tc_r(&c, 1));
    /* Once the term-4 entry replicates, everything commits the right way. */
    tc_tick_all(&c, 3);
    *final_commit = raft_commit_index(tc_r(&c, 1));
    fl_bug_set(FL_BUG_RAFT_COMMIT_OLD_TERM, false);
    CHECK(tc_applied_agree(&c));
    tc_close(&c);
    return commit;
}

static void test_figure8(void)
{
    uint64_t x, fin;
    uint64_t commit = run_figure8(false, &x, &fin);
    CHECK_EQ_INT(commit, x - 1); /* X on a majority, but of an old term: not committed */
    CHECK_EQ_INT(fin, x + 1);    /* committed with the term-4 entry */
    commit = run_figure8(true, &x, &fin);
    CHECK_EQ_INT(commit, x); /* the bug commits X by counting replicas */
}

static void test_snapshot_catch_up(void)
{
    struct tc c;
    tc_init_led(&c, 3, 3, 2, true);
    c.cut[1][3] = c.cut[3][1] = true;
    tc_propose_n(&c, 1, 30, "entry");
    uint64_t applied = tc_last_applied(&c, 1);
    CHECK_EQ_INT(applied, 34);
    struct tc_node *n1 = tc_node(&c, 1);
    CHECK_EQ_INT(raft_compact(n1->r, applied, &n1->app_state, sizeof(n1->app_state)), FL_OK);
    CHECK_EQ_INT(raft_first_index(n1->r), applied - 5 + 1); /* 5 catch-up entries kept */
    CHECK_EQ_INT(raft_compact(n1->r, applied + 1, "x", 1), FL_EINVAL);
    CHECK(raft_last_index(tc_r(&c, 3)) < raft_first_index(n1->r));
    c.cut[1][3] = c.cut[3][1] = false;
    tc_tick_all(&c, 3);
    CHECK_EQ_INT(n1->events[RAFT_EV_SNAPSHOT_SENT], 1);
    CHECK_EQ_INT(tc_node(&c, 3)->events[RAFT_EV_SNAPSHOT_APPLIED], 1);
    CHECK_EQ_INT(tc_node(&c, 3)->snap.index, applied);
    CHECK_EQ_INT(tc_node(&c, 3)->app_state, n1->app_state);
    CHECK_EQ_INT(raft_conf(tc_r(&c, 3))->voters_count, 3);
    /* Replication resumes normally after the snapshot. */
    tc_propose(&c, 1, "after");
    tc_stabilize(&c);
    tc_tick_all(&c, 2);
    CHECK_EQ_INT(tc_last_applied(&c, 3), applied + 1);
    CHECK_EQ_INT(tc_node(&c, 3)->app_state, n1->app_state);
    /* A restart of node 3 recovers from its snapshot plus log. */
    tc_restart(&c, 3);
    tc_process_all(&c);
    CHECK_EQ_INT(tc_last_applied(&c, 3), applied + 1);
    CHECK_EQ_INT(tc_node(&c, 3)->app_state, n1->app_state);
    tc_close(&c);
}

static void test_read_index(void)
{
    struct tc c;
    tc_init_led(&c, 3, 3, 4, true);
    tc_propose(&c, 1, "a");
    tc_stabilize(&c);
    CHECK_EQ_INT(raft_read_index(tc_r(&c, 1), 77), FL_OK);
    tc_process_all(&c);
    CHECK_EQ_INT(tc_node(&c, 1)->reads_count, 0); /* needs a heartbeat round */
    tc_stabilize(&c);
    CHECK_EQ_INT(tc_node(&c, 1)->reads_count, 1);
    CHECK_EQ_INT(tc_node(&c, 1)->reads[0].context, 77);
    CHECK_EQ_INT(tc_node(&c, 1)->reads[0].index, raft_commit_index(tc_r(&c, 1)));
    /* From a follower: forwarded, answered with the leader's commit index. */
    CHECK_EQ_INT(raft_read_index(tc_r(&c, 2), 78), FL_OK);
    tc_stabilize(&c);
    CHECK_EQ_INT(tc_node(&c, 2)->reads_count, 1);
    CHECK_EQ_INT(tc_node(&c, 2)->reads[0].context, 78);
    CHECK_EQ_INT(tc_node(&c, 2)->reads[0].index, raft_commit_index(tc_r(&c, 1)));
    /* Many reads between two readies share one heartbeat round. */
    size_t hb_before = c.sent[RAFT_MSG_HEARTBEAT];
    for (uint64_t k = 0; k < 50; k++)
        CHECK_EQ_INT(raft_read_index(tc_r(&c, 1), 1000 + k), FL_OK);
    tc_stabilize(&c);
    CHECK_EQ_INT(c.sent[RAFT_MSG_HEARTBEAT] - hb_before, 2);
    CHECK_EQ_INT(tc_node(&c, 1)->reads_count, 51);
    CHECK_EQ_INT(tc_node(&c, 1)->reads[50].context, 1049);
    tc_node(&c, 1)->reads_count = 1;
    /* A leader cut off from everyone cannot confirm: no read state. */
    c.cut[1][2] = c.cut[1][3] = true;
    raft_read_index(tc_r(&c, 1), 79);
    tc_stabilize(&c);
    CHECK_EQ_INT(tc_node(&c, 1)->reads_count, 1);
    c.cut[1][2] = c.cut[1][3] = false;
    tc_tick_all(&c, 1); /* the next heartbeat carries the newest read round */
    CHECK_EQ_INT(tc_node(&c, 1)->reads_count, 2);
    tc_close(&c);

    /* A new leader answers only after committing an entry of its own term. */
    tc_init(&c, 3, 3, 4, true);
    for (int i = 2; i <= 3; i++)
        c.drop_types[i] = 1u << RAFT_MSG_APPEND;
    CHECK(tc_elect(&c, 1));
    raft_read_index(tc_r(&c, 1), 5);
    tc_stabilize(&c);
    CHECK_EQ_INT(tc_node(&c, 1)->reads_count, 0);
    for (int i = 2; i <= 3; i++)
        c.drop_types[i] = 0;
    tc_tick_all(&c, 3);
    CHECK_EQ_INT(tc_node(&c, 1)->reads_count, 1);
    CHECK_EQ_INT(tc_node(&c, 1)->reads[0].index, 4);
    tc_close(&c);
}

static void test_transfer(void)
{
    struct tc c;
    tc_init_led(&c, 3, 3, 6, true);
    c.cut[1][3] = true;
    tc_propose_n(&c, 1, 5, "t");
    c.cut[1][3] = false;
    CHECK_EQ_INT(raft_transfer_leader(tc_r(&c, 1), 3), FL_OK);
    CHECK_EQ_INT(raft_propose(tc_r(&c, 1), "x", 1, NULL), FL_EBUSY);
    tc_stabilize(&c);
    tc_tick_all(&c, 2);
    CHECK_EQ_INT(tc_leader(&c), 3);
    CHECK(raft_role(tc_r(&c, 1)) == RAFT_FOLLOWER);
    CHECK_EQ_INT(raft_transfer_leader(tc_r(&c, 1), 2), FL_ENOENT);
    CHECK_EQ_INT(raft_transfer_leader(tc_r(&c, 3), 9), FL_EINVAL);
    CHECK(tc_applied_agree(&c));
    tc_close(&c);
}

static void small_batches(struct raft_config *cfg)
{
    cfg->max_msg_bytes = 64;
    cfg->max_inflight = 4;
}

/* Many proposals, small message size and in-flight limit: everything commits in
 * order, and no append carries more than the limit (beyond its first entry). */
static void test_batching(void)
{
    struct tc c;
    tc_cfg_hook = small_batches;
    tc_init(&c, 3, 3, 12, true);
    tc_cfg_hook = NULL;
    CHECK(tc_elect(&c, 1));
    char buf[32];
    for (int i = 0; i < 500; i++) {
        snprintf(buf, sizeof(buf), "value-%05d-xxxxxxxxxxxx", i);
        tc_propose(&c, 1, buf);
    }
    size_t before = c.sent[RAFT_MSG_APPEND];
    tc_stabilize(&c);
    tc_tick_all(&c, 2);
    CHECK(c.sent[RAFT_MSG_APPEND] - before >= 2 * 500 * 24 / 64);
    for (int i = 1; i <= 3; i++)
        CHECK_EQ_INT(tc_last_applied(&c, (uint64_t)i), 504);
    CHECK(tc_applied_agree(&c));
    tc_close(&c);
}

/* Lost messages (a dropped connection) are recovered: by report_unreachable, and
 * without any report by the stall timer. */
static void test_lost_messages(void)
{
    struct tc c;
    tc_init_led(&c, 3, 3, 13, true);
    tc_stabilize(&c);
    tc_propose(&c, 1, "a");
    tc_process_all(&c);
    tc_drop_queue(&c); /* the appends are lost */
    tc_propose(&c, 1, "b");
    tc_process_all(&c);
    tc_drop_queue(&c);
    tc_tick_all(&c, 25);
    for (int i = 1; i <= 3; i++)
        CHECK_EQ_INT(tc_last_applied(&c, (uint64_t)i), 6);
    tc_propose(&c, 1, "c");
    tc_process_all(&c);
    tc_drop_queue(&c);
    raft_report_unreachable(tc_r(&c, 1), 2);
    raft_report_unreachable(tc_r(&c, 1), 3);
    tc_tick_all(&c, 2);
    for (int i = 1; i <= 3; i++)
        CHECK_EQ_INT(tc_last_applied(&c, (uint64_t)i), 7);
    tc_close(&c);
}

/* A follower that loses entries it acknowledged (what acks before fsync lead to) is
 * repaired by the leader instead of being probed from its old match forever. */
static void test_follower_lost_acked_entries(void)
{
    struct tc c;
    tc_init_led(&c, 3, 3, 14, true);
    tc_propose_n(&c, 1, 20, "acked");
    tc_tick_all(&c, 1);
    struct raft_progress p;
    CHECK_EQ_INT(raft_progress_get(tc_r(&c, 1), 3, &p), FL_OK);
    CHECK_EQ_INT(p.match, 24);
    /* Node 3's disk loses its last 15 entries (never synced), then it restarts. */
    tc_disk_truncate(tc_node(&c, 3), 10);
    tc_restart(&c, 3);
    CHECK_EQ_INT(raft_last_index(tc_r(&c, 3)), 9);
    CHECK_EQ_INT(raft_commit_index(tc_r(&c, 3)), 9); /* clamped to what is on disk */
    CHECK_EQ_INT(tc_node(&c, 1)->notes[RAFT_EV_FOLLOWER_LOST], 0);
    size_t before = c.sent[RAFT_MSG_APPEND];
    tc_propose(&c, 1, "next");
    tc_stabilize(&c);
    tc_tick_all(&c, 3);
    CHECK_EQ_INT(raft_last_index(tc_r(&c, 3)), 25);
    CHECK_EQ_INT(raft_commit_index(tc_r(&c, 3)), 25);
    CHECK(c.sent[RAFT_MSG_APPEND] - before < 20); /* no storm of retries */
    /* The leader said so through its ready's notes (the core logs nothing itself),
     * and never as an event. */
    CHECK(tc_node(&c, 1)->notes[RAFT_EV_FOLLOWER_LOST] >= 1);
    CHECK_EQ_INT(tc_node(&c, 1)->events[RAFT_EV_FOLLOWER_LOST], 0);
    CHECK(tc_applied_agree(&c));
    tc_close(&c);
}

int main(void)
{
    FL_TEST(test_follower_lost_acked_entries);
    FL_TEST(test_conflict_resolution);
    FL_TEST(test_figure8);
    FL_TEST(test_snapshot_catch_up);
    FL_TEST(test_read_index);
    FL_TEST(test_transfer);
    FL_TEST(test_batching);
    FL_TEST(test_lost_messages);
    return fl_test_end();
}
