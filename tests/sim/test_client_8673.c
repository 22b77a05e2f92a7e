/*
 * test_client_8673.c: etcd#8673 in the simulator. A follower is cut off from its
 * peers while clients still reach it and it still answers keepalive pings. One
 * client per balancer runs a closed loop of puts and gets (one call out at a time)
 * and a watch over the keys; the test measures, during the partition, each
 * client's availability and watch lag:
 *   - round_robin keeps sending a third of its calls to the cut-off member, and
 *     they time out;
 *   - health_aware (probes: leader, quorum contact; stuck calls) keeps availability
 *     >= 0.99 and its watch lag below two election timeouts;
 *   - with require_leader, a keep-alive stream stuck on the member is closed with
 *     "etcdserver: no leader" and re-established elsewhere.
 */
#include "fl_test.h"

#include "harness/sim/sim.h"
#include "nodes/client/client_int.h"
#include "nodes/proto/errors.h"
#include "nodes/server/cluster.h"

#include <stdio.h>

struct loop {
    struct sim_world *w;
    struct kvc_client *c;
    struct kvc_client **all;
    int nall;
    int n;
    bool running;
    int64_t ok, total; /* during the measured window */
    bool measuring;
    char key[16];
};

static void loop_next(struct sim_world *w, void *ctx);

static void loop_done(void *ud, const struct kvc_result *r)
{
    struct loop *l = ud;
    if (l->measuring) {
        l->total++;
        l->ok += r->status == KVC_OK;
    }
    /* Feed the committed revision of successful writes to every client's watch
     * lag accounting (what harness/run does). */
    if (r->status == KVC_OK && r->method == KVC_PUT) {
        struct kvc_bytes k = {(const uint8_t *)l->key, strlen(l->key)};
        for (int i = 0; i < l->nall; i++) {
            if (l->all[i])
                kvc_client_note_commit(l->all[i], r->header.revision, k, r->return_ns);
        }
    }
    if (l->running)
        sim_schedule(l->w, 10 * FL_MS, loop_next, l);
}

static void loop_next(struct sim_world *w, void *ctx)
{
    struct loop *l = ctx;
    (void)w;
    if (!l->running)
        return;
    char v[32];
    snprintf(v, sizeof(v), "c%d-%d", kvc_client_id(l->c), l->n++);
    struct kvc_bytes k = {(const uint8_t *)l->key, strlen(l->key)};
    struct kvc_bytes val = {(const uint8_t *)v, strlen(v)};
    struct kvc_bytes none = {NULL, 0};
    if (l->n % 2)
        kvc_put(l->c, k, val, 0, NULL, loop_done, l);
    else
        kvc_get(l->c, k, none, NULL, loop_done, l);
}

static void on_watch(void *ud, const struct kvc_watch_resp *r)
{
    (void)ud;
    (void)r;
}

struct ka {
    int ok, ended;
    uint32_t nodes_seen;
    char error[96];
};

static void on_ka(void *ud, const struct kvc_result *r)
{
    struct ka *k = ud;
    if (r->status == KVC_OK) {
        k->ok++;
        k->nodes_seen |= 1u << r->node;
    } else {
        k->ended++;
        snprintf(k->error, sizeof(k->error), "%s", r->error);
    }
}

struct done_flag {
    int ok, found;
};

static void on_flag(void *ud, const struct kvc_result *r)
{
    struct done_flag *f = ud;
    f->ok += r->status == KVC_OK;
    if (r->method == KVC_RANGE && r->op.kv_count > 0)
        f->found +=
            r->op.kvs[0].key.n == 8 && memcmp(r->op.kvs[0].key.p, "lease1/x", 8) == 0 ? 1 : 100;
}

static struct kvc_bytes B(const char *s) {
    return (struct kvc_bytes){(const uint8_t *)s, strlen(s)};
}

static void
on_grant(void *ud, const struct kvc_result *r)
{
    int64_t *id = ud;
    *id = r->status == KVC_OK ? r->lease_id : -1;
}

/* One run; returns the world's digest so that two runs can be compared. */
static uint64_t run_once(uint64_t seed, bool report)
{
    struct sim_world *w = sim_world_new(seed);
    struct srv_config cfg;
    srv_config_default(&cfg);
    struct srv_cluster *cl;
    const char *err = NULL;
    FL_ASSERT(srv_cluster_create(w, &cfg, NULL, NULL, &cl, &err) == 0);
    struct kvc_endpoint eps[3];
    for (int i = 0; i < 3; i++)
        eps[i] = (struct kvc_endpoint){i + 1, srv_cluster_node_proc(cl, i + 1)};
    /* Clients 1-4 run the closed loop; client 5 (health_aware) only watches, so
     * only its probes can tell it the member is cut off. */
    enum lb_kind kinds[5] = {LB_PINNED_RANDOM, LB_PINNED_BLACKLIST, LB_ROUND_ROBIN, LB_HEALTH_AWARE,
                             LB_HEALTH_AWARE};
    struct kvc_client *cs[5];
    struct loop loops[4];
    for (int i = 0; i < 5; i++) {
        struct kvc_config kc;
        kvc_config_default(&kc);
        kc.id = i + 1;
        kc.balancer = kinds[i];
        kc.endpoints = eps;
        kc.endpoint_count = 3;
        FL_ASSERT(kvc_client_new(w, &kc, &cs[i], &err) == 0);
    }
    for (int i = 0; i < 100 && srv_cluster_leader(cl) == 0; i++)
        sim_run_for(w, 100 * FL_MS);
    int leader = srv_cluster_leader(cl);
    CHECK(leader != 0);
    /* The victim is the member the pinned_blacklist client pinned; if that is the
     * leader, leadership moves away first (the victim must be a follower). */
    int64_t lease = 0;
    struct kvc_request g;
    memset(&g, 0, sizeof(g));
    g.method = KVC_LEASE_GRANT;
    g.ttl_s = 10;
    kvc_call(cs[1], &g, NULL, on_grant, &lease);
    sim_run_for(w, 1 * FL_S);
    CHECK(lease > 0);
    int victim = cs[1]->lb.pinned + 1;
    if (victim == leader) {
        srv_cluster_move_leader(cl, 0, victim == 1 ? 2 : 1, NULL, NULL);
        sim_run_for(w, 2 * FL_S);
        leader = srv_cluster_leader(cl);
    }
    CHECK(victim != leader && leader != 0);
    struct kvc_client *all[7] = {cs[0], cs[1], cs[2], cs[3], cs[4], NULL, NULL};
    for (int i = 0; i < 4; i++) {
        loops[i] = (struct loop){w, cs[i], all, 7, 0, true, 0, 0, false, ""};
        snprintf(loops[i].key, sizeof(loops[i].key), "k%d", i);
        struct kvc_watch_req wr;
        memset(&wr, 0, sizeof(wr));
        wr.key = (struct kvc_bytes){(const uint8_t *)"k", 1};
        wr.range_end = (struct kvc_bytes){(const uint8_t *)"l", 1};
        kvc_watch(cs[i], &wr, NULL, on_watch, NULL);
        sim_schedule(w, 0, loop_next, &loops[i]);
    }
    /* pinned_blacklist keeps the lease alive with require_leader, on the victim. */
    struct ka ka = {0, 0, 0, ""};
    struct kvc_call_opts rl = {0, true, 0};
    kvc_lease_keepalive(cs[1], lease, &rl, on_ka, &ka);
    sim_run_for(w, 1 * FL_S);
    CHECK(ka.ok >= 1);
    CHECK(ka.nodes_seen == 1u << victim);
    ka.nodes_seen = 0;
    /* Client 5's watch must live on the victim: re-create it until it lands there. */
    struct kvc_watch_req w5;
    memset(&w5, 0, sizeof(w5));
    w5.key = (struct kvc_bytes){(const uint8_t *)"k", 1};
    w5.range_end = (struct kvc_bytes){(const uint8_t *)"l", 1};
    bool placed = false;
    for (int t = 0; t < 40 && !placed; t++) {
        uint64_t id = kvc_watch(cs[4], &w5, NULL, on_watch, NULL);
        sim_run_for(w, 50 * FL_MS);
        placed = cs[4]->stream_count == 1 && cs[4]->streams_head->ep == victim - 1;
        if (!placed)
            kvc_watch_cancel(cs[4], id);
    }
    CHECK(placed);
    /* Two watch-only pinned_blacklist clients pinned on the victim, one watch with
     * require_leader and one without (created until their pin is the victim). */
    struct kvc_client *bl[2] = {NULL, NULL};
    for (int k = 0; k < 2; k++) {
        for (int t = 0; t < 40; t++) {
            struct kvc_config kc;
            kvc_config_default(&kc);
            kc.id = 10 + 10 * k + t;
            kc.balancer = LB_PINNED_BLACKLIST;
            kc.endpoints = eps;
            kc.endpoint_count = 3;
            FL_ASSERT(kvc_client_new(w, &kc, &bl[k], &err) == 0);
            sim_run_for(w, 50 * FL_MS);
            if (bl[k]->lb.pinned == victim - 1)
                break;
            kvc_client_free(bl[k]);
            bl[k] = NULL;
        }
        CHECK(bl[k] != NULL);
        if (bl[k] == NULL)
            return 0;
        struct kvc_call_opts o = {0, k == 1, 0};
        kvc_watch(bl[k], &w5, &o, on_watch, NULL);
        all[5 + k] = bl[k];
    }
    /* bl[0] also keeps a 3 s lease alive on the victim without require_leader, with
     * a key attached; cs[1]'s 10 s lease (require_leader) gets a key too. */
    int64_t lease0 = 0;
    g.ttl_s = 3;
    kvc_call(bl[0], &g, NULL, on_grant, &lease0);
    sim_run_for(w, 500 * FL_MS);
    CHECK(lease0 > 0);
    struct done_flag pd = {0, 0};
    kvc_put(bl[0], B("lease0/x"), B("1"), lease0, NULL, on_flag, &pd);
    kvc_put(cs[1], B("lease1/x"), B("1"), lease, NULL, on_flag, &pd);
    struct ka ka0 = {0, 0, 0, ""};
    kvc_lease_keepalive(bl[0], lease0, NULL, on_ka, &ka0);
    sim_run_for(w, 500 * FL_MS);
    CHECK_EQ_INT(pd.ok, 2);
    CHECK(ka0.ok >= 1);
    struct kvc_stats before[5];
    for (int i = 0; i < 5; i++)
        kvc_client_stats(cs[i], &before[i]);

    /* Cut the victim off from its peers; clients still reach it. */
    int a = srv_cluster_node_proc(cl, victim);
    int b[2], nb = 0;
    for (int s = 1; s <= 3; s++) {
        if (s != victim)
            b[nb++] = srv_cluster_node_proc(cl, s);
    }
    net_partition(w, &a, 1, b, (size_t)nb, false);
    for (int i = 0; i < 4; i++)
        loops[i].measuring = true;
    int ka0_before = ka0.ok;
    sim_run_for(w, 10 * FL_S);
    for (int i = 0; i < 4; i++)
        loops[i].measuring = false;
    struct kvc_stats st[5];
    kvc_client_stats(cs[4], &st[4]);
    if (report)
        fprintf(stderr, "watch-only health_aware: watch_max_stall_ms %lld reconnects %lld\n",
                (long long)st[4].watch_max_stall_ms, (long long)st[4].stream_reconnects);
    CHECK(st[4].stream_reconnects > before[4].stream_reconnects);
    CHECK(st[4].watch_max_stall_ms < 2 * 1000);
    struct kvc_stats sb[2];
    kvc_client_stats(bl[0], &sb[0]);
    kvc_client_stats(bl[1], &sb[1]);
    if (report)
        fprintf(stderr, "watch-only pinned_blacklist: stall %lld ms; with require_leader %lld ms\n",
                (long long)sb[0].watch_max_stall_ms, (long long)sb[1].watch_max_stall_ms);
    /* Without require_leader the watch hears nothing for the whole partition. */
    CHECK(sb[0].watch_max_stall_ms >= 9000);
    CHECK_EQ_INT(sb[0].stream_reconnects, 0);
    /* With it, the member cancels after 3 election timeouts ("no leader"), the
     * endpoint is gray-listed and the watch resumes on another member. */
    CHECK(sb[1].watch_max_stall_ms >= 3000 && sb[1].watch_max_stall_ms < 6000);
    CHECK(sb[1].stream_reconnects >= 1);
    for (int i = 0; i < 4; i++) {
        kvc_client_stats(cs[i], &st[i]);
        double avail = loops[i].total ? (double)loops[i].ok / (double)loops[i].total : 0;
        if (report)
            fprintf(stderr,
                    "%-16s ok %3lld/%3lld avail %.3f watch_max_stall_ms %lld retries %lld\n",
                    st[i].balancer, (long long)loops[i].ok, (long long)loops[i].total, avail,
                    (long long)st[i].watch_max_stall_ms, (long long)st[i].retries);
    }
    /* round_robin sends a share of its calls to the cut-off member. */
    CHECK(loops[2].ok < loops[2].total);
    /* health_aware: availability >= 0.99, watch lag below two election timeouts. */
    CHECK(loops[3].total > 100);
    CHECK(loops[3].ok * 100 >= loops[3].total * 99);
    CHECK(st[3].watch_max_stall_ms < 2 * 1000);
    /* The keep-alive stream left the victim and lives on elsewhere. */
    CHECK(st[1].stream_reconnects > before[1].stream_reconnects);
    CHECK_EQ_INT(ka.ended, 0);
    CHECK(ka.nodes_seen != 0 && (ka.nodes_seen & (1u << victim)) == 0);
    /* The keep-alive stuck on the victim never reaches the leader: no answer came,
     * the client gave the lease up only after a TTL of silence, and the lease's key
     * is gone from the cluster; the require_leader lease's key survived. */
    CHECK_EQ_INT(ka0.ok, ka0_before);
    CHECK_EQ_INT(ka0.ended, 1);
    CHECK_EQ_STR(ka0.error, "context deadline exceeded");
    /* The same seen through the stats: acks stop, the stream ends a TTL after the
     * last one; the require_leader watch was closed with "no leader". */
    struct kvc_stats sk[2];
    kvc_client_stats(bl[0], &sk[0]);
    kvc_client_stats(bl[1], &sk[1]);
    CHECK_EQ_INT(sk[0].keepalive_acks, ka0_before);
    CHECK_EQ_INT(sk[0].keepalive_ended, 1);
    CHECK(sk[0].keepalive_ended_ms - sk[0].keepalive_last_ack_ms >= 3000);
    CHECK_EQ_INT(sk[0].streams_no_leader, 0);
    CHECK(sk[1].streams_no_leader >= 1);
    CHECK(sk[1].last_stream_node != victim);
    CHECK_EQ_INT(sk[0].pinned_node, victim);
    struct done_flag gd = {0, 0};
    kvc_get(cs[3], B("lease0/x"), B(""), NULL, on_flag, &gd);
    kvc_get(cs[3], B("lease1/x"), B(""), NULL, on_flag, &gd);
    sim_run_for(w, 500 * FL_MS);
    CHECK_EQ_INT(gd.ok, 2);
    CHECK_EQ_INT(gd.found, 1); /* lease1/x only */
    net_heal(w);
    for (int i = 0; i < 4; i++)
        loops[i].running = false;
    sim_run_for(w, 3 * FL_S);
    for (int i = 0; i < 5; i++)
        kvc_client_free(cs[i]);
    kvc_client_free(bl[0]);
    kvc_client_free(bl[1]);
    srv_cluster_destroy(cl);
    uint64_t digest = sim_digest_value(w);
    sim_world_free(w);
    return digest;
}

int main(void)
{
    uint64_t a = run_once(8673, true);
    /* Same seed, same run: the client draws only from its process's stream. */
    uint64_t b = run_once(8673, false);
    CHECK(a == b);
    return fl_test_end();
}
