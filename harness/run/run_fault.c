/*
 * run_fault.c: every fault a scenario or the nemesis applies, each logged in `faults`
 * (and the summary) as it happens; membership and maintenance calls; and the nemesis,
 * which draws random fault schedules from the "fault" stream only, so the workload's
 * draws never move when the schedule changes (what shrinking needs).
 *
 * Each application of a fault gets an ordinal (run.h): run_fault_apply hands it out
 * after the arguments are checked and before anything is applied or recorded, so a
 * skipped fault leaves no trace but keeps its number. Calls made inside an
 * application (isolate's partition, a nemesis draw's kill) belong to it.
 *
 * The network faults (partition, isolate, heal, net, hold, release, clog), which take
 * clients as well as members, are in run_net.c.
 *
 * Partition shapes follow Jepsen (simulation-anchors §5): isolate one node, a random
 * majority/minority split, the majorities ring (every node hears a majority, no two
 * the same one; built from one-way cuts), a bridge (two halves joined by one node)
 * and a one-way cut.
 */
#include "harness/run/run_etcd.h"

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

void run_skip_faults(struct run_world *rw, const int64_t *ordinals, int n)
{
    free(rw->ord.skip);
    rw->ord.skip = NULL;
    rw->ord.n_skip = 0;
    if (n <= 0)
        return;
    rw->ord.skip = fl_malloc(sizeof(int64_t) * (size_t)n);
    memcpy(rw->ord.skip, ordinals, sizeof(int64_t) * (size_t)n);
    qsort(rw->ord.skip, (size_t)n, sizeof(int64_t), cmp_i64);
    rw->ord.n_skip = n;
}

bool run_fault_skipped(const struct run_world *rw, int64_t ordinal)
{
    return rw->ord.n_skip && bsearch(&ordinal, rw->ord.skip, (size_t)rw->ord.n_skip,
                                     sizeof(int64_t), cmp_i64) != NULL;
}

int64_t run_fault_ordinals(const struct run_world *rw)
{
    return rw->ord.n;
}

/* A firing's ordinal (rule * RUN_FIRING_BASE + k) is skipped with its rule too. */
static bool ordinal_skipped(const struct run_world *rw, int64_t ordinal)
{
    return run_fault_skipped(rw, ordinal) ||
           (ordinal >= RUN_FIRING_BASE && run_fault_skipped(rw, ordinal / RUN_FIRING_BASE));
}

/* The two halves of run_fault_apply, never called apart: begin hands out the next
 * ordinal (unless one is in progress, which this application is then part of) and
 * returns false when it is skipped; end restores the scope begin found. */
static bool fault_begin(struct run_world *rw, int64_t *saved)
{
    *saved = rw->ord.cur;
    if (rw->ord.cur)
        return !rw->ord.cur_skipped; /* part of the application in progress */
    rw->ord.cur = ++rw->ord.n;
    rw->ord.cur_skipped = run_fault_skipped(rw, rw->ord.cur);
    return !rw->ord.cur_skipped;
}

static void fault_end(struct run_world *rw, int64_t saved)
{
    rw->ord.cur = saved;
    rw->ord.cur_skipped = saved && ordinal_skipped(rw, saved);
}

bool run_fault_apply(struct run_world *rw, run_fault_fn *fn, void *arg, int64_t *ordinal)
{
    int64_t saved;
    bool apply = fault_begin(rw, &saved);
    int64_t mine = rw->ord.cur;
    FL_ASSERT(mine > 0); /* a new ordinal, or the one in progress (also a firing's) */
    if (ordinal)
        *ordinal = mine;
    if (apply && fn)
        fn(rw, arg);
    /* fn leaves the scope as it found it: whatever it applied was part of this one */
    FL_ASSERT(rw->ord.cur == mine);
    fault_end(rw, saved);
    return apply;
}

int64_t run_fault_current(const struct run_world *rw)
{
    return rw->ord.cur;
}

bool run_rule_begin(struct run_world *rw, int64_t *ordinal)
{
    FL_ASSERT(rw->ord.cur == 0);
    *ordinal = ++rw->ord.n;
    return !run_fault_skipped(rw, *ordinal);
}

static bool run_scope_enter(struct run_world *rw, int64_t ordinal, int64_t *saved)
{
    *saved = rw->ord.cur;
    rw->ord.cur = ordinal;
    rw->ord.cur_skipped = ordinal && ordinal_skipped(rw, ordinal);
    return !rw->ord.cur_skipped;
}

static void run_scope_leave(struct run_world *rw, int64_t saved)
{
    fault_end(rw, saved);
}

bool run_scope(struct run_world *rw, int64_t ordinal, enum run_scope_mode mode, run_fault_fn *fn,
               void *arg)
{
    int64_t saved;
    bool live = run_scope_enter(rw, ordinal, &saved);
    if (live || mode == RUN_SCOPE_ALWAYS)
        fn(rw, arg);
    /* fn leaves the scope as it found it: whatever it applied was part of this one */
    FL_ASSERT(rw->ord.cur == ordinal);
    run_scope_leave(rw, saved);
    return live;
}

/* "n3", or "*" for node 0 (every node). */
static void node_target(char *out, size_t n, int node)
{
    if (node)
        snprintf(out, n, "n%d", node);
    else
        snprintf(out, n, "*");
}

struct node_fault {
    int id;
    const char *kind;
};

static void node_fault_apply(struct run_world *rw, void *arg)
{
    const struct node_fault *a = arg;
    char target[16];
    snprintf(target, sizeof target, "n%d", a->id);
    run_log_fault(rw, a->kind, target, NULL);
    if (rw->tgt)
        rw->tgt->node_fault(rw, a->id, a->kind);
    else if (!strcmp(a->kind, "kill"))
        srv_cluster_kill(rw->cl, a->id);
    else if (!strcmp(a->kind, "restart"))
        srv_cluster_restart(rw->cl, a->id);
    else if (!strcmp(a->kind, "pause"))
        srv_cluster_pause(rw->cl, a->id);
    else
        srv_cluster_resume(rw->cl, a->id);
}

static int node_fault(struct run_world *rw, int id, const char *kind)
{
    if (run_node_proc(rw, id) < 0)
        return FL_ENOENT;
    run_fault_apply(rw, node_fault_apply, &(struct node_fault){id, kind}, NULL);
    return FL_OK;
}

int run_kill(struct run_world *rw, int id)
{
    return node_fault(rw, id, "kill");
}
int run_restart(struct run_world *rw, int id)
{
    return node_fault(rw, id, "restart");
}
int run_pause(struct run_world *rw, int id)
{
    return node_fault(rw, id, "pause");
}
int run_resume(struct run_world *rw, int id)
{
    return node_fault(rw, id, "resume");
}

struct skew {
    int id, proc;
    int64_t rate_ppm;
};

static void skew_apply(struct run_world *rw, void *arg)
{
    const struct skew *a = arg;
    char target[16];
    snprintf(target, sizeof target, "n%d", a->id);
    json_t *d = json_object();
    json_object_set_new(d, "rate_ppm", json_integer(a->rate_ppm));
    run_log_fault(rw, "skew", target, d);
    if (rw->tgt)
        rw->tgt->skew(rw, a->id, a->rate_ppm); /* refused where NULL (run_target.c) */
    else if (sim_proc_alive(rw->w, a->proc))
        sim_proc_set_rate(rw->w, a->proc, a->rate_ppm);
}

int run_skew(struct run_world *rw, int id, int64_t rate_ppm)
{
    int proc = run_node_proc(rw, id);
    if (proc < 0)
        return FL_ENOENT;
    if (rate_ppm < 1000 || rate_ppm > 100 * SIM_PPM)
        return FL_ERANGE;
    run_fault_apply(rw, skew_apply, &(struct skew){id, proc, rate_ppm}, NULL);
    return FL_OK;
}

int run_heal_all(struct run_world *rw)
{
    run_nemesis_stop(rw);
    run_added_stop(rw);
    run_log_fault(rw, "heal_all", "*", NULL);
    net_heal(rw->w);
    net_release(rw->w, -1, -1);
    if (rw->net.changed) {
        net_link_set(rw->w, -1, -1, &rw->net.base_link);
        rw->net.changed = false;
    }
    flt_disable_all(rw->w);
    if (rw->tgt) {
        rw->tgt->net_sync(rw);
        rw->tgt->clog(rw, -1, -1, false);
        for (int i = 1; i <= rw->tgt->slots(rw); i++) {
            rw->tgt->node_fault(rw, i, "resume");
            rw->tgt->node_fault(rw, i, "restart");
            if (rw->tgt->skew)
                rw->tgt->skew(rw, i, SIM_PPM);
        }
    }
    int slots = rw->cl ? srv_cluster_slots(rw->cl) : 0;
    for (int i = 1; i <= slots; i++) {
        int proc = srv_cluster_node_proc(rw->cl, i);
        if (proc < 0 || srv_cluster_is_removed(rw->cl, i))
            continue;
        if (!srv_cluster_is_alive(rw->cl, i))
            srv_cluster_restart(rw->cl, i);
        else if (sim_proc_state(rw->w, proc) == SIM_PROC_PAUSED)
            srv_cluster_resume(rw->cl, i);
        if (sim_proc_alive(rw->w, proc) && sim_proc_rate(rw->w, proc) != SIM_PPM)
            sim_proc_set_rate(rw->w, proc, SIM_PPM);
    }
    return FL_OK;
}

int run_failpoint(struct run_world *rw, const char *name, int node, const char *action, int p_ppm,
                  int count, int delay_ms, char *err, size_t err_len)
{
    return run_failpoint_skip(rw, name, node, action, p_ppm, count, 0, delay_ms, err, err_len);
}

struct failpoint {
    const char *name;
    int node;
    const char *action;
    bool off;
    const struct flt_spec *spec;
    char *err;
    size_t err_len;
    int rc; /* out */
};

static void failpoint_apply(struct run_world *rw, void *arg)
{
    struct failpoint *a = arg;
    const struct flt_spec *spec = a->spec;
    char target[16];
    node_target(target, sizeof target, a->node);
    json_t *d = json_object();
    json_object_set_new(d, "name", json_string(a->name));
    json_object_set_new(d, "action", json_string(a->action));
    json_object_set_new(d, "p_ppm", json_integer(spec->p_ppm));
    json_object_set_new(d, "count", json_integer(spec->count));
    if (spec->skip)
        json_object_set_new(d, "skip", json_integer(spec->skip));
    if (rw->tgt && rw->tgt->failpoint && !a->off && spec->delay_ms)
        json_object_set_new(d, "delay_ms", json_integer(spec->delay_ms));
    if (rw->tgt && rw->tgt->failpoint) { /* the member processes' own (live, etcd) */
        if ((a->rc = rw->tgt->failpoint(rw, a->name, a->node, spec, a->off, a->err, a->err_len))) {
            json_decref(d);
            d = NULL;
        }
    } else if (a->off) {
        flt_disable(rw->w, a->name, spec->node);
    } else if ((a->rc = flt_enable(rw->w, a->name, spec)) != FL_OK) {
        snprintf(a->err, a->err_len, "failpoint '%s': %s", a->name, fl_strerror(a->rc));
        json_decref(d);
        d = NULL;
    }
    if (d)
        run_log_fault(rw, "failpoint", target, d);
}

int run_failpoint_skip(struct run_world *rw, const char *name, int node, const char *action,
                       int p_ppm, int count, int skip, int delay_ms, char *err, size_t err_len)
{
    if (!flt_failpoint_find(name)) {
        snprintf(err, err_len, "unknown failpoint '%s' (see faultline list failpoints)", name);
        return FL_ENOENT;
    }
    int proc = -1;
    if (node && (proc = run_node_proc(rw, node)) < 0) {
        snprintf(err, err_len, "unknown node id %d", node);
        return FL_ENOENT;
    }
    bool off = !strcmp(action, "off");
    struct flt_spec spec = {.node = proc,
                            .delay_ms = delay_ms,
                            .p_ppm = (uint32_t)p_ppm,
                            .count = (uint32_t)count,
                            .skip = (uint32_t)skip};
    if (!off && !flt_action_parse(action, &spec.action)) {
        snprintf(err, err_len, "unknown failpoint action '%s' (crash, error, delay, drop, off)",
                 action);
        return FL_EINVAL;
    }
    if (rw->tgt && rw->tgt->failpoint_refused) {
        const char *why = rw->tgt->failpoint_refused(rw, name, action, p_ppm, count, skip);
        if (why) {
            snprintf(err, err_len, "'%s' %s: not available on --target %s: %s", name, action,
                     rw->tgt->name, why);
            return FL_EUNSUP;
        }
    }
    struct failpoint a = {name, node, action, off, &spec, err, err_len, FL_OK};
    run_fault_apply(rw, failpoint_apply, &a, NULL);
    return a.rc;
}

int run_bug(struct run_world *rw, const char *name)
{
    if (!fl_bug_enable(name))
        return FL_ENOENT;
    run_log_fault(rw, "bug", name, NULL);
    return FL_OK;
}

/* --- membership and maintenance ----------------------------------------------------- */

/* A control call waiting for the cluster, linked in rw->ctls: a call the cluster never
 * answers (a paused member when the run ends) is freed with the world. */
struct run_ctl_call {
    struct run_world *rw;
    run_ctl_fn *done;
    void *arg;
    bool add;
    struct run_ctl_call *prev, *next;
};

static void ctl_unlink(struct run_ctl_call *c)
{
    if (c->prev)
        c->prev->next = c->next;
    else
        c->rw->ctls = c->next;
    if (c->next)
        c->next->prev = c->prev;
}

void run_ctl_free_pending(struct run_world *rw)
{
    while (rw->ctls) {
        struct run_ctl_call *c = rw->ctls;
        ctl_unlink(c);
        free(c);
    }
}

static void clients_add_endpoint(struct run_world *rw, int node)
{
    struct kvc_endpoint ep = {.node = node, .proc = run_node_proc(rw, node)};
    for (int i = 0; i < rw->n_clients; i++)
        if (rw->clients[i].c && !rw->clients[i].closed)
            kvc_client_add_endpoint(rw->clients[i].c, &ep);
}

/* Whether a member add is still waiting for its answer. */
static bool ctl_add_pending(const struct run_world *rw)
{
    for (const struct run_ctl_call *c = rw->ctls; c; c = c->next)
        if (c->add)
            return true;
    return false;
}

/* The clients learn every member that joined and is not removed, as an operator does
 * with `etcdctl member list` when `member add` gave no answer (its leader died, the
 * call timed out) though the change committed: before this, such a member stayed
 * unknown to every client, and a world whose first members were then removed had
 * clients with no member to talk to (explore: a one-member world that added n2 and
 * removed n1 failed liveness for 26 s). An endpoint the clients know is left alone,
 * so a run whose adds are all answered is unchanged. */
static void clients_learn_joined(struct run_world *rw)
{
    for (int node = 1; node < 64; node++)
        if ((rw->joined >> node & 1) && !srv_cluster_is_removed(rw->cl, node))
            clients_add_endpoint(rw, node);
}

void run_member_joined(struct run_world *rw, int node)
{
    if (node <= 0 || node >= 64)
        return;
    if (rw->tgt) { /* live: a member whose add was not answered, learned from the list */
        clients_add_endpoint(rw, node);
        return;
    }
    rw->joined |= (uint64_t)1 << node;
    if (!ctl_add_pending(rw)) /* the add's answer came (or was lost) before the join */
        clients_add_endpoint(rw, node);
}

static void ctl_done(void *ud, const struct srv_status *st, const struct srv_result *res)
{
    struct run_ctl_call *c = ud;
    struct run_world *rw = c->rw;
    ctl_unlink(c);
    struct run_ctl_result r = {.code = st->code, .text = st->text ? st->text : ""};
    if (res) {
        r.node = res->node;
        r.revision = res->revision;
        r.data = res->data;
        r.len = res->len;
    }
    if (c->add && st->code == 0 && res && res->node > 0)
        clients_add_endpoint(rw, res->node);
    if (c->add)
        clients_learn_joined(rw);
    if (c->done)
        c->done(c->arg, &r);
    free(c);
}

static struct run_ctl_call *ctl_new(struct run_world *rw, run_ctl_fn *done, void *arg,
                                    const char *kind, int node, json_t *detail)
{
    struct run_ctl_call *c = fl_calloc(1, sizeof *c);
    c->rw = rw;
    c->done = done;
    c->arg = arg;
    c->next = rw->ctls;
    if (rw->ctls)
        rw->ctls->prev = c;
    rw->ctls = c;
    char target[16];
    node_target(target, sizeof target, node);
    run_log_fault(rw, kind, target, detail);
    return c;
}

/* A real target's control calls: its answer as run_ctl_result. */
static void etcd_ctl_done(void *ud, const struct run_ctl_result *res)
{
    struct run_ctl_call *c = ud;
    struct run_world *rw = c->rw;
    ctl_unlink(c);
    struct run_ctl_result r = *res;
    if (!r.text)
        r.text = "";
    if (r.node > 0)
        clients_add_endpoint(rw, r.node);
    if (c->done)
        c->done(c->arg, &r);
    free(c);
}

static bool etcd_ctl(struct run_world *rw, const char *kind, int node, int64_t arg,
                     run_ctl_fn *done, void *ud, json_t *detail)
{
    if (!rw->tgt)
        return false;
    if (!rw->tgt->ctl) { /* refused before the script runs (run_target.c); never here */
        struct run_ctl_result r = {.code = 12 /* Unimplemented */, .text = "not on this target"};
        if (done)
            done(ud, &r);
        return true;
    }
    rw->tgt->ctl(rw, kind, node, arg, etcd_ctl_done,
                 ctl_new(rw, done, ud, kind,
                         kind[0] == 'c' ? 0
                         : node         ? node
                                        : (int)arg,
                         detail));
    return true;
}

void run_member_add(struct run_world *rw, bool learner, run_ctl_fn *done, void *arg)
{
    json_t *d = json_object();
    json_object_set_new(d, "learner", json_boolean(learner));
    if (etcd_ctl(rw, "member_add", 0, learner, done, arg, d))
        return;
    struct run_ctl_call *c = ctl_new(rw, done, arg, "member_add", 0, d);
    c->add = true;
    srv_cluster_member_add(rw->cl, 0, learner, ctl_done, c);
}

void run_member_add_unstarted(struct run_world *rw, bool learner, run_ctl_fn *done, void *arg)
{
    if (rw->tgt && rw->tgt->awaits_start) { /* the live target */
        json_t *d = json_object();
        json_object_set_new(d, "learner", json_boolean(learner));
        json_object_set_new(d, "start", json_false());
        etcd_ctl(rw, "member_add_unstarted", 0, learner, done, arg, d);
        return;
    }
    if (rw->tgt) { /* refused, in the words of a refused function (run_target.c) */
        struct run_ctl_result r = {.code = 12 /* Unimplemented */,
                                   .text = rw->tgt->ctl ? "member_add { start = false }: not "
                                                          "available on --target etcd (a member "
                                                          "added there starts at once)"
                                                        : "member_add: not available on this "
                                                          "target"};
        done(arg, &r);
        return;
    }
    json_t *d = json_object();
    json_object_set_new(d, "learner", json_boolean(learner));
    json_object_set_new(d, "start", json_false());
    struct run_ctl_call *c = ctl_new(rw, done, arg, "member_add", 0, d);
    c->add = true;
    srv_cluster_member_add_unstarted(rw->cl, 0, learner, ctl_done, c);
}

int run_member_start(struct run_world *rw, int node)
{
    if (run_node_proc(rw, node) < 0)
        return FL_ENOENT;
    if (!run_member_awaits_start(rw, node))
        return FL_EINVAL;
    char target[16];
    node_target(target, sizeof target, node);
    run_log_fault(rw, "member_start", target, NULL);
    if (rw->tgt)
        return rw->tgt->member_start(rw, node); /* awaits_start said yes: it has one */
    int rc = srv_cluster_member_start(rw->cl, node);
    FL_ASSERT(rc == FL_OK);
    return FL_OK;
}

/* A control call naming one member (remove, promote, move leader): on a real target
 * through etcd_ctl, else through the simulated cluster's fn. */
typedef void member_ctl_fn(struct srv_cluster *cl, int via, int node, srv_done_fn done, void *ud);

static void member_ctl(struct run_world *rw, const char *kind, member_ctl_fn *fn, int node,
                       run_ctl_fn *done, void *arg)
{
    if (etcd_ctl(rw, kind, 0, node, done, arg, NULL))
        return;
    fn(rw->cl, 0, node, ctl_done, ctl_new(rw, done, arg, kind, node, NULL));
}

void run_member_remove(struct run_world *rw, int node, run_ctl_fn *done, void *arg)
{
    member_ctl(rw, "member_remove", srv_cluster_member_remove, node, done, arg);
}

void run_member_promote(struct run_world *rw, int node, run_ctl_fn *done, void *arg)
{
    member_ctl(rw, "member_promote", srv_cluster_member_promote, node, done, arg);
}

void run_move_leader(struct run_world *rw, int node, run_ctl_fn *done, void *arg)
{
    member_ctl(rw, "move_leader", srv_cluster_move_leader, node, done, arg);
}

void run_compact(struct run_world *rw, int64_t revision, run_ctl_fn *done, void *arg)
{
    json_t *d = json_object();
    json_object_set_new(d, "revision", json_integer(revision));
    if (etcd_ctl(rw, "compact", 0, revision, done, arg, d))
        return;
    srv_cluster_compact(rw->cl, 0, revision, ctl_done, ctl_new(rw, done, arg, "compact", 0, d));
}

void run_defrag(struct run_world *rw, int node, run_ctl_fn *done, void *arg)
{
    if (etcd_ctl(rw, "defrag", node, 0, done, arg, NULL))
        return;
    srv_cluster_defrag(rw->cl, node, ctl_done, ctl_new(rw, done, arg, "defrag", node, NULL));
}

void run_alarm_disarm(struct run_world *rw, run_ctl_fn *done, void *arg)
{
    if (etcd_ctl(rw, "alarm_disarm", 0, 0, done, arg, NULL))
        return;
    srv_cluster_alarm_disarm(rw->cl, 0, ctl_done, ctl_new(rw, done, arg, "alarm_disarm", 0, NULL));
}

void run_snapshot_save(struct run_world *rw, int node, run_ctl_fn *done, void *arg)
{
    if (etcd_ctl(rw, "snapshot_save", node, 0, done, arg, NULL))
        return;
    srv_cluster_snapshot_save(rw->cl, node, ctl_done,
                              ctl_new(rw, done, arg, "snapshot_save", node, NULL));
}

int run_copy_db(struct run_world *rw, int node, uint8_t **data, size_t *len)
{
    if (run_node_proc(rw, node) < 0)
        return FL_ENOENT;
    if (rw->tgt)
        return rw->tgt->copy_db ? rw->tgt->copy_db(rw, node, data, len) : FL_EUNSUP;
    return srv_cluster_copy_db(rw->cl, node, data, len);
}

int run_restore(struct run_world *rw, const uint8_t *data, size_t len, const int *nodes,
                int n_nodes, bool skip_hash_check, char *err, size_t err_len)
{
    char target[128];
    run_target_nodes(target, sizeof target, nodes, n_nodes);
    json_t *d = json_object();
    json_object_set_new(d, "bytes", json_integer((json_int_t)len));
    json_object_set_new(d, "skip_hash_check", json_boolean(skip_hash_check));
    run_log_fault(rw, "restore", target, d);
    if (rw->tgt && !rw->tgt->restore) {
        snprintf(err, err_len, "restore: not available on --target %s", rw->tgt->name);
        return FL_EUNSUP;
    }
    if (rw->tgt)
        return rw->tgt->restore(rw, data, len, nodes, n_nodes, skip_hash_check, err, err_len);
    struct srv_status st = {0, ""};
    int rc = srv_cluster_restore(rw->cl, data, len, nodes, n_nodes, skip_hash_check, &st);
    if (rc)
        snprintf(err, err_len, "%s", st.text && st.text[0] ? st.text : fl_strerror(rc));
    return rc;
}

struct kvc_client *run_client(struct run_world *rw, int i)
{
    if (i < 1 || i > rw->n_clients)
        return NULL;
    return rw->clients[i - 1].c;
}

int run_client_count(struct run_world *rw)
{
    return rw->n_clients;
}

/* --- nemesis -------------------------------------------------------------------------- */

static const struct {
    const char *name;
    unsigned bit;
} nemesis_kinds[] = {
    {"partition", RUN_NEMESIS_PARTITION},
    {"kill", RUN_NEMESIS_KILL},
    {"pause", RUN_NEMESIS_PAUSE},
    {"skew", RUN_NEMESIS_SKEW},
    {"membership", RUN_NEMESIS_MEMBERSHIP},
    {"net", RUN_NEMESIS_NET},
    {"all", RUN_NEMESIS_ALL},
};

unsigned run_nemesis_kind(const char *name)
{
    for (size_t i = 0; i < FL_ARRAY_LEN(nemesis_kinds); i++)
        if (!strcmp(nemesis_kinds[i].name, name))
            return nemesis_kinds[i].bit;
    return 0;
}

/* Draws from the current nemesis tick's stream. */
static uint64_t draw(struct run_world *rw, uint64_t n)
{
    return sim_rng_below(&rw->nem.rng, n);
}

int run_live_nodes(struct run_world *rw, int *out)
{
    int ids[RUN_NODES_MAX], n = run_nodes(rw, ids, RUN_NODES_MAX), k = 0;
    for (int i = 0; i < n; i++)
        if (rw->tgt ? rw->tgt->alive(rw, ids[i]) : srv_cluster_is_alive(rw->cl, ids[i]))
            out[k++] = ids[i];
    return k;
}

void run_partition_shape(struct run_world *rw, struct sim_rng *rng)
{
    int ids[RUN_NODES_MAX], n = run_nodes(rw, ids, RUN_NODES_MAX);
    if (n < 2)
        return;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)sim_rng_below(rng, (uint64_t)i + 1), t = ids[i];
        ids[i] = ids[j];
        ids[j] = t;
    }
    int shape = (int)sim_rng_below(rng, 5), half = n / 2;
    switch (shape) {
    case 0:
        run_isolate(rw, ids[0]);
        break; /* one */
    case 1:
        run_partition(rw, ids, half, ids + half, n - half, false);
        break; /* majority */
    case 2:    /* majorities ring: node i hears only its half successors in ring order */
        run_log_fault(rw, "partition_ring", "*", NULL);
        for (int i = 0; i < n; i++) {
            for (int d = half + 1; d < n; d++) {
                int from = run_node_proc(rw, ids[(i + d) % n]), to = run_node_proc(rw, ids[i]);
                net_block(rw->w, from, to);
            }
        }
        break;
    case 3: /* bridge: ids[0] talks to both halves, which cannot talk to each other */
        if (n >= 3) {
            int h = (n - 1) / 2;
            run_partition(rw, ids + 1, h, ids + 1 + h, n - 1 - h, false);
        } else {
            run_isolate(rw, ids[0]);
        }
        break;
    default:
        run_partition(rw, ids, 1, ids + 1, n - 1, true);
        break; /* one-way */
    }
}

static void nemesis_partition(struct run_world *rw)
{
    int ids[RUN_NODES_MAX];
    if (run_nodes(rw, ids, RUN_NODES_MAX) < 2)
        return;
    run_partition_shape(rw, &rw->nem.rng);
    rw->nem.undo_kind = RUN_NEMESIS_PARTITION;
}

static void nemesis_node(struct run_world *rw, unsigned kind)
{
    int ids[RUN_NODES_MAX], n = run_live_nodes(rw, ids);
    int ids_all[RUN_NODES_MAX], total = run_nodes(rw, ids_all, RUN_NODES_MAX);
    /* never take down a majority of the members at once */
    if (n <= total / 2 || n == 0)
        return;
    int node = ids[draw(rw, (uint64_t)n)];
    rw->nem.undo_node = node;
    rw->nem.undo_kind = (int)kind;
    if (kind == RUN_NEMESIS_KILL) {
        run_kill(rw, node);
    } else if (kind == RUN_NEMESIS_PAUSE) {
        run_pause(rw, node);
    } else {
        static const int64_t rates[] = {500000, 900000, 1100000, 2000000};
        run_skew(rw, node, rates[draw(rw, FL_ARRAY_LEN(rates))]);
    }
}

static void nemesis_membership(struct run_world *rw)
{
    int ids[RUN_NODES_MAX], n = run_live_nodes(rw, ids), leader = run_leader(rw), k = 0;
    int cand[RUN_NODES_MAX];
    for (int i = 0; i < n; i++)
        if (ids[i] != leader && !srv_cluster_is_learner(rw->cl, ids[i]))
            cand[k++] = ids[i];
    if (n < 3 || k == 0)
        return;
    /* remove a follower now; the undo adds a fresh member in its place */
    run_member_remove(rw, cand[draw(rw, (uint64_t)k)], NULL, NULL);
    rw->nem.undo_kind = RUN_NEMESIS_MEMBERSHIP;
}

static void nemesis_net(struct run_world *rw)
{
    static const int drops[] = {0, 10000, 50000};
    static const int delays[] = {0, 20, 100};
    int drop = drops[draw(rw, 3)], delay = delays[draw(rw, 3)];
    if (!drop && !delay)
        delay = 50;
    run_net(rw, drop, 0, delay);
    rw->nem.undo_kind = RUN_NEMESIS_NET;
}

/* Undoes the fault the last apply slot drew, in that draw's scope (run_scope): the
 * undo belongs to its ordinal, whatever scope the caller is in. */
static void nemesis_undo(struct run_world *rw, void *arg)
{
    (void)arg;
    switch (rw->nem.undo_kind) {
    case RUN_NEMESIS_PARTITION:
        run_heal(rw);
        break;
    case RUN_NEMESIS_KILL:
        run_restart(rw, rw->nem.undo_node);
        break;
    case RUN_NEMESIS_PAUSE:
        run_resume(rw, rw->nem.undo_node);
        break;
    case RUN_NEMESIS_SKEW:
        run_skew(rw, rw->nem.undo_node, SIM_PPM);
        break;
    case RUN_NEMESIS_MEMBERSHIP:
        run_member_add(rw, false, NULL, NULL);
        break;
    case RUN_NEMESIS_NET:
        run_net(rw, 0, 0, 0);
        break;
    default:
        break;
    }
    rw->nem.undo_kind = 0;
}

/* Applies one fault of a random kind (an apply slot). */
static void nemesis_apply(struct run_world *rw, void *arg)
{
    (void)arg;
    unsigned bits[8];
    int nb = 0;
    for (unsigned b = 1; b <= RUN_NEMESIS_NET; b <<= 1)
        if (rw->nem.kinds & b)
            bits[nb++] = b;
    unsigned kind = bits[draw(rw, (uint64_t)nb)];
    if (kind == RUN_NEMESIS_PARTITION)
        nemesis_partition(rw);
    else if (kind == RUN_NEMESIS_MEMBERSHIP)
        nemesis_membership(rw);
    else if (kind == RUN_NEMESIS_NET)
        nemesis_net(rw);
    else
        nemesis_node(rw, kind);
}

/* Ticks alternate: an apply slot draws a fault (and takes an ordinal, even when the
 * fault is skipped or the cluster state leaves nothing to do), the undo slot after it
 * undoes whatever was applied. Each tick draws first the gap to the next tick, then
 * its fault, from its own stream, so neither depends on what earlier ticks did. */
static void nemesis_log(struct run_world *rw, void *arg)
{
    (void)arg;
    json_t *d = json_object();
    json_object_set_new(d, "kinds", json_integer(rw->nem.kinds));
    json_object_set_new(d, "every_ms", json_integer(rw->nem.every_ns / FL_MS));
    run_log_fault(rw, "nemesis", "*", d);
}

static void nemesis_tick(struct sim_world *w, void *ctx)
{
    (void)w;
    struct run_world *rw = ctx;
    rw->nem.timer = 0;
    bool undo = rw->nem.undo_next;
    if (!undo && rw->nem.until_ns && sim_now_ns(rw->w) >= rw->nem.until_ns)
        return; /* past its duration and nothing to undo: done */
    char name[48];
    snprintf(name, sizeof name, "fault/nemesis/%lld", (long long)++rw->nem.tick);
    sim_rng_derive(&rw->nem.rng, run_fault_seed(rw), name);
    int64_t every = rw->nem.every_ns;
    int64_t gap = every / 2 + (int64_t)draw(rw, (uint64_t)every + 1);
    if (undo) {
        rw->nem.undo_next = false;
        if (rw->nem.undo_kind)
            run_scope(rw, rw->nem.ordinal, RUN_SCOPE_LIVE, nemesis_undo, NULL);
    } else {
        rw->nem.undo_next = true;
        rw->nem.undo_kind = 0;
        run_fault_apply(rw, rw->nem.dry ? NULL : nemesis_apply, NULL, &rw->nem.ordinal);
    }
    rw->nem.timer = sim_schedule(rw->w, gap, nemesis_tick, rw);
}

int run_nemesis(struct run_world *rw, unsigned kinds, int64_t every_ns, int64_t duration_ns)
{
    if (!kinds || every_ns <= 0)
        return FL_EINVAL;
    if (rw->tgt && (kinds & ~rw->tgt->nemesis_kinds))
        return FL_EUNSUP; /* e.g. skew, membership and net bursts are not etcd-target faults */
    if (rw->nem.undo_next && rw->nem.undo_kind) {
        /* a nemesis replaced while its fault is in force: undo that fault first */
        run_scope(rw, rw->nem.ordinal, RUN_SCOPE_LIVE, nemesis_undo, NULL);
    }
    run_nemesis_stop(rw);
    rw->nem.kinds = kinds & RUN_NEMESIS_ALL;
    rw->nem.every_ns = every_ns;
    rw->nem.until_ns = duration_ns ? sim_now_ns(rw->w) + duration_ns : 0;
    rw->nem.dry = !run_fault_apply(rw, nemesis_log, NULL, NULL);
    rw->nem.timer = sim_schedule(rw->w, every_ns, nemesis_tick, rw);
    return FL_OK;
}

void run_nemesis_stop(struct run_world *rw)
{
    run_lanes_stop(rw);
    run_triggers_disarm(rw);
    if (rw->nem.timer) {
        sim_cancel(rw->w, rw->nem.timer);
        rw->nem.timer = 0;
    }
    rw->nem.kinds = 0;
    rw->nem.undo_kind = 0; /* heal_all undoes everything anyway */
    rw->nem.undo_next = false;
    rw->nem.dry = false;
}
