/*
 * chk_revision.c: engine 1, linearizability from the revision order etcd exposes.
 *
 * etcd gives every applied write exactly one revision and answers every request with
 * the revision it was served at, so a linearization is almost given: a write sits at
 * position 2r (its revision r), a read served at revision R at 2R+1 (after write R,
 * before write R+1). The history is linearizable iff
 *   1. no two writes claim one revision;
 *   2. replaying the writes in revision order through the etcd model reproduces every
 *      response (values, versions, create/mod revisions, deleted counts, txn branch)
 *      and every read matches the state at its revision; and
 *   3. the positions respect real time: if A returned before B was called, then
 *      pos(A) <= pos(B).
 * Each is near-linear: a counting sort by revision and one sweep over the ops sorted
 * by call and return time.
 *
 * Operations with unknown outcome are placed only when the history reveals them: a
 * read or a watch event shows a key-value whose mod revision no acknowledged write
 * claims, and an unknown op writes exactly that (key, value) (the earliest-called
 * such op is chosen: it constrains real time least); a read showing a create
 * revision nobody claims reveals an unknown put of that key. A revision no op claims
 * after that (a gap) is filled, in revision order, by the unknown op that could have
 * written it there: called before every op ordered after the gap returned, and
 * writing something in the state there. One such op (or several with the same
 * effect, or effects nobody could see) is a proof; otherwise the engine guesses,
 * guided by what later reads saw (the value, the version count, the mod revision of
 * the key). A guess can only confirm: if the replay with it finds no violation, that
 * replay is a linearization; if it finds one, the verdict is CHK_UNKNOWN (and the
 * dispatcher may hand the history to the search). A gap with no candidate stays
 * content-unknown (reads judge what follows), unless watch events show what it did
 * (a lease expiry: the deletes are applied). Watch events only ever place unknown ops
 * and fill such gaps; they never fail this check by themselves (a verdict other than
 * pass that used them is judged again without them). With revisions_complete a gap
 * no op fills is a violation; the search engine reasons the same way on that flag.
 * One exception, guess-free and shared with the search (chk_dup.c): a put's value
 * that a recorded op wrote, shown applied (by its response, a watch event or a read)
 * at more revisions than ops write it, is a duplicate application and fails.
 *
 * Serializable reads are judged against the state at their revision only, not
 * against real time (etcd's serializable validator).
 *
 * The replay also yields the change log (every put/delete per revision) the watch
 * checker judges watch events against.
 */
#include "checkers/chk_rev_int.h"
#include "harness/common/marker.h"

/* Does the op's taken branch (or either, when unknown) write? 2 = surely, 1 = maybe. */
static int op_writes(const struct chk_history *h, const struct chk_op *op)
{
    bool known = op->cmp_count == 0 || (op->flags & CHK_OPF_SUCCEEDED_SET);
    bool succ = op->cmp_count == 0 || (op->flags & CHK_OPF_SUCCEEDED);
    int best = 0;
    for (int b = 0; b < 2; b++) {
        if (known && b != (succ ? 0 : 1))
            continue;
        uint32_t first = op->sub_first + (b ? op->then_count : 0);
        uint32_t n = b ? op->else_count : op->then_count;
        for (uint32_t i = 0; i < n; i++) {
            const struct chk_sub *s = &h->subs[first + i];
            int w = 0;
            if (s->kind == CHK_SUB_PUT || s->kind == CHK_SUB_APPEND)
                w = 2;
            else if (s->kind == CHK_SUB_DELETE)
                w = !(s->flags & CHK_SUBF_COUNT_SET) || op->status != CHK_ST_OK ? 1
                    : s->count > 0                                              ? 2
                                                                                : 0;
            best = FL_MAX(best, w);
        }
    }
    return known ? best : FL_MIN(best, 1);
}

static void viol_add(struct rv *r, int kind, uint32_t op, uint32_t other, int64_t rev, int64_t pos,
                     const char *msg, json_t *state)
{
    FL_ASSERT(kind >= 0 && kind <= 2 && msg != NULL);
    FL_ASSERT(op < r->h->op_count && (other == UINT32_MAX || other < r->h->op_count));
    FL_ASSERT(r->viol_count <= VIOL_MAX && r->viol_count <= r->viol_total);
    r->viol_total++;
    if (r->viol_count == VIOL_MAX) {
        json_decref(state);
        return;
    }
    struct rv_viol *v = &r->viol[r->viol_count++];
    v->kind = kind;
    v->op = op;
    v->other = other;
    v->rev = rev;
    v->pos = pos;
    snprintf(v->msg, sizeof(v->msg), "%s", msg);
    v->state = state;
}

static int64_t max_revision(const struct chk_history *h)
{
    int64_t m = 1;
    for (uint32_t i = 0; i < h->op_count; i++) {
        if (h->ops[i].status == CHK_ST_OK && h->ops[i].rev != CHK_NO_REV)
            m = FL_MAX(m, h->ops[i].rev);
    }
    for (uint32_t i = 0; i < h->kv_count; i++)
        m = FL_MAX(m, FL_MAX(h->kvs[i].mod_rev, h->kvs[i].create_rev));
    for (uint32_t i = 0; i < h->event_count; i++) {
        if (h->events[i].kind != CHK_EV_PROGRESS)
            m = FL_MAX(m, h->events[i].mod_rev);
    }
    return m;
}

/* The first classification of op i: its role, and the revision it claims when it
 * surely wrote. An acknowledged op whose result does not say whether it wrote is
 * left ROLE_TENT for classify_tentative. */
static void classify_op(struct rv *r, uint32_t i)
{
    const struct chk_op *op = &r->h->ops[i];
    if (op->status == CHK_ST_FAIL) {
        r->role[i] = ROLE_FAILED;
        return;
    }
    if (op->status == CHK_ST_OK && op->rev < 1) {
        r->role[i] = ROLE_NONE; /* e.g. defragment: not linearizable (rev -1) */
        return;
    }
    if (op->kind == CHK_OP_COMPACT) {
        r->role[i] = op->status == CHK_ST_OK ? ROLE_READ : ROLE_NONE;
        return;
    }
    int w = op_writes(r->h, op);
    if (op->status == CHK_ST_UNKNOWN) {
        r->role[i] = w ? ROLE_CAND : ROLE_NONE;
        return;
    }
    FL_ASSERT(op->rev >= 1 && op->rev <= r->max_rev);
    if (w == 2 && op->rev >= 2) {
        FL_TESTCASE(r->claim[op->rev] >= 0); /* two acknowledged writes at one revision */
        if (r->claim[op->rev] >= 0) {
            char msg[200];
            snprintf(msg, sizeof(msg), "two writes claim revision %lld", (long long)op->rev);
            viol_add(r, 2, i, (uint32_t)r->claim[op->rev], op->rev, 2 * op->rev, msg, NULL);
            r->role[i] = ROLE_READ; /* judged as a read at its revision */
            return;
        }
        r->claim[op->rev] = (int32_t)i;
        r->role[i] = ROLE_WRITE;
    } else {
        r->role[i] = w == 1 && op->rev >= 2 ? ROLE_TENT : ROLE_READ;
    }
}

/* A tentative writer takes its revision when no sure write claims it (unless
 * tent_read: then every tentative op is judged as a read). */
static void classify_tentative(struct rv *r, uint32_t i)
{
    const struct chk_op *op = &r->h->ops[i];
    FL_ASSERT(r->role[i] == ROLE_TENT && op->rev >= 2);
    if (r->claim[op->rev] < 0 && !r->tent_read) {
        r->claim[op->rev] = (int32_t)i;
        r->role[i] = ROLE_WRITE;
        r->tent_writes++;
    } else {
        r->role[i] = ROLE_READ;
    }
}

/* Candidate index: every put (key, value) and single-key delete of unknown ops, in
 * (key, value, call, op) order for the reveals' binary searches. */
static void index_candidates(struct rv *r)
{
    const struct chk_history *h = r->h;
    uint32_t cap = 0;
    for (uint32_t i = 0; i < h->op_count; i++) {
        const struct chk_op *op = &h->ops[i];
        if (r->role[i] != ROLE_CAND)
            continue;
        for (uint32_t j = 0; j < (uint32_t)op->then_count + op->else_count; j++) {
            const struct chk_sub *s = &h->subs[op->sub_first + j];
            bool range_delete = s->kind == CHK_SUB_DELETE && s->range_end != CHK_RANGE_ONE;
            r->cand_range |= range_delete;
            if (s->kind == CHK_SUB_RANGE || range_delete)
                continue;
            FL_GROW(r->cands, cap, r->cand_count + 1, 256);
            r->cands[r->cand_count++] = (struct cand_ent){
                s->key, s->kind == CHK_SUB_DELETE ? CHK_NIL : s->value, op->call_ns, i};
        }
    }
    if (r->cand_count)
        qsort(r->cands, r->cand_count, sizeof(*r->cands), chk__rv_cand_cmp);
    for (uint32_t c = 1; c < r->cand_count; c++)
        FL_ASSERT(chk__rv_cand_cmp(&r->cands[c - 1], &r->cands[c]) <= 0);
}

/* Roles and claims of acknowledged ops; candidates of unknown ones. Afterwards every
 * claimed revision names a writer answered at it, and no op is left tentative. */
static void rv_classify(struct rv *r)
{
    struct chk_history *h = r->h;
    for (uint32_t i = 0; i < h->op_count; i++)
        classify_op(r, i);
    for (uint32_t i = 0; i < h->op_count; i++) {
        if (r->role[i] == ROLE_TENT)
            classify_tentative(r, i);
    }
    index_candidates(r);
    for (int64_t rev = 2; rev <= r->max_rev; rev++) {
        int32_t w = r->claim[rev];
        FL_ASSERT(w < 0 || (r->role[w] == ROLE_WRITE && h->ops[w].rev == rev));
    }
    for (uint32_t i = 0; i < h->op_count; i++)
        FL_ASSERT(r->role[i] != ROLE_TENT);
}

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
        viol_add(r, 0, i, UINT32_MAX, p->st->rev, r->pos[i], p->why, state_json(r->h, p->st, op));
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
    viol_add(r, 0, after, UINT32_MAX, rev, 2 * rev, msg, NULL);
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
    p->sufmin = fl_malloc((size_t)(R + 2) * sizeof(int64_t));
    for (int64_t x = 0; x <= R + 1; x++) {
        p->head[x] = -1;
        p->sufmin[x] = CHK_NEVER;
    }
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
            if (!(op->flags & CHK_OPF_SERIALIZABLE))
                p->sufmin[op->rev] = FL_MIN(p->sufmin[op->rev], op->return_ns);
        } else if (r->role[i] == ROLE_WRITE) {
            int64_t g = op->rev - 1;
            p->sufmin[g] = FL_MIN(p->sufmin[g], op->return_ns);
        }
    }
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
        viol_add(r, 0, w, UINT32_MAX, rev, 2 * rev, p->why, before);
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
static void rv_replay(struct rv *r)
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
                viol_add(r, 0, i, UINT32_MAX, p.st->rev, r->pos[i], p.why,
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

/* ---- real time ------------------------------------------------------------------- */

static const struct chk_history *g_rt_h;

static int by_call(const void *a, const void *b)
{
    const struct chk_op *x = &g_rt_h->ops[*(const uint32_t *)a];
    const struct chk_op *y = &g_rt_h->ops[*(const uint32_t *)b];
    if (x->call_ns != y->call_ns)
        return x->call_ns < y->call_ns ? -1 : 1;
    return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static int by_return(const void *a, const void *b)
{
    const struct chk_op *x = &g_rt_h->ops[*(const uint32_t *)a];
    const struct chk_op *y = &g_rt_h->ops[*(const uint32_t *)b];
    if (x->return_ns != y->return_ns)
        return x->return_ns < y->return_ns ? -1 : 1;
    return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

/* Sorts idx (op indexes, ascending) by call or return time, ties by op index:
 * skipped when already in order (the common case: a recorder appends ops as they
 * return or as they are called), else a stable radix sort of the times. */
static void sort_ops(const struct chk_history *h, uint32_t *idx, uint32_t n, bool by_ret)
{
    int (*cmp)(const void *, const void *) = by_ret ? by_return : by_call;
    g_rt_h = h;
    bool sorted = true;
    for (uint32_t i = 1; i < n && sorted; i++)
        sorted = cmp(&idx[i - 1], &idx[i]) <= 0;
    if (sorted)
        return;
    for (uint32_t i = 1; i < n; i++)
        FL_ASSERT(idx[i - 1] < idx[i]); /* a stable sort then breaks ties by op index */
    uint64_t *key = fl_malloc(((size_t)n + 1) * sizeof(uint64_t));
    for (uint32_t i = 0; i < n; i++) {
        const struct chk_op *op = &h->ops[idx[i]];
        int64_t t = by_ret ? op->return_ns : op->call_ns;
        key[i] = (uint64_t)t ^ (UINT64_C(1) << 63); /* signed order as unsigned */
    }
    chk__sort_keyed(key, idx, n); /* asserts the keys' order */
    free(key);
}

/* If A returned before B was called, pos(A) <= pos(B). One sweep: ops by call time,
 * a pointer over ops by return time carrying the largest position returned so far. */
static void rv_realtime(struct rv *r)
{
    const struct chk_history *h = r->h;
    uint32_t *bc = fl_malloc((h->op_count + 1) * sizeof(uint32_t));
    uint32_t *br = fl_malloc((h->op_count + 1) * sizeof(uint32_t));
    uint32_t nc = 0, nr = 0;
    for (uint32_t i = 0; i < h->op_count; i++) {
        if (r->pos[i] == INT64_MIN || (h->ops[i].flags & CHK_OPF_SERIALIZABLE))
            continue;
        bc[nc++] = i;
        if (h->ops[i].return_ns != CHK_NEVER && r->role[i] != ROLE_PLACED)
            br[nr++] = i;
    }
    sort_ops(h, bc, nc, false);
    sort_ops(h, br, nr, true);
    FL_ASSERT(nr <= nc && nc <= h->op_count);
    int64_t maxpos = INT64_MIN;
    uint32_t maxop = UINT32_MAX;
    uint32_t j = 0;
    for (uint32_t k = 0; k < nc; k++) {
        uint32_t b = bc[k];
        int64_t call = h->ops[b].call_ns;
        FL_ASSERT(k == 0 || h->ops[bc[k - 1]].call_ns <= call); /* by call */
        while (j < nr && h->ops[br[j]].return_ns < call) {
            FL_ASSERT(j == 0 || h->ops[br[j - 1]].return_ns <= h->ops[br[j]].return_ns);
            if (r->pos[br[j]] > maxpos) {
                maxpos = r->pos[br[j]];
                maxop = br[j];
            }
            j++;
        }
        if (r->pos[b] < maxpos) {
            /* ordered before an op that returned before it was called */
            FL_ASSERT(maxop != UINT32_MAX && h->ops[maxop].return_ns < call);
            char msg[200];
            const struct chk_op *a = &h->ops[maxop];
            snprintf(msg, sizeof(msg),
                     "op %lld (revision %lld) returned before op %lld was called, yet op "
                     "%lld is ordered at revision %lld: %s",
                     (long long)a->op_id, (long long)(maxpos / 2), (long long)h->ops[b].op_id,
                     (long long)h->ops[b].op_id, (long long)(r->pos[b] / 2),
                     r->pos[b] % 2 ? "a stale read" : "a write ordered before it");
            viol_add(r, 1, b, maxop, r->pos[b] / 2, r->pos[b], msg, NULL);
        }
    }
    free(bc);
    free(br);
}

/* Failed reads that blamed compaction or a future revision: lenient checks (etcd's
 * answer must be possible at some point of the operation). */
static void rv_failed(struct rv *r)
{
    const struct chk_history *h = r->h;
    for (uint32_t i = 0; i < h->op_count; i++) {
        const struct chk_op *op = &h->ops[i];
        if (r->role[i] != ROLE_FAILED || op->err != CHK_ERR_COMPACTED || op->kind != CHK_OP_TXN ||
            !h->compactions_known)
            continue; /* without recorded compactions the error cannot be refuted */
        for (uint32_t j = 0; j < op->then_count; j++) {
            const struct chk_sub *s = &h->subs[op->sub_first + j];
            if (s->kind != CHK_SUB_RANGE || s->req_rev <= 0)
                continue;
            bool possible = false;
            for (uint32_t c = 0; c < h->op_count && !possible; c++) {
                const struct chk_op *co = &h->ops[c];
                possible = co->kind == CHK_OP_COMPACT && co->status != CHK_ST_FAIL &&
                           co->compact_rev >= s->req_rev && co->call_ns <= op->return_ns;
            }
            if (!possible) {
                char msg[200];
                snprintf(msg, sizeof(msg),
                         "read at revision %lld failed as compacted, but no compaction "
                         "reached it",
                         (long long)s->req_rev);
                viol_add(r, 0, i, UINT32_MAX, s->req_rev, INT64_MAX, msg, NULL);
            }
        }
    }
}

static int viol_cmp(const void *a, const void *b)
{
    const struct rv_viol *x = a, *y = b;
    if (x->pos != y->pos)
        return x->pos < y->pos ? -1 : 1;
    return x->op < y->op ? -1 : x->op > y->op;
}

static void rv_explain(struct rv *r)
{
    struct chk_history *h = r->h;
    struct chk_lin_result *out = r->out;
    qsort(r->viol, r->viol_count, sizeof(r->viol[0]), viol_cmp);
    json_t *d = json_object();
    json_object_set_new(d, "engine", json_string("revision"));
    static const char *const kinds[] = {"value", "real_time", "duplicate_revision"};
    json_t *arr = json_array();
    for (uint32_t i = 0; i < r->viol_count; i++) {
        struct rv_viol *v = &r->viol[i];
        json_t *o = json_object();
        json_object_set_new(o, "kind", json_string(kinds[v->kind]));
        json_object_set_new(o, "revision", json_integer(v->rev));
        json_object_set_new(o, "message", json_string(v->msg));
        json_t *ops = json_array();
        json_array_append_new(ops, chk_json_op(h, &h->ops[v->op]));
        if (v->other != UINT32_MAX)
            json_array_append_new(ops, chk_json_op(h, &h->ops[v->other]));
        json_object_set_new(o, "ops", ops);
        if (v->state) {
            json_object_set_new(o, "state", v->state);
            v->state = NULL;
        }
        json_array_append_new(arr, o);
    }
    json_object_set_new(d, "violations", arr);
    json_object_set_new(d, "violation_count", json_integer(r->viol_total));
    /* Longest prefix: the ops ordered before the first violation. */
    int64_t first = r->viol_count ? r->viol[0].pos : INT64_MAX;
    uint64_t prefix = 0;
    for (uint32_t i = 0; i < h->op_count; i++)
        prefix += r->pos[i] != INT64_MIN && r->pos[i] < first;
    json_object_set_new(d, "prefix_length", json_integer((json_int_t)prefix));
    json_object_set_new(d, "prefix_revision",
                        json_integer(first == INT64_MAX ? r->max_rev : (first - 1) / 2));
    if (r->viol_count) {
        json_t *unord = json_array();
        json_array_append_new(unord, chk_json_op(h, &h->ops[r->viol[0].op]));
        if (r->viol[0].other != UINT32_MAX)
            json_array_append_new(unord, chk_json_op(h, &h->ops[r->viol[0].other]));
        json_object_set_new(d, "unordered_ops", unord);
        struct fl_buf t;
        fl_buf_init(&t);
        chk_op_text(h, &h->ops[r->viol[0].op], &t);
        snprintf(out->reason, sizeof(out->reason), "%s (client %d) at revision %lld: %s",
                 fl_buf_cstr(&t), h->ops[r->viol[0].op].client, (long long)r->viol[0].rev,
                 r->viol[0].msg);
        fl_buf_close(&t);
    }
    json_object_set_new(d, "revealed", json_integer(out->revealed));
    json_object_set_new(d, "gaps", json_integer(r->gaps));
    json_decref(out->detail);
    out->detail = d;
}

/* Forgets what one replay placed into gaps and found, for another try. What obs_build
 * built stays: it ran before the replay's first gap placement, so from the roles and
 * claims of the reveals, which every try starts from (role0, claim0). */
static void rv_reset(struct rv *r, const uint8_t *role0, const int64_t *pos0, const int32_t *claim0,
                     uint32_t revealed0)
{
    const struct chk_history *h = r->h;
    memcpy(r->role, role0, h->op_count);
    memcpy(r->pos, pos0, h->op_count * sizeof(int64_t));
    memcpy(r->claim, claim0, (size_t)(r->max_rev + 2) * sizeof(int32_t));
    for (uint32_t i = 0; i < r->viol_count; i++)
        json_decref(r->viol[i].state);
    r->viol_count = r->viol_total = 0;
    r->ambiguous = false;
    r->guess_min = 0;
    r->gaps = 0;
    r->xput_count = 0;
    r->ndecisions = 0;
    r->out->revealed = revealed0;
    free(r->out->changes);
    r->out->changes = NULL;
    r->out->change_count = 0;
    json_decref(r->out->detail);
    r->out->detail = NULL;
}

/* Next choices: the last decision before the first violation that has an untried
 * alternative; false when there is none. */
static bool rv_next_choice(struct rv *r)
{
    int64_t first = INT64_MAX;
    for (uint32_t i = 0; i < r->viol_count; i++)
        first = FL_MIN(first, r->viol[i].pos);
    for (uint32_t d = r->ndecisions; d-- > 0;) {
        uint32_t cur = d < r->nchoice ? r->choice[d] : 0;
        if (2 * r->dec_rev[d] > first || cur + 1 >= r->dec_count[d])
            continue;
        for (uint32_t x = r->nchoice; x < d; x++)
            r->choice[x] = 0;
        r->choice[d] = cur + 1;
        r->nchoice = d + 1;
        FL_ASSERT(r->choice[d] < r->dec_count[d] && r->nchoice <= DECISIONS_MAX);
        return true;
    }
    return false;
}

/* Replays, retrying other guesses while a guessed replay ends in a violation. A
 * replay without violation is a linearization (pass); violations without any guess
 * are a proof (fail); violations after guesses that all retries kept are "unknown". */
static void rv_attempts(struct rv *r)
{
    const struct chk_history *h = r->h;
    struct chk_lin_result *out = r->out;
    /* A retry needs a decision point, which only a gap with an unknown op left to place
     * makes (chk__rv_fill_gap): without one, no try is ever reset and the starting
     * roles, positions and claims need no copy (at 10M operations ~120 MB). */
    bool retries = r->cand_op_count > 0;
    uint8_t *role0 = retries ? fl_memdup(r->role, h->op_count + 1) : NULL;
    int64_t *pos0 = retries ? fl_memdup(r->pos, (h->op_count + 1) * sizeof(int64_t)) : NULL;
    int32_t *claim0 =
        retries ? fl_memdup(r->claim, (size_t)(r->max_rev + 2) * sizeof(int32_t)) : NULL;
    uint32_t revealed0 = out->revealed;
    uint32_t attempt = 0;
    /* retries cost a replay each: keep the total near a few replays of big histories */
    uint32_t attempts_max = (uint32_t)FL_MAX(2, FL_MIN(ATTEMPTS_MAX, 4000000 / (h->op_count + 1)));
    for (;;) {
        rv_replay(r);
        rv_realtime(r);
        rv_failed(r);
        attempt++;
        if (!r->viol_total || !r->ambiguous || attempt >= attempts_max || !rv_next_choice(r))
            break;
        FL_ASSERT(retries && r->ndecisions > 0); /* rv_next_choice found a decision point */
        rv_reset(r, role0, pos0, claim0, revealed0);
    }
    FL_ASSERT(attempt >= 1 && attempt <= attempts_max);
    FL_ASSERT(r->viol_count == FL_MIN(r->viol_total, (uint32_t)VIOL_MAX));
    out->verdict = r->viol_total ? CHK_FAIL : CHK_PASS;
    rv_explain(r);
    if (r->ambiguous && r->viol_total) {
        /* the violation may be an artefact of a guessed placement */
        out->verdict = CHK_UNKNOWN;
        snprintf(out->reason, sizeof(out->reason),
                 "revision %lld could have been written by several operations of unknown "
                 "outcome, and a violation follows in all %u placements tried; undecided",
                 (long long)r->ambiguous_rev, attempt);
        out->changes_known = false;
    }
    if (out->detail)
        json_object_set_new(out->detail, "attempts", json_integer(attempt));
    free(role0);
    free(pos0);
    free(claim0);
}

/* r->retmin: per revision R, the earliest return of an acknowledged op ordered after
 * write R (reads at >= R, writes at > R). */
static void rv_retmin(struct rv *r)
{
    const struct chk_history *h = r->h;
    int64_t R = r->max_rev;
    r->retmin = fl_malloc((size_t)(R + 2) * sizeof(int64_t));
    for (int64_t x = 0; x <= R + 1; x++)
        r->retmin[x] = CHK_NEVER;
    for (uint32_t i = 0; i < h->op_count; i++) {
        const struct chk_op *op = &h->ops[i];
        if (op->flags & CHK_OPF_SERIALIZABLE || op->rev < 1 || op->rev > R)
            continue;
        if (r->role[i] == ROLE_READ)
            r->retmin[op->rev] = FL_MIN(r->retmin[op->rev], op->return_ns);
        else if (r->role[i] == ROLE_WRITE)
            r->retmin[op->rev - 1] = FL_MIN(r->retmin[op->rev - 1], op->return_ns);
    }
    for (int64_t x = R; x-- > 0;)
        r->retmin[x] = FL_MIN(r->retmin[x], r->retmin[x + 1]);
    for (int64_t x = 1; x <= R + 1; x++)
        FL_ASSERT(r->retmin[x - 1] <= r->retmin[x]);
}

/* One run of the engine; no_watch: watch events reveal nothing; tent_read: see struct
 * rv (*tent_writes, when not NULL, gets how many were taken as writers). */
static void rv_run(struct chk_history *h, int64_t max_rev, struct chk_lin_result *out,
                   bool no_watch, bool tent_read, uint32_t *watch_reveals, uint32_t *tent_writes)
{
    struct rv r;
    memset(&r, 0, sizeof(r));
    r.h = h;
    r.out = out;
    r.no_watch = no_watch;
    r.tent_read = tent_read;
    r.max_rev = max_rev; /* max_revision(h), computed once by chk_lin_revision */
    FL_ASSERT(max_rev >= 1);
    r.role = fl_calloc(h->op_count + 1, 1);
    r.pos = fl_malloc((h->op_count + 1) * sizeof(int64_t));
    r.claim = fl_malloc((size_t)(r.max_rev + 2) * sizeof(int32_t));
    for (int64_t x = 0; x <= r.max_rev + 1; x++)
        r.claim[x] = -1;
    for (uint32_t i = 0; i < h->op_count; i++)
        r.pos[i] = INT64_MIN;
    rv_classify(&r);
    rv_retmin(&r);
    chk__rv_wev_build(&r);
    chk__rv_reveal_all(&r);
    for (uint32_t i = 0; i < h->op_count; i++) {
        if (r.role[i] == ROLE_WRITE)
            r.pos[i] = 2 * h->ops[i].rev;
        else if (r.role[i] == ROLE_READ)
            r.pos[i] = 2 * h->ops[i].rev + 1;
    }
    uint32_t ncand = 0; /* sized to the unknown writers: usually far fewer than ops */
    for (uint32_t i = 0; i < h->op_count; i++)
        ncand += r.role[i] == ROLE_CAND;
    r.cand_ops = fl_malloc(((size_t)ncand + 1) * sizeof(uint32_t));
    for (uint32_t i = 0; i < h->op_count; i++) {
        if (r.role[i] == ROLE_CAND)
            r.cand_ops[r.cand_op_count++] = i;
    }
    FL_ASSERT(r.cand_op_count == ncand);
    sort_ops(h, r.cand_ops, r.cand_op_count, false);
    /* candidate order: the gap filling walks unknown writers by call time */
    for (uint32_t c = 1; c < r.cand_op_count; c++)
        FL_ASSERT(h->ops[r.cand_ops[c - 1]].call_ns <= h->ops[r.cand_ops[c]].call_ns);
    rv_attempts(&r);
    /* a pass whose linearization rests on guessed placements: where they start */
    out->guessed_from = out->verdict == CHK_PASS && r.ambiguous ? r.guess_min : 0;
    if (watch_reveals)
        *watch_reveals = r.watch_reveals + (r.watch_obs && r.out->verdict != CHK_PASS);
    if (tent_writes)
        *tent_writes = r.tent_writes;
    for (uint32_t i = 0; i < r.viol_count; i++)
        json_decref(r.viol[i].state);
    free(r.role);
    free(r.pos);
    free(r.claim);
    free(r.cands);
    free(r.obs);
    free(r.puts);
    free(r.xputs);
    free(r.gapcount);
    free(r.obs_key);
    free(r.put_key);
    free(r.cand_ops);
    free(r.wev);
    free(r.wcov_lo);
    free(r.wcov_hi);
    free(r.retmin);
}

/*
 * Watch events may settle where an unknown-outcome op took effect, nothing more
 * (DESIGN §3.7): when a verdict other than pass used such a placement, the history is
 * judged again without them, and if that finds a linearization, it stands (the watch
 * checker then reports the events no write explains).
 */
/* rv_run, and when ops that may not have written were taken as writers and that
 * failed, again with them judged as reads. Either passing is a linearization. Both
 * failing is a proof when there was one such op (its two possibilities are all there
 * is); with several, mixed choices were not tried: undecided. */
static void rv_run_tent(struct chk_history *h, int64_t max_rev, struct chk_lin_result *out,
                        bool no_watch, uint32_t *watch_reveals)
{
    uint32_t tents = 0;
    rv_run(h, max_rev, out, no_watch, false, watch_reveals, &tents);
    if (out->verdict == CHK_PASS || tents == 0)
        return;
    struct chk_lin_result alt;
    memset(&alt, 0, sizeof(alt));
    alt.engine = CHK_ENGINE_REVISION;
    uint32_t alt_reveals = 0;
    rv_run(h, max_rev, &alt, no_watch, true, &alt_reveals, NULL);
    alt.steps += out->steps;
    if (alt.verdict == CHK_PASS) {
        chk_lin_result_close(out);
        *out = alt;
        if (watch_reveals)
            *watch_reveals = alt_reveals;
        if (out->detail)
            json_object_set_new(out->detail, "writes_judged_as_reads", json_integer(tents));
        return;
    }
    out->steps = alt.steps;
    int alt_verdict = alt.verdict;
    chk_lin_result_close(&alt);
    if (watch_reveals)
        *watch_reveals += alt_reveals; /* a verdict either reading used watches for is
                                          judged again without them */
    if (out->verdict == CHK_FAIL && (tents > 1 || alt_verdict != CHK_FAIL)) {
        out->verdict = CHK_UNKNOWN;
        snprintf(out->reason, sizeof(out->reason),
                 "%u acknowledged operations do not say whether they wrote; taken as the "
                 "writers of their revisions and as reads there, a violation follows; "
                 "undecided",
                 tents);
        out->changes_known = false;
    }
}

int chk_lin_revision(struct chk_history *h, const struct chk_limits *lim,
                     struct chk_lin_result *out)
{
    (void)lim;
    FL_ASSERT(h->finished);
    out->engine = CHK_ENGINE_REVISION;
    if (!h->has_revs) {
        out->verdict = CHK_UNKNOWN;
        snprintf(out->reason, sizeof(out->reason),
                 "revision order needs a header revision on every acknowledged operation");
        return FL_OK;
    }
    /* The engine sorts by revision through arrays indexed by revision: a history whose
     * revisions are far sparser than its records (fuzz: one revision of 4.4e15) would
     * ask for petabytes. It leaves such a history to the search. */
    int64_t max_rev = max_revision(h);
    int64_t dense = 16 * ((int64_t)h->op_count + h->kv_count + h->event_count) + 4000000;
    if (max_rev > dense) {
        out->verdict = CHK_UNKNOWN;
        snprintf(out->reason, sizeof(out->reason),
                 "revision %lld is far above what %u operations could have made; the "
                 "revision order engine does not judge such sparse revisions",
                 (long long)max_rev, h->op_count);
        return FL_OK;
    }
    uint32_t watch_reveals = 0;
    rv_run_tent(h, max_rev, out, false, &watch_reveals);
    /* A linearization found with the watch events is one they agree with wherever they
     * guided a placement: the watch checker takes its changes as they are. */
    if (out->verdict == CHK_PASS || watch_reveals == 0) {
        out->guessed_from = 0;
        chk_dup_applications(h, out);
        return FL_OK;
    }
    struct chk_lin_result alt;
    memset(&alt, 0, sizeof(alt));
    alt.engine = CHK_ENGINE_REVISION;
    rv_run_tent(h, max_rev, &alt, true, NULL);
    alt.steps += out->steps;
    if (alt.verdict != CHK_PASS) {
        out->steps = alt.steps;
        out->guessed_from = 0;
        chk_lin_result_close(&alt);
        chk_dup_applications(h, out);
        return FL_OK;
    }
    chk_lin_result_close(out);
    *out = alt;
    /* Judged without the watch events (with them it was undecided), the pass may have
     * guessed where an unknown-outcome op took effect: alt.guessed_from says from which
     * revision on its changes are one placement among several, which the watch checker
     * must not take as fact (a false "reliable" failure against the guess otherwise). */
    if (out->detail) {
        json_object_set_new(out->detail, "watch_reveals_ignored", json_integer(watch_reveals));
        if (out->guessed_from)
            json_object_set_new(out->detail, "guessed_from", json_integer(out->guessed_from));
    }
    chk_dup_applications(h, out);
    return FL_OK;
}
