/*
 * errors.c: the table of etcd error texts with their gRPC codes, and clientv3's
 * retry classification (etcd-facts §B.5, §C.1). The row order follows enum
 * rpc_err_id; rpc_err_get asserts it, so an edit that breaks the order fails the
 * first lookup instead of returning a wrong text.
 */
#include "nodes/proto/errors.h"

#include "harness/common/common.h"
#include "nodes/proto/rpc.pb-c.h"

#define SRV(id, text, code)                                                                        \
    {                                                                                              \
        id, text, code, false, false                                                               \
    }
#define CLI(id, text, code, never_sent)                                                            \
    {                                                                                              \
        id, text, code, true, never_sent                                                           \
    }

const struct rpc_err_info rpc_err_table[RPC_ERR_COUNT] = {
    SRV(RPC_ERR_NONE, "", RPC_CODE_OK),
    SRV(RPC_ERR_TIMEOUT, "etcdserver: request timed out", RPC_CODE_UNAVAILABLE),
    SRV(RPC_ERR_TIMEOUT_LEADER_FAIL,
        "etcdserver: request timed out, possibly due to previous leader failure",
        RPC_CODE_UNAVAILABLE),
    SRV(RPC_ERR_TIMEOUT_CONN_LOST, "etcdserver: request timed out, possibly due to connection lost",
        RPC_CODE_UNAVAILABLE),
    SRV(RPC_ERR_TIMEOUT_WAIT_APPLIED,
        "etcdserver: request timed out, waiting for the applied index took too long",
        RPC_CODE_UNAVAILABLE),
    SRV(RPC_ERR_LEADER_CHANGED, "etcdserver: leader changed", RPC_CODE_UNAVAILABLE),
    SRV(RPC_ERR_NO_LEADER, "etcdserver: no leader", RPC_CODE_UNAVAILABLE),
    SRV(RPC_ERR_NOT_LEADER, "etcdserver: not leader", RPC_CODE_FAILED_PRECONDITION),
    SRV(RPC_ERR_STOPPED, "etcdserver: server stopped", RPC_CODE_UNAVAILABLE),
    SRV(RPC_ERR_UNHEALTHY, "etcdserver: unhealthy cluster", RPC_CODE_UNAVAILABLE),
    SRV(RPC_ERR_CORRUPT, "etcdserver: corrupt cluster", RPC_CODE_DATA_LOSS),
    SRV(RPC_ERR_COMPACTED, "etcdserver: mvcc: required revision has been compacted",
        RPC_CODE_OUT_OF_RANGE),
    SRV(RPC_ERR_FUTURE_REV, "etcdserver: mvcc: required revision is a future revision",
        RPC_CODE_OUT_OF_RANGE),
    SRV(RPC_ERR_NO_SPACE, "etcdserver: mvcc: database space exceeded", RPC_CODE_RESOURCE_EXHAUSTED),
    SRV(RPC_ERR_TOO_MANY_REQUESTS, "etcdserver: too many requests", RPC_CODE_RESOURCE_EXHAUSTED),
    SRV(RPC_ERR_REQUEST_TOO_LARGE, "etcdserver: request is too large", RPC_CODE_INVALID_ARGUMENT),
    SRV(RPC_ERR_EMPTY_KEY, "etcdserver: key is not provided", RPC_CODE_INVALID_ARGUMENT),
    SRV(RPC_ERR_TOO_MANY_OPS, "etcdserver: too many operations in txn request",
        RPC_CODE_INVALID_ARGUMENT),
    SRV(RPC_ERR_DUPLICATE_KEY, "etcdserver: duplicate key given in txn request",
        RPC_CODE_INVALID_ARGUMENT),
    SRV(RPC_ERR_LEASE_NOT_FOUND, "etcdserver: requested lease not found", RPC_CODE_NOT_FOUND),
    SRV(RPC_ERR_LEASE_EXIST, "etcdserver: lease already exists", RPC_CODE_FAILED_PRECONDITION),
    SRV(RPC_ERR_LEASE_TTL_TOO_LARGE, "etcdserver: too large lease TTL", RPC_CODE_OUT_OF_RANGE),
    SRV(RPC_ERR_MEMBER_EXIST, "etcdserver: member ID already exist", RPC_CODE_FAILED_PRECONDITION),
    SRV(RPC_ERR_PEER_URL_EXIST, "etcdserver: Peer URLs already exists",
        RPC_CODE_FAILED_PRECONDITION),
    SRV(RPC_ERR_MEMBER_NOT_FOUND, "etcdserver: member not found", RPC_CODE_NOT_FOUND),
    SRV(RPC_ERR_NOT_ENOUGH_STARTED,
        "etcdserver: re-configuration failed due to not enough started members",
        RPC_CODE_FAILED_PRECONDITION),
    SRV(RPC_ERR_MEMBER_NOT_LEARNER, "etcdserver: can only promote a learner member",
        RPC_CODE_FAILED_PRECONDITION),
    SRV(RPC_ERR_LEARNER_NOT_READY,
        "etcdserver: can only promote a learner member which is in sync with leader",
        RPC_CODE_FAILED_PRECONDITION),
    SRV(RPC_ERR_TOO_MANY_LEARNERS, "etcdserver: too many learner members in cluster",
        RPC_CODE_FAILED_PRECONDITION),
    SRV(RPC_ERR_LEARNER_NOT_SUPPORTED, "etcdserver: rpc not supported for learner",
        RPC_CODE_FAILED_PRECONDITION),
    SRV(RPC_ERR_BAD_LEADER_TRANSFEREE, "etcdserver: bad leader transferee",
        RPC_CODE_FAILED_PRECONDITION),
    SRV(RPC_ERR_WATCH_CANCELED, "etcdserver: watch canceled", RPC_CODE_CANCELED),
    SRV(RPC_ERR_CANCELED, "etcdserver: request canceled", RPC_CODE_CANCELED),
    SRV(RPC_ERR_SERVER_DEADLINE, "etcdserver: context deadline exceeded",
        RPC_CODE_DEADLINE_EXCEEDED),
    SRV(RPC_ERR_NOT_CAPABLE, "etcdserver: not capable", RPC_CODE_FAILED_PRECONDITION),
    SRV(RPC_ERR_CLUSTER_ID_MISMATCH, "etcdserver: cluster ID mismatch",
        RPC_CODE_FAILED_PRECONDITION),
    SRV(RPC_ERR_LEADER_TRANSFER_TIMEOUT,
        "etcdserver: request timed out, leader transfer took too long", RPC_CODE_UNKNOWN),
    SRV(RPC_ERR_MEMBERSHIP_ID_REMOVED, "membership: ID removed", RPC_CODE_UNKNOWN),
    SRV(RPC_ERR_MEMBERSHIP_ID_EXISTS, "membership: ID exists", RPC_CODE_UNKNOWN),
    SRV(RPC_ERR_MEMBERSHIP_ID_NOT_FOUND, "membership: ID not found", RPC_CODE_UNKNOWN),
    SRV(RPC_ERR_MEMBERSHIP_PEER_URL_EXISTS, "membership: peerURL exists", RPC_CODE_UNKNOWN),
    CLI(RPC_ERR_NO_ADDRESS, "there is no address available", RPC_CODE_UNAVAILABLE, true),
    CLI(RPC_ERR_NO_CONNECTION, "there is no connection available", RPC_CODE_UNAVAILABLE, true),
    CLI(RPC_ERR_CONN_REFUSED, "connection error: desc = \"transport: connection refused\"",
        RPC_CODE_UNAVAILABLE, true),
    CLI(RPC_ERR_TRANSPORT_CLOSING, "transport is closing", RPC_CODE_UNAVAILABLE, false),
    CLI(RPC_ERR_CLIENT_DEADLINE, "context deadline exceeded", RPC_CODE_DEADLINE_EXCEEDED, false),
    CLI(RPC_ERR_CLIENT_CANCELED, "context canceled", RPC_CODE_CANCELED, false),
    CLI(RPC_ERR_CLIENT_CLOSED, "grpc: the client connection is closing", RPC_CODE_CANCELED, false),
};

static const char *const rpc_code_names[RPC_CODE_COUNT] = {
    "OK",       "Canceled",        "Unknown",          "InvalidArgument",   "DeadlineExceeded",
    "NotFound", "AlreadyExists",   "PermissionDenied", "ResourceExhausted", "FailedPrecondition",
    "Aborted",  "OutOfRange",      "Unimplemented",    "Internal",          "Unavailable",
    "DataLoss", "Unauthenticated",
};

const struct rpc_err_info *rpc_err_get(enum rpc_err_id id)
{
    FL_ASSERT((int)id >= 0 && id < RPC_ERR_COUNT);
    FL_ASSERTF(rpc_err_table[id].id == id, "rpc_err_table out of order at %d", (int)id);
    return &rpc_err_table[id];
}

enum rpc_err_id rpc_err_find(const char *text)
{
    if (text == NULL || text[0] == '\0')
        return RPC_ERR_NONE;
    for (int i = 1; i < RPC_ERR_COUNT; i++) {
        if (strcmp(rpc_err_table[i].text, text) == 0)
            return (enum rpc_err_id)i;
    }
    return RPC_ERR_COUNT;
}

const char *rpc_code_name(enum rpc_code code)
{
    if ((int)code < 0 || code >= RPC_CODE_COUNT)
        return "Unknown";
    return rpc_code_names[code];
}

enum rpc_retry_policy rpc_method_retry_policy(int method)
{
    switch (method) {
    case RPC__METHOD__METHOD_RANGE:
    case RPC__METHOD__METHOD_LEASE_GRANT:
    case RPC__METHOD__METHOD_LEASE_REVOKE:
    case RPC__METHOD__METHOD_LEASE_TTL:
    case RPC__METHOD__METHOD_MEMBER_LIST:
    case RPC__METHOD__METHOD_STATUS:
    case RPC__METHOD__METHOD_ALARM:
    case RPC__METHOD__METHOD_HASH_KV:
    case RPC__METHOD__METHOD_MOVE_LEADER:
    case RPC__METHOD__METHOD_PING:
        return RPC_RETRY_REPEATABLE;
    case RPC__METHOD__METHOD_WATCH:
    case RPC__METHOD__METHOD_LEASE_KEEPALIVE:
    case RPC__METHOD__METHOD_SNAPSHOT:
        return RPC_RETRY_STREAM;
    default:
        return RPC_RETRY_NON_REPEATABLE;
    }
}

bool rpc_err_never_sent(const char *text)
{
    enum rpc_err_id id = rpc_err_find(text);
    return id < RPC_ERR_COUNT && rpc_err_table[id].never_sent;
}

bool rpc_err_retry_safe(enum rpc_retry_policy policy, enum rpc_code code, const char *text,
                        size_t endpoint_count)
{
    if (code == RPC_CODE_OK)
        return false;
    if (policy == RPC_RETRY_STREAM)
        return false;
    enum rpc_err_id id = rpc_err_find(text);
    /* clientv3 retries a learner refusal on any call when another endpoint may
     * serve it. */
    if (id == RPC_ERR_LEARNER_NOT_SUPPORTED && endpoint_count > 1)
        return true;
    if (code != RPC_CODE_UNAVAILABLE)
        return false;
    if (policy == RPC_RETRY_REPEATABLE)
        return true;
    /* Mutating: only when the request surely never left the client. */
    return id == RPC_ERR_NO_ADDRESS || id == RPC_ERR_NO_CONNECTION;
}
