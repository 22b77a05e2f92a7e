/*
 * run_net.c: the network faults a scenario applies — partition, isolate, heal, net
 * (loss, duplication, delay), hold/release and clog — between members and clients
 * alike (issue 14 §2: "client-side network failure"). Each is logged in `faults` and
 * takes a fault ordinal like the other faults of run_fault.c.
 *
 * An endpoint (run.h) is a member slot (1, 2, ...) or a client, RUN_EP_CLIENT(i) = -i.
 * Both are processes of the simulated world, and the network keys its links by
 * process (harness/sim/net.h), so a cut between a client and a member is the same
 * cut as between two members: the client's SYNs and requests wait at the partition
 * until its own timeouts fire (dial, request, keepalive), exactly as a TCP connection
 * behind a dropped route would, and the member never hears of it. Links between two
 * members are touched only when both are named.
 *
 * Targets in `faults` name members "n3" and clients "c1"; a fault on members only is
 * recorded exactly as before clients could be named (same text, same digest).
 */
#include "harness/run/run_int.h"

/* The process of endpoint e, or -1 when no such member or client exists. */
static int ep_proc(struct run_world *rw, int e)
{
    if (e > 0)
        return run_node_proc(rw, e);
    if (e == 0 || -e > rw->n_clients)
        return -1;
    const struct run_client *c = &rw->clients[-e - 1];
    return c->c && !c->closed ? kvc_client_proc(c->c) : -1;
}

bool run_endpoint_exists(struct run_world *rw, int e)
{
    return ep_proc(rw, e) >= 0;
}

static int procs_of(struct run_world *rw, const int *eps, int n, int *procs)
{
    for (int i = 0; i < n; i++) {
        procs[i] = ep_proc(rw, eps[i]);
        if (procs[i] < 0)
            return FL_ENOENT;
    }
    return FL_OK;
}

/* "n3", "c1", or "*" for 0 (every endpoint). */
static void ep_text(char *out, size_t n, int e)
{
    if (e > 0)
        snprintf(out, n, "n%d", e);
    else if (e < 0)
        snprintf(out, n, "c%d", -e);
    else
        snprintf(out, n, "*");
}

/* "n1,n2,c1" (run_target_nodes' text for members only); "*" for an empty list. */
static void eps_text(char *out, size_t n, const int *a, int na)
{
    size_t len = 0;
    out[0] = '\0';
    if (na == 0)
        snprintf(out, n, "*");
    for (int i = 0; i < na && len + 16 < n; i++) {
        char one[16];
        ep_text(one, sizeof one, a[i]);
        len += (size_t)snprintf(out + len, n - len, "%s%s", i ? "," : "", one);
    }
}

/* Room for a side's text: every endpoint "c64," at most. */
#define SIDE_TEXT_MAX (RUN_EPS_MAX * 5 + 8)

/* The arguments of a partition or a per-link net fault, checked: two sides of
 * endpoints, their processes, and (net) the link's loss, duplication and delay. */
struct sides {
    const int *a;
    int na;
    const int *b;
    int nb;
    const int *pa, *pb;
    bool oneway;
    int drop_ppm, dup_ppm, delay_ms;
};

/* "n1,n2|n3": the target of a fault between two sides. */
static void sides_text(char *out, size_t n, const struct sides *s)
{
    char ta[SIDE_TEXT_MAX], tb[SIDE_TEXT_MAX];
    eps_text(ta, sizeof ta, s->a, s->na);
    eps_text(tb, sizeof tb, s->b, s->nb);
    snprintf(out, n, "%s|%s", ta, tb);
}

static void partition_apply(struct run_world *rw, void *arg)
{
    const struct sides *s = arg;
    char target[2 * SIDE_TEXT_MAX + 2];
    sides_text(target, sizeof target, s);
    json_t *d = json_object();
    json_object_set_new(d, "oneway", json_boolean(s->oneway));
    run_log_fault(rw, "partition", target, d);
    net_partition(rw->w, s->pa, (size_t)s->na, s->pb, (size_t)s->nb, s->oneway);
    if (rw->tgt)
        rw->tgt->net_sync(rw);
}

int run_partition(struct run_world *rw, const int *a, int na, const int *b, int nb, bool oneway)
{
    int pa[RUN_EPS_MAX], pb[RUN_EPS_MAX];
    if (na > RUN_EPS_MAX || nb > RUN_EPS_MAX || procs_of(rw, a, na, pa) || procs_of(rw, b, nb, pb))
        return FL_ENOENT;
    for (int i = 0; i < na; i++)
        for (int j = 0; j < nb; j++)
            if (a[i] == b[j])
                return FL_EINVAL;
    struct sides s = {a, na, b, nb, pa, pb, oneway, 0, 0, 0};
    run_fault_apply(rw, partition_apply, &s, NULL);
    return FL_OK;
}

/* The members other than endpoint e (every member for a client). */
static int others_of(struct run_world *rw, int e, int *out)
{
    int ids[RUN_NODES_MAX], n = run_nodes(rw, ids, RUN_NODES_MAX), k = 0;
    for (int i = 0; i < n; i++)
        if (ids[i] != e)
            out[k++] = ids[i];
    return k;
}

struct isolate {
    int e;
    int others[RUN_NODES_MAX];
    int n;
    int rc; /* out: the partition's */
};

/* The partition of e from the others, as part of this application (its ordinal). */
static void isolate_apply(struct run_world *rw, void *arg)
{
    struct isolate *a = arg;
    a->rc = run_partition(rw, &a->e, 1, a->others, a->n, false);
}

int run_isolate(struct run_world *rw, int e)
{
    if (ep_proc(rw, e) < 0)
        return FL_ENOENT;
    struct isolate a = {e, {0}, 0, FL_OK};
    a.n = others_of(rw, e, a.others);
    run_fault_apply(rw, isolate_apply, &a, NULL);
    return a.rc;
}

static void heal_apply(struct run_world *rw, void *arg)
{
    (void)arg;
    run_log_fault(rw, "heal", "*", NULL);
    net_heal(rw->w);
    if (rw->tgt) {
        rw->tgt->net_sync(rw);
        rw->tgt->clog(rw, -1, -1, false);
    }
}

int run_heal(struct run_world *rw)
{
    run_fault_apply(rw, heal_apply, NULL, NULL);
    return FL_OK;
}

static bool net_args_ok(int drop_ppm, int dup_ppm, int delay_ms)
{
    return drop_ppm >= 0 && drop_ppm <= SIM_PPM && dup_ppm >= 0 && dup_ppm <= SIM_PPM &&
           delay_ms >= 0;
}

/* The base link with the given loss, duplication and extra delay; their detail. */
static struct net_link net_params(struct run_world *rw, int drop_ppm, int dup_ppm, int delay_ms,
                                  json_t **detail)
{
    struct net_link l = rw->net.base_link;
    l.loss_ppm = (uint32_t)drop_ppm;
    l.dup_ppm = (uint32_t)dup_ppm;
    l.latency_ns += (int64_t)delay_ms * FL_MS;
    json_t *d = json_object();
    json_object_set_new(d, "drop_ppm", json_integer(drop_ppm));
    json_object_set_new(d, "dup_ppm", json_integer(dup_ppm));
    json_object_set_new(d, "delay_ms", json_integer(delay_ms));
    *detail = d;
    return l;
}

static void net_apply(struct run_world *rw, void *arg)
{
    const struct sides *s = arg;
    json_t *d;
    struct net_link l = net_params(rw, s->drop_ppm, s->dup_ppm, s->delay_ms, &d);
    run_log_fault(rw, "net", "*", d);
    net_link_set(rw->w, -1, -1, &l);
    rw->net.changed = s->drop_ppm || s->dup_ppm || s->delay_ms;
    if (rw->tgt)
        rw->tgt->net_sync(rw); /* member-member links: loss and delay in the proxies */
}

int run_net(struct run_world *rw, int drop_ppm, int dup_ppm, int delay_ms)
{
    if (!net_args_ok(drop_ppm, dup_ppm, delay_ms))
        return FL_ERANGE;
    struct sides s = {.drop_ppm = drop_ppm, .dup_ppm = dup_ppm, .delay_ms = delay_ms};
    run_fault_apply(rw, net_apply, &s, NULL);
    return FL_OK;
}

/* Field by field: struct net_link has tail padding, which memcmp would compare too
 * (and which a copy through a function's return value need not keep). */
static bool link_is_base(struct run_world *rw, const struct net_link *l)
{
    const struct net_link *b = &rw->net.base_link;
    return l->latency_ns == b->latency_ns && l->jitter_ns == b->jitter_ns &&
           l->loss_ppm == b->loss_ppm && l->dup_ppm == b->dup_ppm &&
           l->corrupt_ppm == b->corrupt_ppm;
}

/* Does any link (or the default for links to come) differ from the base? */
static bool links_changed(struct run_world *rw)
{
    struct net_link l;
    net_link_get(rw->w, -1, -1, &l);
    if (!link_is_base(rw, &l))
        return true;
    int n = sim_proc_count(rw->w);
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++) {
            if (a == b)
                continue;
            net_link_get(rw->w, a, b, &l);
            if (!link_is_base(rw, &l))
                return true;
        }
    return false;
}

/* Sets l on every link from a side to b side (and back unless oneway); an empty side
 * is every endpoint (-1). */
static void links_set(struct run_world *rw, const int *pa, int na, const int *pb, int nb,
                      bool oneway, const struct net_link *l)
{
    int all = -1;
    if (na == 0) {
        pa = &all;
        na = 1;
    }
    if (nb == 0) {
        pb = &all;
        nb = 1;
    }
    for (int i = 0; i < na; i++)
        for (int j = 0; j < nb; j++) {
            net_link_set(rw->w, pa[i], pb[j], l);
            if (!oneway)
                net_link_set(rw->w, pb[j], pa[i], l);
        }
}

static void net_links_apply(struct run_world *rw, void *arg)
{
    const struct sides *s = arg;
    char target[2 * SIDE_TEXT_MAX + 2];
    sides_text(target, sizeof target, s);
    json_t *d;
    struct net_link l = net_params(rw, s->drop_ppm, s->dup_ppm, s->delay_ms, &d);
    json_object_set_new(d, "oneway", json_boolean(s->oneway));
    run_log_fault(rw, "net", target, d);
    links_set(rw, s->pa, s->na, s->pb, s->nb, s->oneway, &l);
    rw->net.changed = links_changed(rw);
    if (rw->tgt)
        rw->tgt->net_sync(rw);
}

int run_net_links(struct run_world *rw, const int *a, int na, const int *b, int nb, bool oneway,
                  int drop_ppm, int dup_ppm, int delay_ms)
{
    int pa[RUN_EPS_MAX], pb[RUN_EPS_MAX];
    if (!net_args_ok(drop_ppm, dup_ppm, delay_ms))
        return FL_ERANGE;
    if (na > RUN_EPS_MAX || nb > RUN_EPS_MAX || procs_of(rw, a, na, pa) || procs_of(rw, b, nb, pb))
        return FL_ENOENT;
    if (na == 0 && nb == 0)
        return FL_EINVAL; /* that is run_net */
    struct sides s = {a, na, b, nb, pa, pb, oneway, drop_ppm, dup_ppm, delay_ms};
    run_fault_apply(rw, net_links_apply, &s, NULL);
    return FL_OK;
}

/* A link end: an endpoint, or 0 for every endpoint (-1 in net.h). */
static int link_end(struct run_world *rw, int e, int *proc)
{
    if (e == 0) {
        *proc = -1;
        return FL_OK;
    }
    *proc = ep_proc(rw, e);
    return *proc < 0 ? FL_ENOENT : FL_OK;
}

struct link_fault {
    const char *kind;
    int from, to; /* endpoints (0: every one) */
    int pf, pt;   /* their processes (-1: every one) */
    void (*fn)(struct sim_world *, int, int);
};

static void link_fault_apply(struct run_world *rw, void *arg)
{
    const struct link_fault *f = arg;
    char a[16], b[16], target[40];
    ep_text(a, sizeof a, f->from);
    ep_text(b, sizeof b, f->to);
    snprintf(target, sizeof target, "%s>%s", a, b);
    run_log_fault(rw, f->kind, target, NULL);
    f->fn(rw->w, f->pf, f->pt);
    if (rw->tgt && (f->fn == net_clog || f->fn == net_unclog))
        rw->tgt->clog(rw, f->pf, f->pt, f->fn == net_clog);
}

static int link_fault(struct run_world *rw, const char *kind, int from, int to,
                      void (*fn)(struct sim_world *, int, int))
{
    struct link_fault a = {kind, from, to, 0, 0, fn};
    if (link_end(rw, from, &a.pf) || link_end(rw, to, &a.pt))
        return FL_ENOENT;
    run_fault_apply(rw, link_fault_apply, &a, NULL);
    return FL_OK;
}

int run_hold(struct run_world *rw, int from, int to)
{
    return link_fault(rw, "hold", from, to, net_hold);
}
int run_release(struct run_world *rw, int from, int to)
{
    return link_fault(rw, "release", from, to, net_release);
}
int run_clog(struct run_world *rw, int from, int to, bool on)
{
    return link_fault(rw, on ? "clog" : "unclog", from, to, on ? net_clog : net_unclog);
}
