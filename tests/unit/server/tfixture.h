/*
 * tfixture.h: shared fixture of the server's cluster tests: a world, a cluster with an
 * event recorder, and helpers that run the world until something holds. Test-only.
 */
#ifndef FL_TEST_TFIXTURE_H
#define FL_TEST_TFIXTURE_H

#include "fl_test.h"
#include "tclient.h"

#include "harness/common/bugs.h"
#include "nodes/server/cluster.h"

#include <inttypes.h>

#define EV_MAX 4096
static struct {
    char kind[32];
    int node;
    char detail[160];
    int64_t revision, store_rev, lease_id;
    size_t n_keys;
    char key0[32]; /* the first key of a lease_end */
} evs[EV_MAX];
static int n_evs;

static inline void observer(void *ud, const struct srv_event *ev)
{
    (void)ud;
    if (n_evs >= EV_MAX)
        return;
    snprintf(evs[n_evs].kind, sizeof evs[n_evs].kind, "%s", ev->kind);
    snprintf(evs[n_evs].detail, sizeof evs[n_evs].detail, "%s", ev->detail);
    evs[n_evs].node = ev->node;
    evs[n_evs].revision = ev->revision;
    evs[n_evs].store_rev = ev->store_rev;
    evs[n_evs].lease_id = ev->lease_id;
    evs[n_evs].n_keys = ev->n_keys;
    evs[n_evs].key0[0] = 0;
    if (ev->n_keys)
        snprintf(evs[n_evs].key0, sizeof evs[n_evs].key0, "%.*s", (int)ev->keys[0].n,
                 (const char *)ev->keys[0].p);
    n_evs++;
}

static inline int count_events(const char *kind, int node)
{
    int n = 0;
    for (int i = 0; i < n_evs; i++)
        if (!strcmp(evs[i].kind, kind) && (node == 0 || evs[i].node == node))
            n++;
    return n;
}

struct fixture {
    struct sim_world *w;
    struct srv_cluster *cl;
    int cproc;
};

/* A test client connected to member node's client port. */
static inline void tc_open_node(struct tclient *c, struct fixture *f, int node)
{
    tc_open(c, f->w, f->cproc, srv_cluster_node_proc(f->cl, node));
}

/* A lease of ttl seconds granted through a client on member node (3 s to answer); its
 * id, 0 when refused or unanswered. */
static inline int64_t tc_grant_on(struct fixture *f, int node, int64_t ttl)
{
    struct tclient c;
    tc_open_node(&c, f, node);
    int64_t lease = tc_lease_grant(&c, ttl, 3 * FL_S);
    tc_close(&c);
    return lease;
}

/* A watch on [key, end) (end NULL: the key alone) from now through c, checked to be
 * created within 1 s; its call id. */
static inline uint64_t watch_open(struct tclient *c, const char *key, const char *end,
                                  bool require_leader)
{
    uint64_t id = tc_watch_send(c, key, end, 0, require_leader);
    Rpc__ServerMsg *m = tc_wait(c, id, FL_S);
    CHECK(m && m->resp_case == RPC__SERVER_MSG__RESP_WATCH && m->watch->created);
    tc_free(m);
    return id;
}

/* Cuts member node off from its peers, not from the clients (net_heal ends it). */
static inline void cut_off(struct fixture *f, int node)
{
    int peers[3], n = 0;
    for (int i = 1; i <= 3; i++)
        if (i != node)
            peers[n++] = srv_cluster_node_proc(f->cl, i);
    int me = srv_cluster_node_proc(f->cl, node);
    net_partition(f->w, &me, 1, peers, (size_t)n, false);
}

static inline void setup(struct fixture *f, uint64_t seed, const struct srv_config *cfg)
{
    n_evs = 0;
    f->w = sim_world_new(seed);
    const char *err = NULL;
    int rc = srv_cluster_create(f->w, cfg, observer, NULL, &f->cl, &err);
    FL_ASSERTF(rc == FL_OK, "%s", err ? err : "");
    f->cproc = sim_proc_add(f->w, "client1", NULL, NULL);
}

static inline void teardown(struct fixture *f)
{
    srv_cluster_destroy(f->cl);
    sim_world_free(f->w);
}

static inline int wait_leader(struct fixture *f, int64_t limit_ns)
{
    int64_t until = sim_now_ns(f->w) + limit_ns;
    while (sim_now_ns(f->w) < until) {
        sim_run_for(f->w, 50 * FL_MS);
        int l = srv_cluster_leader(f->cl);
        if (l)
            return l;
    }
    return 0;
}

static inline bool wait_converged(struct fixture *f, int64_t limit_ns)
{
    int64_t until = sim_now_ns(f->w) + limit_ns;
    const char *d = NULL;
    while (sim_now_ns(f->w) < until) {
        sim_run_for(f->w, 100 * FL_MS);
        if (srv_cluster_converged(f->cl, &d))
            return true;
    }
    fprintf(stderr, "not converged: %s\n", d ? d : "");
    return false;
}

/* Writes n keys k<i> = v<i> through node, each acknowledged; returns how many. */
static inline int write_keys(struct fixture *f, int node, int from, int n)
{
    struct tclient c;
    tc_open_node(&c, f, node);
    int ok = 0;
    for (int i = from; i < from + n; i++) {
        char k[32], v[32];
        snprintf(k, sizeof k, "k%d", i);
        snprintf(v, sizeof v, "v%d", i);
        Rpc__ServerMsg *m = tc_put(&c, k, v);
        if (m && !m->error)
            ok++;
        else
            fprintf(stderr, "put %s via %d: %s\n", k, node, tc_err(m));
        tc_free(m);
    }
    tc_close(&c);
    return ok;
}

static inline bool read_is(struct fixture *f, int node, const char *k, const char *want,
                           bool serializable)
{
    struct tclient c;
    tc_open_node(&c, f, node);
    Rpc__ServerMsg *m = tc_get(&c, k, serializable);
    size_t len = 0;
    const char *v = tc_value(m, &len);
    bool ok = v && len == strlen(want) && !memcmp(v, want, len);
    if (!ok)
        fprintf(stderr, "get %s via %d: %s\n", k, node, tc_err(m));
    tc_free(m);
    tc_close(&c);
    return ok;
}

/* setup; returns the first leader, checked to be elected within 3 s. */
static inline int setup_leader(struct fixture *f, uint64_t seed, const struct srv_config *cfg)
{
    setup(f, seed, cfg);
    int l = wait_leader(f, 3 * FL_S);
    CHECK(l > 0);
    return l;
}

/* setup_leader with the default configuration (srv_config_default). */
static inline int setup_default(struct fixture *f, uint64_t seed)
{
    struct srv_config cfg;
    srv_config_default(&cfg);
    return setup_leader(f, seed, &cfg);
}

/* setup_leader with the default configuration but a snapshot every `every` entries,
 * keeping `catchup` entries for slow followers. */
static inline int setup_snapshots(struct fixture *f, uint64_t seed, uint64_t every,
                                  uint64_t catchup)
{
    struct srv_config cfg;
    srv_config_default(&cfg);
    cfg.snapshot_count = every;
    cfg.snapshot_catchup_entries = catchup;
    return setup_leader(f, seed, &cfg);
}

/* Whether member node holds key k (a serializable read of its own store). */
static inline bool key_exists(struct fixture *f, int node, const char *k)
{
    struct tclient c;
    tc_open_node(&c, f, node);
    Rpc__ServerMsg *m = tc_get(&c, k, true);
    bool yes = m && !m->error && m->range->n_kvs == 1;
    tc_free(m);
    tc_close(&c);
    return yes;
}

/* A control call's outcome, copied out of the callback. */
struct ctl {
    bool done;
    int code;
    char text[200];
    struct srv_result res;
    uint8_t *data;
    size_t len;
};

static inline void ctl_done(void *ud, const struct srv_status *st, const struct srv_result *res)
{
    struct ctl *c = ud;
    c->done = true;
    c->code = st->code;
    snprintf(c->text, sizeof c->text, "%s", st->text ? st->text : "");
    c->res = *res;
    if (res->data && res->len) {
        c->data = malloc(res->len);
        memcpy(c->data, res->data, res->len);
        c->len = res->len;
    }
    c->res.data = c->data;
}

static inline bool ctl_wait(struct fixture *f, struct ctl *c, int64_t limit_ns)
{
    int64_t until = sim_now_ns(f->w) + limit_ns;
    while (!c->done && sim_now_ns(f->w) < until)
        sim_run_for(f->w, 10 * FL_MS);
    return c->done;
}

#endif
