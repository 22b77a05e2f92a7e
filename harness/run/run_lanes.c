/*
 * run_lanes.c: the swarm nemesis' fault lanes (run.h RUN_LANE_*), Jepsen's composed
 * nemesis: one lane per fault kind the swarm turned on, each on its own period,
 * alternating between applying a fault of its kind and undoing it, independently of
 * the other lanes, so faults overlap — a kill during a partition during a membership
 * change. A "doctor" lane (always on while the lanes run) restarts members that a
 * crash failpoint killed, so BUGGIFY crashes do not end the fault phase early.
 *
 * Determinism and shrinking: every tick of a lane draws from a stream of its own,
 * "fault/<lane>/<tick>", first the gap to its next tick and then its choices, so a
 * tick's time never depends on the cluster and removing one fault moves no other
 * lane's draws. Each apply slot takes one ordinal (run.h), even when it finds nothing
 * to do; its undo, and restarts it staggers, share it. The faults go through the
 * run_* fault functions, so every one is logged in `faults` as it happens.
 */
#include "harness/run/run_int.h"

#define DOCTOR_EVERY_NS (3 * FL_S)
#define SLOTS_ADD_MAX   14 /* no member add past this slot (client endpoint lists) */

enum {
    UNDO_NONE = 0,
    UNDO_HEAL,
    UNDO_RESTART,
    UNDO_RESUME,
    UNDO_UNSKEW,
    UNDO_NET,
    UNDO_RELEASE,
    UNDO_ADD,         /* add a voter (a removal's replacement) */
    UNDO_PROMOTE,     /* promote the learner nodes[0] once it is known */
    UNDO_FAILPOINT,   /* turn failpoint slow_name off on nodes[0] */
    UNDO_HEAL_ADD,    /* heal, and add a member back */
    UNDO_RELEASE_ADD, /* release nodes[0]'s links to nodes[1..], and add a member back */
    UNDO_CHURN,       /* crash failpoints off on nodes[], the dead ones back in random order */
};

/* fn (run_kill, run_pause) on the first k of ids, which the lane keeps for its undo. */
static void take_nodes(struct run_world *rw, struct run_lane *l, const int *ids, int k,
                       int (*fn)(struct run_world *rw, int id), int undo)
{
    for (int i = 0; i < k; i++) {
        fn(rw, ids[i]);
        l->nodes[i] = ids[i];
    }
    l->n_nodes = k;
    l->undo = undo;
}

static uint64_t below(struct run_lane *l, uint64_t n)
{
    return sim_rng_below(&l->rng, n);
}

static void shuffle(struct run_lane *l, int *a, int n)
{
    for (int i = n - 1; i > 0; i--) {
        int j = (int)below(l, (uint64_t)i + 1), t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
}

static int64_t election_ns(const struct run_world *rw)
{
    return (int64_t)(rw->ccfg.election_ms ? rw->ccfg.election_ms : 1000) * FL_MS;
}

/* --- staggered restarts ---------------------------------------------------------------- */

/* The swarm never restarts a member removed meanwhile: etcd's would learn from its
 * peers that it was removed and stop, where the simulated one would live on outside the
 * configuration, answering no request (clients pinned to it hang). */
void run_swarm_restart(struct run_world *rw, int id)
{
    if (!srv_cluster_is_removed(rw->cl, id))
        run_restart(rw, id);
}

static void later_restart_fn(struct run_world *rw, void *arg)
{
    const struct run_lane_later *lt = arg;
    run_swarm_restart(rw, lt->node);
}

static void later_restart(struct sim_world *w, void *ctx)
{
    (void)w;
    struct run_lane_later *lt = ctx;
    struct run_world *rw = lt->lane->rw;
    lt->h = 0;
    run_scope(rw, lt->ordinal, RUN_SCOPE_LIVE, later_restart_fn, lt);
}

/* Restarts nodes in a random order: the first now, each next after a gap of up to
 * two election timeouts (which member comes back first decides elections). */
static void restart_staggered(struct run_world *rw, struct run_lane *l, int *nodes, int n)
{
    shuffle(l, nodes, n);
    for (int i = 0; l->last_node && i + 1 < n; i++) {
        if (nodes[i] == l->last_node) {
            nodes[i] = nodes[n - 1];
            nodes[n - 1] = l->last_node;
        }
    }
    int64_t at = 0;
    for (int i = 0; i < n; i++) {
        struct run_lane_later *lt = NULL;
        for (int k = 0; k < RUN_LANE_LATER_MAX && !lt && i > 0; k++)
            if (!l->later[k].h)
                lt = &l->later[k];
        if (i > 0)
            at += (int64_t)below(l, (uint64_t)(2 * election_ns(rw)) + 1);
        if (!lt) {
            run_swarm_restart(rw, nodes[i]);
            continue;
        }
        *lt = (struct run_lane_later){l, 0, nodes[i], rw->ord.cur};
        lt->h = sim_schedule(rw->w, at, later_restart, lt);
    }
}

/* --- applies ----------------------------------------------------------------------------- */

static void apply_kill(struct run_world *rw, struct run_lane *l, bool power)
{
    int ids[RUN_NODES_MAX], n = run_live_nodes(rw, ids);
    if (n == 0)
        return;
    shuffle(l, ids, n);
    int k = n;
    if (!power) {
        uint64_t x = below(l, 10); /* one member 70%, a minority 20%, a majority 10% */
        k = x < 7 ? 1 : x < 9 ? FL_MAX(1, (n - 1) / 2) : n / 2 + 1;
    }
    k = FL_MIN(k, n);
    /* a power loss: half the time the leader's machine is the last back (its log is the
     * longest: the others elect among themselves first) */
    l->last_node = power && below(l, 2) == 0 ? run_leader(rw) : 0;
    take_nodes(rw, l, ids, k, run_kill, UNDO_RESTART);
}

static void apply_pause(struct run_world *rw, struct run_lane *l)
{
    int ids[RUN_NODES_MAX], n = run_live_nodes(rw, ids);
    if (n == 0)
        return;
    shuffle(l, ids, n);
    int k = n >= 3 && below(l, 5) == 0 ? 2 : 1;
    take_nodes(rw, l, ids, k, run_pause, UNDO_RESUME);
}

static void apply_skew(struct run_world *rw, struct run_lane *l)
{
    static const int64_t rates[] = {300000, 500000, 900000, 1100000, 2000000, 5000000};
    int ids[RUN_NODES_MAX], n = run_live_nodes(rw, ids);
    if (n == 0)
        return;
    l->nodes[0] = ids[below(l, (uint64_t)n)];
    l->n_nodes = 1;
    run_skew(rw, l->nodes[0], rates[below(l, FL_ARRAY_LEN(rates))]);
    l->undo = UNDO_UNSKEW;
}

static void apply_net(struct run_world *rw, struct run_lane *l)
{
    static const int drops[] = {0, 10000, 50000, 200000};
    static const int dups[] = {0, 0, 50000};
    static const int delays[] = {0, 20, 100};
    int drop = drops[below(l, 4)], dup = dups[below(l, 3)], delay = delays[below(l, 3)];
    if (!drop && !dup && !delay)
        delay = 50;
    run_net(rw, drop, dup, delay);
    l->undo = UNDO_NET;
}

static void apply_hold(struct run_world *rw, struct run_lane *l)
{
    int ids[RUN_NODES_MAX], n = run_nodes(rw, ids, RUN_NODES_MAX);
    if (n < 2)
        return;
    shuffle(l, ids, n);
    int from = ids[0], to = ids[1];
    uint64_t x = below(l, 3);
    int leader = run_leader(rw);
    if (x == 0 && leader) { /* everything the leader sends */
        from = leader;
        to = 0;
    } else if (x == 1 && leader && leader != to) {
        from = leader;
    }
    run_hold(rw, from, to);
    l->nodes[0] = from;
    l->nodes[1] = to;
    l->n_nodes = 2;
    l->undo = UNDO_RELEASE;
}

/* Membership: the lane keeps the number of voters around the initial one. */
struct mem_call {
    struct run_lane *lane;
    bool learner;
};

static void mem_added(void *arg, const struct run_ctl_result *r)
{
    struct run_lane *l = arg;
    if (r->code == 0 && r->node > 0 && l->undo == UNDO_PROMOTE && l->n_nodes == 0) {
        l->nodes[0] = r->node;
        l->n_nodes = 1;
    }
}

static int voters(struct run_world *rw, int *out)
{
    return srv_cluster_voters(rw->cl, out, RUN_NODES_MAX);
}

static int pick_follower(struct run_world *rw, struct run_lane *l, int leader)
{
    int v[RUN_NODES_MAX], n = voters(rw, v), c[RUN_NODES_MAX], k = 0;
    for (int i = 0; i < n; i++)
        if (v[i] != leader && !srv_cluster_is_removed(rw->cl, v[i]))
            c[k++] = v[i];
    return k ? c[below(l, (uint64_t)k)] : 0;
}

/* Membership during a partition (Jepsen's member nemesis composed with a partition):
 * the leader and one follower are cut off from the others, the follower's answers to
 * the leader are held (a slow link), and the leader is asked to remove all of the
 * others but one at once. Correctly the second change is refused while the first is
 * uncommitted (which needs the other side); the undo releases, heals and adds members
 * back. */
static void apply_split_change(struct run_world *rw, struct run_lane *l, int leader, const int *v,
                               int nv)
{
    int side[RUN_NODES_MAX], rest[RUN_NODES_MAX], nr = 0;
    for (int i = 0; i < nv; i++)
        if (v[i] != leader)
            rest[nr++] = v[i];
    shuffle(l, rest, nr);
    side[0] = leader;
    side[1] = rest[--nr];
    run_partition(rw, side, 2, rest, nr, false);
    run_hold(rw, side[1], leader);
    l->nodes[0] = side[1];
    l->nodes[1] = leader;
    l->n_nodes = 2;
    /* all of the others but one: then the leader's side is a majority of what is left */
    for (int i = 0; i + 1 < nr; i++)
        run_member_remove(rw, rest[i], NULL, NULL);
    l->undo = UNDO_HEAL_ADD;
}

/* A learner of the configuration, or 0. */
static int pick_learner(struct run_world *rw, struct run_lane *l)
{
    int ids[RUN_NODES_MAX], n = run_nodes(rw, ids, RUN_NODES_MAX), c[RUN_NODES_MAX], k = 0;
    for (int i = 0; i < n; i++)
        if (srv_cluster_is_learner(rw->cl, ids[i]) && !srv_cluster_is_removed(rw->cl, ids[i]))
            c[k++] = ids[i];
    return k ? c[below(l, (uint64_t)k)] : 0;
}

/* Half of the leader's removals happen while its messages to some of the others are
 * held (Jepsen's member nemesis with a one-way partition): all of them but a quorum of
 * the new configuration less one, so that the removal entry reaches exactly one member
 * fewer than the new configuration's quorum until the undo releases them (the shape
 * in which a leader must not count itself: thesis §4.2.2). nodes[0] is the leader,
 * nodes[1..] the members it cannot reach. */
static void hold_from_leader(struct run_world *rw, struct run_lane *l, int leader, const int *v,
                             int nv)
{
    int rest[RUN_NODES_MAX], nr = 0;
    for (int i = 0; i < nv; i++)
        if (v[i] != leader && !srv_cluster_is_removed(rw->cl, v[i]))
            rest[nr++] = v[i];
    int need = nr / 2 + 1; /* the new configuration's quorum */
    if (nr < 2)
        return;
    shuffle(l, rest, nr);
    l->nodes[0] = leader;
    l->n_nodes = 1;
    for (int i = need - 1; i < nr && l->n_nodes < (int)FL_ARRAY_LEN(l->nodes); i++) {
        run_hold(rw, leader, rest[i]);
        l->nodes[l->n_nodes++] = rest[i];
    }
}

/* The change a membership tick makes, by weight (out of 12): remove a follower 2,
 * remove the leader 2, add a voter 1, add a learner 3 (promoted by the undo half of
 * the time: learners stay, and elections happen with them in the configuration),
 * promote a learner 1 (else add one), replace 1, two changes at once 2 (during a
 * partition from 5 voters on). Above the initial number of voters a tick removes,
 * below it adds. */
enum { MEM_REMOVE, MEM_REMOVE_LEADER, MEM_ADD, MEM_LEARNER, MEM_PROMOTE, MEM_REPLACE, MEM_TWO };

static int membership_draw(struct run_lane *l, int nv, int base, bool can_add)
{
    static const int weights[] = {2, 2, 1, 3, 1, 1, 2};
    int x = (int)below(l, 12), kind = 0;
    while (x >= weights[kind])
        x -= weights[kind++];
    if (nv > base && kind <= MEM_REPLACE)
        return below(l, 2) ? MEM_REMOVE : MEM_REMOVE_LEADER;
    if (nv < base && can_add && kind <= MEM_REPLACE)
        return below(l, 2) ? MEM_ADD : MEM_LEARNER;
    return kind;
}

static void apply_membership(struct run_world *rw, struct run_lane *l)
{
    int v[RUN_NODES_MAX], nv = voters(rw, v), base = rw->ccfg.nodes ? rw->ccfg.nodes : 3;
    int leader = run_leader(rw);
    bool can_add = srv_cluster_slots(rw->cl) < SLOTS_ADD_MAX;
    int kind = membership_draw(l, nv, base, can_add);
    int learner = kind == MEM_PROMOTE ? pick_learner(rw, l) : 0;
    if (kind == MEM_PROMOTE && !learner)
        kind = MEM_LEARNER; /* no learner to promote: add one */
    l->n_nodes = 0;
    switch (kind) {
    case MEM_REMOVE: { /* remove a follower; the undo adds a fresh member in its place */
        int f = pick_follower(rw, l, leader);
        if (f && nv > 1) {
            run_member_remove(rw, f, NULL, NULL);
            l->undo = can_add ? UNDO_ADD : UNDO_NONE;
        }
        break;
    }
    case MEM_REMOVE_LEADER: /* etcd: commit counted without it, then it steps down */
        if (leader && nv > 1) {
            if (below(l, 2))
                hold_from_leader(rw, l, leader, v, nv);
            run_member_remove(rw, leader, NULL, NULL);
            l->undo = l->n_nodes ? UNDO_RELEASE_ADD : can_add ? UNDO_ADD : UNDO_NONE;
        }
        break;
    case MEM_ADD:
        if (can_add && nv >= 3)
            run_member_add(rw, false, NULL, NULL);
        break;
    case MEM_PROMOTE:
        run_member_promote(rw, learner, NULL, NULL);
        break;
    case MEM_LEARNER: /* a learner, promoted by the undo once caught up (or refused) */
        if (can_add) {
            l->undo = below(l, 2) ? UNDO_PROMOTE : UNDO_NONE;
            run_member_add(rw, true, mem_added, l);
        }
        break;
    case MEM_REPLACE: { /* remove now, add a fresh member at once */
        int f = pick_follower(rw, l, leader);
        if (f && nv > 1) {
            run_member_remove(rw, f, NULL, NULL);
            if (can_add)
                run_member_add(rw, false, NULL, NULL);
        }
        break;
    }
    default: { /* two changes at once: the second must be refused while the first is
                  uncommitted */
        if (nv >= 5 && leader && below(l, 2)) {
            apply_split_change(rw, l, leader, v, nv);
            break;
        }
        int f = pick_follower(rw, l, leader), g = pick_follower(rw, l, leader);
        if (f && nv > 2)
            run_member_remove(rw, f, NULL, NULL);
        if (g && g != f && nv > 3)
            run_member_remove(rw, g, NULL, NULL);
        else if (can_add && nv >= 3)
            run_member_add(rw, false, NULL, NULL);
        l->undo = can_add ? UNDO_ADD : UNDO_NONE;
        break;
    }
    }
}

static void apply_move_leader(struct run_world *rw, struct run_lane *l)
{
    int leader = run_leader(rw);
    int f = leader ? pick_follower(rw, l, leader) : 0;
    if (f && srv_cluster_is_alive(rw->cl, f))
        run_move_leader(rw, f, NULL, NULL);
}

/* The revision the slowest fixed watcher reached (RUN_WL_WATCH_REOPEN): compacting past
 * it would cancel it and hide the revisions in between for good, and with them where
 * writes of unknown outcome went (which only watch events may tell the checker). */
static int64_t watch_floor(const struct run_world *rw, int64_t rev)
{
    if (!(rw->wcfg.features & RUN_WL_WATCH_REOPEN))
        return rev;
    for (int i = 0; i < rw->wl.n_watchers; i++)
        rev = FL_MIN(rev, rw->wl.watcher_reached[i]);
    return rev;
}

static void apply_compact(struct run_world *rw, struct run_lane *l)
{
    /* etcd's robustness traffic: a revision in [current - 50, current + 5], so both
     * "compacted" and "future revision" answers happen */
    int64_t cur = rw->sum.last_commit_rev;
    int64_t rev = cur - 50 + (int64_t)below(l, 56);
    if (rev <= cur)
        rev = watch_floor(rw, rev);
    if (rev >= 1)
        run_compact(rw, rev, NULL, NULL);
}

static void apply_defrag(struct run_world *rw, struct run_lane *l)
{
    int ids[RUN_NODES_MAX], n = run_live_nodes(rw, ids);
    if (n)
        run_defrag(rw, ids[below(l, (uint64_t)n)], NULL, NULL);
}

/* NOSPACE recovery as etcd documents it: compact, defragment every member, disarm
 * (issued at once: the compaction and the defragmentations race, which a real operator
 * would not do on purpose but may well do by accident). */
static void apply_quota(struct run_world *rw)
{
    int64_t rev = watch_floor(rw, rw->sum.last_commit_rev);
    if (rev > 1)
        run_compact(rw, rev, NULL, NULL);
    int ids[RUN_NODES_MAX], n = run_live_nodes(rw, ids);
    for (int i = 0; i < n; i++)
        run_defrag(rw, ids[i], NULL, NULL);
    run_alarm_disarm(rw, NULL, NULL);
}

static void apply_snapshot(struct run_world *rw, struct run_lane *l)
{
    int ids[RUN_NODES_MAX], n = run_live_nodes(rw, ids);
    if (n)
        run_snapshot_save(rw, ids[below(l, (uint64_t)n)], NULL, NULL);
}

/* etcd's gofailSleepAndDeactivate: a "sleep" failpoint for one lane period. */
static void apply_slow(struct run_world *rw, struct run_lane *l)
{
    static const enum flt_point fps[] = {FLT_RAFT_BEFORE_SAVE, FLT_RAFT_BEFORE_SAVE,
                                         FLT_WATCH_BEFORE_SEND};
    int ids[RUN_NODES_MAX], n = run_nodes(rw, ids, RUN_NODES_MAX);
    if (n == 0)
        return;
    const char *name = flt_point_name(fps[below(l, FL_ARRAY_LEN(fps))]);
    int node = below(l, 4) == 0 ? 0 : ids[below(l, (uint64_t)n)];
    int delay = 20 + (int)below(l, 381);
    char err[160];
    if (run_failpoint(rw, name, node, "delay", 1000000, 0, delay, err, sizeof err) == FL_OK) {
        l->slow_name = name;
        l->nodes[0] = node;
        l->n_nodes = 1;
        l->undo = UNDO_FAILPOINT;
    }
}

/* The leader crashes at its next WAL save, once durable and before its messages leave:
 * repeated, it makes the leader changes of Raft's Figure 8 (entries of old terms on
 * some members only). */
static void apply_leader_crash(struct run_world *rw, struct run_lane *l)
{
    int leader = run_leader(rw);
    char err[160];
    if (leader && run_failpoint(rw, flt_point_name(FLT_RAFT_AFTER_SAVE), leader, "crash", 1000000,
                                1, 0, err, sizeof err) == FL_OK) {
        l->slow_name = flt_point_name(FLT_RAFT_AFTER_SAVE);
        l->nodes[0] = leader;
        l->n_nodes = 1;
        l->undo = UNDO_FAILPOINT;
    }
}

/* Leader churn (Raft's Figure 8 is made of it, and so is any divergence of logs):
 * the leader crashes at its next WAL save, its newest entries durable on it alone;
 * then the next one or two members to campaign crash at their next save too (a
 * winner's first entry, durable on it alone and never sent; a loser's term change).
 * Until the undo none of them comes back; the undo brings them back in a random order
 * (churn_restarts), so an old leader may return first and lead again with its old
 * entries beside the others' newer ones. Swarms draw it when swarm{} names it, or on
 * their own stream besides the drawn lanes (run_swarm.c draw_later). */
static void churn_arm(struct run_world *rw, struct run_lane *l, int node, int skip)
{
    char err[160];
    if (run_failpoint_skip(rw, flt_point_name(FLT_RAFT_AFTER_SAVE), node, "crash", 1000000, 1, skip,
                           0, err, sizeof err) != FL_OK)
        return;
    l->nodes[l->n_nodes++] = node;
}

struct churn_arm_arg {
    struct run_lane *l;
    int node;
};

static void churn_arm_fn(struct run_world *rw, void *arg)
{
    const struct churn_arm_arg *a = arg;
    churn_arm(rw, a->l, a->node, 0);
}

static void churn_disarm(struct run_world *rw, struct run_lane *l)
{
    if (l->churn_left > 0) {
        l->churn_left = 0;
        rw->hook.churn_armed--;
        run_hook_update(rw);
    }
}

static void apply_churn(struct run_world *rw, struct run_lane *l)
{
    int leader = run_leader(rw);
    if (!leader)
        return;
    /* How the leader goes: a quarter of the time it crashes at its next save; half of
     * the time its disk stalls first (etcd's raftBeforeSave sleep), proposals pile up
     * behind the stalled write, and the save it crashes after, the next one, holds all of
     * them; a quarter of the time it is cut off from its peers and stays up, taking
     * proposals in its minority until it steps down (check-quorum) or is healed. The
     * last two leave a long suffix of its term that no other member has. */
    uint64_t how = below(l, 4);
    bool stall = how >= 2;
    int delay_ms = 50 + (int)below(l, 251);
    l->churn_cut = how == 1;
    if (l->churn_cut) {
        run_isolate(rw, leader);
        l->nodes[l->n_nodes++] = leader;
    } else {
        churn_arm(rw, l, leader, stall ? 1 : 0);
    }
    if (!l->n_nodes)
        return;
    char err[160];
    if (stall && run_failpoint(rw, flt_point_name(FLT_RAFT_BEFORE_SAVE), leader, "delay", 1000000,
                               0, delay_ms, err, sizeof err) == FL_OK)
        l->slow_name = flt_point_name(FLT_RAFT_BEFORE_SAVE);
    l->undo = UNDO_CHURN;
    l->churn_left = 1 + (int)below(l, 2);
    rw->hook.churn_armed++;
    run_hook_update(rw);
}

void run_lanes_churn_event(struct run_world *rw, const struct srv_hook_event *ev)
{
    if (ev->kind != SRV_HOOK_TERM || !ev->reason || strcmp(ev->reason, "campaign"))
        return;
    for (int i = 0; i < rw->lanes.n; i++) {
        struct run_lane *l = &rw->lanes.l[i];
        bool known = false;
        for (int k = 0; k < l->n_nodes; k++)
            known = known || l->nodes[k] == ev->node;
        if (l->kind != RUN_LANE_CHURN || l->churn_left <= 0 || known || l->n_nodes >= RUN_NODES_MAX)
            continue;
        struct churn_arm_arg a = {l, ev->node};
        run_scope(rw, l->ordinal, RUN_SCOPE_LIVE, churn_arm_fn, &a);
        if (--l->churn_left == 0) {
            rw->hook.churn_armed--;
            run_hook_update(rw);
        }
        return; /* one lane per campaign */
    }
}

/* The churn's crashed members come back in a random order, each after a gap of one to
 * five election timeouts (stragglers: an old leader may lead again, and replicate, before
 * the members with newer entries are back); after a cut leader's heal, which counts as
 * its return, the first one waits such a gap too. */
static void churn_restarts(struct run_world *rw, struct run_lane *l, int *nodes, int n, bool cut)
{
    /* half the time the old leader (nodes[0], with the longest suffix of its term) is
     * back first: Figure 8's (c), it leads again beside a newer entry on a dead member */
    bool leader_first = below(l, 4) != 0;
    shuffle(l, nodes + (leader_first ? 1 : 0), n - (leader_first ? 1 : 0));
    uint64_t gap = (uint64_t)(4 * election_ns(rw)) + 1;
    int64_t at = cut ? election_ns(rw) + (int64_t)below(l, gap) : 0;
    for (int i = 0; i < n; i++) {
        if (i > 0)
            at += election_ns(rw) + (int64_t)below(l, gap);
        struct run_lane_later *lt = NULL;
        for (int k = 0; k < RUN_LANE_LATER_MAX && !lt && at > 0; k++)
            if (!l->later[k].h)
                lt = &l->later[k];
        if (!lt) {
            run_swarm_restart(rw, nodes[i]);
            continue;
        }
        *lt = (struct run_lane_later){l, 0, nodes[i], rw->ord.cur};
        lt->h = sim_schedule(rw->w, at, later_restart, lt);
    }
}

static void undo_churn(struct run_world *rw, struct run_lane *l)
{
    churn_disarm(rw, l);
    bool cut = l->churn_cut;
    if (cut)
        run_heal(rw);
    l->churn_cut = false;
    int dead[RUN_NODES_MAX], nd = 0;
    char err[160];
    if (l->slow_name && l->n_nodes && run_node_exists(rw, l->nodes[0]))
        run_failpoint(rw, l->slow_name, l->nodes[0], "off", 0, 0, 0, err, sizeof err);
    l->slow_name = NULL;
    for (int i = 0; i < l->n_nodes; i++) {
        if (!run_node_exists(rw, l->nodes[i]))
            continue;
        run_failpoint(rw, flt_point_name(FLT_RAFT_AFTER_SAVE), l->nodes[i], "off", 0, 0, 0, err,
                      sizeof err);
        if (!srv_cluster_is_alive(rw->cl, l->nodes[i]))
            dead[nd++] = l->nodes[i];
    }
    churn_restarts(rw, l, dead, nd, cut);
}

/* A follower falls behind and catches up from the leader's snapshot while its watch
 * streams are starved (the shape of etcd#17529, #8411 and #20221): in stage 1 its
 * watch/before_send failpoint holds every send, so responses queue up in its store,
 * until more revisions than etcd's stream buffer holds (128) were written or
 * stage_ns[0] is over, and the cluster compacts once meanwhile (its watchers whose
 * buffers filled are victims behind it); in stage 2 it is cut off while the others write,
 * compact and take snapshots; in stage 3 it is healed and installs the leader's
 * snapshot with its streams still starved; then the failpoint is off. The stages run
 * under the apply's ordinal; past the fault phase's end the cut is skipped. */
#define LAG_POLL_NS (200 * FL_MS)
#define LAG_REVS    250 /* revisions written while starved: more than a stream's buffer */

static void lag_stage(struct sim_world *w, void *ctx);

/* One stage step, in the apply's scope: the stages and their timers go on when shrinking
 * dropped it (go false), without their faults. */
static void lag_stage_fn(struct run_world *rw, void *arg)
{
    struct run_lane *l = arg;
    bool over = rw->lanes.until_ns && sim_now_ns(rw->w) >= rw->lanes.until_ns;
    bool go = !rw->ord.cur_skipped;
    char err[160];
    int64_t waited = sim_now_ns(rw->w) - l->stage_ns[0] + LAG_POLL_NS;
    int64_t revs = rw->sum.last_commit_rev - l->stage_rev;
    bool wait = revs < LAG_REVS && waited < 0;
    if ((l->stage == 1 || l->stage == 2) && !l->stage_compacted && revs >= LAG_REVS / 3) {
        /* stage 1: a compaction while its streams are starved, as in etcd's own
         * Issue17529 regression (a sleep before each watch send, compactions): watchers
         * whose buffers filled are victims, unsynced, and now behind it. Stage 2: the
         * others compact past what it has, early enough that their next snapshots hold
         * the compaction: its watchers come back behind it (the others' watchers, not
         * starved, saw every revision) */
        if (go)
            run_compact(rw, rw->sum.last_commit_rev - 5, NULL, NULL);
        l->stage_compacted = true;
    }
    if (wait && (l->stage == 2 || (l->stage == 1 && !over))) {
        l->stage_timer = sim_schedule(rw->w, LAG_POLL_NS, lag_stage, l);
        return;
    }
    if (l->stage == 1 && !over) {
        if (go)
            run_isolate(rw, l->nodes[0]);
        l->stage = 2;
        l->stage_compacted = false;
        l->stage_rev = rw->sum.last_commit_rev;
        l->stage_ns[0] = sim_now_ns(rw->w) + l->stage_ns[1];
        l->stage_timer = sim_schedule(rw->w, LAG_POLL_NS, lag_stage, l);
        return;
    } else if (l->stage == 2) {
        if (go)
            run_heal(rw);
        l->stage = 3;
    } else {
        if (go)
            run_failpoint(rw, flt_point_name(FLT_WATCH_BEFORE_SEND), l->nodes[0], "off", 0, 0, 0,
                          err, sizeof err);
        l->stage = 0;
    }
    if (l->stage)
        l->stage_timer = sim_schedule(rw->w, l->stage_ns[l->stage - 1], lag_stage, l);
}

static void lag_stage(struct sim_world *w, void *ctx)
{
    (void)w;
    struct run_lane *l = ctx;
    l->stage_timer = 0;
    run_scope(l->rw, l->stage_ordinal, RUN_SCOPE_ALWAYS, lag_stage_fn, l);
}

/* A follower some client's latest stream went to (its watches live there), drawn
 * among them; else any follower. */
static int pick_stream_follower(struct run_world *rw, struct run_lane *l, int leader)
{
    int c[RUN_BALANCERS_MAX], k = 0;
    struct kvc_stats st;
    for (int i = 0; i < rw->n_clients; i++) {
        if (!rw->clients[i].c || rw->clients[i].closed)
            continue;
        kvc_client_stats(rw->clients[i].c, &st);
        int n = st.last_stream_node;
        if (n > 0 && n != leader && srv_cluster_is_alive(rw->cl, n) &&
            !srv_cluster_is_removed(rw->cl, n) && k < RUN_BALANCERS_MAX)
            c[k++] = n;
    }
    return k ? c[below(l, (uint64_t)k)] : pick_follower(rw, l, leader);
}

static void apply_lag(struct run_world *rw, struct run_lane *l)
{
    int leader = run_leader(rw);
    int f = leader ? pick_stream_follower(rw, l, leader) : 0;
    int delay = 200 + (int)below(l, 201);
    char err[160];
    if (l->stage || !f || !srv_cluster_is_alive(rw->cl, f) ||
        run_failpoint(rw, flt_point_name(FLT_WATCH_BEFORE_SEND), f, "delay", 1000000, 0, delay, err,
                      sizeof err))
        return; /* the last one still runs, or nobody to starve */
    l->nodes[0] = f;
    l->stage = 1;
    l->stage_compacted = false;
    l->stage_ordinal = rw->ord.cur;
    l->stage_rev = rw->sum.last_commit_rev;
    /* stage 1 ends by this time at the latest (an absolute time: it polls) */
    l->stage_ns[0] = sim_now_ns(rw->w) + (2500 + (int64_t)below(l, 2001)) * FL_MS;
    l->stage_ns[1] = (4000 + (int64_t)below(l, 2001)) * FL_MS;
    l->stage_ns[2] = (1000 + (int64_t)below(l, 2001)) * FL_MS;
    l->stage_timer = sim_schedule(rw->w, LAG_POLL_NS, lag_stage, l);
}

static void lane_apply(struct run_world *rw, struct run_lane *l)
{
    l->undo = UNDO_NONE;
    l->n_nodes = 0;
    switch (l->kind) {
    case RUN_LANE_PARTITION:
        run_partition_shape(rw, &l->rng);
        l->undo = UNDO_HEAL;
        break;
    case RUN_LANE_KILL:
        apply_kill(rw, l, false);
        break;
    case RUN_LANE_POWER:
        apply_kill(rw, l, true);
        break;
    case RUN_LANE_PAUSE:
        apply_pause(rw, l);
        break;
    case RUN_LANE_SKEW:
        apply_skew(rw, l);
        break;
    case RUN_LANE_NET:
        apply_net(rw, l);
        break;
    case RUN_LANE_HOLD:
        apply_hold(rw, l);
        break;
    case RUN_LANE_MEMBERSHIP:
        apply_membership(rw, l);
        break;
    case RUN_LANE_MOVE_LEADER:
        apply_move_leader(rw, l);
        break;
    case RUN_LANE_COMPACT:
        apply_compact(rw, l);
        break;
    case RUN_LANE_DEFRAG:
        apply_defrag(rw, l);
        break;
    case RUN_LANE_QUOTA:
        apply_quota(rw);
        break;
    case RUN_LANE_SNAPSHOT:
        apply_snapshot(rw, l);
        break;
    case RUN_LANE_SLOW:
        apply_slow(rw, l);
        break;
    case RUN_LANE_LEADER_CRASH:
        apply_leader_crash(rw, l);
        break;
    case RUN_LANE_LAG:
        apply_lag(rw, l);
        break;
    case RUN_LANE_CHURN:
        apply_churn(rw, l);
        break;
    default:
        break;
    }
}

static void lane_undo(struct run_world *rw, struct run_lane *l)
{
    switch (l->undo) {
    case UNDO_HEAL:
        run_heal(rw);
        break;
    case UNDO_RESTART:
        restart_staggered(rw, l, l->nodes, l->n_nodes);
        break;
    case UNDO_RESUME:
        for (int i = 0; i < l->n_nodes; i++)
            run_resume(rw, l->nodes[i]);
        break;
    case UNDO_UNSKEW:
        run_skew(rw, l->nodes[0], SIM_PPM);
        break;
    case UNDO_NET:
        run_net(rw, 0, 0, 0);
        break;
    case UNDO_RELEASE:
        run_release(rw, l->nodes[0], l->nodes[1]);
        break;
    case UNDO_ADD:
        if (srv_cluster_slots(rw->cl) < SLOTS_ADD_MAX)
            run_member_add(rw, false, NULL, NULL);
        break;
    case UNDO_RELEASE_ADD:
        for (int i = 1; i < l->n_nodes; i++)
            run_release(rw, l->nodes[0], l->nodes[i]);
        if (srv_cluster_slots(rw->cl) < SLOTS_ADD_MAX)
            run_member_add(rw, false, NULL, NULL);
        break;
    case UNDO_HEAL_ADD:
        run_release(rw, l->nodes[0], l->nodes[1]);
        run_heal(rw);
        if (srv_cluster_slots(rw->cl) < SLOTS_ADD_MAX)
            run_member_add(rw, false, NULL, NULL);
        break;
    case UNDO_PROMOTE:
        if (l->n_nodes == 1 && run_node_exists(rw, l->nodes[0]))
            run_member_promote(rw, l->nodes[0], NULL, NULL);
        break;
    case UNDO_CHURN:
        undo_churn(rw, l);
        break;
    case UNDO_FAILPOINT: {
        char err[160];
        run_failpoint(rw, l->slow_name, l->nodes[0], "off", 0, 0, 0, err, sizeof err);
        break;
    }
    default:
        break;
    }
    l->undo = UNDO_NONE;
    l->n_nodes = 0;
}

/* The undo runs in the lane's scope whether or not shrinking dropped its apply (its
 * bookkeeping goes on); in a dropped scope its faults do nothing. */
static void lane_undo_fn(struct run_world *rw, void *arg)
{
    lane_undo(rw, arg);
}

/* --- ticks ---------------------------------------------------------------------------------- */

/* Is node a member some lane killed and will restart itself? */
static bool held_by_lane(struct run_world *rw, int node)
{
    for (int i = 0; i < rw->lanes.n; i++) {
        const struct run_lane *l = &rw->lanes.l[i];
        if ((l->undo == UNDO_RESTART || l->undo == UNDO_CHURN) && l->undo_next)
            for (int j = 0; j < l->n_nodes; j++)
                if (l->nodes[j] == node)
                    return true;
        for (int k = 0; k < RUN_LANE_LATER_MAX; k++)
            if (l->later[k].h && l->later[k].node == node)
                return true;
    }
    return false;
}

/* The doctor: a member that a crash failpoint killed (no lane holds it down, and no
 * trigger's restart is pending for it) comes back. */
static void doctor(struct run_world *rw)
{
    int ids[RUN_NODES_MAX], n = run_nodes(rw, ids, RUN_NODES_MAX);
    for (int i = 0; i < n; i++)
        if (!srv_cluster_is_alive(rw->cl, ids[i]) && !held_by_lane(rw, ids[i]) &&
            !run_trigger_holds(rw, ids[i]))
            run_swarm_restart(rw, ids[i]);
}

static void doctor_fn(struct run_world *rw, void *arg)
{
    (void)arg;
    doctor(rw);
}

static void lane_apply_fn(struct run_world *rw, void *arg)
{
    lane_apply(rw, arg);
}

static void lane_tick(struct sim_world *w, void *ctx)
{
    (void)w;
    struct run_lane *l = ctx;
    struct run_world *rw = l->rw;
    l->timer = 0;
    bool undo = l->undo_next;
    bool over = rw->lanes.until_ns && sim_now_ns(rw->w) >= rw->lanes.until_ns;
    if (!undo && over)
        return; /* past its duration and nothing to undo: done */
    char name[48];
    snprintf(name, sizeof name, "fault/%s/%lld", l->kind ? run_lane_name(l->kind) : "doctor",
             (long long)++l->tick);
    sim_rng_derive(&l->rng, run_fault_seed(rw), name);
    int64_t gap = l->every_ns / 2 + (int64_t)below(l, (uint64_t)l->every_ns + 1);
    if (!l->kind) { /* the doctor: no undo slots */
        run_fault_apply(rw, rw->lanes.dry ? NULL : doctor_fn, NULL, NULL);
    } else if (undo) {
        l->undo_next = false;
        if (l->undo)
            run_scope(rw, l->ordinal, RUN_SCOPE_ALWAYS, lane_undo_fn, l);
    } else {
        l->undo_next = true;
        l->undo = UNDO_NONE;
        run_fault_apply(rw, rw->lanes.dry ? NULL : lane_apply_fn, l, &l->ordinal);
    }
    l->timer = sim_schedule(rw->w, gap, lane_tick, l);
}

static int64_t scaled(int64_t d, int pct)
{
    return pct == 100 ? d : FL_MAX(FL_MS, d / 100 * pct + d % 100 * pct / 100);
}

/* Starts one lane: its first tick at a drawn offset, so lanes do not tick together. */
static void lane_start(struct run_world *rw, unsigned kind, int64_t every_ns)
{
    FL_ASSERT(rw->lanes.n < RUN_LANE_COUNT + 1);
    struct run_lane *l = &rw->lanes.l[rw->lanes.n++];
    memset(l, 0, sizeof *l);
    l->rw = rw;
    l->kind = kind;
    l->every_ns = every_ns;
    char name[48];
    snprintf(name, sizeof name, "fault/%s/start", kind ? run_lane_name(kind) : "doctor");
    sim_rng_derive(&l->rng, run_fault_seed(rw), name);
    int64_t first = (int64_t)below(l, (uint64_t)every_ns) + 1;
    l->timer = sim_schedule(rw->w, first, lane_tick, l);
}

void run_lanes_start(struct run_world *rw, int scale_pct)
{
    run_lanes_stop(rw);
    for (int i = 0; i < RUN_LANE_COUNT; i++)
        if (rw->swarm.lanes & (1u << i))
            lane_start(rw, 1u << i, scaled(rw->swarm.lane_every_ns[i], scale_pct));
    lane_start(rw, 0, scaled(DOCTOR_EVERY_NS, scale_pct));
}

void run_lanes_stop(struct run_world *rw)
{
    for (int i = 0; i < rw->lanes.n; i++) {
        struct run_lane *l = &rw->lanes.l[i];
        if (l->timer)
            sim_cancel(rw->w, l->timer);
        for (int k = 0; k < RUN_LANE_LATER_MAX; k++)
            if (l->later[k].h)
                sim_cancel(rw->w, l->later[k].h);
        if (l->stage_timer)
            sim_cancel(rw->w, l->stage_timer);
        churn_disarm(rw, l);
        memset(l, 0, sizeof *l);
    }
    rw->lanes.n = 0;
    rw->lanes.until_ns = 0;
    rw->lanes.dry = false;
    run_restore_stop(rw); /* the restore flow ends with the fault phase */
}
