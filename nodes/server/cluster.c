/*
 * cluster.c: the cluster helper (see cluster.h): slots and their sim processes, the
 * member directory (which member ID runs on which slot, what etcd's peer URLs say),
 * the online Raft safety checkers (one per cluster ID), node events and the queries
 * (control calls, restore and convergence are in cluster_ctl.c).
 *
 * Owns: every slot's member (freed at kill and at destroy), the directory, the
 * checkers. The sim processes belong to the world; the cluster never frees them.
 */
#include "nodes/server/cluster_int.h"

#include <inttypes.h>
#include <stddef.h>

/* ---- config --------------------------------------------------------------------- */

void srv_config_default(struct srv_config *c)
{
    memset(c, 0, sizeof *c);
    c->nodes = 3;
    c->election_ms = 1000;
    c->heartbeat_ms = 100;
    c->prevote = true;
    c->check_quorum = true;
    c->strict_reconfig_check = true;
    c->snapshot_count = 100000;
    c->snapshot_catchup_entries = 5000;
    c->quota_backend_bytes = INT64_C(2) << 30;
    c->auto_compaction_mode = SRV_AUTOCOMPACT_NONE;
    c->fsync_latency_ns = FL_MS;
    c->max_msg_bytes = 1u << 20;
    c->max_inflight_msgs = 512;
    c->max_request_bytes = 1572864;
    c->max_txn_ops = 128;
    c->progress_notify_ms = 10 * 60 * 1000;
    c->watch_buffer = 128;
}

const char *srv_config_check(const struct srv_config *c)
{
    if (c->nodes < 1 || c->nodes > RAFT_NODES_MAX || c->nodes > SLOTS_MAX)
        return "nodes must be between 1 and 16";
    if (c->heartbeat_ms <= 0)
        return "heartbeat_ms must be positive";
    if (c->election_ms < 5 * c->heartbeat_ms)
        return "election_ms should be at least as 5 times as heartbeat_ms";
    if (c->election_ms > 50000)
        return "election_ms is too long, and should be set less than 50000ms";
    if (c->snapshot_count < 1)
        return "snapshot_count must be positive";
    if (c->max_inflight_msgs < 1 || c->max_msg_bytes < 1)
        return "max_inflight_msgs and max_msg_bytes must be positive";
    if (c->fsync_latency_ns < 0)
        return "fsync latency must not be negative";
    if (c->watch_buffer < 1)
        return "watch_buffer must be positive";
    return NULL;
}

const struct srv_config *srv_cluster_config(const struct srv_cluster *cl)
{
    return &cl->cfg;
}

struct fl_env *srv_cluster_env(struct srv_cluster *cl, int node)
{
    FL_ASSERT(node >= 1 && node <= cl->n_slots);
    return cl->slots[node].env;
}

uint64_t srv_cluster_rand(struct srv_cluster *cl)
{
    uint64_t v;
    do
        v = sim_rng_u64(cl->ids_rng);
    while (v == 0);
    return v;
}

/* ---- events and safety ---------------------------------------------------------- */

void srv_cluster_emit(struct srv_cluster *cl, int node, uint64_t member_id, const char *kind,
                      uint64_t term, const char *detail)
{
    srv_cluster_emit_rev(cl, node, member_id, kind, term, detail, 0, 0);
}

void srv_cluster_emit_rev(struct srv_cluster *cl, int node, uint64_t member_id, const char *kind,
                          uint64_t term, const char *detail, int64_t revision, int64_t store_rev)
{
    srv_cluster_emit_full(cl, &(struct srv_event){.node = node,
                                                  .member_id = member_id,
                                                  .kind = kind,
                                                  .term = term,
                                                  .detail = detail,
                                                  .revision = revision,
                                                  .store_rev = store_rev});
}

void srv_cluster_emit_full(struct srv_cluster *cl, struct srv_event *ev)
{
    if (!cl->obs || cl->destroying)
        return;
    ev->at_ns = sim_now_ns(cl->w);
    if (!ev->detail)
        ev->detail = "";
    cl->obs(cl->obs_ud, ev);
}

static const char *const hook_names[SRV_HOOK_KIND_COUNT] = {
    "vote_granted", "term",          "leader",           "append",
    "persisted",    "snapshot_sent", "snapshot_install", "snapshot_applied",
    "conf_change",  "conf_applied",  "compact",          "defrag",
    "snapshot",
};

const char *srv_hook_kind_name(enum srv_hook_kind k)
{
    return (unsigned)k < SRV_HOOK_KIND_COUNT ? hook_names[k] : NULL;
}

int srv_hook_kind_find(const char *name)
{
    for (int i = 0; i < SRV_HOOK_KIND_COUNT; i++)
        if (!strcmp(hook_names[i], name))
            return i;
    return -1;
}

void srv_cluster_set_hook(struct srv_cluster *cl, srv_hook_fn fn, void *ud)
{
    cl->hook = fn;
    cl->hook_ud = fn ? ud : NULL;
}

bool srv_cluster_hooked(const struct srv_cluster *cl)
{
    return cl->hook != NULL && !cl->destroying;
}

static struct safety_entry *safety_entry(struct srv_cluster *cl, uint64_t cluster_id)
{
    for (int i = 0; i < cl->n_safety; i++)
        if (cl->safety[i].cluster_id == cluster_id)
            return &cl->safety[i];
    FL_ASSERT(cl->n_safety < SAFETY_MAX);
    struct safety_entry *e = &cl->safety[cl->n_safety++];
    e->cluster_id = cluster_id;
    e->c = raft_safety_new();
    e->kv = kvhash_new();
    return e;
}

struct raft_safety *srv_cluster_safety(struct srv_cluster *cl, uint64_t cluster_id)
{
    return safety_entry(cl, cluster_id)->c;
}

struct kvhash *srv_cluster_kvhash(struct srv_cluster *cl, uint64_t cluster_id)
{
    return safety_entry(cl, cluster_id)->kv;
}

/* Keeps the first failure a checker reports in *slot and emits it as event ev; a later
 * one is dropped. False when *slot already held one. */
static bool first_failure(struct srv_cluster *cl, char **slot, int node, uint64_t member_id,
                          const char *ev, uint64_t term, const char *json)
{
    if (*slot)
        return false;
    *slot = fl_strdup(json);
    srv_cluster_emit(cl, node, member_id, ev, term, *slot);
    return true;
}

void srv_cluster_kv_corrupt(struct srv_cluster *cl, int node, uint64_t member_id, uint64_t term,
                            const char *json)
{
    first_failure(cl, &cl->corruption, node, member_id, SRV_EV_CORRUPT, term, json);
}

const char *srv_cluster_corruption(const struct srv_cluster *cl)
{
    return cl->corruption;
}

bool srv_cluster_invariants_ok(struct srv_cluster *cl, struct srv_invariant_report *out)
{
    for (int i = 1; i <= cl->n_slots; i++) {
        struct srv_member *m = cl->slots[i].m;
        if (!m || cl->slots[i].restoring || !sim_proc_alive(cl->w, m->proc))
            continue;
        *out = (struct srv_invariant_report){.node = i, .member_id = m->id, .raft = true};
        if (!raft_invariants_ok(m->raft, out->why, sizeof out->why))
            return false;
        uint64_t fp = mvcc_fingerprint(m->kv);
        if (m->chk.inv_fp_set && fp == m->chk.inv_fp)
            continue;
        out->raft = false;
        if (!mvcc_invariants_ok(m->kv, out->why, sizeof out->why))
            return false;
        m->chk.inv_fp = fp;
        m->chk.inv_fp_set = true;
    }
    return true;
}

void srv_cluster_safety_summary(const struct srv_cluster *cl, struct fl_buf *out)
{
    struct fl_buf one;
    fl_buf_init(&one);
    fl_buf_reset(out);
    fl_buf_printf(out, "[");
    for (int i = 0; i < cl->n_safety; i++) {
        raft_safety_summary_json(cl->safety[i].c, &one);
        fl_buf_printf(out, "%s%s", i ? "," : "", fl_buf_cstr(&one));
    }
    fl_buf_printf(out, "]");
    fl_buf_close(&one);
}

uint64_t srv_cluster_kv_compared(const struct srv_cluster *cl)
{
    uint64_t n = 0;
    for (int i = 0; i < cl->n_safety; i++)
        n += kvhash_compared(cl->safety[i].kv);
    return n;
}

void srv_cluster_safety_failed(struct srv_cluster *cl, int node, uint64_t member_id, uint64_t term,
                               const char *json)
{
    if (first_failure(cl, &cl->violation, node, member_id, SRV_EV_SAFETY, term, json))
        sim_stop(cl->w);
}

const char *srv_cluster_safety_violation(const struct srv_cluster *cl)
{
    return cl->violation;
}

/* ---- directory ------------------------------------------------------------------ */

void srv_cl_dir_set(struct srv_cluster *cl, uint64_t id, int node)
{
    for (int i = 0; i < cl->n_dir; i++) {
        if (cl->dir[i].id == id) {
            cl->dir[i].node = node;
            return;
        }
    }
    FL_ASSERT(cl->n_dir < DIR_MAX);
    cl->dir[cl->n_dir].id = id;
    cl->dir[cl->n_dir].node = node;
    cl->n_dir++;
}

int srv_cluster_dir_node(struct srv_cluster *cl, uint64_t member_id)
{
    for (int i = 0; i < cl->n_dir; i++)
        if (cl->dir[i].id == member_id)
            return cl->dir[i].node;
    return -1;
}

bool srv_cluster_member_started(struct srv_cluster *cl, uint64_t member_id)
{
    int node = srv_cluster_dir_node(cl, member_id);
    if (node <= 0 || node > cl->n_slots)
        return false;
    const struct srv_slot *sl = &cl->slots[node];
    return sl->started && sl->member_id == member_id;
}

int srv_cluster_dir_proc(struct srv_cluster *cl, uint64_t member_id)
{
    int node = srv_cluster_dir_node(cl, member_id);
    return node > 0 ? cl->slots[node].proc : -1;
}

/* ---- slots and processes -------------------------------------------------------- */

void srv_cl_ctl_fail(srv_done_fn done, void *ud, enum rpc_err_id err)
{
    struct srv_status st = {rpc_err_code(err), rpc_err_text(err)};
    struct srv_result res;
    memset(&res, 0, sizeof res);
    if (done)
        done(ud, &st, &res);
}

static void on_proc_kill(struct sim_world *w, int proc, void *ctx)
{
    (void)w;
    (void)proc;
    struct srv_slot *sl = ctx;
    if (!sl || !sl->m)
        return;
    struct srv_member *m = sl->m;
    srv_rpc_fail_pending(m);
    for (int i = 0; i < sl->cl->n_ctl; i++) {
        struct ctl_call *c = sl->cl->ctl[i];
        if (c && c->node == sl->node) {
            /* its timer died with the process */
            sl->cl->ctl[i] = NULL;
            srv_cl_ctl_fail(c->done, c->ud, RPC_ERR_STOPPED);
            srv_pb_free_owned(c->req);
            free(c);
        }
    }
    raft_safety_not_leader(m->chk.safety, m->id);
    kvhash_forget(m->chk.kvh, m->id);
    srv_cluster_emit(sl->cl, sl->node, m->id, SRV_EV_CRASH, raft_term(m->raft),
                     sl->removed ? "stopped after its removal" : "process killed");
    sl->m = NULL;
    srv_member_free(m);
}

void srv_cl_slot_start(struct srv_slot *sl)
{
    struct srv_cluster *cl = sl->cl;
    struct srv_member *m = srv_member_recover(&cl->host, sl->env, sl->node, sl->proc);
    if (!m) {
        /* Nothing durable yet: a founding member bootstraps again, a joiner joins. */
        if (sl->founding)
            m = srv_member_boot(&cl->host, sl->env, sl->node, sl->proc, sl->member_id,
                                sl->cluster_id, cl->founders, cl->n_founders);
        else
            m = srv_member_join(&cl->host, sl->env, sl->node, sl->proc, sl->member_id,
                                sl->cluster_id);
    }
    sl->m = m;
    sl->started = true;
    sl->member_id = m->id;
    sl->cluster_id = m->cluster_id;
}

static void on_proc_restart(struct sim_world *w, int proc, void *ctx)
{
    (void)w;
    (void)proc;
    struct srv_slot *sl = ctx;
    if (!sl || sl->m || !sl->member_id || sl->restoring)
        return;
    srv_cl_slot_start(sl);
    char d[96];
    snprintf(d, sizeof d, "recovered from disk: applied %" PRIu64 ", last index %" PRIu64,
             sl->m->app.applied, raft_last_index(sl->m->raft));
    srv_cluster_emit(sl->cl, sl->node, sl->m->id, SRV_EV_RESTART, raft_term(sl->m->raft), d);
}

static int slot_new(struct srv_cluster *cl)
{
    if (cl->n_slots >= SLOTS_MAX)
        return -1;
    int node = ++cl->n_slots;
    struct srv_slot *sl = &cl->slots[node];
    memset(sl, 0, sizeof *sl);
    sl->cl = cl;
    sl->node = node;
    char name[32];
    snprintf(name, sizeof name, "node%d", node);
    static const struct sim_proc_ops ops = {on_proc_kill, on_proc_restart};
    sl->proc = sim_proc_add(cl->w, name, &ops, sl);
    sl->env = env_sim_new(cl->w, sl->proc);
    disk_set_fsync_latency(cl->w, sl->proc, cl->cfg.fsync_latency_ns);
    return node;
}

int srv_cluster_dir_register(struct srv_cluster *cl, int node, uint64_t member_id)
{
    if (node <= 0) {
        /* Reuse a slot that never ran a member (a refused add), else make one. */
        for (int i = 1; i <= cl->n_slots && node <= 0; i++)
            if (!cl->slots[i].started && !cl->slots[i].member_id)
                node = i;
        if (node <= 0)
            node = slot_new(cl);
        if (node <= 0)
            return -1;
    }
    while (cl->n_slots < node)
        if (slot_new(cl) < 0)
            return -1;
    struct srv_slot *sl = &cl->slots[node];
    if (sl->m && sl->m->id != member_id)
        return -1; /* a running member already lives there */
    srv_cl_dir_set(cl, member_id, node);
    return node;
}

/* Starts a joiner whose identity is on its slot: an empty disk, a fresh process. */
static void joiner_start(struct srv_slot *sl)
{
    struct srv_cluster *cl = sl->cl;
    disk_wipe(cl->w, sl->proc);
    if (sim_proc_state(cl->w, sl->proc) == SIM_PROC_DOWN)
        sim_proc_restart(cl->w, sl->proc);
    else
        srv_cl_slot_start(sl);
    srv_cluster_emit(cl, sl->node, sl->member_id, SRV_EV_RESTART, 0, SRV_EV_JOINED_DETAIL);
}

void srv_cluster_start_joiner(struct srv_cluster *cl, int node, uint64_t member_id,
                              uint64_t cluster_id, bool start)
{
    if (node <= 0 || node > cl->n_slots)
        return;
    struct srv_slot *sl = &cl->slots[node];
    if (sl->m || sl->started)
        return;
    sl->member_id = member_id;
    sl->cluster_id = cluster_id;
    sl->founding = false;
    sl->awaiting_start = !start;
    if (start)
        joiner_start(sl);
}

int srv_cluster_member_start(struct srv_cluster *cl, int node)
{
    struct srv_slot *sl = srv_cl_slot_get(cl, node);
    if (!sl || !sl->awaiting_start)
        return FL_ENOENT;
    FL_ASSERT(!sl->m && !sl->started && sl->member_id != 0);
    sl->awaiting_start = false;
    joiner_start(sl);
    return FL_OK;
}

bool srv_cluster_awaits_start(const struct srv_cluster *cl, int node)
{
    const struct srv_slot *sl = srv_cl_slot_get(cl, node);
    return sl && sl->awaiting_start;
}

static void kill_removed(struct sim_world *w, void *ctx)
{
    struct srv_slot *sl = ctx;
    if (sim_proc_state(w, sl->proc) != SIM_PROC_DOWN)
        sim_proc_kill(w, sl->proc);
}

void srv_cluster_member_removed(struct srv_cluster *cl, int node)
{
    if (node <= 0 || node > cl->n_slots || cl->slots[node].removed)
        return;
    cl->slots[node].removed = true;
    if (cl->slots[node].member_id) {
        raft_safety_forget(srv_cluster_safety(cl, cl->slots[node].cluster_id),
                           cl->slots[node].member_id);
        kvhash_forget(srv_cluster_kvhash(cl, cl->slots[node].cluster_id),
                      cl->slots[node].member_id);
    }
    sim_schedule(cl->w, 0, kill_removed, &cl->slots[node]);
}

/* ---- the member host (host.h) ---------------------------------------------------- */

/* Each op is the srv_cluster call a member made before the host existed. */
static struct srv_cluster *host_cl(struct srv_host *h)
{
    return (struct srv_cluster *)((char *)h - offsetof(struct srv_cluster, host));
}

static const struct srv_config *host_config(struct srv_host *h)
{
    return srv_cluster_config(host_cl(h));
}

static bool host_prevote(struct srv_host *h, int node)
{
    return srv_cluster_member_prevote(host_cl(h), node);
}

static int host_dir_node(struct srv_host *h, uint64_t member_id)
{
    return srv_cluster_dir_node(host_cl(h), member_id);
}

static int host_dir_proc(struct srv_host *h, uint64_t member_id)
{
    return srv_cluster_dir_proc(host_cl(h), member_id);
}

static bool host_member_started(struct srv_host *h, uint64_t member_id)
{
    return srv_cluster_member_started(host_cl(h), member_id);
}

static int host_slots(struct srv_host *h)
{
    return srv_cluster_slots(host_cl(h));
}

static bool host_slot_used(struct srv_host *h, int node)
{
    struct srv_cluster *cl = host_cl(h);
    return srv_cluster_member_id(cl, node) != 0 || srv_cluster_is_removed(cl, node);
}

static struct raft_safety *host_safety(struct srv_host *h, uint64_t cluster_id)
{
    return srv_cluster_safety(host_cl(h), cluster_id);
}

static struct kvhash *host_kvhash(struct srv_host *h, uint64_t cluster_id)
{
    return srv_cluster_kvhash(host_cl(h), cluster_id);
}

static void host_safety_failed(struct srv_host *h, int node, uint64_t member_id, uint64_t term,
                               const char *json)
{
    srv_cluster_safety_failed(host_cl(h), node, member_id, term, json);
}

static void host_kv_corrupt(struct srv_host *h, int node, uint64_t member_id, uint64_t term,
                            const char *json)
{
    srv_cluster_kv_corrupt(host_cl(h), node, member_id, term, json);
}

static void host_emit(struct srv_host *h, struct srv_event *ev)
{
    srv_cluster_emit_full(host_cl(h), ev);
}

static bool host_hooked(struct srv_host *h)
{
    return srv_cluster_hooked(host_cl(h));
}

static void host_hook(struct srv_host *h, const struct srv_hook_event *ev)
{
    struct srv_cluster *cl = host_cl(h);
    cl->hook(cl->hook_ud, ev);
}

static int host_dir_register(struct srv_host *h, int node, uint64_t member_id)
{
    return srv_cluster_dir_register(host_cl(h), node, member_id);
}

static void host_start_joiner(struct srv_host *h, int node, uint64_t member_id, uint64_t cluster_id,
                              bool start)
{
    srv_cluster_start_joiner(host_cl(h), node, member_id, cluster_id, start);
}

static void host_member_removed(struct srv_host *h, int node)
{
    srv_cluster_member_removed(host_cl(h), node);
}

static uint64_t host_new_id(struct srv_host *h)
{
    return srv_cluster_rand(host_cl(h));
}

static struct fl_arena_pool *host_pb_pool(struct srv_host *h)
{
    return srv_cluster_pb_pool(host_cl(h));
}

static const struct srv_host_ops cluster_host_ops = {
    .config = host_config,
    .prevote = host_prevote,
    .dir_node = host_dir_node,
    .dir_proc = host_dir_proc,
    .member_started = host_member_started,
    .slots = host_slots,
    .slot_used = host_slot_used,
    .safety = host_safety,
    .kvhash = host_kvhash,
    .safety_failed = host_safety_failed,
    .kv_corrupt = host_kv_corrupt,
    .emit = host_emit,
    .hooked = host_hooked,
    .hook = host_hook,
    .dir_register = host_dir_register,
    .start_joiner = host_start_joiner,
    .member_removed = host_member_removed,
    .new_id = host_new_id,
    .pb_pool = host_pb_pool,
};

/* ---- create / destroy ----------------------------------------------------------- */

int srv_cluster_create(struct sim_world *w, const struct srv_config *cfg, srv_observer_fn obs,
                       void *obs_ud, struct srv_cluster **out, const char **err)
{
    fl_heap_keep_big_buffers();
    *out = NULL;
    const char *bad = srv_config_check(cfg);
    if (bad) {
        if (err)
            *err = bad;
        return FL_EINVAL;
    }
    struct srv_cluster *cl = fl_calloc(1, sizeof *cl);
    cl->host.ops = &cluster_host_ops;
    cl->w = w;
    cl->cfg = *cfg;
    cl->obs = obs;
    cl->obs_ud = obs_ud;
    cl->ids_rng = sim_rng(w, "server/ids");
    srv_pb_pool_init(&cl->pb_pool);
    uint64_t cluster_id = srv_cluster_rand(cl);
    for (int i = 0; i < cfg->nodes; i++) {
        int node = slot_new(cl);
        FL_ASSERT(node == i + 1);
        struct srv_slot *sl = &cl->slots[node];
        sl->member_id = srv_cluster_rand(cl);
        sl->cluster_id = cluster_id;
        sl->founding = true;
        cl->founders[cl->n_founders++] = sl->member_id;
        srv_cl_dir_set(cl, sl->member_id, node);
    }
    for (int node = 1; node <= cfg->nodes; node++)
        srv_cl_slot_start(&cl->slots[node]);
    *out = cl;
    return FL_OK;
}

void srv_cluster_destroy(struct srv_cluster *cl)
{
    if (!cl)
        return;
    cl->destroying = true;
    for (int i = 1; i <= cl->n_slots; i++) {
        if (cl->slots[i].m) {
            srv_member_free(cl->slots[i].m);
            cl->slots[i].m = NULL;
        }
        sim_proc_set_ctx(cl->w, cl->slots[i].proc, NULL);
        env_sim_free(cl->slots[i].env);
        cl->slots[i].env = NULL;
    }
    for (int i = 0; i < cl->n_ctl; i++) {
        if (cl->ctl[i]) {
            srv_pb_free_owned(cl->ctl[i]->req);
            free(cl->ctl[i]);
        }
    }
    free(cl->ctl);
    fl_arena_pool_close(&cl->pb_pool); /* every owned request is freed by now */
    for (int i = 0; i < cl->n_safety; i++) {
        raft_safety_free(cl->safety[i].c);
        kvhash_free(cl->safety[i].kv);
    }
    free(cl->corruption);
    free(cl->violation);
    free(cl);
}

/* ---- queries -------------------------------------------------------------------- */

struct srv_slot *srv_cl_slot_get(const struct srv_cluster *cl, int node)
{
    if (node <= 0 || node > cl->n_slots)
        return NULL;
    return (struct srv_slot *)&cl->slots[node];
}

struct fl_arena_pool *srv_cluster_pb_pool(struct srv_cluster *cl)
{
    return &cl->pb_pool;
}

int srv_cluster_slots(const struct srv_cluster *cl)
{
    return cl->n_slots;
}

struct srv_member *srv_cluster_member(struct srv_cluster *cl, int node)
{
    struct srv_slot *sl = srv_cl_slot_get(cl, node);
    return sl ? sl->m : NULL;
}

int srv_cluster_node_proc(const struct srv_cluster *cl, int node)
{
    struct srv_slot *sl = srv_cl_slot_get(cl, node);
    /* A slot kept for a member add that is uncommitted or was refused is no node yet. */
    return sl && (sl->member_id || sl->started) ? sl->proc : -1;
}

/* The live leader of the highest term (0: none); with `announced`, only a leader whose
 * "leader" node event for that term is out. */
static int leader_of(const struct srv_cluster *cl, bool announced)
{
    int best = 0;
    uint64_t best_term = 0;
    for (int i = 1; i <= cl->n_slots; i++) {
        const struct srv_slot *sl = &cl->slots[i];
        if (!sl->m || sl->removed || sim_proc_state(cl->w, sl->proc) != SIM_PROC_UP)
            continue;
        uint64_t term = raft_term(sl->m->raft);
        if (raft_role(sl->m->raft) == RAFT_LEADER && term >= best_term &&
            (!announced || sl->m->soft.leader_announced_term == term)) {
            best = i;
            best_term = term;
        }
    }
    return best;
}

int srv_cluster_leader(const struct srv_cluster *cl)
{
    return leader_of(cl, false);
}

int srv_cluster_leader_announced(const struct srv_cluster *cl)
{
    return leader_of(cl, true);
}

/* The configuration to report: the leader's, else the newest any live member has. */
const struct raft_conf_state *srv_cl_conf(const struct srv_cluster *cl)
{
    int l = srv_cluster_leader(cl);
    if (l)
        return raft_conf(cl->slots[l].m->raft);
    const struct raft_conf_state *best = NULL;
    uint64_t best_index = 0;
    for (int i = 1; i <= cl->n_slots; i++) {
        const struct srv_slot *sl = &cl->slots[i];
        if (sl->m && !sl->removed && (!best || raft_last_index(sl->m->raft) > best_index)) {
            best = raft_conf(sl->m->raft);
            best_index = raft_last_index(sl->m->raft);
        }
    }
    return best;
}

int srv_cluster_voters(const struct srv_cluster *cl, int *nodes, int cap)
{
    const struct raft_conf_state *c = srv_cl_conf(cl);
    if (!c)
        return 0;
    int n = 0;
    for (int node = 1; node <= cl->n_slots && n < cap; node++) {
        uint64_t id = cl->slots[node].member_id;
        if (id && raft_conf_is_voter(c, id))
            nodes[n++] = node;
    }
    return n;
}

bool srv_cluster_is_alive(const struct srv_cluster *cl, int node)
{
    struct srv_slot *sl = srv_cl_slot_get(cl, node);
    return sl && sl->m && sim_proc_alive(cl->w, sl->proc);
}

bool srv_cluster_is_removed(const struct srv_cluster *cl, int node)
{
    struct srv_slot *sl = srv_cl_slot_get(cl, node);
    return !sl || sl->removed;
}

bool srv_cluster_is_started(const struct srv_cluster *cl, int node)
{
    struct srv_slot *sl = srv_cl_slot_get(cl, node);
    return sl && sl->started;
}

bool srv_cluster_is_learner(const struct srv_cluster *cl, int node)
{
    struct srv_slot *sl = srv_cl_slot_get(cl, node);
    const struct raft_conf_state *c = srv_cl_conf(cl);
    return sl && c && raft_conf_is_learner(c, sl->member_id);
}

uint64_t srv_cluster_member_id(const struct srv_cluster *cl, int node)
{
    struct srv_slot *sl = srv_cl_slot_get(cl, node);
    return sl ? sl->member_id : 0;
}

uint64_t srv_cluster_id(const struct srv_cluster *cl, int node)
{
    struct srv_slot *sl = srv_cl_slot_get(cl, node);
    return sl ? sl->cluster_id : 0;
}

void srv_cluster_status(const struct srv_cluster *cl, int node, struct srv_member_status *out)
{
    struct srv_slot *sl = srv_cl_slot_get(cl, node);
    memset(out, 0, sizeof *out);
    out->last_quorum_contact_ns = -1;
    if (sl && sl->m)
        srv_member_status(sl->m, out);
    else if (sl) {
        out->member_id = sl->member_id;
        out->cluster_id = sl->cluster_id;
    }
}

/* ---- the simulated machine ------------------------------------------------------ */

void srv_cluster_kill(struct srv_cluster *cl, int node)
{
    struct srv_slot *sl = srv_cl_slot_get(cl, node);
    if (sl && sim_proc_state(cl->w, sl->proc) != SIM_PROC_DOWN)
        sim_proc_kill(cl->w, sl->proc);
}

void srv_cluster_restart(struct srv_cluster *cl, int node)
{
    struct srv_slot *sl = srv_cl_slot_get(cl, node);
    /* A member added without being started is started by srv_cluster_member_start
     * only, never by a restart (heal_all, a nemesis). */
    if (!sl || !sl->member_id || sl->awaiting_start)
        return;
    if (sim_proc_state(cl->w, sl->proc) == SIM_PROC_DOWN)
        sim_proc_restart(cl->w, sl->proc);
}

void srv_cluster_pause(struct srv_cluster *cl, int node)
{
    struct srv_slot *sl = srv_cl_slot_get(cl, node);
    if (sl && sim_proc_pause(cl->w, sl->proc) == FL_OK)
        srv_cluster_emit(cl, node, sl->member_id, SRV_EV_PAUSE, 0, "process paused");
}

void srv_cluster_resume(struct srv_cluster *cl, int node)
{
    struct srv_slot *sl = srv_cl_slot_get(cl, node);
    if (sl && sim_proc_resume(cl->w, sl->proc) == FL_OK)
        srv_cluster_emit(cl, node, sl->member_id, SRV_EV_RESUME, 0, "process resumed");
}
