/*
 * cluster.h: the cluster helper the run driver (harness/run) and the tests use to put
 * an N-member etcd-like cluster into a simulated world and to act on it.
 *
 * Slots: every member lives in a "node" slot numbered from 1, each slot one sim
 * process with its own disk. The initial members take slots 1..config.nodes; a member
 * added later gets the next free slot; a removed member keeps its slot (it stops
 * serving). Slot numbers are what scenarios and node_events use; member IDs are the
 * 64-bit etcd IDs, drawn from the world's RNG.
 *
 * Control calls that need the cluster to agree (member add/remove/promote, move
 * leader, compact, defrag, alarm disarm, snapshot save) are asynchronous: they start
 * the operation through a member exactly as a client RPC would and call `done` once,
 * from inside the world's event processing, with the outcome. Calls that act on the
 * simulated machine (kill, restart, pause, resume) act at once.
 *
 * After every member step the online Raft safety checker (checkers/raft_safety.h)
 * runs; the first violation is reported through the observer (kind SRV_EV_SAFETY),
 * kept in srv_cluster_safety_violation() and asks the world to stop.
 *
 * The cluster owns its members, their sim processes and disks. It never owns the
 * world.
 */
#ifndef FL_SERVER_CLUSTER_H
#define FL_SERVER_CLUSTER_H

#include "nodes/server/server.h"

struct sim_world;
struct srv_cluster;
struct srv_member;

/* What a finished control call produced, besides its status. Valid only during the
 * callback; copy what you keep. */
struct srv_result {
    int node;            /* member_add: the new slot */
    uint64_t member_id;  /* member_add: the new member ID */
    int64_t revision;    /* compact / hash_kv: revision; snapshot_save: store revision */
    uint32_t hash;       /* hash_kv */
    const uint8_t *data; /* snapshot_save: the backup bytes (with SHA-256) */
    size_t len;
};
typedef void (*srv_done_fn)(void *ud, const struct srv_status *st, const struct srv_result *res);

/* Creates the cluster's sim processes, disks and members and boots them. The config
 * is copied. Returns 0, or FL_EINVAL with *err set to a static message. */
int srv_cluster_create(struct sim_world *w, const struct srv_config *cfg, srv_observer_fn obs,
                       void *obs_ud, struct srv_cluster **out, const char **err);
void srv_cluster_destroy(struct srv_cluster *cl);
/* Sets (fn non-NULL) or clears the typed-event hook (server.h). Members call it at
 * the moments srv_hook_kind describes; only a set hook costs anything. */
void srv_cluster_set_hook(struct srv_cluster *cl, srv_hook_fn fn, void *ud);

const struct srv_config *srv_cluster_config(const struct srv_cluster *cl);
int srv_cluster_slots(const struct srv_cluster *cl); /* highest slot number in use */
struct srv_member *srv_cluster_member(struct srv_cluster *cl, int node); /* NULL if none */
/* The sim process id of a slot's member (what clients connect to, on SRV_CLIENT_PORT);
 * -1 when the slot does not exist. */
int srv_cluster_node_proc(const struct srv_cluster *cl, int node);
/* Slot of the member that is alive, not paused, and leader at the highest term any
 * such member knows; 0 when none. */
int srv_cluster_leader(const struct srv_cluster *cl);
/* srv_cluster_leader among the members whose "leader" node event of their current term
 * was already emitted: the core's role changes when the last vote arrives, the event once
 * the winning ready is durable (an fsync later), so this is what a scenario's leader()
 * reports, never ahead of node_events. */
int srv_cluster_leader_announced(const struct srv_cluster *cl);
/* Slots of the current voting members (as the leader's, or the newest, configuration
 * says), ascending; returns how many were written (at most cap). */
int srv_cluster_voters(const struct srv_cluster *cl, int *nodes, int cap);
bool srv_cluster_is_alive(const struct srv_cluster *cl, int node); /* not killed */
bool srv_cluster_is_removed(const struct srv_cluster *cl, int node);
bool srv_cluster_is_started(const struct srv_cluster *cl, int node); /* has run a member */
bool srv_cluster_is_learner(const struct srv_cluster *cl, int node);
uint64_t srv_cluster_member_id(const struct srv_cluster *cl, int node);
uint64_t srv_cluster_id(const struct srv_cluster *cl, int node); /* that member's cluster ID */
void srv_cluster_status(const struct srv_cluster *cl, int node, struct srv_member_status *out);

/* The simulated machine. kill: memory lost, the disk keeps synced bytes. restart: a
 * new member recovers from its disk alone. Both are idempotent. */
void srv_cluster_kill(struct srv_cluster *cl, int node);
void srv_cluster_restart(struct srv_cluster *cl, int node);
void srv_cluster_pause(struct srv_cluster *cl, int node);
void srv_cluster_resume(struct srv_cluster *cl, int node);
/* etcd's --pre-vote is a per-member flag: the member on `node` runs with pre-vote `on`
 * from its next start (restart) on, whatever the cluster config says. */
void srv_cluster_set_prevote(struct srv_cluster *cl, int node, bool on);
/* The pre-vote setting the member on slot node starts with (the cluster's unless set). */
bool srv_cluster_member_prevote(struct srv_cluster *cl, int node);

/* Membership (etcd Cluster API semantics and error texts). `via` is the slot the
 * request is sent to (0: the current leader, or slot 1 when none). */
/* A member add whose new member is not started (member_add{start = false}): it is in the
 * configuration, counts as never started for the strict reconfiguration check, and
 * runs only once srv_cluster_member_start starts it. */
void srv_cluster_member_add_unstarted(struct srv_cluster *cl, int via, bool learner,
                                      srv_done_fn done, void *ud);
/* Starts a member added with start = false: FL_OK, or FL_ENOENT when node holds no
 * member waiting to be started. */
int srv_cluster_member_start(struct srv_cluster *cl, int node);
/* Does node hold a member added with start = false that was not started yet? */
bool srv_cluster_awaits_start(const struct srv_cluster *cl, int node);
void srv_cluster_member_add(struct srv_cluster *cl, int via, bool learner, srv_done_fn done,
                            void *ud);
void srv_cluster_member_remove(struct srv_cluster *cl, int via, int node, srv_done_fn done,
                               void *ud);
void srv_cluster_member_promote(struct srv_cluster *cl, int via, int node, srv_done_fn done,
                                void *ud);
void srv_cluster_move_leader(struct srv_cluster *cl, int via, int target, srv_done_fn done,
                             void *ud);

/* Maintenance. */
void srv_cluster_compact(struct srv_cluster *cl, int via, int64_t revision, srv_done_fn done,
                         void *ud);
void srv_cluster_defrag(struct srv_cluster *cl, int node, srv_done_fn done, void *ud);
void srv_cluster_alarm_disarm(struct srv_cluster *cl, int via, srv_done_fn done, void *ud);
void srv_cluster_hash_kv(struct srv_cluster *cl, int node, int64_t revision, srv_done_fn done,
                         void *ud);
void srv_cluster_snapshot_save(struct srv_cluster *cl, int node, srv_done_fn done, void *ud);
/* A raw copy of a slot's db file as it is on its disk (no integrity hash), into a
 * malloc'd buffer the caller frees. Returns 0 or FL_ENOENT. */
int srv_cluster_copy_db(struct srv_cluster *cl, int node, uint8_t **data, size_t *len);

/* Restore (etcdutl snapshot restore): kills the members in `nodes` and rewrites their
 * disks into a new cluster made of exactly those slots, from a backup made by
 * snapshot_save (or, with skip_hash_check, a copy_db image), with a new cluster ID and
 * new member IDs (kept under FL_BUG(SERVER_RESTORE_KEEPS_IDS)); then starts them.
 * Returns 0, or fills *st with the refusal (e.g. a hash mismatch) and returns
 * FL_ECORRUPT / FL_EINVAL. */
int srv_cluster_restore(struct srv_cluster *cl, const uint8_t *data, size_t len, const int *nodes,
                        int n_nodes, bool skip_hash_check, struct srv_status *st);

/* Online safety: NULL while no violation was found, else the first one's text. */
const char *srv_cluster_safety_violation(const struct srv_cluster *cl);
/* Online corruption check (checkers/kv_hash.h, part of `converge`): NULL while every
 * member's KV hash agreed with the others' at every revision they share, else the first
 * mismatch (JSON). srv_cluster_kv_compared: how many reports were compared. */
const char *srv_cluster_corruption(const struct srv_cluster *cl);
/* What the safety checkers were fed: a JSON array, one raft_safety_summary_json object
 * per cluster ID in creation order, written into out (reset first). */
void srv_cluster_safety_summary(const struct srv_cluster *cl, struct fl_buf *out);
uint64_t srv_cluster_kv_compared(const struct srv_cluster *cl);

/* --paranoid: every live member's Raft core and MVCC store check their invariants
 * (raft_invariants_ok; mvcc_invariants_ok when the store's fingerprint moved since its
 * last check). Reads only. Returns false at the first broken one, filling out. */
struct srv_invariant_report {
    int node;
    uint64_t member_id;
    bool raft;     /* the Raft core's (else the MVCC store's) */
    char why[256]; /* file:line: what */
};
bool srv_cluster_invariants_ok(struct srv_cluster *cl, struct srv_invariant_report *out);

/* End-of-run convergence (check `converge`): true when every live, non-removed member
 * has applied the same revision and the same HashKV at it. *detail gets a static-per-
 * cluster text describing the state (valid until the next call). The run driver heals
 * the world, then runs it in small steps calling this until true or its bound. */
bool srv_cluster_converged(struct srv_cluster *cl, const char **detail);

#endif
