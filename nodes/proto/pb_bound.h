/*
 * pb_bound.h: upper bounds of the packed size of the frames members and clients send,
 * so that protobuf-c packs a frame straight into a reused buffer reserved to the
 * bound, without protobuf_c_message_get_packed_size's walk over every field first (a
 * walk nearly as long as the pack: 1,370 of the 3,460 instructions writing a peer
 * frame cost). A bound only sizes the buffer: protobuf_c_message_pack writes the bytes
 * and returns their exact length, so the wire bytes are protobuf-c's, unchanged, and
 * nothing after that length is ever sent (the buffer's tail keeps older bytes).
 *
 * A bound is computed from the message's own counts and lengths (every key at most two
 * bytes, every varint and length prefix at most ten), never from its values. A
 * message with unknown fields falls back to the exact size.
 */
#ifndef FL_PROTO_PB_BOUND_H
#define FL_PROTO_PB_BOUND_H

#include "harness/common/common.h"
#include "nodes/proto/raft.pb-c.h"
#include "nodes/proto/rpc.pb-c.h"

size_t pb_peer_frame_bound(const Raftpb__PeerFrame *f);
/* ClientFrame is flat (scalars and the one bytes field body); ServerFrame also has
 * the Error sub-message (a code and a text). */
size_t pb_client_frame_bound(const Rpc__ClientFrame *f);
size_t pb_server_frame_bound(const Rpc__ServerFrame *f);

/* A bound of any message from its descriptor, sub-messages and repeated fields
 * included (every request and response body: a put, a range response with its
 * key-values, a txn), walking the message once as protobuf_c_message_get_packed_size
 * would, but with no varint sized. 0 when m or a message inside it has unknown fields:
 * size it exactly. */
size_t pb_msg_bound(const ProtobufCMessage *m);

/* Packs m at the end of out (reserving bound bytes first, bound >= m's packed size)
 * and returns the packed length; out->len grows by that length. */
size_t pb_pack_append(const ProtobufCMessage *m, size_t bound, struct fl_buf *out);

#endif
