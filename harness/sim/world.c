/*
 * world.c: the clock, the event queue, the digest, named RNG streams and the
 * fault hook of a simulated world. Processes live in proc.c.
 *
 * The queue is a 4-ary heap keyed by (at_ns, seq); seq is a per-world counter
 * assigned at schedule time, so events due at the same time run in the order they
 * were scheduled and nothing depends on pointers. Every processed event is folded
 * into the digest as a fixed 32-byte little-endian record; records are buffered
 * and hashed a few kilobytes at a time so the digest costs a few nanoseconds per
 * event.
 */
#include "harness/sim/sim_int.h"

#include <endian.h>

#define SLOT_NONE UINT32_MAX

/* ---------------------------------------------------------------- digest ------*/

static void digest_flush(struct sim_world *w)
{
    if (w->dlen) {
        fl_digest_update(&w->digest, w->dbuf, w->dlen);
        w->dlen = 0;
    }
}

/* Little-endian stores. Written as byte loops these were not merged into single
 * stores and cost about 150 instructions per event in sim__digest_event. */
static inline void put_le64(uint8_t *p, uint64_t v)
{
    v = htole64(v);
    memcpy(p, &v, 8);
}

static inline void put_le32(uint8_t *p, uint32_t v)
{
    v = htole32(v);
    memcpy(p, &v, 4);
}

void sim__digest_event(struct sim_world *w, int64_t at_ns, uint32_t kind, int32_t src, int32_t dst,
                       uint64_t tag)
{
    if (w->dlen + 32 > SIM_DIGEST_BUF)
        digest_flush(w);
    uint8_t *p = w->dbuf + w->dlen;
    put_le64(p, (uint64_t)at_ns);
    put_le32(p + 8, kind);
    put_le32(p + 12, (uint32_t)src);
    put_le32(p + 16, (uint32_t)dst);
    put_le32(p + 20, 0);
    put_le64(p + 24, tag);
    w->dlen += 32;
}

void sim_digest_fold(struct sim_world *w, const void *p, size_t n)
{
    if (n > SIM_DIGEST_BUF / 2) {
        digest_flush(w);
        fl_digest_update(&w->digest, p, n);
        return;
    }
    if (w->dlen + n > SIM_DIGEST_BUF)
        digest_flush(w);
    memcpy(w->dbuf + w->dlen, p, n);
    w->dlen += n;
}

void sim_digest_u64(struct sim_world *w, uint64_t v)
{
    uint8_t b[8];
    put_le64(b, v);
    sim_digest_fold(w, b, 8);
}

void sim_digest_str(struct sim_world *w, const char *s)
{
    if (!s) {
        sim_digest_u64(w, UINT64_MAX);
        return;
    }
    size_t n = strlen(s);
    sim_digest_u64(w, n);
    sim_digest_fold(w, s, n);
}

uint64_t sim_digest_value(struct sim_world *w)
{
    digest_flush(w);
    return fl_digest_value(&w->digest);
}

void sim_digest_hex(struct sim_world *w, char out[17])
{
    fl_digest_hex(sim_digest_value(w), out);
}

/* ---------------------------------------------------------------- heap --------*/

/* Times are never negative, so (at_ns, key) compares as one unsigned 128-bit
 * number, which compiles to a branch-free compare. */
static inline unsigned __int128 entry_key(const struct sim_heap_entry *e)
{
    return ((unsigned __int128)(uint64_t)e->at_ns << 64) | e->key;
}

static inline bool entry_less(const struct sim_heap_entry *a, const struct sim_heap_entry *b)
{
    return entry_key(a) < entry_key(b);
}

/* A 4-ary heap: half the depth of a binary one, and the four children of a node
 * (64 bytes) sit in one cache line, which is what the pop path pays for. */
#define HEAP_ARITY 4

static void heap_sift_up(struct sim_heap_entry *h, size_t i)
{
    struct sim_heap_entry e = h[i];
    while (i > 0) {
        size_t parent = (i - 1) / HEAP_ARITY;
        if (!entry_less(&e, &h[parent]))
            break;
        h[i] = h[parent];
        i = parent;
    }
    h[i] = e;
}

/* The smallest of i's children among the first n entries (SIZE_MAX when i has none),
 * its key in *key. Branch-free selection: no unpredictable branch per child. */
static inline size_t heap_min_child(const struct sim_heap_entry *h, size_t n, size_t i,
                                    unsigned __int128 *key)
{
    size_t first = HEAP_ARITY * i + 1;
    if (first >= n)
        return SIZE_MAX;
    size_t best = first;
    unsigned __int128 bk = entry_key(&h[first]);
    size_t last = first + HEAP_ARITY < n ? first + HEAP_ARITY : n;
    for (size_t c = first + 1; c < last; c++) {
        unsigned __int128 ck = entry_key(&h[c]);
        bool lt = ck < bk;
        best = lt ? c : best;
        bk = lt ? ck : bk;
    }
    *key = bk;
    return best;
}

static void heap_sift_down(struct sim_heap_entry *h, size_t n, size_t i)
{
    struct sim_heap_entry e = h[i];
    for (;;) {
        unsigned __int128 bk;
        size_t best = heap_min_child(h, n, i, &bk);
        if (best == SIZE_MAX || bk >= entry_key(&e))
            break;
        h[i] = h[best];
        i = best;
    }
    h[i] = e;
}

static void heap_push(struct sim_world *w, int64_t at_ns, uint64_t seq, uint32_t slot)
{
    FL_ASSERT(seq <= SIM_SEQ_MAX && slot <= SIM_SLOT_MAX);
    FL_GROW(w->heap, w->cap_heap, w->nheap + 1, 1024);
    w->heap[w->nheap] = (struct sim_heap_entry){at_ns, (seq << SIM_SLOT_BITS) | slot};
    heap_sift_up(w->heap, w->nheap);
    w->nheap++;
}

/* Removes the root. Floyd's bottom-up variant: the hole at the root walks down
 * to a leaf along the smallest children (no compare against the moved element,
 * so no unpredictable exit branch per level), then the last element is sifted up
 * from there, which is short because it came from the bottom. */
static void heap_pop(struct sim_world *w)
{
    FL_ASSERT(w->nheap > 0);
    size_t n = --w->nheap;
    if (n == 0)
        return;
    struct sim_heap_entry *h = w->heap;
    size_t i = 0;
    for (;;) {
        unsigned __int128 bk;
        size_t best = heap_min_child(h, n, i, &bk);
        if (best == SIZE_MAX)
            break;
        h[i] = h[best];
        i = best;
    }
    h[i] = h[n];
    heap_sift_up(h, i);
}

static inline bool entry_live(const struct sim_world *w, const struct sim_heap_entry *e)
{
    return w->slots[sim__entry_slot(e)].seq == sim__entry_seq(e);
}

/* Drops stale entries and re-heapifies; keeps the heap at most about twice the
 * number of live events however many timers get cancelled. */
static void heap_compact(struct sim_world *w)
{
    size_t j = 0;
    for (size_t i = 0; i < w->nheap; i++)
        if (entry_live(w, &w->heap[i]))
            w->heap[j++] = w->heap[i];
    w->nheap = j;
    w->stale = 0;
    for (size_t i = j / HEAP_ARITY + 1; i-- > 0;)
        if (i < j)
            heap_sift_down(w->heap, w->nheap, i);
}

/* Removes stale entries from the top; returns the live top or NULL. */
static struct sim_heap_entry *heap_top(struct sim_world *w)
{
    while (w->nheap && !entry_live(w, &w->heap[0])) {
        heap_pop(w);
        FL_ASSERT(w->stale > 0);
        w->stale--;
    }
    return w->nheap ? &w->heap[0] : NULL;
}

/* ---------------------------------------------------------------- slots -------*/

static uint32_t slot_alloc(struct sim_world *w)
{
    if (w->free_slot != SLOT_NONE) {
        uint32_t s = w->free_slot;
        w->free_slot = (uint32_t)w->slots[s].tag;
        return s;
    }
    if (w->nslots == w->cap_slots) {
        FL_ASSERTF(w->cap_slots <= SIM_SLOT_MAX / 2, "more than %u pending events",
                   (unsigned)SIM_SLOT_MAX);
        uint32_t cap = (uint32_t)fl_grow_cap(w->cap_slots, (size_t)w->cap_slots + 1, 1024,
                                             sizeof(struct sim_slot));
        /* Slots are cache-line aligned, which realloc does not promise. */
        struct sim_slot *slots = aligned_alloc(64, (size_t)cap * sizeof(*slots));
        FL_ASSERTF(slots != NULL, "out of memory for %u event slots", cap);
        if (w->nslots)
            memcpy(slots, w->slots, (size_t)w->nslots * sizeof(*slots));
        free(w->slots);
        w->slots = slots;
        w->cap_slots = cap;
    }
    uint32_t s = w->nslots++;
    w->slots[s].gen = 1;
    w->slots[s].seq = 0;
    return s;
}

static void slot_free(struct sim_world *w, uint32_t s)
{
    struct sim_slot *sl = &w->slots[s];
    sl->seq = 0;
    sl->gen++;
    if (sl->gen == 0)
        sl->gen = 1;
    sl->tag = w->free_slot;
    w->free_slot = s;
}

static inline sim_handle slot_handle(const struct sim_world *w, uint32_t s)
{
    return ((uint64_t)w->slots[s].gen << 32) | s;
}

/* Fills a fresh slot and returns its index; the caller pushes it on the heap or
 * on a deferred list. */
static uint32_t slot_fill(struct sim_world *w, int proc, uint32_t kind, int32_t src, int32_t dst,
                          uint64_t tag, sim_event_fn *fn, sim_drop_fn *drop, void *ctx)
{
    FL_ASSERT(fn != NULL);
    uint32_t s = slot_alloc(w);
    struct sim_slot *sl = &w->slots[s];
    sl->seq = ++w->next_seq;
    sl->queued = false;
    sl->fn = fn;
    sl->drop = drop;
    sl->ctx = ctx;
    sl->tag = tag;
    sl->proc = proc;
    sl->epoch = proc >= 0 ? w->procs[proc].incarnation : 0;
    FL_ASSERT(kind <= UINT16_MAX);
    sl->kind = (uint16_t)kind;
    sl->src = src;
    sl->dst = dst;
    return s;
}

sim_handle sim__schedule(struct sim_world *w, int64_t at_ns, int proc, uint32_t kind, int32_t src,
                         int32_t dst, uint64_t tag, sim_event_fn *fn, sim_drop_fn *drop, void *ctx)
{
    FL_ASSERTF(at_ns >= w->now_ns, "scheduling in the past: %lld < %lld", (long long)at_ns,
               (long long)w->now_ns);
    uint32_t s = slot_fill(w, proc, kind, src, dst, tag, fn, drop, ctx);
    w->slots[s].queued = true;
    heap_push(w, at_ns, w->slots[s].seq, s);
    return slot_handle(w, s);
}

/* Discards a live slot without running it. */
static void slot_discard(struct sim_world *w, uint32_t s)
{
    struct sim_slot *sl = &w->slots[s];
    sim_drop_fn *drop = sl->drop;
    void *ctx = sl->ctx;
    slot_free(w, s);
    if (drop)
        drop(ctx);
}

/* ---------------------------------------------------------------- public API --*/

sim_handle sim_schedule(struct sim_world *w, int64_t delay_ns, sim_event_fn *fn, void *ctx)
{
    FL_ASSERT(delay_ns >= 0);
    return sim__schedule(w, w->now_ns + delay_ns, -1, SIM_EV_CALL, -1, -1, 0, fn, NULL, ctx);
}

sim_handle sim_schedule_at(struct sim_world *w, int64_t at_ns, sim_event_fn *fn, void *ctx)
{
    return sim__schedule(w, at_ns, -1, SIM_EV_CALL, -1, -1, 0, fn, NULL, ctx);
}

sim_handle sim_schedule_tagged(struct sim_world *w, int64_t delay_ns, uint32_t kind, uint64_t tag,
                               sim_event_fn *fn, void *ctx)
{
    FL_ASSERT(delay_ns >= 0);
    FL_ASSERTF(kind >= SIM_EV_USER, "kind %u is reserved for the simulator", kind);
    return sim__schedule(w, w->now_ns + delay_ns, -1, kind, -1, -1, tag, fn, NULL, ctx);
}

bool sim_cancel(struct sim_world *w, sim_handle h)
{
    if (h == 0)
        return false;
    uint32_t s = (uint32_t)h;
    uint32_t gen = (uint32_t)(h >> 32);
    if (s >= w->nslots || w->slots[s].gen != gen || w->slots[s].seq == 0)
        return false;
    if (w->slots[s].queued)
        w->stale++;
    slot_discard(w, s);
    if (w->stale > 4096 && w->stale > w->nheap / 2)
        heap_compact(w);
    return true;
}

size_t sim_pending_count(const struct sim_world *w)
{
    return w->nheap;
}

int64_t sim_next_time_ns(struct sim_world *w)
{
    struct sim_heap_entry *e = heap_top(w);
    return e ? e->at_ns : INT64_MAX;
}

uint64_t sim_seed(const struct sim_world *w)
{
    return w->seed;
}

int64_t sim_now_ns(const struct sim_world *w)
{
    return w->now_ns;
}

uint64_t sim_event_count(const struct sim_world *w)
{
    return w->events;
}

void sim_set_scenario(struct sim_world *w, const char *scenario)
{
    w->scenario = scenario;
    fl_assert_ctx.scenario = scenario;
}

void sim_stop(struct sim_world *w)
{
    w->stop = true;
}

/* ---------------------------------------------------------------- dispatch ----*/

void sim__after_proc_event(struct sim_world *w, int proc);

/* A process must queue its events behind its deferred list while it is paused
 * and while the list is being replayed after resume, so nothing overtakes what
 * was deferred (a frame arriving at the instant of resume must not run before the
 * accept or the frames that waited). */
static inline bool proc_must_defer(const struct sim_proc *p)
{
    return p->state == SIM_PROC_PAUSED || p->dhead < p->ndeferred;
}

/* Appends a live slot to its process's deferred list. */
static void defer_slot(struct sim_world *w, struct sim_proc *p, uint32_t s)
{
    FL_GROW(p->deferred, p->cap_deferred, p->ndeferred + 1, 64);
    p->deferred[p->ndeferred++] = (struct sim_deferred){s, w->slots[s].seq};
}

/* Runs live slot s (off the heap, process checks done) and frees it. */
static void run_slot(struct sim_world *w, uint32_t s)
{
    struct sim_slot *sl = &w->slots[s];
    int proc = sl->proc;
    w->events++;
    fl_assert_ctx.event_no = w->events;
    sim__digest_event(w, w->now_ns, sl->kind, sl->src, sl->dst, sl->tag);
    sim_event_fn *fn = sl->fn;
    void *ctx = sl->ctx;
    slot_free(w, s);
    int saved = w->current_proc;
    w->current_proc = proc;
    fn(w, ctx);
    w->current_proc = saved;
    if (proc >= 0)
        sim__after_proc_event(w, proc);
}

/* Runs, defers or drops slot s (already taken off the heap). */
static void dispatch(struct sim_world *w, uint32_t s)
{
    struct sim_slot *sl = &w->slots[s];
    if (sl->proc >= 0) {
        struct sim_proc *p = &w->procs[sl->proc];
        if (p->incarnation != sl->epoch || p->state == SIM_PROC_DOWN) {
            slot_discard(w, s);
            return;
        }
        if (proc_must_defer(p)) {
            defer_slot(w, p, s);
            return;
        }
    }
    run_slot(w, s);
}

bool sim_step(struct sim_world *w)
{
    FL_ASSERTF(!w->running, "sim_step/sim_run_until called from inside an event");
    struct sim_heap_entry *e = heap_top(w);
    if (!e)
        return false;
    int64_t at = e->at_ns;
    uint32_t s = sim__entry_slot(e);
    heap_pop(w);
    if (w->nheap)
        __builtin_prefetch(&w->slots[sim__entry_slot(&w->heap[0])]);
    w->slots[s].queued = false;
    FL_ASSERT(at >= w->now_ns);
    w->now_ns = at;
    fl_assert_ctx.now_ns = at;
    fl_assert_ctx.seed = w->seed;
    w->running = true;
    dispatch(w, s);
    w->running = false;
    return true;
}

bool sim_run_until(struct sim_world *w, int64_t t_ns)
{
    w->stop = false;
    fl_assert_ctx.seed = w->seed;
    fl_assert_ctx.scenario = w->scenario;
    for (;;) {
        struct sim_heap_entry *e = heap_top(w);
        if (!e || e->at_ns > t_ns)
            break;
        sim_step(w);
        if (w->stop) {
            w->stop = false;
            return false;
        }
    }
    if (t_ns > w->now_ns)
        w->now_ns = t_ns;
    fl_assert_ctx.now_ns = w->now_ns;
    return true;
}

bool sim_run_for(struct sim_world *w, int64_t d_ns)
{
    FL_ASSERT(d_ns >= 0);
    return sim_run_until(w, w->now_ns + d_ns);
}

void sim__run_in_proc(struct sim_world *w, int proc, uint32_t kind, int32_t src, int32_t dst,
                      uint64_t tag, sim_event_fn *fn, sim_drop_fn *drop, void *ctx)
{
    struct sim_proc *p = sim__proc(w, proc);
    if (p->state == SIM_PROC_DOWN) {
        if (drop)
            drop(ctx);
        return;
    }
    if (proc_must_defer(p)) {
        uint32_t s = slot_fill(w, proc, kind, src, dst, tag, fn, drop, ctx);
        defer_slot(w, p, s);
        return;
    }
    int saved = w->current_proc;
    w->current_proc = proc;
    fn(w, ctx);
    w->current_proc = saved;
    sim__after_proc_event(w, proc);
}

/* The replay event of a resumed process: runs its deferred events in order, and
 * whatever joins the list meanwhile, until the list is empty or the process is
 * paused or killed again. */
static void replay_cb(struct sim_world *w, void *ctx)
{
    int proc = (int)(intptr_t)ctx;
    struct sim_proc *p = &w->procs[proc];
    p->replay = 0;
    while (p->state == SIM_PROC_UP && p->dhead < p->ndeferred) {
        struct sim_deferred d = p->deferred[p->dhead++];
        struct sim_slot *sl = &w->slots[d.slot];
        if (sl->seq != d.seq)
            continue; /* cancelled while deferred */
        if (sl->epoch != p->incarnation) {
            slot_discard(w, d.slot);
            continue;
        }
        run_slot(w, d.slot);
        p = &w->procs[proc]; /* an event may have added processes */
    }
    if (p->dhead == p->ndeferred)
        p->dhead = p->ndeferred = 0;
}

/* Called at resume: schedules the replay of the deferred list at now. */
void sim__requeue_deferred(struct sim_world *w, int proc)
{
    struct sim_proc *p = &w->procs[proc];
    if (p->dhead < p->ndeferred && p->replay == 0)
        p->replay = sim__schedule(w, w->now_ns, -1, SIM_EV_DEFERRED, proc, proc,
                                  p->ndeferred - p->dhead, replay_cb, NULL, (void *)(intptr_t)proc);
}

/* Discards a killed process's deferred events. */
void sim__drop_deferred(struct sim_world *w, int proc)
{
    struct sim_proc *p = &w->procs[proc];
    for (size_t i = p->dhead; i < p->ndeferred; i++) {
        struct sim_deferred d = p->deferred[i];
        if (w->slots[d.slot].seq == d.seq)
            slot_discard(w, d.slot);
    }
    p->dhead = p->ndeferred = 0;
    sim_cancel(w, p->replay);
    p->replay = 0;
}

/* ---------------------------------------------------------------- streams -----*/

struct sim_rng *sim_rng(struct sim_world *w, const char *name)
{
    for (size_t i = 0; i < w->nstreams; i++)
        if (strcmp(w->streams[i].name, name) == 0)
            return w->streams[i].rng;
    FL_GROW(w->streams, w->cap_streams, w->nstreams + 1, 16);
    struct sim_stream *st = &w->streams[w->nstreams++];
    st->name = fl_strdup(name);
    st->rng = fl_malloc(sizeof(*st->rng));
    sim_rng_derive(st->rng, w->seed, name);
    return st->rng;
}

/* ---------------------------------------------------------------- faults ------*/

void sim_set_fault_hook(struct sim_world *w, const struct sim_fault_hook *hook)
{
    if (w->has_fault && w->fault.free)
        w->fault.free(w->fault.ctx);
    w->has_fault = hook != NULL;
    if (hook)
        w->fault = *hook;
    else
        memset(&w->fault, 0, sizeof(w->fault));
}

void *sim_fault_hook_ctx(const struct sim_world *w)
{
    return w->has_fault ? w->fault.ctx : NULL;
}

bool sim_fault_check(struct sim_world *w, int proc, enum flt_point fp, struct sim_fault_hit *hit)
{
    struct sim_fault_hit local;
    if (!hit)
        hit = &local;
    hit->action = SIM_FAULT_NONE;
    hit->delay_ns = 0;
    if (!w->has_fault || !w->fault.check)
        return false;
    return w->fault.check(w->fault.ctx, w, proc, fp, hit);
}

/* ---------------------------------------------------------------- lifecycle ---*/

struct sim_world *sim_world_new(uint64_t seed)
{
    struct sim_world *w = fl_calloc(1, sizeof(*w));
    w->seed = seed;
    w->free_slot = SLOT_NONE;
    w->current_proc = -1;
    fl_digest_init(&w->digest);
    net__init(w);
    fl_assert_ctx.seed = seed;
    fl_assert_ctx.now_ns = 0;
    fl_assert_ctx.event_no = 0;
    fl_assert_ctx.scenario = NULL;
    return w;
}

void sim__procs_free(struct sim_world *w);

void sim_world_free(struct sim_world *w)
{
    if (!w)
        return;
    /* Drop pending events first: their drop functions free net frames and disk
     * requests that still point into the world. */
    for (size_t i = 0; i < w->nheap; i++)
        if (entry_live(w, &w->heap[i]))
            slot_discard(w, sim__entry_slot(&w->heap[i]));
    w->nheap = 0;
    for (int i = 0; i < w->nprocs; i++)
        sim__drop_deferred(w, i);
    sim_set_fault_hook(w, NULL);
    net__free(w);
    sim__procs_free(w);
    for (size_t i = 0; i < w->nstreams; i++) {
        free(w->streams[i].name);
        free(w->streams[i].rng);
    }
    free(w->streams);
    free(w->heap);
    free(w->slots);
    fl_digest_close(&w->digest);
    if (fl_assert_ctx.seed == w->seed)
        memset(&fl_assert_ctx, 0, sizeof(fl_assert_ctx));
    free(w);
}
