/*
 * client.c: the client object, its connections (dial, keepalive pings, health
 * probes) and the unary call machinery with clientv3's retry interceptor
 * (etcd-facts §C.1). The balancer decisions live in lb.c; this file only carries
 * them out over the node environment's connections and timers (nodes/env/env.h;
 * client_sim.c builds a client on a simulated world) and feeds the outcomes back.
 *
 * A unary call: kvc_call copies and encodes the request, arms the call's deadline
 * and starts it from a zero-delay timer (a callback never runs inside kvc_call).
 * An attempt goes to the endpoint lb_pick names; with none ready the call waits,
 * as gRPC's WaitForReady does. A failed attempt is retried when rpc_err_retry_safe
 * says so, after the round-robin quorum backoff; otherwise the call completes. A
 * call that never left the client completes `fail`; a mutating call that left and
 * got no definite answer completes `unknown`.
 *
 * Every completion reports to the observer first, then to the caller's callback.
 */
#include "nodes/proto/codec.h"
#include "nodes/client/client_int.h"
#include "harness/common/list.h"

#include "nodes/server/server.h"

#include <stdio.h>

static void kvc_call_try(struct kvc_call *call);

int64_t kvc_now(const struct kvc_client *c)
{
    return env_now_ns(c->env);
}

uint64_t kvc_new_id(struct kvc_client *c)
{
    return c->next_id++;
}

int kvc_endpoint_index(const struct kvc_client *c, int node)
{
    for (size_t i = 0; i < c->lb.n; i++) {
        if (c->eps[i].node == node)
            return (int)i;
    }
    return -1;
}

const char *kvc_method_name(enum kvc_method m)
{
    static const char *const names[KVC_METHOD_MAX + 1] = {
        "none",       "range",       "put",         "delete",        "txn",
        "compact",    "watch",       "lease_grant", "lease_revoke",  "lease_keepalive",
        "lease_ttl",  "member_list", "member_add",  "member_remove", "member_promote",
        "status",     "defragment",  "alarm",       "hash_kv",       "snapshot",
        "move_leader"};
    if ((int)m < 0 || m > KVC_METHOD_MAX)
        return "unknown";
    return names[m];
}

const char *kvc_status_name(enum kvc_status s)
{
    static const char *const names[] = {[KVC_OK] = "ok", [KVC_FAIL] = "fail"};
    return FL_ENUM_NAME(names, s, "unknown");
}

void kvc_config_default(struct kvc_config *c)
{
    memset(c, 0, sizeof(*c));
    c->id = 1;
    c->balancer = LB_ROUND_ROBIN;
    c->timeout_ms = 2000;
    c->dial_timeout_ms = 5000;
    c->keepalive_time_ms = 2000;
    c->keepalive_timeout_ms = 6000;
    c->max_unary_retries = 100;
    c->backoff_wait_ms = 25;
    c->backoff_jitter_pct = 10;
    c->probe_interval_ms = 200;
    c->health_quorum_age_ms = 500;
    c->probe_dead_ms = 2000;
    c->lease_keepalive_retry_ms = 500;
}

/* ---------------------------------------------------------------- call index -- */

/* Calls live in a list in id (= creation) order, in an id map, and in the queue their
 * state puts them in: waiting to be tried (state WAIT, no start or backoff timer), or
 * in flight on their endpoint (in the order they were sent, so the head is the
 * oldest). Dispatch, hedging and a lost connection act only on the calls of the
 * queue concerned, sorted by id: the order in which the former scan of every call
 * acted on them. */

static void kvc_calls_push(struct kvc_client *c, struct kvc_call *call)
{
    FL_ASSERT(c->calls_tail == NULL || c->calls_tail->id < call->id);
    FL_TAILQ_INSERT_TAIL(c->calls_head, c->calls_tail, call, all_prev, all_next);
    c->call_count++;
    kvc_idmap_put(&c->calls_by_id, call->id, call);
}

static void kvc_calls_remove(struct kvc_client *c, struct kvc_call *call)
{
    FL_ASSERT(c->call_count > 0 && kvc_idmap_get(&c->calls_by_id, call->id) == call);
    kvc_clist_unlink(call);
    FL_TAILQ_REMOVE(c->calls_head, c->calls_tail, call, all_prev, all_next);
    c->call_count--;
    kvc_idmap_del(&c->calls_by_id, call->id);
}

static struct kvc_call *kvc_call_find(struct kvc_client *c, uint64_t id)
{
    c->call_steps++;
    return kvc_idmap_get(&c->calls_by_id, id);
}

/* Every change of a call's state, endpoint or backoff timer ends here. */
static void kvc_call_requeue(struct kvc_call *call)
{
    struct kvc_client *c = call->c;
    kvc_clist_unlink(call);
    if (call->state == KVC_CALL_WAIT && !env_timer_active(&call->backoff_timer)) {
        FL_ASSERT(call->target >= -1 && call->target < LB_ENDPOINTS_MAX);
        kvc_clist_append(call->target >= 0 ? &c->wait_direct[call->target] : &c->wait_calls, call);
    } else if (call->state == KVC_CALL_INFLIGHT) {
        FL_ASSERT(call->ep >= 0 && (size_t)call->ep < LB_ENDPOINTS_MAX);
        kvc_clist_append(&c->inflight[call->ep], call);
    }
}

uint64_t kvc_client_call_steps(const struct kvc_client *c)
{
    return c->call_steps;
}

/* ---------------------------------------------------------------- connections - */

static void kvc_conn_on_open(void *ctx, env_sock s);
static void kvc_conn_on_message(void *ctx, env_sock s, const uint8_t *p, size_t n);
static void kvc_conn_on_close(void *ctx, env_sock s, int reason);

static void kvc_conn_cancel_timers(struct kvc_conn *cn)
{
    struct fl_env *env = cn->c->env;
    env_timer_stop(env, &cn->dial_timer);
    env_timer_stop(env, &cn->ka_timer);
    env_timer_stop(env, &cn->ka_wait_timer);
    env_timer_stop(env, &cn->probe_timer);
    cn->ping_out = false;
    cn->probe_wire = 0;
}

static void kvc_dial_timeout(void *ctx);

static void kvc_conn_dial(struct kvc_client *c, size_t i)
{
    struct kvc_conn *cn = &c->conns[i];
    FL_ASSERT(cn->state == LB_CONN_IDLE || cn->state == LB_CONN_FAILED);
    cn->sock = env_connect(c->env, c->eps[i].proc, SRV_CLIENT_PORT, &cn->cb);
    if (cn->sock == 0)
        return; /* our own process is down: nothing to do */
    cn->state = LB_CONN_CONNECTING;
    lb_on_connecting(&c->lb, i, kvc_now(c));
    c->st.dials++;
    env_timer_start(c->env, &cn->dial_timer, c->cfg.dial_timeout_ms * FL_MS, kvc_dial_timeout, cn);
}

bool kvc_conn_send(struct kvc_client *c, size_t i, const uint8_t *p, size_t n)
{
    struct kvc_conn *cn = &c->conns[i];
    if (cn->state != LB_CONN_READY)
        return false;
    return env_send(c->env, cn->sock, p, n) == FL_OK;
}

bool kvc_conn_send_msg(struct kvc_client *c, size_t i, Rpc__ClientMsg *m)
{
    m->client_id = (uint32_t)c->cfg.id;
    size_t len;
    uint8_t *buf = kvc_encode_msg(m, &len);
    bool ok = kvc_conn_send(c, i, buf, len);
    free(buf);
    return ok;
}

void kvc_conn_stream_attach(struct kvc_client *c, size_t i)
{
    c->conns[i].streams++;
}

void kvc_conn_stream_detach(struct kvc_client *c, size_t i)
{
    FL_ASSERT(c->conns[i].streams > 0);
    c->conns[i].streams--;
}

static void kvc_call_attempt_failed(struct kvc_call *call, int code, const char *text,
                                    bool transport, const Rpc__ServerMsg *m);

/* Tears down endpoint i's connection. why == 0: the policy no longer wants it (not
 * a failure); else the lb_fail reason. In-flight attempts there fail with
 * "transport is closing" (Unavailable), streams resume elsewhere. */
static void kvc_conn_drop(struct kvc_client *c, size_t i, int why)
{
    struct kvc_conn *cn = &c->conns[i];
    int64_t now = kvc_now(c);
    bool was_ready = cn->state == LB_CONN_READY;
    kvc_conn_cancel_timers(cn);
    if (cn->sock)
        env_close(c->env, cn->sock);
    cn->sock = 0;
    if (was_ready) {
        c->st.connections_closed++;
        c->st.connections_held--;
    }
    if (why == 0) {
        cn->state = LB_CONN_IDLE;
        lb_on_idle(&c->lb, i);
    } else {
        cn->state = LB_CONN_FAILED;
        lb_on_fail(&c->lb, i, (enum lb_fail)why, now);
    }
    /* The connection is no longer ready, so no call can go in flight here meanwhile:
     * the ones in flight now are all there is to fail (completions may end others,
     * hence the lookups). */
    struct kvc_ids ids = {0};
    kvc_ids_push_clist(&ids, &c->inflight[i], false);
    kvc_ids_sort(&ids);
    for (size_t k = 0; k < ids.len; k++) {
        struct kvc_call *call = kvc_call_find(c, ids.p[k]);
        if (call && call->state == KVC_CALL_INFLIGHT && call->ep == (int)i)
            kvc_call_attempt_failed(call, RPC_CODE_UNAVAILABLE,
                                    rpc_err_text(RPC_ERR_TRANSPORT_CLOSING), true, NULL);
    }
    free(ids.p);
    kvc_streams_conn_lost(c, i);
}

static void kvc_dial_timeout(void *ctx)
{
    struct kvc_conn *cn = ctx;
    kvc_conn_drop(cn->c, cn->idx, LB_FAIL_CONNECT);
    kvc_reconcile(cn->c);
}

static void kvc_ka_wait_expired(void *ctx)
{
    struct kvc_conn *cn = ctx;
    cn->c->st.pings_failed++;
    kvc_conn_drop(cn->c, cn->idx, LB_FAIL_KEEPALIVE);
    kvc_reconcile(cn->c);
}

/* gRPC keepalive: every keepalive_time a ping, but only while the connection has
 * an active call or stream (PermitWithoutStream = false); no pong within
 * keepalive_timeout closes the transport. A paused member stops answering; a
 * member cut off from its peers answers (etcd#8673). */
static void kvc_ka_tick(void *ctx)
{
    struct kvc_conn *cn = ctx;
    struct kvc_client *c = cn->c;
    env_timer_start(c->env, &cn->ka_timer, c->cfg.keepalive_time_ms * FL_MS, kvc_ka_tick, cn);
    if (cn->ping_out || (cn->unary == 0 && cn->streams == 0))
        return;
    Rpc__Ping ping = RPC__PING__INIT;
    ping.seq = ++cn->ping_seq;
    Rpc__ClientMsg m = RPC__CLIENT_MSG__INIT;
    m.method = RPC__METHOD__METHOD_PING;
    m.req_case = RPC__CLIENT_MSG__REQ_PING;
    m.ping = &ping;
    if (!kvc_conn_send_msg(c, cn->idx, &m))
        return;
    c->st.pings++;
    cn->ping_out = true;
    env_timer_start(c->env, &cn->ka_wait_timer, c->cfg.keepalive_timeout_ms * FL_MS,
                    kvc_ka_wait_expired, cn);
}

/* Is an endpoint other than i healthy now? */
static bool kvc_other_healthy(const struct kvc_client *c, size_t i, int64_t now)
{
    for (size_t j = 0; j < c->lb.n; j++) {
        if (j != i && lb_healthy(&c->lb, j, now))
            return true;
    }
    return false;
}

/* health_aware: a Status call to the member every probe_interval. A member that has
 * answered none for probe_dead_ms while another is healthy is treated as gRPC
 * treats a keepalive failure: the connection is closed and the calls in flight on
 * it end (a sent write as unknown, never re-sent); a paused member then costs
 * probe_dead_ms instead of keepalive time + timeout. */
static void kvc_probe_tick(void *ctx)
{
    struct kvc_conn *cn = ctx;
    struct kvc_client *c = cn->c;
    int64_t now = kvc_now(c);
    env_timer_start(c->env, &cn->probe_timer, c->cfg.probe_interval_ms * FL_MS, kvc_probe_tick, cn);
    if (cn->probe_wire != 0) {
        if (now - cn->probe_sent_ns <= c->lb.cfg.probe_stale_ns)
            return; /* still waiting for the previous one */
        lb_on_probe_lost(&c->lb, cn->idx, now);
        if (c->cfg.probe_dead_ms > 0 && now - cn->probe_ok_ns >= c->cfg.probe_dead_ms * FL_MS &&
            !FL_BUG(CLIENT_NO_FAILOVER) && kvc_other_healthy(c, cn->idx, now)) {
            c->st.probe_drops++;
            kvc_conn_drop(c, cn->idx, LB_FAIL_KEEPALIVE);
            kvc_reconcile(c);
            return;
        }
        kvc_reconcile(c);
    }
    Rpc__StatusRequest sr = RPC__STATUS_REQUEST__INIT;
    Rpc__ClientMsg m = RPC__CLIENT_MSG__INIT;
    m.call_id = kvc_new_id(c);
    m.method = RPC__METHOD__METHOD_STATUS;
    m.req_case = RPC__CLIENT_MSG__REQ_STATUS;
    m.status = &sr;
    if (kvc_conn_send_msg(c, cn->idx, &m)) {
        cn->probe_wire = m.call_id;
        cn->probe_sent_ns = now;
        c->st.probes++;
    }
}

static void kvc_probe_answer(struct kvc_client *c, struct kvc_conn *cn, const Rpc__ServerMsg *m)
{
    int64_t now = kvc_now(c);
    cn->probe_wire = 0;
    cn->probe_ok_ns = now;
    if (m->error && m->error->code != 0) {
        lb_on_probe_lost(&c->lb, cn->idx, now);
    } else if (m->resp_case == RPC__SERVER_MSG__RESP_STATUS) {
        const Rpc__StatusResponse *s = m->status;
        lb_on_probe(&c->lb, cn->idx, now, now - cn->probe_sent_ns, s->leader != 0, s->raftterm,
                    s->quorum_contact_age_ns, s->islearner);
    }
    kvc_reconcile(c);
}

static void kvc_conn_on_open(void *ctx, env_sock s)
{
    struct kvc_conn *cn = ctx;
    struct kvc_client *c = cn->c;
    if (s != cn->sock || cn->state != LB_CONN_CONNECTING)
        return;
    env_timer_stop(c->env, &cn->dial_timer);
    cn->state = LB_CONN_READY;
    lb_on_ready(&c->lb, cn->idx, kvc_now(c));
    cn->opened++;
    c->st.connections_opened++;
    c->st.connections_held++;
    c->st.connections_held_max = FL_MAX(c->st.connections_held_max, c->st.connections_held);
    if (c->cfg.keepalive_time_ms > 0)
        env_timer_start(c->env, &cn->ka_timer, c->cfg.keepalive_time_ms * FL_MS, kvc_ka_tick, cn);
    cn->probe_ok_ns = kvc_now(c);
    if (lb_probes(&c->lb))
        env_timer_start(c->env, &cn->probe_timer, 0, kvc_probe_tick, cn);
    kvc_reconcile(c);
}

static void kvc_conn_on_close(void *ctx, env_sock s, int reason)
{
    struct kvc_conn *cn = ctx;
    if (s != cn->sock)
        return;
    cn->sock = 0; /* already dead on the sim side */
    bool dialing = cn->state == LB_CONN_CONNECTING;
    (void)reason;
    kvc_conn_drop(cn->c, cn->idx, dialing ? LB_FAIL_CONNECT : LB_FAIL_BROKEN);
    kvc_reconcile(cn->c);
}

static void kvc_call_on_response(struct kvc_call *call, const Rpc__ServerMsg *m);

static void kvc_conn_on_message(void *ctx, env_sock s, const uint8_t *p, size_t n)
{
    struct kvc_conn *cn = ctx;
    struct kvc_client *c = cn->c;
    if (s != cn->sock || cn->state != LB_CONN_READY)
        return;
    /* Decoded into the client's arena: nothing of the frame outlives this handler (a
     * handler that issues calls may see another frame handled inside it, hence the
     * depth). */
    c->arena_depth++;
    Rpc__ServerMsg *m = rpc_server_msg_decode(&c->arena.alloc, n, p);
    if (m == NULL) {
        fl_log(FL_LOG_WARN, "client %d: undecodable frame from node %d", c->cfg.id,
               c->eps[cn->idx].node);
        if (--c->arena_depth == 0)
            pb_arena_reset(&c->arena);
        return;
    }
    if (m->resp_case == RPC__SERVER_MSG__RESP_PONG) {
        if (cn->ping_out && m->pong->seq == cn->ping_seq) {
            cn->ping_out = false;
            env_timer_stop(c->env, &cn->ka_wait_timer);
        }
    } else if (cn->probe_wire != 0 && m->call_id == cn->probe_wire) {
        kvc_probe_answer(c, cn, m);
    } else if (!kvc_stream_on_msg(c, cn->idx, m)) {
        struct kvc_call *call = kvc_call_find(c, m->call_id);
        if (call && call->state == KVC_CALL_INFLIGHT && call->ep == (int)cn->idx)
            kvc_call_on_response(call, m);
    }
    if (--c->arena_depth == 0)
        pb_arena_reset(&c->arena);
}

/* ---------------------------------------------------------------- reconcile --- */

static void kvc_lb_timer_fire(void *ctx)
{
    struct kvc_client *c = ctx;
    c->lb_timer_at = 0;
    kvc_reconcile(c);
}

/* The send time of the oldest call in flight at endpoint i (0: none): the head of
 * its queue, as calls join it when sent. */
static void kvc_oldest_inflight_update(struct kvc_client *c, size_t i)
{
    const struct kvc_call *head = c->inflight[i].head;
    FL_ASSERT(head == NULL || head->sent_ns <= c->inflight[i].tail->sent_ns);
    lb_set_oldest_inflight(&c->lb, i, head ? head->sent_ns : 0);
}

/* A new attempt record, outstanding until kvc_attempt_note ends it. */
static void kvc_attempt_begin(struct kvc_call *call, int node, int64_t now)
{
    struct kvc_client *c = call->c;
    struct kvc_attempt_rec *a = &c->attempts[c->attempts_seen % KVC_ATTEMPTS_KEEP];
    free(a->error);
    *a = (struct kvc_attempt_rec){.at_ns = now,
                                  .end_ns = -1,
                                  .node = node,
                                  .method = call->req.method,
                                  .outcome = KVC_ATTEMPT_OUTSTANDING,
                                  .retry = call->attempts > 1};
    call->attempt_seq = c->attempts_seen++;
}

/* Ends the record of the attempt in flight (if the ring still holds it). */
static void kvc_attempt_note(struct kvc_call *call, enum kvc_attempt_outcome o, const char *error)
{
    struct kvc_client *c = call->c;
    if (c->attempts_seen - call->attempt_seq > KVC_ATTEMPTS_KEEP)
        return;
    struct kvc_attempt_rec *a = &c->attempts[call->attempt_seq % KVC_ATTEMPTS_KEEP];
    FL_ASSERT(a->outcome == KVC_ATTEMPT_OUTSTANDING);
    a->outcome = o;
    a->end_ns = kvc_now(c);
    a->error = error && *error ? fl_strdup(error) : NULL;
}

static void kvc_attempt_end(struct kvc_call *call, enum kvc_attempt_outcome o, const char *error)
{
    struct kvc_client *c = call->c;
    FL_ASSERT(call->state == KVC_CALL_INFLIGHT && call->ep >= 0);
    kvc_attempt_note(call, o, error);
    size_t i = (size_t)call->ep;
    FL_ASSERT(c->conns[i].unary > 0);
    c->conns[i].unary--;
    lb_on_request_end(&c->lb, i);
    env_timer_stop(c->env, &call->attempt_timer);
    call->last_ep = call->ep;
    call->ep = -1;
    call->state = KVC_CALL_WAIT;
    kvc_call_requeue(call);
    kvc_oldest_inflight_update(c, i);
}

/* health_aware: a read in flight at a member that turned unhealthy is re-sent to
 * a healthy one at once (it is safe to repeat; the late answer is ignored). The
 * candidates are the reads in flight at endpoints the balancer leaves now: moving a
 * read only lowers its old endpoint's load and gives its new one a fresh call, so no
 * endpoint the balancer keeps at the start is left later in the loop. */
static void kvc_hedge_reads(struct kvc_client *c, int64_t now)
{
    if (!lb_probes(&c->lb) || FL_BUG(CLIENT_NO_FAILOVER))
        return;
    struct kvc_ids ids = {0};
    for (size_t e = 0; e < c->lb.n; e++) {
        if (c->inflight[e].len > 0 && lb_should_leave(&c->lb, e, now))
            kvc_ids_push_clist(&ids, &c->inflight[e], true);
    }
    kvc_ids_sort(&ids);
    for (size_t k = 0; k < ids.len; k++) {
        struct kvc_call *call = kvc_call_find(c, ids.p[k]);
        if (call == NULL || call->state != KVC_CALL_INFLIGHT || call->mutating || call->target >= 0)
            continue;
        if (!lb_should_leave(&c->lb, (size_t)call->ep, now))
            continue;
        if (call->attempts >= c->cfg.max_unary_retries)
            continue;
        kvc_attempt_end(call, KVC_ATTEMPT_ABANDONED, NULL);
        kvc_call_try(call);
    }
    free(ids.p);
}

/* Serves waiting calls, oldest first. Only the calls that can leave are visited: a
 * balancer-routed call when the balancer has an endpoint (lb_pick answers -1 only
 * when no connection is ready, or the pinned one is not, whatever `avoid` is, and
 * then changes nothing: so it is asked of a copy whose draws are thrown away), a
 * call aimed at one endpoint when that connection is ready. Trying a call changes
 * no other call and no connection's state, so the set does not change meanwhile. */
static void kvc_dispatch_calls(struct kvc_client *c, int64_t now)
{
    struct kvc_ids ids = {0};
    if (c->wait_calls.len > 0) {
        struct lb probe = c->lb;
        if (lb_pick(&probe, now, -1) >= 0)
            kvc_ids_push_clist(&ids, &c->wait_calls, false);
    }
    for (size_t i = 0; i < c->lb.n; i++) {
        if (c->wait_direct[i].len > 0 && c->conns[i].state == LB_CONN_READY)
            kvc_ids_push_clist(&ids, &c->wait_direct[i], false);
    }
    if (ids.len == 0)
        return;
    kvc_ids_sort(&ids);
    for (size_t k = 0; k < ids.len; k++) {
        struct kvc_call *call = kvc_call_find(c, ids.p[k]);
        if (call && call->state == KVC_CALL_WAIT && !env_timer_active(&call->backoff_timer))
            kvc_call_try(call);
    }
    free(ids.p);
}

static void kvc_reconcile_once(struct kvc_client *c)
{
    int64_t now = kvc_now(c);
    for (size_t i = 0; i < c->lb.n; i++) {
        struct kvc_conn *cn = &c->conns[i];
        bool want = lb_wants_conn(&c->lb, i, now) || cn->direct > 0;
        if (cn->state == LB_CONN_IDLE || cn->state == LB_CONN_FAILED) {
            bool due =
                lb_dial_due(&c->lb, i, now) || (cn->direct > 0 && now >= c->lb.ep[i].next_dial_ns);
            if (want && due)
                kvc_conn_dial(c, i);
        } else if (!want && cn->unary == 0) {
            kvc_conn_drop(c, i, 0);
        }
    }
    kvc_hedge_reads(c, now);
    kvc_dispatch_calls(c, now);
    kvc_streams_dispatch(c);
}

void kvc_reconcile(struct kvc_client *c)
{
    if (c->closed)
        return;
    if (c->reconciling) {
        c->reconcile_again = true;
        return;
    }
    c->reconciling = true;
    int rounds = 0;
    do {
        c->reconcile_again = false;
        kvc_reconcile_once(c);
        FL_ASSERT(++rounds < 64);
    } while (c->reconcile_again);
    c->reconciling = false;
    int64_t now = kvc_now(c);
    int64_t next = lb_next_deadline(&c->lb, now);
    if (next != INT64_MAX && (!env_timer_active(&c->lb_timer) || next < c->lb_timer_at)) {
        env_timer_stop(c->env, &c->lb_timer);
        env_timer_start(c->env, &c->lb_timer, next - now, kvc_lb_timer_fire, c);
        c->lb_timer_at = next;
    }
}

/* ---------------------------------------------------------------- unary calls - */

/* Is an error a definite refusal (the write surely did not apply)? NOSPACE
 * ("etcdserver: mvcc: database space exceeded", etcd-facts §B.3) is not: the quota
 * check before proposing refuses with it, but so does the quota applier for a write
 * that crossed the quota and was applied all the same (on real etcd the difference
 * showed as a false linearizability failure). */
static bool kvc_err_definite(int code, const char *text)
{
    switch (code) {
    case RPC_CODE_INVALID_ARGUMENT:
    case RPC_CODE_NOT_FOUND:
    case RPC_CODE_ALREADY_EXISTS:
    case RPC_CODE_PERMISSION_DENIED:
    case RPC_CODE_FAILED_PRECONDITION:
    case RPC_CODE_OUT_OF_RANGE:
    case RPC_CODE_UNIMPLEMENTED:
    case RPC_CODE_UNAUTHENTICATED:
    case RPC_CODE_DATA_LOSS:
        return true;
    default: {
        enum rpc_err_id id = rpc_err_find(text);
        return id == RPC_ERR_TOO_MANY_REQUESTS;
    }
    }
}

static enum kvc_status kvc_error_status(const struct kvc_call *call, int code, const char *text)
{
    if (!call->mutating || !call->sent)
        return KVC_FAIL;
    /* With require_leader a leaderless member refuses before proposing. */
    if (call->opts.require_leader && rpc_err_find(text) == RPC_ERR_NO_LEADER)
        return KVC_FAIL;
    return kvc_err_definite(code, text) ? KVC_FAIL : KVC_UNKNOWN;
}

static void kvc_call_free(struct kvc_call *call)
{
    free(call->wire);
    free(call->req_block);
    free(call->last_err);
    fl_buf_close(&call->snap);
    free(call);
}

/* Completes a call exactly once: observer, then the caller's callback. m is the
 * server's answer (NULL when none was seen). */
static void kvc_call_complete(struct kvc_call *call, enum kvc_status status, int code,
                              const char *text, const Rpc__ServerMsg *m)
{
    struct kvc_client *c = call->c;
    FL_ASSERT(call->state != KVC_CALL_DONE);
    if (call->state == KVC_CALL_INFLIGHT) {
        enum kvc_attempt_outcome o = m && code == 0                       ? KVC_ATTEMPT_OK
                                     : m                                  ? KVC_ATTEMPT_ERROR
                                     : code == RPC_CODE_CANCELED          ? KVC_ATTEMPT_CANCELED
                                     : code == RPC_CODE_DEADLINE_EXCEEDED ? KVC_ATTEMPT_TIMEOUT
                                                                          : KVC_ATTEMPT_TRANSPORT;
        kvc_attempt_end(call, o, o == KVC_ATTEMPT_ERROR ? text : NULL);
    }
    call->state = KVC_CALL_DONE;
    env_timer_stop(c->env, &call->deadline_timer);
    env_timer_stop(c->env, &call->backoff_timer);
    env_timer_stop(c->env, &call->attempt_timer);
    kvc_calls_remove(c, call);
    if (call->target >= 0)
        c->conns[call->target].direct--;

    struct kvc_scratch scratch = {0};
    struct kvc_result r;
    memset(&r, 0, sizeof(r));
    r.call_id = call->id;
    r.method = call->req.method;
    r.status = status;
    r.code = code;
    r.error = text ? text : "";
    r.call_ns = call->call_ns;
    r.return_ns = kvc_now(c);
    r.answered = m != NULL;
    r.node = call->last_ep >= 0 ? c->eps[call->last_ep].node : 0;
    r.attempts = call->attempts;
    if (m)
        kvc_decode_header(&r.header, m);
    if (m && status == KVC_OK)
        kvc_decode_result(&r, m, &scratch);
    if (call->req.method == KVC_SNAPSHOT && status == KVC_OK) {
        r.snapshot.p = call->snap.data;
        r.snapshot.n = call->snap.len;
    }
    kvc_stats_op_end(c, &r);
    if (c->cfg.observer.op_done)
        c->cfg.observer.op_done(c->cfg.observer.ud, c, &call->req, &r);
    if (call->done)
        call->done(call->ud, &r);
    kvc_scratch_free(&scratch);
    kvc_call_free(call);
}

static void kvc_backoff_fire(void *ctx)
{
    struct kvc_call *call = ctx;
    kvc_call_try(call);
    kvc_reconcile(call->c);
}

/* clientv3's roundRobinQuorumBackoff: no wait on the first retries of a round; a
 * wait of backoff_wait ± jitter every `quorum` attempts. */
int64_t kvc_backoff_ns(int attempt, size_t endpoints, int64_t wait_ms, int jitter_pct,
                       uint64_t draw)
{
    size_t quorum = endpoints / 2 + 1;
    if (attempt <= 0 || (size_t)attempt % quorum != 0)
        return 0;
    int64_t base = wait_ms * FL_MS;
    int64_t span = base * jitter_pct / 100;
    if (span <= 0)
        return base;
    return base - span + (int64_t)(draw % (uint64_t)(2 * span + 1));
}

static void kvc_call_retry_later(struct kvc_call *call)
{
    struct kvc_client *c = call->c;
    int64_t wait = kvc_backoff_ns(call->attempts, c->lb.n, c->cfg.backoff_wait_ms,
                                  c->cfg.backoff_jitter_pct, env_rand_u64(c->env));
    call->state = KVC_CALL_BACKOFF;
    env_timer_start(c->env, &call->backoff_timer, wait, kvc_backoff_fire, call);
    kvc_call_requeue(call);
}

/* An attempt failed with (code, text). transport: the connection broke (the
 * balancer already heard). Retries as clientv3's interceptor does, or completes. */
static void kvc_call_attempt_failed(struct kvc_call *call, int code, const char *text,
                                    bool transport, const Rpc__ServerMsg *m)
{
    struct kvc_client *c = call->c;
    int64_t now = kvc_now(c);
    int ep = call->ep;
    if (call->state == KVC_CALL_INFLIGHT)
        kvc_attempt_end(call, transport ? KVC_ATTEMPT_TRANSPORT : KVC_ATTEMPT_ERROR, text);
    /* A learner refuses every client call: the balancer must move on as it does from
     * an unavailable member, or a pinned policy retries the learner until the call's
     * deadline, call after call. */
    if (!transport && ep >= 0 &&
        (code == RPC_CODE_UNAVAILABLE || rpc_err_find(text) == RPC_ERR_LEARNER_NOT_SUPPORTED))
        lb_on_fail(&c->lb, (size_t)ep, LB_FAIL_UNAVAILABLE, now);
    bool retry = rpc_err_retry_safe(call->policy, (enum rpc_code)code, text, c->lb.n);
    /* The bug: a write that left is sent again after an Unavailable answer or a
     * broken transport, so it may apply twice. */
    if (FL_BUG(CLIENT_RETRY_SENT_WRITES) && call->mutating && code == RPC_CODE_UNAVAILABLE)
        retry = true;
    if (retry && call->attempts < c->cfg.max_unary_retries && now < call->deadline_ns) {
        free(call->last_err);
        call->last_err = fl_strdup(text);
        kvc_call_retry_later(call);
        return;
    }
    kvc_call_complete(call, kvc_error_status(call, code, text), code, text, m);
}

/* FL_BUG(CLIENT_RETRY_SENT_WRITES): a per-attempt deadline that fires while the
 * caller's context is alive makes the write go out again elsewhere. */
static void kvc_attempt_timeout(void *ctx)
{
    struct kvc_call *call = ctx;
    if (call->state != KVC_CALL_INFLIGHT)
        return;
    struct kvc_client *c = call->c;
    lb_on_fail(&c->lb, (size_t)call->ep, LB_FAIL_TIMEOUT, kvc_now(c));
    kvc_attempt_end(call, KVC_ATTEMPT_TIMEOUT, NULL);
    kvc_call_try(call);
    kvc_reconcile(c);
}

static void kvc_call_try(struct kvc_call *call)
{
    struct kvc_client *c = call->c;
    int64_t now = kvc_now(c);
    FL_ASSERT(call->state == KVC_CALL_WAIT || call->state == KVC_CALL_BACKOFF);
    FL_ASSERT(!env_timer_active(&call->backoff_timer));
    call->state = KVC_CALL_WAIT;
    kvc_call_requeue(call);
    int i;
    if (call->target >= 0)
        i = c->conns[call->target].state == LB_CONN_READY ? call->target : -1;
    else
        i = lb_pick(&c->lb, now, call->last_ep);
    if (i < 0)
        return;
    if (!kvc_conn_send(c, (size_t)i, call->wire, call->wire_len))
        return; /* never left: the connection's close will come through on_close */
    call->attempts++;
    c->st.attempts++;
    if (call->attempts > 1) {
        c->st.retries++;
        if (!call->mutating)
            c->st.read_retries++;
        else if (call->sent)
            c->st.writes_resent++;
        if (c->cfg.member_bad && c->cfg.member_bad(c->cfg.member_bad_ud, c->eps[i].node))
            c->st.retries_to_bad++;
    }
    call->state = KVC_CALL_INFLIGHT;
    call->ep = i;
    call->sent = true;
    call->sent_ns = now;
    kvc_attempt_begin(call, c->eps[i].node, now);
    kvc_call_requeue(call);
    c->conns[i].unary++;
    lb_on_request_start(&c->lb, (size_t)i, now);
    kvc_oldest_inflight_update(c, (size_t)i);
    if (FL_BUG(CLIENT_RETRY_SENT_WRITES) && call->mutating) {
        int64_t per_attempt = (call->deadline_ns - call->call_ns) / 3;
        env_timer_start(c->env, &call->attempt_timer, FL_MAX(per_attempt, 1), kvc_attempt_timeout,
                        call);
    }
}

static void kvc_call_on_response(struct kvc_call *call, const Rpc__ServerMsg *m)
{
    struct kvc_client *c = call->c;
    bool failed = m->error && m->error->code != 0;
    if (!failed && m->resp_case == RPC__SERVER_MSG__RESP_SNAPSHOT) {
        fl_buf_append(&call->snap, m->snapshot->blob.data, m->snapshot->blob.len);
        if (m->snapshot->remaining_bytes > 0 && !m->stream_end)
            return;
    }
    if (failed) {
        const char *text = m->error->message ? m->error->message : "";
        kvc_call_attempt_failed(call, m->error->code, text, false, m);
    } else {
        kvc_call_complete(call, KVC_OK, 0, "", m);
    }
    kvc_reconcile(c);
}

static void kvc_deadline_fire(void *ctx)
{
    struct kvc_call *call = ctx;
    struct kvc_client *c = call->c;
    if (call->state == KVC_CALL_INFLIGHT)
        lb_on_fail(&c->lb, (size_t)call->ep, LB_FAIL_TIMEOUT, kvc_now(c));
    enum kvc_status st = call->mutating && call->sent ? KVC_UNKNOWN : KVC_FAIL;
    /* clientv3 returns the bare context error; the last error a retry swallowed is
     * what explains it ("no leader" behind a call pinned to a leaderless member). */
    struct fl_buf text;
    fl_buf_init(&text);
    fl_buf_printf(&text, "%s", rpc_err_text(RPC_ERR_CLIENT_DEADLINE));
    if (call->last_err)
        fl_buf_printf(&text, " (last: %s)", call->last_err);
    kvc_call_complete(call, st, RPC_CODE_DEADLINE_EXCEEDED, fl_buf_cstr(&text), NULL);
    fl_buf_close(&text);
    kvc_reconcile(c);
}

static void kvc_start_fire(void *ctx)
{
    struct kvc_call *call = ctx;
    struct kvc_client *c = call->c;
    if (call->target == -2) {
        kvc_call_complete(call, KVC_FAIL, RPC_CODE_UNAVAILABLE, rpc_err_text(RPC_ERR_NO_ADDRESS),
                          NULL);
        return;
    }
    if (c->closed) {
        kvc_call_complete(call, KVC_FAIL, RPC_CODE_CANCELED, rpc_err_text(RPC_ERR_CLIENT_CLOSED),
                          NULL);
        return;
    }
    kvc_call_try(call);
    kvc_reconcile(c);
}

uint64_t kvc_call(struct kvc_client *c, const struct kvc_request *req,
                  const struct kvc_call_opts *opts, kvc_done_fn *done, void *ud)
{
    FL_ASSERT(req->method >= KVC_RANGE && req->method <= KVC_METHOD_MAX);
    FL_ASSERTF(req->method != KVC_WATCH && req->method != KVC_LEASE_KEEPALIVE,
               "streams use kvc_watch / kvc_lease_keepalive");
    struct kvc_call *call = fl_calloc(1, sizeof(*call));
    call->c = c;
    call->id = kvc_new_id(c);
    call->req_block = kvc_request_copy(&call->req, req);
    if (opts)
        call->opts = *opts;
    if (call->opts.timeout_ms <= 0)
        call->opts.timeout_ms = c->cfg.timeout_ms;
    call->target = -1;
    if (call->opts.node != 0) {
        call->target = kvc_endpoint_index(c, call->opts.node);
        if (call->target < 0)
            call->target = -2;
    }
    call->done = done;
    call->ud = ud;
    call->policy = rpc_method_retry_policy((int)req->method);
    if (req->method == KVC_SNAPSHOT)
        call->policy = RPC_RETRY_REPEATABLE; /* clientv3 retries Snapshot */
    call->mutating = call->policy == RPC_RETRY_NON_REPEATABLE;
    call->wire = kvc_encode_request(&call->req, call->id, call->opts.require_leader, c->cfg.id,
                                    &call->wire_len);
    call->call_ns = kvc_now(c);
    call->deadline_ns = call->call_ns + call->opts.timeout_ms * FL_MS;
    call->ep = call->last_ep = -1;
    call->state = KVC_CALL_WAIT;
    fl_buf_init(&call->snap);
    kvc_calls_push(c, call);
    if (call->target >= 0)
        c->conns[call->target].direct++;
    kvc_stats_op_start(c);
    env_timer_start(c->env, &call->deadline_timer, call->opts.timeout_ms * FL_MS, kvc_deadline_fire,
                    call);
    env_timer_start(c->env, &call->backoff_timer, 0, kvc_start_fire, call);
    return call->id;
}

/* A call whose request is one op (range, put, delete); the rest of the request zero. */
static uint64_t kvc_call_op(struct kvc_client *c, enum kvc_method method, const struct kvc_op *op,
                            const struct kvc_call_opts *opts, kvc_done_fn *done, void *ud)
{
    struct kvc_request r;
    memset(&r, 0, sizeof(r));
    r.method = method;
    r.op = *op;
    return kvc_call(c, &r, opts, done, ud);
}

uint64_t kvc_put(struct kvc_client *c, struct kvc_bytes key, struct kvc_bytes value, int64_t lease,
                 const struct kvc_call_opts *opts, kvc_done_fn *done, void *ud)
{
    struct kvc_op op = {.kind = KVC_OP_PUT, .key = key, .value = value, .lease = lease};
    return kvc_call_op(c, KVC_PUT, &op, opts, done, ud);
}

uint64_t kvc_get(struct kvc_client *c, struct kvc_bytes key, struct kvc_bytes range_end,
                 const struct kvc_call_opts *opts, kvc_done_fn *done, void *ud)
{
    struct kvc_op op = {.kind = KVC_OP_RANGE, .key = key, .range_end = range_end};
    return kvc_call_op(c, KVC_RANGE, &op, opts, done, ud);
}

uint64_t kvc_delete(struct kvc_client *c, struct kvc_bytes key, struct kvc_bytes range_end,
                    const struct kvc_call_opts *opts, kvc_done_fn *done, void *ud)
{
    struct kvc_op op = {.kind = KVC_OP_DELETE, .key = key, .range_end = range_end};
    return kvc_call_op(c, KVC_DELETE, &op, opts, done, ud);
}

/* ---------------------------------------------------------------- lifecycle --- */

int kvc_config_check(const struct kvc_config *cfg, const char **err)
{
    if (cfg->endpoint_count == 0 || cfg->endpoints == NULL) {
        *err = "client: no endpoints";
        return FL_EINVAL;
    }
    if (cfg->endpoint_count > LB_ENDPOINTS_MAX) {
        *err = "client: too many endpoints (at most 16)";
        return FL_EINVAL;
    }
    if (cfg->timeout_ms <= 0 || cfg->dial_timeout_ms <= 0 || cfg->max_unary_retries <= 0) {
        *err = "client: timeout_ms, dial_timeout_ms and max_unary_retries must be positive";
        return FL_EINVAL;
    }
    if ((int)cfg->balancer < 0 || cfg->balancer >= LB_KIND_COUNT) {
        *err = "client: unknown balancer";
        return FL_EINVAL;
    }
    return FL_OK;
}

int kvc_client_new_env(struct fl_env *env, int proc, const struct kvc_config *cfg,
                       struct kvc_client **out, const char **err)
{
    *out = NULL;
    int rc = kvc_config_check(cfg, err);
    if (rc != FL_OK)
        return rc;
    struct kvc_client *c = fl_calloc(1, sizeof(*c));
    pb_arena_init(&c->arena, KVC_ARENA_BLOCK_MIN, KVC_ARENA_BLOCK_MAX);
    c->env = env;
    c->proc = proc;
    c->cfg = *cfg;
    memcpy(c->eps, cfg->endpoints, cfg->endpoint_count * sizeof(*c->eps));
    c->cfg.endpoints = c->eps;
    if (cfg->balancer == LB_PINNED_RANDOM)
        c->cfg.keepalive_time_ms = 0; /* clientv3 on grpc 1.0 sent no keepalive pings */
    struct lb_config lc;
    lb_config_default(&lc, cfg->balancer);
    lc.dial_timeout_ns = cfg->dial_timeout_ms * FL_MS;
    if (cfg->probe_interval_ms > 0)
        lc.probe_interval_ns = cfg->probe_interval_ms * FL_MS;
    if (cfg->health_quorum_age_ms > 0)
        lc.quorum_age_max_ns = cfg->health_quorum_age_ms * FL_MS;
    lc.seed = env_rand_u64(c->env);
    lb_init(&c->lb, &lc, cfg->endpoint_count);
    for (size_t i = 0; i < LB_ENDPOINTS_MAX; i++) {
        c->conns[i].c = c;
        c->conns[i].idx = i;
        c->conns[i].cb.on_open = kvc_conn_on_open;
        c->conns[i].cb.on_message = kvc_conn_on_message;
        c->conns[i].cb.on_close = kvc_conn_on_close;
        c->conns[i].cb.ctx = &c->conns[i];
    }
    c->next_id = 1;
    c->st.id = cfg->id;
    c->st.balancer = lb_policy_info(cfg->balancer)->name;
    c->st.keepalive_last_ack_ms = -1;
    c->st.keepalive_ended_ms = -1;
    kvc_reconcile(c);
    *out = c;
    return FL_OK;
}

int kvc_client_id(const struct kvc_client *c)
{
    return c->cfg.id;
}

int kvc_client_proc(const struct kvc_client *c)
{
    return c->proc;
}

enum lb_kind kvc_client_balancer(const struct kvc_client *c)
{
    return c->cfg.balancer;
}

int kvc_client_add_endpoint(struct kvc_client *c, const struct kvc_endpoint *ep)
{
    if (kvc_endpoint_index(c, ep->node) >= 0)
        return FL_EEXIST;
    if (!lb_add_endpoint(&c->lb))
        return FL_EFULL;
    c->eps[c->lb.n - 1] = *ep;
    kvc_reconcile(c);
    return FL_OK;
}

void kvc_client_close(struct kvc_client *c)
{
    if (c->closed)
        return;
    kvc_client_finish(c);
    c->closed = true;
    env_timer_stop(c->env, &c->lb_timer);
    while (c->calls_head != NULL) {
        struct kvc_call *call = c->calls_head;
        enum kvc_status st = call->mutating && call->sent ? KVC_UNKNOWN : KVC_FAIL;
        kvc_call_complete(call, st, RPC_CODE_CANCELED, rpc_err_text(RPC_ERR_CLIENT_CLOSED), NULL);
    }
    kvc_streams_close_all(c);
    for (size_t i = 0; i < c->lb.n; i++) {
        struct kvc_conn *cn = &c->conns[i];
        kvc_conn_cancel_timers(cn);
        /* connections_held keeps its value at close: it reports what the policy
         * held at the end of the run, not the teardown. */
        if (cn->state == LB_CONN_READY)
            c->st.connections_closed++;
        if (cn->sock)
            env_close(c->env, cn->sock);
        cn->sock = 0;
        cn->state = LB_CONN_IDLE;
    }
}

void kvc_client_free(struct kvc_client *c)
{
    if (c == NULL)
        return;
    kvc_client_close(c);
    FL_ASSERT(c->call_count == 0);
    kvc_idmap_free(&c->calls_by_id);
    for (size_t i = 0; i < KVC_ATTEMPTS_KEEP; i++)
        free(c->attempts[i].error);
    kvc_streams_free_index(c);
    kvc_stats_free(c);
    pb_arena_close(&c->arena);
    if (c->env_free)
        c->env_free(c->env);
    free(c);
}
