/*
 * gen.h: a generator of random histories for testing and benchmarking the checkers.
 *
 * It executes an etcd-like key-value store (revisions, create/mod revision, version)
 * sequentially: operation i takes effect at time 10*i inside its [call, return]
 * window, clients are sequential, some outcomes are unknown (no answer; the write
 * took effect or not) or failed (surely not applied), and watches receive every
 * matching change from their start revision, grouped per revision into responses,
 * with progress notifications. The unmutated history is linearizable and every
 * watch guarantee holds. A mutation then breaks exactly one thing, and the test knows
 * which checker (and which guarantee) must name it.
 *
 * Pure and deterministic: a 64-bit integer generator seeded by the caller.
 */
#ifndef FL_CHK_GEN_H
#define FL_CHK_GEN_H

#include "checkers/checkers.h"

enum chk_gen_mutation {
    CHK_MUT_NONE = 0,
    CHK_MUT_STALE_READ,     /* a read served at an old revision after a newer write returned */
    CHK_MUT_LOST_WRITE,     /* a later read does not see an acknowledged write */
    CHK_MUT_REORDER_WRITES, /* two sequential writes swap revisions */
    CHK_MUT_DUP_EVENT,      /* a watch event delivered twice          -> unique */
    CHK_MUT_DROP_EVENT,     /* a watch event dropped                  -> reliable */
    CHK_MUT_SWAP_EVENTS,    /* two events of different revisions swap -> ordered */
    CHK_MUT_FOREIGN_EVENT,  /* an event outside the watched range     -> filter */
    CHK_MUT_SPLIT_REVISION, /* a revision's events over two responses -> atomic */
    CHK_MUT_BAD_PROGRESS,   /* progress notification below an event   -> bookmarkable */
    CHK_MUT_LATE_START,     /* a watch from rev R starts later        -> resumable */
    CHK_MUT_BAD_IS_CREATE,  /* create_rev of an update = mod_rev      -> is_create */
    CHK_MUT_BAD_PREV_KV,    /* a wrong prev value                     -> prev_kv */
    CHK_MUT_COUNT
};
const char *chk_gen_mutation_name(int m);
/* The guarantee a watch mutation must break (-1 for linearizability mutations). */
int chk_gen_mutation_guarantee(int m);

struct chk_gen_opts {
    uint64_t seed;
    uint32_t ops;        /* operation slots */
    uint32_t clients;    /* >= 1 */
    uint32_t keys;       /* >= 1 */
    uint32_t watches;    /* whole-range and single-key watches */
    uint32_t unknown_pm; /* per mille of ops with unknown outcome */
    uint32_t fail_pm;    /* per mille of ops that fail (not applied) */
    bool txn;            /* cas-style txns */
    bool deletes;        /* deletes and whole-range reads */
    uint32_t window;     /* max call/return distance from the effect time (< 10*clients) */
    /* per mille of acknowledged single-key puts/deletes made by something outside the
     * history (as a lease expiry is): applied, seen by the watches, not emitted as ops.
     * Non-zero: watch 1 covers every key from revision 1 and revisions_complete is
     * false. */
    uint32_t outside_pm;
    bool full_watch; /* watch 1 covers every key from revision 1 (as with outside_pm) */
};
void chk_gen_opts_default(struct chk_gen_opts *o, uint64_t seed);

/*
 * Generates into h (initialised, not finished; finished on success, with
 * revisions_complete set) and applies mutation. Returns FL_OK, or FL_ENOENT when this history
 * offers no place for the mutation (try another seed).
 */
int chk_gen_history(const struct chk_gen_opts *o, int mutation, struct chk_history *h);

#endif
