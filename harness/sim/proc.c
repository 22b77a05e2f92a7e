/*
 * proc.c: the process model (DESIGN §3.2): kill, restart, pause/resume and clock
 * skew for the nodes and clients of a world, and the timers they own.
 *
 * A process's events carry its incarnation number; killing bumps it, so every
 * timer and delivery still queued for the dead incarnation is dropped when it
 * surfaces, without a scan. Pausing parks the process's events on its deferred
 * list as they come due; resume schedules one replay event at the current time
 * that runs them in their original order (anything for the process that comes due
 * meanwhile joins the end of the list), keeping their handles valid so a timer can
 * still be cancelled while it waits.
 */
#include "harness/sim/sim_int.h"

void sim__requeue_deferred(struct sim_world *w, int proc);
void sim__drop_deferred(struct sim_world *w, int proc);

enum { PROC_OP_KILL = 1, PROC_OP_RESTART, PROC_OP_PAUSE, PROC_OP_RESUME, PROC_OP_RATE };

int sim_proc_add(struct sim_world *w, const char *name, const struct sim_proc_ops *ops, void *ctx)
{
    FL_ASSERT(name != NULL && name[0] != 0);
    FL_ASSERTF(sim_proc_find(w, name) < 0, "duplicate process name %s", name);
    int id = w->nprocs;
    FL_GROW_ZERO(w->procs, w->nprocs, w->cap_procs, id + 1, 8);
    struct sim_proc *p = &w->procs[id];
    p->name = fl_strdup(name);
    if (ops)
        p->ops = *ops;
    p->ctx = ctx;
    p->state = SIM_PROC_UP;
    p->rate_ppm = SIM_PPM;
    p->local_base_ns = w->now_ns;
    p->real_base_ns = w->now_ns;
    struct fl_buf b;
    fl_buf_init(&b);
    fl_buf_printf(&b, "proc/%s", name);
    p->rng = sim_rng(w, fl_buf_cstr(&b));
    fl_buf_close(&b);
    p->disk = disk__new(w, id);
    net__proc_added(w, id);
    return id;
}

void sim__procs_free(struct sim_world *w)
{
    for (int i = 0; i < w->nprocs; i++) {
        free(w->procs[i].name);
        free(w->procs[i].deferred);
        disk__free(w->procs[i].disk);
    }
    free(w->procs);
    w->procs = NULL;
    w->nprocs = 0;
}

int sim_proc_count(const struct sim_world *w)
{
    return w->nprocs;
}

int sim_proc_find(const struct sim_world *w, const char *name)
{
    for (int i = 0; i < w->nprocs; i++)
        if (strcmp(w->procs[i].name, name) == 0)
            return i;
    return -1;
}

const char *sim_proc_name(const struct sim_world *w, int proc)
{
    return sim__proc(w, proc)->name;
}

enum sim_proc_state sim_proc_state(const struct sim_world *w, int proc)
{
    return sim__proc(w, proc)->state;
}

bool sim_proc_alive(const struct sim_world *w, int proc)
{
    return sim__proc(w, proc)->state != SIM_PROC_DOWN;
}

struct sim_rng *sim_proc_rng(struct sim_world *w, int proc)
{
    return sim__proc(w, proc)->rng;
}

void sim_proc_set_ctx(struct sim_world *w, int proc, void *ctx)
{
    sim__proc(w, proc)->ctx = ctx;
}

uint32_t sim_proc_incarnation(const struct sim_world *w, int proc)
{
    return sim__proc(w, proc)->incarnation;
}

int sim_current_proc(const struct sim_world *w)
{
    return w->current_proc;
}

static void call_on_kill(struct sim_world *w, int proc)
{
    struct sim_proc *p = &w->procs[proc];
    if (!p->ops.on_kill)
        return;
    int saved = w->current_proc;
    w->current_proc = proc;
    p->ops.on_kill(w, proc, p->ctx);
    w->current_proc = saved;
}

/* Called after every event run in a process's context. */
void sim__after_proc_event(struct sim_world *w, int proc)
{
    struct sim_proc *p = &w->procs[proc];
    if (p->kill_pending) {
        p->kill_pending = false;
        call_on_kill(w, proc);
    }
}

int sim_proc_kill(struct sim_world *w, int proc)
{
    struct sim_proc *p = sim__proc(w, proc);
    if (p->state == SIM_PROC_DOWN)
        return FL_OK;
    p->state = SIM_PROC_DOWN;
    p->incarnation++;
    sim__digest_event(w, w->now_ns, SIM_EV_PROC, proc, proc, PROC_OP_KILL);
    sim__drop_deferred(w, proc);
    net__proc_killed(w, proc);
    disk__crash(w, proc);
    if (w->current_proc == proc)
        p->kill_pending = true;
    else
        call_on_kill(w, proc);
    return FL_OK;
}

int sim_proc_restart(struct sim_world *w, int proc)
{
    struct sim_proc *p = sim__proc(w, proc);
    if (p->state != SIM_PROC_DOWN)
        return FL_EBUSY;
    FL_ASSERTF(!p->kill_pending, "restart of %s from inside its own dying event", p->name);
    p->local_base_ns = sim_proc_local_ns(w, proc);
    p->real_base_ns = w->now_ns;
    p->rate_ppm = SIM_PPM;
    p->state = SIM_PROC_UP;
    sim__digest_event(w, w->now_ns, SIM_EV_PROC, proc, proc, PROC_OP_RESTART);
    if (p->ops.on_restart) {
        int saved = w->current_proc;
        w->current_proc = proc;
        p->ops.on_restart(w, proc, p->ctx);
        w->current_proc = saved;
        sim__after_proc_event(w, proc);
    }
    return FL_OK;
}

/* Pause and resume: a process that is not down goes to state `to` (digested as op);
 * *changed says whether it was elsewhere before. */
static int proc_switch(struct sim_world *w, int proc, enum sim_proc_state to, uint64_t op,
                       bool *changed)
{
    struct sim_proc *p = sim__proc(w, proc);
    *changed = false;
    if (p->state == SIM_PROC_DOWN)
        return FL_EDOWN;
    if (p->state == to)
        return FL_OK;
    p->state = to;
    sim__digest_event(w, w->now_ns, SIM_EV_PROC, proc, proc, op);
    *changed = true;
    return FL_OK;
}

int sim_proc_pause(struct sim_world *w, int proc)
{
    bool changed;
    return proc_switch(w, proc, SIM_PROC_PAUSED, PROC_OP_PAUSE, &changed);
}

int sim_proc_resume(struct sim_world *w, int proc)
{
    bool changed;
    int rc = proc_switch(w, proc, SIM_PROC_UP, PROC_OP_RESUME, &changed);
    if (changed)
        sim__requeue_deferred(w, proc);
    return rc;
}

int64_t sim_proc_local_ns(const struct sim_world *w, int proc)
{
    const struct sim_proc *p = sim__proc(w, proc);
    __int128 elapsed = (__int128)(w->now_ns - p->real_base_ns) * p->rate_ppm / SIM_PPM;
    return p->local_base_ns + (int64_t)elapsed;
}

int sim_proc_set_rate(struct sim_world *w, int proc, int64_t rate_ppm)
{
    if (rate_ppm < 1000 || rate_ppm > 100 * SIM_PPM)
        return FL_ERANGE;
    struct sim_proc *p = sim__proc(w, proc);
    p->local_base_ns = sim_proc_local_ns(w, proc);
    p->real_base_ns = w->now_ns;
    p->rate_ppm = rate_ppm;
    sim__digest_event(w, w->now_ns, SIM_EV_PROC, proc, proc,
                      PROC_OP_RATE | ((uint64_t)rate_ppm << 8));
    return FL_OK;
}

int64_t sim_proc_rate(const struct sim_world *w, int proc)
{
    return sim__proc(w, proc)->rate_ppm;
}

sim_handle sim_timer_start(struct sim_world *w, int proc, int64_t delay_ns, sim_event_fn *fn,
                           void *ctx)
{
    FL_ASSERTF(delay_ns >= 0, "negative timer delay %lld", (long long)delay_ns);
    struct sim_proc *p = sim__proc(w, proc);
    if (p->state == SIM_PROC_DOWN)
        return 0;
    int64_t real_ns = delay_ns;
    if (p->rate_ppm != SIM_PPM)
        real_ns = (int64_t)((__int128)delay_ns * SIM_PPM / p->rate_ppm);
    return sim__schedule(w, w->now_ns + real_ns, proc, SIM_EV_TIMER, proc, proc, 0, fn, NULL, ctx);
}
