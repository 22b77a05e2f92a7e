/*
 * wal.h: the write-ahead log record format of a member and its replay. Pure: it turns
 * records into bytes and bytes back into state; the member writes the bytes to its
 * simulated disk and fsyncs them (member.c).
 *
 * A record is [u32 payload length][u32 CRC32C of type+payload][u8 type][payload],
 * little-endian. Replay stops at the first record that is short or fails its CRC:
 * that is a torn tail from a crash before the fsync finished, and everything after it
 * was never acknowledged (Ready order: persist, fsync, then send). Replay is
 * idempotent so that a member may rewrite its WAL into a new file and replay old and
 * new files in order: an entry that matches one already present (same index and term)
 * changes nothing; an entry that conflicts truncates the log from its index, exactly
 * as a follower's log would have been truncated when it was first written.
 */
#ifndef FL_SERVER_WAL_H
#define FL_SERVER_WAL_H

#include "harness/common/common.h"

/* etcd preallocates each WAL segment file to 64 MiB (SegmentSizeBytes); a new
 * segment's buffer is reserved at that size, so appends never move it. */
#define SRV_WAL_SEGMENT_BYTES ((size_t)64 << 20)

enum srv_wal_type {
    SRV_WAL_META = 1,      /* member_id, cluster_id */
    SRV_WAL_HARDSTATE = 2, /* term, vote, commit */
    SRV_WAL_ENTRY = 3,     /* term, index, type, data */
    SRV_WAL_SNAPSHOT = 4   /* index, term of a snapshot file that is durable */
};

struct srv_wal_entry {
    uint64_t term;
    uint64_t index;
    uint32_t type;
    uint8_t *data; /* owned by the replay state */
    size_t len;
};

/* What a replay recovered. entries are contiguous by index, ascending. */
struct srv_wal_state {
    uint64_t member_id, cluster_id;
    uint64_t term, vote, commit;
    uint64_t snap_index, snap_term;
    struct srv_wal_entry *entries;
    size_t n_entries, cap_entries;
    size_t valid_bytes; /* bytes of the last replayed buffer that held whole records */
    bool torn;          /* the last replayed buffer ended in a bad or short record */
    int records;        /* records replayed in total */
    bool no_data;       /* entries keep index, term, type and length only: the live
                           mirror of a member, whose Raft log holds the bytes */
};

void srv_wal_put_meta(struct fl_buf *b, uint64_t member_id, uint64_t cluster_id);
void srv_wal_put_hardstate(struct fl_buf *b, uint64_t term, uint64_t vote, uint64_t commit);
void srv_wal_put_entry(struct fl_buf *b, uint64_t term, uint64_t index, uint32_t type,
                       const void *data, size_t len);
/* reset: the log was replaced by a snapshot from the leader (drop every entry). */
void srv_wal_put_snapshot(struct fl_buf *b, uint64_t index, uint64_t term, bool reset);

void srv_wal_state_init(struct srv_wal_state *st);
/* Frees every entry's bytes and keeps none from now on (see no_data). */
void srv_wal_state_drop_data(struct srv_wal_state *st);
void srv_wal_state_close(struct srv_wal_state *st);
/* Replays the records of one file into st. Never fails: a bad record ends the replay
 * of this buffer (st->torn, st->valid_bytes say where). Returns records replayed. */
int srv_wal_replay(struct srv_wal_state *st, const uint8_t *p, size_t n);
/* Adds one entry with the log rules of the replay (match no-op, conflict truncates). */
void srv_wal_state_append(struct srv_wal_state *st, uint64_t term, uint64_t index, uint32_t type,
                          const uint8_t *data, size_t len);
/* Drops every entry (a snapshot from the leader replaced the log). */
void srv_wal_state_reset(struct srv_wal_state *st);
/* Drops entries with index <= upto (they are covered by a snapshot and compacted). */
void srv_wal_state_compact(struct srv_wal_state *st, uint64_t upto);

/* Little-endian helpers shared by the member's file formats. */
void srv_put_u32(struct fl_buf *b, uint32_t v);
void srv_put_u64(struct fl_buf *b, uint64_t v);
void srv_put_bytes(struct fl_buf *b, const void *p, size_t n); /* u32 length + bytes */
struct srv_reader {
    const uint8_t *p;
    size_t n, off;
    bool bad; /* set once a read ran past the end; reads then return 0 */
};
uint32_t srv_get_u32(struct srv_reader *r);
uint64_t srv_get_u64(struct srv_reader *r);
/* Points *out at the bytes inside the buffer (no copy). */
size_t srv_get_bytes(struct srv_reader *r, const uint8_t **out);

#endif
