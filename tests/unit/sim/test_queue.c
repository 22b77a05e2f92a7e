/*
 * test_queue.c: the world's event queue: ties run in scheduling order, cancel,
 * run_until/run_for/stop, lazy cancel compaction, the digest, and fl_assert_ctx.
 */
#include "fl_test.h"
#include "harness/sim/sim.h"

struct rec {
    int order[4096];
    int64_t at[4096];
    int n;
};
static struct rec rec;

struct ev {
    int id;
    struct sim_world *w;
};

static void record(struct sim_world *w, void *ctx)
{
    struct ev *e = ctx;
    rec.order[rec.n] = e->id;
    rec.at[rec.n] = sim_now_ns(w);
    rec.n++;
}

static void test_ties(void)
{
    struct sim_world *w = sim_world_new(1);
    static struct ev evs[300];
    rec.n = 0;
    for (int i = 0; i < 100; i++) {
        evs[i].id = i;
        sim_schedule(w, 10, record, &evs[i]);
    }
    /* scheduled later but due earlier: runs first */
    for (int i = 100; i < 110; i++) {
        evs[i].id = i;
        sim_schedule(w, 5, record, &evs[i]);
    }
    sim_run_until(w, 100);
    CHECK_EQ_INT(rec.n, 110);
    for (int i = 0; i < 10; i++)
        CHECK_EQ_INT(rec.order[i], 100 + i);
    bool in_order = true;
    for (int i = 10; i < 110; i++)
        in_order = in_order && rec.order[i] == i - 10;
    CHECK(in_order);
    CHECK_EQ_INT(sim_now_ns(w), 100);
    CHECK_EQ_INT(sim_event_count(w), 110);
    sim_world_free(w);
}

static int zero_delay_seen;
static void inner(struct sim_world *w, void *ctx)
{
    (void)w;
    (void)ctx;
    zero_delay_seen = 2;
}
static void outer(struct sim_world *w, void *ctx)
{
    (void)ctx;
    sim_schedule(w, 0, inner, NULL);
    /* never called from inside the call that scheduled it */
    CHECK_EQ_INT(zero_delay_seen, 0);
    zero_delay_seen = 1;
}

static void test_zero_delay(void)
{
    struct sim_world *w = sim_world_new(1);
    sim_schedule(w, 3, outer, NULL);
    sim_run_for(w, 10);
    CHECK_EQ_INT(zero_delay_seen, 2);
    sim_world_free(w);
}

static void test_cancel(void)
{
    struct sim_world *w = sim_world_new(2);
    static struct ev evs[10];
    sim_handle h[10];
    rec.n = 0;
    for (int i = 0; i < 10; i++) {
        evs[i].id = i;
        h[i] = sim_schedule(w, 100 + i, record, &evs[i]);
    }
    CHECK(sim_cancel(w, h[3]));
    CHECK(!sim_cancel(w, h[3]));
    CHECK(!sim_cancel(w, 0));
    CHECK(sim_cancel(w, h[7]));
    sim_run_until(w, 1000);
    CHECK_EQ_INT(rec.n, 8);
    CHECK(!sim_cancel(w, h[0])); /* already ran */
    bool ok = true;
    for (int i = 0; i < rec.n; i++)
        ok = ok && rec.order[i] != 3 && rec.order[i] != 7;
    CHECK(ok);
    /* a recycled slot does not answer to an old handle */
    sim_handle again = sim_schedule(w, 5, record, &evs[0]);
    CHECK(!sim_cancel(w, h[3]));
    CHECK(sim_cancel(w, again));
    sim_world_free(w);
}

static void nop(struct sim_world *w, void *ctx)
{
    (void)w;
    (void)ctx;
}

static void test_compaction(void)
{
    struct sim_world *w = sim_world_new(3);
    static sim_handle h[20000];
    for (int i = 0; i < 20000; i++)
        h[i] = sim_schedule(w, 1000 + i, nop, NULL);
    for (int i = 0; i < 19000; i++)
        CHECK(sim_cancel(w, h[i]) || (printf("cancel %d\n", i), 0));
    /* stale entries are reclaimed: the heap does not keep all 20000 */
    CHECK(sim_pending_count(w) < 10000);
    CHECK_EQ_INT(sim_next_time_ns(w), 1000 + 19000);
    sim_run_until(w, INT64_MAX / 2);
    CHECK_EQ_INT(sim_event_count(w), 1000);
    CHECK_EQ_INT(sim_next_time_ns(w), INT64_MAX);
    sim_world_free(w);
}

struct stopper {
    int count;
};
static void stop_at_3(struct sim_world *w, void *ctx)
{
    struct stopper *s = ctx;
    if (++s->count == 3)
        sim_stop(w);
}

static void test_run_until_stop(void)
{
    struct sim_world *w = sim_world_new(4);
    struct stopper s = {0};
    for (int i = 1; i <= 5; i++)
        sim_schedule(w, i * FL_MS, stop_at_3, &s);
    CHECK(!sim_run_until(w, FL_S));
    CHECK_EQ_INT(s.count, 3);
    CHECK_EQ_INT(sim_now_ns(w), 3 * FL_MS);
    CHECK(sim_run_until(w, FL_S));
    CHECK_EQ_INT(s.count, 5);
    CHECK_EQ_INT(sim_now_ns(w), FL_S);
    /* time never goes back */
    CHECK(sim_run_until(w, 10));
    CHECK_EQ_INT(sim_now_ns(w), FL_S);
    CHECK(!sim_step(w));
    sim_world_free(w);
}

static void check_ctx(struct sim_world *w, void *ctx)
{
    (void)ctx;
    CHECK_EQ_INT(fl_assert_ctx.now_ns, sim_now_ns(w));
    CHECK_EQ_INT(fl_assert_ctx.event_no, sim_event_count(w));
    CHECK_EQ_INT(fl_assert_ctx.seed, 77);
}

static void test_assert_ctx(void)
{
    struct sim_world *w = sim_world_new(77);
    for (int i = 0; i < 5; i++)
        sim_schedule(w, 10 * i + 1, check_ctx, NULL);
    sim_run_for(w, 100);
    sim_world_free(w);
}

/* A random workload whose events reschedule themselves with random delays. */
struct chain {
    struct sim_rng *rng;
    int left;
};
static void chain_step(struct sim_world *w, void *ctx)
{
    struct chain *c = ctx;
    if (c->left-- <= 0)
        return;
    sim_schedule_tagged(w, sim_rng_range(c->rng, 0, 1000), SIM_EV_USER, (uint64_t)c->left,
                        chain_step, c);
}

static uint64_t chain_digest(uint64_t seed, int n, int64_t *end_ns)
{
    struct sim_world *w = sim_world_new(seed);
    struct chain c = {sim_rng(w, "chain"), n};
    for (int i = 0; i < 20; i++)
        sim_schedule(w, 0, chain_step, &c);
    sim_run_until(w, INT64_MAX / 2);
    sim_digest_str(w, "history row");
    uint64_t d = sim_digest_value(w);
    char hex[17];
    sim_digest_hex(w, hex);
    CHECK_EQ_INT(strlen(hex), 16);
    *end_ns = sim_now_ns(w);
    sim_world_free(w);
    return d;
}

static void test_digest(void)
{
    int64_t e1, e2, e3;
    uint64_t a = chain_digest(5, 5000, &e1);
    uint64_t b = chain_digest(5, 5000, &e2);
    uint64_t c = chain_digest(6, 5000, &e3);
    CHECK(a == b);
    CHECK(e1 == e2);
    CHECK(a != c);
    uint64_t d = chain_digest(5, 4999, &e3);
    CHECK(a != d);
}

int main(void)
{
    FL_TEST(test_ties);
    FL_TEST(test_zero_delay);
    FL_TEST(test_cancel);
    FL_TEST(test_compaction);
    FL_TEST(test_run_until_stop);
    FL_TEST(test_assert_ctx);
    FL_TEST(test_digest);
    return fl_test_end();
}
