/* Unit tests of checkers/raft_safety: correct histories (including truncation of
 * uncommitted entries, snapshots, restarts and a long run that exercises trimming)
 * pass; each property is broken by a hand-made sequence and reported with its name
 * and a JSON description. */
#include "rs_fixture.h"

/* Appends (index, term, hash(data)) on nodes 1..n. */
static bool append_all(struct raft_safety *c, int n, uint64_t index, uint64_t term, uint64_t data)
{
    bool ok = true;
    for (int i = 1; i <= n; i++)
        ok = raft_safety_append(c, (uint64_t)i, index, term, h(data)) && ok;
    return ok;
}

static void test_correct_history(void)
{
    struct raft_safety *c = raft_safety_new();
    CHECK(raft_safety_leader(c, 1, 2));
    CHECK(raft_safety_leader(c, 1, 2)); /* reported twice: same node, fine */
    for (uint64_t i = 1; i <= 5; i++)
        CHECK(append_all(c, 3, i, i <= 3 ? 1 : 2, i));
    for (uint64_t n = 1; n <= 3; n++) {
        CHECK(raft_safety_commit(c, n, 5));
        for (uint64_t i = 1; i <= 5; i++)
            CHECK(raft_safety_apply(c, n, i, i <= 3 ? 1 : 2, h(i)));
    }
    /* Leader 1 appends 6, 7 only locally, is deposed; node 2 leads term 3 and node 1
     * truncates its uncommitted suffix. */
    CHECK(raft_safety_append(c, 1, 6, 2, h(60)));
    CHECK(raft_safety_append(c, 1, 7, 2, h(70)));
    CHECK(raft_safety_leader(c, 2, 3));
    CHECK(raft_safety_append(c, 2, 6, 3, h(61)));
    CHECK(raft_safety_append(c, 3, 6, 3, h(61)));
    /* Node 1's truncation is fed before its step-down is: still fine, a leader of a
     * later term is on record. */
    CHECK(raft_safety_append(c, 1, 6, 3, h(61)));
    CHECK(raft_safety_not_leader(c, 1));
    CHECK(raft_safety_commit(c, 2, 6));
    CHECK(raft_safety_commit(c, 1, 6));
    CHECK(raft_safety_apply(c, 1, 6, 3, h(61)));
    CHECK(raft_safety_apply(c, 2, 6, 3, h(61)));
    /* A node joins by snapshot at 6 and continues. */
    CHECK(raft_safety_snapshot(c, 4, 6, 3));
    CHECK(raft_safety_append(c, 4, 7, 3, h(7)));
    CHECK(raft_safety_append(c, 2, 7, 3, h(7)));
    /* Node 3 crashes losing its unsynced tail, comes back and catches up. */
    CHECK(raft_safety_restart(c, 3, 4));
    CHECK(raft_safety_append(c, 3, 5, 2, h(5)));
    CHECK(raft_safety_append(c, 3, 6, 3, h(61)));
    CHECK(raft_safety_commit(c, 3, 6));
    CHECK(!raft_safety_failed(c));
    CHECK_EQ_STR(raft_safety_violation_json(c), "null");
    CHECK(raft_safety_violation_property(c) == NULL);
    struct fl_buf b;
    fl_buf_init(&b);
    raft_safety_summary_json(c, &b);
    CHECK(strstr(fl_buf_cstr(&b), "\"max_commit\":6") != NULL);
    fl_buf_close(&b);
    raft_safety_free(c);
}

static void expect_violation(struct raft_safety *c, const char *property)
{
    CHECK(raft_safety_failed(c));
    CHECK_EQ_STR(raft_safety_violation_property(c), property);
    const char *j = raft_safety_violation_json(c);
    CHECK(j[0] == '{' && j[strlen(j) - 1] == '}');
    char want[64];
    snprintf(want, sizeof(want), "\"property\":\"%s\"", property);
    CHECK(strstr(j, want) != NULL);
    raft_safety_free(c);
}

static void expect_violation_free(struct raft_safety *c)
{
    CHECK(!raft_safety_failed(c));
    raft_safety_free(c);
}

static void test_two_leaders(void)
{
    struct raft_safety *c = raft_safety_new();
    CHECK(raft_safety_leader(c, 1, 4));
    CHECK(raft_safety_leader(c, 2, 5));
    CHECK(!raft_safety_leader(c, 3, 4));
    CHECK(!raft_safety_append(c, 1, 1, 1, h(1))); /* failed stays failed */
    expect_violation(c, "election_safety");
}

static void test_leader_overwrites(void)
{
    struct raft_safety *c = raft_safety_new();
    CHECK(raft_safety_leader(c, 1, 2));
    CHECK(append_all(c, 1, 1, 2, 1));
    CHECK(append_all(c, 1, 2, 2, 2));
    CHECK(!raft_safety_append(c, 1, 2, 2, h(99)));
    expect_violation(c, "leader_append_only");
}

static void test_log_matching(void)
{
    struct raft_safety *c = raft_safety_new();
    CHECK(raft_safety_append(c, 1, 1, 1, h(1)));
    CHECK(raft_safety_append(c, 1, 2, 1, h(2)));
    CHECK(raft_safety_append(c, 2, 1, 1, h(1)));
    CHECK(raft_safety_append(c, 2, 2, 1, h(2)));
    /* Node 3: same (index 2, term 1) but a different entry at index 1. */
    CHECK(raft_safety_append(c, 3, 1, 0, h(5)));
    CHECK(!raft_safety_append(c, 3, 2, 1, h(2)));
    expect_violation(c, "log_matching");
}

static void test_committed_overwritten(void)
{
    struct raft_safety *c = raft_safety_new();
    for (uint64_t i = 1; i <= 3; i++)
        CHECK(append_all(c, 3, i, 2, i));
    CHECK(raft_safety_leader(c, 1, 2));
    CHECK(raft_safety_commit(c, 1, 3));
    CHECK(raft_safety_commit(c, 2, 3));
    /* A follower holding another entry at a committed index is not yet a violation
     * (a stale entry about to be overwritten)... */
    CHECK(raft_safety_append(c, 3, 3, 3, h(33)));
    expect_violation_free(c);

    /* ...but a leader of a later term writing over a committed index is (node 3,
     * elected without the entry, appends its own there). */
    c = raft_safety_new();
    for (uint64_t i = 1; i <= 3; i++)
        CHECK(append_all(c, 2, i, 2, i));
    CHECK(raft_safety_append(c, 3, 1, 2, h(1)));
    CHECK(raft_safety_append(c, 3, 2, 2, h(2)));
    CHECK(raft_safety_leader(c, 1, 2));
    CHECK(raft_safety_commit(c, 1, 3));
    CHECK(raft_safety_leader(c, 3, 3));
    CHECK(!raft_safety_append(c, 3, 3, 3, h(33)));
    expect_violation(c, "committed_lost");

    /* A stale leader of an older term appending at a committed index is fine. */
    c = raft_safety_new();
    for (uint64_t i = 1; i <= 2; i++)
        CHECK(append_all(c, 3, i, 2, i));
    CHECK(raft_safety_leader(c, 1, 2));
    CHECK(raft_safety_leader(c, 2, 3));
    CHECK(raft_safety_append(c, 2, 3, 3, h(3)));
    CHECK(raft_safety_append(c, 3, 3, 3, h(3)));
    CHECK(raft_safety_commit(c, 2, 3));
    CHECK(raft_safety_append(c, 1, 3, 2, h(30))); /* node 1 does not know yet */
    CHECK(!raft_safety_failed(c));
    CHECK(!raft_safety_commit(c, 1, 3)); /* committing it would be a violation */
    expect_violation(c, "committed_lost");
}

static void test_committed_twice(void)
{
    struct raft_safety *c = raft_safety_new();
    CHECK(raft_safety_append(c, 1, 1, 1, h(1)));
    CHECK(raft_safety_append(c, 2, 1, 2, h(2))); /* uncommitted conflict: allowed */
    CHECK(raft_safety_commit(c, 1, 1));
    CHECK(!raft_safety_commit(c, 2, 1));
    expect_violation(c, "committed_lost");
}

static void test_new_leader_lacks_commit(void)
{
    struct raft_safety *c = raft_safety_new();
    for (uint64_t i = 1; i <= 3; i++)
        CHECK(append_all(c, 2, i, 1, i));
    CHECK(raft_safety_append(c, 3, 1, 1, h(1)));
    CHECK(raft_safety_append(c, 3, 2, 1, h(2)));
    CHECK(raft_safety_commit(c, 1, 3));
    /* Node 3 wins (vote ignoring the log) and appends its no-op at index 3. */
    CHECK(raft_safety_leader(c, 3, 2));
    CHECK(!raft_safety_append(c, 3, 3, 2, h(0)));
    expect_violation(c, "committed_lost");
}

static void test_apply_differs(void)
{
    struct raft_safety *c = raft_safety_new();
    CHECK(raft_safety_append(c, 1, 1, 1, h(1)));
    CHECK(raft_safety_append(c, 2, 1, 2, h(2))); /* uncommitted conflict */
    CHECK(raft_safety_commit(c, 1, 1));
    CHECK(raft_safety_apply(c, 1, 1, 1, h(1)));
    /* Node 2 applies its own entry as if committed (its commit is not fed here). */
    raft_safety_restart(c, 2, 1);
    CHECK(!raft_safety_apply(c, 2, 1, 2, h(2)));
    expect_violation(c, "state_machine_safety");

    c = raft_safety_new();
    CHECK(append_all(c, 2, 1, 1, 1));
    CHECK(raft_safety_commit(c, 1, 1));
    CHECK(raft_safety_commit(c, 2, 1));
    CHECK(!raft_safety_apply(c, 2, 1, 1, h(7))); /* not the committed entry */
    expect_violation(c, "state_machine_safety");
}

/* A long correct run with leader changes and snapshots: no violation, and memory
 * trimming does not lose anything that is still checked. */
static size_t records(struct raft_safety *c)
{
    struct fl_buf b;
    fl_buf_init(&b);
    raft_safety_summary_json(c, &b);
    const char *p = strstr(fl_buf_cstr(&b), "\"records\":");
    size_t n = p ? (size_t)strtoull(p + 10, NULL, 10) : 0;
    fl_buf_close(&b);
    return n;
}

static void test_long_run(void)
{
    struct raft_safety *c = raft_safety_new();
    /* A member that left early must not keep every record alive. */
    CHECK(raft_safety_append(c, 9, 1, 1, h(1)));
    raft_safety_forget(c, 9);
    uint64_t term = 1;
    CHECK(raft_safety_leader(c, 1, term));
    bool ok = true;
    for (uint64_t i = 1; i <= 200000; i++) {
        if (i % 50000 == 0) {
            uint64_t lead = (term % 3) + 1;
            term++;
            ok = raft_safety_not_leader(c, ((term - 2) % 3) + 1) && ok;
            ok = raft_safety_leader(c, lead, term) && ok;
        }
        ok = append_all(c, 3, i, term, i) && ok;
        if (i % 100 == 0) {
            for (uint64_t n = 1; n <= 3; n++) {
                ok = raft_safety_commit(c, n, i) && ok;
                for (uint64_t k = i - 99; k <= i; k++)
                    ok = raft_safety_apply(c, n, k, k < 50000 ? 1 : 1 + k / 50000, h(k)) && ok;
            }
        }
    }
    CHECK(ok);
    CHECK(!raft_safety_failed(c));
    CHECK(records(c) < 50000); /* trimmed behind the applied floor */
    /* And a late overwrite of a committed entry is still caught. */
    CHECK(raft_safety_append(c, 3, 199999, term + 1, h(1)));
    CHECK(!raft_safety_commit(c, 3, 199999));
    expect_violation(c, "committed_lost");
}

/* Entries the checker never saw (a torn write survived a crash): no abort, and the
 * terms of committed indexes are still compared. */
static void test_unseen_entries(void)
{
    struct raft_safety *c = raft_safety_new();
    CHECK(raft_safety_leader(c, 1, 1));
    for (uint64_t i = 1; i <= 9; i++)
        CHECK(raft_safety_append(c, 1, i, 1, h(i)));
    for (uint64_t i = 1; i <= 4; i++)
        CHECK(raft_safety_append(c, 2, i, 1, h(i)));
    CHECK(raft_safety_commit(c, 1, 9));
    CHECK(raft_safety_restart(c, 2, 6)); /* two more than it was fed */
    CHECK(raft_safety_append(c, 2, 7, 1, h(7)));
    CHECK(raft_safety_commit(c, 2, 7));
    CHECK(raft_safety_append(c, 3, 5, 1, h(5))); /* a gap */
    CHECK(!raft_safety_failed(c));
    /* Node 3, unanchored, leads term 2 and writes over committed index 6. */
    CHECK(raft_safety_leader(c, 3, 2));
    CHECK(!raft_safety_append(c, 3, 6, 2, h(60)));
    expect_violation(c, "committed_lost");
}

/* Member churn: many more ids than a cluster ever has at once. */
static void test_many_members(void)
{
    struct raft_safety *c = raft_safety_new();
    for (uint64_t id = 1; id <= 200; id++)
        for (uint64_t i = 1; i <= 3; i++)
            CHECK(raft_safety_append(c, id * 1000, i, 1, h(i)));
    CHECK(!raft_safety_append(c, 777, 1, 1, h(9)));
    expect_violation(c, "log_matching");
}

int main(void)
{
    FL_TEST(test_many_members);
    FL_TEST(test_unseen_entries);
    FL_TEST(test_correct_history);
    FL_TEST(test_two_leaders);
    FL_TEST(test_leader_overwrites);
    FL_TEST(test_log_matching);
    FL_TEST(test_committed_overwritten);
    FL_TEST(test_committed_twice);
    FL_TEST(test_new_leader_lacks_commit);
    FL_TEST(test_apply_differs);
    FL_TEST(test_long_run);
    return fl_test_end();
}
