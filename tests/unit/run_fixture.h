/*
 * run_fixture.h: the run world most run tests start from (tests/unit/run, tests/sim).
 * fx_config_default takes the default cluster, clients and workload; the test changes
 * what it needs; fx_open and fx_setup open and set up the world, and a failed step
 * prints run's own reason and fails the case (fl_test.h's CHECK). One copy of the set-up
 * that every such test used to write out.
 */
#ifndef FL_TEST_RUN_FIXTURE_H
#define FL_TEST_RUN_FIXTURE_H

#include "fl_test.h"
#include "harness/run/run.h"

#include <stdio.h>

struct fx_config {
    struct run_cluster_config c;
    struct run_clients_config k;
    struct run_workload_config w;
};

static inline void fx_config_default(struct fx_config *x)
{
    run_cluster_config_default(&x->c);
    run_clients_config_default(&x->k);
    run_workload_config_default(&x->w);
}

static inline struct run_world *fx_open(const struct run_options *o)
{
    struct run_world *rw = NULL;
    char err[256] = "";
    int rc = run_world_open(&rw, o, err, sizeof err);
    if (rc != FL_OK)
        fprintf(stderr, "run_world_open: %s\n", err);
    CHECK_EQ_INT(rc, FL_OK);
    return rw;
}

static inline void fx_setup(struct run_world *rw, const struct fx_config *x, unsigned checks)
{
    char err[256] = "";
    int rc = run_world_setup(rw, &x->c, &x->k, &x->w, checks, err, sizeof err);
    if (rc != FL_OK)
        fprintf(stderr, "run_world_setup: %s\n", err);
    CHECK_EQ_INT(rc, FL_OK);
}

/* Ends the run (checked), drops its result and closes the world. */
static inline void fx_finish(struct run_world *rw)
{
    struct run_result res;
    CHECK_EQ_INT(run_world_finish(rw, NULL, &res), FL_OK);
    run_result_close(&res);
    run_world_close(rw);
}

#endif
