/*
 * sim.h: the simulated world (DESIGN §2, §3.2, §6). One struct sim_world holds
 * everything a run needs to be deterministic: a simulated clock in int64
 * nanoseconds, one event queue ordered by (time_ns, insertion sequence), named RNG
 * streams derived from the master seed, the processes (nodes and clients), and the
 * run digest. The network lives in net.h and the per-node disks in disk.h; both
 * belong to the same world.
 *
 * Rules every user can rely on:
 * - One thread. Nothing here reads a wall clock, the environment or an address in
 *   a way that can change a run. Events due at the same time run in the order they
 *   were scheduled.
 * - Callbacks are never called from inside the call that scheduled them: a timer
 *   started with delay 0 runs after the current event returns.
 * - A process (struct sim_proc, small integer id) is what kill/restart/pause/skew
 *   act on. Timers belong to a process: when it is killed they are dropped; while
 *   it is paused they are deferred (in order) until resume; its clock rate scales
 *   their delays. Both nodes and clients are processes, and a process id is also
 *   its network endpoint id (net.h).
 * - Several worlds may be created and freed one after another in one process;
 *   nothing global outlives a world except fl_assert_ctx, which the running world
 *   keeps current (seed, now, event number).
 *
 * Never: threads, floats deciding anything, iteration over hash order.
 */
#ifndef FL_SIM_H
#define FL_SIM_H

#include "harness/common/common.h"
#include "harness/common/failpoints.h"
#include "harness/common/rng.h"

struct sim_world;

/* ---------------------------------------------------------------- RNG ---------
 * The world's streams are harness/common's generator (xoshiro256** seeded through
 * splitmix64, rng.h) under the simulator's prefix; there is no second copy here. A
 * stream is a plain value: copying it forks it. Integer-only helpers; nothing
 * random goes through a float. */
struct sim_rng {
    struct fl_rng fl;
};

/* Seeds r from one 64-bit value (splitmix64 expands it to the 256-bit state). */
static inline void sim_rng_seed(struct sim_rng *r, uint64_t seed)
{
    fl_rng_seed(&r->fl, seed);
}
/* Seeds r from (master seed, stream name): streams with different names are
 * independent, so drawing from one never moves another. */
static inline void sim_rng_derive(struct sim_rng *r, uint64_t master_seed, const char *name)
{
    fl_rng_derive(&r->fl, master_seed, name);
}
static inline uint64_t sim_rng_u64(struct sim_rng *r)
{
    return fl_rng_u64(&r->fl);
}
/* Uniform in [0, n) without modulo bias; n > 0. */
static inline uint64_t sim_rng_below(struct sim_rng *r, uint64_t n)
{
    return fl_rng_below(&r->fl, n);
}
/* Uniform in [lo, hi], both inclusive; lo <= hi. */
static inline int64_t sim_rng_range(struct sim_rng *r, int64_t lo, int64_t hi)
{
    return fl_rng_range(&r->fl, lo, hi);
}
/* True with probability ppm / 1,000,000 (0 never draws and is false; >= 1e6 is
 * always true without drawing). */
static inline bool sim_rng_chance_ppm(struct sim_rng *r, uint32_t ppm)
{
    return fl_rng_chance_ppm(&r->fl, ppm);
}

#define SIM_PPM FL_PPM

/* ---------------------------------------------------------------- world -------*/

/* Creates a world at time 0 with the given master seed. Owned by the caller;
 * free with sim_world_free (drops every pending event, closes every process,
 * connection and disk, and calls the fault hook's free function). Freeing never
 * calls on_kill or any socket/timer callback: owners free their own process state
 * (before or after, the world never touches it). */
struct sim_world *sim_world_new(uint64_t seed);
void sim_world_free(struct sim_world *w);

uint64_t sim_seed(const struct sim_world *w);
int64_t sim_now_ns(const struct sim_world *w);
/* Events processed so far (the event number printed by assertions). */
uint64_t sim_event_count(const struct sim_world *w);
/* Events pending in the queue (cancelled ones not yet reclaimed may be counted). */
size_t sim_pending_count(const struct sim_world *w);
/* Time of the earliest pending event, or INT64_MAX when the queue is empty. */
int64_t sim_next_time_ns(struct sim_world *w);

/* Names the scenario for assertion messages (the string must outlive the world). */
void sim_set_scenario(struct sim_world *w, const char *scenario);

/* Named stream owned by the world, derived from (seed, name) on first use. The
 * pointer stays valid for the life of the world: cache it. Conventional names:
 * "net", "disk", "fault", "proc/<name>", "client/<n>", "workload", "lua". */
struct sim_rng *sim_rng(struct sim_world *w, const char *name);

/* ---------------------------------------------------------------- events ------
 * Plain event callback. ctx is the caller's; the world never frees it. */
typedef void sim_event_fn(struct sim_world *w, void *ctx);

/* Event kinds folded into the digest. Values are part of the digest: append only. */
enum sim_event_kind {
    SIM_EV_CALL = 1,     /* world-level callback (sim_schedule) */
    SIM_EV_TIMER = 2,    /* process timer */
    SIM_EV_NET = 3,      /* a frame arriving (net.c) */
    SIM_EV_NET_CTL = 4,  /* connect / accept / close notifications (net.c) */
    SIM_EV_DISK = 5,     /* fsync completion (disk.c) */
    SIM_EV_PROC = 6,     /* kill / restart / pause / resume */
    SIM_EV_DEFERRED = 7, /* an event of a paused process, replayed at resume */
    SIM_EV_USER = 64     /* first kind free for other modules (sim_schedule_tagged) */
};

/* A handle to a scheduled event, for cancel. 0 is never a valid handle, so a
 * zero-initialised field means "no event". Handles are generation-checked: a
 * handle whose event already ran or was cancelled is harmless to cancel again. */
typedef uint64_t sim_handle;

/* Schedules fn(w, ctx) at now + delay_ns (delay >= 0) as a world-level event: it
 * belongs to no process, so kill/pause/skew never touch it (use it for the
 * scenario driver, workload generators, checkers). */
sim_handle sim_schedule(struct sim_world *w, int64_t delay_ns, sim_event_fn *fn, void *ctx);
sim_handle sim_schedule_at(struct sim_world *w, int64_t at_ns, sim_event_fn *fn, void *ctx);
/* Same, with a kind (>= SIM_EV_USER) and a tag folded into the digest. */
sim_handle sim_schedule_tagged(struct sim_world *w, int64_t delay_ns, uint32_t kind, uint64_t tag,
                               sim_event_fn *fn, void *ctx);
/* Cancels a pending event (timer or world event). Returns true when it was
 * pending and is now cancelled; false when it already ran, was cancelled, or the
 * handle is 0. O(1); the heap slot is reclaimed lazily. */
bool sim_cancel(struct sim_world *w, sim_handle h);

/* Runs the earliest pending event. Returns false when the queue is empty. */
bool sim_step(struct sim_world *w);
/* Runs every event with time <= t_ns, then sets now = t_ns (never moves time
 * back). Returns early, with now at the last event run, when sim_stop is called
 * from inside an event; returns true when it reached t_ns. */
bool sim_run_until(struct sim_world *w, int64_t t_ns);
bool sim_run_for(struct sim_world *w, int64_t d_ns);
/* Makes the innermost sim_run_until/run_for return after the current event. */
void sim_stop(struct sim_world *w);

/* ---------------------------------------------------------------- digest ------
 * The run digest (DESIGN §2). The world folds every processed event into it:
 * (time, kind, source, destination, tag) where net frames use their type, length and
 * CRC32C over the payload bytes as the tag. Other modules (history recorder, ...) fold their own
 * records here so there is exactly one digest per run. Folding is buffered; the
 * order of folds is preserved exactly. */
void sim_digest_fold(struct sim_world *w, const void *p, size_t n);
void sim_digest_u64(struct sim_world *w, uint64_t v);
void sim_digest_str(struct sim_world *w, const char *s); /* length-prefixed; NULL ok */
uint64_t sim_digest_value(struct sim_world *w);
void sim_digest_hex(struct sim_world *w, char out[17]);

/* ---------------------------------------------------------------- processes ---
 * A process is a node or a client: something that can be killed, restarted,
 * paused and skewed, and that has a network endpoint (id == proc id) and a disk
 * (disk.h; clients simply never use theirs). Ids are 0, 1, 2, ... in the order of
 * sim_proc_add. */

enum sim_proc_state { SIM_PROC_UP = 0, SIM_PROC_PAUSED = 1, SIM_PROC_DOWN = 2 };

struct sim_proc_ops {
    /* Called when the process dies (sim_proc_kill or a crash failpoint): free
     * all in-memory state. By then its timers are gone, its connections are
     * closed (no on_close callbacks are made to a dead process), its listeners
     * are removed and its disk has crashed (only synced bytes survive). Do not
     * send or schedule from here. May be NULL. */
    void (*on_kill)(struct sim_world *w, int proc, void *ctx);
    /* Called by sim_proc_restart: rebuild state from disk, re-listen, restart
     * timers. Runs with sim_current_proc() == proc. May be NULL. */
    void (*on_restart)(struct sim_world *w, int proc, void *ctx);
};

/* Adds a process in state UP. name is copied; it must be unique and is used
 * for its RNG stream ("proc/<name>") and in messages. ops is copied; ctx is the
 * owner's. Returns the new id. */
int sim_proc_add(struct sim_world *w, const char *name, const struct sim_proc_ops *ops, void *ctx);
int sim_proc_count(const struct sim_world *w);
/* Id of the process with that name, or -1. */
int sim_proc_find(const struct sim_world *w, const char *name);
const char *sim_proc_name(const struct sim_world *w, int proc);
enum sim_proc_state sim_proc_state(const struct sim_world *w, int proc);
bool sim_proc_alive(const struct sim_world *w, int proc); /* UP or PAUSED */
/* The process's own stream "proc/<name>" (pointer valid for the world's life). */
struct sim_rng *sim_proc_rng(struct sim_world *w, int proc);
/* Changes the ctx passed to ops (e.g. after the owner reallocates its state). */
void sim_proc_set_ctx(struct sim_world *w, int proc, void *ctx);
/* How many times the process was killed (also its incarnation number). */
uint32_t sim_proc_incarnation(const struct sim_world *w, int proc);

/* The process whose event is being dispatched, or -1 for a world-level event.
 * Failpoints (fault.h) use it to decide per node. */
int sim_current_proc(const struct sim_world *w);

/* Kill: the process goes DOWN at once. Timers and pending deliveries to it are
 * dropped, deferred events discarded, every connection end it owns is closed and
 * a reset travels to each peer, listeners are removed, its disk crashes
 * (disk.h), then ops.on_kill runs. When called from inside one of the process's
 * own events (a crash failpoint), everything happens at once except on_kill,
 * which runs right after that event returns, so the caller's state stays valid
 * until it unwinds. Killing a DOWN process is a no-op. Returns FL_OK. */
int sim_proc_kill(struct sim_world *w, int proc);
/* Restart a DOWN process: state UP, clock rate reset to 1,000,000 ppm, then
 * ops.on_restart. FL_EBUSY when it is not DOWN. */
int sim_proc_restart(struct sim_world *w, int proc);
/* Pause (gray failure): connections stay open and frames keep arriving, but
 * nothing of the process runs; its timers and deliveries are deferred and replayed
 * in their original order at resume. FL_EDOWN if DOWN; pausing twice is a no-op. */
int sim_proc_pause(struct sim_world *w, int proc);
int sim_proc_resume(struct sim_world *w, int proc);
/* Clock rate in parts per million of real time: 1,000,000 is exact; 1,100,000
 * runs 10% fast (a 100 ms timer fires after ~90.9 ms of world time). Applies to
 * timers started afterwards and to sim_proc_local_ns. rate_ppm in [1000, 100e6]. */
int sim_proc_set_rate(struct sim_world *w, int proc, int64_t rate_ppm);
int64_t sim_proc_rate(const struct sim_world *w, int proc);
/* The process's own monotonic clock (starts equal to world time, advances at
 * its rate; continuous across rate changes). Use it for leases and deadlines
 * that a real node would measure with its own clock. */
int64_t sim_proc_local_ns(const struct sim_world *w, int proc);

/* Starts a timer owned by proc: fn(w, ctx) runs after delay_ns of the process's
 * local time (scaled by its rate). Dropped if the process dies first, deferred
 * while it is paused. Cancel with sim_cancel. Must not be called for a DOWN
 * process (returns 0 then). */
sim_handle sim_timer_start(struct sim_world *w, int proc, int64_t delay_ns, sim_event_fn *fn,
                           void *ctx);

/* ---------------------------------------------------------------- faults hook -
 * The world itself never knows failpoint names; harness/fault installs a hook and
 * the network and disk ask it at their edges ("net/drop", "net/corrupt",
 * "disk/fsync_eio", "disk/write_eio", "disk/read_eio", "disk/torn_write"). */
enum sim_fault {
    SIM_FAULT_NONE = 0,
    SIM_FAULT_CRASH, /* kill the process now */
    SIM_FAULT_ERROR, /* fail the operation (EIO, an error reply, ...) */
    SIM_FAULT_DELAY, /* delay by delay_ns */
    SIM_FAULT_DROP   /* drop the message / skip the step */
};
struct sim_fault_hit {
    enum sim_fault action;
    int64_t delay_ns; /* for SIM_FAULT_DELAY */
};
struct sim_fault_hook {
    /* Decides whether failpoint fp fires for proc now; fills *hit. */
    bool (*check)(void *ctx, struct sim_world *w, int proc, enum flt_point fp,
                  struct sim_fault_hit *hit);
    void (*free)(void *ctx); /* called by sim_world_free; may be NULL */
    void *ctx;
};
void sim_set_fault_hook(struct sim_world *w, const struct sim_fault_hook *hook);
/* The hook's ctx, or NULL when none is installed. */
void *sim_fault_hook_ctx(const struct sim_world *w);
/* Asks the hook (false and action NONE when no hook is installed). */
bool sim_fault_check(struct sim_world *w, int proc, enum flt_point fp, struct sim_fault_hit *hit);

#include "harness/sim/net.h"
#include "harness/sim/disk.h"

#endif
