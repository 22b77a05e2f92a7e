/*
 * chk_int.h: internals shared by the files of the checkers module: the interner, the
 * etcd key-value model both linearizability engines step, and the engines' entry
 * points. Not a public interface.
 */
#ifndef FL_CHK_INT_H
#define FL_CHK_INT_H

/* Internal to checkers: compiled only into fl_checkers (which defines FL_INTERNAL_checkers)
 * and into the white-box tests that declare it (tests/CMakeLists.txt). */
#ifndef FL_INTERNAL_checkers
#error "checkers/chk_int.h is internal to checkers: include its public header instead"
#endif

#include "checkers/checkers.h"

int32_t chk_intern_add(struct chk_intern *t, const void *p, size_t n);
const uint8_t *chk_intern_bytes(const struct chk_intern *t, int32_t id, size_t *n);

/* One key's state: value CHK_NIL when the key is absent (then the rest is 0). */
struct chk_kent {
    int32_t value;
    int32_t pad;
    int64_t version, create_rev, mod_rev;
};

/* The whole model state: the current revision, the compacted revision and one entry
 * per key slot. The state is a plain byte block so the search can hash and copy it. */
struct chk_kstate {
    int64_t rev;
    int64_t compact_rev;
    struct chk_kent ent[];
};

static inline size_t chk_kstate_size(uint32_t slots)
{
    return sizeof(struct chk_kstate) + (size_t)slots * sizeof(struct chk_kent);
}

struct chk_change_buf {
    struct chk_change *v;
    uint32_t count, cap;
};

/*
 * How one step is judged.
 *   check_revs   compare header revisions and kv create/mod revisions (false when the
 *                history has none, or when the search is partitioned per key)
 *   slot         key id -> state slot (-1: key not in this partition); NULL: identity
 *   hist_exact   historical reads (range at req_rev) are evaluated against the state as
 *                given (engine 1 steps them at that revision); false: they are accepted
 *                unseen, as etcd's own model does
 *   changes      when non-NULL, every put/delete applied appends a change
 *   why          when non-NULL, a failed step writes one line saying why
 */
struct chk_model {
    struct chk_history *h;
    bool check_revs;
    const int32_t *slot;
    bool hist_exact;
    /* false: the history never observes versions or create/mod revisions, so the state
     * keeps only values (present keys get version = create = mod = 1) and the revision
     * does not advance unless check_revs; equal values then mean equal states, which is
     * what makes the search's cache effective. */
    bool plain_values;
    struct chk_append_memo *memo; /* may be NULL: append results, (prev, arg) -> value */
    /* Revisions may come from writes outside the history (!revisions_complete, with
     * check_revs): an acknowledged op whose header revision is above the state's makes
     * the state's revision jump to it (revision rev-1 for a write), and the revisions
     * jumped over take the content outside[] shows (changes by revision, from watch
     * events; a revision without entries changes no modelled key). Engine 1 reasons
     * the same way about a revision no op claims. */
    bool revs_open;
    const struct chk_change *outside;
    uint32_t outside_count;
    struct chk_change_buf *changes;
    char *why;
    size_t why_size;
};

/* The state st jumps from its revision to `to` (not below it) over revisions written
 * outside the history, taking what m->outside shows of them, as a step of an op answered
 * above st's revision does (m->revs_open): the state at a revision jumped over. */
void chk_model_jump(const struct chk_model *m, struct chk_kstate *st, int64_t to);

/* Memo of append results, so a search does not re-hash growing strings. */
struct chk_append_memo {
    uint64_t *keys; /* (prev + 2) << 32 | arg, 0 = empty */
    int32_t *vals;
    uint32_t mask, count;
};
void chk_append_memo_close(struct chk_append_memo *m);

/* Results of one step. */
struct chk_step {
    bool legal;
    bool wrote; /* the revision advanced */
};

/* Judges one historical range of a writing txn (sub s) against st, the state at the
 * revision it asks (engine 1 steps the txn itself at its own revision, where
 * chk_model_step accepts such a range unseen). False, with m->why, when it differs. */
bool chk_model_range_at(const struct chk_model *m, struct chk_kstate *st, const struct chk_sub *s);

/*
 * Applies op to st in place and judges it against its recorded outcome. An op with
 * status UNKNOWN (or without recorded results) is applied without judgement (always
 * legal). A FAIL op with a compaction/future-revision error is judged as that error.
 * The state is changed even when the step is illegal (callers that search copy first).
 */
struct chk_step chk_model_step(const struct chk_model *m, struct chk_kstate *st,
                               const struct chk_op *op);

/* The changes watch events show, one per (revision, key), by revision then key rank
 * (the first event of a (revision, key) wins), for chk_model.outside. Owned. */
struct chk_change *chk_outside_changes(const struct chk_history *h, uint32_t *count);

/* Does the key lie in [key, range_end)? */
bool chk_key_in_range(const struct chk_history *h, int32_t key, int32_t start, int32_t range_end);

/* Does op's recorded response say it wrote (a put, or a delete that removed keys, in the
 * branch it says it took)? Then a legal step of it advances the revision to its header
 * revision. */
bool chk_model_recorded_write(const struct chk_history *h, const struct chk_op *op);

/* Engines. Each fills verdict/engine/reason/detail/steps of out. */
int chk_lin_revision(struct chk_history *h, const struct chk_limits *lim,
                     struct chk_lin_result *out);
int chk_lin_search(struct chk_history *h, const struct chk_limits *lim, struct chk_lin_result *out);

/* A put's (key, value) shown applied at more distinct revisions (its response, watch
 * events, read results) than recorded ok/unknown ops write it: a duplicate
 * application. Sets out->verdict to CHK_FAIL, out->reason, and puts the violation
 * first in out->detail; returns whether it found one (see chk_dup.c). */
bool chk_dup_applications(const struct chk_history *h, struct chk_lin_result *out);

/* JSON helpers for explanations. */
json_t *chk_json_key(const struct chk_history *h, int32_t key);
json_t *chk_json_value(const struct chk_history *h, int32_t value);
json_t *chk_json_op(const struct chk_history *h, const struct chk_op *op);
/* A short text for an op: "put(k, v)", "get(k) -> v", "cas(k, a, b)". */
void chk_op_text(const struct chk_history *h, const struct chk_op *op, struct fl_buf *out);

#endif
