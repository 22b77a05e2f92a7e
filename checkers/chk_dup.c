/*
 * chk_dup.c: writes applied more often than they were made (at-most-once broken).
 *
 * A put's (key, value) that some recorded operation (ok or unknown outcome) writes
 * identifies that operation's effect: whenever the history shows the pair applied at a
 * revision (the op's own response revision, a watch event, a read result with that
 * mod revision), one of the ops writing it took effect there. A correct cluster
 * applies an op at most once, so the pair can be applied at no more distinct
 * revisions than there are ops writing it; more is a duplicate application (a retried
 * write applied twice), which no linearization explains. Such a revision is never a
 * write from outside the history (only content no op wrote is: lease expiries,
 * values nobody recorded). The rule needs no guess, so both engines apply it the
 * same way (chk_lin_revision and chk_lin_search): the verdict is fail whatever the
 * replay or search found. The watch checker is unaffected: the events faithfully
 * reported both applications.
 *
 * Two passes. The quick one (dup_index) finds the pairs shown applied at two distinct
 * revisions at all: the writers' pairs bucketed by value id (counting sort: the ids are
 * dense), and per pair the one revision seen so far. A pair seen at one revision cannot
 * be a duplicate (it has a writer), so the exact pass (sort the writers and the distinct
 * applications, count) runs on the flagged pairs alone, and its verdict and explanation
 * are those it would give on every pair. On a correct history nothing is flagged: at
 * 1M generated operations the exact pass over every pair was 47% of the revision
 * engine's instructions (a hash set of 600k applications and two qsorts).
 */
#include "checkers/chk_int.h"

/* A recorded op that may write (key, value). */
struct dup_w {
    int32_t key, value;
    uint32_t op;
};

enum { DUP_RESPONSE = 0, DUP_WATCH, DUP_READ };

/* (key, value) seen applied at rev; who: op index (response, read) or event index. */
struct dup_a {
    int32_t key, value;
    int64_t rev;
    uint8_t src;
    uint32_t who;
};

static int dup_w_cmp(const void *a, const void *b)
{
    const struct dup_w *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    if (x->value != y->value)
        return x->value < y->value ? -1 : 1;
    return x->op < y->op ? -1 : x->op > y->op;
}

static int dup_a_cmp(const void *a, const void *b)
{
    const struct dup_a *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    if (x->value != y->value)
        return x->value < y->value ? -1 : 1;
    if (x->rev != y->rev)
        return x->rev < y->rev ? -1 : 1;
    if (x->src != y->src)
        return x->src < y->src ? -1 : 1;
    return x->who < y->who ? -1 : x->who > y->who;
}

/* ---- the quick pass ------------------------------------------------------------- */

#define DUP_NONE INT64_MIN /* no application seen yet (sightings are at revisions >= 2) */
#define DUP_MANY                                                                                   \
    INT64_MAX /* two distinct revisions seen (or one at INT64_MAX: the exact                       \
                 pass decides) */

/* The writers' (key, value) pairs by value id. */
struct dup_index {
    uint32_t values;  /* value ids [0, values) */
    uint32_t *first;  /* per value v: its entries are [first[v], first[v + 1]) */
    int32_t *key;     /* per entry: the key, in op order within a value */
    int64_t *seen;    /* per entry, the first of its key in its value: DUP_NONE, the one
                         revision seen, or DUP_MANY */
    uint32_t flagged; /* entries that became DUP_MANY */
};

/* Is sub j of op a put the writers count (dup_writers' rule)? */
static bool dup_is_writer(const struct chk_history *h, const struct chk_op *op, uint32_t j)
{
    const struct chk_sub *s = &h->subs[op->sub_first + j];
    if (s->kind != CHK_SUB_PUT || s->value < 0)
        return false;
    bool known =
        op->status == CHK_ST_OK && (op->cmp_count == 0 || (op->flags & CHK_OPF_SUCCEEDED_SET));
    bool succ = op->cmp_count == 0 || (op->flags & CHK_OPF_SUCCEEDED);
    return !known || (j < op->then_count) == succ;
}

/* Counts (pass 0) or places (pass 1) the writers' entries. */
static void dup_index_pass(const struct chk_history *h, struct dup_index *ix, int pass)
{
    for (uint32_t i = 0; i < h->op_count; i++) {
        const struct chk_op *op = &h->ops[i];
        if (op->status == CHK_ST_FAIL || op->kind != CHK_OP_TXN)
            continue;
        for (uint32_t j = 0; j < (uint32_t)op->then_count + op->else_count; j++) {
            if (!dup_is_writer(h, op, j))
                continue;
            const struct chk_sub *s = &h->subs[op->sub_first + j];
            FL_ASSERT((uint32_t)s->value < ix->values);
            if (pass == 0)
                ix->first[s->value + 1]++;
            else
                ix->key[ix->first[s->value]++] = s->key;
        }
    }
}

static void dup_index_build(const struct chk_history *h, struct dup_index *ix)
{
    memset(ix, 0, sizeof *ix);
    ix->values = h->values.count;
    ix->first = fl_calloc((size_t)ix->values + 1, sizeof(uint32_t));
    dup_index_pass(h, ix, 0);
    for (uint32_t v = 0; v < ix->values; v++) {
        ix->first[v + 1] += ix->first[v];
        FL_ASSERT(ix->first[v + 1] >= ix->first[v]); /* no wrap: fewer entries than 2^32 */
    }
    uint32_t n = ix->first[ix->values];
    ix->key = fl_malloc(((size_t)n + 1) * sizeof(int32_t));
    ix->seen = fl_malloc(((size_t)n + 1) * sizeof(int64_t));
    for (uint32_t e = 0; e < n; e++)
        ix->seen[e] = DUP_NONE;
    dup_index_pass(h, ix, 1); /* first[v] moves to first[v + 1]'s old place */
    for (uint32_t v = ix->values; v > 0; v--)
        ix->first[v] = ix->first[v - 1];
    ix->first[0] = 0;
    FL_ASSERT(ix->first[ix->values] == n);
}

static void dup_index_close(struct dup_index *ix)
{
    free(ix->first);
    free(ix->key);
    free(ix->seen);
}

/* The entry of (key, value), the first of its key in the value's bucket; UINT32_MAX
 * when no writer writes it. */
static uint32_t dup_find(const struct dup_index *ix, int32_t key, int32_t value)
{
    if (value < 0 || (uint32_t)value >= ix->values)
        return UINT32_MAX; /* a value no writer's (an append's result, interned later) */
    for (uint32_t e = ix->first[value]; e < ix->first[value + 1]; e++)
        if (ix->key[e] == key)
            return e;
    return UINT32_MAX;
}

/* (key, value) seen applied at rev. */
static void dup_note(struct dup_index *ix, int32_t key, int32_t value, int64_t rev)
{
    uint32_t e = dup_find(ix, key, value);
    if (e == UINT32_MAX || ix->seen[e] == DUP_MANY || ix->seen[e] == rev)
        return;
    if (ix->seen[e] == DUP_NONE && rev != DUP_MANY) {
        ix->seen[e] = rev;
        return;
    }
    ix->seen[e] = DUP_MANY;
    ix->flagged++;
}

/* Every sighting dup_apps takes, noted. The same loops as dup_apps' (its conditions
 * must stay the same: the exact pass must see every application the quick pass saw of a
 * flagged pair); one walker for both with the pass as a parameter was measured at +24M
 * instructions of 1,764M on the bench's 1M history (callgrind), so they stay apart. */
static void dup_index_scan(const struct chk_history *h, struct dup_index *ix)
{
    for (uint32_t i = 0; i < h->op_count; i++) {
        const struct chk_op *op = &h->ops[i];
        if (op->status != CHK_ST_OK || op->kind != CHK_OP_TXN)
            continue;
        bool known = op->cmp_count == 0 || (op->flags & CHK_OPF_SUCCEEDED_SET);
        bool succ = op->cmp_count == 0 || (op->flags & CHK_OPF_SUCCEEDED);
        for (uint32_t j = 0; j < (uint32_t)op->then_count + op->else_count; j++) {
            const struct chk_sub *s = &h->subs[op->sub_first + j];
            if (known && (j < op->then_count) == succ && s->kind == CHK_SUB_PUT && s->value >= 0 &&
                op->rev >= 2)
                dup_note(ix, s->key, s->value, op->rev);
            for (uint32_t k = 0; k < s->kv_count; k++) {
                const struct chk_kv *kv = &h->kvs[s->kv_first + k];
                if (kv->value >= 0 && kv->mod_rev != CHK_NO_REV && kv->mod_rev >= 2)
                    dup_note(ix, kv->key, kv->value, kv->mod_rev);
            }
        }
    }
    for (uint32_t i = 0; i < h->event_count; i++) {
        const struct chk_wevent *e = &h->events[i];
        if (e->kind == CHK_EV_PUT && e->key >= 0 && e->value >= 0 && e->mod_rev >= 2)
            dup_note(ix, e->key, e->value, e->mod_rev);
    }
}

/* Was (key, value) seen applied at two distinct revisions (the exact pass's pairs)? */
static bool dup_flagged(const struct dup_index *ix, int32_t key, int32_t value)
{
    uint32_t e = dup_find(ix, key, value);
    return e != UINT32_MAX && ix->seen[e] == DUP_MANY;
}

/* ---- the exact pass, on the flagged pairs ----------------------------------------- */

/* One more element (common's growth rule). */
#define DUP_GROW(v, n, cap) FL_GROW(v, cap, (size_t)(n) + 1, 256)

/* The puts of ok and unknown ops (an ok op with a known branch: that branch only) of
 * the flagged pairs. */
static struct dup_w *dup_writers(const struct chk_history *h, const struct dup_index *ix,
                                 uint32_t *count)
{
    struct dup_w *w = NULL;
    uint32_t n = 0, cap = 0;
    for (uint32_t i = 0; i < h->op_count; i++) {
        const struct chk_op *op = &h->ops[i];
        if (op->status == CHK_ST_FAIL || op->kind != CHK_OP_TXN)
            continue;
        for (uint32_t j = 0; j < (uint32_t)op->then_count + op->else_count; j++) {
            const struct chk_sub *s = &h->subs[op->sub_first + j];
            if (!dup_is_writer(h, op, j) || !dup_flagged(ix, s->key, s->value))
                continue;
            DUP_GROW(w, n, cap);
            w[n++] = (struct dup_w){s->key, s->value, i};
        }
    }
    if (n)
        qsort(w, n, sizeof(*w), dup_w_cmp);
    *count = n;
    return w;
}

static uint64_t dup_mix(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9u;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebu;
    return x ^ (x >> 31);
}

/* The applications seen so far, one per (key, value, rev): the least in dup_a_cmp
 * order (least src, then who), since the checker only ever looks at the first
 * application of each revision of a pair. Deduplicating as they are added (a range
 * read shows the same pairs again and again, every watch shows every write) keeps the
 * array at the distinct count instead of one entry per sighting: at 10M generated
 * operations, some 6M entries instead of 23M, plus a table of 2-4 slots each.
 * The order is arbitrary until the caller sorts; the table is for lookup only. */
struct dup_set {
    struct dup_a *a;
    uint32_t n, cap;
    uint32_t *slot; /* index + 1, 0 empty */
    uint32_t mask;
};

static uint32_t dup_hash(int32_t key, int32_t value, int64_t rev)
{
    return (uint32_t)dup_mix(((uint64_t)(uint32_t)key << 32 | (uint32_t)value) ^
                             dup_mix((uint64_t)rev));
}

static void dup_rehash(struct dup_set *d)
{
    uint32_t n = d->mask ? (d->mask + 1) * 2 : 1024;
    FL_ASSERT(n > d->mask + 1);
    free(d->slot);
    d->slot = fl_calloc(n, sizeof(*d->slot));
    d->mask = n - 1;
    for (uint32_t i = 0; i < d->n; i++) {
        uint32_t s = dup_hash(d->a[i].key, d->a[i].value, d->a[i].rev) & d->mask;
        while (d->slot[s])
            s = (s + 1) & d->mask;
        d->slot[s] = i + 1;
    }
}

static void dup_add(struct dup_set *d, int32_t key, int32_t value, int64_t rev, uint8_t src,
                    uint32_t who)
{
    if ((uint64_t)(d->n + 1) * 2 > (uint64_t)d->mask + 1)
        dup_rehash(d);
    uint32_t s = dup_hash(key, value, rev) & d->mask;
    while (d->slot[s]) {
        struct dup_a *y = &d->a[d->slot[s] - 1];
        if (y->key == key && y->value == value && y->rev == rev) {
            if (src < y->src || (src == y->src && who < y->who)) {
                y->src = src;
                y->who = who;
            }
            return;
        }
        s = (s + 1) & d->mask;
    }
    DUP_GROW(d->a, d->n, d->cap);
    d->a[d->n++] = (struct dup_a){key, value, rev, src, who};
    d->slot[s] = d->n;
    FL_ASSERT((uint64_t)d->n * 2 <= (uint64_t)d->mask + 1); /* at most half full: probes end */
}

/* Where the history shows a flagged (key, value) applied: ok puts' response
 * revisions, watch put events, and the key-values of ok ops' results. */
static struct dup_a *dup_apps(const struct chk_history *h, const struct dup_index *ix,
                              uint32_t *count)
{
    struct dup_set d;
    memset(&d, 0, sizeof d);
    for (uint32_t i = 0; i < h->op_count; i++) {
        const struct chk_op *op = &h->ops[i];
        if (op->status != CHK_ST_OK || op->kind != CHK_OP_TXN)
            continue;
        bool known = op->cmp_count == 0 || (op->flags & CHK_OPF_SUCCEEDED_SET);
        bool succ = op->cmp_count == 0 || (op->flags & CHK_OPF_SUCCEEDED);
        for (uint32_t j = 0; j < (uint32_t)op->then_count + op->else_count; j++) {
            const struct chk_sub *s = &h->subs[op->sub_first + j];
            if (known && (j < op->then_count) == succ && s->kind == CHK_SUB_PUT && s->value >= 0 &&
                op->rev >= 2 && dup_flagged(ix, s->key, s->value))
                dup_add(&d, s->key, s->value, op->rev, DUP_RESPONSE, i);
            for (uint32_t k = 0; k < s->kv_count; k++) {
                const struct chk_kv *kv = &h->kvs[s->kv_first + k];
                if (kv->value < 0 || kv->mod_rev == CHK_NO_REV || kv->mod_rev < 2 ||
                    !dup_flagged(ix, kv->key, kv->value))
                    continue;
                dup_add(&d, kv->key, kv->value, kv->mod_rev, DUP_READ, i);
            }
        }
    }
    for (uint32_t i = 0; i < h->event_count; i++) {
        const struct chk_wevent *e = &h->events[i];
        if (e->kind != CHK_EV_PUT || e->key < 0 || e->value < 0 || e->mod_rev < 2 ||
            !dup_flagged(ix, e->key, e->value))
            continue;
        dup_add(&d, e->key, e->value, e->mod_rev, DUP_WATCH, i);
    }
    free(d.slot);
    if (d.n)
        qsort(d.a, d.n, sizeof(*d.a), dup_a_cmp);
    /* distinct (key, value, rev): dup_add kept one application per revision */
    for (uint32_t i = 1; i < d.n; i++)
        FL_ASSERT(d.a[i - 1].key != d.a[i].key || d.a[i - 1].value != d.a[i].value ||
                  d.a[i - 1].rev < d.a[i].rev);
    *count = d.n;
    return d.a;
}

static const char *const dup_src_names[] = {"its response", "a watch event", "a read"};
static const char *const dup_src_json[] = {"response", "watch", "read"};

static void dup_ms(struct fl_buf *b, int64_t ns)
{
    if (ns == CHK_NEVER)
        fl_buf_printf(b, "never");
    else
        fl_buf_printf(b, "%lld.%03lld ms", (long long)(ns / 1000000),
                      (long long)((ns % 1000000) / 1000));
}

/* The violation of one (key, value): its ops, its first `nrev` distinct applications
 * (apps[first..], distinct revisions), into the reason and the JSON detail. */
static json_t *dup_explain(const struct chk_history *h, const struct dup_w *w, uint32_t wn,
                           const struct dup_a *ap, const uint32_t *at, uint32_t nrev,
                           struct chk_lin_result *out)
{
    const struct chk_op *op = &h->ops[w[0].op];
    struct fl_buf m, t;
    fl_buf_init(&m);
    fl_buf_init(&t);
    chk_op_text(h, op, &t);
    if (wn == 1) {
        fl_buf_printf(&m, "op %lld (client %d, called at ", (long long)op->op_id, op->client);
        dup_ms(&m, op->call_ns);
        fl_buf_printf(&m, ", returned ");
        dup_ms(&m, op->return_ns);
        fl_buf_printf(&m, ", %s) wrote this value once, yet it was applied at revision",
                      op->status == CHK_ST_OK ? "ok" : "outcome unknown");
    } else {
        fl_buf_printf(&m, "%u ops wrote this value, yet it was applied at revision", wn);
    }
    json_t *revs = json_array();
    for (uint32_t i = 0; i < nrev; i++) {
        const struct dup_a *a = &ap[at[i]];
        fl_buf_printf(&m, "%s %lld (%s)",
                      i == 0          ? ""
                      : i + 1 == nrev ? " and"
                                      : ",",
                      (long long)a->rev, dup_src_names[a->src]);
        json_t *r = json_object();
        json_object_set_new(r, "revision", json_integer(a->rev));
        json_object_set_new(r, "seen_by", json_string(dup_src_json[a->src]));
        json_array_append_new(revs, r);
    }
    fl_buf_printf(&m, ": a write applies at most once");
    int64_t rev = ap[at[nrev - 1]].rev;
    snprintf(out->reason, sizeof(out->reason), "%s (client %d) at revision %lld: %s",
             fl_buf_cstr(&t), op->client, (long long)rev, fl_buf_cstr(&m));
    json_t *o = json_object();
    json_object_set_new(o, "kind", json_string("duplicate_application"));
    json_object_set_new(o, "revision", json_integer(rev));
    json_object_set_new(o, "message", json_string(fl_buf_cstr(&m)));
    json_t *ops = json_array();
    for (uint32_t i = 0; i < wn && i < 4; i++)
        json_array_append_new(ops, chk_json_op(h, &h->ops[w[i].op]));
    json_object_set_new(o, "ops", ops);
    json_object_set_new(o, "revisions", revs);
    fl_buf_close(&m);
    fl_buf_close(&t);
    return o;
}

/* Puts the violation first in out->detail's violations (creating them if needed); the
 * longest linearizable prefix ends before its revision (or an earlier violation). */
static void dup_attach(const struct chk_history *h, struct chk_lin_result *out, json_t *v,
                       uint32_t total, int64_t rev)
{
    if (!out->detail) {
        out->detail = json_object();
        json_object_set_new(out->detail, "engine",
                            json_string(out->engine == CHK_ENGINE_SEARCH ? "search" : "revision"));
    }
    json_t *arr = json_object_get(out->detail, "violations");
    if (!json_is_array(arr)) {
        arr = json_array();
        json_object_set_new(out->detail, "violations", arr);
    }
    json_array_insert_new(arr, 0, v);
    json_t *cnt = json_object_get(out->detail, "violation_count");
    json_int_t before =
        json_is_integer(cnt) && out->verdict == CHK_FAIL ? json_integer_value(cnt) : 0;
    json_object_set_new(out->detail, "violation_count", json_integer(before + total));
    json_object_set_new(out->detail, "duplicate_applications", json_integer(total));
    json_int_t prefix = 0;
    for (uint32_t i = 0; i < h->op_count; i++)
        prefix += h->ops[i].status == CHK_ST_OK && h->ops[i].rev >= 1 && h->ops[i].rev < rev;
    json_t *had = json_object_get(out->detail, "prefix_length");
    if (out->verdict != CHK_FAIL || !json_is_integer(had) || json_integer_value(had) > prefix) {
        json_object_set_new(out->detail, "prefix_length", json_integer(prefix));
        json_object_set_new(out->detail, "prefix_revision", json_integer(rev - 1));
    }
}

bool chk_dup_applications(const struct chk_history *h, struct chk_lin_result *out)
{
    struct dup_index ix;
    dup_index_build(h, &ix);
    dup_index_scan(h, &ix);
    uint32_t wn = 0, an = 0;
    struct dup_w *w = ix.flagged ? dup_writers(h, &ix, &wn) : NULL;
    struct dup_a *ap = wn ? dup_apps(h, &ix, &an) : NULL;
    dup_index_close(&ix);
    uint32_t total = 0, best_w = 0, best_wn = 0, best_nrev = 0;
    uint32_t best_at[5];
    int64_t best_rev = INT64_MAX;
    for (uint32_t a = 0, wi = 0; a < an;) {
        uint32_t b = a;
        while (b < an && ap[b].key == ap[a].key && ap[b].value == ap[a].value)
            b++;
        struct dup_w probe = {ap[a].key, ap[a].value, 0};
        while (wi < wn && dup_w_cmp(&w[wi], &probe) < 0)
            wi++;
        uint32_t ops = 0;
        for (uint32_t x = wi; x < wn && w[x].key == probe.key && w[x].value == probe.value; x++)
            ops += x == wi || w[x].op != w[x - 1].op;
        /* distinct revisions, the first of each; more than ops is a duplicate */
        uint32_t at[5], nrev = 0;
        for (uint32_t x = a; x < b && ops; x++) {
            if (x > a && ap[x].rev == ap[x - 1].rev)
                continue;
            if (nrev < 5)
                at[nrev] = x;
            if (++nrev == ops + 1)
                break;
        }
        /* every flagged pair has a writer: the quick pass only flags writers' pairs */
        FL_ASSERT(ops > 0);
        if (ops && nrev > ops) {
            total++;
            int64_t rev = ap[at[FL_MIN(nrev, 5) - 1]].rev;
            if (rev < best_rev) {
                best_rev = rev;
                best_w = wi;
                best_wn = ops;
                best_nrev = FL_MIN(nrev, 5);
                memcpy(best_at, at, sizeof(at));
            }
        }
        a = b;
    }
    if (total) {
        /* the writers of the chosen pair, one entry per op */
        struct dup_w ws[4];
        uint32_t k = 0;
        for (uint32_t x = best_w;
             x < wn && k < 4 && w[x].key == w[best_w].key && w[x].value == w[best_w].value; x++) {
            if (x == best_w || w[x].op != w[x - 1].op)
                ws[k++] = w[x];
        }
        FL_ASSERT(k == FL_MIN(best_wn, 4u)); /* one entry per distinct writer op */
        json_t *v = dup_explain(h, ws, best_wn, ap, best_at, best_nrev, out);
        dup_attach(h, out, v, total, best_rev);
        out->verdict = CHK_FAIL;
    }
    free(w);
    free(ap);
    return total > 0;
}
