/*
 * bugs.h: the bug-switch registry (DESIGN §3.3). A bug switch re-introduces a known
 * bug at the exact place it lived: `if (FL_BUG(RAFT_VOTE_IGNORES_LOG)) ...`. Switches
 * are set once before a run (from --bug or Lua's bug()); cores read them through
 * FL_BUG, which is a plain array load so the pure cores need nothing but this header.
 *
 * To add a bug: add its id to enum fl_bug_id and its row to fl_bug_table in bugs.c
 * (name, the scenario in scenarios/bugs/ that must catch it, one-line description).
 */
#ifndef FL_BUGS_H
#define FL_BUGS_H

#include <stdbool.h>

enum fl_bug_id {
    FL_BUG_RAFT_VOTE_IGNORES_LOG,
    FL_BUG_RAFT_COMMIT_OLD_TERM,
    FL_BUG_RAFT_ACK_BEFORE_FSYNC,
    FL_BUG_RAFT_MULTIPLE_CONF_CHANGES,
    FL_BUG_MVCC_STALE_READ,
    FL_BUG_MVCC_WATCH_SKIP_ON_COMPACT,
    FL_BUG_MVCC_WATCH_OLD_AFTER_PARTITION,
    FL_BUG_MVCC_REVISION_RESET_ON_RESTART,
    FL_BUG_MVCC_PROGRESS_BEFORE_EVENTS,
    FL_BUG_SERVER_RESTORE_KEEPS_IDS,
    FL_BUG_CLIENT_RETRY_SENT_WRITES,
    FL_BUG_CLIENT_NO_FAILOVER,
    FL_BUG_RAFT_LEARNER_REFUSES_VOTE,
    FL_BUG_RAFT_REMOVED_LEADER_COUNTS_SELF,
    FL_BUG_RAFT_HEARTBEAT_COMMIT_UNMATCHED,
    FL_BUG_SERVER_APPLY_BEFORE_WAL_SYNC,
    FL_BUG_SERVER_DEFRAG_STALE_CONSISTENT_INDEX,
    FL_BUG_SERVER_TXN_DROPS_RANGES,
    FL_BUG_MVCC_RESTORE_SKIPS_TOMBSTONE,
    FL_BUG_MVCC_WATCH_COMPACTED_LOST,
    FL_BUG_MVCC_RESTORE_KEEPS_WATCHERS_SYNCED,
    FL_BUG_MVCC_RESTORE_LOWERS_FUTURE_WATCH,
    FL_BUG_RAFT_LEARNER_VOTES,
    FL_BUG_COUNT
};

struct fl_bug_info {
    enum fl_bug_id id;
    const char *name;     /* e.g. "raft.vote_ignores_log" */
    const char *scenario; /* e.g. "scenarios/bugs/vote-ignores-log.lua" */
    const char *description;
};

extern bool fl_bug_on[FL_BUG_COUNT];
extern const struct fl_bug_info fl_bug_table[FL_BUG_COUNT];

#define FL_BUG(x) (fl_bug_on[FL_BUG_##x])

/* Turns a bug on by name; returns false when no bug has that name. */
bool fl_bug_enable(const char *name);
/* Turns one bug on or off (tests; a run takes names through fl_bug_enable). */
void fl_bug_set(enum fl_bug_id id, bool on);
/* Turns every bug off (between worlds in one process). */
void fl_bug_reset(void);
const struct fl_bug_info *fl_bug_find(const char *name);

#endif
