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
 */
#include "harness/run/run_int.h"

static const uint8_t range_lo[] = "key";
static const uint8_t range_hi[] = "kez"; /* every key that starts with "key" */

static void wl_issue(struct sim_world *w, void *ctx);

static void wl_schedule(struct run_wl_client *c)
{
    struct run_world *rw = c->rw;
    if (rw->wl_stopped)
        return;
    int64_t gap = 0;
    if (rw->wl_gap_mean_ns > 0)
        gap = sim_rng_range(c->rng, 0, 2 * rw->wl_gap_mean_ns);
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
    }
    c->busy = false;
    rw->wl_outstanding--;
    wl_schedule(c);
}

/* Draws the next operation kind by weight: 0 put, 1 get, 2 delete, 3 txn, 4 range. */
static int wl_pick(struct run_wl_client *c)
{
    const struct run_workload_config *wc = &c->rw->wcfg;
    int weights[5] = {wc->mix_put, wc->mix_get, wc->mix_delete, wc->mix_txn, wc->mix_range};
    int64_t total = 0;
    for (int i = 0; i < 5; i++)
        total += weights[i];
    int64_t x = sim_rng_range(c->rng, 0, total - 1);
    for (int i = 0; i < 5; i++) {
        if (x < weights[i])
            return i;
        x -= weights[i];
    }
    FL_UNREACHABLE();
}

static void wl_issue(struct sim_world *w, void *ctx)
{
    (void)w;
    struct run_wl_client *c = ctx;
    struct run_world *rw = c->rw;
    c->timer = 0;
    if (rw->wl_stopped || c->busy)
        return;
    struct kvc_client *kc = rw->clients[c->index].c;
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
    c->busy = true;
    rw->wl_outstanding++;
    switch (wl_pick(c)) {
    case 0:
        kvc_put(kc, bk, bv, 0, NULL, wl_done, c);
        break;
    case 1:
        kvc_get(kc, bk, none, NULL, wl_done, c);
        break;
    case 2:
        kvc_delete(kc, bk, none, NULL, wl_done, c);
        break;
    case 3: {
        struct kvc_compare cmp = {.target = KVC_CMP_MOD,
                                  .result = KVC_CMP_EQUAL,
                                  .key = bk,
                                  .number = c->last_mod_rev[k]};
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
        break;
    }
    case 4: {
        struct kvc_bytes lo = {range_lo, 3}, hi = {range_hi, 3};
        kvc_get(kc, lo, hi, NULL, wl_done, c);
        break;
    }
    }
}

static void wl_watch_cb(void *ud, const struct kvc_watch_resp *r)
{
    (void)ud;
    (void)r; /* the observer records every response */
}

int run_workload_start(struct run_world *rw)
{
    struct run_workload_config *wc = &rw->wcfg;
    if (wc->keys < 1)
        wc->keys = 1;
    int64_t total =
        (int64_t)wc->mix_put + wc->mix_get + wc->mix_delete + wc->mix_txn + wc->mix_range;
    if (wc->rate != 0 && total <= 0)
        return FL_EINVAL;
    for (int i = 0; i < wc->watchers && i < RUN_WATCHERS_MAX && rw->n_clients; i++) {
        int ci = i % rw->n_clients;
        struct kvc_watch_req req = {.key = {range_lo, 3},
                                    .range_end = {range_hi, 3},
                                    .prev_kv = true,
                                    .progress_notify = true};
        rw->watcher_ids[i] = kvc_watch(rw->clients[ci].c, &req, NULL, wl_watch_cb, rw);
        rw->watcher_client[i] = ci;
        rw->n_watchers = i + 1;
    }
    if (wc->rate == 0 || rw->n_clients == 0)
        return FL_OK;
    rw->wl_gap_mean_ns = wc->rate < 0 ? 0 : (int64_t)rw->n_clients * FL_S / wc->rate;
    for (int i = 0; i < rw->n_clients; i++) {
        struct run_wl_client *c = &rw->wl[i];
        char name[32];
        snprintf(name, sizeof name, "workload/%d", i + 1);
        c->rw = rw;
        c->index = i;
        c->rng = sim_rng(rw->w, name);
        wl_schedule(c);
    }
    return FL_OK;
}

void run_workload_stop(struct run_world *rw)
{
    rw->wl_stopped = true;
    for (int i = 0; i < rw->n_clients; i++) {
        if (rw->wl[i].timer) {
            sim_cancel(rw->w, rw->wl[i].timer);
            rw->wl[i].timer = 0;
        }
    }
}
