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

/* Appends the frame of m to out; returns its length. */
size_t rpc_client_msg_encode(const Rpc__ClientMsg *m, struct fl_buf *out);
size_t rpc_server_msg_encode(const Rpc__ServerMsg *m, struct fl_buf *out);
/* NULL when the bytes are not a frame, or its body does not decode as the message of
 * the field it names. */
Rpc__ClientMsg *rpc_client_msg_decode(ProtobufCAllocator *a, size_t n, const uint8_t *p);
Rpc__ServerMsg *rpc_server_msg_decode(ProtobufCAllocator *a, size_t n, const uint8_t *p);

#endif
