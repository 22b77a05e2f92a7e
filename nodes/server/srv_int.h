/*
 * srv_int.h: internals shared by the files of nodes/server (member.c drives Raft and
 * persistence, peer.c the peer transport, rpc.c the client RPC, apply.c the apply
 * loop, cluster.c the cluster helper). Not a public header.
 *
 * One struct srv_member is one incarnation of a member on its process: it is created
 * at boot or restart and freed when the process is killed. Everything that must
 * survive a kill is in its environment's files. What it needs from whatever runs it
 * (the simulator's cluster, or a process of its own) comes through its host (host.h).
 */
#ifndef FL_SERVER_SRV_INT_H
#define FL_SERVER_SRV_INT_H

/* Internal to nodes/server: compiled only into fl_server (which defines FL_INTERNAL_server)
 * and into the white-box tests that declare it (tests/CMakeLists.txt). */
#ifndef FL_INTERNAL_server
#error "nodes/server/srv_int.h is internal to nodes/server: include its public header instead"
#endif

#include "checkers/kv_hash.h"
#include "checkers/raft_safety.h"
#include "harness/common/bugs.h"
#include "nodes/env/env.h"
#include "nodes/mvcc/mvcc.h"
#include "nodes/proto/errors.h"
#include "nodes/proto/raft.pb-c.h"
#include "nodes/proto/rpc.pb-c.h"
#include "nodes/raft/raft.h"
#include "nodes/server/backup.h"
#include "nodes/server/pbarena.h"
#include "nodes/server/cluster.h"
#include "nodes/server/host.h"
#include "nodes/server/wal.h"

#define SRV_EV_PEER_REFUSED "peer_refused"

/* The data of a normal Raft entry starts with its format byte: a client request
 * ([u64 id][u64 origin][u8 method][u8 request case], then the bytes of the request
 * message of that case of rpc.ClientMsg) or a raftpb.InternalRequest. An empty entry
 * is a new leader's no-op. */
#define SRV_ENTRY_CLIENT     0x01
#define SRV_ENTRY_INTERNAL   0x02
#define SRV_ENTRY_CLIENT_HDR 19

/* Where a response goes: a client connection (sock, call_id) or a control callback. */
struct srv_reply {
    env_sock sock;
    uint64_t call_id;
    srv_done_fn done;
    void *ud;
};

enum srv_wait_kind {
    SRV_WAIT_PROPOSAL, /* waits for its entry to be applied */
    SRV_WAIT_READ,     /* waits for a read index, then applied >= it */
    SRV_WAIT_LEADER,   /* no leader known: retried on every tick */
    SRV_WAIT_RENEW     /* a lease keep-alive forwarded to the leader */
};

/* A request waiting on the member. Owned by the member's waiter array. */
struct srv_waiter {
    uint64_t id; /* proposal id, read context or renew id (unique per member) */
    enum srv_wait_kind kind;
    struct srv_reply reply;
    Rpc__ClientMsg *req; /* owned: the request, for reads served later and retries */
    int64_t deadline_ns;
    uint64_t read_index;
    bool read_ready;
    bool dead;       /* answered; removed at the next sweep */
    uint64_t fwd_to; /* SRV_WAIT_RENEW: the leader it was last forwarded to (0: not yet) */
    int64_t fwd_ns;  /* ... and when */
};

struct srv_peer {
    uint64_t id;
    env_sock out;               /* 0: not connected */
    int proc;                   /* where out goes */
    int64_t connected_since_ns; /* -1 while not open */
    int64_t attempt_ns;         /* when out was opened */
    int64_t last_heard_ns;      /* last frame received from this peer (any connection) */
    int64_t last_sent_ns;       /* last frame sent on out (link heartbeats included) */
};

/* One accepted client connection. */
struct srv_conn {
    env_sock sock;
    bool open;
};

/* A watch stream on a client connection. */
struct srv_watch {
    int64_t mvcc_id;
    env_sock sock;
    uint64_t call_id;
    bool require_leader;
    bool active;
    int64_t start_rev; /* the first revision it asked for */
};

/* An entry of the watch-by-call table: open addressing, never iterated; mvcc_id 0 is
 * an empty slot. Several entries may share a key (a client may reuse a call id). */
struct srv_watch_slot {
    env_sock sock;
    uint64_t call_id;
    int64_t mvcc_id;
};

/* A lease keep-alive stream. */
struct srv_ka_stream {
    env_sock sock;
    uint64_t call_id;
    bool require_leader;
    bool active;
};

struct srv_alarm {
    uint64_t member;
    uint32_t type; /* RPC__ALARM_TYPE__NOSPACE, ... */
};
#define SRV_ALARMS_MAX 16

/* The parts of a member, each written by the file(s) named at its struct (others
 * read them). scripts/regroup-srv-member.pl rewrote the uses when they were grouped. */

/* The Raft core's soft state as the member last saw it, and its tick (member.c). */
struct srv_member_soft {
    enum raft_role role;
    uint64_t leader;
    uint64_t term;
    int64_t last_leader_contact_ns; /* local clock; leader: quorum acks */
    int64_t last_leader_msg_ns;     /* last append/heartbeat/snapshot from a leader; -1 */
    int no_leader_ticks;
    uint64_t leader_announced_term; /* the term of its last "leader" node event */
    struct env_timer tick_timer;
    int64_t tick_ns;
    int ticks;
};

/* The ready loop's persistence (member.c; storage.c writes the files). */
struct srv_member_disk {
    struct srv_wal_state log; /* mirror of what is persisted (entries, hard state) */
    uint64_t wal_seq;         /* current WAL segment number */
    char wal_name[48];
    bool persisting;           /* an fsync of a ready is in flight */
    bool sent_early;           /* FL_BUG(RAFT_ACK_BEFORE_FSYNC): msgs already sent */
    bool drop_msgs;            /* raft/after_save drop: this ready's messages are lost */
    bool ready_synced;         /* this ready's fsync completed (the safety checker hears it) */
    bool safety_fed;           /* this ready's durable state went to the checker */
    struct fl_buf pending_wal; /* raft/before_save delay: the write waiting to start */
    struct env_timer delay_timer;
    uint64_t hook_append_index; /* SRV_HOOK_APPEND/PERSISTED: last entry being persisted */
};

/* What is applied (apply.c; member.c for snapshots and restarts). */
struct srv_member_app {
    uint64_t applied;
    /* Term of the last entry this process applied: etcd's s.Term() (server.go apply()
     * sets it per applied entry; a snapshot does not, and a restart starts at 0). */
    uint64_t applied_term;
    uint64_t applied_since_snap;
    struct raft_conf_state applied_conf; /* configuration as of the applied index */
    uint64_t snap_index;                 /* last local or installed snapshot */
    uint64_t bug_reset_at; /* FL_BUG(MVCC_REVISION_RESET_ON_RESTART): reload at this index */
    /* cluster-wide state applied through Raft */
    struct srv_alarm alarms[SRV_ALARMS_MAX];
    uint32_t n_alarms;
};

/* The cluster's online checkers as this member feeds them (member.c). */
struct srv_member_chk {
    struct raft_safety *safety; /* the cluster's checker for this cluster ID */
    struct kvhash *kvh;         /* the cluster's corruption check for this cluster ID */
    int64_t kvh_rev;            /* the store revision last reported to it */
    uint64_t inv_fp;            /* --paranoid: mvcc_fingerprint at its last check */
    bool inv_fp_set;
};

/* Peers (peer.c) and client connections (rpc.c). */
struct srv_member_net {
    struct srv_peer *peers;
    size_t n_peers, cap_peers;
    struct srv_conn *conns;
    size_t n_conns, cap_conns;
    int64_t last_refused_ns; /* last peer_refused event (rate-limited to 1/s) */
    /* socket callbacks, ctx the member: peer connections in / out, client ones */
    struct env_sock_cb peer_in_cb, peer_out_cb, client_cb;
};

/* Watch and keep-alive streams (rpc_stream.c). */
struct srv_member_streams {
    struct srv_watch *watches; /* ascending mvcc_id */
    size_t n_watches, cap_watches, active_watches;
    struct srv_watch_slot *watch_calls; /* (sock, call_id) -> mvcc_id, lookups only */
    size_t watch_calls_cap, watch_calls_used;
    uint64_t watch_steps; /* watches examined by the stream bookkeeping (a work count) */
    struct srv_ka_stream *kas;
    size_t n_kas, cap_kas;
    int64_t watch_held_until_ns; /* watch/before_send "delay": responses wait in the store */
    struct env_timer watch_hold_timer;
};

/* Requests waiting for their entry or read index (rpc.c). */
struct srv_member_req {
    struct srv_waiter *waiters;
    size_t n_waiters, cap_waiters;
    uint64_t next_req_id;
    bool reads_ready; /* some read waiter has its read index: serve when applied */
};

/* Maintenance: defragmentation's block and the frames deferred meanwhile, the
 * auto-compactor (rpc_admin.c). */
struct srv_member_maint {
    int64_t blocked_until_ns; /* defrag in progress */
    struct fl_buf *deferred;  /* client frames received while blocked */
    size_t n_deferred, cap_deferred;
    env_sock *deferred_sock;
    struct env_timer unblock_timer;
    struct defrag_done *defrag_pending; /* the defrag answer waiting for its end */
    struct mvcc_autocompact ac;
    int64_t last_progress_ns;
};

struct srv_member {
    struct srv_host *host; /* what runs it (host.h): the simulator's cluster, or a process */
    struct fl_env *env;    /* its process's environment (the host's, per slot) */
    int node;              /* slot */
    int proc;
    uint64_t id, cluster_id;
    struct raft *raft;
    struct raft_ready rd;
    struct mvcc_store *kv;
    struct mvcc_config kv_cfg;
    bool removed;  /* applied its own removal */
    bool stopping; /* being freed */
    struct fl_buf scratch;
    struct srv_pb_arena pb_peer;  /* decoding of one peer frame */
    struct srv_pb_arena pb_apply; /* decoding of one entry being applied */

    struct srv_member_soft soft;
    struct srv_member_disk disk;
    struct srv_member_app app;
    struct srv_member_chk chk;
    struct srv_member_net net;
    struct srv_member_streams streams;
    struct srv_member_req req;
    struct srv_member_maint maint;
};

/* ---- member.c ---- */
/* Boots a brand-new founding member (empty disk) or restarts one from its disk. */
struct srv_member *srv_member_boot(struct srv_host *host, struct fl_env *env, int node, int proc,
                                   uint64_t id, uint64_t cluster_id, const uint64_t *voters,
                                   size_t n_voters);
struct srv_member *srv_member_recover(struct srv_host *host, struct fl_env *env, int node,
                                      int proc);
/* Joining member (added through member add): empty log, learns everything from the
 * leader. Persists its identity first. */
struct srv_member *srv_member_join(struct srv_host *host, struct fl_env *env, int node, int proc,
                                   uint64_t id, uint64_t cluster_id);
void srv_member_free(struct srv_member *m);
/* Drives the Raft core until it has nothing ready (or a persist is in flight). */
void srv_member_process(struct srv_member *m);
void srv_member_event(struct srv_member *m, const char *kind, const char *detail);
/* SRV_EV_COMPACT with the compaction revision in the event's revision field. */
void srv_member_event_compact(struct srv_member *m, int64_t revision, const char *detail);
/* SRV_EV_LEASE_END: lease id ended; its keys were deleted at revision. */
void srv_member_event_lease_end(struct srv_member *m, int64_t id, int64_t revision,
                                const struct srv_bytes *keys, size_t n_keys);
/* The process's own clock (env_local_ns): every deadline, age and interval the member
 * measures (leases, request timeouts, peer liveness, health, auto compaction) is on
 * it, as a real member has no other. The run's reference clock (env_now_ns) is used
 * only for times that leave the member for the harness (the corruption checker's
 * feed); node events are stamped by the cluster. */
int64_t srv_member_now(const struct srv_member *m);
int64_t srv_member_request_timeout_ns(const struct srv_member *m);
/* Writes the snapshot image of the current state (db image, no padding). */
void srv_member_image(struct srv_member *m, struct fl_buf *out, int64_t pad_to);
void srv_member_status(struct srv_member *m, struct srv_member_status *out);
/* Persists the applied state now as a local snapshot (after a defrag). */
void srv_member_save_db(struct srv_member *m);
/* Persists a restored data dir on an empty disk (cluster.c restore). */
int srv_disk_write_restored(struct fl_env *env, uint64_t member_id, uint64_t cluster_id,
                            const struct srv_db_image *img, const struct raft_conf_state *conf,
                            uint64_t index);

/* ---- storage.c ---- */
void srv_wal_segment_name(char *out, size_t cap, uint64_t seq);
/* Writes the whole mirror (identity, snapshot marker, hard state, entries) into a new
 * segment; older segments are removed once it is durable. */
void srv_wal_rotate(struct srv_member *m);
/* Replays every WAL segment of the disk in order into st; *seq and name get the
 * newest segment. A torn tail is cut off the file it was found in. */
void srv_wal_replay_disk(struct fl_env *env, struct srv_wal_state *st, uint64_t *seq, char *name,
                         size_t name_cap);
/* Writes snap/<index>.snap. atomic: through a temporary file renamed once its fsync
 * completed (a crash before leaves the previous snapshot in force); otherwise in
 * place (the restore tool, before the member starts). _begin puts the header into f
 * and returns where the data starts; the caller appends the data; _finish fixes the
 * lengths and CRC and hands the buffer to the disk without a copy (f is closed). */
size_t srv_snap_file_begin(struct fl_buf *f, uint64_t index, uint64_t term,
                           const struct raft_conf_state *conf);
void srv_snap_file_finish(struct fl_env *env, uint64_t index, struct fl_buf *f, size_t data_off,
                          bool atomic);
void srv_snap_file_write(struct fl_env *env, uint64_t index, uint64_t term,
                         const struct raft_conf_state *conf, const uint8_t *data, size_t len,
                         bool atomic);
/* The newest snapshot file that passes its CRC; *data malloc'd (caller frees). */
bool srv_snap_file_read(struct fl_env *env, uint64_t *index, uint64_t *term,
                        struct raft_conf_state *conf, uint8_t **data, size_t *len);
/* A zero-copy view of the data of snapshot file `index` (its final name, or the
 * temporary one while its fsync is pending) when it passes its CRC; valid until the
 * disk changes. The Raft core keeps no copy of the member's own snapshots: a leader
 * reads the data from here when it sends one (as etcd reads its backend). */
bool srv_snap_file_view(struct fl_env *env, uint64_t index, const uint8_t **data, size_t *len);
void srv_fsync_ignore(struct fl_env *env, void *ctx, int err);

/* ---- peer.c ---- */
void srv_peer_cb_init(struct srv_member *m); /* fills m->net.peer_*_cb */
int srv_peer_listen(struct srv_member *m);
void srv_peer_send_msgs(struct srv_member *m, const struct raft_msg *msgs, size_t n);
void srv_peer_send_renew(struct srv_member *m, uint64_t to, const Raftpb__LeaseRenew *lr);
/* A keep-alive (or a lease TimeToLive) waiting on this follower: (re)forwards it to
 * the current leader, or answers it here when this member leads now (etcd's
 * LeaseRenew / LeaseTimeToLive forwarding on a follower). */
void srv_keepalive_forward(struct srv_member *m, struct srv_waiter *wt);
/* A keep-alive whose leader never answered within the request timeout: the stream
 * ends with "etcdserver: request timed out" (the client re-opens it); a TimeToLive
 * fails with that text. */
void srv_keepalive_timeout(struct srv_member *m, struct srv_waiter *wt);
void srv_peers_close(struct srv_member *m);
bool srv_peer_active(struct srv_member *m, uint64_t id);
/* etcd's isConnectedSince: the stream to peer id has been up without a break since
 * before since_ns (rafthttp's ActiveSince). */
bool srv_peer_connected_since(struct srv_member *m, uint64_t id, int64_t since_ns);
/* Keeps rafthttp's streams: a connection to every other member of the configuration,
 * redialled SRV_PEER_DIAL_RETRY_NS after a failure, with an empty frame (a link
 * heartbeat) when nothing else was sent for SRV_PEER_LINK_HEARTBEAT_NS; closes
 * outgoing connections to peers not heard from for SRV_PEER_READ_TIMEOUT_NS (etcd's
 * ConnReadTimeout): frames stuck behind a partition are dropped as a real stream's
 * would be, and Raft learns the peer is unreachable. A connection that never opened is
 * closed that long after the attempt, whatever is heard from the peer (a dial timeout:
 * the peer's frames come on its own connection). */
void srv_peers_tick(struct srv_member *m);
#define SRV_PEER_READ_TIMEOUT_NS   (5 * FL_S)
#define SRV_PEER_LINK_HEARTBEAT_NS (SRV_PEER_READ_TIMEOUT_NS / 3)
#define SRV_PEER_DIAL_RETRY_NS     (100 * FL_MS)

/* ---- rpc.c ---- */
void srv_rpc_cb_init(struct srv_member *m); /* fills m->net.client_cb */
int srv_rpc_listen(struct srv_member *m);
void srv_rpc_close_all(struct srv_member *m);
/* The process died: every control call waiting on this member completes with
 * "etcdserver: server stopped" (client calls need nothing: their connection broke). */
void srv_rpc_fail_pending(struct srv_member *m);
/* Handles one decoded request (takes ownership of req). */
void srv_rpc_handle(struct srv_member *m, struct srv_reply *reply, Rpc__ClientMsg *req);
/* Sends msg (header filled here) to reply; frees nothing of msg. */
void srv_reply_send(struct srv_member *m, const struct srv_reply *reply, Rpc__ServerMsg *msg);
void srv_reply_error(struct srv_member *m, const struct srv_reply *reply, int method,
                     enum rpc_err_id err);
void srv_reply_mvcc_error(struct srv_member *m, const struct srv_reply *reply, int method,
                          enum mvcc_err err);
void srv_header_fill(struct srv_member *m, Rpc__ResponseHeader *h);
/* Serves a linearizable read whose index has been reached, or a local read. */
void srv_rpc_serve_read(struct srv_member *m, const struct srv_reply *reply,
                        const Rpc__ClientMsg *req);
void srv_rpc_tick(struct srv_member *m);        /* timeouts, stream cancels, leases */
void srv_rpc_after_apply(struct srv_member *m); /* drain watch responses, serve reads */
void srv_rpc_leader_changed(struct srv_member *m);
/* A lease renew forwarded by a peer (leader side) or its answer (follower side). */
void srv_rpc_on_renew(struct srv_member *m, uint64_t from, const Raftpb__LeaseRenew *lr);

void srv_reply_status(struct srv_member *m, const struct srv_reply *reply, int method, int code,
                      const char *text, bool stream_end);
/* Put, DeleteRange, Txn, Compact, LeaseGrant/Revoke, Alarm changes: quota check, then
 * proposed through Raft and answered when applied. Takes ownership of req. */
void srv_rpc_write(struct srv_member *m, const struct srv_reply *reply, Rpc__ClientMsg *req);
/* Handles the client frames that arrived while a defrag blocked the member. */
void srv_rpc_replay_deferred(struct srv_member *m);

/* ---- rpc_admin.c (Cluster and Maintenance) ---- */
void srv_admin_member_list(struct srv_member *m, const struct srv_reply *reply, int method);
/* member add / remove / promote; takes ownership of req */
void srv_admin_member(struct srv_member *m, const struct srv_reply *reply, Rpc__ClientMsg *req);
void srv_admin_move_leader(struct srv_member *m, const struct srv_reply *reply,
                           Rpc__ClientMsg *req); /* takes ownership */
void srv_admin_status(struct srv_member *m, const struct srv_reply *reply, int method);
void srv_admin_hash_kv(struct srv_member *m, const struct srv_reply *reply,
                       const Rpc__ClientMsg *req);
void srv_admin_snapshot(struct srv_member *m, const struct srv_reply *reply, int method);
void srv_admin_defrag(struct srv_member *m, const struct srv_reply *reply, int method);
/* LeaseTimeToLive. Takes req (a follower forwards it to the leader, as etcd). */
void srv_admin_lease_ttl(struct srv_member *m, const struct srv_reply *reply, Rpc__ClientMsg *req);
/* Answers a TimeToLive for lease id from the local store; remaining: the leader's
 * remaining TTL in seconds, -1 for a lease the leader no longer has, < -1 to use the
 * local lessor's view. */
void srv_lease_ttl_reply(struct srv_member *m, const struct srv_reply *reply, int method,
                         int64_t id, bool with_keys, int64_t remaining);
void srv_admin_alarm(struct srv_member *m, const struct srv_reply *reply,
                     Rpc__ClientMsg *req); /* takes ownership */

/* ---- rpc_stream.c (Watch and LeaseKeepAlive streams) ---- */
void srv_watch_handle(struct srv_member *m, const struct srv_reply *reply,
                      const Rpc__ClientMsg *req);
struct srv_watch *srv_watch_by_call(struct srv_member *m, env_sock s, uint64_t call_id);
void srv_watch_end(struct srv_member *m, struct srv_watch *wa, enum rpc_err_id err);
/* Sends every queued watch response (unless a defrag blocks the member). */
void srv_watch_drain(struct srv_member *m);
void srv_watches_compact(struct srv_member *m);
/* Ends every watch of connection s (it closed). */
void srv_watches_close_sock(struct srv_member *m, env_sock s);
/* Ends every require_leader watch with "no leader". */
void srv_watches_no_leader(struct srv_member *m);
/* FL_BUG(MVCC_WATCH_OLD_AFTER_PARTITION): every watch goes back to its start revision
 * and resends what it already delivered (etcd#15271). */
void srv_watches_rewind(struct srv_member *m);
void srv_keepalive_handle(struct srv_member *m, const struct srv_reply *reply,
                          Rpc__ClientMsg *req); /* takes ownership */

/* waiters */
/* A client frame decoded into its own arena (free with srv_pb_free_owned), its first
 * block from pool (the host's, srv_host_pb_pool). */
Rpc__ClientMsg *srv_req_decode(struct fl_arena_pool *pool, size_t n, const uint8_t *p);
struct fl_arena_pool *srv_cluster_pb_pool(struct srv_cluster *cl);
struct srv_waiter *srv_waiter_add(struct srv_member *m, enum srv_wait_kind kind,
                                  const struct srv_reply *reply, Rpc__ClientMsg *req);
struct srv_waiter *srv_waiter_find(struct srv_member *m, uint64_t id);
void srv_waiter_done(struct srv_member *m, struct srv_waiter *wt);
void srv_waiters_sweep(struct srv_member *m);
/* Proposes an internal request; returns 0 or an fl_err (no leader etc). */
int srv_propose(struct srv_member *m, Raftpb__InternalRequest *ir);

/* ---- apply.c ---- */
void srv_apply_entry(struct srv_member *m, const struct raft_entry *e);
bool srv_alarm_active(const struct srv_member *m, uint32_t type);

/* ---- member.c: hooks and configuration through the host ---- */
/* Calls the typed-event hook, if any, for member m. peer: the other member's ID (0:
 * none); detail may be NULL. */
void srv_member_hook(struct srv_member *m, enum srv_hook_kind kind, uint64_t index, uint64_t peer,
                     bool pre, const char *detail);
/* srv_member_hook with the typed reason of the Raft event (raft_reason_name, or NULL). */
void srv_member_hook_reason(struct srv_member *m, enum srv_hook_kind kind, uint64_t index,
                            uint64_t peer, bool pre, const char *reason, const char *detail);
const struct srv_config *srv_member_config(const struct srv_member *m);

/* ---- the member host (host.h) ---- */
static inline const struct srv_config *srv_host_config(struct srv_host *h)
{
    return h->ops->config(h);
}
static inline bool srv_host_prevote(struct srv_host *h, int node)
{
    return h->ops->prevote(h, node);
}
static inline int srv_host_dir_node(struct srv_host *h, uint64_t member_id)
{
    return h->ops->dir_node(h, member_id);
}
static inline int srv_host_dir_proc(struct srv_host *h, uint64_t member_id)
{
    return h->ops->dir_proc(h, member_id);
}
static inline bool srv_host_member_started(struct srv_host *h, uint64_t member_id)
{
    return h->ops->member_started(h, member_id);
}
static inline int srv_host_slots(struct srv_host *h)
{
    return h->ops->slots(h);
}
static inline bool srv_host_slot_used(struct srv_host *h, int node)
{
    return h->ops->slot_used(h, node);
}
static inline struct raft_safety *srv_host_safety(struct srv_host *h, uint64_t cluster_id)
{
    return h->ops->safety(h, cluster_id);
}
static inline struct kvhash *srv_host_kvhash(struct srv_host *h, uint64_t cluster_id)
{
    return h->ops->kvhash(h, cluster_id);
}
static inline void srv_host_emit(struct srv_host *h, struct srv_event *ev)
{
    h->ops->emit(h, ev);
}
static inline bool srv_host_hooked(struct srv_host *h)
{
    return h->ops->hooked(h);
}
static inline int srv_host_dir_register(struct srv_host *h, int node, uint64_t member_id)
{
    return h->ops->dir_register(h, node, member_id);
}
static inline void srv_host_start_joiner(struct srv_host *h, int node, uint64_t member_id,
                                         uint64_t cluster_id, bool start)
{
    h->ops->start_joiner(h, node, member_id, cluster_id, start);
}
static inline void srv_host_member_removed(struct srv_host *h, int node)
{
    h->ops->member_removed(h, node);
}
static inline uint64_t srv_host_new_id(struct srv_host *h)
{
    return h->ops->new_id(h);
}
static inline struct fl_arena_pool *srv_host_pb_pool(struct srv_host *h)
{
    return h->ops->pb_pool(h);
}

#endif
