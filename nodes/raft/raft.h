/*
 * raft.h: the Raft consensus core of a faultline node (DESIGN §3.1, §3.4).
 *
 * A pure state machine in the etcd-raft "Ready" style. It never reads a clock, a
 * socket, a file or a random source of its own: its inputs are ticks (a logical
 * clock the driver advances at a fixed interval, e.g. one tick per heartbeat
 * interval, so election and heartbeat timeouts are counted in ticks), messages from
 * peers, proposals, configuration-change proposals, read-index requests and
 * leader-transfer requests. Its outputs are collected in a struct raft_ready:
 *
 *   1. hard state (term, vote, commit) and log entries to persist, and a snapshot
 *      received from the leader to persist and install;
 *   2. messages to send — the driver sends them only AFTER (1) is durable (written
 *      and fsynced), because votes and append acknowledgements promise durability;
 *   3. committed entries to apply, in index order, after (1);
 *   4. read states (linearizable reads that may be served once applied ≥ index);
 *   5. events (campaign, prevote, vote_granted, vote_rejected, leader, step_down,
 *      term, conf_change, snapshot_sent, snapshot_applied) for node_events.
 *
 * then the driver calls raft_advance. Randomised election timeouts come from a
 * xoshiro256** state seeded from raft_config.seed, so a run is deterministic.
 *
 * Membership follows the design document, NOT etcd-raft: a single-server change
 * takes effect as soon as its entry is APPENDED to a log (leader or follower); the
 * latest configuration entry in the log is the one in force; when a new leader
 * truncates a configuration entry the configuration rolls back to the previous one
 * (Raft thesis §4.1). At most one uncommitted configuration entry at a time. A
 * removed leader counts quorum without itself for the removal entry and later
 * ones, and steps down (sends no more heartbeats) once the removal commits.
 *
 * Memory: the core owns its log (entry data copied in). A struct raft_ready owns
 * copies of everything it exposes, so the driver may keep stepping the core while a
 * ready is being persisted (e.g. while a simulated fsync is in flight); at most one
 * ready is outstanding between raft_ready and raft_advance.
 *
 * Only harness/common/common.h and harness/common/bugs.h are used.
 */
#ifndef FL_RAFT_H
#define FL_RAFT_H

#include "harness/common/common.h"

/* Largest cluster the core tracks (voters + learners + a removed-but-known peer). */
#define RAFT_NODES_MAX 16
/* Node id 0 means "none". */
#define RAFT_NONE UINT64_C(0)

enum raft_role {
    RAFT_FOLLOWER,
    RAFT_PRE_CANDIDATE,
    RAFT_CANDIDATE,
    RAFT_LEADER,
};
const char *raft_role_name(enum raft_role role); /* "follower", "pre_candidate", ... */

/* ---- log entries --------------------------------------------------------------- */

enum raft_entry_type {
    RAFT_ENTRY_NORMAL = 0,      /* application data (may be empty: a leader's no-op) */
    RAFT_ENTRY_CONF_CHANGE = 1, /* data = encoded struct raft_conf_change + context */
};

/* One log entry. In a ready, data points into memory the ready owns; in inputs the
 * core copies what it keeps. len may be 0 (data may then be NULL). */
struct raft_entry {
    uint64_t index;
    uint64_t term;
    enum raft_entry_type type;
    const uint8_t *data;
    size_t len;
};

/* ---- membership ---------------------------------------------------------------- */

enum raft_cc_type {
    RAFT_CC_ADD_VOTER = 0,
    RAFT_CC_ADD_LEARNER = 1,
    RAFT_CC_PROMOTE = 2, /* learner -> voter */
    RAFT_CC_REMOVE = 3,  /* voter or learner */
};
const char *raft_cc_type_name(enum raft_cc_type t); /* "add_voter", "add_learner", ... */

struct raft_conf_change {
    enum raft_cc_type type;
    uint64_t node_id;
    const uint8_t *context; /* opaque to the core (the server puts member info here) */
    size_t context_len;
};

/* Encoded form of a conf-change entry's data: byte 0 = type, bytes 1..8 = node id
 * little-endian, then the context bytes. RAFT_CC_HEADER_BYTES is the fixed part. */
#define RAFT_CC_HEADER_BYTES 9
/* Decodes a RAFT_ENTRY_CONF_CHANGE entry; cc->context points into e->data.
 * Returns FL_EINVAL when the entry is not a well-formed conf change. */
int raft_conf_change_decode(const struct raft_entry *e, struct raft_conf_change *cc);

/* A configuration: voters and learners, each list sorted ascending, disjoint. */
struct raft_conf_state {
    uint64_t voters[RAFT_NODES_MAX];
    uint32_t voters_count;
    uint64_t learners[RAFT_NODES_MAX];
    uint32_t learners_count;
};
bool raft_conf_is_voter(const struct raft_conf_state *c, uint64_t id);
bool raft_conf_is_learner(const struct raft_conf_state *c, uint64_t id);
/* Quorum size of the voters: voters_count / 2 + 1 (0 voters -> 1). */
uint32_t raft_conf_quorum(const struct raft_conf_state *c);
/* Applies cc to c. Returns FL_OK, FL_EEXIST (adding a member already present),
 * FL_ENOENT (promoting/removing an unknown member or promoting a voter),
 * FL_EFULL (more than RAFT_NODES_MAX members, or a second learner: at most one). */
int raft_conf_apply(struct raft_conf_state *c, const struct raft_conf_change *cc);

/* ---- snapshots and hard state -------------------------------------------------- */

/* A snapshot: everything up to and including index. data is the application's
 * opaque state (MVCC store, member list), given by the driver to raft_compact. */
struct raft_snapshot {
    uint64_t index;
    uint64_t term;
    struct raft_conf_state conf;
    const uint8_t *data;
    size_t len;
};

struct raft_hard_state {
    uint64_t term;
    uint64_t vote;
    uint64_t commit;
};

/* ---- messages ------------------------------------------------------------------ */

enum raft_msg_type {
    RAFT_MSG_APPEND = 0,      /* index/log_term = previous entry; entries; commit */
    RAFT_MSG_APPEND_RESP,     /* accepted: index = last index known to match the leader;
                                 rejected: index = the previous index that did not match,
                                 reject_hint/hint_term = where to probe next */
    RAFT_MSG_VOTE,            /* index/log_term = candidate's last entry; context = 1: transfer */
    RAFT_MSG_VOTE_RESP,       /* reject */
    RAFT_MSG_PRE_VOTE,        /* term = the term the pre-candidate would campaign in */
    RAFT_MSG_PRE_VOTE_RESP,   /* term = the request's term when granted */
    RAFT_MSG_HEARTBEAT,       /* commit = min(commit, follower match); context = read ctx;
                                 index = last index the leader sent this follower before it */
    RAFT_MSG_HEARTBEAT_RESP,  /* context echoed; index = responder's last log index;
                                 log_term = the heartbeat's index echoed (loss detection) */
    RAFT_MSG_SNAPSHOT,        /* snapshot (InstallSnapshot) */
    RAFT_MSG_TIMEOUT_NOW,     /* leader transfer: campaign now, skipping pre-vote */
    RAFT_MSG_PROPOSE,         /* follower -> leader forwarded proposal; entries (index 0);
                                 term 0 (no term: not subject to the term rules) */
    RAFT_MSG_READ_INDEX,      /* follower -> leader; context = read ctx; term 0 */
    RAFT_MSG_READ_INDEX_RESP, /* leader -> follower; context, index = read index;
                                 reject = leader could not serve it */
    RAFT_MSG_TYPE_COUNT
};
const char *raft_msg_type_name(enum raft_msg_type t);

/* A plain message; the server converts it to protobuf at the network edge. In a
 * ready, entries/snapshot point into memory the ready owns. As input to raft_step
 * the caller owns everything; the core copies what it keeps. */
struct raft_msg {
    enum raft_msg_type type;
    uint64_t from;
    uint64_t to;
    uint64_t term;
    uint64_t log_term;
    uint64_t index;
    uint64_t commit;
    uint64_t context;
    bool reject;
    uint64_t reject_hint; /* APPEND_RESP reject: the follower's best guess of a match */
    uint64_t hint_term;   /* APPEND_RESP reject: term of the entry at reject_hint */
    const struct raft_entry *entries;
    size_t entries_count;
    const struct raft_snapshot *snapshot; /* RAFT_MSG_SNAPSHOT only */
};

/* ---- events -------------------------------------------------------------------- */

enum raft_event_kind {
    RAFT_EV_CAMPAIGN = 0,     /* became candidate at term */
    RAFT_EV_PREVOTE,          /* became pre-candidate (term = term it would campaign in) */
    RAFT_EV_VOTE_GRANTED,     /* this node granted its (pre-)vote to peer */
    RAFT_EV_VOTE_REJECTED,    /* this node refused peer; detail gives the reason */
    RAFT_EV_LEADER,           /* became leader at term */
    RAFT_EV_STEP_DOWN,        /* was leader/candidate, now follower; detail: why */
    RAFT_EV_TERM,             /* term changed (detail: from which message) */
    RAFT_EV_CONF_CHANGE,      /* configuration in force changed (append or rollback) */
    RAFT_EV_SNAPSHOT_SENT,    /* leader sent its snapshot to peer */
    RAFT_EV_SNAPSHOT_APPLIED, /* follower installed a snapshot from the leader */
    /* Notes (raft_ready.notes, never events): */
    RAFT_EV_FOLLOWER_LOST, /* leader: peer answered below its match, it lost entries it
                              acknowledged (acks before fsync, a disk that lost synced
                              data); index: the old match; detail: old -> new */
    RAFT_EV_KIND_COUNT
};
/* The node_events kind string: "campaign", "prevote", "vote_granted", ... */
const char *raft_event_kind_name(enum raft_event_kind k);

/* Why an event happened (node events' typed reason; the detail text says it in words). */
enum raft_reason {
    RAFT_REASON_NONE = 0,
    RAFT_REASON_LOG_NOT_UP_TO_DATE, /* vote_rejected: the candidate's log is behind ours */
    RAFT_REASON_ALREADY_VOTED,      /* vote_rejected: voted for another / follows a leader */
    RAFT_REASON_LEADER_LEASE,       /* vote_rejected: a leader heard within the election
                                       timeout (check-quorum); the request was ignored */
    RAFT_REASON_LEARNER,            /* vote_rejected: a learner ignored it (bug switch) */
    RAFT_REASON_CAMPAIGN,           /* term: its own campaign */
    RAFT_REASON_HIGHER_TERM,        /* term, step_down: a message of a higher term */
    RAFT_REASON_ELECTION_LOST,      /* step_down */
    RAFT_REASON_PREVOTE_LOST,       /* step_down */
    RAFT_REASON_LEADER_FOUND,       /* step_down: a leader of its own term spoke */
    RAFT_REASON_REMOVED,          /* step_down: removed from the configuration while campaigning */
    RAFT_REASON_CHECK_QUORUM,     /* step_down: no contact with a quorum for an election timeout */
    RAFT_REASON_TRANSFER_TIMEOUT, /* step_down (it stays leader): a leader transfer timed out */
    RAFT_REASON_TRANSFER,         /* campaign: a leader transfer (timeout_now) */
    RAFT_REASON_ADD_VOTER,        /* conf_change: the entry appended (peer: the member) */
    RAFT_REASON_ADD_LEARNER,
    RAFT_REASON_PROMOTE,
    RAFT_REASON_REMOVE,
    RAFT_REASON_SNAPSHOT, /* conf_change: the configuration of an installed snapshot */
    RAFT_REASON_ROLLBACK, /* conf_change: a truncated conf entry rolled back */
    RAFT_REASON_INVALID,  /* conf_change: an entry that does not apply, ignored */
    RAFT_REASON_COUNT
};
/* "log_not_up_to_date", "already_voted", ...; NULL for RAFT_REASON_NONE or out of range. */
const char *raft_reason_name(enum raft_reason r);

struct raft_event {
    enum raft_event_kind kind;
    uint64_t term;  /* the node's term after the event */
    uint64_t peer;  /* the other node involved, or RAFT_NONE */
    uint64_t index; /* a log index where relevant (conf entry, snapshot), else 0 */
    /* Typed facts (the detail text says the same in words): a role change from -> to
     * (prevote, campaign, leader, step_down), why, and whether a vote event is about a
     * pre-vote. */
    bool role_change;
    enum raft_role from, to;
    enum raft_reason reason;
    bool pre;
    char detail[120];
};

/* ---- read index ---------------------------------------------------------------- */

/* A linearizable read may be served once the driver has applied up to index. */
struct raft_read_state {
    uint64_t context;
    uint64_t index;
};

/* ---- the ready ----------------------------------------------------------------- */

/* Everything the driver must do after some steps, in this order:
 *   persist: if snapshot, persist it and replace the app state with it; if
 *     entries_count, truncate the stored log from entries[0].index on (a new leader
 *     may have overwritten a suffix) and append the entries; if hard_state_changed,
 *     store hard_state; then fsync;
 *   send msgs (never before the fsync, unless a bug switch says so);
 *   apply committed[] in order (they start after the snapshot, if any);
 *   answer reads whose index ≤ applied; record events; log notes;
 *   call raft_advance(r, rd).
 * The struct is owned by the driver (zero it once, or use raft_ready_init) and can
 * be reused for every cycle; raft_ready_close frees its buffers. */
struct raft_ready {
    bool hard_state_changed;
    struct raft_hard_state hard_state;
    bool soft_state_changed; /* role or leader changed since the previous ready */
    enum raft_role role;
    uint64_t leader;
    const struct raft_snapshot *snapshot; /* NULL when none */
    const struct raft_entry *entries;     /* to persist */
    size_t entries_count;
    const struct raft_msg *msgs;
    size_t msgs_count;
    const struct raft_entry *committed; /* to apply */
    size_t committed_count;
    const struct raft_read_state *reads;
    size_t reads_count;
    const struct raft_event *events;
    size_t events_count;
    /* Notes: what the core noticed that no peer or client sees (RAFT_EV_FOLLOWER_LOST).
     * The core writes to no log itself (it is pure): the driver logs these. A note
     * rides with the next ready and never makes one on its own, so taking a note
     * changes nothing in a run. */
    const struct raft_event *notes;
    size_t notes_count;
    void *priv; /* internal buffers, owned */
};
void raft_ready_init(struct raft_ready *rd);
void raft_ready_close(struct raft_ready *rd);

/* ---- configuration and lifecycle ----------------------------------------------- */

struct raft_config {
    uint64_t id;                       /* this node, non-zero */
    uint32_t election_ticks;           /* etcd: 10 (1000 ms / 100 ms) */
    uint32_t heartbeat_ticks;          /* etcd: 1 */
    bool pre_vote;                     /* etcd ≥ 3.5: true */
    bool check_quorum;                 /* etcd: always true */
    uint64_t seed;                     /* randomised election timeout stream */
    size_t max_msg_bytes;              /* entry data per append message; etcd: 1 MiB */
    uint32_t max_inflight;             /* append messages in flight per peer; etcd: 512 */
    uint64_t snapshot_catchup_entries; /* entries kept behind a snapshot; 5000 */
    uint64_t applied;                  /* on restart: index the app state already reflects */
    uint32_t read_pending_max;         /* queued read-index requests; 0 -> 4096 */
};
/* Fills etcd's defaults (10/1 ticks, pre-vote on, check-quorum on, 1 MiB, 512,
 * 5000) for node id and seed. */
void raft_config_default(struct raft_config *cfg, uint64_t id, uint64_t seed);

struct raft; /* opaque; allocate with raft_new */

/* Creates a node with an empty log and no configuration (a joining member waits for
 * the leader to replicate or snapshot the configuration to it). Never fails. */
struct raft *raft_new(const struct raft_config *cfg);
void raft_free(struct raft *r);

/* A brand-new cluster: appends one committed RAFT_CC_ADD_VOTER entry per voter at
 * term 1 (indexes 1..n, as etcd does), so every founding member has the same log
 * and a joiner learns the configuration by replication. Call once, before any
 * step, on every founding member with the same list. The first ready carries the
 * entries and hard state to persist and the conf entries to apply.
 * FL_EINVAL if the log is not empty, n is 0 or > RAFT_NODES_MAX, ids repeat or 0. */
int raft_bootstrap(struct raft *r, const uint64_t *voters, size_t n);

/* Restart from disk: hard state, an optional snapshot (NULL: none) and the stored
 * entries (any stored entries with index ≤ snapshot index are ignored; the rest
 * must be contiguous and follow it). cfg.applied (≥ snapshot index) says what the
 * app state already reflects; committed entries after it are re-delivered. The
 * commit index is clamped into [snapshot index, last index] (a lost tail cannot be
 * re-applied). FL_EINVAL when the entries do not fit together (a gap, a term going
 * down) or the log is not empty. Call before any step. */
int raft_restore(struct raft *r, const struct raft_hard_state *hs, const struct raft_snapshot *snap,
                 const struct raft_entry *entries, size_t n);

/* ---- inputs -------------------------------------------------------------------- */

/* One logical tick: elections, heartbeats, check-quorum, transfer timeout. */
void raft_tick(struct raft *r);
/* Ticks until the core would do something on its own (≥ 1). A driver may sleep that
 * many tick intervals and call raft_tick that many times with nothing in between. */
uint32_t raft_ticks_to_deadline(const struct raft *r);

/* Feeds a message received from a peer (m->to must be this node). Messages of a
 * stale term are answered or dropped as Raft says. Returns FL_OK, or FL_EINVAL for
 * a malformed message (dropped: wrong recipient, unknown type or entry type, a
 * configuration larger than RAFT_NODES_MAX, data pointers missing). */
int raft_step(struct raft *r, const struct raft_msg *m);

/* Proposes application data. On the leader appends it and sets *index_out (may be
 * NULL) to its index; on a follower with a known leader forwards it (index 0, the
 * driver learns the outcome when the entry is applied). The appends to followers go
 * out in the next ready: proposals made between two readies share one message per
 * follower (up to max_msg_bytes), so a driver that proposes a batch and then calls
 * raft_ready gets etcd-style batching for free. Errors: FL_ENOENT no leader known,
 * FL_EBUSY leader transfer in progress, or this leader's own removal committed (etcd
 * drops proposals then; the removed leader stays leader until its server stops it). */
int raft_propose(struct raft *r, const void *data, size_t len, uint64_t *index_out);

/* Proposes a membership change. Leader only (FL_ENOENT otherwise). Refused with
 * FL_EBUSY while an earlier conf entry is uncommitted (at most one; unless
 * FL_BUG(RAFT_MULTIPLE_CONF_CHANGES)), while this leader has not yet committed an
 * entry of its own term (its empty entry; the fix to the single-server membership
 * bug), FL_EBUSY during a leader transfer or once this leader's removal committed, and with
 * raft_conf_apply's error when it does not fit the current configuration. The
 * change is in force as soon as this call returns. */
int raft_propose_conf_change(struct raft *r, const struct raft_conf_change *cc,
                             uint64_t *index_out);

/* Linearizable read (ReadIndex, Raft thesis §6.4): the leader records its commit
 * index, confirms leadership with a heartbeat round and then emits a read state
 * with context. A leader that has not yet committed an entry of its own term queues
 * the request until it has. A follower forwards to the leader. A single-voter
 * leader answers at once. Errors: FL_ENOENT no leader, FL_EFULL queue full. */
int raft_read_index(struct raft *r, uint64_t context);

/* Leader transfer (Raft thesis §3.10, etcd MsgTimeoutNow): leader only (FL_ENOENT);
 * target must be a voter (FL_EINVAL). Brings the target up to date, then sends it
 * TIMEOUT_NOW; proposals are refused until it completes or an election timeout
 * passes. Transferring to self is a no-op. */
int raft_transfer_leader(struct raft *r, uint64_t target);

/* Starts an election now (pre-vote if configured), as if the timeout fired. Used by
 * tests and by a single-node cluster at boot. FL_EINVAL if this node is not a voter. */
int raft_campaign(struct raft *r);

/* The transport lost messages to peer (connection broken): back to probing. */
void raft_report_unreachable(struct raft *r, uint64_t peer);
/* Whether a snapshot sent to peer was delivered; on failure the leader probes again. */
void raft_report_snapshot(struct raft *r, uint64_t peer, bool ok);

/* ---- outputs ------------------------------------------------------------------- */

/* Whether raft_ready would return anything. */
bool raft_has_ready(const struct raft *r);
/* Moves pending outputs into rd (its previous contents are discarded). Asserts that
 * the previous ready was advanced. */
void raft_ready(struct raft *r, struct raft_ready *rd);
/* Tells the core rd was persisted, sent and applied: entries become stable and
 * applied moves to the last committed entry (or the snapshot index). */
void raft_advance(struct raft *r, struct raft_ready *rd);

/* Log compaction (etcd: snapshot every snapshot_count applied entries). The driver
 * hands the app state at index (≤ applied) as data (copied); the core keeps it as the
 * snapshot to send to lagging followers, and drops log entries up to
 * index - snapshot_catchup_entries. The driver persists the snapshot and compacts
 * its stored log the same way (raft_first_index tells from where entries remain).
 * FL_EINVAL if index > applied or ≤ the current snapshot index. */
int raft_compact(struct raft *r, uint64_t index, const void *data, size_t len);

/* ---- status -------------------------------------------------------------------- */

struct raft_status {
    uint64_t id;
    enum raft_role role;
    uint64_t term;
    uint64_t vote;
    uint64_t leader;
    uint64_t commit;
    uint64_t applied;
    uint64_t first_index; /* first entry still in the log */
    uint64_t last_index;
    uint64_t last_term;
    uint64_t snapshot_index;
    uint64_t pending_conf_index; /* last conf entry not yet committed, 0 if none */
    uint64_t transferee;         /* leader transfer target, 0 if none */
    uint32_t election_elapsed;   /* ticks since the leader was last heard from */
    struct raft_conf_state conf; /* the configuration in force (latest in the log) */
};
void raft_status_get(const struct raft *r, struct raft_status *st);
uint64_t raft_id(const struct raft *r);
uint64_t raft_term(const struct raft *r);
uint64_t raft_leader(const struct raft *r);
enum raft_role raft_role(const struct raft *r);
uint64_t raft_commit_index(const struct raft *r);
uint64_t raft_last_index(const struct raft *r);
uint64_t raft_first_index(const struct raft *r);
const struct raft_conf_state *raft_conf(const struct raft *r);
/* The configuration in force at index: that of the latest conf entry at or below it
 * (the compacted base's configuration below the first entry held). */
const struct raft_conf_state *raft_conf_at(const struct raft *r, uint64_t index);
/* The term of entry index, 0 when unknown (compacted or beyond the end). */
uint64_t raft_entry_term(const struct raft *r, uint64_t index);
/* The entry at index while the log holds it (NULL when compacted away or beyond the
 * last index); valid until the next call that changes the log. */
const struct raft_entry *raft_entry_get(const struct raft *r, uint64_t index);

enum raft_progress_state { RAFT_PR_PROBE, RAFT_PR_REPLICATE, RAFT_PR_SNAPSHOT };

/* The leader's view of one peer. */
struct raft_progress {
    uint64_t id;
    uint64_t match;
    uint64_t next;
    enum raft_progress_state state;
    bool recent_active; /* heard from within the current check-quorum window */
    bool learner;
    uint32_t inflight;
    uint64_t pending_snapshot;
};
/* Leader only: fills *out for peer. FL_ENOENT when not leader or peer unknown. For
 * the leader itself match = its last index. */
int raft_progress_get(const struct raft *r, uint64_t peer, struct raft_progress *out);

/* etcd's promotion rule: the learner's match ≥ 90% of the leader's own match
 * (readyPercent 0.9, integer arithmetic). False when not leader or unknown peer.
 * The server then answers `etcdserver: can only promote a learner member which is
 * in sync with leader`. */
bool raft_learner_in_sync(const struct raft *r, uint64_t learner);

/* etcd's strict reconfiguration check (--strict-reconfig-check): whether applying
 * cc to conf leaves at least a quorum of the resulting voters started. started lists
 * the members the server considers started/active (this node included). Adding a
 * learner always passes; removing a learner always passes; adding a voter to a
 * 1-voter cluster passes; promotion counts the learner as started. When false the
 * server answers `etcdserver: re-configuration failed due to not enough started
 * members`. */
bool raft_conf_change_quorum_ok(const struct raft_conf_state *conf,
                                const struct raft_conf_change *cc, const uint64_t *started,
                                size_t started_count);

/* Checks every internal invariant: the log contiguous and its terms never going down
 * (at both ends and over the newest 64 entries) nor above the term, commit ≤ last,
 * applied ≤ commit, the snapshot at or below commit, the conf stack on conf entries,
 * configurations well-formed (sorted, disjoint, bounded), a candidate or leader voted
 * for itself and is a voter, only a leader has progress — one per member of its
 * configuration, within the log, its newest in-flight appends ascending — and pending reads at or
 * below commit. O(1) in the log length: cheap enough for every simulated event
 * (--paranoid). raft_invariants_ok returns false with the first broken invariant in
 * why (file:line and what); raft_check_invariants asserts it (aborts) and returns true. */
bool raft_invariants_ok(const struct raft *r, char *why, size_t why_len);
bool raft_check_invariants(const struct raft *r);

#endif
