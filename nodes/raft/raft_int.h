/*
 * raft_int.h: internals shared by the files of nodes/raft. Not a public interface.
 *
 * struct raft holds the log (raft_log.c), the configuration stack that makes
 * membership changes effective at append time and roll back on truncation
 * (raft_log.c, raft_conf.c), the role state machine (raft.c), the leader's per-peer
 * progress and commit rule (raft_repl.c), read-index and leader-transfer state
 * (raft_read.c) and the outbox that raft_ready hands to the driver (raft_ready.c).
 */
#ifndef FL_RAFT_INT_H
#define FL_RAFT_INT_H

/* Internal to nodes/raft: compiled only into fl_raft (which defines FL_INTERNAL_raft)
 * and into the white-box tests that declare it (tests/CMakeLists.txt). */
#ifndef FL_INTERNAL_raft
#error "nodes/raft/raft_int.h is internal to nodes/raft: include its public header instead"
#endif

#include "nodes/raft/raft.h"
#include "harness/common/bugs.h"
#include "harness/common/arena.h"
#include "harness/common/rng.h"

#include <inttypes.h>

/* context value of a RAFT_MSG_VOTE sent because of a leader transfer: it bypasses
 * the check-quorum leader lease (etcd campaignTransfer). */
#define RAFT_CTX_TRANSFER UINT64_C(1)

/* The outbox's bump allocator: common's (harness/common/arena.h) with the core's
 * block sizes. Blocks never move, so pointers into it stay valid until
 * raft__arena_reset. A zeroed arena is set up on its first allocation. */
struct raft__arena {
    struct fl_arena fl;
};
void *raft__arena_alloc(struct raft__arena *a, size_t n);
void raft__arena_reset(struct raft__arena *a);
void raft__arena_close(struct raft__arena *a);

/* Pending outputs: messages, events, read states, and the arena their entries,
 * snapshots and data live in. The core fills one; raft_ready swaps it into the
 * ready so the core can go on stepping with a fresh one. */
struct raft__outbox {
    struct raft__arena arena;
    struct raft_msg *msgs;
    size_t msgs_count, msgs_cap;
    struct raft_event *events;
    size_t events_count, events_cap;
    struct raft_event *notes; /* not counted by raft_has_ready */
    size_t notes_count, notes_cap;
    struct raft_read_state *reads;
    size_t reads_count, reads_cap;
};
void raft__outbox_reset(struct raft__outbox *o);
void raft__outbox_close(struct raft__outbox *o);

/* The configuration in force after each conf entry still in the log. */
struct raft__conf_rec {
    uint64_t index;
    struct raft_conf_state conf;
};

/* The in-memory log: entries base_index+1 .. base_index+count, each entry's data
 * owned (malloc'd). base_term is the term of entry base_index (0 for index 0). */
/* Entry bytes live in chunks filled in log order and freed whole once compaction
 * passes the highest index they hold: no malloc and free per entry. Truncated
 * entries leave dead bytes behind until then. */
struct raft__chunk {
    struct raft__chunk *next; /* newer */
    uint64_t max_index;       /* highest index whose bytes are here */
    size_t cap, used;
    uint8_t data[];
};

struct raft__log {
    struct raft__chunk *chunk_head, *chunk_tail; /* oldest, newest */
    struct raft_entry *ents;
    size_t count, cap;
    uint64_t base_index;
    uint64_t base_term;
    uint64_t stable; /* entries ≤ stable have been handed to the driver and persisted */
    struct raft_conf_state base_conf; /* configuration at base_index */
    struct raft__conf_rec *confs;     /* conf entries in (base_index, last], ascending */
    size_t confs_count, confs_cap;
};

struct raft__progress {
    uint64_t id;
    uint64_t match;
    uint64_t next;
    enum raft_progress_state state;
    bool recent_active;
    bool probe_sent; /* probe: an append is outstanding, wait for an answer */
    uint64_t pending_snapshot;
    uint32_t stall_ticks; /* ticks without match progress while messages are in flight */
    uint64_t *inflight;   /* ring of last indexes of append messages in flight */
    uint32_t inflight_start, inflight_count;
};

struct raft__read {
    uint64_t seq; /* heartbeat context that confirms it */
    uint64_t context;
    uint64_t index;
    uint64_t from; /* requester; this node for local reads */
    uint64_t acks[RAFT_NODES_MAX];
    uint32_t acks_count;
};

struct raft {
    struct raft_config cfg;
    struct fl_rng rng; /* this node's stream (harness/common/rng.h) */

    /* persistent state */
    uint64_t term;
    uint64_t vote;
    uint64_t commit;
    struct raft__log log;

    /* volatile state */
    enum raft_role role;
    uint64_t lead;
    uint64_t applied;
    uint32_t election_elapsed;
    uint32_t heartbeat_elapsed;
    uint32_t randomized_timeout;
    uint64_t transferee;

    /* candidate */
    uint64_t votes_ids[RAFT_NODES_MAX];
    bool votes_granted[RAFT_NODES_MAX];
    uint32_t votes_count;

    /* leader */
    struct raft__progress prs[RAFT_NODES_MAX];
    uint32_t prs_count;
    uint32_t removed_self_quorum; /* acks needed from others once the leader removed itself */
    bool flush_pending;           /* appends to send at the next raft_ready (coalesced) */
    bool flush_allow_empty;       /* ... even without new entries (to carry the commit) */
    bool read_flush;              /* a read-index heartbeat round is due at the next ready */
    struct raft__read *reads;     /* confirmed-or-pending read-index rounds, oldest first */
    size_t reads_count, reads_cap;
    uint64_t read_seq;             /* last heartbeat context issued */
    struct raft__read *read_waits; /* requests waiting for a current-term commit */
    size_t read_waits_count, read_waits_cap;

    /* snapshot the leader sends; on a follower the one just received */
    struct raft_snapshot snap;
    uint8_t *snap_data; /* owned */
    bool snap_pending;  /* received from the leader; goes into the next ready */

    /* outputs */
    struct raft__outbox box;
    struct raft_hard_state prev_hs;
    enum raft_role prev_role;
    uint64_t prev_lead;
    bool ready_out;
    uint64_t ready_last_index; /* last entry handed for persistence */
    uint64_t ready_trunc_min;  /* lowest truncation since raft_ready, UINT64_MAX none */
    uint64_t ready_applied_to;
};

struct raft_ready_priv {
    struct raft__outbox box;
};

/* ---- rng (raft.c) ---- */
uint64_t raft__rng_next(struct raft *r);

/* ---- log (raft_log.c) ---- */
uint64_t raft__last_index(const struct raft *r);
uint64_t raft__last_term(const struct raft *r);
uint64_t raft__term_at(const struct raft *r, uint64_t index);
const struct raft_entry *raft__entry_at(const struct raft *r, uint64_t index);
/* Appends one entry (data copied) at last+1. A conf entry changes the configuration
 * in force at once and is recorded for rollback. */
void raft__log_append(struct raft *r, uint64_t term, enum raft_entry_type type, const void *data,
                      size_t len);
/* Drops entries ≥ from and rolls the configuration back accordingly. */
void raft__log_truncate(struct raft *r, uint64_t from);
/* Drops entries ≤ upto (≤ applied); the configuration at upto becomes the base. */
void raft__log_compact(struct raft *r, uint64_t upto);
/* Replaces the whole log by a snapshot base. */
void raft__log_reset(struct raft *r, uint64_t index, uint64_t term,
                     const struct raft_conf_state *conf);
const struct raft_conf_state *raft__conf_at(const struct raft *r, uint64_t index);
void raft__log_close(struct raft__log *log);
/* Largest index ≤ index whose term ≤ term (etcd findConflictByTerm), ≥ base. */
uint64_t raft__find_conflict_by_term(const struct raft *r, uint64_t index, uint64_t term);
/* Index of the newest conf entry in the log, 0 if none. */
uint64_t raft__last_conf_index(const struct raft *r);

/* ---- events and messages (raft_ready.c) ---- */
struct raft_event *raft__event(struct raft *r, enum raft_event_kind kind, uint64_t peer,
                               uint64_t index, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* The same, into the ready's notes (raft.h): what the driver logs. */
struct raft_event *raft__note(struct raft *r, enum raft_event_kind kind, uint64_t peer,
                              uint64_t index, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* Appends a message to the outbox with type/from/to/term filled; returns it. */
struct raft_msg *raft__send(struct raft *r, enum raft_msg_type type, uint64_t to);
/* Copies entries [from, to] of the log into the outbox arena for m. */
void raft__msg_attach_entries(struct raft *r, struct raft_msg *m, uint64_t from, uint64_t to);
void raft__msg_attach_snapshot(struct raft *r, struct raft_msg *m);
void raft__read_state(struct raft *r, uint64_t context, uint64_t index);

/* ---- roles (raft.c) ---- */
bool raft__promotable(const struct raft *r);
void raft__become_follower(struct raft *r, uint64_t term, uint64_t lead, enum raft_reason reason,
                           const char *why);
void raft__conf_changed(struct raft *r); /* after the configuration in force changed */

/* ---- leader (raft_repl.c) ---- */
void raft__progress_reset_all(struct raft *r);
void raft__progress_sync(struct raft *r);
struct raft__progress *raft__progress_find(struct raft *r, uint64_t id);
void raft__progress_close_all(struct raft *r);
bool raft__send_append(struct raft *r, struct raft__progress *pr, bool allow_empty);
void raft__bcast_append(struct raft *r);
void raft__bcast_heartbeat(struct raft *r, uint64_t ctx);
bool raft__maybe_commit(struct raft *r);
bool raft__removed_leader(const struct raft *r);
void raft__leader_tick(struct raft *r);
void raft__handle_append_resp(struct raft *r, const struct raft_msg *m);
void raft__handle_heartbeat_resp(struct raft *r, const struct raft_msg *m);
void raft__leader_append(struct raft *r, enum raft_entry_type type, const void *data, size_t len);
void raft__after_commit(struct raft *r);
/* Sends the appends coalesced since the last ready (one per follower). */
void raft__flush(struct raft *r);

/* ---- follower (raft_follow.c) ---- */
void raft__handle_append(struct raft *r, const struct raft_msg *m);
void raft__handle_heartbeat(struct raft *r, const struct raft_msg *m);
void raft__handle_snapshot(struct raft *r, const struct raft_msg *m);

/* ---- reads and transfer (raft_read.c) ---- */
void raft__read_request(struct raft *r, uint64_t context, uint64_t from);
void raft__read_ack(struct raft *r, uint64_t seq, uint64_t from);
void raft__reads_on_commit(struct raft *r);
void raft__reads_clear(struct raft *r);
void raft__transfer_check(struct raft *r, struct raft__progress *pr);

/* ---- conf (raft_conf.c) ---- */
uint32_t raft__conf_count_matched(const struct raft_conf_state *c, const uint64_t *ids, size_t n);

#endif
