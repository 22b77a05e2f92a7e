/*
 * live_etcd.h: an etcd v3 transport for the live etcd target (issue 16 §3), and a
 * real etcd cluster under the supervisor with its peer traffic through the proxy.
 *
 * Why the JSON gateway over libcurl, not gRPC: etcd 3.4 serves every v3 call we need
 * as JSON at /v3/... (kv put/range/deleterange/txn/compaction, watch as a streamed
 * response, lease grant/revoke/keepalive, cluster member add/remove/promote/list,
 * maintenance status/defragment/alarm), Debian ships libcurl with a multi interface
 * that plugs into libuv (curl_multi_socket_action with uv_poll and uv_timer, one
 * loop for members, proxies and requests), and jansson already parses our JSON.
 * gRPC through Debian's libgrpc would need the C core's own completion-queue thread
 * bridged into libuv, protobuf descriptors of etcd's API generated for protobuf-c and
 * HTTP/2 framing we cannot see in the proxy; the gateway costs HTTP/1.1 (no HTTP/2
 * pings: keepalive must be done by periodic calls) and base64 keys and values.
 *
 * Requests: lv_etcd_call POSTs a JSON body to ENDPOINT+PATH and calls back once with
 * the HTTP status and the parsed reply (or a transport error). lv_etcd_call_sync
 * runs the loop until the answer. Watches: lv_etcd_watch_open POSTs a create
 * request to /v3/watch and calls back with each streamed message ({"result":{...}})
 * until cancelled. The gateway writes int64 fields as decimal strings and leaves
 * zero fields out: lv_json_u64 reads either.
 */
#ifndef FL_LIVE_ETCD_H
#define FL_LIVE_ETCD_H

#include "harness/live/live.h"
#include "harness/live/live_proxy.h"

#include <jansson.h>

struct lv_etcd_sock;
struct lv_etcd_req;

struct lv_etcd {
    uv_loop_t *loop;
    void *multi; /* CURLM */
    uv_timer_t timer;
    struct lv_etcd_sock *socks;
    struct lv_etcd_req *reqs; /* in flight, watches included */
    bool timer_open;
};

/* What a finished call carries. resp: the parsed reply body (owned by the request,
 * valid during the callback), NULL when the body is not JSON or nothing came. */
struct lv_etcd_reply {
    int http_status; /* 0 when no HTTP answer (connection refused, timeout) */
    bool timed_out;
    json_t *resp;
    const char *error; /* transport error or etcd's error message, "" when ok */
};

typedef void (*lv_etcd_cb)(const struct lv_etcd_reply *r, void *arg);
/* One streamed watch message (borrowed), or msg NULL when the stream ended (r says
 * why). */
typedef void (*lv_etcd_watch_cb)(json_t *msg, const struct lv_etcd_reply *end, void *arg);

int lv_etcd_init(struct lv_etcd *e, uv_loop_t *loop);
/* Cancels everything in flight (no callbacks) and frees it. */
void lv_etcd_close(struct lv_etcd *e);

/* POST body (stolen) to endpoint ("http://127.0.0.1:PORT") + path; cb once. */
void lv_etcd_call(struct lv_etcd *e, const char *endpoint, const char *path, json_t *body,
                  int64_t timeout_ms, lv_etcd_cb cb, void *arg);
/* The same with etcd's require_leader: the request carries the gRPC metadata
 * hasleader=true (header Grpc-Metadata-hasleader, which the gateway forwards), so a
 * member without a leader answers "etcdserver: no leader" (a watch: cancels). */
void lv_etcd_call_rl(struct lv_etcd *e, const char *endpoint, const char *path, json_t *body,
                     int64_t timeout_ms, bool require_leader, lv_etcd_cb cb, void *arg);
/* The same, waiting: FL_OK with *resp (new reference) on HTTP 200; FL_ETIMEOUT;
 * FL_EDOWN when no HTTP answer came; FL_EINVAL on an HTTP error (etcd's message in
 * err). */
int lv_etcd_call_sync(struct lv_etcd *e, const char *endpoint, const char *path, json_t *body,
                      int64_t timeout_ms, json_t **resp, struct fl_buf *err);

struct lv_etcd_watch;
/* create: the watch create request's fields ({"key":..., "range_end":...,
 * "start_revision":..., "prev_kv":..., "progress_notify":...}), stolen. */
struct lv_etcd_watch *lv_etcd_watch_open(struct lv_etcd *e, const char *endpoint, json_t *create,
                                         lv_etcd_watch_cb cb, void *arg);
struct lv_etcd_watch *lv_etcd_watch_open_rl(struct lv_etcd *e, const char *endpoint, json_t *create,
                                            bool require_leader, lv_etcd_watch_cb cb, void *arg);
/* Any server-streaming call (e.g. /v3/maintenance/snapshot): body (stolen) POSTed to
 * endpoint + path, cb with each streamed message, then once with msg NULL when the
 * stream ends (the handle is freed after that call); timeout_ms 0: none. */
struct lv_etcd_watch *lv_etcd_stream_open(struct lv_etcd *e, const char *endpoint, const char *path,
                                          json_t *body, int64_t timeout_ms, lv_etcd_watch_cb cb,
                                          void *arg);
void lv_etcd_watch_cancel(struct lv_etcd_watch *w); /* no callback after this */

/* ---- JSON helpers ----------------------------------------------------------------- */

json_t *lv_b64(const void *p, size_t n);                 /* a base64 JSON string */
bool lv_b64_decode(const json_t *s, struct fl_buf *out); /* false when not base64 */
uint64_t lv_json_u64(const json_t *o, const char *name); /* "123" or 123; 0 absent */
/* Request bodies. value NULL: none. */
json_t *lv_etcd_body_put(const char *key, const char *value, int64_t lease);
json_t *lv_etcd_body_range(const char *key, const char *range_end, int64_t revision);

/* Maintenance Status, the fields status() reports. */
struct lv_etcd_status {
    uint64_t member_id, leader, raft_term, raft_index, raft_applied_index, revision;
    uint64_t db_size, db_size_in_use;
    bool is_learner;
    char version[32];
};
int lv_etcd_status(struct lv_etcd *e, const char *endpoint, int64_t timeout_ms,
                   struct lv_etcd_status *st, struct fl_buf *err);

/* ---- a cluster of real etcd members ------------------------------------------------ */

struct lv_etcd_member {
    int client_port, peer_port, proxy_port, client_proxy_port;
    /* client_url: through the client proxy (what clients and scenarios use, and what
     * etcd advertises); direct_url: etcd's own listener (the harness's status polls) */
    char name[16], client_url[64], direct_url[64], peer_url[64];
    char *data_dir, *log_path;
    struct lv_proc proc;
    uint64_t id;
    struct lv_proc tracer; /* strace on proc (lv_etcd_wal_fault_on), when tracer_init */
    bool tracer_init;
};

struct lv_etcd_cluster {
    uv_loop_t *loop;
    int n;
    struct lv_etcd_member m[LV_NODES_MAX];
    struct lv_net net;
    struct lv_proxy proxy[LV_NODES_MAX];        /* peer port of member i */
    struct lv_proxy client_proxy[LV_NODES_MAX]; /* client port of member i */
    struct lv_id_table ids;
    struct lv_ports ports;
    struct lv_etcd client;
    char token[64];
};

/* Starts n members of etcd_bin (a path or "etcd") with data directories and logs
 * under wd; member i's peers reach it through proxy i (advertised peer URL), which
 * attributes each peer connection to its sender by X-Server-From, so
 * lv_net_cut(&c->net, i, j, ...) cuts i -> j; clients reach it through client proxy i
 * (client_url), whose connections are LV_EXTERNAL's: lv_net_cut(&c->net,
 * LV_EXTERNAL, i, ...) cuts the clients from member i. Waits until every member answers
 * Status and they agree on a leader, learns the member ids, and resets the peer
 * connections made before that. FL_ETIMEOUT / FL_EIO with err. */
int lv_etcd_cluster_start(struct lv_etcd_cluster *c, uv_loop_t *loop, struct lv_workdir *wd, int n,
                          const char *etcd_bin, int64_t timeout_ms, struct fl_buf *err);
/* The same, with extra etcd flags after ours (NULL-terminated, at most
 * LV_ETCD_EXTRA_MAX; a flag given again overrides ours, e.g. "--election-timeout",
 * "1000"). */
#define LV_ETCD_EXTRA_MAX 32
int lv_etcd_cluster_start_args(struct lv_etcd_cluster *c, uv_loop_t *loop, struct lv_workdir *wd,
                               int n, const char *etcd_bin, const char *const *extra,
                               int64_t timeout_ms, struct fl_buf *err);
/* A member to be added (etcd's runtime reconfiguration): prepare claims its ports,
 * starts its proxies and makes its data directory as member c->n (its index into
 * *idx; c->n grows by one); after etcd's MemberAdd answered with its id, start runs it
 * with --initial-cluster-state existing and initial_cluster (NAME=PEER_URL,... as
 * MemberAdd's member list gives it, the new one named c->m[idx].name) and attributes
 * its peer connections to it. FL_EFULL / FL_EIO with err. */
int lv_etcd_cluster_member_prepare(struct lv_etcd_cluster *c, struct lv_workdir *wd, int *idx,
                                   struct fl_buf *err);
int lv_etcd_cluster_member_start(struct lv_etcd_cluster *c, int idx, const char *etcd_bin,
                                 uint64_t id, const char *initial_cluster, const char *const *extra,
                                 struct fl_buf *err);
/* Undoes the last prepare when MemberAdd was refused (its port claims stay). */
void lv_etcd_cluster_member_unprepare(struct lv_etcd_cluster *c, int idx);
/* Cuts member i from every other member both ways (on: isolate, off: heal). */
void lv_etcd_cluster_isolate(struct lv_etcd_cluster *c, int i, bool on);
/* The index of the member every member follows (Status through direct_url), -1 when
 * some member does not answer or they disagree. */
int lv_etcd_cluster_leader(struct lv_etcd_cluster *c, int64_t timeout_ms);
/* lv_etcd_cluster_leader polled until it agrees or wait_ms passes. */
int lv_etcd_cluster_wait_leader(struct lv_etcd_cluster *c, int64_t wait_ms);
/* Kills every member, closes proxies and the client, releases the ports. */
void lv_etcd_cluster_close(struct lv_etcd_cluster *c);

/* A slow or crashing WAL on member idx, made real with strace's syscall injection
 * (Debian's etcd has no gofail failpoints): strace (a path, lv_strace_find) attaches
 * to the running member with -f, and -P on its WAL files (member/wal/ *.wal and *.tmp)
 * limits the injection to them: with crash LV_WAL_CRASH_NONE every fdatasync of the
 * WAL waits delay_ms before it runs (a slow WAL save: the member's Ready loop waits);
 * LV_WAL_CRASH_AT_WRITE kills the member (SIGKILL) at its WAL's next write, before
 * the entries reach the file; LV_WAL_CRASH_AT_SYNC at its next fdatasync, after the
 * write (a process crash keeps the written pages: what a crash after the save
 * leaves). Waits (at most 10 s, the loop running) for the WAL of a member that has
 * just joined, and returns once every thread of the member is traced. FL_EIO with err (no WAL
 * file, strace could not attach within 5 s). lv_etcd_wal_fault_off detaches (and is a
 * no-op without one); a member's strace also ends when the member exits. */
enum lv_wal_crash { LV_WAL_CRASH_NONE, LV_WAL_CRASH_AT_WRITE, LV_WAL_CRASH_AT_SYNC };
int lv_etcd_wal_fault_on(struct lv_etcd_cluster *c, int idx, const char *strace, int delay_ms,
                         enum lv_wal_crash crash, struct fl_buf *err);
void lv_etcd_wal_fault_off(struct lv_etcd_cluster *c, int idx);
/* strace: $FL_STRACE, else strace on PATH; NULL when absent (owned by the caller). */
char *lv_strace_find(void);

/* etcdctl: $FL_ETCDCTL, else the etcdctl beside etcd_bin, else "etcdctl" (PATH);
 * owned by the caller. */
char *lv_etcdctl_find(const char *etcd_bin);
/* Runs argv (argv[0] etcdctl) under the supervisor with stdout and stderr into log_path
 * (truncated first), waiting at most timeout_ms while the loop runs; what it wrote goes
 * to out. Returns its exit status, -1 when it did not exit by itself. */
int lv_etcdctl_run(uv_loop_t *loop, const char *const *argv, const char *log_path,
                   int64_t timeout_ms, struct fl_buf *out);

/* Whether an etcd binary can be run: $FL_ETCD, else "etcd" on PATH. The path found
 * goes to out (owned by the caller) or NULL. */
char *lv_etcd_find(void);

#endif
