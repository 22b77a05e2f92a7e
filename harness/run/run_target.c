/*
 * run_target.c: which target a run runs on (run.h run_options.target), the table of
 * each real target's hooks (run_int.h struct run_target_ops: run_target_etcd_ops,
 * run_target_live_ops) and what each target can do, so that a scenario calling a function its
 * target cannot honour stops with that function's name and the target (harness/lua asks before the
 * script runs), instead of running something else than what it says.
 */
#include "harness/run/run_etcd.h"

#include "harness/live/live_etcd.h"

#include <stdio.h>
#include <time.h>

static const char *const target_names[] = {"sim", "etcd", "live"};

const char *run_target_name(int target)
{
    return target >= 0 && target < (int)FL_ARRAY_LEN(target_names) ? target_names[target] : "?";
}

int run_target_find(const char *name)
{
    for (int i = 0; i < (int)FL_ARRAY_LEN(target_names); i++)
        if (!strcmp(target_names[i], name))
            return i;
    return -1;
}

int run_target(const struct run_world *rw)
{
    return rw->target.kind;
}

const struct run_target_ops *run_target_ops_of(int kind)
{
    switch (kind) {
    case RUN_TARGET_ETCD:
        return &run_target_etcd_ops;
    case RUN_TARGET_LIVE:
        return &run_target_live_ops;
    default:
        return NULL;
    }
}

const char *run_target_unsupported(const struct run_world *rw, const char *api)
{
    if (!rw->tgt || !rw->tgt->refuses)
        return NULL;
    for (const struct run_target_refusal *r = rw->tgt->refuses; r->api; r++)
        if (!strcmp(r->api, api))
            return r->why;
    return NULL;
}

const char *run_etcd_binary_version(char *out, size_t n)
{
    snprintf(out, n, "unknown");
    char *bin = lv_etcd_find();
    if (!bin)
        return out;
    struct fl_buf cmd;
    fl_buf_init(&cmd);
    fl_buf_printf(&cmd, "'%s' --version 2>/dev/null", bin);
    FILE *f = strchr(bin, '\'') ? NULL : popen(fl_buf_cstr(&cmd), "r");
    char line[256];
    while (f && fgets(line, sizeof line, f)) {
        const char *p = strstr(line, "etcd Version: ");
        if (p) {
            p += strlen("etcd Version: ");
            size_t len = strcspn(p, "\r\n");
            snprintf(out, n, "%.*s", (int)len, p);
        }
    }
    if (f)
        pclose(f);
    fl_buf_close(&cmd);
    free(bin);
    return out;
}

void run_target_trim_checks(struct run_world *rw)
{
    /* converge runs on etcd (HashKV, run_etcd_converged), not on the live target */
    unsigned off = rw->checks & (RUN_CHECK_RAFT_SAFETY | RUN_CHECK_LIVENESS);
    /* kept: judged by the target, or 'unknown' with the target's reason */
    if (rw->tgt->raft_safety || rw->tgt->raft_safety_unknown)
        off &= ~(unsigned)RUN_CHECK_RAFT_SAFETY;
    if (rw->tgt->liveness_voter) /* the live target: its members' state is known */
        off &= ~(unsigned)RUN_CHECK_LIVENESS;
    if (!rw->tgt->converged)
        off |= rw->checks & RUN_CHECK_CONVERGE;
    rw->checks &= ~off;
    json_t *a = json_array();
    if (off & RUN_CHECK_RAFT_SAFETY)
        json_array_append_new(a, json_string("raft_safety"));
    if (off & RUN_CHECK_LIVENESS)
        json_array_append_new(a, json_string("liveness"));
    if (off & RUN_CHECK_CONVERGE)
        json_array_append_new(a, json_string("converge"));
    run_summary_set(rw, "not_on_target", a);
}

/* ---- what both real targets share ------------------------------------------------------ */

double run_target_wall_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void run_pacer_init(struct run_pacer *p, uv_loop_t *loop, struct sim_world *w)
{
    p->loop = loop;
    p->injected_ns = INT64_MAX;
    uv_timer_init(loop, &p->wake);
    /* simulated time now is wall time now: the scenario's clock starts here */
    p->wall0_s = run_target_wall_s() - (double)sim_now_ns(w) * 1e-9;
}

static void pacer_closed(uv_handle_t *h)
{
    (void)h;
}

void run_pacer_close(struct run_pacer *p)
{
    uv_close((uv_handle_t *)&p->wake, pacer_closed);
}

int64_t run_pacer_wall_ns(const struct run_pacer *p)
{
    return (int64_t)((run_target_wall_s() - p->wall0_s) * 1e9);
}

int64_t run_pacer_arrival(struct run_pacer *p, struct sim_world *w)
{
    int64_t at = FL_MAX(sim_now_ns(w), run_pacer_wall_ns(p));
    if (at < p->injected_ns)
        p->injected_ns = at;
    return at;
}

static void pacer_wake(uv_timer_t *t)
{
    (void)t;
}

static void pacer_turn(struct run_pacer *p, uv_run_mode mode)
{
    uv_run(p->loop, mode);
    if (p->turn)
        p->turn(p->turn_ud);
}

void run_pacer_pace(struct run_world *rw, struct run_pacer *p, int64_t t_ns)
{
    for (;;) {
        p->injected_ns = INT64_MAX;
        pacer_turn(p, UV_RUN_NOWAIT);
        int64_t now = run_pacer_wall_ns(p);
        if (now >= t_ns || p->injected_ns < t_ns || run_world_stopped(rw))
            break;
        int64_t wait_ms = (t_ns - now + FL_MS - 1) / FL_MS;
        uv_timer_start(&p->wake, pacer_wake, (uint64_t)FL_MIN(wait_ms, 50), 0);
        pacer_turn(p, UV_RUN_ONCE);
        if (p->injected_ns < t_ns)
            break;
    }
    uv_timer_stop(&p->wake);
}

void run_pacer_advance(struct run_world *rw, struct run_pacer *p, int64_t until_ns)
{
    while (!run_world_stopped(rw)) {
        int64_t next = sim_next_time_ns(rw->w);
        if (next <= until_ns) {
            run_sim_step(rw); /* paces itself (run_paranoid.c) */
            continue;
        }
        run_pacer_pace(rw, p, until_ns);
        if (sim_next_time_ns(rw->w) > until_ns && run_pacer_wall_ns(p) >= until_ns)
            break;
    }
    if (!run_world_stopped(rw) && sim_now_ns(rw->w) < until_ns)
        sim_run_until(rw->w, until_ns);
}
