/*
 * chk_gap.c: where the revision-order engine places operations of unknown outcome.
 * A read or a watch event that shows a key-value no acknowledged write explains
 * reveals the unknown op that wrote it; a revision nobody claims (a gap) is filled,
 * in revision order, by the unknown op that could have written it, judged against
 * what later reads saw (value, version count, mod and create revisions). A choice
 * that is not forced is recorded as a decision the engine may retry differently, and
 * marks the replay as a guess (it can confirm linearizability, never refute it).
 *
 * Watch events bound both: an op is never placed at a revision whose watch events it
 * cannot have made (a delete of a key it does not delete, a key it writes inside a
 * watch that delivered that revision without it; for a txn, judged per branch, as one
 * branch made the whole revision), nor at a revision that was over
 * before it was called. A gap no op can fill was written outside the history (a lease
 * expiry nobody recorded): it takes the content its watch events show (unless that
 * content is a put of a value a recorded op wrote and applied elsewhere: a duplicate
 * application, which chk_dup.c fails). Gap choices
 * rank candidates: demanded by a later observation (the value, a missing put in a
 * version count, a delete before a re-creation), earliest deadline first; then those
 * that fit; last those that fit only if another unknown op undoes them.
 */
#include "checkers/chk_rev_int.h"
#include "harness/common/lower_bound.h"
#include "harness/common/marker.h"
#include "harness/common/order.h"

int chk__rv_cand_cmp(const void *a, const void *b)
{
    const struct cand_ent *x = a, *y = b;
    FL_CMP_STEP(x->key, y->key);
    FL_CMP_STEP(x->value, y->value);
    FL_CMP_STEP(x->call_ns, y->call_ns);
    FL_CMP_STEP(x->op, y->op);
    return 0;
}

/* Two plain single-key puts (no compares) of the same key and value: interchangeable. */
static bool plain_twins(const struct chk_history *h, const struct chk_op *a, const struct chk_op *b)
{
    FL_ASSERT(a != b);
    if (a->cmp_count || b->cmp_count || a->then_count != 1 || b->then_count != 1 || a->else_count ||
        b->else_count)
        return false;
    const struct chk_sub *x = &h->subs[a->sub_first], *y = &h->subs[b->sub_first];
    return x->kind == y->kind && x->key == y->key && x->value == y->value &&
           x->range_end == y->range_end;
}

/* ---- what watch events show a revision did ------------------------------------ */

static const struct chk_history *g_wev_h;

static int wev_cmp(const void *a, const void *b)
{
    uint32_t ia = *(const uint32_t *)a, ib = *(const uint32_t *)b;
    const struct chk_wevent *x = &g_wev_h->events[ia], *y = &g_wev_h->events[ib];
    const uint32_t *rank = g_wev_h->key_rank;
    FL_CMP_STEP(x->mod_rev, y->mod_rev);
    FL_CMP_STEP(rank[x->key], rank[y->key]);
    FL_CMP_STEP(x->watch_id, y->watch_id);
    FL_CMP_STEP(ia, ib);
    return 0;
}

/* The revisions each watch's stream covered (struct rv.wcov_lo/hi). */
static void wcov_build(struct rv *r)
{
    const struct chk_history *h = r->h;
    r->wcov_lo = fl_malloc((h->watch_count ? h->watch_count : 1) * sizeof(int64_t));
    r->wcov_hi = fl_malloc((h->watch_count ? h->watch_count : 1) * sizeof(int64_t));
    for (uint32_t wi = 0; wi < h->watch_count; wi++) {
        const struct chk_watch *w = &h->watches[wi];
        int64_t lo = INT64_MAX, hi = INT64_MIN;
        for (uint32_t i = w->ev_first; i < w->ev_first + w->ev_count; i++) {
            const struct chk_wevent *e = &h->events[i];
            FL_ASSERT(e->watch_id == w->watch_id);
            lo = FL_MIN(lo, e->mod_rev);
            hi = FL_MAX(hi, e->mod_rev);
        }
        if (w->start_rev > 0 && hi >= w->start_rev)
            lo = FL_MIN(lo, w->start_rev);
        r->wcov_lo[wi] = lo;
        r->wcov_hi[wi] = hi;
    }
}

void chk__rv_wev_build(struct rv *r)
{
    const struct chk_history *h = r->h;
    r->wev_count = 0;
    if (r->no_watch || !h->event_count)
        return;
    wcov_build(r);
    r->wev = fl_malloc(h->event_count * sizeof(uint32_t));
    for (uint32_t i = 0; i < h->event_count; i++) {
        const struct chk_wevent *e = &h->events[i];
        if (e->kind != CHK_EV_PROGRESS && e->key >= 0 && e->mod_rev >= 2 &&
            e->mod_rev <= r->max_rev)
            r->wev[r->wev_count++] = i;
    }
    if (!chk__sort_wev(h, r->wev, r->wev_count)) {
        g_wev_h = h;
        qsort(r->wev, r->wev_count, sizeof(uint32_t), wev_cmp);
        g_wev_h = NULL;
    }
    /* by revision, and by key rank within one (chk__rv_wev_at, apply_watch_gap) */
    for (uint32_t i = 1; i < r->wev_count; i++) {
        const struct chk_wevent *a = &h->events[r->wev[i - 1]], *b = &h->events[r->wev[i]];
        FL_ASSERT(a->mod_rev < b->mod_rev ||
                  (a->mod_rev == b->mod_rev && h->key_rank[a->key] <= h->key_rank[b->key]));
    }
}

void chk__rv_wev_at(const struct rv *r, int64_t rev, uint32_t *lo, uint32_t *hi)
{
    const struct chk_history *h = r->h;
    uint32_t a = 0, b = r->wev_count;
    while (a < b) {
        uint32_t mid = (a + b) / 2;
        if (h->events[r->wev[mid]].mod_rev < rev)
            a = mid + 1;
        else
            b = mid;
    }
    *lo = a;
    FL_ASSERT(a == 0 || h->events[r->wev[a - 1]].mod_rev < rev);
    while (a < r->wev_count && h->events[r->wev[a]].mod_rev == rev)
        a++;
    *hi = a;
    FL_ASSERT(a == r->wev_count || h->events[r->wev[a]].mod_rev > rev);
}

/* Does branch b (0 then, 1 else) of op write what watch event e shows? */
static bool branch_makes_event(const struct chk_history *h, const struct chk_op *op, int b,
                               const struct chk_wevent *e)
{
    FL_ASSERT((b == 0 || b == 1) && e->kind != CHK_EV_PROGRESS);
    uint32_t first = op->sub_first + (b ? op->then_count : 0);
    uint32_t n = b ? op->else_count : op->then_count;
    for (uint32_t j = 0; j < n; j++) {
        const struct chk_sub *s = &h->subs[first + j];
        if (e->kind == CHK_EV_DELETE) {
            if (s->kind == CHK_SUB_DELETE && chk_key_in_range(h, e->key, s->key, s->range_end))
                return true;
        } else if ((s->kind == CHK_SUB_PUT && s->key == e->key && s->value == e->value) ||
                   (s->kind == CHK_SUB_APPEND && s->key == e->key)) {
            return true;
        }
    }
    return false;
}

/* Could branch b of op have made revision rev, as its watch events show it? Every
 * event is one of the branch's writes, and (etcd delivers a revision whole) every
 * single key the branch puts inside the range of a watch that delivered rev is among
 * that watch's events of rev. */
static bool branch_covers_events(const struct rv *r, const struct chk_op *op, int b, uint32_t lo,
                                 uint32_t hi)
{
    const struct chk_history *h = r->h;
    FL_ASSERT(lo <= hi && hi <= r->wev_count);
    for (uint32_t x = lo; x < hi; x++) {
        if (!branch_makes_event(h, op, b, &h->events[r->wev[x]]))
            return false;
    }
    uint32_t first = op->sub_first + (b ? op->then_count : 0);
    uint32_t n = b ? op->else_count : op->then_count;
    for (uint32_t x = lo; x < hi; x++) {
        const struct chk_wevent *ev = &h->events[r->wev[x]];
        const struct chk_watch *w = NULL;
        for (uint32_t wi = 0; wi < h->watch_count && !w; wi++)
            w = h->watches[wi].watch_id == ev->watch_id ? &h->watches[wi] : NULL;
        for (uint32_t j = 0; w && j < n; j++) {
            const struct chk_sub *s = &h->subs[first + j];
            if (s->kind != CHK_SUB_PUT || s->range_end != CHK_RANGE_ONE ||
                (w->flags & CHK_WF_NOPUT) || !chk_key_in_range(h, s->key, w->key, w->range_end))
                continue;
            bool seen = false;
            for (uint32_t y = lo; y < hi && !seen; y++) {
                const struct chk_wevent *o = &h->events[r->wev[y]];
                seen = o->watch_id == w->watch_id && o->key == s->key;
            }
            if (!seen)
                return false;
        }
    }
    return true;
}

/* Could op have made every watch event of revision rev? A revision whose events
 * delete keys the op does not delete (a lease expiry) is not its, nor one whose
 * watches miss a key the op puts. With compares either branch may have run, but one
 * branch made the whole revision: a txn that deletes the key an event deletes in the
 * branch that also puts a watched key the revision's events lack did not make it. */
static bool op_covers_events(const struct rv *r, const struct chk_op *op, int64_t rev)
{
    uint32_t lo, hi;
    chk__rv_wev_at(r, rev, &lo, &hi);
    if (branch_covers_events(r, op, 0, lo, hi))
        return true;
    return op->cmp_count && branch_covers_events(r, op, 1, lo, hi);
}

uint32_t chk__rv_apply_watch_gap(struct rv *r, struct rv_replay *p, int64_t g)
{
    const struct chk_history *h = r->h;
    /* the model state stands at the gap: the replay's frontier */
    FL_ASSERT(g >= 2 && g <= r->max_rev && p->st->rev == g && r->claim[g] < 0);
    uint32_t lo, hi;
    chk__rv_wev_at(r, g, &lo, &hi);
    for (uint32_t x = lo; x < hi; x++) {
        /* Several events of one key at one revision (watches that disagree): the first
         * recorded one is the content, as in the search (chk_outside_changes). The
         * events of a revision are sorted by key, so a key's events are adjacent. */
        uint32_t first = r->wev[x];
        while (x + 1 < hi && h->events[r->wev[x + 1]].key == h->events[first].key) {
            x++;
            first = FL_MIN(first, r->wev[x]);
        }
        const struct chk_wevent *e = &h->events[first];
        FL_ASSERT(e->mod_rev == g && (uint32_t)e->key < h->keys.count);
        struct chk_kent *ent = &p->st->ent[e->key];
        if (e->kind == CHK_EV_DELETE) {
            memset(ent, 0, sizeof(*ent));
            ent->value = CHK_NIL;
            continue;
        }
        bool was = ent->value != CHK_NIL;
        /* A put event's version and create revision of 0 say nothing (no put has
         * them): computed, as in the search (outside_jump). Fuzz: a version 0 was taken
         * as the key's version and failed a read that the search passed. */
        bool ver = e->version != CHK_NO_REV && e->version != 0;
        bool cre = e->create_rev != CHK_NO_REV && e->create_rev != 0;
        ent->version = ver ? e->version : was ? ent->version + 1 : 1;
        ent->create_rev = cre ? e->create_rev : was ? ent->create_rev : g;
        ent->mod_rev = g;
        ent->value = e->value;
    }
    return hi - lo;
}

/* The first candidate not ordered before probe (cands are sorted by chk__rv_cand_cmp). */
static size_t cand_lower_bound(const struct rv *r, const struct cand_ent *probe)
{
    size_t lo;
    FL_LOWER_BOUND(lo, r->cand_count, mid, chk__rv_cand_cmp(&r->cands[mid], probe) < 0);
    FL_ASSERT(lo == 0 || chk__rv_cand_cmp(&r->cands[lo - 1], probe) < 0);
    return lo;
}

/* A key-value observed at mod revision rev: place an unknown op that wrote it. */
static void rv_reveal(struct rv *r, int32_t key, int32_t value, int64_t rev)
{
    if (rev < 2 || rev > r->max_rev || r->claim[rev] >= 0 || !r->cand_count)
        return;
    struct cand_ent probe = {key, value, INT64_MIN, 0};
    size_t lo = cand_lower_bound(r, &probe);
    uint32_t pick = UINT32_MAX, twin = UINT32_MAX;
    bool ambiguous_here = false;
    for (size_t i = lo; i < r->cand_count; i++) {
        const struct cand_ent *c = &r->cands[i];
        if (c->key != key || c->value != value)
            break;
        /* by call within one (key, value): the first fitting is the earliest called */
        FL_ASSERT(i == lo || r->cands[i - 1].call_ns <= c->call_ns);
        if (r->role[c->op] != ROLE_CAND || c->call_ns > r->retmin[rev] ||
            (r->wev_count && !op_covers_events(r, &r->h->ops[c->op], rev)))
            continue;
        if (pick == UINT32_MAX) {
            pick = c->op; /* the earliest called: it constrains real time least */
            continue;
        }
        if (!ambiguous_here && plain_twins(r->h, &r->h->ops[pick], &r->h->ops[c->op])) {
            /* interchangeable: the latest called one, leaving the earlier ones for
             * revisions nobody claims before this one */
            twin = c->op;
            continue;
        }
        ambiguous_here = true;
        chk__rv_guess(r, rev); /* another op could have written it too: a guess */
    }
    if (pick == UINT32_MAX)
        return;
    if (!ambiguous_here && twin != UINT32_MAX)
        pick = twin;
    FL_ASSERT(r->role[pick] == ROLE_CAND);
    r->role[pick] = ROLE_PLACED;
    r->claim[rev] = (int32_t)pick;
    r->pos[pick] = 2 * rev; /* where it took effect */
    r->out->revealed++;
}

/* A key-value created at rev (create_revision): an unknown op that put the key made
 * that revision, whatever value it wrote (a later write may have replaced it). With
 * several such ops the revision is left to the gap filling, which weighs what later
 * reads saw and may retry (the earliest called, placed here, was a guess no retry
 * revisited: the 1M-op bench's generator, seed 11 of 20k ops). */
static void rv_reveal_create(struct rv *r, int32_t key, int64_t rev)
{
    if (rev < 2 || rev > r->max_rev || r->claim[rev] >= 0 || !r->cand_count)
        return;
    struct cand_ent probe = {key, INT32_MIN, INT64_MIN, 0};
    size_t lo = cand_lower_bound(r, &probe);
    int64_t best_call = INT64_MAX;
    uint32_t best = UINT32_MAX, n = 0;
    for (size_t i = lo; i < r->cand_count && r->cands[i].key == key; i++) {
        const struct cand_ent *c = &r->cands[i];
        if (c->value == CHK_NIL || r->role[c->op] != ROLE_CAND || c->call_ns > r->retmin[rev] ||
            (r->wev_count && !op_covers_events(r, &r->h->ops[c->op], rev)))
            continue;
        n++;
        if (c->call_ns >= best_call)
            continue;
        best_call = c->call_ns;
        best = c->op;
    }
    if (best == UINT32_MAX || n > 1)
        return;
    FL_ASSERT(n == 1 && r->role[best] == ROLE_CAND);
    r->role[best] = ROLE_PLACED;
    r->claim[rev] = (int32_t)best;
    r->pos[best] = 2 * rev;
    r->out->revealed++;
}

void chk__rv_reveal_all(struct rv *r)
{
    struct chk_history *h = r->h;
    for (uint32_t i = 0; i < h->op_count; i++) {
        const struct chk_op *op = &h->ops[i];
        if (op->status != CHK_ST_OK)
            continue;
        for (uint32_t j = 0; j < (uint32_t)op->then_count + op->else_count; j++) {
            const struct chk_sub *s = &h->subs[op->sub_first + j];
            for (uint32_t k = 0; k < s->kv_count; k++) {
                const struct chk_kv *kv = &h->kvs[s->kv_first + k];
                if (kv->mod_rev != CHK_NO_REV)
                    rv_reveal(r, kv->key, kv->value, kv->mod_rev);
            }
        }
    }
    for (uint32_t i = 0; i < h->event_count && !r->no_watch; i++) {
        const struct chk_wevent *e = &h->events[i];
        uint32_t before = r->out->revealed;
        if (e->kind == CHK_EV_PUT)
            rv_reveal(r, e->key, e->value, e->mod_rev);
        else if (e->kind == CHK_EV_DELETE)
            rv_reveal(r, e->key, CHK_NIL, e->mod_rev);
        r->watch_reveals += r->out->revealed - before;
    }
    /* then what creation revisions tell (exact reveals first: they know the value) */
    for (uint32_t i = 0; i < h->kv_count; i++) {
        const struct chk_kv *kv = &h->kvs[i];
        if (kv->create_rev != CHK_NO_REV && kv->create_rev != kv->mod_rev)
            rv_reveal_create(r, kv->key, kv->create_rev);
    }
    for (uint32_t i = 0; i < h->event_count && !r->no_watch; i++) {
        const struct chk_wevent *e = &h->events[i];
        uint32_t before = r->out->revealed;
        if (e->kind == CHK_EV_PUT && e->create_rev != CHK_NO_REV && e->create_rev != e->mod_rev)
            rv_reveal_create(r, e->key, e->create_rev);
        r->watch_reveals += r->out->revealed - before;
    }
}

/* Does only the "then" branch write (so an op that wrote took it)? */
static bool writes_only_then(const struct chk_history *h, const struct chk_op *op)
{
    for (uint32_t j = 0; j < op->else_count; j++) {
        if (h->subs[op->sub_first + op->then_count + j].kind != CHK_SUB_RANGE)
            return false;
    }
    return true;
}

static int put_cmp(const void *a, const void *b)
{
    const struct rv_put *x = a, *y = b;
    FL_CMP_STEP(x->key, y->key);
    FL_CMP_STEP(x->rev, y->rev);
    return 0;
}

/* The int64_t field at byte offset off of record i of the array at base. */
static inline int64_t rec_i64(const void *base, size_t size, size_t off, size_t i)
{
    int64_t v;
    memcpy(&v, (const char *)base + i * size + off, sizeof(v));
    return v;
}

/* In records sorted by (key, an int64_t field at byte offset off) and indexed by key
 * (idx: key_index's), the first of key k whose field is at least lo, or the first of a
 * later key: a binary search within k's slice. */
static inline uint32_t slice_lower(const struct rv *r, const uint32_t *idx, int32_t k,
                                   const void *base, size_t size, size_t off, int64_t lo)
{
    FL_ASSERT(k >= 0 && (uint32_t)k < r->h->keys.count && idx[k] <= idx[k + 1]);
    uint32_t first = idx[k];
    size_t i;
    FL_LOWER_BOUND(i, idx[k + 1] - first, mid, rec_i64(base, size, off, first + mid) < lo);
    return first + (uint32_t)i;
}

/* The first known write of key at or after revision lo (r->puts is in (key,
 * revision) order), or the first of a later key. */
static uint32_t puts_lower(const struct rv *r, int32_t key, int64_t lo)
{
    uint32_t a = slice_lower(r, r->put_key, key, r->puts, sizeof(*r->puts),
                             offsetof(struct rv_put, rev), lo);
    FL_ASSERT(a == r->put_count || r->puts[a].key > key || r->puts[a].rev >= lo);
    return a;
}

/* Known writes of key in [lo, hi] that are deletes (del) or puts (!del): the
 * acknowledged and revealed ones, then the few gap placements. */
static uint32_t writes_between(const struct rv *r, int32_t key, int64_t lo, int64_t hi, bool del)
{
    uint32_t n = 0;
    for (uint32_t a = puts_lower(r, key, lo);
         a < r->put_count && r->puts[a].key == key && r->puts[a].rev <= hi; a++)
        n += r->puts[a].del == del;
    for (uint32_t i = 0; i < r->xput_count; i++)
        n += r->xputs[i].key == key && r->xputs[i].del == del && r->xputs[i].rev >= lo &&
             r->xputs[i].rev <= hi;
    return n;
}

/* Known puts of key in [lo, hi]. */
static uint32_t puts_between(const struct rv *r, int32_t key, int64_t lo, int64_t hi)
{
    return writes_between(r, key, lo, hi, false);
}

/* Is there a known delete of key in [lo, hi]? */
static bool del_between(const struct rv *r, int32_t key, int64_t lo, int64_t hi)
{
    return writes_between(r, key, lo, hi, true) > 0;
}

static int obs_cmp(const void *a, const void *b)
{
    const struct rv_obs *x = a, *y = b;
    FL_CMP_STEP(x->key, y->key);
    FL_CMP_STEP(x->at, y->at);
    FL_CMP_STEP(x->mod, y->mod);
    FL_CMP_STEP(x->create, y->create);
    return 0;
}

static void obs_push(struct rv *r, struct rv_obs o)
{
    FL_ASSERT(o.key >= 0 && (uint32_t)o.key < r->h->keys.count);
    FL_GROW(r->obs, r->obs_cap, r->obs_count + 1, 256);
    r->obs[r->obs_count++] = o;
}

/* gapcount[x]: revisions in [2, x] no write claims yet (a step of 0 or 1 per revision). */
static void gapcount_build(struct rv *r)
{
    r->gapcount = fl_malloc((size_t)(r->max_rev + 2) * sizeof(int64_t));
    r->gapcount[0] = 0;
    for (int64_t x = 1; x <= r->max_rev + 1; x++) {
        bool gap = x >= 2 && x <= r->max_rev && r->claim[x] < 0;
        r->gapcount[x] = r->gapcount[x - 1] + gap;
    }
    FL_ASSERT(r->gapcount[r->max_rev + 1] <= r->max_rev);
}

/* What one range with recorded kvs saw at revision at: each kv returned, and (a range
 * without a limit) every key of the range it did not return was absent; a single-key
 * range that returned nothing saw its key absent. */
static void obs_from_range(struct rv *r, const struct chk_sub *s, int64_t at)
{
    const struct chk_history *h = r->h;
    FL_ASSERT(s->kind == CHK_SUB_RANGE && (s->flags & CHK_SUBF_KVS_SET));
    if (s->range_end != CHK_RANGE_ONE && s->limit == 0) {
        uint32_t rk = h->key_rank[s->key];
        uint32_t re = s->range_end == CHK_RANGE_ALL ? h->keys.count : h->key_rank[s->range_end];
        uint32_t kv = 0;
        for (uint32_t x = rk; x < re; x++) {
            int32_t key = (int32_t)h->key_order[x];
            if (kv < s->kv_count && h->kvs[s->kv_first + kv].key == key) {
                kv++;
                continue;
            }
            obs_push(r, (struct rv_obs){key, false, false, at, 0, 0, 0, CHK_NIL});
        }
    }
    uint32_t n = s->kv_count ? s->kv_count : (s->range_end == CHK_RANGE_ONE);
    for (uint32_t k = 0; k < n; k++) {
        if (!s->kv_count) {
            obs_push(r, (struct rv_obs){s->key, false, false, at, 0, 0, 0, CHK_NIL});
            continue;
        }
        const struct chk_kv *kv = &h->kvs[s->kv_first + k];
        obs_push(r, (struct rv_obs){kv->key, true, false, at, kv->mod_rev, kv->create_rev,
                                    kv->version, kv->value});
    }
}

/* What the reads' ranges saw, at the revision each is served at. */
static void obs_from_reads(struct rv *r)
{
    const struct chk_history *h = r->h;
    for (uint32_t i = 0; i < h->op_count; i++) {
        const struct chk_op *op = &h->ops[i];
        if (r->role[i] != ROLE_READ || op->kind != CHK_OP_TXN)
            continue;
        for (uint32_t j = 0; j < (uint32_t)op->then_count + op->else_count; j++) {
            const struct chk_sub *s = &h->subs[op->sub_first + j];
            if (s->kind == CHK_SUB_RANGE && (s->flags & CHK_SUBF_KVS_SET))
                obs_from_range(r, s, s->req_rev > 0 ? s->req_rev : op->rev);
        }
    }
}

/* What sub-operation s of op i (a read or a write) saw of its key before it; false
 * when it looked at nothing. */
static bool obs_look_sub(const struct rv *r, uint32_t i, const struct chk_sub *s, int64_t at,
                         struct rv_obs *o)
{
    const struct chk_op *op = &r->h->ops[i];
    bool single = s->kind == CHK_SUB_DELETE && op->cmp_count == 0 && s->range_end == CHK_RANGE_ONE;
    bool counted = single && (s->flags & CHK_SUBF_COUNT_SET);
    /* A delete judged as a read (its revision is another's) wrote nothing: its key was
     * absent there, whether or not its count was recorded (fuzz: else an unknown put
     * of that key filled a gap before it, a proof only in appearance, and the delete
     * then had to have written). */
    bool nothing = single && !counted && r->role[i] == ROLE_READ;
    if (counted || nothing) {
        /* a single-key delete's count says whether the key was there */
        bool there = counted && s->count > 0;
        *o = (struct rv_obs){s->key,     there,      false,      at,
                             CHK_NO_REV, CHK_NO_REV, CHK_NO_REV, there ? CHK_NOT_GIVEN : CHK_NIL};
        return true;
    }
    bool looks = (s->flags & CHK_SUBF_PREV_KV) ||
                 (s->kind == CHK_SUB_DELETE && (s->flags & CHK_SUBF_COUNT_SET));
    if (s->kind == CHK_SUB_RANGE || r->role[i] != ROLE_WRITE || s->range_end != CHK_RANGE_ONE ||
        !looks)
        return false;
    *o = (struct rv_obs){s->key, true, true, at, CHK_NO_REV, CHK_NO_REV, CHK_NO_REV, CHK_NOT_GIVEN};
    return true;
}

/* Compares, prev kvs and delete counts look at keys too, in the state before the op
 * (a write at revision R sees R-1): observations without content, except a
 * succeeded value-equality compare, which saw that value. */
static void obs_from_looks(struct rv *r)
{
    const struct chk_history *h = r->h;
    for (uint32_t i = 0; i < h->op_count; i++) {
        const struct chk_op *op = &h->ops[i];
        if ((r->role[i] != ROLE_READ && r->role[i] != ROLE_WRITE) || op->kind != CHK_OP_TXN)
            continue;
        int64_t at = r->role[i] == ROLE_WRITE ? op->rev - 1 : op->rev;
        bool succ = (op->flags & CHK_OPF_SUCCEEDED_SET) && (op->flags & CHK_OPF_SUCCEEDED);
        for (uint32_t j = 0; j < op->cmp_count; j++) {
            const struct chk_cmp *c = &h->cmps[op->cmp_first + j];
            int32_t value = succ && c->target == CHK_CMP_VALUE && c->result == CHK_CMP_EQ
                                ? (int32_t)c->operand
                                : CHK_NOT_GIVEN;
            obs_push(r, (struct rv_obs){c->key, true, value == CHK_NOT_GIVEN, at, CHK_NO_REV,
                                        CHK_NO_REV, CHK_NO_REV, value});
        }
        for (uint32_t j = 0; j < (uint32_t)op->then_count + op->else_count; j++) {
            struct rv_obs o;
            if (obs_look_sub(r, i, &h->subs[op->sub_first + j], at, &o))
                obs_push(r, o);
        }
    }
}

/* Watch events show the key just before their revision: a delete or an update found
 * it there (with its prev value when asked for), a creation found it absent. They
 * only guide placements; a verdict that rests on them is judged again without
 * watches. */
static void obs_from_watch(struct rv *r)
{
    const struct chk_history *h = r->h;
    FL_ASSERT(!r->no_watch);
    for (uint32_t i = 0; i < h->event_count; i++) {
        const struct chk_wevent *e = &h->events[i];
        if (e->kind == CHK_EV_PROGRESS || e->key < 0 || e->mod_rev < 2 || e->mod_rev > r->max_rev)
            continue;
        struct rv_obs o = {e->key,     true,       false,      e->mod_rev - 1,
                           CHK_NO_REV, CHK_NO_REV, CHK_NO_REV, CHK_NOT_GIVEN};
        if (e->kind == CHK_EV_PUT) {
            if (e->create_rev == CHK_NO_REV)
                continue;
            if (e->create_rev == e->mod_rev) {
                o.present = false;
                o.value = CHK_NIL;
            } else if (e->version != CHK_NO_REV) {
                o.create = e->create_rev;
                o.version = e->version - 1;
            }
        }
        if (o.present && e->prev_value != CHK_NOT_GIVEN && e->prev_value != CHK_NIL)
            o.value = e->prev_value;
        obs_push(r, o);
        r->watch_obs = true;
    }
}

/* The value a write sub-operation leaves (an append's is not known here). */
static int32_t put_value(const struct chk_sub *s)
{
    return s->kind == CHK_SUB_PUT ? s->value : s->kind == CHK_SUB_DELETE ? CHK_NIL : CHK_NOT_GIVEN;
}

/* The known writes by (key, revision): acknowledged writers at their revision, and
 * placed unknown ops whose "then" branch is the only one that writes. */
static void puts_build(struct rv *r)
{
    const struct chk_history *h = r->h;
    for (uint32_t i = 0; i < h->op_count; i++) {
        const struct chk_op *op = &h->ops[i];
        bool placed = r->role[i] == ROLE_PLACED && op->kind == CHK_OP_TXN &&
                      (op->cmp_count == 0 || writes_only_then(h, op));
        if ((r->role[i] != ROLE_WRITE && !placed) || op->kind != CHK_OP_TXN)
            continue;
        bool succ = op->cmp_count == 0 || placed || (op->flags & CHK_OPF_SUCCEEDED);
        if (op->cmp_count && !placed && !(op->flags & CHK_OPF_SUCCEEDED_SET))
            continue;
        int64_t at = placed ? r->pos[i] / 2 : op->rev;
        FL_ASSERT(at >= 1 && at <= r->max_rev);
        uint32_t first = op->sub_first + (succ ? 0 : op->then_count);
        uint32_t n = succ ? op->then_count : op->else_count;
        for (uint32_t j = 0; j < n; j++) {
            const struct chk_sub *s = &h->subs[first + j];
            if (s->kind == CHK_SUB_RANGE ||
                (s->kind == CHK_SUB_DELETE && s->range_end != CHK_RANGE_ONE))
                continue;
            FL_GROW(r->puts, r->put_cap, r->put_count + 1, 256);
            r->puts[r->put_count++] =
                (struct rv_put){s->key, s->kind == CHK_SUB_DELETE, at, put_value(s)};
        }
    }
    if (r->put_count)
        qsort(r->puts, r->put_count, sizeof(*r->puts), put_cmp);
    for (uint32_t i = 1; i < r->put_count; i++)
        FL_ASSERT(put_cmp(&r->puts[i - 1], &r->puts[i]) <= 0);
}

/* One stable counting-sort pass: dst lists the indexes src lists (all of r->obs when
 * src is NULL) in the order of field (0: at, 1: key), values in [0, n). */
static void obs_count_pass(const struct rv_obs *obs, const uint32_t *src, uint32_t *dst,
                           uint32_t count, uint32_t *cnt, size_t n, int field)
{
    memset(cnt, 0, (n + 1) * sizeof(uint32_t));
    for (uint32_t i = 0; i < count; i++) {
        const struct rv_obs *o = &obs[src ? src[i] : i];
        cnt[(field ? (size_t)o->key : (size_t)o->at) + 1]++;
    }
    for (size_t x = 1; x <= n; x++)
        cnt[x] += cnt[x - 1];
    for (uint32_t i = 0; i < count; i++) {
        uint32_t j = src ? src[i] : i;
        dst[cnt[field ? (size_t)obs[j].key : (size_t)obs[j].at]++] = j;
    }
    FL_ASSERT(cnt[n - 1] == count);
}

/* Sorts r->obs by obs_cmp: by revision, then stably by key (two counting passes, linear
 * where qsort's comparisons and moves were a fifth of the 1M-op check), then the few
 * ties of one (key, revision) by insertion. The passes order 4-byte indexes, and the
 * records move once, in place: a copy of the records (109 MB at the 1M-op bench's
 * lin_unknown_1m_reads, on top of the records) was that group's peak. */
static void obs_sort(struct rv *r)
{
    uint32_t n = r->obs_count;
    int64_t max_at = 0;
    for (uint32_t i = 0; i < n; i++) {
        FL_ASSERT(r->obs[i].at >= 0);
        max_at = FL_MAX(max_at, r->obs[i].at);
    }
    size_t nb = FL_MAX((size_t)max_at + 1, (size_t)r->h->keys.count);
    uint32_t *cnt = fl_malloc((nb + 1) * sizeof(uint32_t));
    uint32_t *by_at = fl_malloc(n * sizeof(uint32_t));
    uint32_t *perm = fl_malloc(n * sizeof(uint32_t));
    obs_count_pass(r->obs, NULL, by_at, n, cnt, (size_t)max_at + 1, 0);
    obs_count_pass(r->obs, by_at, perm, n, cnt, r->h->keys.count, 1);
    free(by_at);
    free(cnt);
    struct rv_obs held;
    fl_permute_gather(r->obs, sizeof(*r->obs), perm, n, &held);
    free(perm);
    for (uint32_t i = 1; i < n; i++) {
        struct rv_obs v = r->obs[i];
        uint32_t j = i;
        for (; j > 0 && obs_cmp(&r->obs[j - 1], &v) > 0; j--)
            r->obs[j] = r->obs[j - 1]; /* only within one (key, at): already ordered by both */
        r->obs[j] = v;
    }
}

/* idx[k]: the first of the n sorted records (key at k_of(i)) whose key is at least k;
 * idx[keys] = n. */
static uint32_t *key_index(const struct rv *r, uint32_t n, const void *base, size_t size)
{
    uint32_t keys = r->h->keys.count;
    uint32_t *idx = fl_malloc(((size_t)keys + 1) * sizeof(uint32_t));
    uint32_t i = 0;
    for (uint32_t k = 0; k <= keys; k++) {
        /* both records start with their int32_t key */
        while (i < n && *(const int32_t *)((const char *)base + (size_t)i * size) < (int32_t)k)
            i++;
        FL_ASSERT(k == 0 || idx[k - 1] <= i);
        idx[k] = i;
    }
    FL_ASSERT(idx[keys] == n);
    return idx;
}

/* Builds, once per run and only when a gap needs judging, what later reads can
 * tell about a placement: the gap counts, the observations by (key, revision) and
 * the known writes by (key, revision), both sorted for binary search. */
static void obs_build(struct rv *r)
{
    FL_ASSERT(!r->obs_built && r->obs_count == 0 && r->put_count == 0);
    r->obs_built = true;
    gapcount_build(r);
    obs_from_reads(r);
    obs_from_looks(r);
    if (!r->no_watch)
        obs_from_watch(r);
    if (r->obs_count) {
        /* no more observations: give back what doubling reserved (up to half) */
        r->obs = fl_realloc(r->obs, r->obs_count * sizeof(*r->obs));
        r->obs_cap = r->obs_count;
        obs_sort(r);
    }
    for (uint32_t i = 1; i < r->obs_count; i++)
        FL_ASSERT(obs_cmp(&r->obs[i - 1], &r->obs[i]) <= 0);
    r->obs_key = key_index(r, r->obs_count, r->obs, sizeof(*r->obs));
    puts_build(r);
    r->put_key = key_index(r, r->put_count, r->puts, sizeof(*r->puts));
}

/* Could key k have been changed at revision g (to present or absent), given the first
 * read of k at or after g? */
static int64_t next_put(const struct rv *r, int32_t key, int64_t g);

/* Is there an unknown op other than self, still unplaced and called in time to write
 * before revision `by`, among the candidates of key k: those of value v, or with
 * any_put every put of k, whatever its value? */
static bool other_cand(const struct rv *r, int32_t k, bool any_put, int32_t v, uint32_t self,
                       int64_t by)
{
    by = FL_MIN(FL_MAX(by, 0), r->max_rev + 1);
    size_t first; /* the first candidate of (k, v), or of k with any_put */
    FL_LOWER_BOUND(first, r->cand_count, mid,
                   r->cands[mid].key < k ||
                       (!any_put && r->cands[mid].key == k && r->cands[mid].value < v));
    for (size_t a = first; a < r->cand_count && r->cands[a].key == k; a++) {
        const struct cand_ent *c = &r->cands[a];
        if (!any_put && c->value != v)
            break; /* past k's candidates of value v */
        if ((!any_put || c->value != CHK_NIL) && c->op != self && r->role[c->op] == ROLE_CAND &&
            c->call_ns <= r->retmin[by])
            return true;
    }
    return false;
}

/* Could an unknown op other than self, still unplaced and called in time to write
 * before revision `by`, give key k value v (CHK_NIL: a delete)? */
static bool other_cand_writes(const struct rv *r, int32_t k, int32_t v, uint32_t self, int64_t by)
{
    if (r->cand_range && v == CHK_NIL)
        return true;
    return other_cand(r, k, false, v, self, by);
}

/* Could an unknown op other than self, still unplaced and called in time to write
 * before revision `by`, put key k (any value)? */
static bool other_cand_puts(const struct rv *r, int32_t k, uint32_t self, int64_t by)
{
    return other_cand(r, k, true, CHK_NIL, self, by);
}

/* The first observation of key k at or after revision g, or the first of a later key
 * (searched within k's slice of r->obs). */
static uint32_t obs_lower(const struct rv *r, int32_t k, int64_t g)
{
    uint32_t lo =
        slice_lower(r, r->obs_key, k, r->obs, sizeof(*r->obs), offsetof(struct rv_obs, at), g);
    FL_ASSERT(lo == r->obs_count || r->obs[lo].key > k || r->obs[lo].at >= g);
    return lo;
}

/* The first observation of key k at or after revision g that saw more than a touch,
 * or r->obs_count when there is none. */
static uint32_t obs_next_seen(const struct rv *r, int32_t k, int64_t g)
{
    uint32_t lo = obs_lower(r, k, g);
    while (lo < r->obs_count && r->obs[lo].key == k && r->obs[lo].touch)
        lo++;
    if (lo == r->obs_count || r->obs[lo].key != k)
        return r->obs_count;
    FL_ASSERT(r->obs[lo].at >= g && !r->obs[lo].touch);
    return lo;
}

/* The value the observation o saw, against ours (present/value at g; creates: our put
 * finds the key absent): 0 when only a gap that no unknown op can fill could have
 * changed it back in between; 2 when it saw exactly ours, or saw the key present
 * without its value where ours creates it (a demand, due by o->at); else 1. */
static int obs_value_check(struct rv *r, int32_t k, int64_t g, bool present, bool creates,
                           int32_t value, uint32_t self, const struct rv_obs *o, int64_t *deadline,
                           bool *weak)
{
    FL_ASSERT(!creates || present);
    /* no known write of k and no undecided revision between g and the observation:
     * it shows our effect */
    if (next_put(r, k, g) <= o->at || o->at > r->max_rev)
        return 1;
    FL_ASSERT(o->at >= g);
    if (o->value == CHK_NOT_GIVEN) {
        /* a delete that counted the key (chaos seed 102: no put of it was demanded,
         * and the earliest-called candidates filled every gap before it) */
        if (!(o->present && creates))
            return 1;
        *deadline = FL_MIN(*deadline, o->at);
        return 2;
    }
    bool mine = o->value == (present ? value : CHK_NIL);
    if (mine) {
        *deadline = FL_MIN(*deadline, o->at);
        return 2; /* a later read saw exactly this: prefer it */
    }
    /* someone must have changed it back in between: only a gap can, and only an
     * unknown op that writes k can fill one */
    if (r->gapcount[o->at] == r->gapcount[g] || !other_cand_writes(r, k, o->value, self, o->at))
        return 0;
    *weak = true; /* fits only if another unknown op undoes it */
    return 1;
}

/* A compare that saw the value tells nothing of creation: the observation that does,
 * a little further on while the key stays present (o itself when none). */
static const struct rv_obs *obs_with_create(const struct rv *r, int32_t k, uint32_t lo)
{
    const struct rv_obs *o = &r->obs[lo];
    uint32_t oi = lo;
    while (o->create == CHK_NO_REV && oi + 1 < r->obs_count && oi < lo + 16 &&
           r->obs[oi + 1].key == k && (r->obs[oi + 1].touch || r->obs[oi + 1].present)) {
        oi++;
        if (!r->obs[oi].touch)
            o = &r->obs[oi];
    }
    FL_ASSERT(o->key == k && o->present);
    return o;
}

/* Our delete at g against a later observation that saw the key present. */
static int obs_allows_delete(struct rv *r, int32_t k, int64_t g, uint32_t self, int64_t seen,
                             const struct rv_obs *o, int demanded, int64_t *deadline, bool *weak)
{
    FL_ASSERT(seen >= g && seen <= o->at);
    /* present again when first seen (at `seen`: o may be a later observation, past
     * known writes): a put of k must come in between */
    if (puts_between(r, k, g + 1, seen) == 0) {
        if (!other_cand_puts(r, k, self, seen))
            return 0;
        *weak = true;
    }
    if (o->create == CHK_NO_REV)
        return demanded;
    if (o->create < g)
        return 0;
    /* recreated later: a delete between g and the creation is needed */
    if (o->create > g && !del_between(r, k, g, o->create - 1)) {
        *deadline = FL_MIN(*deadline, o->create);
        return 2;
    }
    return demanded;
}

/* Could the last known write of k in (g, at] have left value v (false when there is
 * none)? Gap placements (xputs) all lie before g. */
static bool known_wrote(const struct rv *r, int32_t k, int64_t g, int64_t at, int32_t v)
{
    uint32_t a = puts_lower(r, k, at + 1);
    if (a == 0 || r->puts[a - 1].key != k || r->puts[a - 1].rev <= g)
        return false;
    FL_ASSERT(r->puts[a - 1].rev <= at);
    int32_t w = r->puts[a - 1].value;
    return w == v || w == CHK_NOT_GIVEN;
}

/* Our put at g against a later observation that saw the key present. */
static int obs_allows_put(struct rv *r, int32_t k, int64_t g, uint32_t self, int32_t value,
                          uint32_t lo, const struct rv_obs *o, int demanded, int64_t *deadline,
                          bool *weak)
{
    /* The first observation saw another value, and no known write comes between: a put
     * after ours wrote that value, and the version counts it too (the 1M-op bench's
     * generator, seed 11 of 20k ops: a put of a value nobody saw was taken as the one
     * put a version count missed, where the unknown cas writing the value seen was). */
    const struct rv_obs *first = &r->obs[lo];
    FL_ASSERT(first->key == k && first->present);
    int64_t later = first->value != CHK_NOT_GIVEN && first->value != value &&
                    !known_wrote(r, k, g, first->at, first->value);
    if (o->mod != CHK_NO_REV && o->mod < g)
        return 0;
    /* created again after g: our put must have been deleted in between */
    if (o->create != CHK_NO_REV && o->create > g && !del_between(r, k, g + 1, o->create - 1)) {
        if (!other_cand_writes(r, k, CHK_NIL, self, o->create - 1))
            return 0;
        *weak = true;
    }
    /* the version counts the puts since creation: one more must fit. An observation
     * without it (a compare saw the value) does not end the look: the next ones that
     * carry a version (a few) judge too, while the key was not deleted in between. */
    for (uint32_t x = lo + 1; x < r->obs_count && x < lo + 16 && r->obs[x].key == k &&
                              (o->create == CHK_NO_REV || o->version == CHK_NO_REV);
         x++) {
        const struct rv_obs *n = &r->obs[x];
        if (n->touch)
            continue;
        if (!n->present)
            break;
        o = n;
    }
    if (o->create != CHK_NO_REV && o->version != CHK_NO_REV && o->create <= g) {
        int64_t known = (int64_t)puts_between(r, k, o->create, o->at) + later;
        if (known + 1 > o->version)
            return 0;
        if (known < o->version) {
            /* due before the key's last change the observation shows */
            *deadline = FL_MIN(*deadline, o->mod != CHK_NO_REV ? FL_MIN(o->mod, o->at) : o->at);
            return 2; /* a put of k is missing in [create, at]: this one may be it */
        }
    }
    return demanded;
}

/* Our put at g against the creation revision the observation o shows (the key
 * present at o->at, created at o->create and not deleted since): 0 when ours cannot
 * be in that life (it creates the key after its creation, or finds it present at the
 * revision that created it); 2 when ours is the creation, due at g itself; -1 when the
 * creation says nothing of ours (later than g, or not shown). Chaos seed 2893: keys
 * created at 370 and 372 by one of several unknown puts each lost those revisions to
 * puts due later, and were then "created" at 371 and 374 against what reads saw. */
static int obs_create_check(const struct rv_obs *o, int64_t g, bool creates, int64_t *deadline)
{
    FL_ASSERT(o->present && o->at >= g);
    if (o->create == CHK_NO_REV || o->create <= 0 || o->create > g)
        return -1;
    if (creates != (o->create == g))
        return 0;
    if (!creates)
        return -1;
    *deadline = FL_MIN(*deadline, g);
    return 2;
}

/* Does the first later observation of key k allow it to become present/value at g?
 * 0: no; 1: yes; 2: yes, and it asks for it (*deadline: by when). *weak: only if
 * another unknown op undoes part of it. */
static int obs_allows(struct rv *r, int32_t k, int64_t g, bool present, bool creates, int32_t value,
                      uint32_t self, int64_t *deadline, bool *weak)
{
    FL_ASSERT(r->obs_built && g >= 2 && g <= r->max_rev);
    uint32_t lo = obs_next_seen(r, k, g);
    if (lo == r->obs_count)
        return 1;
    const struct rv_obs *o = &r->obs[lo];
    int demanded = obs_value_check(r, k, g, present, creates, value, self, o, deadline, weak);
    if (!demanded || !o->present)
        return demanded;
    o = obs_with_create(r, k, lo);
    if (!present)
        return obs_allows_delete(r, k, g, self, r->obs[lo].at, o, demanded, deadline, weak);
    int created = obs_create_check(o, g, creates, deadline);
    if (!created)
        return 0;
    int v = obs_allows_put(r, k, g, self, value, lo, o, demanded, deadline, weak);
    return v ? FL_MAX(v, created) : 0;
}

/* Is the candidate's effect (p->tmp against p->st) consistent with later reads? */
/* What a candidate would do at a gap: the entries of the keys it touches, after. */
#define EFF_KEYS_MAX    16
#define GAP_CHOICES_MAX 8
struct gap_eff {
    uint32_t n;
    bool wrote;
    int32_t key[EFF_KEYS_MAX];
    struct chk_kent after[EFF_KEYS_MAX];
};

/* The single keys an op touches; false when it touches a range or too many keys. */
static bool op_keys(const struct chk_history *h, const struct chk_op *op, struct gap_eff *e)
{
    e->n = 0;
    for (uint32_t j = 0; j < (uint32_t)op->cmp_count + op->then_count + op->else_count; j++) {
        int32_t k;
        if (j < op->cmp_count) {
            k = h->cmps[op->cmp_first + j].key;
        } else {
            const struct chk_sub *s = &h->subs[op->sub_first + j - op->cmp_count];
            if (s->range_end != CHK_RANGE_ONE)
                return false;
            k = s->key;
        }
        bool dup = false;
        for (uint32_t x = 0; x < e->n && !dup; x++)
            dup = e->key[x] == k;
        if (dup)
            continue;
        if (e->n == EFF_KEYS_MAX)
            return false;
        FL_ASSERT(k >= 0 && (uint32_t)k < h->keys.count);
        e->key[e->n++] = k;
    }
    return true;
}

/* Steps op on the current state without keeping anything: records its effect. The
 * state is restored from the saved entries (no copy of the whole state). */
static bool dry_run(struct rv_replay *p, const struct chk_history *h, const struct chk_op *op,
                    struct gap_eff *e)
{
    if (!op_keys(h, op, e))
        return false;
    struct chk_kent saved[EFF_KEYS_MAX];
    for (uint32_t x = 0; x < e->n; x++)
        saved[x] = p->st->ent[e->key[x]];
    int64_t rev = p->st->rev;
    struct chk_change_buf *keep = p->m.changes;
    p->m.changes = NULL;
    struct chk_step s = chk_model_step(&p->m, p->st, op);
    p->m.changes = keep;
    e->wrote = s.wrote;
    for (uint32_t x = 0; x < e->n; x++) {
        e->after[x] = p->st->ent[e->key[x]];
        p->st->ent[e->key[x]] = saved[x];
    }
    p->st->rev = rev;
    FL_ASSERT(e->n <= EFF_KEYS_MAX);
    return true;
}

static const struct chk_kent *eff_entry(const struct rv_replay *p, const struct gap_eff *e,
                                        int32_t k)
{
    for (uint32_t x = 0; x < e->n; x++) {
        if (e->key[x] == k)
            return &e->after[x];
    }
    return &p->st->ent[k];
}

/* 0: the candidate's effect contradicts later reads; 1: it fits only if another
 * unknown op later undoes part of it; 2: it fits; 3: it fits and a later read asks
 * for it (a version count, a deletion before a re-creation, the very value). */
static int gap_effect_ok(struct rv *r, struct rv_replay *p, const struct gap_eff *e, int64_t g,
                         uint32_t self, int64_t *deadline, bool *weakp)
{
    FL_ASSERT(e->wrote && e->n <= EFF_KEYS_MAX && p->st->rev == g - 1);
    int best = 1;
    bool weak = false;
    *deadline = INT64_MAX;
    *weakp = false;
    for (uint32_t x = 0; x < e->n; x++) {
        const struct chk_kent *a = &p->st->ent[e->key[x]], *b = &e->after[x];
        if (a->value == b->value && a->mod_rev == b->mod_rev)
            continue;
        bool present = b->value != CHK_NIL;
        int v = obs_allows(r, e->key[x], g, present, present && a->value == CHK_NIL, b->value, self,
                           deadline, &weak);
        if (!v)
            return 0;
        best = FL_MAX(best, v);
    }
    *weakp = weak;
    FL_ASSERT(best == 1 || best == 2);
    return best == 2 ? 3 : weak ? 1 : 2;
}

/* First known write of key after rev g (INT64_MAX when none). */
static int64_t next_put(const struct rv *r, int32_t key, int64_t g)
{
    FL_ASSERT(g < INT64_MAX);
    uint32_t a = puts_lower(r, key, g + 1);
    return a < r->put_count && r->puts[a].key == key ? r->puts[a].rev : INT64_MAX;
}

/* Is key k's state at g unobservable: overwritten by a known write before any read
 * looked at it? */
static bool unseen(const struct rv *r, int32_t k, int64_t g)
{
    int64_t over = next_put(r, k, g);
    uint32_t lo = obs_lower(r, k, g);
    return !(lo < r->obs_count && r->obs[lo].key == k && r->obs[lo].at < over);
}

static bool eff_fits_silence(const struct rv *r, const struct rv_replay *p, const struct gap_eff *e,
                             int64_t g, uint32_t lo, uint32_t hi);

/* Does a candidate's effect at g agree with the watch events of g: every event's key
 * changed as the event says, and no key changed inside the range of a watch whose
 * stream covered g without an event for it (eff_fits_silence; a watch that delivered
 * events of g covered it: etcd delivers a revision whole)? */
static bool eff_fits_events(const struct rv *r, const struct rv_replay *p, const struct gap_eff *e,
                            int64_t g)
{
    const struct chk_history *h = r->h;
    uint32_t lo, hi;
    chk__rv_wev_at(r, g, &lo, &hi);
    for (uint32_t x = lo; x < hi; x++) {
        const struct chk_wevent *ev = &h->events[r->wev[x]];
        uint32_t i = 0;
        while (i < e->n && e->key[i] != ev->key)
            i++;
        if (i == e->n)
            return false;
        const struct chk_kent *a = &p->st->ent[ev->key], *b = &e->after[i];
        if (a->value == b->value && a->mod_rev == b->mod_rev)
            return false; /* the op leaves the key as it was */
        if ((ev->kind == CHK_EV_DELETE) != (b->value == CHK_NIL))
            return false;
        if (ev->kind == CHK_EV_PUT && b->value != ev->value)
            return false;
    }
    return eff_fits_silence(r, p, e, g, lo, hi);
}

/* Does a candidate's effect at g leave alone every key inside a watch whose stream
 * covered g and delivered no event of that key at g? Such a watch saw g go by: its
 * events at g, or before and after it, or its start revision, frame it. Judged by
 * delivered events alone, a gap the watches passed in silence (a
 * write outside their ranges) could take an unknown put of a watched key, and the
 * watch checker then judged prev_kv against a value no member ever held (chaos seeds
 * 116 and 375 with a longer ending). */
static bool eff_fits_silence(const struct rv *r, const struct rv_replay *p, const struct gap_eff *e,
                             int64_t g, uint32_t lo, uint32_t hi)
{
    const struct chk_history *h = r->h;
    if (!r->wcov_lo)
        return true;
    for (uint32_t wi = 0; wi < h->watch_count; wi++) {
        const struct chk_watch *w = &h->watches[wi];
        if (g < r->wcov_lo[wi] || g > r->wcov_hi[wi])
            continue;
        for (uint32_t i = 0; i < e->n; i++) {
            int32_t k = e->key[i];
            const struct chk_kent *a = &p->st->ent[k], *b = &e->after[i];
            if (a->value == b->value && a->mod_rev == b->mod_rev)
                continue;
            bool del = b->value == CHK_NIL;
            if ((del && (w->flags & CHK_WF_NODELETE)) || (!del && (w->flags & CHK_WF_NOPUT)) ||
                !chk_key_in_range(h, k, w->key, w->range_end))
                continue;
            bool seen = false;
            for (uint32_t y = lo; y < hi && !seen; y++) {
                const struct chk_wevent *o = &h->events[r->wev[y]];
                seen = o->watch_id == w->watch_id && o->key == k;
            }
            if (!seen)
                return false;
        }
    }
    return true;
}

/* Do two candidates' effects at g differ only in values nobody could see? Then the
 * choice between them changes nothing observable. */
static bool same_effect(struct rv *r, struct rv_replay *p, int64_t g, const struct gap_eff *x,
                        const struct gap_eff *y)
{
    for (int side = 0; side < 2; side++) {
        const struct gap_eff *e = side ? y : x;
        for (uint32_t i = 0; i < e->n; i++) {
            int32_t k = e->key[i];
            const struct chk_kent *a = eff_entry(p, x, k), *b = eff_entry(p, y, k);
            if (!memcmp(a, b, sizeof(*a)))
                continue;
            if (a->value == CHK_NIL || b->value == CHK_NIL || a->version != b->version ||
                a->create_rev != b->create_rev || a->mod_rev != b->mod_rev || !unseen(r, k, g))
                return false;
        }
    }
    return true;
}

static void place_gap(struct rv *r, int32_t found, int64_t g)
{
    const struct chk_history *h = r->h;
    FL_ASSERT(r->role[found] == ROLE_CAND && r->claim[g] < 0);
    /* gaps fill in revision order: every earlier placement lies before g (known_wrote) */
    FL_ASSERT(r->xput_count == 0 || r->xputs[r->xput_count - 1].rev < g);
    r->role[found] = ROLE_PLACED;
    r->claim[g] = found;
    r->pos[found] = 2 * g;
    r->out->revealed++;
    const struct chk_op *op = &h->ops[found];
    bool then = op->cmp_count == 0 || writes_only_then(h, op);
    for (uint32_t j = 0; j < op->then_count && then; j++) {
        const struct chk_sub *s = &h->subs[op->sub_first + j];
        if (s->kind == CHK_SUB_RANGE || s->range_end != CHK_RANGE_ONE)
            continue;
        FL_GROW(r->xputs, r->xput_cap, r->xput_count + 1, 64);
        r->xputs[r->xput_count++] =
            (struct rv_put){s->key, s->kind == CHK_SUB_DELETE, g, put_value(s)};
    }
}

/* The viable candidates of one gap, best first by (score desc, deadline asc, clean
 * before weak, call asc): the preferred guess first. The deadline is the revision of the read that
 * asks for the effect: serving the demand that expires first (earliest deadline) is
 * how a greedy matching of gaps to demands stays optimal. */
struct gap_rank {
    int score;    /* gap_effect_ok's */
    bool weak;    /* fits only if another unknown op undoes part of it */
    int64_t dead; /* the earliest deadline of what asks for it */
};

struct gap_choices {
    uint32_t n;
    uint32_t op[GAP_CHOICES_MAX];
    struct gap_rank rank[GAP_CHOICES_MAX];
    bool same;          /* every viable candidate so far has the same visible effect */
    bool excluded;      /* some candidate was ruled out by later reads */
    struct gap_eff eff; /* the first viable candidate's effect */
};

/* Ranks by score, then earliest deadline, then a candidate that needs no other
 * unknown op to undo part of its effect before one that does: a txn demanded for one
 * key whose other key's write must be undone later takes a gap that a plain write
 * serving the same demand fits cleanly (the 1M-op bench's lin_unknown_1m_reads: a txn
 * putting k604 and k776 took the gap a cas of k604 alone could fill, and its put of
 * k776 then needed a delete that took the only gap left for a demanded put of k178). */
static bool choice_before(const struct gap_rank *a, const struct gap_rank *b)
{
    if (a->score != b->score)
        return a->score > b->score;
    if (a->dead != b->dead)
        return a->dead < b->dead;
    return !a->weak && b->weak;
}

/* Keeps candidate i if it ranks among the best GAP_CHOICES_MAX (candidates come in
 * call order, so among equals the earlier call stays first). */
static void choices_insert(struct gap_choices *ch, uint32_t i, struct gap_rank rk)
{
    FL_ASSERT(rk.score >= 1 && rk.score <= 3 && (rk.score != 1 || rk.weak));
    FL_TESTCASE(ch->n == GAP_CHOICES_MAX); /* more viable candidates than are kept */
    if (ch->n == GAP_CHOICES_MAX) {
        ch->same = false;
        if (!choice_before(&rk, &ch->rank[ch->n - 1]))
            return; /* no better than every kept one */
        ch->n--;    /* the worst kept one makes room */
    }
    uint32_t at = ch->n++;
    while (at > 0 && choice_before(&rk, &ch->rank[at - 1])) {
        ch->op[at] = ch->op[at - 1];
        ch->rank[at] = ch->rank[at - 1];
        at--;
    }
    ch->op[at] = i;
    ch->rank[at] = rk;
    for (uint32_t x = 1; x < ch->n; x++) /* the candidate order */
        FL_ASSERT(!choice_before(&ch->rank[x], &ch->rank[x - 1]));
}

/* Judges unknown op i as the writer of gap g: skipped when it writes nothing there or
 * contradicts the gap's watch events or later reads, else kept among the choices. */
static void gap_consider(struct rv *r, struct rv_replay *p, int64_t g, uint32_t i,
                         struct gap_choices *ch)
{
    const struct chk_op *op = &r->h->ops[i];
    FL_ASSERT(r->role[i] == ROLE_CAND && op->call_ns <= p->sufmin[g]);
    struct gap_eff e;
    if (!dry_run(p, r->h, op, &e)) {
        ch->same = false; /* a range write: effects not compared, a guess */
        return;
    }
    if (!e.wrote)
        return;
    if (r->wev_count && !eff_fits_events(r, p, &e, g)) {
        r->watch_reveals++; /* a watch settled it: re-judged without watches */
        return;
    }
    if (!r->obs_built)
        obs_build(r);
    struct gap_rank rk;
    rk.score = gap_effect_ok(r, p, &e, g, i, &rk.dead, &rk.weak);
    if (!rk.score) {
        ch->excluded = true;
        return;
    }
    if (ch->n == 0)
        ch->eff = e;
    else
        ch->same = ch->same && same_effect(r, p, g, &ch->eff, &e);
    choices_insert(ch, i, rk);
}

/* Which choice to place: the first, or at a decision point (several choices with
 * different effects) the one this attempt's retries ask for. A placement that is not
 * a proof marks the replay as a guess. */
static uint32_t gap_pick(struct rv *r, struct rv_replay *p, const struct gap_choices *ch, int64_t g)
{
    FL_ASSERT(ch->n > 0 && ch->n <= GAP_CHOICES_MAX);
    uint32_t pick = 0;
    if (!ch->same && ch->n > 1 && r->ndecisions < DECISIONS_MAX) {
        /* a decision point the retries may revisit */
        uint32_t d = r->ndecisions++;
        FL_ASSERT(d == 0 || r->dec_rev[d - 1] < g); /* decisions in revision order */
        r->dec_rev[d] = g;
        r->dec_count[d] = ch->n;
        pick = d < r->nchoice ? FL_MIN(r->choice[d], ch->n - 1) : 0;
        FL_TESTCASE(pick > 0); /* a retry took another choice */
    }
    if (!ch->same || ch->excluded || ch->rank[pick].score != 2) {
        chk__rv_guess(r, g);
        if (!ch->same)
            p->guessed_rev = g; /* watches are not judged on this revision */
    }
    FL_ASSERT(pick < ch->n);
    return pick;
}

/* Fills gap revision g with the unknown op that could have written there. Only one
 * candidate, or several with the same effect, is a proof; anything else (a choice
 * between different effects, or a candidate ruled out by later reads) is a guess that
 * can confirm linearizability but never refute it. */
void chk__rv_fill_gap(struct rv *r, struct rv_replay *p, int64_t g)
{
    FL_ASSERT(g >= 2 && g <= r->max_rev && r->claim[g] < 0);
    FL_ASSERT(p->st->rev == g - 1); /* the replay's frontier: the state just before g */
    struct gap_choices ch;
    ch.n = 0;
    ch.same = true;
    ch.excluded = false;
    for (uint32_t c = 0; c < r->cand_op_count; c++) {
        uint32_t i = r->cand_ops[c];
        FL_ASSERT(c == 0 || r->h->ops[r->cand_ops[c - 1]].call_ns <= r->h->ops[i].call_ns);
        if (r->h->ops[i].call_ns > p->sufmin[g])
            break; /* sorted by call: every later one was called too late */
        if (r->role[i] == ROLE_CAND)
            gap_consider(r, p, g, i, &ch);
    }
    if (ch.n == 0)
        return;
    uint32_t pick = gap_pick(r, p, &ch, g);
    place_gap(r, (int32_t)ch.op[pick], g);
    FL_ASSERT(r->claim[g] == (int32_t)ch.op[pick] && r->role[ch.op[pick]] == ROLE_PLACED);
}
