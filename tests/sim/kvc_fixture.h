/*
 * kvc_fixture.h: the set-up the client scale tests share: a simulated three-member
 * cluster with the default server configuration, a client on all three members, and
 * the wait for a leader. Test-only.
 */
#ifndef FL_TEST_KVC_FIXTURE_H
#define FL_TEST_KVC_FIXTURE_H

#include "harness/common/common.h"
#include "harness/sim/sim.h"
#include "nodes/client/client.h"
#include "nodes/server/cluster.h"

/* A three-member cluster with srv_config_default's settings and no observer. */
static inline struct srv_cluster *kf_cluster(struct sim_world *w)
{
    struct srv_config cfg;
    srv_config_default(&cfg);
    struct srv_cluster *cl = NULL;
    const char *err = NULL;
    FL_ASSERTF(srv_cluster_create(w, &cfg, NULL, NULL, &cl, &err) == 0, "%s", err);
    return cl;
}

/* A client configured as kc, on the three members' client ports (eps: room for 3,
 * kept by the client while it lives). */
static inline struct kvc_client *kf_client(struct sim_world *w, struct srv_cluster *cl,
                                           struct kvc_config *kc, struct kvc_endpoint *eps)
{
    for (int i = 0; i < 3; i++) {
        eps[i].node = i + 1;
        eps[i].proc = srv_cluster_node_proc(cl, i + 1);
    }
    kc->endpoints = eps;
    kc->endpoint_count = 3;
    struct kvc_client *c = NULL;
    const char *err = NULL;
    FL_ASSERTF(kvc_client_new(w, kc, &c, &err) == 0, "%s", err);
    return c;
}

/* Runs the world (100 ms at a time, 10 s at most) until the cluster has a leader;
 * returns it, 0 if none. */
static inline int kf_wait_leader(struct sim_world *w, struct srv_cluster *cl)
{
    for (int i = 0; i < 100 && srv_cluster_leader(cl) == 0; i++)
        sim_run_for(w, 100 * FL_MS);
    return srv_cluster_leader(cl);
}

#endif
