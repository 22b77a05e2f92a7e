/*
 * sim_int.h: internals shared by the files of harness/sim (world.c, net.c,
 * disk.c). Nothing outside harness/sim includes this file.
 *
 * The event queue is a binary heap of (at_ns, seq, slot) entries over a slab of
 * event slots. A slot holds the callback and its digest fields; the heap entry is
 * valid only while slot.seq equals the entry's seq, which is how cancel works in
 * O(1) (the stale heap entry is skipped when it surfaces, and the heap is compacted
 * when stale entries outnumber live ones).
 */
#ifndef FL_SIM_INT_H
#define FL_SIM_INT_H

/* Internal to harness/sim: compiled only into fl_sim (which defines FL_INTERNAL_sim)
 * and into the white-box tests that declare it (tests/CMakeLists.txt). */
#ifndef FL_INTERNAL_sim
#error "harness/sim/sim_int.h is internal to harness/sim: include its public header instead"
#endif

#include "harness/sim/sim.h"

/* Called instead of fn when an event is discarded without running (its process
 * died, it was cancelled, the world was freed): frees ctx. */
typedef void sim_drop_fn(void *ctx);

/* One cache line per slot (the pop path touches exactly one). */
struct sim_slot {
    uint64_t seq; /* seq of the live event in this slot; 0 when free */
    sim_event_fn *fn;
    sim_drop_fn *drop;
    void *ctx;
    uint64_t tag; /* digest tag; the free-list link while the slot is free */
    int32_t proc; /* owning process or -1 */
    uint32_t epoch;
    int32_t src, dst;
    uint32_t gen; /* handle generation, bumped at every free */
    uint16_t kind;
    bool queued; /* its heap entry is live (not deferred) */
} __attribute__((aligned(64)));

/* 16 bytes so that the four children of a node share one cache line. key packs
 * (seq << SIM_SLOT_BITS) | slot: seq is unique, so (at_ns, key) orders events by
 * (time, seq) exactly. */
#define SIM_SLOT_BITS 24
#define SIM_SLOT_MAX  ((UINT32_C(1) << SIM_SLOT_BITS) - 1)
#define SIM_SEQ_MAX   ((UINT64_C(1) << (64 - SIM_SLOT_BITS)) - 1)
struct sim_heap_entry {
    int64_t at_ns;
    uint64_t key;
};
static inline uint32_t sim__entry_slot(const struct sim_heap_entry *e)
{
    return (uint32_t)(e->key & SIM_SLOT_MAX);
}
static inline uint64_t sim__entry_seq(const struct sim_heap_entry *e)
{
    return e->key >> SIM_SLOT_BITS;
}

struct sim_deferred {
    uint32_t slot;
    uint64_t seq;
};

struct sim_proc {
    char *name;
    struct sim_proc_ops ops;
    void *ctx;
    enum sim_proc_state state;
    uint32_t incarnation; /* bumped at every kill */
    int64_t rate_ppm;
    int64_t local_base_ns, real_base_ns;
    struct sim_rng *rng;
    struct sim_deferred *deferred; /* a queue: [dhead, ndeferred) still to run */
    size_t dhead, ndeferred, cap_deferred;
    sim_handle replay; /* the pending replay event after resume, or 0 */
    bool kill_pending; /* on_kill runs after the current event */
    struct disk *disk;
};

struct sim_stream {
    char *name;
    struct sim_rng *rng;
};

struct net_state;

#define SIM_DIGEST_BUF 4096

struct sim_world {
    uint64_t seed;
    int64_t now_ns;
    uint64_t events;
    uint64_t next_seq;
    const char *scenario;
    bool stop;
    bool running; /* inside sim_step: the queue is not re-entrant */

    struct sim_heap_entry *heap;
    size_t nheap, cap_heap;
    size_t stale; /* heap entries whose slot moved on */
    struct sim_slot *slots;
    uint32_t nslots, cap_slots, free_slot; /* free_slot: UINT32_MAX when none */

    int current_proc;
    struct sim_proc *procs;
    int nprocs, cap_procs;

    struct sim_stream *streams;
    size_t nstreams, cap_streams;

    struct fl_digest digest;
    uint8_t dbuf[SIM_DIGEST_BUF];
    size_t dlen;

    struct sim_fault_hook fault;
    bool has_fault;

    struct net_state *net;
};

/* Schedules an internal event at absolute time at_ns. proc >= 0 makes it a
 * process event (dropped if the process dies, deferred while paused). */
sim_handle sim__schedule(struct sim_world *w, int64_t at_ns, int proc, uint32_t kind, int32_t src,
                         int32_t dst, uint64_t tag, sim_event_fn *fn, sim_drop_fn *drop, void *ctx);
/* Runs fn(w, ctx) in proc's context now (if UP), defers it (if PAUSED) or drops it
 * (if DOWN: drop(ctx)). Used for deliveries decided inside a world-level event. */
void sim__run_in_proc(struct sim_world *w, int proc, uint32_t kind, int32_t src, int32_t dst,
                      uint64_t tag, sim_event_fn *fn, sim_drop_fn *drop, void *ctx);
/* Folds one event record into the digest. */
void sim__digest_event(struct sim_world *w, int64_t at_ns, uint32_t kind, int32_t src, int32_t dst,
                       uint64_t tag);

/* Per-module hooks called by world.c. */
void net__init(struct sim_world *w);
void net__free(struct sim_world *w);
void net__proc_added(struct sim_world *w, int proc);
void net__proc_killed(struct sim_world *w, int proc);
struct disk *disk__new(struct sim_world *w, int proc);
void disk__free(struct disk *d);
void disk__crash(struct sim_world *w, int proc);

static inline struct sim_proc *sim__proc(const struct sim_world *w, int proc)
{
    FL_ASSERTF(proc >= 0 && proc < w->nprocs, "bad process id %d (have %d)", proc, w->nprocs);
    return &w->procs[proc];
}

#endif
