/*
 * failpoints.h: the one table of failpoint names (DESIGN §3.3). Each row is
 * X(ENUM, "module/point", "description"): the enum flt_point names a failpoint in
 * code (flt_check(w, FLT_RAFT_BEFORE_SAVE, &hit)), the string names it in scenarios,
 * `faultline list failpoints`, the swarm's BUGGIFY draws and the digest. A new
 * failpoint is one row here and its site.
 *
 * It lives in common, not in harness/fault, because the simulator's own edges (the
 * disk and network failpoints) name theirs too and the simulator is below the fault
 * module. Names and an enum only: no code that decides anything.
 */
#ifndef FL_FAILPOINTS_H
#define FL_FAILPOINTS_H

#include <stddef.h>

/* In the order `faultline list failpoints` shows them (never reordered: the enum
 * values are not stored anywhere, but the list output is compared in tests). */
#define FL_FAILPOINTS(X)                                                                           \
    X(RAFT_BEFORE_SAVE, "raft/before_save",                                                        \
      "before a member persists Raft entries and hard state to its WAL")                           \
    X(RAFT_AFTER_SAVE, "raft/after_save",                                                          \
      "after the WAL write and fsync, before messages that depend on it leave")                    \
    X(MVCC_BEFORE_COMMIT, "mvcc/before_commit",                                                    \
      "before the MVCC backend commits a batch of applied entries")                                \
    X(MVCC_COMPACT_BATCH, "mvcc/compact_batch", "between two batches of a compaction")             \
    X(SERVER_DEFRAG_BEFORE_RENAME, "server/defrag_before_rename",                                  \
      "during defragmentation, before the new data file replaces the old one")                     \
    X(SERVER_BEFORE_APPLY_SNAPSHOT, "server/before_apply_snapshot",                                \
      "before a follower installs a snapshot from the leader")                                     \
    X(RAFT_BEFORE_SAVE_SNAP, "raft/before_save_snap",                                              \
      "before a member writes a local snapshot file (etcd raftBeforeSaveSnap)")                    \
    X(RAFT_AFTER_SAVE_SNAP, "raft/after_save_snap",                                                \
      "after a snapshot file is durable and renamed, before the WAL segments it replaces "         \
      "go (etcd raftAfterSaveSnap)")                                                               \
    X(SERVER_AFTER_APPLY_SNAPSHOT, "server/after_apply_snapshot",                                  \
      "after a leader's snapshot is installed and durable, before the entries after it "           \
      "apply (etcd raftAfterApplySnap)")                                                           \
    X(SERVER_BEFORE_APPLY, "server/before_apply",                                                  \
      "before a committed entry is applied (etcd applyBeforeOpenSnapshot and "                     \
      "beforeApplyOneConfChange)")                                                                 \
    X(MVCC_AFTER_COMMIT, "mvcc/after_commit",                                                      \
      "after a batch of committed entries was applied to the MVCC backend (etcd "                  \
      "afterCommit)")                                                                              \
    X(MVCC_COMPACT_AFTER, "mvcc/compact_after",                                                    \
      "after a compaction was applied, before its reply (etcd compactAfterCommitBatch)")           \
    X(SERVER_DEFRAG_BEFORE_COPY, "server/defrag_before_copy",                                      \
      "when defragmentation starts, before the data is copied (etcd defragBeforeCopy)")            \
    X(SERVER_BEFORE_SEND, "server/before_send",                                                    \
      "before a member sends a message to a peer or a client")                                     \
    X(WATCH_BEFORE_SEND, "watch/before_send", "before a watch response is sent to a client")       \
    X(DISK_FSYNC_EIO, "disk/fsync_eio",                                                            \
      "an fsync fails with EIO and nothing it covered becomes durable")                            \
    X(DISK_WRITE_EIO, "disk/write_eio",                                                            \
      "a write, append or truncate fails with EIO and writes nothing")                             \
    X(DISK_READ_EIO, "disk/read_eio", "a latent sector error: a read fails with EIO")              \
    X(DISK_TORN_WRITE, "disk/torn_write",                                                          \
      "at a crash, the last unsynced write is torn at 512-byte sectors")                           \
    X(NET_DROP, "net/drop", "a frame is lost (on a connection, the connection breaks)")            \
    X(NET_CORRUPT, "net/corrupt", "a frame gets one flipped bit; the receiver's CRC check drops it")

enum flt_point {
#define FL_FP_ENUM_(e, name, desc) FLT_##e,
    FL_FAILPOINTS(FL_FP_ENUM_)
#undef FL_FP_ENUM_
        FLT_POINT_COUNT
};

/* "raft/before_save" for FLT_RAFT_BEFORE_SAVE; NULL out of range. */
static inline const char *flt_point_name(enum flt_point p)
{
    static const char *const names[] = {
#define FL_FP_NAME_(e, name, desc) name,
        FL_FAILPOINTS(FL_FP_NAME_)
#undef FL_FP_NAME_
    };
    _Static_assert(sizeof names / sizeof names[0] == FLT_POINT_COUNT, "failpoint names");
    return (size_t)p < FLT_POINT_COUNT ? names[p] : NULL;
}

#endif
