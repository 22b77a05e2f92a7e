/* Unit tests of checkers/liveness: fabricated fault timelines and client operations.
 * A cluster that recovers after a heal passes; one that has no leader or no successful
 * write within the bound fails (after_heal), as does a client that never succeeds again
 * (client_heal), a client that does not fail over from a minority fault within its
 * bound (failover: what client.no_failover does) and a health_aware client that loses
 * calls while only a follower is cut off (health_aware); windows too short, without
 * calls, or a run that never heals are not judged, with the reason in the detail. */
#include "liveness_fixture.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#define E  (1000 * FL_MS) /* election timeout */
#define TO (2000 * FL_MS) /* client timeout */

/* Calls of client every step_ms in [from_ms, to_ms): each ok unless in [bad_from, bad_to). */
static void calls(int client, int64_t from_ms, int64_t to_ms, int64_t step_ms, int64_t bad_from,
                  int64_t bad_to)
{
    for (int64_t t = from_ms; t < to_ms; t += step_ms) {
        bool bad = t >= bad_from && t < bad_to;
        lv_op(client, t, bad ? t + TO / FL_MS : t + 5, !bad, (t / step_ms) % 2 == 0);
    }
}

static const struct liveness_client CLIENTS[] = {
    {1, "pinned_blacklist"}, {2, "round_robin"}, {3, "health_aware"}, {4, "pinned_random"}};

static enum liveness_verdict judge(const struct liveness_segment *sg, size_t n_sg, int64_t end_ms,
                                   const int64_t *leaders, size_t n_leaders)
{
    struct liveness_input in = {.election_ns = E,
                                .client_timeout_ns = TO,
                                .leaders_ns = leaders,
                                .n_leaders = n_leaders,
                                .clients = CLIENTS,
                                .n_clients = 4};
    return lv_judge(in, sg, n_sg, end_ms);
}

#define SEG(ms, st, lead, aff)                                                                     \
    {                                                                                              \
        (int64_t)(ms) * FL_MS, st, lead, aff, false                                                \
    }

static void test_never_heals(void)
{
    lv_clear();
    calls(1, 0, 20000, 100, 5000, 20000);
    struct liveness_segment sg[] = {SEG(0, LIVENESS_HEALED, true, false),
                                    SEG(5000, LIVENESS_OTHER, false, true)};
    CHECK(judge(sg, 2, 20000, NULL, 0) == LIVENESS_PASS);
    CHECK(lv_has("\"judged\":0"));
    CHECK(lv_has("nothing to judge"));
}

static void test_heal_recovers(void)
{
    lv_clear();
    calls(1, 0, 30000, 100, 5000, 11500); /* fails during the fault, 1.5 s after */
    calls(2, 0, 30000, 100, 5000, 11000);
    int64_t leaders[] = {10800 * FL_MS};
    struct liveness_segment sg[] = {SEG(0, LIVENESS_HEALED, true, false),
                                    SEG(5000, LIVENESS_OTHER, false, true),
                                    SEG(10000, LIVENESS_HEALED, false, false)};
    CHECK(judge(sg, 3, 30000, leaders, 1) == LIVENESS_PASS);
    CHECK(lv_has("\"rule\":\"after_heal\",\"result\":\"pass\""));
    CHECK(lv_has("\"judged\":1"));
    CHECK(lv_has("\"first_failure\":null"));
}

static void test_heal_no_write(void)
{
    lv_clear();
    calls(1, 0, 30000, 100, 5000, 30000); /* never succeeds again */
    int64_t leaders[] = {10800 * FL_MS};
    struct liveness_segment sg[] = {SEG(0, LIVENESS_HEALED, true, false),
                                    SEG(5000, LIVENESS_OTHER, false, true),
                                    SEG(10000, LIVENESS_HEALED, false, false)};
    CHECK(judge(sg, 3, 30000, leaders, 1) == LIVENESS_FAIL);
    CHECK(lv_has("no write succeeded within 10000 ms after the heal"));
    CHECK(lv_has("\"rule\":\"client_heal\",\"result\":\"fail\""));
    /* No leader at all: the first failure names the leader. */
    CHECK(judge(sg, 3, 30000, NULL, 0) == LIVENESS_FAIL);
    CHECK(lv_has("\"first_failure\":\"after_heal at 10000 ms: no leader"));
}

static void test_heal_not_judged(void)
{
    lv_clear();
    calls(1, 0, 30000, 100, 5000, 30000);
    /* A new fault 3 s after the heal, and the end of the run 4 s after the next. */
    struct liveness_segment sg[] = {
        SEG(5000, LIVENESS_OTHER, false, true), SEG(10000, LIVENESS_HEALED, false, false),
        SEG(13000, LIVENESS_OTHER, false, true), SEG(20000, LIVENESS_HEALED, false, false)};
    /* ... the second window is cut by the end of the run before its bound: unknown */
    CHECK(judge(sg, 4, 24000, NULL, 0) == LIVENESS_UNKNOWN);
    CHECK(lv_has("the window lasted 3000 ms, less than the bound (10000 ms)\""));
    CHECK(lv_has("the window lasted 4000 ms, less than the bound (10000 ms): the run ended"));
    CHECK(lv_has("\"judged\":0"));
    CHECK(lv_has("\"unknown\":"));
    /* Nobody writes after the heal: nothing to say. */
    lv_clear();
    lv_op(1, 1000, 1005, true, true);
    struct liveness_segment sg2[] = {SEG(5000, LIVENESS_OTHER, false, true),
                                     SEG(10000, LIVENESS_HEALED, true, false)};
    CHECK(judge(sg2, 2, 60000, NULL, 0) == LIVENESS_PASS);
    CHECK(lv_has("no write was attempted"));
}

static void test_failover(void)
{
    lv_clear();
    /* A member dies at 5 s for 10 s. Client 1 waits for it (what client.no_failover
     * does); client 2 fails over in 2 s. */
    calls(1, 0, 30000, 100, 5000, 15000);
    calls(2, 0, 30000, 100, 5000, 7000);
    struct liveness_segment sg[] = {SEG(0, LIVENESS_HEALED, true, false),
                                    SEG(5000, LIVENESS_MINORITY, true, false),
                                    SEG(15000, LIVENESS_HEALED, true, false)};
    CHECK(judge(sg, 3, 30000, NULL, 0) == LIVENESS_FAIL);
    CHECK(lv_has("client 1 (pinned_blacklist): no call made after the fault succeeded within "
                 "4500 ms"));
    CHECK(lv_has("client 2 (round_robin) failed over in 2005 ms"));
    /* The same fault for 3 s only: shorter than the bound, not judged. */
    struct liveness_segment sg2[] = {SEG(0, LIVENESS_HEALED, true, false),
                                     SEG(5000, LIVENESS_MINORITY, true, false),
                                     SEG(8000, LIVENESS_HEALED, true, false)};
    lv_clear();
    calls(1, 0, 30000, 100, 5000, 8000);
    CHECK(judge(sg2, 3, 30000, NULL, 0) == LIVENESS_PASS);
    CHECK(lv_has("\"rule\":\"failover\",\"result\":\"not_judged\""));
    /* pinned_random (grpc 1.0) stuck on a member that was killed: it should have
     * failed over; on one that is paused or cut off (gray): documented, not judged. */
    lv_clear();
    calls(4, 0, 30000, 100, 5000, 15000);
    CHECK(judge(sg, 3, 30000, NULL, 0) == LIVENESS_FAIL);
    CHECK(lv_has("client 4 (pinned_random): no call made after the fault succeeded"));
    sg[1].gray = true;
    CHECK(judge(sg, 3, 30000, NULL, 0) == LIVENESS_PASS);
    CHECK(lv_has("client 4 (pinned_random): grpc 1.0 stays on a member"));
}

static void test_health_aware(void)
{
    struct liveness_segment sg[] = {SEG(0, LIVENESS_HEALED, true, false),
                                    SEG(5000, LIVENESS_MINORITY, true, false),
                                    SEG(20000, LIVENESS_HEALED, true, false)};
    /* One lost call in the settled part of the window (from 8 s to 18 s): 99.x %. */
    lv_clear();
    calls(3, 0, 30000, 20, 5000, 5100);
    lv_op(3, 9000, 11000, false, true);
    CHECK(judge(sg, 3, 30000, NULL, 0) == LIVENESS_PASS);
    CHECK(lv_has("\"rule\":\"health_aware\",\"result\":\"pass\""));
    /* Every tenth call lost: it does not keep serving. */
    lv_clear();
    calls(3, 0, 30000, 20, 5000, 5100);
    for (int64_t t = 8000; t < 18000; t += 200)
        lv_op(3, t, t + 2000, false, false);
    CHECK(judge(sg, 3, 30000, NULL, 0) == LIVENESS_FAIL);
    CHECK(lv_has("\"rule\":\"health_aware\",\"result\":\"fail\""));
    /* With the leader among the faulty members an election is due: not this rule. */
    sg[1].leader_affected = true;
    CHECK(judge(sg, 3, 30000, NULL, 0) == LIVENESS_PASS);
    CHECK(strstr(fl_buf_cstr(&lv_out), "health_aware\",\"result") == NULL);
}

/* judge() in a child process with stderr silenced; whether it aborted (SIGABRT). */
static bool judge_aborts(const struct liveness_segment *sg, size_t n_sg, const int64_t *leaders,
                         size_t n_leaders, const int64_t *alarms, size_t n_alarms)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        (void)!freopen("/dev/null", "w", stderr);
        struct liveness_input in = {.election_ns = E,
                                    .client_timeout_ns = TO,
                                    .leaders_ns = leaders,
                                    .n_leaders = n_leaders,
                                    .clients = CLIENTS,
                                    .n_clients = 4,
                                    .alarms_ns = alarms,
                                    .n_alarms = n_alarms};
        lv_judge(in, sg, n_sg, 30000);
        _exit(0);
    }
    int status = 0;
    return pid > 0 && waitpid(pid, &status, 0) == pid && WIFSIGNALED(status) &&
           WTERMSIG(status) == SIGABRT;
}

/* The input liveness.h promises (segments, leaders and alarm intervals ascending, only
 * the last interval open) is asserted: a timeline out of order would judge windows of
 * negative length. A well-formed input does not abort. */
static void test_input_asserted(void)
{
    lv_clear();
    calls(1, 0, 30000, 100, 5000, 11000);
    struct liveness_segment ok[] = {SEG(0, LIVENESS_HEALED, true, false),
                                    SEG(5000, LIVENESS_OTHER, false, true),
                                    SEG(11000, LIVENESS_HEALED, false, false)};
    struct liveness_segment back[] = {SEG(0, LIVENESS_HEALED, true, false),
                                      SEG(11000, LIVENESS_OTHER, false, true),
                                      SEG(5000, LIVENESS_HEALED, false, false)};
    int64_t leaders[] = {10800 * FL_MS, 12000 * FL_MS}, leaders_back[] = {12000 * FL_MS, FL_MS};
    int64_t alarms[] = {1000 * FL_MS, 2000 * FL_MS, 3000 * FL_MS, -1};
    int64_t open_first[] = {1000 * FL_MS, -1, 3000 * FL_MS, 4000 * FL_MS};
    int64_t reversed[] = {2000 * FL_MS, 1000 * FL_MS};
    int64_t overlap[] = {1000 * FL_MS, 3000 * FL_MS, 2000 * FL_MS, 4000 * FL_MS};
    CHECK(!judge_aborts(ok, 3, leaders, 2, alarms, 2));
    CHECK(judge_aborts(back, 3, leaders, 2, NULL, 0));
    CHECK(judge_aborts(ok, 3, leaders_back, 2, NULL, 0));
    CHECK(judge_aborts(ok, 3, leaders, 2, open_first, 2));
    CHECK(judge_aborts(ok, 3, leaders, 2, reversed, 1));
    CHECK(judge_aborts(ok, 3, leaders, 2, overlap, 2));
    CHECK(judge_aborts(ok, 3, NULL, 2, NULL, 0)); /* a count without its array */
}

int main(void)
{
    FL_TEST(test_never_heals);
    FL_TEST(test_heal_recovers);
    FL_TEST(test_heal_no_write);
    FL_TEST(test_heal_not_judged);
    FL_TEST(test_failover);
    FL_TEST(test_health_aware);
    FL_TEST(test_input_asserted);
    return lv_end();
}
