/*
 * client_stats.c: the per-client figures of the run summary (DESIGN §3.9
 * `clients`): outcomes and availability, the longest stall of unary calls, the
 * longest lag of a watch behind a revision the cluster had committed, failover
 * time after each fault, connections and retries.
 *
 * max_stall: the longest time the client spent with a call outstanding between two
 * successes. Busy spans (from no outstanding call to one, until none again) add up
 * across failures and the count restarts at every success; idle time between spans
 * does not count. So a client whose calls keep timing out one after the other
 * stalls for the whole run of timeouts, not for one timeout.
 *
 * watch stall: kvc_client_note_commit queues, per open watch, the committed
 * revisions that touch its range and that it has not reached yet, with their
 * commit times; when the watch reaches a revision (an event or a progress
 * notification) the queued ones it covers are popped and their lag measured. What
 * is still queued at the end counts up to the end.
 */
#include "nodes/client/client_int.h"

void kvc_stats_op_start(struct kvc_client *c)
{
    if (c->outstanding == 0)
        c->stall_start_ns = kvc_now(c);
    c->outstanding++;
}

/* The stall so far: busy time since the last success (closed spans + the open one). */
static int64_t kvc_stall_now(const struct kvc_client *c, int64_t now)
{
    return c->stall_acc_ns + (c->outstanding > 0 ? now - c->stall_start_ns : 0);
}

void kvc_stats_op_end(struct kvc_client *c, const struct kvc_result *r)
{
    int64_t now = kvc_now(c);
    FL_ASSERT(c->outstanding > 0);
    c->outstanding--;
    if (r->status == KVC_OK)
        c->st.ok++;
    else if (r->status == KVC_FAIL)
        c->st.fail++;
    else
        c->st.unknown++;
    if (r->status == KVC_OK) {
        if (r->node)
            c->st.last_node = r->node;
        c->max_stall_ns = FL_MAX(c->max_stall_ns, c->stall_acc_ns + now - c->stall_start_ns);
        c->stall_acc_ns = 0;
        c->stall_start_ns = now;
        for (size_t i = 0; i < c->st.fault_count; i++) {
            if (c->st.failover_ms[i] < 0 && r->call_ns >= c->st.fault_ns[i])
                c->st.failover_ms[i] = (now - c->st.fault_ns[i]) / FL_MS;
        }
    } else if (c->outstanding == 0) {
        /* The busy span ends without a success: it counts, and the stall goes on
         * into the next span (a run of failures is one stall; idle gaps do not
         * count). */
        c->stall_acc_ns += now - c->stall_start_ns;
        c->max_stall_ns = FL_MAX(c->max_stall_ns, c->stall_acc_ns);
    }
}

void kvc_client_note_fault(struct kvc_client *c, int64_t at_ns)
{
    if (c->st.fault_count >= KVC_FAULTS_MAX)
        return;
    c->st.fault_ns[c->st.fault_count] = at_ns;
    c->st.failover_ms[c->st.fault_count] = -1;
    c->st.fault_count++;
}

static int kvc_bytes_cmp(struct kvc_bytes a, struct kvc_bytes b)
{
    size_t n = FL_MIN(a.n, b.n);
    int r = n ? memcmp(a.p, b.p, n) : 0;
    if (r != 0)
        return r;
    return a.n < b.n ? -1 : a.n > b.n ? 1 : 0;
}

/* Does key fall in the watch's [key, range_end)? */
bool kvc_watch_matches(const struct kvc_watch_req *w, struct kvc_bytes key)
{
    if (w->range_end.n == 0)
        return kvc_bytes_cmp(w->key, key) == 0;
    if (kvc_bytes_cmp(key, w->key) < 0)
        return false;
    if (w->range_end.n == 1 && w->range_end.p[0] == 0)
        return true;
    return kvc_bytes_cmp(key, w->range_end) < 0;
}

static void kvc_pend_push(struct kvc_stream *st, int64_t rev, int64_t at_ns)
{
    if (st->pend_len > 0) {
        size_t last = (st->pend_head + st->pend_len - 1) % st->pend_cap;
        if (st->pend[last].rev >= rev)
            return; /* several keys of one revision */
    }
    if (st->pend_len == st->pend_cap) {
        size_t cap = st->pend_cap ? st->pend_cap * 2 : 16;
        struct kvc_wpending *p = fl_malloc(cap * sizeof(*p));
        for (size_t i = 0; i < st->pend_len; i++)
            p[i] = st->pend[(st->pend_head + i) % st->pend_cap];
        free(st->pend);
        st->pend = p;
        st->pend_cap = cap;
        st->pend_head = 0;
    }
    st->pend[(st->pend_head + st->pend_len) % st->pend_cap] = (struct kvc_wpending){rev, at_ns};
    st->pend_len++;
}

void kvc_client_note_commit(struct kvc_client *c, int64_t rev, struct kvc_bytes key, int64_t at_ns)
{
    for (struct kvc_stream *st = c->streams_head; st; st = st->all_next) {
        if (st->kind != KVC_STREAM_WATCH || st->state == KVC_ST_DONE)
            continue;
        if (rev <= st->reached_rev)
            continue;
        if (st->wreq.start_rev == 0 && at_ns < st->opened_ns)
            continue; /* "from now": earlier revisions are not owed */
        if (key.n > 0 && !kvc_watch_matches(&st->wreq, key))
            continue;
        kvc_pend_push(st, rev, at_ns);
    }
}

void kvc_stats_watch_reached(struct kvc_client *c, struct kvc_stream *st, int64_t rev)
{
    int64_t now = kvc_now(c);
    if (rev > st->reached_rev)
        st->reached_rev = rev;
    while (st->pend_len > 0 && st->pend[st->pend_head].rev <= st->reached_rev) {
        st->max_stall_ns = FL_MAX(st->max_stall_ns, now - st->pend[st->pend_head].at_ns);
        st->pend_head = (st->pend_head + 1) % st->pend_cap;
        st->pend_len--;
    }
    c->st.watch_max_stall_ms = FL_MAX(c->st.watch_max_stall_ms, st->max_stall_ns / FL_MS);
}

static int64_t kvc_watch_lag_now(const struct kvc_client *c, const struct kvc_stream *st)
{
    if (st->pend_len == 0)
        return 0;
    return kvc_now(c) - st->pend[st->pend_head].at_ns;
}

void kvc_stats_watch_close(struct kvc_client *c, struct kvc_stream *st)
{
    /* A watch that ends while behind was stalled until now. */
    st->max_stall_ns = FL_MAX(st->max_stall_ns, kvc_watch_lag_now(c, st));
    st->pend_len = 0;
    c->st.watch_max_stall_ms = FL_MAX(c->st.watch_max_stall_ms, st->max_stall_ns / FL_MS);
}

void kvc_client_finish(struct kvc_client *c)
{
    if (c->finished)
        return;
    c->finished = true;
    c->max_stall_ns = FL_MAX(c->max_stall_ns, kvc_stall_now(c, kvc_now(c)));
    for (struct kvc_stream *st = c->streams_head; st; st = st->all_next) {
        if (st->kind == KVC_STREAM_WATCH)
            kvc_stats_watch_close(c, st);
    }
}

static const char *conn_state_name(enum lb_conn s)
{
    switch (s) {
    case LB_CONN_IDLE:
        return "idle";
    case LB_CONN_CONNECTING:
        return "connecting";
    case LB_CONN_READY:
        return "ready";
    case LB_CONN_FAILED:
        return "closed";
    }
    return "closed";
}

/* Each endpoint of the client's list: its connection, the policy's view of it. */
static void endpoint_stats(const struct kvc_client *c, struct kvc_stats *out)
{
    bool lists = c->lb.cfg.kind == LB_PINNED_BLACKLIST || c->lb.cfg.kind == LB_HEALTH_AWARE;
    out->n_endpoints = c->lb.n;
    for (size_t i = 0; i < c->lb.n; i++) {
        const struct lb_endpoint *e = &c->lb.ep[i];
        out->endpoints[i] = (struct kvc_endpoint_stats){
            .member = c->eps[i].node,
            .state = conn_state_name(c->conns[i].state),
            .unhealthy_until_ms = lists ? e->unhealthy_until_ns / FL_MS : -1,
            .pinned = c->lb.pinned == (int)i,
            .in_flight = c->conns[i].unary,
            .connections_opened = c->conns[i].opened,
        };
    }
}

void kvc_client_stats(const struct kvc_client *c, struct kvc_stats *out)
{
    *out = c->st;
    int64_t stall = c->max_stall_ns;
    if (!c->finished)
        stall = FL_MAX(stall, kvc_stall_now(c, kvc_now(c)));
    out->max_stall_ms = stall / FL_MS;
    for (const struct kvc_stream *st = c->streams_head; st; st = st->all_next) {
        if (st->kind == KVC_STREAM_WATCH)
            out->watch_max_stall_ms =
                FL_MAX(out->watch_max_stall_ms, kvc_watch_lag_now(c, st) / FL_MS);
    }
    out->switches = (int64_t)c->lb.switches;
    out->pinned_node = c->lb.pinned >= 0 ? c->eps[c->lb.pinned].node : 0;
    int64_t total = out->ok + out->fail + out->unknown;
    out->availability = total > 0 ? (double)out->ok / (double)total : 1.0;
    endpoint_stats(c, out);
}

json_t *kvc_stats_json(const struct kvc_stats *s)
{
    json_t *o = json_object();
    json_object_set_new(o, "id", json_integer(s->id));
    json_object_set_new(o, "balancer", json_string(s->balancer ? s->balancer : ""));
    json_object_set_new(o, "ok", json_integer(s->ok));
    json_object_set_new(o, "fail", json_integer(s->fail));
    json_object_set_new(o, "unknown", json_integer(s->unknown));
    json_object_set_new(o, "availability", json_real(s->availability));
    json_object_set_new(o, "max_stall_ms", json_integer(s->max_stall_ms));
    json_object_set_new(o, "watch_max_stall_ms", json_integer(s->watch_max_stall_ms));
    json_object_set_new(o, "connections_opened", json_integer(s->connections_opened));
    json_object_set_new(o, "retries", json_integer(s->retries));
    json_object_set_new(o, "connections_held", json_integer(s->connections_held));
    json_object_set_new(o, "connections_held_max", json_integer(s->connections_held_max));
    json_object_set_new(o, "connections_closed", json_integer(s->connections_closed));
    json_object_set_new(o, "dials", json_integer(s->dials));
    json_object_set_new(o, "attempts", json_integer(s->attempts));
    json_object_set_new(o, "retries_to_bad", json_integer(s->retries_to_bad));
    json_object_set_new(o, "read_retries", json_integer(s->read_retries));
    json_object_set_new(o, "writes_resent", json_integer(s->writes_resent));
    json_object_set_new(o, "pings", json_integer(s->pings));
    json_object_set_new(o, "pings_failed", json_integer(s->pings_failed));
    json_object_set_new(o, "probes", json_integer(s->probes));
    json_object_set_new(o, "probe_drops", json_integer(s->probe_drops));
    json_object_set_new(o, "stream_reconnects", json_integer(s->stream_reconnects));
    json_object_set_new(o, "switches", json_integer(s->switches));
    json_object_set_new(o, "pinned_node", json_integer(s->pinned_node));
    json_object_set_new(o, "last_node", json_integer(s->last_node));
    json_object_set_new(o, "last_stream_node", json_integer(s->last_stream_node));
    json_object_set_new(o, "keepalive_acks", json_integer(s->keepalive_acks));
    json_object_set_new(o, "keepalive_last_ack_ms", json_integer(s->keepalive_last_ack_ms));
    json_object_set_new(o, "keepalive_ended", json_integer(s->keepalive_ended));
    json_object_set_new(o, "keepalive_ended_ms", json_integer(s->keepalive_ended_ms));
    json_object_set_new(o, "streams_no_leader", json_integer(s->streams_no_leader));
    json_t *fo = json_array();
    for (size_t i = 0; i < s->fault_count; i++) {
        json_t *f = json_object();
        json_object_set_new(f, "fault_ns", json_integer(s->fault_ns[i]));
        json_object_set_new(f, "failover_ms",
                            s->failover_ms[i] >= 0 ? json_integer(s->failover_ms[i]) : json_null());
        json_array_append_new(fo, f);
    }
    json_object_set_new(o, "failover", fo);
    json_t *eps = json_array();
    for (size_t i = 0; i < s->n_endpoints; i++) {
        const struct kvc_endpoint_stats *e = &s->endpoints[i];
        json_t *j = json_object();
        json_object_set_new(j, "member", json_integer(e->member));
        json_object_set_new(j, "state", json_string(e->state));
        json_object_set_new(j, "unhealthy_until_ms",
                            e->unhealthy_until_ms >= 0 ? json_integer(e->unhealthy_until_ms)
                                                       : json_null());
        json_object_set_new(j, "pinned", json_boolean(e->pinned));
        json_object_set_new(j, "in_flight", json_integer(e->in_flight));
        json_object_set_new(j, "connections_opened", json_integer(e->connections_opened));
        json_array_append_new(eps, j);
    }
    json_object_set_new(o, "endpoints", eps);
    return o;
}

const char *kvc_attempt_outcome_name(enum kvc_attempt_outcome o)
{
    static const char *const names[] = {"ok",        "error",    "transport",  "timeout",
                                        "abandoned", "canceled", "outstanding"};
    FL_ASSERT((size_t)o < FL_ARRAY_LEN(names));
    return names[o];
}

uint64_t kvc_attempts_seen(const struct kvc_client *c)
{
    return c->attempts_seen;
}

json_t *kvc_attempts_json(const struct kvc_client *c, size_t n)
{
    uint64_t kept = FL_MIN(c->attempts_seen, (uint64_t)KVC_ATTEMPTS_KEEP);
    if (n == 0 || n > kept)
        n = (size_t)kept;
    json_t *arr = json_array();
    for (uint64_t k = c->attempts_seen - n; k < c->attempts_seen; k++) {
        const struct kvc_attempt_rec *a = &c->attempts[k % KVC_ATTEMPTS_KEEP];
        json_t *j = json_object();
        json_object_set_new(j, "at_ns", json_integer(a->at_ns));
        json_object_set_new(j, "end_ns", a->end_ns >= 0 ? json_integer(a->end_ns) : json_null());
        json_object_set_new(j, "member", json_integer(a->node));
        json_object_set_new(j, "call", json_string(kvc_method_name(a->method)));
        json_object_set_new(j, "outcome", json_string(kvc_attempt_outcome_name(a->outcome)));
        json_object_set_new(j, "error", a->error ? json_string(a->error) : json_null());
        json_object_set_new(j, "retry", json_boolean(a->retry));
        json_array_append_new(arr, j);
    }
    return arr;
}
