/*
 * explore_mutate.c: the schedules of `faultline explore` and how they change. A corpus
 * entry is a schedule whose run reached coverage signatures no earlier run reached,
 * with what its run recorded (explore.h): the faults that carry an ordinal, when the
 * fault phase ran, the cluster's size and election timeout. A mutant of it applies one
 * to three of:
 *
 *   drop    one recorded fault (skip_faults; an added fault is removed instead)
 *   insert  a fault at a random time of the fault phase: kill, power loss, pause,
 *           isolate or crash-after-WAL-save of a random member, for 0.1-3 election
 *           timeouts; in 60% of inserts it waits from that time for a node event
 *           (an append before its fsync, a vote, a snapshot install, a configuration
 *           change, ...) of that member or any member, and fires right after it
 *   move    an added fault, or a recorded kill or pause (dropped and added back as an
 *           equal fault), shifted by up to two election timeouts either way
 *   retime  an added fault's length scaled by 1/4..4, or its time jittered by up to
 *           200 ms (the window between an append and its fsync is milliseconds wide)
 *   reseed  the swarm's fault mix drawn again (new lanes, failpoints and triggers over
 *           the same cluster, clients and workload); its skip list is cleared, since
 *           the ordinals then name other faults
 *
 * A parent whose run reached risky situations (run_coverage.c: a configuration change
 * while another is pending, a leader removed, a snapshot installed while watchers are
 * open, a compaction with a member behind it, ...) may instead be aimed at (xp_aim):
 * one fault (kill, power loss, crash-after-WAL-save, isolate, pause) inserted up to half
 * an election timeout before one of those moments (never before the parent's fault
 * phase), on its member (or any), waiting for
 * its node event and firing right after it: the fault lands in the window, not at a
 * random time.
 *
 * A parent whose run drew two or more fault lanes may be thinned (xp_thin): the same
 * schedule with only some of its lanes (shrink{ lanes }), each with the draws it had.
 * A failure often needs one lane's faults undisturbed by the others: with only the lag
 * lane, 36 of chaos seeds 1..300 fail with mvcc.watch_compacted_lost (4 of 1..1000
 * with every lane), with only membership, 15 of 300 with raft.multiple_conf_changes
 * (10 of 1000).
 *
 * Two more schedules are made of whole parts of entries (xp_reworld, xp_cross): an
 * entry's fault mix (its fault seed, its added faults) over a fresh seed's world, and
 * one entry's world with another's fault mix. A failure is carried by the fault mix
 * more than by the world: the fault mix of a failing chaos seed fails again over 1 to 6
 * of 8 other worlds, its world under 8 other fault mixes mostly never (README "Guided
 * search").
 *
 * Every choice comes from the explorer's own stream: the same invocation makes the
 * same mutants. Never: a wall clock, an unseeded draw, hash order.
 */
#include "harness/cli/explore.h"

#include <string.h>

void xp_sched_init(struct xp_sched *s)
{
    memset(s, 0, sizeof *s);
    scn_directive_init(&s->d);
}

void xp_sched_close(struct xp_sched *s)
{
    scn_directive_close(&s->d);
}

void xp_sched_copy(struct xp_sched *dst, const struct xp_sched *src)
{
    scn_directive_copy(&dst->d, &src->d);
    dst->seed = src->seed;
    memcpy(dst->how, src->how, sizeof dst->how);
}

static int64_t jint(const json_t *o, const char *k, int64_t def)
{
    const json_t *v = json_object_get(o, k);
    return json_is_integer(v) ? (int64_t)json_integer_value(v) : def;
}

static int target_node(const json_t *f)
{
    const char *t = json_string_value(json_object_get(f, "target"));
    int n = 0;
    if (t && t[0] == 'n' && sscanf(t + 1, "%d", &n) == 1)
        return n;
    return 0;
}

/* The recorded faults with an ordinal, one per ordinal (its first row), with the time
 * of the row that undid a kill or a pause of the same member under that ordinal. */
static void read_faults(struct xp_entry *e, const json_t *faults)
{
    size_t n = json_array_size(faults);
    e->faults = fl_calloc(n + 1, sizeof *e->faults);
    for (size_t i = 0; i < n; i++) {
        const json_t *f = json_array_get(faults, i);
        int64_t ord = jint(f, "ordinal", 0), at = jint(f, "at_ms", 0) * FL_MS;
        const char *kind = json_string_value(json_object_get(f, "kind"));
        if (ord <= 0 || !kind)
            continue;
        struct xp_fault *x = NULL;
        for (int k = 0; k < e->n_faults && !x; k++)
            if (e->faults[k].ordinal == ord)
                x = &e->faults[k];
        if (x) {
            bool undo = (!strcmp(kind, "restart") && x->kind == RUN_ADD_KILL) ||
                        (!strcmp(kind, "resume") && x->kind == RUN_ADD_PAUSE);
            if (undo && !x->undo_ns && target_node(f) == x->node)
                x->undo_ns = at;
            continue;
        }
        x = &e->faults[e->n_faults++];
        x->ordinal = ord;
        x->at_ns = at;
        x->node = target_node(f);
        x->kind = !strcmp(kind, "kill") && x->node    ? RUN_ADD_KILL
                  : !strcmp(kind, "pause") && x->node ? RUN_ADD_PAUSE
                                                      : -1;
    }
}

static void read_risky(struct xp_entry *e, const json_t *arr)
{
    size_t n = json_array_size(arr);
    e->risky = fl_calloc(n + 1, sizeof *e->risky);
    for (size_t i = 0; i < n; i++) {
        const json_t *j = json_array_get(arr, i);
        const char *what = json_string_value(json_object_get(j, "what"));
        const char *on = json_string_value(json_object_get(j, "on"));
        if (!what)
            continue;
        struct xp_risky *x = &e->risky[e->n_risky++];
        x->what = fl_hash64(what, strlen(what));
        x->what = x->what ? x->what : 1;
        snprintf(x->name, sizeof x->name, "%s", what);
        x->at_ns = jint(j, "at_ms", 0) * FL_MS;
        x->node = (int)jint(j, "node", 0);
        x->on = on && run_event_kind_find(on) >= 0 ? run_event_kind_find(on) + 1 : 0;
    }
}

void xp_entry_from_summary(struct xp_entry *e, const struct xp_sched *s, const json_t *sum, int id)
{
    memset(e, 0, sizeof *e);
    xp_sched_init(&e->s);
    xp_sched_copy(&e->s, s);
    e->id = id;
    const json_t *faults = json_object_get(sum, "faults");
    read_faults(e, faults);
    read_risky(e, json_object_get(json_object_get(sum, "coverage"), "risky"));
    e->nodes = (int)jint(json_object_get(sum, "workload"), "nodes", 3);
    const json_t *cl = json_object_get(json_object_get(sum, "swarm"), "cluster");
    e->election_ns = jint(cl, "election_ms", 1000) * FL_MS;
    /* the fault phase: from the first fault with an ordinal to heal_all (or the end) */
    e->phase_to = jint(sum, "script_end_ms", 0) * FL_MS;
    e->phase_from = e->n_faults ? e->faults[0].at_ns : 0;
    for (size_t i = 0; i < json_array_size(faults); i++) {
        const json_t *f = json_array_get(faults, i);
        const char *k = json_string_value(json_object_get(f, "kind"));
        if (k && !strcmp(k, "heal_all") && jint(f, "at_ms", 0) * FL_MS > e->phase_from) {
            e->phase_to = jint(f, "at_ms", 0) * FL_MS;
            break;
        }
    }
    if (e->phase_to <= e->phase_from)
        e->phase_to = e->phase_from + 10 * FL_S;
    /* the lanes its run drew (a thinned schedule's are already among them) */
    const json_t *sw = json_object_get(sum, "swarm");
    const char *lane;
    const json_t *v;
    json_object_foreach((json_t *)json_object_get(sw, "lanes_every_ms"), lane, v)
    {
        (void)v;
        e->lanes |= run_lane_find(lane);
    }
    if (json_object_get(sw, "restore"))
        e->lanes |= RUN_LANE_RESTORE;
}

void xp_entry_close(struct xp_entry *e)
{
    xp_sched_close(&e->s);
    free(e->faults);
    free(e->feats);
    free(e->risky);
    e->faults = NULL;
    e->feats = NULL;
    e->risky = NULL;
}

/* --- the mutations ------------------------------------------------------------------- */

static void note(struct xp_sched *out, const char *what)
{
    size_t len = strlen(out->how);
    snprintf(out->how + len, sizeof out->how - len, "%s%s", len ? " " : "", what);
}

static int64_t rand_len(struct sim_rng *r, const struct xp_entry *p)
{
    /* 0.1 to 3 election timeouts, whole milliseconds */
    int64_t e_ms = p->election_ns / FL_MS;
    return sim_rng_range(r, e_ms / 10, 3 * e_ms) * FL_MS;
}

static void add_fault(struct xp_sched *out, const struct run_added_fault *f)
{
    if (out->d.n_add < XP_ADDED_MAX)
        scn_directive_add(&out->d, f);
}

static void remove_added(struct xp_sched *out, int i)
{
    memmove(out->d.add + i, out->d.add + i + 1,
            sizeof *out->d.add * (size_t)(out->d.n_add - i - 1));
    out->d.n_add--;
}

/* The node events an inserted fault may wait for, the windows of issue 13 §2 (between
 * an append and its fsync, right after a vote, in a snapshot install or a configuration
 * change) weighted up. */
static int rand_on(struct sim_rng *r)
{
    static const char *const on[] = {
        "append",      "append",      "append",           "vote_granted",     "vote_granted",
        "conf_change", "conf_change", "snapshot_install", "snapshot_install", "leader",
        "term",        "persisted",   "snapshot_sent",    "snapshot_applied", "conf_applied",
        "compact",     "defrag",      "snapshot"};
    return run_event_kind_find(on[sim_rng_below(r, FL_ARRAY_LEN(on))]) + 1;
}

static bool mut_insert(struct sim_rng *r, const struct xp_entry *p, struct xp_sched *out)
{
    /* weights: kill 3, power 2, crash_save 3, pause 1, isolate 2 */
    static const int kinds[] = {RUN_ADD_KILL,       RUN_ADD_KILL,       RUN_ADD_KILL,
                                RUN_ADD_POWER,      RUN_ADD_POWER,      RUN_ADD_CRASH_SAVE,
                                RUN_ADD_CRASH_SAVE, RUN_ADD_CRASH_SAVE, RUN_ADD_PAUSE,
                                RUN_ADD_ISOLATE,    RUN_ADD_ISOLATE};
    if (out->d.n_add >= XP_ADDED_MAX)
        return false;
    struct run_added_fault f = {
        .kind = kinds[sim_rng_below(r, FL_ARRAY_LEN(kinds))],
        .node = (int)sim_rng_range(r, 1, FL_MAX(1, p->nodes)),
        .at_ns = sim_rng_range(r, p->phase_from / FL_MS, p->phase_to / FL_MS) * FL_MS,
        .for_ns = rand_len(r, p),
    };
    if (sim_rng_below(r, 100) < 60) { /* on a node event, from the drawn time on */
        f.on = rand_on(r);
        if (sim_rng_below(r, 100) < 30)
            f.node = 0; /* whichever member emits it first */
    }
    add_fault(out, &f);
    note(out, "insert");
    return true;
}

static bool mut_drop(struct sim_rng *r, const struct xp_entry *p, struct xp_sched *out)
{
    int n = p->n_faults + out->d.n_add;
    if (n == 0)
        return false;
    int i = (int)sim_rng_below(r, (uint64_t)n);
    if (i >= p->n_faults) {
        remove_added(out, i - p->n_faults);
        note(out, "drop-added");
        return true;
    }
    int64_t ord = p->faults[i].ordinal;
    if (ord > RUN_ADDED_BASE)
        return false; /* an added fault of the parent: dropped from add_faults above */
    scn_directive_skip(&out->d, &ord, 1);
    note(out, "drop");
    return true;
}

static int64_t clamp_at(const struct xp_entry *p, int64_t at)
{
    return FL_MIN(FL_MAX(at, p->phase_from), p->phase_to);
}

static bool mut_move(struct sim_rng *r, const struct xp_entry *p, struct xp_sched *out)
{
    int64_t shift =
        sim_rng_range(r, -2 * p->election_ns / FL_MS, 2 * p->election_ns / FL_MS) * FL_MS;
    int movable[256], k = 0;
    for (int i = 0; i < p->n_faults && k < 256; i++)
        if (p->faults[i].kind >= 0 && p->faults[i].undo_ns > p->faults[i].at_ns &&
            p->faults[i].ordinal < RUN_ADDED_BASE)
            movable[k++] = i;
    int n = k + out->d.n_add;
    if (n == 0)
        return false;
    int i = (int)sim_rng_below(r, (uint64_t)n);
    if (i >= k) {
        struct run_added_fault *f = &out->d.add[i - k];
        f->at_ns = clamp_at(p, f->at_ns + shift);
        note(out, "move-added");
        return true;
    }
    const struct xp_fault *x = &p->faults[movable[i]];
    if (out->d.n_add >= XP_ADDED_MAX)
        return false;
    scn_directive_skip(&out->d, &x->ordinal, 1);
    struct run_added_fault f = {.kind = x->kind,
                                .node = x->node,
                                .at_ns = clamp_at(p, x->at_ns + shift),
                                .for_ns = x->undo_ns - x->at_ns};
    add_fault(out, &f);
    note(out, "move");
    return true;
}

static bool mut_retime(struct sim_rng *r, const struct xp_entry *p, struct xp_sched *out)
{
    if (out->d.n_add == 0)
        return false;
    struct run_added_fault *f = &out->d.add[sim_rng_below(r, (uint64_t)out->d.n_add)];
    if (sim_rng_below(r, 2) == 0) {
        int64_t pct = sim_rng_range(r, 25, 400);
        f->for_ns = FL_MAX(FL_MS, f->for_ns / 100 * pct / FL_MS * FL_MS);
        note(out, "retime-len");
    } else {
        f->at_ns = clamp_at(p, f->at_ns + sim_rng_range(r, -200, 200) * FL_MS);
        note(out, "retime-at");
    }
    return true;
}

static bool mut_reseed(struct sim_rng *r, struct xp_sched *out)
{
    out->d.reseeded = true;
    out->d.reseed = sim_rng_below(r, UINT64_C(1) << 40);
    free(out->d.skip_faults);
    out->d.skip_faults = NULL;
    out->d.n_skip = 0;
    note(out, "reseed");
    return true;
}

void xp_aim(struct sim_rng *r, const struct xp_entry *parent, int which, struct xp_sched *out)
{
    xp_sched_copy(out, &parent->s);
    snprintf(out->how, sizeof out->how, "run %d:", parent->id);
    if (which < 0 || which >= parent->n_risky || out->d.n_add >= XP_ADDED_MAX) {
        mut_reseed(r, out);
        return;
    }
    const struct xp_risky *k = &parent->risky[which];
    static const int kinds[] = {RUN_ADD_KILL,    RUN_ADD_KILL,    RUN_ADD_POWER, RUN_ADD_CRASH_SAVE,
                                RUN_ADD_ISOLATE, RUN_ADD_ISOLATE, RUN_ADD_PAUSE};
    /* from up to half an election timeout before it: the same moment of the run, which a
     * fault placed earlier moves by a little; never before the fault phase (a risky
     * moment before it, e.g. the first election, waits for its next occurrence in the
     * phase: a fault before it breaks what the scenario expects of its quiet start,
     * such as "a leader is elected") */
    int64_t before = sim_rng_range(r, 0, FL_MAX(1, parent->election_ns / FL_MS / 2)) * FL_MS;
    struct run_added_fault f = {
        .kind = kinds[sim_rng_below(r, FL_ARRAY_LEN(kinds))],
        .node = k->node > 0 && sim_rng_below(r, 100) < 70
                    ? k->node
                    : (int)sim_rng_range(r, 1, FL_MAX(1, parent->nodes)),
        .at_ns = FL_MAX(FL_MAX(FL_MS, parent->phase_from), k->at_ns - before),
        .for_ns = rand_len(r, parent),
        .on = k->on,
    };
    if (f.on && f.node != k->node)
        f.node = 0; /* whichever member emits it first */
    add_fault(out, &f);
    note(out, "aim");
}

static int lanes_in(unsigned m)
{
    int k = 0;
    for (; m; m &= m - 1)
        k++;
    return k;
}

bool xp_thin(struct sim_rng *r, const struct xp_entry *parent, struct xp_sched *out)
{
    unsigned bits[32];
    int n = 0;
    for (int i = 0; i < 32; i++)
        if (parent->lanes & (1u << i))
            bits[n++] = 1u << i;
    if (n < 2)
        return false;
    unsigned keep = 0;
    if (sim_rng_below(r, 2) == 0) {
        keep = bits[sim_rng_below(r, (uint64_t)n)];
    } else {
        /* each lane kept at even odds, at least one dropped and one kept */
        while (!keep || keep == parent->lanes) {
            keep = 0;
            for (int i = 0; i < n; i++)
                keep |= sim_rng_below(r, 2) ? bits[i] : 0;
        }
    }
    xp_sched_copy(out, &parent->s);
    out->d.lanes = keep;
    /* the ordinals of the lanes kept may move: nothing recorded is dropped */
    free(out->d.skip_faults);
    out->d.skip_faults = NULL;
    out->d.n_skip = 0;
    snprintf(out->how, sizeof out->how, "run %d: thin %d of %d lanes", parent->id, lanes_in(keep),
             n);
    return true;
}

int xp_ablate(const struct xp_entry *parent, struct xp_sched *out, int max)
{
    int n = 0;
    if (lanes_in(parent->lanes) < 2)
        return 0;
    for (int i = 0; i < 32 && n < max; i++) {
        unsigned bit = 1u << i;
        if (!(parent->lanes & bit))
            continue;
        struct xp_sched *o = &out[n++];
        xp_sched_init(o);
        xp_sched_copy(o, &parent->s);
        o->d.lanes = bit;
        free(o->d.skip_faults);
        o->d.skip_faults = NULL;
        o->d.n_skip = 0;
        snprintf(o->how, sizeof o->how, "run %d: ablate %s", parent->id, run_lane_name(bit));
    }
    return n;
}

uint64_t xp_fault_seed(const struct xp_sched *s)
{
    return s->d.reseeded ? s->d.reseed : s->seed;
}

/* out's faults: drawn from fault_seed, no recorded fault dropped (the ordinals name
 * other faults in another world or mix), the added ones kept. */
static void faults_from(struct xp_sched *out, uint64_t fault_seed)
{
    out->d.reseeded = true;
    out->d.reseed = fault_seed;
    free(out->d.skip_faults);
    out->d.skip_faults = NULL;
    out->d.n_skip = 0;
}

void xp_reworld(const struct xp_entry *parent, uint64_t seed, struct xp_sched *out)
{
    xp_sched_copy(out, &parent->s);
    out->seed = seed;
    faults_from(out, xp_fault_seed(&parent->s));
    snprintf(out->how, sizeof out->how, "run %d: reworld", parent->id);
}

void xp_cross(const struct xp_entry *a, const struct xp_entry *b, struct xp_sched *out)
{
    xp_sched_copy(out, &a->s);
    faults_from(out, xp_fault_seed(&b->s));
    for (int i = 0; i < b->s.d.n_add; i++)
        add_fault(out, &b->s.d.add[i]);
    snprintf(out->how, sizeof out->how, "run %d x run %d: cross", a->id, b->id);
}

void xp_mutate(struct sim_rng *r, const struct xp_entry *parent, struct xp_sched *out)
{
    xp_sched_copy(out, &parent->s);
    snprintf(out->how, sizeof out->how, "run %d:", parent->id);
    int want = (int)sim_rng_range(r, 1, 3), done = 0;
    bool reseeded = false;
    for (int tries = 0; done < want && tries < 16; tries++) {
        /* insert 4, drop 2, move 2, retime 2, reseed 1; after a reseed the parent's
         * ordinals name other faults: no drop or move of recorded ones then */
        uint64_t x = sim_rng_below(r, 11);
        if (reseeded && x >= 4 && x < 8)
            x = 0;
        bool ok = x < 4    ? mut_insert(r, parent, out)
                  : x < 6  ? mut_drop(r, parent, out)
                  : x < 8  ? mut_move(r, parent, out)
                  : x < 10 ? mut_retime(r, parent, out)
                           : (reseeded = mut_reseed(r, out));
        done += ok;
    }
    if (!done)
        mut_reseed(r, out);
}
