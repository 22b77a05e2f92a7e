/*
 * cluster.c: the cluster helper (see cluster.h): slots and their sim processes, the
 * member directory (which member ID runs on which slot, what etcd's peer URLs say),
 * the online Raft safety checkers (one per cluster ID), node events, control calls
 * routed to members as RPCs, restore, and the convergence check.
 *
 * Owns: every slot's member (freed at kill and at destroy), the directory, the
 * checkers. The sim processes belong to the world; the cluster never frees them.
 */
#include "nodes/server/convert.h"
#include "nodes/server/srv_int.h"

#include <inttypes.h>

#define SLOTS_MAX  32
#define DIR_MAX    256
#define SAFETY_MAX 8

struct srv_slot {
    struct srv_cluster *cl;
    int node;
    int proc;
    uint64_t member_id; /* current identity on this slot; 0 before any */
    uint64_t cluster_id;
    struct srv_member *m; /* NULL while the process is down */
    bool founding;        /* boots by bootstrap when its disk is empty */
    bool removed;
    bool started;   /* has run a member at least once */
    bool restoring; /* restarted only to write a restored data dir */
};

struct dir_entry {
    uint64_t id;
    int node;
};

struct safety_entry {
    uint64_t cluster_id;
    struct raft_safety *c;
};

struct srv_cluster {
    struct sim_world *w;
    struct srv_config cfg;
    srv_observer_fn obs;
    void *obs_ud;
    struct srv_slot slots[SLOTS_MAX + 1]; /* 1-based */
    int n_slots;
    struct dir_entry dir[DIR_MAX];
    int n_dir;
    struct safety_entry safety[SAFETY_MAX];
    int n_safety;
    char *violation; /* first violation (JSON), owned */
    uint64_t founders[RAFT_NODES_MAX];
    size_t n_founders;
    struct sim_rng *ids_rng;
    char detail[512];
    bool destroying;
    struct ctl_call **ctl; /* control calls queued on a member's process */
    int n_ctl, cap_ctl;
};

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
    return NULL;
}

const struct srv_config *srv_cluster_config(const struct srv_cluster *cl)
{
    return &cl->cfg;
}

struct sim_world *srv_cluster_world(struct srv_cluster *cl)
{
    return cl->w;
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
    if (!cl->obs || cl->destroying)
        return;
    struct srv_event ev = {sim_now_ns(cl->w), node, member_id, kind, term, detail ? detail : ""};
    cl->obs(cl->obs_ud, &ev);
}

struct raft_safety *srv_cluster_safety(struct srv_cluster *cl, uint64_t cluster_id)
{
    for (int i = 0; i < cl->n_safety; i++)
        if (cl->safety[i].cluster_id == cluster_id)
            return cl->safety[i].c;
    FL_ASSERT(cl->n_safety < SAFETY_MAX);
    cl->safety[cl->n_safety].cluster_id = cluster_id;
    cl->safety[cl->n_safety].c = raft_safety_new();
    return cl->safety[cl->n_safety++].c;
}

void srv_cluster_safety_failed(struct srv_cluster *cl, struct srv_member *m)
{
    if (cl->violation)
        return;
    cl->violation = fl_strdup(raft_safety_violation_json(m->safety));
    srv_cluster_emit(cl, m->node, m->id, SRV_EV_SAFETY, raft_term(m->raft), cl->violation);
    sim_stop(cl->w);
}

const char *srv_cluster_safety_violation(const struct srv_cluster *cl)
{
    return cl->violation;
}

/* ---- directory ------------------------------------------------------------------ */

static void dir_set(struct srv_cluster *cl, uint64_t id, int node)
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

int srv_cluster_dir_proc(struct srv_cluster *cl, uint64_t member_id)
{
    int node = srv_cluster_dir_node(cl, member_id);
    return node > 0 ? cl->slots[node].proc : -1;
}

/* ---- slots and processes -------------------------------------------------------- */

struct ctl_call {
    struct srv_cluster *cl;
    int node;
    Rpc__ClientMsg *req;
    srv_done_fn done;
    void *ud;
};

static void ctl_fail(srv_done_fn done, void *ud, enum rpc_err_id err)
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
            ctl_fail(c->done, c->ud, RPC_ERR_STOPPED);
            rpc__client_msg__free_unpacked(c->req, NULL);
            free(c);
        }
    }
    raft_safety_not_leader(m->safety, m->id);
    srv_cluster_emit(sl->cl, sl->node, m->id, SRV_EV_CRASH, raft_term(m->raft),
                     sl->removed ? "stopped after its removal" : "process killed");
    sl->m = NULL;
    srv_member_free(m);
}

static void slot_start(struct srv_slot *sl)
{
    struct srv_cluster *cl = sl->cl;
    struct srv_member *m = srv_member_recover(cl, sl->node, sl->proc);
    if (!m) {
        /* Nothing durable yet: a founding member bootstraps again, a joiner joins. */
        if (sl->founding)
            m = srv_member_boot(cl, sl->node, sl->proc, sl->member_id, sl->cluster_id, cl->founders,
                                cl->n_founders);
        else
            m = srv_member_join(cl, sl->node, sl->proc, sl->member_id, sl->cluster_id);
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
    slot_start(sl);
    char d[96];
    snprintf(d, sizeof d, "recovered from disk: applied %" PRIu64 ", last index %" PRIu64,
             sl->m->applied, raft_last_index(sl->m->raft));
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
    dir_set(cl, member_id, node);
    return node;
}

void srv_cluster_start_joiner(struct srv_cluster *cl, int node, uint64_t member_id,
                              uint64_t cluster_id)
{
    if (node <= 0 || node > cl->n_slots)
        return;
    struct srv_slot *sl = &cl->slots[node];
    if (sl->m || sl->started)
        return;
    sl->member_id = member_id;
    sl->cluster_id = cluster_id;
    sl->founding = false;
    disk_wipe(cl->w, sl->proc);
    if (sim_proc_state(cl->w, sl->proc) == SIM_PROC_DOWN)
        sim_proc_restart(cl->w, sl->proc);
    else
        slot_start(sl);
    srv_cluster_emit(cl, node, member_id, SRV_EV_RESTART, 0, "joined as a new member");
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
    if (cl->slots[node].member_id)
        raft_safety_forget(srv_cluster_safety(cl, cl->slots[node].cluster_id),
                           cl->slots[node].member_id);
    sim_schedule(cl->w, 0, kill_removed, &cl->slots[node]);
}

/* ---- create / destroy ----------------------------------------------------------- */

int srv_cluster_create(struct sim_world *w, const struct srv_config *cfg, srv_observer_fn obs,
                       void *obs_ud, struct srv_cluster **out, const char **err)
{
    *out = NULL;
    const char *bad = srv_config_check(cfg);
    if (bad) {
        if (err)
            *err = bad;
        return FL_EINVAL;
    }
    struct srv_cluster *cl = fl_calloc(1, sizeof *cl);
    cl->w = w;
    cl->cfg = *cfg;
    cl->obs = obs;
    cl->obs_ud = obs_ud;
    cl->ids_rng = sim_rng(w, "server/ids");
    uint64_t cluster_id = srv_cluster_rand(cl);
    for (int i = 0; i < cfg->nodes; i++) {
        int node = slot_new(cl);
        FL_ASSERT(node == i + 1);
        struct srv_slot *sl = &cl->slots[node];
        sl->member_id = srv_cluster_rand(cl);
        sl->cluster_id = cluster_id;
        sl->founding = true;
        cl->founders[cl->n_founders++] = sl->member_id;
        dir_set(cl, sl->member_id, node);
    }
    for (int node = 1; node <= cfg->nodes; node++)
        slot_start(&cl->slots[node]);
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
    }
    for (int i = 0; i < cl->n_ctl; i++) {
        if (cl->ctl[i]) {
            rpc__client_msg__free_unpacked(cl->ctl[i]->req, NULL);
            free(cl->ctl[i]);
        }
    }
    free(cl->ctl);
    for (int i = 0; i < cl->n_safety; i++)
        raft_safety_free(cl->safety[i].c);
    free(cl->violation);
    free(cl);
}

/* ---- queries -------------------------------------------------------------------- */

static struct srv_slot *slot_get(const struct srv_cluster *cl, int node)
{
    if (node <= 0 || node > cl->n_slots)
        return NULL;
    return (struct srv_slot *)&cl->slots[node];
}

int srv_cluster_slots(const struct srv_cluster *cl)
{
    return cl->n_slots;
}

struct srv_member *srv_cluster_member(struct srv_cluster *cl, int node)
{
    struct srv_slot *sl = slot_get(cl, node);
    return sl ? sl->m : NULL;
}

int srv_cluster_node_proc(const struct srv_cluster *cl, int node)
{
    struct srv_slot *sl = slot_get(cl, node);
    return sl ? sl->proc : -1;
}

int srv_cluster_leader(const struct srv_cluster *cl)
{
    int best = 0;
    uint64_t best_term = 0;
    for (int i = 1; i <= cl->n_slots; i++) {
        const struct srv_slot *sl = &cl->slots[i];
        if (!sl->m || sl->removed || sim_proc_state(cl->w, sl->proc) != SIM_PROC_UP)
            continue;
        if (raft_role(sl->m->raft) == RAFT_LEADER && raft_term(sl->m->raft) >= best_term) {
            best = i;
            best_term = raft_term(sl->m->raft);
        }
    }
    return best;
}

/* The configuration to report: the leader's, else the newest any live member has. */
static const struct raft_conf_state *cluster_conf(const struct srv_cluster *cl)
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
    const struct raft_conf_state *c = cluster_conf(cl);
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
    struct srv_slot *sl = slot_get(cl, node);
    return sl && sl->m && sim_proc_alive(cl->w, sl->proc);
}

bool srv_cluster_is_removed(const struct srv_cluster *cl, int node)
{
    struct srv_slot *sl = slot_get(cl, node);
    return !sl || sl->removed;
}

bool srv_cluster_is_learner(const struct srv_cluster *cl, int node)
{
    struct srv_slot *sl = slot_get(cl, node);
    const struct raft_conf_state *c = cluster_conf(cl);
    return sl && c && raft_conf_is_learner(c, sl->member_id);
}

uint64_t srv_cluster_member_id(const struct srv_cluster *cl, int node)
{
    struct srv_slot *sl = slot_get(cl, node);
    return sl ? sl->member_id : 0;
}

uint64_t srv_cluster_id(const struct srv_cluster *cl, int node)
{
    struct srv_slot *sl = slot_get(cl, node);
    return sl ? sl->cluster_id : 0;
}

void srv_cluster_status(const struct srv_cluster *cl, int node, struct srv_member_status *out)
{
    struct srv_slot *sl = slot_get(cl, node);
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
    struct srv_slot *sl = slot_get(cl, node);
    if (sl && sim_proc_state(cl->w, sl->proc) != SIM_PROC_DOWN)
        sim_proc_kill(cl->w, sl->proc);
}

void srv_cluster_restart(struct srv_cluster *cl, int node)
{
    struct srv_slot *sl = slot_get(cl, node);
    if (!sl || !sl->member_id)
        return;
    if (sim_proc_state(cl->w, sl->proc) == SIM_PROC_DOWN)
        sim_proc_restart(cl->w, sl->proc);
}

void srv_cluster_pause(struct srv_cluster *cl, int node)
{
    struct srv_slot *sl = slot_get(cl, node);
    if (sl && sim_proc_pause(cl->w, sl->proc) == FL_OK)
        srv_cluster_emit(cl, node, sl->member_id, SRV_EV_PAUSE, 0, "process paused");
}

void srv_cluster_resume(struct srv_cluster *cl, int node)
{
    struct srv_slot *sl = slot_get(cl, node);
    if (sl && sim_proc_resume(cl->w, sl->proc) == FL_OK)
        srv_cluster_emit(cl, node, sl->member_id, SRV_EV_RESUME, 0, "process resumed");
}

/* ---- control calls ---------------------------------------------------------------- */

/* Runs on the member's process (so a paused member answers after resume). */
static void ctl_run(struct sim_world *w, void *ctx)
{
    (void)w;
    struct ctl_call *c = ctx;
    for (int i = 0; i < c->cl->n_ctl; i++)
        if (c->cl->ctl[i] == c)
            c->cl->ctl[i] = NULL;
    struct srv_slot *sl = slot_get(c->cl, c->node);
    if (!sl || !sl->m) {
        ctl_fail(c->done, c->ud, RPC_ERR_STOPPED);
        rpc__client_msg__free_unpacked(c->req, NULL);
    } else {
        struct srv_reply reply = {0, c->req->call_id, c->done, c->ud};
        srv_rpc_handle(sl->m, &reply, c->req);
        srv_member_process(sl->m);
    }
    free(c);
}

static int route(struct srv_cluster *cl, int via)
{
    if (via > 0)
        return via;
    int l = srv_cluster_leader(cl);
    return l ? l : 1;
}

static void ctl_send(struct srv_cluster *cl, int node, const Rpc__ClientMsg *msg, srv_done_fn done,
                     void *ud)
{
    struct srv_slot *sl = slot_get(cl, node);
    if (!sl || !sl->m || !sim_proc_alive(cl->w, sl->proc)) {
        ctl_fail(done, ud, RPC_ERR_STOPPED);
        return;
    }
    size_t n = rpc__client_msg__get_packed_size(msg);
    uint8_t *buf = fl_malloc(n + 1);
    rpc__client_msg__pack(msg, buf);
    struct ctl_call *c = fl_calloc(1, sizeof *c);
    c->cl = cl;
    c->node = node;
    c->req = rpc__client_msg__unpack(NULL, n, buf);
    c->done = done;
    c->ud = ud;
    free(buf);
    FL_ASSERT(c->req);
    if (!sim_timer_start(cl->w, sl->proc, 0, ctl_run, c)) {
        rpc__client_msg__free_unpacked(c->req, NULL);
        free(c);
        ctl_fail(done, ud, RPC_ERR_STOPPED);
        return;
    }
    int k = 0;
    while (k < cl->n_ctl && cl->ctl[k])
        k++;
    if (k == cl->n_ctl) {
        if (cl->n_ctl == cl->cap_ctl) {
            cl->cap_ctl = cl->cap_ctl ? cl->cap_ctl * 2 : 16;
            cl->ctl = fl_realloc(cl->ctl, (size_t)cl->cap_ctl * sizeof *cl->ctl);
        }
        cl->n_ctl++;
    }
    cl->ctl[k] = c;
}

void srv_cluster_member_add(struct srv_cluster *cl, int via, bool learner, srv_done_fn done,
                            void *ud)
{
    Rpc__ClientMsg msg = RPC__CLIENT_MSG__INIT;
    Rpc__MemberAddRequest r = RPC__MEMBER_ADD_REQUEST__INIT;
    r.islearner = learner;
    msg.method = RPC__METHOD__METHOD_MEMBER_ADD;
    msg.req_case = RPC__CLIENT_MSG__REQ_MEMBER_ADD;
    msg.member_add = &r;
    ctl_send(cl, route(cl, via), &msg, done, ud);
}

void srv_cluster_member_remove(struct srv_cluster *cl, int via, int node, srv_done_fn done,
                               void *ud)
{
    Rpc__ClientMsg msg = RPC__CLIENT_MSG__INIT;
    Rpc__MemberRemoveRequest r = RPC__MEMBER_REMOVE_REQUEST__INIT;
    r.id = srv_cluster_member_id(cl, node);
    msg.method = RPC__METHOD__METHOD_MEMBER_REMOVE;
    msg.req_case = RPC__CLIENT_MSG__REQ_MEMBER_REMOVE;
    msg.member_remove = &r;
    ctl_send(cl, route(cl, via), &msg, done, ud);
}

void srv_cluster_member_promote(struct srv_cluster *cl, int via, int node, srv_done_fn done,
                                void *ud)
{
    Rpc__ClientMsg msg = RPC__CLIENT_MSG__INIT;
    Rpc__MemberPromoteRequest r = RPC__MEMBER_PROMOTE_REQUEST__INIT;
    r.id = srv_cluster_member_id(cl, node);
    msg.method = RPC__METHOD__METHOD_MEMBER_PROMOTE;
    msg.req_case = RPC__CLIENT_MSG__REQ_MEMBER_PROMOTE;
    msg.member_promote = &r;
    ctl_send(cl, route(cl, via), &msg, done, ud);
}

void srv_cluster_move_leader(struct srv_cluster *cl, int via, int target, srv_done_fn done,
                             void *ud)
{
    Rpc__ClientMsg msg = RPC__CLIENT_MSG__INIT;
    Rpc__MoveLeaderRequest r = RPC__MOVE_LEADER_REQUEST__INIT;
    r.targetid = srv_cluster_member_id(cl, target);
    msg.method = RPC__METHOD__METHOD_MOVE_LEADER;
    msg.req_case = RPC__CLIENT_MSG__REQ_MOVE_LEADER;
    msg.move_leader = &r;
    ctl_send(cl, route(cl, via), &msg, done, ud);
}

void srv_cluster_compact(struct srv_cluster *cl, int via, int64_t revision, srv_done_fn done,
                         void *ud)
{
    Rpc__ClientMsg msg = RPC__CLIENT_MSG__INIT;
    Rpc__CompactionRequest r = RPC__COMPACTION_REQUEST__INIT;
    r.revision = revision;
    msg.method = RPC__METHOD__METHOD_COMPACT;
    msg.req_case = RPC__CLIENT_MSG__REQ_COMPACT;
    msg.compact = &r;
    ctl_send(cl, route(cl, via), &msg, done, ud);
}

void srv_cluster_defrag(struct srv_cluster *cl, int node, srv_done_fn done, void *ud)
{
    Rpc__ClientMsg msg = RPC__CLIENT_MSG__INIT;
    Rpc__DefragmentRequest r = RPC__DEFRAGMENT_REQUEST__INIT;
    msg.method = RPC__METHOD__METHOD_DEFRAGMENT;
    msg.req_case = RPC__CLIENT_MSG__REQ_DEFRAGMENT;
    msg.defragment = &r;
    ctl_send(cl, node, &msg, done, ud);
}

void srv_cluster_alarm_disarm(struct srv_cluster *cl, int via, srv_done_fn done, void *ud)
{
    Rpc__ClientMsg msg = RPC__CLIENT_MSG__INIT;
    Rpc__AlarmRequest r = RPC__ALARM_REQUEST__INIT;
    r.action = RPC__ALARM_REQUEST__ALARM_ACTION__DEACTIVATE;
    r.memberid = 0;
    r.alarm = RPC__ALARM_TYPE__NOSPACE;
    msg.method = RPC__METHOD__METHOD_ALARM;
    msg.req_case = RPC__CLIENT_MSG__REQ_ALARM;
    msg.alarm = &r;
    ctl_send(cl, route(cl, via), &msg, done, ud);
}

void srv_cluster_hash_kv(struct srv_cluster *cl, int node, int64_t revision, srv_done_fn done,
                         void *ud)
{
    Rpc__ClientMsg msg = RPC__CLIENT_MSG__INIT;
    Rpc__HashKVRequest r = RPC__HASH_KVREQUEST__INIT;
    r.revision = revision;
    msg.method = RPC__METHOD__METHOD_HASH_KV;
    msg.req_case = RPC__CLIENT_MSG__REQ_HASH_KV;
    msg.hash_kv = &r;
    ctl_send(cl, node, &msg, done, ud);
}

void srv_cluster_snapshot_save(struct srv_cluster *cl, int node, srv_done_fn done, void *ud)
{
    Rpc__ClientMsg msg = RPC__CLIENT_MSG__INIT;
    Rpc__SnapshotRequest r = RPC__SNAPSHOT_REQUEST__INIT;
    msg.method = RPC__METHOD__METHOD_SNAPSHOT;
    msg.req_case = RPC__CLIENT_MSG__REQ_SNAPSHOT;
    msg.snapshot = &r;
    ctl_send(cl, node, &msg, done, ud);
}

int srv_cluster_copy_db(struct srv_cluster *cl, int node, uint8_t **data, size_t *len)
{
    struct srv_slot *sl = slot_get(cl, node);
    *data = NULL;
    *len = 0;
    if (!sl || !sl->m)
        return FL_ENOENT;
    struct fl_buf b;
    fl_buf_init(&b);
    srv_member_image(sl->m, &b, mvcc_size_bytes(sl->m->kv));
    *data = b.data;
    *len = b.len;
    return FL_OK;
}

/* ---- restore -------------------------------------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int srv_cluster_restore(struct srv_cluster *cl, const uint8_t *data, size_t len, const int *nodes,
                        int n_nodes, bool skip_hash_check, struct srv_status *st)
{
    struct srv_db_image img;
    enum srv_backup_err e = srv_backup_open(data, len, skip_hash_check, &img);
    st->code = 0;
    st->text = "";
    if (e != SRV_BACKUP_OK) {
        st->code = RPC_CODE_FAILED_PRECONDITION;
        st->text = srv_backup_err_text(e);
        return e == SRV_BACKUP_BAD_FORMAT ? FL_EINVAL : FL_ECORRUPT;
    }
    if (n_nodes <= 0 || n_nodes > RAFT_NODES_MAX) {
        st->code = RPC_CODE_INVALID_ARGUMENT;
        st->text = "restore needs between 1 and 16 nodes";
        return FL_EINVAL;
    }
    for (int i = 0; i < n_nodes; i++) {
        if (!slot_get(cl, nodes[i])) {
            st->code = RPC_CODE_INVALID_ARGUMENT;
            st->text = "restore names a node that does not exist";
            return FL_EINVAL;
        }
    }
    bool keep = FL_BUG(SERVER_RESTORE_KEEPS_IDS);
    uint64_t cluster_id = keep ? img.cluster_id : srv_cluster_rand(cl);
    uint64_t ids[RAFT_NODES_MAX];
    struct raft_conf_state conf;
    memset(&conf, 0, sizeof conf);
    for (int i = 0; i < n_nodes; i++) {
        ids[i] = srv_cluster_rand(cl);
        for (uint32_t k = 0; keep && k < img.members_count; k++)
            if ((int)img.members[k].node == nodes[i])
                ids[i] = img.members[k].id;
        conf.voters[conf.voters_count++] = ids[i];
    }
    if (keep) {
        /* The old membership comes back whole, stale members included. */
        conf.voters_count = 0;
        for (uint32_t k = 0; k < img.members_count && k < RAFT_NODES_MAX; k++)
            conf.voters[conf.voters_count++] = img.members[k].id;
    }
    qsort(conf.voters, conf.voters_count, sizeof conf.voters[0], cmp_u64);
    uint64_t index = img.index ? img.index : 1;
    for (int i = 0; i < n_nodes; i++) {
        struct srv_slot *sl = slot_get(cl, nodes[i]);
        srv_cluster_kill(cl, nodes[i]);
        if (sl->member_id && sl->member_id != ids[i])
            raft_safety_forget(srv_cluster_safety(cl, sl->cluster_id), sl->member_id);
        /* The machine comes back up with a fresh data dir written by the restore
         * tool before the member starts (a DOWN process has no usable disk). */
        sl->restoring = true;
        sim_proc_restart(cl->w, sl->proc);
        sl->restoring = false;
        srv_disk_write_restored(cl->w, sl->proc, ids[i], cluster_id, &img, &conf, index);
        sl->member_id = ids[i];
        sl->cluster_id = cluster_id;
        sl->removed = false;
        sl->founding = false;
        sl->started = false;
        dir_set(cl, ids[i], nodes[i]);
    }
    for (int i = 0; i < n_nodes; i++) {
        struct srv_slot *sl = slot_get(cl, nodes[i]);
        slot_start(sl);
        srv_cluster_emit(cl, nodes[i], sl->member_id, SRV_EV_RESTART, 1,
                         "restored from a backup into a new cluster");
    }
    return FL_OK;
}

/* ---- convergence ------------------------------------------------------------------ */

bool srv_cluster_converged(struct srv_cluster *cl, const char **detail)
{
    bool ok = true, first = true;
    int64_t rev0 = 0;
    uint64_t hash0 = 0;
    size_t off = 0;
    cl->detail[0] = 0;
    const struct raft_conf_state *conf = cluster_conf(cl);
    for (int i = 1; i <= cl->n_slots; i++) {
        struct srv_slot *sl = &cl->slots[i];
        if (sl->removed || !sl->started)
            continue;
        /* Only members of the cluster's configuration count (not a stale member of
         * an old cluster, nor a joiner whose add never committed). */
        if (conf && !raft_conf_is_voter(conf, sl->member_id) &&
            !raft_conf_is_learner(conf, sl->member_id))
            continue;
        if (!sl->m || !sim_proc_alive(cl->w, sl->proc)) {
            ok = false;
            off += (size_t)snprintf(cl->detail + off,
                                    sizeof cl->detail - FL_MIN(off, sizeof cl->detail),
                                    "node %d down; ", i);
            continue;
        }
        struct mvcc_hashkv h;
        int64_t rev = mvcc_current_rev(sl->m->kv);
        if (mvcc_hash_kv(sl->m->kv, 0, &h) != MVCC_OK)
            memset(&h, 0, sizeof h);
        if (off < sizeof cl->detail)
            off +=
                (size_t)snprintf(cl->detail + off, sizeof cl->detail - off,
                                 "node %d rev %" PRId64 " hash %016" PRIx64 "; ", i, rev, h.hash);
        if (first) {
            rev0 = rev;
            hash0 = h.hash;
            first = false;
        } else if (rev != rev0 || h.hash != hash0) {
            ok = false;
        }
    }
    if (detail)
        *detail = cl->detail;
    return ok && !first;
}
