/*
 * raft_ready.c: the core's outputs. Messages, events and read states accumulate in
 * an outbox whose variable parts (message entries, snapshots, data) live in a block
 * arena with stable addresses. raft_ready swaps the outbox into the driver's
 * struct raft_ready and copies the entries to persist and to apply into the same
 * arena, so the ready owns everything it shows and the core can keep stepping while
 * the driver persists. raft_advance records what was persisted and applied.
 */
#include "nodes/raft/raft_int.h"

#include <stdarg.h>

/* Blocks of 64 KiB doubling to 1 MiB; a reset keeps the largest block up to 4 MiB (a
 * big snapshot's block is not hoarded). */
#define RAFT_BLOCK_BYTES     ((size_t)64 * 1024)
#define RAFT_BLOCK_BYTES_MAX ((size_t)1024 * 1024)
#define RAFT_BLOCK_KEEP_MAX  ((size_t)4 * 1024 * 1024)

void *raft__arena_alloc(struct raft__arena *a, size_t n)
{
    if (a->fl.block_min == 0) /* zeroed with its outbox */
        fl_arena_init(&a->fl, RAFT_BLOCK_BYTES, RAFT_BLOCK_BYTES_MAX, RAFT_BLOCK_KEEP_MAX);
    return fl_arena_alloc(&a->fl, n);
}

void raft__arena_reset(struct raft__arena *a)
{
    fl_arena_reset(&a->fl);
}

void raft__arena_close(struct raft__arena *a)
{
    fl_arena_close(&a->fl);
}

void raft__outbox_reset(struct raft__outbox *o)
{
    raft__arena_reset(&o->arena);
    o->msgs_count = 0;
    o->events_count = 0;
    o->notes_count = 0;
    o->reads_count = 0;
}

void raft__outbox_close(struct raft__outbox *o)
{
    raft__arena_close(&o->arena);
    free(o->msgs);
    free(o->events);
    free(o->notes);
    free(o->reads);
    memset(o, 0, sizeof(*o));
}

/* One more element (common's growth rule). */
#define GROW(arr, count, cap) FL_GROW(arr, cap, (size_t)(count) + 1, 16)

/* One more event or note in (*arr, *count, *cap), its detail from fmt/ap. */
static struct raft_event *push_event(struct raft *r, struct raft_event **arr, size_t *count,
                                     size_t *cap, enum raft_event_kind kind, uint64_t peer,
                                     uint64_t index, const char *fmt, va_list ap)
{
    FL_ASSERT(kind < RAFT_EV_KIND_COUNT);
    GROW(*arr, *count, *cap);
    struct raft_event *ev = &(*arr)[(*count)++];
    memset(ev, 0, sizeof *ev);
    ev->kind = kind;
    ev->term = r->term;
    ev->peer = peer;
    ev->index = index;
    vsnprintf(ev->detail, sizeof(ev->detail), fmt, ap);
    return ev;
}

struct raft_event *raft__event(struct raft *r, enum raft_event_kind kind, uint64_t peer,
                               uint64_t index, const char *fmt, ...)
{
    FL_ASSERT(kind != RAFT_EV_FOLLOWER_LOST); /* a note */
    struct raft__outbox *o = &r->box;
    va_list ap;
    va_start(ap, fmt);
    struct raft_event *ev =
        push_event(r, &o->events, &o->events_count, &o->events_cap, kind, peer, index, fmt, ap);
    va_end(ap);
    return ev;
}

struct raft_event *raft__note(struct raft *r, enum raft_event_kind kind, uint64_t peer,
                              uint64_t index, const char *fmt, ...)
{
    FL_ASSERT(kind == RAFT_EV_FOLLOWER_LOST);
    struct raft__outbox *o = &r->box;
    va_list ap;
    va_start(ap, fmt);
    struct raft_event *ev =
        push_event(r, &o->notes, &o->notes_count, &o->notes_cap, kind, peer, index, fmt, ap);
    va_end(ap);
    return ev;
}

struct raft_msg *raft__send(struct raft *r, enum raft_msg_type type, uint64_t to)
{
    struct raft__outbox *o = &r->box;
    FL_ASSERT(to != RAFT_NONE && to != r->cfg.id);
    GROW(o->msgs, o->msgs_count, o->msgs_cap);
    struct raft_msg *m = &o->msgs[o->msgs_count++];
    memset(m, 0, sizeof(*m));
    m->type = type;
    m->from = r->cfg.id;
    m->to = to;
    m->term = r->term;
    return m;
}

/* Copies log entries [from, to] (with their data) into arena a. One allocation holds
 * the entries and then each one's data at a 16-byte boundary, as a separate
 * allocation per entry would place it: one arena call instead of one per entry (there
 * are about 13 entry copies per committed entry in a 3-member cluster). */
#define COPY_ALIGN ((size_t)16)
static struct raft_entry *copy_entries(const struct raft *r, struct raft__arena *a, uint64_t from,
                                       uint64_t to)
{
    FL_ASSERT(from >= 1 && to >= from);
    size_t n = (size_t)(to - from + 1);
    /* the log's entries are one array: [from, to] are consecutive in it */
    const struct raft_entry *src = raft__entry_at(r, from);
    FL_ASSERT(raft__entry_at(r, to) == src + (n - 1));
    size_t head = (n * sizeof(*src) + COPY_ALIGN - 1) & ~(COPY_ALIGN - 1);
    size_t total = head;
    for (size_t i = 0; i < n; i++)
        total += (src[i].len + COPY_ALIGN - 1) & ~(COPY_ALIGN - 1);
    uint8_t *block = raft__arena_alloc(a, total);
    struct raft_entry *out = (struct raft_entry *)(void *)block;
    uint8_t *d = block + head;
    for (size_t i = 0; i < n; i++) {
        FL_ASSERT(src[i].index == from + i);
        out[i] = src[i];
        size_t len = src[i].len;
        if (len) {
            memcpy(d, src[i].data, len);
            out[i].data = d;
            d += (len + COPY_ALIGN - 1) & ~(COPY_ALIGN - 1);
        }
    }
    return out;
}

void raft__msg_attach_entries(struct raft *r, struct raft_msg *m, uint64_t from, uint64_t to)
{
    FL_ASSERT(m->entries_count == 0);
    m->entries = copy_entries(r, &r->box.arena, from, to);
    m->entries_count = (size_t)(to - from + 1);
}

static struct raft_snapshot *copy_snapshot(struct raft__arena *a, const struct raft_snapshot *s)
{
    struct raft_snapshot *c = raft__arena_alloc(a, sizeof(*c));
    *c = *s;
    if (s->len) {
        uint8_t *d = raft__arena_alloc(a, s->len);
        memcpy(d, s->data, s->len);
        c->data = d;
    } else {
        c->data = NULL;
    }
    return c;
}

void raft__msg_attach_snapshot(struct raft *r, struct raft_msg *m)
{
    FL_ASSERT(r->snap.index > 0);
    m->snapshot = copy_snapshot(&r->box.arena, &r->snap);
}

void raft__read_state(struct raft *r, uint64_t context, uint64_t index)
{
    struct raft__outbox *o = &r->box;
    GROW(o->reads, o->reads_count, o->reads_cap);
    o->reads[o->reads_count].context = context;
    o->reads[o->reads_count].index = index;
    o->reads_count++;
}

void raft_ready_init(struct raft_ready *rd)
{
    memset(rd, 0, sizeof(*rd));
}

void raft_ready_close(struct raft_ready *rd)
{
    struct raft_ready_priv *p = rd->priv;
    if (p) {
        raft__outbox_close(&p->box);
        free(p);
    }
    memset(rd, 0, sizeof(*rd));
}

static bool hs_changed(const struct raft *r)
{
    return r->term != r->prev_hs.term || r->vote != r->prev_hs.vote ||
           r->commit != r->prev_hs.commit;
}

bool raft_has_ready(const struct raft *r)
{
    if (r->ready_out)
        return false;
    const struct raft__outbox *o = &r->box;
    return ((r->flush_pending || r->read_flush) && r->role == RAFT_LEADER) || o->msgs_count ||
           o->events_count || o->reads_count || r->snap_pending || hs_changed(r) ||
           r->log.stable < raft__last_index(r) || r->applied < r->commit ||
           r->role != r->prev_role || r->lead != r->prev_lead;
}

void raft_ready(struct raft *r, struct raft_ready *rd)
{
    FL_ASSERT(!r->ready_out);
    if (!rd->priv)
        rd->priv = fl_calloc(1, sizeof(struct raft_ready_priv));
    struct raft_ready_priv *p = rd->priv;
    raft__flush(r);
    /* Swap: the ready takes the filled outbox, the core gets the drained one. */
    raft__outbox_reset(&p->box);
    struct raft__outbox tmp = p->box;
    p->box = r->box;
    r->box = tmp;
    struct raft__arena *a = &p->box.arena;

    rd->hard_state_changed = hs_changed(r);
    rd->hard_state = (struct raft_hard_state){r->term, r->vote, r->commit};
    rd->soft_state_changed = r->role != r->prev_role || r->lead != r->prev_lead;
    rd->role = r->role;
    rd->leader = r->lead;
    r->prev_hs = rd->hard_state;
    r->prev_role = r->role;
    r->prev_lead = r->lead;

    rd->snapshot = NULL;
    uint64_t applied_from = r->applied;
    if (r->snap_pending) {
        rd->snapshot = copy_snapshot(a, &r->snap);
        r->snap_pending = false;
        applied_from = FL_MAX(applied_from, r->snap.index);
    }
    uint64_t last = raft__last_index(r);
    rd->entries = NULL;
    rd->entries_count = 0;
    if (r->log.stable < last) {
        rd->entries = copy_entries(r, a, r->log.stable + 1, last);
        rd->entries_count = (size_t)(last - r->log.stable);
    }
    rd->committed = NULL;
    rd->committed_count = 0;
    if (applied_from < r->commit) {
        rd->committed = copy_entries(r, a, applied_from + 1, r->commit);
        rd->committed_count = (size_t)(r->commit - applied_from);
    }
    rd->msgs = p->box.msgs;
    rd->msgs_count = p->box.msgs_count;
    rd->reads = p->box.reads;
    rd->reads_count = p->box.reads_count;
    rd->events = p->box.events;
    rd->events_count = p->box.events_count;
    rd->notes = p->box.notes;
    rd->notes_count = p->box.notes_count;

    r->ready_out = true;
    r->ready_last_index = last;
    r->ready_trunc_min = UINT64_MAX;
    r->ready_applied_to = FL_MAX(applied_from, r->commit);
}

void raft_advance(struct raft *r, struct raft_ready *rd)
{
    FL_ASSERT(r->ready_out);
    FL_ASSERT(rd->priv != NULL);
    r->ready_out = false;
    uint64_t upto = r->ready_last_index;
    if (r->ready_trunc_min != UINT64_MAX && r->ready_trunc_min <= upto)
        upto = r->ready_trunc_min - 1;
    upto = FL_MIN(upto, raft__last_index(r));
    if (upto > r->log.stable)
        r->log.stable = upto;
    if (r->ready_applied_to > r->applied)
        r->applied = r->ready_applied_to;
    FL_ASSERT(r->applied <= r->commit);
    /* Hand the drained buffers back for reuse on the next cycle. */
    raft__outbox_reset(&((struct raft_ready_priv *)rd->priv)->box);
    rd->msgs_count = rd->events_count = rd->notes_count = rd->reads_count = 0;
    rd->entries_count = rd->committed_count = 0;
    rd->snapshot = NULL;
}
