/*
 * cluster_int.h: internals shared by cluster.c (slots, processes, directory, events,
 * safety checkers, queries) and cluster_ctl.c (control calls, restore, convergence).
 * Not a public header.
 */
#ifndef FL_SERVER_CLUSTER_INT_H
#define FL_SERVER_CLUSTER_INT_H

/* Internal to nodes/server: compiled only into fl_server (which defines FL_INTERNAL_server)
 * and into the white-box tests that declare it (tests/CMakeLists.txt). */
#ifndef FL_INTERNAL_server
#error "nodes/server/cluster_int.h is internal to nodes/server: include its public header instead"
#endif

#include "nodes/server/srv_int.h"

#include "harness/fault/fault.h"
#include "nodes/env/env_sim.h"

#define SLOTS_MAX  64
#define DIR_MAX    256
#define SAFETY_MAX 32

struct srv_slot {
    struct srv_cluster *cl;
    int node;
    int proc;
    struct fl_env *env; /* its process's node environment (env_sim), owned */
    uint64_t member_id; /* current identity on this slot; 0 before any */
    uint64_t cluster_id;
    struct srv_member *m; /* NULL while the process is down */
    bool founding;        /* boots by bootstrap when its disk is empty */
    bool removed;
    bool started;        /* has run a member at least once */
    bool awaiting_start; /* added with start = false, not started yet */
    bool restoring;      /* restarted only to write a restored data dir */
    int prevote; /* this member's pre-vote at its next start: 0 the cluster's, 1 on, 2 off */
};

struct dir_entry {
    uint64_t id;
    int node;
};

struct safety_entry {
    uint64_t cluster_id;
    struct raft_safety *c;
    struct kvhash *kv; /* the online corruption check (checkers/kv_hash.h) */
};

struct srv_cluster {
    struct srv_host host;  /* first: what its members reach it through (host.h) */
    char restore_err[320]; /* srv_cluster_restore's refusal text, until the next call */
    struct sim_world *w;
    struct srv_config cfg;
    srv_observer_fn obs;
    void *obs_ud;
    srv_hook_fn hook; /* typed events (srv_cluster_set_hook); NULL: none */
    void *hook_ud;
    struct srv_slot slots[SLOTS_MAX + 1]; /* 1-based */
    int n_slots;
    struct dir_entry dir[DIR_MAX];
    int n_dir;
    struct safety_entry safety[SAFETY_MAX];
    int n_safety;
    char *violation;  /* first violation (JSON), owned */
    char *corruption; /* first KV hash mismatch (JSON), owned */
    uint64_t founders[RAFT_NODES_MAX];
    size_t n_founders;
    struct sim_rng *ids_rng;
    char detail[512];
    bool destroying;
    struct ctl_call **ctl; /* control calls queued on a member's process */
    int n_ctl, cap_ctl;
    /* first blocks of the owned request messages (pbarena.h), closed last */
    struct fl_arena_pool pb_pool;
};

/* A control call queued on a member's process (so a paused member answers late). */
struct ctl_call {
    struct srv_cluster *cl;
    int node;
    Rpc__ClientMsg *req;
    srv_done_fn done;
    void *ud;
};

/* ---- cluster.c: the simulator's member host (host.h) and its directory ---- */
/* The environment of slot node's process (owned by the cluster, lives as long as it). */
struct fl_env *srv_cluster_env(struct srv_cluster *cl, int node);
/* Pre-vote for the member starting on node: srv_cluster_set_prevote's, else the
 * cluster's (cluster_ctl.c). */
bool srv_cluster_member_prevote(struct srv_cluster *cl, int node);
/* proc of the process running member id, -1 when unknown. */
int srv_cluster_dir_proc(struct srv_cluster *cl, uint64_t member_id);
int srv_cluster_dir_node(struct srv_cluster *cl, uint64_t member_id);
/* Has member_id ever run (etcd: published its attributes, IsStarted)? A member that was
 * added but never started, or an unknown id, has not. */
bool srv_cluster_member_started(struct srv_cluster *cl, uint64_t member_id);
/* The online checker for a cluster ID (created on first use). */
struct raft_safety *srv_cluster_safety(struct srv_cluster *cl, uint64_t cluster_id);
/* A member fed its checker and it failed, or restarted with a WAL that is not a Raft
 * log (json says which): record the first and stop the world. */
void srv_cluster_safety_failed(struct srv_cluster *cl, int node, uint64_t member_id, uint64_t term,
                               const char *json);
/* The corruption check for a cluster ID (created with its safety checker). */
struct kvhash *srv_cluster_kvhash(struct srv_cluster *cl, uint64_t cluster_id);
/* A member's KV hash differs from another's at one revision: record it (the world goes
 * on; the `converge` check fails). */
void srv_cluster_kv_corrupt(struct srv_cluster *cl, int node, uint64_t member_id, uint64_t term,
                            const char *json);
void srv_cluster_emit(struct srv_cluster *cl, int node, uint64_t member_id, const char *kind,
                      uint64_t term, const char *detail);
void srv_cluster_emit_rev(struct srv_cluster *cl, int node, uint64_t member_id, const char *kind,
                          uint64_t term, const char *detail, int64_t revision, int64_t store_rev);
/* Emits ev (at_ns set here; a NULL detail becomes ""). */
void srv_cluster_emit_full(struct srv_cluster *cl, struct srv_event *ev);
/* True when a typed-event hook is set (server.h); emitters skip their work otherwise. */
bool srv_cluster_hooked(const struct srv_cluster *cl);
/* Member add: the slot that will run the new member (node 0: a new slot), created
 * with its process when needed; remembers that member_id runs there. Returns the
 * node, or -1 when no slot can be made. */
int srv_cluster_dir_register(struct srv_cluster *cl, int node, uint64_t member_id);
/* The proposer applied a member add: the new member's identity goes to its slot and,
 * unless the add asked not to (start false), the member starts there (idempotent). */
void srv_cluster_start_joiner(struct srv_cluster *cl, int node, uint64_t member_id,
                              uint64_t cluster_id, bool start);
/* The member applied its own removal: the cluster stops its process. */
void srv_cluster_member_removed(struct srv_cluster *cl, int node);
uint64_t srv_cluster_rand(struct srv_cluster *cl); /* the "server/ids" stream */

struct srv_slot *srv_cl_slot_get(const struct srv_cluster *cl, int node);
/* Starts the member of a slot from its disk (or boots/joins it when the disk is empty). */
void srv_cl_slot_start(struct srv_slot *sl);
void srv_cl_dir_set(struct srv_cluster *cl, uint64_t id, int node);
/* The configuration to report: the leader's, else the newest a live member has. */
const struct raft_conf_state *srv_cl_conf(const struct srv_cluster *cl);
void srv_cl_ctl_fail(srv_done_fn done, void *ud, enum rpc_err_id err);

#endif
