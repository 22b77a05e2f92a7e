/*
 * run.h: the run driver (DESIGN §2). A run_world owns everything one run needs: the
 * simulated world, the cluster, the clients, the history recorder, the built-in C
 * workload and the nemesis. It knows nothing about Lua: harness/lua drives it through
 * this header, and so can C code that wants a run without a script (bench, tests).
 *
 * Life of a run:
 *   run_world_open()       world + recorder; the run row is written ('error' until the end)
 *   run_world_setup()      cluster, clients, workload (scenario{...} in Lua); implicit
 *                          with defaults at the first call that needs the cluster
 *   run_at()/run_step()    the caller's scheduler: timers on the simulated clock, one event
 *                          processed per run_step
 *   run_kill() ...         faults; every fault applied is recorded in `faults`
 *   run_world_finish()     stops the workload, drains, runs the checkers, stores the
 *                          verdicts, computes the digest and builds the --json summary
 *   run_world_close()
 *
 * Node ids are 1-based member ids as the cluster names them. Every function that takes
 * a node id returns FL_ENOENT for an unknown one and leaves the world untouched.
 * Nothing here reads a clock (except wall_ms for the summary) or an environment.
 */
#ifndef FL_RUN_H
#define FL_RUN_H

#include "harness/common/common.h"

#include <jansson.h>

struct run_world;
struct kvc_client;

/* Options of one run, fixed before it starts. Strings are borrowed for the duration of
 * run_world_open only (the world copies what it keeps). */
struct run_options {
    const char *scenario; /* path as given by the user; recorded in runs.scenario */
    uint64_t seed;
    const char *db_path;     /* NULL: no database (bench); the run still has a digest */
    const char *const *bugs; /* names passed with --bug, already validated */
    int bug_count;
    bool unsafe_lua; /* recorded in runs.options only */
    /* Tests: compare the history kept in memory with the database's at the end, whatever
     * its size (run_mirror.c does it anyway up to a few thousand operations). */
    bool verify_history;
    /* --paranoid: after every simulated event, every live member's Raft and MVCC cores
     * check their invariants (raft_invariants_ok, mvcc_invariants_ok); the first broken
     * one stops the run and fails it (run_paranoid.c). Changes no event and no digest. */
    bool paranoid;
    /* Where the scenario runs (issue 16 §3): RUN_TARGET_SIM, the simulator (default), or
     * RUN_TARGET_ETCD, a real etcd cluster (run_target_etcd.c): wall-clock paced, no
     * digest; its members' data and logs under workdir (NULL: a fresh directory under
     * $TMPDIR, removed at the end unless keep). RUN_TARGET_LIVE: our own members, each
     * its own OS process (`faultline member`, run_target_live.c), likewise paced and
     * without a digest. */
    int target;
    const char *workdir;
    bool keep;
};

enum run_target { RUN_TARGET_SIM = 0, RUN_TARGET_ETCD = 1, RUN_TARGET_LIVE = 2 };
/* "sim" / "etcd" / "live"; run_target_find gives -1 for an unknown name. */
const char *run_target_name(int target);
int run_target_find(const char *name);
/* NULL when the scenario function `api` (a name of scn_api_names) can run on the
 * run's target; else why it cannot (static text), e.g. skew on etcd. */
const char *run_target_unsupported(const struct run_world *rw, const char *api);
int run_target(const struct run_world *rw);

/* Cluster shape and knobs: scenario{ cluster = {...} }. Zero means "the default". */
struct run_cluster_config {
    int nodes;                         /* default 3 */
    int election_ms;                   /* default 1000 */
    int heartbeat_ms;                  /* default 100 */
    int prevote;                       /* -1 default (on), 0 off, 1 on */
    int check_quorum;                  /* -1 default (on), 0 off, 1 on */
    int snapshot_count;                /* default: the server's */
    int snapshot_catchup;              /* entries kept after a snapshot; default 5000 */
    int64_t quota_bytes;               /* backend quota; default: the server's */
    int64_t fsync_us;                  /* simulated fsync latency; default 1000 */
    int net_latency_us;                /* one-way base latency; default: the simulator's */
    int net_jitter_us;                 /* default: the simulator's */
    int auto_compaction_mode;          /* 0 off, 1 revision, 2 periodic */
    int64_t auto_compaction_retention; /* revisions (mode 1) or ms (mode 2) */
    int progress_notify_ms;            /* watch progress notify interval; default 10 min */
    int max_msg_bytes;                 /* Raft MaxSizePerMsg; default 1 MiB */
    int watch_buffer;                  /* a watch stream's buffer (etcd's chanBufLen); 128 */
    bool loose_reconfig; /* etcd's --strict-reconfig-check=false: membership changes are
                            made whatever the members' health; default false (checked) */
};

#define RUN_BALANCER_NAME_MAX 32
#define RUN_BALANCERS_MAX     512 /* = the most clients a run has */
/* Clients: scenario{ clients = {...} }. */
struct run_clients_config {
    int count;                            /* default 2 */
    char balancer[RUN_BALANCER_NAME_MAX]; /* default "round_robin" */
    int timeout_ms;                       /* per-call timeout; default 2000 */
    /* Per-client balancers (client i gets balancers[i - 1]); n_balancers 0: every
     * client gets `balancer`. When set, count is n_balancers. */
    char balancers[RUN_BALANCERS_MAX][RUN_BALANCER_NAME_MAX];
    int n_balancers;
};

/* Workload features beyond the plain mix (run_workload.c); none by default. Each draws
 * from its own streams, so turning one on never moves the plain workload's draws. */
enum {
    RUN_WL_LEASES = 1 << 0,      /* mix_lease: grants of short leases, puts attached to them,
                                    keep-alive streams; leases expire */
    RUN_WL_WATCH_CHURN = 1 << 1, /* watches opened and cancelled over time: single key, prefix
                                    or all; start revision now, past or future; prev_kv,
                                    progress_notify, put/delete filters; a watch cancelled by
                                    compaction reopens at the compact revision */
    RUN_WL_MULTI_TXN = 1 << 2,   /* txns of 1-4 operations with value/version/mod compares */
    RUN_WL_READ_MORE = 1 << 3,   /* gets with limit, at a past revision, serializable */
    RUN_WL_WATCH_REOPEN = 1 << 4 /* the `watchers` reopen at the compact revision when a
                                    compaction cancels them (etcd's robustness collectors),
                                    and the swarm compacts no further than they reached */
};

/* The built-in C workload: scenario{ workload = {...} }. rate 0 means no workload. */
struct run_workload_config {
    int rate; /* operations per simulated second over all clients */
    int keys; /* key space key0..key{keys-1}; default 10 */
    int mix_put, mix_get, mix_delete, mix_txn, mix_range; /* weights; default 5/4/1/1/1 */
    int watchers;       /* watches over the whole key range, spread over the clients */
    int value_size;     /* bytes of each value, at least the unique prefix; default 16 */
    unsigned features;  /* RUN_WL_* */
    int mix_lease;      /* weight of lease operations (RUN_WL_LEASES) */
    int lease_ttl_s;    /* TTL of granted leases (RUN_WL_LEASES); default 3 */
    int watch_every_ms; /* mean gap between watch openings (RUN_WL_WATCH_CHURN); default 1000 */
};

/* Checkers that judge the run (scenario{ checks = {...} }); expect is always on. */
enum {
    RUN_CHECK_LINEARIZABILITY = 1 << 0,
    RUN_CHECK_WATCH = 1 << 1,
    RUN_CHECK_RAFT_SAFETY = 1 << 2,
    RUN_CHECK_CONVERGE = 1 << 3,
    RUN_CHECK_ALL = 0xf,
    /* checkers/liveness.h: opt-in (not in RUN_CHECK_ALL, the default of a scenario
     * without checks = {...}): it judges only runs that heal or keep a quorum */
    RUN_CHECK_LIVENESS = 1 << 4
};

/* Fills the defaults documented above. */
void run_cluster_config_default(struct run_cluster_config *c);
void run_clients_config_default(struct run_clients_config *c);
void run_workload_config_default(struct run_workload_config *w);

/* Opens a world for opts. On failure returns an fl_err, writes a one-line message into
 * err and *out is NULL (e.g. FL_EIO: the database cannot be opened). The caller owns
 * *out and closes it with run_world_close. */
int run_world_open(struct run_world **out, const struct run_options *opts, char *err,
                   size_t err_len);
/* Creates the cluster, the clients and the workload. Once per world; FL_EINVAL with a
 * message in err for a bad value (e.g. an unknown balancer). */
int run_world_setup(struct run_world *rw, const struct run_cluster_config *cluster,
                    const struct run_clients_config *clients,
                    const struct run_workload_config *workload, unsigned checks, char *err,
                    size_t err_len);
bool run_world_is_setup(const struct run_world *rw);
void run_world_close(struct run_world *rw);

/* --- scheduler -------------------------------------------------------------------- */
int64_t run_now_ns(const struct run_world *rw);
/* Calls fn(arg) from the event loop at simulated time at_ns (now if in the past). */
void run_at(struct run_world *rw, int64_t at_ns, void (*fn)(void *arg), void *arg);
/* Processes one event; false when the queue is empty or the run must stop. */
bool run_step(struct run_world *rw);
/* True when the run must stop early: SIGINT (hist_interrupted), an online Raft
 * safety violation or (--paranoid) a broken core invariant. The scenario then ends and
 * run_world_finish judges it. */
bool run_world_stopped(struct run_world *rw);
/* Processes events until simulated time reaches until_ns (inclusive). */
void run_advance(struct run_world *rw, int64_t until_ns);
/* The next 64 random bits of the scenario's own stream ("lua"), used by math.random.
 * run_rng_reseed restarts that stream from (master seed, "lua", n). */
uint64_t run_rng_next(struct run_world *rw);
void run_rng_reseed(struct run_world *rw, uint64_t n);

/* --- cluster view ------------------------------------------------------------------- */
int run_leader(struct run_world *rw); /* 0 when none is known */
/* The leader as Lua's leader() reports it: run_leader once its "leader" node event is
 * recorded (srv_cluster_leader_announced), so leader() never runs ahead of node_events. */
int run_leader_announced(struct run_world *rw);
int run_nodes(struct run_world *rw, int *ids, int ids_max); /* members, ascending */
bool run_node_exists(struct run_world *rw, int id);

/* What a scenario may observe of a member now (run_observe.c). member_id/leader_id are
 * the 64-bit etcd IDs (0: none known); leader_node is the slot of the leader this member
 * knows (0: none). A killed member reports alive false and zero Raft figures. */
struct run_node_status {
    bool alive, paused, removed, learner, is_leader;
    uint64_t member_id, leader_id, cluster_id;
    int leader_node;
    uint64_t term, last_index, commit, applied;
    /* The term of the last entry in the member's log (Raft's election restriction
     * compares it before the length). Filled by the simulation; the live and etcd
     * targets leave it 0 (etcd's Status reports no such figure). */
    uint64_t last_log_term;
    int64_t revision;
    /* Simulated time a quorum was last known in contact: a leader's check-quorum view,
     * a follower's last message from a leader; -1 never. */
    int64_t leader_contact_ns;
    /* Maintenance Status (etcd's StatusResponse): db sizes in bytes, the backend quota in
     * force (0: none), the active alarms, the version string (server.h SRV_VERSION). */
    int64_t db_size, db_size_in_use, quota_backend_bytes;
    struct run_alarm {
        uint64_t member_id;
        const char *alarm; /* "NOSPACE", "CORRUPT" (static) */
    } alarms[16];
    int n_alarms;
    const char *version; /* static */
    /* Maintenance Status raftTerm: etcd reports s.Term(), the term of the last entry
     * this member's process applied (0 until it applies one), not its Raft term. */
    uint64_t status_term;
};
int run_node_status(struct run_world *rw, int id, struct run_node_status *out); /* FL_ENOENT */
/* A member's configuration (the knobs of scenario.cluster as the member runs with
 * them, etcd's defaults where the scenario set none). */
struct run_node_config {
    uint64_t snapshot_count, snapshot_catchup_entries;
    int64_t quota_backend_bytes;       /* 0: none (a negative quota disables it) */
    int auto_compaction_mode;          /* 0 none, 1 revision, 2 periodic */
    int64_t auto_compaction_retention; /* revisions (mode 1) or ms (mode 2); 0 when none */
    int64_t election_ms, heartbeat_ms, request_timeout_ms, progress_notify_ms, fsync_us;
    bool prevote, check_quorum, strict_reconfig_check;
    uint64_t max_request_bytes, max_msg_bytes;
    int max_txn_ops, max_inflight_msgs;
};
int run_node_config(struct run_world *rw, int id, struct run_node_config *out); /* FL_ENOENT */
/* Every node event so far (node_events rows: campaign, vote_rejected, leader, ...), in
 * the order the cluster emitted them. Valid until the next event. */
struct run_node_event {
    int64_t at_ns;
    int node;
    uint64_t term;
    char kind[24];
    char detail[160];
    /* typed facts (server.h srv_event_fields): peer slot and index 0 when none; the
     * strings static, NULL when none; pre meaningful when vote */
    int peer;
    uint64_t index;
    const char *from_state, *to_state, *reason;
    bool vote, pre;
};
const struct run_node_event *run_node_events(const struct run_world *rw, size_t *n);
/* The member on slot id runs with pre-vote `on` from its next start (restart) on, as
 * etcd's per-member --pre-vote flag. FL_ENOENT for an unknown id. */
int run_set_prevote(struct run_world *rw, int id, bool on);

/* --- faults (each recorded in `faults`) --------------------------------------------- */
int run_kill(struct run_world *rw, int id);
int run_restart(struct run_world *rw, int id);
int run_pause(struct run_world *rw, int id);
int run_resume(struct run_world *rw, int id);
/* A node's timers run at rate_ppm / 1e6 of real speed (1000000 = no skew). */
int run_skew(struct run_world *rw, int id, int64_t rate_ppm);
/* Network faults take endpoints: a member slot (1, 2, ...) or a client, RUN_EP_CLIENT(i)
 * for client i (1-based, as run_client). An unknown member or client is FL_ENOENT and
 * leaves the world untouched. A cut between a client and a member acts on that link
 * alone: the client's connections there hang until its own timeouts, as a real cut
 * would; links between members change only when both are named. */
#define RUN_EP_CLIENT(i)    (-(i))
#define RUN_EP_IS_CLIENT(e) ((e) < 0)
#define RUN_EPS_MAX         (32 + RUN_BALANCERS_MAX) /* a side: every member and client */
bool run_endpoint_exists(struct run_world *rw, int e);
/* Cuts every link from a side to b side (and back unless oneway). FL_EINVAL when an
 * endpoint is on both sides. */
int run_partition(struct run_world *rw, const int *a, int na, const int *b, int nb, bool oneway);
/* A member: cut from every other member (clients still reach it). A client: cut from
 * every member. */
int run_isolate(struct run_world *rw, int e);
int run_heal(struct run_world *rw); /* every partition and clog */
/* Ends the fault phase: heals the network, clears drop/dup/delay, releases held
 * messages, resumes paused nodes, restarts killed ones, clears skew and failpoints,
 * stops the nemesis. */
int run_heal_all(struct run_world *rw);
/* Network-wide loss / duplication in parts per million and extra delay (every link,
 * those set by run_net_links too). */
int run_net(struct run_world *rw, int drop_ppm, int dup_ppm, int delay_ms);
/* The same on the links from a side to b side only (and back unless oneway); an empty
 * side (n = 0) is every endpoint, but not both (FL_EINVAL: that is run_net). Zero
 * figures put those links back to the base. Duplication acts on datagrams only:
 * connections (every client's, every peer stream) are never duplicated. */
int run_net_links(struct run_world *rw, const int *a, int na, const int *b, int nb, bool oneway,
                  int drop_ppm, int dup_ppm, int delay_ms);
/* One direction of links; an endpoint or 0 for every endpoint. */
int run_hold(struct run_world *rw, int from, int to);
int run_release(struct run_world *rw, int from, int to);
int run_clog(struct run_world *rw, int from, int to, bool on);
/* action: "crash", "error", "delay", "drop", "off"; p_ppm probability; count 0 = no limit. */
int run_failpoint(struct run_world *rw, const char *name, int node, const char *action, int p_ppm,
                  int count, int delay_ms, char *err, size_t err_len);
/* run_failpoint that ignores the first `skip` hits (gofail's "N*off->ACTION" terms). */
int run_failpoint_skip(struct run_world *rw, const char *name, int node, const char *action,
                       int p_ppm, int count, int skip, int delay_ms, char *err, size_t err_len);
int run_bug(struct run_world *rw, const char *name); /* FL_ENOENT for an unknown bug */

/* --- membership and maintenance ------------------------------------------------------ */
/* These go through the cluster as client RPCs would and finish later: done(arg, r) is
 * called exactly once from inside the event loop. r and its pointers are valid only
 * during the call. code is a gRPC code (0 = OK) and text etcd's error text. */
struct run_ctl_result {
    int code;
    const char *text;
    int node;            /* member_add: the new slot */
    int64_t revision;    /* compact, snapshot_save */
    const uint8_t *data; /* snapshot_save: the backup bytes */
    size_t len;
};
typedef void run_ctl_fn(void *arg, const struct run_ctl_result *r);
void run_member_add(struct run_world *rw, bool learner, run_ctl_fn *done, void *arg);
/* run_member_add whose new member is in the configuration but not started (etcd's
 * `member add` before the operator starts the process): run_member_start starts it. */
void run_member_add_unstarted(struct run_world *rw, bool learner, run_ctl_fn *done, void *arg);
/* Starts a member added unstarted (recorded as fault "member_start"). FL_ENOENT for an
 * unknown slot, FL_EINVAL for a member that is not awaiting its start. */
int run_member_start(struct run_world *rw, int node);
/* True while the member on slot node was added unstarted and not started yet. */
bool run_member_awaits_start(struct run_world *rw, int node);
void run_member_remove(struct run_world *rw, int node, run_ctl_fn *done, void *arg);
void run_member_promote(struct run_world *rw, int node, run_ctl_fn *done, void *arg);
void run_move_leader(struct run_world *rw, int node, run_ctl_fn *done, void *arg);
void run_compact(struct run_world *rw, int64_t revision, run_ctl_fn *done, void *arg);
void run_defrag(struct run_world *rw, int node, run_ctl_fn *done, void *arg);
void run_alarm_disarm(struct run_world *rw, run_ctl_fn *done, void *arg);
void run_snapshot_save(struct run_world *rw, int node, run_ctl_fn *done, void *arg);
/* A raw copy of a member's db file (no integrity hash); caller frees *data. */
int run_copy_db(struct run_world *rw, int node, uint8_t **data, size_t *len);
/* Restores a backup into the members `nodes` (a new cluster identity). FL_ECORRUPT /
 * FL_EINVAL with etcd's message in err when refused. */
int run_restore(struct run_world *rw, const uint8_t *data, size_t len, const int *nodes,
                int n_nodes, bool skip_hash_check, char *err, size_t err_len);

/* --- clients ------------------------------------------------------------------------- */
/* The i-th client (1-based), NULL when there is none. Its calls are recorded in the
 * history like the workload's. */
struct kvc_client *run_client(struct run_world *rw, int i);
int run_client_count(struct run_world *rw);

/* --- nemesis ------------------------------------------------------------------------ */
enum {
    RUN_NEMESIS_PARTITION = 1 << 0, /* Jepsen shapes: one, majority, ring, bridge, oneway */
    RUN_NEMESIS_KILL = 1 << 1,
    RUN_NEMESIS_PAUSE = 1 << 2,
    RUN_NEMESIS_SKEW = 1 << 3,
    RUN_NEMESIS_MEMBERSHIP = 1 << 4,
    RUN_NEMESIS_NET = 1 << 5, /* drop / dup / delay bursts */
    RUN_NEMESIS_ALL = 0x3f
};
/* Every every_ns (± half, from the fault stream) heals the previous fault and applies a
 * new one of the given kinds, until run_heal_all or duration_ns (0 = until healed). */
int run_nemesis(struct run_world *rw, unsigned kinds, int64_t every_ns, int64_t duration_ns);
/* Parses one nemesis kind name; 0 when unknown. */
unsigned run_nemesis_kind(const char *name);

/* --- swarm (run_swarm.c, run_lanes.c, run_trigger.c) --------------------------------- */
/* Swarm testing (FoundationDB's simulator, TigerBeetle's VOPR): each seed draws its own
 * world from the seed, from streams of its own ("swarm/<aspect>"), so that two aspects
 * never move each other's draws and a seed replays exactly. The aspects: */
enum {
    RUN_SWARM_CLUSTER = 1 << 0,  /* size 1/3/5/7, pre-vote, check-quorum, election and
                                    heartbeat, snapshot count and catch-up entries, auto-
                                    compaction, quota, fsync latency per member, network
                                    latency, Raft message size, progress notify interval */
    RUN_SWARM_CLIENTS = 1 << 1,  /* client count, balancer per client, request timeout */
    RUN_SWARM_WORKLOAD = 1 << 2, /* rate, keys, value size, mix, features (RUN_WL_*) */
    RUN_SWARM_FAULTS = 1 << 3,   /* which fault lanes are on and how often */
    RUN_SWARM_BUGGIFY = 1 << 4,  /* failpoints at etcd's gofail places, enabled at random */
    RUN_SWARM_TRIGGERS = 1 << 5, /* faults that fire on node events */
    RUN_SWARM_ALL = 0x3f
};
/* Fault lanes of the swarm nemesis. Each lane alternates, on its own period, between
 * applying a fault of its kind and undoing it, independently of the others, so faults
 * overlap (a partition during a membership change during a kill). */
enum {
    RUN_LANE_PARTITION = 1 << 0,     /* every Jepsen shape: one, majority, ring, bridge, one-way */
    RUN_LANE_KILL = 1 << 1,          /* kill one member or a few; restart in random order */
    RUN_LANE_POWER = 1 << 2,         /* power loss: every member at once (unsynced writes lost) */
    RUN_LANE_PAUSE = 1 << 3,         /* pause a member */
    RUN_LANE_SKEW = 1 << 4,          /* a member's clock runs fast or slow */
    RUN_LANE_NET = 1 << 5,           /* packet loss, duplication and delay */
    RUN_LANE_HOLD = 1 << 6,          /* hold a link's messages, release them later */
    RUN_LANE_MEMBERSHIP = 1 << 7,    /* add, add learner + promote, remove, remove the leader,
                                        replace, two changes at once */
    RUN_LANE_MOVE_LEADER = 1 << 8,   /* leadership transfer */
    RUN_LANE_COMPACT = 1 << 9,       /* compaction at a revision near the current one */
    RUN_LANE_DEFRAG = 1 << 10,       /* defragment a member */
    RUN_LANE_QUOTA = 1 << 11,        /* NOSPACE recovery: compact, defrag, alarm disarm */
    RUN_LANE_SNAPSHOT = 1 << 12,     /* a backup (snapshot save) from a member */
    RUN_LANE_SLOW = 1 << 13,         /* etcd's "sleep" failpoints: a slow disk (WAL writes wait),
                                        slow watch streams */
    RUN_LANE_LEADER_CRASH = 1 << 14, /* the leader crashes at its next WAL save, after the
                                        fsync and before the messages (raftAfterSave) */
    RUN_LANE_LAG = 1 << 15,          /* a follower whose watch streams are starved falls
                                        behind (cut off) and catches up by snapshot */
    RUN_LANE_CHURN = 1 << 16,        /* leader churn: the leader, then the next one or two
                                        elected, each crash with their newest entries durable
                                        on them alone; back in a random order */
    RUN_LANE_ALL = 0x1ffff,
    /* the lanes a swarm draws from at 35% each when swarm{} names none; churn is drawn
     * apart, on a stream of its own (run_swarm.c draw_later) */
    RUN_LANE_DEFAULT = 0xffff
};
#define RUN_LANE_COUNT 17
/* Not a lane of its own period but a flow drawn per seed (run_restore.c): a backup
 * taken during the fault phase, restored into every member at its end (etcd's
 * disaster recovery). Named "restore" in swarm{ lanes }; outside RUN_LANE_ALL so that
 * the lanes' draws never move. */
#define RUN_LANE_RESTORE (1u << 31)
/* Parses one lane name ("partition", "kill", "power", ...); 0 when unknown. */
unsigned run_lane_find(const char *name);
const char *run_lane_name(unsigned bit);

#define RUN_SWARM_SIZES_MAX 8
struct run_swarm_options {
    unsigned aspects;               /* RUN_SWARM_* */
    int sizes[RUN_SWARM_SIZES_MAX]; /* cluster sizes to draw from; none: 1, 3, 5, 7 */
    int n_sizes;
    unsigned lanes; /* fault lanes the swarm may turn on; 0: every lane */
};
/* Draws this seed's world for the aspects asked for. The draws are kept in the world
 * (run_swarm_apply, run_nemesis_swarm), recorded as a `faults` row (kind "swarm") and
 * in the --json summary ("swarm"); *drawn (if given) gets the same object, borrowed.
 * Once per world, before run_world_setup; FL_EINVAL otherwise. */
int run_swarm_draw(struct run_world *rw, const struct run_swarm_options *o, json_t **drawn);
/* Replaces c, k and w by what was drawn, for the aspects drawn (the cluster, the
 * clients, the workload are drawn whole); the others keep the caller's values. */
void run_swarm_apply(const struct run_world *rw, struct run_cluster_config *c,
                     struct run_clients_config *k, struct run_workload_config *w);
bool run_swarm_active(const struct run_world *rw, unsigned aspect);
/* One line that says what a swarm drew (the summary's "swarm" object), for the replay
 * and shrink lines: "5 nodes (pre-vote, check-quorum, election 1400 ms), 7 clients;
 * lanes partition kill ...; failpoints raft/after_save:crash@n2; triggers kill on
 * append". Empty when swarm is NULL. */
void run_swarm_brief(const json_t *swarm, struct fl_buf *out);
/* The swarm's fault phase: the drawn fault lanes, BUGGIFY failpoints and triggers,
 * until run_heal_all or duration_ns (0: until healed). Time spans drawn by the swarm
 * are taken at scale_pct percent (shrink{ time_scale }). Ordinals: this call has one
 * (skipped: nothing applies, lanes keep their ticks); every lane tick that applies a
 * fault, every failpoint and every trigger rule has its own, and each firing of a
 * trigger rule R is ordinal R * RUN_FIRING_BASE + k (k = 1, 2, ...), so firings,
 * which depend on the cluster's state, never move the ordinals of anything else. */
int run_nemesis_swarm(struct run_world *rw, int64_t duration_ns, int scale_pct);
#define RUN_FIRING_BASE INT64_C(1000000)

/* Typed node events (server.h srv_hook_kind) for Lua's on(): fn is called for every
 * event of a kind in `kinds` (a bit per srv_hook_kind), from inside the event loop,
 * right when the member emits it. One subscriber; fn NULL unsubscribes. */
struct run_event {
    const char *kind; /* srv_hook_kind_name */
    int64_t at_ns;
    int node, peer; /* slots; peer 0 when none */
    uint64_t term, index;
    bool pre;           /* vote_granted: a pre-vote */
    bool leader;        /* the member leads */
    const char *reason; /* the Raft event's typed reason (e.g. term: "campaign"); NULL none */
    const char *detail;
};
typedef void run_event_fn(void *ud, const struct run_event *ev);
/* The bit position of an event kind name for run_on_events' `kinds`, or -1. */
int run_event_kind_find(const char *name);
void run_on_events(struct run_world *rw, unsigned kinds, run_event_fn *fn, void *ud);
/* Records a rule (an on() call) in `faults` under the ordinal in progress. */
void run_log_rule(struct run_world *rw, const char *kind, const char *target);

/* --- fault ordinals (faultline shrink) ------------------------------------------------ */
/* Every fault application gets an ordinal 1, 2, 3... in the order it happens: each call
 * of run_kill, run_restart, run_pause, run_resume, run_skew, run_partition, run_isolate,
 * run_heal, run_net, run_net_links, run_hold, run_release, run_clog, run_failpoint and
 * run_nemesis made by the caller, and each fault the nemesis draws (its undo, a tick
 * later, shares the ordinal). run_heal_all, run_bug, membership and maintenance calls have none
 * (they cannot be skipped). The ordinal is in the summary's `faults` items ("ordinal") and the
 * count in its "fault_ordinals".
 *
 * Skipped ordinals (sorted or not, duplicates allowed) are still counted but do
 * nothing and are not recorded, so the ordinals of later faults do not move; a skipped
 * run_nemesis keeps its ticks (and their ordinals) but applies none of them. Each
 * nemesis tick draws from its own stream ("fault/nemesis/<tick>") and ticks alternate
 * strictly between drawing a fault and undoing it, so a skipped fault does not move the
 * time or the choice of any other tick. Call before the first fault. */
void run_skip_faults(struct run_world *rw, const int64_t *ordinals, int n);
/* A rule that applies faults later, on events (Lua's on()): takes the next ordinal at
 * once; false when that ordinal is skipped (the rule then never fires). */
bool run_rule_begin(struct run_world *rw, int64_t *ordinal);
/* Runs fn(rw, arg) in the scope of `ordinal` (a rule's firing, rule * RUN_FIRING_BASE
 * + k; an added fault; the nemesis draw being undone), in one call: the faults fn
 * applies belong to that ordinal, take none of their own and do nothing when it is
 * skipped; the scope found is restored after, so none is left open to shift later
 * ordinals. RUN_SCOPE_LIVE runs fn only when the ordinal is not skipped;
 * RUN_SCOPE_ALWAYS runs it either way (a Lua coroutine goes on, its faults do
 * nothing). fn must leave the scope as it found it (asserted). Returns false when the
 * ordinal is skipped. */
typedef void run_fault_fn(struct run_world *rw, void *arg);
enum run_scope_mode { RUN_SCOPE_LIVE, RUN_SCOPE_ALWAYS };
bool run_scope(struct run_world *rw, int64_t ordinal, enum run_scope_mode mode, run_fault_fn *fn,
               void *arg);
bool run_fault_skipped(const struct run_world *rw, int64_t ordinal);
int64_t run_fault_ordinals(const struct run_world *rw); /* ordinals handed out so far */
/* The ordinal of the fault application in progress (or of the rule firing whose scope
 * is entered); 0 between them, which is where every fault call returns to. */
int64_t run_fault_current(const struct run_world *rw);
/* Faults a schedule adds at fixed times (run_added.c; shrink{ add_faults }): kind
 * RUN_ADD_* applied to member `node` at at_ns and undone for_ns later. Added fault i
 * (from 0) is ordinal RUN_ADDED_BASE + i + 1; with `on` it waits from at_ns for the
 * member's next event of that kind (the nemesis triggers' hook) and applies right
 * after it, e.g. between an append and its fsync. Call before the world is set up;
 * FL_EINVAL after, FL_ERANGE for a bad field. run_heal_all cancels what is pending. */
enum {
    RUN_ADD_KILL,
    RUN_ADD_POWER,
    RUN_ADD_PAUSE,
    RUN_ADD_ISOLATE,
    RUN_ADD_CRASH_SAVE,
    RUN_ADD_COUNT
};
#define RUN_ADDED_BASE INT64_C(1000000000000000)
#define RUN_ADDED_MAX  256
struct run_added_fault {
    int64_t at_ns, for_ns;
    int kind; /* RUN_ADD_* */
    int node; /* slot; ignored by power; 0 with `on`: whichever member emits the event */
    int on;   /* 0: at at_ns; else 1 + a srv_hook_kind: right after node's next such event
               * from at_ns on (a pre-vote is not a vote) */
};
int run_add_faults(struct run_world *rw, const struct run_added_fault *v, int n);
const char *run_added_kind_name(int kind); /* "kill", "power", "pause", "isolate", "crash_save" */
int run_added_kind_find(const char *name); /* -1 when unknown */
/* The name of event kind k (run_event_kind_find's inverse), "?" when none. */
const char *run_event_kind_name(int k);
/* The swarm's fault draws (lanes, lane ticks, failpoints, triggers) come from seed
 * instead of the run's seed (shrink{ reseed }); the cluster, clients and workload keep
 * theirs. Call before swarm{}. */
void run_reseed_faults(struct run_world *rw, uint64_t seed);
uint64_t run_fault_seed(const struct run_world *rw);
/* Simulated time of the next pending event; INT64_MAX when there is none. */
int64_t run_next_event_ns(struct run_world *rw);
/* Adds key = value to the --json summary at run_world_finish (replacing an earlier one
 * of that key). Takes ownership of value. For the scenario layer ("script_end_ms",
 * "shrink"); the keys of DESIGN §3.9 are the driver's own. */
void run_summary_set(struct run_world *rw, const char *key, json_t *value);

/* --- the expect checker ------------------------------------------------------------- */
/* Records one claim of the scenario: checker 'expect', detail = {"message", "observed",
 * "at_ns", "line"}. message is message_len bytes, kept faithfully: a JSON string when
 * valid UTF-8, else {"hex":"..."} (history.h's convention for bytes). observed_json may
 * be NULL. A false claim fails the run. */
void run_expect(struct run_world *rw, bool ok, const char *message, size_t message_len,
                const char *observed_json, int line);

/* --- the end ------------------------------------------------------------------------ */
enum run_verdict { RUN_PASS, RUN_FAIL, RUN_UNKNOWN, RUN_ERROR };
const char *run_verdict_name(enum run_verdict v);

struct run_result {
    enum run_verdict verdict;
    char digest[17];
    int exit_code;   /* DESIGN §3.9 */
    json_t *summary; /* the --json object; owned by the result */
    int64_t run_id;  /* in the database; 0 without one */
    /* Why the run itself failed (its history could not be written, read back or
     * verified), "" otherwise; run_world_finish then returns FL_EIO and exit_code is 2
     * for a corrupt database, else 3. */
    char error[640];
};
/* Ends the run. script_error non-NULL: the scenario failed (verdict 'error', exit 2) and
 * the checkers still run over what was recorded. Fills res; the caller closes it. */
int run_world_finish(struct run_world *rw, const char *script_error, struct run_result *res);
void run_result_close(struct run_result *res);

/* --- benchmark entry point (faultline bench, bench_cluster.c) ------------------------ */
struct run_bench_result {
    double sim_s;     /* simulated seconds run */
    double wall_s;    /* wall seconds, open to finish, recording and checking included */
    int64_t ops_done; /* completed client operations recorded */
};
/* One run without Lua: `nodes` members (3 for the bench's own figures), `clients` clients, the
 * workload at `rate` ops/s (0 = saturate: every client keeps one operation outstanding), for sim_ns
 * of simulated time, recording into a temporary database and running the checkers. e2e_speedup =
 * sim_s / wall_s; recorded_ops_per_s = ops_done / wall_s. */
int run_bench(uint64_t seed, int nodes, int clients, int rate, int64_t sim_ns,
              struct run_bench_result *out);

#endif
