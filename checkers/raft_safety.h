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
 * and, for each member over its life (raft_safety_votes.c):
 *
 *   term_durability     a restarted member never has a lower term than a message it
 *                       sent before (pre-votes aside: they carry the next term);
 *   vote_durability     nor another vote (or none) in a term it had voted in;
 *   double_vote         it never votes for two candidates in one term;
 *   election_quorum     a leader was elected by the votes of a quorum of the voters of
 *                       its configuration, itself included ...
 *   learner_vote        ... and never needed a learner's vote for it (learners never vote);
 *   commit_regressed    its commit index never goes back while it runs ...
 *   commit_durability   ... nor below its last durable (fsynced) commit across a restart;
 *   applied_regressed / apply_gap / apply_uncommitted: it applies each index once, in
 *                       order, without a gap, and only up to the commit index it has saved
 *                       (the Ready contract: persist, then apply; etcd#14370 applied
 *                       first); a restart resumes at the index its state machine was
 *                       restored to;
 *   conf_after_restart  the configuration a restarted member has in force is the one
 *                       its log and snapshot imply (modelled here from the conf entries
 *                       and snapshots fed, independently of the Raft core);
 *   commit_quorum       every index a leader declares committed is held, in their
 *                       persisted logs, by a quorum of the voters of the configuration
 *                       in force on it (raft_safety_leader_commit);
 *   commit_electable    ... and no voter without it can then be elected by a quorum of
 *                       those voters: its log is behind theirs (Leader Completeness at
 *                       the commit, Raft §5.4; Figure 8's old-term commit breaks it).
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
 * violation by itself; the node's leadership ends too). Its applied index is unknown
 * until its next apply (raft_safety_recovered tells more and checks more). */
bool raft_safety_restart(struct raft_safety *c, uint64_t node, uint64_t last_index);
/* node replaced its log by a snapshot covering everything up to (index, term). */
bool raft_safety_snapshot(struct raft_safety *c, uint64_t node, uint64_t index, uint64_t term);
/* node's commit index is now commit (never decreases for a running node: a lower one
 * is commit_regressed). */
bool raft_safety_commit(struct raft_safety *c, uint64_t node, uint64_t commit);
/* node applied (index, term, data_hash) to its state machine: the index after its
 * last applied one, and committed. */
bool raft_safety_apply(struct raft_safety *c, uint64_t node, uint64_t index, uint64_t term,
                       uint64_t data_hash);

/* node left the cluster (removed member, destroyed process): it no longer holds back
 * the trimming of old records. Feeding it again brings it back. */
void raft_safety_forget(struct raft_safety *c, uint64_t node);

/* ---- terms, votes, durability and configurations (raft_safety_votes.c) ---------- */

/* Members a configuration may hold (the checker's own bound, = the Raft core's). */
#define RAFT_SAFETY_CONF_MAX 16

/* node sent a message of this term (call it for every message that leaves, except
 * pre-votes and messages without a term). vote_for is non-zero when the message is a
 * granted vote for candidate vote_for, or node's own vote request (vote_for == node). */
bool raft_safety_sent(struct raft_safety *c, uint64_t node, uint64_t term, uint64_t vote_for);
/* Everything fed for node so far is durable (its log and hard state were fsynced). */
void raft_safety_synced(struct raft_safety *c, uint64_t node);

/* Configuration change kinds, as the Raft core numbers them (raft.h enum raft_cc_type). */
enum raft_safety_cc {
    RAFT_SAFETY_CC_ADD_VOTER = 0,
    RAFT_SAFETY_CC_ADD_LEARNER = 1,
    RAFT_SAFETY_CC_PROMOTE = 2,
    RAFT_SAFETY_CC_REMOVE = 3,
};
/* A configuration: voters and learners (any order, disjoint). */
struct raft_safety_conf {
    const uint64_t *voters;
    size_t n_voters;
    const uint64_t *learners;
    size_t n_learners;
};
/* The entry node just appended at index (raft_safety_append first) is a configuration
 * change of kind `type` for `member`. In force from index on, as the design says; a
 * change that does not fit (adding a present member, promoting a non-learner, removing
 * an absent one, a second learner, more than RAFT_SAFETY_CONF_MAX members) changes
 * nothing. */
bool raft_safety_conf_entry(struct raft_safety *c, uint64_t node, uint64_t index, int type,
                            uint64_t member);
/* raft_safety_snapshot with the configuration the snapshot carries. */
bool raft_safety_snapshot_conf(struct raft_safety *c, uint64_t node, uint64_t index, uint64_t term,
                               const struct raft_safety_conf *conf);
/* node became leader of term with configuration conf in force (call it before
 * raft_safety_leader, so that a leader without a quorum is reported as such rather than
 * by what follows from it): the votes sent to it in term must make a quorum of conf's
 * voters. */
bool raft_safety_elected(struct raft_safety *c, uint64_t node, uint64_t term,
                         const struct raft_safety_conf *conf);

/* node, leading term, moved its commit index to commit (fed after raft_safety_commit;
 * ignored unless raft_safety_leader fed node as the leader of term before): the entry there must be
 * held, in the persisted logs fed so far, by a quorum of the voters of the configuration the leader
 * had in force when it decided the commit (joint configurations are not used by this
 * core, which changes one member at a time). That is the configuration at some index
 * between the larger of commit and the node's last index at its previous leader commit
 * of this term, and its last index now: a conf entry fed in the same ready may have been
 * appended after the decision, so any of those configurations holding a quorum passes — the leader
 * itself counted only when it is one of them (commit_quorum: Raft §5.3, thesis §4.2.2; it catches a
 * leader that counts an acknowledgement it never got, or itself where it is not a voter). Holding
 * is judged by the hash chain, so the whole prefix is held as well. A member whose view cannot tell
 * counts as holding. */
bool raft_safety_leader_commit(struct raft_safety *c, uint64_t node, uint64_t term,
                               uint64_t commit);

/* One entry of the log a member recovered from its disk. */
struct raft_safety_entry {
    uint64_t index, term, data_hash;
    bool conf_change;     /* a configuration change entry ... */
    int conf_type;        /* ... of this kind (raft_safety_conf_entry's type) ... */
    uint64_t conf_member; /* ... for this member */
};

/* What a member recovered from its disk at a restart. */
struct raft_safety_boot {
    uint64_t term, vote, commit; /* hard state */
    uint64_t last_index;         /* last entry of its log */
    uint64_t applied;            /* index its state machine was restored to (its snapshot) */
    const struct raft_safety_conf *conf; /* configuration in force; NULL: not checked */
    /* The entries of its log (above its snapshot, ascending, the last at last_index);
     * NULL: not told. The disk may hold entries that were never fed: written (an
     * overwritten suffix too) but the member died before it fed them, e.g. killed while
     * paused after the fsync completed. */
    const struct raft_safety_entry *entries;
    size_t n_entries;
};
/* node restarted from its disk with b: the durability properties are checked; its view
 * then takes the entries of b where they differ from what was fed (as appends: checked
 * for log matching like any other), the configuration is checked against that view, and
 * the view continues from there (as raft_safety_restart, with its commit and applied
 * indexes known). */
bool raft_safety_recovered(struct raft_safety *c, uint64_t node, const struct raft_safety_boot *b);

/* ---- a feed as data (raft_safety_feed.c) ---------------------------------------
 * A checker made by raft_safety_new_recorder checks nothing: every feed above is handed,
 * as one struct raft_safety_feed, to its sink and answers true (no violation). A driver
 * whose members are separate processes (the live target, proc.h) records each member's
 * feeds that way, as text lines (raft_safety_feed_format), in one file in the order they
 * happened, and replays them into one real checker (raft_safety_feed_parse, then
 * raft_safety_replay). */
enum raft_safety_op {
    RAFT_SAFETY_OP_LEADER,        /* a[0] term */
    RAFT_SAFETY_OP_NOT_LEADER,    /* - */
    RAFT_SAFETY_OP_APPEND,        /* a[0] index, a[1] term, a[2] data hash */
    RAFT_SAFETY_OP_RESTART,       /* a[0] last index */
    RAFT_SAFETY_OP_SNAPSHOT,      /* a[0] index, a[1] term */
    RAFT_SAFETY_OP_COMMIT,        /* a[0] commit */
    RAFT_SAFETY_OP_APPLY,         /* a[0] index, a[1] term, a[2] data hash */
    RAFT_SAFETY_OP_FORGET,        /* - */
    RAFT_SAFETY_OP_SENT,          /* a[0] term, a[1] vote_for */
    RAFT_SAFETY_OP_SYNCED,        /* - */
    RAFT_SAFETY_OP_CONF_ENTRY,    /* a[0] index, a[1] type (as int64), a[2] member */
    RAFT_SAFETY_OP_SNAPSHOT_CONF, /* a[0] index, a[1] term, conf */
    RAFT_SAFETY_OP_ELECTED,       /* a[0] term, conf */
    RAFT_SAFETY_OP_LEADER_COMMIT, /* a[0] term, a[1] commit */
    RAFT_SAFETY_OP_RECOVERED,     /* a[0..4] term, vote, commit, last index, applied; conf
                                   * when has_conf */
    RAFT_SAFETY_OP_COUNT
};
struct raft_safety_feed {
    enum raft_safety_op op;
    uint64_t node;
    uint64_t a[5];
    bool has_conf;
    /* voters then learners; one more than a configuration may hold, so that one too
     * large to fit stays too large on replay */
    uint64_t ids[RAFT_SAFETY_CONF_MAX + 1];
    uint32_t n_voters, n_learners;
};
typedef void raft_safety_sink_fn(void *ud, const struct raft_safety_feed *f);
struct raft_safety *raft_safety_new_recorder(raft_safety_sink_fn *sink, void *ud);
/* Feeds f to c (a checker, or a recorder: then its sink gets f); the feed's answer. */
bool raft_safety_replay(struct raft_safety *c, const struct raft_safety_feed *f);
/* f as one line of text, appended to out without a newline: the op's name, the node and
 * the op's integers in decimal, then the configuration ("v" voters "l" learners), e.g.
 * "append 7 12 3 99" or "elected 7 3 v 7,8,9 l -". */
void raft_safety_feed_format(const struct raft_safety_feed *f, struct fl_buf *out);
/* The line (len bytes, no newline) back into *f; false when it is not one. */
bool raft_safety_feed_parse(const char *line, size_t len, struct raft_safety_feed *f);

/* Whether a violation was found. */
bool raft_safety_failed(const struct raft_safety *c);
/* The first violation as one JSON object, e.g.
 * {"property":"election_safety","term":4,"node":2,"other_node":1,"detail":"..."},
 * or "null" when none. Owned by c, valid until the next feed or free. */
const char *raft_safety_violation_json(const struct raft_safety *c);
/* The property name of the first violation ("election_safety", "leader_append_only",
 * "log_matching", "committed_lost", "state_machine_safety", or one of the names listed
 * at the top of this file), or NULL. */
const char *raft_safety_violation_property(const struct raft_safety *c);
/* Counters for the `checks` detail: {"leaders":N,"appends":N,"commits":N,"applies":N,
 * "max_commit":N,"records":N,"votes":N,"elections":N,"restarts":N,"conf_checks":N}
 * (records: per-index records held now; elections: leaders whose quorum was checked;
 * restarts: recoveries checked; conf_checks: configurations compared). Written into
 * out (reset first). */
void raft_safety_summary_json(const struct raft_safety *c, struct fl_buf *out);

#endif
