/*
 * errors.h: every error a client can see, as etcd spells it, with its gRPC status
 * code, and the clientv3 rule that decides whether a failed attempt may be retried
 * (etcd-facts §B.5 and §C.1). The server builds its errors from this table and the
 * client classifies them with it, so one text never drifts between the two.
 *
 * The texts are the client-visible ones (with the "etcdserver: " prefix the gRPC
 * layer adds), plus the client-side texts of gRPC and clientv3 ("there is no
 * address available", "context deadline exceeded", ...) and a few server-internal
 * texts that surface with code Unknown. Pure: no I/O, no allocation.
 */
#ifndef FL_PROTO_ERRORS_H
#define FL_PROTO_ERRORS_H

#include <stdbool.h>
#include <stddef.h>

/* gRPC status codes, numbered as gRPC numbers them (they travel as integers in
 * rpc.proto's Error.code). */
enum rpc_code {
    RPC_CODE_OK = 0,
    RPC_CODE_CANCELED = 1,
    RPC_CODE_UNKNOWN = 2,
    RPC_CODE_INVALID_ARGUMENT = 3,
    RPC_CODE_DEADLINE_EXCEEDED = 4,
    RPC_CODE_NOT_FOUND = 5,
    RPC_CODE_ALREADY_EXISTS = 6,
    RPC_CODE_PERMISSION_DENIED = 7,
    RPC_CODE_RESOURCE_EXHAUSTED = 8,
    RPC_CODE_FAILED_PRECONDITION = 9,
    RPC_CODE_ABORTED = 10,
    RPC_CODE_OUT_OF_RANGE = 11,
    RPC_CODE_UNIMPLEMENTED = 12,
    RPC_CODE_INTERNAL = 13,
    RPC_CODE_UNAVAILABLE = 14,
    RPC_CODE_DATA_LOSS = 15,
    RPC_CODE_UNAUTHENTICATED = 16,
    RPC_CODE_COUNT
};

/* One id per error text. Keep rpc_err_table in errors.c in step (same order). */
enum rpc_err_id {
    RPC_ERR_NONE = 0, /* no error: text "", code OK */
    /* server errors (etcd-facts §B.5) */
    RPC_ERR_TIMEOUT,               /* etcdserver: request timed out */
    RPC_ERR_TIMEOUT_LEADER_FAIL,   /* ..., possibly due to previous leader failure */
    RPC_ERR_TIMEOUT_CONN_LOST,     /* ..., possibly due to connection lost */
    RPC_ERR_TIMEOUT_WAIT_APPLIED,  /* ..., waiting for the applied index took too long */
    RPC_ERR_LEADER_CHANGED,        /* etcdserver: leader changed */
    RPC_ERR_NO_LEADER,             /* etcdserver: no leader */
    RPC_ERR_NOT_LEADER,            /* etcdserver: not leader */
    RPC_ERR_STOPPED,               /* etcdserver: server stopped */
    RPC_ERR_UNHEALTHY,             /* etcdserver: unhealthy cluster */
    RPC_ERR_CORRUPT,               /* etcdserver: corrupt cluster */
    RPC_ERR_COMPACTED,             /* etcdserver: mvcc: required revision has been compacted */
    RPC_ERR_FUTURE_REV,            /* etcdserver: mvcc: required revision is a future revision */
    RPC_ERR_NO_SPACE,              /* etcdserver: mvcc: database space exceeded */
    RPC_ERR_TOO_MANY_REQUESTS,     /* etcdserver: too many requests */
    RPC_ERR_REQUEST_TOO_LARGE,     /* etcdserver: request is too large */
    RPC_ERR_EMPTY_KEY,             /* etcdserver: key is not provided */
    RPC_ERR_TOO_MANY_OPS,          /* etcdserver: too many operations in txn request */
    RPC_ERR_DUPLICATE_KEY,         /* etcdserver: duplicate key given in txn request */
    RPC_ERR_LEASE_NOT_FOUND,       /* etcdserver: requested lease not found */
    RPC_ERR_LEASE_EXIST,           /* etcdserver: lease already exists */
    RPC_ERR_LEASE_TTL_TOO_LARGE,   /* etcdserver: too large lease TTL */
    RPC_ERR_MEMBER_EXIST,          /* etcdserver: member ID already exist */
    RPC_ERR_PEER_URL_EXIST,        /* etcdserver: Peer URLs already exists */
    RPC_ERR_MEMBER_NOT_FOUND,      /* etcdserver: member not found */
    RPC_ERR_NOT_ENOUGH_STARTED,    /* etcdserver: re-configuration failed due to not ... */
    RPC_ERR_MEMBER_NOT_LEARNER,    /* etcdserver: can only promote a learner member */
    RPC_ERR_LEARNER_NOT_READY,     /* ... which is in sync with leader */
    RPC_ERR_TOO_MANY_LEARNERS,     /* etcdserver: too many learner members in cluster */
    RPC_ERR_LEARNER_NOT_SUPPORTED, /* etcdserver: rpc not supported for learner */
    RPC_ERR_BAD_LEADER_TRANSFEREE, /* etcdserver: bad leader transferee */
    RPC_ERR_WATCH_CANCELED,        /* etcdserver: watch canceled */
    RPC_ERR_CANCELED,              /* etcdserver: request canceled */
    RPC_ERR_SERVER_DEADLINE,       /* etcdserver: context deadline exceeded */
    RPC_ERR_NOT_CAPABLE,           /* etcdserver: not capable */
    RPC_ERR_CLUSTER_ID_MISMATCH,   /* etcdserver: cluster ID mismatch */
    /* server-internal texts that reach a client with code Unknown */
    RPC_ERR_LEADER_TRANSFER_TIMEOUT,    /* etcdserver: request timed out, leader transfer ... */
    RPC_ERR_MEMBERSHIP_ID_REMOVED,      /* membership: ID removed */
    RPC_ERR_MEMBERSHIP_ID_EXISTS,       /* membership: ID exists */
    RPC_ERR_MEMBERSHIP_ID_NOT_FOUND,    /* membership: ID not found */
    RPC_ERR_MEMBERSHIP_PEER_URL_EXISTS, /* membership: peerURL exists */
    /* client-side errors (gRPC / clientv3): the request never reached a server, or
     * the client gave up on it */
    RPC_ERR_NO_ADDRESS,        /* there is no address available */
    RPC_ERR_NO_CONNECTION,     /* there is no connection available */
    RPC_ERR_CONN_REFUSED,      /* connection error: ... connection refused */
    RPC_ERR_TRANSPORT_CLOSING, /* transport is closing */
    RPC_ERR_CLIENT_DEADLINE,   /* context deadline exceeded */
    RPC_ERR_CLIENT_CANCELED,   /* context canceled */
    RPC_ERR_CLIENT_CLOSED,     /* grpc: the client connection is closing */
    RPC_ERR_COUNT
};

struct rpc_err_info {
    enum rpc_err_id id;
    const char *text; /* exact text as the client sees it */
    enum rpc_code code;
    bool client_side; /* produced by the client library, never sent by a server */
    bool never_sent;  /* client-side and the request surely never left the client */
};

extern const struct rpc_err_info rpc_err_table[RPC_ERR_COUNT];

/* Table row of an id (asserts the id is in range). */
const struct rpc_err_info *rpc_err_get(enum rpc_err_id id);
static inline const char *rpc_err_text(enum rpc_err_id id)
{
    return rpc_err_get(id)->text;
}
static inline enum rpc_code rpc_err_code(enum rpc_err_id id)
{
    return rpc_err_get(id)->code;
}

/* The id whose text is exactly `text`; RPC_ERR_COUNT when no row has it (an error
 * text we do not know). NULL or "" gives RPC_ERR_NONE. */
enum rpc_err_id rpc_err_find(const char *text);

/* gRPC name of a code ("Unavailable", "OutOfRange", ...); "Code(N)" style names
 * are not produced: an out-of-range code gives "Unknown". */
const char *rpc_code_name(enum rpc_code code);

/* How clientv3 treats an RPC in its retry interceptor (§C.1). */
enum rpc_retry_policy {
    RPC_RETRY_REPEATABLE,     /* immutable: Range, lease calls, MemberList, maintenance reads */
    RPC_RETRY_NON_REPEATABLE, /* mutable: Put, DeleteRange, Txn, Compact, member changes, defrag */
    RPC_RETRY_STREAM          /* Watch, LeaseKeepAlive: no interceptor retry (own reconnect) */
};

/* Policy of an rpc.proto Method number (Rpc__Method). Unknown methods are
 * non-repeatable (the safe answer). */
enum rpc_retry_policy rpc_method_retry_policy(int method);

/* clientv3's isSafeRetry: may a call that failed with (code, text) be sent again?
 *   - "etcdserver: rpc not supported for learner" is retried when more than one
 *     endpoint is configured;
 *   - repeatable calls retry exactly when the code is Unavailable;
 *   - non-repeatable calls retry only when the code is Unavailable and the text is
 *     "there is no address available" or "there is no connection available";
 *   - streams are never retried by the interceptor.
 * text may be NULL. */
bool rpc_err_retry_safe(enum rpc_retry_policy policy, enum rpc_code code, const char *text,
                        size_t endpoint_count);

/* True when an error means the request surely never left the client. */
bool rpc_err_never_sent(const char *text);

#endif
