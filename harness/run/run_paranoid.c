/*
 * run_paranoid.c: --paranoid (issue 13 §3). After every simulated event the run loop
 * processes, every live member's Raft core and MVCC store check their own invariants
 * (raft_invariants_ok, mvcc_invariants_ok through srv_cluster_invariants_ok); the
 * first broken one stops the run at that event and fails it: the `raft_safety` check
 * for a Raft core, the `converge` check for an MVCC store, with the seed, the
 * simulated time, the event number, the member and what broke. A message on stderr
 * says the same at once.
 *
 * The checks only read: a run with --paranoid processes the same events and records
 * the same history as one without, so its digest is the same (tests/cmake/props.cmake
 * checks it). What it costs is wall time only (measured in the commit that added it).
 */
#include "harness/run/run_int.h"

#include <inttypes.h>

static void paranoid_failed(struct run_world *rw, const struct srv_invariant_report *r)
{
    uint64_t event = sim_event_count(rw->w);
    int64_t now = sim_now_ns(rw->w);
    json_t *v = json_object();
    json_object_set_new(v, "property", json_string(r->raft ? "raft_invariant" : "mvcc_invariant"));
    json_object_set_new(v, "node", json_integer(r->node));
    char id[24];
    snprintf(id, sizeof id, "%016" PRIx64, r->member_id);
    json_object_set_new(v, "member_id", json_string(id));
    json_object_set_new(v, "seed", json_integer((json_int_t)rw->seed));
    json_object_set_new(v, "at_ns", json_integer(now));
    json_object_set_new(v, "event", json_integer((json_int_t)event));
    json_object_set_new(v, "detail", json_string(r->why));
    rw->par.violation = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS);
    rw->par.raft = r->raft;
    json_decref(v);
    fl_log(FL_LOG_ERROR,
           "--paranoid: %s invariant broken on node %d after event %" PRIu64 " at %" PRId64
           " ns (seed %" PRIu64 "): %s",
           r->raft ? "Raft" : "MVCC", r->node, event, now, rw->seed, r->why);
}

bool run_sim_step(struct run_world *rw)
{
    run_liveness_update(rw); /* a fault applied since the last event */
    if (rw->tgt)
        rw->tgt->pace(rw, sim_next_time_ns(rw->w)); /* the wall clock's turn (run_etcd.h) */
    bool ran = sim_step(rw->w);
    if (!ran || !rw->par.on || !rw->cl || rw->par.violation)
        return ran;
    rw->par.events++;
    struct srv_invariant_report r;
    if (!srv_cluster_invariants_ok(rw->cl, &r))
        paranoid_failed(rw, &r);
    return ran;
}

json_t *run_paranoid_json(const struct run_world *rw)
{
    if (!rw->par.on)
        return NULL;
    json_t *p = json_object();
    json_object_set_new(p, "events_checked", json_integer((json_int_t)rw->par.events));
    json_object_set_new(p, "violation",
                        rw->par.violation ? json_string(rw->par.violation) : json_null());
    return p;
}
