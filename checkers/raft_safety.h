/*
 * raft_safety.h: the online Raft safety checker (DESIGN §3.7). Pure: no I/O.
 *
 * The driver (nodes/server or the run loop) feeds it, after every step, what each
 * node did: it became leader at a term, it appended (or overwrote) log entries, it
 * lost its unsynced tail in a crash, it installed a snapshot, its commit index
 * moved, it applied an entry. The checker keeps a hash chain over every node's log
 * (chain(i) = mix(chain(i-1), term(i), hash(i))) and one global table per index, and
 * verifies Raft's safety properties (Raft paper Figure 3):
 *
 *   election_safety     at most one leader per term;
 *   leader_append_only  a leader never overwrites or truncates its own log in its term;
 *   log_matching        two logs with an entry of the same index and term hold the same
 *                       prefix up to it (same chain value);
 *   leader_completeness / committed entries are never lost or changed: no node ever
 *                       holds, at a committed index, an entry other than the committed
 *                       one, and a new leader holds every committed entry;
 *   state_machine_safety every member applies the same entry at each index.
 *
 * The first violation is kept as a structured description (JSON text) for the
 * `checks` table; feeding continues to work after it. Memory: per index one small
 * record (term, chain, data hash, flags) plus, per node, its log view above the
 * highest commit seen; conflicting uncommitted entries are kept only until the index
 * commits.
 */
#ifndef FL_CHECKERS_RAFT_SAFETY_H
#define FL_CHECKERS_RAFT_SAFETY_H

#include "harness/common/common.h"

struct raft_safety;

struct raft_safety *raft_safety_new(void);
void raft_safety_free(struct raft_safety *c);

/* Every feed returns true while no violation has been seen (by this or any earlier
 * call), false once one has. node ids are non-zero. data_hash is any 64-bit hash of
 * the entry's data and type (e.g. fl_hash64), the same function for every node. */

/* node became leader at term. */
bool raft_safety_leader(struct raft_safety *c, uint64_t node, uint64_t term);
/* node is no longer leader (stepped down, crashed). */
bool raft_safety_not_leader(struct raft_safety *c, uint64_t node);
/* node holds (index, term, data_hash) in its log. index ≤ the node's last index means
 * the node overwrote its suffix from index on (a truncation); index must be at most
 * last + 1 (FL_ASSERT: a gap is the driver's bug). */
bool raft_safety_append(struct raft_safety *c, uint64_t node, uint64_t index, uint64_t term,
                        uint64_t data_hash);
/* node's log now ends at last_index after a crash lost its unsynced tail (not a
 * violation by itself; the node's leadership ends too). */
bool raft_safety_restart(struct raft_safety *c, uint64_t node, uint64_t last_index);
/* node replaced its log by a snapshot covering everything up to (index, term). */
bool raft_safety_snapshot(struct raft_safety *c, uint64_t node, uint64_t index, uint64_t term);
/* node's commit index is now commit (never decreases for a running node). */
bool raft_safety_commit(struct raft_safety *c, uint64_t node, uint64_t commit);
/* node applied (index, term, data_hash) to its state machine. */
bool raft_safety_apply(struct raft_safety *c, uint64_t node, uint64_t index, uint64_t term,
                       uint64_t data_hash);

/* node left the cluster (removed member, destroyed process): it no longer holds back
 * the trimming of old records. Feeding it again brings it back. */
void raft_safety_forget(struct raft_safety *c, uint64_t node);

/* Whether a violation was found. */
bool raft_safety_failed(const struct raft_safety *c);
/* The first violation as one JSON object, e.g.
 * {"property":"election_safety","term":4,"node":2,"other_node":1,"detail":"..."},
 * or "null" when none. Owned by c, valid until the next feed or free. */
const char *raft_safety_violation_json(const struct raft_safety *c);
/* The property name of the first violation ("election_safety", "leader_append_only",
 * "log_matching", "committed_lost", "state_machine_safety"), or NULL. */
const char *raft_safety_violation_property(const struct raft_safety *c);
/* Counters for the `checks` detail: {"leaders":N,"appends":N,"commits":N,"applies":N,
 * "max_commit":N,"records":N} (records: per-index records held now). Written into out
 * (reset first). */
void raft_safety_summary_json(const struct raft_safety *c, struct fl_buf *out);

#endif
