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
 * is still queued at the end counts up to the end. A commit finds the watches of its
 * key through an interval tree of their ranges; commits of unknown keys go into one
 * log that each watch reads when it next needs to (the wild log below), so a commit
 * costs work in the watches it concerns, not in all of them.
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
        size_t cap = fl_grow_cap(st->pend_cap, st->pend_len + 1, 16, sizeof(*st->pend));
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

/* ---- commits of unknown keys (the wild log) -------------------------------------
 *
 * A commit whose keys the run driver does not know (a txn, a lease expiry) is owed
 * by every open watch that has not reached it. Instead of queuing it on each watch,
 * it goes once into the client's wild log, and each watch judges the entries it has
 * not judged yet when its accounting is next read or changed (a watch reaching a
 * revision, its lag asked, its end). The judgement is the one a visit at commit time
 * made: the watch's reached revision has not changed since (every change judges
 * first), and the log is in revision order with times that never go back, so the
 * owed entries are always one run [wild_lo, end of log). Only the oldest pending
 * commit of a watch matters for its lag (the lag of a set of commits reached at once
 * is that of the oldest), so the run stands for them all. */

static uint64_t wild_end(const struct kvc_client *c)
{
    return c->wild_base + c->wild_len;
}

static const struct kvc_wpending *wild_at(const struct kvc_client *c, uint64_t pos)
{
    FL_ASSERT(pos >= c->wild_base && pos < wild_end(c));
    return &c->wild[pos - c->wild_base];
}

/* Does st owe the wild entry e (judged with its present reached revision)? */
static bool wild_owed(const struct kvc_stream *st, const struct kvc_wpending *e)
{
    return e->rev > st->reached_rev && (st->wreq.start_rev != 0 || e->at_ns >= st->opened_ns);
}

/* First position in [from, end of log) that st owes (the predicate holds on a suffix). */
static uint64_t wild_first_owed(const struct kvc_client *c, const struct kvc_stream *st,
                                uint64_t from)
{
    uint64_t lo = from, hi = wild_end(c);
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (wild_owed(st, wild_at(c, mid)))
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* Where st's owed wild entries start, the new ones judged (st unchanged). */
static uint64_t wild_owed_lo(const struct kvc_client *c, const struct kvc_stream *st)
{
    if (st->wild_lo < st->wild_hi)
        return st->wild_lo; /* later commits are newer still: owed as well */
    return wild_first_owed(c, st, st->wild_hi);
}

static void wild_judge(struct kvc_client *c, struct kvc_stream *st)
{
    st->wild_lo = wild_owed_lo(c, st);
    st->wild_hi = wild_end(c);
}

/* Drops the log prefix no watch can owe any more, once the log has grown by as many
 * entries as there are streams since the last pass (amortised O(1) an entry). */
static void wild_trim(struct kvc_client *c)
{
    if (c->wild_len < c->wild_trim_at)
        return;
    uint64_t keep = wild_end(c);
    for (struct kvc_stream *st = c->streams_head; st; st = st->all_next) {
        if (st->kind == KVC_STREAM_WATCH && st->wild_lo < keep)
            keep = st->wild_lo;
    }
    c->stream_steps += c->stream_count;
    size_t drop = (size_t)(keep - c->wild_base);
    memmove(c->wild, c->wild + drop, (c->wild_len - drop) * sizeof(*c->wild));
    c->wild_len -= drop;
    c->wild_base = keep;
    c->wild_trim_at = c->wild_len + FL_MAX((size_t)1024, c->stream_count);
}

static void wild_append(struct kvc_client *c, int64_t rev, int64_t at_ns)
{
    FL_ASSERTF(rev > c->noted_rev_max, "commit of unknown keys at revision %lld noted after %lld",
               (long long)rev, (long long)c->noted_rev_max);
    FL_ASSERT(c->wild_len == 0 || c->wild[c->wild_len - 1].at_ns <= at_ns);
    FL_GROW(c->wild, c->wild_cap, c->wild_len + 1, 64);
    c->wild[c->wild_len++] = (struct kvc_wpending){rev, at_ns};
    c->wild_rev_max = rev;
    wild_trim(c);
}

/* ---- commits of known keys ---------------------------------------------------- */

struct kvc_note {
    int64_t rev, at_ns;
    struct kvc_bytes key;
};

static struct kvc_stream *kvc_stream_of(struct fl_ivnode *n)
{
    return (struct kvc_stream *)(void *)((char *)n - offsetof(struct kvc_stream, iv));
}

/* A watch whose range holds the committed key. */
static void kvc_note_hit(void *ctx, struct fl_ivnode *n)
{
    const struct kvc_note *nt = ctx;
    struct kvc_stream *st = kvc_stream_of(n);
    FL_ASSERT(st->kind == KVC_STREAM_WATCH && st->state != KVC_ST_DONE);
    FL_ASSERT(kvc_watch_matches(&st->wreq, nt->key));
    if (nt->rev <= st->reached_rev)
        return;
    if (st->wreq.start_rev == 0 && nt->at_ns < st->opened_ns)
        return; /* "from now": earlier revisions are not owed */
    kvc_pend_push(st, nt->rev, nt->at_ns);
}

void kvc_client_note_commit(struct kvc_client *c, int64_t rev, struct kvc_bytes key, int64_t at_ns)
{
    if (key.n == 0) {
        wild_append(c, rev, at_ns);
    } else {
        FL_ASSERTF(rev > c->wild_rev_max, "commit at revision %lld noted after %lld",
                   (long long)rev, (long long)c->wild_rev_max);
        struct kvc_note nt = {rev, at_ns, key};
        c->stream_steps += fl_ivtree_stab(&c->watch_tree, key.p, key.n, kvc_note_hit, &nt);
    }
    c->noted_rev_max = FL_MAX(c->noted_rev_max, rev);
}

void kvc_stats_watch_open(struct kvc_client *c, struct kvc_stream *st)
{
    FL_ASSERT(st->kind == KVC_STREAM_WATCH && !st->in_tree);
    st->wild_lo = st->wild_hi = wild_end(c);
    st->in_tree = fl_ivnode_set_etcd(&st->iv, st->id, st->wreq.key.p, st->wreq.key.n,
                                     st->wreq.range_end.p, st->wreq.range_end.n);
    if (st->in_tree)
        fl_ivtree_insert(&c->watch_tree, &st->iv);
}

void kvc_stats_watch_end(struct kvc_client *c, struct kvc_stream *st)
{
    if (st->in_tree)
        fl_ivtree_remove(&c->watch_tree, &st->iv);
    st->in_tree = false;
}

void kvc_stats_free(struct kvc_client *c)
{
    FL_ASSERT(c->watch_tree.len == 0);
    free(c->wild);
    c->wild = NULL;
    c->wild_len = c->wild_cap = 0;
}

void kvc_stats_watch_reached(struct kvc_client *c, struct kvc_stream *st, int64_t rev)
{
    int64_t now = kvc_now(c);
    wild_judge(c, st); /* under the reached revision the commits found */
    if (rev > st->reached_rev)
        st->reached_rev = rev;
    while (st->pend_len > 0 && st->pend[st->pend_head].rev <= st->reached_rev) {
        st->max_stall_ns = FL_MAX(st->max_stall_ns, now - st->pend[st->pend_head].at_ns);
        st->pend_head = (st->pend_head + 1) % st->pend_cap;
        st->pend_len--;
    }
    if (st->wild_lo < st->wild_hi && wild_at(c, st->wild_lo)->rev <= st->reached_rev) {
        /* The oldest of the wild commits now reached has the longest lag. */
        st->max_stall_ns = FL_MAX(st->max_stall_ns, now - wild_at(c, st->wild_lo)->at_ns);
        uint64_t lo = st->wild_lo, hi = st->wild_hi;
        while (lo < hi) {
            uint64_t mid = lo + (hi - lo) / 2;
            if (wild_at(c, mid)->rev <= st->reached_rev)
                lo = mid + 1;
            else
                hi = mid;
        }
        st->wild_lo = lo;
    }
    c->st.watch_max_stall_ms = FL_MAX(c->st.watch_max_stall_ms, st->max_stall_ns / FL_MS);
}

/* How long st has owed its oldest pending commit (0: none). */
static int64_t kvc_watch_lag_now(const struct kvc_client *c, const struct kvc_stream *st)
{
    int64_t oldest = INT64_MAX;
    if (st->pend_len > 0)
        oldest = st->pend[st->pend_head].at_ns;
    uint64_t w = wild_owed_lo(c, st);
    if (w < wild_end(c))
        oldest = FL_MIN(oldest, wild_at(c, w)->at_ns);
    return oldest == INT64_MAX ? 0 : kvc_now(c) - oldest;
}

void kvc_stats_watch_close(struct kvc_client *c, struct kvc_stream *st)
{
    /* A watch that ends while behind was stalled until now. */
    st->max_stall_ns = FL_MAX(st->max_stall_ns, kvc_watch_lag_now(c, st));
    st->pend_len = 0;
    st->wild_lo = st->wild_hi = wild_end(c);
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
    static const char *const names[] = {[LB_CONN_IDLE] = "idle",
                                        [LB_CONN_CONNECTING] = "connecting",
                                        [LB_CONN_READY] = "ready",
                                        [LB_CONN_FAILED] = "closed"};
    return FL_ENUM_NAME(names, s, "closed");
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
