/*
 * lb.h: the balancer policies (DESIGN §3.5) as pure decision cores. A policy sees
 * only what the client glue (client.c) tells it — connection outcomes, keepalive
 * failures, request errors, health probes, the time — and answers which endpoints
 * should hold a connection, which endpoint the next request goes to, and when it
 * next needs to be asked. It never touches the network, a clock or an allocator,
 * so tests drive each policy step by step (tests/unit/client/test_lb.c).
 *
 *   pinned_random    clientv3 on grpc 1.0 (etcd 3.1): connects to every endpoint,
 *                    pins one, and picks another ready one at random only when the
 *                    transport fails (connection refused, broken or closed, or a call
 *                    answered Unavailable); it sends no keepalive pings and a call that
 *                    times out does not move it, so it stays stuck on a paused or
 *                    partitioned member.
 *   pinned_blacklist clientv3 on grpc 1.7 (etcd 3.2/3.3 health balancer): one
 *                    connection; races every healthy endpoint and pins the first
 *                    that answers; a failed endpoint is unhealthy for a fixed wait
 *                    (the dial timeout, 5 s); a keepalive failure switches.
 *   round_robin      clientv3 on grpc 1.23+ (etcd 3.4+): one connection per
 *                    endpoint, each request to the next READY one, reconnects with
 *                    gRPC's backoff, no health list.
 *   health_aware     ours: round_robin's connections plus a probe per endpoint
 *                    (ping + Status: has a leader, raft term, last contact with a
 *                    quorum); prefers healthy members, avoids a member cut off from
 *                    its peers even while it answers pings (etcd#8673), and picks
 *                    between two random healthy candidates by in-flight load, then
 *                    latency.
 *
 * FL_BUG(CLIENT_NO_FAILOVER) makes every policy stay on its first endpoint.
 * Endpoints are indexes 0..n-1 into the list the client was given.
 */
#ifndef FL_CLIENT_LB_H
#define FL_CLIENT_LB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "harness/common/rng.h"

#define LB_ENDPOINTS_MAX 16

enum lb_kind {
    LB_PINNED_RANDOM = 0,
    LB_PINNED_BLACKLIST,
    LB_ROUND_ROBIN,
    LB_HEALTH_AWARE,
    LB_KIND_COUNT
};

struct lb_policy_desc {
    enum lb_kind kind;
    const char *name;        /* "round_robin" */
    const char *models;      /* "clientv3-grpc1.23 (etcd 3.4+)" */
    const char *description; /* one line for `faultline list balancers` */
};

/* The policy table, in enum order; what `faultline list balancers` prints. */
size_t lb_policy_count(void);
const struct lb_policy_desc *lb_policy_info(size_t i);
/* Kind of a policy name; -1 when unknown. */
int lb_policy_find(const char *name);

/* Connection state of one endpoint as the glue reports it. */
enum lb_conn {
    LB_CONN_IDLE = 0,   /* no connection, none wanted yet */
    LB_CONN_CONNECTING, /* dial in progress */
    LB_CONN_READY,      /* open */
    LB_CONN_FAILED      /* refused, timed out or broken; waiting before a redial */
};

/* Why the glue reports a failure on an endpoint. */
enum lb_fail {
    LB_FAIL_CONNECT = 1, /* dial refused or timed out */
    LB_FAIL_BROKEN,      /* an open connection broke (reset, peer closed) */
    LB_FAIL_KEEPALIVE,   /* a keepalive ping got no pong within the timeout */
    LB_FAIL_UNAVAILABLE, /* a request failed with code Unavailable from that member */
    LB_FAIL_TIMEOUT      /* a request sent there timed out client-side */
};

struct lb_config {
    enum lb_kind kind;
    int64_t dial_timeout_ns;   /* pinned_blacklist's unhealthy wait [5 s] */
    int64_t reconnect_base_ns; /* gRPC reconnect backoff base [1 s] */
    int64_t reconnect_max_ns;  /* cap [120 s] */
    int64_t probe_interval_ns; /* health_aware probe period [200 ms] */
    int64_t probe_stale_ns;    /* a probe older than this is no evidence [1 s] */
    int64_t quorum_age_max_ns; /* member healthy if it saw a quorum this recently [500 ms] */
    int64_t suspect_ns;        /* health_aware: after a request timeout [2 s] */
    int64_t slow_ns; /* health_aware: a request out this long marks a gray failure [300 ms] */
    uint64_t seed;   /* the policy's own random stream */
};
void lb_config_default(struct lb_config *c, enum lb_kind kind);

struct lb_endpoint {
    enum lb_conn conn;
    int64_t unhealthy_until_ns; /* pinned_blacklist / health_aware suspicion */
    int64_t next_dial_ns;       /* earliest redial after a failure */
    int64_t backoff_ns;         /* current reconnect backoff */
    /* health_aware probe results */
    bool probed; /* a probe answered at probe_ns */
    int64_t probe_ns;
    int64_t latency_ns; /* smoothed round trip (integer EWMA, 1/4 weight) */
    bool has_leader;
    uint64_t raft_term;
    int64_t quorum_age_ns; /* as the member reported; -1 never */
    bool is_learner;
    uint32_t inflight;          /* requests outstanding there */
    int64_t oldest_inflight_ns; /* send time of the oldest of them (0: none) */
};

struct lb {
    struct lb_config cfg;
    size_t n;
    struct lb_endpoint ep[LB_ENDPOINTS_MAX];
    int pinned;        /* pinned policies: the pinned endpoint, -1 none */
    size_t rr_next;    /* round robin cursor */
    struct fl_rng rng; /* harness/common/rng.h, seeded from cfg.seed */
    uint64_t switches; /* times the pinned endpoint changed */
};

void lb_init(struct lb *lb, const struct lb_config *cfg, size_t endpoint_count);

/* --- inputs (each carries its time) --- */
void lb_on_connecting(struct lb *lb, size_t i, int64_t now_ns);
void lb_on_ready(struct lb *lb, size_t i, int64_t now_ns);
/* The glue closed endpoint i's connection because the policy no longer wants it. */
void lb_on_idle(struct lb *lb, size_t i);
void lb_on_fail(struct lb *lb, size_t i, enum lb_fail why, int64_t now_ns);
/* A health probe answered (health_aware): round trip rtt_ns, the member's view. */
void lb_on_probe(struct lb *lb, size_t i, int64_t now_ns, int64_t rtt_ns, bool has_leader,
                 uint64_t raft_term, int64_t quorum_age_ns, bool is_learner);
/* A probe went unanswered for probe_stale_ns. */
void lb_on_probe_lost(struct lb *lb, size_t i, int64_t now_ns);
void lb_on_request_start(struct lb *lb, size_t i, int64_t now_ns);
void lb_on_request_end(struct lb *lb, size_t i);
/* The glue keeps the send time of the oldest request outstanding at i (0: none). */
void lb_set_oldest_inflight(struct lb *lb, size_t i, int64_t start_ns);
/* Adds an endpoint at index n (member added); false when full. */
bool lb_add_endpoint(struct lb *lb);

/* --- decisions --- */
/* Should endpoint i hold (or be dialing) a connection now? The glue dials wanted
 * IDLE/FAILED endpoints once lb_dial_due says so, and closes unwanted open ones. */
bool lb_wants_conn(const struct lb *lb, size_t i, int64_t now_ns);
/* May the glue (re)dial endpoint i now? (respects the reconnect backoff) */
bool lb_dial_due(const struct lb *lb, size_t i, int64_t now_ns);
/* The endpoint the next request goes to, or -1 when no ready endpoint is
 * acceptable (the caller waits for one, as gRPC's WaitForReady does). avoid >= 0
 * excludes that endpoint when another is acceptable (a retry moves on). */
int lb_pick(struct lb *lb, int64_t now_ns, int avoid);
/* health_aware: is endpoint i judged healthy now? Others: READY and not unhealthy. */
bool lb_healthy(const struct lb *lb, size_t i, int64_t now_ns);
/* Should streams on endpoint i move elsewhere now (health_aware: it turned
 * unhealthy while another endpoint is healthy; pinned: it is no longer pinned)? */
bool lb_should_leave(const struct lb *lb, size_t i, int64_t now_ns);
/* Does the policy probe endpoints (health_aware)? */
bool lb_probes(const struct lb *lb);
/* Earliest time at which a decision may change without a new input (an
 * unhealthy wait or a backoff ending); INT64_MAX when none. */
int64_t lb_next_deadline(const struct lb *lb, int64_t now_ns);

#endif
