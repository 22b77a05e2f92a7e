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
     "a watch drops an event when compaction runs at the same time (etcd#18089)"},
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

void fl_bug_reset(void)
{
    memset(fl_bug_on, 0, sizeof fl_bug_on);
}
