/*
 * client_int.h: internals shared by the files of nodes/client (client.c: the client
 * object, connections, keepalive, probes and the unary call machinery with the
 * retry interceptor; client_stream.c: watch and lease keep-alive streams;
 * client_codec.c: plain structs <-> rpc.proto; client_stats.c: the run-summary
 * figures). Nothing outside nodes/client includes it.
 */
#ifndef FL_CLIENT_INT_H
#define FL_CLIENT_INT_H

/* Internal to nodes/client: compiled only into fl_client (which defines FL_INTERNAL_client)
 * and into the white-box tests that declare it (tests/CMakeLists.txt). */
#ifndef FL_INTERNAL_client
#error "nodes/client/client_int.h is internal to nodes/client: include its public header instead"
#endif

#include "nodes/client/client.h"

#include "harness/common/arena.h"
#include "harness/common/bugs.h"
#include "harness/common/common.h"
#include "harness/common/ivtree.h"
#include "nodes/env/env.h"
#include "nodes/proto/errors.h"
#include "nodes/proto/pb_arena.h"
#include "nodes/proto/rpc.pb-c.h"

/* ---- scratch: allocations that live for one callback ---- */
struct kvc_scratch {
    void **ptrs;
    size_t n, cap;
};
void *kvc_scratch_alloc(struct kvc_scratch *s, size_t size); /* zeroed */
void kvc_scratch_free(struct kvc_scratch *s);

/* ---- codec (client_codec.c) ---- */
/* Deep-copies src into dst; every byte string and array lives in the returned
 * block, which the caller frees (free()). */
void *kvc_request_copy(struct kvc_request *dst, const struct kvc_request *src);
/* Encodes a unary request as a ClientMsg. Returns a malloc'd buffer. */
uint8_t *kvc_encode_request(const struct kvc_request *req, uint64_t call_id, bool require_leader,
                            int client_id, size_t *len);
/* Packs any ClientMsg into a malloc'd buffer. */
uint8_t *kvc_encode_msg(const Rpc__ClientMsg *m, size_t *len);
/* Fills the method-specific fields of r from a successful ServerMsg. */
void kvc_decode_result(struct kvc_result *r, const Rpc__ServerMsg *m, struct kvc_scratch *s);
void kvc_decode_header(struct kvc_header *h, const Rpc__ServerMsg *m);
void kvc_decode_kv(struct kvc_kv *out, const Rpc__KeyValue *kv);
/* Events of a watch response into an array in s. */
struct kvc_event *kvc_decode_events(const Rpc__WatchResponse *w, struct kvc_scratch *s);

/* ---- connections ---- */
struct kvc_conn {
    struct kvc_client *c;
    size_t idx;
    env_sock sock;
    struct env_sock_cb cb; /* kvc_conn_on_*, ctx this connection */
    enum lb_conn state;
    struct env_timer dial_timer;
    struct env_timer ka_timer;      /* next ping */
    struct env_timer ka_wait_timer; /* pong deadline */
    struct env_timer probe_timer;   /* health_aware: next probe */
    uint64_t ping_seq;
    bool ping_out;
    uint64_t probe_wire; /* wire id of the outstanding probe, 0 none */
    int64_t probe_sent_ns;
    int64_t probe_ok_ns; /* the latest probe answer, or when the connection opened */
    int64_t opened;      /* connections to this endpoint that reached READY */
    int unary;           /* unary attempts in flight here */
    int streams;         /* streams attached here */
    int direct;          /* calls waiting for this endpoint specifically */
};

/* ---- unary calls ---- */
/* client_index.c: an ordered intrusive list of calls (a state queue; appended at the
 * tail, so in the order calls entered it). */
struct kvc_clist {
    struct kvc_call *head, *tail;
    size_t len;
};
struct kvc_call;
void kvc_clist_append(struct kvc_clist *l, struct kvc_call *call);
void kvc_clist_unlink(struct kvc_call *call); /* from whichever list holds it; none: no-op */
/* A growable array of call ids, for acting on a set in id order. */
struct kvc_ids {
    uint64_t *p;
    size_t len, cap;
};
/* Appends the ids of l's calls (reads_only: only reads not aimed at one member). */
void kvc_ids_push_clist(struct kvc_ids *v, const struct kvc_clist *l, bool reads_only);
void kvc_ids_sort(struct kvc_ids *v); /* ascending */

enum kvc_call_state { KVC_CALL_WAIT = 0, KVC_CALL_BACKOFF, KVC_CALL_INFLIGHT, KVC_CALL_DONE };

struct kvc_call {
    struct kvc_client *c;
    uint64_t id;
    struct kvc_request req;
    void *req_block;
    struct kvc_call_opts opts;
    int target; /* endpoint index for opts.node, else -1 */
    kvc_done_fn *done;
    void *ud;
    enum rpc_retry_policy policy;
    bool mutating;
    uint8_t *wire;
    size_t wire_len;
    int64_t call_ns, deadline_ns, sent_ns;
    int attempts;
    bool sent;   /* some attempt left the client */
    int ep;      /* endpoint of the attempt in flight, -1 */
    int last_ep; /* endpoint of the previous attempt, -1 */
    enum kvc_call_state state;
    struct env_timer deadline_timer, backoff_timer, attempt_timer;
    struct fl_buf snap;   /* SNAPSHOT chunks */
    char *last_err;       /* owned: the error of the last attempt that was retried, or NULL */
    uint64_t attempt_seq; /* the record of the attempt in flight: its attempts_seen number */
    /* index links (client.c): every live call in id order, and the queue its state
     * puts it in (waiting to be tried; in flight on its endpoint, in send order) */
    struct kvc_call *all_prev, *all_next;
    struct kvc_call *q_prev, *q_next;
    struct kvc_clist *q_list;
};

/* ---- streams (client_stream.c) ---- */
enum kvc_stream_kind { KVC_STREAM_WATCH = 1, KVC_STREAM_KEEPALIVE };
enum kvc_stream_state { KVC_ST_WAIT = 0, KVC_ST_OPEN, KVC_ST_RETRY, KVC_ST_DONE };

struct kvc_wpending {
    int64_t rev, at_ns;
};

/* client_index.c: an unordered intrusive set of streams (a state queue). */
struct kvc_slist {
    struct kvc_stream *head;
    size_t len;
};
void kvc_slist_add(struct kvc_slist *l, struct kvc_stream *st);
void kvc_slist_unlink(struct kvc_stream *st); /* from whichever set holds it; none: no-op */

/* A growable array of stream pointers, for acting on a set in id order. */
struct kvc_svec {
    struct kvc_stream **p;
    size_t len, cap;
};
void kvc_svec_push_list(struct kvc_svec *v, const struct kvc_slist *l);
void kvc_svec_sort(struct kvc_svec *v); /* by id, ascending */

/* client_index.c: id -> stream or call, for lookups only (never iterated). Key 0 is
 * never stored. */
struct kvc_idmap {
    uint64_t *keys;
    void **vals;
    size_t cap, len;
};
void kvc_idmap_put(struct kvc_idmap *m, uint64_t key, void *val);
void *kvc_idmap_get(const struct kvc_idmap *m, uint64_t key);
void kvc_idmap_del(struct kvc_idmap *m, uint64_t key);
void kvc_idmap_free(struct kvc_idmap *m);

/* The waiting streams pinned to one member (kvc_call_opts.node). */
struct kvc_wbucket {
    int node;
    struct kvc_slist l;
};

struct kvc_stream {
    struct kvc_client *c;
    enum kvc_stream_kind kind;
    uint64_t id;   /* API id (watch id / keep-alive stream id) */
    uint64_t wire; /* call id of the current incarnation on the wire; 0 none */
    enum kvc_stream_state state;
    struct kvc_call_opts opts;
    int ep;
    int last_ep;
    int64_t opened_ns;
    uint32_t reconnects;
    struct env_timer retry_timer, tick_timer, deadline_timer;
    int64_t retry_wait_ns;
    /* watch */
    struct kvc_watch_req wreq;
    void *wreq_block;
    kvc_watch_fn *wfn;
    void *ud;
    int64_t next_rev; /* resume from here; 0: not known yet ("now") */
    int64_t reached_rev;
    int64_t response_seq;
    bool created_seen;
    struct kvc_wpending *pend; /* committed revisions of its keys not yet reached */
    size_t pend_head, pend_len, pend_cap;
    /* Commits of unknown keys it still owes are the client's wild log entries
     * [wild_lo, wild_hi) (absolute positions); those past wild_hi are not judged yet
     * (client_stats.c). */
    uint64_t wild_lo, wild_hi;
    struct fl_ivnode iv; /* its key range, in the client's watch_tree when in_tree */
    bool in_tree;
    int64_t max_stall_ns;
    /* keep-alive */
    int64_t lease_id;
    int64_t ttl_s;
    int64_t next_ka_ns; /* clientv3 nextKeepAlive: due once the clock is past it */
    kvc_done_fn *kfn;
    /* index links (client_index.c): every stream in id order, and the state queue
     * it is in (WAIT: a wait set; OPEN: its endpoint's open set; else none) */
    struct kvc_stream *all_prev, *all_next;
    struct kvc_stream *q_prev, *q_next;
    struct kvc_slist *q_list;
};

/* The decoding of one server frame (nodes/proto/pb_arena.h): a frame is decoded,
 * handled and dropped within kvc_conn_on_message, so its fields (a range response
 * carries every key and value) cost one pointer bump each, and the whole message goes
 * at once when the handler is done. Blocks start at 4 KiB and double up to 256 KiB. */
#define KVC_ARENA_BLOCK_MIN ((size_t)4 * 1024)
#define KVC_ARENA_BLOCK_MAX ((size_t)256 * 1024)

/* One attempt of a unary call, kept for client:attempts() and the history: when it
 * was sent, to which member, what came of it. */
struct kvc_attempt_rec {
    int64_t at_ns;
    int64_t end_ns;
    int node;
    enum kvc_method method;
    enum kvc_attempt_outcome outcome;
    bool retry;  /* not the call's first attempt */
    char *error; /* owned: the error text of an "error"/"transport" outcome, or NULL */
};

struct kvc_client {
    struct fl_env *env;
    void (*env_free)(struct fl_env *env); /* frees env with the client; NULL: not ours */
    struct kvc_config cfg;
    struct kvc_endpoint eps[LB_ENDPOINTS_MAX];
    int proc;
    struct lb lb;
    struct kvc_conn conns[LB_ENDPOINTS_MAX];
    uint64_t next_id;
    /* calls: all of them in id (= creation) order, by id; those waiting to be tried
     * (no backoff or start timer pending: balancer-routed, or per endpoint when aimed
     * at one); those in flight per endpoint */
    struct kvc_call *calls_head, *calls_tail;
    size_t call_count;
    struct kvc_idmap calls_by_id;
    struct kvc_clist wait_calls;                    /* balancer-routed */
    struct kvc_clist wait_direct[LB_ENDPOINTS_MAX]; /* aimed at one endpoint */
    struct kvc_clist inflight[LB_ENDPOINTS_MAX];
    uint64_t call_steps; /* calls examined by the bookkeeping (kvc_client_call_steps) */
    /* the frame being handled is decoded here; reset when the outermost handler ends */
    struct pb_arena arena;
    int arena_depth;
    /* streams: all of them in id (= creation) order; by API id and by wire id; the
     * waiting ones (balancer-routed, and per pinned member); the open ones per
     * endpoint (balancer-routed / pinned). See client_stream.c. */
    struct kvc_stream *streams_head, *streams_tail;
    size_t stream_count;
    struct kvc_idmap streams_by_id, streams_by_wire;
    struct kvc_slist wait_lb;
    struct kvc_wbucket **wait_node;
    size_t wait_node_count;
    struct kvc_slist open_lb[LB_ENDPOINTS_MAX], open_node[LB_ENDPOINTS_MAX];
    uint64_t stream_steps; /* streams examined by the bookkeeping (kvc_client_stream_steps) */
    /* watch lag (client_stats.c): the open watches by key range, and the log of
     * commits of unknown keys, wild[i] at absolute position wild_base + i */
    struct fl_ivtree watch_tree;
    struct kvc_wpending *wild;
    size_t wild_len, wild_cap;
    uint64_t wild_base;
    size_t wild_trim_at; /* wild_len at which the next trim pass runs */
    int64_t noted_rev_max, wild_rev_max;
    struct env_timer lb_timer;
    int64_t lb_timer_at;
    bool reconciling;
    bool reconcile_again;
    bool closed;
    bool finished;
    /* stats */
    struct kvc_stats st;
    int outstanding;
    int64_t stall_start_ns; /* start of the current busy span */
    int64_t stall_acc_ns;   /* busy time of earlier spans since the last success */
    int64_t max_stall_ns;
    int64_t last_fault_pending; /* faults [0, fault_count) with failover still -1 */
    /* the last KVC_ATTEMPTS_KEEP attempts, a ring; attempts_seen counts every one */
    struct kvc_attempt_rec attempts[KVC_ATTEMPTS_KEEP];
    uint64_t attempts_seen;
};

/* The run's reference clock (env_now_ns): every time the client records or reports
 * (history, stalls, lag, balancer health ages) is in it. Its timers run on its own
 * clock (env_local_ns), which the simulator skews. */
int64_t kvc_now(const struct kvc_client *c);
/* The config checks of kvc_client_new: FL_OK, or FL_EINVAL with *err static. */
int kvc_config_check(const struct kvc_config *cfg, const char **err);
/* Re-evaluates connections (dial wanted ones, close unwanted idle ones), sends
 * waiting calls and streams, and re-arms the balancer timer. */
void kvc_reconcile(struct kvc_client *c);
/* Sends a ClientMsg on endpoint i's connection; false when it could not leave. */
bool kvc_conn_send(struct kvc_client *c, size_t i, const uint8_t *p, size_t n);
/* Encodes m as this client's (its client_id set here) and sends it as kvc_conn_send. */
bool kvc_conn_send_msg(struct kvc_client *c, size_t i, Rpc__ClientMsg *m);
void kvc_conn_stream_attach(struct kvc_client *c, size_t i);
void kvc_conn_stream_detach(struct kvc_client *c, size_t i);
/* Endpoint index of a slot, or -1. */
int kvc_endpoint_index(const struct kvc_client *c, int node);
uint64_t kvc_new_id(struct kvc_client *c);
/* clientv3's roundRobinQuorumBackoff for attempt number `attempt` (1-based count of
 * attempts made so far) over `endpoints`; draw is a random 64-bit value. */
int64_t kvc_backoff_ns(int attempt, size_t endpoints, int64_t wait_ms, int jitter_pct,
                       uint64_t draw);

/* streams */
void kvc_streams_dispatch(struct kvc_client *c);
bool kvc_stream_on_msg(struct kvc_client *c, size_t i, const Rpc__ServerMsg *m);
void kvc_streams_conn_lost(struct kvc_client *c, size_t i);
void kvc_streams_close_all(struct kvc_client *c);
void kvc_stream_free(struct kvc_stream *st);
void kvc_streams_free_index(struct kvc_client *c); /* after kvc_streams_close_all */

/* stats */
void kvc_stats_op_start(struct kvc_client *c);
void kvc_stats_op_end(struct kvc_client *c, const struct kvc_result *r);
void kvc_stats_watch_reached(struct kvc_client *c, struct kvc_stream *st, int64_t rev);
void kvc_stats_watch_close(struct kvc_client *c, struct kvc_stream *st);
/* A watch stream starts / ends its lag accounting (its key range in watch_tree). */
void kvc_stats_watch_open(struct kvc_client *c, struct kvc_stream *st);
void kvc_stats_watch_end(struct kvc_client *c, struct kvc_stream *st);
void kvc_stats_free(struct kvc_client *c);
bool kvc_watch_matches(const struct kvc_watch_req *w, struct kvc_bytes key);

#endif
