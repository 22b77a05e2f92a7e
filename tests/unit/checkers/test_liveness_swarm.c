/* Unit tests of checkers/liveness in a swarm world (cluster_only): the cluster is judged,
 * no client. A write within the bound after a heal or after a minority fault began
 * passes (after_heal, quorum_up); none fails, whatever the clients' own failures; a
 * minority window where every client is pinned_random and a faulty member is paused is
 * not judged; time under a NOSPACE alarm is never judged (and its end is a heal); a
 * window the run's end cuts before its bound is unknown. */
#include "checkers/liveness.h"
#include "fl_test.h"

#define E     (300 * FL_MS)
#define BOUND (5000 * FL_MS)

static struct liveness_op ops[256];
static size_t n_ops;

static void write_ok(int client, int64_t call_ms, int64_t return_ms, bool ok)
{
    ops[n_ops++] = (struct liveness_op){client, call_ms * FL_MS, return_ms * FL_MS, ok, true};
}

static struct liveness_client clients[2] = {{1, "round_robin"}, {2, "health_aware"}};

static enum liveness_verdict judge(const struct liveness_segment *sg, size_t n_sg, int64_t end_ms,
                                   const int64_t *alarms, size_t n_alarms, struct fl_buf *out)
{
    struct liveness_input in = {.election_ns = E,
                                .client_timeout_ns = 1000 * FL_MS,
                                .end_ns = end_ms * FL_MS,
                                .segments = sg,
                                .n_segments = n_sg,
                                .clients = clients,
                                .n_clients = 2,
                                .ops = ops,
                                .n_ops = n_ops,
                                .cluster_only = true,
                                .heal_bound_ns = BOUND,
                                .alarms_ns = alarms,
                                .n_alarms = n_alarms};
    return liveness_judge(&in, out);
}

static bool has(struct fl_buf *b, const char *s)
{
    bool yes = strstr(fl_buf_cstr(b), s) != NULL;
    if (!yes)
        fprintf(stderr, "  no '%s' in %s\n", s, fl_buf_cstr(b));
    return yes;
}

#define SEG(ms, st, gray)                                                                          \
    {                                                                                              \
        (int64_t)(ms) * FL_MS, st, false, false, gray                                              \
    }

static void test_quorum_up(void)
{
    struct fl_buf b;
    fl_buf_init(&b);
    /* a member dies at 10 s (minority), back at 20 s (heal): writes at 11 s and 21 s */
    struct liveness_segment sg[] = {SEG(0, LIVENESS_HEALED, false),
                                    SEG(10000, LIVENESS_MINORITY, false),
                                    SEG(20000, LIVENESS_HEALED, false)};
    n_ops = 0;
    write_ok(1, 11000, 11010, true);
    write_ok(2, 12000, 12010, false); /* a client's own failure: not judged */
    write_ok(2, 21000, 21010, true);
    CHECK(judge(sg, 3, 30000, NULL, 0, &b) == LIVENESS_PASS);
    CHECK(has(&b, "\"rule\":\"quorum_up\",\"result\":\"pass\""));
    CHECK(has(&b, "\"rule\":\"after_heal\",\"result\":\"pass\""));
    CHECK(!strstr(fl_buf_cstr(&b), "client_heal") && !strstr(fl_buf_cstr(&b), "failover"));
    /* no write succeeds while the quorum is up (a learner that refuses to vote): fail */
    n_ops = 0;
    write_ok(1, 10500, 11500, false);
    write_ok(1, 16000, 17000, false);
    write_ok(2, 21000, 21010, true);
    CHECK(judge(sg, 3, 30000, NULL, 0, &b) == LIVENESS_FAIL);
    CHECK(has(&b, "\"first_failure\":\"quorum_up at 10000 ms: no write succeeded within 5000 ms"));
    fl_buf_close(&b);
}

static void test_pinned_paused(void)
{
    struct fl_buf b;
    fl_buf_init(&b);
    struct liveness_segment sg[] = {SEG(0, LIVENESS_HEALED, false),
                                    SEG(10000, LIVENESS_MINORITY, true)};
    n_ops = 0;
    write_ok(1, 10500, 11500, false);
    clients[0].policy = clients[1].policy = "pinned_random";
    CHECK(judge(sg, 2, 30000, NULL, 0, &b) == LIVENESS_PASS);
    CHECK(has(&b, "every client is pinned_random"));
    clients[1].policy = "health_aware"; /* one that fails over: judged */
    CHECK(judge(sg, 2, 30000, NULL, 0, &b) == LIVENESS_FAIL);
    clients[0].policy = "round_robin";
    fl_buf_close(&b);
}

static void test_alarm(void)
{
    struct fl_buf b;
    fl_buf_init(&b);
    /* healed from 0; NOSPACE from 2 s to 12 s: writes refused; one succeeds at 13 s */
    struct liveness_segment sg[] = {SEG(0, LIVENESS_OTHER, false),
                                    SEG(1000, LIVENESS_HEALED, false)};
    const int64_t alarm[] = {2000 * FL_MS, 12000 * FL_MS};
    n_ops = 0;
    write_ok(1, 1100, 1110, true);
    write_ok(1, 3000, 3010, false);
    write_ok(1, 13000, 13010, true);
    CHECK(judge(sg, 2, 30000, alarm, 1, &b) == LIVENESS_PASS);
    CHECK(has(&b, "{\"from_ms\":12000,\"to_ms\":30000,\"state\":\"healed\",\"rule\":\"after_heal\","
                  "\"result\":\"pass\""));
    /* without the alarm the refused writes fail the window */
    n_ops = 0;
    write_ok(1, 1100, 1110, false);
    write_ok(1, 3000, 3010, false);
    write_ok(1, 13000, 13010, true);
    CHECK(judge(sg, 2, 30000, NULL, 0, &b) == LIVENESS_FAIL);
    /* an alarm on from 2 s to the end: the heal's window lasted 1 s (not judged), and
     * nothing after it is judged */
    const int64_t open[] = {2000 * FL_MS, -1};
    CHECK(judge(sg, 2, 30000, open, 1, &b) == LIVENESS_PASS);
    CHECK(has(&b, "\"judged\":0"));
    fl_buf_close(&b);
}

static void test_cut_by_end(void)
{
    struct fl_buf b;
    fl_buf_init(&b);
    struct liveness_segment sg[] = {SEG(0, LIVENESS_OTHER, false),
                                    SEG(10000, LIVENESS_HEALED, false)};
    n_ops = 0;
    write_ok(1, 10500, 11500, false);
    CHECK(judge(sg, 2, 12000, NULL, 0, &b) == LIVENESS_UNKNOWN);
    CHECK(has(&b, "the run ended (unknown)"));
    write_ok(1, 11600, 11610, true); /* a write before the end: pass */
    CHECK(judge(sg, 2, 12000, NULL, 0, &b) == LIVENESS_PASS);
    fl_buf_close(&b);
}

int main(void)
{
    FL_TEST(test_quorum_up);
    FL_TEST(test_pinned_paused);
    FL_TEST(test_alarm);
    FL_TEST(test_cut_by_end);
    return fl_test_end();
}
