/*
 * run_trigger.c: faults that fire at the right moment. Random times rarely land in the
 * windows that matter (between an append and its fsync, right after a vote, in the
 * middle of a snapshot install or a configuration change), so faults can fire on node
 * events instead: the members emit typed events (server.h srv_hook_kind) through the
 * cluster's hook, which this file installs only while someone listens — Lua's on()
 * (run_on_events) or the swarm's trigger rules (run_triggers_arm) — so a run without
 * either is unchanged.
 *
 * A trigger rule (drawn by the swarm, run_swarm.c) names an event kind, an action
 * (kill the member, power loss of every member, isolate or pause it), a probability per
 * event, a number of firings, a cooldown and how long the member stays down. Its
 * decisions draw from a stream of its own ("trigger/<i>"); each rule is one fault
 * application with an ordinal, and its k-th firing is ordinal rule * RUN_FIRING_BASE
 * + k, with the undo (restart, heal, resume) under the same ordinal. The action runs in
 * a world event scheduled at the current time: right after the member's event
 * returns, before anything later of that member (an fsync in flight, a message).
 */
#include "harness/run/run_int.h"

/* A pending action or undo of one firing. */
struct run_firing {
    struct run_world *rw;
    struct run_trigger *t;
    int node;
    int64_t ordinal;
    bool undo;
    int skip;                /* RUN_TRIG_CRASH_SAVE: WAL saves to let through before the crash */
    struct run_firing *next; /* pending firings, freed at disarm */
    sim_handle h;
};

static void firing_unlink(struct run_firing *f)
{
    for (struct run_firing **p = &f->rw->hook.firings; *p; p = &(*p)->next)
        if (*p == f) {
            *p = f->next;
            return;
        }
}

bool run_trigger_holds(struct run_world *rw, int node)
{
    for (struct run_firing *f = rw->hook.firings; f; f = f->next)
        if (f->undo && (f->node == node || f->node == 0))
            return true;
    return false;
}

static void firing_schedule(struct run_firing *f, int64_t delay_ns);

static struct run_firing *firing_new(struct run_world *rw, struct run_trigger *t, int node,
                                     int64_t ordinal, bool undo)
{
    struct run_firing *f = fl_calloc(1, sizeof *f);
    f->rw = rw;
    f->t = t;
    f->node = node;
    f->ordinal = ordinal;
    f->undo = undo;
    return f;
}

/* Power loss: every member dies at once; after the down time they come back one by one
 * in a random order, each after a gap of up to two election timeouts (which member is
 * back first decides who can be elected). */
static void power_loss(struct run_world *rw, struct run_trigger *t, int64_t ordinal)
{
    int ids[RUN_NODES_MAX], n = run_nodes(rw, ids, RUN_NODES_MAX);
    for (int i = 0; i < n; i++)
        run_kill(rw, ids[i]);
    for (int i = n - 1; i > 0; i--) {
        int j = (int)sim_rng_below(&t->rng, (uint64_t)i + 1), x = ids[i];
        ids[i] = ids[j];
        ids[j] = x;
    }
    int64_t election = (int64_t)(rw->ccfg.election_ms ? rw->ccfg.election_ms : 1000) * FL_MS;
    int64_t at = t->down_ns;
    for (int i = 0; i < n; i++) {
        if (i)
            at += (int64_t)sim_rng_below(&t->rng, (uint64_t)(2 * election) + 1);
        firing_schedule(firing_new(rw, t, ids[i], ordinal, true), at);
    }
}

/* The firing's fault (or its undo), inside its scope; fired tells the caller. */
struct firing_step {
    struct run_firing *f;
    bool fired;
};

static void firing_apply(struct run_world *rw, void *arg)
{
    struct firing_step *st = arg;
    struct run_firing *f = st->f;
    st->fired = rw->hook.triggers_armed;
    if (st->fired) {
        switch (f->t->action) {
        case RUN_TRIG_KILL:
            f->undo ? run_swarm_restart(rw, f->node) : run_kill(rw, f->node);
            break;
        case RUN_TRIG_POWER:
            if (f->undo)
                run_swarm_restart(rw, f->node);
            else
                power_loss(rw, f->t, f->ordinal); /* schedules the restarts */
            break;
        case RUN_TRIG_ISOLATE:
            f->undo ? run_heal(rw) : run_isolate(rw, f->node);
            break;
        case RUN_TRIG_PAUSE:
            f->undo ? run_resume(rw, f->node) : run_pause(rw, f->node);
            break;
        case RUN_TRIG_CRASH_SAVE: {
            char err[160];
            run_failpoint_skip(rw, flt_point_name(FLT_RAFT_AFTER_SAVE), f->node,
                               f->undo ? "off" : "crash", 1000000, 1, f->undo ? 0 : f->skip, 0, err,
                               sizeof err);
            if (f->undo)
                run_swarm_restart(rw, f->node);
            break;
        }
        }
    }
}

static void firing_run(struct sim_world *w, void *ctx)
{
    (void)w;
    struct run_firing *f = ctx;
    struct run_world *rw = f->rw;
    firing_unlink(f);
    struct firing_step st = {f, false};
    bool go = run_scope(rw, f->ordinal, RUN_SCOPE_LIVE, firing_apply, &st) && st.fired;
    if (go && !f->undo && f->t->action != RUN_TRIG_POWER) {
        f->undo = true;
        firing_schedule(f, f->t->down_ns);
        return;
    }
    free(f);
}

static void firing_schedule(struct run_firing *f, int64_t delay_ns)
{
    f->next = f->rw->hook.firings;
    f->rw->hook.firings = f;
    f->h = sim_schedule(f->rw->w, delay_ns, firing_run, f);
}

/* One event against one rule: decide, and schedule the action. */
static void trigger_event(struct run_world *rw, struct run_trigger *t,
                          const struct srv_hook_event *ev)
{
    int64_t now = sim_now_ns(rw->w);
    if (t->dry || t->fired >= t->count_max || (t->fired && now - t->last_ns < t->cooldown_ns))
        return;
    if (ev->kind == SRV_HOOK_VOTE_GRANTED && ev->pre)
        return; /* a pre-vote promises nothing durable */
    if (t->action == RUN_TRIG_POWER && ev->leader)
        return; /* a power loss aims at followers' appends: acknowledged, maybe not durable */
    if (t->action == RUN_TRIG_CRASH_SAVE && ev->kind == SRV_HOOK_TERM &&
        !(ev->reason && !strcmp(ev->reason, "campaign")))
        return; /* a crash at a save of a campaign: the win's, or the new leader's next */
    if (!sim_rng_chance_ppm(&t->rng, (uint32_t)t->p_ppm))
        return;
    t->fired++;
    t->last_ns = now;
    int64_t ordinal = t->ordinal * RUN_FIRING_BASE + t->fired;
    struct run_firing *f = firing_new(rw, t, ev->node, ordinal, false);
    if (t->action == RUN_TRIG_CRASH_SAVE && ev->kind == SRV_HOOK_TERM)
        f->skip = (int)sim_rng_below(&t->rng, 3);
    firing_schedule(f, t->delay_ns);
}

static void on_hook(void *ud, const struct srv_hook_event *ev)
{
    struct run_world *rw = ud;
    if (rw->explore.added_waiting)
        run_added_event(rw, ev);
    if (rw->hook.churn_armed)
        run_lanes_churn_event(rw, ev);
    if (rw->hook.triggers_armed)
        for (int i = 0; i < rw->swarm.n_trig; i++)
            if (rw->swarm.trig[i].hook == (int)ev->kind && rw->swarm.trig[i].ordinal)
                trigger_event(rw, &rw->swarm.trig[i], ev);
    if (rw->hook.on_fn && (rw->hook.on_kinds & (1u << ev->kind))) {
        struct run_event e = {.kind = srv_hook_kind_name(ev->kind),
                              .at_ns = sim_now_ns(rw->w),
                              .node = ev->node,
                              .peer = ev->peer,
                              .term = ev->term,
                              .index = ev->index,
                              .pre = ev->pre,
                              .leader = ev->leader,
                              .reason = ev->reason,
                              .detail = ev->detail};
        rw->hook.on_fn(rw->hook.on_ud, &e);
    }
}

void run_hook_update(struct run_world *rw)
{
    bool want = rw->hook.triggers_armed || (rw->hook.on_fn && rw->hook.on_kinds) ||
                rw->explore.added_waiting > 0 || rw->hook.churn_armed > 0;
    if (!rw->cl || want == rw->hook.installed)
        return;
    srv_cluster_set_hook(rw->cl, want ? on_hook : NULL, rw);
    rw->hook.installed = want;
}

int run_event_kind_find(const char *name)
{
    return srv_hook_kind_find(name);
}

void run_log_rule(struct run_world *rw, const char *kind, const char *target)
{
    run_log_fault(rw, kind, target, NULL);
}

void run_on_events(struct run_world *rw, unsigned kinds, run_event_fn *fn, void *ud)
{
    rw->hook.on_fn = fn;
    rw->hook.on_ud = fn ? ud : NULL;
    rw->hook.on_kinds = fn ? kinds : 0;
    run_hook_update(rw);
}

/* A trigger's log line, in its scope (logged even when shrinking dropped it). */
struct trigger_log {
    const struct run_trigger *t;
    json_t *d;
};

static void trigger_log_fn(struct run_world *rw, void *arg)
{
    const struct trigger_log *lg = arg;
    static const char *const names[] = {"kill", "power", "isolate", "pause", "crash_save"};
    char target[24];
    snprintf(target, sizeof target, "on:%s", names[lg->t->action]);
    run_log_fault(rw, "trigger", target, lg->d);
}

void run_triggers_arm(struct run_world *rw, int scale_pct)
{
    struct run_swarm *sw = &rw->swarm;
    for (int i = 0; i < sw->n_trig; i++) {
        struct run_trigger *t = &sw->trig[i];
        t->fired = 0;
        t->last_ns = 0;
        t->dry = !run_rule_begin(rw, &t->ordinal) || rw->lanes.dry;
        if (scale_pct != 100) {
            t->down_ns = FL_MAX(FL_MS, t->down_ns / 100 * scale_pct);
            t->cooldown_ns = t->cooldown_ns / 100 * scale_pct;
        }
        char name[32];
        snprintf(name, sizeof name, "trigger/%d", i + 1);
        sim_rng_derive(&t->rng, run_fault_seed(rw), name);
        if (!t->dry) {
            json_t *d = json_object();
            json_object_set_new(d, "on", json_string(srv_hook_kind_name(t->hook)));
            json_object_set_new(d, "p_ppm", json_integer(t->p_ppm));
            json_object_set_new(d, "count", json_integer(t->count_max));
            struct trigger_log lg = {t, d};
            run_scope(rw, t->ordinal, RUN_SCOPE_ALWAYS, trigger_log_fn, &lg);
        }
    }
    rw->hook.triggers_armed = sw->n_trig > 0;
    run_hook_update(rw);
}

void run_triggers_disarm(struct run_world *rw)
{
    rw->hook.triggers_armed = false;
    for (int i = 0; i < rw->swarm.n_trig; i++)
        rw->swarm.trig[i].ordinal = 0;
    while (rw->hook.firings) {
        struct run_firing *f = rw->hook.firings;
        rw->hook.firings = f->next;
        sim_cancel(rw->w, f->h);
        free(f);
    }
    run_hook_update(rw);
}
