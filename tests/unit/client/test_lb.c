/*
 * test_lb.c: each balancer policy's decisions driven step by step, with no network
 * (nodes/client/lb.h is a pure core): pins, unhealthy waits, reconnect backoff,
 * round robin order, health_aware's judgement of probes (etcd#8673) and its two
 * choices, and the client.no_failover bug switch.
 */
#include "fl_test.h"

#include "harness/common/bugs.h"
#include "harness/common/common.h"
#include "nodes/client/lb.h"

static void lb_make(struct lb *lb, enum lb_kind kind, size_t n, uint64_t seed)
{
    struct lb_config cfg;
    lb_config_default(&cfg, kind);
    cfg.seed = seed;
    lb_init(lb, &cfg, n);
}

static void all_ready(struct lb *lb, int64_t now)
{
    for (size_t i = 0; i < lb->n; i++) {
        lb_on_connecting(lb, i, now);
        lb_on_ready(lb, i, now);
    }
}

static void test_table(void)
{
    CHECK_EQ_INT(lb_policy_count(), 4);
    const char *names[] = {"pinned_random", "pinned_blacklist", "round_robin", "health_aware"};
    for (size_t i = 0; i < 4; i++) {
        const struct lb_policy_desc *d = lb_policy_info(i);
        CHECK_EQ_STR(d->name, names[i]);
        CHECK_EQ_INT(d->kind, (int)i);
        CHECK(strlen(d->description) > 20);
        CHECK_EQ_INT(lb_policy_find(names[i]), (int)i);
    }
    CHECK_EQ_INT(lb_policy_find("grpc"), -1);
    CHECK_EQ_INT(lb_policy_find(NULL), -1);
}

static void test_pinned_random(void)
{
    bool seen[3] = {false, false, false};
    uint64_t first = 1, last = 20;
    bool one = fl_test_seed_range(&first, &last);
    for (uint64_t seed = first; seed <= last; seed++) {
        struct lb lb;
        lb_make(&lb, LB_PINNED_RANDOM, 3, seed);
        for (size_t i = 0; i < 3; i++)
            CHECK(lb_wants_conn(&lb, i, 0));
        CHECK_EQ_INT(lb_pick(&lb, 0, -1), -1); /* nothing ready yet */
        lb_on_connecting(&lb, 1, 0);
        lb_on_ready(&lb, 1, 10);
        CHECK_EQ_INT(lb.pinned, 1); /* the first that answers */
        lb_on_ready(&lb, 0, 20);
        lb_on_ready(&lb, 2, 30);
        CHECK_EQ_INT(lb.pinned, 1);
        CHECK_EQ_INT(lb_pick(&lb, 40, -1), 1);
        /* grpc 1.0 knew nothing of health: calls timing out on the pinned member (paused,
         * or cut off from its peers) leave it pinned. */
        uint64_t switches = lb.switches;
        lb_on_fail(&lb, 1, LB_FAIL_TIMEOUT, 45);
        lb_on_fail(&lb, 1, LB_FAIL_TIMEOUT, 46);
        CHECK_EQ_INT(lb.pinned, 1);
        CHECK_EQ_INT(lb_pick(&lb, 47, -1), 1);
        CHECK(lb.switches == switches);
        /* A call answered Unavailable is the transport's word: it moves. */
        lb_on_fail(&lb, 1, LB_FAIL_UNAVAILABLE, 50);
        int p = lb.pinned;
        CHECK(p == 0 || p == 2);
        seen[p] = true;
        CHECK_EQ_INT(lb_pick(&lb, 60, -1), p);
        CHECK(lb_should_leave(&lb, 1, 60));
        /* The failing endpoint's connection is kept (grpc 1.0 holds them all). */
        CHECK(lb_wants_conn(&lb, 1, 60));
        /* Lose the pinned connection: the other ready one is pinned. */
        lb_on_fail(&lb, (size_t)p, LB_FAIL_BROKEN, 70);
        CHECK(lb.pinned == 1 || lb.pinned == (p == 0 ? 2 : 0));
        CHECK(lb.pinned != p);
    }
    CHECK(one || (seen[0] && seen[2])); /* random, not fixed */
}

static void test_pinned_blacklist(void)
{
    struct lb lb;
    lb_make(&lb, LB_PINNED_BLACKLIST, 3, 7);
    const int64_t s = FL_S;
    /* No pin: race every healthy endpoint. */
    for (size_t i = 0; i < 3; i++) {
        CHECK(lb_wants_conn(&lb, i, 0));
        CHECK(lb_dial_due(&lb, i, 0));
        lb_on_connecting(&lb, i, 0);
    }
    lb_on_ready(&lb, 2, 1 * s);
    CHECK_EQ_INT(lb.pinned, 2);
    CHECK(!lb_wants_conn(&lb, 0, 1 * s)); /* one connection only */
    CHECK(!lb_wants_conn(&lb, 1, 1 * s));
    CHECK(lb_wants_conn(&lb, 2, 1 * s));
    CHECK_EQ_INT(lb_pick(&lb, 1 * s, -1), 2);
    lb_on_idle(&lb, 0);
    lb_on_idle(&lb, 1);
    /* Keepalive failure switches; the endpoint is unhealthy for the dial timeout. */
    lb_on_fail(&lb, 2, LB_FAIL_KEEPALIVE, 10 * s);
    CHECK_EQ_INT(lb.pinned, -1);
    CHECK_EQ_INT(lb_pick(&lb, 10 * s, -1), -1);
    CHECK(!lb_wants_conn(&lb, 2, 10 * s));
    CHECK(!lb_wants_conn(&lb, 2, 15 * s - 1));
    CHECK(lb_wants_conn(&lb, 0, 10 * s) && lb_wants_conn(&lb, 1, 10 * s));
    CHECK_EQ_INT(lb_next_deadline(&lb, 10 * s), 15 * s);
    /* An unhealthy endpoint that answers is not pinned while another is healthy. */
    lb_on_ready(&lb, 2, 11 * s);
    CHECK_EQ_INT(lb.pinned, -1);
    lb_on_idle(&lb, 2);
    lb_on_ready(&lb, 0, 11 * s);
    CHECK_EQ_INT(lb.pinned, 0);
    /* A request timeout gray-lists the pinned endpoint too (etcd#8660). */
    lb_on_fail(&lb, 0, LB_FAIL_TIMEOUT, 12 * s);
    CHECK_EQ_INT(lb.pinned, -1);
    CHECK(lb_wants_conn(&lb, 1, 13 * s));
    CHECK(!lb_wants_conn(&lb, 0, 13 * s));
    CHECK(!lb_wants_conn(&lb, 2, 13 * s));
    /* All unhealthy: try them all. */
    lb_on_fail(&lb, 1, LB_FAIL_CONNECT, 13 * s);
    for (size_t i = 0; i < 3; i++)
        CHECK(lb_wants_conn(&lb, i, 14 * s));
    /* After the wait, endpoint 2 is healthy again and pinned when it answers. */
    CHECK(lb_wants_conn(&lb, 2, 15 * s));
    lb_on_ready(&lb, 2, 15 * s + 1);
    CHECK_EQ_INT(lb.pinned, 2);
    CHECK(lb.switches >= 3);
}

static void test_round_robin(void)
{
    struct lb lb;
    lb_make(&lb, LB_ROUND_ROBIN, 3, 3);
    all_ready(&lb, 0);
    int order[6];
    for (int k = 0; k < 6; k++)
        order[k] = lb_pick(&lb, 0, -1);
    CHECK(order[0] == 0 && order[1] == 1 && order[2] == 2 && order[3] == 0 && order[4] == 1);
    /* A request error does not change anything (no health list). */
    lb_on_fail(&lb, 1, LB_FAIL_TIMEOUT, FL_S);
    lb_on_fail(&lb, 1, LB_FAIL_UNAVAILABLE, FL_S);
    CHECK(lb_healthy(&lb, 1, FL_S));
    /* A broken connection leaves the rotation until it is back. */
    lb_on_fail(&lb, 1, LB_FAIL_BROKEN, 2 * FL_S);
    for (int k = 0; k < 6; k++)
        CHECK(lb_pick(&lb, 2 * FL_S, -1) != 1);
    CHECK(lb_wants_conn(&lb, 1, 2 * FL_S));
    CHECK(!lb_dial_due(&lb, 1, 2 * FL_S + 700 * FL_MS)); /* backoff 1 s +-20% */
    CHECK(lb_dial_due(&lb, 1, 2 * FL_S + 1300 * FL_MS));
    int64_t dl = lb_next_deadline(&lb, 2 * FL_S);
    CHECK(dl >= 2 * FL_S + 800 * FL_MS && dl <= 2 * FL_S + 1200 * FL_MS);
    /* Backoff grows by 1.6 on repeated failures. */
    lb_on_connecting(&lb, 1, 4 * FL_S);
    lb_on_fail(&lb, 1, LB_FAIL_CONNECT, 4 * FL_S);
    CHECK_EQ_INT(lb.ep[1].backoff_ns, 1600 * FL_MS);
    lb_on_connecting(&lb, 1, 6 * FL_S);
    lb_on_ready(&lb, 1, 6 * FL_S);
    CHECK_EQ_INT(lb.ep[1].backoff_ns, 0);
    /* avoid: a retry moves to another ready endpoint. */
    for (int k = 0; k < 6; k++)
        CHECK(lb_pick(&lb, 7 * FL_S, 2) != 2);
    /* Only the avoided one is ready: use it anyway. */
    lb_on_fail(&lb, 0, LB_FAIL_BROKEN, 8 * FL_S);
    lb_on_fail(&lb, 1, LB_FAIL_BROKEN, 8 * FL_S);
    CHECK_EQ_INT(lb_pick(&lb, 8 * FL_S, 2), 2);
    CHECK(!lb_should_leave(&lb, 2, 8 * FL_S));
}

static void probe_ok(struct lb *lb, size_t i, int64_t now, uint64_t term, int64_t age)
{
    lb_on_probe(lb, i, now, 1 * FL_MS, true, term, age, false);
}

static void test_health_aware(void)
{
    struct lb lb;
    lb_make(&lb, LB_HEALTH_AWARE, 3, 5);
    CHECK(lb_probes(&lb));
    all_ready(&lb, 0);
    int64_t t = FL_S;
    /* No probe yet: not healthy, but ready endpoints are still usable (last tier). */
    CHECK(!lb_healthy(&lb, 0, t));
    CHECK(lb_pick(&lb, t, -1) >= 0);
    probe_ok(&lb, 0, t, 2, 50 * FL_MS);
    probe_ok(&lb, 1, t, 2, 80 * FL_MS);
    /* Member 2 answers (pings and status) but lost contact with its peers 2 s ago. */
    probe_ok(&lb, 2, t, 2, 2 * FL_S);
    CHECK(lb_healthy(&lb, 0, t) && lb_healthy(&lb, 1, t));
    CHECK(!lb_healthy(&lb, 2, t));
    for (int k = 0; k < 50; k++)
        CHECK(lb_pick(&lb, t, -1) != 2);
    CHECK(lb_should_leave(&lb, 2, t));
    CHECK(!lb_should_leave(&lb, 0, t));
    /* The member's age grows with the probe's: healthy at +100 ms, not at +600 ms. */
    CHECK(lb_healthy(&lb, 0, t + 100 * FL_MS));
    CHECK(!lb_healthy(&lb, 0, t + 600 * FL_MS));
    /* No leader, a learner, or a stale term: not healthy. */
    lb_on_probe(&lb, 0, t, FL_MS, false, 2, 10 * FL_MS, false);
    CHECK(!lb_healthy(&lb, 0, t));
    lb_on_probe(&lb, 0, t, FL_MS, true, 2, 10 * FL_MS, true);
    CHECK(!lb_healthy(&lb, 0, t));
    probe_ok(&lb, 1, t, 3, 10 * FL_MS);
    probe_ok(&lb, 0, t, 2, 10 * FL_MS);
    CHECK(!lb_healthy(&lb, 0, t)); /* behind term 3 */
    probe_ok(&lb, 0, t, 3, 10 * FL_MS);
    CHECK(lb_healthy(&lb, 0, t));
    /* A leaderless member campaigning alone at a higher term does not make the
     * others look stale (no pre-vote). */
    lb_on_probe(&lb, 2, t, FL_MS, false, 9, 3 * FL_S, false);
    CHECK(lb_healthy(&lb, 0, t) && lb_healthy(&lb, 1, t));
    CHECK(!lb_healthy(&lb, 2, t));
    /* Two choices by load: 0 and 1 healthy, 0 busy -> always 1. */
    for (int k = 0; k < 5; k++)
        lb_on_request_start(&lb, 0, t);
    lb_set_oldest_inflight(&lb, 0, t);
    for (int k = 0; k < 20; k++)
        CHECK_EQ_INT(lb_pick(&lb, t, -1), 1);
    /* A request stuck there past slow_ns: a gray failure. */
    CHECK(lb_healthy(&lb, 0, t + 200 * FL_MS));
    CHECK(!lb_healthy(&lb, 0, t + 350 * FL_MS));
    CHECK_EQ_INT(lb_next_deadline(&lb, t), t + 300 * FL_MS + 1);
    for (int k = 0; k < 5; k++)
        lb_on_request_end(&lb, 0);
    lb_set_oldest_inflight(&lb, 0, 0);
    /* Equal load: lower latency wins. */
    lb_on_probe(&lb, 0, t, 9 * FL_MS, true, 3, 10 * FL_MS, false);
    lb_on_probe(&lb, 0, t, 9 * FL_MS, true, 3, 10 * FL_MS, false);
    for (int k = 0; k < 20; k++)
        CHECK_EQ_INT(lb_pick(&lb, t, -1), 1);
    /* A request timeout makes a member suspect for suspect_ns. */
    lb_on_fail(&lb, 1, LB_FAIL_TIMEOUT, t);
    CHECK(!lb_healthy(&lb, 1, t));
    CHECK_EQ_INT(lb_pick(&lb, t, -1), 0);
    /* Stale probes are no evidence. */
    CHECK(!lb_healthy(&lb, 0, t + 2 * FL_S));
    lb_on_probe_lost(&lb, 0, t);
    CHECK(!lb_healthy(&lb, 0, t));
    /* Nothing healthy: fall back to a ready member. */
    CHECK(lb_pick(&lb, t, -1) >= 0);
}

static void test_no_failover_bug(void)
{
    CHECK(fl_bug_enable("client.no_failover"));
    for (int kind = 0; kind < LB_KIND_COUNT; kind++) {
        struct lb lb;
        lb_make(&lb, (enum lb_kind)kind, 3, 9);
        all_ready(&lb, 0);
        CHECK_EQ_INT(lb_pick(&lb, 0, -1), 0);
        lb_on_fail(&lb, 0, LB_FAIL_BROKEN, FL_S);
        CHECK_EQ_INT(lb_pick(&lb, FL_S, -1), -1); /* never leaves endpoint 0 */
        CHECK(!lb_should_leave(&lb, 0, FL_S));
        if (kind == LB_PINNED_BLACKLIST || kind == LB_PINNED_RANDOM) {
            CHECK(lb_wants_conn(&lb, 0, FL_S));
            CHECK(!lb_wants_conn(&lb, 1, FL_S));
        }
    }
    fl_bug_reset();
    struct lb lb;
    lb_make(&lb, LB_ROUND_ROBIN, 3, 9);
    all_ready(&lb, 0);
    lb_on_fail(&lb, 0, LB_FAIL_BROKEN, FL_S);
    CHECK(lb_pick(&lb, FL_S, -1) > 0);
}

static void test_add_endpoint(void)
{
    struct lb lb;
    lb_make(&lb, LB_ROUND_ROBIN, LB_ENDPOINTS_MAX - 1, 1);
    CHECK(lb_add_endpoint(&lb));
    CHECK_EQ_INT(lb.n, LB_ENDPOINTS_MAX);
    CHECK(!lb_add_endpoint(&lb));
    CHECK_EQ_INT(lb.ep[LB_ENDPOINTS_MAX - 1].quorum_age_ns, -1);
}

int main(void)
{
    FL_TEST(test_table);
    FL_TEST(test_pinned_random);
    FL_TEST(test_pinned_blacklist);
    FL_TEST(test_round_robin);
    FL_TEST(test_health_aware);
    FL_TEST(test_no_failover_bug);
    FL_TEST(test_add_endpoint);
    return fl_test_end();
}
