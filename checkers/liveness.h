/*
 * liveness.h: the `liveness` check (issue 13 §3). Pure: no I/O.
 *
 * Safety says nothing bad happens; this says the cluster comes back. It judges a run
 * from three things the driver gives it: how the fault state went (segments: from a
 * time on, every fault off — "healed" —, only a minority of the voters down, paused or
 * cut off from the rest — "minority" —, or anything else), when leaders were elected,
 * and the client operations of the history with each client's balancer policy.
 *
 *   after_heal   after every heal, within LIVENESS_HEAL_ELECTIONS election timeouts,
 *                a leader exists and a write (put, delete or a txn with one) succeeds;
 *   client_heal  ... and every client that makes calls in that time gets one to succeed
 *                (every policy recovers once the faults are gone);
 *   failover     while only a minority is faulty, every client that makes calls gets one
 *                to succeed within its request timeout plus two election timeouts and
 *                500 ms of jitter after the fault began (balancer-kill's documented
 *                bound): every policy fails over from a dead member, and every policy
 *                but pinned_random from a paused or cut-off one too — grpc 1.0 moves
 *                only when its connection fails, so pinned_random stays on a member
 *                whose connection stays open (etcd#8673; balancer-pause and
 *                balancer-partition-8673 assert that stall): not judged then;
 *   health_aware while only a minority is faulty and the leader is not among it, a
 *                health_aware client keeps serving: of the calls it makes from one election
 *                timeout after the fault began (its probes have seen it) until a request
 *                timeout before the fault ends, at least 99% succeed (etcd#8673:
 *                balancer-partition-8673's documented availability).
 *
 * With cluster_only (a swarm world: its workload fails calls by design — compacted
 * revisions, expired leases, a full quota — and the history does not tell those from
 * lost availability), only the cluster is judged, per client nothing:
 *
 *   after_heal   as above, the bound being heal_bound_ns;
 *   quorum_up    while only a minority is faulty (the voters up, connected and unpaused
 *                are a quorum), within heal_bound_ns after the state began a write
 *                succeeds (which needs a leader) — not judged when the faulty members
 *                are paused or cut off and every client is pinned_random (grpc 1.0 stays
 *                on them, see failover);
 *
 * and while a NOSPACE or CORRUPT alarm is active (alarms[]) writes are refused by
 * design: that time is "other", never judged.
 *
 * A window that the end of the run cuts before its bound, with writes attempted and none
 * succeeded yet, makes the verdict unknown (never pass); a failure elsewhere still fails.
 *
 * It judges a window only where it is meaningful and says why otherwise: a window
 * shorter than its bound that did not already succeed (a new fault, the end of the
 * run), a window without calls, a run that never heals ("nothing to judge"). A verdict
 * is fail when a judged window failed, pass otherwise — with the count of windows
 * judged and every reason a window was not, in the detail.
 */
#ifndef FL_CHECKERS_LIVENESS_H
#define FL_CHECKERS_LIVENESS_H

#include "harness/common/common.h"

#define LIVENESS_HEAL_ELECTIONS 10 /* the after-heal bound, in election timeouts */
#define LIVENESS_HA_MIN_CALLS   20 /* health_aware: fewer calls in the window: not judged */

enum liveness_state {
    LIVENESS_HEALED = 0, /* every fault off */
    LIVENESS_MINORITY,   /* only a minority of the voters down, paused or cut off */
    LIVENESS_OTHER,      /* anything else (a majority lost, network loss, skew, holds...) */
};

/* The fault state from at_ns until the next segment's at_ns (or the end). */
struct liveness_segment {
    int64_t at_ns;
    enum liveness_state state;
    bool leader;          /* a leader was known at at_ns */
    bool leader_affected; /* MINORITY: the leader is among the faulty members (or none) */
    bool gray;            /* MINORITY: a faulty member is up but paused or cut off (its
                             clients' connections stay open) */
};

struct liveness_op {
    int client;        /* 1-based; 0: a system operation (ignored) */
    int64_t call_ns;   /* ascending over the array is not required */
    int64_t return_ns; /* < 0: no answer seen */
    bool ok;
    bool write; /* put, delete, or a txn with a put or delete in a branch */
};

struct liveness_client {
    int id;
    const char *policy; /* balancer policy name ("health_aware", ...) */
};

struct liveness_input {
    int64_t election_ns;                     /* the election timeout */
    int64_t client_timeout_ns;               /* the clients' request timeout */
    int64_t end_ns;                          /* the end of the judged part of the run */
    const struct liveness_segment *segments; /* ascending at_ns */
    size_t n_segments;
    const int64_t *leaders_ns; /* times leaders were elected, ascending */
    size_t n_leaders;
    const struct liveness_client *clients;
    size_t n_clients;
    const struct liveness_op *ops;
    size_t n_ops;
    bool cluster_only;        /* judge the cluster only (see above) */
    int64_t heal_bound_ns;    /* after_heal/quorum_up bound; 0: LIVENESS_HEAL_ELECTIONS elections */
    const int64_t *alarms_ns; /* alarm intervals [from, to) as pairs, ascending; to < 0: open */
    size_t n_alarms;          /* pairs */
};

enum liveness_verdict { LIVENESS_PASS = 0, LIVENESS_FAIL, LIVENESS_UNKNOWN };

/* Judges in; writes the detail as one JSON object into out (reset first): {"judged":N,
 * "not_judged":N,"windows":[{"from_ms","to_ms","state","rule","result","why"}...],
 * "first_failure":"..."|null,"note":"..."|absent}. */
enum liveness_verdict liveness_judge(const struct liveness_input *in, struct fl_buf *out);

#endif
