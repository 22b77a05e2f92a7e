/*
 * rpc.c: the client side of a member: connections on SRV_CLIENT_PORT carrying
 * rpc.ClientMsg / rpc.ServerMsg frames (nodes/proto/rpc.proto), and the handlers of
 * the KV, Watch, Lease, Cluster and Maintenance calls. The same handlers serve the
 * cluster helper's control calls, whose answers go to a callback instead of a socket
 * (struct srv_reply).
 *
 * Reads: serializable ranges are served from the local store; linearizable ones go
 * through ReadIndex and are served once the member has applied up to the read index
 * (a member without a leader keeps retrying and fails with "request timed out", it
 * never serves stale data) — unless FL_BUG(MVCC_STALE_READ). Writes are proposed as
 * raftpb.InternalRequest entries and answered when applied (apply.c). Errors carry
 * the exact etcd text and gRPC code (nodes/proto/errors.h).
 */
#include "nodes/server/convert.h"
#include "nodes/server/srv_int.h"

#include <inttypes.h>

#define SNAPSHOT_CHUNK_BYTES (1u << 20)
#define READ_RETRY_TICKS     5 /* etcd resends ReadIndex every 500 ms */

/* ---- replies ------------------------------------------------------------------- */

void srv_header_fill(struct srv_member *m, Rpc__ResponseHeader *h)
{
    h->cluster_id = m->cluster_id;
    h->member_id = m->id;
    h->revision = mvcc_current_rev(m->kv);
    h->raft_term = raft_term(m->raft);
}

static void reply_to_result(const Rpc__ServerMsg *msg, struct srv_result *res)
{
    memset(res, 0, sizeof *res);
    if (msg->header)
        res->revision = msg->header->revision;
    switch (msg->resp_case) {
    case RPC__SERVER_MSG__RESP_MEMBER_ADD:
        if (msg->member_add->member) {
            res->member_id = msg->member_add->member->id;
            res->node = (int)msg->member_add->member->node;
        }
        break;
    case RPC__SERVER_MSG__RESP_HASH_KV:
        res->hash = msg->hash_kv->hash;
        res->revision = msg->hash_kv->hash_revision;
        break;
    case RPC__SERVER_MSG__RESP_SNAPSHOT:
        res->data = msg->snapshot->blob.data;
        res->len = msg->snapshot->blob.len;
        break;
    default:
        break;
    }
}

void srv_reply_send(struct srv_member *m, const struct srv_reply *reply, Rpc__ServerMsg *msg)
{
    Rpc__ResponseHeader hdr = RPC__RESPONSE_HEADER__INIT;
    if (!msg->header) {
        srv_header_fill(m, &hdr);
        msg->header = &hdr;
    }
    msg->call_id = reply->call_id;
    if (reply->done) {
        struct srv_status st = {0, ""};
        if (msg->error) {
            st.code = msg->error->code;
            st.text = msg->error->message;
        }
        struct srv_result res;
        reply_to_result(msg, &res);
        reply->done(reply->ud, &st, &res);
    } else if (reply->sock) {
        size_t n = rpc__server_msg__get_packed_size(msg);
        fl_buf_reset(&m->scratch);
        fl_buf_reserve(&m->scratch, n + 1);
        rpc__server_msg__pack(msg, m->scratch.data);
        net_send(m->w, reply->sock, m->scratch.data, n);
    }
    if (msg->header == &hdr)
        msg->header = NULL;
}

static void reply_status(struct srv_member *m, const struct srv_reply *reply, int method, int code,
                         const char *text, bool stream_end)
{
    Rpc__ServerMsg msg = RPC__SERVER_MSG__INIT;
    Rpc__Error e = RPC__ERROR__INIT;
    e.code = code;
    e.message = (char *)text;
    msg.method = method;
    msg.error = &e;
    msg.stream_end = stream_end;
    srv_reply_send(m, reply, &msg);
}

void srv_reply_error(struct srv_member *m, const struct srv_reply *reply, int method,
                     enum rpc_err_id err)
{
    reply_status(m, reply, method, rpc_err_code(err), rpc_err_text(err), false);
}

void srv_reply_mvcc_error(struct srv_member *m, const struct srv_reply *reply, int method,
                          enum mvcc_err err)
{
    reply_status(m, reply, method, (int)mvcc_err_code(err), mvcc_err_text(err), false);
}

/* ---- waiters ------------------------------------------------------------------- */

struct srv_waiter *srv_waiter_add(struct srv_member *m, enum srv_wait_kind kind,
                                  const struct srv_reply *reply, Rpc__ClientMsg *req)
{
    if (m->n_waiters == m->cap_waiters) {
        m->cap_waiters = m->cap_waiters ? m->cap_waiters * 2 : 64;
        m->waiters = fl_realloc(m->waiters, m->cap_waiters * sizeof *m->waiters);
    }
    struct srv_waiter *wt = &m->waiters[m->n_waiters++];
    memset(wt, 0, sizeof *wt);
    wt->id = m->next_req_id++;
    wt->kind = kind;
    wt->reply = *reply;
    wt->req = req;
    wt->deadline_ns = srv_member_now(m) + srv_member_request_timeout_ns(m);
    return wt;
}

/* Waiters are kept in id order (ids only grow), so lookups are binary searches. */
struct srv_waiter *srv_waiter_find(struct srv_member *m, uint64_t id)
{
    size_t lo = 0, hi = m->n_waiters;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->waiters[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < m->n_waiters && m->waiters[lo].id == id && !m->waiters[lo].dead)
        return &m->waiters[lo];
    return NULL;
}

void srv_waiter_done(struct srv_member *m, struct srv_waiter *wt)
{
    (void)m;
    wt->dead = true;
    if (wt->req) {
        rpc__client_msg__free_unpacked(wt->req, NULL);
        wt->req = NULL;
    }
}

void srv_waiters_sweep(struct srv_member *m)
{
    size_t k = 0;
    for (size_t i = 0; i < m->n_waiters; i++)
        if (!m->waiters[i].dead)
            m->waiters[k++] = m->waiters[i];
    m->n_waiters = k;
}

/* ---- proposals ----------------------------------------------------------------- */

int srv_propose(struct srv_member *m, Raftpb__InternalRequest *ir)
{
    ir->origin = m->id;
    size_t n = raftpb__internal_request__get_packed_size(ir);
    uint8_t *buf = fl_malloc(n + 2);
    buf[0] = SRV_ENTRY_INTERNAL;
    raftpb__internal_request__pack(ir, buf + 1);
    int err = raft_propose(m->raft, buf, n + 1, NULL);
    free(buf);
    return err;
}

/* A client request goes into the log as [SRV_ENTRY_CLIENT][u64 id][u64 origin] and
 * the rpc.ClientMsg bytes: no second protobuf layer to build here and to peel off on
 * every member at apply time. */
static int propose_client(struct srv_member *m, struct srv_waiter *wt)
{
    size_t n = rpc__client_msg__get_packed_size(wt->req);
    uint8_t *buf = fl_malloc(n + SRV_ENTRY_CLIENT_HDR);
    buf[0] = SRV_ENTRY_CLIENT;
    for (int i = 0; i < 8; i++) {
        buf[1 + i] = (uint8_t)(wt->id >> (8 * i));
        buf[9 + i] = (uint8_t)(m->id >> (8 * i));
    }
    rpc__client_msg__pack(wt->req, buf + SRV_ENTRY_CLIENT_HDR);
    int err = raft_propose(m->raft, buf, n + SRV_ENTRY_CLIENT_HDR, NULL);
    free(buf);
    return err;
}

/* etcd's maxGapBetweenApplyAndCommitIndex: a member too far behind in applying
 * refuses new proposals. */
#define SRV_MAX_APPLY_GAP 5000

static void handle_write(struct srv_member *m, const struct srv_reply *reply, Rpc__ClientMsg *req)
{
    const struct srv_config *c = srv_member_config(m);
    if (raft_commit_index(m->raft) > m->applied + SRV_MAX_APPLY_GAP) {
        srv_reply_error(m, reply, req->method, RPC_ERR_TOO_MANY_REQUESTS);
        goto out;
    }
    bool costs = req->req_case == RPC__CLIENT_MSG__REQ_PUT ||
                 req->req_case == RPC__CLIENT_MSG__REQ_LEASE_GRANT ||
                 (req->req_case == RPC__CLIENT_MSG__REQ_TXN && srv_txn_has_writes(req->txn));
    if (costs && srv_alarm_active(m, RPC__ALARM_TYPE__NOSPACE)) {
        srv_reply_error(m, reply, req->method, RPC_ERR_NO_SPACE);
        goto out;
    }
    if (costs && c->quota_backend_bytes > 0) {
        size_t kl = 0, vl = 0;
        if (req->req_case == RPC__CLIENT_MSG__REQ_PUT) {
            kl = req->put->key.len;
            vl = req->put->value.len;
        }
        int64_t cost = mvcc_put_cost_bytes(m->kv, kl, vl);
        if (mvcc_size_bytes(m->kv) + cost > c->quota_backend_bytes) {
            /* etcd: the gRPC quota check proposes the NOSPACE alarm and refuses. */
            Raftpb__InternalRequest ir = RAFTPB__INTERNAL_REQUEST__INIT;
            ir.id = 0;
            ir.kind = RAFTPB__INTERNAL_KIND__INTERNAL_ALARM;
            ir.alarm_member = m->id;
            ir.alarm_type = RPC__ALARM_TYPE__NOSPACE;
            ir.alarm_activate = true;
            srv_propose(m, &ir);
            srv_reply_error(m, reply, req->method, RPC_ERR_NO_SPACE);
            goto out;
        }
    }
    if (req->req_case == RPC__CLIENT_MSG__REQ_LEASE_GRANT && req->lease_grant->id == 0) {
        /* The proposer picks the ID so every member grants the same lease. */
        req->lease_grant->id =
            (int64_t)(sim_rng_u64(sim_proc_rng(m->w, m->proc)) >> 1 | UINT64_C(1));
    }
    struct srv_waiter *wt = srv_waiter_add(m, SRV_WAIT_PROPOSAL, reply, req);
    int err = propose_client(m, wt);
    if (err == FL_ENOENT || err == FL_EBUSY)
        wt->kind = SRV_WAIT_LEADER; /* retried on every tick until the timeout */
    srv_member_process(m);
    return;
out:
    rpc__client_msg__free_unpacked(req, NULL);
}

/* ---- reads --------------------------------------------------------------------- */

void srv_rpc_serve_read(struct srv_member *m, const struct srv_reply *reply,
                        const Rpc__ClientMsg *req)
{
    struct mvcc_range_req rr;
    struct mvcc_range_result res;
    srv_range_from_pb(req->range, &rr);
    enum mvcc_err err = mvcc_range(m->kv, &rr, &res);
    if (err != MVCC_OK) {
        srv_reply_mvcc_error(m, reply, req->method, err);
        return;
    }
    struct srv_arena a = {0};
    Rpc__ServerMsg msg = RPC__SERVER_MSG__INIT;
    Rpc__ResponseHeader hdr = RPC__RESPONSE_HEADER__INIT;
    srv_header_fill(m, &hdr);
    hdr.revision = res.header_rev;
    msg.header = &hdr;
    msg.method = req->method;
    msg.resp_case = RPC__SERVER_MSG__RESP_RANGE;
    msg.range = srv_range_resp_pb(&a, &res);
    srv_reply_send(m, reply, &msg);
    srv_arena_free(&a);
    mvcc_range_result_free(&res);
}

static void handle_range(struct srv_member *m, const struct srv_reply *reply, Rpc__ClientMsg *req)
{
    if (req->range->serializable || FL_BUG(MVCC_STALE_READ)) {
        srv_rpc_serve_read(m, reply, req);
        rpc__client_msg__free_unpacked(req, NULL);
        return;
    }
    struct srv_waiter *wt = srv_waiter_add(m, SRV_WAIT_READ, reply, req);
    wt->read_index = 0;
    if (raft_read_index(m->raft, wt->id) != FL_OK)
        wt->read_index = UINT64_MAX; /* not issued: retried on the next tick */
    srv_member_process(m);
}

/* ---- cluster API --------------------------------------------------------------- */

static void started_members(struct srv_member *m, uint64_t *out, size_t *n)
{
    const struct raft_conf_state *c = raft_conf(m->raft);
    *n = 0;
    out[(*n)++] = m->id;
    for (uint32_t i = 0; i < c->voters_count; i++)
        if (c->voters[i] != m->id && srv_peer_active(m, c->voters[i]))
            out[(*n)++] = c->voters[i];
    for (uint32_t i = 0; i < c->learners_count; i++)
        if (c->learners[i] != m->id && srv_peer_active(m, c->learners[i]))
            out[(*n)++] = c->learners[i];
}

static void member_list_reply(struct srv_member *m, const struct srv_reply *reply, int method)
{
    const struct raft_conf_state *c = raft_conf(m->raft);
    size_t n = c->voters_count + c->learners_count;
    Rpc__Member *mem = fl_calloc(n + 1, sizeof *mem);
    Rpc__Member **ptr = fl_calloc(n + 1, sizeof *ptr);
    for (size_t i = 0; i < n; i++) {
        bool learner = i >= c->voters_count;
        uint64_t id = learner ? c->learners[i - c->voters_count] : c->voters[i];
        rpc__member__init(&mem[i]);
        mem[i].id = id;
        mem[i].islearner = learner;
        mem[i].node = (uint32_t)FL_MAX(0, srv_cluster_dir_node(m->cl, id));
        ptr[i] = &mem[i];
    }
    Rpc__MemberListResponse r = RPC__MEMBER_LIST_RESPONSE__INIT;
    r.n_members = n;
    r.members = ptr;
    Rpc__ServerMsg msg = RPC__SERVER_MSG__INIT;
    msg.method = method;
    msg.resp_case = RPC__SERVER_MSG__RESP_MEMBER_LIST;
    msg.member_list = &r;
    srv_reply_send(m, reply, &msg);
    free(mem);
    free(ptr);
}

/* Proposes a conf change; the waiter is answered when it applies (apply.c). */
static void propose_conf(struct srv_member *m, const struct srv_reply *reply, Rpc__ClientMsg *req,
                         struct raft_conf_change *cc, uint32_t node)
{
    struct srv_waiter *wt = srv_waiter_add(m, SRV_WAIT_PROPOSAL, reply, req);
    Raftpb__MemberInfo mi = RAFTPB__MEMBER_INFO__INIT;
    mi.id = cc->node_id;
    mi.node = node;
    mi.is_learner = cc->type == RAFT_CC_ADD_LEARNER;
    mi.req_id = wt->id;
    mi.origin = m->id;
    size_t n = raftpb__member_info__get_packed_size(&mi);
    uint8_t *buf = fl_malloc(n + 1);
    raftpb__member_info__pack(&mi, buf);
    cc->context = buf;
    cc->context_len = n;
    int err = raft_propose_conf_change(m->raft, cc, NULL);
    free(buf);
    if (err == FL_OK && (cc->type == RAFT_CC_ADD_VOTER || cc->type == RAFT_CC_ADD_LEARNER)) {
        /* The configuration is in force now (append time): start the new member so
         * the leader's first probe finds it listening. */
        srv_cluster_start_joiner(m->cl, (int)node, cc->node_id, m->cluster_id);
    }
    if (err == FL_EEXIST) {
        srv_reply_error(m, reply, req->method, RPC_ERR_MEMBER_EXIST);
        srv_waiter_done(m, wt);
    } else if (err == FL_ENOENT && req->req_case != RPC__CLIENT_MSG__REQ_MEMBER_PROMOTE) {
        srv_reply_error(m, reply, req->method, RPC_ERR_MEMBER_NOT_FOUND);
        srv_waiter_done(m, wt);
    } else if (err == FL_EFULL) {
        srv_reply_error(m, reply, req->method, RPC_ERR_TOO_MANY_LEARNERS);
        srv_waiter_done(m, wt);
    } else if (err != FL_OK) {
        /* etcd-raft turns a second pending conf change into an empty entry: the
         * request is never applied and times out. The waiter stays until then. */
        fl_log(FL_LOG_INFO, "member %d: conf change refused (%s)", m->node, fl_strerror(err));
    }
    srv_member_process(m);
}

static void handle_member(struct srv_member *m, const struct srv_reply *reply, Rpc__ClientMsg *req)
{
    if (raft_role(m->raft) != RAFT_LEADER) {
        srv_reply_error(m, reply, req->method,
                        raft_leader(m->raft) ? RPC_ERR_NOT_LEADER : RPC_ERR_NO_LEADER);
        goto free_req;
    }
    const struct raft_conf_state *conf = raft_conf(m->raft);
    const struct srv_config *c = srv_member_config(m);
    uint64_t started[RAFT_NODES_MAX + 1];
    size_t n_started = 0;
    started_members(m, started, &n_started);
    struct raft_conf_change cc;
    memset(&cc, 0, sizeof cc);
    uint32_t node = 0;
    if (req->req_case == RPC__CLIENT_MSG__REQ_MEMBER_ADD) {
        cc.type = req->member_add->islearner ? RAFT_CC_ADD_LEARNER : RAFT_CC_ADD_VOTER;
        if (cc.type == RAFT_CC_ADD_LEARNER && conf->learners_count >= 1) {
            srv_reply_error(m, reply, req->method, RPC_ERR_TOO_MANY_LEARNERS);
            goto free_req;
        }
        cc.node_id = srv_cluster_rand(m->cl);
        int slot = srv_cluster_dir_register(m->cl, (int)req->member_add->node, cc.node_id);
        if (slot < 0) {
            srv_reply_error(m, reply, req->method, RPC_ERR_PEER_URL_EXIST);
            goto free_req;
        }
        node = (uint32_t)slot;
    } else if (req->req_case == RPC__CLIENT_MSG__REQ_MEMBER_REMOVE) {
        cc.type = RAFT_CC_REMOVE;
        cc.node_id = req->member_remove->id;
        if (!raft_conf_is_voter(conf, cc.node_id) && !raft_conf_is_learner(conf, cc.node_id)) {
            srv_reply_error(m, reply, req->method, RPC_ERR_MEMBER_NOT_FOUND);
            goto free_req;
        }
    } else {
        cc.type = RAFT_CC_PROMOTE;
        cc.node_id = req->member_promote->id;
        if (!raft_conf_is_learner(conf, cc.node_id)) {
            srv_reply_error(m, reply, req->method,
                            raft_conf_is_voter(conf, cc.node_id) ? RPC_ERR_MEMBER_NOT_LEARNER
                                                                 : RPC_ERR_MEMBER_NOT_FOUND);
            goto free_req;
        }
        if (!raft_learner_in_sync(m->raft, cc.node_id)) {
            srv_reply_error(m, reply, req->method, RPC_ERR_LEARNER_NOT_READY);
            goto free_req;
        }
    }
    if (c->strict_reconfig_check && !raft_conf_change_quorum_ok(conf, &cc, started, n_started)) {
        srv_reply_error(m, reply, req->method, RPC_ERR_NOT_ENOUGH_STARTED);
        goto free_req;
    }
    if (cc.type == RAFT_CC_REMOVE)
        node = (uint32_t)FL_MAX(0, srv_cluster_dir_node(m->cl, cc.node_id));
    propose_conf(m, reply, req, &cc, node);
    return;
free_req:
    rpc__client_msg__free_unpacked(req, NULL);
}

static void handle_move_leader(struct srv_member *m, const struct srv_reply *reply,
                               Rpc__ClientMsg *req)
{
    uint64_t target = req->move_leader->targetid;
    if (raft_role(m->raft) != RAFT_LEADER) {
        srv_reply_error(m, reply, req->method, RPC_ERR_NOT_LEADER);
        goto free_req;
    }
    if (!raft_conf_is_voter(raft_conf(m->raft), target)) {
        srv_reply_error(m, reply, req->method, RPC_ERR_BAD_LEADER_TRANSFEREE);
        goto free_req;
    }
    if (target == m->id) {
        Rpc__ServerMsg msg = RPC__SERVER_MSG__INIT;
        Rpc__MoveLeaderResponse r = RPC__MOVE_LEADER_RESPONSE__INIT;
        msg.method = req->method;
        msg.resp_case = RPC__SERVER_MSG__RESP_MOVE_LEADER;
        msg.move_leader = &r;
        srv_reply_send(m, reply, &msg);
        goto free_req;
    }
    raft_transfer_leader(m->raft, target);
    /* Answered from srv_rpc_leader_changed when the leader is the target, or with
     * etcd's "leader transfer took too long" at the timeout. */
    struct srv_waiter *wt = srv_waiter_add(m, SRV_WAIT_PROPOSAL, reply, req);
    wt->read_index = target;
    wt->read_ready = true; /* marks a transfer waiter */
    srv_member_process(m);
    return;
free_req:
    rpc__client_msg__free_unpacked(req, NULL);
}

/* ---- maintenance --------------------------------------------------------------- */

static void handle_status(struct srv_member *m, const struct srv_reply *reply, int method)
{
    struct srv_member_status st;
    srv_member_status(m, &st);
    Rpc__StatusResponse r = RPC__STATUS_RESPONSE__INIT;
    r.version = (char *)"3.5.0-faultline";
    r.dbsize = st.db_size_bytes;
    r.dbsizeinuse = st.db_size_in_use_bytes;
    r.leader = st.leader_id;
    r.raftindex = st.raft_index;
    r.raftterm = st.raft_term;
    r.raftappliedindex = st.raft_applied;
    r.islearner = st.is_learner;
    char *errs[2];
    if (st.nospace_alarm) {
        errs[0] = (char *)"memberID:0 alarm:NOSPACE";
        r.n_errors = 1;
        r.errors = errs;
    }
    r.quorum_contact_age_ns =
        m->last_leader_contact_ns < 0 ? -1 : srv_member_now(m) - m->last_leader_contact_ns;
    Rpc__ServerMsg msg = RPC__SERVER_MSG__INIT;
    msg.method = method;
    msg.resp_case = RPC__SERVER_MSG__RESP_STATUS;
    msg.status = &r;
    srv_reply_send(m, reply, &msg);
}

static void handle_hash_kv(struct srv_member *m, const struct srv_reply *reply,
                           const Rpc__ClientMsg *req)
{
    struct mvcc_hashkv h;
    enum mvcc_err err = mvcc_hash_kv(m->kv, req->hash_kv->revision, &h);
    if (err != MVCC_OK) {
        srv_reply_mvcc_error(m, reply, req->method, err);
        return;
    }
    Rpc__HashKVResponse r = RPC__HASH_KVRESPONSE__INIT;
    r.hash = (uint32_t)(h.hash ^ (h.hash >> 32));
    r.compact_revision = h.compact_rev;
    r.hash_revision = h.hash_rev;
    Rpc__ServerMsg msg = RPC__SERVER_MSG__INIT;
    msg.method = req->method;
    msg.resp_case = RPC__SERVER_MSG__RESP_HASH_KV;
    msg.hash_kv = &r;
    srv_reply_send(m, reply, &msg);
}

static void handle_snapshot(struct srv_member *m, const struct srv_reply *reply, int method)
{
    struct fl_buf db, bk;
    fl_buf_init(&db);
    fl_buf_init(&bk);
    srv_member_image(m, &db, mvcc_size_bytes(m->kv));
    srv_backup_wrap(db.data, db.len, &bk);
    fl_buf_close(&db);
    if (reply->done) {
        Rpc__SnapshotResponse r = RPC__SNAPSHOT_RESPONSE__INIT;
        r.blob.data = bk.data;
        r.blob.len = bk.len;
        Rpc__ServerMsg msg = RPC__SERVER_MSG__INIT;
        msg.method = method;
        msg.resp_case = RPC__SERVER_MSG__RESP_SNAPSHOT;
        msg.snapshot = &r;
        srv_reply_send(m, reply, &msg);
    } else {
        for (size_t off = 0; off < bk.len || off == 0;) {
            size_t n = FL_MIN((size_t)SNAPSHOT_CHUNK_BYTES, bk.len - off);
            Rpc__SnapshotResponse r = RPC__SNAPSHOT_RESPONSE__INIT;
            r.blob.data = bk.data + off;
            r.blob.len = n;
            r.remaining_bytes = bk.len - off - n;
            Rpc__ServerMsg msg = RPC__SERVER_MSG__INIT;
            msg.method = method;
            msg.resp_case = RPC__SERVER_MSG__RESP_SNAPSHOT;
            msg.snapshot = &r;
            msg.stream_end = r.remaining_bytes == 0;
            srv_reply_send(m, reply, &msg);
            off += n;
            if (n == 0)
                break;
        }
    }
    fl_buf_close(&bk);
}

/* A control call whose member went away: it completes as a stopped server. */
static void ctl_stopped(const struct srv_reply *reply)
{
    struct srv_status st = {rpc_err_code(RPC_ERR_STOPPED), rpc_err_text(RPC_ERR_STOPPED)};
    struct srv_result res;
    memset(&res, 0, sizeof res);
    reply->done(reply->ud, &st, &res);
}

struct defrag_done {
    struct srv_member *m;
    struct srv_reply reply;
    int method;
};

static void replay_deferred(struct srv_member *m);

static void on_defrag_done(struct sim_world *w, void *ctx)
{
    (void)w;
    struct defrag_done *d = ctx;
    struct srv_member *m = d->m;
    m->unblock_timer = 0;
    m->defrag_pending = NULL;
    m->blocked_until_ns = 0;
    Rpc__ServerMsg msg = RPC__SERVER_MSG__INIT;
    Rpc__DefragmentResponse r = RPC__DEFRAGMENT_RESPONSE__INIT;
    msg.method = d->method;
    msg.resp_case = RPC__SERVER_MSG__RESP_DEFRAGMENT;
    msg.defragment = &r;
    srv_member_event(m, SRV_EV_DEFRAG, "finished");
    srv_reply_send(m, &d->reply, &msg);
    free(d);
    replay_deferred(m);
}

static void handle_defrag(struct srv_member *m, const struct srv_reply *reply, int method)
{
    if (m->defrag_pending) {
        /* etcd serialises defragmentation behind the backend lock. */
        srv_reply_error(m, reply, method, RPC_ERR_TIMEOUT);
        return;
    }
    int64_t dur = mvcc_defrag(m->kv);
    /* The rewritten backend replaces the old file (renamed once durable; the
     * failpoint server/defrag_before_rename fires there). */
    srv_member_save_db(m);
    char d[96];
    snprintf(d, sizeof d, "started, blocks for %" PRId64 " ms, size now %" PRId64 " bytes",
             dur / FL_MS, mvcc_size_bytes(m->kv));
    srv_member_event(m, SRV_EV_DEFRAG, d);
    m->blocked_until_ns = srv_member_now(m) + dur;
    struct defrag_done *dd = fl_calloc(1, sizeof *dd);
    dd->m = m;
    dd->reply = *reply;
    dd->method = method;
    m->defrag_pending = dd;
    m->unblock_timer = sim_timer_start(m->w, m->proc, dur, on_defrag_done, dd);
}

void srv_rpc_fail_pending(struct srv_member *m)
{
    for (size_t i = 0; i < m->n_waiters; i++) {
        struct srv_waiter *wt = &m->waiters[i];
        if (!wt->dead && wt->reply.done)
            ctl_stopped(&wt->reply);
        if (!wt->dead)
            srv_waiter_done(m, wt);
    }
    struct defrag_done *dd = m->defrag_pending;
    if (dd) {
        m->defrag_pending = NULL;
        if (dd->reply.done)
            ctl_stopped(&dd->reply);
        free(dd);
    }
}

static void handle_lease_ttl(struct srv_member *m, const struct srv_reply *reply,
                             const Rpc__ClientMsg *req)
{
    struct mvcc_lease_info li;
    enum mvcc_err err =
        mvcc_lease_ttl(m->kv, req->lease_ttl->id, srv_member_now(m), req->lease_ttl->keys, &li);
    Rpc__LeaseTimeToLiveResponse r = RPC__LEASE_TIME_TO_LIVE_RESPONSE__INIT;
    r.id = req->lease_ttl->id;
    ProtobufCBinaryData *keys = NULL;
    if (err == MVCC_OK) {
        r.ttl = li.ttl_s;
        r.grantedttl = li.granted_ttl_s;
        keys = fl_calloc(li.keys_len + 1, sizeof *keys);
        for (size_t i = 0; i < li.keys_len; i++) {
            keys[i].data = (uint8_t *)li.keys[i];
            keys[i].len = li.key_lens[i];
        }
        r.n_keys = li.keys_len;
        r.keys = keys;
    } else {
        r.ttl = -1; /* etcd answers TTL -1 for a lease that does not exist */
    }
    Rpc__ServerMsg msg = RPC__SERVER_MSG__INIT;
    msg.method = req->method;
    msg.resp_case = RPC__SERVER_MSG__RESP_LEASE_TTL;
    msg.lease_ttl = &r;
    srv_reply_send(m, reply, &msg);
    free(keys);
    if (err == MVCC_OK)
        mvcc_lease_info_free(&li);
}

static void handle_alarm(struct srv_member *m, const struct srv_reply *reply, Rpc__ClientMsg *req)
{
    if (req->alarm->action == RPC__ALARM_REQUEST__ALARM_ACTION__GET) {
        Rpc__AlarmResponse r = RPC__ALARM_RESPONSE__INIT;
        Rpc__AlarmMember am[SRV_ALARMS_MAX];
        Rpc__AlarmMember *ptr[SRV_ALARMS_MAX];
        for (uint32_t i = 0; i < m->n_alarms; i++) {
            rpc__alarm_member__init(&am[i]);
            am[i].memberid = m->alarms[i].member;
            am[i].alarm = (Rpc__AlarmType)m->alarms[i].type;
            ptr[i] = &am[i];
        }
        r.n_alarms = m->n_alarms;
        r.alarms = ptr;
        Rpc__ServerMsg msg = RPC__SERVER_MSG__INIT;
        msg.method = req->method;
        msg.resp_case = RPC__SERVER_MSG__RESP_ALARM;
        msg.alarm = &r;
        srv_reply_send(m, reply, &msg);
        rpc__client_msg__free_unpacked(req, NULL);
        return;
    }
    handle_write(m, reply, req); /* activate / deactivate go through Raft */
}

/* ---- watch streams ------------------------------------------------------------- */

static struct srv_watch *watch_by_mvcc(struct srv_member *m, int64_t id)
{
    for (size_t i = 0; i < m->n_watches; i++)
        if (m->watches[i].active && m->watches[i].mvcc_id == id)
            return &m->watches[i];
    return NULL;
}

static struct srv_watch *watch_by_call(struct srv_member *m, net_sock s, uint64_t call_id)
{
    for (size_t i = 0; i < m->n_watches; i++)
        if (m->watches[i].active && m->watches[i].sock == s && m->watches[i].call_id == call_id)
            return &m->watches[i];
    return NULL;
}

static void watch_end(struct srv_member *m, struct srv_watch *wa, enum rpc_err_id err)
{
    if (!wa->active)
        return;
    wa->active = false;
    mvcc_watch_cancel(m->kv, wa->mvcc_id);
    if (err != RPC_ERR_NONE && net_sock_open(m->w, wa->sock)) {
        struct srv_reply r = {wa->sock, wa->call_id, NULL, NULL};
        reply_status(m, &r, RPC__METHOD__METHOD_WATCH, rpc_err_code(err), rpc_err_text(err), true);
    }
}

static void watch_send(struct srv_member *m, struct srv_watch *wa, const struct mvcc_watch_resp *wr,
                       bool created)
{
    struct srv_arena a = {0};
    Rpc__ServerMsg msg = RPC__SERVER_MSG__INIT;
    Rpc__ResponseHeader hdr = RPC__RESPONSE_HEADER__INIT;
    srv_header_fill(m, &hdr);
    hdr.revision = wr->header_rev;
    msg.header = &hdr;
    msg.method = RPC__METHOD__METHOD_WATCH;
    msg.resp_case = RPC__SERVER_MSG__RESP_WATCH;
    msg.watch = srv_watch_resp_pb(&a, wr);
    msg.watch->created = created;
    if (wr->canceled) {
        Rpc__Error *e = srv_arena_alloc(&a, sizeof *e);
        rpc__error__init(e);
        enum mvcc_err ce = wr->cancel_err != MVCC_OK ? wr->cancel_err : MVCC_ERR_WATCH_NOT_FOUND;
        e->code = (int)mvcc_err_code(ce);
        e->message = (char *)mvcc_err_text(ce);
        if (wr->cancel_err != MVCC_OK)
            msg.error = e;
        msg.stream_end = true;
        wa->active = false;
    }
    struct srv_reply r = {wa->sock, wa->call_id, NULL, NULL};
    srv_reply_send(m, &r, &msg);
    srv_arena_free(&a);
}

static void drain_watches(struct srv_member *m)
{
    if (m->blocked_until_ns > srv_member_now(m))
        return;
    struct mvcc_watch_resp wr;
    while (mvcc_watch_pop(m->kv, &wr)) {
        struct srv_watch *wa = watch_by_mvcc(m, wr.watch_id);
        struct sim_fault_hit hit;
        if (wa && flt_check(m->w, "watch/before_send", &hit) == SIM_FAULT_CRASH) {
            mvcc_watch_resp_free(&wr);
            return;
        }
        if (wa)
            watch_send(m, wa, &wr, false);
        mvcc_watch_resp_free(&wr);
    }
}

static void handle_watch(struct srv_member *m, const struct srv_reply *reply,
                         const Rpc__ClientMsg *req)
{
    const Rpc__WatchRequest *wr = req->watch;
    if (req->close_stream || !wr) {
        struct srv_watch *wa = watch_by_call(m, reply->sock, req->call_id);
        if (wa)
            watch_end(m, wa, RPC_ERR_NONE);
        return;
    }
    if (wr->request_union_case == RPC__WATCH_REQUEST__REQUEST_UNION_PROGRESS_REQUEST) {
        struct srv_watch *wa = watch_by_call(m, reply->sock, req->call_id);
        if (wa)
            mvcc_watch_request_progress(m->kv, wa->mvcc_id);
        drain_watches(m);
        return;
    }
    if (wr->request_union_case == RPC__WATCH_REQUEST__REQUEST_UNION_CANCEL_REQUEST) {
        struct srv_watch *wa = watch_by_call(m, reply->sock, req->call_id);
        if (wa) {
            struct mvcc_watch_resp c;
            memset(&c, 0, sizeof c);
            c.watch_id = wa->mvcc_id;
            c.canceled = true;
            c.header_rev = mvcc_current_rev(m->kv);
            mvcc_watch_cancel(m->kv, wa->mvcc_id);
            watch_send(m, wa, &c, false);
        }
        return;
    }
    if (wr->request_union_case != RPC__WATCH_REQUEST__REQUEST_UNION_CREATE_REQUEST)
        return;
    const Rpc__WatchCreateRequest *cr = wr->create_request;
    struct mvcc_watch_req q;
    memset(&q, 0, sizeof q);
    q.key = cr->key.data;
    q.key_len = cr->key.len;
    q.range_end = cr->range_end.len ? cr->range_end.data : NULL;
    q.range_end_len = cr->range_end.len;
    q.start_rev = cr->start_revision;
    q.prev_kv = cr->prev_kv;
    q.progress_notify = cr->progress_notify;
    for (size_t i = 0; i < cr->n_filters; i++) {
        if (cr->filters[i] == RPC__WATCH_CREATE_REQUEST__FILTER_TYPE__NOPUT)
            q.filter_put = true;
        else
            q.filter_delete = true;
    }
    int64_t id = 0, hrev = 0;
    enum mvcc_err err = mvcc_watch_create(m->kv, &q, &id, &hrev);
    if (err != MVCC_OK) {
        reply_status(m, reply, req->method, (int)mvcc_err_code(err), mvcc_err_text(err), true);
        return;
    }
    if (m->n_watches == m->cap_watches) {
        m->cap_watches = m->cap_watches ? m->cap_watches * 2 : 16;
        m->watches = fl_realloc(m->watches, m->cap_watches * sizeof *m->watches);
    }
    struct srv_watch *wa = &m->watches[m->n_watches++];
    wa->mvcc_id = id;
    wa->sock = reply->sock;
    wa->call_id = req->call_id;
    wa->require_leader = req->require_leader;
    wa->active = true;
    struct mvcc_watch_resp c;
    memset(&c, 0, sizeof c);
    c.watch_id = id;
    c.header_rev = hrev;
    watch_send(m, wa, &c, true);
    mvcc_watch_sync(m->kv);
    drain_watches(m);
}

static void watches_compact(struct srv_member *m)
{
    size_t k = 0;
    for (size_t i = 0; i < m->n_watches; i++)
        if (m->watches[i].active)
            m->watches[k++] = m->watches[i];
    m->n_watches = k;
}

/* ---- lease keep-alive streams -------------------------------------------------- */

static void ka_reply(struct srv_member *m, net_sock s, uint64_t call_id, int64_t id, int64_t ttl)
{
    Rpc__LeaseKeepAliveResponse r = RPC__LEASE_KEEP_ALIVE_RESPONSE__INIT;
    r.id = id;
    r.ttl = ttl;
    Rpc__ServerMsg msg = RPC__SERVER_MSG__INIT;
    msg.method = RPC__METHOD__METHOD_LEASE_KEEPALIVE;
    msg.resp_case = RPC__SERVER_MSG__RESP_LEASE_KEEPALIVE;
    msg.lease_keepalive = &r;
    struct srv_reply rep = {s, call_id, NULL, NULL};
    srv_reply_send(m, &rep, &msg);
}

static void handle_keepalive(struct srv_member *m, const struct srv_reply *reply,
                             Rpc__ClientMsg *req)
{
    struct srv_ka_stream *ka = NULL;
    for (size_t i = 0; i < m->n_kas; i++)
        if (m->kas[i].active && m->kas[i].sock == reply->sock && m->kas[i].call_id == req->call_id)
            ka = &m->kas[i];
    if (req->close_stream) {
        if (ka)
            ka->active = false;
        rpc__client_msg__free_unpacked(req, NULL);
        return;
    }
    if (!ka) {
        if (m->n_kas == m->cap_kas) {
            m->cap_kas = m->cap_kas ? m->cap_kas * 2 : 8;
            m->kas = fl_realloc(m->kas, m->cap_kas * sizeof *m->kas);
        }
        ka = &m->kas[m->n_kas++];
        ka->sock = reply->sock;
        ka->call_id = req->call_id;
        ka->require_leader = req->require_leader;
        ka->active = true;
    }
    if (!req->lease_keepalive) {
        rpc__client_msg__free_unpacked(req, NULL);
        return;
    }
    int64_t id = req->lease_keepalive->id;
    if (raft_role(m->raft) == RAFT_LEADER) {
        int64_t ttl = 0;
        enum mvcc_err err = mvcc_lease_renew(m->kv, id, srv_member_now(m), &ttl);
        ka_reply(m, reply->sock, req->call_id, id, err == MVCC_OK ? ttl : 0);
        rpc__client_msg__free_unpacked(req, NULL);
        return;
    }
    uint64_t leader = raft_leader(m->raft);
    if (leader == RAFT_NONE) {
        rpc__client_msg__free_unpacked(req, NULL); /* the client resends at TTL/3 */
        return;
    }
    struct srv_waiter *wt = srv_waiter_add(m, SRV_WAIT_RENEW, reply, req);
    Raftpb__LeaseRenew lr = RAFTPB__LEASE_RENEW__INIT;
    lr.req_id = wt->id;
    lr.lease_id = id;
    srv_peer_send_renew(m, leader, &lr);
}

void srv_rpc_on_renew(struct srv_member *m, uint64_t from, const Raftpb__LeaseRenew *lr)
{
    if (!lr->is_response) {
        Raftpb__LeaseRenew ans = RAFTPB__LEASE_RENEW__INIT;
        ans.req_id = lr->req_id;
        ans.lease_id = lr->lease_id;
        ans.is_response = true;
        if (raft_role(m->raft) != RAFT_LEADER) {
            ans.not_leader = true;
        } else {
            int64_t ttl = 0;
            if (mvcc_lease_renew(m->kv, lr->lease_id, srv_member_now(m), &ttl) == MVCC_OK)
                ans.ttl = ttl;
        }
        srv_peer_send_renew(m, from, &ans);
        return;
    }
    struct srv_waiter *wt = srv_waiter_find(m, lr->req_id);
    if (!wt || wt->kind != SRV_WAIT_RENEW)
        return;
    if (!lr->not_leader)
        ka_reply(m, wt->reply.sock, wt->reply.call_id, lr->lease_id, lr->ttl);
    srv_waiter_done(m, wt);
}

/* ---- dispatch ------------------------------------------------------------------ */

static bool learner_allowed(const Rpc__ClientMsg *req)
{
    if (req->req_case == RPC__CLIENT_MSG__REQ_STATUS || req->req_case == RPC__CLIENT_MSG__REQ_PING)
        return true;
    return req->req_case == RPC__CLIENT_MSG__REQ_RANGE && req->range->serializable;
}

void srv_rpc_handle(struct srv_member *m, struct srv_reply *reply, Rpc__ClientMsg *req)
{
    int method = req->method;
    if (req->req_case == RPC__CLIENT_MSG__REQ_PING) {
        Rpc__ServerMsg msg = RPC__SERVER_MSG__INIT;
        Rpc__Pong pong = RPC__PONG__INIT;
        pong.seq = req->ping->seq;
        msg.method = method;
        msg.resp_case = RPC__SERVER_MSG__RESP_PONG;
        msg.pong = &pong;
        srv_reply_send(m, reply, &msg);
        goto free_req;
    }
    if (m->removed) {
        srv_reply_error(m, reply, method, RPC_ERR_STOPPED);
        goto free_req;
    }
    if (raft_conf_is_learner(raft_conf(m->raft), m->id) && !learner_allowed(req)) {
        srv_reply_error(m, reply, method, RPC_ERR_LEARNER_NOT_SUPPORTED);
        goto free_req;
    }
    if (req->require_leader && raft_leader(m->raft) == RAFT_NONE) {
        reply_status(m, reply, method, rpc_err_code(RPC_ERR_NO_LEADER),
                     rpc_err_text(RPC_ERR_NO_LEADER),
                     req->req_case == RPC__CLIENT_MSG__REQ_WATCH ||
                         req->req_case == RPC__CLIENT_MSG__REQ_LEASE_KEEPALIVE);
        goto free_req;
    }
    switch (req->req_case) {
    case RPC__CLIENT_MSG__REQ_RANGE:
        handle_range(m, reply, req);
        return;
    case RPC__CLIENT_MSG__REQ_PUT:
    case RPC__CLIENT_MSG__REQ_DELETE_RANGE:
    case RPC__CLIENT_MSG__REQ_TXN:
    case RPC__CLIENT_MSG__REQ_COMPACT:
    case RPC__CLIENT_MSG__REQ_LEASE_GRANT:
    case RPC__CLIENT_MSG__REQ_LEASE_REVOKE:
        handle_write(m, reply, req);
        return;
    case RPC__CLIENT_MSG__REQ_WATCH:
        handle_watch(m, reply, req);
        break;
    case RPC__CLIENT_MSG__REQ_LEASE_KEEPALIVE:
        handle_keepalive(m, reply, req);
        return;
    case RPC__CLIENT_MSG__REQ_LEASE_TTL:
        handle_lease_ttl(m, reply, req);
        break;
    case RPC__CLIENT_MSG__REQ_MEMBER_LIST:
        member_list_reply(m, reply, method);
        break;
    case RPC__CLIENT_MSG__REQ_MEMBER_ADD:
    case RPC__CLIENT_MSG__REQ_MEMBER_REMOVE:
    case RPC__CLIENT_MSG__REQ_MEMBER_PROMOTE:
        handle_member(m, reply, req);
        return;
    case RPC__CLIENT_MSG__REQ_MOVE_LEADER:
        handle_move_leader(m, reply, req);
        return;
    case RPC__CLIENT_MSG__REQ_STATUS:
        handle_status(m, reply, method);
        break;
    case RPC__CLIENT_MSG__REQ_DEFRAGMENT:
        handle_defrag(m, reply, method);
        break;
    case RPC__CLIENT_MSG__REQ_ALARM:
        handle_alarm(m, reply, req);
        return;
    case RPC__CLIENT_MSG__REQ_HASH_KV:
        handle_hash_kv(m, reply, req);
        break;
    case RPC__CLIENT_MSG__REQ_SNAPSHOT:
        handle_snapshot(m, reply, method);
        break;
    default:
        if (req->close_stream) {
            struct srv_watch *wa = watch_by_call(m, reply->sock, req->call_id);
            if (wa)
                watch_end(m, wa, RPC_ERR_NONE);
            for (size_t i = 0; i < m->n_kas; i++)
                if (m->kas[i].sock == reply->sock && m->kas[i].call_id == req->call_id)
                    m->kas[i].active = false;
            break;
        }
        reply_status(m, reply, method, RPC_CODE_UNIMPLEMENTED, "unknown method", false);
        break;
    }
free_req:
    rpc__client_msg__free_unpacked(req, NULL);
}

/* ---- connections --------------------------------------------------------------- */

static bool blocked(struct srv_member *m)
{
    return m->blocked_until_ns > 0 && srv_member_now(m) < m->blocked_until_ns;
}

static void defer_frame(struct srv_member *m, net_sock s, const uint8_t *p, size_t n)
{
    if (m->n_deferred == m->cap_deferred) {
        m->cap_deferred = m->cap_deferred ? m->cap_deferred * 2 : 16;
        m->deferred = fl_realloc(m->deferred, m->cap_deferred * sizeof *m->deferred);
        m->deferred_sock = fl_realloc(m->deferred_sock, m->cap_deferred * sizeof(net_sock));
    }
    fl_buf_init(&m->deferred[m->n_deferred]);
    fl_buf_append(&m->deferred[m->n_deferred], p, n);
    m->deferred_sock[m->n_deferred] = s;
    m->n_deferred++;
}

static void handle_frame(struct srv_member *m, net_sock s, const uint8_t *p, size_t n)
{
    Rpc__ClientMsg *req = rpc__client_msg__unpack(NULL, n, p);
    if (!req)
        return;
    const struct srv_config *c = srv_member_config(m);
    if (c->max_request_bytes > 0 && n > c->max_request_bytes &&
        req->req_case != RPC__CLIENT_MSG__REQ_PING) {
        struct srv_reply r = {s, req->call_id, NULL, NULL};
        srv_reply_error(m, &r, req->method, RPC_ERR_REQUEST_TOO_LARGE);
        rpc__client_msg__free_unpacked(req, NULL);
        return;
    }
    /* A defrag holds the backend: every call but pings and status waits for it. */
    if (blocked(m) && req->req_case != RPC__CLIENT_MSG__REQ_PING &&
        req->req_case != RPC__CLIENT_MSG__REQ_STATUS) {
        rpc__client_msg__free_unpacked(req, NULL);
        defer_frame(m, s, p, n);
        return;
    }
    struct srv_reply reply = {s, req->call_id, NULL, NULL};
    srv_rpc_handle(m, &reply, req);
}

static void replay_deferred(struct srv_member *m)
{
    size_t n = m->n_deferred;
    struct fl_buf *bufs = m->deferred;
    net_sock *socks = m->deferred_sock;
    m->deferred = NULL;
    m->deferred_sock = NULL;
    m->n_deferred = m->cap_deferred = 0;
    for (size_t i = 0; i < n; i++) {
        if (!m->stopping && net_sock_open(m->w, socks[i]))
            handle_frame(m, socks[i], bufs[i].data, bufs[i].len);
        fl_buf_close(&bufs[i]);
    }
    free(bufs);
    free(socks);
    drain_watches(m);
}

static void on_client_message(struct sim_world *w, net_sock s, const uint8_t *p, size_t n,
                              void *ctx)
{
    (void)w;
    struct srv_member *m = ctx;
    if (m->stopping)
        return;
    handle_frame(m, s, p, n);
}

static void on_client_close(struct sim_world *w, net_sock s, int reason, void *ctx)
{
    (void)w;
    (void)reason;
    struct srv_member *m = ctx;
    for (size_t i = 0; i < m->n_watches; i++)
        if (m->watches[i].sock == s)
            watch_end(m, &m->watches[i], RPC_ERR_NONE);
    for (size_t i = 0; i < m->n_kas; i++)
        if (m->kas[i].sock == s)
            m->kas[i].active = false;
    for (size_t i = 0; i < m->n_conns; i++)
        if (m->conns[i].sock == s)
            m->conns[i].open = false;
}

static void on_client_accept(struct sim_world *w, net_sock s, int peer, void *ctx)
{
    (void)peer;
    struct srv_member *m = ctx;
    static const struct net_sock_ops ops = {NULL, on_client_message, on_client_close};
    net_sock_bind(w, s, &ops, m);
    size_t k = 0;
    for (size_t i = 0; i < m->n_conns; i++)
        if (m->conns[i].open)
            m->conns[k++] = m->conns[i];
    m->n_conns = k;
    if (m->n_conns == m->cap_conns) {
        m->cap_conns = m->cap_conns ? m->cap_conns * 2 : 16;
        m->conns = fl_realloc(m->conns, m->cap_conns * sizeof *m->conns);
    }
    m->conns[m->n_conns].sock = s;
    m->conns[m->n_conns].open = true;
    m->n_conns++;
}

int srv_rpc_listen(struct srv_member *m)
{
    return net_listen(m->w, m->proc, SRV_CLIENT_PORT, on_client_accept, m);
}

void srv_rpc_close_all(struct srv_member *m)
{
    for (size_t i = 0; i < m->n_conns; i++)
        if (m->conns[i].open)
            net_close(m->w, m->conns[i].sock);
    m->n_conns = 0;
    net_unlisten(m->w, m->proc, SRV_CLIENT_PORT);
}

/* ---- timers and apply hooks ----------------------------------------------------- */

static void serve_ready_reads(struct srv_member *m)
{
    if (!m->reads_ready)
        return;
    m->reads_ready = false;
    for (size_t i = 0; i < m->n_waiters; i++) {
        struct srv_waiter *wt = &m->waiters[i];
        if (wt->dead || wt->kind != SRV_WAIT_READ || !wt->read_ready)
            continue;
        if (wt->read_index > m->applied) {
            m->reads_ready = true; /* look again after the next apply */
            continue;
        }
        srv_rpc_serve_read(m, &wt->reply, wt->req);
        srv_waiter_done(m, wt);
    }
}

void srv_rpc_after_apply(struct srv_member *m)
{
    serve_ready_reads(m);
    drain_watches(m);
}

void srv_rpc_leader_changed(struct srv_member *m)
{
    uint64_t leader = raft_leader(m->raft);
    for (size_t i = 0; i < m->n_waiters; i++) {
        struct srv_waiter *wt = &m->waiters[i];
        if (wt->dead || !wt->req)
            continue;
        if (wt->req->req_case == RPC__CLIENT_MSG__REQ_MOVE_LEADER && wt->read_index == leader) {
            Rpc__ServerMsg msg = RPC__SERVER_MSG__INIT;
            Rpc__MoveLeaderResponse r = RPC__MOVE_LEADER_RESPONSE__INIT;
            msg.method = wt->req->method;
            msg.resp_case = RPC__SERVER_MSG__RESP_MOVE_LEADER;
            msg.move_leader = &r;
            srv_reply_send(m, &wt->reply, &msg);
            srv_waiter_done(m, wt);
        } else if (wt->kind == SRV_WAIT_READ && !wt->read_ready && leader != RAFT_NONE) {
            /* etcd: a ReadIndex interrupted by a leader change is retried. */
            if (raft_read_index(m->raft, wt->id) != FL_OK)
                wt->read_index = UINT64_MAX;
        }
    }
}

static enum rpc_err_id timeout_error(const struct srv_waiter *wt)
{
    if (wt->req && wt->req->req_case == RPC__CLIENT_MSG__REQ_MOVE_LEADER)
        return RPC_ERR_LEADER_TRANSFER_TIMEOUT;
    return RPC_ERR_TIMEOUT;
}

static void tick_waiters(struct srv_member *m, int64_t now)
{
    for (size_t i = 0; i < m->n_waiters; i++) {
        struct srv_waiter *wt = &m->waiters[i];
        if (wt->dead)
            continue;
        if (now >= wt->deadline_ns) {
            if (wt->kind != SRV_WAIT_RENEW)
                srv_reply_error(m, &wt->reply, wt->req ? wt->req->method : 0, timeout_error(wt));
            srv_waiter_done(m, wt);
            continue;
        }
        if (wt->kind == SRV_WAIT_LEADER && raft_leader(m->raft) != RAFT_NONE) {
            if (propose_client(m, wt) == FL_OK)
                wt->kind = SRV_WAIT_PROPOSAL;
        } else if (wt->kind == SRV_WAIT_READ && !wt->read_ready &&
                   (wt->read_index == UINT64_MAX || m->ticks % READ_RETRY_TICKS == 0)) {
            wt->read_index = raft_read_index(m->raft, wt->id) == FL_OK ? 0 : UINT64_MAX;
        }
    }
    srv_waiters_sweep(m);
}

static void tick_streams(struct srv_member *m)
{
    const struct srv_config *c = srv_member_config(m);
    int64_t limit = 3 * FL_MAX(1, c->election_ms / c->heartbeat_ms);
    if (m->no_leader_ticks < limit)
        return;
    /* etcd cancels require_leader streams after 3 election timeouts without leader. */
    for (size_t i = 0; i < m->n_watches; i++)
        if (m->watches[i].active && m->watches[i].require_leader)
            watch_end(m, &m->watches[i], RPC_ERR_NO_LEADER);
    for (size_t i = 0; i < m->n_kas; i++) {
        struct srv_ka_stream *ka = &m->kas[i];
        if (ka->active && ka->require_leader) {
            ka->active = false;
            struct srv_reply r = {ka->sock, ka->call_id, NULL, NULL};
            reply_status(m, &r, RPC__METHOD__METHOD_LEASE_KEEPALIVE,
                         rpc_err_code(RPC_ERR_NO_LEADER), rpc_err_text(RPC_ERR_NO_LEADER), true);
        }
    }
}

static void tick_leader(struct srv_member *m, int64_t now)
{
    if (raft_role(m->raft) != RAFT_LEADER)
        return;
    /* Quorum contact, for Status and health-aware clients. */
    const struct raft_conf_state *conf = raft_conf(m->raft);
    uint32_t active = 0;
    for (uint32_t i = 0; i < conf->voters_count; i++) {
        struct raft_progress pr;
        if (conf->voters[i] == m->id ||
            (raft_progress_get(m->raft, conf->voters[i], &pr) == FL_OK && pr.recent_active))
            active++;
    }
    if (active >= raft_conf_quorum(conf))
        m->last_leader_contact_ns = now;
    /* Leases: only the leader expires them, through Raft. */
    int64_t ids[64];
    size_t n = mvcc_lease_expired(m->kv, now, ids, FL_ARRAY_LEN(ids));
    for (size_t i = 0; i < n; i++) {
        Raftpb__InternalRequest ir = RAFTPB__INTERNAL_REQUEST__INIT;
        ir.kind = RAFTPB__INTERNAL_KIND__INTERNAL_LEASE_REVOKE;
        ir.lease_id = ids[i];
        srv_propose(m, &ir);
    }
    /* Auto compaction: the policy math is mvcc's; the leader proposes. */
    int64_t wnow = sim_now_ns(m->w);
    if (wnow >= mvcc_autocompact_next_ns(&m->ac)) {
        int64_t rev = mvcc_autocompact_step(&m->ac, wnow, mvcc_current_rev(m->kv));
        if (rev > 0 && rev > mvcc_compact_rev(m->kv)) {
            Raftpb__InternalRequest ir = RAFTPB__INTERNAL_REQUEST__INIT;
            ir.kind = RAFTPB__INTERNAL_KIND__INTERNAL_COMPACT;
            ir.revision = rev;
            if (srv_propose(m, &ir) != FL_OK)
                mvcc_autocompact_failed(&m->ac, wnow);
        }
    }
}

void srv_rpc_tick(struct srv_member *m)
{
    int64_t now = srv_member_now(m);
    const struct srv_config *c = srv_member_config(m);
    tick_waiters(m, now);
    tick_streams(m);
    tick_leader(m, now);
    if (!blocked(m)) {
        mvcc_watch_sync(m->kv);
        if (c->progress_notify_ms > 0 &&
            now - m->last_progress_ns >= c->progress_notify_ms * FL_MS) {
            m->last_progress_ns = now;
            mvcc_watch_progress_all(m->kv);
        }
        drain_watches(m);
    }
    if (m->n_watches > 64)
        watches_compact(m);
}
