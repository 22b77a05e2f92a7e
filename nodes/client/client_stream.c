/*
 * client_stream.c: watch and lease keep-alive streams (etcd-facts §C.5). The retry
 * interceptor never retries a stream; each kind has its own recovery, as clientv3:
 *   - a watch resumes after a broken connection or an Unavailable cancellation
 *     (e.g. "etcdserver: no leader" under require_leader) from the last revision it
 *     delivered + 1 (or the progress / creation revision + 1), with a backoff that
 *     starts at 1 ms and grows by 25% up to 100 ms; a compacted resume ends it with
 *     the compact revision;
 *   - a keep-alive stream sends a request at once; then, as clientv3 3.4's
 *     sendKeepAliveLoop, every lease_keepalive_retry_ms (500 ms, retryConnWait) from
 *     the stream's opening it sends one if the next keep-alive is due, which an answer
 *     sets to TTL/3 later: while no answer comes it resends every 500 ms. It re-opens
 *     a broken stream after lease_keepalive_retry_ms, and gives up when no answer
 *     came for a whole TTL (the lease must be presumed expired).
 * A stream stays on the endpoint it was opened on until that connection breaks,
 * the member ends it, or the balancer says to leave (lb_should_leave): that is
 * why, with the etcd balancers, a watch on a member cut off from its peers stays
 * silent (etcd#8673) while health_aware moves it.
 */
#include "nodes/client/client_int.h"
#include "harness/common/list.h"

#define KVC_REASON_CLIENT "canceled by client"

/* ---------------------------------------------------------------- index ------- */

/* The bookkeeping keeps every operation linear in the streams it acts on: lookups go
 * through id maps, and a reconcile visits only the streams that can act (waiting ones
 * whose route is ready, open ones on an endpoint the balancer leaves), in id order,
 * which is the order in which the former single array was scanned. */

static void kvc_streams_push(struct kvc_client *c, struct kvc_stream *st)
{
    FL_ASSERT(c->streams_tail == NULL || c->streams_tail->id < st->id);
    FL_TAILQ_INSERT_TAIL(c->streams_head, c->streams_tail, st, all_prev, all_next);
    c->stream_count++;
    kvc_idmap_put(&c->streams_by_id, st->id, st);
}

static void kvc_streams_remove(struct kvc_client *c, struct kvc_stream *st)
{
    FL_ASSERT(c->stream_count > 0 && kvc_idmap_get(&c->streams_by_id, st->id) == st);
    kvc_slist_unlink(st);
    FL_TAILQ_REMOVE(c->streams_head, c->streams_tail, st, all_prev, all_next);
    c->stream_count--;
    kvc_idmap_del(&c->streams_by_id, st->id);
}

static struct kvc_stream *kvc_stream_find(struct kvc_client *c, uint64_t id)
{
    c->stream_steps++;
    return kvc_idmap_get(&c->streams_by_id, id);
}

static struct kvc_wbucket *kvc_wait_bucket(struct kvc_client *c, int node)
{
    for (size_t i = 0; i < c->wait_node_count; i++) {
        if (c->wait_node[i]->node == node)
            return c->wait_node[i];
    }
    c->wait_node = fl_realloc(c->wait_node, (c->wait_node_count + 1) * sizeof(*c->wait_node));
    struct kvc_wbucket *b = fl_calloc(1, sizeof(*b));
    b->node = node;
    c->wait_node[c->wait_node_count++] = b;
    return b;
}

/* Every change of a stream's state or endpoint goes through here, so the state
 * queues always hold exactly the WAIT streams and the OPEN streams per endpoint. */
static void kvc_stream_set_state(struct kvc_stream *st, enum kvc_stream_state state)
{
    struct kvc_client *c = st->c;
    kvc_slist_unlink(st);
    st->state = state;
    if (state == KVC_ST_WAIT) {
        kvc_slist_add(st->opts.node != 0 ? &kvc_wait_bucket(c, st->opts.node)->l : &c->wait_lb, st);
    } else if (state == KVC_ST_OPEN) {
        FL_ASSERT(st->ep >= 0 && (size_t)st->ep < LB_ENDPOINTS_MAX);
        kvc_slist_add(st->opts.node != 0 ? &c->open_node[st->ep] : &c->open_lb[st->ep], st);
    }
}

/* The wire id of the stream's incarnation (0: none), kept in the wire map. */
static void kvc_stream_set_wire(struct kvc_stream *st, uint64_t wire)
{
    struct kvc_client *c = st->c;
    if (st->wire != 0)
        kvc_idmap_del(&c->streams_by_wire, st->wire);
    st->wire = wire;
    if (wire != 0)
        kvc_idmap_put(&c->streams_by_wire, wire, st);
}

uint64_t kvc_client_stream_steps(const struct kvc_client *c)
{
    return c->stream_steps;
}

void kvc_streams_free_index(struct kvc_client *c)
{
    FL_ASSERT(c->stream_count == 0);
    kvc_idmap_free(&c->streams_by_id);
    kvc_idmap_free(&c->streams_by_wire);
    for (size_t i = 0; i < c->wait_node_count; i++)
        free(c->wait_node[i]);
    free(c->wait_node);
    c->wait_node = NULL;
    c->wait_node_count = 0;
}

void kvc_stream_free(struct kvc_stream *st)
{
    free(st->wreq_block);
    free(st->pend);
    free(st);
}

static void kvc_stream_cancel_timers(struct kvc_stream *st)
{
    struct fl_env *env = st->c->env;
    env_timer_stop(env, &st->retry_timer);
    env_timer_stop(env, &st->tick_timer);
    env_timer_stop(env, &st->deadline_timer);
}

/* Sends one frame of the stream's current incarnation to endpoint i. */
static bool kvc_stream_send(struct kvc_stream *st, size_t i, Rpc__ClientMsg *m)
{
    m->call_id = st->wire;
    return kvc_conn_send_msg(st->c, i, m);
}

/* Tells the member the client is done with the current incarnation. */
static void kvc_stream_send_close(struct kvc_stream *st)
{
    if (st->state != KVC_ST_OPEN || st->ep < 0)
        return;
    Rpc__ClientMsg m = RPC__CLIENT_MSG__INIT;
    Rpc__WatchRequest wr = RPC__WATCH_REQUEST__INIT;
    Rpc__WatchCancelRequest cr = RPC__WATCH_CANCEL_REQUEST__INIT;
    m.close_stream = true;
    if (st->kind == KVC_STREAM_WATCH) {
        m.method = RPC__METHOD__METHOD_WATCH;
        wr.request_union_case = RPC__WATCH_REQUEST__REQUEST_UNION_CANCEL_REQUEST;
        wr.cancel_request = &cr;
        m.req_case = RPC__CLIENT_MSG__REQ_WATCH;
        m.watch = &wr;
    } else {
        m.method = RPC__METHOD__METHOD_LEASE_KEEPALIVE;
    }
    kvc_stream_send(st, (size_t)st->ep, &m);
}

static void kvc_stream_detach(struct kvc_stream *st)
{
    if (st->state == KVC_ST_OPEN && st->ep >= 0) {
        kvc_conn_stream_detach(st->c, (size_t)st->ep);
        st->last_ep = st->ep;
    }
    kvc_slist_unlink(st); /* off its endpoint's open set before the endpoint changes */
    st->ep = -1;
    kvc_stream_set_wire(st, 0);
}

/* Ends a stream for good: final callback, observer, free. */
static void kvc_stream_end(struct kvc_stream *st, int code, const char *reason, int64_t compact_rev)
{
    struct kvc_client *c = st->c;
    kvc_stream_send_close(st);
    kvc_stream_detach(st);
    kvc_stream_cancel_timers(st);
    kvc_stream_set_state(st, KVC_ST_DONE);
    kvc_streams_remove(c, st);
    int64_t now = kvc_now(c);
    if (st->kind == KVC_STREAM_WATCH) {
        struct kvc_watch_resp r;
        memset(&r, 0, sizeof(r));
        r.watch_id = st->id;
        r.response_seq = ++st->response_seq;
        r.node = st->last_ep >= 0 ? c->eps[st->last_ep].node : 0;
        r.delivered_ns = now;
        r.canceled = true;
        r.compact_revision = compact_rev;
        r.cancel_reason = reason;
        r.code = code;
        r.reconnects = st->reconnects;
        kvc_stats_watch_close(c, st);
        kvc_stats_watch_end(c, st);
        if (c->cfg.observer.watch_resp)
            c->cfg.observer.watch_resp(c->cfg.observer.ud, c, &r);
        if (c->cfg.observer.watch_close)
            c->cfg.observer.watch_close(c->cfg.observer.ud, c, st->id, now, reason);
        if (st->wfn)
            st->wfn(st->ud, &r);
    } else {
        if (!c->closed && reason != rpc_err_text(RPC_ERR_CLIENT_CANCELED)) {
            c->st.keepalive_ended++;
            c->st.keepalive_ended_ms = now / FL_MS;
        }
        struct kvc_result r;
        memset(&r, 0, sizeof(r));
        r.call_id = st->id;
        r.method = KVC_LEASE_KEEPALIVE;
        r.status = KVC_FAIL;
        r.code = code;
        r.error = reason;
        r.call_ns = st->opened_ns;
        r.return_ns = now;
        r.node = st->last_ep >= 0 ? c->eps[st->last_ep].node : 0;
        r.lease_id = st->lease_id;
        if (st->kfn)
            st->kfn(st->ud, &r);
    }
    kvc_stream_free(st);
}

static void kvc_stream_retry_fire(void *ctx)
{
    struct kvc_stream *st = ctx;
    kvc_stream_set_state(st, KVC_ST_WAIT);
    kvc_reconcile(st->c);
}

/* The current incarnation is gone (connection lost, Unavailable end, or the
 * balancer moved away): open a new one after the stream kind's wait. */
static void kvc_stream_resume(struct kvc_stream *st)
{
    struct kvc_client *c = st->c;
    kvc_stream_detach(st);
    env_timer_stop(c->env, &st->tick_timer);
    kvc_stream_set_state(st, KVC_ST_RETRY);
    st->reconnects++;
    c->st.stream_reconnects++;
    int64_t wait;
    if (st->kind == KVC_STREAM_WATCH) {
        st->retry_wait_ns =
            st->retry_wait_ns == 0 ? 1 * FL_MS : FL_MIN(st->retry_wait_ns * 5 / 4, 100 * FL_MS);
        wait = st->retry_wait_ns;
    } else {
        wait = c->cfg.lease_keepalive_retry_ms * FL_MS;
    }
    env_timer_stop(c->env, &st->retry_timer);
    env_timer_start(c->env, &st->retry_timer, wait, kvc_stream_retry_fire, st);
}

/* ---------------------------------------------------------------- open -------- */

static bool kvc_watch_send_create(struct kvc_stream *st, size_t i)
{
    Rpc__WatchCreateRequest cr = RPC__WATCH_CREATE_REQUEST__INIT;
    Rpc__WatchCreateRequest__FilterType filters[2];
    cr.key.data = (uint8_t *)st->wreq.key.p;
    cr.key.len = st->wreq.key.n;
    cr.range_end.data = (uint8_t *)st->wreq.range_end.p;
    cr.range_end.len = st->wreq.range_end.n;
    cr.start_revision = st->next_rev;
    cr.progress_notify = st->wreq.progress_notify;
    cr.prev_kv = st->wreq.prev_kv;
    if (st->wreq.no_put)
        filters[cr.n_filters++] = RPC__WATCH_CREATE_REQUEST__FILTER_TYPE__NOPUT;
    if (st->wreq.no_delete)
        filters[cr.n_filters++] = RPC__WATCH_CREATE_REQUEST__FILTER_TYPE__NODELETE;
    cr.filters = filters;
    Rpc__WatchRequest wr = RPC__WATCH_REQUEST__INIT;
    wr.request_union_case = RPC__WATCH_REQUEST__REQUEST_UNION_CREATE_REQUEST;
    wr.create_request = &cr;
    Rpc__ClientMsg m = RPC__CLIENT_MSG__INIT;
    m.method = RPC__METHOD__METHOD_WATCH;
    m.require_leader = st->opts.require_leader;
    m.req_case = RPC__CLIENT_MSG__REQ_WATCH;
    m.watch = &wr;
    return kvc_stream_send(st, i, &m);
}

static bool kvc_keepalive_send(struct kvc_stream *st, size_t i)
{
    Rpc__LeaseKeepAliveRequest kr = RPC__LEASE_KEEP_ALIVE_REQUEST__INIT;
    kr.id = st->lease_id;
    Rpc__ClientMsg m = RPC__CLIENT_MSG__INIT;
    m.method = RPC__METHOD__METHOD_LEASE_KEEPALIVE;
    m.require_leader = st->opts.require_leader;
    m.req_case = RPC__CLIENT_MSG__REQ_LEASE_KEEPALIVE;
    m.lease_keepalive = &kr;
    return kvc_stream_send(st, i, &m);
}

/* clientv3 sendKeepAliveLoop: every retryConnWait, a keep-alive for the lease if
 * its nextKeepAlive is before now. Runs while the incarnation is open (stopped by
 * kvc_stream_resume / kvc_stream_end). */
static void kvc_keepalive_tick(void *ctx)
{
    struct kvc_stream *st = ctx;
    struct kvc_client *c = st->c;
    if (st->state != KVC_ST_OPEN || st->ep < 0)
        return;
    if (st->next_ka_ns < kvc_now(c))
        kvc_keepalive_send(st, (size_t)st->ep);
    env_timer_start(c->env, &st->tick_timer, c->cfg.lease_keepalive_retry_ms * FL_MS,
                    kvc_keepalive_tick, st);
}

static void kvc_stream_open(struct kvc_stream *st, size_t i)
{
    struct kvc_client *c = st->c;
    kvc_stream_set_wire(st, kvc_new_id(c));
    bool ok =
        st->kind == KVC_STREAM_WATCH ? kvc_watch_send_create(st, i) : kvc_keepalive_send(st, i);
    if (!ok) {
        kvc_stream_set_wire(st, 0);
        return;
    }
    st->ep = (int)i;
    kvc_stream_set_state(st, KVC_ST_OPEN);
    c->st.last_stream_node = c->eps[i].node;
    kvc_conn_stream_attach(c, i);
    if (st->kind == KVC_STREAM_KEEPALIVE) {
        env_timer_stop(c->env, &st->tick_timer);
        env_timer_start(c->env, &st->tick_timer, c->cfg.lease_keepalive_retry_ms * FL_MS,
                        kvc_keepalive_tick, st);
    }
}

/* Collects the streams a dispatch may act on: open balancer-routed streams on an
 * endpoint the balancer leaves, balancer-routed waiting streams when the balancer has
 * an endpoint, pinned waiting streams whose member's connection is ready. The
 * stream-by-stream rules would leave every other stream as it is: none of the actions
 * (sending, resuming) changes a connection's state or what lb_should_leave answers,
 * and lb_pick answers -1 whatever `avoid` is and without changing the balancer. So
 * whether the balancer has an endpoint is asked of a copy of it, whose draws and
 * cursor are thrown away; the real picks are made stream by stream, in id order. */
static void kvc_dispatch_collect(struct kvc_client *c, int64_t now, struct kvc_svec *v)
{
    for (size_t e = 0; e < c->lb.n; e++) {
        if (c->open_lb[e].len > 0 && lb_should_leave(&c->lb, e, now))
            kvc_svec_push_list(v, &c->open_lb[e]);
    }
    if (c->wait_lb.len > 0) {
        struct lb probe = c->lb;
        if (lb_pick(&probe, now, -1) >= 0)
            kvc_svec_push_list(v, &c->wait_lb);
    }
    for (size_t k = 0; k < c->wait_node_count; k++) {
        const struct kvc_wbucket *b = c->wait_node[k];
        int i = b->l.len > 0 ? kvc_endpoint_index(c, b->node) : -1;
        if (i >= 0 && c->conns[i].state == LB_CONN_READY)
            kvc_svec_push_list(v, &b->l);
    }
}

void kvc_streams_dispatch(struct kvc_client *c)
{
    int64_t now = kvc_now(c);
    struct kvc_svec v = {0};
    kvc_dispatch_collect(c, now, &v);
    kvc_svec_sort(&v);
    c->stream_steps += v.len;
    /* The stream-by-stream rules, for the collected streams in id order. Nothing
     * below ends (frees) a stream. */
    for (size_t k = 0; k < v.len; k++) {
        struct kvc_stream *st = v.p[k];
        if (st->state == KVC_ST_OPEN && st->opts.node == 0 &&
            lb_should_leave(&c->lb, (size_t)st->ep, now)) {
            kvc_stream_send_close(st);
            kvc_stream_resume(st);
            continue;
        }
        if (st->state != KVC_ST_WAIT)
            continue;
        int i;
        if (st->opts.node != 0) {
            i = kvc_endpoint_index(c, st->opts.node);
            if (i >= 0 && c->conns[i].state != LB_CONN_READY)
                i = -1;
        } else {
            i = lb_pick(&c->lb, now, st->last_ep);
        }
        if (i >= 0)
            kvc_stream_open(st, (size_t)i);
    }
    free(v.p);
}

/* ---------------------------------------------------------------- messages ---- */

static void kvc_watch_deliver(struct kvc_stream *st, const Rpc__ServerMsg *m,
                              const Rpc__WatchResponse *wr, bool created, bool progress)
{
    struct kvc_client *c = st->c;
    struct kvc_scratch s = {0};
    struct kvc_watch_resp r;
    memset(&r, 0, sizeof(r));
    r.watch_id = st->id;
    r.response_seq = ++st->response_seq;
    kvc_decode_header(&r.header, m);
    r.node = c->eps[st->ep].node;
    r.delivered_ns = kvc_now(c);
    r.created = created;
    r.progress = progress;
    r.cancel_reason = "";
    r.events = wr ? kvc_decode_events(wr, &s) : NULL;
    r.event_count = wr ? wr->n_events : 0;
    r.reconnects = st->reconnects;
    if (c->cfg.observer.watch_resp)
        c->cfg.observer.watch_resp(c->cfg.observer.ud, c, &r);
    if (st->wfn)
        st->wfn(st->ud, &r);
    kvc_scratch_free(&s);
}

/* The member ended the watch (or its stream): resume on Unavailable, else end. */
static void kvc_watch_server_end(struct kvc_stream *st, int code, const char *text,
                                 int64_t compact_rev)
{
    struct kvc_client *c = st->c;
    if (compact_rev == 0 && code == RPC_CODE_UNAVAILABLE) {
        if (rpc_err_find(text) == RPC_ERR_NO_LEADER)
            c->st.streams_no_leader++;
        lb_on_fail(&c->lb, (size_t)st->ep, LB_FAIL_UNAVAILABLE, kvc_now(c));
        kvc_stream_resume(st);
        return;
    }
    kvc_stream_end(st, code, text, compact_rev);
}

/* Why the member ended a watch: the status error if any, else the cancel reason,
 * else "etcdserver: watch canceled"; a compacted watch always reports the
 * compaction text. A reason text we know carries its own code. */
static const char *kvc_watch_end_reason(const Rpc__ServerMsg *m, const Rpc__WatchResponse *wr,
                                        int *code)
{
    const char *text = NULL;
    *code = RPC_CODE_CANCELED;
    if (m->error && m->error->code != 0) {
        *code = m->error->code;
        text = m->error->message;
    }
    if ((text == NULL || text[0] == '\0') && wr && wr->cancel_reason && wr->cancel_reason[0])
        text = wr->cancel_reason;
    if (wr && wr->compact_revision > 0)
        text = rpc_err_text(RPC_ERR_COMPACTED);
    if (text == NULL || text[0] == '\0')
        text = rpc_err_text(RPC_ERR_WATCH_CANCELED);
    enum rpc_err_id id = rpc_err_find(text);
    if (!(m->error && m->error->code != 0) && id < RPC_ERR_COUNT && id != RPC_ERR_NONE)
        *code = rpc_err_code(id);
    return text;
}

static void kvc_watch_on_msg(struct kvc_stream *st, const Rpc__ServerMsg *m)
{
    struct kvc_client *c = st->c;
    const Rpc__WatchResponse *wr = m->resp_case == RPC__SERVER_MSG__RESP_WATCH ? m->watch : NULL;
    if ((m->error && m->error->code != 0) || (wr && wr->canceled) || m->stream_end) {
        int code;
        const char *text = kvc_watch_end_reason(m, wr, &code);
        kvc_watch_server_end(st, code, text, wr ? wr->compact_revision : 0);
        kvc_reconcile(c);
        return;
    }
    if (wr == NULL)
        return;
    st->retry_wait_ns = 0;
    int64_t hdr_rev = m->header ? m->header->revision : 0;
    if (wr->created) {
        bool first = !st->created_seen;
        st->created_seen = true;
        if (st->next_rev == 0) {
            st->next_rev = hdr_rev + 1;
            kvc_stats_watch_reached(c, st, hdr_rev);
        }
        if (first)
            kvc_watch_deliver(st, m, wr, true, false);
        return;
    }
    if (wr->n_events > 0) {
        const Rpc__Event *last = wr->events[wr->n_events - 1];
        int64_t rev = last->kv ? last->kv->mod_revision : 0;
        if (rev + 1 > st->next_rev)
            st->next_rev = rev + 1;
        kvc_watch_deliver(st, m, wr, false, false);
        kvc_stats_watch_reached(c, st, rev);
        return;
    }
    if (wr->compact_revision == 0 && hdr_rev > 0) {
        if (hdr_rev + 1 > st->next_rev)
            st->next_rev = hdr_rev + 1;
        kvc_watch_deliver(st, m, wr, false, true);
        kvc_stats_watch_reached(c, st, hdr_rev);
    }
}

static void kvc_keepalive_deadline(void *ctx)
{
    struct kvc_stream *st = ctx;
    kvc_stream_end(st, RPC_CODE_DEADLINE_EXCEEDED, rpc_err_text(RPC_ERR_CLIENT_DEADLINE), 0);
}

static void kvc_keepalive_on_msg(struct kvc_stream *st, const Rpc__ServerMsg *m)
{
    struct kvc_client *c = st->c;
    if ((m->error && m->error->code != 0) || m->stream_end) {
        int code = m->error ? m->error->code : RPC_CODE_CANCELED;
        const char *text =
            m->error && m->error->message ? m->error->message : rpc_err_text(RPC_ERR_CANCELED);
        if (code == RPC_CODE_UNAVAILABLE) {
            if (rpc_err_find(text) == RPC_ERR_NO_LEADER)
                c->st.streams_no_leader++;
            lb_on_fail(&c->lb, (size_t)st->ep, LB_FAIL_UNAVAILABLE, kvc_now(c));
            kvc_stream_resume(st);
        } else {
            kvc_stream_end(st, code, text, 0);
        }
        kvc_reconcile(c);
        return;
    }
    if (m->resp_case != RPC__SERVER_MSG__RESP_LEASE_KEEPALIVE)
        return;
    if (m->lease_keepalive->ttl <= 0) {
        kvc_stream_end(st, RPC_CODE_NOT_FOUND, rpc_err_text(RPC_ERR_LEASE_NOT_FOUND), 0);
        return;
    }
    st->ttl_s = m->lease_keepalive->ttl;
    c->st.keepalive_acks++;
    c->st.keepalive_last_ack_ms = kvc_now(c) / FL_MS;
    struct kvc_result r;
    memset(&r, 0, sizeof(r));
    r.call_id = st->id;
    r.method = KVC_LEASE_KEEPALIVE;
    r.status = KVC_OK;
    r.error = "";
    r.call_ns = st->opened_ns;
    r.return_ns = kvc_now(c);
    r.answered = true;
    r.node = c->eps[st->ep].node;
    kvc_decode_header(&r.header, m);
    r.lease_id = m->lease_keepalive->id;
    r.ttl_s = st->ttl_s;
    /* Next keep-alive due at TTL/3 (sent by the next tick past it); the lease is
     * presumed gone after a TTL of silence. */
    st->next_ka_ns = kvc_now(c) + st->ttl_s * FL_S / 3;
    env_timer_stop(c->env, &st->deadline_timer);
    env_timer_start(c->env, &st->deadline_timer, st->ttl_s * FL_S, kvc_keepalive_deadline, st);
    if (st->kfn)
        st->kfn(st->ud, &r);
}

bool kvc_stream_on_msg(struct kvc_client *c, size_t i, const Rpc__ServerMsg *m)
{
    c->stream_steps++;
    struct kvc_stream *st = kvc_idmap_get(&c->streams_by_wire, m->call_id);
    if (st == NULL)
        return false;
    if (st->state != KVC_ST_OPEN || st->ep != (int)i)
        return true; /* a late frame of an abandoned incarnation */
    if (st->kind == KVC_STREAM_WATCH)
        kvc_watch_on_msg(st, m);
    else
        kvc_keepalive_on_msg(st, m);
    return true;
}

void kvc_streams_conn_lost(struct kvc_client *c, size_t i)
{
    struct kvc_svec v = {0};
    kvc_svec_push_list(&v, &c->open_lb[i]);
    kvc_svec_push_list(&v, &c->open_node[i]);
    kvc_svec_sort(&v);
    c->stream_steps += v.len;
    for (size_t k = 0; k < v.len; k++) {
        struct kvc_stream *st = v.p[k];
        if (st->state == KVC_ST_OPEN && st->ep == (int)i)
            kvc_stream_resume(st);
    }
    free(v.p);
}

void kvc_streams_close_all(struct kvc_client *c)
{
    while (c->streams_head != NULL)
        kvc_stream_end(c->streams_head, RPC_CODE_CANCELED, rpc_err_text(RPC_ERR_CLIENT_CLOSED), 0);
}

/* ---------------------------------------------------------------- API --------- */

static void kvc_stream_start_fire(void *ctx)
{
    struct kvc_stream *st = ctx;
    kvc_stream_set_state(st, KVC_ST_WAIT);
    kvc_reconcile(st->c);
}

static struct kvc_stream *kvc_stream_new(struct kvc_client *c, enum kvc_stream_kind kind,
                                         const struct kvc_call_opts *opts, void *ud)
{
    struct kvc_stream *st = fl_calloc(1, sizeof(*st));
    st->c = c;
    st->kind = kind;
    st->id = kvc_new_id(c);
    if (opts)
        st->opts = *opts;
    st->ep = st->last_ep = -1;
    st->ud = ud;
    st->opened_ns = kvc_now(c);
    st->state = KVC_ST_RETRY; /* becomes WAIT from the start timer */
    kvc_streams_push(c, st);
    env_timer_start(c->env, &st->retry_timer, 0, kvc_stream_start_fire, st);
    return st;
}

uint64_t kvc_watch(struct kvc_client *c, const struct kvc_watch_req *req,
                   const struct kvc_call_opts *opts, kvc_watch_fn *fn, void *ud)
{
    FL_ASSERT(!c->closed);
    struct kvc_stream *st = kvc_stream_new(c, KVC_STREAM_WATCH, opts, ud);
    st->wfn = fn;
    /* Copy the key range into one block. */
    size_t kn = req->key.n, en = req->range_end.n;
    uint8_t *blk = fl_malloc(kn + en + 1);
    if (kn)
        memcpy(blk, req->key.p, kn);
    if (en)
        memcpy(blk + kn, req->range_end.p, en);
    st->wreq_block = blk;
    st->wreq = *req;
    st->wreq.key.p = kn ? blk : NULL;
    st->wreq.range_end.p = en ? blk + kn : NULL;
    st->next_rev = req->start_rev;
    st->reached_rev = req->start_rev > 0 ? req->start_rev - 1 : 0;
    kvc_stats_watch_open(c, st);
    if (c->cfg.observer.watch_open)
        c->cfg.observer.watch_open(c->cfg.observer.ud, c, st->id, &st->wreq, st->opened_ns);
    return st->id;
}

int kvc_watch_cancel(struct kvc_client *c, uint64_t watch_id)
{
    struct kvc_stream *st = kvc_stream_find(c, watch_id);
    if (st == NULL || st->kind != KVC_STREAM_WATCH)
        return FL_ENOENT;
    kvc_stream_end(st, RPC_CODE_CANCELED, KVC_REASON_CLIENT, 0);
    return FL_OK;
}

uint64_t kvc_lease_keepalive(struct kvc_client *c, int64_t lease_id,
                             const struct kvc_call_opts *opts, kvc_done_fn *done, void *ud)
{
    FL_ASSERT(!c->closed);
    struct kvc_stream *st = kvc_stream_new(c, KVC_STREAM_KEEPALIVE, opts, ud);
    st->kfn = done;
    st->lease_id = lease_id;
    return st->id;
}

int kvc_lease_keepalive_stop(struct kvc_client *c, uint64_t stream_id)
{
    struct kvc_stream *st = kvc_stream_find(c, stream_id);
    if (st == NULL || st->kind != KVC_STREAM_KEEPALIVE)
        return FL_ENOENT;
    kvc_stream_end(st, RPC_CODE_CANCELED, rpc_err_text(RPC_ERR_CLIENT_CANCELED), 0);
    return FL_OK;
}
