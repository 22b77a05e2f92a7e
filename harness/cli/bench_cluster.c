/*
 * bench_cluster.c: `faultline bench` figures for the cluster (DESIGN §7), measured on
 * real 3-member clusters in the simulator:
 *
 *   idle_cluster_speedup   an idle cluster (heartbeats only): simulated s / wall s;
 *   raft_commits_per_s     a cluster at saturation (100-byte values on 1,000 keys,
 *                          1 ms fsync, 1 MiB messages, 512 in flight): entries the
 *                          leader committed and applied per wall second;
 *   cluster_messages_per_s the same run: peer and client frames delivered (each one
 *                          encoded, sent through the simulated network and decoded)
 *                          per wall second;
 *                          the saturated store is compacted as an operator (or
 *                          kube-apiserver's compactor) compacts etcd: a Compact request
 *                          through Raft to its last SAT_KEEP_REVS revisions whenever it has
 *                          grown SAT_KEEP_REVS / 2 past the last one (about 75 in the
 *                          568,000 commits of 7.5 simulated s). Without it the store held
 *                          every revision it committed, and the group's peak memory grew
 *                          with the machine's speed (1,148 MB at 568,000 commits; 357 MB
 *                          with it). The compactions are not counted as commits;
 *   e2e_speedup, recorded_ops_per_s   through harness/run's run_bench (clients,
 *                          recorder and checkers included).
 *
 * The load comes from raw rpc.proto connections that each keep a fixed window of puts
 * outstanding against the leader, so the figure is the cluster's, not a client
 * library's. Wall time is read only here, never inside a run.
 */
#include "harness/cli/bench.h"
#include "harness/common/common.h"
#include "harness/run/run.h"
#include "harness/sim/sim.h"
#include "nodes/proto/codec.h"
#include "nodes/proto/rpc.pb-c.h"
#include "nodes/server/cluster.h"
#include "nodes/server/pbarena.h"

#define LOAD_CONNS    8
#define LOAD_WINDOW   64 /* puts outstanding per connection: 512 in all */
#define LOAD_KEYS     1000
#define VALUE_BYTES   100
#define SAT_KEEP_REVS 10000 /* revisions the saturated store keeps (see above) */

struct load_conn {
    struct sim_world *w;
    net_sock sock;
    uint64_t next_call;
    uint64_t seq;
    int64_t done_ok;
    int64_t done_err;
    struct srv_pb_arena pb; /* responses are decoded here, dropped at once */
    struct fl_buf out;
    uint8_t frame[256];
};

static size_t make_put(struct load_conn *c, uint8_t *out, size_t cap)
{
    static uint8_t value[VALUE_BYTES];
    if (!value[0])
        memset(value, 'v', sizeof value);
    /* A fixed pseudo-random key sequence (integer LCG), the same on every run:
     * "key000".."key999". */
    c->seq = c->seq * 6364136223846793005u + 1442695040888963407u;
    unsigned k = (unsigned)((c->seq >> 33) % LOAD_KEYS);
    char key[7] = {
        'k', 'e', 'y', (char)('0' + k / 100), (char)('0' + k / 10 % 10), (char)('0' + k % 10), 0};
    Rpc__ClientMsg msg = RPC__CLIENT_MSG__INIT;
    Rpc__PutRequest put = RPC__PUT_REQUEST__INIT;
    put.key.data = (uint8_t *)key;
    put.key.len = 6;
    put.value.data = value;
    put.value.len = sizeof value;
    msg.call_id = c->next_call++;
    msg.method = RPC__METHOD__METHOD_PUT;
    msg.req_case = RPC__CLIENT_MSG__REQ_PUT;
    msg.put = &put;
    struct fl_buf *b = &c->out;
    fl_buf_reset(b);
    size_t n = rpc_client_msg_encode(&msg, b);
    FL_ASSERT(n <= cap);
    memcpy(out, b->data, n);
    return n;
}

static void load_send(struct load_conn *c)
{
    size_t n = make_put(c, c->frame, sizeof c->frame);
    net_send(c->w, c->sock, c->frame, n);
}

static void load_on_message(struct sim_world *w, net_sock s, const uint8_t *p, size_t n, void *ctx)
{
    (void)w;
    (void)s;
    struct load_conn *c = ctx;
    srv_pb_arena_reset(&c->pb);
    Rpc__ServerMsg *m = rpc_server_msg_decode(&c->pb.alloc, n, p);
    if (m && !m->error)
        c->done_ok++;
    else
        c->done_err++;
    load_send(c);
}

static void load_on_close(struct sim_world *w, net_sock s, int reason, void *ctx)
{
    (void)w;
    (void)s;
    (void)reason;
    (void)ctx;
}

static struct srv_cluster *bench_cluster_new(struct sim_world *w)
{
    struct srv_config cfg;
    srv_config_default(&cfg);
    cfg.fsync_latency_ns = FL_MS;
    cfg.max_msg_bytes = 1u << 20;
    cfg.max_inflight_msgs = 512;
    struct srv_cluster *cl = NULL;
    const char *err = NULL;
    if (srv_cluster_create(w, &cfg, NULL, NULL, &cl, &err) != FL_OK)
        return NULL;
    return cl;
}

static int wait_for_leader(struct sim_world *w, struct srv_cluster *cl)
{
    for (int i = 0; i < 200; i++) {
        sim_run_for(w, 50 * FL_MS);
        int l = srv_cluster_leader(cl);
        if (l)
            return l;
    }
    return 0;
}

void bench_idle(const struct bench_ctx *ctx, json_t *out)
{
    (void)ctx;
    struct sim_world *w = sim_world_new(1);
    struct srv_cluster *cl = bench_cluster_new(w);
    if (!cl || !wait_for_leader(w, cl))
        goto done;
    int64_t sim0 = sim_now_ns(w);
    double t0 = bench_now_s();
    double wall = 0;
    while ((wall = bench_now_s() - t0) < 1.5)
        sim_run_for(w, 60 * FL_S);
    double sim_s = (double)(sim_now_ns(w) - sim0) / 1e9;
    json_object_set_new(out, "idle_cluster_speedup", json_real(sim_s / wall));
done:
    srv_cluster_destroy(cl);
    sim_world_free(w);
}

static uint64_t delivered_msgs(struct sim_world *w)
{
    uint64_t n = 0;
    for (int p = 0; p < sim_proc_count(w); p++) {
        struct net_stats st;
        net_stats_get(w, p, &st);
        n += st.delivered_msgs;
    }
    return n;
}

static void compact_done(void *ud, const struct srv_status *st, const struct srv_result *res)
{
    (void)res;
    if (st->code == 0)
        (*(int64_t *)ud)++;
}

/* Compacts the saturated store to its last SAT_KEEP_REVS revisions once it has grown
 * SAT_KEEP_REVS / 2 past the last compaction (one request in flight at a time). */
static void saturation_compact(struct srv_cluster *cl, int leader, int64_t *asked, int64_t *done)
{
    struct srv_member_status st;
    srv_cluster_status(cl, leader, &st);
    if (*asked > *done || st.revision - SAT_KEEP_REVS <= st.compact_revision + SAT_KEEP_REVS / 2)
        return;
    (*asked)++;
    srv_cluster_compact(cl, leader, st.revision - SAT_KEEP_REVS, compact_done, done);
}

static void bench_saturation(json_t *out)
{
    struct sim_world *w = sim_world_new(2);
    struct srv_cluster *cl = bench_cluster_new(w);
    struct load_conn conns[LOAD_CONNS];
    memset(conns, 0, sizeof conns);
    int leader = cl ? wait_for_leader(w, cl) : 0;
    if (!leader)
        goto done;
    int lproc = srv_cluster_node_proc(cl, leader);
    static const struct net_sock_ops ops = {NULL, load_on_message, load_on_close};
    for (int i = 0; i < LOAD_CONNS; i++) {
        char name[32];
        snprintf(name, sizeof name, "bench-client%d", i);
        int proc = sim_proc_add(w, name, NULL, NULL);
        conns[i].w = w;
        conns[i].next_call = 1;
        conns[i].seq = (uint64_t)i + 1;
        srv_pb_arena_init(&conns[i].pb);
        fl_buf_init(&conns[i].out);
        conns[i].sock = net_connect(w, proc, lproc, SRV_CLIENT_PORT, &ops, &conns[i]);
        for (int k = 0; k < LOAD_WINDOW; k++)
            load_send(&conns[i]);
    }
    sim_run_for(w, 200 * FL_MS); /* warm up */
    struct srv_member_status st0, st1;
    srv_cluster_status(cl, leader, &st0);
    uint64_t msgs0 = delivered_msgs(w);
    int64_t sim0 = sim_now_ns(w);
    double t0 = bench_now_s();
    double wall = 0;
    /* FL_BENCH_SIM_MS fixes the simulated length instead (a profiling aid: the same
     * work under callgrind as natively). */
    const char *fixed = getenv("FL_BENCH_SIM_MS");
    int64_t sim_limit = fixed && atoll(fixed) > 0 ? atoll(fixed) * FL_MS : 600 * FL_S;
    int64_t compact_asked = 0, compact_done = 0;
    while (((wall = bench_now_s() - t0) < 3.0 || fixed) && sim_now_ns(w) - sim0 < sim_limit) {
        sim_run_for(w, 50 * FL_MS);
        saturation_compact(cl, leader, &compact_asked, &compact_done);
    }
    srv_cluster_status(cl, leader, &st1);
    uint64_t msgs = delivered_msgs(w) - msgs0;
    /* the puts' entries: the compactions applied are entries too */
    uint64_t commits = st1.raft_applied - st0.raft_applied - (uint64_t)compact_done;
    int64_t refused = 0;
    for (int i = 0; i < LOAD_CONNS; i++)
        refused += conns[i].done_err;
    /* Extra keys: what the figures were computed from (commits must match for equal
     * FL_BENCH_SIM_MS runs of two builds: the workload is deterministic). */
    json_object_set_new(out, "cluster_saturation_commits", json_integer((json_int_t)commits));
    json_object_set_new(out, "cluster_saturation_sim_s",
                        json_real((double)(sim_now_ns(w) - sim0) / 1e9));
    json_object_set_new(out, "cluster_saturation_refused_puts", json_integer(refused));
    json_object_set_new(out, "cluster_saturation_compactions", json_integer(compact_done));
    json_object_set_new(out, "raft_commits_per_s", json_real((double)commits / wall));
    json_object_set_new(out, "cluster_messages_per_s", json_real((double)msgs / wall));
    json_object_set_new(out, "cluster_saturation_sim_speedup",
                        json_real((double)(sim_now_ns(w) - sim0) / 1e9 / wall));
done:
    srv_cluster_destroy(cl);
    sim_world_free(w);
    for (int i = 0; i < LOAD_CONNS; i++)
        if (conns[i].w) {
            srv_pb_arena_close(&conns[i].pb);
            fl_buf_close(&conns[i].out);
        }
}

void bench_e2e(const struct bench_ctx *ctx, json_t *out)
{
    (void)ctx;
    struct run_bench_result r;
    memset(&r, 0, sizeof r);
    if (run_bench(1, 3, 8, 100, 60 * FL_S, &r) == FL_OK && r.wall_s > 0)
        json_object_set_new(out, "e2e_speedup", json_real(r.sim_s / r.wall_s));
    memset(&r, 0, sizeof r);
    if (run_bench(1, 3, 8, 0, 10 * FL_S, &r) == FL_OK && r.wall_s > 0)
        json_object_set_new(out, "recorded_ops_per_s", json_real((double)r.ops_done / r.wall_s));
}

void bench_cluster(const struct bench_ctx *ctx, json_t *out)
{
    (void)ctx;
    bench_saturation(out);
}
