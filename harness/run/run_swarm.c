/*
 * run_swarm.c: swarm testing (simulation-anchors §1.2 and §2: TigerBeetle's VOPR draws
 * every knob from the seed, FoundationDB's BUGGIFY turns fault sites on per run). Each
 * seed draws its own world: the cluster's shape and knobs, the clients and their
 * balancers, the workload and its features, which fault lanes run and how often,
 * which failpoints are on and which faults fire on node events.
 *
 * Every aspect draws from a stream of its own ("swarm/cluster", "swarm/clients",
 * "swarm/workload", "swarm/faults", "swarm/buggify", "swarm/triggers"), derived from
 * (seed, name) only, so leaving an aspect out never moves another's draws and a seed
 * replays exactly. Draws use integers only (DESIGN §6). What was drawn is one JSON
 * object: the first `faults` row of the run (kind "swarm"), so reports show it, and
 * the --json summary's "swarm".
 *
 * The ranges are chosen so that each run stays short and every mechanism happens in
 * it: snapshots every 20-500 entries, compaction within seconds, small quotas that
 * fill up, election timeouts of 0.3-2 s, fsyncs slow enough to leave windows open.
 * Never: a wall clock, an unseeded draw, a float.
 */
#include "harness/run/run_int.h"

static const char *const lane_names[RUN_LANE_COUNT] = {
    "partition", "kill",       "power",        "pause",   "skew",   "net",
    "hold",      "membership", "move_leader",  "compact", "defrag", "quota",
    "snapshot",  "slow",       "leader_crash", "lag",     "churn",
};

unsigned run_lane_find(const char *name)
{
    for (int i = 0; i < RUN_LANE_COUNT; i++)
        if (!strcmp(lane_names[i], name))
            return 1u << i;
    return !strcmp(name, "restore") ? RUN_LANE_RESTORE : 0;
}

const char *run_lane_name(unsigned bit)
{
    for (int i = 0; i < RUN_LANE_COUNT; i++)
        if (bit == 1u << i)
            return lane_names[i];
    return bit == RUN_LANE_RESTORE ? "restore" : "?";
}

bool run_swarm_active(const struct run_world *rw, unsigned aspect)
{
    return rw->swarm.drawn && (rw->swarm.aspects & aspect);
}

/* --- draw helpers ------------------------------------------------------------------ */

static int64_t pick(struct sim_rng *r, const int64_t *v, size_t n)
{
    return v[sim_rng_below(r, n)];
}
#define PICK(r, ...)                                                                               \
    pick((r), (const int64_t[]){__VA_ARGS__},                                                      \
         sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t))

static bool chance(struct sim_rng *r, int pct)
{
    return sim_rng_chance_ppm(r, (uint32_t)pct * 10000u);
}

/* --- the cluster --------------------------------------------------------------------- */

static int draw_size(struct sim_rng *r, const struct run_swarm_options *o)
{
    if (o->n_sizes > 0)
        return o->sizes[sim_rng_below(r, (uint64_t)o->n_sizes)];
    /* 1, 3, 5, 7 weighted 1:4:3:2: most runs have a quorum to lose and keep it cheap */
    static const int sizes[] = {1, 3, 3, 3, 3, 5, 5, 5, 7, 7};
    return sizes[sim_rng_below(r, FL_ARRAY_LEN(sizes))];
}

static void draw_cluster(struct run_world *rw, const struct run_swarm_options *o,
                         struct run_cluster_config *c, json_t *j)
{
    struct sim_rng r;
    sim_rng_derive(&r, rw->seed, "swarm/cluster");
    c->nodes = draw_size(&r, o);
    c->prevote = chance(&r, 75);
    c->check_quorum = chance(&r, 75);
    c->heartbeat_ms = (int)PICK(&r, 50, 100, 100, 150);
    c->election_ms = c->heartbeat_ms * (int)sim_rng_range(&r, 6, 15);
    c->snapshot_count = (int)PICK(&r, 20, 50, 100, 500, 100000);
    c->snapshot_catchup = (int)PICK(&r, 5, 10, 50, 100, 5000);
    int mode = (int)PICK(&r, 0, 0, 2, 2, 1);
    c->auto_compaction_mode = mode;
    /* periodic retention of seconds: a watcher cut off for longer is compacted away */
    c->auto_compaction_retention = mode == 2 ? PICK(&r, 2000, 3000, 5000)
                                   : mode    ? PICK(&r, 10, 100)
                                             : 0;
    c->quota_bytes = chance(&r, 20) ? PICK(&r, 48, 64, 96) * 1024 : 0;
    c->fsync_us = PICK(&r, 100, 1000, 1000, 5000, 20000);
    c->net_latency_us = (int)PICK(&r, 100, 500, 500, 2000);
    c->net_jitter_us = (int)PICK(&r, 0, 500, 2000);
    c->max_msg_bytes = chance(&r, 25) ? 256 : 0; /* one entry per message: probes split */
    c->progress_notify_ms = (int)PICK(&r, 0, 100, 500, 2000);
    /* etcd's strict reconfiguration check off: membership changes in the middle of the
     * faults (with it on, an add needs every voter connected for 5 s, which the fault
     * lanes rarely leave) */
    c->loose_reconfig = chance(&r, 50);
    /* slow disks: some members fsync 10x slower */
    struct run_swarm *sw = &rw->swarm;
    sw->n_fsync = c->nodes;
    json_t *slow = json_array();
    for (int i = 0; i < c->nodes && i < RUN_NODES_MAX; i++) {
        sw->fsync_ns[i] = chance(&r, 20) ? c->fsync_us * 10 * FL_US : 0;
        if (sw->fsync_ns[i])
            json_array_append_new(slow, json_integer(i + 1));
    }
    json_t *o_ = json_object();
    json_object_set_new(o_, "nodes", json_integer(c->nodes));
    json_object_set_new(o_, "prevote", json_boolean(c->prevote));
    json_object_set_new(o_, "check_quorum", json_boolean(c->check_quorum));
    json_object_set_new(o_, "heartbeat_ms", json_integer(c->heartbeat_ms));
    json_object_set_new(o_, "election_ms", json_integer(c->election_ms));
    json_object_set_new(o_, "snapshot_count", json_integer(c->snapshot_count));
    json_object_set_new(o_, "snapshot_catchup", json_integer(c->snapshot_catchup));
    json_object_set_new(o_, "auto_compaction_mode",
                        json_string(mode == 2 ? "periodic"
                                    : mode    ? "revision"
                                              : "none"));
    json_object_set_new(o_, "auto_compaction_retention",
                        json_integer(c->auto_compaction_retention));
    json_object_set_new(o_, "quota_bytes", json_integer(c->quota_bytes));
    json_object_set_new(o_, "fsync_us", json_integer(c->fsync_us));
    json_object_set_new(o_, "slow_disks", slow);
    json_object_set_new(o_, "latency_us", json_integer(c->net_latency_us));
    json_object_set_new(o_, "jitter_us", json_integer(c->net_jitter_us));
    json_object_set_new(o_, "max_msg_bytes", json_integer(c->max_msg_bytes));
    json_object_set_new(o_, "progress_notify_ms", json_integer(c->progress_notify_ms));
    json_object_set_new(o_, "strict_reconfig_check", json_boolean(!c->loose_reconfig));
    /* a watch stream's buffer (etcd's chanBufLen, 128, which etcd's own watch tests set
     * as low as 1): a starved stream fills a small one within the fault phase, and its
     * watchers become victims that catch up as unsynced ones (drawn last: the draws
     * before it keep their values) */
    c->watch_buffer = (int)PICK(&r, 128, 128, 32, 8);
    json_object_set_new(o_, "watch_buffer", json_integer(c->watch_buffer));
    json_object_set_new(j, "cluster", o_);
}

/* --- clients and workload ------------------------------------------------------------- */

static const char *const balancers[] = {"pinned_random", "pinned_blacklist", "round_robin",
                                        "health_aware"};

static void draw_clients(struct run_world *rw, struct run_clients_config *k, json_t *j)
{
    struct sim_rng r;
    sim_rng_derive(&r, rw->seed, "swarm/clients");
    int n = (int)sim_rng_range(&r, 1, 8);
    k->count = n;
    k->n_balancers = n;
    k->timeout_ms = (int)PICK(&r, 1000, 2000, 3000);
    json_t *b = json_array();
    for (int i = 0; i < n; i++) {
        const char *name = balancers[sim_rng_below(&r, FL_ARRAY_LEN(balancers))];
        snprintf(k->balancers[i], RUN_BALANCER_NAME_MAX, "%s", name);
        json_array_append_new(b, json_string(name));
    }
    json_t *o = json_object();
    json_object_set_new(o, "count", json_integer(n));
    json_object_set_new(o, "timeout_ms", json_integer(k->timeout_ms));
    json_object_set_new(o, "balancers", b);
    json_object_set_new(j, "clients", o);
}

static void draw_workload(struct run_world *rw, struct run_workload_config *w, json_t *j)
{
    struct sim_rng r;
    sim_rng_derive(&r, rw->seed, "swarm/workload");
    w->rate = (int)PICK(&r, 20, 50, 100, 100, 200);
    w->keys = (int)PICK(&r, 2, 5, 10, 30);
    w->value_size = (int)PICK(&r, 16, 16, 64, 200);
    /* at least one watch over every key: as etcd's robustness collectors do, its events
     * settle where the writes of unknown outcome went, which the checker needs */
    w->watchers = (int)sim_rng_range(&r, 1, 4);
    /* etcd's traffic profiles: put-heavy, put/delete, read-heavy, and anything between */
    w->mix_put = (int)sim_rng_range(&r, 1, 10);
    w->mix_get = (int)sim_rng_range(&r, 0, 10);
    w->mix_delete = (int)sim_rng_range(&r, 0, 6);
    w->mix_txn = (int)sim_rng_range(&r, 0, 4);
    w->mix_range = (int)sim_rng_range(&r, 0, 3);
    w->features = RUN_WL_WATCH_REOPEN;
    static const unsigned feats[] = {RUN_WL_LEASES, RUN_WL_WATCH_CHURN, RUN_WL_MULTI_TXN,
                                     RUN_WL_READ_MORE};
    for (size_t i = 0; i < FL_ARRAY_LEN(feats); i++)
        if (chance(&r, 60))
            w->features |= feats[i];
    w->mix_lease = w->features & RUN_WL_LEASES ? (int)sim_rng_range(&r, 1, 4) : 0;
    w->lease_ttl_s = (int)PICK(&r, 2, 3, 5);
    w->watch_every_ms = (int)PICK(&r, 300, 1000, 3000);
    json_t *o = json_object();
    json_object_set_new(o, "rate", json_integer(w->rate));
    json_object_set_new(o, "keys", json_integer(w->keys));
    json_object_set_new(o, "value_size", json_integer(w->value_size));
    json_object_set_new(o, "watchers", json_integer(w->watchers));
    json_t *mix = json_object();
    json_object_set_new(mix, "put", json_integer(w->mix_put));
    json_object_set_new(mix, "get", json_integer(w->mix_get));
    json_object_set_new(mix, "delete", json_integer(w->mix_delete));
    json_object_set_new(mix, "txn", json_integer(w->mix_txn));
    json_object_set_new(mix, "range", json_integer(w->mix_range));
    json_object_set_new(mix, "lease", json_integer(w->mix_lease));
    json_object_set_new(o, "mix", mix);
    json_t *f = json_array();
    static const char *const fnames[] = {"leases", "watch_churn", "multi_txn", "read_more"};
    for (size_t i = 0; i < FL_ARRAY_LEN(feats); i++)
        if (w->features & feats[i])
            json_array_append_new(f, json_string(fnames[i]));
    json_object_set_new(o, "features", f);
    json_object_set_new(o, "lease_ttl_s", json_integer(w->lease_ttl_s));
    json_object_set_new(o, "watch_every_ms", json_integer(w->watch_every_ms));
    json_object_set_new(j, "workload", o);
}

/* --- faults, failpoints, triggers ------------------------------------------------------ */

/* Mean gap between two ticks of each lane, in ms, to draw from (lane order). */
static const int64_t lane_periods[RUN_LANE_COUNT][3] = {
    {1000, 2000, 4000}, /* partition */
    {1000, 2000, 4000}, /* kill */
    {3000, 5000, 8000}, /* power */
    {1000, 2000, 4000}, /* pause */
    {1000, 2000, 4000}, /* skew */
    {1000, 2000, 4000}, /* net */
    {500, 1000, 3000},  /* hold */
    {1000, 1500, 3000}, /* membership */
    {1000, 2000, 5000}, /* move_leader */
    {300, 1000, 3000},  /* compact */
    {1000, 3000, 6000}, /* defrag */
    {1000, 2000, 4000}, /* quota */
    {2000, 4000, 8000}, /* snapshot */
    {1000, 2000, 4000}, /* slow */
    {1000, 2000, 4000}, /* leader_crash */
    {2000, 3000, 4000}, /* lag */
    {3000, 5000, 8000}, /* churn (its undo restarts: a chain takes a few elections) */
};

static void draw_faults(struct run_world *rw, const struct run_swarm_options *o, bool small_quota,
                        json_t *j)
{
    struct sim_rng r;
    sim_rng_derive(&r, run_fault_seed(rw), "swarm/faults");
    unsigned allowed = o->lanes ? o->lanes : RUN_LANE_DEFAULT;
    struct run_swarm *sw = &rw->swarm;
    sw->lanes = 0;
    json_t *lanes = json_object();
    for (int i = 0; i < RUN_LANE_COUNT; i++) {
        unsigned bit = 1u << i;
        bool on = chance(&r, 35); /* drawn for every lane, allowed or not: stable draws */
        int64_t every = lane_periods[i][sim_rng_below(&r, 3)];
        if (bit == RUN_LANE_QUOTA && small_quota)
            on = true; /* a quota that fills up needs its recovery */
        if (!(allowed & bit) || !on)
            continue;
        sw->lanes |= bit;
        sw->lane_every_ns[i] = every * FL_MS;
        json_object_set_new(lanes, lane_names[i], json_integer(every));
    }
    if (!sw->lanes) {
        /* at least one lane: the first allowed one the stream points at */
        int start = (int)sim_rng_below(&r, RUN_LANE_COUNT);
        for (int k = 0; k < RUN_LANE_COUNT && !sw->lanes; k++) {
            int i = (start + k) % RUN_LANE_COUNT;
            if (allowed & (1u << i)) {
                sw->lanes = 1u << i;
                sw->lane_every_ns[i] = lane_periods[i][1] * FL_MS;
                json_object_set_new(lanes, lane_names[i], json_integer(lane_periods[i][1]));
            }
        }
    }
    json_object_set_new(j, "lanes_every_ms", lanes);
}

/* Draws that came after the others, each from a stream of its own, so that a seed that
 * does not draw them draws exactly what it drew before (and the others' seeds keep their
 * worlds):
 *
 * - "swarm/churn": on CHURN_PCT % of the seeds of a swarm{} that names no lanes, the
 *   leader-churn lane runs besides the lanes drawn (a scenario that names lanes draws
 *   churn like any other lane, when it names it), every 2-4 election timeouts, and the
 *   cluster sends small messages (max_msg_bytes 256, said in the swarm object's
 *   "churn", not in its "cluster"): an old leader back in power sends
 *   its old-term suffix ahead of its new-term entry, not with it (Figure 8's (c);
 *   raft.commit_old_term). Not on worlds with the membership lane: those keep their
 *   runs, in which the switches of configuration changes are found (chaos seed 91 is
 *   raft.multiple_conf_changes' one seed in 1..200; with churn it was found on none).
 * - "swarm/promote": on PROMOTE_PCT % of the seeds whose membership changes are allowed,
 *   the summary's "promote_outage" asks the scenario (chaos.lua, after its fault phase)
 *   to promote a learner whose promotion the leader cannot send it, and to let the
 *   leader die then: the members left need the promoted member's vote, which it must
 *   give although it has not seen its promotion (etcd#10998).
 * - "swarm/lagadd" and "swarm/lag": see draw_lag_add and draw_lag_focus.
 * - "swarm/split": on SPLIT_PCT % of the seeds whose membership changes are allowed,
 *   the summary's "split_change" asks the scenario (chaos.lua, after its failover check)
 *   for two configuration changes at once across a partition: with 5 voters or more,
 *   the leader and one follower are cut off from the rest, the follower's answers to
 *   the leader held, and the leader asked to remove all of the rest but one at once;
 *   the answers come back while the sides are still apart. The membership lane makes
 *   that shape too (apply_split_change), but on 7 seeds of 1..200 only, among other
 *   faults, and with its release and heal at once: raft.multiple_conf_changes was found
 *   on 1 seed (91, by liveness). With the episode on every seed, 97 of 200 failed
 *   raft_safety with the switch and all 200 passed without it. */
#define CHURN_PCT   40
#define PROMOTE_PCT 10
#define SPLIT_PCT   10

static unsigned seed_world(struct run_world *rw, const struct run_swarm_options *o,
                           struct run_cluster_config *c);

/* "swarm/lag": on LAG_PCT % of the worlds of a swarm{} that names no lanes, whose lanes
 * include lag and whose cluster has 3 members or more, the lagging follower's episode is
 * given room to happen (etcd#17529, #20221; a member that lags, is cut off and catches
 * up by the leader's snapshot while its watch streams are starved). Measured on chaos
 * seeds 1..200 with mvcc.watch_compacted_lost: the situation (a watcher behind the
 * compaction with a full stream) arose on 8 seeds of the 68 with the lag lane; the
 * episode rarely reached its snapshot because other lanes killed, paused or cut off the
 * lagging member, or every member, first, and at 20 ops/s of mostly reads its stages
 * ended before a buffer's worth of revisions or a compaction (restore_lowers_future_watch
 * arose on 5 seeds and failed on 1). So:
 * - the lanes that kill, pause, cut off or remove members are off (LAG_QUIET_OFF; the
 *   seed's other lanes, failpoints and triggers stay), in "lanes_every_ms" too;
 * - with the cluster and workload drawn: watch streams of etcd's smallest tested buffer
 *   (8); watches churn every 300 ms, so that some open on the lagging member from a
 *   revision it has not reached; a snapshot every 200 entries with at most 20 retained,
 *   so that it catches up by one; 200 ops/s with at least as many puts as gets. Said in
 *   the swarm object's "lag" (its "cluster" and "workload" stay as their streams drew
 *   them, as a cluster drawn alone draws it). */
#define LAG_PCT    100
#define LAGADD_PCT 25
#define LAG_IX     15 /* RUN_LANE_LAG is 1u << LAG_IX */
_Static_assert(RUN_LANE_LAG == 1u << LAG_IX, "the lag lane's index");
#define LAG_QUIET_OFF                                                                              \
    (RUN_LANE_PARTITION | RUN_LANE_KILL | RUN_LANE_POWER | RUN_LANE_PAUSE | RUN_LANE_MEMBERSHIP |  \
     RUN_LANE_LEADER_CRASH | RUN_LANE_CHURN)

static void draw_lag_focus(struct run_world *rw, const struct run_swarm_options *o,
                           const struct run_cluster_config *seen, json_t *j)
{
    struct run_swarm *sw = &rw->swarm;
    struct sim_rng r;
    sim_rng_derive(&r, run_fault_seed(rw), "swarm/lag");
    if (!chance(&r, LAG_PCT) || o->lanes || !(sw->lanes & RUN_LANE_LAG) || seen->nodes < 3)
        return;
    json_t *lanes = json_object_get(j, "lanes_every_ms");
    for (int i = 0; i < RUN_LANE_COUNT; i++) {
        if (!((1u << i) & LAG_QUIET_OFF) || !(sw->lanes & (1u << i)))
            continue;
        sw->lanes &= ~(1u << i);
        if (lanes)
            json_object_del(lanes, lane_names[i]);
    }
    unsigned need = RUN_SWARM_CLUSTER | RUN_SWARM_WORKLOAD;
    if ((sw->aspects & need) != need)
        return;
    sw->cluster.watch_buffer = 8;
    sw->cluster.snapshot_count = 200;
    sw->cluster.snapshot_catchup = FL_MIN(sw->cluster.snapshot_catchup, 20);
    sw->workload.features |= RUN_WL_WATCH_CHURN;
    sw->workload.watch_every_ms = 300;
    sw->workload.rate = 200;
    sw->workload.mix_put = FL_MAX(sw->workload.mix_put, sw->workload.mix_get);
    json_t *f = json_object();
    json_object_set_new(f, "watch_buffer", json_integer(sw->cluster.watch_buffer));
    json_object_set_new(f, "snapshot_count", json_integer(sw->cluster.snapshot_count));
    json_object_set_new(f, "snapshot_catchup", json_integer(sw->cluster.snapshot_catchup));
    json_object_set_new(f, "watch_every_ms", json_integer(sw->workload.watch_every_ms));
    json_object_set_new(f, "rate", json_integer(sw->workload.rate));
    json_object_set_new(f, "put", json_integer(sw->workload.mix_put));
    json_object_set_new(j, "lag", f);
}

/* "swarm/split": whether the seed draws the split change (said in the object by
 * draw_later, after the lag draws; draw_lag_add asks it first). */
static bool split_drawn(struct run_world *rw, const struct run_swarm_options *o)
{
    struct sim_rng r;
    sim_rng_derive(&r, run_fault_seed(rw), "swarm/split");
    return chance(&r, SPLIT_PCT) && (!o->lanes || (o->lanes & RUN_LANE_MEMBERSHIP));
}

/* "swarm/lagadd": the worlds the lag focus would take if they had the lag lane, and that
 * have no churn (its Figure-8 chains need the kills the focus takes away), run the lag
 * lane besides the lanes drawn, at a period drawn as a lane's: those without the
 * membership lane that the figure-8 nemesis would not take (draw_figure8: no cluster
 * drawn, or the promote outage or the split change drawn), and LAGADD_PCT % of the
 * others. The focus switches the membership lane off, and those worlds' runs are where
 * the switches of configuration changes are found (with 60 % of every world,
 * raft.learner_votes' first chaos seed went from 4 to 165 and removed_leader_counts_self's
 * from 28 to 74); the figure-8 worlds are where raft.commit_old_term is found (lag on
 * every world without membership took 22 of its 48 failing seeds of 1..200). With 25 %
 * everywhere mvcc.restore_lowers_future_watch failed on 8 of chaos seeds 1..200 (each a
 * lag focus world), now on 10. The share is drawn on every world, so a world's period is
 * drawn as it was before. */
static void draw_lag_add(struct run_world *rw, const struct run_swarm_options *o,
                         const struct run_cluster_config *seen, json_t *j)
{
    struct run_swarm *sw = &rw->swarm;
    struct sim_rng r;
    sim_rng_derive(&r, run_fault_seed(rw), "swarm/lagadd");
    bool figure8 = (sw->aspects & RUN_SWARM_CLUSTER) && !json_object_get(j, "promote_outage") &&
                   !split_drawn(rw, o);
    bool add = chance(&r, LAGADD_PCT) || (!(sw->lanes & RUN_LANE_MEMBERSHIP) && !figure8);
    int64_t every = lane_periods[LAG_IX][sim_rng_below(&r, 3)];
    if (!add || o->lanes || (sw->lanes & (RUN_LANE_LAG | RUN_LANE_CHURN)) || seen->nodes < 3)
        return;
    sw->lanes |= RUN_LANE_LAG;
    sw->lane_every_ns[LAG_IX] = every * FL_MS;
    json_t *lanes = json_object_get(j, "lanes_every_ms");
    if (lanes)
        json_object_set_new(lanes, lane_names[LAG_IX], json_integer(every));
}

/* "swarm/figure8": on FIG8_PCT % of the worlds of a swarm{} that names no lanes, with
 * three members or more, the summary's "figure8" asks the scenario (chaos.lua, after its
 * other episodes) for Raft's Figure 8 made on purpose: the leader, cut off, appends
 * entries of its term that reach nobody, and dies; the next leader's first entry is
 * durable on it alone (it crashes at that WAL save, before its messages leave); the old
 * leader comes back first and leads again, and sends its old-term suffix ahead of its
 * new-term entry (one entry per message: max_msg_bytes 256, said in the object, as the
 * churn's; so only with the cluster drawn). Only on worlds whose fault phase that message size does
 * not change or does not matter to: none with the membership or lag lane (their switches are found
 * in those runs) and none that draw the promote outage or the split change (their episodes come
 * first and keep their runs). 52 of chaos seeds 1..200 draw it; with raft.commit_old_term 48 of 200
 * fail (commit_electable), against 1 (seed 48, by the churn lane) before; the other switches'
 * counts did not move, and with no switch on all 200 pass. */
#define FIG8_PCT 100

static void draw_figure8(struct run_world *rw, const struct run_swarm_options *o,
                         const struct run_cluster_config *seen, json_t *j)
{
    struct run_swarm *sw = &rw->swarm;
    struct sim_rng r;
    sim_rng_derive(&r, run_fault_seed(rw), "swarm/figure8");
    if (!chance(&r, FIG8_PCT) || o->lanes || seen->nodes < 3 ||
        !(sw->aspects & RUN_SWARM_CLUSTER) || (sw->lanes & (RUN_LANE_MEMBERSHIP | RUN_LANE_LAG)) ||
        json_object_get(j, "promote_outage") || json_object_get(j, "split_change"))
        return;
    sw->cluster.max_msg_bytes = 256;
    json_t *f = json_object();
    json_object_set_new(f, "max_msg_bytes", json_integer(256));
    json_object_set_new(j, "figure8", f);
}

static void draw_later(struct run_world *rw, const struct run_swarm_options *o, json_t *j)
{
    struct run_swarm *sw = &rw->swarm;
    struct sim_rng r;
    sim_rng_derive(&r, run_fault_seed(rw), "swarm/churn");
    bool churn = chance(&r, CHURN_PCT);
    /* an episode takes a few elections (a crash, a campaign, the restarts): the seed's
     * election timeout, whether or not the cluster is drawn (the faults drawn alone
     * draw what they draw with it) */
    struct run_cluster_config seen;
    seed_world(rw, o, &seen);
    int64_t election_ms = seen.election_ms ? seen.election_ms : 1000;
    int64_t every = FL_MAX(800, election_ms * PICK(&r, 2, 3, 4));
    if (churn && !o->lanes && !(sw->lanes & (RUN_LANE_CHURN | RUN_LANE_MEMBERSHIP))) {
        sw->lanes |= RUN_LANE_CHURN;
        sw->lane_every_ns[RUN_LANE_COUNT - 1] = every * FL_MS;
        json_t *lanes = json_object_get(j, "lanes_every_ms");
        if (lanes)
            json_object_set_new(lanes, lane_names[RUN_LANE_COUNT - 1], json_integer(every));
        /* said apart from the cluster drawn (which a cluster drawn alone draws too) */
        if (sw->aspects & RUN_SWARM_CLUSTER) {
            sw->cluster.max_msg_bytes = 256;
            json_t *ch = json_object();
            json_object_set_new(ch, "max_msg_bytes", json_integer(256));
            json_object_set_new(j, "churn", ch);
        }
    }
    sim_rng_derive(&r, run_fault_seed(rw), "swarm/promote");
    if (chance(&r, PROMOTE_PCT) && (!o->lanes || (o->lanes & RUN_LANE_MEMBERSHIP)))
        json_object_set_new(j, "promote_outage", json_true());
    draw_lag_add(rw, o, &seen, j);
    draw_lag_focus(rw, o, &seen, j);
    if (split_drawn(rw, o))
        json_object_set_new(j, "split_change", json_true());
    draw_figure8(rw, o, &seen, j);
}

/* The BUGGIFY menu: etcd's gofail places and the simulator's disk and network edges. */
static const struct {
    enum flt_point fp;
    const char *action;
    int p_ppm[2]; /* drawn between */
    int count_max;
    int delay_ms[2];
} buggify_menu[] = {
    {FLT_RAFT_BEFORE_SAVE, "crash", {1000, 5000}, 2, {0, 0}},
    {FLT_RAFT_BEFORE_SAVE, "delay", {50000, 500000}, 0, {20, 300}}, /* a slow disk */
    {FLT_RAFT_AFTER_SAVE, "crash", {1000, 5000}, 2, {0, 0}},
    {FLT_MVCC_BEFORE_COMMIT, "crash", {1000, 5000}, 2, {0, 0}},
    {FLT_MVCC_AFTER_COMMIT, "crash", {1000, 5000}, 2, {0, 0}},
    {FLT_SERVER_BEFORE_APPLY, "crash", {500, 2000}, 2, {0, 0}},
    {FLT_SERVER_BEFORE_APPLY_SNAPSHOT, "crash", {200000, 600000}, 1, {0, 0}},
    {FLT_SERVER_AFTER_APPLY_SNAPSHOT, "crash", {200000, 600000}, 1, {0, 0}},
    {FLT_RAFT_BEFORE_SAVE_SNAP, "crash", {100000, 400000}, 1, {0, 0}},
    {FLT_RAFT_AFTER_SAVE_SNAP, "crash", {100000, 400000}, 1, {0, 0}},
    {FLT_MVCC_COMPACT_BATCH, "crash", {100000, 400000}, 1, {0, 0}},
    {FLT_MVCC_COMPACT_AFTER, "crash", {100000, 400000}, 1, {0, 0}},
    {FLT_SERVER_DEFRAG_BEFORE_COPY, "crash", {200000, 500000}, 1, {0, 0}},
    {FLT_SERVER_DEFRAG_BEFORE_RENAME, "crash", {50000, 200000}, 1, {0, 0}},
    {FLT_WATCH_BEFORE_SEND, "delay", {200000, 1000000}, 0, {50, 400}},
    {FLT_DISK_TORN_WRITE, "error", {300000, 1000000}, 0, {0, 0}},
    {FLT_NET_DROP, "drop", {2000, 20000}, 0, {0, 0}},
};

static void draw_buggify(struct run_world *rw, int nodes, json_t *j)
{
    struct sim_rng r;
    sim_rng_derive(&r, run_fault_seed(rw), "swarm/buggify");
    struct run_swarm *sw = &rw->swarm;
    sw->n_bug = 0;
    json_t *a = json_array();
    int n = chance(&r, 60) ? (int)sim_rng_range(&r, 1, 3) : 0;
    for (int i = 0; i < n && sw->n_bug < RUN_BUGGIFY_MAX; i++) {
        size_t m = sim_rng_below(&r, FL_ARRAY_LEN(buggify_menu));
        struct run_buggify *b = &sw->bug[sw->n_bug++];
        snprintf(b->name, sizeof b->name, "%s", flt_point_name(buggify_menu[m].fp));
        snprintf(b->action, sizeof b->action, "%s", buggify_menu[m].action);
        b->node = chance(&r, 50) ? (int)sim_rng_range(&r, 1, nodes) : 0;
        b->p_ppm = (int)sim_rng_range(&r, buggify_menu[m].p_ppm[0], buggify_menu[m].p_ppm[1]);
        b->count =
            buggify_menu[m].count_max ? (int)sim_rng_range(&r, 1, buggify_menu[m].count_max) : 0;
        b->delay_ms =
            buggify_menu[m].delay_ms[1]
                ? (int)sim_rng_range(&r, buggify_menu[m].delay_ms[0], buggify_menu[m].delay_ms[1])
                : 0;
        json_t *o = json_object();
        json_object_set_new(o, "name", json_string(b->name));
        json_object_set_new(o, "action", json_string(b->action));
        json_object_set_new(o, "node", json_integer(b->node));
        json_object_set_new(o, "p_ppm", json_integer(b->p_ppm));
        json_object_set_new(o, "count", json_integer(b->count));
        if (b->delay_ms)
            json_object_set_new(o, "delay_ms", json_integer(b->delay_ms));
        json_array_append_new(a, o);
    }
    json_object_set_new(j, "buggify", a);
}

/* The trigger menu: node event, action, probability range, firings, down time in
 * election timeouts (min, max). */
static const struct {
    enum srv_hook_kind hook;
    enum run_trigger_action action;
    int p_ppm[2];
    int count_max;
    int down_elections[2];
} trigger_menu[] = {
    {SRV_HOOK_VOTE_GRANTED, RUN_TRIG_KILL, {100000, 500000}, 3, {0, 2}},
    {SRV_HOOK_APPEND, RUN_TRIG_KILL, {2000, 20000}, 3, {0, 3}},
    {SRV_HOOK_APPEND, RUN_TRIG_POWER, {1000, 10000}, 2, {1, 3}},
    {SRV_HOOK_LEADER, RUN_TRIG_KILL, {200000, 600000}, 3, {1, 3}},
    {SRV_HOOK_PERSISTED, RUN_TRIG_KILL, {2000, 20000}, 3, {0, 3}},
    {SRV_HOOK_SNAPSHOT_INSTALL, RUN_TRIG_KILL, {300000, 1000000}, 2, {0, 2}},
    {SRV_HOOK_SNAPSHOT_SENT, RUN_TRIG_KILL, {200000, 600000}, 2, {0, 2}},
    {SRV_HOOK_CONF_CHANGE, RUN_TRIG_KILL, {300000, 1000000}, 2, {0, 2}},
    {SRV_HOOK_CONF_CHANGE, RUN_TRIG_ISOLATE, {300000, 1000000}, 2, {1, 3}},
    {SRV_HOOK_CONF_APPLIED, RUN_TRIG_KILL, {200000, 600000}, 2, {0, 2}},
    {SRV_HOOK_COMPACT, RUN_TRIG_KILL, {100000, 400000}, 2, {0, 2}},
    {SRV_HOOK_DEFRAG, RUN_TRIG_KILL, {200000, 500000}, 2, {0, 2}},
    {SRV_HOOK_TERM, RUN_TRIG_PAUSE, {50000, 200000}, 2, {1, 2}},
    /* a new leader crashes once it persisted its next entries, before it sent them:
     * repeated, Raft's Figure 8 (entries of old terms on a minority, then counted) */
    {SRV_HOOK_LEADER, RUN_TRIG_CRASH_SAVE, {300000, 1000000}, 3, {1, 3}},
    /* a candidate crashes at its first, second or third WAL save after it campaigned:
     * if it wins, its first entry is durable on it alone (Figure 8's S5), or it dies
     * right after a commit, before it told anyone (Figure 8's S1) */
    {SRV_HOOK_TERM, RUN_TRIG_CRASH_SAVE, {300000, 1000000}, 4, {1, 3}},
    {SRV_HOOK_APPEND, RUN_TRIG_POWER, {1000, 10000}, 2, {1, 3}},
};

static const char *const trigger_actions[] = {"kill", "power", "isolate", "pause", "crash_save"};

/* How likely a trigger on this event is drawn, given the drawn world: an event the
 * world never makes gets none (a rule on configuration changes without membership
 * changes would never fire); one that only the drawn fault lanes make gets more, so
 * a fault that lands in that window comes with them (the membership lane with cuts
 * on configuration entries, compactions with crashes in the middle of one). */
static int trigger_weight(unsigned lanes, const struct run_cluster_config *c,
                          enum srv_hook_kind hook)
{
    switch (hook) {
    case SRV_HOOK_CONF_CHANGE:
    case SRV_HOOK_CONF_APPLIED:
        return lanes & RUN_LANE_MEMBERSHIP ? 4 : 0;
    case SRV_HOOK_COMPACT:
        return c->auto_compaction_mode || (lanes & (RUN_LANE_COMPACT | RUN_LANE_QUOTA)) ? 1 : 0;
    case SRV_HOOK_DEFRAG:
        return lanes & (RUN_LANE_DEFRAG | RUN_LANE_QUOTA) ? 2 : 0;
    case SRV_HOOK_SNAPSHOT_INSTALL:
    case SRV_HOOK_SNAPSHOT_SENT:
        return c->snapshot_count < 100000 ? 1 : 0;
    default:
        return 1;
    }
}

static size_t trigger_pick(struct sim_rng *r, unsigned lanes, const struct run_cluster_config *c)
{
    int w[FL_ARRAY_LEN(trigger_menu)], total = 0;
    for (size_t i = 0; i < FL_ARRAY_LEN(trigger_menu); i++)
        total += w[i] = trigger_weight(lanes, c, trigger_menu[i].hook);
    int x = (int)sim_rng_below(r, (uint64_t)total);
    size_t m = 0;
    while (x >= w[m])
        x -= w[m++];
    return m;
}

/* The cluster and the lanes this seed draws, whether or not those aspects are drawn:
 * the triggers' weights depend on them, and an aspect drawn alone must draw what it
 * draws with the others (each aspect's draws are its own). Same streams, same draws;
 * nothing of the world is kept. */
static unsigned seed_world(struct run_world *rw, const struct run_swarm_options *o,
                           struct run_cluster_config *c)
{
    struct run_swarm saved = rw->swarm;
    json_t *scratch = json_object();
    run_cluster_config_default(c);
    draw_cluster(rw, o, c, scratch);
    draw_faults(rw, o, c->quota_bytes > 0 && c->quota_bytes < INT64_C(1) << 20, scratch);
    unsigned lanes = rw->swarm.lanes;
    json_decref(scratch);
    rw->swarm = saved;
    return lanes;
}

static void draw_triggers(struct run_world *rw, const struct run_swarm_options *opt,
                          const struct run_cluster_config *c, json_t *j)
{
    struct run_cluster_config seen;
    unsigned lanes = seed_world(rw, opt, &seen);
    struct sim_rng r;
    sim_rng_derive(&r, run_fault_seed(rw), "swarm/triggers");
    struct run_swarm *sw = &rw->swarm;
    sw->n_trig = 0;
    json_t *a = json_array();
    int n = chance(&r, 65) ? (int)sim_rng_range(&r, 1, 3) : 0;
    int64_t election_ns = (int64_t)(c->election_ms ? c->election_ms : 1000) * FL_MS;
    for (int i = 0; i < n && sw->n_trig < RUN_TRIGGERS_MAX; i++) {
        size_t m = trigger_pick(&r, lanes, &seen);
        struct run_trigger *t = &sw->trig[sw->n_trig++];
        memset(t, 0, sizeof *t);
        t->hook = (int)trigger_menu[m].hook;
        t->action = trigger_menu[m].action;
        t->p_ppm = (int)sim_rng_range(&r, trigger_menu[m].p_ppm[0], trigger_menu[m].p_ppm[1]);
        t->count_max = (int)sim_rng_range(&r, 1, trigger_menu[m].count_max);
        int64_t lo = trigger_menu[m].down_elections[0], hi = trigger_menu[m].down_elections[1];
        t->down_ns = sim_rng_range(&r, lo * election_ns, hi * election_ns) + 50 * FL_MS;
        /* a power loss lands after the event: before a follower's fsync completes (the
         * window of an acknowledgement that is not durable yet), or later */
        int64_t fsync_ns = (c->fsync_us ? c->fsync_us : 1000) * FL_US;
        t->delay_ns = t->action == RUN_TRIG_POWER ? sim_rng_range(&r, 0, 2 * fsync_ns) : 0;
        /* crashes on campaigns come in chains (Figure 8: one candidate after another) */
        bool chain = t->action == RUN_TRIG_CRASH_SAVE && t->hook == SRV_HOOK_TERM;
        t->cooldown_ns = chain ? sim_rng_range(&r, 0, election_ns)
                               : sim_rng_range(&r, election_ns, 4 * election_ns);
        json_t *o = json_object();
        json_object_set_new(o, "on", json_string(srv_hook_kind_name(trigger_menu[m].hook)));
        json_object_set_new(o, "action", json_string(trigger_actions[t->action]));
        json_object_set_new(o, "p_ppm", json_integer(t->p_ppm));
        json_object_set_new(o, "count", json_integer(t->count_max));
        json_object_set_new(o, "down_ms", json_integer(t->down_ns / FL_MS));
        if (t->delay_ns)
            json_object_set_new(o, "delay_us", json_integer(t->delay_ns / FL_US));
        json_object_set_new(o, "cooldown_ms", json_integer(t->cooldown_ns / FL_MS));
        json_array_append_new(a, o);
    }
    json_object_set_new(j, "triggers", a);
}

/* --- the one-line brief -------------------------------------------------------------- */

/* Starts a part of the brief after a "; " (lanes, failpoints, triggers). */
static void brief_part(struct fl_buf *out, const char **sep, const char *name)
{
    fl_buf_printf(out, "%s%s", **sep ? "; " : "", name);
    *sep = "; ";
}

void run_swarm_brief(const json_t *swarm, struct fl_buf *out)
{
    if (!json_is_object(swarm))
        return;
    const json_t *c = json_object_get(swarm, "cluster"), *k = json_object_get(swarm, "clients");
    const char *sep = "";
    if (c) {
        fl_buf_printf(out,
                      "%" JSON_INTEGER_FORMAT " nodes (%s%s, election %" JSON_INTEGER_FORMAT " ms)",
                      json_integer_value(json_object_get(c, "nodes")),
                      json_is_true(json_object_get(c, "prevote")) ? "pre-vote" : "no pre-vote",
                      json_is_true(json_object_get(c, "check_quorum")) ? ", check-quorum" : "",
                      json_integer_value(json_object_get(c, "election_ms")));
        sep = ", ";
    }
    if (k) {
        fl_buf_printf(out, "%s%zu clients", sep, json_array_size(json_object_get(k, "balancers")));
        sep = ", ";
    }
    const json_t *w = json_object_get(swarm, "workload");
    if (w) {
        fl_buf_printf(out, "%s%" JSON_INTEGER_FORMAT " ops/s", sep,
                      json_integer_value(json_object_get(w, "rate")));
        sep = ", ";
    }
    const json_t *lanes = json_object_get(swarm, "lanes_every_ms");
    if (lanes) {
        brief_part(out, &sep, "lanes");
        const char *name;
        json_t *v;
        json_object_foreach((json_t *)lanes, name, v)
        {
            fl_buf_printf(out, " %s", name);
        }
    }
    const json_t *b = json_object_get(swarm, "buggify");
    if (json_array_size(b)) {
        brief_part(out, &sep, "failpoints");
        for (size_t i = 0; i < json_array_size(b); i++) {
            const json_t *f = json_array_get(b, i);
            json_int_t node = json_integer_value(json_object_get(f, "node"));
            fl_buf_printf(out, " %s:%s", json_string_value(json_object_get(f, "name")),
                          json_string_value(json_object_get(f, "action")));
            if (node)
                fl_buf_printf(out, "@n%" JSON_INTEGER_FORMAT, node);
        }
    }
    const json_t *t = json_object_get(swarm, "triggers");
    if (json_array_size(t)) {
        brief_part(out, &sep, "triggers");
        for (size_t i = 0; i < json_array_size(t); i++) {
            const json_t *f = json_array_get(t, i);
            fl_buf_printf(out, "%s %s on %s", i ? "," : "",
                          json_string_value(json_object_get(f, "action")),
                          json_string_value(json_object_get(f, "on")));
        }
    }
}

/* --- the draw and what it sets ------------------------------------------------------- */

int run_swarm_draw(struct run_world *rw, const struct run_swarm_options *o, json_t **drawn)
{
    if (rw->swarm.drawn || rw->setup)
        return FL_EINVAL;
    struct run_swarm *sw = &rw->swarm;
    sw->drawn = true;
    sw->aspects = o->aspects & RUN_SWARM_ALL;
    struct run_cluster_config *c = &sw->cluster;
    struct run_clients_config *k = &sw->clients;
    struct run_workload_config *w = &sw->workload;
    run_cluster_config_default(c);
    run_clients_config_default(k);
    run_workload_config_default(w);
    json_t *j = json_object();
    if (sw->aspects & RUN_SWARM_CLUSTER)
        draw_cluster(rw, o, c, j);
    if (sw->aspects & RUN_SWARM_CLIENTS)
        draw_clients(rw, k, j);
    if (sw->aspects & RUN_SWARM_WORKLOAD)
        draw_workload(rw, w, j);
    if (sw->aspects & RUN_SWARM_FAULTS)
        draw_faults(rw, o, c->quota_bytes > 0 && c->quota_bytes < INT64_C(1) << 20, j);
    if (sw->aspects & RUN_SWARM_BUGGIFY)
        draw_buggify(rw, c->nodes ? c->nodes : 3, j);
    if (sw->aspects & RUN_SWARM_TRIGGERS)
        draw_triggers(rw, o, c, j);
    if (sw->aspects & RUN_SWARM_FAULTS)
        run_restore_draw(rw, o->lanes, j); /* its own stream, after the others */
    if (sw->aspects & RUN_SWARM_FAULTS)
        draw_later(rw, o, j); /* their own streams, after the others */
    sw->info = j;
    run_log_fault(rw, "swarm", "*", json_incref(j));
    run_summary_set(rw, "swarm", json_incref(j));
    if (drawn)
        *drawn = j;
    return FL_OK;
}

void run_swarm_apply(const struct run_world *rw, struct run_cluster_config *c,
                     struct run_clients_config *k, struct run_workload_config *w)
{
    const struct run_swarm *sw = &rw->swarm;
    if (!sw->drawn)
        return;
    if (sw->aspects & RUN_SWARM_CLUSTER)
        *c = sw->cluster; /* every field of the cluster is drawn */
    if (sw->aspects & RUN_SWARM_CLIENTS)
        *k = sw->clients;
    if (sw->aspects & RUN_SWARM_WORKLOAD)
        *w = sw->workload;
}

void run_swarm_setup(struct run_world *rw)
{
    struct run_swarm *sw = &rw->swarm;
    if (!sw->drawn || !rw->cl)
        return;
    for (int i = 0; i < sw->n_fsync; i++) {
        int proc = run_node_proc(rw, i + 1);
        if (proc >= 0 && sw->fsync_ns[i])
            disk_set_fsync_latency(rw->w, proc, sw->fsync_ns[i]);
    }
}

void run_swarm_free(struct run_world *rw)
{
    json_decref(rw->swarm.info);
    rw->swarm.info = NULL;
    run_restore_free(rw);
}

/* The swarm nemesis's fault row; arg: its duration_ns (int64_t). */
static void swarm_log(struct run_world *rw, void *arg)
{
    int64_t duration_ns = *(const int64_t *)arg;
    json_t *d = json_object();
    json_object_set_new(d, "swarm", json_true());
    json_object_set_new(d, "lanes", json_integer(rw->swarm.lanes));
    if (duration_ns)
        json_object_set_new(d, "duration_ms", json_integer(duration_ns / FL_MS));
    run_log_fault(rw, "nemesis", "*", d);
}

int run_nemesis_swarm(struct run_world *rw, int64_t duration_ns, int scale_pct)
{
    struct run_swarm *sw = &rw->swarm;
    if (!sw->drawn || !rw->cl)
        return FL_EINVAL;
    run_nemesis_stop(rw);
    rw->lanes.until_ns = duration_ns ? sim_now_ns(rw->w) + duration_ns : 0;
    rw->lanes.dry = !run_fault_apply(rw, swarm_log, &duration_ns, NULL);
    /* failpoints: each one a fault application of its own */
    for (int i = 0; i < sw->n_bug && (sw->aspects & RUN_SWARM_BUGGIFY); i++) {
        const struct run_buggify *b = &sw->bug[i];
        char err[160];
        int node = b->node && run_node_exists(rw, b->node) ? b->node : 0;
        if (rw->lanes.dry) { /* the ordinal is taken all the same: later ones keep theirs */
            run_fault_apply(rw, NULL, NULL, NULL);
            continue;
        }
        run_failpoint(rw, b->name, node, b->action, b->p_ppm, b->count, b->delay_ms, err,
                      sizeof err);
    }
    if (sw->aspects & RUN_SWARM_TRIGGERS)
        run_triggers_arm(rw, scale_pct);
    if (sw->aspects & RUN_SWARM_FAULTS) {
        run_lanes_start(rw, scale_pct);
        if (!rw->lanes.dry)
            run_restore_arm(rw, duration_ns, scale_pct);
    }
    return FL_OK;
}
