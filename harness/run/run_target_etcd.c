/*
 * run_target_etcd.c: `faultline run SCENARIO --target etcd` (issue 16 §3): the run
 * driver over a real etcd 3.4 cluster. See run_etcd.h for the shape.
 *
 * Pacing. The world's clock stays the only clock the scenario, the workload, the
 * clients and the recorder read, but an event at simulated time t runs only when
 * wall time since the cluster came up has reached t (run_etcd_pace); meanwhile the
 * libuv loop runs the etcd members' supervisor, the proxies and the curl requests.
 * An answer from etcd enters the world as an event at the wall time it arrived (never
 * before the world's now). Times in the history are therefore wall times, and the
 * run has no digest: nothing here is deterministic.
 *
 * Bridges. Member slot i is a simulated process "n<i>" listening on the client port,
 * as our own members do, so the clients and their four balancer policies run
 * unchanged. A bridge decodes each rpc.proto frame, makes the same call on etcd
 * member i through its client proxy (JSON gateway), and sends the rpc.proto answer
 * back: etcd's header, its error text and gRPC code as the gateway reports them.
 * Watches become streamed gateway watches. Pings are answered by the bridge (HTTP/1.1
 * has no HTTP/2 pings), and only while the member answered its last Maintenance Status
 * poll (every 100 ms, 1 s timeout): keepalive by periodic health calls, so pings stop
 * when etcd does not serve (killed, paused, hung, or restarted and not ready); a paused
 * member's bridge is paused too. A Status
 * answer carries quorum_contact_age_ns 0 when the member names a leader, else -1:
 * etcd does not expose its last contact with a quorum (health_aware's probe reads it).
 *
 * Faults. kill / restart / pause / resume act on the etcd process (SIGKILL, respawn on
 * the same data directory, SIGSTOP / SIGCONT) and on its bridge (killed: the clients'
 * connections reset; restarted: listens again; paused: frames wait). Cuts between a
 * client and a member are the simulator's (the bridge is the member's endpoint); cuts
 * and clogs between two members are mirrored onto the real peer proxies
 * (run_etcd_net_sync). What etcd cannot do here is refused before the scenario runs
 * (run_target_unsupported, harness/lua names the function and the target).
 *
 * Observation. Every member's Maintenance Status is polled every 100 ms of wall
 * time; status() reports the latest answer, leader() the member that names itself
 * leader at the highest term, and a change of leader or term seen by polling is a node event
 * ("leader", "term"), recorded as such. The Raft events etcd logs (pre-vote, campaign,
 * step-down, snapshots) are read from each member's log at every poll (logs_scan).
 *
 * Backups and convergence. snapshot_save streams Maintenance Snapshot through the
 * gateway; copy_db reads the member's db file; restore runs `etcdctl snapshot restore`.
 * converge compares HashKV (etcdctl: the 3.4 gateway serves Hash, not HashKV, at
 * /v3/maintenance/hash) of every member at one revision, at the end and every 2 s.
 *
 * Files (run_etcd_int.h holds their shared state): this one sets up and closes the
 * cluster, paces, answers the cluster view and applies faults; _bridge.c the bridges
 * and unary calls, _watch.c watches, _observe.c Status polling and the members' logs,
 * _ctl.c the control calls, _backup.c copy_db and restore, _converge.c HashKV
 * convergence and checkpoints, _fp.c failpoints by strace.
 */
#include "harness/run/run_etcd_int.h"

#include "nodes/server/server.h"

/* ---- set-up and close ----------------------------------------------------------------- */

/* The version `BIN --version` prints ("etcd Version: 3.4.23") as major*10000 +
 * minor*100 + patch, and its text in text; 0 when it cannot be read. */
static int etcd_bin_version(const char *bin, char *text, size_t text_len)
{
    struct fl_buf cmd;
    fl_buf_init(&cmd);
    fl_buf_printf(&cmd, "'");
    for (const char *p = bin; *p; p++)
        fl_buf_printf(&cmd, *p == '\'' ? "'\\''" : "%c", *p);
    fl_buf_printf(&cmd, "' --version 2>/dev/null");
    FILE *f = popen(fl_buf_cstr(&cmd), "r");
    fl_buf_close(&cmd);
    int v = 0, a, b, c;
    char line[256];
    snprintf(text, text_len, "?");
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "etcd Version: %d.%d.%d", &a, &b, &c) == 3 && !v) {
            v = a * 10000 + b * 100 + c;
            snprintf(text, text_len, "%d.%d.%d", a, b, c);
        }
    if (f)
        pclose(f);
    return v;
}

/* What etcd cannot be configured to do: the scenario cannot run there. snapshot_catchup
 * (entries kept after a snapshot for slow followers) is a constant of etcd 3.4
 * (embed/config.go: "Always use DefaultSnapshotCatchUpEntries", 5000); etcd 3.5.7 made
 * it --experimental-snapshot-catchup-entries. */
static int etcd_cluster_refuse(const struct run_cluster_config *c, const char *bin, char *err,
                               size_t err_len)
{
    if (!c->snapshot_catchup)
        return FL_OK;
    char text[32];
    if (etcd_bin_version(bin, text, sizeof text) >= 30507)
        return FL_OK;
    snprintf(err, err_len,
             "cluster.snapshot_catchup = %d: cannot run on etcd %s: needs "
             "--snapshot-catchup-entries (etcd 3.4 keeps a fixed 5000 entries after a snapshot; "
             "etcd >= 3.5.7 has --experimental-snapshot-catchup-entries)",
             c->snapshot_catchup, text);
    return FL_EINVAL;
}

/* scenario{ cluster = {...} } as etcd flags, where etcd has one; what it has none for
 * is named in the summary ("cluster_ignored"). Pre-vote follows our default (on),
 * etcd 3.4's is off; check-quorum is always on in etcd 3.4's server. snapshot_catchup
 * reaches here only for an etcd that has its flag (etcd_cluster_refuse). */
static void etcd_flags(struct run_world *rw, const struct run_cluster_config *c, char vals[8][32],
                       const char **extra)
{
    int n = 0, v = 0;
#define FLAG(name, ...)                                                                            \
    do {                                                                                           \
        snprintf(vals[v], sizeof vals[v], __VA_ARGS__);                                            \
        extra[n++] = name;                                                                         \
        extra[n++] = vals[v++];                                                                    \
    } while (0)
    FLAG("--heartbeat-interval", "%d", c->heartbeat_ms ? c->heartbeat_ms : 100);
    FLAG("--election-timeout", "%d", c->election_ms ? c->election_ms : 1000);
    extra[n++] = c->prevote == 0 ? "--pre-vote=false" : "--pre-vote=true";
    if (c->snapshot_count)
        FLAG("--snapshot-count", "%d", c->snapshot_count);
    if (c->quota_bytes)
        FLAG("--quota-backend-bytes", "%lld", (long long)c->quota_bytes);
    if (c->auto_compaction_mode) {
        extra[n++] = c->auto_compaction_mode == 1 ? "--auto-compaction-mode=revision"
                                                  : "--auto-compaction-mode=periodic";
        if (c->auto_compaction_mode == 1)
            FLAG("--auto-compaction-retention", "%lld", (long long)c->auto_compaction_retention);
        else
            FLAG("--auto-compaction-retention", "%lldms", (long long)c->auto_compaction_retention);
    }
    if (c->progress_notify_ms > 0)
        FLAG("--experimental-watch-progress-notify-interval", "%dms", c->progress_notify_ms);
    if (c->snapshot_catchup)
        FLAG("--experimental-snapshot-catchup-entries", "%d", c->snapshot_catchup);
    if (c->loose_reconfig)
        extra[n++] = "--strict-reconfig-check=false";
#undef FLAG
    extra[n] = NULL;
    FL_ASSERT(n <= LV_ETCD_EXTRA_MAX && v <= 8);
    json_t *ignored = json_array();
    if (c->check_quorum == 0)
        json_array_append_new(ignored, json_string("check_quorum (always on in etcd 3.4)"));
    if (c->fsync_us)
        json_array_append_new(ignored, json_string("fsync_us"));
    if (c->net_latency_us || c->net_jitter_us)
        json_array_append_new(ignored, json_string("net_latency_us/net_jitter_us"));
    if (c->max_msg_bytes)
        json_array_append_new(ignored, json_string("max_msg_bytes"));
    if (c->watch_buffer)
        json_array_append_new(ignored, json_string("watch_buffer"));
    if (json_array_size(ignored))
        run_summary_set(rw, "cluster_ignored", ignored);
    else
        json_decref(ignored);
}

/* The Status poll's interval: POLL_MS, or $FL_ETCD_POLL_MS (10..10000; a test that
 * must tell a fresh read from a polled one makes polls rare). */
static int poll_interval(void)
{
    const char *v = getenv("FL_ETCD_POLL_MS");
    char *end;
    long ms = v ? strtol(v, &end, 10) : 0;
    if (!v || end == v || *end || ms < 10 || ms > 10000)
        return POLL_MS;
    return (int)ms;
}

int run_etcd_setup(struct run_world *rw, const struct run_cluster_config *cfg, char *err,
                   size_t err_len)
{
    int n = cfg->nodes ? cfg->nodes : 3;
    if (n < 1 || n > LV_NODES_MAX) {
        snprintf(err, err_len, "cluster.nodes must be in [1, %d] on the etcd target", LV_NODES_MAX);
        return FL_EINVAL;
    }
    char *bin = lv_etcd_find();
    if (!bin) {
        snprintf(err, err_len,
                 "target etcd: no etcd binary ($FL_ETCD, or etcd on PATH; Debian: apt-get "
                 "install etcd-server, or make deps ETCD=1)");
        return FL_EINVAL;
    }
    if (etcd_cluster_refuse(cfg, bin, err, err_len)) {
        free(bin);
        return FL_EINVAL;
    }
    struct run_etcd *E = fl_calloc(1, sizeof *E);
    rw->etcd = E;
    E->rw = rw;
    E->n = n;
    uv_loop_init(&E->loop);
    E->loop_open = true;
    struct fl_buf eb;
    fl_buf_init(&eb);
    int rc = lv_workdir_open(&E->wd, rw->target.workdir, rw->target.keep, &eb);
    E->bin = bin;
    if (!rc) {
        E->wd_open = true;
        etcd_flags(rw, cfg, E->flag_vals, E->flags);
        rc = lv_etcd_cluster_start_args(&E->c, &E->loop, &E->wd, n, bin, E->flags, START_MS, &eb);
        E->cluster_open = true;
    }
    if (rc) {
        snprintf(err, err_len, "target etcd: %s", fl_buf_cstr(&eb));
        fl_buf_close(&eb);
        return rc;
    }
    fl_buf_close(&eb);
    struct lv_etcd_status st;
    if (!lv_etcd_status(&E->c.client, E->c.m[0].direct_url, 2000, &st, NULL))
        snprintf(E->version, sizeof E->version, "%s", st.version);
    for (int i = 1; i <= LV_NODES_MAX; i++)
        E->b[i].proc = -1; /* no bridge (yet) */
    for (int i = 1; i <= n; i++)
        run_etcd__bridge_add(E, i);
    uv_timer_init(&E->loop, &E->poll);
    E->poll.data = E;
    E->poll_open = true;
    E->poll_ms = poll_interval();
    uv_timer_start(&E->poll, run_etcd__on_poll_timer, 0, (uint64_t)E->poll_ms);
    run_pacer_init(&E->pace, &E->loop, rw->w); /* the scenario's clock starts here */
    E->pace.turn = run_etcd__pace_turn;
    E->pace.turn_ud = E;
    return FL_OK;
}

static void on_closed(uv_handle_t *h)
{
    (void)h;
}

void run_etcd_close(struct run_world *rw)
{
    struct run_etcd *E = rw->etcd;
    if (!E)
        return;
    E->closing = true; /* the loop still runs while members die: polls answer late */
    run_etcd__checkpoint_stop(E);
    while (E->watches)
        run_etcd__watch_free(E, E->watches);
    if (E->poll_open) {
        uv_timer_stop(&E->poll);
        uv_close((uv_handle_t *)&E->poll, on_closed);
        run_pacer_close(&E->pace);
    }
    if (E->cluster_open)
        lv_etcd_cluster_close(&E->c); /* cancels the calls in flight, without callbacks */
    while (E->calls) {
        struct ecall *c = E->calls;
        RUN_UNLINK(E->calls, c);
        free(c);
    }
    while (E->ctls) {
        struct ectl *c = E->ctls;
        RUN_UNLINK(E->ctls, c);
        json_decref(c->resp);
        fl_buf_close(&c->data);
        free(c);
    }
    while (E->deliveries) {
        struct delivery *d = E->deliveries;
        RUN_UNLINK(E->deliveries, d);
        free(d->frame);
        free(d);
    }
    if (E->loop_open) {
        uv_run(&E->loop, UV_RUN_NOWAIT);
        uv_loop_close(&E->loop);
    }
    for (int i = 0; i <= LV_NODES_MAX; i++)
        fl_buf_close(&E->b[i].log_part);
    if (E->wd_open)
        lv_workdir_close(&E->wd);
    free(E->bin);
    json_decref(E->corruption);
    free(E);
    rw->etcd = NULL;
}

/* ---- pacing ---------------------------------------------------------------------------- */

void run_etcd_pace(struct run_world *rw, int64_t t_ns)
{
    run_pacer_pace(rw, &rw->etcd->pace, t_ns);
}

void run_etcd_advance(struct run_world *rw, int64_t until_ns)
{
    run_pacer_advance(rw, &rw->etcd->pace, until_ns);
}

/* ---- cluster view ----------------------------------------------------------------------- */

int run_etcd_slots(struct run_world *rw)
{
    return rw->etcd ? rw->etcd->n : 0;
}

int run_etcd_node_proc(struct run_world *rw, int node)
{
    struct run_etcd *E = rw->etcd;
    if (!E || node < 1 || node > E->n)
        return -1;
    return E->b[node].proc;
}

bool run_etcd_removed(struct run_world *rw, int node)
{
    struct run_etcd *E = rw->etcd;
    return E && node >= 1 && node <= E->n && E->b[node].removed;
}

bool run_etcd_alive(struct run_world *rw, int node)
{
    struct run_etcd *E = rw->etcd;
    return E && node >= 1 && node <= E->n && E->c.m[node - 1].proc.running;
}

int run_etcd_leader(struct run_world *rw)
{
    uint64_t term;
    return rw->etcd ? run_etcd__polled_leader(rw->etcd, &term) : 0;
}

const char *run_etcd_version(struct run_world *rw)
{
    return rw->etcd ? rw->etcd->version : "";
}

int run_etcd_node_status(struct run_world *rw, int id, struct run_node_status *out)
{
    struct run_etcd *E = rw->etcd;
    memset(out, 0, sizeof *out);
    if (!E || id < 1 || id > E->n)
        return FL_ENOENT;
    const struct lv_etcd_member *m = &E->c.m[id - 1];
    const struct bridge *b = &E->b[id];
    out->alive = m->proc.running;
    out->removed = b->removed;
    out->paused = m->proc.paused;
    out->member_id = m->id;
    out->version = E->version;
    out->leader_contact_ns = -1;
    if (!out->alive || !b->st_ok)
        return FL_OK;
    out->cluster_id = b->cluster_id;
    out->leader_id = b->st.leader;
    out->leader_node = run_etcd__slot_of_member(E, b->st.leader);
    out->is_leader = b->st.leader == m->id;
    out->learner = b->st.is_learner;
    out->term = FL_MAX(b->st.raft_term, b->log_term);
    out->status_term = b->st.raft_term;
    out->last_index = b->st.raft_index;
    out->commit = b->st.raft_index;
    out->applied = b->st.raft_applied_index;
    out->revision = (int64_t)b->st.revision;
    out->db_size = (int64_t)b->st.db_size;
    out->db_size_in_use = (int64_t)b->st.db_size_in_use;
    return FL_OK;
}

/* ---- faults ------------------------------------------------------------------------------ */

void run_etcd_node_fault(struct run_world *rw, int id, const char *kind)
{
    struct run_etcd *E = rw->etcd;
    struct lv_etcd_member *m = &E->c.m[id - 1];
    int proc = E->b[id].proc;
    if (proc < 0)
        return; /* a slot prepared for an add still out: no member yet */
    struct fl_buf err;
    fl_buf_init(&err);
    if (!strcmp(kind, "kill")) {
        lv_etcd_wal_fault_off(&E->c, id - 1); /* its strace; re-attached at the restart */
        lv_proc_kill(&m->proc);
        sim_proc_kill(rw->w, proc);
        E->b[id].st_ok = false; /* healthy again only once a Status poll is answered */
    } else if (!strcmp(kind, "restart")) {
        if (!m->proc.argv) {
            /* a slot whose etcd never ran (a member_add whose member did not start):
             * nothing to restart (lv_proc_restart would read no arguments) */
        } else if (!m->proc.running && lv_proc_restart(&m->proc, &err)) {
            fl_log(FL_LOG_ERROR, "target etcd: restart of %s: %s", m->name, fl_buf_cstr(&err));
        } else if (m->proc.running && E->b[id].fp_on && !(m->tracer_init && m->tracer.running) &&
                   run_etcd__fp_attach(E, id, &err)) { /* a failpoint stays on across a restart */
            fl_log(FL_LOG_ERROR, "target etcd: failpoint on %s after restart: %s", m->name,
                   fl_buf_cstr(&err));
        }
        if (sim_proc_state(rw->w, proc) == SIM_PROC_DOWN)
            sim_proc_restart(rw->w, proc);
    } else if (!strcmp(kind, "pause")) {
        if (m->proc.running && !m->proc.paused)
            lv_proc_pause(&m->proc);
        if (sim_proc_state(rw->w, proc) == SIM_PROC_UP)
            sim_proc_pause(rw->w, proc);
    } else {
        if (m->proc.paused)
            lv_proc_resume(&m->proc);
        if (sim_proc_state(rw->w, proc) == SIM_PROC_PAUSED)
            sim_proc_resume(rw->w, proc);
    }
    fl_buf_close(&err);
}

void run_etcd_set_prevote(struct run_world *rw, int id, bool on)
{
    struct run_etcd *E = rw->etcd;
    char **argv = E->c.m[id - 1].proc.argv;
    for (size_t i = 0; argv && argv[i]; i++)
        if (!strncmp(argv[i], "--pre-vote=", strlen("--pre-vote="))) {
            free(argv[i]);
            argv[i] = fl_strdup(on ? "--pre-vote=true" : "--pre-vote=false");
        }
}

void run_etcd_net_sync(struct run_world *rw)
{
    struct run_etcd *E = rw->etcd;
    if (!E)
        return;
    for (int i = 1; i <= E->n; i++)
        for (int j = 1; j <= E->n; j++) {
            if (i == j)
                continue;
            struct lv_link *l = lv_net_link(&E->c.net, i - 1, j - 1);
            int pi = E->b[i].proc, pj = E->b[j].proc;
            l->cut = pi >= 0 && pj >= 0 && net_blocked(rw->w, pi, pj);
        }
    lv_net_update(&E->c.net);
}

void run_etcd_clog(struct run_world *rw, int from_proc, int to_proc, bool on)
{
    struct run_etcd *E = rw->etcd;
    if (!E)
        return;
    for (int i = 1; i <= E->n; i++)
        for (int j = 1; j <= E->n; j++)
            if (i != j && (from_proc < 0 || from_proc == E->b[i].proc) &&
                (to_proc < 0 || to_proc == E->b[j].proc))
                lv_net_link(&E->c.net, i - 1, j - 1)->clog = on;
    lv_net_update(&E->c.net);
}

/* ---- the target's table ---------------------------------------------------------------- */

/* What a real etcd cluster here cannot do, and why (issue 16 §3). */
static const struct run_target_refusal etcd_refuses[] = {
    {"skew", "etcd's Go runtime reads the clock without libc, so its clock cannot be skewed"},
    {"bug", "bug switches exist only in faultline's own members"},
    {"net", "loss, duplication and delay of frames are simulator faults (the etcd target cuts "
            "and clogs links only)"},
    {"hold", "holding frames in flight is a simulator fault (use clog)"},
    {"release", "holding frames in flight is a simulator fault (use clog)"},
    {"start", "a member added on etcd is started at once (member_add { start = false } is "
              "not wired)"},
    {"swarm", "the swarm draws simulator-only faults (power loss, skew, failpoints)"},
    {"on", "etcd exposes no typed Raft events to fire faults on"},
    {"config", "a member's configuration is etcd's own (see its log)"},
    {NULL, NULL},
};

const struct run_target_ops run_target_etcd_ops = {
    .name = "etcd",
    .setup = run_etcd_setup,
    .close = run_etcd_close,
    .pace = run_etcd_pace,
    .advance = run_etcd_advance,
    .slots = run_etcd_slots,
    .node_proc = run_etcd_node_proc,
    .alive = run_etcd_alive,
    .removed = run_etcd_removed,
    .leader = run_etcd_leader,
    .node_status = run_etcd_node_status,
    .version = run_etcd_version,
    .set_prevote = run_etcd_set_prevote,
    .node_fault = run_etcd_node_fault,
    .skew = NULL,
    .net_sync = run_etcd_net_sync,
    .clog = run_etcd_clog,
    .ctl = run_etcd_ctl,
    .copy_db = run_etcd_copy_db,
    .restore = run_etcd_restore,
    .converged = run_etcd_converged,
    .checkpoints = run_etcd_checkpoints,
    .failpoint_refused = run_etcd__failpoint_refused,
    .failpoint = run_etcd__failpoint,
    .nemesis_kinds = RUN_NEMESIS_PARTITION | RUN_NEMESIS_KILL | RUN_NEMESIS_PAUSE,
    .refuses = etcd_refuses,
};
