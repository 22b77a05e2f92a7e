/*
 * rpc.c: the client side of a member: connections on SRV_CLIENT_PORT carrying
 * rpc.ClientMsg / rpc.ServerMsg frames (nodes/proto/rpc.proto), replies, waiting
 * requests, the KV calls and the dispatcher (Cluster and Maintenance calls are in
 * rpc_admin.c, Watch and LeaseKeepAlive streams in rpc_stream.c). The same handlers
 * serve the cluster helper's control calls, whose answers go to a callback instead of
 * a socket (struct srv_reply).
 *
 * Reads: serializable ranges are served from the local store; linearizable ones go
 * through ReadIndex and are served once the member has applied up to the read index
 * (a member without a leader keeps retrying and fails with "request timed out", it
 * never serves stale data) — unless FL_BUG(MVCC_STALE_READ). Writes are proposed as
 * Raft entries and answered when applied (apply.c). Errors carry the exact etcd text
 * and gRPC code (nodes/proto/errors.h). */
#include "nodes/proto/codec.h"
#include "harness/common/lower_bound.h"
#include "nodes/server/convert.h"
#include "nodes/server/srv_int.h"

#include <inttypes.h>

#define READ_RETRY_TICKS 5 /* etcd resends ReadIndex every 500 ms */

/* ---- replies ------------------------------------------------------------------- */

void srv_header_fill(struct srv_member *m, Rpc__ResponseHeader *h)
{
    h->cluster_id = m->cluster_id;
    h->member_id = m->id;
    h->revision = mvcc_current_rev(m->kv);
    h->raft_term = m->app.applied_term; /* etcd's header.fill: s.Term(), the applied term */
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
        fl_buf_reset(&m->scratch);
        size_t n = rpc_server_msg_encode(msg, &m->scratch);
        env_send(m->env, reply->sock, m->scratch.data, n);
    }
    if (msg->header == &hdr)
        msg->header = NULL;
}

void srv_reply_status(struct srv_member *m, const struct srv_reply *reply, int method, int code,
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
    srv_reply_status(m, reply, method, rpc_err_code(err), rpc_err_text(err), false);
}

void srv_reply_mvcc_error(struct srv_member *m, const struct srv_reply *reply, int method,
                          enum mvcc_err err)
{
    srv_reply_status(m, reply, method, (int)mvcc_err_code(err), mvcc_err_text(err), false);
}

/* ---- waiters ------------------------------------------------------------------- */

struct srv_waiter *srv_waiter_add(struct srv_member *m, enum srv_wait_kind kind,
                                  const struct srv_reply *reply, Rpc__ClientMsg *req)
{
    /* not FL_GROW_ZERO: one waiter per request, and its out-of-line zeroing (a call,
     * a memset of variable size) costs more than this clear of constant size */
    FL_GROW(m->req.waiters, m->req.cap_waiters, m->req.n_waiters + 1, 64);
    struct srv_waiter *wt = &m->req.waiters[m->req.n_waiters++];
    memset(wt, 0, sizeof *wt);
    wt->id = m->req.next_req_id++;
    wt->kind = kind;
    wt->reply = *reply;
    wt->req = req;
    wt->deadline_ns = srv_member_now(m) + srv_member_request_timeout_ns(m);
    return wt;
}

/* Waiters are kept in id order (ids only grow), so lookups are binary searches. */
struct srv_waiter *srv_waiter_find(struct srv_member *m, uint64_t id)
{
    size_t lo;
    FL_LOWER_BOUND(lo, m->req.n_waiters, mid, m->req.waiters[mid].id < id);
    if (lo < m->req.n_waiters && m->req.waiters[lo].id == id && !m->req.waiters[lo].dead)
        return &m->req.waiters[lo];
    return NULL;
}

void srv_waiter_done(struct srv_member *m, struct srv_waiter *wt)
{
    (void)m;
    wt->dead = true;
    if (wt->req) {
        srv_pb_free_owned(wt->req);
        wt->req = NULL;
    }
}

void srv_waiters_sweep(struct srv_member *m)
{
    size_t k = 0;
    for (size_t i = 0; i < m->req.n_waiters; i++)
        if (!m->req.waiters[i].dead)
            m->req.waiters[k++] = m->req.waiters[i];
    m->req.n_waiters = k;
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

/* A client request goes into the log as [SRV_ENTRY_CLIENT][u64 id][u64 origin]
 * [u8 method][u8 request case] and the bytes of the request message itself (a
 * PutRequest, a TxnRequest...), not the whole rpc.ClientMsg: every member decodes
 * one small message per entry instead of the 26-field envelope around it. Those bytes
 * are the ones the client's frame carried (its body, kept by srv_req_decode), not
 * packed again, unless the member changed the request after decoding it (a lease
 * grant's ID) or it came without them. */
static int propose_client(struct srv_member *m, struct srv_waiter *wt)
{
    const Rpc__ClientMsg *req = wt->req;
    const ProtobufCFieldDescriptor *fd =
        protobuf_c_message_descriptor_get_field(&rpc__client_msg__descriptor, req->req_case);
    FL_ASSERT(fd && fd->type == PROTOBUF_C_TYPE_MESSAGE);
    FL_ASSERT(req->method <= UINT8_MAX && req->req_case <= UINT8_MAX);
    const ProtobufCMessage *sub = *(ProtobufCMessage *const *)((const char *)req + fd->offset);
    ProtobufCBinaryData body = srv_pb_owned_kept(req);
    bool reuse = body.data && sub && req->req_case != RPC__CLIENT_MSG__REQ_LEASE_GRANT;
    size_t n = reuse ? body.len : sub ? protobuf_c_message_get_packed_size(sub) : 0;
    struct fl_buf *b = &m->scratch;
    fl_buf_reset(b);
    fl_buf_reserve(b, SRV_ENTRY_CLIENT_HDR + n);
    b->data[0] = SRV_ENTRY_CLIENT;
    for (int i = 0; i < 8; i++) {
        b->data[1 + i] = (uint8_t)(wt->id >> (8 * i));
        b->data[9 + i] = (uint8_t)(m->id >> (8 * i));
    }
    b->data[17] = (uint8_t)req->method;
    b->data[18] = (uint8_t)req->req_case;
    if (reuse)
        memcpy(b->data + SRV_ENTRY_CLIENT_HDR, body.data, n);
    else if (sub)
        protobuf_c_message_pack(sub, b->data + SRV_ENTRY_CLIENT_HDR);
    return raft_propose(m->raft, b->data, SRV_ENTRY_CLIENT_HDR + n, NULL);
}

/* etcd's maxGapBetweenApplyAndCommitIndex: a member too far behind in applying
 * refuses new proposals. */
#define SRV_MAX_APPLY_GAP 5000

void srv_rpc_write(struct srv_member *m, const struct srv_reply *reply, Rpc__ClientMsg *req)
{
    const struct srv_config *c = srv_member_config(m);
    if (raft_commit_index(m->raft) > m->app.applied + SRV_MAX_APPLY_GAP) {
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
        req->lease_grant->id = (int64_t)(env_rand_u64(m->env) >> 1 | UINT64_C(1));
    }
    struct srv_waiter *wt = srv_waiter_add(m, SRV_WAIT_PROPOSAL, reply, req);
    int err = propose_client(m, wt);
    if (err == FL_ENOENT || err == FL_EBUSY)
        wt->kind = SRV_WAIT_LEADER; /* retried on every tick until the timeout */
    srv_member_process(m);
    return;
out:
    srv_pb_free_owned(req);
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
        srv_pb_free_owned(req);
        return;
    }
    struct srv_waiter *wt = srv_waiter_add(m, SRV_WAIT_READ, reply, req);
    wt->read_index = 0;
    if (raft_read_index(m->raft, wt->id) != FL_OK)
        wt->read_index = UINT64_MAX; /* not issued: retried on the next tick */
    srv_member_process(m);
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
    /* Any int32 arrives off the wire as a method: one the protocol does not know is
     * refused before a log entry would keep it (in one byte). Fuzz finding: method
     * 339 on a PutRequest aborted the member at propose_client's assertion. */
    if (!protobuf_c_enum_descriptor_get_value(&rpc__method__descriptor, method)) {
        srv_reply_status(m, reply, RPC__METHOD__METHOD_NONE, RPC_CODE_UNIMPLEMENTED,
                         "unknown method", false);
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
        srv_reply_status(m, reply, method, rpc_err_code(RPC_ERR_NO_LEADER),
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
        srv_rpc_write(m, reply, req);
        return;
    case RPC__CLIENT_MSG__REQ_WATCH:
        srv_watch_handle(m, reply, req);
        break;
    case RPC__CLIENT_MSG__REQ_LEASE_KEEPALIVE:
        srv_keepalive_handle(m, reply, req);
        return;
    case RPC__CLIENT_MSG__REQ_LEASE_TTL:
        srv_admin_lease_ttl(m, reply, req);
        return;
    case RPC__CLIENT_MSG__REQ_MEMBER_LIST:
        srv_admin_member_list(m, reply, method);
        break;
    case RPC__CLIENT_MSG__REQ_MEMBER_ADD:
    case RPC__CLIENT_MSG__REQ_MEMBER_REMOVE:
    case RPC__CLIENT_MSG__REQ_MEMBER_PROMOTE:
        srv_admin_member(m, reply, req);
        return;
    case RPC__CLIENT_MSG__REQ_MOVE_LEADER:
        srv_admin_move_leader(m, reply, req);
        return;
    case RPC__CLIENT_MSG__REQ_STATUS:
        srv_admin_status(m, reply, method);
        break;
    case RPC__CLIENT_MSG__REQ_DEFRAGMENT:
        srv_admin_defrag(m, reply, method);
        break;
    case RPC__CLIENT_MSG__REQ_ALARM:
        srv_admin_alarm(m, reply, req);
        return;
    case RPC__CLIENT_MSG__REQ_HASH_KV:
        srv_admin_hash_kv(m, reply, req);
        break;
    case RPC__CLIENT_MSG__REQ_SNAPSHOT:
        srv_admin_snapshot(m, reply, method);
        break;
    default:
        if (req->close_stream) {
            struct srv_watch *wa = srv_watch_by_call(m, reply->sock, req->call_id);
            if (wa)
                srv_watch_end(m, wa, RPC_ERR_NONE);
            for (size_t i = 0; i < m->streams.n_kas; i++)
                if (m->streams.kas[i].sock == reply->sock &&
                    m->streams.kas[i].call_id == req->call_id)
                    m->streams.kas[i].active = false;
            break;
        }
        srv_reply_status(m, reply, method, RPC_CODE_UNIMPLEMENTED, "unknown method", false);
        break;
    }
free_req:
    srv_pb_free_owned(req);
}

/* ---- connections --------------------------------------------------------------- */

static bool blocked(struct srv_member *m)
{
    return m->maint.blocked_until_ns > 0 && srv_member_now(m) < m->maint.blocked_until_ns;
}

static void defer_frame(struct srv_member *m, env_sock s, const uint8_t *p, size_t n)
{
    if (m->maint.n_deferred == m->maint.cap_deferred) {
        m->maint.cap_deferred = fl_grow_cap(m->maint.cap_deferred, m->maint.n_deferred + 1, 16,
                                            sizeof *m->maint.deferred);
        m->maint.deferred =
            fl_realloc(m->maint.deferred, m->maint.cap_deferred * sizeof *m->maint.deferred);
        m->maint.deferred_sock =
            fl_realloc(m->maint.deferred_sock, m->maint.cap_deferred * sizeof(env_sock));
    }
    fl_buf_init(&m->maint.deferred[m->maint.n_deferred]);
    fl_buf_append(&m->maint.deferred[m->maint.n_deferred], p, n);
    m->maint.deferred_sock[m->maint.n_deferred] = s;
    m->maint.n_deferred++;
}

static void *req_decode(ProtobufCAllocator *a, size_t n, const uint8_t *p,
                        ProtobufCBinaryData *kept)
{
    return rpc_client_msg_decode_body(a, n, p, kept);
}

Rpc__ClientMsg *srv_req_decode(struct fl_arena_pool *pool, size_t n, const uint8_t *p)
{
    return srv_pb_decode_owned(pool, req_decode, sizeof(Rpc__ClientMsg), n, p);
}

static void handle_frame(struct srv_member *m, env_sock s, const uint8_t *p, size_t n)
{
    Rpc__ClientMsg *req = srv_req_decode(srv_host_pb_pool(m->host), n, p);
    if (!req)
        return;
    const struct srv_config *c = srv_member_config(m);
    if (c->max_request_bytes > 0 && n > c->max_request_bytes &&
        req->req_case != RPC__CLIENT_MSG__REQ_PING) {
        struct srv_reply r = {s, req->call_id, NULL, NULL};
        srv_reply_error(m, &r, req->method, RPC_ERR_REQUEST_TOO_LARGE);
        srv_pb_free_owned(req);
        return;
    }
    /* A defrag holds the backend: every call but pings and status waits for it. */
    if (blocked(m) && req->req_case != RPC__CLIENT_MSG__REQ_PING &&
        req->req_case != RPC__CLIENT_MSG__REQ_STATUS) {
        srv_pb_free_owned(req);
        defer_frame(m, s, p, n);
        return;
    }
    struct srv_reply reply = {s, req->call_id, NULL, NULL};
    srv_rpc_handle(m, &reply, req);
}

void srv_rpc_replay_deferred(struct srv_member *m)
{
    size_t n = m->maint.n_deferred;
    struct fl_buf *bufs = m->maint.deferred;
    env_sock *socks = m->maint.deferred_sock;
    m->maint.deferred = NULL;
    m->maint.deferred_sock = NULL;
    m->maint.n_deferred = m->maint.cap_deferred = 0;
    for (size_t i = 0; i < n; i++) {
        if (!m->stopping && env_sock_open(m->env, socks[i]))
            handle_frame(m, socks[i], bufs[i].data, bufs[i].len);
        fl_buf_close(&bufs[i]);
    }
    free(bufs);
    free(socks);
    srv_watch_drain(m);
}

static void on_client_message(void *ctx, env_sock s, const uint8_t *p, size_t n)
{
    struct srv_member *m = ctx;
    if (m->stopping)
        return;
    handle_frame(m, s, p, n);
}

static void on_client_close(void *ctx, env_sock s, int reason)
{
    (void)reason;
    struct srv_member *m = ctx;
    srv_watches_close_sock(m, s);
    for (size_t i = 0; i < m->streams.n_kas; i++)
        if (m->streams.kas[i].sock == s)
            m->streams.kas[i].active = false;
    for (size_t i = 0; i < m->net.n_conns; i++)
        if (m->net.conns[i].sock == s)
            m->net.conns[i].open = false;
}

static void on_client_accept(void *ctx, env_sock s, int peer)
{
    (void)peer;
    struct srv_member *m = ctx;
    env_sock_bind(m->env, s, &m->net.client_cb);
    size_t k = 0;
    for (size_t i = 0; i < m->net.n_conns; i++)
        if (m->net.conns[i].open)
            m->net.conns[k++] = m->net.conns[i];
    m->net.n_conns = k;
    FL_GROW(m->net.conns, m->net.cap_conns, m->net.n_conns + 1, 16);
    m->net.conns[m->net.n_conns].sock = s;
    m->net.conns[m->net.n_conns].open = true;
    m->net.n_conns++;
}

void srv_rpc_cb_init(struct srv_member *m)
{
    m->net.client_cb = (struct env_sock_cb){NULL, on_client_message, on_client_close, m};
}

int srv_rpc_listen(struct srv_member *m)
{
    return env_listen(m->env, SRV_CLIENT_PORT, on_client_accept, m);
}

void srv_rpc_close_all(struct srv_member *m)
{
    for (size_t i = 0; i < m->net.n_conns; i++)
        if (m->net.conns[i].open)
            env_close(m->env, m->net.conns[i].sock);
    m->net.n_conns = 0;
    env_unlisten(m->env, SRV_CLIENT_PORT);
}

/* ---- timers and apply hooks ----------------------------------------------------- */

static void serve_ready_reads(struct srv_member *m)
{
    if (!m->req.reads_ready)
        return;
    m->req.reads_ready = false;
    for (size_t i = 0; i < m->req.n_waiters; i++) {
        struct srv_waiter *wt = &m->req.waiters[i];
        if (wt->dead || wt->kind != SRV_WAIT_READ || !wt->read_ready)
            continue;
        if (wt->read_index > m->app.applied) {
            m->req.reads_ready = true; /* look again after the next apply */
            continue;
        }
        srv_rpc_serve_read(m, &wt->reply, wt->req);
        srv_waiter_done(m, wt);
    }
}

void srv_rpc_after_apply(struct srv_member *m)
{
    serve_ready_reads(m);
    srv_watch_drain(m);
}

void srv_rpc_leader_changed(struct srv_member *m)
{
    uint64_t leader = raft_leader(m->raft);
    for (size_t i = 0; i < m->req.n_waiters; i++) {
        struct srv_waiter *wt = &m->req.waiters[i];
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
    for (size_t i = 0; i < m->req.n_waiters; i++) {
        struct srv_waiter *wt = &m->req.waiters[i];
        if (wt->dead)
            continue;
        if (now >= wt->deadline_ns) {
            if (wt->kind == SRV_WAIT_RENEW) {
                srv_keepalive_timeout(m, wt);
                continue;
            }
            srv_reply_error(m, &wt->reply, wt->req ? (int)wt->req->method : 0, timeout_error(wt));
            srv_waiter_done(m, wt);
            continue;
        }
        if (wt->kind == SRV_WAIT_RENEW) {
            srv_keepalive_forward(m, wt);
            continue;
        }
        if (wt->kind == SRV_WAIT_LEADER && raft_leader(m->raft) != RAFT_NONE) {
            if (propose_client(m, wt) == FL_OK)
                wt->kind = SRV_WAIT_PROPOSAL;
        } else if (wt->kind == SRV_WAIT_READ && !wt->read_ready &&
                   (wt->read_index == UINT64_MAX || m->soft.ticks % READ_RETRY_TICKS == 0)) {
            wt->read_index = raft_read_index(m->raft, wt->id) == FL_OK ? 0 : UINT64_MAX;
        }
    }
    srv_waiters_sweep(m);
}

static void tick_streams(struct srv_member *m)
{
    const struct srv_config *c = srv_member_config(m);
    int64_t limit = 3 * FL_MAX(1, c->election_ms / c->heartbeat_ms);
    if (m->soft.no_leader_ticks < limit)
        return;
    /* etcd cancels require_leader streams after 3 election timeouts without leader. */
    srv_watches_no_leader(m);
    for (size_t i = 0; i < m->streams.n_kas; i++) {
        struct srv_ka_stream *ka = &m->streams.kas[i];
        if (ka->active && ka->require_leader) {
            ka->active = false;
            struct srv_reply r = {ka->sock, ka->call_id, NULL, NULL};
            srv_reply_status(m, &r, RPC__METHOD__METHOD_LEASE_KEEPALIVE,
                             rpc_err_code(RPC_ERR_NO_LEADER), rpc_err_text(RPC_ERR_NO_LEADER),
                             true);
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
        m->soft.last_leader_contact_ns = now;
    /* Leases: only the leader expires them, through Raft. */
    int64_t ids[64];
    size_t n = mvcc_lease_expired(m->kv, now, ids, FL_ARRAY_LEN(ids));
    for (size_t i = 0; i < n; i++) {
        Raftpb__InternalRequest ir = RAFTPB__INTERNAL_REQUEST__INIT;
        ir.kind = RAFTPB__INTERNAL_KIND__INTERNAL_LEASE_REVOKE;
        ir.lease_id = ids[i];
        srv_propose(m, &ir);
    }
}

/* Auto compaction on every member: the policy math is mvcc's and keeps its phase from
 * the member's start; it is paused except on the leader, which proposes. Its time is
 * the member's own clock (etcd's compactor reads its process's clock), so a skewed
 * member compacts early or late. */
static void tick_autocompact(struct srv_member *m)
{
    int64_t now = srv_member_now(m);
    if (now < mvcc_autocompact_next_ns(&m->maint.ac))
        return;
    int64_t rev = mvcc_autocompact_step(&m->maint.ac, now, mvcc_current_rev(m->kv));
    if (rev <= 0 || rev <= mvcc_compact_rev(m->kv))
        return;
    FL_ASSERT(m->soft.role == RAFT_LEADER);
    Raftpb__InternalRequest ir = RAFTPB__INTERNAL_REQUEST__INIT;
    ir.kind = RAFTPB__INTERNAL_KIND__INTERNAL_COMPACT;
    ir.revision = rev;
    if (srv_propose(m, &ir) != FL_OK)
        mvcc_autocompact_failed(&m->maint.ac, now);
}

void srv_rpc_tick(struct srv_member *m)
{
    int64_t now = srv_member_now(m);
    const struct srv_config *c = srv_member_config(m);
    tick_waiters(m, now);
    tick_streams(m);
    tick_leader(m, now);
    tick_autocompact(m);
    if (!blocked(m)) {
        mvcc_watch_sync(m->kv);
        if (c->progress_notify_ms > 0 &&
            now - m->maint.last_progress_ns >= c->progress_notify_ms * FL_MS) {
            m->maint.last_progress_ns = now;
            mvcc_watch_progress_all(m->kv);
        }
        srv_watch_drain(m);
    }
    srv_watches_compact(m);
}
