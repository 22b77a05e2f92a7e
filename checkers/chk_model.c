/*
 * chk_model.c: the sequential etcd key-value model both linearizability engines
 * step (etcd-facts §A.7). A state is the current revision, the compacted revision
 * and one entry per key (value, version, create and mod revision). One step applies
 * a transaction: its compares pick the branch, the branch's sub-operations run in
 * order (reads see earlier writes of the same txn), and the revision advances by
 * exactly one when a put happened or a delete removed a key. The step then compares
 * what the model predicts with what the client saw: the branch, range counts and
 * key-values, deleted counts, prev kvs and the header revision.
 *
 * Compares follow etcd: a value compare against a missing key is false; version,
 * create and mod compares see 0 for a missing key. Nothing here allocates except the
 * value of an append (interned) and the change log when asked for.
 */
#include "checkers/chk_int.h"

#include <stdarg.h>

static void why(const struct chk_model *m, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void why(const struct chk_model *m, const char *fmt, ...)
{
    if (!m->why || m->why[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m->why, m->why_size, fmt, ap);
    va_end(ap);
}

static inline int32_t slot_of(const struct chk_model *m, int32_t key)
{
    return m->slot ? m->slot[key] : key;
}

bool chk_key_in_range(const struct chk_history *h, int32_t key, int32_t start, int32_t range_end)
{
    if (range_end == CHK_RANGE_ONE)
        return key == start;
    uint32_t r = h->key_rank[key];
    if (r < h->key_rank[start])
        return false;
    return range_end == CHK_RANGE_ALL || r < h->key_rank[range_end];
}

static int value_cmp_bytes(const struct chk_history *h, int32_t a, int32_t b)
{
    if (a == b)
        return 0;
    if (a == CHK_NIL)
        return -1;
    if (b == CHK_NIL)
        return 1;
    size_t na, nb;
    const uint8_t *pa = chk_value_bytes(h, a, &na), *pb = chk_value_bytes(h, b, &nb);
    int c = memcmp(pa, pb, FL_MIN(na, nb));
    if (c)
        return c < 0 ? -1 : 1;
    return na < nb ? -1 : na > nb;
}

static bool cmp_eval(const struct chk_model *m, const struct chk_kstate *st,
                     const struct chk_cmp *c)
{
    int32_t s = slot_of(m, c->key);
    static const struct chk_kent absent = {CHK_NIL, 0, 0, 0, 0};
    const struct chk_kent *e = s >= 0 ? &st->ent[s] : &absent;
    int r;
    switch (c->target) {
    case CHK_CMP_VALUE:
        if (e->value == CHK_NIL)
            return false;
        /* values are interned (one id per byte string): equality needs no bytes */
        if (c->result == CHK_CMP_EQ || c->result == CHK_CMP_NE)
            r = e->value != (int32_t)c->operand;
        else
            r = value_cmp_bytes(m->h, e->value, (int32_t)c->operand);
        break;
    case CHK_CMP_VERSION:
        r = e->version < c->operand ? -1 : e->version > c->operand;
        break;
    case CHK_CMP_CREATE:
        r = e->create_rev < c->operand ? -1 : e->create_rev > c->operand;
        break;
    default:
        r = e->mod_rev < c->operand ? -1 : e->mod_rev > c->operand;
        break;
    }
    switch (c->result) {
    case CHK_CMP_EQ:
        return r == 0;
    case CHK_CMP_NE:
        return r != 0;
    case CHK_CMP_GT:
        return r > 0;
    default:
        return r < 0;
    }
}

static bool kv_matches(const struct chk_model *m, const struct chk_kv *kv, int32_t key,
                       const struct chk_kent *e)
{
    if (kv->key != key || kv->value != e->value)
        return false;
    if (kv->version != CHK_NO_REV && kv->version != e->version)
        return false;
    if (m->check_revs) {
        if (kv->mod_rev != CHK_NO_REV && kv->mod_rev != e->mod_rev)
            return false;
        if (kv->create_rev != CHK_NO_REV && kv->create_rev != e->create_rev)
            return false;
    }
    return true;
}

static void emit_change(const struct chk_model *m, int64_t rev, int32_t key, int kind,
                        int32_t value, int32_t prev, const struct chk_kent *e)
{
    struct chk_change_buf *b = m->changes;
    FL_ASSERT(b != NULL);
    FL_GROW(b->v, b->cap, b->count + 1, 1024);
    struct chk_change *c = &b->v[b->count++];
    c->rev = rev;
    c->key = key;
    c->kind = (uint8_t)kind;
    c->value = value;
    c->prev_value = prev;
    c->create_rev = e ? e->create_rev : 0;
    c->version = e ? e->version : 0;
}

/* Logs a change when the caller asked for the log (the search never does). */
static inline void emit(const struct chk_model *m, int64_t rev, int32_t key, int kind,
                        int32_t value, int32_t prev, const struct chk_kent *e)
{
    if (m->changes)
        emit_change(m, rev, key, kind, value, prev, e);
}

/* Iterates the present keys of [key, range_end) in byte order; returns the count and
 * calls fn for each (fn may be NULL). */
struct range_it {
    const struct chk_model *m;
    struct chk_kstate *st;
    int32_t key, end;
    uint32_t rank, rank_end;
};

static void range_begin(struct range_it *it, const struct chk_model *m, struct chk_kstate *st,
                        int32_t key, int32_t end)
{
    const struct chk_history *h = m->h;
    it->m = m;
    it->st = st;
    it->key = key;
    it->end = end;
    it->rank = h->key_rank[key];
    if (end == CHK_RANGE_ONE)
        it->rank_end = it->rank + 1;
    else if (end == CHK_RANGE_ALL)
        it->rank_end = h->keys.count;
    else
        it->rank_end = h->key_rank[end];
}

/* Next present key id, or -1. */
static int32_t range_next(struct range_it *it, struct chk_kent **e)
{
    const struct chk_history *h = it->m->h;
    while (it->rank < it->rank_end) {
        int32_t k = (int32_t)h->key_order[it->rank++];
        int32_t s = slot_of(it->m, k);
        if (s >= 0 && it->st->ent[s].value != CHK_NIL) {
            *e = &it->st->ent[s];
            return k;
        }
    }
    return -1;
}

/* exact: a historical range is judged against st (m->hist_exact, and the op writes
 * nothing: engine 1 steps a read at the revision it asks, but a writing txn at its own
 * revision, where the state is not the one an earlier revision of it asks for). */
static bool sub_range(const struct chk_model *m, struct chk_kstate *st, const struct chk_sub *s,
                      bool judge, bool exact)
{
    if (!judge || !(s->flags & CHK_SUBF_RESULT_SET))
        return true;
    if (s->req_rev > 0 && s->req_rev != st->rev && m->check_revs) {
        if (s->req_rev > st->rev) {
            why(m, "range at future revision %lld answered at revision %lld", (long long)s->req_rev,
                (long long)st->rev);
            return false;
        }
        if (s->req_rev < st->compact_rev) { /* etcd: compacted below its compact revision */
            why(m, "range at revision %lld answered although compacted at %lld",
                (long long)s->req_rev, (long long)st->compact_rev);
            return false;
        }
        if (!exact)
            return true; /* the model keeps no history, like etcd's own */
    }
    struct range_it it;
    range_begin(&it, m, st, s->key, s->range_end);
    const struct chk_kv *kvs = m->h->kvs ? &m->h->kvs[s->kv_first] : NULL; /* not NULL + 0 */
    int64_t count = 0;
    struct chk_kent *e;
    int32_t k;
    while ((k = range_next(&it, &e)) >= 0) {
        if ((s->flags & CHK_SUBF_KVS_SET) && (s->limit == 0 || count < s->limit)) {
            if ((uint32_t)count >= s->kv_count || !kv_matches(m, &kvs[count], k, e)) {
                why(m, "read returned a different key-value than the state at revision %lld",
                    (long long)st->rev);
                return false;
            }
        }
        count++;
    }
    if ((s->flags & CHK_SUBF_KVS_SET) &&
        (uint64_t)s->kv_count != (uint64_t)(s->limit ? FL_MIN(count, s->limit) : count)) {
        why(m, "read returned %u key-values, the state at revision %lld has %lld", s->kv_count,
            (long long)st->rev, (long long)count);
        return false;
    }
    if ((s->flags & CHK_SUBF_COUNT_SET) && s->count != count) {
        why(m, "range count %lld, the state has %lld", (long long)s->count, (long long)count);
        return false;
    }
    return true;
}

void chk_append_memo_close(struct chk_append_memo *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof(*m));
}

static int32_t append_concat(const struct chk_model *m, int32_t prev, int32_t v)
{
    size_t na, nb = 0;
    const uint8_t *pa = chk_value_bytes(m->h, prev, &na);
    const uint8_t *pb = v == CHK_NIL ? (const uint8_t *)"" : chk_value_bytes(m->h, v, &nb);
    uint8_t small[4096]; /* porcupine kv appends grow values to ~1.5 KB */
    uint8_t *tmp = na + nb <= sizeof(small) ? small : fl_malloc(na + nb);
    memcpy(tmp, pa, na);
    memcpy(tmp + na, pb, nb);
    int32_t r = chk_intern_add(&m->h->values, tmp, na + nb);
    if (tmp != small)
        free(tmp);
    return r;
}

/* The value of prev ++ v, memoised. */
static int32_t append_value(const struct chk_model *m, int32_t prev, int32_t v)
{
    struct chk_append_memo *t = m->memo;
    if (!t)
        return append_concat(m, prev, v);
    if ((t->count + 1) * 2 > t->mask + 1) {
        uint32_t nsz = t->mask ? (t->mask + 1) * 2 : 1024;
        uint64_t *ok = t->keys;
        int32_t *ov = t->vals;
        uint32_t omask = t->mask;
        t->keys = fl_calloc(nsz, sizeof(uint64_t));
        t->vals = fl_malloc(nsz * sizeof(int32_t));
        t->mask = nsz - 1;
        for (uint32_t i = 0; ok && i <= omask; i++) {
            if (!ok[i])
                continue;
            uint32_t j = (uint32_t)(ok[i] * UINT64_C(0x9e3779b97f4a7c15) >> 40) & t->mask;
            while (t->keys[j])
                j = (j + 1) & t->mask;
            t->keys[j] = ok[i];
            t->vals[j] = ov[i];
        }
        free(ok);
        free(ov);
    }
    uint64_t key = (uint64_t)(uint32_t)(prev + 2) << 32 | (uint32_t)(v + 2);
    uint32_t j = (uint32_t)(key * UINT64_C(0x9e3779b97f4a7c15) >> 40) & t->mask;
    while (t->keys[j]) {
        if (t->keys[j] == key)
            return t->vals[j];
        j = (j + 1) & t->mask;
    }
    int32_t r = append_concat(m, prev, v);
    t->keys[j] = key;
    t->vals[j] = r;
    t->count++;
    return r;
}

static bool sub_put(const struct chk_model *m, struct chk_kstate *st, const struct chk_sub *s,
                    bool judge, int64_t new_rev)
{
    int32_t slot = slot_of(m, s->key);
    FL_ASSERT(slot >= 0);
    struct chk_kent *e = &st->ent[slot];
    bool ok = true;
    if (judge && (s->flags & CHK_SUBF_KVS_SET)) {
        const struct chk_kv *kvs = m->h->kvs ? &m->h->kvs[s->kv_first] : NULL; /* not NULL + 0 */
        if (e->value == CHK_NIL ? s->kv_count != 0
                                : (s->kv_count != 1 || !kv_matches(m, &kvs[0], s->key, e))) {
            why(m, "put's prev_kv differs from the state");
            ok = false;
        }
    }
    int32_t prev = e->value;
    int32_t v = s->value;
    if (s->kind == CHK_SUB_APPEND && prev != CHK_NIL)
        v = append_value(m, prev, v);
    if (m->plain_values) {
        e->create_rev = e->version = 1;
        new_rev = 1;
    } else if (prev == CHK_NIL) {
        e->create_rev = new_rev;
        e->version = 1;
    } else {
        e->version++;
    }
    e->mod_rev = new_rev;
    e->value = v;
    if (v == CHK_NIL) { /* put of "" where empty means absent */
        e->version = e->create_rev = e->mod_rev = 0;
    }
    /* the entry holds what was put, stamped with the new revision; a put that creates
     * the key starts its version at 1 and its create revision at the new one */
    FL_ASSERT(e->value == v && e->mod_rev == (v == CHK_NIL ? 0 : new_rev));
    FL_ASSERT(prev != CHK_NIL || v == CHK_NIL || (e->version == 1 && e->create_rev == new_rev));
    emit(m, new_rev, s->key, CHK_EV_PUT, v, prev, e);
    return ok;
}

static bool sub_delete(const struct chk_model *m, struct chk_kstate *st, const struct chk_sub *s,
                       bool judge, int64_t new_rev, int64_t *removed)
{
    struct range_it it;
    range_begin(&it, m, st, s->key, s->range_end);
    const struct chk_kv *kvs = m->h->kvs ? &m->h->kvs[s->kv_first] : NULL; /* not NULL + 0 */
    bool check_kvs = judge && (s->flags & CHK_SUBF_KVS_SET);
    bool ok = true;
    int64_t n = 0;
    struct chk_kent *e;
    int32_t k;
    while ((k = range_next(&it, &e)) >= 0) {
        if (check_kvs && ((uint32_t)n >= s->kv_count || !kv_matches(m, &kvs[n], k, e)))
            ok = false;
        int32_t prev = e->value;
        e->value = CHK_NIL;
        e->version = e->create_rev = e->mod_rev = 0;
        emit(m, new_rev, k, CHK_EV_DELETE, CHK_NIL, prev, NULL);
        n++;
    }
    /* a single-key delete removes that key at most */
    FL_ASSERT(s->range_end != CHK_RANGE_ONE || n <= 1);
    if (check_kvs && (uint64_t)n != s->kv_count)
        ok = false;
    if (!ok)
        why(m, "delete's prev_kvs differ from the state");
    if (judge && (s->flags & CHK_SUBF_COUNT_SET) && s->count != n) {
        why(m, "delete removed %lld keys, the state had %lld", (long long)s->count, (long long)n);
        ok = false;
    }
    *removed += n;
    return ok;
}

/* Does the branch write anything when applied to st? Used to know the new revision
 * before puts stamp it: a put always writes, a delete only if a key is present. */
static bool branch_writes(const struct chk_model *m, struct chk_kstate *st,
                          const struct chk_sub *subs, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        if (subs[i].kind == CHK_SUB_PUT || subs[i].kind == CHK_SUB_APPEND)
            return true;
        if (subs[i].kind == CHK_SUB_DELETE) {
            struct range_it it;
            struct chk_kent *e;
            range_begin(&it, m, st, subs[i].key, subs[i].range_end);
            if (range_next(&it, &e) >= 0)
                return true;
        }
    }
    return false;
}

static struct chk_step step_compact(const struct chk_model *m, struct chk_kstate *st,
                                    const struct chk_op *op)
{
    struct chk_step r = {true, false};
    int64_t c = op->compact_rev;
    bool can = c > st->compact_rev && c <= st->rev;
    if (op->status == CHK_ST_FAIL) {
        if (op->err == CHK_ERR_COMPACTED && m->check_revs && c > st->compact_rev) {
            why(m, "compact(%lld) said compacted; compacted only to %lld", (long long)c,
                (long long)st->compact_rev);
            r.legal = false;
        }
        if (op->err == CHK_ERR_FUTURE_REV && m->check_revs && c <= st->rev) {
            why(m, "compact(%lld) said future revision at revision %lld", (long long)c,
                (long long)st->rev);
            r.legal = false;
        }
        return r;
    }
    if (op->status == CHK_ST_OK && m->check_revs && !can) {
        why(m, "compact(%lld) succeeded at revision %lld, compacted %lld", (long long)c,
            (long long)st->rev, (long long)st->compact_rev);
        r.legal = false;
    }
    if (can)
        st->compact_rev = c;
    return r;
}

/* A failed read with a revision error: legal iff the error was right. */
static struct chk_step step_failed_read(const struct chk_model *m, struct chk_kstate *st,
                                        const struct chk_op *op)
{
    struct chk_step r = {true, false};
    if (!m->check_revs)
        return r;
    const struct chk_sub *subs = &m->h->subs[op->sub_first];
    for (uint32_t i = 0; i < op->then_count; i++) {
        if (subs[i].kind != CHK_SUB_RANGE || subs[i].req_rev <= 0)
            continue;
        if (op->err == CHK_ERR_COMPACTED && subs[i].req_rev > st->compact_rev &&
            m->h->compactions_known) {
            why(m, "read at %lld said compacted; compacted only to %lld",
                (long long)subs[i].req_rev, (long long)st->compact_rev);
            r.legal = false;
        }
        if (op->err == CHK_ERR_FUTURE_REV && subs[i].req_rev <= st->rev) {
            why(m, "read at %lld said future revision at revision %lld", (long long)subs[i].req_rev,
                (long long)st->rev);
            r.legal = false;
        }
    }
    return r;
}

static const struct chk_history *g_out_h;

static int outside_cmp(const void *a, const void *b)
{
    const struct chk_change *x = a, *y = b;
    if (x->rev != y->rev)
        return x->rev < y->rev ? -1 : 1;
    uint32_t rx = g_out_h->key_rank[x->key], ry = g_out_h->key_rank[y->key];
    if (rx != ry)
        return rx < ry ? -1 : 1;
    return (x->create_rev > y->create_rev) - (x->create_rev < y->create_rev);
}

struct chk_change *chk_outside_changes(const struct chk_history *h, uint32_t *count)
{
    struct chk_change *v = NULL;
    uint32_t n = 0;
    for (uint32_t i = 0; i < h->event_count; i++) {
        const struct chk_wevent *e = &h->events[i];
        if (e->kind == CHK_EV_PROGRESS || e->key < 0 || e->mod_rev < 2)
            continue;
        if (!v)
            v = fl_malloc(h->event_count * sizeof(*v));
        /* create_rev holds the event index while sorting: the first event wins */
        v[n++] = (struct chk_change){e->mod_rev,
                                     e->key,
                                     e->kind,
                                     e->value,
                                     CHK_NIL,
                                     (int64_t)i,
                                     e->version == CHK_NO_REV ? 0 : e->version};
    }
    g_out_h = h;
    if (n)
        qsort(v, n, sizeof(*v), outside_cmp);
    g_out_h = NULL;
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (k && v[k - 1].rev == v[i].rev && v[k - 1].key == v[i].key)
            continue;
        const struct chk_wevent *e = &h->events[v[i].create_rev];
        v[k] = v[i];
        v[k].create_rev = e->create_rev == CHK_NO_REV ? 0 : e->create_rev;
        k++;
    }
    *count = k;
    return v;
}

/* The state jumps from its revision to `to` over revisions written outside the
 * history, taking the content the outside changes show. */
static void outside_jump(const struct chk_model *m, struct chk_kstate *st, int64_t to)
{
    uint32_t a = 0, b = m->outside_count;
    while (a < b) {
        uint32_t mid = (a + b) / 2;
        if (m->outside[mid].rev <= st->rev)
            a = mid + 1;
        else
            b = mid;
    }
    for (; a < m->outside_count && m->outside[a].rev <= to; a++) {
        const struct chk_change *c = &m->outside[a];
        int32_t s = slot_of(m, c->key);
        if (s < 0)
            continue;
        struct chk_kent *e = &st->ent[s];
        if (c->kind == CHK_EV_DELETE) {
            memset(e, 0, sizeof(*e));
            e->value = CHK_NIL;
            continue;
        }
        bool was = e->value != CHK_NIL;
        e->version = c->version ? c->version : was ? e->version + 1 : 1;
        e->create_rev = c->create_rev ? c->create_rev : was ? e->create_rev : c->rev;
        e->mod_rev = c->rev;
        e->value = c->value;
    }
    st->rev = to;
}

void chk_model_jump(const struct chk_model *m, struct chk_kstate *st, int64_t to)
{
    FL_ASSERT(m->revs_open && to >= st->rev);
    outside_jump(m, st, to);
}

/* The sub-operations of the branch the response says the op took (then, when it has
 * no compares); *n their count. The caller checked that the branch is known. */
static const struct chk_sub *recorded_branch(const struct chk_history *h, const struct chk_op *op,
                                             uint32_t *n)
{
    FL_ASSERT(op->cmp_count == 0 || (op->flags & CHK_OPF_SUCCEEDED_SET));
    bool succ = op->cmp_count == 0 || (op->flags & CHK_OPF_SUCCEEDED);
    *n = succ ? op->then_count : op->else_count;
    return &h->subs[op->sub_first + (succ ? 0 : op->then_count)];
}

/* Does the recorded response say the op wrote nothing (a read, a delete of nothing)?
 * Then it sits at its header revision, after an outside write of that revision. */
static bool recorded_no_write(const struct chk_history *h, const struct chk_op *op)
{
    if (op->kind != CHK_OP_TXN)
        return true;
    if (!(op->flags & CHK_OPF_HAS_RESULT) ||
        (op->cmp_count && !(op->flags & CHK_OPF_SUCCEEDED_SET)))
        return false;
    uint32_t n;
    const struct chk_sub *subs = recorded_branch(h, op, &n);
    for (uint32_t i = 0; i < n; i++) {
        if (subs[i].kind == CHK_SUB_RANGE)
            continue;
        if (subs[i].kind != CHK_SUB_DELETE || !(subs[i].flags & CHK_SUBF_COUNT_SET) ||
            subs[i].count != 0)
            return false;
    }
    return true;
}

/* Does the recorded response say the op wrote (a put, or a delete that removed keys, in
 * the branch it says it took)? Then its header revision is its own, never outside. */
bool chk_model_recorded_write(const struct chk_history *h, const struct chk_op *op)
{
    if (op->kind != CHK_OP_TXN || !(op->flags & CHK_OPF_HAS_RESULT) ||
        (op->cmp_count && !(op->flags & CHK_OPF_SUCCEEDED_SET)))
        return false;
    uint32_t n;
    const struct chk_sub *subs = recorded_branch(h, op, &n);
    for (uint32_t i = 0; i < n; i++) {
        if (subs[i].kind == CHK_SUB_PUT || subs[i].kind == CHK_SUB_APPEND)
            return true;
        if (subs[i].kind == CHK_SUB_DELETE && (subs[i].flags & CHK_SUBF_COUNT_SET) &&
            subs[i].count > 0)
            return true;
    }
    return false;
}

bool chk_model_range_at(const struct chk_model *m, struct chk_kstate *st, const struct chk_sub *s)
{
    FL_ASSERT(s->kind == CHK_SUB_RANGE && s->req_rev == st->rev);
    return sub_range(m, st, s, true, true);
}

static struct chk_step model_step(const struct chk_model *m, struct chk_kstate *st,
                                  const struct chk_op *op)
{
    const struct chk_history *h = m->h;
    bool jump = m->revs_open && m->check_revs && op->status == CHK_ST_OK && op->rev != CHK_NO_REV;
    if (jump && op->rev - (recorded_no_write(h, op) ? 0 : 1) > st->rev)
        outside_jump(m, st, op->rev - (recorded_no_write(h, op) ? 0 : 1));
    if (op->kind == CHK_OP_COMPACT) {
        if (jump && op->rev > st->rev)
            outside_jump(m, st, op->rev);
        return step_compact(m, st, op);
    }
    if (op->status == CHK_ST_FAIL)
        return step_failed_read(m, st, op);
    struct chk_step r = {true, false};
    bool judge = op->status == CHK_ST_OK && (op->flags & CHK_OPF_HAS_RESULT);
    bool succ = true;
    for (uint32_t i = 0; i < op->cmp_count && succ; i++)
        succ = cmp_eval(m, st, &h->cmps[op->cmp_first + i]);
    if (judge && (op->flags & CHK_OPF_SUCCEEDED_SET) &&
        succ != ((op->flags & CHK_OPF_SUCCEEDED) != 0)) {
        why(m, "compare is %s in the state at revision %lld, the response says %s",
            succ ? "true" : "false", (long long)st->rev, succ ? "false" : "true");
        r.legal = false;
    }
    const struct chk_sub *subs = &h->subs[op->sub_first + (succ ? 0 : op->then_count)];
    uint32_t n = succ ? op->then_count : op->else_count;
    bool writes = branch_writes(m, st, subs, n);
    /* An op that writes nothing here sits at its header revision, after an outside write
     * of it; not one whose response says it wrote (fuzz: a delete answering 'deleted 1'
     * took a watch event's put at its own revision as outside content, and passed). */
    if (jump && !writes && !chk_model_recorded_write(h, op) && op->rev > st->rev)
        outside_jump(m, st, op->rev);
    int64_t new_rev = st->rev + 1;
    int64_t removed = 0;
    bool hist_read = false;
    for (uint32_t i = 0; i < n; i++) {
        const struct chk_sub *s = &subs[i];
        bool ok = true;
        if (s->kind == CHK_SUB_RANGE) {
            ok = sub_range(m, st, s, judge, m->hist_exact && !writes);
            hist_read |= s->req_rev > 0;
        } else if (s->kind == CHK_SUB_DELETE) {
            ok = sub_delete(m, st, s, judge, new_rev, &removed);
        } else {
            ok = sub_put(m, st, s, judge, new_rev);
        }
        r.legal = r.legal && ok;
    }
    if (writes) {
        if (m->check_revs || !m->plain_values)
            st->rev = new_rev;
        r.wrote = true;
    }
    /* The header revision is judged whenever it was recorded, results or not (fuzz: a
     * lease revoke, whose deletes are not recorded, answered at revision 3 after a put
     * at revision 4 had returned, and the search let it stand). */
    if (op->status == CHK_ST_OK && m->check_revs && op->rev != CHK_NO_REV &&
        !(hist_read && m->hist_exact && !writes) && op->rev != st->rev) {
        why(m, "response revision %lld, the model is at revision %lld", (long long)op->rev,
            (long long)st->rev);
        r.legal = false;
    }
    return r;
}

struct chk_step chk_model_step(const struct chk_model *m, struct chk_kstate *st,
                               const struct chk_op *op)
{
    int64_t rev0 = st->rev;
    struct chk_step r = model_step(m, st, op);
    /* revisions never go down (a write adds one, an outside jump goes up: the search's
     * revision horizon rests on it), a write that advanced it advanced it past rev0, and
     * nothing is compacted beyond the current revision */
    FL_ASSERT(st->rev >= rev0 && st->compact_rev <= st->rev);
    FL_ASSERT(!r.wrote || !(m->check_revs || !m->plain_values) || st->rev > rev0);
    return r;
}
