/*
 * mvcc.h: the pure MVCC core of one etcd-like member (DESIGN §3.1, §3.4): a
 * multi-version key-value store with revisions, Range/Put/DeleteRange/Txn, manual
 * compaction and the auto-compaction policy math, watchers with catch-up and
 * progress notifications, leases, a simulated backend size with defragmentation,
 * HashKV, and snapshot encoding.
 *
 * The core does no I/O: no clock, no sockets, no files. Time enters as int64
 * nanosecond arguments. The server (nodes/server) applies committed Raft entries by
 * calling the write functions below in log order on every member, serves reads from
 * them, drains watch responses and sends them, and decides when to call the timed
 * functions (lease expiry, auto-compaction, watch sync, progress notifications).
 *
 * Behaviour follows etcd (reference/etcd-facts.md): the revision starts at 1 on an
 * empty store and grows by one per write transaction that changes something; each
 * write inside one transaction gets a sub-revision; every revision of every key is
 * kept until compacted; a delete writes a tombstone and a later put starts a new
 * generation (version 1, new create_revision). Errors are enum mvcc_err values whose
 * text (mvcc_err_text) is the exact client-visible etcd string and whose gRPC code
 * (mvcc_err_code) is etcd's mapping.
 *
 * Ranges use etcd's conventions: range_end empty = the single key; range_end "\0"
 * (one zero byte) = every key >= key; otherwise [key, range_end) in byte order.
 *
 * Memory: request structs are borrowed for the duration of a call. Key and value
 * bytes in range/put/delete/txn results point into the store and stay valid until
 * the next mvcc_compact, mvcc_snapshot_restore, mvcc_defrag or mvcc_close; the
 * result arrays are owned by the result and freed with the matching *_free
 * function. Watch responses own all their bytes (mvcc_watch_resp_free).
 *
 * Bug switches living here (harness/common/bugs.h):
 * - MVCC_WATCH_SKIP_ON_COMPACT (etcd#18089): an unsynced watcher catching up drops the
 *   delete event that sits exactly at the compaction revision.
 * - MVCC_RESTORE_SKIPS_TOMBSTONE (etcd#19179): a restore drops a tombstone that is the
 *   first revision of its key (the rest compacted away), and with it its delete event.
 * - MVCC_RESTORE_KEEPS_WATCHERS_SYNCED (etcd#8411): a restore leaves synced watchers
 *   synced, moved on to the new current revision, skipping what the snapshot brought.
 * - MVCC_RESTORE_LOWERS_FUTURE_WATCH (etcd#20221): a restore makes every watcher
 *   unsynced and the resync sets a watcher on a future revision back to the current
 *   revision + 1, so it delivers events before the revision it asked for.
 * - MVCC_WATCH_COMPACTED_LOST (etcd#17529): an unsynced watcher behind the compaction
 *   whose cancel its full stream refused is moved on to the compaction revision
 *   instead of being cancelled later, silently skipping the events it missed.
 * - MVCC_PROGRESS_BEFORE_EVENTS (etcd#15220): a progress notification is emitted for
 *   a watcher that still has undelivered events (unsynced or queued) and jumps
 *   ahead of them, carrying the current revision.
 * - MVCC_WATCH_OLD_AFTER_PARTITION (etcd#15271): when a Raft snapshot is restored
 *   into the store, watchers are rewound to their original start revision and so
 *   resend revisions they already delivered. mvcc_watch_rewind is the same hook for
 *   the server to call directly.
 * - MVCC_REVISION_RESET_ON_RESTART (etcd#17780-like): a restore for a restart
 *   recomputes the current revision from the newest live (non-tombstone) entry
 *   instead of trusting the persisted revision, so it can go back.
 */
#ifndef FL_MVCC_H
#define FL_MVCC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "harness/common/common.h"

/* ---------------------------------------------------------------- errors */

enum mvcc_err {
    MVCC_OK = 0,
    MVCC_ERR_COMPACTED,       /* "etcdserver: mvcc: required revision has been compacted" */
    MVCC_ERR_FUTURE_REV,      /* "etcdserver: mvcc: required revision is a future revision" */
    MVCC_ERR_DUPLICATE_KEY,   /* "etcdserver: duplicate key given in txn request" */
    MVCC_ERR_KEY_NOT_GIVEN,   /* "etcdserver: key is not provided" */
    MVCC_ERR_TOO_MANY_OPS,    /* "etcdserver: too many operations in txn request" */
    MVCC_ERR_LEASE_NOT_FOUND, /* "etcdserver: requested lease not found" */
    MVCC_ERR_LEASE_EXISTS,    /* "etcdserver: lease already exists" */
    MVCC_ERR_LEASE_TTL_LARGE, /* "etcdserver: too large lease TTL" */
    MVCC_ERR_KEY_NOT_FOUND,   /* "etcdserver: key not found" (ignore_value/ignore_lease) */
    MVCC_ERR_NO_SPACE,        /* "etcdserver: mvcc: database space exceeded" (for the server) */
    MVCC_ERR_NOT_LEADER,      /* "etcdserver: not leader" (keep-alive on a non-primary lessor) */
    MVCC_ERR_WATCH_NOT_FOUND, /* "etcdserver: watch canceled" (unknown watch id) */
    MVCC_ERR_BAD_SNAPSHOT,    /* snapshot bytes failed to decode; not an etcd wire error */
    MVCC_ERR_INVALID,         /* malformed request (e.g. negative limit); not an etcd text */
    MVCC_ERR_COUNT
};

/* gRPC status codes (the numbers are gRPC's). */
enum mvcc_grpc_code {
    MVCC_GRPC_OK = 0,
    MVCC_GRPC_CANCELLED = 1,
    MVCC_GRPC_UNKNOWN = 2,
    MVCC_GRPC_INVALID_ARGUMENT = 3,
    MVCC_GRPC_DEADLINE_EXCEEDED = 4,
    MVCC_GRPC_NOT_FOUND = 5,
    MVCC_GRPC_ALREADY_EXISTS = 6,
    MVCC_GRPC_PERMISSION_DENIED = 7,
    MVCC_GRPC_RESOURCE_EXHAUSTED = 8,
    MVCC_GRPC_FAILED_PRECONDITION = 9,
    MVCC_GRPC_ABORTED = 10,
    MVCC_GRPC_OUT_OF_RANGE = 11,
    MVCC_GRPC_UNIMPLEMENTED = 12,
    MVCC_GRPC_INTERNAL = 13,
    MVCC_GRPC_UNAVAILABLE = 14,
    MVCC_GRPC_DATA_LOSS = 15
};

/* The exact client-visible etcd text ("" for MVCC_OK); never NULL. */
const char *mvcc_err_text(enum mvcc_err err);
/* etcd's gRPC code for the error. */
enum mvcc_grpc_code mvcc_err_code(enum mvcc_err err);

/* ---------------------------------------------------------------- store */

struct mvcc_config {
    int64_t lease_min_ttl_s;            /* grants below this get this TTL (etcd: 3 x election
                                           timeout rounded up); default 0 = no minimum */
    int64_t lease_max_ttl_s;            /* above: MVCC_ERR_LEASE_TTL_LARGE; default 9e9 */
    int64_t max_txn_ops;                /* ops per txn branch; 0 = unlimited; default 128 */
    int64_t watch_batch_events_max;     /* events per catch-up response (never splitting a
                                           revision); default 1000 */
    int64_t watch_sync_events_max;      /* events one watcher catches up per mvcc_watch_sync;
                                           0 = unlimited; default 0 */
    int64_t watch_queue_max;            /* responses a watcher's stream buffers (etcd's
                                           chanBufLen, 128). A synced watcher notified on
                                           a full buffer becomes a victim: its response
                                           is kept (queued) and it catches up as an
                                           unsynced watcher once there is room. A full
                                           buffer refuses a compaction cancel, retried
                                           at the next sync. 0 = unlimited; default 0 */
    int64_t backend_base_bytes;         /* size of an empty backend; default 16384 */
    int64_t backend_rev_overhead_bytes; /* added per written revision; default 64 */
    int64_t defrag_base_ns;             /* defrag duration = base + size * ns_per_kib / 1024 */
    int64_t defrag_ns_per_kib;          /* default 10 ms base, 10 us per KiB (~100 MiB/s) */
};
void mvcc_config_default(struct mvcc_config *cfg);

struct mvcc_store; /* opaque */

/* Creates an empty store (revision 1, compact revision 0 as seen by clients).
 * cfg may be NULL for defaults. Never fails (allocation failure aborts). */
struct mvcc_store *mvcc_open(const struct mvcc_config *cfg);
/* Frees the store, its watchers and their queued responses. NULL is allowed. */
void mvcc_close(struct mvcc_store *s);

int64_t mvcc_current_rev(const struct mvcc_store *s);
/* The last compaction revision; 0 when never compacted. */
int64_t mvcc_compact_rev(const struct mvcc_store *s);

/* The Raft index of the last entry the server applied (etcd's consistent index);
 * stored in snapshots so a restarted member knows where to resume applying. */
uint64_t mvcc_applied_index(const struct mvcc_store *s);
void mvcc_set_applied_index(struct mvcc_store *s, uint64_t index);

struct mvcc_stats {
    int64_t current_rev;
    int64_t compact_rev;
    int64_t keys;      /* keys in the index (including ones whose latest is a tombstone) */
    int64_t live_keys; /* keys that exist at the current revision */
    int64_t revisions; /* key revisions kept (puts and tombstones) */
    int64_t leases;
    int64_t watchers;
    int64_t unsynced_watchers;
    int64_t size_bytes;           /* simulated on-disk size */
    int64_t live_bytes;           /* what a defrag would leave */
    int64_t last_compact_removed; /* key revisions the last mvcc_compact removed (etcd
                                     deletes them in batches of 1000, 10 ms apart: the
                                     server may model that duration from this) */
};
void mvcc_stats_get(const struct mvcc_store *s, struct mvcc_stats *out);

/* ---------------------------------------------------------------- KV */

/* A key-value pair at one revision. Bytes are borrowed (see Memory above).
 * value is NULL/0 for keys_only ranges and for delete events. */
struct mvcc_kv {
    const uint8_t *key;
    size_t key_len;
    const uint8_t *value;
    size_t value_len;
    int64_t create_revision;
    int64_t mod_revision;
    int64_t version;
    int64_t lease;
};

enum mvcc_sort_order { MVCC_SORT_NONE, MVCC_SORT_ASCEND, MVCC_SORT_DESCEND };
enum mvcc_sort_target {
    MVCC_SORT_KEY,
    MVCC_SORT_VERSION,
    MVCC_SORT_CREATE,
    MVCC_SORT_MOD,
    MVCC_SORT_VALUE
};

struct mvcc_range_req {
    const uint8_t *key;
    size_t key_len;
    const uint8_t *range_end; /* NULL/0: single key; "\0": all >= key */
    size_t range_end_len;
    int64_t revision; /* 0 = current */
    int64_t limit;    /* 0 = no limit */
    bool count_only;
    bool keys_only;
    /* Optional sort (etcd): with an order other than NONE, or a target other than
     * KEY, every matching key is sorted (ties by key) and then cut to limit.
     * Zero = key byte order. */
    enum mvcc_sort_order sort_order;
    enum mvcc_sort_target sort_target;
};

struct mvcc_range_result {
    int64_t header_rev;  /* current revision of the store (as etcd reports) */
    struct mvcc_kv *kvs; /* owned array, byte order of keys; NULL when count_only */
    size_t kvs_len;
    int64_t count; /* keys matching, ignoring limit */
    bool more;     /* limit cut the answer */
};
void mvcc_range_result_free(struct mvcc_range_result *r);

struct mvcc_put_req {
    const uint8_t *key;
    size_t key_len;
    const uint8_t *value;
    size_t value_len;
    int64_t lease; /* 0 = none */
    bool prev_kv;
    bool ignore_value; /* keep the current value (key must exist) */
    bool ignore_lease; /* keep the current lease (key must exist) */
};

struct mvcc_put_result {
    int64_t header_rev; /* the revision this put created */
    bool has_prev;
    struct mvcc_kv prev_kv; /* when prev_kv was asked and the key existed */
};

struct mvcc_delete_req {
    const uint8_t *key;
    size_t key_len;
    const uint8_t *range_end;
    size_t range_end_len;
    bool prev_kv;
};

struct mvcc_delete_result {
    int64_t header_rev; /* new revision if something was deleted, else current */
    int64_t deleted;
    struct mvcc_kv *prev_kvs; /* owned array, when prev_kv was asked */
    size_t prev_kvs_len;
};
void mvcc_delete_result_free(struct mvcc_delete_result *r);

enum mvcc_cmp_target {
    MVCC_CMP_VERSION,
    MVCC_CMP_CREATE,
    MVCC_CMP_MOD,
    MVCC_CMP_VALUE,
    MVCC_CMP_LEASE
};
enum mvcc_cmp_op { MVCC_CMP_EQUAL, MVCC_CMP_GREATER, MVCC_CMP_LESS, MVCC_CMP_NOT_EQUAL };

/* One txn compare, evaluated against the store before the txn writes anything.
 * With a range_end every key in the range must satisfy it. A missing key compares
 * as 0 for version/create/mod/lease and makes a VALUE compare false (etcd). */
struct mvcc_compare {
    enum mvcc_cmp_target target;
    enum mvcc_cmp_op op;
    const uint8_t *key;
    size_t key_len;
    const uint8_t *range_end;
    size_t range_end_len;
    int64_t number;       /* for VERSION/CREATE/MOD/LEASE */
    const uint8_t *value; /* for VALUE (byte-wise comparison) */
    size_t value_len;
};

enum mvcc_op_kind { MVCC_OP_RANGE, MVCC_OP_PUT, MVCC_OP_DELETE, MVCC_OP_TXN };

struct mvcc_txn_req;
struct mvcc_op {
    enum mvcc_op_kind kind;
    union {
        struct mvcc_range_req range;
        struct mvcc_put_req put;
        struct mvcc_delete_req del;
        const struct mvcc_txn_req *txn; /* nested txn */
    } u;
};

struct mvcc_txn_req {
    const struct mvcc_compare *compares;
    size_t compares_len;
    const struct mvcc_op *success;
    size_t success_len;
    const struct mvcc_op *failure;
    size_t failure_len;
};

struct mvcc_txn_result;
struct mvcc_op_result {
    enum mvcc_op_kind kind;
    union {
        struct mvcc_range_result range;
        struct mvcc_put_result put;
        struct mvcc_delete_result del;
        struct mvcc_txn_result *txn; /* owned */
    } u;
};

struct mvcc_txn_result {
    int64_t header_rev;             /* new revision if the txn wrote, else current */
    bool succeeded;                 /* compares held: the success branch ran */
    struct mvcc_op_result *results; /* owned, one per op of the branch that ran */
    size_t results_len;
};
void mvcc_txn_result_free(struct mvcc_txn_result *r);

/* Range. Errors: MVCC_ERR_KEY_NOT_GIVEN (empty key), MVCC_ERR_COMPACTED (revision
 * below the compact revision), MVCC_ERR_FUTURE_REV (revision above the current one),
 * MVCC_ERR_INVALID (negative limit/revision). On error *out is zeroed. */
enum mvcc_err mvcc_range(struct mvcc_store *s, const struct mvcc_range_req *req,
                         struct mvcc_range_result *out);

/* Put: one new revision. Errors: MVCC_ERR_KEY_NOT_GIVEN, MVCC_ERR_LEASE_NOT_FOUND
 * (lease != 0 not granted; nothing is written); ignore_value or
 * ignore_lease on a missing key gives MVCC_ERR_KEY_NOT_FOUND, as etcd. */
enum mvcc_err mvcc_put(struct mvcc_store *s, const struct mvcc_put_req *req,
                       struct mvcc_put_result *out);

/* DeleteRange: one new revision if at least one key was deleted. */
enum mvcc_err mvcc_delete(struct mvcc_store *s, const struct mvcc_delete_req *req,
                          struct mvcc_delete_result *out);

/* Txn: all compares (including those of nested txns on the chosen path) are
 * evaluated against the state before the txn; then the chosen branch runs as one
 * revision (sub-revisions inside), reads seeing earlier writes of the same txn.
 * Validated before anything is written, so an error leaves the store unchanged:
 * MVCC_ERR_DUPLICATE_KEY (a key put twice, or put and deleted, in one branch),
 * MVCC_ERR_TOO_MANY_OPS, MVCC_ERR_KEY_NOT_GIVEN, MVCC_ERR_LEASE_NOT_FOUND,
 * MVCC_ERR_COMPACTED / MVCC_ERR_FUTURE_REV (a range at such a revision). */
enum mvcc_err mvcc_txn(struct mvcc_store *s, const struct mvcc_txn_req *req,
                       struct mvcc_txn_result *out);

/* Bytes a put of these sizes adds to the backend (for the server's quota check). */
int64_t mvcc_put_cost_bytes(const struct mvcc_store *s, size_t key_len, size_t value_len);

/* ---------------------------------------------------------------- compaction */

/* Compacts: removes every key revision below rev except, per key, the newest one at
 * or below rev; if that one is a tombstone it goes too, unless it sits exactly at
 * rev (kept so a watcher starting at rev still sees the delete, as etcd >= 3.5.15).
 * Reads and watches below rev then fail with MVCC_ERR_COMPACTED. Errors:
 * MVCC_ERR_COMPACTED (rev <= the last compact revision, except the very first
 * compaction which accepts 0), MVCC_ERR_FUTURE_REV (rev > current). Sizes: live
 * bytes drop, the on-disk size does not (only mvcc_defrag shrinks it).
 * *header_rev (may be NULL) gets the current revision. */
enum mvcc_err mvcc_compact(struct mvcc_store *s, int64_t rev, int64_t *header_rev);

/* Auto-compaction policy (etcd's compactor as pure math; the server owns the timer
 * and calls mvcc_compact with the answer, through Raft on the leader).
 * - REVISION: every 5 minutes, compact to current - retention if that is > 0 and
 *   differs from the last target. Retention 1000 with 500 new revisions per 5 min
 *   compacts 500 revisions every 5 minutes.
 * - PERIODIC (etcd 3.3 semantics): retention is a duration in ns. The current
 *   revision is sampled every min(retention, 1h)/10; the first compaction happens one
 *   retention after start, to the revision sampled one retention ago; afterwards one
 *   compaction every min(retention, 1h), each to the revision sampled one retention
 *   before. Retention 8h: every hour, the oldest hour's revisions go. */
enum mvcc_autocompact_mode {
    MVCC_AUTOCOMPACT_OFF,
    MVCC_AUTOCOMPACT_REVISION,
    MVCC_AUTOCOMPACT_PERIODIC
};

struct mvcc_ac_sample {
    int64_t at_ns;
    int64_t rev;
};

struct mvcc_autocompact {
    enum mvcc_autocompact_mode mode;
    int64_t retention; /* revisions (REVISION) or nanoseconds (PERIODIC) */
    int64_t start_ns;
    int64_t next_sample_ns;         /* PERIODIC */
    int64_t next_compact_ns;        /* both modes */
    int64_t last_target_rev;        /* last revision handed out */
    bool paused;                    /* not the leader: ticks pass, nothing is compacted */
    struct mvcc_ac_sample *samples; /* owned ring, oldest first */
    size_t samples_len;
    size_t samples_cap;
};

#define MVCC_AUTOCOMPACT_REVISION_INTERVAL_NS (5 * 60 * FL_S)
#define MVCC_AUTOCOMPACT_PERIODIC_MAX_NS      (60 * 60 * FL_S)

void mvcc_autocompact_init(struct mvcc_autocompact *ac, enum mvcc_autocompact_mode mode,
                           int64_t retention, int64_t now_ns);
void mvcc_autocompact_close(struct mvcc_autocompact *ac);
/* etcd's compactor runs from the member's start and is only paused while the member
 * is not the leader (Pause/Resume on every leadership change): its timer keeps its
 * phase, so a leader elected at 960 s compacts at the 1200 s tick, not 300 s after
 * its election. A policy starts paused. While paused a step hands out nothing and
 * moves no target; PERIODIC keeps sampling, and a compaction that fell due waits for
 * the next sample tick (etcd's retry interval) after the resume. */
void mvcc_autocompact_pause(struct mvcc_autocompact *ac, bool paused);
/* When the policy next needs mvcc_autocompact_step; INT64_MAX when OFF. */
int64_t mvcc_autocompact_next_ns(const struct mvcc_autocompact *ac);
/* Call at (or after) mvcc_autocompact_next_ns with the current revision. Returns
 * the revision to compact to, or 0 for nothing now. */
int64_t mvcc_autocompact_step(struct mvcc_autocompact *ac, int64_t now_ns, int64_t current_rev);
/* The compaction handed out by the last step failed (not "already compacted",
 * which counts as success): retry after retention/10 (PERIODIC) or at the next
 * interval (REVISION). */
void mvcc_autocompact_failed(struct mvcc_autocompact *ac, int64_t now_ns);

/* ---------------------------------------------------------------- watch */

struct mvcc_watch_req {
    const uint8_t *key;
    size_t key_len;
    const uint8_t *range_end;
    size_t range_end_len;
    int64_t start_rev; /* 0 = current + 1 ("from now") */
    bool prev_kv;
    bool progress_notify; /* wants mvcc_watch_progress_all notifications */
    bool filter_put;      /* etcd NOPUT */
    bool filter_delete;   /* etcd NODELETE */
};

enum mvcc_event_type { MVCC_EVENT_PUT, MVCC_EVENT_DELETE };

/* Owned by the response that holds it. For deletes kv carries key and mod_revision
 * only (create_revision, version 0). prev_kv when asked and still in history. */
struct mvcc_event {
    enum mvcc_event_type type;
    struct mvcc_kv kv;
    bool has_prev;
    struct mvcc_kv prev_kv;
};

struct mvcc_watch_resp {
    int64_t watch_id;
    uint64_t seq;       /* store-wide order in which responses were produced */
    int64_t header_rev; /* store revision when produced (the progress revision) */
    bool progress;      /* a progress notification: no events */
    bool canceled;
    int64_t compact_rev;       /* > 0 when canceled because start was compacted */
    enum mvcc_err cancel_err;  /* MVCC_ERR_COMPACTED when compacted */
    struct mvcc_event *events; /* owned; all events of each revision it covers */
    size_t events_len;
};
void mvcc_watch_resp_free(struct mvcc_watch_resp *r);

/* Creates a watcher. A start_rev at or below the current revision makes it
 * unsynced: it catches up from history on the next mvcc_watch_sync (a start below
 * the compact revision then cancels it with the compact revision). start_rev 0 or
 * above current makes it synced: it gets events of every later revision >= start
 * as they are applied. *id gets a store-unique id (> 0). *header_rev (may be NULL)
 * gets the current revision (for the server's "created" response). */
enum mvcc_err mvcc_watch_create(struct mvcc_store *s, const struct mvcc_watch_req *req, int64_t *id,
                                int64_t *header_rev);
/* Removes the watcher and drops its queued responses; MVCC_ERR_WATCH_NOT_FOUND. */
enum mvcc_err mvcc_watch_cancel(struct mvcc_store *s, int64_t id);

/* etcd's syncWatchers step (etcd runs it every 100 ms): every unsynced watcher
 * catches up from history (at most watch_sync_events_max events each per call),
 * queuing responses that never split a revision; caught up, it becomes synced.
 * Returns the number of watchers still unsynced. */
int64_t mvcc_watch_sync(struct mvcc_store *s);

/* Requested progress (WatchProgressRequest) for one watcher: when the watcher is
 * synced and has no queued event responses, queues a progress response with the
 * current revision and returns true; otherwise returns false (nothing queued; etcd
 * sends nothing either). MVCC_PROGRESS_BEFORE_EVENTS makes it always queue, at the
 * head of the queue. */
bool mvcc_watch_request_progress(struct mvcc_store *s, int64_t id);
/* Periodic progress notify: the same for every watcher that asked progress_notify
 * (etcd's interval, default 10 min, is the server's timer). Returns how many
 * notifications were queued. */
int64_t mvcc_watch_progress_all(struct mvcc_store *s);

/* Pops the oldest queued response (lowest seq) of any watcher into *out (owned by
 * the caller: mvcc_watch_resp_free). Returns false when nothing is queued. A
 * canceled response also removes its watcher. */
bool mvcc_watch_pop(struct mvcc_store *s, struct mvcc_watch_resp *out);
/* The same restricted to one watcher. */
bool mvcc_watch_pop_id(struct mvcc_store *s, int64_t id, struct mvcc_watch_resp *out);
/* Number of queued responses across all watchers. */
size_t mvcc_watch_pending(const struct mvcc_store *s);

/* True when the watcher is synced and has no queued event responses: what etcd
 * requires of every watcher of a stream before it answers a progress request
 * with one stream-wide notification (watch id -1). False when not found. */
bool mvcc_watch_idle(const struct mvcc_store *s, int64_t id);

/* Hook for MVCC_WATCH_OLD_AFTER_PARTITION: moves the watcher back to rev and makes
 * it unsynced, so it resends everything from rev. Returns MVCC_ERR_WATCH_NOT_FOUND. */
enum mvcc_err mvcc_watch_rewind(struct mvcc_store *s, int64_t id, int64_t rev);
/* The revision a watcher will deliver next (its minRev); 0 when not found. */
int64_t mvcc_watch_next_rev(const struct mvcc_store *s, int64_t id);
/* Watchers the watch bookkeeping examined so far (matching writes, catch-up,
 * draining, progress, restores): a work count for tests, never a behaviour. */
uint64_t mvcc_watch_steps(const struct mvcc_store *s);
/* The live watchers and, of them, the unsynced ones (catching up or canceled), in O(1):
 * mvcc_stats_get's two counts without its walk of the keys (explore's coverage reads
 * them at every node event). */
void mvcc_watcher_counts(const struct mvcc_store *s, int64_t *watchers, int64_t *unsynced);

/* ---------------------------------------------------------------- leases */

/* Leases are applied through Raft on every member; only the member whose lessor is
 * primary (the leader: mvcc_lease_promote) lets them expire. On a non-primary
 * lessor every lease's expiry is "never". */
struct mvcc_lease_info {
    int64_t id;
    int64_t granted_ttl_s;
    int64_t ttl_s;        /* remaining, rounded up; -1 when expired or not found */
    const uint8_t **keys; /* owned array of borrowed key pointers, byte order */
    size_t *key_lens;     /* owned */
    size_t keys_len;
};
void mvcc_lease_info_free(struct mvcc_lease_info *li);

/* Grants lease id (> 0; the leader picks ids and puts them into the Raft entry).
 * ttl_s is raised to lease_min_ttl_s. Errors: MVCC_ERR_LEASE_EXISTS,
 * MVCC_ERR_LEASE_TTL_LARGE, MVCC_ERR_INVALID (id <= 0). *ttl_out (may be NULL) gets
 * the TTL actually granted. Does not change the revision. */
enum mvcc_err mvcc_lease_grant(struct mvcc_store *s, int64_t id, int64_t ttl_s, int64_t now_ns,
                               int64_t *ttl_out);
/* Revokes: deletes every attached key as one revision (byte order; no revision if
 * no key), then forgets the lease. MVCC_ERR_LEASE_NOT_FOUND. *deleted and
 * *header_rev may be NULL. */
enum mvcc_err mvcc_lease_revoke(struct mvcc_store *s, int64_t id, int64_t *deleted,
                                int64_t *header_rev);
/* Keep-alive on the primary lessor: expiry = now + granted TTL; *ttl_out gets the
 * granted TTL. MVCC_ERR_LEASE_NOT_FOUND, MVCC_ERR_NOT_LEADER (not primary). */
enum mvcc_err mvcc_lease_renew(struct mvcc_store *s, int64_t id, int64_t now_ns, int64_t *ttl_out);
/* TimeToLive. MVCC_ERR_LEASE_NOT_FOUND. keys filled only when with_keys. */
enum mvcc_err mvcc_lease_ttl(struct mvcc_store *s, int64_t id, int64_t now_ns, bool with_keys,
                             struct mvcc_lease_info *out);
/* Ids of all leases in ascending order; *ids owned by the caller (free()). */
size_t mvcc_lease_list(const struct mvcc_store *s, int64_t **ids);
/* Becomes primary (new leader): every lease expires at now + its TTL + extend_ns
 * (etcd extends by the election timeout). */
void mvcc_lease_promote(struct mvcc_store *s, int64_t now_ns, int64_t extend_ns);
/* Stops being primary: no lease expires here any more. */
void mvcc_lease_demote(struct mvcc_store *s);
bool mvcc_lease_is_primary(const struct mvcc_store *s);
/* Leases whose expiry is <= now on a primary lessor, ascending by id, at most
 * ids_cap; the leader proposes their revocation through Raft. Returns the count. */
size_t mvcc_lease_expired(const struct mvcc_store *s, int64_t now_ns, int64_t *ids, size_t ids_cap);
/* Like mvcc_lease_expired, but each expired lease is handed out at most once per
 * MVCC_LEASE_REVOKE_RETRY_NS (etcd retries an expired lease's revocation after 3 s),
 * so a leader that cannot commit does not propose the same revoke every tick. */
#define MVCC_LEASE_REVOKE_RETRY_NS (3 * FL_S)
size_t mvcc_lease_expired_take(struct mvcc_store *s, int64_t now_ns, int64_t *ids, size_t ids_cap);
/* Earliest lease expiry on a primary lessor; INT64_MAX when none. */
int64_t mvcc_next_deadline_ns(const struct mvcc_store *s);

/* ---------------------------------------------------------------- backend size */

/* Simulated on-disk size: grows by key + value + overhead with every written
 * revision and lease grant; compaction frees space inside the file but the file
 * does not shrink. */
int64_t mvcc_size_bytes(const struct mvcc_store *s);
/* What a defrag would leave: base + what the kept revisions and leases need. */
int64_t mvcc_live_bytes(const struct mvcc_store *s);
/* How long a defrag of the current size blocks the member. */
int64_t mvcc_defrag_duration_ns(const struct mvcc_store *s);
/* Rewrites the backend to its live size; returns how long it blocks (ns). */
int64_t mvcc_defrag(struct mvcc_store *s);

/* ---------------------------------------------------------------- hash */

struct mvcc_hashkv {
    uint64_t hash;
    int64_t hash_rev; /* the revision hashed up to */
    int64_t compact_rev;
    int64_t header_rev;
};
/* HashKV: a hash of every key revision kept with mod_revision <= rev (0 = current),
 * in key byte order, plus the compact revision. Members that applied the same
 * entries give equal hashes. Errors: MVCC_ERR_COMPACTED, MVCC_ERR_FUTURE_REV. */
enum mvcc_err mvcc_hash_kv(struct mvcc_store *s, int64_t rev, struct mvcc_hashkv *out);

/* A hash of the store's state at its current revision: the sum (mod 2^64) over every
 * live key of a hash of (key, create/mod revision, version, lease, value). Kept up to
 * date by every write in O(1) and recomputed at a restore, so that members can compare
 * their states at every revision they share (etcd's corruption check compares HashKV
 * at a revision; this is that comparison made cheap enough for every revision). Equal
 * for stores with equal live data, whatever their history and compaction. */
uint64_t mvcc_state_hash(const struct mvcc_store *s);

/* ---------------------------------------------------------------- snapshots */

enum mvcc_restore_reason {
    MVCC_RESTORE_RAFT_SNAPSHOT, /* a follower installs a leader's snapshot */
    MVCC_RESTORE_RESTART,       /* a member restarts from its persisted state */
    MVCC_RESTORE_BACKUP         /* restore of a backup into a new cluster */
};

/* Appends the whole store (every kept revision, current and compact revision,
 * applied index, leases with their TTLs, size model) to out; watchers are not part
 * of it. Deterministic: equal stores give equal bytes. Ends with a CRC32C. */
void mvcc_snapshot_encode(struct mvcc_store *s, struct fl_buf *out);
/* Replaces the store's data with a decoded snapshot. Garbage, truncation or a bad
 * checksum gives MVCC_ERR_BAD_SNAPSHOT and leaves the store unchanged. Watchers
 * stay: each becomes unsynced at its next revision and catches up from the new
 * history (cancelled if that is compacted). Lease expiries restart as non-primary. */
enum mvcc_err mvcc_snapshot_restore(struct mvcc_store *s, const uint8_t *data, size_t len,
                                    enum mvcc_restore_reason reason);

/* ---------------------------------------------------------------- checks */

/* Checks every invariant of the store: index sorted (its sorted prefix) and unique,
 * per-key revisions increasing and consistent generations, revisions within [compact,
 * current], the revision log, lease attachments both ways, sizes, the state hash kept
 * equal to one recomputed, watcher positions and queues. Cost O(size). Reads only
 * (safe after every simulated event: --paranoid). mvcc_invariants_ok returns false
 * with the first broken invariant in why (file:line and what); mvcc_check_invariants
 * sorts the index and asserts it (aborts on violation), for tests. */
bool mvcc_invariants_ok(const struct mvcc_store *s, char *why, size_t why_len);
/* A 64-bit mix of the store's counters (revisions, sizes, key/log/lease/watcher counts,
 * queued responses, the state hash, ...): it changes with every write, compaction,
 * restore, lease grant or revoke, watch creation, cancel or response. A caller that
 * checks invariants after every event skips a store whose fingerprint did not move. */
uint64_t mvcc_fingerprint(const struct mvcc_store *s);
void mvcc_check_invariants(struct mvcc_store *s);

#endif
