/*
 * chk_rev_replay.c: the revision engine's replay (check 2 of chk_revision.c): the
 * writes in revision order through the etcd model, every read judged against the state
 * at the revision it was served at, the revisions no op claims filled (chk_gap.c) or
 * left content-unknown, and the change log the watch checker judges events against.
 *
 * Invariants, asserted where they are made:
 *   - the state advances one revision at a time: before revision R is applied (a
 *     claimed write, a filled gap or a content-unknown revision) the state is at R-1,
 *     and a read is judged on a state at exactly its revision;
 *   - the write applied at R is the op that claims R (a write or a placed candidate);
 *   - reads are bucketed by the revision they are judged at, and the per-revision
 *     minimum return (sufmin) is non-decreasing;
 *   - the change log only grows in revision order, and is handed out sorted by
 *     (revision, key rank), one change per (revision, key).
 */
#include "checkers/chk_rev_int.h"
#include "harness/common/marker.h"

/* The state of the keys an op touches, as JSON (for explanations). */
static void state_key_json(const struct chk_history *h, const struct chk_kstate *st, int32_t k,
                           json_t *keys)
{
    size_t kn;
    const uint8_t *kp = chk_key_bytes(h, k, &kn);
    char kbuf[128];
    snprintf(kbuf, sizeof(kbuf), "%.*s", (int)FL_MIN(kn, 120), (const char *)kp);
    const struct chk_kent *e = &st->ent[k];
    json_t *kv = json_object();
    json_object_set_new(kv, "value", chk_json_value(h, e->value));
    json_object_set_new(kv, "version", json_integer(e->version));
    json_object_set_new(kv, "create_revision", json_integer(e->create_rev));
    json_object_set_new(kv, "mod_revision", json_integer(e->mod_rev));
    json_object_set_new(keys, kbuf, kv);
}

/* The state of the keys an op touches (ranges: up to 32 keys), as JSON. */
static json_t *state_json(const struct chk_history *h, const struct chk_kstate *st,
                          const struct chk_op *op)
{
    json_t *o = json_object();
    json_object_set_new(o, "revision", json_integer(st->rev));
    json_t *keys = json_object();
    for (uint32_t j = 0; j < op->cmp_count; j++)
        state_key_json(h, st, h->cmps[op->cmp_first + j].key, keys);
    for (uint32_t j = 0; j < (uint32_t)op->then_count + op->else_count; j++) {
        const struct chk_sub *s = &h->subs[op->sub_first + j];
        uint32_t rk = h->key_rank[s->key];
        uint32_t re = s->range_end == CHK_RANGE_ONE   ? rk + 1
                      : s->range_end == CHK_RANGE_ALL ? h->keys.count
                                                      : h->key_rank[s->range_end];
        for (uint32_t x = rk, n = 0; x < re && n < 32; x++) {
            int32_t k = (int32_t)h->key_order[x];
            if (st->ent[k].value != CHK_NIL || x == rk) {
                state_key_json(h, st, k, keys);
                n++;
            }
        }
    }
    json_object_set_new(o, "keys", keys);
    return o;
}

static bool op_only_ranges(const struct chk_history *h, const struct chk_op *op)
{
    if (op->kind != CHK_OP_TXN)
        return true;
    for (uint32_t j = 0; j < (uint32_t)op->then_count + op->else_count; j++) {
        if (h->subs[op->sub_first + j].kind != CHK_SUB_RANGE)
            return false;
    }
    return true;
}

/* The revision a read is judged at: a historical range's revision when every range
 * in it asks the same one, else its header revision. */
static int64_t read_eff_rev(const struct chk_history *h, const struct chk_op *op)
{
    int64_t req = 0;
    for (uint32_t j = 0; j < (uint32_t)op->then_count + op->else_count; j++) {
        const struct chk_sub *s = &h->subs[op->sub_first + j];
        if (s->kind != CHK_SUB_RANGE)
            continue;
        if (s->req_rev <= 0 || (req && s->req_rev != req))
            return op->rev;
        req = s->req_rev;
    }
    return req ? FL_MIN(req, op->rev) : op->rev;
}

/* The entries a step of op can change when it writes single keys only (at most
 * UNDO_KEYS of them): its put and delete keys. False when it may change more (a range
 * delete, more keys, or outside content the state may jump to). */
#define UNDO_KEYS 8
struct undo_keys {
    uint32_t n;
    int32_t key[UNDO_KEYS];
    struct chk_kent ent[UNDO_KEYS];
    int64_t rev, compact_rev;
};

static bool undo_take(struct undo_keys *u, const struct chk_history *h, const struct chk_model *m,
                      const struct chk_kstate *st, const struct chk_op *op)
{
    u->n = 0;
    u->rev = st->rev;
    u->compact_rev = st->compact_rev;
    FL_ASSERT(m->slot == NULL); /* the replay's state has every key at its own index */
    if (m->revs_open || op->kind != CHK_OP_TXN)
        return false;
    for (uint32_t j = 0; j < (uint32_t)op->then_count + op->else_count; j++) {
        const struct chk_sub *s = &h->subs[op->sub_first + j];
        if (s->kind == CHK_SUB_RANGE)
            continue;
        if (s->range_end != CHK_RANGE_ONE || u->n == UNDO_KEYS)
            return false;
        u->key[u->n] = s->key;
        u->ent[u->n] = st->ent[s->key];
        u->n++;
    }
    return true;
}

/* Steps op on the replay's state and puts the state back as it was (the change log
 * untouched): the entries it can change are restored, or, when that set is not
 * small, the step runs on a copy of the whole state. */
static struct chk_step step_undone(const struct chk_history *h, struct rv_replay *p,
                                   const struct chk_op *op)
{
    struct chk_change_buf *keep = p->m.changes;
    p->m.changes = NULL;
    struct undo_keys u;
    struct chk_step s;
    if (undo_take(&u, h, &p->m, p->st, op)) {
        s = chk_model_step(&p->m, p->st, op);
        for (uint32_t j = u.n; j-- > 0;) /* reverse: a key twice gets its first entry */
            p->st->ent[u.key[j]] = u.ent[j];
        p->st->rev = u.rev;
        p->st->compact_rev = u.compact_rev;
    } else {
        memcpy(p->tmp, p->st, p->st_size);
        s = chk_model_step(&p->m, p->tmp, op);
    }
    p->m.changes = keep;
    return s;
}

static void judge_read(struct rv *r, struct rv_replay *p, uint32_t i)
{
    const struct chk_op *op = &r->h->ops[i];
    p->why[0] = 0;
    struct chk_step s;
    if (op->kind == CHK_OP_COMPACT) {
        s.legal = op->compact_rev <= op->rev;
        if (!s.legal)
            snprintf(p->why, sizeof(p->why), "compacted revision %lld above its revision",
                     (long long)op->compact_rev);
    } else if (op_only_ranges(r->h, op)) {
        s = chk_model_step(&p->m, p->st, op);
    } else {
        s = step_undone(r->h, p, op);
        if (s.wrote) {
            s.legal = false;
            snprintf(p->why, sizeof(p->why), "it would write, yet revision %lld is another's",
                     (long long)op->rev);
        }
    }
    if (!s.legal)
        chk__rv_viol_add(r, 0, i, UINT32_MAX, p->st->rev, r->pos[i], p->why,
                         state_json(r->h, p->st, op));
}

static const struct chk_history *g_ch_h;

static int change_cmp(const void *a, const void *b)
{
    const struct chk_change *x = a, *y = b;
    if (x->rev != y->rev)
        return x->rev < y->rev ? -1 : 1;
    uint32_t rx = x->key >= 0 ? g_ch_h->key_rank[x->key] : 0;
    uint32_t ry = y->key >= 0 ? g_ch_h->key_rank[y->key] : 0;
    if (rx != ry)
        return rx < ry ? -1 : 1;
    return x < y ? -1 : x > y; /* never equal keys in one revision (etcd refuses) */
}

static uint32_t change_rank(const struct chk_history *h, const struct chk_change *c)
{
    return c->key >= 0 ? h->key_rank[c->key] : 0;
}

/* Sorts one revision's changes [a, b) by key order, stably: by insertion when few (a
 * txn's puts), else qsort (change_cmp breaks ties by position, so stable too). */
static void sort_change_run(const struct chk_history *h, struct chk_change *v, uint32_t a,
                            uint32_t b)
{
    FL_ASSERT(a < b);
    if (b - a > 64) {
        g_ch_h = h;
        qsort(v + a, b - a, sizeof(*v), change_cmp);
        return;
    }
    for (uint32_t i = a + 1; i < b; i++) {
        struct chk_change x = v[i];
        uint32_t rx = change_rank(h, &x), j = i;
        for (; j > a && change_rank(h, &v[j - 1]) > rx; j--)
            v[j] = v[j - 1];
        v[j] = x;
    }
}

/* Changes in (revision, key order): the order watch events are compared in. The
 * replay logs them in revision order, so only each revision's run needs sorting;
 * a log out of revision order is sorted whole. */
static void sort_changes(const struct chk_history *h, struct chk_change_buf *c)
{
    bool by_rev = true;
    for (uint32_t i = 1; i < c->count && by_rev; i++)
        by_rev = c->v[i - 1].rev <= c->v[i].rev;
    if (!by_rev) {
        g_ch_h = h;
        qsort(c->v, c->count, sizeof(*c->v), change_cmp);
        return;
    }
    for (uint32_t a = 0, b; a < c->count; a = b) {
        bool sorted = true;
        for (b = a + 1; b < c->count && c->v[b].rev == c->v[a].rev; b++)
            sorted = sorted && change_rank(h, &c->v[b - 1]) <= change_rank(h, &c->v[b]);
        if (!sorted)
            sort_change_run(h, c->v, a, b);
    }
    for (uint32_t i = 1; i < c->count; i++)
        FL_ASSERT(c->v[i - 1].rev < c->v[i].rev ||
                  (c->v[i - 1].rev == c->v[i].rev &&
                   change_rank(h, &c->v[i - 1]) <= change_rank(h, &c->v[i])));
}

/* A revision no recorded operation explains, in a history where nothing else writes:
 * something applied a write nobody asked for (a duplicated retry, a phantom). The
 * violation names the first op ordered after it. */
static void phantom_revision(struct rv *r, int64_t rev)
{
    const struct chk_history *h = r->h;
    uint32_t after = UINT32_MAX;
    if (r->viol_count < VIOL_MAX) {
        int64_t best = INT64_MAX;
        for (uint32_t i = 0; i < h->op_count; i++) {
            if (r->pos[i] != INT64_MIN && r->pos[i] > 2 * rev - 1 && r->pos[i] < best) {
                best = r->pos[i];
                after = i;
            }
        }
    }
    if (after == UINT32_MAX)
        after = 0;
    char msg[200];
    snprintf(msg, sizeof(msg),
             "revision %lld exists but no recorded operation could have written it",
             (long long)rev);
    chk__rv_viol_add(r, 0, after, UINT32_MAX, rev, 2 * rev, msg, NULL);
}

/* Sets up a replay: the model (revisions checked, historical reads stepped at their
 * revision, every change logged), the empty state at revision 1, and the buckets. */
static void replay_open(struct rv *r, struct rv_replay *p, struct chk_change_buf *changes)
{
    const struct chk_history *h = r->h;
    memset(p, 0, sizeof(*p));
    p->m.h = r->h;
    p->m.check_revs = true;
    p->m.hist_exact = true;
    p->m.changes = changes;
    p->m.why = p->why;
    p->m.why_size = sizeof(p->why);
    p->st_size = chk_kstate_size(h->keys.count);
    p->st = fl_calloc(1, p->st_size);
    p->tmp = fl_calloc(1, p->st_size);
    for (uint32_t k = 0; k < h->keys.count; k++)
        p->st->ent[k].value = CHK_NIL;
    p->st->rev = 1;
    int64_t R = r->max_rev;
    FL_ASSERT(R >= 1);
    p->head = fl_malloc((size_t)(R + 2) * sizeof(int32_t));
    p->next = fl_malloc((h->op_count + 1) * sizeof(int32_t));
    p->sufmin = r->cand_op_count ? fl_malloc((size_t)(R + 2) * sizeof(int64_t)) : NULL;
    for (int64_t x = 0; x <= R + 1; x++)
        p->head[x] = -1;
    for (int64_t x = 0; p->sufmin && x <= R + 1; x++)
        p->sufmin[x] = CHK_NEVER;
}

static void replay_close(struct rv_replay *p)
{
    free(p->st);
    free(p->tmp);
    free(p->head);
    free(p->next);
    free(p->sufmin);
}

/* Reads bucketed by the revision they are judged at (filled in reverse, so each
 * bucket keeps op order), and sufmin[x]: the earliest return of an op positioned
 * after 2x (suffix minima, so non-decreasing in x). */
static void replay_buckets(struct rv *r, struct rv_replay *p)
{
    const struct chk_history *h = r->h;
    int64_t R = r->max_rev;
    for (uint32_t i = h->op_count; i-- > 0;) {
        const struct chk_op *op = &h->ops[i];
        if (r->role[i] == ROLE_READ) {
            int64_t e = read_eff_rev(h, op);
            if (e < 1 || e > R)
                e = op->rev;
            FL_ASSERT(e >= 1 && e <= R);
            p->next[i] = p->head[e];
            p->head[e] = (int32_t)i;
            if (p->sufmin && !(op->flags & CHK_OPF_SERIALIZABLE))
                p->sufmin[op->rev] = FL_MIN(p->sufmin[op->rev], op->return_ns);
        } else if (r->role[i] == ROLE_WRITE && p->sufmin) {
            int64_t g = op->rev - 1;
            p->sufmin[g] = FL_MIN(p->sufmin[g], op->return_ns);
        }
    }
    if (!p->sufmin)
        return;
    for (int64_t x = R; x-- > 0;)
        p->sufmin[x] = FL_MIN(p->sufmin[x], p->sufmin[x + 1]);
    for (int64_t x = 1; x <= R + 1; x++)
        FL_ASSERT(p->sufmin[x - 1] <= p->sufmin[x]);
}

/* Appends a progress change: revision rev happened, its content unknown. */
static void change_progress(struct chk_change_buf *changes, int64_t rev)
{
    FL_GROW(changes->v, changes->cap, changes->count + 1, 1024);
    changes->v[changes->count++] =
        (struct chk_change){rev, -1, CHK_EV_PROGRESS, CHK_NIL, CHK_NIL, 0, 0};
}

/* A revision no op claims (after fill_gap found no writer). With revisions_complete
 * it is a phantom write; watch events may show what it did. */
static void replay_gap(struct rv *r, struct rv_replay *p, struct chk_change_buf *changes,
                       int64_t rev)
{
    const struct chk_history *h = r->h;
    FL_ASSERT(r->claim[rev] < 0 && p->st->rev == rev - 1);
    r->gaps++;
    bool phantom = h->revisions_complete && !r->ambiguous && h->op_count;
    FL_TESTCASE(phantom);
    if (phantom)
        phantom_revision(r, rev);
    p->st->rev = rev;
    uint32_t shown = chk__rv_apply_watch_gap(r, p, rev);
    FL_TESTCASE(shown > 0);
    if (shown)
        r->watch_reveals++; /* content from watch events: re-judged without */
    change_progress(changes, rev);
}

/* The entries of the (up to 8) keys a write's sub-operations touch, kept before it
 * steps so that a failure can show the state it met (cheaper than a copy). */
struct saved_keys {
    uint32_t n;
    int32_t key[8];
    struct chk_kent ent[8];
    int64_t rev;
};

static void saved_take(struct saved_keys *sk, const struct chk_history *h,
                       const struct chk_kstate *st, const struct chk_op *op)
{
    sk->n = 0;
    sk->rev = st->rev;
    for (uint32_t j = 0; j < (uint32_t)op->then_count + op->else_count && sk->n < 8; j++) {
        sk->key[sk->n] = h->subs[op->sub_first + j].key;
        sk->ent[sk->n] = st->ent[sk->key[sk->n]];
        sk->n++;
    }
}

/* The state as JSON as it was before the write (the saved entries swapped in and
 * back; the state is left as the step made it). */
static json_t *saved_state_json(const struct chk_history *h, struct chk_kstate *st,
                                const struct chk_op *op, const struct saved_keys *sk)
{
    struct chk_kent after[8];
    int64_t rev_after = st->rev;
    for (uint32_t j = sk->n; j-- > 0;) {
        after[j] = st->ent[sk->key[j]];
        st->ent[sk->key[j]] = sk->ent[j];
    }
    st->rev = sk->rev;
    json_t *before = state_json(h, st, op);
    for (uint32_t j = 0; j < sk->n; j++)
        st->ent[sk->key[j]] = after[j];
    st->rev = rev_after;
    return before;
}

/* The writer w of revision rev steps the state: an illegal step, or an unknown op
 * placed there that writes nothing, is a violation. A guessed writer's changes are
 * replaced by one progress change (watches are not judged on a guess). */
static void replay_write(struct rv *r, struct rv_replay *p, struct chk_change_buf *changes,
                         int64_t rev, uint32_t w)
{
    const struct chk_history *h = r->h;
    const struct chk_op *op = &h->ops[w];
    FL_ASSERT(r->claim[rev] == (int32_t)w && p->st->rev == rev - 1);
    FL_ASSERT(r->role[w] == ROLE_WRITE || r->role[w] == ROLE_PLACED);
    uint32_t changes_before = changes->count;
    p->why[0] = 0;
    struct saved_keys sk;
    saved_take(&sk, h, p->st, op);
    struct chk_step s = chk_model_step(&p->m, p->st, op);
    if (!s.legal || (op->status == CHK_ST_UNKNOWN && !s.wrote)) {
        if (!p->why[0])
            snprintf(p->why, sizeof(p->why), "revealed at revision %lld but writes nothing there",
                     (long long)rev);
        json_t *before = saved_state_json(h, p->st, op, &sk);
        chk__rv_viol_add(r, 0, w, UINT32_MAX, rev, 2 * rev, p->why, before);
    }
    p->st->rev = rev;
    FL_TESTCASE(p->guessed_rev == rev);
    if (p->guessed_rev == rev) {
        changes->count = changes_before;
        change_progress(changes, rev);
    }
    /* the change log never runs ahead of the replay */
    FL_ASSERT(changes->count == 0 || changes->v[changes->count - 1].rev <= rev);
}

/* A historical range of a writing txn: sub (an index into h->subs) of op, judged at rev. */
struct hist_sub {
    int64_t rev;
    uint32_t op, sub;
};

static int hist_sub_cmp(const void *a, const void *b)
{
    const struct hist_sub *x = a, *y = b;
    if (x->rev != y->rev)
        return x->rev < y->rev ? -1 : 1;
    if (x->op != y->op)
        return x->op < y->op ? -1 : 1;
    return x->sub < y->sub ? -1 : x->sub > y->sub;
}

/* The historical ranges (a revision below the txn's own) of the recorded branch of every
 * answered writing txn, by the revision they ask: the txn steps at its own revision, so
 * they are judged apart, when the replay is at theirs (a txn that put two keys and read
 * a third at an old revision was judged against the newest state: chaos seed 26 with the
 * read_more feature). */
static struct hist_sub *hist_subs(const struct rv *r, size_t *count)
{
    const struct chk_history *h = r->h;
    struct hist_sub *v = NULL;
    size_t n = 0, cap = 0;
    for (uint32_t i = 0; i < h->op_count; i++) {
        const struct chk_op *op = &h->ops[i];
        if (r->role[i] != ROLE_WRITE || op->kind != CHK_OP_TXN || op->status != CHK_ST_OK ||
            !(op->flags & CHK_OPF_HAS_RESULT) ||
            (op->cmp_count && !(op->flags & CHK_OPF_SUCCEEDED_SET)))
            continue;
        bool succ = op->cmp_count == 0 || (op->flags & CHK_OPF_SUCCEEDED);
        uint32_t first = op->sub_first + (succ ? 0 : op->then_count);
        uint32_t k = succ ? op->then_count : op->else_count;
        for (uint32_t j = first; j < first + k; j++) {
            const struct chk_sub *sb = &h->subs[j];
            if (sb->kind != CHK_SUB_RANGE || sb->req_rev <= 0 || sb->req_rev >= op->rev ||
                sb->req_rev > r->max_rev || !(sb->flags & CHK_SUBF_RESULT_SET))
                continue;
            FL_GROW(v, cap, n + 1, 16);
            v[n++] = (struct hist_sub){sb->req_rev, i, j};
        }
    }
    if (n > 1)
        qsort(v, n, sizeof v[0], hist_sub_cmp);
    *count = n;
    return v;
}

/* Replays the writes in revision order (filling gaps first) and judges every read at
 * its revision; leaves the change log in out. */
void chk__rv_replay(struct rv *r)
{
    struct rv_replay p;
    struct chk_change_buf changes = {0};
    replay_open(r, &p, &changes);
    replay_buckets(r, &p);
    size_t hn = 0, hk = 0;
    struct hist_sub *hs = hist_subs(r, &hn);
    for (int64_t rev = 1; rev <= r->max_rev; rev++) {
        if (rev >= 2) {
            if (r->claim[rev] < 0)
                chk__rv_fill_gap(r, &p, rev);
            p.st->rev = rev - 1;
            if (r->claim[rev] < 0)
                replay_gap(r, &p, &changes, rev);
            else
                replay_write(r, &p, &changes, rev, (uint32_t)r->claim[rev]);
        }
        FL_ASSERT(p.st->rev == rev); /* the model state is at the revision judged */
        for (int32_t i = p.head[rev]; i >= 0; i = p.next[i])
            judge_read(r, &p, (uint32_t)i);
        for (; hk < hn && hs[hk].rev == rev; hk++) {
            uint32_t i = hs[hk].op;
            p.why[0] = 0;
            if (!chk_model_range_at(&p.m, p.st, &r->h->subs[hs[hk].sub]))
                chk__rv_viol_add(r, 0, i, UINT32_MAX, p.st->rev, r->pos[i], p.why,
                                 state_json(r->h, p.st, &r->h->ops[i]));
        }
        r->out->steps++;
    }
    free(hs);
    sort_changes(r->h, &changes);
    r->out->changes = changes.v;
    r->out->change_count = changes.count;
    r->out->changes_known = true;
    replay_close(&p);
}
