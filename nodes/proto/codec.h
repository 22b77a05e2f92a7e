/*
 * codec.h: the wire form of rpc.ClientMsg and rpc.ServerMsg (see ClientFrame and
 * ServerFrame in rpc.proto). Every client and server frame goes through these four
 * functions; nothing else packs or unpacks the two envelopes.
 *
 * A decoded message is an ordinary protobuf-c message: all of it comes from the
 * allocator given (NULL: protobuf-c's default, malloc), the top message first, so
 * rpc__client_msg__free_unpacked / rpc__server_msg__free_unpacked with the same
 * allocator free it, and an arena can be reset instead.
 */
#ifndef FL_PROTO_CODEC_H
#define FL_PROTO_CODEC_H

#include "harness/common/common.h"
#include "nodes/proto/rpc.pb-c.h"

/* Appends the frame of m to out; returns its length. Nothing m points to may lie in
 * out's memory: a large body is packed there first (codec.c), which may move it. */
size_t rpc_client_msg_encode(const Rpc__ClientMsg *m, struct fl_buf *out);
size_t rpc_server_msg_encode(const Rpc__ServerMsg *m, struct fl_buf *out);
/* NULL when the bytes are not a frame, or its body does not decode as the message of
 * the field it names. */
Rpc__ClientMsg *rpc_client_msg_decode(ProtobufCAllocator *a, size_t n, const uint8_t *p);
Rpc__ServerMsg *rpc_server_msg_decode(ProtobufCAllocator *a, size_t n, const uint8_t *p);
/* rpc_client_msg_decode that also names, in *body, the bytes of the request message as
 * the frame carried them (the packed PutRequest, TxnRequest...; {0, NULL} when the
 * frame names none). They stay allocated from a (an arena: a is required) until the
 * arena lets the message go, so a server can put them in its log without packing the
 * request again. */
Rpc__ClientMsg *rpc_client_msg_decode_body(ProtobufCAllocator *a, size_t n, const uint8_t *p,
                                           ProtobufCBinaryData *body);

/* The admin request a harness sends a member, built once for every target: its message
 * and the request it points into (q must stay where it is until sent). */
struct rpc_ctl_req {
    Rpc__ClientMsg msg;
    union {
        Rpc__CompactionRequest compact;
        Rpc__DefragmentRequest defrag;
        Rpc__AlarmRequest alarm;
        Rpc__MoveLeaderRequest move;
        Rpc__SnapshotRequest snap;
        Rpc__HashKVRequest hash;
    } r;
};
enum rpc_ctl_kind {
    RPC_CTL_COMPACT, /* arg: the revision */
    RPC_CTL_DEFRAG,
    RPC_CTL_ALARM_DISARM, /* deactivates NOSPACE of every member (member id 0) */
    RPC_CTL_MOVE_LEADER,  /* arg: the target's member id */
    RPC_CTL_SNAPSHOT_SAVE,
    RPC_CTL_HASH_KV, /* arg: the revision */
};
void rpc_ctl_req_init(struct rpc_ctl_req *q, enum rpc_ctl_kind kind, uint64_t arg);

#endif
