/*
 * net_ctl.c: the fault controls of the simulated network (see net.h): per-link
 * parameters, partitions, clog and hold, and the per-endpoint counters. Every
 * change is folded into the digest, and lifting a cut, clog or hold schedules the
 * delivery of the frames that waited at that link.
 */
#include "harness/sim/net_int.h"

/* ---------------------------------------------------------------- faults ------*/

/* Calls fn on every link matched by (from, to), -1 meaning all. */
static void links_each(struct sim_world *w, int from, int to,
                       void (*fn)(struct sim_world *w, int a, int b, void *arg), void *arg)
{
    int dim = w->net->dim;
    for (int a = (from < 0 ? 0 : from); a < (from < 0 ? dim : from + 1); a++)
        for (int b = (to < 0 ? 0 : to); b < (to < 0 ? dim : to + 1); b++)
            if (a != b)
                fn(w, a, b, arg);
}

static void set_params(struct sim_world *w, int a, int b, void *arg)
{
    net__link_at(w, a, b)->p = *(const struct net_link *)arg;
}

void net_link_set(struct sim_world *w, int from, int to, const struct net_link *l)
{
    FL_ASSERT(l->latency_ns >= 0 && l->jitter_ns >= 0);
    if (from < 0 && to < 0) {
        w->net->defaults = *l;
        for (int a = 0; a < w->net->dim; a++)
            set_params(w, a, a, (void *)l); /* a process talking to itself */
    }
    links_each(w, from, to, set_params, (void *)l);
}

void net_link_get(const struct sim_world *w, int from, int to, struct net_link *out)
{
    if (from < 0 || to < 0)
        *out = w->net->defaults;
    else
        *out = net__link_at(w, from, to)->p;
}

enum { FLAG_BLOCK, FLAG_CLOG, FLAG_HOLD };
struct flag_arg {
    int flag;
    bool on;
};

static void set_flag(struct sim_world *w, int a, int b, void *arg)
{
    const struct flag_arg *fa = arg;
    struct net_linkst *l = net__link_at(w, a, b);
    bool *f = fa->flag == FLAG_BLOCK ? &l->blocked : fa->flag == FLAG_CLOG ? &l->clogged : &l->held;
    *f = fa->on;
    if (!fa->on)
        net__link_schedule_drain(w, a, b);
}

static void flag_set(struct sim_world *w, int from, int to, int flag, bool on)
{
    struct flag_arg fa = {flag, on};
    sim__digest_event(w, w->now_ns, SIM_EV_NET_CTL, from, to, 0x100u | (uint64_t)flag << 1 | on);
    links_each(w, from, to, set_flag, &fa);
}

void net_block(struct sim_world *w, int from, int to)
{
    flag_set(w, from, to, FLAG_BLOCK, true);
}

void net_unblock(struct sim_world *w, int from, int to)
{
    flag_set(w, from, to, FLAG_BLOCK, false);
}

void net_partition(struct sim_world *w, const int *a, size_t na, const int *b, size_t nb,
                   bool oneway)
{
    for (size_t i = 0; i < na; i++)
        for (size_t j = 0; j < nb; j++) {
            if (a[i] == b[j])
                continue;
            flag_set(w, a[i], b[j], FLAG_BLOCK, true);
            if (!oneway)
                flag_set(w, b[j], a[i], FLAG_BLOCK, true);
        }
}

void net_isolate(struct sim_world *w, int proc)
{
    sim__proc(w, proc);
    flag_set(w, proc, -1, FLAG_BLOCK, true);
    flag_set(w, -1, proc, FLAG_BLOCK, true);
}

void net_heal(struct sim_world *w)
{
    struct flag_arg fa = {FLAG_CLOG, false};
    sim__digest_event(w, w->now_ns, SIM_EV_NET_CTL, -1, -1, 0x200u);
    links_each(w, -1, -1, set_flag, &fa);
    fa.flag = FLAG_BLOCK;
    links_each(w, -1, -1, set_flag, &fa);
}

bool net_blocked(const struct sim_world *w, int from, int to)
{
    return net__link_at(w, from, to)->blocked;
}

void net_clog(struct sim_world *w, int from, int to)
{
    flag_set(w, from, to, FLAG_CLOG, true);
}

void net_unclog(struct sim_world *w, int from, int to)
{
    flag_set(w, from, to, FLAG_CLOG, false);
}

void net_hold(struct sim_world *w, int from, int to)
{
    flag_set(w, from, to, FLAG_HOLD, true);
}

void net_release(struct sim_world *w, int from, int to)
{
    flag_set(w, from, to, FLAG_HOLD, false);
}

size_t net_waiting(const struct sim_world *w, int from, int to)
{
    return net__link_at(w, from, to)->nq;
}

void net_stats_get(const struct sim_world *w, int proc, struct net_stats *out)
{
    sim__proc(w, proc);
    *out = w->net->stats[proc];
}
