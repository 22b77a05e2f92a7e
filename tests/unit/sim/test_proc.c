/*
 * test_proc.c: the process model: timers owned by a process; kill drops them and
 * calls on_kill; restart calls on_restart; pause defers timers in order until
 * resume (and a deferred timer can still be cancelled); clock skew scales timers
 * and the local clock; a process killed from inside its own event gets on_kill
 * only after the event returns.
 */
#include "fl_test.h"
#include "harness/sim/sim.h"

struct node {
    struct sim_world *w;
    int id;
    int kills, restarts;
    int fired[64];
    int64_t fired_at[64];
    int nfired;
    bool in_event;
    bool killed_during_event;
};

struct tmr {
    struct node *n;
    int tag;
};

static void on_timer(struct sim_world *w, void *ctx)
{
    struct tmr *t = ctx;
    CHECK_EQ_INT(sim_current_proc(w), t->n->id);
    t->n->fired[t->n->nfired] = t->tag;
    t->n->fired_at[t->n->nfired] = sim_now_ns(w);
    t->n->nfired++;
}

static void on_kill(struct sim_world *w, int proc, void *ctx)
{
    struct node *n = ctx;
    CHECK_EQ_INT(sim_proc_state(w, proc), SIM_PROC_DOWN);
    if (n->in_event)
        n->killed_during_event = true;
    n->kills++;
}

static void on_restart(struct sim_world *w, int proc, void *ctx)
{
    struct node *n = ctx;
    CHECK_EQ_INT(sim_current_proc(w), proc);
    n->restarts++;
}

static const struct sim_proc_ops ops = {on_kill, on_restart};

static void test_kill_restart(void)
{
    struct sim_world *w = sim_world_new(1);
    struct node n = {.w = w};
    n.id = sim_proc_add(w, "n0", &ops, &n);
    CHECK_EQ_INT(n.id, 0);
    CHECK_EQ_INT(sim_proc_find(w, "n0"), 0);
    CHECK_EQ_INT(sim_proc_find(w, "nope"), -1);
    struct tmr t1 = {&n, 1}, t2 = {&n, 2}, t3 = {&n, 3};
    sim_timer_start(w, n.id, 10 * FL_MS, on_timer, &t1);
    sim_timer_start(w, n.id, 30 * FL_MS, on_timer, &t2);
    sim_run_for(w, 20 * FL_MS);
    CHECK_EQ_INT(n.nfired, 1);
    CHECK_EQ_INT(n.fired_at[0], 10 * FL_MS);
    CHECK_EQ_INT(sim_proc_kill(w, n.id), FL_OK);
    CHECK_EQ_INT(n.kills, 1);
    CHECK(!sim_proc_alive(w, n.id));
    CHECK_EQ_INT(sim_timer_start(w, n.id, 1, on_timer, &t3), 0);
    sim_run_for(w, 100 * FL_MS);
    CHECK_EQ_INT(n.nfired, 1); /* t2 was dropped */
    CHECK_EQ_INT(sim_proc_kill(w, n.id), FL_OK);
    CHECK_EQ_INT(n.kills, 1); /* killing a dead process is a no-op */
    CHECK_EQ_INT(sim_proc_pause(w, n.id), FL_EDOWN);
    CHECK_EQ_INT(sim_proc_restart(w, n.id), FL_OK);
    CHECK_EQ_INT(n.restarts, 1);
    CHECK_EQ_INT(sim_proc_restart(w, n.id), FL_EBUSY);
    CHECK_EQ_INT(sim_proc_incarnation(w, n.id), 1);
    sim_timer_start(w, n.id, 5 * FL_MS, on_timer, &t3);
    sim_run_for(w, 10 * FL_MS);
    CHECK_EQ_INT(n.nfired, 2);
    CHECK_EQ_INT(n.fired[1], 3);
    sim_world_free(w);
}

static void test_pause(void)
{
    struct sim_world *w = sim_world_new(2);
    struct node n = {.w = w};
    n.id = sim_proc_add(w, "n0", &ops, &n);
    struct tmr t[6];
    sim_handle h[6];
    for (int i = 0; i < 6; i++) {
        t[i] = (struct tmr){&n, i};
        h[i] = sim_timer_start(w, n.id, (10 + i) * FL_MS, on_timer, &t[i]);
    }
    sim_run_for(w, 5 * FL_MS);
    CHECK_EQ_INT(sim_proc_pause(w, n.id), FL_OK);
    CHECK_EQ_INT(sim_proc_state(w, n.id), SIM_PROC_PAUSED);
    sim_run_for(w, 95 * FL_MS);
    CHECK_EQ_INT(n.nfired, 0);  /* all deferred */
    CHECK(sim_cancel(w, h[2])); /* a deferred timer can still be cancelled */
    CHECK_EQ_INT(sim_proc_resume(w, n.id), FL_OK);
    sim_run_for(w, 1);
    CHECK_EQ_INT(n.nfired, 5);
    int want[5] = {0, 1, 3, 4, 5};
    for (int i = 0; i < 5; i++) {
        CHECK_EQ_INT(n.fired[i], want[i]);
        CHECK_EQ_INT(n.fired_at[i], 100 * FL_MS); /* at resume time */
    }
    /* kill while paused drops the deferred ones */
    struct tmr t9 = {&n, 9};
    sim_timer_start(w, n.id, FL_MS, on_timer, &t9);
    sim_proc_pause(w, n.id);
    sim_run_for(w, 10 * FL_MS);
    sim_proc_kill(w, n.id);
    sim_proc_restart(w, n.id);
    sim_run_for(w, 10 * FL_MS);
    CHECK_EQ_INT(n.nfired, 5);
    sim_world_free(w);
}

static void test_skew(void)
{
    struct sim_world *w = sim_world_new(3);
    struct node fast = {.w = w}, slow = {.w = w};
    fast.id = sim_proc_add(w, "fast", &ops, &fast);
    slow.id = sim_proc_add(w, "slow", &ops, &slow);
    CHECK_EQ_INT(sim_proc_set_rate(w, fast.id, 1100000), FL_OK);
    CHECK_EQ_INT(sim_proc_set_rate(w, slow.id, 900000), FL_OK);
    CHECK_EQ_INT(sim_proc_set_rate(w, slow.id, 0), FL_ERANGE);
    struct tmr tf = {&fast, 1}, ts = {&slow, 1};
    sim_timer_start(w, fast.id, 100 * FL_MS, on_timer, &tf);
    sim_timer_start(w, slow.id, 100 * FL_MS, on_timer, &ts);
    sim_run_for(w, FL_S);
    CHECK_EQ_INT(fast.fired_at[0], 90909090); /* 10% fast: fires early */
    CHECK_EQ_INT(slow.fired_at[0], 111111111);
    CHECK_EQ_INT(sim_proc_local_ns(w, fast.id), 1100 * FL_MS);
    CHECK_EQ_INT(sim_proc_local_ns(w, slow.id), 900 * FL_MS);
    /* continuous across a rate change */
    sim_proc_set_rate(w, fast.id, 1000000);
    sim_run_for(w, FL_S);
    CHECK_EQ_INT(sim_proc_local_ns(w, fast.id), 2100 * FL_MS);
    CHECK_EQ_INT(sim_proc_rate(w, fast.id), 1000000);
    sim_world_free(w);
}

static void self_crash(struct sim_world *w, void *ctx)
{
    struct tmr *t = ctx;
    t->n->in_event = true;
    sim_proc_kill(w, t->n->id);
    /* dead already, but our state is still valid until we return */
    CHECK_EQ_INT(sim_proc_state(w, t->n->id), SIM_PROC_DOWN);
    CHECK_EQ_INT(t->n->kills, 0);
    t->n->in_event = false;
}

static void test_self_kill(void)
{
    struct sim_world *w = sim_world_new(4);
    struct node n = {.w = w};
    n.id = sim_proc_add(w, "n0", &ops, &n);
    struct tmr t = {&n, 0}, later = {&n, 1};
    sim_timer_start(w, n.id, FL_MS, self_crash, &t);
    sim_timer_start(w, n.id, FL_MS, on_timer, &later); /* same time, after it */
    sim_run_for(w, 10 * FL_MS);
    CHECK_EQ_INT(n.kills, 1);
    CHECK(!n.killed_during_event);
    CHECK_EQ_INT(n.nfired, 0);
    sim_world_free(w);
}

int main(void)
{
    FL_TEST(test_kill_restart);
    FL_TEST(test_pause);
    FL_TEST(test_skew);
    FL_TEST(test_self_kill);
    return fl_test_end();
}
