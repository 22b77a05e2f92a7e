/*
 * run_added.c: faults a schedule adds at fixed simulated times (shrink{ add_faults },
 * written by `faultline explore`, which inserts, moves and retimes them), and the
 * reseeding of the swarm's fault draws (shrink{ reseed }).
 *
 * An added fault is (at, kind, node, for, on): at simulated time `at` the fault is
 * applied to member `node`, and `for` later it is undone. With `on` (a node event kind
 * of server.h srv_hook_kind) it waits from `at` for the member's next event of that kind
 * (node 0: any member's) and applies right after it, in a world event at the same time,
 * before anything later of that member (an fsync in flight): run_trigger.c's hook
 * passes the events on (run_added_event) while an added fault waits. Kinds: kill (restart after),
 * power (every member dies; they come back one by one, in an order and with gaps of up to two
 * election timeouts drawn from the stream "added/<i>"), pause (resume), isolate (heal) and
 * crash_save (the member crashes right after its next WAL save, before the messages that depend on
 * it leave; restarted after `for`).
 *
 * Ordinals: added fault i (from 1, in the directive's order) is ordinal
 * RUN_ADDED_BASE + i, applied and undone under that one scope (run_scope), so it
 * never moves the ordinals of the scenario's own faults and `shrink` drops it like any
 * other. run_heal_all ends the fault phase: pending added faults and undos are
 * cancelled then (heal_all undoes what they did). Never: a wall clock, an unseeded
 * draw.
 */
#include "harness/run/run_int.h"

static const char *const kind_names[RUN_ADD_COUNT] = {"kill", "power", "pause", "isolate",
                                                      "crash_save"};

const char *run_added_kind_name(int kind)
{
    return kind >= 0 && kind < RUN_ADD_COUNT ? kind_names[kind] : "?";
}

int run_added_kind_find(const char *name)
{
    for (int i = 0; i < RUN_ADD_COUNT; i++)
        if (!strcmp(kind_names[i], name))
            return i;
    return -1;
}

const char *run_event_kind_name(int k)
{
    return k >= 0 && k < SRV_HOOK_KIND_COUNT ? srv_hook_kind_name((enum srv_hook_kind)k) : "?";
}

/* One added fault in the world: its definition and its pending step. */
struct run_added {
    struct run_world *rw;
    struct run_added_fault f;
    int64_t ordinal;
    int step;     /* 0 start, 1 apply, 2 undo; power: 2 + the index of the member to restart */
    int node;     /* the member it applies to */
    bool waiting; /* for its event (f.on) */
    int order[RUN_NODES_MAX], n_order;
    struct sim_rng rng;
    sim_handle h;
    int64_t next; /* set by added_step: when the next step is due, -1 none */
};

void run_reseed_faults(struct run_world *rw, uint64_t seed)
{
    rw->explore.fault_seed = seed;
    rw->explore.fault_reseeded = true;
}

uint64_t run_fault_seed(const struct run_world *rw)
{
    return rw->explore.fault_reseeded ? rw->explore.fault_seed : rw->seed;
}

int run_add_faults(struct run_world *rw, const struct run_added_fault *v, int n)
{
    if (rw->setup || n < 0 || n > RUN_ADDED_MAX)
        return FL_EINVAL;
    for (int i = 0; i < n; i++)
        if (v[i].kind < 0 || v[i].kind >= RUN_ADD_COUNT || v[i].at_ns < 0 || v[i].for_ns < 0 ||
            v[i].node < (v[i].on ? 0 : 1) || v[i].node > RUN_NODES_MAX || v[i].on < 0 ||
            v[i].on > SRV_HOOK_KIND_COUNT)
            return FL_ERANGE;
    free(rw->explore.added);
    rw->explore.added = n ? fl_calloc((size_t)n, sizeof *rw->explore.added) : NULL;
    rw->explore.n_added = n;
    for (int i = 0; i < n; i++) {
        struct run_added *a = &rw->explore.added[i];
        a->rw = rw;
        a->f = v[i];
        a->ordinal = RUN_ADDED_BASE + i + 1;
        a->node = v[i].node;
        char name[32];
        snprintf(name, sizeof name, "added/%d", i + 1);
        sim_rng_derive(&a->rng, rw->seed, name);
    }
    return FL_OK;
}

static void added_fire(struct sim_world *w, void *ctx);

static int64_t election_ns(const struct run_world *rw)
{
    return (int64_t)(rw->ccfg.election_ms ? rw->ccfg.election_ms : 1000) * FL_MS;
}

/* crash_save's failpoint on node: set to crash at the next save, or off. */
static void crash_after_save(struct run_world *rw, int node, bool on)
{
    char err[160];
    run_failpoint(rw, flt_point_name(FLT_RAFT_AFTER_SAVE), node, on ? "crash" : "off",
                  on ? 1000000 : 0, on ? 1 : 0, 0, err, sizeof err);
}

/* Applies the fault; returns the delay to its next step, or -1 when none. */
static int64_t added_apply(struct run_world *rw, struct run_added *a)
{
    int node = a->node;
    switch (a->f.kind) {
    case RUN_ADD_KILL:
        run_kill(rw, node);
        break;
    case RUN_ADD_POWER: {
        a->n_order = run_nodes(rw, a->order, RUN_NODES_MAX);
        for (int i = 0; i < a->n_order; i++)
            run_kill(rw, a->order[i]);
        for (int i = a->n_order - 1; i > 0; i--) {
            int j = (int)sim_rng_below(&a->rng, (uint64_t)i + 1), x = a->order[i];
            a->order[i] = a->order[j];
            a->order[j] = x;
        }
        break;
    }
    case RUN_ADD_PAUSE:
        run_pause(rw, node);
        break;
    case RUN_ADD_ISOLATE:
        run_isolate(rw, node);
        break;
    case RUN_ADD_CRASH_SAVE:
        crash_after_save(rw, node, true);
        break;
    default:
        return -1;
    }
    return a->f.for_ns;
}

/* Undoes it (power: restarts one member); returns the delay to the next step or -1. */
static int64_t added_undo(struct run_world *rw, struct run_added *a)
{
    int node = a->node;
    switch (a->f.kind) {
    case RUN_ADD_KILL:
        run_swarm_restart(rw, node);
        return -1;
    case RUN_ADD_POWER: {
        int i = a->step - 2;
        if (i < a->n_order)
            run_swarm_restart(rw, a->order[i]);
        return i + 1 < a->n_order
                   ? (int64_t)sim_rng_below(&a->rng, (uint64_t)(2 * election_ns(rw)) + 1)
                   : -1;
    }
    case RUN_ADD_PAUSE:
        run_resume(rw, node);
        return -1;
    case RUN_ADD_ISOLATE:
        run_heal(rw);
        return -1;
    case RUN_ADD_CRASH_SAVE:
        crash_after_save(rw, node, false);
        run_swarm_restart(rw, node);
        return -1;
    default:
        return -1;
    }
}

/* One step of an added fault, in its scope (run_scope): apply, or undo; a->next is
 * when the following step is due (-1: none). */
static void added_step(struct run_world *rw, void *arg)
{
    struct run_added *a = arg;
    /* a member that does not exist (the cluster is smaller) takes no fault */
    if (a->f.kind == RUN_ADD_POWER || run_node_exists(rw, a->node))
        a->next = a->step == 1 ? added_apply(rw, a) : added_undo(rw, a);
}

static void added_fire(struct sim_world *w, void *ctx)
{
    (void)w;
    struct run_added *a = ctx;
    struct run_world *rw = a->rw;
    a->h = 0;
    if (a->step == 0 && a->f.on) { /* from now on, wait for the event */
        a->waiting = true;
        rw->explore.added_waiting++;
        run_hook_update(rw);
        return;
    }
    if (a->step == 0)
        a->step = 1;
    a->next = -1;
    run_scope(rw, a->ordinal, RUN_SCOPE_LIVE, added_step, a);
    a->step++;
    if (a->next >= 0)
        a->h = sim_schedule(rw->w, a->next, added_fire, a);
}

void run_added_event(struct run_world *rw, const struct srv_hook_event *ev)
{
    for (int i = 0; i < rw->explore.n_added && rw->explore.added_waiting > 0; i++) {
        struct run_added *a = &rw->explore.added[i];
        if (!a->waiting || (int)ev->kind != a->f.on - 1 || (a->f.node && ev->node != a->f.node))
            continue;
        if (ev->kind == SRV_HOOK_VOTE_GRANTED && ev->pre)
            continue; /* a pre-vote promises nothing durable */
        a->waiting = false;
        rw->explore.added_waiting--;
        a->node = ev->node;
        a->step = 1;
        a->h = sim_schedule(rw->w, 0, added_fire, a);
    }
    /* the hook stays on until run_added_stop: not switched inside its own call */
}

void run_added_arm(struct run_world *rw)
{
    int64_t now = sim_now_ns(rw->w);
    for (int i = 0; i < rw->explore.n_added; i++) {
        struct run_added *a = &rw->explore.added[i];
        a->step = 0;
        a->h = sim_schedule(rw->w, FL_MAX(0, a->f.at_ns - now), added_fire, a);
    }
}

void run_added_stop(struct run_world *rw)
{
    for (int i = 0; i < rw->explore.n_added; i++) {
        if (rw->explore.added[i].h)
            sim_cancel(rw->w, rw->explore.added[i].h);
        rw->explore.added[i].h = 0;
        rw->explore.added[i].waiting = false;
    }
    rw->explore.added_waiting = 0;
    if (rw->explore.n_added)
        run_hook_update(rw);
}

void run_added_free(struct run_world *rw)
{
    free(rw->explore.added);
    rw->explore.added = NULL;
    rw->explore.n_added = 0;
}
