/*
 * kv_hash.h: the online corruption check of the `converge` checker (DESIGN §3.7). Pure:
 * no I/O.
 *
 * etcd's corruption check has every member compute HashKV at one revision and compares
 * the hashes: members that applied the same entries hold the same data at every
 * revision. Here every member reports, each time its store reaches a new revision (a
 * write applied, a snapshot installed, a restart), its state hash at that revision
 * (mvcc_state_hash, kept up to date in O(1) per write), and the checker compares it
 * with the first hash any member of the cluster reported at that revision. So members
 * are compared at every revision they share, not only at the end of a run, and a
 * divergence is found at the revision where it happened, with the two members and the
 * simulated time.
 *
 * Memory: one small record per revision, trimmed below the lowest revision a member
 * still reports from (minus a slack); a member that comes back below the trimmed floor
 * (a restart from an old snapshot) is compared again from the floor on.
 */
#ifndef FL_CHECKERS_KV_HASH_H
#define FL_CHECKERS_KV_HASH_H

#include "harness/common/common.h"

struct kvhash;

struct kvhash *kvhash_new(void);
void kvhash_free(struct kvhash *k);

/* member's store is at revision rev (≥ 1) with state hash hash, at simulated time
 * at_ns. Returns false once a mismatch was seen (by this or an earlier call). */
bool kvhash_feed(struct kvhash *k, uint64_t member, int64_t rev, uint64_t hash, int64_t at_ns);
/* member left the cluster or its process died: it no longer holds the trimming floor
 * (feeding it again brings it back). */
void kvhash_forget(struct kvhash *k, uint64_t member);

bool kvhash_failed(const struct kvhash *k);
/* Reports compared with an earlier report of the same revision so far. */
uint64_t kvhash_compared(const struct kvhash *k);
/* The first mismatch as one JSON object: {"revision":R,"member":A,"hash":"..",
 * "other_member":B,"other_hash":"..","at_ns":T,"other_at_ns":T2}, or "null". Owned by
 * k, valid until the next feed or free. */
const char *kvhash_violation_json(const struct kvhash *k);
/* {"compared":N,"revisions":N,"below_floor":N}: reports compared with an earlier one,
 * distinct revisions seen, reports older than the trimmed floor (not compared). Written
 * into out (reset first). */
void kvhash_summary_json(const struct kvhash *k, struct fl_buf *out);

#endif
