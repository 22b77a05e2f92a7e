/*
 * explore.h: what cmd_explore.c (the search loop, runs, findings, output) and
 * explore_mutate.c (schedules, the corpus, mutations) share. Nothing else uses it.
 *
 * A schedule is a seed plus a shrink{} directive over the base scenario (scn.h
 * scn_directive): skip_faults drops faults by ordinal, add_faults inserts faults at
 * fixed times, reseed redraws the swarm's fault mix. Written in front of line 1 of the
 * scenario, it is a plain Lua file that `faultline run FILE --seed N` replays.
 */
#ifndef FL_EXPLORE_H
#define FL_EXPLORE_H

#include "harness/lua/scn.h"
#include "harness/sim/sim.h"

#include <jansson.h>

#define XP_ADDED_MAX 12 /* added faults per schedule */

/* A set of 64-bit hashes with how many runs reached each (open addressing, 0 empty). */
struct xp_map {
    uint64_t *keys;
    uint32_t *hits;
    size_t cap, n;
};

struct xp_sched {
    uint64_t seed;
    struct scn_directive d;
    char how[160]; /* "fresh", or the parent and the mutations */
};

/* A recorded fault of a corpus entry's run that a mutation may drop or move. */
struct xp_fault {
    int64_t ordinal;
    int64_t at_ns, undo_ns; /* undo_ns: its restart/resume; 0 when none seen */
    int kind;               /* RUN_ADD_* it can be moved as; -1 when it cannot */
    int node;
};

/* A risky situation its run reached (run_coverage.c "risky"): the explorer aims faults
 * at it (xp_aim). */
struct xp_risky {
    uint64_t what; /* the hash of its name */
    char name[40];
    int64_t at_ns;
    int node;
    int on; /* 0, or 1 + the srv_hook_kind a fault can wait for */
};

struct xp_entry {
    struct xp_sched s;
    int id;                       /* the run number that made it (from 1) */
    int64_t phase_from, phase_to; /* the fault phase: first ordinal .. heal_all (ns) */
    int nodes;
    int64_t election_ns;
    struct xp_fault *faults;
    int n_faults;
    int new_sigs;    /* signatures and features it reached first */
    uint64_t *feats; /* every feature its run reached, owned */
    int n_feats;
    int picked; /* times chosen as a parent */
    struct xp_risky *risky;
    int n_risky;
    unsigned lanes; /* the swarm's fault lanes its run drew (RUN_LANE_*; 0: no swarm) */
    bool ablated;   /* its lanes were ablated (explore_run.c refill_queue) */
};

struct xp_args {
    const char *scenario;
    int runs;
    uint64_t seed;
    const char **bugs;
    int bug_count;
    int jobs;
    bool json, keep_going;
    const char *out;
    int shrink_runs;
    double timeout_s;
    char self[4096];
};

/* One finding: a failing run confirmed without the switch, shrunk and written. */
struct xp_finding {
    int run;
    char *file, *replay, *violation, *how;
    uint64_t seed;
    bool shrunk;
};

/* What the exploration of one bug (or of none) found. */
struct xp_row {
    const char *bug; /* NULL: no switch */
    int runs;        /* schedules run, up to the first finding (or all) */
    int executed;    /* every run, confirmations and batch leftovers included */
    int confirm_runs, errors, corpus, fresh, mutants;
    size_t signatures, features;
    size_t edges;        /* code edges reached (an explore build; 0 otherwise) */
    size_t risky;        /* kinds of risky situation reached */
    int aimed;           /* schedules made by aiming a fault at a risky situation */
    int thinned;         /* schedules made by thinning an entry's fault lanes (xp_thin) */
    int ablated;         /* schedules made by ablating a rare entry's lanes (xp_ablate) */
    int focused;         /* fresh seeds with one fault lane, drawn by the lane bandit */
    int corpus_by_edges; /* corpus entries kept for a new code edge alone */
    int *false_alarms, n_false_alarms;
    struct xp_finding *found;
    int n_found;
    uint64_t *fresh_seeds; /* the fresh world seeds drawn, in order (fresh runs, reworlds) */
    int n_fresh_seeds;
    /* the lane bandit at the end: by lane, the runs that drew it, their mean reward */
    uint32_t lane_runs[RUN_LANE_COUNT];
    uint64_t lane_mean[RUN_LANE_COUNT];
};

struct xp {
    const struct xp_args *a;
    struct xp_row *row;
    struct sim_rng rng;
    /* the world seeds of fresh runs and reworlds: a stream of their own, derived from
     * --seed (explore_run.c fresh_seed), so that explore seeds draw disjoint worlds */
    struct sim_rng fresh;
    char dir[4096];
    const char *body; /* the scenario text */
    size_t body_len;
    /* signatures, features and (feature, count bucket) pairs seen, with their runs;
     * code edges (an explore build) and (edge, count bucket) pairs likewise */
    struct xp_map sigs, feats, pairs, edges, edge_pairs;
    struct xp_map risky; /* risky situations (their names' hashes), by runs that reached them */
    struct xp_entry *corpus;
    int n_corpus;
    /* schedules made ahead of the batches (xp_ablate), run before any other */
    struct xp_sched queue[32];
    int q_head, q_len;
    struct xp_map ablated; /* rare risky kinds, by entries ablated for them */
    /* the lane bandit (explore_run.c pick_lane): by lane, the runs that drew it and the
     * rarity of the risky situations they reached, shared among their lanes */
    uint32_t lane_runs[RUN_LANE_COUNT];
    uint64_t lane_reward[RUN_LANE_COUNT];
    bool stop;
};

void xp_sched_init(struct xp_sched *s);
void xp_sched_close(struct xp_sched *s);
void xp_sched_copy(struct xp_sched *dst, const struct xp_sched *src);

/* Fills e (its schedule copied from s) from its run's --json summary. */
void xp_entry_from_summary(struct xp_entry *e, const struct xp_sched *s, const json_t *sum, int id);
void xp_entry_close(struct xp_entry *e);

/* Makes out a mutant of parent: one to three of drop, insert, move, retime and reseed,
 * every choice drawn from r. */
void xp_mutate(struct sim_rng *r, const struct xp_entry *parent, struct xp_sched *out);

/* Makes out a mutant of parent with one fault aimed at its risky situation `which`
 * (an index into parent->risky): inserted a little before it, on its member or any,
 * waiting for its node event where it has one, and firing right after it. */
void xp_aim(struct sim_rng *r, const struct xp_entry *parent, int which, struct xp_sched *out);

/* Makes out the parent's schedule with a thinner fault mix: only some of the lanes its
 * run drew (shrink{ lanes }), one of them half the time, each kept lane with its own
 * draws; false (out untouched) when the parent drew fewer than two lanes. */
bool xp_thin(struct sim_rng *r, const struct xp_entry *parent, struct xp_sched *out);

/* Makes out[i] the parent's schedule with only its i-th fault lane (lane ablation: which
 * lane of a run brings it to a rare situation); returns how many (at most max, 0 when
 * the parent drew fewer than two lanes). out[] is initialised here. */
int xp_ablate(const struct xp_entry *parent, struct xp_sched *out, int max);

/* The seed a schedule's swarm fault mix is drawn from (its reseed, else its seed). */
uint64_t xp_fault_seed(const struct xp_sched *s);

/* Makes out the parent's fault mix and added faults over another world: seed (a fresh
 * seed's cluster, clients and workload), the faults drawn from the parent's fault seed. */
void xp_reworld(const struct xp_entry *parent, uint64_t seed, struct xp_sched *out);

/* Makes out the crossover of two parents: a's world (its seed), b's fault mix (its
 * fault seed), the faults a and b added (a's first, up to XP_ADDED_MAX). */
void xp_cross(const struct xp_entry *a, const struct xp_entry *b, struct xp_sched *out);

/* Explores a->scenario (its text body/len) with row->bug on (NULL: none) until the
 * first finding (every one with --keep-going) or a->runs runs; fills row. Returns 0,
 * or an exit code (3) when runs could not be made. (explore_run.c) */
int xp_explore(const struct xp_args *a, const char *body, size_t len, struct xp_row *row);
void xp_row_close(struct xp_row *row);

#endif
