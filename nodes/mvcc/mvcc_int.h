/*
 * mvcc_int.h: internals shared by the files of nodes/mvcc (never included outside).
 *
 * Layout of the store:
 * - every key is a struct mvcc_key holding its revisions in ascending mod_revision
 *   order (struct mvcc_rev; a tombstone has create_rev == version == 0);
 * - the key index is an array of key pointers whose prefix [0, sorted_len) is in
 *   byte order and whose tail holds keys created since the last ordered access;
 *   mvcc__index_sort merges the tail in before anything iterates in order. An
 *   open-addressing hash table (lookup only, never iterated) finds a key by bytes;
 * - the revision log lists every kept (main, sub, key) at or above the compact
 *   revision in revision order; watch catch-up reads it;
 * - leases sit in an array sorted by id, each with the keys attached to it;
 * - watchers sit in an array by ascending id (a removed one leaves a hole until the
 *   next compaction of the array), in an interval tree by key range (a write finds
 *   the watchers of its keys without looking at the others), in a sorted array when
 *   unsynced, and in a heap by the sequence number of their oldest queued response
 *   when they have one (draining takes the store-wide oldest without a scan).
 * Nothing here iterates a hash table or depends on addresses for its order.
 */
#ifndef FL_MVCC_INT_H
#define FL_MVCC_INT_H

/* Internal to nodes/mvcc: compiled only into fl_mvcc (which defines FL_INTERNAL_mvcc)
 * and into the white-box tests that declare it (tests/CMakeLists.txt). */
#ifndef FL_INTERNAL_mvcc
#error "nodes/mvcc/mvcc_int.h is internal to nodes/mvcc: include its public header instead"
#endif

#include "harness/common/bugs.h"
#include "harness/common/common.h"
#include "harness/common/ivtree.h"
#include "nodes/mvcc/mvcc.h"

struct mvcc_rev {
    int64_t mod_rev;
    int64_t create_rev; /* 0 for a tombstone */
    int64_t version;    /* 0 for a tombstone */
    int64_t lease;
    uint8_t *val; /* in the key's value chunks; NULL when val_len == 0 */
    uint32_t val_len;
    uint32_t sub;
};

/* A key's values live in its own chunks: bump-allocated and never moved, so a value
 * pointer stays valid until a compaction rebuilds them. A put costs no malloc, and a
 * snapshot or hash reads each key's values from adjacent memory. */
struct mvcc_vchunk {
    struct mvcc_vchunk *next; /* older chunk */
    uint32_t cap, used;
    uint8_t data[];
};

struct mvcc_key {
    uint8_t *key; /* owned */
    size_t key_len;
    uint64_t hash;
    struct mvcc_rev *revs; /* owned, ascending mod_rev */
    size_t revs_len;
    size_t revs_cap;
    struct mvcc_vchunk *vals; /* owned, newest first */
    size_t vals_live;         /* bytes of the values its revisions hold */
    size_t vals_alloc;        /* bytes of chunk space handed out */
    int64_t lease;            /* lease the live key is attached to, 0 none */
    size_t lease_slot;        /* index in that lease's keys array */
    uint64_t live_hash;       /* mvcc__rev_state_hash of its last revision while that is
                                 not a tombstone (what mvcc_state_hash holds for it), so
                                 the next write takes it out without hashing the value
                                 again */
};

static inline bool mvcc__rev_is_tomb(const struct mvcc_rev *r)
{
    return r->version == 0;
}

struct mvcc_logrec {
    int64_t main;
    uint32_t sub;
    struct mvcc_key *key;
};

struct mvcc_lease {
    int64_t id;
    int64_t ttl_s;
    int64_t expiry_ns; /* INT64_MAX when not primary */
    int64_t taken_ns;  /* when mvcc_lease_expired_take last handed it out; 0 never */
    struct mvcc_key **keys;
    size_t keys_len;
    size_t keys_cap;
};

struct mvcc_watcher {
    int64_t id;
    uint8_t *key;
    size_t key_len;
    uint8_t *end;
    size_t end_len;
    int64_t start_rev; /* first revision it was created to deliver */
    /* Next revision to deliver. A synced watcher's is max(min_rev, current_rev + 1):
     * a write does not visit the synced watchers it does not concern to move theirs. */
    int64_t min_rev;
    bool prev_kv, progress_notify, filter_put, filter_delete;
    bool synced;
    bool canceled;             /* a cancel response is queued; no more deliveries */
    struct mvcc_watch_resp *q; /* queue [q_head, q_len) */
    size_t q_head, q_len, q_cap;
    struct fl_ivnode iv; /* its key range, in the store's watch_tree when in_tree */
    bool in_tree;
    size_t ready_pos; /* in the store's ready heap; SIZE_MAX when its queue is empty */
};

/* A watcher concerned by event j of the write being notified. */
struct mvcc_watch_hit {
    struct mvcc_watcher *w;
    size_t j;
};

struct mvcc_store {
    struct mvcc_config cfg;
    int64_t current_rev;
    int64_t compact_rev; /* 0 = never */
    bool compacted_once;
    uint64_t applied_index;

    /* key index */
    struct mvcc_key **keys;
    size_t keys_len, keys_cap, sorted_len;
    struct mvcc_key **table; /* hash table, power-of-two size */
    size_t table_cap, table_used;

    /* revision log, in (main, sub) order */
    struct mvcc_logrec *log;
    size_t log_len, log_cap;

    /* leases, sorted by id */
    struct mvcc_lease **leases;
    size_t leases_len, leases_cap;
    bool lease_primary;

    /* mvcc_state_hash: sum of mvcc__rev_state_hash over the live keys */
    uint64_t state_hash;

    /* size model */
    int64_t size_bytes, live_bytes;
    int64_t last_compact_removed;

    /* watchers, ascending id; watchers[i] NULL once removed, watcher_ids[i] kept so
     * the array stays searchable until it is compacted */
    struct mvcc_watcher **watchers;
    int64_t *watcher_ids;
    size_t watchers_len, watchers_cap, watchers_live;
    struct fl_ivtree watch_tree;    /* live watchers whose range holds some key */
    struct mvcc_watcher **unsynced; /* !synced && !canceled, ascending id */
    size_t unsynced_len, unsynced_cap;
    size_t canceled_len;         /* live watchers with a cancel response queued */
    struct mvcc_watcher **ready; /* min-heap by the seq of the first queued response */
    size_t ready_len, ready_cap;
    struct mvcc_watch_hit *hits; /* scratch of mvcc__watch_notify */
    size_t hits_len, hits_cap;
    uint64_t watch_steps; /* watchers examined (mvcc_stats.watch_steps) */
    int64_t next_watch_id;
    uint64_t next_resp_seq;
    size_t pending_resps;

    /* an open write txn */
    bool in_write;
    int64_t write_rev;
    uint32_t write_sub;
    size_t write_log_start;
};

#define MVCC_LEASE_OVERHEAD_BYTES 48

/* mvcc_store.c */
struct mvcc_key *mvcc__key_find(const struct mvcc_store *s, const uint8_t *k, size_t n);
struct mvcc_key *mvcc__key_get_or_add(struct mvcc_store *s, const uint8_t *k, size_t n);
void mvcc__index_sort(struct mvcc_store *s);
/* First index in the sorted index whose key is >= k. Requires a sorted index. */
size_t mvcc__index_lower(const struct mvcc_store *s, const uint8_t *k, size_t n);
/* Drops keys without revisions from the index and frees them; rebuilds the table. */
void mvcc__index_prune(struct mvcc_store *s);
void mvcc__key_free(struct mvcc_key *k);
/* Copies p[0..n) into k's value chunks (NULL when n is 0). */
uint8_t *mvcc__val_store(struct mvcc_key *k, const void *p, size_t n);
/* A revision of k stopped holding its value (the bytes stay until a rebuild). */
void mvcc__val_drop(struct mvcc_key *k, const struct mvcc_rev *r);
/* Rebuilds k's chunks from its revisions when most of their space is dead. */
void mvcc__vals_maybe_rebuild(struct mvcc_key *k);
int mvcc__bytes_cmp(const uint8_t *a, size_t an, const uint8_t *b, size_t bn);
/* Does key k fall in [key, end) with etcd's conventions? */
bool mvcc__in_range(const uint8_t *k, size_t kn, const uint8_t *key, size_t key_len,
                    const uint8_t *end, size_t end_len);
/* Index of the newest revision with mod_rev <= rev, or -1. */
long mvcc__key_at(const struct mvcc_key *k, int64_t rev);
int64_t mvcc__rev_cost(const struct mvcc_store *s, const struct mvcc_key *k,
                       const struct mvcc_rev *r);
/* The share of live revision r of key k in the state hash, and the state hash
 * recomputed from every live key (O(keys)). */
uint64_t mvcc__rev_state_hash(const struct mvcc_key *k, const struct mvcc_rev *r);
/* Recomputes mvcc_state_hash from scratch, setting every live key's live_hash. */
uint64_t mvcc__state_hash_full(struct mvcc_store *s);

/* mvcc_kv.c */
/* Entry points for mvcc_txn.c: a range or put's checks, a range at a revision, and
 * the writes, as the plain calls make them. */
enum mvcc_err mvcc__check_range(const struct mvcc_store *s, const struct mvcc_range_req *req);
enum mvcc_err mvcc__check_put(const struct mvcc_store *s, const struct mvcc_put_req *req);
void mvcc__range_at(struct mvcc_store *s, const struct mvcc_range_req *req, int64_t rev,
                    struct mvcc_range_result *out);
void mvcc__write_put(struct mvcc_store *s, const struct mvcc_put_req *req,
                     struct mvcc_put_result *out);
void mvcc__write_delete(struct mvcc_store *s, const struct mvcc_delete_req *req,
                        struct mvcc_delete_result *out);
void mvcc__kv_fill(struct mvcc_kv *out, const struct mvcc_key *k, const struct mvcc_rev *r,
                   bool keys_only);

/* mvcc_lease.c */
struct mvcc_lease *mvcc__lease_find(const struct mvcc_store *s, int64_t id);
void mvcc__lease_attach(struct mvcc_store *s, struct mvcc_key *k, int64_t lease);
void mvcc__lease_detach(struct mvcc_store *s, struct mvcc_key *k);
void mvcc__lease_free(struct mvcc_lease *l);
/* Inserts a lease record (no size accounting, no checks beyond asserts). */
struct mvcc_lease *mvcc__lease_insert(struct mvcc_store *s, int64_t id, int64_t ttl_s,
                                      int64_t expiry_ns);

/* mvcc_watch.c */
/* Called when a write txn made revision rev; log records [log_start, log_len). */
void mvcc__watch_notify(struct mvcc_store *s, size_t log_start);
/* After a restore replaced the data; old_rev is the current revision before it. */
void mvcc__watch_after_restore(struct mvcc_store *s, int64_t old_rev,
                               enum mvcc_restore_reason reason);
void mvcc__watch_close_all(struct mvcc_store *s);

/* write-path primitives (mvcc_kv.c) */
void mvcc__write_begin(struct mvcc_store *s);
/* Ends the write txn; returns the header revision (new if anything was written). */
int64_t mvcc__write_end(struct mvcc_store *s);
/* Deletes one live key inside an open write txn. */
void mvcc__write_tomb(struct mvcc_store *s, struct mvcc_key *k);

#endif
