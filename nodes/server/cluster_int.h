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

struct srv_slot *srv_cl_slot_get(const struct srv_cluster *cl, int node);
/* Starts the member of a slot from its disk (or boots/joins it when the disk is empty). */
void srv_cl_slot_start(struct srv_slot *sl);
void srv_cl_dir_set(struct srv_cluster *cl, uint64_t id, int node);
/* The configuration to report: the leader's, else the newest a live member has. */
const struct raft_conf_state *srv_cl_conf(const struct srv_cluster *cl);
void srv_cl_ctl_fail(srv_done_fn done, void *ud, enum rpc_err_id err);

#endif
