/* Unit tests of checkers/raft_safety_feed.c: a recorder checks nothing and hands every
 * feed to its sink; each feed, written as a line and parsed back, replays into a
 * checker that ends exactly where the directly fed one does (same violation, same
 * counters), for a correct history and for broken ones; lines that are not whole feeds
 * are refused. */
#include "rs_fixture.h"

#include <string.h>

/* A history over the whole feed API: bootstrap, elections with their votes, appends,
 * commits and applies, a snapshot with its configuration, a restart (recovered with and
 * without a configuration), a member added and forgotten. broken: node 3 votes for two
 * candidates in term 3 and both win (double_vote, then election_safety). */
static void history(struct raft_safety *c, bool broken)
{
    for (uint64_t m = 1; m <= 3; m++) {
        for (uint64_t i = 1; i <= 3; i++) {
            raft_safety_append(c, m, i, 1, h(i));
            raft_safety_conf_entry(c, m, i, RAFT_SAFETY_CC_ADD_VOTER, i);
        }
        raft_safety_commit(c, m, 3);
        raft_safety_synced(c, m);
    }
    uint64_t voters[] = {1, 2, 3};
    struct raft_safety_conf conf = {voters, 3, NULL, 0};
    raft_safety_sent(c, 1, 2, 1);
    raft_safety_sent(c, 2, 2, 1);
    raft_safety_elected(c, 1, 2, &conf);
    raft_safety_leader(c, 1, 2);
    for (uint64_t m = 1; m <= 3; m++) {
        raft_safety_append(c, m, 4, 2, h(40));
        raft_safety_synced(c, m);
    }
    raft_safety_commit(c, 1, 4);
    raft_safety_leader_commit(c, 1, 2, 4);
    for (uint64_t m = 2; m <= 3; m++) {
        raft_safety_commit(c, m, 4);
        raft_safety_synced(c, m);
    }
    for (uint64_t m = 1; m <= 3; m++)
        for (uint64_t i = 1; i <= 4; i++)
            raft_safety_apply(c, m, i, i < 4 ? 1 : 2, h(i < 4 ? i : 40));
    uint64_t learners[] = {9};
    struct raft_safety_conf with_learner = {voters, 3, learners, 1};
    raft_safety_snapshot_conf(c, 3, 4, 2, &with_learner);
    raft_safety_not_leader(c, 1);
    struct raft_safety_boot b = {
        .term = 2, .vote = 1, .commit = 4, .last_index = 4, .applied = 4, .conf = &conf};
    raft_safety_recovered(c, 2, &b);
    b.conf = NULL;
    raft_safety_recovered(c, 1, &b);
    raft_safety_restart(c, 1, 4);
    raft_safety_snapshot(c, 1, 4, 2);
    raft_safety_forget(c, 9);
    if (broken) {
        raft_safety_sent(c, 3, 3, 1);
        raft_safety_sent(c, 3, 3, 2);
        raft_safety_sent(c, 1, 3, 1);
        raft_safety_sent(c, 2, 3, 2);
        raft_safety_elected(c, 1, 3, &conf);
        raft_safety_leader(c, 1, 3);
        raft_safety_elected(c, 2, 3, &conf);
        raft_safety_leader(c, 2, 3);
    }
}

/* The sink: each feed as a line, parsed back (the same line again when formatted),
 * replayed into the checker ud. */
static int fed;
static void through_text(void *ud, const struct raft_safety_feed *f)
{
    struct fl_buf line, again;
    fl_buf_init(&line);
    fl_buf_init(&again);
    raft_safety_feed_format(f, &line);
    struct raft_safety_feed back;
    CHECK(raft_safety_feed_parse((const char *)line.data, line.len, &back));
    raft_safety_feed_format(&back, &again);
    CHECK_EQ_STR(fl_buf_cstr(&line), fl_buf_cstr(&again));
    raft_safety_replay(ud, &back);
    fed++;
    fl_buf_close(&line);
    fl_buf_close(&again);
}

static void same_end(bool broken)
{
    struct raft_safety *direct = raft_safety_new(), *replayed = raft_safety_new();
    struct raft_safety *rec = raft_safety_new_recorder(through_text, replayed);
    fed = 0;
    history(direct, broken);
    history(rec, broken);
    CHECK(fed > 40);
    CHECK(!raft_safety_failed(rec)); /* a recorder judges nothing */
    CHECK_EQ_STR(raft_safety_violation_json(rec), "null");
    if (raft_safety_failed(direct) != broken)
        fprintf(stderr, "direct: %s\n", raft_safety_violation_json(direct));
    CHECK(raft_safety_failed(direct) == broken);
    CHECK(raft_safety_failed(replayed) == broken);
    CHECK_EQ_STR(raft_safety_violation_json(direct), raft_safety_violation_json(replayed));
    struct fl_buf a, b;
    fl_buf_init(&a);
    fl_buf_init(&b);
    raft_safety_summary_json(direct, &a);
    raft_safety_summary_json(replayed, &b);
    CHECK_EQ_STR(fl_buf_cstr(&a), fl_buf_cstr(&b));
    fl_buf_close(&a);
    fl_buf_close(&b);
    raft_safety_free(direct);
    raft_safety_free(replayed);
    raft_safety_free(rec);
}

static void test_replay_correct(void)
{
    same_end(false);
}

static void test_replay_broken(void)
{
    same_end(true);
}

static void test_lines(void)
{
    static const char *const good[] = {"append 7 12 3 99",
                                       "not_leader 7",
                                       "elected 7 3 v 7,8,9 l -",
                                       "recovered 7 1 2 3 4 5 -",
                                       "conf_entry 7 4 3 9",
                                       "snapshot_conf 7 4 2 v - l 9",
                                       "sent 7 3 0",
                                       "leader_commit 7 3 12"};
    for (size_t i = 0; i < FL_ARRAY_LEN(good); i++) {
        struct raft_safety_feed f;
        CHECK(raft_safety_feed_parse(good[i], strlen(good[i]), &f));
        struct fl_buf b;
        fl_buf_init(&b);
        raft_safety_feed_format(&f, &b);
        CHECK_EQ_STR(fl_buf_cstr(&b), good[i]);
        fl_buf_close(&b);
    }
    /* cut short, run together, extra fields, unknown ops, node 0, no number */
    static const char *const bad[] = {"",
                                      "append 7 12 3",
                                      "append 7 12 3 99 5",
                                      "append 7 12 3 9leader 7 3",
                                      "elected 7 3 v 7,8,9 l",
                                      "elected 7 3 v 7,8, l -",
                                      "elected 7 3 v 7,8,9",
                                      "recovered 7 1 2 3 4",
                                      "bogus 7 1",
                                      "leader 0 3",
                                      "leader 7 x",
                                      "leader 7  3",
                                      "leader 7 3 ",
                                      "leader 7 -3",
                                      "append 7 0 1 1"};
    for (size_t i = 0; i < FL_ARRAY_LEN(bad); i++) {
        struct raft_safety_feed f;
        if (raft_safety_feed_parse(bad[i], strlen(bad[i]), &f))
            fprintf(stderr, "parsed: '%s'\n", bad[i]);
        CHECK(!raft_safety_feed_parse(bad[i], strlen(bad[i]), &f));
    }
}

int main(void)
{
    FL_TEST(test_replay_correct);
    FL_TEST(test_replay_broken);
    FL_TEST(test_lines);
    return fl_test_end();
}
