/*
 * run_target_live_member.c: membership on --target live: member add / remove / promote as the RPC a
 * client sends, the new member's slot and process once an add answered, start(n), and restore (new
 * data directories, new IDs).
 */
#include "harness/run/run_target_live.h"

/* Starts the process of a member added (at once, or by start(n)): the directory says
 * it was started before it runs, so that the leader counts it (strict reconfiguration
 * check) and dials it. */
static void member_started(struct run_live *L, int slot)
{
    struct lv_member *m = &L->c.m[slot - 1];
    struct fl_buf err;
    fl_buf_init(&err);
    m->started = true;
    L->dirty = true;
    L->b[slot].awaits_start = false;
    if (lv_member_dir_write(&L->c, &err) != FL_OK)
        fl_log(FL_LOG_ERROR, "target live: %s", fl_buf_cstr(&err));
    fl_buf_reset(&err);
    L->b[slot].started_s = run_target_wall_s();
    L->b[slot].skew_pending = false;
    if (lv_proc_start(&m->proc, &err))
        fl_log(FL_LOG_ERROR, "target live: start of member %d: %s", slot, fl_buf_cstr(&err));
    fl_buf_close(&err);
}

/* A member added to the cluster (as member id at slot node) gets its slot: ports,
 * proxies, data directory, a bridge the clients can dial, and, when start, its process.
 * Returns the slot, or -1 (err says why; a slot half set up is closed with the others:
 * L->c.n counts it). */
static int member_setup(struct run_live *L, uint64_t id, int node, bool start, struct fl_buf *err)
{
    int slot = -1;
    if (!id || node != L->n + 1 || L->c.n != L->n)
        fl_buf_printf(err,
                      "target live: member add answered slot %d (member %016llx), the next "
                      "slot is %d",
                      node, (unsigned long long)id, L->n + 1);
    else
        slot = lv_member_add(&L->c, &L->wd, L->self, L->rw->seed, L->extra, id, err);
    if (slot <= 0)
        return -1;
    L->n = L->c.n;
    lvt_bridge_add(L, slot);
    fl_buf_init(&L->st[slot].in);
    L->b[slot].awaits_start = !start;
    if (start)
        member_started(L, slot);
    else if (lv_member_dir_write(&L->c, err) != FL_OK)
        fl_log(FL_LOG_ERROR, "target live: %s", fl_buf_cstr(err));
    for (int i = 0; i < L->n_lost; i++) /* an add answered for that slot takes it */
        if (L->lost[i].slot == slot)
            L->lost[i--] = L->lost[--L->n_lost];
    return slot;
}

/* Member add answered: the new member gets its slot (ports, proxies, data directory,
 * a bridge the clients can dial) and, unless added with start = false, its process,
 * as an operator starts `etcd --initial-cluster-state existing` once member add
 * returned. Member remove answered: the removed member's process is stopped, as the
 * simulator stops it once its removal applied. Both in the world's turn (a kill runs
 * the loop until the process exited: not from inside a read callback), right before
 * the answer enters the world. */
static void member_fire(struct sim_world *w, void *ctx)
{
    struct lctl *c = ctx;
    struct run_live *L = c->L;
    if (c->code || L->closing) {
        lvt_ctl_fire(w, c);
        return;
    }
    if (!strcmp(c->kind, "member_remove")) {
        if (c->node >= 1 && c->node <= L->n && !L->b[c->node].removed) {
            L->b[c->node].removed = true;
            L->b[c->node].awaits_start = false;
            lvt_node_fault(L->rw, c->node, "kill");
            lvt_feed_note(L, c->node, "forget"); /* as the simulator's cluster does */
        }
        lvt_ctl_fire(w, c);
        return;
    }
    struct fl_buf err;
    fl_buf_init(&err);
    int slot = member_setup(L, c->answered_id, c->answered_node, c->start, &err);
    if (slot > 0) {
        c->node = slot;
    } else {
        c->code = RPC_CODE_INTERNAL;
        snprintf(c->text, sizeof c->text, "%s", fl_buf_cstr(&err));
    }
    fl_buf_close(&err);
    lvt_ctl_fire(w, c);
}

void lvt_member_answered(struct run_live *L, struct lctl *c, const Rpc__ServerMsg *m)
{
    if (m->resp_case == RPC__SERVER_MSG__RESP_MEMBER_ADD) {
        const Rpc__Member *mem = m->member_add ? m->member_add->member : NULL;
        c->answered_id = mem ? mem->id : 0;
        c->answered_node = mem ? (int)mem->node : 0;
    }
    lvt_ctl_finish_with(c, 0, "", member_fire);
}

/* ---- member adds whose answer was lost ------------------------------------------- */

/* An add whose answer never came (timed out, or its connection ended) may commit all
 * the same, as etcd's may after "request timed out": clientv3 users learn it from the
 * member list. So does the harness: until that slot's member shows up in MemberList
 * (asked every POLL_MS of the leader), when it gets its slot and process as if the add
 * had answered; the scenario's call has failed. */
void lvt_member_lost(struct run_live *L, const struct lctl *c)
{
    for (int i = 0; i < L->n_lost; i++)
        if (L->lost[i].slot == c->asked_node)
            return;
    if (L->n_lost < (int)FL_ARRAY_LEN(L->lost))
        L->lost[L->n_lost++] = (struct llost){c->asked_node, c->start};
}

void lvt_members_ask(struct run_live *L)
{
    int at = lvt_polled_leader(L);
    if (!L->n_lost || !at || L->closing || !L->st[at].connected)
        return;
    Rpc__ClientMsg q = RPC__CLIENT_MSG__INIT;
    Rpc__MemberListRequest r = RPC__MEMBER_LIST_REQUEST__INIT;
    q.call_id = L->list_call_id = CTL_CALL_BIT | ++L->ctl_seq;
    q.method = RPC__METHOD__METHOD_MEMBER_LIST;
    q.req_case = RPC__CLIENT_MSG__REQ_MEMBER_LIST;
    q.member_list = &r;
    lvt_msg_write((uv_stream_t *)&L->st[at].tcp, &q);
}

struct ladopt {
    struct run_live *L;
    uint64_t id;
    int slot;
    bool start;
};

static void adopt_fire(struct sim_world *w, void *ctx)
{
    (void)w;
    struct ladopt *a = ctx;
    struct fl_buf err;
    fl_buf_init(&err);
    int slot = a->L->closing ? 0 : member_setup(a->L, a->id, a->slot, a->start, &err);
    if (slot < 0)
        fl_log(FL_LOG_ERROR, "target live: member %016llx (slot %d, its add's answer lost): %s",
               (unsigned long long)a->id, a->slot, fl_buf_cstr(&err));
    else if (slot > 0)
        run_member_joined(a->L->rw, slot); /* the clients learn it, as from the list */
    fl_buf_close(&err);
    free(a);
}

static bool member_known(const struct run_live *L, uint64_t id)
{
    for (int i = 0; i < L->c.n; i++)
        if (L->c.m[i].member_id == id)
            return true;
    return false;
}

/* The member of the list that lost add k put in the configuration: one the harness
 * does not know, listed at its slot; or, when the member answering is not the one that
 * proposed the add (a new leader: it never learned the slot, `node` is none), the only
 * unknown member listed without a slot. NULL when none is. */
static const Rpc__Member *lost_member(const struct run_live *L, int k,
                                      const Rpc__MemberListResponse *r)
{
    const Rpc__Member *unslotted = NULL;
    int n_unslotted = 0;
    for (size_t i = 0; i < r->n_members; i++) {
        const Rpc__Member *mem = r->members[i];
        int node = (int)mem->node;
        if (member_known(L, mem->id))
            continue;
        if (node == L->lost[k].slot)
            return mem;
        if (node < 1 || node > LV_MEMBERS_MAX) {
            unslotted = mem;
            n_unslotted++;
        }
    }
    return n_unslotted == 1 ? unslotted : NULL;
}

/* MemberList answered: a lost add's member at the next slot is set up (in the world's
 * turn: starting a process is not for a read callback). */
void lvt_members_listed(struct run_live *L, const Rpc__ServerMsg *m)
{
    L->list_call_id = 0;
    const Rpc__MemberListResponse *r = m->member_list;
    for (int k = 0; r && k < L->n_lost; k++) {
        const Rpc__Member *mem = L->lost[k].slot == L->n + 1 ? lost_member(L, k, r) : NULL;
        if (!mem)
            continue;
        struct ladopt *a = fl_calloc(1, sizeof *a);
        *a = (struct ladopt){L, mem->id, L->lost[k].slot, L->lost[k].start};
        L->lost[k] = L->lost[--L->n_lost];
        sim_schedule_at(L->rw->w, run_pacer_arrival(&L->pace, L->rw->w), adopt_fire, a);
        return; /* one a time: the next is at the slot after it */
    }
}

bool lvt_removed(struct run_world *rw, int node)
{
    struct run_live *L = rw->lv;
    return L && node >= 1 && node <= L->n && L->b[node].removed;
}

bool lvt_awaits_start(struct run_world *rw, int node)
{
    struct run_live *L = rw->lv;
    return L && node >= 1 && node <= L->n && L->b[node].awaits_start;
}

int lvt_member_start(struct run_world *rw, int node)
{
    if (!lvt_awaits_start(rw, node))
        return FL_EINVAL;
    member_started(rw->lv, node);
    return FL_OK;
}

/* Membership calls (run_fault.c: member_add / member_add_unstarted with arg the learner
 * flag; member_remove / member_promote with arg the member's slot), to the leader as
 * the simulator's cluster_ctl.c sends them. A member add names its slot: the next one
 * (one more per add in flight), which every member learns from the directory. */
void lvt_member_ctl(struct run_live *L, struct lctl *c, const char *kind, int64_t arg)
{
    Rpc__ClientMsg q = RPC__CLIENT_MSG__INIT;
    Rpc__MemberAddRequest add = RPC__MEMBER_ADD_REQUEST__INIT;
    Rpc__MemberRemoveRequest rm = RPC__MEMBER_REMOVE_REQUEST__INIT;
    Rpc__MemberPromoteRequest pr = RPC__MEMBER_PROMOTE_REQUEST__INIT;
    q.call_id = c->call_id;
    if (!strcmp(kind, "member_add") || !strcmp(kind, "member_add_unstarted")) {
        if (L->n + L->adds >= FL_MIN(LV_MEMBERS_MAX, SRV_PROC_NODES_MAX)) {
            lvt_ctl_finish(c, RPC_CODE_RESOURCE_EXHAUSTED,
                           "target live: no slot left for a new member process");
            return;
        }
        c->start = !strcmp(kind, "member_add");
        add.islearner = arg != 0;
        add.node = (uint32_t)(L->n + 1 + L->adds);
        add.no_start = !c->start;
        c->asked_node = (int)add.node;
        q.method = RPC__METHOD__METHOD_MEMBER_ADD;
        q.req_case = RPC__CLIENT_MSG__REQ_MEMBER_ADD;
        q.member_add = &add;
        c->add = true;
        L->adds++;
    } else if (!strcmp(kind, "member_remove") || !strcmp(kind, "member_promote")) {
        if (arg < 1 || arg > L->n) {
            lvt_ctl_finish(c, RPC_CODE_NOT_FOUND, rpc_err_text(RPC_ERR_MEMBER_NOT_FOUND));
            return;
        }
        c->node = (int)arg;
        uint64_t id = L->c.m[arg - 1].member_id;
        if (kind[7] == 'r') {
            rm.id = id;
            q.method = RPC__METHOD__METHOD_MEMBER_REMOVE;
            q.req_case = RPC__CLIENT_MSG__REQ_MEMBER_REMOVE;
            q.member_remove = &rm;
        } else {
            pr.id = id;
            q.method = RPC__METHOD__METHOD_MEMBER_PROMOTE;
            q.req_case = RPC__CLIENT_MSG__REQ_MEMBER_PROMOTE;
            q.member_promote = &pr;
        }
    } else {
        lvt_ctl_finish(c, RPC_CODE_UNIMPLEMENTED, "not available on --target live");
        return;
    }
    lvt_ctl_send(L, c, &q);
}

/* restore's rewrite of one member's data directory (its process killed first): the
 * backup restored as member ids[i] of cluster_id, whose members are ids. */
static int restore_one(struct run_live *L, int slot, const uint8_t *data, size_t len,
                       bool skip_hash_check, const uint64_t *ids, int i, int n_ids,
                       uint64_t cluster_id, char *err, size_t err_len)
{
    struct lv_member *m = &L->c.m[slot - 1];
    lvt_node_fault(L->rw, slot, "kill");
    const char *e = NULL;
    struct fl_env *env = env_uv_new(&L->loop, slot, m->data_dir, L->rw->seed, &e);
    if (!env) {
        snprintf(err, err_len, "restore: %s: %s", m->data_dir, e);
        return FL_EIO;
    }
    int rc = srv_proc_restore_dir(env, data, len, skip_hash_check, ids[i], cluster_id, ids, n_ids,
                                  err, err_len);
    while (env_uv_fsyncs(env))
        uv_run(&L->loop, UV_RUN_ONCE);
    env_uv_free(env);
    uv_run(&L->loop, UV_RUN_NOWAIT);
    m->events_off = 0; /* the event file went with the old directory */
    L->st[slot].cluster_id = 0;
    m->member_id = ids[i];
    L->b[slot].ev_term = 0; /* a new cluster: its term starts over */
    m->started = true;
    L->b[slot].removed = false;
    return rc;
}

/* restore(backup, { nodes }): etcd's disaster recovery, as the etcd target does it with
 * `etcdutl snapshot restore` into fresh data directories: every member named is killed,
 * its data directory replaced by the backup restored as a new member of a new cluster
 * (new IDs; backup.h's checks first, with etcd's error texts), the directory updated,
 * and each started again on it. IDs come from the seed and the restore's ordinal. */
int lvt_restore(struct run_world *rw, const uint8_t *data, size_t len, const int *nodes,
                int n_nodes, bool skip_hash_check, char *err, size_t err_len)
{
    struct run_live *L = rw->lv;
    int rc = srv_proc_restore_check(data, len, skip_hash_check, err, err_len);
    if (rc)
        return rc;
    if (n_nodes <= 0 || n_nodes > SRV_PROC_NODES_MAX) {
        snprintf(err, err_len, "restore needs between 1 and %d nodes", SRV_PROC_NODES_MAX);
        return FL_EINVAL;
    }
    for (int i = 0; i < n_nodes; i++)
        if (nodes[i] < 1 || nodes[i] > L->n || L->b[nodes[i]].awaits_start) {
            snprintf(err, err_len, "restore names a node that does not exist");
            return FL_EINVAL;
        }
    uint64_t base =
        rw->seed ^ ((uint64_t)++L->restores << 48) ^ 0x726573746f7265ULL; /* "restore" */
    uint64_t ids[SRV_PROC_NODES_MAX], cluster_id = srv_proc_cluster_id(base);
    for (int i = 0; i < n_nodes; i++)
        ids[i] = srv_proc_member_id(base, nodes[i]);
    for (int i = 0; i < n_nodes && !rc; i++)
        rc = restore_one(L, nodes[i], data, len, skip_hash_check, ids, i, n_nodes, cluster_id, err,
                         err_len);
    struct fl_buf eb;
    fl_buf_init(&eb);
    if (!rc && lv_member_dir_write(&L->c, &eb) != FL_OK) {
        snprintf(err, err_len, "restore: %s", fl_buf_cstr(&eb));
        rc = FL_EIO;
    }
    fl_buf_close(&eb);
    if (rc)
        return rc;
    for (int i = 0; i < n_nodes; i++) {
        lvt_node_fault(rw, nodes[i], "restart");
        struct srv_event ev;
        memset(&ev, 0, sizeof ev);
        ev.at_ns = sim_now_ns(rw->w);
        ev.node = nodes[i];
        ev.member_id = ids[i];
        ev.kind = SRV_EV_RESTART;
        ev.term = 1;
        ev.detail = "restored from a backup into a new cluster";
        run_events_note(rw, &ev);
    }
    return FL_OK;
}
