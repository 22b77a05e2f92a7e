/*
 * host.h: the member host (issue 16 §2), what a member needs from whatever runs it
 * besides its node environment (nodes/env/env.h): the cluster's configuration, the
 * peer directory (member ID -> slot and address), the online checkers it feeds
 * (checkers/raft_safety.h, checkers/kv_hash.h) and what it does when a feed fails,
 * the sink of its node events and typed hooks, and the membership actions a member
 * add or remove asks of the world (a slot for the new member, start it, stop the
 * removed one). A member reaches the harness only through this table.
 *
 * Two implementations: the simulator's cluster (cluster.c, exactly the calls a member
 * made on struct srv_cluster before, in the same order, so no digest moves), and one
 * member process of `faultline member` (harness/live/live_member.c), whose directory
 * is the --peers list and whose events go to a file the harness reads.
 *
 * Shape as env.h: one table of function pointers, every member filled, an instance
 * embedded first in the implementer's own state; callers use the srv_host_* wrappers
 * of srv_int.h.
 */
#ifndef FL_SERVER_HOST_H
#define FL_SERVER_HOST_H

#include "nodes/server/server.h"

struct srv_host;
struct raft_safety;
struct kvhash;
struct fl_arena_pool;

struct srv_host_ops {
    /* The knobs every member of the cluster shares (valid as long as the host). */
    const struct srv_config *(*config)(struct srv_host *h);
    /* Pre-vote for the member starting on slot node. */
    bool (*prevote)(struct srv_host *h, int node);
    /* Directory: the slot (1-based) of member_id, -1 when unknown; the address its
     * peer port is dialled at (env_connect's peer), -1 when unknown. */
    int (*dir_node)(struct srv_host *h, uint64_t member_id);
    int (*dir_proc)(struct srv_host *h, uint64_t member_id);
    /* Has member_id ever run (etcd's IsStarted)? */
    bool (*member_started)(struct srv_host *h, uint64_t member_id);
    /* Slots ever made, and whether slot node is taken (ran a member or was removed):
     * member add picks the lowest free one. */
    int (*slots)(struct srv_host *h);
    bool (*slot_used)(struct srv_host *h, int node);
    /* The online checkers of a cluster ID (created on first use, owned by the host). */
    struct raft_safety *(*safety)(struct srv_host *h, uint64_t cluster_id);
    struct kvhash *(*kvhash)(struct srv_host *h, uint64_t cluster_id);
    /* A feed of the safety checker failed, or a restart found a WAL that is not a
     * Raft log: json describes it (valid during the call). The simulator records the
     * first and stops the world. */
    void (*safety_failed)(struct srv_host *h, int node, uint64_t member_id, uint64_t term,
                          const char *json);
    /* Two members' KV hashes differ at one revision (the run goes on). */
    void (*kv_corrupt)(struct srv_host *h, int node, uint64_t member_id, uint64_t term,
                       const char *json);
    /* A node event (at_ns is stamped by the host; a NULL detail becomes ""). */
    void (*emit)(struct srv_host *h, struct srv_event *ev);
    /* A typed hook is wanted (members skip building hook events otherwise), and one. */
    bool (*hooked)(struct srv_host *h);
    void (*hook)(struct srv_host *h, const struct srv_hook_event *ev);
    /* Member add: the slot that will run member_id (see srv_cluster_dir_register). */
    int (*dir_register)(struct srv_host *h, int node, uint64_t member_id);
    /* The proposer applied a member add (see srv_cluster_start_joiner). */
    void (*start_joiner)(struct srv_host *h, int node, uint64_t member_id, uint64_t cluster_id,
                         bool start);
    /* The member on slot node applied its own removal. */
    void (*member_removed)(struct srv_host *h, int node);
    /* A fresh nonzero member ID (the "server/ids" stream in the simulator). */
    uint64_t (*new_id)(struct srv_host *h);
    /* The pool of first arena blocks of decoded client requests (pbarena.h). */
    struct fl_arena_pool *(*pb_pool)(struct srv_host *h);
};

struct srv_host {
    const struct srv_host_ops *ops;
};

#endif
