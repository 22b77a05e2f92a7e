/*
 * cluster_ctl.c: the cluster helper's control calls (sent to a member as the RPC a
 * client would send, answered through a callback), restore into a new cluster
 * identity, and the end-of-run convergence check.
 */
#include "nodes/proto/codec.h"
#include "nodes/server/cluster_int.h"

#include <inttypes.h>

/* ---- per-member flags -------------------------------------------------------------- */

void srv_cluster_set_prevote(struct srv_cluster *cl, int node, bool on)
{
    struct srv_slot *sl = srv_cl_slot_get(cl, node);
    if (sl)
        sl->prevote = on ? 1 : 2;
}

bool srv_cluster_member_prevote(struct srv_cluster *cl, int node)
{
    struct srv_slot *sl = srv_cl_slot_get(cl, node);
    if (sl && sl->prevote)
        return sl->prevote == 1;
    return cl->cfg.prevote;
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
    struct srv_slot *sl = srv_cl_slot_get(c->cl, c->node);
    if (!sl || !sl->m) {
        srv_cl_ctl_fail(c->done, c->ud, RPC_ERR_STOPPED);
        srv_pb_free_owned(c->req);
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
    struct srv_slot *sl = srv_cl_slot_get(cl, node);
    if (!sl || !sl->m || !sim_proc_alive(cl->w, sl->proc)) {
        srv_cl_ctl_fail(done, ud, RPC_ERR_STOPPED);
        return;
    }
    struct fl_buf buf; /* through the wire form: the member gets its own copy */
    fl_buf_init(&buf);
    size_t n = rpc_client_msg_encode(msg, &buf);
    struct ctl_call *c = fl_calloc(1, sizeof *c);
    c->cl = cl;
    c->node = node;
    c->req = srv_req_decode(&cl->pb_pool, n, buf.data);
    c->done = done;
    c->ud = ud;
    fl_buf_close(&buf);
    FL_ASSERT(c->req);
    if (!sim_timer_start(cl->w, sl->proc, 0, ctl_run, c)) {
        srv_pb_free_owned(c->req);
        free(c);
        srv_cl_ctl_fail(done, ud, RPC_ERR_STOPPED);
        return;
    }
    int k = 0;
    while (k < cl->n_ctl && cl->ctl[k])
        k++;
    if (k == cl->n_ctl) {
        FL_GROW(cl->ctl, cl->cap_ctl, (size_t)cl->n_ctl + 1, 16);
        cl->n_ctl++;
    }
    cl->ctl[k] = c;
}

static void member_add(struct srv_cluster *cl, int via, bool learner, bool start, srv_done_fn done,
                       void *ud)
{
    Rpc__ClientMsg msg = RPC__CLIENT_MSG__INIT;
    Rpc__MemberAddRequest r = RPC__MEMBER_ADD_REQUEST__INIT;
    r.islearner = learner;
    r.no_start = !start;
    msg.method = RPC__METHOD__METHOD_MEMBER_ADD;
    msg.req_case = RPC__CLIENT_MSG__REQ_MEMBER_ADD;
    msg.member_add = &r;
    ctl_send(cl, route(cl, via), &msg, done, ud);
}

void srv_cluster_member_add(struct srv_cluster *cl, int via, bool learner, srv_done_fn done,
                            void *ud)
{
    member_add(cl, via, learner, true, done, ud);
}

void srv_cluster_member_add_unstarted(struct srv_cluster *cl, int via, bool learner,
                                      srv_done_fn done, void *ud)
{
    member_add(cl, via, learner, false, done, ud);
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
    struct rpc_ctl_req q;
    rpc_ctl_req_init(&q, RPC_CTL_MOVE_LEADER, srv_cluster_member_id(cl, target));
    ctl_send(cl, route(cl, via), &q.msg, done, ud);
}

void srv_cluster_compact(struct srv_cluster *cl, int via, int64_t revision, srv_done_fn done,
                         void *ud)
{
    struct rpc_ctl_req q;
    rpc_ctl_req_init(&q, RPC_CTL_COMPACT, (uint64_t)revision);
    ctl_send(cl, route(cl, via), &q.msg, done, ud);
}

void srv_cluster_defrag(struct srv_cluster *cl, int node, srv_done_fn done, void *ud)
{
    struct rpc_ctl_req q;
    rpc_ctl_req_init(&q, RPC_CTL_DEFRAG, 0);
    ctl_send(cl, node, &q.msg, done, ud);
}

void srv_cluster_alarm_disarm(struct srv_cluster *cl, int via, srv_done_fn done, void *ud)
{
    struct rpc_ctl_req q;
    rpc_ctl_req_init(&q, RPC_CTL_ALARM_DISARM, 0);
    ctl_send(cl, route(cl, via), &q.msg, done, ud);
}

void srv_cluster_hash_kv(struct srv_cluster *cl, int node, int64_t revision, srv_done_fn done,
                         void *ud)
{
    struct rpc_ctl_req q;
    rpc_ctl_req_init(&q, RPC_CTL_HASH_KV, (uint64_t)revision);
    ctl_send(cl, node, &q.msg, done, ud);
}

void srv_cluster_snapshot_save(struct srv_cluster *cl, int node, srv_done_fn done, void *ud)
{
    struct rpc_ctl_req q;
    rpc_ctl_req_init(&q, RPC_CTL_SNAPSHOT_SAVE, 0);
    ctl_send(cl, node, &q.msg, done, ud);
}

int srv_cluster_copy_db(struct srv_cluster *cl, int node, uint8_t **data, size_t *len)
{
    struct srv_slot *sl = srv_cl_slot_get(cl, node);
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
        srv_backup_err_format(e, data, len, cl->restore_err, sizeof cl->restore_err);
        st->text = cl->restore_err;
        return e == SRV_BACKUP_BAD_FORMAT ? FL_EINVAL : FL_ECORRUPT;
    }
    if (cl->n_safety >= SAFETY_MAX - 1) {
        st->code = RPC_CODE_RESOURCE_EXHAUSTED;
        st->text = "too many restored clusters in one run";
        return FL_EFULL;
    }
    if (n_nodes <= 0 || n_nodes > RAFT_NODES_MAX) {
        st->code = RPC_CODE_INVALID_ARGUMENT;
        st->text = "restore needs between 1 and 16 nodes";
        return FL_EINVAL;
    }
    for (int i = 0; i < n_nodes; i++) {
        if (!srv_cl_slot_get(cl, nodes[i])) {
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
        struct srv_slot *sl = srv_cl_slot_get(cl, nodes[i]);
        srv_cluster_kill(cl, nodes[i]);
        if (sl->member_id && sl->member_id != ids[i]) {
            raft_safety_forget(srv_cluster_safety(cl, sl->cluster_id), sl->member_id);
            kvhash_forget(srv_cluster_kvhash(cl, sl->cluster_id), sl->member_id);
        }
        /* The machine comes back up with a fresh data dir written by the restore
         * tool before the member starts (a DOWN process has no usable disk). */
        sl->restoring = true;
        sim_proc_restart(cl->w, sl->proc);
        sl->restoring = false;
        srv_disk_write_restored(sl->env, ids[i], cluster_id, &img, &conf, index);
        sl->member_id = ids[i];
        sl->cluster_id = cluster_id;
        sl->removed = false;
        sl->founding = false;
        sl->started = false;
        srv_cl_dir_set(cl, ids[i], nodes[i]);
    }
    for (int i = 0; i < n_nodes; i++) {
        struct srv_slot *sl = srv_cl_slot_get(cl, nodes[i]);
        srv_cl_slot_start(sl);
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
    const struct raft_conf_state *conf = srv_cl_conf(cl);
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
