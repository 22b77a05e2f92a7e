/* Unit tests of the per-member properties of checkers/raft_safety (raft_safety_votes.c
 * and the commit/apply order checks): a correct life of three members (bootstrap,
 * elections, restarts, a membership change and its rollback, a snapshot) passes, and
 * each property is broken by fabricated observations of one member and reported under
 * its own name. */
#include "rs_fixture.h"

static const uint64_t V3[] = {1, 2, 3};
static const struct raft_safety_conf CONF3 = {V3, 3, NULL, 0};

/* Members 1..3 bootstrap: conf entries 1..3 (term 1), committed and applied. */
static struct raft_safety *boot3(void)
{
    return rs_boot(3, true);
}

/* Node cand campaigns in term, voters grant it their votes; it leads. */
static void elect(struct raft_safety *c, uint64_t cand, uint64_t term, const uint64_t *voters,
                  size_t n)
{
    CHECK(raft_safety_sent(c, cand, term, cand)); /* its vote requests */
    for (size_t i = 0; i < n; i++)
        CHECK(raft_safety_sent(c, voters[i], term, cand));
    CHECK(raft_safety_leader(c, cand, term));
    CHECK(raft_safety_elected(c, cand, term, &CONF3));
}

static void expect_property(struct raft_safety *c, const char *property)
{
    CHECK(raft_safety_failed(c));
    CHECK_EQ_STR(raft_safety_violation_property(c), property);
    char want[64];
    snprintf(want, sizeof want, "\"property\":\"%s\"", property);
    CHECK(strstr(raft_safety_violation_json(c), want) != NULL);
    raft_safety_free(c);
}

static void test_correct_life(void)
{
    struct raft_safety *c = boot3();
    elect(c, 1, 2, (const uint64_t[]){2}, 1);
    /* Leader 1 appends its no-op and a conf entry adding learner 4; 2 and 3 follow
     * (node 2 only as far as the no-op). */
    for (uint64_t n = 1; n <= 3; n++) {
        CHECK(raft_safety_append(c, n, 4, 2, h(4)));
        if (n != 2) {
            CHECK(raft_safety_append(c, n, 5, 2, h(5)));
            CHECK(raft_safety_conf_entry(c, n, 5, RAFT_SAFETY_CC_ADD_LEARNER, 4));
        }
        CHECK(raft_safety_commit(c, n, 4));
        raft_safety_synced(c, n);
        CHECK(raft_safety_apply(c, n, 4, 2, h(4)));
    }
    /* Node 3 restarts with everything it synced: term 2, its vote for 1, commit 4,
     * the learner in force (appended, not yet committed: in force all the same). */
    const uint64_t l4[] = {4};
    struct raft_safety_conf with4 = {V3, 3, l4, 1};
    struct raft_safety_boot b = {
        .term = 2, .vote = 1, .commit = 4, .last_index = 5, .applied = 0, .conf = &with4};
    CHECK(raft_safety_recovered(c, 3, &b));
    for (uint64_t i = 1; i <= 4; i++) /* it re-applies from its (empty) snapshot */
        CHECK(raft_safety_apply(c, 3, i, i <= 3 ? 1 : 2, h(i)));
    /* Leader 1 is deposed before the conf entry commits; node 2 leads term 3 and
     * overwrites index 5 on node 3: the learner is rolled back there. */
    CHECK(raft_safety_not_leader(c, 1));
    elect(c, 2, 3, (const uint64_t[]){3}, 1);
    CHECK(raft_safety_append(c, 2, 5, 3, h(50)));
    CHECK(raft_safety_append(c, 3, 5, 3, h(50)));
    CHECK(raft_safety_commit(c, 3, 5));
    raft_safety_synced(c, 3);
    b = (struct raft_safety_boot){
        .term = 3, .vote = 2, .commit = 5, .last_index = 5, .applied = 4, .conf = &CONF3};
    CHECK(raft_safety_recovered(c, 3, &b));
    CHECK(raft_safety_apply(c, 3, 5, 3, h(50)));
    /* A joiner installs a snapshot with its configuration, then restarts from it. */
    CHECK(raft_safety_snapshot_conf(c, 5, 5, 3, &CONF3));
    b = (struct raft_safety_boot){
        .term = 3, .vote = 0, .commit = 5, .last_index = 5, .applied = 5, .conf = &CONF3};
    CHECK(raft_safety_recovered(c, 5, &b));
    CHECK(!raft_safety_failed(c));
    struct fl_buf s;
    fl_buf_init(&s);
    raft_safety_summary_json(c, &s);
    CHECK(strstr(fl_buf_cstr(&s), "\"elections\":2") != NULL);
    CHECK(strstr(fl_buf_cstr(&s), "\"restarts\":3") != NULL);
    CHECK(strstr(fl_buf_cstr(&s), "\"conf_checks\":3") != NULL);
    fl_buf_close(&s);
    raft_safety_free(c);
}

static void test_term_durability(void)
{
    struct raft_safety *c = boot3();
    CHECK(raft_safety_sent(c, 2, 5, 0)); /* any message of term 5 */
    struct raft_safety_boot b = {.term = 4, .commit = 3, .last_index = 3};
    CHECK(!raft_safety_recovered(c, 2, &b));
    expect_property(c, "term_durability");
}

static void test_vote_durability(void)
{
    struct raft_safety *c = boot3();
    CHECK(raft_safety_sent(c, 2, 5, 1)); /* a granted vote for 1 */
    struct raft_safety_boot b = {.term = 5, .vote = 0, .commit = 3, .last_index = 3};
    CHECK(!raft_safety_recovered(c, 2, &b));
    expect_property(c, "vote_durability");

    c = boot3();
    CHECK(raft_safety_sent(c, 3, 7, 3)); /* its own candidacy */
    b = (struct raft_safety_boot){.term = 7, .vote = 3, .commit = 3, .last_index = 3};
    CHECK(raft_safety_recovered(c, 3, &b)); /* kept: fine */
    b.vote = 1;
    CHECK(!raft_safety_recovered(c, 3, &b));
    expect_property(c, "vote_durability");
}

static void test_double_vote(void)
{
    struct raft_safety *c = boot3();
    CHECK(raft_safety_sent(c, 2, 5, 1));
    CHECK(raft_safety_sent(c, 2, 5, 1)); /* the same vote again (a retry): fine */
    CHECK(!raft_safety_sent(c, 2, 5, 3));
    expect_property(c, "double_vote");
}

static void test_election_quorum(void)
{
    struct raft_safety *c = boot3();
    CHECK(raft_safety_sent(c, 2, 4, 3)); /* node 2 voted for 3, not for 1 */
    CHECK(raft_safety_leader(c, 1, 4));
    CHECK(!raft_safety_elected(c, 1, 4, &CONF3));
    expect_property(c, "election_quorum");
}

static void test_learner_vote(void)
{
    struct raft_safety *c = boot3();
    const uint64_t l4[] = {4};
    struct raft_safety_conf with4 = {V3, 3, l4, 1};
    CHECK(raft_safety_sent(c, 4, 6, 1)); /* the learner's vote */
    CHECK(raft_safety_leader(c, 1, 6));
    CHECK(!raft_safety_elected(c, 1, 6, &with4));
    expect_property(c, "learner_vote");
}

static void test_commit_regressed(void)
{
    struct raft_safety *c = boot3();
    CHECK(raft_safety_append(c, 1, 4, 1, h(4)));
    CHECK(raft_safety_commit(c, 1, 4));
    CHECK(!raft_safety_commit(c, 1, 3));
    expect_property(c, "commit_regressed");
}

static void test_commit_durability(void)
{
    struct raft_safety *c = boot3();
    CHECK(raft_safety_append(c, 2, 4, 1, h(4)));
    CHECK(raft_safety_append(c, 2, 5, 1, h(5)));
    CHECK(raft_safety_commit(c, 2, 5)); /* written, not yet synced: may be lost */
    struct raft_safety_boot b = {.term = 1, .commit = 3, .last_index = 5};
    CHECK(raft_safety_recovered(c, 2, &b));
    CHECK(raft_safety_commit(c, 2, 5));
    raft_safety_synced(c, 2); /* now it is durable */
    b.commit = 4;
    CHECK(!raft_safety_recovered(c, 2, &b));
    expect_property(c, "commit_durability");
}

static void test_apply_order(void)
{
    struct raft_safety *c = boot3();
    CHECK(!raft_safety_apply(c, 1, 3, 1, h(3))); /* index 3 again */
    expect_property(c, "applied_regressed");

    c = boot3();
    for (uint64_t i = 4; i <= 6; i++)
        CHECK(raft_safety_append(c, 1, i, 1, h(i)));
    CHECK(raft_safety_commit(c, 1, 6));
    CHECK(!raft_safety_apply(c, 1, 5, 1, h(5))); /* 4 skipped */
    expect_property(c, "apply_gap");

    c = boot3();
    CHECK(raft_safety_append(c, 1, 4, 1, h(4)));
    CHECK(!raft_safety_apply(c, 1, 4, 1, h(4))); /* not committed on node 1 */
    expect_property(c, "apply_uncommitted");
}

static void test_conf_after_restart(void)
{
    /* Node 2 appended the removal of 3; it restarts with 3 still a voter. */
    struct raft_safety *c = boot3();
    CHECK(raft_safety_append(c, 2, 4, 1, h(4)));
    CHECK(raft_safety_conf_entry(c, 2, 4, RAFT_SAFETY_CC_REMOVE, 3));
    struct raft_safety_boot b = {.term = 1, .commit = 3, .last_index = 4, .conf = &CONF3};
    CHECK(!raft_safety_recovered(c, 2, &b));
    expect_property(c, "conf_after_restart");

    /* A snapshot's configuration forgotten by the restart. */
    c = boot3();
    const uint64_t v2[] = {1, 2};
    struct raft_safety_conf two = {v2, 2, NULL, 0};
    CHECK(raft_safety_snapshot_conf(c, 4, 10, 2, &two));
    b = (struct raft_safety_boot){
        .term = 2, .commit = 10, .last_index = 10, .applied = 10, .conf = &CONF3};
    CHECK(!raft_safety_recovered(c, 4, &b));
    expect_property(c, "conf_after_restart");
}

/* Node 1 holds (4, term 2) and restarts with (4, term 3) on its disk instead: the
 * overwrite by leader 2 was written (and synced) but never fed, the member killed
 * before its fsync's callback ran (a pause, then a power loss). */
static struct raft_safety *overwritten_unfed(uint64_t hash4, bool *recovered)
{
    struct raft_safety *c = boot3();
    CHECK(raft_safety_append(c, 1, 4, 2, h(40)));
    raft_safety_synced(c, 1);
    CHECK(raft_safety_leader(c, 2, 3));
    for (uint64_t n = 2; n <= 3; n++) {
        CHECK(raft_safety_append(c, n, 4, 3, h(4)));
        CHECK(raft_safety_append(c, n, 5, 3, h(5)));
    }
    struct raft_safety_entry es[4];
    for (uint64_t i = 1; i <= 3; i++)
        es[i - 1] = (struct raft_safety_entry){.index = i,
                                               .term = 1,
                                               .data_hash = h(i),
                                               .conf_change = true,
                                               .conf_type = RAFT_SAFETY_CC_ADD_VOTER,
                                               .conf_member = i};
    es[3] = (struct raft_safety_entry){.index = 4, .term = 3, .data_hash = hash4};
    struct raft_safety_boot b = {.term = 3,
                                 .vote = 2,
                                 .commit = 3,
                                 .last_index = 4,
                                 .applied = 3,
                                 .conf = &CONF3,
                                 .entries = es,
                                 .n_entries = 4};
    *recovered = raft_safety_recovered(c, 1, &b);
    return c;
}

static void test_recovered_unfed_entries(void)
{
    /* The view takes the disk's entry 4, so leader 2's entry 5 continues it. */
    bool ok = false;
    struct raft_safety *c = overwritten_unfed(h(4), &ok);
    CHECK(ok);
    CHECK(raft_safety_append(c, 1, 5, 3, h(5)));
    CHECK(raft_safety_commit(c, 1, 5));
    CHECK(!raft_safety_failed(c));
    raft_safety_free(c);

    /* The unfed entries are checked like any append: (4, term 3) with other data than
     * leader 2's breaks log matching at the restart. */
    c = overwritten_unfed(h(99), &ok);
    CHECK(!ok);
    expect_property(c, "log_matching");
}

/* Node 1 was fed leader 2's snapshot at (5, term 3) over its own (4..6, term 2), but
 * the snapshot's WAL record never synced: it restarts with its old log. Entry 6 is the
 * one it fed before, not a successor of the snapshot. */
static void test_recovered_snapshot_lost(void)
{
    struct raft_safety *c = boot3();
    for (uint64_t i = 4; i <= 6; i++)
        CHECK(raft_safety_append(c, 1, i, 2, h(i)));
    raft_safety_synced(c, 1);
    CHECK(raft_safety_leader(c, 2, 3)); /* 2 and 3 commit (4..5, term 3) */
    for (uint64_t n = 2; n <= 3; n++) {
        CHECK(raft_safety_append(c, n, 4, 3, h(40)));
        CHECK(raft_safety_append(c, n, 5, 3, h(50)));
        CHECK(raft_safety_commit(c, n, 5));
    }
    CHECK(raft_safety_snapshot_conf(c, 1, 5, 3, &CONF3));
    struct raft_safety_entry es[6];
    for (uint64_t i = 1; i <= 6; i++)
        es[i - 1] = (struct raft_safety_entry){.index = i,
                                               .term = i <= 3 ? 1 : 2,
                                               .data_hash = h(i),
                                               .conf_change = i <= 3,
                                               .conf_type = RAFT_SAFETY_CC_ADD_VOTER,
                                               .conf_member = i};
    struct raft_safety_boot b = {.term = 3,
                                 .commit = 3,
                                 .last_index = 6,
                                 .applied = 3,
                                 .conf = &CONF3,
                                 .entries = es,
                                 .n_entries = 6};
    CHECK(raft_safety_recovered(c, 1, &b));
    CHECK(!raft_safety_failed(c));
    raft_safety_free(c);
}

int main(void)
{
    FL_TEST(test_correct_life);
    FL_TEST(test_term_durability);
    FL_TEST(test_vote_durability);
    FL_TEST(test_double_vote);
    FL_TEST(test_election_quorum);
    FL_TEST(test_learner_vote);
    FL_TEST(test_commit_regressed);
    FL_TEST(test_commit_durability);
    FL_TEST(test_apply_order);
    FL_TEST(test_conf_after_restart);
    FL_TEST(test_recovered_unfed_entries);
    FL_TEST(test_recovered_snapshot_lost);
    return fl_test_end();
}
