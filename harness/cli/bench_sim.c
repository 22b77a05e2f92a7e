/*
 * bench_sim.c: `sim_events_per_s` for faultline bench (DESIGN §7): events scheduled
 * and processed per wall second by the bare simulator, through the real queue,
 * digest folding included.
 *
 * The workload is the classic "hold" model: BENCH_SIM_PENDING events stay pending
 * at all times; each event, when it runs, schedules one more at a random delay
 * (uniform up to 1 ms, drawn from a world stream), until BENCH_SIM_EVENTS have run.
 * A quarter of them are process timers, and one in eight timers is cancelled and
 * restarted before it fires, so the figure includes the timer and cancel paths the
 * nodes use. The best of three rounds is reported.
 *
 * An extra key, sim_net_msgs_per_s, measures the network alone: 100-byte frames
 * on connections between 4 processes (with 1 ms +- 0.5 ms latency, 64 frames in
 * flight per connection), each frame copied, CRC-framed, queued, delivered and
 * answered by the receiver's callback.
 *
 * The machine is often shared, so next to the wall-clock figure the key
 * sim_events_per_cpu_s gives the same workload per second of this thread's CPU
 * time: what one dedicated core does, whatever the load average.
 */
#include "harness/cli/bench.h"
#include "harness/sim/sim.h"

#include <time.h>

#define BENCH_SIM_PENDING 10000
#define BENCH_SIM_EVENTS  3000000
#define BENCH_SIM_ROUNDS  3

struct bench_sim_load {
    struct sim_rng *rng;
    int proc;
    uint64_t left;
};

static void bench_sim_tick(struct sim_world *w, void *ctx)
{
    struct bench_sim_load *b = ctx;
    if (b->left == 0)
        return;
    b->left--;
    uint64_t r = sim_rng_u64(b->rng);
    int64_t delay_ns = 1 + (int64_t)(r % FL_MS);
    if ((r >> 32) % 4 != 0) {
        sim_schedule(w, delay_ns, bench_sim_tick, b);
        return;
    }
    sim_handle h = sim_timer_start(w, b->proc, delay_ns, bench_sim_tick, b);
    if ((r >> 40) % 8 == 0) {
        sim_cancel(w, h);
        sim_timer_start(w, b->proc, delay_ns, bench_sim_tick, b);
    }
}

static double bench_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Returns events per wall second of one round; *cpu_rate per CPU second. */
static double bench_sim_round(uint64_t seed, double *cpu_rate)
{
    struct sim_world *w = sim_world_new(seed);
    struct bench_sim_load b = {sim_rng(w, "bench"), 0, BENCH_SIM_EVENTS};
    b.proc = sim_proc_add(w, "bench", NULL, NULL);
    for (int i = 0; i < BENCH_SIM_PENDING; i++)
        sim_schedule(w, 1 + (int64_t)sim_rng_below(b.rng, FL_MS), bench_sim_tick, &b);
    double t0 = bench_now_s(), c0 = bench_cpu_s();
    while (sim_step(w))
        ;
    double dt = bench_now_s() - t0, dc = bench_cpu_s() - c0;
    uint64_t events = sim_event_count(w);
    *cpu_rate = dc > 0 ? (double)events / dc : 0;
    FL_ASSERT(events >= BENCH_SIM_EVENTS);
    sim_world_free(w);
    return dt > 0 ? (double)events / dt : 0;
}

#define BENCH_NET_PROCS    4
#define BENCH_NET_MSGS     2000000
#define BENCH_NET_INFLIGHT 64

struct bench_net {
    uint64_t left;
    net_sock socks[BENCH_NET_PROCS];
    uint8_t payload[100];
};

static void bench_net_msg(struct sim_world *w, net_sock s, const uint8_t *p, size_t n, void *ctx)
{
    struct bench_net *b = ctx;
    (void)p;
    if (b->left == 0)
        return;
    b->left--;
    net_send(w, s, b->payload, n); /* answer on the same connection */
}

static void bench_net_accept(struct sim_world *w, net_sock s, int peer, void *ctx)
{
    static const struct net_sock_ops ops = {NULL, bench_net_msg, NULL};
    (void)peer;
    net_sock_bind(w, s, &ops, ctx);
}

static double bench_net_round(uint64_t seed)
{
    struct sim_world *w = sim_world_new(seed);
    struct bench_net b = {.left = BENCH_NET_MSGS};
    static const struct net_sock_ops ops = {NULL, bench_net_msg, NULL};
    char name[16];
    for (int i = 0; i < BENCH_NET_PROCS; i++) {
        snprintf(name, sizeof name, "n%d", i);
        sim_proc_add(w, name, NULL, NULL);
        net_listen(w, i, 1, bench_net_accept, &b);
    }
    for (int i = 0; i < BENCH_NET_PROCS; i++) {
        b.socks[i] = net_connect(w, i, (i + 1) % BENCH_NET_PROCS, 1, &ops, &b);
        for (int k = 0; k < BENCH_NET_INFLIGHT; k++)
            net_send(w, b.socks[i], b.payload, sizeof b.payload);
    }
    double t0 = bench_now_s();
    while (sim_step(w))
        ;
    double dt = bench_now_s() - t0;
    uint64_t delivered = 0;
    for (int i = 0; i < BENCH_NET_PROCS; i++) {
        struct net_stats st;
        net_stats_get(w, i, &st);
        delivered += st.delivered_msgs;
    }
    FL_ASSERT(delivered >= BENCH_NET_MSGS);
    sim_world_free(w);
    return dt > 0 ? (double)delivered / dt : 0;
}

void bench_sim(const struct bench_ctx *ctx, json_t *out)
{
    (void)ctx;
    double best = 0, best_cpu = 0;
    for (int i = 0; i < BENCH_SIM_ROUNDS; i++) {
        double cpu;
        double r = bench_sim_round(1 + (uint64_t)i, &cpu);
        best = r > best ? r : best;
        best_cpu = cpu > best_cpu ? cpu : best_cpu;
    }
    json_object_set_new(out, "sim_events_per_s", json_integer((json_int_t)best));
    json_object_set_new(out, "sim_events_per_cpu_s", json_integer((json_int_t)best_cpu));
    best = 0;
    for (int i = 0; i < 2; i++) {
        double r = bench_net_round(1 + (uint64_t)i);
        if (r > best)
            best = r;
    }
    json_object_set_new(out, "sim_net_msgs_per_s", json_integer((json_int_t)best));
}
