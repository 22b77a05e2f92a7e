/*
 * chk_rev_int.h: internals shared by the revision-order engine's files:
 * chk_revision.c (classification, retries, the verdict), chk_rev_replay.c (the
 * replay), chk_rev_time.c (real time, failed reads, explanation) and chk_gap.c
 * (placing operations of unknown outcome: reveals and gap filling).
 * Not a public interface.
 */
#ifndef FL_CHK_REV_INT_H
#define FL_CHK_REV_INT_H

/* Internal to checkers: compiled only into fl_checkers (which defines FL_INTERNAL_checkers)
 * and into the white-box tests that declare it (tests/CMakeLists.txt). */
#ifndef FL_INTERNAL_checkers
#error "checkers/chk_rev_int.h is internal to checkers: include its public header instead"
#endif

#include "checkers/chk_int.h"

enum { ROLE_NONE = 0, ROLE_WRITE, ROLE_READ, ROLE_TENT, ROLE_CAND, ROLE_PLACED, ROLE_FAILED };

#define VIOL_MAX      16
#define DECISIONS_MAX 64
#define ATTEMPTS_MAX  24

struct rv_viol {
    int kind; /* 0 value, 1 order, 2 duplicate revision */
    uint32_t op, other;
    int64_t rev;
    int64_t pos;
    char msg[200];
    json_t *state;
};

/* What reads saw of one key at one revision (for judging gap candidates). */
struct rv_obs {
    int32_t key;
    bool present;
    bool touch; /* something looked at the key; content unknown */
    int64_t at, mod, create, version;
    int32_t value; /* the value seen (CHK_NIL: absent), CHK_NOT_GIVEN when unknown */
};

/* A write of a key at a revision whose writer is known. */
struct rv_put {
    int32_t key;
    bool del; /* a delete (counted as a write, not as a put) */
    int64_t rev;
    int32_t value; /* the value written (CHK_NIL: a delete; CHK_NOT_GIVEN: an append) */
};

struct rv {
    struct chk_history *h;
    struct chk_lin_result *out;
    int64_t max_rev;
    uint8_t *role;
    int64_t *pos;   /* per op; INT64_MIN when not positioned */
    int32_t *claim; /* per revision: op index, -1 none */
    struct rv_viol viol[VIOL_MAX];
    uint32_t viol_count, viol_total;
    /* candidates (unknown writes) by (key, value) */
    struct cand_ent *cands;
    uint32_t cand_count;
    bool ambiguous;
    /* Acknowledged ops whose result does not say whether they wrote (a delete without
     * its count, a txn without its branch, a lease end) answered at a revision no
     * other op claims: tent_read judges them as reads there (the revision left to a
     * gap), else they are taken as its writers, tent_writes counting them. */
    bool tent_read;
    uint32_t tent_writes;
    bool cand_range; /* some unknown op writes a range (not in cands) */
    bool watch_obs;  /* watch events guided gap placements */
    int64_t ambiguous_rev;
    int64_t guess_min;      /* the lowest revision a guess placed an op at (0: none) */
    bool no_watch;          /* watch events reveal nothing in this run */
    uint32_t watch_reveals; /* unknown ops placed by a watch event */
    uint32_t gaps;
    struct rv_obs *obs;
    uint32_t obs_count, obs_cap;
    bool obs_built;
    struct rv_put *puts;
    uint32_t put_count, put_cap;
    uint32_t *obs_key, *put_key; /* per key: its first obs / put (keys + 1 entries) */
    uint32_t *cand_ops;          /* unknown writes still unplaced after the reveals, by call */
    uint32_t cand_op_count;
    /* Guessed gaps of this attempt (decision points) and the choices to take at them:
     * a replay that ends in a violation is retried with another choice at the last
     * decision before the violation, up to ATTEMPTS_MAX replays. */
    uint32_t ndecisions, nchoice;
    int64_t dec_rev[DECISIONS_MAX];
    uint32_t dec_count[DECISIONS_MAX];
    uint32_t choice[DECISIONS_MAX];
    int64_t *gapcount;    /* unclaimed revisions <= r, when obs_build ran */
    struct rv_put *xputs; /* puts of ops placed into gaps after obs_build */
    uint32_t xput_count, xput_cap;
    /* Watch put/delete events by (mod revision, key, watch): what a revision did to
     * the watched keys (empty when no_watch). */
    uint32_t *wev;
    uint32_t wev_count;
    /* per watch (h->watches order): the revisions its stream covered, from its first
     * delivered revision (its start revision when it named one) to its last (an event's
     * or a progress notification's); lo > hi when it delivered nothing. A revision in
     * there changed no key in the watch's range without an event of it (etcd delivers
     * every revision in order, resuming where it left off). Empty when no_watch. */
    int64_t *wcov_lo, *wcov_hi;
    /* per revision R: the earliest return of an acknowledged op ordered after write R
     * (an op called later cannot have written R); NULL when cand_count is 0 (nothing
     * reads it then) */
    int64_t *retmin;
};

struct cand_ent {
    int32_t key, value; /* value CHK_NIL: a delete of key */
    int64_t call_ns;
    uint32_t op;
};

struct rv_replay {
    struct chk_model m;
    struct chk_kstate *st;
    struct chk_kstate *tmp;
    size_t st_size;
    char why[200];
    int32_t *head, *next; /* reads bucketed by judged revision */
    int64_t *sufmin;      /* per revision: min return of ops positioned after 2r; NULL
                             when no unknown writer is left to place (cand_op_count 0:
                             gap filling, its only reader, has no candidate to bound) */
    int64_t guessed_rev;  /* the gap whose writer was guessed last */
};

/* A placement at rev that is a guess (another op, or no op, could have made rev). */
static inline void chk__rv_guess(struct rv *r, int64_t rev)
{
    if (!r->ambiguous)
        r->ambiguous_rev = rev;
    r->ambiguous = true;
    r->guess_min = r->guess_min ? FL_MIN(r->guess_min, rev) : rev;
}

int chk__rv_cand_cmp(const void *a, const void *b);
/* Records a violation (kind 0 value, 1 order, 2 duplicate revision) of op (other:
 * the op it conflicts with, or UINT32_MAX); keeps the first VIOL_MAX, counts all;
 * takes state (may be NULL). chk_revision.c. */
void chk__rv_viol_add(struct rv *r, int kind, uint32_t op, uint32_t other, int64_t rev, int64_t pos,
                      const char *msg, json_t *state);
/* Replays the writes in revision order, judging every read (chk_rev_replay.c). */
void chk__rv_replay(struct rv *r);
/* Sorts idx (op indexes, ascending) by call or return time, ties by op index
 * (chk_rev_time.c). */
void chk__rv_sort_ops(const struct chk_history *h, uint32_t *idx, uint32_t n, bool by_ret);
/* Real time: if A returned before B was called, pos(A) <= pos(B) (chk_rev_time.c). */
void chk__rv_realtime(struct rv *r);
/* Reads that failed as compacted: some recorded compaction must have reached them. */
void chk__rv_failed(struct rv *r);
/* The verdict's reason and JSON detail from the violations found. */
void chk__rv_explain(struct rv *r);
/* Builds r->wev (nothing when r->no_watch). */
void chk__rv_wev_build(struct rv *r);
/* The slice of r->wev with mod revision rev: [*lo, *hi). */
void chk__rv_wev_at(const struct rv *r, int64_t rev, uint32_t *lo, uint32_t *hi);
/* A revision no op claims whose watch events show what it did (a lease expiry, a
 * write from outside the history): applies the events to the state; returns how
 * many were applied. */
uint32_t chk__rv_apply_watch_gap(struct rv *r, struct rv_replay *p, int64_t g);
/* Places unknown-outcome ops that reads and watch events reveal. */
void chk__rv_reveal_all(struct rv *r);
/* Fills gap revision g (see chk_gap.c). */
void chk__rv_fill_gap(struct rv *r, struct rv_replay *p, int64_t g);
/* Sorts the n pairs (key[i], val[i]) by key, stably (chk_sort.c). */
void chk__sort_keyed(uint64_t *key, uint32_t *val, uint32_t n);
/* Sorts the n event indexes idx (events with mod_rev >= 0 and a key) by (mod revision,
 * key rank, watch id, index); false, idx unchanged, when revision and key rank do not
 * pack into 64 bits (chk_sort.c). */
bool chk__sort_wev(const struct chk_history *h, uint32_t *idx, uint32_t n);

#endif
