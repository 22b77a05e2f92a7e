/*
 * test_client_cluster.c: nodes/client against a real 3-member cluster
 * (nodes/server/cluster.h) in the simulator: a put/get round trip per balancer,
 * failover after a kill for every policy, the pinned_blacklist fixed wait, the
 * keepalive switch on a paused member, writes that are never retried after they
 * were sent (and the bug switch that does retry them), and a watch that sees the
 * writes and resumes on another member after its member dies.
 */
#include "fl_test.h"

#include "harness/common/bugs.h"
#include "harness/sim/sim.h"
#include "nodes/client/client.h"
#include "nodes/proto/errors.h"
#include "nodes/server/cluster.h"

#include <stdio.h>

struct env {
    struct sim_world *w;
    struct srv_cluster *cl;
    struct kvc_client *c;
    bool bad[8]; /* slots considered dead / cut off by the test */
};

struct done {
    int calls;
    struct kvc_status_info si;
    enum kvc_status status;
    int code;
    char error[128];
    char value[64];
    int64_t rev;
    int node;
    int attempts;
    bool answered;
    int64_t lease_id;
};

static void on_done(void *ud, const struct kvc_result *r)
{
    struct done *d = ud;
    d->calls++;
    d->status = r->status;
    d->code = r->code;
    snprintf(d->error, sizeof(d->error), "%s", r->error);
    d->rev = r->header.revision;
    d->node = r->node;
    d->attempts = r->attempts;
    d->answered = r->answered;
    d->lease_id = r->lease_id;
    d->value[0] = 0;
    if (r->method == KVC_RANGE && r->op.kv_count > 0) {
        size_t n = r->op.kvs[0].value.n < 63 ? r->op.kvs[0].value.n : 63;
        memcpy(d->value, r->op.kvs[0].value.p, n);
        d->value[n] = 0;
    }
}

static bool member_bad(void *ud, int node)
{
    struct env *e = ud;
    return node >= 0 && node < 8 && e->bad[node];
}

static struct kvc_bytes B(const char *s) {
    struct kvc_bytes b = {(const uint8_t *)s, strlen(s)};
    return b;
}

static void
env_open_n(struct env *e, uint64_t seed, enum lb_kind kind, int64_t timeout_ms, int nodes)
{
    memset(e, 0, sizeof(*e));
    e->w = sim_world_new(seed);
    struct srv_config cfg;
    srv_config_default(&cfg);
    cfg.nodes = nodes;
    const char *err = NULL;
    int rc = srv_cluster_create(e->w, &cfg, NULL, NULL, &e->cl, &err);
    FL_ASSERTF(rc == 0, "cluster: %s", err ? err : "?");
    struct kvc_endpoint eps[8];
    for (int i = 0; i < nodes; i++) {
        eps[i].node = i + 1;
        eps[i].proc = srv_cluster_node_proc(e->cl, i + 1);
    }
    struct kvc_config kc;
    kvc_config_default(&kc);
    kc.id = 1;
    kc.balancer = kind;
    kc.timeout_ms = timeout_ms;
    kc.endpoints = eps;
    kc.endpoint_count = (size_t)nodes;
    kc.member_bad = member_bad;
    kc.member_bad_ud = e;
    rc = kvc_client_new(e->w, &kc, &e->c, &err);
    FL_ASSERTF(rc == 0, "client: %s", err ? err : "?");
    /* Let the cluster elect a leader. */
    for (int i = 0; i < 100 && srv_cluster_leader(e->cl) == 0; i++)
        sim_run_for(e->w, 100 * FL_MS);
    FL_ASSERT(srv_cluster_leader(e->cl) != 0);
}

static void env_open(struct env *e, uint64_t seed, enum lb_kind kind, int64_t timeout_ms)
{
    env_open_n(e, seed, kind, timeout_ms, 3);
}

static void env_close(struct env *e)
{
    kvc_client_free(e->c);
    srv_cluster_destroy(e->cl);
    sim_world_free(e->w);
    fl_bug_reset();
}

/* Runs until d->calls changes or limit passes. */
static void wait_done(struct env *e, struct done *d, int calls, int64_t limit_ns)
{
    int64_t end = sim_now_ns(e->w) + limit_ns;
    while (d->calls < calls && sim_now_ns(e->w) < end)
        sim_run_for(e->w, 5 * FL_MS);
}

static void do_put(struct env *e, const char *k, const char *v, struct done *d)
{
    int want = d->calls + 1;
    kvc_put(e->c, B(k), B(v), 0, NULL, on_done, d);
    wait_done(e, d, want, 30 * FL_S);
}

static void do_get(struct env *e, const char *k, struct done *d)
{
    int want = d->calls + 1;
    kvc_get(e->c, B(k), B(""), NULL, on_done, d);
    wait_done(e, d, want, 30 * FL_S);
}

static void test_round_trip(enum lb_kind kind)
{
    struct env e;
    env_open(&e, 11 + kind, kind, 2000);
    struct done d = {0};
    do_put(&e, "a", "1", &d);
    CHECK_EQ_INT(d.calls, 1);
    CHECK_EQ_INT(d.status, KVC_OK);
    CHECK(d.rev >= 2);
    int64_t put_rev = d.rev;
    do_get(&e, "a", &d);
    CHECK_EQ_INT(d.status, KVC_OK);
    CHECK_EQ_STR(d.value, "1");
    CHECK(d.rev >= put_rev);
    do_get(&e, "missing", &d);
    CHECK_EQ_INT(d.status, KVC_OK);
    CHECK_EQ_STR(d.value, "");
    struct kvc_stats st;
    kvc_client_stats(e.c, &st);
    CHECK_EQ_INT(st.ok, 3);
    CHECK_EQ_INT(st.fail + st.unknown, 0);
    CHECK(st.connections_opened >= 1);
    if (kind == LB_ROUND_ROBIN || kind == LB_HEALTH_AWARE || kind == LB_PINNED_RANDOM)
        CHECK_EQ_INT(st.connections_held, 3);
    else
        CHECK_EQ_INT(st.connections_held, 1);
    env_close(&e);
}

/* Kill the member the client used; every policy must recover. */
static void test_failover_kill(enum lb_kind kind)
{
    struct env e;
    env_open(&e, 21 + kind, kind, 2000);
    struct done d = {0};
    do_put(&e, "k", "v0", &d);
    CHECK_EQ_INT(d.status, KVC_OK);
    int victim = d.node;
    CHECK(victim >= 1 && victim <= 3);
    srv_cluster_kill(e.cl, victim);
    e.bad[victim] = true;
    kvc_client_note_fault(e.c, sim_now_ns(e.w));
    /* Keep issuing reads until one succeeds (a new leader may take a while). */
    int ok = 0;
    for (int i = 0; i < 30 && ok < 3; i++) {
        do_get(&e, "k", &d);
        if (d.status == KVC_OK) {
            ok++;
            CHECK(d.node != victim);
        }
    }
    CHECK_EQ_INT(ok, 3);
    struct kvc_stats st;
    kvc_client_stats(e.c, &st);
    CHECK_EQ_INT(st.fault_count, 1);
    CHECK(st.failover_ms[0] >= 0);
    /* No retry storm against the dead member. */
    CHECK(st.retries_to_bad <= 3);
    env_close(&e);
}

static int64_t now_ms(struct env *e)
{
    return sim_now_ns(e->w) / FL_MS;
}

/* pinned_blacklist keeps a failed endpoint out for the dial timeout (5 s) even when
 * it is back at once; round_robin uses it again as soon as it reconnects. */
static void test_blacklist_wait(enum lb_kind kind)
{
    struct env e;
    env_open(&e, 31 + kind, kind, 2000);
    struct done d = {0};
    do_get(&e, "k", &d);
    CHECK_EQ_INT(d.status, KVC_OK);
    int p = d.node;
    int64_t t0 = now_ms(&e);
    srv_cluster_kill(e.cl, p);
    sim_run_for(e.w, 200 * FL_MS);
    srv_cluster_restart(e.cl, p);
    int used_p_early = 0, ok = 0, x = 0;
    while (now_ms(&e) < t0 + 4500) {
        do_get(&e, "k", &d);
        if (d.status == KVC_OK) {
            ok++;
            used_p_early += d.node == p;
        }
        /* At +1 s kill the member now in use: the choice is then between P (back,
         * but in its unhealthy wait) and the third member. */
        if (x == 0 && now_ms(&e) >= t0 + 1000 && d.status == KVC_OK && d.node != p) {
            x = d.node;
            srv_cluster_kill(e.cl, x);
        }
        sim_run_for(e.w, 50 * FL_MS);
    }
    CHECK(x != 0);
    CHECK(ok > 10);
    if (kind == LB_PINNED_BLACKLIST) {
        CHECK_EQ_INT(used_p_early, 0);
    } else if (kind == LB_ROUND_ROBIN) {
        CHECK(used_p_early > 0);
    }
    env_close(&e);
}

/* A paused member stops answering keepalive pings: with a long call timeout the
 * read stuck there is freed by the keepalive timeout (2 s + 6 s) and retried on
 * another member. */
static void test_keepalive_pause(void)
{
    struct env e;
    env_open(&e, 41, LB_PINNED_BLACKLIST, 30000);
    struct done d = {0};
    do_get(&e, "k", &d);
    CHECK_EQ_INT(d.status, KVC_OK);
    int p = d.node;
    srv_cluster_pause(e.cl, p);
    int64_t t0 = now_ms(&e);
    do_get(&e, "k", &d);
    int64_t took = now_ms(&e) - t0;
    CHECK_EQ_INT(d.status, KVC_OK);
    CHECK(d.node != p);
    CHECK(took >= 6000 && took <= 9000);
    struct kvc_stats st;
    kvc_client_stats(e.c, &st);
    CHECK_EQ_INT(st.pings_failed, 1);
    CHECK(st.retries >= 1);
    srv_cluster_resume(e.cl, p);
    env_close(&e);
}

/* health_aware: a write stuck on a paused follower ends (unknown, never re-sent)
 * once the member's probes have gone unanswered for probe_dead_ms (2 s), instead
 * of the keepalive time + timeout; the next call goes to a live member. */
static void test_health_aware_pause(void)
{
    struct env e;
    env_open(&e, 43, LB_HEALTH_AWARE, 30000);
    sim_run_for(e.w, 1 * FL_S); /* probes answered everywhere */
    int p = srv_cluster_leader(e.cl) == 1 ? 2 : 1;
    srv_cluster_pause(e.cl, p);
    struct done d = {0};
    struct kvc_call_opts direct = {0, false, p};
    int64_t t0 = now_ms(&e);
    kvc_put(e.c, B("hp"), B("v1"), 0, &direct, on_done, &d);
    wait_done(&e, &d, 1, 30 * FL_S);
    int64_t took = now_ms(&e) - t0;
    CHECK_EQ_INT(d.status, KVC_UNKNOWN);
    CHECK_EQ_INT(d.attempts, 1);
    CHECK(took >= 2000 && took < 3500);
    struct kvc_stats st;
    kvc_client_stats(e.c, &st);
    CHECK(st.probe_drops >= 1);
    CHECK_EQ_INT(st.pings_failed, 0);
    do_put(&e, "hp", "v2", &d);
    CHECK_EQ_INT(d.status, KVC_OK);
    CHECK(d.node != p);
    srv_cluster_resume(e.cl, p);
    env_close(&e);
}

static void isolate_slot(struct env *e, int slot)
{
    int a = srv_cluster_node_proc(e->cl, slot);
    int b[2], nb = 0;
    for (int i = 1; i <= 3; i++) {
        if (i != slot)
            b[nb++] = srv_cluster_node_proc(e->cl, i);
    }
    net_partition(e->w, &a, 1, b, (size_t)nb, false);
    e->bad[slot] = true;
}

/* A write sent to a member cut off from its peers times out: unknown, one attempt,
 * never retried. Reads with require_leader get "no leader" (Unavailable) there and
 * are retried elsewhere. */
static void test_no_retry_sent_writes(void)
{
    struct env e;
    env_open(&e, 51, LB_ROUND_ROBIN, 2000);
    isolate_slot(&e, 1);
    sim_run_for(e.w, 3 * FL_S); /* slot 1 loses its leader */
    struct done d = {0};
    struct kvc_call_opts direct = {0, false, 1};
    int want = d.calls + 1;
    kvc_put(e.c, B("w"), B("x1"), 0, &direct, on_done, &d);
    wait_done(&e, &d, want, 10 * FL_S);
    CHECK_EQ_INT(d.status, KVC_UNKNOWN);
    CHECK_EQ_INT(d.attempts, 1);
    CHECK_EQ_INT(d.code, RPC_CODE_DEADLINE_EXCEEDED);
    CHECK(!d.answered);
    struct kvc_stats st;
    kvc_client_stats(e.c, &st);
    CHECK_EQ_INT(st.retries, 0);
    CHECK_EQ_INT(st.unknown, 1);
    /* Reads through the balancer: the isolated member answers "no leader". */
    struct kvc_call_opts rl = {0, true, 0};
    int retried = 0, ok = 0;
    for (int i = 0; i < 6; i++) {
        want = d.calls + 1;
        kvc_get(e.c, B("w"), B(""), &rl, on_done, &d);
        wait_done(&e, &d, want, 10 * FL_S);
        ok += d.status == KVC_OK;
        retried += d.attempts > 1;
        CHECK(d.node != 1);
    }
    CHECK_EQ_INT(ok, 6);
    CHECK(retried >= 1);
    kvc_client_stats(e.c, &st);
    CHECK(st.read_retries >= 1);
    CHECK_EQ_INT(st.writes_resent, 0);
    /* A write with require_leader to the isolated member is refused at once. */
    struct kvc_call_opts rl1 = {0, true, 1};
    want = d.calls + 1;
    kvc_put(e.c, B("w"), B("x2"), 0, &rl1, on_done, &d);
    wait_done(&e, &d, want, 10 * FL_S);
    CHECK_EQ_STR(d.error, "etcdserver: no leader");
    CHECK_EQ_INT(d.code, RPC_CODE_UNAVAILABLE);
    CHECK_EQ_INT(d.attempts, 1);
    CHECK_EQ_INT(d.status, KVC_FAIL);
    net_heal(e.w);
    env_close(&e);
}

/* FL_BUG(CLIENT_RETRY_SENT_WRITES): the same write goes out again elsewhere. */
static void test_bug_retry_sent_writes(void)
{
    struct env e;
    env_open(&e, 61, LB_ROUND_ROBIN, 3000);
    CHECK(fl_bug_enable("client.retry_sent_writes"));
    isolate_slot(&e, 2);
    sim_run_for(e.w, 3 * FL_S);
    struct done d = {0};
    int multi = 0;
    for (int i = 0; i < 6; i++) {
        char v[16];
        snprintf(v, sizeof(v), "v%d", i);
        do_put(&e, "b", v, &d);
        multi += d.attempts > 1;
    }
    CHECK(multi >= 1);
    struct kvc_stats st;
    kvc_client_stats(e.c, &st);
    CHECK(st.retries >= 1);
    CHECK(st.writes_resent >= 1);
    net_heal(e.w);
    env_close(&e);
}

struct wlog {
    int responses, events, canceled;
    int64_t last_rev;
    bool ordered;
    uint32_t reconnects;
};

static void on_watch(void *ud, const struct kvc_watch_resp *r)
{
    struct wlog *l = ud;
    l->responses++;
    l->canceled += r->canceled;
    l->reconnects = r->reconnects;
    for (size_t i = 0; i < r->event_count; i++) {
        if (r->events[i].kv.mod_rev <= l->last_rev)
            l->ordered = false;
        l->last_rev = r->events[i].kv.mod_rev;
        l->events++;
    }
}

/* A watch sees every write in order, and resumes without a gap on another member
 * after its member dies. */
static void test_watch_resume(void)
{
    struct env e;
    env_open(&e, 71, LB_ROUND_ROBIN, 2000);
    struct wlog l = {0, 0, 0, 0, true, 0};
    struct kvc_watch_req wr;
    memset(&wr, 0, sizeof(wr));
    wr.key = B("w/");
    wr.range_end = B("w0");
    uint64_t wid = kvc_watch(e.c, &wr, NULL, on_watch, &l);
    CHECK(wid > 0);
    sim_run_for(e.w, 100 * FL_MS);
    struct done d = {0};
    for (int i = 0; i < 5; i++) {
        do_put(&e, "w/a", "x", &d);
        CHECK_EQ_INT(d.status, KVC_OK);
        kvc_client_note_commit(e.c, d.rev, B("w/a"), sim_now_ns(e.w));
    }
    sim_run_for(e.w, 100 * FL_MS);
    CHECK_EQ_INT(l.events, 5);
    /* Kill every member but the leader's peers in turn: kill the watch's member by
     * killing each non-leader slot once (one of them, or the leader, holds it). */
    int leader = srv_cluster_leader(e.cl);
    int victim = leader == 1 ? 2 : 1;
    srv_cluster_kill(e.cl, victim);
    int ok_puts = 0;
    for (int i = 0; i < 5; i++) {
        do_put(&e, "w/b", "y", &d);
        if (d.status == KVC_OK) {
            ok_puts++;
            kvc_client_note_commit(e.c, d.rev, B("w/b"), sim_now_ns(e.w));
        }
    }
    CHECK(ok_puts >= 3);
    do_put(&e, "zz", "outside", &d); /* not in the watched range */
    sim_run_for(e.w, 2 * FL_S);
    CHECK(l.ordered);
    CHECK(l.events >= 5 + ok_puts && l.events <= 10);
    CHECK(l.reconnects >= 1);
    CHECK_EQ_INT(l.canceled, 0);
    struct kvc_stats st;
    kvc_client_stats(e.c, &st);
    CHECK(st.watch_max_stall_ms < 1500);
    CHECK_EQ_INT(kvc_watch_cancel(e.c, wid), 0);
    CHECK_EQ_INT(l.canceled, 1);
    CHECK_EQ_INT(kvc_watch_cancel(e.c, wid), FL_ENOENT);
    env_close(&e);
}

struct kalog {
    int ok, ended;
    int64_t ttl;
    char error[96];
};

static void on_ka(void *ud, const struct kvc_result *r)
{
    struct kalog *k = ud;
    if (r->status == KVC_OK) {
        k->ok++;
        k->ttl = r->ttl_s;
    } else {
        k->ended++;
        snprintf(k->error, sizeof(k->error), "%s", r->error);
    }
}

struct dupwatch {
    char seen[64][16];
    int n, dups;
};

static void on_dup_watch(void *ud, const struct kvc_watch_resp *r)
{
    struct dupwatch *d = ud;
    for (size_t i = 0; i < r->event_count; i++) {
        char v[16];
        size_t n = r->events[i].kv.value.n < 15 ? r->events[i].kv.value.n : 15;
        memcpy(v, r->events[i].kv.value.p, n);
        v[n] = 0;
        for (int k = 0; k < d->n; k++)
            d->dups += strcmp(d->seen[k], v) == 0;
        if (d->n < 64)
            snprintf(d->seen[d->n++], sizeof(d->seen[0]), "%s", v);
    }
}

/* Slow replication (400 ms one way between members) makes each write take longer
 * than a third of the call timeout. Without the bug every unique value is applied
 * at most once; with client.retry_sent_writes the client sends writes again and
 * some value shows up twice on a watch: the at-most-once violation the bug's
 * scenario must catch. */
static int dup_writes(bool bug)
{
    struct env e;
    env_open(&e, 91, LB_ROUND_ROBIN, 3000);
    if (bug)
        CHECK(fl_bug_enable("client.retry_sent_writes"));
    struct net_link slow = {400 * FL_MS, 0, 0, 0, 0};
    for (int a = 1; a <= 3; a++) {
        for (int b = 1; b <= 3; b++) {
            if (a != b)
                net_link_set(e.w, srv_cluster_node_proc(e.cl, a), srv_cluster_node_proc(e.cl, b),
                             &slow);
        }
    }
    sim_run_for(e.w, 5 * FL_S);
    struct dupwatch dw = {.n = 0, .dups = 0};
    struct kvc_watch_req wr;
    memset(&wr, 0, sizeof(wr));
    wr.key = B("dup");
    kvc_watch(e.c, &wr, NULL, on_dup_watch, &dw);
    sim_run_for(e.w, 200 * FL_MS);
    struct done d = {0};
    for (int i = 0; i < 8; i++) {
        char v[16];
        snprintf(v, sizeof(v), "u%d", i);
        do_put(&e, "dup", v, &d);
    }
    sim_run_for(e.w, 5 * FL_S);
    CHECK(dw.n >= 4);
    env_close(&e);
    return dw.dups;
}

struct wend {
    int canceled;
    int64_t compact_rev;
    int code;
    char reason[96];
};

static void on_wend(void *ud, const struct kvc_watch_resp *r)
{
    struct wend *we = ud;
    if (!r->canceled)
        return;
    we->canceled++;
    we->compact_rev = r->compact_revision;
    we->code = r->code;
    snprintf(we->reason, sizeof(we->reason), "%s", r->cancel_reason);
}

/* A watch from a compacted revision ends with the compact revision and etcd's text;
 * a compaction at or below the last one is refused with its text (a definite
 * failure, never unknown). */
static void test_watch_compacted(void)
{
    struct env e;
    env_open(&e, 101, LB_HEALTH_AWARE, 2000);
    struct done d = {0};
    for (int i = 0; i < 5; i++)
        do_put(&e, "c", "v", &d);
    int64_t rev = d.rev;
    struct kvc_request req;
    memset(&req, 0, sizeof(req));
    req.method = KVC_COMPACT;
    req.revision = rev - 1;
    struct done cd = {0};
    kvc_call(e.c, &req, NULL, on_done, &cd);
    wait_done(&e, &cd, 1, 10 * FL_S);
    CHECK_EQ_INT(cd.status, KVC_OK);
    kvc_call(e.c, &req, NULL, on_done, &cd);
    wait_done(&e, &cd, 2, 10 * FL_S);
    CHECK_EQ_INT(cd.status, KVC_FAIL);
    CHECK_EQ_STR(cd.error, "etcdserver: mvcc: required revision has been compacted");
    CHECK_EQ_INT(cd.code, RPC_CODE_OUT_OF_RANGE);
    CHECK_EQ_INT(cd.attempts, 1);
    struct wend we = {0, 0, 0, ""};
    struct kvc_watch_req wr;
    memset(&wr, 0, sizeof(wr));
    wr.key = B("c");
    wr.start_rev = 2;
    kvc_watch(e.c, &wr, NULL, on_wend, &we);
    sim_run_for(e.w, 1 * FL_S);
    CHECK_EQ_INT(we.canceled, 1);
    CHECK_EQ_INT(we.compact_rev, rev - 1);
    CHECK_EQ_STR(we.reason, "etcdserver: mvcc: required revision has been compacted");
    CHECK_EQ_INT(we.code, RPC_CODE_OUT_OF_RANGE);
    /* A range below the compaction is refused too (a read: fail). */
    struct kvc_call_opts o = {0, false, 0};
    memset(&req, 0, sizeof(req));
    req.method = KVC_RANGE;
    req.op.kind = KVC_OP_RANGE;
    req.op.key = B("c");
    req.op.revision = 2;
    struct done rd = {0};
    kvc_call(e.c, &req, &o, on_done, &rd);
    wait_done(&e, &rd, 1, 10 * FL_S);
    CHECK_EQ_INT(rd.status, KVC_FAIL);
    CHECK_EQ_STR(rd.error, "etcdserver: mvcc: required revision has been compacted");
    env_close(&e);
}

/* A 5-member cluster: connections held per policy (grpc1.7: 1, grpc1.0 and
 * grpc1.23: 5), and after a switch the old connection is closed. */
static void test_connections(enum lb_kind kind)
{
    struct env e;
    env_open_n(&e, 111 + kind, kind, 2000, 5);
    struct done d = {0};
    for (int i = 0; i < 10; i++)
        do_get(&e, "x", &d);
    struct kvc_stats st;
    kvc_client_stats(e.c, &st);
    int want = kind == LB_PINNED_BLACKLIST ? 1 : 5;
    CHECK_EQ_INT(st.connections_held, want);
    CHECK_EQ_INT(st.connections_held_max, want);
    /* Kill the member of the last call: the policy moves on. */
    int victim = d.node;
    srv_cluster_kill(e.cl, victim);
    int ok = 0;
    for (int i = 0; i < 20 && ok < 5; i++) {
        do_get(&e, "x", &d);
        ok += d.status == KVC_OK;
    }
    CHECK_EQ_INT(ok, 5);
    kvc_client_stats(e.c, &st);
    if (kind == LB_PINNED_BLACKLIST) {
        CHECK_EQ_INT(st.connections_held, 1); /* the old one closed, one new */
        CHECK(st.connections_closed >= 1);
        CHECK(st.switches >= 1);
    } else {
        CHECK_EQ_INT(st.connections_held, 4); /* the dead member's is gone */
    }
    env_close(&e);
}

static void test_at_most_once(void)
{
    CHECK_EQ_INT(dup_writes(false), 0);
    CHECK(dup_writes(true) > 0);
}

static void test_lease_keepalive(void)
{
    struct env e;
    env_open(&e, 81, LB_HEALTH_AWARE, 2000);
    struct kvc_request req;
    memset(&req, 0, sizeof(req));
    req.method = KVC_LEASE_GRANT;
    req.ttl_s = 3;
    struct done g = {0};
    kvc_call(e.c, &req, NULL, on_done, &g);
    wait_done(&e, &g, 1, 10 * FL_S);
    CHECK_EQ_INT(g.status, KVC_OK);
    CHECK(g.lease_id != 0);
    struct kalog k = {0, 0, 0, ""};
    uint64_t sid = kvc_lease_keepalive(e.c, g.lease_id, NULL, on_ka, &k);
    sim_run_for(e.w, 5 * FL_S);
    CHECK(k.ok >= 4); /* at once, then every TTL/3 = 1 s */
    CHECK_EQ_INT(k.ttl, 3);
    CHECK_EQ_INT(k.ended, 0);
    CHECK_EQ_INT(kvc_lease_keepalive_stop(e.c, sid), 0);
    CHECK_EQ_INT(k.ended, 1);
    /* Without keep-alives the lease expires on the server. */
    sim_run_for(e.w, 5 * FL_S);
    memset(&req, 0, sizeof(req));
    req.method = KVC_LEASE_TTL;
    req.lease_id = g.lease_id;
    struct done t = {0};
    kvc_call(e.c, &req, NULL, on_done, &t);
    wait_done(&e, &t, 1, 10 * FL_S);
    CHECK(t.status == KVC_OK || t.status == KVC_FAIL);
    env_close(&e);
}

/* clientv3 3.4 sendKeepAliveLoop: while a keep-alive is unanswered, it is resent on
 * every 500 ms tick (nextKeepAlive is only moved by an answer). The client's frames
 * are held for 2.4 s right after an answer: the request due TTL/3 = 1 s later and the
 * resends after it (every 500 ms) all wait, and each is answered once released. A
 * client that sends only one request per answer gets one answer. round_robin: no
 * health probes, whose silence would close the connections. */
static void test_lease_keepalive_resend(void)
{
    struct env e;
    env_open(&e, 81, LB_ROUND_ROBIN, 2000);
    struct kvc_request req;
    memset(&req, 0, sizeof(req));
    req.method = KVC_LEASE_GRANT;
    req.ttl_s = 3;
    struct done g = {0};
    kvc_call(e.c, &req, NULL, on_done, &g);
    wait_done(&e, &g, 1, 10 * FL_S);
    CHECK_EQ_INT(g.status, KVC_OK);
    struct kalog k = {0, 0, 0, ""};
    uint64_t sid = kvc_lease_keepalive(e.c, g.lease_id, NULL, on_ka, &k);
    for (int i = 0; i < 5000 && k.ok < 2; i++)
        sim_run_for(e.w, 1 * FL_MS);
    CHECK_EQ_INT(k.ok, 2);
    int cp = kvc_client_proc(e.c);
    net_hold(e.w, cp, -1);
    sim_run_for(e.w, 2400 * FL_MS);
    CHECK_EQ_INT(k.ok, 2);
    net_release(e.w, cp, -1);
    sim_run_for(e.w, 200 * FL_MS);
    /* Sent while held: one at the first tick past +1 s, then one every 500 ms up to
     * +2.4 s: two or three. */
    int answers = k.ok - 2;
    CHECK(answers >= 2);
    CHECK(answers <= 3);
    CHECK_EQ_INT(k.ended, 0);
    CHECK_EQ_INT(kvc_lease_keepalive_stop(e.c, sid), 0);
    env_close(&e);
}

int main(void)
{
    for (int k = 0; k < LB_KIND_COUNT; k++)
        test_round_trip((enum lb_kind)k);
    for (int k = 0; k < LB_KIND_COUNT; k++)
        test_failover_kill((enum lb_kind)k);
    test_blacklist_wait(LB_PINNED_BLACKLIST);
    test_blacklist_wait(LB_ROUND_ROBIN);
    FL_TEST(test_keepalive_pause);
    FL_TEST(test_health_aware_pause);
    FL_TEST(test_no_retry_sent_writes);
    FL_TEST(test_bug_retry_sent_writes);
    FL_TEST(test_watch_resume);
    FL_TEST(test_lease_keepalive);
    FL_TEST(test_lease_keepalive_resend);
    FL_TEST(test_at_most_once);
    FL_TEST(test_watch_compacted);
    for (int k = 0; k < LB_KIND_COUNT; k++)
        test_connections((enum lb_kind)k);
    return fl_test_end();
}
