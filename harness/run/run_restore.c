/*
 * run_restore.c: the swarm's restore flow, etcd's disaster recovery in a chaos run. On
 * the seeds that draw it (stream "swarm/restore"), a backup (snapshot save) is taken
 * from a live member at a drawn point of the fault phase; when the scenario is over
 * (after its own checks of the cluster's recovery, which a restore would hide) the
 * workload has stopped, every fault is healed (the cluster quiesced) and the backup is
 * restored into every member at once, as etcd's recovery guide says: stop them all,
 * restore each member's data dir from the same snapshot into a new cluster (new
 * cluster ID, new member IDs), start them; convergence is then judged on them. With
 * server.restore_keeps_ids the restored members keep the old identities, and raft_safety sees
 * members it knows come back with a lower term and commit (the restored cluster is taken for the
 * old one).
 *
 * A restore rewinds the data and the revision to the backup on purpose, so the client
 * history across it is not one linearizable history. The linearizability and watch
 * checkers judge the history up to the restore (chk_history_cut: a call pending then is
 * an unknown outcome, a watch ends there); what the restored cluster serves is judged
 * by the scenario's own expectations, liveness, raft_safety (per cluster ID) and
 * converge. The summary says what was left out.
 *
 * Determinism and shrinking: the draw is its own stream, so seeds that do not draw the
 * flow draw exactly what they drew before; the backup and the restore are one fault
 * application each (an ordinal shrink can drop; no backup, no restore); which member
 * backs up draws from "fault/restore".
 */
#include "harness/run/run_int.h"

/* per cent of the seeds that draw the flow */
#define RESTORE_PCT 7
/* a backup that fails (its member died) is tried again this much later */
#define BACKUP_RETRY_NS (300 * FL_MS)

void run_restore_draw(struct run_world *rw, unsigned allowed_lanes, json_t *j)
{
    struct run_restore_state *rs = &rw->rst;
    struct sim_rng r;
    sim_rng_derive(&r, run_fault_seed(rw), "swarm/restore");
    bool on = sim_rng_chance_ppm(&r, RESTORE_PCT * 10000u);
    int pm = (int)sim_rng_range(&r, 150, 600);
    rs->drawn = false;
    if (!on || (allowed_lanes && !(allowed_lanes & RUN_LANE_RESTORE)))
        return;
    rs->drawn = true;
    rs->backup_pm = pm;
    json_t *o = json_object();
    json_object_set_new(o, "backup_permille", json_integer(pm));
    json_object_set_new(j, "restore", o);
}

/* --- the backup ------------------------------------------------------------------------- */

static void backup_tick(struct sim_world *w, void *ctx);

/* No backup yet: another try a little later (another member), while the phase lasts. */
static void backup_retry(struct run_world *rw)
{
    struct run_restore_state *rs = &rw->rst;
    if (rs->until_ns && !rs->backup_h && sim_now_ns(rw->w) + BACKUP_RETRY_NS < rs->until_ns)
        rs->backup_h = sim_schedule(rw->w, BACKUP_RETRY_NS, backup_tick, rw);
}

static void backup_done(void *arg, const struct run_ctl_result *r)
{
    struct run_world *rw = arg;
    struct run_restore_state *rs = &rw->rst;
    if (r->code == 0 && r->data && r->len) {
        free(rs->backup);
        rs->backup = fl_malloc(r->len);
        memcpy(rs->backup, r->data, r->len);
        rs->backup_len = r->len;
        rs->backup_rev = r->revision;
        return;
    }
    backup_retry(rw); /* its member died meanwhile */
}

static void backup_apply(struct run_world *rw, void *arg)
{
    (void)arg;
    int ids[RUN_NODES_MAX], n = run_live_nodes(rw, ids);
    if (n == 0) {
        backup_retry(rw); /* every member is down (a power loss) */
        return;
    }
    run_snapshot_save(rw, ids[sim_rng_below(&rw->rst.rng, (uint64_t)n)], backup_done, rw);
}

static void backup_tick(struct sim_world *w, void *ctx)
{
    (void)w;
    struct run_world *rw = ctx;
    rw->rst.backup_h = 0;
    run_fault_apply(rw, backup_apply, NULL, NULL);
}

/* --- the restore ------------------------------------------------------------------------ */

static void restore_apply(struct run_world *rw, void *arg)
{
    (void)arg;
    struct run_restore_state *rs = &rw->rst;
    int ids[RUN_NODES_MAX], n = run_nodes(rw, ids, RUN_NODES_MAX), k = 0;
    for (int i = 0; i < n; i++)
        if (!run_member_awaits_start(rw, ids[i]))
            ids[k++] = ids[i];
    if (k == 0)
        return;
    char err[160];
    /* the cluster's history ends here: what follows is the restored cluster's */
    int64_t now = sim_now_ns(rw->w);
    if (!run_restore(rw, rs->backup, rs->backup_len, ids, k, false, err, sizeof err))
        rs->cut_ns = now;
    else
        fl_log(FL_LOG_WARN, "swarm restore: %s", err);
}

/* The restore runs when the scenario is over (run_world_finish, before convergence):
 * the old cluster's own recovery after the fault phase was judged first (a restore
 * would hide a cluster that never came back), the workload has stopped (quiesced),
 * every fault is healed, then every member is restored and the world runs until the
 * restored cluster has a leader (or a bound), so that raft_safety meets its members. */
void run_restore_finish(struct run_world *rw)
{
    struct run_restore_state *rs = &rw->rst;
    run_restore_stop(rw);
    if (!rs->drawn || !rs->backup || rs->cut_ns || run_world_stopped(rw))
        return; /* no backup was taken (or its application was shrunk away) */
    run_heal_all(rw);
    run_fault_apply(rw, restore_apply, NULL, &rs->ordinal);
    if (!rs->cut_ns)
        return;
    int64_t election = (int64_t)(rw->ccfg.election_ms ? rw->ccfg.election_ms : 1000) * FL_MS;
    int64_t until = sim_now_ns(rw->w) + 10 * election + 2 * FL_S;
    while (!run_world_stopped(rw) && sim_now_ns(rw->w) < until && !run_leader(rw))
        run_advance(rw, FL_MIN(until, sim_now_ns(rw->w) + 100 * FL_MS));
}

void run_restore_arm(struct run_world *rw, int64_t duration_ns, int scale_pct)
{
    struct run_restore_state *rs = &rw->rst;
    (void)scale_pct; /* the points are fractions of the phase: nothing to scale */
    run_restore_stop(rw);
    if (!rs->drawn || duration_ns <= 0 || rs->cut_ns)
        return; /* one restore per run (each makes a new cluster ID) */
    sim_rng_derive(&rs->rng, run_fault_seed(rw), "fault/restore");
    int64_t now = sim_now_ns(rw->w);
    rs->until_ns = now + duration_ns;
    int64_t at = duration_ns / 1000 * rs->backup_pm + duration_ns % 1000 * rs->backup_pm / 1000;
    rs->backup_h = sim_schedule(rw->w, FL_MAX(at, 1), backup_tick, rw);
}

void run_restore_stop(struct run_world *rw)
{
    struct run_restore_state *rs = &rw->rst;
    if (rs->backup_h)
        sim_cancel(rw->w, rs->backup_h);
    rs->backup_h = 0;
    rs->until_ns = 0;
}

void run_restore_free(struct run_world *rw)
{
    free(rw->rst.backup);
    rw->rst.backup = NULL;
    rw->rst.backup_len = 0;
}

/* --- the history the checkers judge ------------------------------------------------------ */

int run_restore_cut(struct run_world *rw, struct chk_history *h, json_t **note, struct fl_buf *err)
{
    *note = NULL;
    if (!rw->rst.cut_ns)
        return FL_OK;
    struct chk_history cut;
    struct chk_cut_stats st;
    chk_history_cut(h, rw->rst.cut_ns, &cut, &st);
    int rc = chk_history_finish(&cut, err);
    if (rc) {
        chk_history_close(&cut);
        return rc;
    }
    chk_history_close(h);
    *h = cut;
    json_t *o = json_object();
    json_object_set_new(o, "at_ms", json_integer(rw->rst.cut_ns / FL_MS));
    json_object_set_new(o, "backup_revision", json_integer(rw->rst.backup_rev));
    json_object_set_new(o, "ops_after", json_integer(st.ops_after));
    json_object_set_new(o, "ops_pending", json_integer(st.ops_pending));
    json_object_set_new(o, "watches_after", json_integer(st.watches_after));
    json_object_set_new(o, "events_after", json_integer(st.events_after));
    json_object_set_new(o, "why",
                        json_string("a restore rewound the cluster to a backup: the history is "
                                    "judged up to it (what the restored cluster served is not)"));
    *note = o;
    return FL_OK;
}
