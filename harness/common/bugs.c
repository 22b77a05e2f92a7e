/*
 * bugs.c: the table of bug switches and their state. See bugs.h.
 */
#include "harness/common/bugs.h"
#include "harness/common/common.h"

bool fl_bug_on[FL_BUG_COUNT];

const struct fl_bug_info fl_bug_table[FL_BUG_COUNT] = {
    {FL_BUG_RAFT_VOTE_IGNORES_LOG, "raft.vote_ignores_log", "scenarios/bugs/vote-ignores-log.lua",
     "votes granted without the up-to-date log check"},
    {FL_BUG_RAFT_COMMIT_OLD_TERM, "raft.commit_old_term", "scenarios/bugs/commit-old-term.lua",
     "the leader commits earlier-term entries by counting replicas"},
    {FL_BUG_RAFT_ACK_BEFORE_FSYNC, "raft.ack_before_fsync", "scenarios/bugs/ack-before-fsync.lua",
     "appends acknowledged before they are durable"},
    {FL_BUG_RAFT_MULTIPLE_CONF_CHANGES, "raft.multiple_conf_changes",
     "scenarios/bugs/multiple-conf-changes.lua",
     "a second uncommitted configuration change is accepted"},
    {FL_BUG_MVCC_STALE_READ, "mvcc.stale_read", "scenarios/bugs/stale-read.lua",
     "linearizable reads served locally without ReadIndex"},
    {FL_BUG_MVCC_WATCH_SKIP_ON_COMPACT, "mvcc.watch_skip_on_compact",
     "scenarios/bugs/watch-skip-on-compact.lua",
     "a watch from the compaction revision drops the delete sitting at it (etcd#18089)"},
    {FL_BUG_MVCC_WATCH_OLD_AFTER_PARTITION, "mvcc.watch_old_after_partition",
     "scenarios/bugs/watch-old-after-partition.lua",
     "a member resends old revisions on a watch after a partition (etcd#15271)"},
    {FL_BUG_MVCC_REVISION_RESET_ON_RESTART, "mvcc.revision_reset_on_restart",
     "scenarios/bugs/revision-reset-on-restart.lua",
     "a restarted member's revision goes back (etcd#17780-like)"},
    {FL_BUG_MVCC_PROGRESS_BEFORE_EVENTS, "mvcc.progress_before_events",
     "scenarios/bugs/progress-before-events.lua",
     "a progress notification overtakes pending events (etcd#15220)"},
    {FL_BUG_SERVER_RESTORE_KEEPS_IDS, "server.restore_keeps_ids",
     "scenarios/bugs/restore-keeps-ids.lua",
     "restore keeps the old cluster and member IDs, so a revived old member rejoins"},
    {FL_BUG_CLIENT_RETRY_SENT_WRITES, "client.retry_sent_writes",
     "scenarios/bugs/retry-sent-writes.lua", "mutating calls retried after a timeout"},
    {FL_BUG_CLIENT_NO_FAILOVER, "client.no_failover", "scenarios/bugs/no-failover.lua",
     "the balancer never leaves its first endpoint"},
    {FL_BUG_RAFT_LEARNER_REFUSES_VOTE, "raft.learner_refuses_vote",
     "scenarios/bugs/learner-refuses-vote.lua",
     "a promoted learner that has not seen its promotion refuses to vote (etcd#10998)"},
    {FL_BUG_RAFT_REMOVED_LEADER_COUNTS_SELF, "raft.removed_leader_counts_self",
     "scenarios/bugs/removed-leader-counts-self.lua",
     "a leader that appended its own removal counts itself toward commit (Raft thesis 4.2.2, "
     "camunda#15231)"},
    {FL_BUG_RAFT_HEARTBEAT_COMMIT_UNMATCHED, "raft.heartbeat_commit_unmatched",
     "scenarios/bugs/heartbeat-commit-unmatched.lua",
     "heartbeats carry the full commit index: a deposed leader commits its obsolete entries "
     "(scylladb#9965, copycat#265)"},
    {FL_BUG_SERVER_APPLY_BEFORE_WAL_SYNC, "server.apply_before_wal_sync",
     "scenarios/bugs/apply-before-wal-sync.lua",
     "entries applied and answered before their WAL fsync: a one-member cluster loses an "
     "acknowledged write on a crash (etcd#14370)"},
    {FL_BUG_SERVER_DEFRAG_STALE_CONSISTENT_INDEX, "server.defrag_stale_consistent_index",
     "scenarios/bugs/defrag-stale-consistent-index.lua",
     "defrag writes the backend without its consistent index: a restart applies entries twice "
     "(etcd#14685)"},
    {FL_BUG_SERVER_TXN_DROPS_RANGES, "server.txn_drops_ranges",
     "scenarios/bugs/txn-drops-ranges.lua",
     "members that did not propose a txn drop its ranges: a compacted-revision read fails it on "
     "the proposer only (etcd#18667)"},
    {FL_BUG_MVCC_RESTORE_SKIPS_TOMBSTONE, "mvcc.restore_skips_tombstone",
     "scenarios/bugs/restore-skips-tombstone.lua",
     "a restore skips a key whose first revision is a tombstone: its delete event is lost "
     "(etcd#19179)"},
    {FL_BUG_MVCC_WATCH_COMPACTED_LOST, "mvcc.watch_compacted_lost",
     "scenarios/bugs/watch-compacted-lost.lua",
     "a slow watcher whose full stream refused its compaction cancel skips ahead, losing events "
     "(etcd#17529)"},
    {FL_BUG_MVCC_RESTORE_KEEPS_WATCHERS_SYNCED, "mvcc.restore_keeps_watchers_synced",
     "scenarios/bugs/restore-keeps-watchers-synced.lua",
     "after a snapshot from the leader, synced watchers skip the revisions it brought "
     "(etcd#8411)"},
    {FL_BUG_MVCC_RESTORE_LOWERS_FUTURE_WATCH, "mvcc.restore_lowers_future_watch",
     "scenarios/bugs/restore-lowers-future-watch.lua",
     "a restore resyncs a watch on a future revision down to the current one: events before "
     "its start (etcd#20221)"},
    {FL_BUG_RAFT_LEARNER_VOTES, "raft.learner_votes", "scenarios/bugs/learner-votes.lua",
     "a candidate asks learners for votes and counts them toward its quorum (non-voters' "
     "votes counted: tikv/raft-rs#221, redpanda#8495)"},
};

const struct fl_bug_info *fl_bug_find(const char *name)
{
    for (int i = 0; i < FL_BUG_COUNT; i++) {
        FL_ASSERT(fl_bug_table[i].id == (enum fl_bug_id)i);
        if (!strcmp(fl_bug_table[i].name, name))
            return &fl_bug_table[i];
    }
    return NULL;
}

bool fl_bug_enable(const char *name)
{
    const struct fl_bug_info *b = fl_bug_find(name);
    if (!b)
        return false;
    fl_bug_on[b->id] = true;
    return true;
}

void fl_bug_set(enum fl_bug_id id, bool on)
{
    FL_ASSERT((unsigned)id < FL_BUG_COUNT);
    fl_bug_on[id] = on;
}

void fl_bug_reset(void)
{
    memset(fl_bug_on, 0, sizeof fl_bug_on);
}
