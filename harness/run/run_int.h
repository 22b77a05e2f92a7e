/*
 * run_int.h: what the files of harness/run share: the run_world struct. See run.h.
 *
 * Files: run_world.c (open, set-up, scheduler, cluster and client observers),
 * run_record.c (client operations and watches into history rows, JSON shapes of
 * checkers.h), run_workload.c (the built-in C workload), run_fault.c (faults and the
 * nemesis, each logged in `faults`), run_finish.c (checkers, verdict, digest,
 * summary), run_bench.c (the bench entry point).
 */
#ifndef FL_RUN_INT_H
#define FL_RUN_INT_H

/* Internal to harness/run: compiled only into fl_run (which defines FL_INTERNAL_run)
 * and into the white-box tests that declare it (tests/CMakeLists.txt). */
#ifndef FL_INTERNAL_run
#error "harness/run/run_int.h is internal to harness/run: include its public header instead"
#endif

#include "harness/run/run.h"

#include "checkers/checkers.h"
#include "checkers/liveness.h"
#include "harness/common/bugs.h"
#include "harness/fault/fault.h"
#include "harness/history/history.h"
#include "harness/sim/sim.h"
#include "nodes/client/client.h"
#include "nodes/server/cluster.h"

#include <uv.h>

#define RUN_CLIENTS_MAX RUN_BALANCERS_MAX
#define RUN_NODES_MAX   32
_Static_assert(RUN_EPS_MAX == RUN_NODES_MAX + RUN_CLIENTS_MAX, "run.h: RUN_EPS_MAX");
#define RUN_WATCHERS_MAX 64

struct run_firing;
struct run_etcd; /* run_etcd.h: the etcd target */
struct run_live; /* run_target_live.c: the live target (our members as processes) */

/* A real target's hooks (run_target.c), called by the run driver (run_world.c,
 * run_fault.c, run_net.c, run_observe.c, run_paranoid.c, run_finish.c) instead of the
 * simulated cluster's; rw->tgt is NULL on the simulator. Members are slots 1..n, each
 * represented in the world by a process (node_proc) that the clients dial. The
 * simulator stays the scheduler, paced by the wall clock (pace, advance). A NULL hook
 * is a function the target does not have; the scenario functions that would need it
 * are refused before the script runs (refuses). */
typedef void run_target_ctl_fn(void *ud, const struct run_ctl_result *r);
struct run_target_refusal {
    const char *api, *why;
};
struct run_target_ops {
    const char *name;
    int (*setup)(struct run_world *rw, const struct run_cluster_config *cfg, char *err,
                 size_t err_len);
    void (*close)(struct run_world *rw); /* kills every member; NULL-safe before setup */
    void (*pace)(struct run_world *rw, int64_t t_ns);
    void (*advance)(struct run_world *rw, int64_t until_ns);
    int (*slots)(struct run_world *rw);
    int (*node_proc)(struct run_world *rw, int node);
    bool (*alive)(struct run_world *rw, int node);
    bool (*removed)(struct run_world *rw, int node);
    /* member_add{ start = false } (ctl "member_add_unstarted"): the member added and not
     * started yet; start(n) starts it. NULL: such adds are refused. */
    bool (*awaits_start)(struct run_world *rw, int node);
    int (*member_start)(struct run_world *rw, int node);
    int (*leader)(struct run_world *rw);
    int (*node_status)(struct run_world *rw, int id, struct run_node_status *out);
    const char *(*version)(struct run_world *rw); /* the members' version */
    void (*set_prevote)(struct run_world *rw, int id, bool on);
    /* kind: kill / restart / pause / resume */
    void (*node_fault)(struct run_world *rw, int id, const char *kind);
    void (*skew)(struct run_world *rw, int id, int64_t rate_ppm); /* NULL: refused */
    void (*net_sync)(struct run_world *rw);
    void (*clog)(struct run_world *rw, int from_proc, int to_proc, bool on);
    /* control calls (run_etcd.h run_etcd_ctl); NULL: refused */
    void (*ctl)(struct run_world *rw, const char *kind, int node, int64_t arg,
                run_target_ctl_fn *done, void *ud);
    int (*copy_db)(struct run_world *rw, int node, uint8_t **data, size_t *len);
    int (*restore)(struct run_world *rw, const uint8_t *data, size_t len, const int *nodes,
                   int n_nodes, bool skip_hash_check, char *err, size_t err_len);
    /* converge (NULL: converge is not on this target) */
    bool (*converged)(struct run_world *rw, json_t **state);
    int (*checkpoints)(struct run_world *rw, const json_t **corruption);
    /* raft_safety asked for: NULL, not on this target ("not_on_target"); else it is
     * 'unknown' with this reason */
    const char *raft_safety_unknown;
    /* raft_safety judged by the target itself (NULL: not): a CHK_* verdict and its detail
     * (*detail the caller's; "reason" when unknown) */
    int (*raft_safety)(struct run_world *rw, json_t **detail);
    /* liveness (NULL: not run on this target, "not_on_target"): whether slot node's member
     * counts as a voter (started, not removed, not a learner by its last Status), and
     * then *up (its process runs, not paused) and *skewed (its clock is not at 1x) */
    bool (*liveness_voter)(struct run_world *rw, int node, bool *up, bool *skewed);
    /* failpoint(name, { node, ... }) on a real target's members (node 0: every one); spec
     * as flt_enable's (its node unused), off: disable. NULL: the world's flt table (the
     * simulator). failpoint_refused (NULL: none is): why the target cannot make this one
     * real, or NULL when it can. */
    const char *(*failpoint_refused)(struct run_world *rw, const char *name, const char *action,
                                     int p_ppm, int count, int skip);
    int (*failpoint)(struct run_world *rw, const char *name, int node, const struct flt_spec *spec,
                     bool off, char *err, size_t err_len);
    unsigned nemesis_kinds;                   /* RUN_NEMESIS_* the target can draw */
    const struct run_target_refusal *refuses; /* {NULL, NULL}-terminated */
};
/* What both real targets share (run_target.c). Pacing (run_etcd.h): the simulator
 * stays the scheduler; an event at simulated time t runs once wall time since the
 * cluster came up (wall0_s) has reached t, and the libuv loop runs meanwhile; what the
 * loop brings in enters the world at the wall time it came (run_pacer_arrival). */
struct run_pacer {
    uv_loop_t *loop;
    uv_timer_t wake;
    double wall0_s;         /* monotonic wall seconds at simulated time 0 */
    int64_t injected_ns;    /* earliest event entered during a pace; INT64_MAX none */
    void (*turn)(void *ud); /* after every turn of the loop (NULL: nothing) */
    void *turn_ud;
};
double run_target_wall_s(void); /* CLOCK_MONOTONIC seconds (uv_hrtime's clock) */
/* wake initialised on loop; simulated time now is wall time now. */
void run_pacer_init(struct run_pacer *p, uv_loop_t *loop, struct sim_world *w);
void run_pacer_close(struct run_pacer *p); /* uv_close of wake */
int64_t run_pacer_wall_ns(const struct run_pacer *p);
/* The simulated time at which something that came now enters the world (never before
 * the world's now); noted so that the pace in progress returns. */
int64_t run_pacer_arrival(struct run_pacer *p, struct sim_world *w);
void run_pacer_pace(struct run_world *rw, struct run_pacer *p, int64_t t_ns);
void run_pacer_advance(struct run_world *rw, struct run_pacer *p, int64_t until_ns);
/* Doubly linked lists of a target's calls in flight. */
#define RUN_LINK(head, x)                                                                          \
    do {                                                                                           \
        (x)->prev = NULL;                                                                          \
        (x)->next = (head);                                                                        \
        if (head)                                                                                  \
            (head)->prev = (x);                                                                    \
        (head) = (x);                                                                              \
    } while (0)
#define RUN_UNLINK(head, x)                                                                        \
    do {                                                                                           \
        if ((x)->prev)                                                                             \
            (x)->prev->next = (x)->next;                                                           \
        else                                                                                       \
            (head) = (x)->next;                                                                    \
        if ((x)->next)                                                                             \
            (x)->next->prev = (x)->prev;                                                           \
    } while (0)

/* The table of target kind (RUN_TARGET_*): NULL for the simulator. */
const struct run_target_ops *run_target_ops_of(int kind);
extern const struct run_target_ops run_target_etcd_ops, run_target_live_ops;
struct run_added;
struct run_cov;

/* A pending run_at callback. Pending ones are linked in rw->calls so that a world
 * closed with timers still queued (an abandoned coroutine's sleep) frees them. */
struct run_call {
    void (*fn)(void *arg);
    void *arg;
    struct run_world *rw;
    struct run_call *prev, *next;
};

struct run_ctl_call;
/* Frees the control calls still waiting for an answer (the cluster is gone). */
void run_ctl_free_pending(struct run_world *rw);
/* A member joined through a member add (its SRV_EV_RESTART "joined" event): the clients
 * learn it now unless an add is still waiting for its answer (run_fault.c). */
void run_member_joined(struct run_world *rw, int node);

/* One workload client: at most one operation outstanding (as etcd's robustness
 * traffic does), the next one after a gap drawn from its own stream. */
struct run_wl_client {
    struct run_world *rw;
    int index; /* into rw->clients */
    struct sim_rng *rng;
    bool busy;
    uint64_t seq; /* values written: unique per (client, seq) */
    sim_handle timer;
    int64_t last_mod_rev[64]; /* per key: the last mod revision this client saw */
    /* features (RUN_WL_*): their own stream "workload/<i>/more", so that the plain
     * workload's draws never move */
    struct sim_rng *more;
    int64_t max_rev;    /* the highest header revision this client saw */
    int64_t lease;      /* the lease its puts attach to; 0 none */
    int64_t lease_ns;   /* when it was granted */
    uint64_t keepalive; /* keep-alive stream id; 0 none */
    bool granting;      /* a grant is out: its answer sets lease */
};

/* A watch the workload's watch churn opened (RUN_WL_WATCH_CHURN). */
#define RUN_CHURN_MAX 8
struct run_churn_watch {
    struct run_world *rw;
    int client;  /* index into rw->clients */
    uint64_t id; /* 0: free */
    struct kvc_watch_req req;
    char key[16], end[16];
};

/* One fault lane of the swarm nemesis (run_lanes.c). */
#define RUN_LANE_LATER_MAX 16
struct run_lane;
struct run_lane_later { /* a restart to come (0 handle: free) */
    struct run_lane *lane;
    sim_handle h;
    int node;
    int64_t ordinal;
};
struct run_lane {
    struct run_world *rw;
    unsigned kind;    /* RUN_LANE_* bit */
    int64_t every_ns; /* mean gap between ticks (drawn; scaled) */
    sim_handle timer;
    int64_t tick;             /* ticks so far; names the per-tick stream */
    bool undo_next;           /* the next tick undoes what the last apply did */
    int undo;                 /* what the last apply did (lane-specific; 0: nothing) */
    int nodes[RUN_NODES_MAX]; /* ... to which members */
    int n_nodes;
    int64_t ordinal;       /* of the last apply */
    const char *slow_name; /* UNDO_FAILPOINT: the failpoint it turned on (static) */
    int last_node;         /* UNDO_RESTART: restart this one last (0: any order) */
    struct sim_rng rng;    /* the current tick's stream */
    struct run_lane_later later[RUN_LANE_LATER_MAX]; /* staggered restarts to come */
    sim_handle stage_timer;                          /* RUN_LANE_LAG: its next stage */
    int stage;             /* RUN_LANE_LAG: 0 idle, 1 starved, 2 cut off, 3 healed */
    int64_t stage_ns[3];   /* RUN_LANE_LAG: drawn durations of stages 1-3 */
    int64_t stage_ordinal; /* RUN_LANE_LAG: the apply its stages belong to */
    int64_t stage_rev;     /* RUN_LANE_LAG: the newest revision when its stage began */
    bool stage_compacted;  /* RUN_LANE_LAG: stage 2 compacted the others */
    int churn_left;        /* RUN_LANE_CHURN: campaigns still to crash at their next save */
    bool churn_cut;        /* RUN_LANE_CHURN: nodes[0], the leader, is cut off (not armed) */
};

/* A BUGGIFY failpoint the swarm enables (run_swarm.c). */
struct run_buggify {
    char name[40];
    int node; /* slot, 0 every member */
    char action[8];
    int p_ppm, count, delay_ms;
};

/* A trigger rule: on a node event of kind `hook`, with probability p_ppm, apply
 * `action` to the member it happened on (run_trigger.c). */
enum run_trigger_action {
    RUN_TRIG_KILL = 0,  /* kill it at once; restart after down_ns */
    RUN_TRIG_POWER,     /* power loss of every member after delay_ns; restart after down_ns */
    RUN_TRIG_ISOLATE,   /* cut it off from its peers for down_ns */
    RUN_TRIG_PAUSE,     /* pause it for down_ns */
    RUN_TRIG_CRASH_SAVE /* it crashes at its next WAL save, after the fsync and before the
                           messages (raft/after_save; on a campaign: at its 1st-3rd save);
                           restarted after down_ns */
};
/* run_restart, unless the member was removed meanwhile (run_lanes.c). */
void run_swarm_restart(struct run_world *rw, int id);

struct run_trigger {
    int hook; /* srv_hook_kind */
    enum run_trigger_action action;
    int p_ppm;
    int count_max, fired;
    int64_t delay_ns, down_ns, cooldown_ns;
    int64_t last_ns;
    int64_t ordinal; /* of the rule; 0 when not armed */
    bool dry;        /* the rule's ordinal is skipped */
    struct sim_rng rng;
};

#define RUN_BUGGIFY_MAX  8
#define RUN_TRIGGERS_MAX 6
struct run_swarm {
    bool drawn;
    unsigned aspects;
    struct run_cluster_config cluster; /* drawn (for the aspects drawn) */
    struct run_clients_config clients;
    struct run_workload_config workload;
    json_t *info; /* what was drawn (owned) */
    unsigned lanes;
    int64_t lane_every_ns[RUN_LANE_COUNT];
    struct run_buggify bug[RUN_BUGGIFY_MAX];
    int n_bug;
    struct run_trigger trig[RUN_TRIGGERS_MAX];
    int n_trig;
    int64_t fsync_ns[RUN_NODES_MAX]; /* per initial member, 0: the cluster's */
    int n_fsync;
};

struct run_client {
    struct kvc_client *c;
    int id; /* history client_id (1-based) */
    struct kvc_stats stats;
    bool closed;
};

/* run_mirror.c: the recorded history in memory (see there). */
struct run_mirror_watch;
struct run_mirror_event;
struct run_mirror {
    struct chk_history h;
    bool on;             /* rows are mirrored (a database is recorded into) */
    bool broken;         /* a row it cannot follow: the checkers load the database */
    bool verify;         /* compare with the database at the end whatever the size */
    int64_t last_op_id;  /* ops arrive in op_id order */
    int64_t ops;         /* ops mirrored */
    int64_t spot_checks; /* ops cross-checked one by one against the loader */
    int64_t text_bytes;  /* request + response text of the ops mirrored */
    int64_t spot_bytes;  /* of which the spot checks parsed again */
    char spot_err[256];  /* the first op whose two paths differ, "" when none */
    int64_t wev_seq;     /* watch events numbered as hist_watch_event_add does */
    struct fl_buf bytes; /* keys and values of watches and events */
    struct run_mirror_watch *watches;
    size_t n_watches, cap_watches;
    /* watch_id -> index in watches (open addressing; lookups only, never iterated) */
    int64_t *watch_ids;
    size_t *watch_at;
    size_t watch_slots;
    uint64_t watch_steps; /* slots examined by watch lookups (a work count for tests) */
    struct run_mirror_event *events;
    size_t n_events, cap_events;
};

/* The parts of a run world, each written by one file (others read them). */

/* The built-in workload and its watchers (run_workload.c). */
struct run_wl_state {
    struct run_wl_client client[RUN_CLIENTS_MAX];
    bool stopped;
    int64_t outstanding;
    int64_t gap_mean_ns;
    uint64_t watcher_ids[RUN_WATCHERS_MAX];
    int watcher_client[RUN_WATCHERS_MAX];
    int n_watchers;
    /* RUN_WL_WATCH_REOPEN: the revision each fixed watcher reached */
    int64_t watcher_reached[RUN_WATCHERS_MAX];
    struct run_churn_watch churn[RUN_CHURN_MAX];
    int churn_next; /* the slot the next opening reuses */
    sim_handle churn_timer;
    struct sim_rng churn_rng; /* "workload/watch" */
};

/* The plain nemesis (run_fault.c). */
struct run_nem_state {
    unsigned kinds;
    int64_t every_ns, until_ns;
    sim_handle timer;
    int undo_kind; /* what the active fault was */
    int undo_node;
    bool dry;           /* the run_nemesis call was skipped: ticks apply nothing */
    bool undo_next;     /* the next tick is an undo slot */
    int64_t tick;       /* ticks so far; names the per-tick stream */
    int64_t ordinal;    /* ordinal of the fault drawn at the last apply slot */
    struct sim_rng rng; /* the current tick's stream */
};

/* The swarm nemesis's lanes (run_lanes.c; run_swarm.c starts them). */
struct run_lane_set {
    struct run_lane l[RUN_LANE_COUNT + 1]; /* + the doctor */
    int n;
    bool dry;         /* run_nemesis_swarm was skipped */
    int64_t until_ns; /* 0: until healed */
};

/* The swarm's restore flow (run_restore.c): a backup during the fault phase, a
 * whole-cluster restore from it when the scenario is over. */
struct run_restore_state {
    bool drawn;    /* the swarm drew the flow for this seed */
    int backup_pm; /* when the backup is taken: per mille of the fault phase */
    sim_handle backup_h;
    struct sim_rng rng; /* "fault/restore": which member backs up */
    uint8_t *backup;    /* the backup's bytes (owned), NULL until taken */
    size_t backup_len;
    int64_t backup_rev;
    int64_t until_ns; /* the fault phase's end */
    int64_t cut_ns;   /* when the restore rewound the cluster; 0: none */
    int64_t ordinal;  /* of the restore's application */
};

/* The cluster's typed-event hook: the swarm's triggers and Lua's on() (run_trigger.c). */
struct run_hook_state {
    bool triggers_armed;
    run_event_fn *on_fn; /* Lua's on() subscriber */
    void *on_ud;
    unsigned on_kinds;
    int churn_armed;            /* churn lanes waiting for campaigns (run_lanes.c) */
    bool installed;             /* the cluster's typed-event hook is installed */
    struct run_firing *firings; /* trigger actions and undos pending */
};

/* Fault ordinals (run.h, shrinking; run_fault.c). */
struct run_ordinals {
    int64_t n;        /* handed out so far */
    int64_t cur;      /* of the application in progress; 0 outside one */
    bool cur_skipped; /* ... and it is skipped (a rule firing's scope) */
    int64_t *skip;    /* sorted ordinals to skip */
    int n_skip;
};

/* Summary material (run_finish.c builds the summary; run_world.c and run_fault.c
 * append faults and leaders as they happen). */
struct run_summary_state {
    json_t *extra;   /* run_summary_set: object merged into the summary */
    json_t *faults;  /* array */
    json_t *leaders; /* array */
    json_t *expects; /* array of expect items */
    int64_t expect_total, expect_failed;
    int64_t ops_total, ops_ok, ops_fail, ops_unknown;
    int64_t last_commit_rev;
    bool safety_logged;
};

/* Net state to restore at heal_all (run_net.c). */
struct run_net_state {
    struct net_link base_link;
    bool changed;
};

/* Recording (run_record.c). */
struct run_rec_state {
    /* the request/response text of the op being recorded, reused */
    struct fl_buf request, response;
    /* lease expiries recorded as system ops, one per (lease, revision) */
    int64_t (*lease_ends)[2];
    size_t n_lease_ends, cap_lease_ends;
    /* compactions recorded as system ops, one per revision */
    int64_t *compactions;
    size_t n_compactions, cap_compactions;
};

/* Node events kept for run_node_events (run_observe.c). */
struct run_obs_state {
    struct run_node_event *events;
    size_t n_events, cap_events;
};

/* The liveness check's fault timeline (run_liveness.c). */
struct run_live_state {
    uint64_t gen, seen; /* fault rows written / evaluated */
    int holds, clogs, failpoints;
    bool unknown; /* a fault row of a kind run_liveness.c does not know */
    struct liveness_segment *segs;
    size_t n, cap;
    int64_t end_ns; /* the end of the judged part: when the scenario ended */
};

/* Explore: added faults (run_added.c), reseeding (run_fault.c), coverage
 * (run_coverage.c). */
struct run_explore_state {
    struct run_added *added;
    int n_added;
    int added_waiting;   /* added faults waiting for their event (the hook is on) */
    uint64_t fault_seed; /* run_reseed_faults */
    bool fault_reseeded;
    struct run_cov *cov; /* NULL unless FAULTLINE_COVERAGE=1 */
};

/* --paranoid (run_paranoid.c). */
struct run_paranoid_state {
    bool on;
    uint64_t events; /* events after which the invariants were checked */
    char *violation; /* the first broken invariant (JSON text), owned */
    bool raft;       /* ... in a Raft core (else in an MVCC store) */
};

/* The world of one run. Its own fields (run_world.c: open, set-up, close) come first,
 * then one part per concern, each written by the file named at its struct. */
struct run_world {
    char *scenario;
    uint64_t seed;
    char *db_path;
    char *options_json;
    struct sim_world *w;
    struct hist_db *db;
    struct fl_digest hdigest; /* history rows (hist_run_begin folds into it) */
    int64_t run_id;
    double wall_start_s;

    bool setup;
    struct run_cluster_config ccfg;
    struct run_clients_config kcfg;
    struct run_workload_config wcfg;
    unsigned checks;
    struct srv_cluster *cl;
    struct run_client clients[RUN_CLIENTS_MAX];
    int n_clients;
    enum lb_kind balancer;

    struct run_call *calls; /* pending run_at callbacks */
    /* control calls the cluster has not answered (run_fault.c); freed at close */
    struct run_ctl_call *ctls;
    /* slots whose member joined the cluster through a member add (bit = slot): the
     * clients learn them even when the add's own answer was lost (run_fault.c) */
    uint64_t joined;
    /* the "lua" stream for math.random */
    struct sim_rng lua_rng;
    bool interrupted;
    /* run_finish.c: the script did not reach its end (a script error or an interrupt):
     * a check that finds nothing wrong in the history recorded until then is 'unknown',
     * not 'pass' (the rest of the run was never recorded) */
    bool ended_early;
    /* run_finish.c: an error of the run itself (the history could not be written or
     * verified): the run ends 'error' with this reason, exit 2 (fatal_code FL_ECORRUPT)
     * or 3. "" when none. */
    int fatal_code;
    char fatal[640];

    struct run_wl_state wl;
    struct run_nem_state nem;
    struct run_swarm swarm; /* what the swarm drew (run_swarm.c) */
    struct run_lane_set lanes;
    struct run_hook_state hook;
    struct run_ordinals ord;
    struct run_summary_state sum;
    struct run_net_state net;
    /* the history the checkers will judge, kept as it is recorded (run_mirror.c) */
    struct run_mirror mirror;
    struct run_rec_state rec;
    struct run_obs_state obs;
    struct run_live_state live;
    struct run_explore_state explore;
    struct run_restore_state rst;
    struct run_paranoid_state par;
    /* the target (run_target_etcd.c): the options, and the etcd cluster once set up
     * (NULL on the simulator, where rw->cl is the cluster) */
    struct {
        int kind;
        char *workdir;
        bool keep;
    } target;
    const struct run_target_ops *tgt; /* NULL on the simulator */
    struct run_etcd *etcd;            /* the etcd target's state (run_target_etcd.c) */
    struct run_live *lv;              /* the live target's state (run_target_live.c) */
};

/* run_world.c */
double run_wall_now_s(void);                       /* monotonic wall seconds: wall_ms only */
int run_node_proc(struct run_world *rw, int node); /* -1 when unknown */
void run_log_fault(struct run_world *rw, const char *kind, const char *target, json_t *detail);
void run_target_nodes(char *out, size_t n, const int *a, int na);

/* run_liveness.c: a fault row was written (before the fault is applied); the state
 * is evaluated again before the next event (run_liveness_update, called by
 * run_sim_step). run_liveness_judge judges the run on history h: the check's detail,
 * *verdict a CHK_* value. */
void run_liveness_fault(struct run_world *rw, const char *kind, const char *target, json_t *detail);
void run_liveness_update(struct run_world *rw);
json_t *run_liveness_judge(struct run_world *rw, const struct chk_history *h, int *verdict);

/* run_paranoid.c: one simulated event, then (--paranoid) the invariants. The only
 * way the run loop steps the world. */
bool run_sim_step(struct run_world *rw);
/* The summary's "paranoid" object; NULL when --paranoid is off. */
json_t *run_paranoid_json(const struct run_world *rw);

/* run_added.c */
void run_added_arm(struct run_world *rw);  /* at set-up: schedules the added faults */
void run_added_stop(struct run_world *rw); /* run_heal_all: cancels what is pending */
void run_added_free(struct run_world *rw);
void run_added_event(struct run_world *rw, const struct srv_hook_event *ev); /* the hook */
/* run_coverage.c */
void run_coverage_init(struct run_world *rw);
void run_coverage_free(struct run_world *rw);
void run_coverage_note(struct run_world *rw, const struct srv_event *ev); /* a node event */
json_t *run_coverage_json(const struct run_world *rw);                    /* NULL when off */

/* run_observe.c */
void run_events_keep(struct run_world *rw, const struct srv_event *ev);
/* A node event (any target's): kept, recorded, and a new leader in the summary. */
void run_events_note(struct run_world *rw, const struct srv_event *ev);
void run_events_free(struct run_world *rw);

/* run_record.c */
void run_observer_init(struct run_world *rw, struct kvc_observer *obs);
/* The JSON text of ops.request / ops.response for a client call (checkers.h shapes),
 * appended to b: byte for byte what jansson's json_dumps(JSON_COMPACT |
 * JSON_ENSURE_ASCII) gives for the same fields (tests/unit/run/test_record_text.c).
 * Returns true when a NUL byte went into a JSON string. */
bool run_request_text(struct fl_buf *b, const struct kvc_request *req);
/* run_mirror.c: every row written into the database during the run is also handed to
 * the mirror, right after hist_* wrote it (and not when that failed: then
 * run_mirror_break). req/res: the client call behind an ops row, or NULL. nul: the
 * row's JSON text holds a NUL escape. run_mirror_take moves the finished history into
 * out (initialised) or, when the mirror could not follow, loads it from the database. */
void run_mirror_init(struct run_world *rw);
void run_mirror_close(struct run_world *rw);
void run_mirror_break(struct run_world *rw);
void run_mirror_op(struct run_world *rw, int64_t op_id, const struct hist_op *row,
                   const struct kvc_request *req, const struct kvc_result *res, bool nul);
void run_mirror_watch_open(struct run_world *rw, const struct hist_watch *w);
void run_mirror_watch_close(struct run_world *rw, int64_t watch_id, int64_t closed_ns);
void run_mirror_event(struct run_world *rw, const struct hist_watch_event *ev);
/* Returns FL_OK, FL_EINVAL/FL_EIO (the loader's message in err: the checkers give
 * 'unknown'), or FL_ECORRUPT / FL_EINTERNAL: the history could not be verified, an
 * error of the whole run (run_finish.c). */
int run_mirror_take(struct run_world *rw, struct chk_history *out, struct fl_buf *err);
bool run_response_text(struct fl_buf *b, const struct kvc_request *req,
                       const struct kvc_result *res);
/* A lease expiry the cluster applied (SRV_EV_LEASE_END from some member): the first
 * report of each (lease, revision) becomes one system op (checkers.h: kind
 * "lease_revoke", client 0, request "system": true). */
void run_record_lease_end(struct run_world *rw, const struct srv_event *ev);
/* A compaction the cluster applied (SRV_EV_COMPACT: a scenario's compact(), the
 * auto-compactor): the first report of each revision becomes one system op. */
void run_record_compact(struct run_world *rw, const struct srv_event *ev);
/* A node event's history row, typed columns included (run_observe.c). */
void run_record_node_event(struct run_world *rw, const struct srv_event *ev);

/* run_workload.c */
int run_workload_start(struct run_world *rw);
void run_workload_stop(struct run_world *rw);

/* run_fault.c */
void run_nemesis_stop(struct run_world *rw);
/* Members that are up (not killed, not removed), ascending; returns how many. */
int run_live_nodes(struct run_world *rw, int *out);
/* The partition shapes of the nemesis, drawn from rng (run_fault.c). */
void run_partition_shape(struct run_world *rw, struct sim_rng *rng);

/* run_bridge.c: the simulated process at a live member's slot (both live targets):
 * named "nSLOT" as the simulated member is, listening on the client port with accept
 * (its ops' on_restart listens again). Returns its process. */
int run_bridge_proc_add(struct sim_world *w, int slot, const struct sim_proc_ops *ops,
                        net_accept_fn *accept, void *ctx);

/* run_swarm.c: after run_world_setup, what the drawn world sets on the cluster. */
void run_swarm_setup(struct run_world *rw);
void run_swarm_free(struct run_world *rw);

/* run_lanes.c */
void run_lanes_start(struct run_world *rw, int scale_pct);
void run_lanes_stop(struct run_world *rw);
/* A member's typed event, for the churn lanes waiting for campaigns (run_trigger.c's
 * hook calls it while rw->hook.churn_armed). */
void run_lanes_churn_event(struct run_world *rw, const struct srv_hook_event *ev);

/* run_trigger.c: installs the cluster's hook when on() or the triggers need it. */
void run_hook_update(struct run_world *rw);
void run_triggers_arm(struct run_world *rw, int scale_pct);
void run_triggers_disarm(struct run_world *rw);
/* A trigger killed node and will restart it (the doctor leaves it alone). */
bool run_trigger_holds(struct run_world *rw, int node);
/* One fault application (run.h, shrinking), in one call: hands out the next ordinal
 * (or joins the application in progress: isolate's partition, a nemesis draw's kill),
 * calls fn(rw, arg) unless that ordinal is skipped, then ends the application. No path
 * can take an ordinal and leave its application open, which would make every later
 * fault part of it and shift the ordinals shrinking names. fn NULL takes the ordinal
 * and applies nothing (a dry draw, so that later ordinals keep their numbers).
 * *ordinal (may be NULL) is set to the application's ordinal before fn runs. Returns
 * false when the ordinal is skipped. */
bool run_fault_apply(struct run_world *rw, run_fault_fn *fn, void *arg, int64_t *ordinal);

/* run_restore.c: the swarm's restore flow. draw: whether this seed runs it (stream
 * "swarm/restore", only with the faults aspect and the "restore" lane allowed), into
 * j as "restore" when it does; arm: schedules the backup and the restore within a fault
 * phase of duration_ns (none when 0); stop: cancels what is pending (the backup taken
 * stays); free: at close. cut: the history the linearizability and watch checkers
 * judge when a restore rewound the cluster (chk_history_cut at the restore; *h
 * replaced), with what was left out in note (a new object), else nothing. */
void run_restore_draw(struct run_world *rw, unsigned allowed_lanes, json_t *j);
void run_restore_arm(struct run_world *rw, int64_t duration_ns, int scale_pct);
void run_restore_stop(struct run_world *rw);
/* At the end of the run (run_world_finish, the workload stopped, before convergence):
 * the restore, when the flow was drawn and its backup taken. */
void run_restore_finish(struct run_world *rw);
void run_restore_free(struct run_world *rw);
int run_restore_cut(struct run_world *rw, struct chk_history *h, json_t **note, struct fl_buf *err);

#endif
