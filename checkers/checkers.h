/*
 * checkers.h: the in-memory history the checkers judge, and the checkers themselves
 * (DESIGN §3.7): linearizability of the key-value operations with etcd semantics
 * (two engines: revision order and a Wing–Gong/Lowe search) and the nine watch
 * guarantees of etcd's robustness tests.
 *
 * This module is a pure core: no files, no clock, no SQLite. Loaders that read a
 * faultline database, JSON lines, Jepsen or porcupine logs live in
 * harness/history/load.h and fill a struct chk_history; the run driver then calls
 * chk_check and stores the result with hist_checks_store (load.h).
 *
 * The history is built for speed: keys and values are interned into integer ids
 * (value id CHK_NIL means "absent"), operations are one flat array, their txn
 * compares/sub-operations/result key-values are slices of three more flat arrays,
 * and nothing is allocated per operation while checking.
 *
 * Every KV operation is a transaction: compares, a "then" list and an "else" list of
 * sub-operations (range, put, delete, append), and a result per executed
 * sub-operation. A plain put is a txn with no compares and one put in "then"; a get
 * is a txn with one range; a Jepsen cas(A,B) compares value == A and puts B.
 *
 * ---- What the recorder should write (ops.request / ops.response JSON) ----
 * Keys and values in JSON follow history.h: a JSON string when the bytes are UTF-8,
 * else {"hex":"..."}; null = absent. ops.kind is one of "get"/"range", "put",
 * "delete", "txn", "cas", "compact", "lease_revoke" (other lease calls, defragment,
 * status, member calls... are ignored).
 *   request  range:   {"key":K, "range_end":E?, "revision":R?, "limit":N?,
 *                      "serializable":true?}
 *            put:     {"key":K, "value":V, "prev_kv":true?, "lease":N?}
 *            delete:  {"key":K, "range_end":E?, "prev_kv":true?}
 *            cas:     {"key":K, "expect":V|null, "value":V}   (compare value==expect,
 *                     expect null = "key absent", i.e. create_revision == 0)
 *            txn:     {"compare":[CMP...], "success":[SUB...], "failure":[SUB...]}
 *                     CMP = {"key":K, "target":"value"|"version"|"create"|"mod",
 *                            "result":"="|"!="|">"|"<", "value":V | "version":N |
 *                            "create_revision":N | "mod_revision":N}
 *                     SUB = {"range":{...}} | {"put":{...}} | {"delete":{...}}
 *                     with the request shapes above inside
 *            compact: {"revision":R}
 *   response range:   {"header":{"revision":R}, "kvs":[KV...], "count":N}
 *                     KV = {"key":K, "value":V, "create_revision":N,
 *                           "mod_revision":N, "version":N}
 *            put:     {"header":{"revision":R}, "prev_kv":KV?}
 *            delete:  {"header":{"revision":R}, "deleted":N, "prev_kvs":[KV...]?}
 *            cas/txn: {"header":{"revision":R}, "succeeded":bool,
 *                      "responses":[{"range":{...}}|{"put":{...}}|{"delete":{...}}]}
 *            compact: {"header":{"revision":R}}
 *
 * ---- Writes no client asked for: lease ends (ops.kind "lease_revoke") ----
 * When a lease ends, etcd deletes every key attached to it at one revision, through
 * Raft. A client's LeaseRevoke is recorded as its call; a lease the leader expires
 * (or any revoke the recorder learns of) as a system op, client_id 0:
 *   kind      "lease_revoke" (also accepted: "lease_expire", "lease_expiry")
 *   request   {"lease_id":N, "keys":[K...]?, "system":true?}
 *             keys: the keys the lease still held, when the recorder knows them (the
 *             leader's lessor does); absent: the checker derives them from the puts
 *             that carried {"lease":N} (the key's last acknowledged write before the
 *             revoke's revision was a put with that lease)
 *   response  {"header":{"revision":R}}: R = the revision of the deletes (when the
 *             lease held no key, the current revision; nothing is written)
 *   call_ns   when the leader proposed it (client revoke: the call); return_ns when
 *             the first member applied it (client: the answer); status "ok".
 * The checkers model it as a txn of single-key deletes without recorded results
 * (CHK_OPF_LEASE_END): applied, never judged. Compactions are ops of kind "compact"
 * (request {"revision":R}, response header revision = the store's revision then),
 * auto-compactions too (client_id 0).
 * The ops columns revision/succeeded/deleted/value/mod_rev/... are used when the JSON
 * lacks a field. status: "ok" = answered; "fail" = an error that surely means the
 * operation did not take effect (reads: any error); "unknown" = no answer or an
 * error after which it may have taken effect (timeouts, lost connections). Mutating
 * calls that timed out MUST be "unknown", never "fail". error carries etcd's text;
 * "...required revision has been compacted" and "...future revision" are recognised.
 */
#ifndef FL_CHECKERS_H
#define FL_CHECKERS_H

#include "harness/common/common.h"

#include <jansson.h>

#define CHK_NIL       (-1)      /* value id: key absent / JSON null */
#define CHK_NOT_GIVEN (-2)      /* value id: field not present (e.g. no prev_kv) */
#define CHK_NEVER     INT64_MAX /* return time of an operation that never returned */
#define CHK_NO_REV    INT64_MIN /* a revision field that is unknown */
#define CHK_RANGE_ONE (-1)      /* range_end id: a single key */
#define CHK_RANGE_ALL (-3)      /* range_end id: every key >= key ("\0") */

enum chk_status { CHK_ST_OK = 0, CHK_ST_FAIL, CHK_ST_UNKNOWN };
enum chk_err { CHK_ERR_NONE = 0, CHK_ERR_COMPACTED, CHK_ERR_FUTURE_REV, CHK_ERR_OTHER };
enum chk_op_kind { CHK_OP_TXN = 0, CHK_OP_COMPACT };
enum chk_sub_kind { CHK_SUB_RANGE = 0, CHK_SUB_PUT, CHK_SUB_DELETE, CHK_SUB_APPEND };
enum chk_cmp_target { CHK_CMP_VALUE = 0, CHK_CMP_VERSION, CHK_CMP_CREATE, CHK_CMP_MOD };
enum chk_cmp_result { CHK_CMP_EQ = 0, CHK_CMP_NE, CHK_CMP_GT, CHK_CMP_LT };

/* chk_op.flags */
#define CHK_OPF_SUCCEEDED     0x01 /* txn took the "then" branch */
#define CHK_OPF_SUCCEEDED_SET 0x02 /* the response said which branch (else: unknown) */
#define CHK_OPF_HAS_RESULT    0x04 /* sub-operation results are recorded */
#define CHK_OPF_LABEL_CAS     0x08 /* for messages: originally a cas */
/* A serializable read (etcd serves it from the member's local state): judged
 * against the state at its own header revision, never against real time (etcd's
 * "serializable" validator); the search engine ignores it. */
#define CHK_OPF_SERIALIZABLE 0x10
/* A lease revoke or expiry (a txn of deletes of the keys the lease held, results not
 * recorded). With no sub-operations given, chk_history_finish derives the deletes from
 * the puts that carried chk_sub.lease == chk_op.lease (see the comment at the top). */
#define CHK_OPF_LEASE_END 0x20
/* ... whose keys were given (request "keys"), possibly none: nothing is derived. */
#define CHK_OPF_LEASE_KEYS 0x40

/* 64 bytes (a 10M-operation history has 10M of them): a compaction has no lease and a
 * lease end is no compaction, so the two share their field. Read compact_rev only when
 * kind is CHK_OP_COMPACT (chk_op_compact_rev), lease only with CHK_OPF_LEASE_END. The
 * op id is 32-bit: the loaders refuse one outside 0..UINT32_MAX (chk_op_id_fits). */
struct chk_op {
    int64_t call_ns;
    int64_t return_ns; /* CHK_NEVER when no answer was seen */
    int64_t rev;       /* response header revision, CHK_NO_REV when unknown */
    union {
        int64_t compact_rev; /* CHK_OP_COMPACT: the requested revision (CHK_NO_REV from
                                chk_history_op_add until set) */
        int64_t lease;       /* CHK_OPF_LEASE_END: the lease id */
    };
    uint32_t op_id; /* from the source (DB op_id, or a running number) */
    int32_t client;
    uint32_t line;                 /* source line (jsonl/jepsen/kv), 0 when none */
    uint8_t kind;                  /* enum chk_op_kind */
    uint8_t status;                /* enum chk_status */
    uint8_t err;                   /* enum chk_err */
    uint8_t flags;                 /* CHK_OPF_* */
    uint32_t cmp_first, cmp_count; /* slice of chk_history.cmps */
    uint32_t sub_first;            /* slice of chk_history.subs: then, then else */
    uint16_t then_count, else_count;
};

/* Does a source's operation id fit chk_op.op_id? */
static inline bool chk_op_id_fits(int64_t id)
{
    return id >= 0 && id <= (int64_t)UINT32_MAX;
}

/* The op's compacted revision, CHK_NO_REV for every op but a compaction. */
static inline int64_t chk_op_compact_rev(const struct chk_op *op)
{
    return op->kind == CHK_OP_COMPACT ? op->compact_rev : CHK_NO_REV;
}

struct chk_cmp {
    int32_t key;
    uint8_t target;  /* enum chk_cmp_target */
    uint8_t result;  /* enum chk_cmp_result */
    int64_t operand; /* value id (CHK_CMP_VALUE) or a number */
};

/* chk_sub.flags */
#define CHK_SUBF_PREV_KV    0x01 /* asked for prev kv(s) */
#define CHK_SUBF_COUNT_SET  0x02 /* result count (range count / deleted) recorded */
#define CHK_SUBF_KVS_SET    0x04 /* result kvs recorded (range kvs / prev kvs) */
#define CHK_SUBF_RESULT_SET 0x08 /* this sub-operation has a recorded result at all */

struct chk_sub {
    uint8_t kind;  /* enum chk_sub_kind */
    uint8_t flags; /* CHK_SUBF_* */
    int32_t key;
    int32_t range_end;           /* key id, CHK_RANGE_ONE or CHK_RANGE_ALL */
    int32_t value;               /* put/append argument */
    int64_t req_rev;             /* range at this revision; 0 = current */
    int32_t limit;               /* range limit, 0 = none (chk_limit32) */
    int32_t count;               /* result: range count or deleted count (chk_count_fits) */
    uint32_t kv_first, kv_count; /* result: range kvs / prev kvs (slice of kvs) */
};

/* A put's lease (the lease the key is attached to) is not in chk_sub: few puts carry
 * one, so the history keeps them aside, by sub-operation index (chk_sub_lease). With
 * limit and count in 32 bits, a sub-operation takes 40 bytes instead of 56 (a
 * 10M-operation history has ~10M of them). A limit beyond the 32-bit range limits
 * nothing a store can hold (key ids are 32-bit, and etcd's store is far below 2^31
 * keys), so saturating it is exact: chk_limit32. A count beyond it cannot be a real
 * answer for the same reason: the loaders refuse it as bad input (chk_count_fits). */
static inline int32_t chk_limit32(int64_t v)
{
    return v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : (int32_t)v;
}

static inline bool chk_count_fits(int64_t v)
{
    return v >= INT32_MIN && v <= INT32_MAX;
}

/* A key-value as a response shows it; revision fields CHK_NO_REV when not shown. */
struct chk_kv {
    int32_t key;
    int32_t value;
    int64_t create_rev, mod_rev, version;
};

#define CHK_WF_PREV_KV         0x01
#define CHK_WF_PROGRESS_NOTIFY 0x02
#define CHK_WF_NOPUT           0x04 /* etcd's NOPUT filter: put events are not delivered */
#define CHK_WF_NODELETE        0x08 /* NODELETE filter */

struct chk_watch {
    int64_t watch_id;
    int32_t client;
    int32_t key;
    int32_t range_end;            /* key id, CHK_RANGE_ONE or CHK_RANGE_ALL */
    uint8_t flags;                /* CHK_WF_* */
    int64_t start_rev;            /* 0: from the current revision */
    int64_t opened_ns, closed_ns; /* closed_ns CHK_NEVER while open */
    uint32_t ev_first, ev_count;  /* slice of events, in delivery order (after finish) */
    uint32_t line;
};

enum chk_ev_kind { CHK_EV_PUT = 0, CHK_EV_DELETE, CHK_EV_PROGRESS };

/* 72 bytes (the events are the largest array of a watched history): the 64-bit fields
 * first, seq in 32 bits (the loaders refuse one above INT32_MAX). */
struct chk_wevent {
    int64_t watch_id;
    int64_t response;                     /* numbers the response that carried it */
    int64_t create_rev, mod_rev, version; /* progress: mod_rev = reached revision */
    int64_t t_ns;
    uint32_t seq; /* delivery order within the watch */
    uint8_t kind; /* enum chk_ev_kind */
    int32_t key;
    int32_t value;      /* put: value */
    int32_t prev_value; /* CHK_NOT_GIVEN when the event carried no prev kv */
    uint32_t line;
};

/* The lease of one put sub-operation (chk_history.sub_leases, by sub index). */
struct chk_sub_lease {
    uint32_t sub; /* index into chk_history.subs */
    int64_t lease;
};

/* An interned byte-string table: ids are dense, in first-seen order. */
struct chk_intern {
    struct fl_buf bytes;
    uint32_t *off;  /* count + 1 offsets into bytes: id's bytes are [off[id], off[id + 1]) */
    uint32_t *hash; /* per id: the low half of its bytes' hash (a rehash reads no bytes);
                       NULL with the lookup table once finished (an add rebuilds both) */
    uint32_t count, cap;
    uint32_t *slots; /* open addressing, value id + 1, 0 = empty (lookup only) */
    uint32_t slot_mask;
};

struct chk_history {
    struct chk_intern keys, values;
    struct chk_op *ops;
    uint32_t op_count, op_cap;
    struct chk_cmp *cmps;
    uint32_t cmp_count, cmp_cap;
    struct chk_sub *subs;
    uint32_t sub_count, sub_cap;
    struct chk_sub_lease *sub_leases; /* the puts with a lease, by ascending sub index */
    uint32_t sub_lease_count, sub_lease_cap;
    struct chk_kv *kvs;
    uint32_t kv_count, kv_cap;
    struct chk_watch *watches;
    uint32_t watch_count, watch_cap;
    struct chk_wevent *events;
    uint32_t event_count, event_cap;
    /* set by chk_history_finish: keys in byte order */
    uint32_t *key_rank;  /* key id -> rank */
    uint32_t *key_order; /* rank -> key id */
    bool finished;
    bool has_revs; /* every ok KV operation carries a header revision */
    /* Set before adding values: an empty value reads as an absent key (porcupine kv
     * logs, where every key starts as ""); chk_history_value then maps "" to CHK_NIL. */
    bool empty_is_absent;
    /* Every revision comes from a recorded operation: nothing else writes (no lease
     * expiry, no unrecorded clients) and the history starts from an empty store. Then
     * a revision no recorded operation can explain is a violation (as in the search
     * engine, which always requires it). Off by default: the revision engine then
     * treats such a revision as written by something outside the history and lets the
     * reads judge. The loaders clear it when lease calls or leased puts appear. */
    bool revisions_complete;
    /* Set by chk_history_finish: the history records compactions (some op of kind
     * CHK_OP_COMPACT). Without any, a "required revision has been compacted" error
     * cannot be refuted (auto-compaction, a compaction made by an operator) and is
     * accepted; with them, it must be explained by one. */
    bool compactions_known;
};

void chk_history_init(struct chk_history *h);
void chk_history_close(struct chk_history *h);
/* Interns bytes; p == NULL gives CHK_NIL for values. */
int32_t chk_history_key(struct chk_history *h, const void *p, size_t n);
int32_t chk_history_value(struct chk_history *h, const void *p, size_t n);
/* Bytes of an interned id (not NUL-terminated; *n set). */
const uint8_t *chk_key_bytes(const struct chk_history *h, int32_t id, size_t *n);
const uint8_t *chk_value_bytes(const struct chk_history *h, int32_t id, size_t *n);

/*
 * Building: chk_history_op_add appends a zeroed op (return CHK_NEVER, rev CHK_NO_REV,
 * cmp/sub slices starting at the current ends) and returns it; then append its
 * compares and sub-operations (then first, then else) with the adders below, which
 * bump the counts of the LAST op. Pointers are valid until the next add.
 */
struct chk_op *chk_history_op_add(struct chk_history *h);
struct chk_cmp *chk_history_cmp_add(struct chk_history *h);
struct chk_sub *chk_history_sub_add(struct chk_history *h, bool else_branch);
/* A put's lease (0: none): set it on s (a sub-operation of h) after every sub-operation
 * before s had its own set; read it back with chk_sub_lease. */
void chk_history_sub_lease_set(struct chk_history *h, const struct chk_sub *s, int64_t lease);
int64_t chk_sub_lease(const struct chk_history *h, const struct chk_sub *s);
/* Appends a result kv to the LAST sub-operation (kv_first set on the first). */
struct chk_kv *chk_history_kv_add(struct chk_history *h);
struct chk_watch *chk_history_watch_add(struct chk_history *h);
struct chk_wevent *chk_history_event_add(struct chk_history *h);

/* Convenience builders for the simple shapes (they call the adders above). */
struct chk_op *chk_history_put(struct chk_history *h, int32_t client, int32_t key, int32_t value,
                               int64_t call_ns, int64_t return_ns, int status, int64_t rev);
/* get of one key; value CHK_NIL = absent; revs may be CHK_NO_REV. */
struct chk_op *chk_history_get(struct chk_history *h, int32_t client, int32_t key, int32_t value,
                               int64_t call_ns, int64_t return_ns, int status, int64_t rev,
                               int64_t mod_rev, int64_t create_rev, int64_t version);
/* deleted < 0: count unknown; deleted must pass chk_count_fits. */
struct chk_op *chk_history_delete(struct chk_history *h, int32_t client, int32_t key,
                                  int64_t call_ns, int64_t return_ns, int status, int64_t rev,
                                  int64_t deleted);
/* cas: compare value == expect (CHK_NIL: key absent), then put value. succeeded < 0:
 * unknown. */
struct chk_op *chk_history_cas(struct chk_history *h, int32_t client, int32_t key, int32_t expect,
                               int32_t value, int64_t call_ns, int64_t return_ns, int status,
                               int64_t rev, int succeeded);
struct chk_op *chk_history_append(struct chk_history *h, int32_t client, int32_t key, int32_t value,
                                  int64_t call_ns, int64_t return_ns, int status);

/*
 * Validates and indexes: sorts keys (ranks), groups watch events per watch in seq
 * order, sets has_revs. Returns FL_OK, or FL_EINVAL with a message in err (the op
 * index / line of the first problem: return before call, bad slice). Call once,
 * after building and before checking.
 */
int chk_history_finish(struct chk_history *h, struct fl_buf *err);
/* The part of a finished history that happened before t_ns, as a new unfinished
 * history in out (initialised here; the caller finishes it): for a run whose cluster
 * was rewound at t_ns (a whole-cluster restore from a backup: DESIGN §3.7), where what
 * follows is another cluster's history. Operations called at or after t_ns are left
 * out; one pending at t_ns (answered later, or never) becomes an unknown-outcome call
 * that never returned, its results dropped: its answer may come from the new cluster,
 * and it may have taken effect before t_ns or not at all. Watches opened at or after
 * t_ns are left out; the others keep their events delivered before t_ns and end at
 * t_ns. Keys and values keep their ids. The counts of what was left out or cut go
 * into the optional stats. */
struct chk_cut_stats {
    uint32_t ops_after, ops_pending, watches_after, events_after;
};
void chk_history_cut(const struct chk_history *h, int64_t t_ns, struct chk_history *out,
                     struct chk_cut_stats *stats);
/* Whether two histories hold the same content: interned bytes in id order, every
 * array element field by field and the flags (the key ranks follow from the keys).
 * On a difference, why names the first one. */
bool chk_history_equal(const struct chk_history *a, const struct chk_history *b, char *why,
                       size_t why_size);

/* ---- checking ---------------------------------------------------------------- */

enum chk_verdict { CHK_PASS = 0, CHK_FAIL, CHK_UNKNOWN };
const char *chk_verdict_name(int v); /* "pass" | "fail" | "unknown" */

/* Bounds: a search that passes one gives CHK_UNKNOWN, never a guess. The checkers
 * read no clock; a caller that wants a wall-clock timeout passes should_stop, which
 * is polled every few thousand steps. Zero fields mean "default". */
struct chk_limits {
    uint64_t steps_max;     /* search steps (default 50,000,000) */
    uint64_t mem_bytes_max; /* search cache bytes (default 512 MiB) */
    bool (*should_stop)(void *arg);
    void *stop_arg;
    int engine;        /* 0 auto, 1 revision order only, 2 search only */
    bool no_partition; /* engine 2: never split per key */
};

enum chk_engine { CHK_ENGINE_NONE = 0, CHK_ENGINE_REVISION = 1, CHK_ENGINE_SEARCH = 2 };

/* One change of the linearized history, as a watch should report it. kind
 * CHK_EV_PROGRESS marks a revision that happened but whose content is unknown (no
 * recorded operation explains it); watches are not judged on that revision. */
struct chk_change {
    int64_t rev;
    int32_t key;
    uint8_t kind;              /* CHK_EV_PUT / CHK_EV_DELETE / CHK_EV_PROGRESS */
    int32_t value, prev_value; /* prev_value CHK_NIL when the key was absent */
    int64_t create_rev, version;
};

struct chk_lin_result {
    int verdict;
    int engine;       /* which engine decided */
    uint64_t steps;   /* search steps or ops replayed */
    char reason[256]; /* one line: why fail/unknown, or "" */
    json_t *detail;   /* owned: explanation (see chk_result_json) */
    /* Engine 1 (revision order) only: the changes in (rev, key) order, owned. NULL
     * (count 0) when no revision order was established. */
    struct chk_change *changes;
    uint32_t change_count;
    bool changes_known;
    uint32_t revealed; /* unknown-outcome ops placed by a later read or watch event */
    /* Engine 1, a pass found only by judging again without the watch events (judged
     * with them the history was undecided): when that linearization placed an
     * unknown-outcome op by a guess, the lowest such revision. From there on the
     * changes are one placement among several; the watch checker judges nothing
     * against them (unknown, with the reason). 0 otherwise. */
    int64_t guessed_from;
    /* Search engine, verdict pass, one partition: the linearization found (history op
     * indexes in order; unknown-outcome ops not in it never took effect). Owned. */
    uint32_t *order;
    uint32_t order_count;
};

enum chk_guarantee {
    CHK_G_ORDERED = 0,
    CHK_G_UNIQUE,
    CHK_G_ATOMIC,
    CHK_G_FILTER,
    CHK_G_BOOKMARKABLE,
    CHK_G_RESUMABLE,
    CHK_G_IS_CREATE,
    CHK_G_PREV_KV,
    CHK_G_RELIABLE,
    CHK_G_COUNT
};
const char *chk_guarantee_name(int g); /* "ordered", ..., "reliable" */

struct chk_watch_violation {
    int guarantee;
    int64_t watch_id;
    int64_t rev;
    uint32_t event; /* index into history events, or UINT32_MAX */
    char msg[160];
};

struct chk_watch_result {
    int verdict;
    int g_verdict[CHK_G_COUNT]; /* per guarantee: pass / fail / unknown (not checkable) */
    uint32_t g_fail_count[CHK_G_COUNT];
    struct chk_watch_violation *viol; /* first violations (bounded), owned */
    uint32_t viol_count;
    uint32_t watches, events;
    /* Violations of the change-log guarantees at or after lin->guessed_from: not
     * judged (they rest on a guessed placement), counted here; reason says why. */
    uint32_t undecided;
    char reason[256];
    json_t *detail; /* owned */
};

struct chk_result {
    int verdict; /* worst of lin and watch: fail > unknown > pass */
    struct chk_lin_result lin;
    struct chk_watch_result watch;
};

/* Linearizability. h must be finished. May intern new values (results of append), so
 * h is not const. out must be released with chk_lin_result_close. */
int chk_lin_check(struct chk_history *h, const struct chk_limits *lim, struct chk_lin_result *out);
void chk_lin_result_close(struct chk_lin_result *r);

/* Watch guarantees, against the changes the linearizability result established
 * (lin->changes); guarantees that need them are "unknown" when they are not known. */
int chk_watch_check(const struct chk_history *h, const struct chk_lin_result *lin,
                    struct chk_watch_result *out);
void chk_watch_result_close(struct chk_watch_result *r);

/* Both checkers. out must be released with chk_result_close. */
int chk_check(struct chk_history *h, const struct chk_limits *lim, struct chk_result *out);
void chk_result_close(struct chk_result *r);

/*
 * The checks object of `--json` (DESIGN §3.9), a new reference:
 * {"linearizability":{"verdict","engine","ops","reason",...detail},
 *  "watch":{"verdict","watches","events","guarantees":{"ordered":{"verdict","violations"},
 *  ...},"violations":[{"guarantee","watch","revision","message"}]}}
 */
json_t *chk_result_json(const struct chk_history *h, const struct chk_result *r);
/* The detail JSON of one check for checks.detail ("linearizability" / "watch"), a new
 * reference. */
json_t *chk_lin_json(const struct chk_history *h, const struct chk_lin_result *r);
json_t *chk_watch_json(const struct chk_history *h, const struct chk_watch_result *r);

/* Bytes as JSON by the history.h convention: a string when UTF-8, else {"hex":...}. */
json_t *chk_json_bytes(const uint8_t *p, size_t n);

/* Human explanation of a result, appended to out. */
void chk_result_explain(const struct chk_history *h, const struct chk_result *r,
                        struct fl_buf *out);

#endif
