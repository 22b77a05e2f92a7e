/*
 * env_sim.c: env.h over the simulator (see env_sim.h). Thin: each function is one
 * harness/sim or harness/fault call for the environment's process. The only state
 * of its own is what the simulator's callback shapes need to reach the node's:
 * - a timer is started with the caller's struct env_timer as the event context;
 *   the trampoline clears its id and calls fn(ctx);
 * - a socket's context is the caller's struct env_sock_cb; the net callbacks are
 *   chosen from a table by which of its members are set, so a socket whose owner
 *   has no on_message is still one the simulator drops frames to, as before;
 * - an fsync completion needs (fn, ctx): a small record from a pool, reclaimed
 *   when it fires or when the process died with it pending (its incarnation moved).
 */
#include "nodes/env/env_sim.h"

#include "harness/fault/fault.h"

struct es_accept;

struct env_sim_fsync {
    struct env_sim *es;
    env_fsync_fn *fn;
    void *ctx;
    uint32_t incarnation;
    struct env_sim_fsync *prev, *next; /* pending list, or the free list (next only) */
};

struct env_sim {
    struct fl_env env; /* first: an fl_env * is an env_sim * */
    struct sim_world *w;
    int proc;
    struct sim_rng *rng;
    struct env_sim_fsync *pending, *spare;
    uint32_t seen_incarnation;
    struct es_accept *listeners; /* one record per port ever listened on */
};

_Static_assert((int)ENV_FAULT_CRASH == (int)SIM_FAULT_CRASH, "env_fault mirrors sim_fault");
_Static_assert((int)ENV_FAULT_ERROR == (int)SIM_FAULT_ERROR, "env_fault mirrors sim_fault");
_Static_assert((int)ENV_FAULT_DELAY == (int)SIM_FAULT_DELAY, "env_fault mirrors sim_fault");
_Static_assert((int)ENV_FAULT_DROP == (int)SIM_FAULT_DROP, "env_fault mirrors sim_fault");
_Static_assert((int)ENV_CLOSE_REFUSED == (int)NET_CLOSE_REFUSED, "env_close mirrors net_close");
_Static_assert((int)ENV_CLOSE_RESET == (int)NET_CLOSE_RESET, "env_close mirrors net_close");
_Static_assert((int)ENV_CLOSE_OVERFLOW == (int)NET_CLOSE_OVERFLOW, "env_close mirrors net_close");

static inline struct env_sim *es_of(struct fl_env *e)
{
    return (struct env_sim *)e;
}

/* ---------------------------------------------------------------- clocks, timers */

static int64_t es_now_ns(struct fl_env *e)
{
    return sim_now_ns(es_of(e)->w);
}

static int64_t es_local_ns(struct fl_env *e)
{
    return sim_proc_local_ns(es_of(e)->w, es_of(e)->proc);
}

static void es_timer_fire(struct sim_world *w, void *ctx)
{
    struct env_timer *t = ctx;
    (void)w;
    FL_ASSERT(t->id != 0);
    t->id = 0;
    t->fn(t->ctx);
}

static bool es_timer_start(struct fl_env *e, struct env_timer *t, int64_t delay_ns)
{
    struct env_sim *es = es_of(e);
    t->id = sim_timer_start(es->w, es->proc, delay_ns, es_timer_fire, t);
    return t->id != 0;
}

static void es_timer_stop(struct fl_env *e, struct env_timer *t)
{
    sim_cancel(es_of(e)->w, t->id);
}

static uint64_t es_rand_u64(struct fl_env *e)
{
    return sim_rng_u64(es_of(e)->rng);
}

/* ---------------------------------------------------------------- process ----- */

static uint32_t es_incarnation(struct fl_env *e)
{
    return sim_proc_incarnation(es_of(e)->w, es_of(e)->proc);
}

static void es_crash(struct fl_env *e)
{
    sim_proc_kill(es_of(e)->w, es_of(e)->proc);
}

static bool es_alive(struct fl_env *e)
{
    return sim_proc_alive(es_of(e)->w, es_of(e)->proc);
}

/* Decided for the process being dispatched (flt_check), as the node code always
 * did: a member's code runs in its own process's events, and where the harness
 * calls into a member from a world-level event only the all-nodes entries apply. */
static enum env_fault es_failpoint(struct fl_env *e, enum flt_point fp, struct env_fault_hit *hit)
{
    struct sim_fault_hit h;
    enum sim_fault f = flt_check(es_of(e)->w, fp, &h);
    if (hit) {
        hit->action = (enum env_fault)h.action;
        hit->delay_ns = h.delay_ns;
    }
    return (enum env_fault)f;
}

/* ---------------------------------------------------------------- sockets ----- */

static void es_on_open(struct sim_world *w, net_sock s, void *ctx)
{
    const struct env_sock_cb *cb = ctx;
    (void)w;
    cb->on_open(cb->ctx, s);
}

static void es_on_message(struct sim_world *w, net_sock s, const uint8_t *p, size_t n, void *ctx)
{
    const struct env_sock_cb *cb = ctx;
    (void)w;
    cb->on_message(cb->ctx, s, p, n);
}

static void es_on_close(struct sim_world *w, net_sock s, int reason, void *ctx)
{
    const struct env_sock_cb *cb = ctx;
    (void)w;
    cb->on_close(cb->ctx, s, reason);
}

/* Indexed by (on_open set) | (on_message set) << 1 | (on_close set) << 2. */
static const struct net_sock_ops es_sock_ops[8] = {
    {NULL, NULL, NULL},
    {es_on_open, NULL, NULL},
    {NULL, es_on_message, NULL},
    {es_on_open, es_on_message, NULL},
    {NULL, NULL, es_on_close},
    {es_on_open, NULL, es_on_close},
    {NULL, es_on_message, es_on_close},
    {es_on_open, es_on_message, es_on_close},
};

static const struct net_sock_ops *es_ops_for(const struct env_sock_cb *cb)
{
    unsigned i = (cb->on_open ? 1u : 0u) | (cb->on_message ? 2u : 0u) | (cb->on_close ? 4u : 0u);
    return &es_sock_ops[i];
}

struct es_accept {
    env_accept_fn *fn;
    void *ctx;
    int port;
    struct es_accept *next;
};

static void es_on_accept(struct sim_world *w, net_sock s, int peer, void *ctx)
{
    struct es_accept *a = ctx;
    (void)w;
    a->fn(a->ctx, s, peer);
}

static int es_listen(struct fl_env *e, int port, env_accept_fn *fn, void *ctx)
{
    struct env_sim *es = es_of(e);
    /* Listener records live as long as the environment (a handful: one per port,
     * reused when the process listens again after a restart). */
    struct es_accept *a = es->listeners;
    while (a && a->port != port)
        a = a->next;
    if (a == NULL) {
        a = fl_calloc(1, sizeof(*a));
        a->port = port;
        a->next = es->listeners;
        es->listeners = a;
    }
    a->fn = fn;
    a->ctx = ctx;
    return net_listen(es->w, es->proc, port, es_on_accept, a);
}

static int es_unlisten(struct fl_env *e, int port)
{
    return net_unlisten(es_of(e)->w, es_of(e)->proc, port);
}

static env_sock es_connect(struct fl_env *e, int peer, int port, const struct env_sock_cb *cb)
{
    struct env_sim *es = es_of(e);
    return net_connect(es->w, es->proc, peer, port, es_ops_for(cb), (void *)(uintptr_t)cb);
}

static int es_sock_bind(struct fl_env *e, env_sock s, const struct env_sock_cb *cb)
{
    return net_sock_bind(es_of(e)->w, s, es_ops_for(cb), (void *)(uintptr_t)cb);
}

static int es_send(struct fl_env *e, env_sock s, const void *p, size_t n)
{
    return net_send(es_of(e)->w, s, p, n);
}

static void es_close(struct fl_env *e, env_sock s)
{
    net_close(es_of(e)->w, s);
}

static bool es_sock_open(struct fl_env *e, env_sock s)
{
    return net_sock_open(es_of(e)->w, s);
}

static int es_sock_peer(struct fl_env *e, env_sock s)
{
    return net_sock_peer(es_of(e)->w, s);
}

/* ---------------------------------------------------------------- files ------- */

static int es_file_write(struct fl_env *e, const char *name, uint64_t off, const void *p, size_t n)
{
    return disk_write(es_of(e)->w, es_of(e)->proc, name, off, p, n);
}

static int es_file_append(struct fl_env *e, const char *name, const void *p, size_t n)
{
    return disk_append(es_of(e)->w, es_of(e)->proc, name, p, n);
}

static int es_file_put(struct fl_env *e, const char *name, struct fl_buf *content)
{
    return disk_write_file(es_of(e)->w, es_of(e)->proc, name, content);
}

static int es_file_view(struct fl_env *e, const char *name, const uint8_t **p, size_t *len)
{
    return disk_view(es_of(e)->w, es_of(e)->proc, name, p, len);
}

static int es_file_truncate(struct fl_env *e, const char *name, uint64_t len)
{
    return disk_truncate(es_of(e)->w, es_of(e)->proc, name, len);
}

static int es_file_rename(struct fl_env *e, const char *from, const char *to)
{
    return disk_rename(es_of(e)->w, es_of(e)->proc, from, to);
}

static int es_file_remove(struct fl_env *e, const char *name)
{
    return disk_remove(es_of(e)->w, es_of(e)->proc, name);
}

static int es_file_list(struct fl_env *e, const char *prefix, env_list_fn *fn, void *ctx)
{
    return disk_list(es_of(e)->w, es_of(e)->proc, prefix, fn, ctx);
}

static void es_fsync_unlink(struct env_sim *es, struct env_sim_fsync *r)
{
    if (r->prev)
        r->prev->next = r->next;
    else
        es->pending = r->next;
    if (r->next)
        r->next->prev = r->prev;
    r->prev = NULL;
    r->next = es->spare;
    es->spare = r;
}

static void es_fsync_done(struct sim_world *w, int proc, int err, void *ctx)
{
    struct env_sim_fsync *r = ctx;
    struct env_sim *es = r->es;
    env_fsync_fn *fn = r->fn;
    void *fctx = r->ctx;
    (void)w;
    (void)proc;
    es_fsync_unlink(es, r);
    fn(&es->env, fctx, err);
}

/* Records pending from an earlier incarnation will never complete (a kill drops
 * them): back to the spare list. */
static void es_fsync_reclaim(struct env_sim *es, uint32_t inc)
{
    if (es->seen_incarnation == inc)
        return;
    es->seen_incarnation = inc;
    struct env_sim_fsync *r = es->pending;
    while (r) {
        struct env_sim_fsync *next = r->next;
        if (r->incarnation != inc)
            es_fsync_unlink(es, r);
        r = next;
    }
}

static int es_file_fsync(struct fl_env *e, const char *name, env_fsync_fn *cb, void *ctx)
{
    struct env_sim *es = es_of(e);
    uint32_t inc = sim_proc_incarnation(es->w, es->proc);
    es_fsync_reclaim(es, inc);
    struct env_sim_fsync *r = es->spare;
    if (r)
        es->spare = r->next;
    else
        r = fl_calloc(1, sizeof(*r));
    r->es = es;
    r->fn = cb;
    r->ctx = ctx;
    r->incarnation = inc;
    r->prev = NULL;
    r->next = es->pending;
    if (es->pending)
        es->pending->prev = r;
    es->pending = r;
    int err = disk_fsync(es->w, es->proc, name, es_fsync_done, r);
    if (err != FL_OK)
        es_fsync_unlink(es, r);
    return err;
}

static void es_files_wipe(struct fl_env *e)
{
    disk_wipe(es_of(e)->w, es_of(e)->proc);
}

/* ---------------------------------------------------------------- lifecycle --- */

static const struct env_ops es_ops = {
    .now_ns = es_now_ns,
    .local_ns = es_local_ns,
    .timer_start = es_timer_start,
    .timer_stop = es_timer_stop,
    .rand_u64 = es_rand_u64,
    .incarnation = es_incarnation,
    .crash = es_crash,
    .alive = es_alive,
    .failpoint = es_failpoint,
    .listen = es_listen,
    .unlisten = es_unlisten,
    .connect = es_connect,
    .sock_bind = es_sock_bind,
    .send = es_send,
    .close = es_close,
    .sock_open = es_sock_open,
    .sock_peer = es_sock_peer,
    .file_write = es_file_write,
    .file_append = es_file_append,
    .file_put = es_file_put,
    .file_view = es_file_view,
    .file_truncate = es_file_truncate,
    .file_rename = es_file_rename,
    .file_remove = es_file_remove,
    .file_list = es_file_list,
    .file_fsync = es_file_fsync,
    .files_wipe = es_files_wipe,
};

struct fl_env *env_sim_new(struct sim_world *w, int proc)
{
    FL_ASSERT(proc >= 0 && proc < sim_proc_count(w));
    struct env_sim *es = fl_calloc(1, sizeof(*es));
    es->env.ops = &es_ops;
    es->w = w;
    es->proc = proc;
    es->rng = sim_proc_rng(w, proc);
    es->seen_incarnation = sim_proc_incarnation(w, proc);
    return &es->env;
}

static void es_fsync_free_list(struct env_sim_fsync *r)
{
    while (r) {
        struct env_sim_fsync *next = r->next;
        free(r);
        r = next;
    }
}

void env_sim_free(struct fl_env *e)
{
    if (e == NULL)
        return;
    struct env_sim *es = es_of(e);
    es_fsync_free_list(es->pending);
    es_fsync_free_list(es->spare);
    struct es_accept *a = es->listeners;
    while (a) {
        struct es_accept *next = a->next;
        free(a);
        a = next;
    }
    free(es);
}

struct sim_world *env_sim_world(const struct fl_env *e)
{
    return ((const struct env_sim *)e)->w;
}

int env_sim_proc(const struct fl_env *e)
{
    return ((const struct env_sim *)e)->proc;
}
