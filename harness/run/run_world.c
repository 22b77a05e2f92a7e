/*
 * run_world.c: opening a run (world + recorder), setting up the cluster and the
 * clients, the scheduler the scenario runtime drives, and the cluster's node-event
 * observer. See run.h.
 *
 * Wall time is read only for runs.wall_ms and the summary's wall_ms (DESIGN §6).
 */
#include "harness/run/run_etcd.h"

#include <time.h>

static double wall_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double run_wall_now_s(void)
{
    return wall_now_s();
}

void run_cluster_config_default(struct run_cluster_config *c)
{
    memset(c, 0, sizeof *c);
    c->nodes = 3;
    c->election_ms = 1000;
    c->heartbeat_ms = 100;
    c->prevote = -1;
    c->check_quorum = -1;
}

void run_clients_config_default(struct run_clients_config *c)
{
    memset(c, 0, sizeof *c);
    c->count = 2;
    snprintf(c->balancer, sizeof c->balancer, "round_robin");
    c->timeout_ms = 2000;
}

void run_workload_config_default(struct run_workload_config *w)
{
    memset(w, 0, sizeof *w);
    w->keys = 10;
    w->mix_put = 5;
    w->mix_get = 4;
    w->mix_delete = 1;
    w->mix_txn = 1;
    w->mix_range = 1;
    w->value_size = 16;
}

static char *options_json(const struct run_options *o)
{
    json_t *j = json_object();
    if (o->target == RUN_TARGET_ETCD) {
        /* only off the simulator: a simulated run's options (and digest) stay as they were */
        char version[64];
        json_object_set_new(j, "target", json_string("etcd"));
        json_object_set_new(j, "etcd_version",
                            json_string(run_etcd_binary_version(version, sizeof version)));
    } else if (o->target == RUN_TARGET_LIVE) {
        json_object_set_new(j, "target", json_string("live"));
        json_object_set_new(j, "member_version", json_string(SRV_VERSION));
    }
    json_t *bugs = json_array();
    for (int i = 0; i < o->bug_count; i++)
        json_array_append_new(bugs, json_string(o->bugs[i]));
    json_object_set_new(j, "bugs", bugs);
    json_object_set_new(j, "unsafe_lua", json_boolean(o->unsafe_lua));
    char *s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(j);
    return s;
}

int run_world_open(struct run_world **out, const struct run_options *opts, char *err,
                   size_t err_len)
{
    *out = NULL;
    struct run_world *rw = fl_calloc(1, sizeof *rw);
    rw->wall_start_s = wall_now_s();
    rw->scenario = fl_strdup(opts->scenario ? opts->scenario : "(none)");
    rw->seed = opts->seed;
    rw->par.on = opts->paranoid; /* not in options_json: it changes no digest */
    rw->target.kind = opts->target;
    rw->tgt = run_target_ops_of(opts->target);
    rw->target.workdir = opts->workdir ? fl_strdup(opts->workdir) : NULL;
    rw->target.keep = opts->keep;
    rw->options_json = options_json(opts);
    fl_digest_init(&rw->hdigest);
    fl_bug_reset();
    for (int i = 0; i < opts->bug_count; i++) {
        if (!fl_bug_enable(opts->bugs[i])) {
            snprintf(err, err_len, "unknown bug '%s' (see faultline list bugs)", opts->bugs[i]);
            run_world_close(rw);
            return FL_EINVAL;
        }
    }
    if (opts->db_path) {
        rw->db_path = fl_strdup(opts->db_path);
        int rc = hist_open(opts->db_path, HIST_OPEN_WRITE, &rw->db, err, err_len);
        if (rc) {
            rw->db = NULL;
            goto fail;
        }
        rc = hist_run_begin(rw->db, rw->scenario, rw->seed, rw->options_json, &rw->hdigest,
                            &rw->run_id);
        if (rc) {
            snprintf(err, err_len, "%s", hist_errmsg(rw->db));
            goto fail;
        }
    }
    run_mirror_init(rw);
    rw->mirror.verify = opts->verify_history;
    rw->w = sim_world_new(opts->seed);
    sim_set_scenario(rw->w, rw->scenario);
    sim_rng_derive(&rw->lua_rng, opts->seed, "lua");
    run_coverage_init(rw);
    net_link_get(rw->w, -1, -1, &rw->net.base_link);
    rw->sum.faults = json_array();
    rw->sum.leaders = json_array();
    rw->sum.expects = json_array();
    *out = rw;
    return FL_OK;
fail:
    run_world_close(rw);
    return FL_EIO;
}

bool run_world_is_setup(const struct run_world *rw)
{
    return rw->setup;
}

/* --- node events ----------------------------------------------------------------- */

static void on_node_event(void *ud, const struct srv_event *ev)
{
    struct run_world *rw = ud;
    run_events_note(rw, ev);
    if (!strcmp(ev->kind, SRV_EV_LEASE_END))
        run_record_lease_end(rw, ev);
    else if (!strcmp(ev->kind, SRV_EV_COMPACT))
        run_record_compact(rw, ev);
    run_coverage_note(rw, ev);
    if (!strcmp(ev->kind, SRV_EV_RESTART) && ev->term == 0 &&
        !strcmp(ev->detail, SRV_EV_JOINED_DETAIL))
        run_member_joined(rw, ev->node);
}

static bool member_bad(void *ud, int node)
{
    struct run_world *rw = ud;
    if (rw->tgt) {
        struct run_node_status st;
        return rw->tgt->node_status(rw, node, &st) || !st.alive || st.paused || !st.leader_id;
    }
    int proc = srv_cluster_node_proc(rw->cl, node);
    if (proc < 0 || !srv_cluster_is_alive(rw->cl, node))
        return true;
    if (sim_proc_state(rw->w, proc) != SIM_PROC_UP)
        return true;
    /* cut off from every other member */
    int n = srv_cluster_slots(rw->cl), reach = 0, others = 0;
    for (int i = 1; i <= n; i++) {
        int p = srv_cluster_node_proc(rw->cl, i);
        if (i == node || p < 0 || srv_cluster_is_removed(rw->cl, i))
            continue;
        others++;
        reach += !net_blocked(rw->w, proc, p);
    }
    return others > 0 && reach == 0;
}

static int setup_cluster(struct run_world *rw, const struct run_cluster_config *c, char *err,
                         size_t err_len)
{
    struct srv_config sc;
    srv_config_default(&sc);
    sc.nodes = c->nodes ? c->nodes : 3;
    if (c->election_ms)
        sc.election_ms = c->election_ms;
    if (c->heartbeat_ms)
        sc.heartbeat_ms = c->heartbeat_ms;
    if (c->prevote >= 0)
        sc.prevote = c->prevote;
    if (c->check_quorum >= 0)
        sc.check_quorum = c->check_quorum;
    if (c->snapshot_count)
        sc.snapshot_count = (uint64_t)c->snapshot_count;
    if (c->snapshot_catchup)
        sc.snapshot_catchup_entries = (uint64_t)c->snapshot_catchup;
    if (c->quota_bytes)
        sc.quota_backend_bytes = c->quota_bytes;
    if (c->fsync_us)
        sc.fsync_latency_ns = c->fsync_us * FL_US;
    if (c->progress_notify_ms > 0)
        sc.progress_notify_ms = c->progress_notify_ms;
    if (c->max_msg_bytes > 0)
        sc.max_msg_bytes = (uint64_t)c->max_msg_bytes;
    if (c->watch_buffer > 0)
        sc.watch_buffer = c->watch_buffer;
    if (c->loose_reconfig)
        sc.strict_reconfig_check = false;
    if (c->auto_compaction_mode) {
        sc.auto_compaction_mode =
            c->auto_compaction_mode == 1 ? SRV_AUTOCOMPACT_REVISION : SRV_AUTOCOMPACT_PERIODIC;
        sc.auto_compaction_retention = c->auto_compaction_mode == 1
                                           ? c->auto_compaction_retention
                                           : c->auto_compaction_retention * FL_MS;
    }
    if (rw->tgt)
        return rw->tgt->setup(rw, c, err, err_len);
    if (sc.nodes < 1 || sc.nodes > RUN_NODES_MAX / 2) {
        snprintf(err, err_len, "cluster.nodes must be in [1, %d]", RUN_NODES_MAX / 2);
        return FL_EINVAL;
    }
    const char *msg = srv_config_check(&sc);
    if (msg) {
        snprintf(err, err_len, "%s", msg);
        return FL_EINVAL;
    }
    if (c->net_latency_us || c->net_jitter_us) {
        struct net_link l;
        net_link_get(rw->w, -1, -1, &l);
        if (c->net_latency_us)
            l.latency_ns = c->net_latency_us * FL_US;
        if (c->net_jitter_us)
            l.jitter_ns = c->net_jitter_us * FL_US;
        net_link_set(rw->w, -1, -1, &l);
        rw->net.base_link = l;
    }
    if (srv_cluster_create(rw->w, &sc, on_node_event, rw, &rw->cl, &msg)) {
        snprintf(err, err_len, "%s", msg ? msg : "cannot create the cluster");
        rw->cl = NULL;
        return FL_EINVAL;
    }
    return FL_OK;
}

static int setup_clients(struct run_world *rw, const struct run_clients_config *k, char *err,
                         size_t err_len)
{
    int kind = lb_policy_find(k->balancer);
    if (kind < 0) {
        snprintf(err, err_len, "unknown balancer '%s' (see faultline list balancers)", k->balancer);
        return FL_EINVAL;
    }
    if (k->count < 0 || k->count > RUN_CLIENTS_MAX || k->n_balancers < 0 ||
        k->n_balancers > RUN_CLIENTS_MAX) {
        snprintf(err, err_len, "clients.count must be in [0, %d]", RUN_CLIENTS_MAX);
        return FL_EINVAL;
    }
    int kinds[RUN_CLIENTS_MAX];
    for (int i = 0; i < k->n_balancers; i++) {
        kinds[i] = lb_policy_find(k->balancers[i]);
        if (kinds[i] < 0) {
            snprintf(err, err_len, "unknown balancer '%s' (see faultline list balancers)",
                     k->balancers[i]);
            return FL_EINVAL;
        }
    }
    rw->balancer = (enum lb_kind)kind;
    struct kvc_endpoint eps[LB_ENDPOINTS_MAX];
    int n = 0, slots = rw->tgt ? rw->tgt->slots(rw) : srv_cluster_slots(rw->cl);
    for (int i = 1; i <= slots && n < LB_ENDPOINTS_MAX; i++)
        eps[n++] = (struct kvc_endpoint){.node = i, .proc = run_node_proc(rw, i)};
    int count = k->n_balancers ? k->n_balancers : k->count;
    for (int i = 0; i < count; i++) {
        struct kvc_config kc;
        kvc_config_default(&kc);
        kc.id = i + 1;
        kc.balancer = i < k->n_balancers ? (enum lb_kind)kinds[i] : rw->balancer;
        if (k->timeout_ms)
            kc.timeout_ms = k->timeout_ms;
        kc.endpoints = eps;
        kc.endpoint_count = (size_t)n;
        run_observer_init(rw, &kc.observer);
        kc.member_bad = member_bad;
        kc.member_bad_ud = rw;
        const char *msg = NULL;
        if (kvc_client_new(rw->w, &kc, &rw->clients[i].c, &msg)) {
            snprintf(err, err_len, "%s", msg ? msg : "cannot create a client");
            rw->clients[i].c = NULL;
            return FL_EINVAL;
        }
        rw->clients[i].id = i + 1;
        rw->n_clients = i + 1;
    }
    return FL_OK;
}

int run_world_setup(struct run_world *rw, const struct run_cluster_config *cluster,
                    const struct run_clients_config *clients,
                    const struct run_workload_config *workload, unsigned checks, char *err,
                    size_t err_len)
{
    FL_ASSERT(!rw->setup);
    rw->setup = true; /* even on failure: set-up is attempted once */
    rw->ccfg = *cluster;
    rw->kcfg = *clients;
    rw->wcfg = *workload;
    rw->checks = checks;
    if (rw->tgt)
        run_target_trim_checks(rw); /* raft_safety and liveness read our members' state */
    if (!(checks & (RUN_CHECK_LINEARIZABILITY | RUN_CHECK_WATCH | RUN_CHECK_LIVENESS)))
        rw->mirror.on = false; /* nothing will read the history back */
    int rc = setup_cluster(rw, cluster, err, err_len);
    if (!rc)
        rc = setup_clients(rw, clients, err, err_len);
    if (!rc) {
        run_swarm_setup(rw);
        run_added_arm(rw);
        run_hook_update(rw);
        rc = run_workload_start(rw);
    }
    if (rc && !err[0])
        snprintf(err, err_len, "%s", fl_strerror(rc));
    return rc;
}

void run_world_close(struct run_world *rw)
{
    if (!rw)
        return;
    if (rw->w)
        run_nemesis_stop(rw); /* lanes and triggers hold events and memory */
    run_swarm_free(rw);
    for (int i = 0; i < rw->n_clients; i++)
        if (rw->clients[i].c)
            kvc_client_free(rw->clients[i].c);
    if (rw->cl)
        srv_cluster_destroy(rw->cl); /* frees the calls it never answered, silently */
    if (rw->tgt)
        rw->tgt->close(rw); /* kills every member of a real target */
    run_ctl_free_pending(rw);
    if (rw->w)
        sim_world_free(rw->w);
    run_events_free(rw);
    run_added_free(rw);
    run_coverage_free(rw);
    while (rw->calls) {
        struct run_call *c = rw->calls;
        rw->calls = c->next;
        free(c);
    }
    if (rw->db)
        hist_close(rw->db);
    fl_digest_close(&rw->hdigest);
    json_decref(rw->sum.faults);
    json_decref(rw->sum.leaders);
    json_decref(rw->sum.expects);
    json_decref(rw->sum.extra);
    free(rw->ord.skip);
    run_mirror_close(rw);
    fl_buf_close(&rw->rec.request);
    fl_buf_close(&rw->rec.response);
    free(rw->rec.lease_ends);
    free(rw->rec.compactions);
    free(rw->par.violation);
    free(rw->live.segs);
    free(rw->scenario);
    free(rw->db_path);
    free(rw->options_json);
    free(rw->target.workdir);
    free(rw);
    fl_bug_reset();
}

/* --- scheduler ---------------------------------------------------------------------- */

int64_t run_now_ns(const struct run_world *rw)
{
    return sim_now_ns(rw->w);
}

static void run_call_unlink(struct run_call *c)
{
    if (c->prev)
        c->prev->next = c->next;
    else
        c->rw->calls = c->next;
    if (c->next)
        c->next->prev = c->prev;
}

static void run_call_fire(struct sim_world *w, void *ctx)
{
    (void)w;
    struct run_call *c = ctx;
    void (*fn)(void *) = c->fn;
    void *arg = c->arg;
    run_call_unlink(c);
    free(c);
    fn(arg);
}

void run_at(struct run_world *rw, int64_t at_ns, void (*fn)(void *arg), void *arg)
{
    struct run_call *c = fl_calloc(1, sizeof *c);
    c->fn = fn;
    c->arg = arg;
    c->rw = rw;
    c->next = rw->calls;
    if (rw->calls)
        rw->calls->prev = c;
    rw->calls = c;
    int64_t now = sim_now_ns(rw->w);
    sim_schedule_at(rw->w, at_ns < now ? now : at_ns, run_call_fire, c);
}

bool run_world_stopped(struct run_world *rw)
{
    if (hist_interrupted())
        rw->interrupted = true;
    return rw->interrupted || rw->par.violation || (rw->cl && srv_cluster_safety_violation(rw->cl));
}

bool run_step(struct run_world *rw)
{
    if (run_world_stopped(rw))
        return false;
    return run_sim_step(rw);
}

void run_advance(struct run_world *rw, int64_t until_ns)
{
    if (rw->tgt) {
        rw->tgt->advance(rw, until_ns);
        return;
    }
    while (!run_world_stopped(rw) && sim_next_time_ns(rw->w) <= until_ns)
        run_sim_step(rw);
    if (!run_world_stopped(rw) && sim_now_ns(rw->w) < until_ns)
        sim_run_until(rw->w, until_ns);
}

int64_t run_next_event_ns(struct run_world *rw)
{
    return sim_next_time_ns(rw->w);
}

void run_summary_set(struct run_world *rw, const char *key, json_t *value)
{
    if (!rw->sum.extra)
        rw->sum.extra = json_object();
    json_object_set_new(rw->sum.extra, key, value);
}

uint64_t run_rng_next(struct run_world *rw)
{
    return sim_rng_u64(&rw->lua_rng);
}

void run_rng_reseed(struct run_world *rw, uint64_t n)
{
    char name[64];
    snprintf(name, sizeof name, "lua/%llu", (unsigned long long)n);
    sim_rng_derive(&rw->lua_rng, rw->seed, name);
}

/* --- cluster view --------------------------------------------------------------------- */

int run_node_proc(struct run_world *rw, int node)
{
    if (rw->tgt)
        return rw->tgt->node_proc(rw, node);
    if (!rw->cl || node < 1 || node > srv_cluster_slots(rw->cl))
        return -1;
    return srv_cluster_node_proc(rw->cl, node);
}

int run_leader(struct run_world *rw)
{
    if (rw->tgt)
        return rw->tgt->leader(rw);
    return rw->cl ? srv_cluster_leader(rw->cl) : 0;
}

int run_leader_announced(struct run_world *rw)
{
    if (rw->tgt)
        return rw->tgt->leader(rw);
    return rw->cl ? srv_cluster_leader_announced(rw->cl) : 0;
}

int run_nodes(struct run_world *rw, int *ids, int ids_max)
{
    int n = 0;
    if (rw->tgt) {
        for (int i = 1; i <= rw->tgt->slots(rw) && n < ids_max; i++)
            if (!rw->tgt->removed(rw, i))
                ids[n++] = i;
        return n;
    }
    if (!rw->cl)
        return 0;
    int slots = srv_cluster_slots(rw->cl);
    for (int i = 1; i <= slots && n < ids_max; i++)
        if (srv_cluster_node_proc(rw->cl, i) >= 0 && !srv_cluster_is_removed(rw->cl, i))
            ids[n++] = i;
    return n;
}

bool run_node_exists(struct run_world *rw, int id)
{
    return run_node_proc(rw, id) >= 0;
}

/* --- faults log ----------------------------------------------------------------------- */

void run_target_nodes(char *out, size_t n, const int *a, int na)
{
    size_t len = 0;
    out[0] = '\0';
    for (int i = 0; i < na && len + 8 < n; i++)
        len += (size_t)snprintf(out + len, n - len, "%sn%d", i ? "," : "", a[i]);
}

/* Records one fault: history row, summary entry, and the clients' failover clocks.
 * Takes ownership of detail (may be NULL). */
void run_log_fault(struct run_world *rw, const char *kind, const char *target, json_t *detail)
{
    int64_t now = sim_now_ns(rw->w);
    run_liveness_fault(rw, kind, target, detail);
    char *text = detail ? json_dumps(detail, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    if (rw->db)
        hist_fault_add(rw->db, now, kind, target, text);
    sim_digest_str(rw->w, kind);
    sim_digest_str(rw->w, target);
    json_t *f = json_object();
    json_object_set_new(f, "at_ms", json_integer(now / FL_MS));
    json_object_set_new(f, "kind", json_string(kind));
    json_object_set_new(f, "target", json_string(target));
    if (rw->ord.cur)
        json_object_set_new(f, "ordinal", json_integer(rw->ord.cur));
    if (detail)
        json_object_set(f, "detail", detail);
    json_array_append_new(rw->sum.faults, f);
    for (int i = 0; i < rw->n_clients; i++)
        if (rw->clients[i].c && !rw->clients[i].closed)
            kvc_client_note_fault(rw->clients[i].c, now);
    free(text);
    json_decref(detail);
}
