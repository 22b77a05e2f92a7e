/*
 * chk_gen.c: random histories from a model execution, and mutations that break one
 * thing each (see gen.h). The generator keeps its own small record of operations,
 * changes and watch events, applies the mutation there, then emits a chk_history.
 */
#include "checkers/gen.h"
#include "harness/common/rng.h"

enum { G_GET = 0, G_PUT, G_DEL, G_CAS, G_RANGE, G_MPUT };

struct grng {
    uint64_t s;
};

static uint64_t rnd(struct grng *r)
{
    return fl_splitmix64(&r->s);
}

static uint32_t below(struct grng *r, uint32_t n)
{
    return n ? (uint32_t)(rnd(r) % n) : 0;
}

struct gkv {
    int32_t key, value; /* value -1: absent */
    int64_t create, mod, ver;
};

struct gop {
    int kind;
    int32_t client, key, key2, value, value2, expect;
    int64_t call, ret, rev;
    int status;
    int succeeded;
    bool outside; /* made by something outside the history: not emitted */
    int64_t deleted;
    struct gkv res;          /* get result */
    uint32_t kv_first, kv_n; /* range result */
};

/* 32-bit revisions and response numbers (chk_gen_history asserts that they fit): the
 * events are the bulk of a generated history's scratch (2.2M at 1M watched ops). */
struct gev {
    int32_t watch;
    int32_t resp;
    int8_t kind; /* CHK_EV_* */
    int32_t key, value, prev;
    bool prev_given;
    int32_t create, mod, ver;
};

struct gwatch {
    int32_t key; /* -1: all keys */
    int64_t start_rev;
    bool prev_kv;
};

struct gen {
    const struct chk_gen_opts *o;
    struct grng r;
    struct gop *ops;
    uint32_t nops;
    struct gkv *rkvs;
    uint32_t nrkvs, rkvs_cap;
    struct gkv *chg; /* changes: key, value (-1 delete), create, mod(=rev), ver */
    int32_t *chg_prev;
    uint32_t nchg, chg_cap; /* in revision order; at most two per op */
    struct gev *ev;
    uint32_t nev, evcap;
    struct gwatch *w;
    struct gkv *state; /* per key */
    int64_t rev;
    int32_t next_value;
};

/* The change log's invariants, before one more change of key at rev: room for it, the
 * key's own bounds, and revision order (gen_watches groups the log by revision; an op
 * writing two keys adds both at one revision). */
static void chg_check(const struct gen *g, int32_t key, int64_t rev)
{
    FL_ASSERT(key >= 0 && (uint32_t)key < g->o->keys);
    FL_ASSERT(g->nchg < g->chg_cap);
    FL_ASSERT(rev == g->rev && rev > g->state[key].mod);
    FL_ASSERT(g->nchg == 0 || g->chg[g->nchg - 1].mod <= rev);
}

static void apply_put(struct gen *g, int32_t key, int32_t value, int64_t rev)
{
    chg_check(g, key, rev);
    FL_ASSERT(value >= 0);
    struct gkv *e = &g->state[key];
    int32_t prev = e->value;
    if (e->value < 0) {
        e->create = rev;
        e->ver = 1;
    } else {
        e->ver++;
    }
    e->value = value;
    e->mod = rev;
    g->chg[g->nchg] = *e;
    g->chg[g->nchg].key = key;
    g->chg_prev[g->nchg++] = prev;
}

static void apply_del(struct gen *g, int32_t key, int64_t rev)
{
    chg_check(g, key, rev);
    struct gkv *e = &g->state[key];
    FL_ASSERT(e->value >= 0); /* only a present key is deleted */
    g->chg[g->nchg] = (struct gkv){key, -1, 0, rev, 0};
    g->chg_prev[g->nchg++] = e->value;
    *e = (struct gkv){key, -1, 0, 0, 0};
}

/* Executes op (its kind and arguments chosen); applied: whether it takes effect. */
static void gen_exec(struct gen *g, struct gop *op, bool applied)
{
    FL_ASSERT(op->key >= 0 && (uint32_t)op->key < g->o->keys);
    int64_t rev0 = g->rev;
    struct gkv *e = &g->state[op->key];
    switch (op->kind) {
    case G_GET:
        op->res = *e;
        break;
    case G_RANGE:
        /* [key, key + 8): a short range, so big histories stay small */
        op->kv_first = g->nrkvs;
        for (uint32_t k = (uint32_t)op->key; k < g->o->keys && k < (uint32_t)op->key + 8; k++) {
            if (g->state[k].value < 0)
                continue;
            FL_GROW(g->rkvs, g->rkvs_cap, g->nrkvs + 1, 1024);
            g->rkvs[g->nrkvs++] = g->state[k];
        }
        op->kv_n = g->nrkvs - op->kv_first;
        break;
    case G_PUT:
        if (applied)
            apply_put(g, op->key, op->value, ++g->rev);
        break;
    case G_MPUT:
        if (applied) {
            ++g->rev;
            apply_put(g, op->key, op->value, g->rev);
            apply_put(g, op->key2, op->value2, g->rev);
        }
        break;
    case G_DEL:
        op->deleted = e->value >= 0;
        if (applied && e->value >= 0)
            apply_del(g, op->key, ++g->rev);
        break;
    case G_CAS:
        op->succeeded = op->expect < 0 ? e->value < 0 : e->value == op->expect;
        if (applied && op->succeeded)
            apply_put(g, op->key, op->value, ++g->rev);
        break;
    }
    FL_ASSERT(g->rev == rev0 || (applied && g->rev == rev0 + 1)); /* one revision per op */
    op->rev = g->rev;
}

static void gen_choose(struct gen *g, struct gop *op)
{
    const struct chk_gen_opts *o = g->o;
    uint32_t x = below(&g->r, 100);
    op->key = (int32_t)below(&g->r, o->keys);
    op->value = g->next_value++;
    if (x < 35) {
        op->kind = G_GET;
    } else if (x < 70 || (!o->txn && !o->deletes)) {
        op->kind = G_PUT;
    } else if (o->txn && x < 82) {
        op->kind = G_CAS;
        int32_t cur = g->state[op->key].value;
        op->expect =
            below(&g->r, 10) < 6 ? cur : (int32_t)below(&g->r, (uint32_t)op->value + 1) - 1;
    } else if (o->txn && x < 88 && o->keys > 1) {
        op->kind = G_MPUT;
        op->key2 = (int32_t)(((uint32_t)op->key + 1 + below(&g->r, (uint32_t)(o->keys - 1))) %
                             (uint32_t)o->keys);
        op->value2 = g->next_value++;
        FL_ASSERT(op->key2 != op->key && (uint32_t)op->key2 < o->keys);
    } else if (o->deletes && x < 95) {
        op->kind = G_DEL;
    } else if (o->deletes) {
        op->kind = G_RANGE;
    } else {
        op->kind = G_PUT;
    }
}

static void gen_ops(struct gen *g)
{
    const struct chk_gen_opts *o = g->o;
    int64_t *last_ret = fl_malloc(o->clients * sizeof(int64_t));
    for (uint32_t c = 0; c < o->clients; c++)
        last_ret[c] = 0;
    uint32_t *free_c = fl_malloc(o->clients * sizeof(uint32_t));
    for (uint32_t i = 0; i < o->ops; i++) {
        int64_t at = 1000 + 10 * (int64_t)i;
        uint32_t nf = 0;
        for (uint32_t c = 0; c < o->clients; c++) {
            if (last_ret[c] < at - 1)
                free_c[nf++] = c;
        }
        if (!nf)
            continue;
        struct gop *op = &g->ops[g->nops++];
        memset(op, 0, sizeof(*op));
        op->client = (int32_t)free_c[below(&g->r, nf)];
        int64_t room = FL_MIN((int64_t)o->window, at - 1 - last_ret[op->client]);
        op->call = at - 1 - (int64_t)below(&g->r, (uint32_t)room);
        op->ret = at + 1 + (int64_t)below(&g->r, o->window);
        /* the client is sequential: free since its last return, busy over the effect */
        FL_ASSERT(op->call > last_ret[op->client] && op->call < at && op->ret > at);
        gen_choose(g, op);
        uint32_t fate = below(&g->r, 1000);
        bool write = op->kind != G_GET && op->kind != G_RANGE;
        if (fate < o->unknown_pm) {
            op->status = CHK_ST_UNKNOWN;
            gen_exec(g, op, write && below(&g->r, 2));
            op->ret = CHK_NEVER;
            last_ret[op->client] = at + o->window;
        } else if (fate < o->unknown_pm + o->fail_pm) {
            op->status = CHK_ST_FAIL;
            op->rev = g->rev;
            last_ret[op->client] = op->ret;
        } else {
            op->status = CHK_ST_OK;
            int64_t rev0 = g->rev;
            gen_exec(g, op, true);
            last_ret[op->client] = op->ret;
            if (o->outside_pm && (op->kind == G_PUT || op->kind == G_DEL) && g->rev != rev0 &&
                below(&g->r, 1000) < o->outside_pm) {
                op->outside = true;
                last_ret[op->client] = at; /* the client did not spend the time */
            }
        }
        /* the op array is in effect order: its revisions never go down */
        FL_ASSERT(g->nops == 1 || g->ops[g->nops - 2].rev <= op->rev);
    }
    FL_ASSERT(g->nops <= o->ops);
    free(last_ret);
    free(free_c);
}

/* A revision or response number as struct gev holds it. */
static int32_t gi32(int64_t v)
{
    FL_ASSERT(v >= INT32_MIN && v <= INT32_MAX);
    return (int32_t)v;
}

static void ev_push(struct gen *g, const struct gev *e)
{
    FL_GROW(g->ev, g->evcap, g->nev + 1, 256);
    g->ev[g->nev++] = *e;
}

static void gen_watches(struct gen *g)
{
    const struct chk_gen_opts *o = g->o;
    int64_t resp = 1;
    for (uint32_t wi = 0; wi < o->watches; wi++) {
        struct gwatch *w = &g->w[wi];
        w->key = below(&g->r, 2) ? -1 : (int32_t)below(&g->r, o->keys);
        w->start_rev = 1 + (int64_t)below(&g->r, (uint32_t)FL_MAX(g->rev / 2, 1));
        w->prev_kv = below(&g->r, 2);
        if ((o->outside_pm || o->full_watch) && wi == 0) {
            w->key = -1; /* outside writes are known from this watch */
            w->start_rev = 1;
        }
        int64_t last_rev = -1, since_progress = 0;
        for (uint32_t c = 0; c < g->nchg; c++) {
            const struct gkv *ch = &g->chg[c];
            FL_ASSERT(c == 0 || g->chg[c - 1].mod <= ch->mod); /* one response per revision */
            if (ch->mod < w->start_rev || (w->key >= 0 && ch->key != w->key))
                continue;
            if (ch->mod != last_rev) {
                resp++;
                if (++since_progress == 6) {
                    since_progress = 0;
                    ev_push(g, &(struct gev){(int32_t)wi, gi32(resp++), CHK_EV_PROGRESS, 0, -1, -1,
                                             false, 0, gi32(last_rev), 0});
                }
            }
            last_rev = ch->mod;
            struct gev e = {
                (int32_t)wi,  gi32(resp),       ch->value >= 0 ? CHK_EV_PUT : CHK_EV_DELETE,
                ch->key,      ch->value,        g->chg_prev[c],
                w->prev_kv,   gi32(ch->create), gi32(ch->mod),
                gi32(ch->ver)};
            ev_push(g, &e);
        }
        ev_push(g, &(struct gev){(int32_t)wi, gi32(++resp), CHK_EV_PROGRESS, 0, -1, -1, false, 0,
                                 gi32(g->rev), 0});
        resp++;
    }
}

/* ---- mutations --------------------------------------------------------------------- */

/* A get that saw an acknowledged write's value, called after that write returned. */
static bool find_read_after_write(struct gen *g, uint32_t *gi, uint32_t *prev_chg)
{
    uint32_t start = below(&g->r, g->nops ? g->nops : 1);
    for (uint32_t k = 0; k < g->nops; k++) {
        uint32_t i = (start + k) % g->nops;
        struct gop *r = &g->ops[i];
        if (r->kind != G_GET || r->status != CHK_ST_OK || r->res.value < 0)
            continue;
        /* the write that produced it must be acknowledged and returned before the call */
        for (uint32_t j = 0; j < g->nops; j++) {
            struct gop *w = &g->ops[j];
            if (w->status == CHK_ST_OK && w->rev == r->res.mod && w->ret < r->call &&
                (w->kind == G_PUT || w->kind == G_CAS || w->kind == G_MPUT)) {
                /* the change before it on the same key */
                for (uint32_t c = 0; c < g->nchg; c++) {
                    if (g->chg[c].key == r->key && g->chg[c].mod == r->res.mod) {
                        *gi = i;
                        *prev_chg = c;
                        return true;
                    }
                }
            }
        }
    }
    return false;
}

static struct gkv prev_state(struct gen *g, uint32_t c)
{
    FL_ASSERT(c < g->nchg);
    int32_t key = g->chg[c].key;
    for (uint32_t k = c; k-- > 0;) {
        if (g->chg[k].key == key)
            return g->chg[k];
    }
    return (struct gkv){key, -1, 0, 0, 0};
}

static int mut_lin(struct gen *g, int m)
{
    FL_ASSERT(m >= CHK_MUT_STALE_READ && m <= CHK_MUT_REORDER_WRITES);
    if (m == CHK_MUT_STALE_READ || m == CHK_MUT_LOST_WRITE) {
        uint32_t gi, c;
        if (!find_read_after_write(g, &gi, &c))
            return FL_ENOENT;
        struct gop *r = &g->ops[gi];
        struct gkv p = prev_state(g, c);
        r->res = p;
        if (m == CHK_MUT_STALE_READ)
            r->rev = g->chg[c].mod - 1;
        return FL_OK;
    }
    /* reorder: two acknowledged puts, the first returned before the second's call */
    for (uint32_t i = 0; i < g->nops; i++) {
        struct gop *a = &g->ops[i];
        if (a->kind != G_PUT || a->status != CHK_ST_OK)
            continue;
        for (uint32_t j = i + 1; j < g->nops; j++) {
            struct gop *b = &g->ops[j];
            if (b->kind == G_PUT && b->status == CHK_ST_OK && a->ret < b->call &&
                b->key != a->key) {
                int64_t t = a->rev;
                a->rev = b->rev;
                b->rev = t;
                return FL_OK;
            }
        }
    }
    return FL_ENOENT;
}

static void ev_insert(struct gen *g, uint32_t at, const struct gev *e)
{
    FL_ASSERT(at <= g->nev);
    ev_push(g, e);
    memmove(&g->ev[at + 1], &g->ev[at], (g->nev - 1 - at) * sizeof(*g->ev));
    g->ev[at] = *e;
}

static void ev_remove(struct gen *g, uint32_t at)
{
    FL_ASSERT(at < g->nev);
    memmove(&g->ev[at], &g->ev[at + 1], (g->nev - at - 1) * sizeof(*g->ev));
    g->nev--;
}

static bool is_kv_event(const struct gev *e)
{
    return e->kind != CHK_EV_PROGRESS;
}

/* Index of the k-th (0-based) kv event of some watch satisfying pred, by scan from a
 * random start; UINT32_MAX when none. */
static uint32_t pick_event(struct gen *g, bool (*pred)(struct gen *, uint32_t))
{
    if (!g->nev)
        return UINT32_MAX;
    uint32_t start = below(&g->r, g->nev);
    for (uint32_t k = 0; k < g->nev; k++) {
        uint32_t i = (start + k) % g->nev;
        if (is_kv_event(&g->ev[i]) && pred(g, i))
            return i;
    }
    return UINT32_MAX;
}

/* The event's revision was made by an acknowledged write (so dropping the event
 * cannot make the write look like it never happened). */
static bool rev_acked(struct gen *g, int64_t rev)
{
    for (uint32_t j = 0; j < g->nops; j++) {
        const struct gop *w = &g->ops[j];
        if (w->status == CHK_ST_OK && w->rev == rev && w->kind != G_GET && w->kind != G_RANGE)
            return true;
    }
    return false;
}

static bool p_any(struct gen *g, uint32_t i)
{
    (void)g;
    (void)i;
    return true;
}

/* Followed, in its watch, by a kv event of a later revision. */
static bool p_middle(struct gen *g, uint32_t i)
{
    if (!rev_acked(g, g->ev[i].mod))
        return false;
    for (uint32_t j = i + 1; j < g->nev && g->ev[j].watch == g->ev[i].watch; j++) {
        if (is_kv_event(&g->ev[j]) && g->ev[j].mod > g->ev[i].mod)
            return true;
    }
    return false;
}

static bool p_next_later(struct gen *g, uint32_t i)
{
    return i + 1 < g->nev && g->ev[i + 1].watch == g->ev[i].watch && is_kv_event(&g->ev[i + 1]) &&
           g->ev[i + 1].mod > g->ev[i].mod;
}

static bool p_single_key_watch(struct gen *g, uint32_t i)
{
    return g->w[g->ev[i].watch].key >= 0 && g->o->keys > 1;
}

static bool p_same_rev_next(struct gen *g, uint32_t i)
{
    return i + 1 < g->nev && g->ev[i + 1].watch == g->ev[i].watch && is_kv_event(&g->ev[i + 1]) &&
           g->ev[i + 1].mod == g->ev[i].mod;
}

static bool p_rev_ge2(struct gen *g, uint32_t i)
{
    return g->ev[i].mod >= 3;
}

static bool p_first_of_watch(struct gen *g, uint32_t i)
{
    if (!rev_acked(g, g->ev[i].mod))
        return false;
    /* alone in its revision, so that dropping it moves the first revision */
    if (i + 1 < g->nev && g->ev[i + 1].watch == g->ev[i].watch && g->ev[i + 1].mod == g->ev[i].mod)
        return false;
    for (uint32_t j = i; j-- > 0 && g->ev[j].watch == g->ev[i].watch;) {
        if (is_kv_event(&g->ev[j]))
            return false;
    }
    return true;
}

static bool p_update_put(struct gen *g, uint32_t i)
{
    return g->ev[i].kind == CHK_EV_PUT && g->ev[i].create != g->ev[i].mod;
}

static bool p_prev_given(struct gen *g, uint32_t i)
{
    return g->ev[i].prev_given;
}

static int mut_watch(struct gen *g, int m)
{
    static bool (*const preds[])(struct gen *, uint32_t) = {
        [CHK_MUT_DUP_EVENT] = p_any,
        [CHK_MUT_DROP_EVENT] = p_middle,
        [CHK_MUT_SWAP_EVENTS] = p_next_later,
        [CHK_MUT_FOREIGN_EVENT] = p_single_key_watch,
        [CHK_MUT_SPLIT_REVISION] = p_same_rev_next,
        [CHK_MUT_BAD_PROGRESS] = p_rev_ge2,
        [CHK_MUT_LATE_START] = p_first_of_watch,
        [CHK_MUT_BAD_IS_CREATE] = p_update_put,
        [CHK_MUT_BAD_PREV_KV] = p_prev_given,
    };
    FL_ASSERT(m > CHK_MUT_REORDER_WRITES && m < CHK_MUT_COUNT && preds[m]);
    uint32_t i = pick_event(g, preds[m]);
    if (i == UINT32_MAX)
        return FL_ENOENT;
    FL_ASSERT(i < g->nev && is_kv_event(&g->ev[i]));
    struct gev e = g->ev[i];
    switch (m) {
    case CHK_MUT_DUP_EVENT:
        ev_insert(g, i + 1, &e);
        break;
    case CHK_MUT_DROP_EVENT:
    case CHK_MUT_LATE_START:
        ev_remove(g, i);
        if (m == CHK_MUT_LATE_START) {
            /* a later event must remain for the late start to show */
            bool later = false;
            for (uint32_t j = i; j < g->nev && g->ev[j].watch == e.watch; j++)
                later |= is_kv_event(&g->ev[j]);
            if (!later)
                return FL_ENOENT;
        }
        break;
    case CHK_MUT_SWAP_EVENTS: {
        struct gev t = g->ev[i + 1];
        g->ev[i + 1] = g->ev[i];
        g->ev[i] = t;
        int32_t r = g->ev[i].resp; /* keep response numbers in delivery order */
        g->ev[i].resp = g->ev[i + 1].resp;
        g->ev[i + 1].resp = r;
        break;
    }
    case CHK_MUT_FOREIGN_EVENT:
        g->ev[i].key = (g->ev[i].key + 1) % (int32_t)g->o->keys;
        break;
    case CHK_MUT_SPLIT_REVISION:
        g->ev[i + 1].resp = g->ev[i].resp + 1000000;
        break;
    case CHK_MUT_BAD_PROGRESS:
        ev_insert(g, i + 1,
                  &(struct gev){e.watch, e.resp + 2000000, CHK_EV_PROGRESS, 0, -1, -1, false, 0,
                                e.mod - 1, 0});
        break;
    case CHK_MUT_BAD_IS_CREATE:
        g->ev[i].create = g->ev[i].mod;
        break;
    case CHK_MUT_BAD_PREV_KV:
        g->ev[i].prev = g->ev[i].prev >= 0 ? -1 : g->ev[i].value;
        if (g->ev[i].prev == g->ev[i].value && g->ev[i].kind != CHK_EV_PUT)
            return FL_ENOENT;
        break;
    }
    return FL_OK;
}

/* ---- emission ---------------------------------------------------------------------- */

static int32_t vid(struct chk_history *h, int32_t v)
{
    if (v < 0)
        return CHK_NIL;
    char b[32];
    int n = snprintf(b, sizeof(b), "v%d", v);
    return chk_history_value(h, b, (size_t)n);
}

/* A two-key put or a short range: a txn with its subs (and the range's kvs). */
static struct chk_op *emit_txn(struct gen *g, struct chk_history *h, const struct gop *op,
                               int64_t ret, int64_t rev)
{
    FL_ASSERT(op->kind == G_MPUT || op->kind == G_RANGE);
    struct chk_op *o = chk_history_op_add(h);
    o->client = op->client;
    o->call_ns = op->call;
    o->return_ns = ret;
    o->status = (uint8_t)op->status;
    o->rev = rev;
    bool ok = op->status == CHK_ST_OK;
    if (ok)
        o->flags |= CHK_OPF_HAS_RESULT;
    if (op->kind == G_MPUT) {
        for (int k = 0; k < 2; k++) {
            struct chk_sub *s = chk_history_sub_add(h, false);
            s->kind = CHK_SUB_PUT;
            s->key = k ? op->key2 : op->key;
            s->value = vid(h, k ? op->value2 : op->value);
            if (ok)
                s->flags |= CHK_SUBF_RESULT_SET;
        }
        return o;
    }
    struct chk_sub *s = chk_history_sub_add(h, false);
    s->kind = CHK_SUB_RANGE;
    s->key = op->key;
    s->range_end = (uint32_t)op->key + 8 < g->o->keys ? op->key + 8 : CHK_RANGE_ALL;
    if (!ok)
        return o;
    s->flags |= CHK_SUBF_RESULT_SET | CHK_SUBF_KVS_SET | CHK_SUBF_COUNT_SET;
    s->count = (int32_t)op->kv_n;
    FL_ASSERT(op->kv_n <= 8 && op->kv_first + op->kv_n <= g->nrkvs);
    for (uint32_t k = 0; k < op->kv_n; k++) {
        const struct gkv *x = &g->rkvs[op->kv_first + k];
        FL_ASSERT(k == 0 || x[-1].key < x->key); /* a range returns its keys in order */
        struct chk_kv *kv = chk_history_kv_add(h);
        kv->key = x->key;
        kv->value = vid(h, x->value);
        kv->create_rev = x->create;
        kv->mod_rev = x->mod;
        kv->version = x->ver;
    }
    return o;
}

static void emit_op(struct gen *g, struct chk_history *h, const struct gop *op)
{
    int64_t ret = op->status == CHK_ST_UNKNOWN ? CHK_NEVER : op->ret;
    int64_t rev = op->status == CHK_ST_OK ? op->rev : CHK_NO_REV;
    uint32_t before = h->op_count;
    struct chk_op *o = NULL;
    switch (op->kind) {
    case G_GET:
        o = chk_history_get(h, op->client, op->key, vid(h, op->res.value), op->call, ret,
                            op->status, rev, op->res.value < 0 ? CHK_NO_REV : op->res.mod,
                            op->res.value < 0 ? CHK_NO_REV : op->res.create,
                            op->res.value < 0 ? CHK_NO_REV : op->res.ver);
        break;
    case G_PUT:
        o = chk_history_put(h, op->client, op->key, vid(h, op->value), op->call, ret, op->status,
                            rev);
        break;
    case G_DEL:
        o = chk_history_delete(h, op->client, op->key, op->call, ret, op->status, rev,
                               op->status == CHK_ST_OK ? op->deleted : -1);
        break;
    case G_CAS:
        o = chk_history_cas(h, op->client, op->key, vid(h, op->expect), vid(h, op->value), op->call,
                            ret, op->status, rev, op->status == CHK_ST_OK ? op->succeeded : -1);
        break;
    case G_MPUT:
    case G_RANGE:
        o = emit_txn(g, h, op, ret, rev);
        break;
    }
    FL_ASSERT(o && h->op_count == before + 1); /* one history op per generated op */
    o = &h->ops[h->op_count - 1];
    o->op_id = h->op_count;
    if (op->status == CHK_ST_FAIL)
        o->err = CHK_ERR_OTHER;
}

static void emit(struct gen *g, struct chk_history *h)
{
    for (uint32_t k = 0; k < g->o->keys; k++) {
        char b[16];
        int n = snprintf(b, sizeof(b), "k%03u", k);
        chk_history_key(h, b, (size_t)n);
    }
    for (uint32_t i = 0; i < g->nops; i++) {
        if (!g->ops[i].outside)
            emit_op(g, h, &g->ops[i]);
    }
    /* The generator's scratch goes as soon as it is emitted, so that the peak is not
     * scratch plus the whole history (1M ops: 528 -> ~400 MB). */
    free(g->ops);
    free(g->rkvs);
    g->ops = NULL;
    g->rkvs = NULL;
    for (uint32_t wi = 0; wi < g->o->watches; wi++) {
        struct chk_watch *w = chk_history_watch_add(h);
        w->watch_id = wi + 1;
        w->client = 100 + (int32_t)wi;
        w->key = g->w[wi].key >= 0 ? g->w[wi].key : 0;
        w->range_end = g->w[wi].key >= 0 ? CHK_RANGE_ONE : CHK_RANGE_ALL;
        w->start_rev = g->w[wi].start_rev;
        w->flags = CHK_WF_PROGRESS_NOTIFY | (g->w[wi].prev_kv ? CHK_WF_PREV_KV : 0);
    }
    for (uint32_t i = 0; i < g->nev; i++) {
        const struct gev *e = &g->ev[i];
        struct chk_wevent *x = chk_history_event_add(h);
        x->watch_id = e->watch + 1;
        x->seq = i;
        x->response = e->resp;
        x->kind = (uint8_t)e->kind;
        x->key = e->key;
        x->mod_rev = e->mod;
        if (e->kind == CHK_EV_PROGRESS)
            continue;
        x->value = e->kind == CHK_EV_PUT ? vid(h, e->value) : CHK_NIL;
        x->prev_value = e->prev_given ? vid(h, e->prev) : CHK_NOT_GIVEN;
        if (e->kind == CHK_EV_PUT) {
            x->create_rev = e->create;
            x->version = e->ver;
        }
    }
    free(g->ev);
    g->ev = NULL;
}

void chk_gen_opts_default(struct chk_gen_opts *o, uint64_t seed)
{
    memset(o, 0, sizeof(*o));
    o->seed = seed;
    o->ops = 200;
    o->clients = 4;
    o->keys = 4;
    o->watches = 3;
    o->unknown_pm = 40;
    o->fail_pm = 30;
    o->txn = true;
    o->deletes = true;
    o->window = 25;
}

int chk_gen_history(const struct chk_gen_opts *o, int mutation, struct chk_history *h)
{
    FL_ASSERT(o->clients >= 1 && o->keys >= 1 && o->window >= 1);
    /* a mutation the generator does not know would give an unmutated history */
    FL_ASSERTF(mutation >= CHK_MUT_NONE && mutation < CHK_MUT_COUNT, "unknown mutation %d",
               mutation);
    struct gen g;
    memset(&g, 0, sizeof(g));
    g.o = o;
    g.r.s = o->seed * UINT64_C(0x2545f4914f6cdd1d) + 1;
    g.ops = fl_calloc(o->ops + 1, sizeof(*g.ops));
    g.chg_cap = 2 * o->ops + 2;
    g.chg = fl_calloc(g.chg_cap, sizeof(*g.chg));
    g.chg_prev = fl_calloc(g.chg_cap, sizeof(int32_t));
    g.w = fl_calloc(o->watches + 1, sizeof(*g.w));
    g.state = fl_calloc(o->keys, sizeof(*g.state));
    for (uint32_t k = 0; k < o->keys; k++)
        g.state[k] = (struct gkv){(int32_t)k, -1, 0, 0, 0};
    g.rev = 1;
    gen_ops(&g);
    gen_watches(&g);
    int rc = FL_OK;
    if (mutation >= CHK_MUT_STALE_READ && mutation <= CHK_MUT_REORDER_WRITES)
        rc = mut_lin(&g, mutation);
    else if (mutation > CHK_MUT_REORDER_WRITES)
        rc = mut_watch(&g, mutation);
    if (!rc) {
        /* every write of the run is in the history, unless some came from outside */
        h->revisions_complete = o->outside_pm == 0;
        free(g.chg); /* the changes are in the ops and events by now */
        free(g.chg_prev);
        g.chg = NULL;
        g.chg_prev = NULL;
        emit(&g, h);
        struct fl_buf err;
        fl_buf_init(&err);
        rc = chk_history_finish(h, &err);
        FL_ASSERTF(rc == FL_OK, "generated history invalid: %s", fl_buf_cstr(&err));
        fl_buf_close(&err);
    }
    free(g.ops);
    free(g.rkvs);
    free(g.chg);
    free(g.chg_prev);
    free(g.ev);
    free(g.w);
    free(g.state);
    return rc;
}

static const char *const mut_names[CHK_MUT_COUNT] = {
    "none",       "stale_read",    "lost_write",    "reorder_writes", "dup_event",
    "drop_event", "swap_events",   "foreign_event", "split_revision", "bad_progress",
    "late_start", "bad_is_create", "bad_prev_kv"};

const char *chk_gen_mutation_name(int m)
{
    return m >= 0 && m < CHK_MUT_COUNT ? mut_names[m] : "?";
}

int chk_gen_mutation_guarantee(int m)
{
    switch (m) {
    case CHK_MUT_DUP_EVENT:
        return CHK_G_UNIQUE;
    case CHK_MUT_DROP_EVENT:
        return CHK_G_RELIABLE;
    case CHK_MUT_SWAP_EVENTS:
        return CHK_G_ORDERED;
    case CHK_MUT_FOREIGN_EVENT:
        return CHK_G_FILTER;
    case CHK_MUT_SPLIT_REVISION:
        return CHK_G_ATOMIC;
    case CHK_MUT_BAD_PROGRESS:
        return CHK_G_BOOKMARKABLE;
    case CHK_MUT_LATE_START:
        return CHK_G_RESUMABLE;
    case CHK_MUT_BAD_IS_CREATE:
        return CHK_G_IS_CREATE;
    case CHK_MUT_BAD_PREV_KV:
        return CHK_G_PREV_KV;
    default:
        return -1;
    }
}
