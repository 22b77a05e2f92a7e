/*
 * run_target_live.c: `faultline run SCENARIO --target live` (issue 16 §2): the run
 * driver over our own members, each its own OS process (`faultline member`: libuv,
 * loopback TCP, real files and fsync under the work directory), started by
 * lv_member_cluster (live_member.h: process groups, parent-death signal, a proxy on
 * every member's peer port and client port). It fills run_target_live_ops (run_int.h).
 *
 * Pacing is the etcd target's (run_etcd.h): the world's clock is the only clock the
 * scenario, the workload, the clients and the recorder read, and an event at simulated
 * time t runs once wall time since the cluster came up has reached t; meanwhile the
 * libuv loop runs the proxies, the supervisor and the bridges' connections. What a
 * member sends back enters the world as an event at the wall time it came. Times in
 * the history are wall times and the run has no digest.
 *
 * Bridges. Member slot i is a simulated process "n<i>" listening on the client port,
 * so the clients and their four balancer policies run unchanged. Each connection a
 * client opens to it becomes one real TCP connection to member i's client proxy
 * (which forwards it to the member): it opens with env_uv's hello frame, then every
 * rpc.proto frame of the client is copied verbatim (4-byte little-endian length and
 * the bytes), and every frame the member sends is handed to the client's socket. A
 * real connection that ends (the member died, the proxy cut it) closes the client's
 * socket; a client socket that closes closes the real connection.
 *
 * Faults. kill / restart / pause / resume act on the member's process (SIGKILL and a
 * start on the same data directory; SIGSTOP / SIGCONT); a kill also kills its bridge
 * (the clients' connections reset and new ones are refused until the restart), a
 * pause leaves it (frames reach a stopped process, as over a real network). Cuts and
 * clogs between two members are mirrored onto the peer proxies (live_net_sync); cuts
 * between a client and a member stay the simulator's (the bridge is the member's
 * endpoint). skew writes DATA/skew_ppm and sends SIGUSR1 (cmd_member.c), and becomes
 * --skew-ppm of the member's later starts.
 *
 * Observation. Every member is asked for its Status over a connection of its own
 * (straight to its client port, so client cuts do not hide it) every 100 ms, and again
 * at once when status() or leader() is called after a call answered or a fault
 * applied (lvt_refresh); status() reports the latest answer and leader() the member
 * that names itself leader at the highest term. node_events are the members' own
 * event files (`faultline member --events`), read every 10 ms and whenever a control
 * call's answer arrives, entered at the time they were read. converge is judged by
 * HashKV (run_target_live_check.c); raft_safety by replaying the members' Raft feeds,
 * which they append to one file as they happen, into the simulator's checker at the
 * end (run_target_live_safety.c); liveness as on the simulator, from the fault
 * timeline of the members' processes and links (live_liveness_voter), the leaders of
 * their node events and the history.
 *
 * Bug switches (`run --bug`) are the members' too: each process starts with them
 * (`faultline member --bug`); bug() from the scenario is refused (the processes run).
 */
#include "harness/run/run_target_live.h"

#include "harness/common/bugs.h"

/* scenario{ cluster = {...} } as `faultline member` options where it has one; what it
 * has none for is named in the summary ("cluster_ignored"). */
static void member_flags(struct run_live *L, const struct run_cluster_config *c, const char **extra)
{
    int n = 0, v = 0;
#define FLAG(name, val)                                                                            \
    do {                                                                                           \
        snprintf(L->extra_vals[v], sizeof L->extra_vals[v], "%lld", (long long)(val));             \
        extra[n++] = name;                                                                         \
        extra[n++] = L->extra_vals[v++];                                                           \
    } while (0)
    if (c->election_ms)
        FLAG("--election-ms", c->election_ms);
    if (c->heartbeat_ms)
        FLAG("--heartbeat-ms", c->heartbeat_ms);
    if (c->snapshot_count)
        FLAG("--snapshot-count", c->snapshot_count);
    if (c->snapshot_catchup)
        FLAG("--snapshot-catchup", c->snapshot_catchup);
    if (c->prevote >= 0)
        FLAG("--prevote", c->prevote);
    if (c->check_quorum >= 0)
        FLAG("--check-quorum", c->check_quorum);
    if (c->quota_bytes)
        FLAG("--quota-backend-bytes", c->quota_bytes);
#undef FLAG
    for (int b = 0; b < FL_BUG_COUNT && n + 2 <= LV_MEMBER_EXTRA_MAX; b++)
        if (fl_bug_on[b]) { /* `run --bug`: set before the members start */
            extra[n++] = "--bug";
            extra[n++] = fl_bug_table[b].name;
        }
    extra[n] = NULL;
    json_t *ignored = json_array();
    if (c->fsync_us)
        json_array_append_new(ignored, json_string("fsync_us (real fsync)"));
    if (c->net_latency_us || c->net_jitter_us)
        json_array_append_new(ignored, json_string("net_latency_us (real TCP)"));
    if (c->progress_notify_ms > 0)
        json_array_append_new(ignored, json_string("progress_notify_ms"));
    if (c->max_msg_bytes > 0)
        json_array_append_new(ignored, json_string("max_msg_bytes"));
    if (c->watch_buffer > 0)
        json_array_append_new(ignored, json_string("watch_buffer"));
    if (c->loose_reconfig)
        json_array_append_new(ignored, json_string("loose_reconfig"));
    if (c->auto_compaction_mode)
        json_array_append_new(ignored, json_string("auto_compaction"));
    if (json_array_size(ignored))
        run_summary_set(L->rw, "cluster_ignored", ignored);
    else
        json_decref(ignored);
}

static bool all_serve(void *arg)
{
    struct run_live *L = arg;
    for (int i = 1; i <= L->n; i++)
        if (!L->st[i].answered_s)
            return false;
    return true;
}

static int live_setup(struct run_world *rw, const struct run_cluster_config *cfg, char *err,
                      size_t err_len)
{
    const struct run_live *L0 = NULL; /* for sizeof */
    int n = cfg->nodes ? cfg->nodes : 3;
    if (n < 1 || n > LV_MEMBERS_MAX || n > SRV_PROC_NODES_MAX) {
        snprintf(err, err_len, "cluster.nodes must be in [1, %d] on the live target",
                 FL_MIN(LV_MEMBERS_MAX, SRV_PROC_NODES_MAX));
        return FL_EINVAL;
    }
    char self[sizeof L0->self];
    size_t self_len = sizeof self;
    if (uv_exepath(self, &self_len) != 0) {
        snprintf(err, err_len, "target live: cannot find the faultline binary (uv_exepath)");
        return FL_EIO;
    }
    /* a write on a connection the member (or a proxy) just closed is an error of that
     * write (EPIPE), not the end of the run: libuv writes with write(2) */
    signal(SIGPIPE, SIG_IGN);
    struct run_live *L = fl_calloc(1, sizeof *L);
    rw->lv = L;
    L->rw = rw;
    L->n = n;
    snprintf(L->self, sizeof L->self, "%s", self);
    uv_loop_init(&L->loop);
    L->loop_open = true;
    struct fl_buf eb;
    fl_buf_init(&eb);
    int rc = lv_workdir_open(&L->wd, rw->target.workdir, rw->target.keep, &eb);
    if (!rc) {
        L->wd_open = true;
        member_flags(L, cfg, L->extra);
        rc = lv_member_cluster_start(&L->c, &L->loop, &L->wd, n, L->self, rw->seed, L->extra, &eb);
        L->cluster_open = true;
    }
    if (rc) {
        snprintf(err, err_len, "target live: %s", fl_buf_cstr(&eb));
        fl_buf_close(&eb);
        return rc;
    }
    fl_buf_close(&eb);
    for (int i = 1; i <= n; i++) {
        lvt_bridge_add(L, i);
        L->b[i].started_s = run_target_wall_s();
        fl_buf_init(&L->st[i].in);
    }
    uv_timer_init(&L->loop, &L->poll);
    L->poll.data = L;
    L->timers_open = true;
    uv_timer_start(&L->poll, lvt_on_poll_timer, 0, POLL_MS);
    uv_timer_init(&L->loop, &L->evpoll);
    L->evpoll.data = L;
    uv_timer_start(&L->evpoll, lvt_on_events_timer, EVENTS_POLL_MS, EVENTS_POLL_MS);
    /* the scenario starts once every member serves (answered a Status) */
    if (!lv_run_until(&L->loop, all_serve, L, START_MS)) {
        snprintf(err, err_len,
                 "target live: not every member answered within %d ms (see %s/m*.log)", START_MS,
                 L->wd.path);
        return FL_ETIMEOUT;
    }
    run_pacer_init(&L->pace, &L->loop, rw->w); /* the scenario's clock starts here */
    return FL_OK;
}

static void on_closed(uv_handle_t *h)
{
    (void)h;
}

static void live_close(struct run_world *rw)
{
    struct run_live *L = rw->lv;
    if (!L)
        return;
    L->closing = true;
    while (L->conns)
        lvt_conn_end(L->conns, false);
    for (int i = 1; i <= L->n; i++)
        lvt_stat_end(&L->st[i]);
    if (L->timers_open) {
        uv_timer_stop(&L->poll);
        uv_close((uv_handle_t *)&L->poll, on_closed);
        uv_timer_stop(&L->evpoll);
        uv_close((uv_handle_t *)&L->evpoll, on_closed);
        if (L->pace.loop) /* set up once every member served */
            run_pacer_close(&L->pace);
    }
    if (L->cluster_open)
        lv_member_cluster_close(&L->c); /* kills every member, closes the proxies */
    while (L->ctls) {
        struct lctl *c = L->ctls;
        RUN_UNLINK(L->ctls, c);
        fl_buf_close(&c->data);
        free(c);
    }
    while (L->deliveries) {
        struct ldelivery *d = L->deliveries;
        RUN_UNLINK(L->deliveries, d);
        free(d->frame);
        free(d);
    }
    if (L->loop_open) {
        uv_run(&L->loop, UV_RUN_NOWAIT);
        uv_run(&L->loop, UV_RUN_NOWAIT);
        uv_loop_close(&L->loop);
    }
    for (int i = 0; i <= LV_MEMBERS_MAX; i++)
        fl_buf_close(&L->st[i].in);
    free(L->member_violation);
    if (L->wd_open)
        lv_workdir_close(&L->wd);
    free(L);
    rw->lv = NULL;
}

static void live_pace(struct run_world *rw, int64_t t_ns)
{
    run_pacer_pace(rw, &rw->lv->pace, t_ns);
}

static void live_advance(struct run_world *rw, int64_t until_ns)
{
    run_pacer_advance(rw, &rw->lv->pace, until_ns);
}

static int live_slots(struct run_world *rw)
{
    return rw->lv ? rw->lv->n : 0;
}

static int live_node_proc(struct run_world *rw, int node)
{
    struct run_live *L = rw->lv;
    if (!L || node < 1 || node > L->n)
        return -1;
    return L->b[node].proc;
}

static bool live_alive(struct run_world *rw, int node)
{
    struct run_live *L = rw->lv;
    return L && node >= 1 && node <= L->n && L->c.m[node - 1].proc.running;
}

/* liveness (run_liveness.c): a started member that is not removed and did not answer
 * its last Status as a learner is a voter; up while its process runs unpaused; skewed
 * while its clock rate is not 1x. */
static bool live_liveness_voter(struct run_world *rw, int node, bool *up, bool *skewed)
{
    struct run_live *L = rw->lv;
    if (!L || node < 1 || node > L->n || L->b[node].removed || L->b[node].awaits_start ||
        !L->c.m[node - 1].started || L->st[node].learner)
        return false;
    const struct lv_proc *p = &L->c.m[node - 1].proc;
    *up = p->running && !p->paused;
    *skewed = L->b[node].rate_ppm && L->b[node].rate_ppm != SIM_PPM;
    return true;
}

static const char *live_version(struct run_world *rw)
{
    (void)rw;
    return SRV_VERSION;
}

/* What the live target cannot do (yet), and why. */
static const struct run_target_refusal live_refuses[] = {
    {"bug", "the member processes take bug switches at their start: use `run --bug`"},
    {"hold", "holding frames in flight is a simulator fault (use clog)"},
    {"release", "holding frames in flight is a simulator fault (use clog)"},
    {"swarm", "the swarm draws simulator-only faults (power loss, failpoints, net bursts)"},
    {"on", "typed Raft events of member processes do not reach the harness"},
    {"config", "a member's configuration is read in its own process (see its log)"},
    {NULL, NULL},
};

const struct run_target_ops run_target_live_ops = {
    .name = "live",
    .setup = live_setup,
    .close = live_close,
    .pace = live_pace,
    .advance = live_advance,
    .slots = live_slots,
    .node_proc = live_node_proc,
    .alive = live_alive,
    .removed = lvt_removed,
    .awaits_start = lvt_awaits_start,
    .member_start = lvt_member_start,
    .leader = lvt_leader,
    .node_status = lvt_node_status,
    .version = live_version,
    .set_prevote = lvt_set_prevote,
    .node_fault = lvt_node_fault,
    .skew = lvt_skew,
    .net_sync = lvt_net_sync,
    .clog = lvt_clog,
    .ctl = lvt_ctl,
    .failpoint = lvt_failpoint,
    .copy_db = lvt_copy_db,
    .restore = lvt_restore,
    .converged = lvt_converged,
    .checkpoints = lvt_checkpoints,
    .raft_safety = lvt_raft_safety,
    .liveness_voter = live_liveness_voter,
    .nemesis_kinds = RUN_NEMESIS_PARTITION | RUN_NEMESIS_KILL | RUN_NEMESIS_PAUSE,
    .refuses = live_refuses,
};
