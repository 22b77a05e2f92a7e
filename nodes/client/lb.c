/*
 * lb.c: the four balancer policies as pure decision cores (see lb.h for what each
 * models). No I/O, no clock, no allocation: every input carries its time, and every
 * random choice comes from the policy's own xoshiro256** stream seeded from the
 * client's process stream, so a policy replays exactly under the same inputs.
 */
#include "nodes/client/lb.h"

#include "harness/common/bugs.h"
#include "harness/common/common.h"

static const struct lb_policy_desc lb_policies[LB_KIND_COUNT] = {
    {LB_PINNED_RANDOM, "pinned_random", "clientv3-grpc1.0 (etcd 3.1)",
     "connects to every endpoint, pins one, pins another ready one at random only when the "
     "connection fails or a call is answered Unavailable; no keepalive pings, a timeout does "
     "not move it"},
    {LB_PINNED_BLACKLIST, "pinned_blacklist", "clientv3-grpc1.7 (etcd 3.2/3.3)",
     "one connection to the first endpoint that answers; failed endpoints unhealthy for the "
     "dial timeout (5 s); a keepalive failure switches"},
    {LB_ROUND_ROBIN, "round_robin", "clientv3-grpc1.23 (etcd 3.4+)",
     "one connection per endpoint; each request to the next ready endpoint; no health list"},
    {LB_HEALTH_AWARE, "health_aware", "beyond etcd (etcd#8673)",
     "probes each member (ping + status: leader, term, quorum contact), avoids members cut "
     "off from their peers, picks the lighter of two healthy ones"},
};

size_t lb_policy_count(void)
{
    return LB_KIND_COUNT;
}

const struct lb_policy_desc *lb_policy_info(size_t i)
{
    FL_ASSERT(i < LB_KIND_COUNT);
    return &lb_policies[i];
}

int lb_policy_find(const char *name)
{
    if (name == NULL)
        return -1;
    for (int i = 0; i < LB_KIND_COUNT; i++) {
        if (strcmp(lb_policies[i].name, name) == 0)
            return i;
    }
    return -1;
}

void lb_config_default(struct lb_config *c, enum lb_kind kind)
{
    memset(c, 0, sizeof(*c));
    c->kind = kind;
    c->dial_timeout_ns = 5 * FL_S;
    c->reconnect_base_ns = 1 * FL_S;
    c->reconnect_max_ns = 120 * FL_S;
    c->probe_interval_ns = 200 * FL_MS;
    c->probe_stale_ns = 1 * FL_S;
    c->quorum_age_max_ns = 500 * FL_MS;
    c->suspect_ns = 2 * FL_S;
    c->slow_ns = 300 * FL_MS;
    c->seed = 1;
}

/* ---- the policy's random stream: harness/common's xoshiro256** (rng.h) ---- */

/* Uniform in [0, n) by rejection (no modulo bias). Not fl_rng_below: this
 * reduction (reject the top partial range, then modulo) is what the balancer has
 * always drawn with, and its choices are part of every run's digest. */
static uint64_t lb_below(struct lb *lb, uint64_t n)
{
    FL_ASSERT(n > 0);
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t r;
    do {
        r = fl_rng_u64(&lb->rng);
    } while (r >= limit);
    return r % n;
}

void lb_init(struct lb *lb, const struct lb_config *cfg, size_t endpoint_count)
{
    FL_ASSERT(endpoint_count > 0 && endpoint_count <= LB_ENDPOINTS_MAX);
    FL_ASSERT(cfg->kind < LB_KIND_COUNT);
    memset(lb, 0, sizeof(*lb));
    lb->cfg = *cfg;
    lb->n = endpoint_count;
    lb->pinned = -1;
    fl_rng_seed(&lb->rng, cfg->seed);
    for (size_t i = 0; i < LB_ENDPOINTS_MAX; i++)
        lb->ep[i].quorum_age_ns = -1;
}

bool lb_add_endpoint(struct lb *lb)
{
    if (lb->n >= LB_ENDPOINTS_MAX)
        return false;
    memset(&lb->ep[lb->n], 0, sizeof(lb->ep[lb->n]));
    lb->ep[lb->n].quorum_age_ns = -1;
    lb->n++;
    return true;
}

static bool lb_is_pinned_kind(const struct lb *lb)
{
    return lb->cfg.kind == LB_PINNED_RANDOM || lb->cfg.kind == LB_PINNED_BLACKLIST;
}

static bool lb_unhealthy(const struct lb *lb, size_t i, int64_t now_ns)
{
    return now_ns < lb->ep[i].unhealthy_until_ns;
}

/* pinned_blacklist: true when every endpoint is in its unhealthy wait; then the
 * health balancer falls back to trying them all. */
static bool lb_all_unhealthy(const struct lb *lb, int64_t now_ns)
{
    for (size_t i = 0; i < lb->n; i++) {
        if (!lb_unhealthy(lb, i, now_ns))
            return false;
    }
    return true;
}

static void lb_set_pin(struct lb *lb, int i)
{
    if (lb->pinned != i && i >= 0)
        lb->switches++;
    lb->pinned = i;
}

/* pinned_random's error handler: another READY endpoint at random; else the failed
 * one while its connection is still open (a request that timed out leaves it open,
 * and nothing else would ever pin it again); else none (the next one that becomes
 * ready is pinned). */
static void lb_repin_random(struct lb *lb, size_t failed)
{
    int cand[LB_ENDPOINTS_MAX];
    size_t k = 0;
    for (size_t i = 0; i < lb->n; i++) {
        if (i != failed && lb->ep[i].conn == LB_CONN_READY)
            cand[k++] = (int)i;
    }
    lb->pinned = -1;
    if (k > 0)
        lb_set_pin(lb, cand[lb_below(lb, k)]);
    else if (lb->ep[failed].conn == LB_CONN_READY)
        lb->pinned = (int)failed;
}

/* pinned_blacklist without a pin: the first ready endpoint that is not gray-listed, or
 * any ready one when all are (grpc 1.7's balancer hands every address back then).
 * Without it a client whose only open connection had a request time out would wait
 * on it forever: no new connection becomes ready to be pinned. */
static void lb_repin_blacklist(struct lb *lb, int64_t now_ns)
{
    bool all = lb_all_unhealthy(lb, now_ns);
    for (size_t i = 0; i < lb->n && lb->pinned < 0; i++)
        if (lb->ep[i].conn == LB_CONN_READY && (all || !lb_unhealthy(lb, i, now_ns)))
            lb_set_pin(lb, (int)i);
}

void lb_on_connecting(struct lb *lb, size_t i, int64_t now_ns)
{
    FL_ASSERT(i < lb->n);
    (void)now_ns;
    lb->ep[i].conn = LB_CONN_CONNECTING;
}

void lb_on_ready(struct lb *lb, size_t i, int64_t now_ns)
{
    FL_ASSERT(i < lb->n);
    struct lb_endpoint *e = &lb->ep[i];
    e->conn = LB_CONN_READY;
    e->backoff_ns = 0;
    e->next_dial_ns = 0;
    if (!lb_is_pinned_kind(lb) || lb->pinned >= 0)
        return;
    if (FL_BUG(CLIENT_NO_FAILOVER) && i != 0)
        return;
    /* The first endpoint that answers is pinned (grpc 1.0 and 1.7 alike); the
     * blacklist policy ignores one still in its unhealthy wait unless all are. */
    if (lb->cfg.kind == LB_PINNED_BLACKLIST && lb_unhealthy(lb, i, now_ns) &&
        !lb_all_unhealthy(lb, now_ns))
        return;
    lb_set_pin(lb, (int)i);
}

void lb_on_idle(struct lb *lb, size_t i)
{
    FL_ASSERT(i < lb->n);
    lb->ep[i].conn = LB_CONN_IDLE;
    lb->ep[i].probed = false;
}

/* gRPC's reconnect backoff: base, then x1.6 up to the cap, with +-20% jitter. */
static void lb_backoff(struct lb *lb, struct lb_endpoint *e, int64_t now_ns)
{
    if (e->backoff_ns == 0)
        e->backoff_ns = lb->cfg.reconnect_base_ns;
    else
        e->backoff_ns = FL_MIN(e->backoff_ns * 8 / 5, lb->cfg.reconnect_max_ns);
    int64_t span = e->backoff_ns / 5;
    int64_t jitter = span > 0 ? (int64_t)lb_below(lb, (uint64_t)(2 * span + 1)) - span : 0;
    e->next_dial_ns = now_ns + e->backoff_ns + jitter;
}

void lb_on_fail(struct lb *lb, size_t i, enum lb_fail why, int64_t now_ns)
{
    FL_ASSERT(i < lb->n);
    struct lb_endpoint *e = &lb->ep[i];
    bool conn_lost = why == LB_FAIL_CONNECT || why == LB_FAIL_BROKEN || why == LB_FAIL_KEEPALIVE;
    if (conn_lost) {
        e->conn = LB_CONN_FAILED;
        lb_backoff(lb, e, now_ns);
        e->probed = false;
    }
    switch (lb->cfg.kind) {
    case LB_PINNED_RANDOM:
        /* grpc 1.0 knew nothing of member health: it moved only when the transport told
         * it so (the connection failed or closed, or a call came back Unavailable). A
         * call that times out on a paused or partitioned member leaves it pinned, which
         * is how that client got stuck (etcd#8673's starting point). */
        if (why == LB_FAIL_TIMEOUT)
            break;
        if ((int)i == lb->pinned && !FL_BUG(CLIENT_NO_FAILOVER))
            lb_repin_random(lb, i);
        break;
    case LB_PINNED_BLACKLIST:
        /* grpc1.7 health balancer: gray-list the endpoint for the dial timeout. */
        e->unhealthy_until_ns = now_ns + lb->cfg.dial_timeout_ns;
        if ((int)i == lb->pinned && !FL_BUG(CLIENT_NO_FAILOVER))
            lb->pinned = -1;
        break;
    case LB_ROUND_ROBIN:
        break;
    case LB_HEALTH_AWARE:
        if (why == LB_FAIL_TIMEOUT || why == LB_FAIL_UNAVAILABLE || why == LB_FAIL_KEEPALIVE)
            e->unhealthy_until_ns = now_ns + lb->cfg.suspect_ns;
        break;
    default:
        FL_UNREACHABLE();
    }
}

void lb_on_probe(struct lb *lb, size_t i, int64_t now_ns, int64_t rtt_ns, bool has_leader,
                 uint64_t raft_term, int64_t quorum_age_ns, bool is_learner)
{
    FL_ASSERT(i < lb->n);
    FL_ASSERT(rtt_ns >= 0);
    struct lb_endpoint *e = &lb->ep[i];
    e->latency_ns = e->probed || e->latency_ns > 0 ? (3 * e->latency_ns + rtt_ns) / 4 : rtt_ns;
    e->probed = true;
    e->probe_ns = now_ns;
    e->has_leader = has_leader;
    e->raft_term = raft_term;
    e->quorum_age_ns = quorum_age_ns;
    e->is_learner = is_learner;
}

void lb_on_probe_lost(struct lb *lb, size_t i, int64_t now_ns)
{
    FL_ASSERT(i < lb->n);
    (void)now_ns;
    lb->ep[i].probed = false;
}

void lb_on_request_start(struct lb *lb, size_t i, int64_t now_ns)
{
    FL_ASSERT(i < lb->n);
    (void)now_ns;
    lb->ep[i].inflight++;
}

void lb_on_request_end(struct lb *lb, size_t i)
{
    FL_ASSERT(i < lb->n);
    FL_ASSERT(lb->ep[i].inflight > 0);
    lb->ep[i].inflight--;
}

void lb_set_oldest_inflight(struct lb *lb, size_t i, int64_t start_ns)
{
    FL_ASSERT(i < lb->n);
    lb->ep[i].oldest_inflight_ns = start_ns;
}

/* health_aware: the highest term a fresh probe with a leader reported; a member
 * behind it has not heard of the newest leader. */
static uint64_t lb_max_term(const struct lb *lb, int64_t now_ns)
{
    uint64_t t = 0;
    for (size_t i = 0; i < lb->n; i++) {
        const struct lb_endpoint *e = &lb->ep[i];
        /* Only members that know a leader count: a member cut off from its peers
         * without pre-vote keeps raising its term while it campaigns alone. */
        if (e->probed && e->has_leader && now_ns - e->probe_ns <= lb->cfg.probe_stale_ns)
            t = FL_MAX(t, e->raft_term);
    }
    return t;
}

bool lb_healthy(const struct lb *lb, size_t i, int64_t now_ns)
{
    FL_ASSERT(i < lb->n);
    const struct lb_endpoint *e = &lb->ep[i];
    if (e->conn != LB_CONN_READY || lb_unhealthy(lb, i, now_ns))
        return false;
    if (lb->cfg.kind != LB_HEALTH_AWARE)
        return true;
    if (!e->probed || now_ns - e->probe_ns > lb->cfg.probe_stale_ns)
        return false;
    if (!e->has_leader || e->is_learner || e->quorum_age_ns < 0)
        return false;
    /* The member's view is as old as the probe: age it to now (etcd#8673: a member
     * cut off from its peers still answers, but its quorum contact keeps ageing). */
    if (e->quorum_age_ns + (now_ns - e->probe_ns) > lb->cfg.quorum_age_max_ns)
        return false;
    if (e->raft_term < lb_max_term(lb, now_ns))
        return false;
    /* A request stuck there far longer than a round trip is a gray failure too. */
    if (e->inflight > 0 && e->oldest_inflight_ns > 0 &&
        now_ns - e->oldest_inflight_ns > lb->cfg.slow_ns)
        return false;
    return true;
}

bool lb_wants_conn(const struct lb *lb, size_t i, int64_t now_ns)
{
    FL_ASSERT(i < lb->n);
    if (FL_BUG(CLIENT_NO_FAILOVER) && lb_is_pinned_kind(lb))
        return i == 0;
    switch (lb->cfg.kind) {
    case LB_PINNED_BLACKLIST:
        if (lb->pinned >= 0)
            return (int)i == lb->pinned;
        return !lb_unhealthy(lb, i, now_ns) || lb_all_unhealthy(lb, now_ns);
    case LB_PINNED_RANDOM:
    case LB_ROUND_ROBIN:
    case LB_HEALTH_AWARE:
        return true;
    default:
        FL_UNREACHABLE();
    }
}

bool lb_dial_due(const struct lb *lb, size_t i, int64_t now_ns)
{
    FL_ASSERT(i < lb->n);
    const struct lb_endpoint *e = &lb->ep[i];
    if (e->conn == LB_CONN_CONNECTING || e->conn == LB_CONN_READY)
        return false;
    if (!lb_wants_conn(lb, i, now_ns))
        return false;
    /* the unhealthy wait spaces the blacklist's redials, unless every endpoint is in it:
     * then they all come back at once, and a dead one is redialled with backoff */
    if (lb->cfg.kind == LB_PINNED_BLACKLIST && !lb_all_unhealthy(lb, now_ns))
        return true;
    return now_ns >= e->next_dial_ns;
}

/* Power of two choices among cand[0..k): lower in-flight count, then lower
 * latency, then lower index. */
static int lb_two_choices(struct lb *lb, const int *cand, size_t k)
{
    FL_ASSERT(k > 0);
    if (k == 1)
        return cand[0];
    size_t a = lb_below(lb, k);
    size_t b = lb_below(lb, k - 1);
    if (b >= a)
        b++;
    const struct lb_endpoint *ea = &lb->ep[cand[a]], *eb = &lb->ep[cand[b]];
    if (ea->inflight != eb->inflight)
        return ea->inflight < eb->inflight ? cand[a] : cand[b];
    if (ea->latency_ns != eb->latency_ns)
        return ea->latency_ns < eb->latency_ns ? cand[a] : cand[b];
    return FL_MIN(cand[a], cand[b]);
}

/* health_aware candidates, best tier first: healthy; then ready, not suspected and
 * answering probes; then any ready endpoint. */
static int lb_pick_health(struct lb *lb, int64_t now_ns, int avoid)
{
    int cand[LB_ENDPOINTS_MAX];
    for (int tier = 0; tier < 3; tier++) {
        size_t k = 0;
        for (size_t i = 0; i < lb->n; i++) {
            const struct lb_endpoint *e = &lb->ep[i];
            bool ok;
            if (tier == 0)
                ok = lb_healthy(lb, i, now_ns);
            else if (tier == 1)
                ok = e->conn == LB_CONN_READY && !lb_unhealthy(lb, i, now_ns) && e->probed &&
                     now_ns - e->probe_ns <= lb->cfg.probe_stale_ns;
            else
                ok = e->conn == LB_CONN_READY;
            if (ok)
                cand[k++] = (int)i;
        }
        if (k == 0)
            continue;
        if (k > 1 && avoid >= 0) {
            size_t w = 0;
            for (size_t j = 0; j < k; j++) {
                if (cand[j] != avoid)
                    cand[w++] = cand[j];
            }
            k = w;
        }
        return lb_two_choices(lb, cand, k);
    }
    return -1;
}

int lb_pick(struct lb *lb, int64_t now_ns, int avoid)
{
    if (FL_BUG(CLIENT_NO_FAILOVER))
        return lb->ep[0].conn == LB_CONN_READY ? 0 : -1;
    switch (lb->cfg.kind) {
    case LB_PINNED_RANDOM:
    case LB_PINNED_BLACKLIST:
        if (lb->cfg.kind == LB_PINNED_BLACKLIST && lb->pinned < 0)
            lb_repin_blacklist(lb, now_ns);
        if (lb->pinned >= 0 && lb->ep[lb->pinned].conn == LB_CONN_READY)
            return lb->pinned;
        return -1;
    case LB_ROUND_ROBIN: {
        int fallback = -1;
        for (size_t k = 0; k < lb->n; k++) {
            size_t i = (lb->rr_next + k) % lb->n;
            if (lb->ep[i].conn != LB_CONN_READY)
                continue;
            if ((int)i == avoid) {
                fallback = (int)i;
                continue;
            }
            lb->rr_next = (i + 1) % lb->n;
            return (int)i;
        }
        if (fallback >= 0)
            lb->rr_next = ((size_t)fallback + 1) % lb->n;
        return fallback;
    }
    case LB_HEALTH_AWARE:
        return lb_pick_health(lb, now_ns, avoid);
    default:
        FL_UNREACHABLE();
    }
}

bool lb_should_leave(const struct lb *lb, size_t i, int64_t now_ns)
{
    FL_ASSERT(i < lb->n);
    if (FL_BUG(CLIENT_NO_FAILOVER))
        return false;
    switch (lb->cfg.kind) {
    case LB_PINNED_RANDOM:
    case LB_PINNED_BLACKLIST:
        return lb->pinned >= 0 && (int)i != lb->pinned;
    case LB_ROUND_ROBIN:
        return false;
    case LB_HEALTH_AWARE:
        if (lb_healthy(lb, i, now_ns))
            return false;
        for (size_t j = 0; j < lb->n; j++) {
            if (j != i && lb_healthy(lb, j, now_ns))
                return true;
        }
        return false;
    default:
        FL_UNREACHABLE();
    }
}

bool lb_probes(const struct lb *lb)
{
    return lb->cfg.kind == LB_HEALTH_AWARE;
}

int64_t lb_next_deadline(const struct lb *lb, int64_t now_ns)
{
    int64_t t = INT64_MAX;
    bool backoff = lb->cfg.kind != LB_PINNED_BLACKLIST || lb_all_unhealthy(lb, now_ns);
    for (size_t i = 0; i < lb->n; i++) {
        const struct lb_endpoint *e = &lb->ep[i];
        if (e->unhealthy_until_ns > now_ns)
            t = FL_MIN(t, e->unhealthy_until_ns);
        if (backoff && e->conn == LB_CONN_FAILED && e->next_dial_ns > now_ns)
            t = FL_MIN(t, e->next_dial_ns);
        if (lb->cfg.kind == LB_HEALTH_AWARE && e->inflight > 0 && e->oldest_inflight_ns > 0 &&
            e->oldest_inflight_ns + lb->cfg.slow_ns + 1 > now_ns)
            t = FL_MIN(t, e->oldest_inflight_ns + lb->cfg.slow_ns + 1);
    }
    return t;
}
