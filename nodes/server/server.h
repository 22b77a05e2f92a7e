/*
 * server.h: one etcd-like member (DESIGN §3.4). A member is a Raft core (nodes/raft)
 * plus an MVCC store (nodes/mvcc) plus an apply loop, driven through its process's
 * node environment (nodes/env/env.h; the cluster gives each slot one over a simulated
 * process, env_sim.h): peer messages travel as protobuf-c frames
 * (nodes/proto/raft.proto) over the environment's connections, the WAL and snapshot
 * files live in its files, and clients reach the member through the RPC envelope of
 * nodes/proto/rpc.proto on the client port. Only cluster.c and cluster_ctl.c (which
 * create, kill and restart the processes) see the simulator.
 *
 * Most users go through cluster.h, which creates and owns members. This header holds
 * what both share: the configuration knobs, the node-event observer, the status a
 * control call completes with, and the per-member read-only views (status, hash).
 *
 * A member never reads a wall clock or a global random source: every draw comes from
 * its environment's random stream, every wait from its environment's timers.
 */
#ifndef FL_SERVER_H
#define FL_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Ports on a member's process. */
#define SRV_CLIENT_PORT 2379
#define SRV_PEER_PORT   2380

enum srv_autocompact_mode {
    SRV_AUTOCOMPACT_NONE = 0,
    SRV_AUTOCOMPACT_REVISION, /* retention = revisions kept; every 5 min (etcd) */
    SRV_AUTOCOMPACT_PERIODIC  /* retention = a duration in ns (etcd 3.3 semantics) */
};

/* Knobs of one cluster; every member of a cluster shares them. Defaults (etcd's, see
 * srv_config_default) in brackets. */
struct srv_config {
    int nodes;                                      /* initial voters [3] */
    int64_t election_ms;                            /* [1000] */
    int64_t heartbeat_ms;                           /* [100] */
    bool prevote;                                   /* [true, etcd 3.5+] */
    bool check_quorum;                              /* [true] */
    bool strict_reconfig_check;                     /* [true] */
    uint64_t snapshot_count;                        /* applied entries between snapshots [100000] */
    uint64_t snapshot_catchup_entries;              /* entries kept after a snapshot [5000] */
    int64_t quota_backend_bytes;                    /* [2 GiB]; < 0 disables the quota */
    enum srv_autocompact_mode auto_compaction_mode; /* [NONE] */
    int64_t auto_compaction_retention;              /* revisions, or ns in periodic mode [0] */
    int64_t fsync_latency_ns;                       /* simulated fsync time of each disk [1 ms] */
    uint64_t max_msg_bytes;                         /* raft MaxSizePerMsg [1 MiB] */
    int max_inflight_msgs;                          /* raft MaxInflightMsgs [512] */
    int64_t request_timeout_ms;                     /* [0 = 5 s + 2 x election_ms] */
    uint64_t max_request_bytes;                     /* [1.5 MiB] */
    int max_txn_ops;                                /* [128] */
    int64_t progress_notify_ms;                     /* watch progress notify interval [10 min] */
    int watch_buffer; /* responses a watch stream buffers (etcd's chanBufLen) [128] */
};
void srv_config_default(struct srv_config *c);
/* Returns NULL when c is usable, else a static message naming the bad knob. */
const char *srv_config_check(const struct srv_config *c);

/* Node events (node_events table, DESIGN §3.6). kind is one of the SRV_EV_* strings
 * below; detail is a short human text (e.g. the reason of a rejected vote), never
 * NULL. The strings are valid only during the callback. */
#define SRV_EV_CAMPAIGN         "campaign"
#define SRV_EV_PREVOTE          "prevote"
#define SRV_EV_VOTE_GRANTED     "vote_granted"
#define SRV_EV_VOTE_REJECTED    "vote_rejected"
#define SRV_EV_LEADER           "leader"
#define SRV_EV_STEP_DOWN        "step_down"
#define SRV_EV_TERM             "term"
#define SRV_EV_CRASH            "crash"
#define SRV_EV_RESTART          "restart"
#define SRV_EV_SNAPSHOT_SENT    "snapshot_sent"
#define SRV_EV_SNAPSHOT_APPLIED "snapshot_applied"
#define SRV_EV_SNAPSHOT         "snapshot" /* a member took a local snapshot */
#define SRV_EV_CONF_CHANGE      "conf_change"
#define SRV_EV_DEFRAG           "defrag"
#define SRV_EV_ALARM            "alarm"
#define SRV_EV_COMPACT          "compact"
#define SRV_EV_PAUSE            "pause"
#define SRV_EV_RESUME           "resume"
#define SRV_EV_SAFETY           "raft_safety" /* the online checker found a violation */
#define SRV_EV_CORRUPT          "kv_corrupt"  /* members' KV hashes differ at a revision */
#define SRV_EV_LEASE_END        "lease_end"   /* a lease expired: its revoke was applied */
/* The detail of the SRV_EV_RESTART (term 0) of a member that joined through a member add. */
#define SRV_EV_JOINED_DETAIL "joined as a new member"

/* Bytes borrowed for the duration of an observer callback. */
struct srv_bytes {
    const uint8_t *p;
    size_t n;
};

/* The typed facts of a node event (node_events' typed columns; the detail text says the
 * same in words and stays as it was). Strings are static. */
struct srv_event_fields {
    int peer;               /* the other member's slot when the event names one, else 0 */
    uint64_t index;         /* a log index (leader: its first; conf_change: the entry;
                               snapshot*: the snapshot's), a revision for compact; 0 none */
    const char *from_state; /* a role change: "follower", "pre_candidate", "candidate", */
    const char *to_state;   /* "leader"; NULL when the event is none */
    const char *reason;     /* raft.h raft_reason_name: "log_not_up_to_date", ...; NULL none */
    bool vote;              /* vote_granted / vote_rejected: pre says which kind */
    bool pre;               /* ... a pre-vote */
};

struct srv_event {
    int64_t at_ns;      /* simulated time */
    int node;           /* cluster slot, 1-based (see cluster.h) */
    uint64_t member_id; /* Raft/etcd member ID of that slot (0 before it has one) */
    const char *kind;   /* SRV_EV_* */
    uint64_t term;      /* the member's Raft term when it happened */
    const char *detail; /* never NULL */
    struct srv_event_fields f;
    int64_t revision;  /* SRV_EV_COMPACT: the revision compacted to; 0 for other kinds */
    int64_t store_rev; /* SRV_EV_COMPACT: the member's current revision then (the
                          compaction response's header revision); 0 otherwise */
    /* SRV_EV_LEASE_END (an expiry the leader proposed through Raft, applied on this
     * member): the lease, the keys it held, in byte order, deleted at `revision`
     * (when it held none: nothing written, revision = the current revision). */
    int64_t lease_id;
    const struct srv_bytes *keys;
    size_t n_keys;
};
typedef void (*srv_observer_fn)(void *ud, const struct srv_event *ev);

/* Typed node events, for faults that fire at the right moment (Lua's on(), the
 * nemesis triggers of harness/run). Unlike the SRV_EV_* rows above they are recorded
 * nowhere and fold into no digest: the cluster calls its hook only when one is set
 * (srv_cluster_set_hook), so a run without a hook is unchanged by them. Each says
 * where in the member's life it is emitted: an action the hook schedules at the
 * current time runs right after the event that emitted it, before anything else of
 * that member (e.g. before an fsync in flight completes). */
enum srv_hook_kind {
    SRV_HOOK_VOTE_GRANTED = 0, /* granted its vote (or pre-vote) to peer: persisted and sent */
    SRV_HOOK_TERM,             /* its term changed (the new term persisted) */
    SRV_HOOK_LEADER,           /* became leader */
    SRV_HOOK_APPEND,           /* entries up to index written to the WAL, fsync in flight */
    SRV_HOOK_PERSISTED,        /* that fsync completed: entries up to index durable (and sent) */
    SRV_HOOK_SNAPSHOT_SENT,    /* the leader sent its snapshot at index to peer */
    SRV_HOOK_SNAPSHOT_INSTALL, /* a follower wrote a leader's snapshot at index; not yet durable */
    SRV_HOOK_SNAPSHOT_APPLIED, /* ... and reported it installed (its WAL record persisted) */
    SRV_HOOK_CONF_CHANGE,      /* a configuration entry at index is in force (appended) */
    SRV_HOOK_CONF_APPLIED,     /* the configuration entry at index was applied */
    SRV_HOOK_COMPACT,          /* the store compacted to revision `index` */
    SRV_HOOK_DEFRAG,           /* defragmentation started (the member is blocked meanwhile) */
    SRV_HOOK_SNAPSHOT,         /* a local snapshot at index was taken */
    SRV_HOOK_KIND_COUNT
};
/* "vote_granted", "term", "leader", "append", "persisted", "snapshot_sent",
 * "snapshot_install", "snapshot_applied", "conf_change", "conf_applied", "compact",
 * "defrag", "snapshot"; NULL out of range. */
const char *srv_hook_kind_name(enum srv_hook_kind k);
/* The kind with that name, or -1. */
int srv_hook_kind_find(const char *name);

struct srv_hook_event {
    enum srv_hook_kind kind;
    int node;           /* cluster slot */
    uint64_t term;      /* the member's term then */
    uint64_t index;     /* a log index (a revision for SRV_HOOK_COMPACT); 0 when none */
    int peer;           /* the other member's slot when the event names one, else 0 */
    bool pre;           /* SRV_HOOK_VOTE_GRANTED: a pre-vote */
    bool leader;        /* the member leads (its role as of its last ready) */
    const char *reason; /* the Raft event's typed reason (srv_event_fields), NULL none:
                           SRV_HOOK_TERM "campaign" / "higher_term", ... */
    const char *detail; /* never NULL; valid during the call */
};
typedef void (*srv_hook_fn)(void *ud, const struct srv_hook_event *ev);

/* How a control call (member add/remove/promote, move_leader, compact, defrag,
 * snapshot_save, alarm disarm, ...) ended. code is a gRPC code (0 = OK); text is the
 * exact etcd error text when code != 0, else "". The struct and its strings are valid
 * only during the callback. */
struct srv_status {
    int code;
    const char *text;
};

/* The version a member reports in Maintenance.Status (StatusResponse.version), an etcd
 * semantic version string: the release whose defaults the members model (pre-vote on,
 * snapshot_count 100000), marked as ours. */
#define SRV_VERSION "3.5.0-faultline"

/* One active alarm as Maintenance.Alarm / Status report it. */
struct srv_alarm_info {
    uint64_t member_id; /* the member that raised it */
    uint32_t type;      /* RPC__ALARM_TYPE__NOSPACE (1), RPC__ALARM_TYPE__CORRUPT (2) */
};
#define SRV_STATUS_ALARMS_MAX 16
/* "NOSPACE", "CORRUPT", or "NONE" for any other type. */
const char *srv_alarm_type_name(uint32_t type);

/* What Maintenance.Status reports (and what health_aware clients probe). */
struct srv_member_status {
    uint64_t member_id;
    uint64_t cluster_id;
    uint64_t leader_id;      /* 0: no leader known */
    uint64_t raft_term;      /* the Raft term */
    uint64_t applied_term;   /* etcd's Status raftTerm: the last applied entry's term */
    uint64_t raft_index;     /* last log index */
    uint64_t raft_last_term; /* the term of the last log entry (the election restriction's) */
    uint64_t raft_applied;   /* applied index */
    uint64_t commit_index;
    int64_t revision; /* MVCC current revision */
    int64_t compact_revision;
    int64_t db_size_bytes;
    int64_t db_size_in_use_bytes;
    bool is_learner;
    bool nospace_alarm;
    /* The alarms this member knows to be active, ordered by (member_id, type). */
    struct srv_alarm_info alarms[SRV_STATUS_ALARMS_MAX];
    uint32_t n_alarms;
    /* Simulated time at which a quorum of voters (self included) was last known to be
     * in contact with this member: the leader's check-quorum view, or for a follower
     * the last message from a leader. -1: never. */
    int64_t last_quorum_contact_ns;
    /* Watchers and watch streams this member's watch bookkeeping examined (store
     * matching, catch-up, draining; stream lookups): a work count for tests. */
    uint64_t watch_steps;
    /* The store's live watchers and, of them, the unsynced ones (mvcc_watcher_counts). */
    int64_t watchers, unsynced_watchers;
};

#endif
