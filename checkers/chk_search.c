/*
 * chk_search.c: engine 2, the general linearizability search (Wing & Gong's
 * algorithm with Lowe's memoisation, as in porcupine and Horn's checker).
 *
 * Calls and returns form one doubly linked list in time order (at equal times calls
 * come first, so touching operations count as concurrent). The search walks the
 * list: at a call it tries to linearize that operation now (step the model; the
 * configuration (set of linearized ops, model state) must be new, else it was
 * already explored and failed), lifting the call and its return out of the list; at
 * a return of an operation not yet linearized it backtracks. An operation with
 * unknown outcome returns at +infinity: it may take effect at any point after its
 * call, or never (the search succeeds as soon as only such operations remain).
 *
 * With revisions, a history that is not revisions_complete lets a header revision
 * above the state's be explained by writes outside it (the state jumps there and takes
 * what watch events show of the revisions jumped over, else no modelled key changes
 * there), as engine 1 does; a historical read of a revision jumped over is judged
 * against that state (hists_judge), as engine 1 judges it at a revision no op claims.
 *
 * When every operation touches one key and the history carries no revisions, the
 * history is split per key (P-compositionality: linearizable iff every per-key
 * sub-history is) and each key is searched alone.
 *
 * Bounds: steps_max, mem_bytes_max (the cache) and should_stop give CHK_UNKNOWN.
 * On failure the deepest configuration reached is the explanation: its linearized
 * prefix, its model state, and the operations that could not be ordered next.
 */
#include "checkers/chk_int.h"
#include "harness/common/marker.h"

struct srch_entry {
    int32_t op;    /* index into the partition's op list */
    int32_t match; /* the other entry of the same op */
    int32_t prev, next;
    bool is_call;
};

/* A historical range (served at a revision above the one it asks): sub of op. */
struct srch_hist {
    int64_t rev;
    uint32_t op, sub;
};

static int srch_hist_cmp(const void *a, const void *b)
{
    const struct srch_hist *x = a, *y = b;
    if (x->rev != y->rev)
        return x->rev < y->rev ? -1 : 1;
    return x->op != y->op ? (x->op < y->op ? -1 : 1) : (x->sub > y->sub) - (x->sub < y->sub);
}

/* The answered historical ranges of ops (history op indexes), by the revision asked. */
static struct srch_hist *srch_hists(const struct chk_history *h, const uint32_t *order,
                                    uint32_t order_count, size_t *count)
{
    struct srch_hist *v = NULL;
    size_t n = 0, cap = 0;
    for (uint32_t i = 0; i < order_count; i++) {
        const struct chk_op *op = &h->ops[order[i]];
        if (op->status != CHK_ST_OK || op->kind != CHK_OP_TXN || op->rev == CHK_NO_REV)
            continue;
        for (uint32_t j = 0; j < (uint32_t)op->then_count + op->else_count; j++) {
            const struct chk_sub *sb = &h->subs[op->sub_first + j];
            if (sb->kind == CHK_SUB_RANGE && sb->req_rev > 0 && sb->req_rev < op->rev &&
                (sb->flags & CHK_SUBF_RESULT_SET)) {
                FL_GROW(v, cap, n + 1, 16);
                v[n++] = (struct srch_hist){sb->req_rev, order[i], op->sub_first + j};
            }
        }
    }
    if (n > 1)
        qsort(v, n, sizeof(*v), srch_hist_cmp);
    *count = n;
    return v;
}

struct srch {
    struct chk_history *h;
    const struct chk_limits *lim;
    struct chk_model model;
    const uint32_t *ops; /* history op indexes */
    uint32_t n;
    struct srch_entry *e; /* 2n entries + head at index 2n */
    uint32_t words;       /* bitset words */
    uint64_t *bits;
    uint64_t *zob; /* per op hash contribution */
    size_t st_size;
    /* What the cache keeps of a state: everything, or (values-only model) just the
     * value of each slot, which is all that can differ. */
    size_t key_size;
    uint32_t slots;
    bool values_key;
    uint8_t *keybuf;
    uint8_t *stack_states; /* n saved states */
    int32_t *stack_entry;
    uint32_t depth;
    /* cache: records of [hash][bitset][state] */
    uint8_t *rec;
    size_t rec_size, rec_count, rec_cap;
    uint64_t mem_bytes; /* the cache's records and table, set where they grow */
    uint64_t *table;
    uint32_t table_mask;
    /* explanation */
    uint32_t best_depth;
    uint64_t *best_bits;
    uint8_t *best_state;
    uint64_t steps;
    /* Symmetry: twin[i] is the previous op (by call) with exactly the same request and
     * unknown outcome, or -1. Such ops are interchangeable, so the search only
     * linearizes a twin after its predecessor. */
    int32_t *twin;
    /* Reads: ro[i] when op i never changes a state (a txn of ranges only, or a failed
     * op). forced[d]: the op at stack depth d is such a read, legal where it was put,
     * which is then the only choice tried there (see srch_backtrack). */
    uint8_t *ro, *forced;
    bool reads_first;
    /* A plain read of one key (read_filter): rslot[i] its slot, rval[i] the value it
     * saw (CHK_NIL: absent); rslot -1 for every other op. */
    int32_t *rslot, *rval;
    uint64_t steps_max, mem_max; /* the limits (lim's, or the defaults) */
    uint64_t budget;             /* this round's step budget, 0: none (see chk_lin_search) */
    bool budget_hit;
    /* the search position, so that a search stopped by its budget resumes */
    uint8_t *state, *scratch;
    uint32_t definite_left;
    uint64_t zacc;
    int32_t cur;
    uint32_t *own_ops;
    int32_t *own_slot;
    struct chk_append_memo memo;
    /* What the ops still to linearize can observe of each slot (see srch_observers):
     * op i's observations are look[look_first[i] .. look_first[i + 1]), each a slot
     * times 4 plus a class; look_left[slot * 4 + class] counts those of ops not on the
     * stack. The cache key keeps of a slot only what its class shows. */
    uint32_t *look_first, *look;
    uint32_t *look_left;
    /* per value id: anonymous (see anon_values); NULL when none is. Borrowed. */
    const uint8_t *anon;
    /* The revision horizon (with revisions): need[i] the highest state revision op i can
     * be linearized at (its header revision, one less when its response says it wrote;
     * INT64_MAX when it has none); hz a min-tree over the ops not on the stack, leaves
     * at hz_size + i. A state above the root's value has no completion. NULL without
     * revisions. */
    int64_t *need, *hz;
    uint32_t hz_size;
    struct srch_pins *pins;  /* see srch_pins_open; NULL without revisions */
    struct srch_hist *hists; /* the historical ranges of the ops, by revision (see hists_hold) */
    size_t hist_count;
    bool pins_built;
    bool strict_hist;
    uint8_t *jump_state; /* room for a state at a revision jumped over (hists_judge) */
};

/* What an op can observe of a key: its presence, its value, or everything (value,
 * version, create and mod revisions). */
enum { LOOK_PRESENCE = 1, LOOK_VALUE = 2, LOOK_FULL = 3 };

/* When an op returns for the search: an op of unknown outcome may take effect at any
 * later time, even after the client stopped waiting (a timed-out etcd request can
 * still be applied), so it never returns. */
static inline int64_t op_ret(const struct chk_op *op)
{
    return op->status == CHK_ST_UNKNOWN ? CHK_NEVER : op->return_ns;
}

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= UINT64_C(0xff51afd7ed558ccd);
    x ^= x >> 33;
    x *= UINT64_C(0xc4ceb9fe1a85ec53);
    x ^= x >> 33;
    return x;
}

static const struct chk_history *g_sort_h;
static const uint32_t *g_sort_ops;

/* Entries in time order; calls before returns at equal times; then op order. */
static int entry_cmp(const void *a, const void *b)
{
    const struct srch_entry *x = a, *y = b;
    const struct chk_op *ox = &g_sort_h->ops[g_sort_ops[x->op]];
    const struct chk_op *oy = &g_sort_h->ops[g_sort_ops[y->op]];
    int64_t tx = x->is_call ? ox->call_ns : op_ret(ox);
    int64_t ty = y->is_call ? oy->call_ns : op_ret(oy);
    if (tx != ty)
        return tx < ty ? -1 : 1;
    if (x->is_call != y->is_call)
        return x->is_call ? -1 : 1;
    if (x->op != y->op)
        return x->op < y->op ? -1 : 1;
    return 0;
}

static void srch_build_list(struct srch *s)
{
    uint32_t n = s->n;
    s->e = fl_calloc(2 * n + 1, sizeof(*s->e));
    for (uint32_t i = 0; i < n; i++) {
        s->e[2 * i] = (struct srch_entry){(int32_t)i, 0, 0, 0, true};
        s->e[2 * i + 1] = (struct srch_entry){(int32_t)i, 0, 0, 0, false};
    }
    g_sort_h = s->h;
    g_sort_ops = s->ops;
    qsort(s->e, 2 * n, sizeof(*s->e), entry_cmp);
    /* the candidate order the search walks: strictly by (time, call first, op) */
    for (uint32_t i = 1; i < 2 * n; i++)
        FL_ASSERT(entry_cmp(&s->e[i - 1], &s->e[i]) < 0);
    g_sort_h = NULL;
    int32_t *call_at = fl_malloc((n + 1) * sizeof(int32_t));
    for (uint32_t i = 0; i < 2 * n; i++) {
        if (s->e[i].is_call)
            call_at[s->e[i].op] = (int32_t)i;
    }
    for (uint32_t i = 0; i < 2 * n; i++) {
        if (!s->e[i].is_call) {
            int32_t c = call_at[s->e[i].op];
            s->e[i].match = c;
            s->e[c].match = (int32_t)i;
        }
        s->e[i].prev = i == 0 ? (int32_t)(2 * n) : (int32_t)i - 1;
        s->e[i].next = i + 1 == 2 * n ? -1 : (int32_t)i + 1;
    }
    s->e[2 * n].next = n ? 0 : -1;
    s->e[2 * n].prev = -1;
    free(call_at);
}

static void lift(struct srch *s, int32_t c)
{
    struct srch_entry *e = s->e;
    e[e[c].prev].next = e[c].next;
    if (e[c].next >= 0)
        e[e[c].next].prev = e[c].prev;
    int32_t r = e[c].match;
    e[e[r].prev].next = e[r].next;
    if (e[r].next >= 0)
        e[e[r].next].prev = e[r].prev;
}

static void unlift(struct srch *s, int32_t c)
{
    struct srch_entry *e = s->e;
    int32_t r = e[c].match;
    e[e[r].prev].next = r;
    if (e[r].next >= 0)
        e[e[r].next].prev = r;
    e[e[c].prev].next = c;
    if (e[c].next >= 0)
        e[e[c].next].prev = c;
}

/* Inserts (bits, state) unless present; returns false when it was already there. */
/* The cache key of a state (into s->keybuf). */
/* What of a slot's entry the ops left can observe (0: nothing). */
static inline int slot_look(const struct srch *s, uint32_t slot)
{
    const uint32_t *c = &s->look_left[(size_t)slot * 4];
    return c[LOOK_FULL]       ? LOOK_FULL
           : c[LOOK_VALUE]    ? LOOK_VALUE
           : c[LOOK_PRESENCE] ? LOOK_PRESENCE
                              : 0;
}

/* A present key's value where only its presence can be observed. */
#define PRESENT_MARK INT32_MAX

/* The value of an entry as the cache keeps it, given what can observe it. */
static inline int32_t masked_value(int look, int32_t value)
{
    if (!look || look >= LOOK_VALUE)
        return look ? value : CHK_NIL;
    return value == CHK_NIL ? CHK_NIL : PRESENT_MARK;
}

/* The cache key of a state (into s->keybuf): what the ops not yet linearized can
 * observe of it. Two states that agree there have the same futures: an op's legality
 * and its effect on what the later ops observe depend only on what it observes itself
 * (a put's new version on the old one only where a later op sees versions), and the
 * set of what is observed only shrinks as ops are linearized. So the keys (mod
 * revisions, values) of keys nobody reads again do not tell configurations apart:
 * gap_demand_present's eight unknown puts of unread keys gave 8! states. */
static const uint8_t *state_key(struct srch *s, const uint8_t *state)
{
    const struct chk_kstate *st = (const struct chk_kstate *)state;
    if (s->values_key) {
        int32_t *k = (int32_t *)s->keybuf;
        for (uint32_t i = 0; i < s->slots; i++)
            k[i] = masked_value(slot_look(s, i), st->ent[i].value);
        return s->keybuf;
    }
    struct chk_kstate *k = (struct chk_kstate *)s->keybuf;
    k->rev = st->rev;
    k->compact_rev = st->compact_rev;
    for (uint32_t i = 0; i < s->slots; i++) {
        int look = slot_look(s, i);
        if (look == LOOK_FULL) {
            k->ent[i] = st->ent[i];
            continue;
        }
        memset(&k->ent[i], 0, sizeof(k->ent[i]));
        k->ent[i].value = masked_value(look, st->ent[i].value);
    }
    return s->keybuf;
}

/* Op o leaves (dir -1: linearized) or rejoins (+1: popped) the ops still to come. */
static inline void look_take(struct srch *s, uint32_t o, int dir)
{
    for (uint32_t x = s->look_first[o]; x < s->look_first[o + 1]; x++) {
        uint32_t *c = &s->look_left[s->look[x]];
        FL_ASSERT(dir > 0 || *c > 0);
        *c += (uint32_t)dir;
    }
}

static uint64_t key_hash(const struct srch *s, const uint8_t *key)
{
    if (s->key_size == 4) {
        uint32_t v;
        memcpy(&v, key, 4);
        return mix64(v + UINT64_C(0x51afd7ed558ccd));
    }
    return fl_hash64(key, s->key_size);
}

/* Inserts (bits, key) unless present; returns false when it was already there. A
 * table slot holds the record number and the hash's high half, so a probe rarely
 * touches a record that cannot match. */
static bool cache_add(struct srch *s, uint64_t hv, const uint8_t *key)
{
    if ((s->rec_count + 1) * 2 > (size_t)s->table_mask + 1) {
        uint32_t nsz = s->table_mask ? (s->table_mask + 1) * 2 : 256;
        free(s->table);
        s->table = fl_calloc(nsz, sizeof(uint64_t));
        s->table_mask = nsz - 1;
        for (size_t i = 0; i < s->rec_count; i++) {
            uint64_t rh;
            memcpy(&rh, s->rec + i * s->rec_size, 8);
            uint32_t k = (uint32_t)rh & s->table_mask;
            while (s->table[k])
                k = (k + 1) & s->table_mask;
            s->table[k] = (rh >> 32) << 32 | (uint64_t)(i + 1);
        }
        s->mem_bytes = (uint64_t)s->rec_cap * s->rec_size + (uint64_t)(s->table_mask + 1) * 8;
    }
    size_t bits_bytes = s->words * 8;
    uint32_t k = (uint32_t)hv & s->table_mask;
    uint64_t tag = (hv >> 32) << 32;
    while (s->table[k]) {
        uint64_t t = s->table[k];
        if ((t & ~UINT64_C(0xffffffff)) == tag) {
            const uint8_t *r = s->rec + (size_t)((uint32_t)t - 1) * s->rec_size;
            if (memcmp(r + 8, s->bits, bits_bytes) == 0 &&
                memcmp(r + 8 + bits_bytes, key, s->key_size) == 0)
                return false;
        }
        k = (k + 1) & s->table_mask;
    }
    if (s->rec_count == s->rec_cap) {
        s->rec_cap = fl_grow_cap(s->rec_cap, s->rec_count + 1, 1024, s->rec_size);
        s->rec = fl_realloc(s->rec, s->rec_cap * s->rec_size);
        s->mem_bytes = (uint64_t)s->rec_cap * s->rec_size + (uint64_t)(s->table_mask + 1) * 8;
    }
    uint8_t *r = s->rec + s->rec_count * s->rec_size;
    memcpy(r, &hv, 8);
    memcpy(r + 8, s->bits, bits_bytes);
    memcpy(r + 8 + bits_bytes, key, s->key_size);
    s->table[k] = tag | (uint64_t)(++s->rec_count);
    return true;
}

static inline bool over_limits(struct srch *s)
{
    uint64_t steps_max = s->steps_max, mem_max = s->mem_max;
    if (s->steps > steps_max)
        return true;
    if (s->budget && s->steps > s->budget) {
        s->budget_hit = true;
        return true;
    }
    if (s->mem_bytes > mem_max)
        return true;
    if ((s->steps & 4095) == 0 && s->lim && s->lim->should_stop &&
        s->lim->should_stop(s->lim->stop_arg))
        return true;
    return false;
}

/* Sets leaf i of the horizon tree to v and mends its ancestors. */
static void hz_set(struct srch *s, uint32_t i, int64_t v)
{
    uint32_t x = s->hz_size + i;
    s->hz[x] = v;
    for (x /= 2; x >= 1; x /= 2)
        s->hz[x] = FL_MIN(s->hz[2 * x], s->hz[2 * x + 1]);
}

/* The least need of the ops not on the stack other than op i (i not on it either). */
static int64_t hz_min_without(const struct srch *s, uint32_t i)
{
    int64_t m = INT64_MAX;
    for (uint32_t x = s->hz_size + i; x > 1; x /= 2)
        m = FL_MIN(m, s->hz[x ^ 1]);
    return m;
}

/* Would linearizing op o, leaving state next, overshoot an op still to come? Revisions
 * never go down (a write adds one, an outside jump goes up), and an acknowledged op with
 * header revision R leaves the state at R: after one with need N below the state's
 * revision nothing can follow. */
static inline bool hz_overshoot(const struct srch *s, uint32_t o, const uint8_t *next)
{
    if (!s->hz)
        return false;
    FL_ASSERT(s->hz[s->hz_size + o] == s->need[o]); /* o is still to come */
    return ((const struct chk_kstate *)next)->rev > hz_min_without(s, o);
}

/* Builds need[] and the tree (every op still to come). */
static void hz_open(struct srch *s)
{
    const struct chk_history *h = s->h;
    s->need = fl_malloc((s->n + 1) * sizeof(int64_t));
    s->hz_size = 1;
    while (s->hz_size < s->n)
        s->hz_size *= 2;
    s->hz = fl_malloc(2 * (size_t)s->hz_size * sizeof(int64_t));
    for (uint32_t x = 0; x < 2 * s->hz_size; x++)
        s->hz[x] = INT64_MAX;
    for (uint32_t i = 0; i < s->n; i++) {
        const struct chk_op *op = &h->ops[s->ops[i]];
        bool judged = op->status == CHK_ST_OK && op->kind == CHK_OP_TXN && op->rev != CHK_NO_REV;
        s->need[i] = !judged ? INT64_MAX : op->rev - chk_model_recorded_write(h, op);
        s->hz[s->hz_size + i] = s->need[i];
    }
    for (uint32_t x = s->hz_size - 1; x >= 1; x--)
        s->hz[x] = FL_MIN(s->hz[2 * x], s->hz[2 * x + 1]);
}

/*
 * Pins (with revisions): a key-value an acknowledged op still to come will see (a read
 * at the current revision, a prev kv) shows the key's mod revision M and create
 * revision C. Revisions never go down and a write of the key sets its mod revision to
 * the new revision, so once the state's revision is at or past M the key must already
 * be present with mod revision M: it can never get there later. Likewise C, unless a
 * watch event may bring the key's create revision from outside (revs_open's jumps take
 * it from the event): such create pins are not kept. A configuration that breaks a
 * pin of an op still to come has no completion.
 */
enum { PIN_MOD = 0, PIN_CREATE };

struct srch_pin {
    int64_t m;     /* the revision shown */
    int64_t until; /* a historical read's revision (the pin holds in [m, until]), else INT64_MAX */
    uint32_t op;   /* the search's op index */
    uint32_t slot; /* the key's slot */
    uint8_t kind;  /* PIN_MOD / PIN_CREATE */
};

struct srch_pins {
    struct srch_pin *v; /* by (slot, m, op) */
    uint32_t count;
    uint32_t *slot_first; /* slots + 1: the pins of slot k are [slot_first[k], slot_first[k + 1]) */
    uint32_t *op_first, *op_pin; /* the pins of op i: op_pin[op_first[i] .. op_first[i + 1]) */
    uint32_t *by_m;              /* pin indexes by (m, index) */
    int64_t *tree;               /* min-tree of m over the pins of ops still to come */
    uint32_t size;               /* leaves at size + pin index */
};

static int pin_cmp(const void *a, const void *b)
{
    const struct srch_pin *x = a, *y = b;
    if (x->slot != y->slot)
        return x->slot < y->slot ? -1 : 1;
    if (x->m != y->m)
        return x->m < y->m ? -1 : 1;
    if (x->op != y->op)
        return x->op < y->op ? -1 : 1;
    return (x->kind > y->kind) - (x->kind < y->kind);
}

static const struct srch_pin *g_pin_v;

static int pin_m_cmp(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    if (g_pin_v[x].m != g_pin_v[y].m)
        return g_pin_v[x].m < g_pin_v[y].m ? -1 : 1;
    return (x > y) - (x < y);
}

/* Could an outside change (a watch event the model jumps over) give key its create
 * revision c? */
static bool outside_creates(const struct chk_model *m, int32_t key, int64_t c)
{
    for (uint32_t i = 0; i < m->outside_count; i++) {
        if (m->outside[i].key == key && m->outside[i].create_rev == c)
            return true;
    }
    return false;
}

/* Adds the pins of one kv seen by op i. */
static void pins_add_kv(const struct srch *s, struct srch_pins *p, uint32_t *cap, uint32_t i,
                        const struct chk_kv *kv, int64_t until)
{
    if (until != INT64_MAX && (kv->mod_rev > until || kv->create_rev > until))
        return;
    int32_t sl = s->model.slot ? s->model.slot[kv->key] : kv->key;
    if (sl < 0)
        return;
    FL_ASSERT((uint32_t)sl < s->slots);
    if (kv->mod_rev != CHK_NO_REV && kv->mod_rev > 1) {
        FL_GROW(p->v, *cap, p->count + 1, 64);
        p->v[p->count++] = (struct srch_pin){kv->mod_rev, until, i, (uint32_t)sl, PIN_MOD};
    }
    if (kv->create_rev != CHK_NO_REV && kv->create_rev > 1 &&
        !(s->model.revs_open && outside_creates(&s->model, kv->key, kv->create_rev))) {
        FL_GROW(p->v, *cap, p->count + 1, 64);
        p->v[p->count++] = (struct srch_pin){kv->create_rev, until, i, (uint32_t)sl, PIN_CREATE};
    }
}

/* Does sub b of an acknowledged op show key-values of the state the op meets (or makes)
 * at its own point: a read at the current revision, prev kvs? */
static bool sub_shows_state(const struct chk_sub *b)
{
    if (!(b->flags & CHK_SUBF_KVS_SET) || !(b->flags & CHK_SUBF_RESULT_SET))
        return false;
    if (b->kind == CHK_SUB_RANGE)
        return b->req_rev == 0;
    return (b->kind == CHK_SUB_PUT || b->kind == CHK_SUB_DELETE) && (b->flags & CHK_SUBF_PREV_KV);
}

/* The pins of op i (acknowledged, results recorded, its branch known). */
static void pins_of_op(const struct srch *s, struct srch_pins *p, uint32_t *cap, uint32_t i)
{
    const struct chk_history *h = s->h;
    const struct chk_op *op = &h->ops[s->ops[i]];
    if (op->status != CHK_ST_OK || op->kind != CHK_OP_TXN || !(op->flags & CHK_OPF_HAS_RESULT) ||
        (op->cmp_count && !(op->flags & CHK_OPF_SUCCEEDED_SET)))
        return;
    bool succ = op->cmp_count == 0 || (op->flags & CHK_OPF_SUCCEEDED);
    uint32_t first = op->sub_first + (succ ? 0 : op->then_count);
    uint32_t n = succ ? op->then_count : op->else_count;
    for (uint32_t j = 0; j < n; j++) {
        const struct chk_sub *b = &h->subs[first + j];
        int64_t until = INT64_MAX;
        if (s->strict_hist && b->kind == CHK_SUB_RANGE && b->req_rev > 0 && b->req_rev < op->rev &&
            (b->flags & CHK_SUBF_KVS_SET) && (b->flags & CHK_SUBF_RESULT_SET))
            until = b->req_rev;
        else if (!sub_shows_state(b))
            continue;
        for (uint32_t k = 0; k < b->kv_count; k++)
            pins_add_kv(s, p, cap, i, &h->kvs[b->kv_first + k], until);
    }
}

/* Sets pin x's leaf (m, or INT64_MAX once its op is linearized) and mends the tree. */
static void pin_set(struct srch_pins *p, uint32_t x, int64_t v)
{
    uint32_t t = p->size + x;
    p->tree[t] = v;
    for (t /= 2; t >= 1; t /= 2)
        p->tree[t] = FL_MIN(p->tree[2 * t], p->tree[2 * t + 1]);
}

/* The indexes: per slot, per op, by m, and the tree (every op still to come). */
static void pins_index(const struct srch *s, struct srch_pins *p)
{
    qsort(p->v, p->count, sizeof(*p->v), pin_cmp);
    p->slot_first = fl_calloc(s->slots + 2, sizeof(uint32_t));
    p->op_first = fl_calloc(s->n + 2, sizeof(uint32_t));
    p->op_pin = fl_malloc((p->count + 1) * sizeof(uint32_t));
    p->by_m = fl_malloc((p->count + 1) * sizeof(uint32_t));
    for (uint32_t x = 0; x < p->count; x++) {
        p->slot_first[p->v[x].slot + 1]++;
        p->op_first[p->v[x].op + 1]++;
        p->by_m[x] = x;
    }
    for (uint32_t k = 0; k < s->slots; k++)
        p->slot_first[k + 1] += p->slot_first[k];
    for (uint32_t i = 0; i < s->n; i++)
        p->op_first[i + 1] += p->op_first[i];
    uint32_t *fill = fl_memdup(p->op_first, (s->n + 1) * sizeof(uint32_t));
    for (uint32_t x = 0; x < p->count; x++)
        p->op_pin[fill[p->v[x].op]++] = x;
    free(fill);
    g_pin_v = p->v;
    qsort(p->by_m, p->count, sizeof(uint32_t), pin_m_cmp);
    g_pin_v = NULL;
    p->size = 1;
    while (p->size < p->count)
        p->size *= 2;
    p->tree = fl_malloc(2 * (size_t)p->size * sizeof(int64_t));
    for (uint32_t t = 0; t < 2 * p->size; t++)
        p->tree[t] = INT64_MAX;
    for (uint32_t x = 0; x < p->count; x++)
        p->tree[p->size + x] = p->v[x].m;
    for (uint32_t t = p->size - 1; t >= 1; t--)
        p->tree[t] = FL_MIN(p->tree[2 * t], p->tree[2 * t + 1]);
}

/* Builds the pins (after the model's outside changes are set); NULL when none. */
static struct srch_pins *srch_pins_open(const struct srch *s)
{
    struct srch_pins *p = fl_calloc(1, sizeof(*p));
    uint32_t cap = 0;
    for (uint32_t i = 0; i < s->n; i++)
        pins_of_op(s, p, &cap, i);
    if (!p->count) {
        free(p->v);
        free(p);
        return NULL;
    }
    pins_index(s, p);
    return p;
}

static void srch_pins_close(struct srch_pins *p)
{
    if (!p)
        return;
    free(p->v);
    free(p->slot_first);
    free(p->op_first);
    free(p->op_pin);
    free(p->by_m);
    free(p->tree);
    free(p);
}

/* Op i leaves (gone) or rejoins the ops still to come: its pins follow. */
static inline void pins_take(struct srch *s, uint32_t i, bool gone)
{
    struct srch_pins *p = s->pins;
    if (!p)
        return;
    for (uint32_t x = p->op_first[i]; x < p->op_first[i + 1]; x++) {
        uint32_t k = p->op_pin[x];
        pin_set(p, k, gone ? INT64_MAX : p->v[k].m);
    }
}

static inline bool pin_holds(const struct srch_pin *pn, const struct chk_kent *e, int64_t rev)
{
    return rev > pn->until ||
           (e->value != CHK_NIL && (pn->kind == PIN_MOD ? e->mod_rev : e->create_rev) == pn->m);
}

/* Do the pins of slot k's tree range [lo, hi) under node t (covering [a, b)) with m <= rev
 * hold in entry e (op o's own pins left out: it is being linearized)? */
static bool pins_slot_hold(const struct srch_pins *p, uint32_t t, uint32_t a, uint32_t b,
                           uint32_t lo, uint32_t hi, int64_t rev, const struct chk_kent *e,
                           uint32_t o)
{
    if (b <= lo || a >= hi || p->tree[t] > rev)
        return true;
    if (b - a == 1) {
        const struct srch_pin *pn = &p->v[a];
        return pn->op == o || pin_holds(pn, e, rev);
    }
    uint32_t mid = a + (b - a) / 2;
    return pins_slot_hold(p, 2 * t, a, mid, lo, hi, rev, e, o) &&
           pins_slot_hold(p, 2 * t + 1, mid, b, lo, hi, rev, e, o);
}

/* Linearizing op o takes state cur to next: do the pins of the ops still to come hold in
 * next? Those of a slot o changed, and those that became due (cur's revision < m <=
 * next's); the others held in cur and still do. */
static bool pins_hold(const struct srch *s, uint32_t o, const uint8_t *cur, const uint8_t *next)
{
    const struct srch_pins *p = s->pins;
    if (!p)
        return true;
    const struct chk_kstate *a = (const struct chk_kstate *)cur,
                            *b = (const struct chk_kstate *)next;
    for (uint32_t k = 0; k < s->slots; k++) {
        if (!memcmp(&a->ent[k], &b->ent[k], sizeof(a->ent[k])))
            continue;
        if (!pins_slot_hold(p, 1, 0, p->size, p->slot_first[k], p->slot_first[k + 1], b->rev,
                            &b->ent[k], o))
            return false;
    }
    if (b->rev == a->rev)
        return true;
    uint32_t lo = 0, hi = p->count;
    while (lo < hi) { /* the first pin with m > cur's revision */
        uint32_t mid = (lo + hi) / 2;
        if (p->v[p->by_m[mid]].m <= a->rev)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (uint32_t x = lo; x < p->count && p->v[p->by_m[x]].m <= b->rev; x++) {
        const struct srch_pin *pn = &p->v[p->by_m[x]];
        if (pn->op != o && p->tree[p->size + p->by_m[x]] != INT64_MAX &&
            !pin_holds(pn, &b->ent[pn->slot], b->rev))
            return false;
    }
    return true;
}

/*
 * A step takes state cur to next, past the revisions (cur's, next's]. The historical
 * ranges asking one of them are judged against the state there: at next's revision,
 * next itself; at a revision the step jumped over (revs_open: writes outside the
 * history), cur with what the outside changes show up to it, as the model's jump makes
 * it and as engine 1 replays a revision no op claims (content from watch events, else
 * no modelled key changed). The state at those revisions is fixed from then on (a
 * range's op, answered above the revision it asks, is still to come when the state
 * passes it), so a step that fails one fails whatever follows. tmp: a state's room.
 * Returns the index of the first range that differs, or count when all hold.
 */
static size_t hists_judge(const struct chk_model *m, const struct srch_hist *hs, size_t count,
                          const struct chk_kstate *cur, struct chk_kstate *next,
                          struct chk_kstate *tmp, size_t st_size)
{
    size_t lo = 0, hi = count;
    while (lo < hi) { /* the first asking a revision above cur's */
        size_t mid = (lo + hi) / 2;
        if (hs[mid].rev <= cur->rev)
            lo = mid + 1;
        else
            hi = mid;
    }
    bool jumped = false;
    for (size_t x = lo; x < count && hs[x].rev <= next->rev; x++) {
        struct chk_kstate *at = next;
        if (hs[x].rev < next->rev) {
            /* only an outside jump passes a revision without landing on it */
            FL_ASSERT(m->revs_open);
            if (!jumped)
                memcpy(tmp, cur, st_size);
            jumped = true;
            if (tmp->rev < hs[x].rev) /* on from the last revision judged */
                chk_model_jump(m, tmp, hs[x].rev);
            at = tmp;
        }
        FL_ASSERT(at->rev == hs[x].rev);
        if (!chk_model_range_at(m, at, &m->h->subs[hs[x].sub]))
            return x;
    }
    return count;
}

/* Linearizing an op takes state cur to next: do the historical ranges of the revisions
 * it passes hold (see hists_judge)? */
static bool hists_hold(struct srch *s, const uint8_t *cur, uint8_t *next)
{
    const struct chk_kstate *a = (const struct chk_kstate *)cur;
    struct chk_kstate *b = (struct chk_kstate *)next;
    if (!s->hist_count || b->rev == a->rev)
        return true;
    return hists_judge(&s->model, s->hists, s->hist_count, a, b, (struct chk_kstate *)s->jump_state,
                       s->st_size) == s->hist_count;
}

/* Keeps the deepest configuration reached, for the explanation of a failure. */
static inline void srch_note_best(struct srch *s, const uint8_t *state)
{
    if (s->depth > s->best_depth) {
        s->best_depth = s->depth;
        memcpy(s->best_bits, s->bits, s->words * 8);
        memcpy(s->best_state, state, s->st_size);
    }
}

/* Backtracks: the op on top of the stack is un-linearized (its call and return go back
 * into the list) and its state restored; returns the entry after its call. */
static inline int32_t srch_pop(struct srch *s, uint8_t *state, uint64_t *zacc,
                               uint32_t *definite_left)
{
    FL_ASSERT(s->depth > 0);
    int32_t c = s->stack_entry[--s->depth];
    memcpy(state, s->stack_states + (size_t)s->depth * s->st_size, s->st_size);
    uint32_t o = (uint32_t)s->e[c].op;
    s->bits[o / 64] &= ~(UINT64_C(1) << (o % 64));
    look_take(s, o, 1);
    if (s->hz)
        hz_set(s, o, s->need[o]);
    pins_take(s, o, false);
    *zacc ^= s->zob[o];
    *definite_left += op_ret(&s->h->ops[s->ops[o]]) != CHK_NEVER;
    unlift(s, c);
    return s->e[c].next;
}

/*
 * The configuration on top failed: pops it. A configuration entered by a forced read
 * failed with it: if the read is legal and changes nothing in a state, any
 * linearization from the configuration below can put the read first (every op left
 * is concurrent with it there, and it changes no state the others see), so that one
 * failed as well and is popped too. Returns the entry to go on from, or -1 when the
 * empty configuration failed (no linearization).
 */
static int32_t srch_backtrack(struct srch *s, uint8_t *state, uint64_t *zacc,
                              uint32_t *definite_left)
{
    for (;;) {
        if (s->depth == 0)
            return -1;
        bool forced = s->forced[s->depth - 1];
        int32_t next = srch_pop(s, state, zacc, definite_left);
        if (!forced)
            return next;
    }
}

/* Ops the search does not try at this entry: a twin before its predecessor, a read of
 * another value than the state's (read_filter: illegal here). */
static inline bool srch_skip(const struct srch *s, const struct srch_entry *en,
                             const uint8_t *state)
{
    int32_t tw = s->twin[en->op];
    if (tw >= 0 && !(s->bits[tw / 64] & (UINT64_C(1) << (tw % 64))))
        return true;
    int32_t rs = s->rslot[en->op];
    return rs >= 0 && ((const struct chk_kstate *)state)->ent[rs].value != s->rval[en->op];
}

/* Linearizes the op of call entry c (its bit already set, the configuration new):
 * the state becomes next, the op goes on the stack and out of the list. */
static inline void srch_push(struct srch *s, int32_t c, uint8_t *state, const uint8_t *next,
                             bool forced, uint64_t *zacc, uint32_t *definite_left)
{
    uint32_t o = (uint32_t)s->e[c].op;
    FL_ASSERT(s->depth < s->n && (s->bits[o / 64] & (UINT64_C(1) << (o % 64))));
    memcpy(s->stack_states + (size_t)s->depth * s->st_size, state, s->st_size);
    s->forced[s->depth] = forced;
    s->stack_entry[s->depth++] = c;
    memcpy(state, next, s->st_size);
    *zacc ^= s->zob[o];
    if (s->hz)
        hz_set(s, o, INT64_MAX);
    pins_take(s, o, true);
    lift(s, c);
    *definite_left -= op_ret(&s->h->ops[s->ops[o]]) != CHK_NEVER;
    srch_note_best(s, state);
}

/* Runs the search; returns CHK_PASS / CHK_FAIL / CHK_UNKNOWN. */
static int srch_run(struct srch *s)
{
    uint8_t *state = s->state, *scratch = s->scratch;
    uint32_t definite_left = s->definite_left;
    uint64_t zacc = s->zacc;
    int verdict = CHK_PASS;
    int32_t head = (int32_t)(2 * s->n);
    if (s->model.check_revs && !s->pins_built) { /* after search_whole set the outside changes */
        s->pins = srch_pins_open(s);
        s->hists = srch_hists(s->h, s->ops, s->n, &s->hist_count);
        s->pins_built = true;
    }
    int32_t cur = s->cur;
    s->budget_hit = false;
    while (definite_left > 0) {
        s->steps++;
        if (over_limits(s)) {
            verdict = CHK_UNKNOWN;
            break;
        }
        /* the frontier: cur is an entry still in the list, the stack holds at most
         * every op, and the definite ops left are those not on it */
        FL_ASSERT(cur >= 0 && (uint32_t)cur < 2 * s->n);
        FL_ASSERT(s->depth <= s->n && definite_left <= s->n - s->depth);
        struct srch_entry *en = &s->e[cur];
        /* at a return, the first unlinearized op returned: none fits here */
        bool back = !en->is_call;
        if (en->is_call && !srch_skip(s, en, state)) {
            const struct chk_op *op = &s->h->ops[s->ops[en->op]];
            memcpy(scratch, state, s->st_size);
            struct chk_step st = chk_model_step(&s->model, (struct chk_kstate *)scratch, op);
            uint32_t o = (uint32_t)en->op;
            if (st.legal && !hz_overshoot(s, o, scratch) && pins_hold(s, o, state, scratch) &&
                hists_hold(s, state, scratch)) {
                s->bits[o / 64] |= UINT64_C(1) << (o % 64);
                look_take(s, o, -1);
                const uint8_t *key = state_key(s, scratch);
                uint64_t hv = mix64((zacc ^ s->zob[o]) + key_hash(s, key));
                bool forced = s->reads_first && s->ro[o];
                /* a read changes nothing: the state it leaves is the one it met */
                FL_ASSERT(!forced || !memcmp(scratch, state, s->st_size));
                if (cache_add(s, hv, key)) {
                    srch_push(s, cur, state, scratch, forced, &zacc, &definite_left);
                    cur = s->e[head].next;
                    continue;
                }
                s->bits[o / 64] &= ~(UINT64_C(1) << (o % 64));
                look_take(s, o, 1);
                back = forced; /* explored with the read already, and failed: so did this */
            }
        }
        if (!back) {
            cur = en->next;
            continue;
        }
        cur = srch_backtrack(s, state, &zacc, &definite_left);
        if (cur < 0) {
            verdict = CHK_FAIL; /* the empty configuration failed */
            break;
        }
    }
    s->cur = cur;
    s->zacc = zacc;
    s->definite_left = definite_left;
    return verdict;
}

static uint64_t op_signature(const struct chk_history *h, const struct chk_op *op)
{
    uint64_t x = mix64(op->kind + 1) ^ mix64((uint64_t)chk_op_compact_rev(op) + 7);
    x = mix64(x ^ ((uint64_t)op->status << 8 | (uint64_t)op->err << 16 | op->flags) ^
              (uint64_t)op->rev);
    for (uint32_t i = 0; i < op->cmp_count; i++) {
        const struct chk_cmp *c = &h->cmps[op->cmp_first + i];
        x = mix64(x ^ ((uint64_t)c->key << 32 | (uint64_t)c->target << 8 | c->result));
        x = mix64(x ^ (uint64_t)c->operand);
    }
    x = mix64(x ^ op->then_count ^ ((uint64_t)op->else_count << 16));
    for (uint32_t i = 0; i < (uint32_t)op->then_count + op->else_count; i++) {
        const struct chk_sub *b = &h->subs[op->sub_first + i];
        x = mix64(x ^ ((uint64_t)b->kind << 40 | (uint64_t)(uint32_t)b->key));
        x = mix64(x ^ ((uint64_t)(uint32_t)b->range_end << 32 | (uint32_t)b->value));
        x = mix64(x ^ (uint64_t)b->req_rev ^ ((uint64_t)b->limit << 20));
        x = mix64(x ^ (uint64_t)b->count ^ ((uint64_t)b->flags << 56) ^
                  ((uint64_t)b->kv_count << 40));
        for (uint32_t k = 0; k < b->kv_count; k++) {
            const struct chk_kv *kv = &h->kvs[b->kv_first + k];
            x = mix64(x ^ ((uint64_t)(uint32_t)kv->key << 32 | (uint32_t)kv->value));
            x = mix64(x ^ (uint64_t)kv->mod_rev ^ ((uint64_t)kv->version << 24));
        }
    }
    return x;
}

/* Same request and same recorded outcome: two such ops are interchangeable. */
static bool same_op(const struct chk_history *h, const struct chk_op *a, const struct chk_op *b)
{
    if (a->kind != b->kind || chk_op_compact_rev(a) != chk_op_compact_rev(b) ||
        a->cmp_count != b->cmp_count || a->then_count != b->then_count ||
        a->else_count != b->else_count || a->status != b->status || a->err != b->err ||
        a->flags != b->flags || a->rev != b->rev)
        return false;
    for (uint32_t i = 0; i < a->cmp_count; i++) {
        const struct chk_cmp *x = &h->cmps[a->cmp_first + i], *y = &h->cmps[b->cmp_first + i];
        if (x->key != y->key || x->target != y->target || x->result != y->result ||
            x->operand != y->operand)
            return false;
    }
    for (uint32_t i = 0; i < (uint32_t)a->then_count + a->else_count; i++) {
        const struct chk_sub *x = &h->subs[a->sub_first + i], *y = &h->subs[b->sub_first + i];
        if (x->kind != y->kind || x->key != y->key || x->range_end != y->range_end ||
            x->value != y->value || x->req_rev != y->req_rev || x->limit != y->limit ||
            x->flags != y->flags || x->count != y->count || x->kv_count != y->kv_count)
            return false;
        for (uint32_t k = 0; k < x->kv_count; k++) {
            const struct chk_kv *p = &h->kvs[x->kv_first + k], *q = &h->kvs[y->kv_first + k];
            if (p->key != q->key || p->value != q->value || p->mod_rev != q->mod_rev ||
                p->create_rev != q->create_rev || p->version != q->version)
                return false;
        }
    }
    return true;
}

/* An unknown op that only puts keys no op of the search observes (its "then" branch
 * with no compares): the number of its puts, else 0. Two such ops with as many puts
 * are interchangeable whatever they write: each makes one revision, and nothing that
 * can be observed differs (gap_create_exact's unknown puts of unread keys p0..p7,
 * whose subsets the cache told apart). */
static uint32_t blind_puts(const struct srch *s, const struct chk_op *op)
{
    const struct chk_history *h = s->h;
    if (op->status != CHK_ST_UNKNOWN || op->kind != CHK_OP_TXN || op->cmp_count || op->else_count ||
        !op->then_count)
        return 0;
    for (uint32_t j = 0; j < op->then_count; j++) {
        const struct chk_sub *b = &h->subs[op->sub_first + j];
        if (b->kind != CHK_SUB_PUT || (b->flags & CHK_SUBF_PREV_KV) ||
            b->range_end != CHK_RANGE_ONE)
            return 0;
        int32_t sl = s->model.slot ? s->model.slot[b->key] : b->key;
        if (sl >= 0 && slot_look(s, (uint32_t)sl))
            return 0;
    }
    return op->then_count;
}

/* An unknown op that only puts keys, each with an anonymous value (see
 * anon_values): the number of its puts, else 0. */
static uint32_t anon_puts(const struct srch *s, const struct chk_op *op)
{
    const struct chk_history *h = s->h;
    if (!s->anon || op->status != CHK_ST_UNKNOWN || op->kind != CHK_OP_TXN || op->cmp_count ||
        op->else_count || !op->then_count)
        return 0;
    for (uint32_t j = 0; j < op->then_count; j++) {
        const struct chk_sub *b = &h->subs[op->sub_first + j];
        if (b->kind != CHK_SUB_PUT || (b->flags & CHK_SUBF_PREV_KV) ||
            b->range_end != CHK_RANGE_ONE || b->value < 0 || !s->anon[b->value])
            return 0;
    }
    return op->then_count;
}

/* The keys an anonymous put op writes, in order, as one number. */
static uint64_t anon_signature(const struct chk_history *h, const struct chk_op *op)
{
    uint64_t x = mix64(UINT64_C(0xa207) + op->then_count);
    for (uint32_t j = 0; j < op->then_count; j++)
        x = mix64(x ^ (uint32_t)h->subs[op->sub_first + j].key);
    return x;
}

/* Two anonymous put ops that write the same keys in the same order. */
static bool anon_same_keys(const struct chk_history *h, const struct chk_op *a,
                           const struct chk_op *b)
{
    if (a->then_count != b->then_count)
        return false;
    for (uint32_t j = 0; j < a->then_count; j++) {
        if (h->subs[a->sub_first + j].key != h->subs[b->sub_first + j].key)
            return false;
    }
    return true;
}

/* Which rule makes two ops interchangeable (see srch_twins). */
enum { TWIN_SAME = 0, TWIN_BLIND, TWIN_ANON };

/* Op's twin class: its kind and a signature (equal for every op of the class). */
static uint64_t twin_class(const struct srch *s, const struct chk_op *op, int *kind)
{
    uint32_t nb = blind_puts(s, op);
    if (nb) {
        *kind = TWIN_BLIND;
        return mix64(UINT64_C(0xb11d) + nb);
    }
    if (anon_puts(s, op)) {
        *kind = TWIN_ANON;
        return anon_signature(s->h, op);
    }
    *kind = TWIN_SAME;
    return op_signature(s->h, op);
}

/* Whether b is in a's class (kind: a's). */
static bool twin_equal(const struct srch *s, int kind, const struct chk_op *a,
                       const struct chk_op *b)
{
    switch (kind) {
    case TWIN_BLIND:
        return blind_puts(s, b) == blind_puts(s, a);
    case TWIN_ANON:
        return !blind_puts(s, b) && anon_puts(s, b) && anon_same_keys(s->h, a, b);
    default:
        return !blind_puts(s, b) && !anon_puts(s, b) && same_op(s->h, a, b);
    }
}

/*
 * Symmetry: ops with the same request and the same recorded outcome are
 * interchangeable when one's window contains the other's positions: if A is called
 * no later and returns no later than B, any linearization with B before A stays one
 * when the two swap. So each op is linked to the previous identical op in call order
 * when that one returns no later (unknown outcomes return at +infinity), and the
 * search only linearizes an op after the op it is linked to. Links form chains that
 * are monotone in both call and return, which keeps the argument valid for the whole
 * chain.
 *
 * Two more classes are interchangeable without being identical: unknown puts of keys
 * nobody observes (blind_puts, by their number of puts), and unknown puts of the same
 * keys whose values are anonymous (anon_puts): no recorded result, compare operand or
 * watch event shows such a value, no other op writes it, and its key has no append
 * and no ordering compare of values. Swapping two such ops A and B in a linearization
 * (or putting A where B was, when A is not in it) renames A's values to B's and back
 * in every state until the key is written again; every judgement of the model is the
 * same under that renaming (a read or a compare sees an anonymous value only as "not
 * the one recorded"; a put, a delete and the revision do not depend on the value), so
 * the result is a linearization too. Chaos seed 2893's six unknown puts of key1 (and
 * those of key0, key2..key4) are such: only their number and positions matter.
 */
static void srch_twins(struct srch *s)
{
    const struct chk_history *h = s->h;
    s->twin = fl_malloc((s->n + 1) * sizeof(int32_t));
    int32_t *last_of = fl_malloc((s->n + 1) * sizeof(int32_t));
    uint64_t *sig = fl_malloc((s->n + 1) * sizeof(uint64_t));
    uint32_t nl = 0;
    /* entries are in time order: walk the calls in that order */
    for (uint32_t i = 0; i < 2 * s->n; i++) {
        const struct srch_entry *e = &s->e[i];
        if (!e->is_call)
            continue;
        s->twin[e->op] = -1;
        const struct chk_op *op = &h->ops[s->ops[e->op]];
        int kind;
        uint64_t g = twin_class(s, op, &kind);
        uint32_t k;
        for (k = 0; k < nl; k++) {
            if (sig[k] == g && twin_equal(s, kind, op, &h->ops[s->ops[last_of[k]]]))
                break;
        }
        if (k < nl) {
            const struct chk_op *prev = &h->ops[s->ops[last_of[k]]];
            /* a twin is called no later than the op it precedes */
            FL_ASSERT(last_of[k] != e->op && prev->call_ns <= op->call_ns);
            if (op_ret(prev) <= op_ret(op))
                s->twin[e->op] = last_of[k];
            last_of[k] = e->op;
        } else {
            sig[nl] = g;
            last_of[nl++] = e->op;
        }
    }
    free(last_of);
    free(sig);
}

static void srch_close(struct srch *s)
{
    free(s->state);
    free(s->scratch);
    free(s->jump_state);
    free(s->keybuf);
    free(s->own_ops);
    free(s->own_slot);
    free(s->look_first);
    free(s->look);
    free(s->look_left);
    free(s->need);
    free(s->hz);
    srch_pins_close(s->pins);
    free(s->hists);
    chk_append_memo_close(&s->memo);
    free(s->twin);
    free(s->ro);
    free(s->forced);
    free(s->rslot);
    free(s->rval);
    free(s->e);
    free(s->bits);
    free(s->zob);
    free(s->stack_states);
    free(s->stack_entry);
    free(s->rec);
    free(s->table);
    free(s->best_bits);
    free(s->best_state);
}

static bool best_has(const struct srch *s, uint32_t i)
{
    return (s->best_bits[i / 64] & (UINT64_C(1) << (i % 64))) != 0;
}

/* The unlinearized op of the deepest configuration that returns first: it cannot be
 * ordered (UINT32_MAX when every op left never returns). */
static uint32_t explain_blocked(const struct srch *s, int64_t *first_ret)
{
    const struct chk_history *h = s->h;
    *first_ret = CHK_NEVER;
    uint32_t blocked = UINT32_MAX;
    for (uint32_t i = 0; i < s->n; i++) {
        const struct chk_op *op = &h->ops[s->ops[i]];
        if (!best_has(s, i) && op_ret(op) < *first_ret) {
            *first_ret = op_ret(op);
            blocked = i;
        }
    }
    FL_ASSERT(blocked == UINT32_MAX || (blocked < s->n && !best_has(s, blocked)));
    return blocked;
}

/* The ops it competes with (called before it returned), and the linearized prefix. */
static void explain_ops(const struct srch *s, json_t *d, uint32_t blocked, int64_t first_ret)
{
    const struct chk_history *h = s->h;
    json_t *unord = json_array();
    uint32_t listed = 0;
    for (uint32_t i = 0; i < s->n && blocked != UINT32_MAX && listed < 12; i++) {
        const struct chk_op *op = &h->ops[s->ops[i]];
        if (best_has(s, i) || (i != blocked && op->call_ns > first_ret))
            continue;
        json_array_append_new(unord, chk_json_op(h, op));
        listed++;
    }
    json_object_set_new(d, "unordered_ops", unord);
    json_t *prefix = json_array();
    uint32_t k = 0;
    for (uint32_t i = 0; i < s->n; i++) {
        if (!best_has(s, i))
            continue;
        if (++k > 200)
            break;
        json_array_append_new(prefix, json_integer(h->ops[s->ops[i]].op_id));
    }
    /* the prefix is exactly the deepest configuration's linearized set */
    FL_ASSERT(k > 200 || k == s->best_depth);
    json_object_set_new(d, "prefix_op_ids", prefix);
}

/* The model state of the deepest configuration: revision and present keys (50 at most). */
static json_t *explain_state(const struct srch *s)
{
    const struct chk_history *h = s->h;
    const struct chk_kstate *st = (const struct chk_kstate *)s->best_state;
    json_t *state = json_object();
    json_object_set_new(state, "revision", json_integer(st->rev));
    json_t *keys = json_object();
    for (uint32_t r = 0; r < h->keys.count && json_object_size(keys) < 50; r++) {
        int32_t k = (int32_t)h->key_order[r];
        int32_t sl = s->model.slot ? s->model.slot[k] : k;
        if (sl < 0 || st->ent[sl].value == CHK_NIL)
            continue;
        FL_ASSERT((uint32_t)sl < s->slots);
        size_t kn;
        const uint8_t *kp = chk_key_bytes(h, k, &kn);
        char kbuf[128];
        snprintf(kbuf, sizeof(kbuf), "%.*s", (int)FL_MIN(kn, 120), (const char *)kp);
        json_t *kv = json_object();
        json_object_set_new(kv, "value", chk_json_value(h, st->ent[sl].value));
        json_object_set_new(kv, "version", json_integer(st->ent[sl].version));
        if (s->model.check_revs)
            json_object_set_new(kv, "mod_revision", json_integer(st->ent[sl].mod_rev));
        json_object_set_new(keys, kbuf, kv);
    }
    json_object_set_new(state, "keys", keys);
    return state;
}

/* Explains a failed search in out->detail / out->reason: the deepest configuration
 * reached (its prefix and model state) and the op that could not be ordered next. */
static void srch_explain(struct srch *s, struct chk_lin_result *out, int32_t part_key)
{
    struct chk_history *h = s->h;
    FL_ASSERT(s->best_depth < s->n); /* a failed search never linearized everything */
    json_t *d = json_object();
    json_object_set_new(d, "engine", json_string("search"));
    if (part_key >= 0)
        json_object_set_new(d, "key", chk_json_key(h, part_key));
    json_object_set_new(d, "prefix_length", json_integer(s->best_depth));
    int64_t first_ret;
    uint32_t blocked = explain_blocked(s, &first_ret);
    explain_ops(s, d, blocked, first_ret);
    json_object_set_new(d, "state", explain_state(s));
    struct fl_buf t;
    fl_buf_init(&t);
    if (blocked != UINT32_MAX)
        chk_op_text(h, &h->ops[s->ops[blocked]], &t);
    snprintf(out->reason, sizeof(out->reason),
             "no linearization: after %u of %u operations%s, %s (client %d) cannot be ordered",
             s->best_depth, s->n, part_key >= 0 ? " on its key" : "", fl_buf_cstr(&t),
             blocked != UINT32_MAX ? h->ops[s->ops[blocked]].client : -1);
    fl_buf_close(&t);
    json_decref(out->detail);
    out->detail = d;
}

/* Does anything in the history look at versions or create/mod revisions? */
static bool history_observes_meta(const struct chk_history *h)
{
    for (uint32_t i = 0; i < h->kv_count; i++) {
        if (h->kvs[i].version != CHK_NO_REV || h->kvs[i].mod_rev != CHK_NO_REV ||
            h->kvs[i].create_rev != CHK_NO_REV)
            return true;
    }
    for (uint32_t i = 0; i < h->cmp_count; i++) {
        const struct chk_cmp *c = &h->cmps[i];
        if (c->target != CHK_CMP_VALUE &&
            (c->operand != 0 || (c->result != CHK_CMP_EQ && c->result != CHK_CMP_NE)))
            return true;
    }
    return false;
}

/* Does the op leave every state as it found it? A txn of ranges only, or a failed op
 * (judged for its error, applied nowhere); not one whose header revision may make
 * the state jump over outside writes (the caller excludes revs_open). */
static bool op_reads_only(const struct chk_history *h, const struct chk_op *op)
{
    if (op->kind != CHK_OP_TXN)
        return false;
    if (op->status == CHK_ST_FAIL)
        return true;
    for (uint32_t i = 0; i < (uint32_t)op->then_count + op->else_count; i++) {
        if (h->subs[op->sub_first + i].kind != CHK_SUB_RANGE)
            return false;
    }
    return true;
}

/*
 * A read of one key at the current revision whose result gives its key-values: in a
 * state where the key's value is not the one it saw (or the key's presence differs),
 * sub_range finds it illegal, so the search skips it without a model step (most of
 * the steps of a read-heavy search are reads tried where they do not fit). Sets
 * *slot (-1: no such read) and *value. The filter only ever rejects what the model
 * rejects; whatever passes it is stepped in full.
 */
static void read_filter(const struct chk_history *h, const struct chk_model *m,
                        const struct chk_op *op, int32_t *slot, int32_t *value)
{
    *slot = -1;
    *value = CHK_NIL;
    if (op->kind != CHK_OP_TXN || op->status != CHK_ST_OK || !(op->flags & CHK_OPF_HAS_RESULT) ||
        op->cmp_count != 0 || op->then_count != 1 || op->else_count != 0)
        return;
    const struct chk_sub *b = &h->subs[op->sub_first];
    uint8_t need = CHK_SUBF_RESULT_SET | CHK_SUBF_KVS_SET;
    if (b->kind != CHK_SUB_RANGE || b->range_end != CHK_RANGE_ONE || (b->flags & need) != need ||
        b->req_rev > 0 || b->limit < 0)
        return;
    int32_t sl = m->slot ? m->slot[b->key] : b->key;
    if (sl < 0)
        return;
    /* present: legal needs kvs[0] to carry the state's value; absent: no kvs */
    *value = b->kv_count ? h->kvs[b->kv_first].value : CHK_NIL;
    *slot = sl;
}

/* What a range sub-operation observes of its keys: a single-key read at the current
 * revision that saw the key absent, its presence; one that saw it without revisions,
 * its value; anything else (revisions shown, several keys, a limit, a count, a
 * historical revision, no recorded result), everything. */
static int range_look(const struct chk_history *h, const struct chk_op *op, const struct chk_sub *b)
{
    uint8_t need = CHK_SUBF_RESULT_SET | CHK_SUBF_KVS_SET;
    if (op->status != CHK_ST_OK || b->range_end != CHK_RANGE_ONE || (b->flags & need) != need ||
        (b->flags & CHK_SUBF_COUNT_SET) || b->req_rev != 0 || b->limit != 0 || b->kv_count > 1)
        return LOOK_FULL;
    if (b->kv_count == 0)
        return LOOK_PRESENCE;
    const struct chk_kv *kv = &h->kvs[b->kv_first];
    bool revs =
        kv->mod_rev != CHK_NO_REV || kv->create_rev != CHK_NO_REV || kv->version != CHK_NO_REV;
    return revs ? LOOK_FULL : LOOK_VALUE;
}

/* What a sub-operation observes of its keys (0: nothing; a put without prev_kv only
 * writes, and a put's effect on a later read's version is that read's observation). */
static int sub_look(const struct chk_history *h, const struct chk_op *op, const struct chk_sub *b)
{
    switch (b->kind) {
    case CHK_SUB_RANGE:
        return range_look(h, op, b);
    case CHK_SUB_PUT:
        return (b->flags & CHK_SUBF_PREV_KV) ? LOOK_FULL : 0;
    case CHK_SUB_DELETE: /* whether it deletes (its count, and the revision) */
        return (b->flags & CHK_SUBF_PREV_KV) ? LOOK_FULL : LOOK_PRESENCE;
    default:
        return LOOK_FULL; /* an append's result is the old value's */
    }
}

/* Adds observation look of every key in [key, range_end) that has a slot. */
static void look_add(struct srch *s, uint32_t *cap, uint32_t *n, int32_t key, int32_t range_end,
                     int look)
{
    const struct chk_history *h = s->h;
    uint32_t lo = h->key_rank[key];
    uint32_t hi = range_end == CHK_RANGE_ONE   ? lo + 1
                  : range_end == CHK_RANGE_ALL ? h->keys.count
                                               : h->key_rank[range_end];
    for (uint32_t r = lo; r < hi; r++) {
        int32_t k = (int32_t)h->key_order[r];
        int32_t sl = s->model.slot ? s->model.slot[k] : k;
        if (sl < 0)
            continue;
        FL_ASSERT((uint32_t)sl < s->slots && look >= LOOK_PRESENCE && look <= LOOK_FULL);
        FL_GROW(s->look, *cap, *n + 1, 64);
        s->look[(*n)++] = (uint32_t)sl * 4 + (uint32_t)look;
    }
}

/* Op i's observations: its compares (a value compare sees the value), its
 * sub-operations of both branches (sub_look); a compaction, every key wholly. */
static void op_looks(struct srch *s, const struct chk_op *op, uint32_t *cap, uint32_t *n)
{
    const struct chk_history *h = s->h;
    if (op->kind != CHK_OP_TXN) {
        if (h->keys.count)
            look_add(s, cap, n, (int32_t)h->key_order[0], CHK_RANGE_ALL, LOOK_FULL);
        return;
    }
    for (uint32_t j = 0; j < op->cmp_count; j++) {
        const struct chk_cmp *c = &h->cmps[op->cmp_first + j];
        look_add(s, cap, n, c->key, CHK_RANGE_ONE,
                 c->target == CHK_CMP_VALUE ? LOOK_VALUE : LOOK_FULL);
    }
    for (uint32_t j = 0; j < (uint32_t)op->then_count + op->else_count; j++) {
        const struct chk_sub *b = &h->subs[op->sub_first + j];
        int look = sub_look(h, op, b);
        if (look)
            look_add(s, cap, n, b->key, b->range_end, look);
    }
}

/* Builds every op's observations and the counts of them (no op linearized yet). */
static void srch_observers(struct srch *s)
{
    uint32_t cap = 0, n = 0;
    s->look_first = fl_malloc((s->n + 1) * sizeof(uint32_t));
    for (uint32_t i = 0; i < s->n; i++) {
        s->look_first[i] = n;
        op_looks(s, &s->h->ops[s->ops[i]], &cap, &n);
    }
    s->look_first[s->n] = n;
    s->look_left = fl_calloc((size_t)s->slots * 4 + 1, sizeof(uint32_t));
    for (uint32_t x = 0; x < n; x++) {
        FL_ASSERT(s->look[x] / 4 < s->slots);
        s->look_left[s->look[x]]++;
    }
}

/* Searches one partition (ops), keys mapped through slot (NULL: all keys). */
/* A search over ops (copied) with keys mapped through slot (copied; NULL: all keys),
 * ready to run. Free with srch_close + free. */
static struct srch *srch_open(struct chk_history *h, const struct chk_limits *lim,
                              const uint32_t *ops, uint32_t n, const int32_t *slot, uint32_t slots,
                              bool check_revs, const uint8_t *anon)
{
    struct srch *sp = fl_calloc(1, sizeof(*sp));
    struct srch *s = sp;
    s->h = h;
    s->lim = lim;
    s->anon = anon;
    s->steps_max = lim && lim->steps_max ? lim->steps_max : UINT64_C(50000000);
    s->mem_max = lim && lim->mem_bytes_max ? lim->mem_bytes_max : UINT64_C(512) << 20;
    s->own_ops = fl_memdup(ops, (n + 1) * sizeof(uint32_t));
    s->ops = s->own_ops;
    s->n = n;
    s->model.h = h;
    s->model.check_revs = check_revs;
    s->model.plain_values = !check_revs && !history_observes_meta(h);
    if (slot) {
        s->own_slot = fl_memdup(slot, (h->keys.count + 1) * sizeof(int32_t));
        s->model.slot = s->own_slot;
    }
    s->model.memo = &s->memo;
    s->words = (n + 63) / 64;
    s->bits = fl_calloc(s->words + 1, 8);
    s->best_bits = fl_calloc(s->words + 1, 8);
    s->zob = fl_malloc((n + 1) * 8);
    for (uint32_t i = 0; i < n; i++)
        s->zob[i] = mix64(UINT64_C(0x9e3779b97f4a7c15) * (i + 1));
    s->st_size = chk_kstate_size(slots);
    s->slots = slots;
    s->values_key = s->model.plain_values && !check_revs;
    s->key_size = s->values_key ? slots * sizeof(int32_t) : s->st_size;
    s->keybuf = fl_calloc(1, s->key_size + 8);
    s->rec_size = 8 + s->words * 8 + s->key_size;
    s->stack_states = fl_malloc((size_t)(n + 1) * s->st_size);
    s->stack_entry = fl_malloc((n + 1) * sizeof(int32_t));
    s->best_state = fl_calloc(1, s->st_size);
    s->state = fl_calloc(1, s->st_size);
    s->scratch = fl_calloc(1, s->st_size);
    s->jump_state = fl_calloc(1, s->st_size);
    struct chk_kstate *st = (struct chk_kstate *)s->state;
    st->rev = 1;
    for (uint32_t i = 0; i < slots; i++)
        st->ent[i].value = CHK_NIL;
    memcpy(s->best_state, s->state, s->st_size);
    srch_build_list(s);
    srch_observers(s); /* before srch_twins: blind puts are judged by observers */
    srch_twins(s);
    if (check_revs)
        hz_open(s);
    s->reads_first = true;
    s->ro = fl_malloc(n + 1);
    s->forced = fl_calloc(n + 1, 1);
    s->rslot = fl_malloc((n + 1) * sizeof(int32_t));
    s->rval = fl_malloc((n + 1) * sizeof(int32_t));
    for (uint32_t i = 0; i < n; i++) {
        s->ro[i] = op_reads_only(h, &h->ops[ops[i]]);
        read_filter(h, &s->model, &h->ops[ops[i]], &s->rslot[i], &s->rval[i]);
        FL_ASSERT(s->rslot[i] < 0 || ((uint32_t)s->rslot[i] < slots && s->ro[i]));
    }
    for (uint32_t i = 0; i < n; i++)
        s->definite_left += op_ret(&h->ops[ops[i]]) != CHK_NEVER;
    s->cur = s->e[2 * n].next;
    return sp;
}

/* The linearization of a search that passed: the ops on its stack, in order. */
static void srch_order(const struct srch *s, struct chk_lin_result *out)
{
    free(out->order);
    out->order = fl_malloc((s->depth + 1) * sizeof(uint32_t));
    for (uint32_t i = 0; i < s->depth; i++)
        out->order[i] = s->ops[s->e[s->stack_entry[i]].op];
    out->order_count = s->depth;
}

/* Which ops take part: ok ops, unknown writes, failed ops with a revision error. */
static bool op_included(const struct chk_history *h, const struct chk_op *op)
{
    if (op->flags & CHK_OPF_SERIALIZABLE)
        return false;
    if (op->status == CHK_ST_OK)
        return true;
    if (op->status == CHK_ST_FAIL)
        return op->err == CHK_ERR_COMPACTED || op->err == CHK_ERR_FUTURE_REV;
    if (op->kind == CHK_OP_COMPACT)
        return true;
    const struct chk_sub *subs = &h->subs[op->sub_first];
    for (uint32_t i = 0; i < (uint32_t)op->then_count + op->else_count; i++) {
        if (subs[i].kind != CHK_SUB_RANGE)
            return true;
    }
    return false; /* an unknown read has no effect */
}

/* The single key an op touches, or -1. */
static int32_t op_single_key(const struct chk_history *h, const struct chk_op *op)
{
    if (op->kind != CHK_OP_TXN)
        return -1;
    int32_t key = -1;
    for (uint32_t i = 0; i < op->cmp_count; i++) {
        int32_t k = h->cmps[op->cmp_first + i].key;
        if (key >= 0 && k != key)
            return -1;
        key = k;
    }
    for (uint32_t i = 0; i < (uint32_t)op->then_count + op->else_count; i++) {
        const struct chk_sub *s = &h->subs[op->sub_first + i];
        if (s->range_end != CHK_RANGE_ONE || (key >= 0 && s->key != key))
            return -1;
        key = s->key;
    }
    return key;
}

static bool history_has_revs(const struct chk_history *h)
{
    for (uint32_t i = 0; i < h->op_count; i++) {
        if (h->ops[i].rev != CHK_NO_REV || h->ops[i].kind == CHK_OP_COMPACT)
            return true;
    }
    for (uint32_t i = 0; i < h->kv_count; i++) {
        if (h->kvs[i].mod_rev != CHK_NO_REV || h->kvs[i].create_rev != CHK_NO_REV)
            return true;
    }
    return false;
}

/* The ops that take part in a search, in history order, and the single key each
 * touches (-1: none or several). */
struct lin_ops {
    uint32_t *ops;
    int32_t *key_of;
    uint32_t n;
    bool single;   /* every op touches one key: the search may split per key */
    uint8_t *anon; /* per value id: anonymous (anon_values), or NULL */
};

/* Counts a write of value v (saturating at 2). */
static inline void anon_write(uint8_t *writes, int32_t v)
{
    if (v >= 0 && writes[v] < 2)
        writes[v]++;
}

/* Marks value v seen (by a result, a compare operand or a watch event). */
static inline void anon_seen(uint8_t *seen, int32_t v)
{
    if (v >= 0)
        seen[v] = 1;
}

/* Pass 1 of anon_values over the ops: writes of values, values compared, and the keys
 * that cannot hold an anonymous value (an append reads it, an ordering compare of
 * values orders it). */
static void anon_scan_ops(const struct chk_history *h, uint8_t *writes, uint8_t *seen,
                          uint8_t *bad_key)
{
    for (uint32_t i = 0; i < h->sub_count; i++) {
        const struct chk_sub *b = &h->subs[i];
        if (b->kind == CHK_SUB_PUT || b->kind == CHK_SUB_APPEND)
            anon_write(writes, b->value);
        if (b->kind == CHK_SUB_APPEND)
            bad_key[b->key] = 1;
    }
    for (uint32_t i = 0; i < h->cmp_count; i++) {
        const struct chk_cmp *c = &h->cmps[i];
        if (c->target != CHK_CMP_VALUE)
            continue;
        anon_seen(seen, (int32_t)c->operand);
        if (c->result != CHK_CMP_EQ && c->result != CHK_CMP_NE)
            bad_key[c->key] = 1;
    }
    for (uint32_t i = 0; i < h->kv_count; i++)
        anon_seen(seen, h->kvs[i].value);
    for (uint32_t i = 0; i < h->event_count; i++) {
        anon_seen(seen, h->events[i].value);
        anon_seen(seen, h->events[i].prev_value);
    }
}

/*
 * Per value id, whether the value is anonymous: exactly one put in the history writes
 * it, nothing shows it (no recorded key-value, compare operand or watch event), and its
 * key has no append and no ordering compare of values. The model can then tell it from
 * another anonymous value of the key only by identity, which it never tests (see
 * srch_twins). NULL when no unknown-outcome op puts anything (no use for it).
 */
static uint8_t *anon_values(const struct chk_history *h)
{
    bool any = false;
    for (uint32_t i = 0; i < h->op_count && !any; i++)
        any = h->ops[i].status == CHK_ST_UNKNOWN && h->ops[i].kind == CHK_OP_TXN &&
              h->ops[i].then_count > 0;
    if (!any)
        return NULL;
    uint32_t nv = h->values.count;
    uint8_t *writes = fl_calloc(nv + 1, 1), *seen = fl_calloc(nv + 1, 1);
    uint8_t *bad_key = fl_calloc(h->keys.count + 1, 1), *anon = fl_calloc(nv + 1, 1);
    anon_scan_ops(h, writes, seen, bad_key);
    for (uint32_t i = 0; i < h->sub_count; i++) {
        const struct chk_sub *b = &h->subs[i];
        if (b->kind == CHK_SUB_PUT && b->value >= 0)
            anon[b->value] = writes[b->value] == 1 && !seen[b->value] && !bad_key[b->key];
    }
    free(writes);
    free(seen);
    free(bad_key);
    return anon;
}

/* Selects the ops (op_included) and drops unknown ops called after every definite op
 * returned: they can be put after everything, i.e. never. */
static void lin_ops_open(struct lin_ops *o, const struct chk_history *h,
                         const struct chk_limits *lim)
{
    o->ops = fl_malloc((h->op_count + 1) * sizeof(uint32_t));
    o->key_of = fl_malloc((h->op_count + 1) * sizeof(int32_t));
    o->n = 0;
    o->single = !(lim && lim->no_partition);
    o->anon = anon_values(h);
    int64_t last_definite_ret = INT64_MIN;
    for (uint32_t i = 0; i < h->op_count; i++) {
        const struct chk_op *op = &h->ops[i];
        if (op_ret(op) != CHK_NEVER && op_included(h, op))
            last_definite_ret = FL_MAX(last_definite_ret, op_ret(op));
    }
    for (uint32_t i = 0; i < h->op_count; i++) {
        const struct chk_op *op = &h->ops[i];
        if (!op_included(h, op) || (op_ret(op) == CHK_NEVER && op->call_ns > last_definite_ret))
            continue;
        o->key_of[o->n] = op_single_key(h, op);
        o->single = o->single && o->key_of[o->n] >= 0;
        o->ops[o->n++] = i;
    }
    /* history order, each op once */
    for (uint32_t i = 1; i < o->n; i++)
        FL_ASSERT(o->ops[i - 1] < o->ops[i]);
    FL_ASSERT(o->n <= h->op_count);
}

static void lin_ops_close(struct lin_ops *o)
{
    free(o->anon);
    free(o->ops);
    free(o->key_of);
}

/* The search's model keeps no history, so it accepts historical ranges unseen (etcd's
 * own model does too; inside a writing txn, too). After a pass with revisions, the
 * linearization found is replayed, each historical range judged against the state at
 * the revision it asks (the revision engine's way; a revision jumped over as
 * hists_judge has it). False, with out->reason, when one differs: another
 * linearization might answer it, so the pass becomes undecided. */
static bool srch_hist_recheck(struct chk_history *h, const struct chk_model *m0,
                              struct chk_lin_result *out)
{
    size_t n = 0;
    struct srch_hist *hs = srch_hists(h, out->order, out->order_count, &n);
    char why[200] = "";
    struct chk_model m = *m0;
    m.slot = NULL;
    m.changes = NULL;
    m.why = why;
    m.why_size = sizeof(why);
    size_t st_size = chk_kstate_size(h->keys.count);
    struct chk_kstate *st = fl_calloc(1, st_size), *prev = fl_calloc(1, st_size),
                      *tmp = fl_calloc(1, st_size);
    st->rev = 1;
    for (uint32_t x = 0; x < h->keys.count; x++)
        st->ent[x].value = CHK_NIL;
    /* the ranges asking revision 1, then those each step passes */
    memcpy(prev, st, st_size);
    prev->rev = 0;
    size_t bad = hists_judge(&m, hs, n, prev, st, tmp, st_size);
    for (uint32_t i = 0; i < out->order_count && bad == n; i++) {
        memcpy(prev, st, st_size);
        chk_model_step(&m, st, &h->ops[out->order[i]]);
        if (st->rev != prev->rev)
            bad = hists_judge(&m, hs, n, prev, st, tmp, st_size);
    }
    if (bad < n) {
        const struct chk_op *op = &h->ops[hs[bad].op];
        snprintf(out->reason, sizeof(out->reason),
                 "the linearization found answers op %lld's range at revision %lld otherwise "
                 "(%.120s); another might not: undecided",
                 (long long)op->op_id, (long long)hs[bad].rev, why);
    }
    free(st);
    free(prev);
    free(tmp);
    free(hs);
    return bad == n;
}

/* How search_whole runs one search. */
struct whole_try {
    bool use_outside; /* revisions no op explains take what watch events show */
    bool strict_hist; /* historical reads pin their key-values (see pins_of_op) */
    bool guide;       /* only a pass counts (a failure or the budget: try again) */
    uint64_t budget;  /* steps, 0: the limits' */
};

/* One search over every op; *retry_out when a failure rests on the outside changes. */
static int search_once(struct chk_history *h, const struct chk_limits *lim, const struct lin_ops *o,
                       bool revs, const struct whole_try *t, struct chk_lin_result *out,
                       bool *retry_out)
{
    struct srch *sr = srch_open(h, lim, o->ops, o->n, NULL, h->keys.count, revs, o->anon);
    struct chk_change *outside = NULL;
    sr->strict_hist = t->strict_hist;
    sr->budget = t->budget;
    if (revs && !h->revisions_complete) {
        sr->model.revs_open = true;
        /* a read may jump the state over outside writes: it changes the state, and
         * what it sees is not the state it met */
        sr->reads_first = false;
        for (uint32_t i = 0; i < sr->n; i++)
            sr->rslot[i] = -1;
        if (t->use_outside) {
            outside = chk_outside_changes(h, &sr->model.outside_count);
            sr->model.outside = outside;
        }
    }
    FL_ASSERT(t->use_outside || sr->model.outside_count == 0);
    int verdict = srch_run(sr);
    out->steps += sr->steps;
    bool retry = verdict == CHK_FAIL && sr->model.outside_count > 0 && !t->guide;
    FL_TESTCASE(retry);
    *retry_out = retry;
    if (verdict == CHK_PASS) {
        srch_order(sr, out);
        if (revs && !srch_hist_recheck(h, &sr->model, out))
            verdict = CHK_UNKNOWN;
    }
    if (verdict == CHK_FAIL && !retry && !t->guide)
        srch_explain(sr, out, -1);
    srch_close(sr);
    free(sr);
    free(outside);
    return verdict;
}

/*
 * One search over every op. With revisions in a history that is not
 * revisions_complete, revisions no op explains take what watch events show (as
 * engine 1); a failure that rests on that content is judged again without it,
 * because watch events never fail linearizability.
 *
 * Historical reads pin the key-values they show at the revision they ask (strict
 * pins). They only cut configurations that hists_judge fails further on (a revision
 * jumped over included), so both searches reach one verdict. When the state may jump
 * over revisions (revs_open) the strict search runs first as a guide: a quarter of the
 * step bound, its pass kept (a linearization, replayed as any pass), anything else
 * forgotten and the search run again without those pins (chaos seed 2893: unknown after
 * 46M steps without them, a pass in 105k steps with them).
 */
static int search_whole(struct chk_history *h, const struct chk_limits *lim,
                        const struct lin_ops *o, bool revs, struct chk_lin_result *out)
{
    bool open = revs && !h->revisions_complete;
    bool retry;
    if (open) {
        uint64_t steps_max = lim && lim->steps_max ? lim->steps_max : UINT64_C(50000000);
        struct whole_try g = {true, true, true, steps_max / 4 + 1};
        if (search_once(h, lim, o, revs, &g, out, &retry) == CHK_PASS)
            return CHK_PASS;
        out->reason[0] = '\0';
        free(out->order);
        out->order = NULL;
        out->order_count = 0;
    }
    struct whole_try t = {true, !open, false, 0};
    for (;;) {
        int verdict = search_once(h, lim, o, revs, &t, out, &retry);
        if (!retry)
            return verdict;
        t.use_outside = false;
    }
}

/* The per-key split: each key's ops (in history order) searched alone, with a step
 * budget that grows by rounds, each key resuming where it stopped, so that one hard
 * key cannot hide an easy failure on another (a failure anywhere decides). */
struct per_key {
    uint32_t nk, parts; /* keys, keys with ops */
    uint32_t *cnt;      /* ops per key */
    uint32_t *part;     /* scratch: one key's ops */
    int32_t *slot;      /* key -> slot 0 for the key searched, else -1 */
    struct srch **sr;   /* per key: its stopped search, NULL when none */
    uint8_t *done;      /* per key: decided */
    bool any_unknown;   /* some key gave up for good */
};

static void per_key_open(struct per_key *pk, const struct chk_history *h, const struct lin_ops *o)
{
    pk->nk = h->keys.count;
    pk->cnt = fl_calloc(pk->nk + 1, sizeof(uint32_t));
    for (uint32_t i = 0; i < o->n; i++) {
        FL_ASSERT(o->key_of[i] >= 0 && (uint32_t)o->key_of[i] < pk->nk);
        pk->cnt[o->key_of[i]]++;
    }
    pk->part = fl_malloc((o->n + 1) * sizeof(uint32_t));
    pk->slot = fl_malloc((pk->nk + 1) * sizeof(int32_t));
    pk->parts = 0;
    for (uint32_t k = 0; k < pk->nk; k++) {
        pk->slot[k] = -1;
        pk->parts += pk->cnt[k] > 0;
    }
    pk->sr = fl_calloc(pk->nk + 1, sizeof(*pk->sr));
    pk->done = fl_calloc(pk->nk + 1, 1);
    pk->any_unknown = false;
}

static void per_key_drop(struct per_key *pk, int32_t k)
{
    if (pk->sr[k]) {
        srch_close(pk->sr[k]);
        free(pk->sr[k]);
        pk->sr[k] = NULL;
    }
}

static void per_key_close(struct per_key *pk)
{
    for (uint32_t k = 0; k < pk->nk; k++)
        per_key_drop(pk, (int32_t)k);
    free(pk->sr);
    free(pk->done);
    free(pk->cnt);
    free(pk->part);
    free(pk->slot);
}

/* Key k's search, opened on first use over its ops in history order. */
static struct srch *per_key_search(struct per_key *pk, struct chk_history *h,
                                   const struct chk_limits *lim, const struct lin_ops *o, int32_t k)
{
    if (pk->sr[k])
        return pk->sr[k];
    uint32_t m = 0;
    for (uint32_t i = 0; i < o->n; i++) {
        if (o->key_of[i] == k)
            pk->part[m++] = o->ops[i];
    }
    FL_ASSERT(m == pk->cnt[k] && m > 0);
    pk->slot[k] = 0;
    pk->sr[k] = srch_open(h, lim, pk->part, m, pk->slot, 1, false, o->anon);
    pk->slot[k] = -1;
    return pk->sr[k];
}

/* One round of key k with the given budget: its verdict, or -1 when the budget ran
 * out first (the key stays pending and resumes next round). */
static int per_key_round(struct per_key *pk, struct chk_history *h, const struct chk_limits *lim,
                         const struct lin_ops *o, int32_t k, uint64_t budget,
                         struct chk_lin_result *out)
{
    FL_ASSERT(pk->cnt[k] > 0 && !pk->done[k]);
    struct srch *sr = per_key_search(pk, h, lim, o, k);
    uint64_t before = sr->steps;
    FL_TESTCASE(before > 0); /* a key resumed after an earlier round stopped it */
    sr->budget = budget;
    int v = srch_run(sr);
    FL_ASSERT(sr->steps >= before); /* a resumed search goes on from its frontier */
    out->steps += sr->steps - before;
    if (v == CHK_UNKNOWN && sr->budget_hit)
        return -1;
    if (v == CHK_PASS && pk->parts == 1)
        srch_order(sr, out);
    if (v == CHK_FAIL)
        srch_explain(sr, out, k);
    pk->any_unknown |= v == CHK_UNKNOWN;
    pk->done[k] = 1;
    per_key_drop(pk, k);
    return v;
}

static int search_per_key(struct chk_history *h, const struct chk_limits *lim,
                          const struct lin_ops *o, struct chk_lin_result *out)
{
    struct per_key pk;
    per_key_open(&pk, h, o);
    int verdict = CHK_PASS;
    bool pending = true;
    for (uint64_t budget = 20000; pending && verdict != CHK_FAIL; budget *= 4) {
        pending = false;
        /* keys in byte order */
        for (uint32_t r = 0; r < pk.nk && verdict != CHK_FAIL; r++) {
            int32_t k = (int32_t)h->key_order[r];
            if (!pk.cnt[k] || pk.done[k])
                continue;
            int v = per_key_round(&pk, h, lim, o, k, budget, out);
            if (v == CHK_FAIL)
                verdict = CHK_FAIL;
            pending |= v < 0;
        }
    }
    if (verdict != CHK_FAIL && pk.any_unknown)
        verdict = CHK_UNKNOWN;
    per_key_close(&pk);
    return verdict;
}

int chk_lin_search(struct chk_history *h, const struct chk_limits *lim, struct chk_lin_result *out)
{
    FL_ASSERT(h->finished);
    out->engine = CHK_ENGINE_SEARCH;
    /* a duplicate application (chk_dup.c) decides without a search */
    if (chk_dup_applications(h, out))
        return FL_OK;
    struct lin_ops o;
    lin_ops_open(&o, h, lim);
    bool revs = history_has_revs(h);
    int verdict =
        o.single && !revs ? search_per_key(h, lim, &o, out) : search_whole(h, lim, &o, revs, out);
    lin_ops_close(&o);
    FL_ASSERT(verdict == CHK_PASS || verdict == CHK_FAIL || verdict == CHK_UNKNOWN);
    out->verdict = verdict;
    if (verdict == CHK_UNKNOWN && !out->reason[0])
        snprintf(out->reason, sizeof(out->reason),
                 "search gave up after %llu steps (step, memory or time bound)",
                 (unsigned long long)out->steps);
    return FL_OK;
}
