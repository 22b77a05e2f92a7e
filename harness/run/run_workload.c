/*
 * run_workload.c: the built-in C workload, in the style of etcd's robustness traffic
 * (etcd-facts §A.4): every client keeps at most one operation outstanding and, after
 * each completion, waits a gap drawn uniformly from [0, 2 x mean] of its own stream
 * ("workload/<i>") so that the offered rate over all clients is `rate` per second.
 * Operations are drawn by weight from put / get / delete / txn / range over the keys
 * key0..key{keys-1}; every value written is unique in the run ("c<client>-<seq>",
 * padded to value_size) so the checkers can tell writes apart; the txn is a
 * compare-and-set on the mod revision this client last saw for the key. `watchers`
 * watches cover the whole key range, with prev_kv and progress notifications.
 * A rate below 0 saturates: no gap at all (bench).
 *
 * Features (run.h RUN_WL_*), off by default, add what the robustness traffic has
 * besides: leases (a sixth weight, mix_lease: grants of short leases, puts attached to
 * them, keep-alive streams started and stopped — leases that nobody keeps alive
 * expire), watch churn (watches opened and cancelled over time on a key, a
 * prefix or a range, from now, from a past or a future revision, with or without
 * prev_kv, progress notifications and put/delete filters; one cancelled by compaction
 * reopens at the compact revision, as etcd's robustness watchers do), multi-operation
 * txns with value/version/mod compares, and reads with a limit, at a past revision or
 * serializable. (No deletes of key ranges: the revision checker cannot place one whose
 * outcome is unknown, checkers/chk_gap.c.) Their draws come from streams of their own
 * ("workload/<i>/more", "workload/watch"), so with every feature off the plain
 * workload draws exactly what it always drew.
 */
#include "harness/run/run_int.h"

static const uint8_t range_lo[] = "key";
static const uint8_t range_hi[] = "kez"; /* every key that starts with "key" */

static void wl_issue(struct sim_world *w, void *ctx);

static void wl_schedule(struct run_wl_client *c)
{
    struct run_world *rw = c->rw;
    if (rw->wl.stopped)
        return;
    int64_t gap = 0;
    if (rw->wl.gap_mean_ns > 0)
        gap = sim_rng_range(c->rng, 0, 2 * rw->wl.gap_mean_ns);
    c->timer = sim_schedule(rw->w, gap, wl_issue, c);
}

static int key_index(const struct kvc_bytes *k, int keys)
{
    if (k->n < 4 || memcmp(k->p, "key", 3))
        return -1;
    int v = 0;
    for (size_t i = 3; i < k->n; i++) {
        if (k->p[i] < '0' || k->p[i] > '9')
            return -1;
        v = v * 10 + (k->p[i] - '0');
        if (v >= keys)
            return -1;
    }
    return v;
}

static void wl_done(void *ud, const struct kvc_result *r)
{
    struct run_wl_client *c = ud;
    struct run_world *rw = c->rw;
    int keys = FL_MIN(rw->wcfg.keys, 64);
    if (r->status == KVC_OK) {
        const struct kvc_op_result *res = r->method == KVC_TXN && r->op_count ? &r->ops[0] : &r->op;
        for (size_t i = 0; res->kind == KVC_OP_RANGE && i < res->kv_count; i++) {
            int k = key_index(&res->kvs[i].key, keys);
            if (k >= 0)
                c->last_mod_rev[k] = res->kvs[i].mod_rev;
        }
        if (r->header.revision > c->max_rev)
            c->max_rev = r->header.revision;
        if (r->method == KVC_LEASE_GRANT && c->granting) {
            c->lease = r->lease_id;
            c->lease_ns = r->return_ns;
        }
    }
    if (r->method == KVC_LEASE_GRANT)
        c->granting = false;
    c->busy = false;
    rw->wl.outstanding--;
    wl_schedule(c);
}

/* Draws the next operation kind by weight: 0 put, 1 get, 2 delete, 3 txn, 4 range, 5
 * lease. Without leases the sixth weight is absent and the draw is the plain one. */
static int wl_pick(struct run_wl_client *c)
{
    const struct run_workload_config *wc = &c->rw->wcfg;
    int lease = wc->features & RUN_WL_LEASES ? wc->mix_lease : 0;
    int weights[6] = {wc->mix_put, wc->mix_get, wc->mix_delete, wc->mix_txn, wc->mix_range, lease};
    int64_t total = 0;
    for (int i = 0; i < 6; i++)
        total += weights[i];
    int64_t x = sim_rng_range(c->rng, 0, total - 1);
    for (int i = 0; i < 6; i++) {
        if (x < weights[i])
            return i;
        x -= weights[i];
    }
    FL_UNREACHABLE();
}

/* --- feature draws (the client's "more" stream) ------------------------------------ */

static bool more_chance(struct run_wl_client *c, int pct)
{
    return sim_rng_chance_ppm(c->more, (uint32_t)pct * 10000u);
}

/* A revision some way back from the newest this client saw (at least 1). */
static int64_t past_rev(struct run_wl_client *c, int back_max)
{
    int64_t r = c->max_rev - sim_rng_range(c->more, 0, back_max);
    return r < 1 ? 1 : r;
}

static struct kvc_bytes bytes_of(const char *s)
{
    return (struct kvc_bytes){(const uint8_t *)s, strlen(s)};
}

/* A get or range: with the extras of RUN_WL_READ_MORE when the workload has them, else
 * a plain one. */
static void wl_read(struct run_wl_client *c, struct kvc_client *kc, struct kvc_bytes key,
                    struct kvc_bytes end)
{
    if (!(c->rw->wcfg.features & RUN_WL_READ_MORE)) {
        kvc_get(kc, key, end, NULL, wl_done, c);
        return;
    }
    struct kvc_request req = {.method = KVC_RANGE};
    req.op.kind = KVC_OP_RANGE;
    req.op.key = key;
    req.op.range_end = end;
    if (more_chance(c, 20))
        req.op.limit = sim_rng_range(c->more, 1, 3);
    if (more_chance(c, 20) && c->max_rev > 1)
        req.op.revision = past_rev(c, 20);
    req.op.serializable = more_chance(c, 15);
    kvc_call(kc, &req, NULL, wl_done, c);
}

/* A txn of 1-4 operations on distinct keys (at least one put), behind 0-2 compares
 * (RUN_WL_MULTI_TXN), in the spirit of etcd's multiOpTxn. Each put writes the value
 * with a suffix of its own, so every value written stays unique. The client copies
 * the request: the buffers here only live for the call. */
static void wl_multi_txn(struct run_wl_client *c, struct kvc_client *kc, const char *value)
{
    int keys = FL_MIN(c->rw->wcfg.keys, 64);
    char names[4][16], values[4][264], cn[2][16];
    struct kvc_op ops[4];
    struct kvc_compare cmps[2];
    int nops = (int)sim_rng_range(c->more, 1, FL_MIN(4, keys)),
        ncmp = (int)sim_rng_range(c->more, 0, 2);
    int first = (int)sim_rng_range(c->more, 0, keys - 1);
    int64_t compacted = 0;
    for (size_t i = 0; i < c->rw->rec.n_compactions; i++)
        compacted = FL_MAX(compacted, c->rw->rec.compactions[i]);
    memset(ops, 0, sizeof ops);
    memset(cmps, 0, sizeof cmps);
    for (int i = 0; i < nops; i++) {
        int k = (first + i) % keys;
        snprintf(names[i], sizeof names[i], "key%d", k);
        ops[i].key = bytes_of(names[i]);
        int64_t x = sim_rng_range(c->more, 0, 9);
        ops[i].kind = i == 0 || x >= 5 ? KVC_OP_PUT : x == 0 ? KVC_OP_DELETE : KVC_OP_RANGE;
        if (ops[i].kind == KVC_OP_PUT) {
            snprintf(values[i], sizeof values[i], "%.255s/%c", value, (char)('0' + i)); /* i < 4 */
            ops[i].value = bytes_of(values[i]);
        }
        /* a read at a compacted revision (one the cluster reported compacted): it fails
         * the whole txn, on every member alike (etcd#18667's traffic). Only compacted
         * ones: the checkers judge a write txn's reads at its own revision. */
        if (ops[i].kind == KVC_OP_RANGE && more_chance(c, 50) && compacted > 1)
            ops[i].revision = sim_rng_range(c->more, 1, compacted);
    }
    for (int i = 0; i < ncmp; i++) {
        int k = (int)sim_rng_range(c->more, 0, keys - 1);
        snprintf(cn[i], sizeof cn[i], "key%d", k);
        cmps[i].key = bytes_of(cn[i]);
        int64_t t = sim_rng_range(c->more, 0, 2);
        cmps[i].target = t == 0 ? KVC_CMP_MOD : t == 1 ? KVC_CMP_VERSION : KVC_CMP_CREATE;
        cmps[i].result = t == 1 ? KVC_CMP_GREATER : KVC_CMP_EQUAL;
        cmps[i].number = t == 0 ? c->last_mod_rev[k] : 0;
    }
    struct kvc_op else_op = {.kind = KVC_OP_RANGE, .key = ops[0].key};
    struct kvc_request req = {.method = KVC_TXN,
                              .cmps = cmps,
                              .cmp_count = (size_t)ncmp,
                              .then_ops = ops,
                              .then_count = (size_t)nops,
                              .else_ops = &else_op,
                              .else_count = 1};
    kvc_call(kc, &req, NULL, wl_done, c);
}

static void keepalive_done(void *ud, const struct kvc_result *r)
{
    struct run_wl_client *c = ud;
    if (r->status != KVC_OK || r->ttl_s <= 0)
        c->keepalive = 0; /* the stream ended (stopped, or the lease is gone) */
}

/* A lease operation (RUN_WL_LEASES): grant one when the client has none (or an old
 * one), else put a key attached to it, start or stop keeping it alive, or abandon it
 * (it expires). Leases end by expiry only, never by a client's LeaseRevoke: the member
 * that expires a lease reports the keys it deleted, which the history records exactly
 * (run_record_lease_end), while a client's revoke is recorded without them and the
 * checkers would have to guess them from the puts, which a write of unknown outcome
 * makes ambiguous. */
static void wl_lease(struct run_wl_client *c, struct kvc_client *kc, struct kvc_bytes key,
                     struct kvc_bytes value)
{
    struct run_world *rw = c->rw;
    int64_t ttl = rw->wcfg.lease_ttl_s > 0 ? rw->wcfg.lease_ttl_s : 3;
    int64_t age = sim_now_ns(rw->w) - c->lease_ns;
    int64_t x = sim_rng_range(c->more, 0, 99);
    if (!c->lease || (age > 2 * ttl * FL_S && !c->keepalive) || x < 10) {
        struct kvc_request req = {.method = KVC_LEASE_GRANT, .ttl_s = ttl};
        c->granting = true;
        kvc_call(kc, &req, NULL, wl_done, c);
        return;
    }
    if (x < 20) { /* abandon it: nobody keeps it alive, it expires */
        c->lease = 0;
        if (c->keepalive)
            kvc_lease_keepalive_stop(kc, c->keepalive);
        c->keepalive = 0;
        kvc_put(kc, key, value, 0, NULL, wl_done, c);
        return;
    }
    if (x < 30 && !c->keepalive) {
        c->keepalive = kvc_lease_keepalive(kc, c->lease, NULL, keepalive_done, c);
    } else if (x < 35 && c->keepalive) {
        uint64_t ka = c->keepalive;
        c->keepalive = 0;
        kvc_lease_keepalive_stop(kc, ka);
    }
    kvc_put(kc, key, value, c->lease, NULL, wl_done, c);
}

/* The plain txn: a compare-and-set on the mod revision this client last saw. */
static void wl_cas(struct run_wl_client *c, struct kvc_client *kc, struct kvc_bytes bk,
                   struct kvc_bytes bv, int k)
{
    struct kvc_compare cmp = {
        .target = KVC_CMP_MOD, .result = KVC_CMP_EQUAL, .key = bk, .number = c->last_mod_rev[k]};
    struct kvc_op then_op = {.kind = KVC_OP_PUT, .key = bk, .value = bv};
    struct kvc_op else_op = {.kind = KVC_OP_RANGE, .key = bk};
    struct kvc_request req = {.method = KVC_TXN,
                              .cmps = &cmp,
                              .cmp_count = 1,
                              .then_ops = &then_op,
                              .then_count = 1,
                              .else_ops = &else_op,
                              .else_count = 1};
    kvc_call(kc, &req, NULL, wl_done, c);
}

static void wl_issue(struct sim_world *w, void *ctx)
{
    (void)w;
    struct run_wl_client *c = ctx;
    struct run_world *rw = c->rw;
    c->timer = 0;
    if (rw->wl.stopped || c->busy)
        return;
    struct kvc_client *kc = rw->clients[c->index].c;
    unsigned f = rw->wcfg.features;
    int keys = FL_MIN(rw->wcfg.keys, 64);
    int k = (int)sim_rng_range(c->rng, 0, keys - 1);
    char key[16], value[256];
    int kn = snprintf(key, sizeof key, "key%d", k);
    int vn = snprintf(value, sizeof value, "c%d-%llu", c->index + 1, (unsigned long long)++c->seq);
    while (vn < rw->wcfg.value_size && vn < (int)sizeof value - 1)
        value[vn++] = '.';
    value[vn] = '\0';
    struct kvc_bytes bk = {(const uint8_t *)key, (size_t)kn};
    struct kvc_bytes bv = {(const uint8_t *)value, (size_t)vn};
    struct kvc_bytes none = {NULL, 0};
    struct kvc_bytes lo = {range_lo, 3}, hi = {range_hi, 3};
    c->busy = true;
    rw->wl.outstanding++;
    switch (wl_pick(c)) {
    case 0:
        kvc_put(kc, bk, bv, 0, NULL, wl_done, c);
        break;
    case 1:
        wl_read(c, kc, bk, none);
        break;
    case 2:
        kvc_delete(kc, bk, none, NULL, wl_done, c);
        break;
    case 3:
        if ((f & RUN_WL_MULTI_TXN) && more_chance(c, 60))
            wl_multi_txn(c, kc, value);
        else
            wl_cas(c, kc, bk, bv, k);
        break;
    case 4:
        wl_read(c, kc, lo, hi);
        break;
    case 5:
        wl_lease(c, kc, bk, bv);
        break;
    }
}

/* The observer records every response; with RUN_WL_WATCH_REOPEN the callback also
 * follows how far each fixed watcher got, and reopens it at the compact revision when a
 * compaction cancels it (etcd's robustness collectors do both). */
static void wl_watch_cb(void *ud, const struct kvc_watch_resp *r)
{
    struct run_world *rw = ud;
    if (!(rw->wcfg.features & RUN_WL_WATCH_REOPEN))
        return;
    int i = 0;
    while (i < rw->wl.n_watchers && rw->wl.watcher_ids[i] != r->watch_id)
        i++;
    if (i == rw->wl.n_watchers)
        return;
    int64_t reached = r->header.revision;
    for (size_t k = 0; k < r->event_count; k++)
        reached = FL_MAX(reached, r->events[k].kv.mod_rev);
    rw->wl.watcher_reached[i] = FL_MAX(rw->wl.watcher_reached[i], reached);
    if (!r->canceled || r->compact_revision <= 0 || rw->wl.stopped)
        return;
    struct run_client *rc = &rw->clients[rw->wl.watcher_client[i]];
    if (!rc->c || rc->closed)
        return;
    struct kvc_watch_req req = {.key = {range_lo, 3},
                                .range_end = {range_hi, 3},
                                .start_rev = r->compact_revision,
                                .prev_kv = true,
                                .progress_notify = true};
    rw->wl.watcher_ids[i] = kvc_watch(rc->c, &req, NULL, wl_watch_cb, rw);
}

/* --- watch churn (RUN_WL_WATCH_CHURN) ------------------------------------------------ */

static void churn_open(struct run_world *rw, struct run_churn_watch *cw);

static void churn_cb(void *ud, const struct kvc_watch_resp *r)
{
    struct run_churn_watch *cw = ud;
    if (!r->canceled || cw->id != r->watch_id)
        return;
    cw->id = 0;
    /* etcd's robustness watchers: a watch cancelled by compaction starts again at the
     * compact revision it was told */
    if (r->compact_revision > 0 && !cw->rw->wl.stopped) {
        cw->req.start_rev = r->compact_revision;
        churn_open(cw->rw, cw);
    }
}

static void churn_open(struct run_world *rw, struct run_churn_watch *cw)
{
    struct kvc_client *kc = rw->clients[cw->client].c;
    if (!kc || rw->clients[cw->client].closed)
        return;
    cw->req.key = bytes_of(cw->key);
    cw->req.range_end = bytes_of(cw->end);
    cw->id = kvc_watch(kc, &cw->req, NULL, churn_cb, cw);
}

/* Draws a new watch's options from the churn stream. */
static void churn_draw(struct run_world *rw, struct run_churn_watch *cw)
{
    struct sim_rng *r = &rw->wl.churn_rng;
    int keys = FL_MIN(rw->wcfg.keys, 64);
    cw->rw = rw;
    cw->client = (int)sim_rng_below(r, (uint64_t)rw->n_clients);
    memset(&cw->req, 0, sizeof cw->req);
    int k = (int)sim_rng_range(r, 0, keys - 1);
    uint64_t shape = sim_rng_below(r, 10);
    snprintf(cw->key, sizeof cw->key, shape < 8 ? "key%d" : "key", k);
    if (shape < 4)
        cw->end[0] = '\0'; /* one key */
    else if (shape < 8) {
        int span = (int)sim_rng_range(r, 1, 4); /* one draw: FL_MIN evaluates twice */
        snprintf(cw->end, sizeof cw->end, "key%d", FL_MIN(keys, k + span));
    } else
        snprintf(cw->end, sizeof cw->end, "kez"); /* every key */
    int64_t seen = 0;
    for (int i = 0; i < rw->n_clients; i++)
        seen = FL_MAX(seen, rw->wl.client[i].max_rev);
    uint64_t when = sim_rng_below(r, 10);
    if (when < 4 || seen < 2)
        cw->req.start_rev = 0; /* from now */
    else if (when < 8) {
        int64_t back = (int64_t)sim_rng_below(r, 40); /* one draw: FL_MAX evaluates twice */
        cw->req.start_rev = FL_MAX(1, seen - back);
    } else
        cw->req.start_rev = seen + 1 + (int64_t)sim_rng_below(r, 5); /* the future */
    cw->req.prev_kv = sim_rng_below(r, 2);
    cw->req.progress_notify = sim_rng_below(r, 2);
    uint64_t filt = sim_rng_below(r, 10);
    cw->req.no_put = filt == 0;
    cw->req.no_delete = filt == 1;
}

static void churn_tick(struct sim_world *w, void *ctx)
{
    (void)w;
    struct run_world *rw = ctx;
    rw->wl.churn_timer = 0;
    if (rw->wl.stopped || rw->n_clients == 0)
        return;
    struct run_churn_watch *cw = &rw->wl.churn[rw->wl.churn_next];
    rw->wl.churn_next = (rw->wl.churn_next + 1) % RUN_CHURN_MAX;
    if (cw->id) { /* the oldest goes */
        uint64_t id = cw->id;
        cw->id = 0;
        struct run_client *rc = &rw->clients[cw->client];
        if (rc->c && !rc->closed)
            kvc_watch_cancel(rc->c, id);
    }
    churn_draw(rw, cw);
    churn_open(rw, cw);
    int64_t mean = (int64_t)(rw->wcfg.watch_every_ms > 0 ? rw->wcfg.watch_every_ms : 1000) * FL_MS;
    rw->wl.churn_timer = sim_schedule(
        rw->w, sim_rng_range(&rw->wl.churn_rng, mean / 2, 3 * mean / 2), churn_tick, rw);
}

int run_workload_start(struct run_world *rw)
{
    struct run_workload_config *wc = &rw->wcfg;
    if (wc->keys < 1)
        wc->keys = 1;
    int64_t total = (int64_t)wc->mix_put + wc->mix_get + wc->mix_delete + wc->mix_txn +
                    wc->mix_range + (wc->features & RUN_WL_LEASES ? wc->mix_lease : 0);
    if (wc->rate != 0 && total <= 0)
        return FL_EINVAL;
    for (int i = 0; i < wc->watchers && i < RUN_WATCHERS_MAX && rw->n_clients; i++) {
        int ci = i % rw->n_clients;
        struct kvc_watch_req req = {.key = {range_lo, 3},
                                    .range_end = {range_hi, 3},
                                    .prev_kv = true,
                                    .progress_notify = true};
        rw->wl.watcher_ids[i] = kvc_watch(rw->clients[ci].c, &req, NULL, wl_watch_cb, rw);
        rw->wl.watcher_client[i] = ci;
        rw->wl.n_watchers = i + 1;
    }
    if (wc->rate == 0 || rw->n_clients == 0)
        return FL_OK;
    rw->wl.gap_mean_ns = wc->rate < 0 ? 0 : (int64_t)rw->n_clients * FL_S / wc->rate;
    for (int i = 0; i < rw->n_clients; i++) {
        struct run_wl_client *c = &rw->wl.client[i];
        char name[32];
        snprintf(name, sizeof name, "workload/%d", i + 1);
        c->rw = rw;
        c->index = i;
        c->rng = sim_rng(rw->w, name);
        if (wc->features) {
            snprintf(name, sizeof name, "workload/%d/more", i + 1);
            c->more = sim_rng(rw->w, name);
        }
        wl_schedule(c);
    }
    if (wc->features & RUN_WL_WATCH_CHURN) {
        sim_rng_derive(&rw->wl.churn_rng, rw->seed, "workload/watch");
        rw->wl.churn_timer =
            sim_schedule(rw->w, (int64_t)sim_rng_below(&rw->wl.churn_rng, FL_S), churn_tick, rw);
    }
    return FL_OK;
}

void run_workload_stop(struct run_world *rw)
{
    rw->wl.stopped = true;
    for (int i = 0; i < rw->n_clients; i++) {
        if (rw->wl.client[i].timer) {
            sim_cancel(rw->w, rw->wl.client[i].timer);
            rw->wl.client[i].timer = 0;
        }
    }
    if (rw->wl.churn_timer) {
        sim_cancel(rw->w, rw->wl.churn_timer);
        rw->wl.churn_timer = 0;
    }
}
