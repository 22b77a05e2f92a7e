/*
 * test_client_calls_scale.c: many unary calls in flight at once cost the client work
 * linear in their number (issue 12: 2000 puts in flight took about 13 s, because
 * every reconcile, run once per answer, looked every call up by id in an array to
 * dispatch the waiting ones and to hedge reads: O(N^3)).
 *
 * The test counts work, not time: kvc_client_call_steps() counts the calls the
 * bookkeeping examined. N puts issued at once through a round_robin client that has
 * no connection yet (they all wait, then leave together); then N
 * gets issued at once through a health_aware client while the member serving a third
 * of them is paused (its reads move: hedged when the balancer leaves it, failed and
 * retried when its connection is dropped). Every call must succeed and the steps
 * must stay within a fixed number per call; the former scans, counted the same way
 * (one step per call compared in a lookup), took 5,341,338,000 and 10,673,624,609
 * steps here (about N^3), against 4,000 and about 2,700 now, with the same 668
 * reads retried.
 */
#include "fl_test.h"
#include "kvc_fixture.h"

#include "harness/sim/sim.h"
#include "nodes/client/client.h"
#include "nodes/server/cluster.h"

#include <stdio.h>

#define CALLS          2000
#define STEPS_PER_CALL 40

static int ok, failed;

static void on_done(void *ud, const struct kvc_result *r)
{
    (void)ud;
    ok += r->status == KVC_OK;
    failed += r->status != KVC_OK;
}

static struct kvc_client *client_new(struct sim_world *w, struct srv_cluster *cl, int id,
                                     enum lb_kind kind, struct kvc_endpoint *eps)
{
    struct kvc_config kc;
    kvc_config_default(&kc);
    kc.id = id;
    kc.balancer = kind;
    kc.timeout_ms = 60000;
    return kf_client(w, cl, &kc, eps);
}

static char keys[CALLS][16];

static struct kvc_bytes key(int i)
{
    int n = snprintf(keys[i], sizeof(keys[i]), "key/%05d", i);
    return (struct kvc_bytes){(const uint8_t *)keys[i], (size_t)n};
}

int main(void)
{
    struct sim_world *w = sim_world_new(5);
    struct srv_cluster *cl = kf_cluster(w);
    int leader = kf_wait_leader(w, cl);
    CHECK(leader != 0);

    /* N puts at once, issued before the client has a connection: they all wait,
     * then leave together when the first one opens. */
    struct kvc_endpoint eps1[3], eps2[3];
    struct kvc_client *c = client_new(w, cl, 1, LB_ROUND_ROBIN, eps1);
    uint64_t before = kvc_client_call_steps(c);
    for (int i = 0; i < CALLS; i++)
        kvc_put(c, key(i), (struct kvc_bytes){(const uint8_t *)"v", 1}, 0, NULL, on_done, NULL);
    sim_run_for(w, 20 * FL_S);
    uint64_t put_steps = kvc_client_call_steps(c) - before;
    CHECK_EQ_INT(ok, CALLS);
    CHECK_EQ_INT(failed, 0);
    printf("%d puts in flight: %llu call steps (%.1f per call, bound %d)\n", CALLS,
           (unsigned long long)put_steps, (double)put_steps / CALLS, STEPS_PER_CALL);
    CHECK(put_steps <= (uint64_t)CALLS * STEPS_PER_CALL);

    /* N gets at once through health_aware; a follower pauses under them. */
    struct kvc_client *h = client_new(w, cl, 2, LB_HEALTH_AWARE, eps2);
    sim_run_for(w, 500 * FL_MS);
    ok = failed = 0;
    before = kvc_client_call_steps(h);
    for (int i = 0; i < CALLS; i++)
        kvc_get(h, key(i), (struct kvc_bytes){NULL, 0}, NULL, on_done, NULL);
    sim_run_for(w, 1 * FL_MS);
    int victim = leader == 3 ? 2 : 3;
    srv_cluster_pause(cl, victim);
    sim_run_for(w, 30 * FL_S);
    uint64_t get_steps = kvc_client_call_steps(h) - before;
    struct kvc_stats st;
    kvc_client_stats(h, &st);
    printf("%d gets in flight, member %d paused: %llu call steps (%.1f per call), %lld read "
           "retries\n",
           CALLS, victim, (unsigned long long)get_steps, (double)get_steps / CALLS,
           (long long)st.read_retries);
    CHECK_EQ_INT(ok, CALLS);
    CHECK_EQ_INT(failed, 0);
    CHECK(st.read_retries > 0); /* some reads did move off the paused member */
    CHECK(get_steps <= (uint64_t)CALLS * STEPS_PER_CALL);

    srv_cluster_resume(cl, victim);
    kvc_client_free(h);
    kvc_client_free(c);
    srv_cluster_destroy(cl);
    sim_world_free(w);
    return fl_test_end();
}
