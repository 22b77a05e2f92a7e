/*
 * rpc_stream.c: the streams of a member: watches (create, cancel, requested progress,
 * events pushed as responses in store order, require_leader cancellation) and lease
 * keep-alives (served by the leader's lessor, forwarded by a follower over the peer
 * connection). Called from rpc.c.
 *
 * A member's watches sit in one array in ascending mvcc id (the store's ids only
 * grow, and compaction keeps the order), so a drained response finds its watch by a
 * binary search; a table keyed by (connection, call id) finds the watch a cancel or
 * progress request names. Ended watches stay in the array until they outnumber the
 * active ones, then one compaction drops them: every operation costs work in the
 * watches it concerns, and iterations see active watches in creation order.
 */
#include "harness/common/lower_bound.h"
#include "nodes/server/convert.h"
#include "nodes/server/srv_int.h"

/* ---- watch streams ------------------------------------------------------------- */

/* Any watch (active or not) with this mvcc id, by binary search. */
static struct srv_watch *watch_find(struct srv_member *m, int64_t id)
{
    m->streams.watch_steps++;
    size_t lo;
    FL_LOWER_BOUND(lo, m->streams.n_watches, mid, m->streams.watches[mid].mvcc_id < id);
    return lo < m->streams.n_watches && m->streams.watches[lo].mvcc_id == id
               ? &m->streams.watches[lo]
               : NULL;
}

static struct srv_watch *watch_by_mvcc(struct srv_member *m, int64_t id)
{
    struct srv_watch *wa = watch_find(m, id);
    return wa && wa->active ? wa : NULL;
}

static size_t call_hash(env_sock s, uint64_t call_id)
{
    uint64_t h = (s + 0x9e3779b97f4a7c15ULL) * 0xbf58476d1ce4e5b9ULL;
    h ^= (call_id + (h >> 31)) * 0x94d049bb133111ebULL;
    return (size_t)(h ^ (h >> 29));
}

static void call_slot_put(struct srv_member *m, env_sock s, uint64_t call_id, int64_t mvcc_id)
{
    size_t mask = m->streams.watch_calls_cap - 1;
    size_t i = call_hash(s, call_id) & mask;
    while (m->streams.watch_calls[i].mvcc_id != 0)
        i = (i + 1) & mask;
    m->streams.watch_calls[i] = (struct srv_watch_slot){s, call_id, mvcc_id};
    m->streams.watch_calls_used++;
}

/* Rebuilds the (sock, call_id) table from the active watches, with room for want. */
static void call_table_rebuild(struct srv_member *m, size_t want)
{
    size_t cap = fl_grow_cap(0, 2 * want, 16, sizeof(*m->streams.watch_calls));
    free(m->streams.watch_calls);
    m->streams.watch_calls = fl_calloc(cap, sizeof(*m->streams.watch_calls));
    m->streams.watch_calls_cap = cap;
    m->streams.watch_calls_used = 0;
    for (size_t i = 0; i < m->streams.n_watches; i++) {
        const struct srv_watch *wa = &m->streams.watches[i];
        if (wa->active)
            call_slot_put(m, wa->sock, wa->call_id, wa->mvcc_id);
    }
}

/* The active watch of (s, call_id) with the lowest mvcc id, as the scan in creation
 * order found. Entries of ended watches stay until the next rebuild and are skipped. */
struct srv_watch *srv_watch_by_call(struct srv_member *m, env_sock s, uint64_t call_id)
{
    if (m->streams.watch_calls_cap == 0)
        return NULL;
    size_t mask = m->streams.watch_calls_cap - 1;
    struct srv_watch *best = NULL;
    for (size_t i = call_hash(s, call_id) & mask; m->streams.watch_calls[i].mvcc_id != 0;
         i = (i + 1) & mask) {
        const struct srv_watch_slot *e = &m->streams.watch_calls[i];
        m->streams.watch_steps++;
        if (e->sock != s || e->call_id != call_id)
            continue;
        struct srv_watch *wa = watch_by_mvcc(m, e->mvcc_id);
        if (wa && (!best || wa->mvcc_id < best->mvcc_id))
            best = wa;
    }
    return best;
}

static void watch_deactivate(struct srv_member *m, struct srv_watch *wa)
{
    if (!wa->active)
        return;
    wa->active = false;
    FL_ASSERT(m->streams.active_watches > 0);
    m->streams.active_watches--;
}

void srv_watch_end(struct srv_member *m, struct srv_watch *wa, enum rpc_err_id err)
{
    if (!wa->active)
        return;
    watch_deactivate(m, wa);
    mvcc_watch_cancel(m->kv, wa->mvcc_id);
    if (err != RPC_ERR_NONE && env_sock_open(m->env, wa->sock)) {
        struct srv_reply r = {wa->sock, wa->call_id, NULL, NULL};
        srv_reply_status(m, &r, RPC__METHOD__METHOD_WATCH, rpc_err_code(err), rpc_err_text(err),
                         true);
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
        watch_deactivate(m, wa);
    }
    struct srv_reply r = {wa->sock, wa->call_id, NULL, NULL};
    srv_reply_send(m, &r, &msg);
    srv_arena_free(&a);
}

static void on_watch_hold_end(void *ctx)
{
    struct srv_member *m = ctx;
    m->streams.watch_held_until_ns = 0;
    srv_watch_drain(m);
}

/* Sends every queued watch response in store order. The failpoint watch/before_send
 * is checked before each one: "crash" kills the member there; "delay" models a slow
 * watch stream (etcd: the stream's send buffer is full and the watcher waits as a
 * victim) by leaving the responses queued in the store for the delay, while new
 * events keep queuing behind them. */
void srv_watch_drain(struct srv_member *m)
{
    int64_t now = srv_member_now(m);
    if (m->maint.blocked_until_ns > now || m->streams.watch_held_until_ns > now)
        return;
    struct mvcc_watch_resp wr;
    while (mvcc_watch_pending(m->kv) > 0) {
        struct env_fault_hit hit;
        enum env_fault f = env_failpoint(m->env, FLT_WATCH_BEFORE_SEND, &hit);
        if (f == ENV_FAULT_CRASH)
            return;
        if (f == ENV_FAULT_DELAY && hit.delay_ns > 0) {
            m->streams.watch_held_until_ns = now + hit.delay_ns;
            if (!env_timer_active(&m->streams.watch_hold_timer))
                env_timer_start(m->env, &m->streams.watch_hold_timer, hit.delay_ns,
                                on_watch_hold_end, m);
            return;
        }
        if (!mvcc_watch_pop(m->kv, &wr))
            break;
        struct srv_watch *wa = watch_by_mvcc(m, wr.watch_id);
        if (wa)
            watch_send(m, wa, &wr, false);
        mvcc_watch_resp_free(&wr);
    }
}

void srv_watch_handle(struct srv_member *m, const struct srv_reply *reply,
                      const Rpc__ClientMsg *req)
{
    const Rpc__WatchRequest *wr = req->watch;
    if (req->close_stream || !wr) {
        struct srv_watch *wa = srv_watch_by_call(m, reply->sock, req->call_id);
        if (wa)
            srv_watch_end(m, wa, RPC_ERR_NONE);
        return;
    }
    if (wr->request_union_case == RPC__WATCH_REQUEST__REQUEST_UNION_PROGRESS_REQUEST) {
        struct srv_watch *wa = srv_watch_by_call(m, reply->sock, req->call_id);
        if (wa)
            mvcc_watch_request_progress(m->kv, wa->mvcc_id);
        srv_watch_drain(m);
        return;
    }
    if (wr->request_union_case == RPC__WATCH_REQUEST__REQUEST_UNION_CANCEL_REQUEST) {
        struct srv_watch *wa = srv_watch_by_call(m, reply->sock, req->call_id);
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
        srv_reply_status(m, reply, req->method, (int)mvcc_err_code(err), mvcc_err_text(err), true);
        return;
    }
    FL_GROW(m->streams.watches, m->streams.cap_watches, m->streams.n_watches + 1, 16);
    FL_ASSERT(m->streams.n_watches == 0 ||
              m->streams.watches[m->streams.n_watches - 1].mvcc_id < id);
    struct srv_watch *wa = &m->streams.watches[m->streams.n_watches++];
    wa->mvcc_id = id;
    wa->sock = reply->sock;
    wa->call_id = req->call_id;
    wa->require_leader = req->require_leader;
    wa->active = true;
    wa->start_rev = q.start_rev > 0 ? q.start_rev : hrev + 1;
    m->streams.active_watches++;
    if (2 * (m->streams.watch_calls_used + 1) > m->streams.watch_calls_cap)
        call_table_rebuild(m, 2 * m->streams.active_watches); /* wa is in it */
    else
        call_slot_put(m, wa->sock, wa->call_id, id);
    struct mvcc_watch_resp c;
    memset(&c, 0, sizeof c);
    c.watch_id = id;
    c.header_rev = hrev;
    watch_send(m, wa, &c, true);
    mvcc_watch_sync(m->kv);
    srv_watch_drain(m);
}

/* Drops ended watches once they outnumber the active ones (amortised O(1) an end). */
void srv_watches_compact(struct srv_member *m)
{
    size_t ended = m->streams.n_watches - m->streams.active_watches;
    if (m->streams.n_watches <= 64 || ended <= m->streams.active_watches)
        return;
    m->streams.watch_steps += m->streams.n_watches;
    size_t k = 0;
    for (size_t i = 0; i < m->streams.n_watches; i++)
        if (m->streams.watches[i].active)
            m->streams.watches[k++] = m->streams.watches[i];
    FL_ASSERT(k == m->streams.active_watches);
    m->streams.n_watches = k;
    call_table_rebuild(m, 2 * k);
}

void srv_watches_close_sock(struct srv_member *m, env_sock s)
{
    m->streams.watch_steps += m->streams.n_watches;
    for (size_t i = 0; i < m->streams.n_watches; i++)
        if (m->streams.watches[i].sock == s)
            srv_watch_end(m, &m->streams.watches[i], RPC_ERR_NONE);
}

void srv_watches_no_leader(struct srv_member *m)
{
    m->streams.watch_steps += m->streams.n_watches;
    for (size_t i = 0; i < m->streams.n_watches; i++)
        if (m->streams.watches[i].active && m->streams.watches[i].require_leader)
            srv_watch_end(m, &m->streams.watches[i], RPC_ERR_NO_LEADER);
}

/* ---- lease keep-alive streams -------------------------------------------------- */

static void ka_reply(struct srv_member *m, env_sock s, uint64_t call_id, int64_t id, int64_t ttl)
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

void srv_keepalive_handle(struct srv_member *m, const struct srv_reply *reply, Rpc__ClientMsg *req)
{
    struct srv_ka_stream *ka = NULL;
    for (size_t i = 0; i < m->streams.n_kas; i++)
        if (m->streams.kas[i].active && m->streams.kas[i].sock == reply->sock &&
            m->streams.kas[i].call_id == req->call_id)
            ka = &m->streams.kas[i];
    if (req->close_stream) {
        if (ka)
            ka->active = false;
        srv_pb_free_owned(req);
        return;
    }
    if (!ka) {
        FL_GROW(m->streams.kas, m->streams.cap_kas, m->streams.n_kas + 1, 8);
        ka = &m->streams.kas[m->streams.n_kas++];
        ka->sock = reply->sock;
        ka->call_id = req->call_id;
        ka->require_leader = req->require_leader;
        ka->active = true;
    }
    if (!req->lease_keepalive) {
        srv_pb_free_owned(req);
        return;
    }
    int64_t id = req->lease_keepalive->id;
    if (raft_role(m->raft) == RAFT_LEADER) {
        int64_t ttl = 0;
        enum mvcc_err err = mvcc_lease_renew(m->kv, id, srv_member_now(m), &ttl);
        ka_reply(m, reply->sock, req->call_id, id, err == MVCC_OK ? ttl : 0);
        srv_pb_free_owned(req);
        return;
    }
    /* etcd (LeaseRenew on a follower): wait for a leader and forward to it, again and
     * again, until it answers or the request times out. */
    struct srv_waiter *wt = srv_waiter_add(m, SRV_WAIT_RENEW, reply, req);
    srv_keepalive_forward(m, wt);
}

#define RENEW_RESEND_NS (500 * FL_MS)

/* A forwarded TimeToLive travels as a LeaseRenew with ttl = RENEW_TTL_QUERY: the
 * leader answers the remaining TTL without renewing. */
#define RENEW_TTL_QUERY (-1)

static bool is_ttl_query(const struct srv_waiter *wt)
{
    return wt->req && wt->req->req_case == RPC__CLIENT_MSG__REQ_LEASE_TTL;
}

void srv_keepalive_forward(struct srv_member *m, struct srv_waiter *wt)
{
    int64_t now = srv_member_now(m);
    bool query = is_ttl_query(wt);
    int64_t id = query ? wt->req->lease_ttl->id : wt->req->lease_keepalive->id;
    if (raft_role(m->raft) == RAFT_LEADER) {
        if (query) {
            srv_lease_ttl_reply(m, &wt->reply, wt->req->method, id, wt->req->lease_ttl->keys, -2);
        } else {
            int64_t ttl = 0;
            enum mvcc_err err = mvcc_lease_renew(m->kv, id, now, &ttl);
            ka_reply(m, wt->reply.sock, wt->reply.call_id, id, err == MVCC_OK ? ttl : 0);
        }
        srv_waiter_done(m, wt);
        return;
    }
    uint64_t leader = raft_leader(m->raft);
    if (leader == RAFT_NONE || (leader == wt->fwd_to && now - wt->fwd_ns < RENEW_RESEND_NS))
        return;
    Raftpb__LeaseRenew lr = RAFTPB__LEASE_RENEW__INIT;
    lr.req_id = wt->id;
    lr.lease_id = id;
    lr.ttl = query ? RENEW_TTL_QUERY : 0;
    wt->fwd_to = leader;
    wt->fwd_ns = now;
    srv_peer_send_renew(m, leader, &lr);
}

void srv_keepalive_timeout(struct srv_member *m, struct srv_waiter *wt)
{
    if (is_ttl_query(wt)) {
        srv_reply_error(m, &wt->reply, wt->req->method, RPC_ERR_TIMEOUT);
        srv_waiter_done(m, wt);
        return;
    }
    for (size_t i = 0; i < m->streams.n_kas; i++) {
        struct srv_ka_stream *ka = &m->streams.kas[i];
        if (ka->active && ka->sock == wt->reply.sock && ka->call_id == wt->reply.call_id)
            ka->active = false;
    }
    if (env_sock_open(m->env, wt->reply.sock)) {
        struct srv_reply r = {wt->reply.sock, wt->reply.call_id, NULL, NULL};
        srv_reply_status(m, &r, RPC__METHOD__METHOD_LEASE_KEEPALIVE, rpc_err_code(RPC_ERR_TIMEOUT),
                         rpc_err_text(RPC_ERR_TIMEOUT), true);
    }
    srv_waiter_done(m, wt);
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
        } else if (lr->ttl == RENEW_TTL_QUERY) {
            struct mvcc_lease_info li;
            if (mvcc_lease_ttl(m->kv, lr->lease_id, srv_member_now(m), false, &li) == MVCC_OK) {
                ans.ttl = li.ttl_s > 0 ? li.ttl_s : 0;
                mvcc_lease_info_free(&li);
            }
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
    if (lr->not_leader) {
        wt->fwd_to = 0; /* it lost leadership: forward again once a leader is known */
        srv_keepalive_forward(m, wt);
        return;
    }
    if (is_ttl_query(wt))
        srv_lease_ttl_reply(m, &wt->reply, wt->req->method, lr->lease_id, wt->req->lease_ttl->keys,
                            lr->ttl > 0 ? lr->ttl : -1);
    else
        ka_reply(m, wt->reply.sock, wt->reply.call_id, lr->lease_id, lr->ttl);
    srv_waiter_done(m, wt);
}

void srv_watches_rewind(struct srv_member *m)
{
    for (size_t i = 0; i < m->streams.n_watches; i++)
        if (m->streams.watches[i].active)
            mvcc_watch_rewind(m->kv, m->streams.watches[i].mvcc_id,
                              m->streams.watches[i].start_rev);
}
