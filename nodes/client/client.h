/*
 * client.h: the etcd-style API client (DESIGN §3.5). A client is a process that talks
 * to members only through its node environment's connections (nodes/env/env.h; a
 * simulated process for kvc_client_new), speaking nodes/proto/rpc.proto. It offers the KV, watch,
 * lease, cluster and maintenance calls; each call is asynchronous and completes exactly once
 * through its callback, in simulated time, with the result or an etcd-style error (exact text +
 * gRPC code, nodes/proto/errors.h).
 *
 * Under the API sit a balancer policy (lb.h: pinned_random, pinned_blacklist,
 * round_robin, health_aware) and clientv3's retry interceptor: read-only calls are
 * retried on code Unavailable (at most max_unary_retries attempts, with the
 * round-robin quorum backoff of etcd-facts §C.1); mutating calls are retried only
 * when the request surely never left the client ("there is no address available" /
 * "there is no connection available"), never after it was sent — except under
 * FL_BUG(CLIENT_RETRY_SENT_WRITES). A call that times out after its request was sent
 * ends `unknown` (it may have applied); before, `fail`.
 *
 * Recording: the client never touches SQLite. It reports every finished unary call
 * and every watch response to an observer (harness/run turns them into history
 * rows). All pointers handed to callbacks are valid only during the callback.
 *
 * Per-client figures for the run summary (DESIGN §3.9 `clients`) come from
 * kvc_client_stats / kvc_stats_json. watch_max_stall_ms needs the revisions the
 * cluster committed: the run driver feeds them through kvc_client_note_commit.
 *
 * Never: wall clock, rand(), iteration over hash order. Every random draw comes from
 * the client process's stream.
 */
#ifndef FL_CLIENT_H
#define FL_CLIENT_H

#include "nodes/client/lb.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

struct sim_world;
struct fl_env;
struct kvc_client;

/* Methods; the numbers are rpc.proto's Method numbers. */
enum kvc_method {
    KVC_RANGE = 1,
    KVC_PUT = 2,
    KVC_DELETE = 3,
    KVC_TXN = 4,
    KVC_COMPACT = 5,
    KVC_WATCH = 6,
    KVC_LEASE_GRANT = 7,
    KVC_LEASE_REVOKE = 8,
    KVC_LEASE_KEEPALIVE = 9,
    KVC_LEASE_TTL = 10,
    KVC_MEMBER_LIST = 11,
    KVC_MEMBER_ADD = 12,
    KVC_MEMBER_REMOVE = 13,
    KVC_MEMBER_PROMOTE = 14,
    KVC_STATUS = 15,
    KVC_DEFRAGMENT = 16,
    KVC_ALARM = 17,
    KVC_HASH_KV = 18,
    KVC_SNAPSHOT = 19,
    KVC_MOVE_LEADER = 20,
    KVC_METHOD_MAX = 20
};
/* "range", "put", "delete", "txn", "compact", "watch", "lease_grant", ... */
const char *kvc_method_name(enum kvc_method m);

enum kvc_status { KVC_OK = 0, KVC_FAIL, KVC_UNKNOWN };
const char *kvc_status_name(enum kvc_status s); /* "ok" | "fail" | "unknown" */

/* A borrowed byte string (requests: the caller's, copied by the client; results:
 * the client's, valid during the callback). p may be NULL when n == 0. */
struct kvc_bytes {
    const uint8_t *p;
    size_t n;
};

/* One endpoint: the cluster slot (what history rows name) and the sim process id
 * that serves the client port (srv_cluster_node_proc). */
struct kvc_endpoint {
    int node;
    int proc;
};

/* ---------------------------------------------------------------- requests --- */

enum kvc_op_kind { KVC_OP_RANGE = 0, KVC_OP_PUT, KVC_OP_DELETE };

/* A KV operation: the body of Range / Put / DeleteRange, and a txn sub-operation.
 * range_end empty: the single key; "\0" (n == 1, p[0] == 0): every key >= key. */
struct kvc_op {
    enum kvc_op_kind kind;
    struct kvc_bytes key, range_end, value;
    int64_t lease;     /* put */
    int64_t revision;  /* range at a revision; 0 current */
    int64_t limit;     /* range */
    bool prev_kv;      /* put, delete */
    bool serializable; /* range */
    bool keys_only, count_only;
};

enum kvc_cmp_target {
    KVC_CMP_VERSION = 0,
    KVC_CMP_CREATE,
    KVC_CMP_MOD,
    KVC_CMP_VALUE,
    KVC_CMP_LEASE
};
enum kvc_cmp_result { KVC_CMP_EQUAL = 0, KVC_CMP_GREATER, KVC_CMP_LESS, KVC_CMP_NOT_EQUAL };

struct kvc_compare {
    enum kvc_cmp_target target;
    enum kvc_cmp_result result;
    struct kvc_bytes key, range_end;
    int64_t number;         /* version / create / mod revision / lease */
    struct kvc_bytes value; /* KVC_CMP_VALUE */
};

enum kvc_alarm_action { KVC_ALARM_GET = 0, KVC_ALARM_ACTIVATE, KVC_ALARM_DEACTIVATE };
enum kvc_alarm_type { KVC_ALARM_NONE = 0, KVC_ALARM_NOSPACE, KVC_ALARM_CORRUPT };

/* Every unary call is one request; fill the fields of its method. */
struct kvc_request {
    enum kvc_method method;
    struct kvc_op op; /* RANGE (kind RANGE), PUT, DELETE */
    /* TXN */
    const struct kvc_compare *cmps;
    size_t cmp_count;
    const struct kvc_op *then_ops;
    size_t then_count;
    const struct kvc_op *else_ops;
    size_t else_count;
    /* COMPACT (revision, physical), HASH_KV (revision) */
    int64_t revision;
    bool physical;
    /* LEASE_GRANT (ttl_s, lease_id 0 = server picks), LEASE_REVOKE, LEASE_TTL (keys) */
    int64_t lease_id;
    int64_t ttl_s;
    bool keys;
    /* MEMBER_ADD (learner, add_node, peer_url), MEMBER_REMOVE / PROMOTE (member_id) */
    uint64_t member_id;
    bool learner;
    int add_node;         /* the slot that will run the new member */
    const char *peer_url; /* may be NULL */
    bool linearizable;    /* MEMBER_LIST */
    /* ALARM */
    enum kvc_alarm_action alarm_action;
    uint64_t alarm_member;
    enum kvc_alarm_type alarm_type;
    /* MOVE_LEADER */
    uint64_t target_id;
};

/* Per-call options; a zeroed struct (or NULL) means the client's defaults. */
struct kvc_call_opts {
    int64_t timeout_ms;  /* 0: the client's timeout_ms */
    bool require_leader; /* etcd's WithRequireLeader */
    int node;            /* 0: the balancer picks; else this slot only (maintenance) */
};

/* ---------------------------------------------------------------- results ---- */

struct kvc_header {
    uint64_t cluster_id;
    uint64_t member_id;
    int64_t revision; /* 0 when the call had no answer */
    uint64_t raft_term;
};

struct kvc_kv {
    struct kvc_bytes key, value;
    int64_t create_rev, mod_rev, version, lease;
};

/* Result of one KV operation (or txn sub-operation). */
struct kvc_op_result {
    enum kvc_op_kind kind;
    const struct kvc_kv *kvs; /* range */
    size_t kv_count;
    int64_t count;
    bool more;
    bool has_prev_kv; /* put */
    struct kvc_kv prev_kv;
    int64_t deleted;               /* delete */
    const struct kvc_kv *prev_kvs; /* delete with prev_kv */
    size_t prev_kv_count;
};

struct kvc_member {
    uint64_t id;
    const char *name;
    int node;
    bool is_learner;
};

struct kvc_alarm {
    uint64_t member_id;
    enum kvc_alarm_type type;
};

struct kvc_status_info {
    uint64_t member_id, leader, raft_term, raft_index, raft_applied;
    int64_t db_size, db_size_in_use, quorum_contact_age_ns;
    bool is_learner;
};

struct kvc_result {
    uint64_t call_id;
    enum kvc_method method;
    enum kvc_status status;
    int code;          /* gRPC code, 0 on success */
    const char *error; /* exact etcd text; "" on success */
    int64_t call_ns;   /* when the API call was made */
    int64_t return_ns; /* when it completed (also for errors and timeouts) */
    bool answered;     /* a server answer was seen (false: return_ns NULL in history) */
    int node;          /* slot of the member the last attempt went to; 0 none */
    int attempts;
    struct kvc_header header;
    struct kvc_op_result op;         /* RANGE, PUT, DELETE */
    bool succeeded;                  /* TXN */
    const struct kvc_op_result *ops; /* TXN: results of the branch taken */
    size_t op_count;
    int64_t lease_id, ttl_s, granted_ttl_s; /* LEASE_* (keep-alive: each response) */
    const struct kvc_bytes *keys;           /* LEASE_TTL with keys */
    size_t key_count;
    const struct kvc_member *members; /* MEMBER_* */
    size_t member_count;
    struct kvc_member member;             /* MEMBER_ADD: the new member */
    struct kvc_status_info member_status; /* STATUS */
    uint32_t hash;                        /* HASH_KV */
    int64_t hash_revision, compact_revision;
    const struct kvc_alarm *alarms;
    size_t alarm_count;
    struct kvc_bytes snapshot; /* SNAPSHOT: the whole backup (with its SHA-256) */
};

typedef void kvc_done_fn(void *ud, const struct kvc_result *r);

/* ---------------------------------------------------------------- watch ------ */

struct kvc_watch_req {
    struct kvc_bytes key, range_end;
    int64_t start_rev; /* 0: from now */
    bool prev_kv;
    bool progress_notify;
    bool no_put, no_delete;
};

enum kvc_event_kind { KVC_EV_PUT = 0, KVC_EV_DELETE };

struct kvc_event {
    enum kvc_event_kind kind;
    struct kvc_kv kv; /* delete: key and mod_rev set */
    bool has_prev_kv;
    struct kvc_kv prev_kv;
};

/* One watch response as the application sees it. A resumed watch (after a broken
 * stream, or "etcdserver: no leader") keeps its watch_id and continues from the
 * last revision it delivered + 1; `reconnects` counts those resumptions. */
struct kvc_watch_resp {
    uint64_t watch_id;
    int64_t response_seq; /* 1, 2, ... per watch, over every response delivered */
    struct kvc_header header;
    int node;
    int64_t delivered_ns;
    bool created;
    bool progress; /* a progress notification (no events; header.revision reached) */
    bool canceled; /* the watch ended (final response) */
    int64_t compact_revision;
    const char *cancel_reason; /* "" unless canceled */
    int code;                  /* gRPC code of a cancellation; 0 otherwise */
    const struct kvc_event *events;
    size_t event_count;
    uint32_t reconnects;
};

typedef void kvc_watch_fn(void *ud, const struct kvc_watch_resp *r);

/* ---------------------------------------------------------------- observer --- */

struct kvc_observer {
    void *ud;
    /* Every finished unary call (before its callback). */
    void (*op_done)(void *ud, const struct kvc_client *c, const struct kvc_request *req,
                    const struct kvc_result *res);
    /* A watch was requested (opened_ns = the API call time). */
    void (*watch_open)(void *ud, const struct kvc_client *c, uint64_t watch_id,
                       const struct kvc_watch_req *req, int64_t opened_ns);
    /* Every response delivered to the application, including progress
     * notifications and the final cancellation. */
    void (*watch_resp)(void *ud, const struct kvc_client *c, const struct kvc_watch_resp *r);
    /* The watch ended: cancelled by the application ("canceled by client"), by the
     * server (its reason), or the client closed. */
    void (*watch_close)(void *ud, const struct kvc_client *c, uint64_t watch_id, int64_t closed_ns,
                        const char *reason);
};

/* ---------------------------------------------------------------- config ----- */

struct kvc_config {
    int id;                       /* history client_id; also names the sim process */
    enum lb_kind balancer;        /* [round_robin] */
    int64_t timeout_ms;           /* per-call timeout [2000] */
    int64_t dial_timeout_ms;      /* [5000]; pinned_blacklist's unhealthy wait */
    int64_t keepalive_time_ms;    /* ping interval while calls are active [2000]; 0 off;
                                   * pinned_random never pings (grpc 1.0 had no keepalive) */
    int64_t keepalive_timeout_ms; /* pong wait before the connection is dead [6000] */
    int max_unary_retries;        /* attempts of a repeatable call [100] */
    int64_t backoff_wait_ms;      /* [25] */
    int backoff_jitter_pct;       /* [10] */
    int64_t probe_interval_ms;    /* health_aware [200] */
    int64_t health_quorum_age_ms; /* health_aware: max quorum-contact age [500] */
    int64_t probe_dead_ms;        /* health_aware: no probe answer this long while another member
                                   * is healthy closes the connection, as a keepalive failure
                                   * does (its calls in flight end) [2000]; 0 never */
    int64_t lease_keepalive_retry_ms;     /* keep-alive re-open wait and send tick [500] */
    const struct kvc_endpoint *endpoints; /* copied */
    size_t endpoint_count;
    struct kvc_observer observer; /* copied; fields may be NULL */
    /* Optional: is slot `node` dead or cut off from its peers right now? Used only to
     * count retries sent to such members (no retry storm); NULL: never. */
    bool (*member_bad)(void *ud, int node);
    void *member_bad_ud;
};
void kvc_config_default(struct kvc_config *c);

/* Creates the client: a sim process named "client/<id>" and the balancer's first
 * connections. Returns 0, or FL_EINVAL with *err a static message (no endpoints,
 * too many, bad timeout). The caller owns *out. */
int kvc_client_new(struct sim_world *w, const struct kvc_config *cfg, struct kvc_client **out,
                   const char **err);
/* Same over any node environment (nodes/env/env.h): proc is the client's own address
 * (kvc_client_proc), endpoints are dialled at their `proc` through env_connect. The
 * caller keeps env alive until kvc_client_free and frees it after (client_sim.c's
 * kvc_client_new is this over the simulator, with an environment the client owns). */
int kvc_client_new_env(struct fl_env *env, int proc, const struct kvc_config *cfg,
                       struct kvc_client **out, const char **err);
/* Closes connections, cancels timers, completes every outstanding call with
 * "grpc: the client connection is closing" (status unknown for sent mutating calls)
 * and every watch with a close; then frees. */
void kvc_client_free(struct kvc_client *c);
/* Same as free's first half, keeping the object for kvc_client_stats. */
void kvc_client_close(struct kvc_client *c);

int kvc_client_id(const struct kvc_client *c);
int kvc_client_proc(const struct kvc_client *c);
enum lb_kind kvc_client_balancer(const struct kvc_client *c);
/* Adds an endpoint (a member was added). FL_EFULL beyond LB_ENDPOINTS_MAX. */
int kvc_client_add_endpoint(struct kvc_client *c, const struct kvc_endpoint *ep);

/* ---------------------------------------------------------------- calls ------ */

/* Starts a unary call; returns its call id (unique per client, > 0). done(ud, r) is
 * called exactly once, never from inside this function. req is copied. */
uint64_t kvc_call(struct kvc_client *c, const struct kvc_request *req,
                  const struct kvc_call_opts *opts, kvc_done_fn *done, void *ud);

/* Convenience wrappers over kvc_call. */
uint64_t kvc_put(struct kvc_client *c, struct kvc_bytes key, struct kvc_bytes value, int64_t lease,
                 const struct kvc_call_opts *opts, kvc_done_fn *done, void *ud);
uint64_t kvc_get(struct kvc_client *c, struct kvc_bytes key, struct kvc_bytes range_end,
                 const struct kvc_call_opts *opts, kvc_done_fn *done, void *ud);
uint64_t kvc_delete(struct kvc_client *c, struct kvc_bytes key, struct kvc_bytes range_end,
                    const struct kvc_call_opts *opts, kvc_done_fn *done, void *ud);

/* Opens a watch stream; returns the watch id (> 0, same space as call ids). fn is
 * called for each response; the last one has canceled = true. Streams are never
 * retried by the interceptor; a watch resumes by itself after a broken connection
 * or an Unavailable cancellation ("etcdserver: no leader"), elsewhere when the
 * balancer allows, from the last delivered revision + 1. opts.require_leader makes
 * the member cancel it when it has no leader. */
uint64_t kvc_watch(struct kvc_client *c, const struct kvc_watch_req *req,
                   const struct kvc_call_opts *opts, kvc_watch_fn *fn, void *ud);
/* Cancels a watch; its callback (and the observer) get the final response (reason
 * "canceled by client") before this returns. FL_ENOENT when no such open watch. */
int kvc_watch_cancel(struct kvc_client *c, uint64_t watch_id);

/* Keeps lease_id alive: a stream that sends a keep-alive at once, then (clientv3
 * sendKeepAliveLoop) on each lease_keepalive_retry_ms tick once TTL/3 has passed
 * since the last answer, so on every tick while no answer comes. It reports each
 * answer through done (method KVC_LEASE_KEEPALIVE, ttl_s; ttl_s <= 0 means the lease
 * is gone and the stream ends). A broken stream is re-opened after
 * lease_keepalive_retry_ms. The last call has status fail and an error. Returns the
 * stream id. */
uint64_t kvc_lease_keepalive(struct kvc_client *c, int64_t lease_id,
                             const struct kvc_call_opts *opts, kvc_done_fn *done, void *ud);
/* Stops a keep-alive stream; done gets its last call (status fail, "context
 * canceled") before this returns. FL_ENOENT when no such stream. */
int kvc_lease_keepalive_stop(struct kvc_client *c, uint64_t stream_id);

/* ---------------------------------------------------------------- stats ------ */

#define KVC_FAULTS_MAX 64

/* What one endpoint of the client's list looks like now (client:stats().endpoints). */
struct kvc_endpoint_stats {
    int member;                 /* the member's slot */
    const char *state;          /* "idle" | "connecting" | "ready" | "closed" */
    int64_t unhealthy_until_ms; /* pinned_blacklist / health_aware; -1: no such list */
    bool pinned;                /* the endpoint a pinned policy uses now */
    int in_flight;              /* unary attempts outstanding there */
    int64_t connections_opened; /* connections to it that reached READY */
};

/* How an attempt of a unary call ended. */
enum kvc_attempt_outcome {
    KVC_ATTEMPT_OK = 0,      /* answered with success */
    KVC_ATTEMPT_ERROR,       /* answered with an error (the member's text) */
    KVC_ATTEMPT_TRANSPORT,   /* the connection broke or closed under it */
    KVC_ATTEMPT_TIMEOUT,     /* no answer before the call's (or the attempt's) deadline */
    KVC_ATTEMPT_ABANDONED,   /* left for another member (health_aware re-sends a read) */
    KVC_ATTEMPT_CANCELED,    /* the client closed with it out */
    KVC_ATTEMPT_OUTSTANDING, /* not ended yet */
};
const char *kvc_attempt_outcome_name(enum kvc_attempt_outcome o);
#define KVC_ATTEMPTS_KEEP 128 /* the client keeps its last 128 attempts */

struct kvc_stats {
    int id;
    const char *balancer;
    int64_t ok, fail, unknown;
    double availability;        /* ok / (ok + fail + unknown); 1 when no op */
    int64_t max_stall_ms;       /* longest time without a success while an op was out */
    int64_t watch_max_stall_ms; /* longest lag of a watch behind a committed revision */
    int64_t connections_opened; /* dials that reached READY */
    int64_t connections_closed;
    int64_t dials;            /* dial attempts */
    int connections_held_max; /* most connections open at once */
    int connections_held;     /* open now (after close: when it was closed) */
    int64_t pings, pings_failed;
    int64_t probes;                /* health_aware status probes sent */
    int64_t probe_drops;           /* health_aware connections closed for silent probes */
    int64_t attempts;              /* requests sent (first attempts and retries) */
    int64_t retries;               /* attempts after the first */
    int64_t retries_to_bad;        /* retries sent to a member member_bad() called bad */
    int64_t read_retries;          /* retries of repeatable (read-only) calls */
    int64_t writes_resent;         /* mutating calls sent again after a copy had left the client
                                    * (breaks at-most-once; 0 unless client.retry_sent_writes) */
    int64_t stream_reconnects;     /* watch / keep-alive streams re-established */
    int64_t switches;              /* pinned endpoint changes */
    int pinned_node;               /* pinned policies: slot pinned now; 0 none (others: 0) */
    int last_node;                 /* slot the latest successful call was answered by; 0 none */
    int last_stream_node;          /* slot the latest stream (re)open went to; 0 none */
    int64_t keepalive_acks;        /* lease keep-alive answers with a live lease */
    int64_t keepalive_last_ack_ms; /* sim time of the latest one; -1 none */
    int64_t keepalive_ended;       /* keep-alive streams ended for good (not by the app) */
    int64_t keepalive_ended_ms;    /* sim time of the latest such end; -1 none */
    int64_t streams_no_leader; /* stream incarnations a member closed: "etcdserver: no leader" */
    size_t n_endpoints;
    struct kvc_endpoint_stats endpoints[LB_ENDPOINTS_MAX];
    size_t fault_count;
    int64_t fault_ns[KVC_FAULTS_MAX];
    int64_t failover_ms[KVC_FAULTS_MAX]; /* first success after the fault; -1: none */
};
void kvc_client_stats(const struct kvc_client *c, struct kvc_stats *out);
/* How many streams the stream bookkeeping (dispatch, lookups, connection loss) has
 * examined so far: a measure of work for tests (it grows linearly with the number
 * of streams and messages), never part of a summary or a digest. */
uint64_t kvc_client_stream_steps(const struct kvc_client *c);
/* The same for unary calls: calls examined by dispatch, hedging, lookups and the
 * loss of a connection (linear in the calls and answers, whatever is in flight). */
uint64_t kvc_client_call_steps(const struct kvc_client *c);
/* The DESIGN §3.9 object: {"id","balancer","ok","fail","unknown","availability",
 * "max_stall_ms","watch_max_stall_ms","connections_opened","retries"} plus
 * the other counters above under their field names, and "failover":[{"fault_ns",
 * "failover_ms" (null: no success after it)}]. New reference owned by the caller. */
json_t *kvc_stats_json(const struct kvc_stats *s);

/* The last n attempts the client made (n 0: all it keeps, at most KVC_ATTEMPTS_KEEP),
 * oldest first, as a JSON array of {"at_ns","end_ns","member","call","outcome",
 * "error","retry"} ("error" null unless the member or the transport said why; an
 * attempt still out has outcome "outstanding" and end_ns null). New reference. */
json_t *kvc_attempts_json(const struct kvc_client *c, size_t n);
/* How many attempts the client made in all (kept or not). */
uint64_t kvc_attempts_seen(const struct kvc_client *c);

/* A fault happened at at_ns: the next success after it gives a failover time. */
void kvc_client_note_fault(struct kvc_client *c, int64_t at_ns);
/* The cluster committed revision rev, changing key (key.n == 0: unknown keys, counts
 * for every watch), at at_ns. Feeds watch_max_stall_ms; call in revision order. */
void kvc_client_note_commit(struct kvc_client *c, int64_t rev, struct kvc_bytes key, int64_t at_ns);
/* Closes the stall accounting at now (end of run): outstanding ops and lagging
 * watches count up to now. Idempotent. */
void kvc_client_finish(struct kvc_client *c);

#endif
