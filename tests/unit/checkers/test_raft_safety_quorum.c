/* Unit tests of raft_safety's commit_quorum property (raft_safety_leader_commit): a
 * leader's commit is held by a quorum of the voters of its configuration. A correct
 * leader (four members, one removed, an add) passes; a leader that counts itself where
 * it is no longer a voter (camunda#15231, raft.removed_leader_counts_self), or an
 * acknowledgement of an entry the follower does not hold, is reported; members whose
 * view cannot tell, and commits fed while the checker does not know the member leads
 * that term, are never reported. And of commit_electable: no member without a committed
 * entry can be elected by a quorum of the voters at the commit (Figure 8). */
#include "rs_fixture.h"

/* Members 1..4 bootstrap: conf entries 1..4 (term 1), committed; 1 leads term 2. */
static struct raft_safety *boot4(void)
{
    struct raft_safety *c = rs_boot(4, false);
    CHECK(raft_safety_leader(c, 1, 2));
    return c;
}

/* node appends (index, term 2) with data h(index); a conf entry when type >= 0. */
static void put(struct raft_safety *c, uint64_t node, uint64_t index, int type, uint64_t member)
{
    CHECK(raft_safety_append(c, node, index, 2, h(index)));
    if (type >= 0)
        CHECK(raft_safety_conf_entry(c, node, index, type, member));
    raft_safety_synced(c, node);
}

static void expect_quorum_violation(struct raft_safety *c)
{
    CHECK(raft_safety_failed(c));
    CHECK_EQ_STR(raft_safety_violation_property(c), "commit_quorum");
    CHECK(strstr(raft_safety_violation_json(c), "\"property\":\"commit_quorum\"") != NULL);
    raft_safety_free(c);
}

static void test_correct_leader(void)
{
    struct raft_safety *c = boot4();
    /* index 5 on 1, 2, 3: a quorum of four */
    for (uint64_t n = 1; n <= 3; n++)
        put(c, n, 5, -1, 0);
    CHECK(raft_safety_commit(c, 1, 5));
    CHECK(raft_safety_leader_commit(c, 1, 2, 5));
    /* 1 removes 4 (index 6): {1, 2, 3} in force; 1 and 2 hold it: a quorum of three */
    put(c, 1, 6, RAFT_SAFETY_CC_REMOVE, 4);
    put(c, 2, 6, RAFT_SAFETY_CC_REMOVE, 4);
    CHECK(raft_safety_commit(c, 1, 6));
    CHECK(raft_safety_leader_commit(c, 1, 2, 6));
    /* 1 adds 5 (index 7): four voters again, 1, 2 and the unanchored joiner 5 (it
     * installed a snapshot whose chain the checker never saw: counts as holding) */
    put(c, 1, 7, RAFT_SAFETY_CC_ADD_VOTER, 5);
    put(c, 2, 7, RAFT_SAFETY_CC_ADD_VOTER, 5);
    CHECK(raft_safety_restart(c, 5, 0));
    CHECK(raft_safety_snapshot(c, 5, 7, 2));
    CHECK(raft_safety_commit(c, 1, 7));
    CHECK(raft_safety_leader_commit(c, 1, 2, 7));
    CHECK(!raft_safety_failed(c));
    raft_safety_free(c);
}

static void test_removed_leader_counts_self(void)
{
    struct raft_safety *c = boot4();
    /* 1 removes itself (index 5): {2, 3, 4} in force, quorum 2. Only 2 holds it. */
    put(c, 1, 5, RAFT_SAFETY_CC_REMOVE, 1);
    put(c, 2, 5, RAFT_SAFETY_CC_REMOVE, 1);
    CHECK(raft_safety_commit(c, 1, 5));
    CHECK(!raft_safety_leader_commit(c, 1, 2, 5));
    expect_quorum_violation(c);

    /* the same with 3 holding it too: a quorum of {2, 3, 4} without the leader */
    c = boot4();
    for (uint64_t n = 1; n <= 3; n++)
        put(c, n, 5, RAFT_SAFETY_CC_REMOVE, 1);
    CHECK(raft_safety_commit(c, 1, 5));
    CHECK(raft_safety_leader_commit(c, 1, 2, 5));
    CHECK(!raft_safety_failed(c));
    raft_safety_free(c);
}

static void test_unheld_ack(void)
{
    /* 1 counts 2 and 3, but 3 holds another entry at 5 (and 2 none): a minority */
    struct raft_safety *c = boot4();
    put(c, 1, 5, -1, 0);
    put(c, 2, 5, -1, 0);
    CHECK(raft_safety_append(c, 3, 5, 1, h(99)));
    CHECK(raft_safety_restart(c, 2, 4)); /* 2 lost it (never synced, in reality) */
    CHECK(raft_safety_commit(c, 1, 5));
    CHECK(!raft_safety_leader_commit(c, 1, 2, 5));
    expect_quorum_violation(c);
}

static void test_not_judged(void)
{
    /* the checker does not know 1 leads term 3: nothing is judged */
    struct raft_safety *c = boot4();
    put(c, 1, 5, -1, 0);
    CHECK(raft_safety_commit(c, 1, 5));
    CHECK(raft_safety_leader_commit(c, 1, 3, 5));
    /* deposed: a follower's commit is not its own count */
    CHECK(raft_safety_not_leader(c, 1));
    CHECK(raft_safety_leader_commit(c, 1, 2, 5));
    /* beyond the leader's persisted view: not judged */
    CHECK(raft_safety_leader(c, 2, 3));
    CHECK(raft_safety_leader_commit(c, 2, 3, 9));
    CHECK(!raft_safety_failed(c));
    raft_safety_free(c);
}

/* Members 1..3 bootstrap (conf entries 1..3, term 1, committed). */
static struct raft_safety *boot3(void)
{
    return rs_boot(3, false);
}

/* Raft's Figure 8 on three members: 1 led term 2 and appended X (index 4) alone; 2 led
 * term 3 and appended Y at index 4 alone; 1 leads term 4 (its entry Z at 5) and X
 * reaches 3. Returns the checker with 1 leading term 4. */
static struct raft_safety *figure8(bool z_on_3)
{
    struct raft_safety *c = boot3();
    CHECK(raft_safety_leader(c, 1, 2));
    CHECK(raft_safety_append(c, 1, 4, 2, h(40)));
    CHECK(raft_safety_not_leader(c, 1));
    CHECK(raft_safety_leader(c, 2, 3));
    CHECK(raft_safety_append(c, 2, 4, 3, h(41)));
    CHECK(raft_safety_not_leader(c, 2));
    CHECK(raft_safety_leader(c, 1, 4));
    CHECK(raft_safety_append(c, 1, 5, 4, h(50)));
    CHECK(raft_safety_append(c, 3, 4, 2, h(40)));
    if (z_on_3)
        CHECK(raft_safety_append(c, 3, 5, 4, h(50)));
    return c;
}

static void test_commit_electable(void)
{
    /* X (term 2) is on 1 and 3, a quorum, but 2, whose log ends with Y of term 3, is
     * as up-to-date as 3: with 3's vote it can be elected and overwrite X. Committing X
     * by counting its replicas (raft.commit_old_term) is caught at the commit. */
    struct raft_safety *c = figure8(false);
    CHECK(raft_safety_commit(c, 1, 4));
    CHECK(!raft_safety_leader_commit(c, 1, 4, 4));
    CHECK_EQ_STR(raft_safety_violation_property(c), "commit_electable");
    CHECK(strstr(raft_safety_violation_json(c), "\"other_node\":2") != NULL);
    raft_safety_free(c);

    /* Correct: once Z (term 4) is on 3 too, Z commits, and X with it; 2's log is
     * behind 3's now, so it cannot be elected by 3 (nor by 1). */
    c = figure8(true);
    CHECK(raft_safety_commit(c, 1, 5));
    CHECK(raft_safety_leader_commit(c, 1, 4, 5));
    CHECK(!raft_safety_failed(c));
    raft_safety_free(c);

    /* An entry of the leader's own term on 1 and 3: 2, without it, has a log behind
     * both of theirs (term 1): only its own vote. */
    c = boot3();
    CHECK(raft_safety_leader(c, 1, 2));
    CHECK(raft_safety_append(c, 1, 4, 2, h(40)));
    CHECK(raft_safety_append(c, 3, 4, 2, h(40)));
    CHECK(raft_safety_commit(c, 1, 4));
    CHECK(raft_safety_leader_commit(c, 1, 2, 4));
    CHECK(!raft_safety_failed(c));
    raft_safety_free(c);
}

/* Member 1 alone (conf entry 1, term 1, committed), leading term 2. */
static struct raft_safety *boot1(void)
{
    struct raft_safety *c = raft_safety_new();
    CHECK(raft_safety_append(c, 1, 1, 1, h(1)));
    CHECK(raft_safety_conf_entry(c, 1, 1, RAFT_SAFETY_CC_ADD_VOTER, 1));
    CHECK(raft_safety_commit(c, 1, 1));
    raft_safety_synced(c, 1);
    CHECK(raft_safety_leader(c, 1, 2));
    put(c, 1, 2, -1, 0);
    CHECK(raft_safety_commit(c, 1, 2));
    CHECK(raft_safety_leader_commit(c, 1, 2, 2));
    return c;
}

static void test_commit_before_conf_append(void)
{
    /* One ready of a member leading alone: index 3 appended and committed by its own
     * count ({1}), then the change adding 2 appended at 4 (chaos mix91 world 5002).
     * The commit was decided under {1}: no violation, although {1, 2} is in force at
     * the last index fed and only 1 holds 3. */
    struct raft_safety *c = boot1();
    put(c, 1, 3, -1, 0);
    put(c, 1, 4, RAFT_SAFETY_CC_ADD_VOTER, 2);
    CHECK(raft_safety_commit(c, 1, 3));
    CHECK(raft_safety_leader_commit(c, 1, 2, 3));
    CHECK(!raft_safety_failed(c));
    raft_safety_free(c);

    /* The change fed in an earlier ready that declared a commit: {1, 2} was in force
     * whenever the next commit was decided, so 3 held by 1 alone is a violation. */
    c = boot1();
    put(c, 1, 3, -1, 0);
    put(c, 1, 4, RAFT_SAFETY_CC_ADD_VOTER, 2);
    CHECK(raft_safety_leader_commit(c, 1, 2, 2)); /* (the ready: commit unchanged) */
    CHECK(raft_safety_commit(c, 1, 3));
    CHECK(!raft_safety_leader_commit(c, 1, 2, 3));
    expect_quorum_violation(c);
}

int main(void)
{
    FL_TEST(test_correct_leader);
    FL_TEST(test_removed_leader_counts_self);
    FL_TEST(test_unheld_ack);
    FL_TEST(test_not_judged);
    FL_TEST(test_commit_electable);
    FL_TEST(test_commit_before_conf_append);
    return fl_test_end();
}
