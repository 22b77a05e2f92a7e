/* Unit tests of checkers/liveness in a swarm world (cluster_only): the cluster is judged,
 * no client. A write within the bound after a heal or after a minority fault began
 * passes (after_heal, quorum_up); none fails, whatever the clients' own failures; a
 * minority window where every client is pinned_random and a faulty member is paused is
 * not judged; time under a NOSPACE alarm is never judged (and its end is a heal); a
 * window the run's end cuts before its bound is unknown. */
#include "liveness_fixture.h"

#define E     (300 * FL_MS)
#define BOUND (5000 * FL_MS)

static void write_ok(int client, int64_t call_ms, int64_t return_ms, bool ok)
{
    lv_op(client, call_ms, return_ms, ok, true);
}

static struct liveness_client clients[2] = {{1, "round_robin"}, {2, "health_aware"}};

static enum liveness_verdict judge(const struct liveness_segment *sg, size_t n_sg, int64_t end_ms,
                                   const int64_t *alarms, size_t n_alarms)
{
    struct liveness_input in = {.election_ns = E,
                                .client_timeout_ns = 1000 * FL_MS,
                                .clients = clients,
                                .n_clients = 2,
                                .cluster_only = true,
                                .heal_bound_ns = BOUND,
                                .alarms_ns = alarms,
                                .n_alarms = n_alarms};
    return lv_judge(in, sg, n_sg, end_ms);
}

#define SEG(ms, st, gray)                                                                          \
    {                                                                                              \
        (int64_t)(ms) * FL_MS, st, false, false, gray                                              \
    }

static void test_quorum_up(void)
{
    /* a member dies at 10 s (minority), back at 20 s (heal): writes at 11 s and 21 s */
    struct liveness_segment sg[] = {SEG(0, LIVENESS_HEALED, false),
                                    SEG(10000, LIVENESS_MINORITY, false),
                                    SEG(20000, LIVENESS_HEALED, false)};
    lv_clear();
    write_ok(1, 11000, 11010, true);
    write_ok(2, 12000, 12010, false); /* a client's own failure: not judged */
    write_ok(2, 21000, 21010, true);
    CHECK(judge(sg, 3, 30000, NULL, 0) == LIVENESS_PASS);
    CHECK(lv_has("\"rule\":\"quorum_up\",\"result\":\"pass\""));
    CHECK(lv_has("\"rule\":\"after_heal\",\"result\":\"pass\""));
    CHECK(!strstr(fl_buf_cstr(&lv_out), "client_heal") &&
          !strstr(fl_buf_cstr(&lv_out), "failover"));
    /* no write succeeds while the quorum is up (a learner that refuses to vote): fail */
    lv_clear();
    write_ok(1, 10500, 11500, false);
    write_ok(1, 16000, 17000, false);
    write_ok(2, 21000, 21010, true);
    CHECK(judge(sg, 3, 30000, NULL, 0) == LIVENESS_FAIL);
    CHECK(lv_has("\"first_failure\":\"quorum_up at 10000 ms: no write succeeded within 5000 ms"));
}

static void test_pinned_paused(void)
{
    struct liveness_segment sg[] = {SEG(0, LIVENESS_HEALED, false),
                                    SEG(10000, LIVENESS_MINORITY, true)};
    lv_clear();
    write_ok(1, 10500, 11500, false);
    clients[0].policy = clients[1].policy = "pinned_random";
    CHECK(judge(sg, 2, 30000, NULL, 0) == LIVENESS_PASS);
    CHECK(lv_has("every client is pinned_random"));
    clients[1].policy = "health_aware"; /* one that fails over: judged */
    CHECK(judge(sg, 2, 30000, NULL, 0) == LIVENESS_FAIL);
    clients[0].policy = "round_robin";
}

static void test_alarm(void)
{
    /* healed from 0; NOSPACE from 2 s to 12 s: writes refused; one succeeds at 13 s */
    struct liveness_segment sg[] = {SEG(0, LIVENESS_OTHER, false),
                                    SEG(1000, LIVENESS_HEALED, false)};
    const int64_t alarm[] = {2000 * FL_MS, 12000 * FL_MS};
    lv_clear();
    write_ok(1, 1100, 1110, true);
    write_ok(1, 3000, 3010, false);
    write_ok(1, 13000, 13010, true);
    CHECK(judge(sg, 2, 30000, alarm, 1) == LIVENESS_PASS);
    CHECK(lv_has("{\"from_ms\":12000,\"to_ms\":30000,\"state\":\"healed\",\"rule\":\"after_heal\","
                 "\"result\":\"pass\""));
    /* without the alarm the refused writes fail the window */
    lv_clear();
    write_ok(1, 1100, 1110, false);
    write_ok(1, 3000, 3010, false);
    write_ok(1, 13000, 13010, true);
    CHECK(judge(sg, 2, 30000, NULL, 0) == LIVENESS_FAIL);
    /* an alarm on from 2 s to the end: the heal's window lasted 1 s (not judged), and
     * nothing after it is judged */
    const int64_t open[] = {2000 * FL_MS, -1};
    CHECK(judge(sg, 2, 30000, open, 1) == LIVENESS_PASS);
    CHECK(lv_has("\"judged\":0"));
}

static void test_cut_by_end(void)
{
    struct liveness_segment sg[] = {SEG(0, LIVENESS_OTHER, false),
                                    SEG(10000, LIVENESS_HEALED, false)};
    lv_clear();
    write_ok(1, 10500, 11500, false);
    CHECK(judge(sg, 2, 12000, NULL, 0) == LIVENESS_UNKNOWN);
    CHECK(lv_has("the run ended (unknown)"));
    write_ok(1, 11600, 11610, true); /* a write before the end: pass */
    CHECK(judge(sg, 2, 12000, NULL, 0) == LIVENESS_PASS);
}

int main(void)
{
    FL_TEST(test_quorum_up);
    FL_TEST(test_pinned_paused);
    FL_TEST(test_alarm);
    FL_TEST(test_cut_by_end);
    return lv_end();
}
