/*
 * env.h: the node environment (DESIGN §8, issue 16 §1). Everything a server member
 * or a client needs from the world passes through one struct fl_env: its clocks
 * and timers, its sockets, its files and fsync, its random stream, its failpoints
 * and its death. The node code (nodes/client, nodes/server) includes this header
 * and never the simulator; the implementations are env_sim.c (one simulated
 * process of a harness/sim world: same calls, same order, so a run's digest does
 * not move) and, for tests, any fake that fills struct env_ops.
 *
 * Shape (libuv's, see STYLE): the caller owns the memory of every handle. A timer
 * is a struct env_timer embedded in the caller's object; a socket's callbacks are
 * a struct env_sock_cb the caller owns and keeps alive as long as any socket bound
 * to it (several sockets may share one). No env call runs a callback from inside
 * itself: a timer started with delay 0 fires after the current callback returns.
 * A callback is never made to a dead process (after env_crash, or a kill by the
 * world): its timers are dropped, its sockets closed without callbacks.
 *
 * CLOCKS. There are two, and each caller says which it wants:
 * - env_now_ns: the reference clock of the run (the simulated world's time; the
 *   harness's monotonic clock in a live run). It is what the history, the
 *   checkers and the statistics measure in, so every timestamp that leaves the
 *   node (recorded op times, lag and stall figures, checker feeds) uses it.
 * - env_local_ns: this process's own monotonic clock, which may run fast or slow
 *   (clock skew). It is what a real node measures its own deadlines with (lease
 *   expiry, election and heartbeat ticks, request timeouts), and timers run on it:
 *   a timer of delay d fires when the local clock has advanced by d.
 *
 * Errors are FL_* codes (harness/common/common.h); FL_EDOWN means the process or
 * the socket is gone.
 */
#ifndef FL_ENV_H
#define FL_ENV_H

#include "harness/common/common.h"
#include "harness/common/failpoints.h"

struct fl_env;

/* ---------------------------------------------------------------- timers ------ */

typedef void env_timer_fn(void *ctx);

/* A timer handle, embedded in the caller's object. Zero-initialised = inactive.
 * Between env_timer_start and the callback (or env_timer_stop) it is active; the
 * environment clears id before calling fn, so fn may start it again. Its memory
 * must stay valid while it is active. */
struct env_timer {
    uint64_t id; /* the implementation's handle; 0 = inactive */
    env_timer_fn *fn;
    void *ctx;
};

static inline bool env_timer_active(const struct env_timer *t)
{
    return t->id != 0;
}

/* ---------------------------------------------------------------- sockets ----- */

/* One end of a reliable, ordered, framed connection (the simulator's connection;
 * TCP with our length framing over libuv). 0 = none. Generation-checked: using a
 * closed socket fails with FL_EDOWN and never touches another connection. */
typedef uint64_t env_sock;

/* Why on_close was called (the values of net.h's net_close_reason, which the
 * digest folds: append only). */
enum env_close_reason {
    ENV_CLOSE_REFUSED = 1, /* connect refused: peer down or not listening */
    ENV_CLOSE_PEER = 2,    /* the peer closed the connection */
    ENV_CLOSE_RESET = 3,   /* the connection broke, or the peer died */
    ENV_CLOSE_OVERFLOW = 4 /* too many frames waiting on the link */
};

/* The callbacks of one or more sockets, owned by the caller. p is valid only during
 * on_message. After on_close the socket is dead; closing a socket yourself makes no
 * callback. Any member may be NULL. */
struct env_sock_cb {
    void (*on_open)(void *ctx, env_sock s); /* the connecting side only */
    void (*on_message)(void *ctx, env_sock s, const uint8_t *p, size_t n);
    void (*on_close)(void *ctx, env_sock s, int reason);
    void *ctx;
};

/* An accepted connection from peer (an address as env_connect takes it). The
 * acceptor MUST call env_sock_bind (or env_close) on s before returning. */
typedef void env_accept_fn(void *ctx, env_sock s, int peer);

/* ---------------------------------------------------------------- files ------- */

/* Files are named by flat strings ("wal/0000.wal"); there are no directories: list
 * filters by prefix and returns names in byte order. What was written is visible at
 * once and durable only after an fsync of the file completes; metadata operations
 * (create, rename, remove, truncate) are durable at once. */
typedef void env_fsync_fn(struct fl_env *e, void *ctx, int err);
typedef void env_list_fn(const char *name, uint64_t size, void *ctx);

/* ---------------------------------------------------------------- failpoints -- */

/* What a failpoint asks of its site (the values of sim.h's enum sim_fault). */
enum env_fault {
    ENV_FAULT_NONE = 0,
    ENV_FAULT_CRASH, /* the process has been killed already: unwind, touch nothing */
    ENV_FAULT_ERROR, /* fail the operation */
    ENV_FAULT_DELAY, /* delay by delay_ns */
    ENV_FAULT_DROP   /* drop the message / skip the step */
};
struct env_fault_hit {
    enum env_fault action;
    int64_t delay_ns;
};

/* ---------------------------------------------------------------- the table --- */

/* One implementation. Every function takes the environment first. Callers use the
 * env_* wrappers below, which say what each call means; an implementation fills
 * every member (none may be NULL). */
struct env_ops {
    int64_t (*now_ns)(struct fl_env *e);
    int64_t (*local_ns)(struct fl_env *e);
    /* Arms t (inactive; fn and ctx already stored in it) to fire after delay_ns of
     * local time; sets t->id. false when the process is down (t stays inactive). */
    bool (*timer_start)(struct fl_env *e, struct env_timer *t, int64_t delay_ns);
    void (*timer_stop)(struct fl_env *e, struct env_timer *t);
    uint64_t (*rand_u64)(struct fl_env *e);
    /* The incarnation: how many times this process died before (0 at first start). */
    uint32_t (*incarnation)(struct fl_env *e);
    /* The process dies now (a panic); see env_crash. */
    void (*crash)(struct fl_env *e);
    bool (*alive)(struct fl_env *e);
    enum env_fault (*failpoint)(struct fl_env *e, enum flt_point fp, struct env_fault_hit *hit);

    int (*listen)(struct fl_env *e, int port, env_accept_fn *fn, void *ctx);
    int (*unlisten)(struct fl_env *e, int port);
    env_sock (*connect)(struct fl_env *e, int peer, int port, const struct env_sock_cb *cb);
    int (*sock_bind)(struct fl_env *e, env_sock s, const struct env_sock_cb *cb);
    int (*send)(struct fl_env *e, env_sock s, const void *p, size_t n);
    void (*close)(struct fl_env *e, env_sock s);
    bool (*sock_open)(struct fl_env *e, env_sock s);
    int (*sock_peer)(struct fl_env *e, env_sock s);

    int (*file_write)(struct fl_env *e, const char *name, uint64_t off, const void *p, size_t n);
    int (*file_append)(struct fl_env *e, const char *name, const void *p, size_t n);
    int (*file_put)(struct fl_env *e, const char *name, struct fl_buf *content);
    int (*file_view)(struct fl_env *e, const char *name, const uint8_t **p, size_t *len);
    int (*file_truncate)(struct fl_env *e, const char *name, uint64_t len);
    int (*file_rename)(struct fl_env *e, const char *from, const char *to);
    int (*file_remove)(struct fl_env *e, const char *name);
    int (*file_list)(struct fl_env *e, const char *prefix, env_list_fn *fn, void *ctx);
    int (*file_fsync)(struct fl_env *e, const char *name, env_fsync_fn *cb, void *ctx);
    void (*files_wipe)(struct fl_env *e);
};

/* The environment of one process. Implementations embed it first in their own
 * state. */
struct fl_env {
    const struct env_ops *ops;
};

/* ---------------------------------------------------------------- wrappers ---- */

/* The run's reference clock (history, checkers, statistics). */
static inline int64_t env_now_ns(struct fl_env *e)
{
    return e->ops->now_ns(e);
}
/* This process's own, possibly skewed, monotonic clock (its own deadlines). */
static inline int64_t env_local_ns(struct fl_env *e)
{
    return e->ops->local_ns(e);
}

/* Starts t: fn(ctx) runs after delay_ns (>= 0) of this process's local time. t must
 * be inactive (stop it first to re-arm). Returns false, t inactive, when the
 * process is down. */
static inline bool env_timer_start(struct fl_env *e, struct env_timer *t, int64_t delay_ns,
                                   env_timer_fn *fn, void *ctx)
{
    FL_ASSERT(t->id == 0);
    t->fn = fn;
    t->ctx = ctx;
    return e->ops->timer_start(e, t, delay_ns);
}
/* Stops t if active; harmless when inactive. */
static inline void env_timer_stop(struct fl_env *e, struct env_timer *t)
{
    if (t->id != 0)
        e->ops->timer_stop(e, t);
    t->id = 0;
}

/* The process's own random stream (seeded from the run's seed in the simulator). */
static inline uint64_t env_rand_u64(struct fl_env *e)
{
    return e->ops->rand_u64(e);
}
static inline uint32_t env_incarnation(struct fl_env *e)
{
    return e->ops->incarnation(e);
}
/* The process dies now, as a panic would kill it: its timers are dropped, its
 * sockets reset, its unsynced writes lost. Called from inside one of its callbacks,
 * the caller's state stays valid until that callback returns; the caller must then
 * unwind without further side effects. */
static inline void env_crash(struct fl_env *e)
{
    e->ops->crash(e);
}
/* Up or paused (not dead). */
static inline bool env_alive(struct fl_env *e)
{
    return e->ops->alive(e);
}
/* Decides failpoint fp for this process now and fills *hit (may be NULL). On
 * ENV_FAULT_CRASH the process has been killed already (see env_crash). */
static inline enum env_fault env_failpoint(struct fl_env *e, enum flt_point fp,
                                           struct env_fault_hit *hit)
{
    return e->ops->failpoint(e, fp, hit);
}

/* Listens on port; a process's listeners are gone when it dies (re-listen when it
 * comes back). FL_EEXIST if already listening. */
static inline int env_listen(struct fl_env *e, int port, env_accept_fn *fn, void *ctx)
{
    return e->ops->listen(e, port, fn, ctx);
}
static inline int env_unlisten(struct fl_env *e, int port)
{
    return e->ops->unlisten(e, port);
}
/* Opens a connection to (peer, port): peer is the address of another process (its
 * process id in the simulator; a member index the live environment maps to a TCP
 * address). The outcome comes later through cb: on_open, or on_close with a reason.
 * Frames sent before on_open are queued. 0 when this process is down. */
static inline env_sock env_connect(struct fl_env *e, int peer, int port,
                                   const struct env_sock_cb *cb)
{
    return e->ops->connect(e, peer, port, cb);
}
static inline int env_sock_bind(struct fl_env *e, env_sock s, const struct env_sock_cb *cb)
{
    return e->ops->sock_bind(e, s, cb);
}
/* Sends a copy of p[0..n) as one frame. FL_OK when it left (it may still be lost,
 * which breaks the connection); FL_EDOWN when the socket is closed. */
static inline int env_send(struct fl_env *e, env_sock s, const void *p, size_t n)
{
    return e->ops->send(e, s, p, n);
}
/* Closes this end (no callback); idempotent. */
static inline void env_close(struct fl_env *e, env_sock s)
{
    e->ops->close(e, s);
}
static inline bool env_sock_open(struct fl_env *e, env_sock s)
{
    return e->ops->sock_open(e, s);
}
/* The address of the other end, or -1 for a dead socket. */
static inline int env_sock_peer(struct fl_env *e, env_sock s)
{
    return e->ops->sock_peer(e, s);
}

/* Writes p[0..n) at off (growing, creating). FL_OK, FL_EIO, FL_EDOWN. */
static inline int env_file_write(struct fl_env *e, const char *name, uint64_t off, const void *p,
                                 size_t n)
{
    return e->ops->file_write(e, name, off, p, n);
}
static inline int env_file_append(struct fl_env *e, const char *name, const void *p, size_t n)
{
    return e->ops->file_append(e, name, p, n);
}
/* Writes *content as the whole file, taking the buffer (*content is closed after,
 * whatever the result). */
static inline int env_file_put(struct fl_env *e, const char *name, struct fl_buf *content)
{
    return e->ops->file_put(e, name, content);
}
/* The whole file without copying: *p is valid until the next call that changes
 * the files. FL_ENOENT, FL_EIO, FL_EDOWN. */
static inline int env_file_view(struct fl_env *e, const char *name, const uint8_t **p, size_t *len)
{
    return e->ops->file_view(e, name, p, len);
}
static inline int env_file_truncate(struct fl_env *e, const char *name, uint64_t len)
{
    return e->ops->file_truncate(e, name, len);
}
/* Atomically renames, replacing `to`. FL_ENOENT if from is absent. */
static inline int env_file_rename(struct fl_env *e, const char *from, const char *to)
{
    return e->ops->file_rename(e, from, to);
}
static inline int env_file_remove(struct fl_env *e, const char *name)
{
    return e->ops->file_remove(e, name);
}
/* Calls fn for every file whose name starts with prefix, in byte order of names;
 * fn must not change the files. Returns the count, or FL_EDOWN (negative). */
static inline int env_file_list(struct fl_env *e, const char *prefix, env_list_fn *fn, void *ctx)
{
    return e->ops->file_list(e, prefix, fn, ctx);
}
/* Starts an fsync of one file; cb(e, ctx, err) runs later (err FL_OK, FL_EIO, or
 * FL_ENOENT if the file was removed meanwhile), never if the process dies first.
 * Returns FL_OK or FL_EDOWN (cb not called then). */
static inline int env_file_fsync(struct fl_env *e, const char *name, env_fsync_fn *cb, void *ctx)
{
    return e->ops->file_fsync(e, name, cb, ctx);
}
/* Erases every file of this process (a replaced machine, a restored snapshot). */
static inline void env_files_wipe(struct fl_env *e)
{
    e->ops->files_wipe(e);
}

#endif
