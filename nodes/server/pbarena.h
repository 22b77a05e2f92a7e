/*
 * pbarena.h: the server's protobuf-c arenas. Messages decoded only for the length of
 * one handler (a peer frame, an entry being applied) go into a srv_pb_arena, which is
 * the shared pb_arena (nodes/proto/pb_arena.h) with the server's block sizes: one
 * pointer bump per field, everything gone at once with srv_pb_arena_reset. Never use
 * it for a message that outlives the reset. Owned messages (below) are pb_arenas of
 * their own whose first block comes from the cluster's pool.
 */
#ifndef FL_SERVER_PBARENA_H
#define FL_SERVER_PBARENA_H

#include "harness/common/arena.h"
#include "nodes/proto/pb_arena.h"

#include <protobuf-c/protobuf-c.h>
#include <stddef.h>

/* The server's name for the shared arena; reset and close are pb_arena's. */
#define srv_pb_arena       pb_arena
#define srv_pb_arena_reset pb_arena_reset
#define srv_pb_arena_close pb_arena_close
/* Blocks start small (most uses decode or build one small message) and double up to
 * SRV_PB_BLOCK_MAX. */
#define SRV_PB_BLOCK_MIN ((size_t)2 * 1024)
#define SRV_PB_BLOCK_MAX ((size_t)64 * 1024)
static inline void srv_pb_arena_init(struct srv_pb_arena *a)
{
    pb_arena_init(a, SRV_PB_BLOCK_MIN, SRV_PB_BLOCK_MAX);
}

/* The pool owned messages take their first block from (requests waiting on a member,
 * hundreds at a time under load): one per cluster, closed (fl_arena_pool_close) after
 * every owned message of the cluster is freed. */
#define SRV_PB_POOL_BLOCK ((size_t)1024)
#define SRV_PB_POOL_KEEP  ((size_t)4096)
void srv_pb_pool_init(struct fl_arena_pool *pool);

/* Decodes a message that lives until srv_pb_free_owned (one allocation in the usual
 * case instead of one per field, and no walk of the message to free it): decode
 * must allocate the top message (msg_size bytes) first from the allocator it gets.
 * A small message's first block comes from pool, which must outlive it. Never pass
 * the result to *_free_unpacked. NULL when the bytes do not decode. */
/* decode may also name, in *kept ({0, NULL} on entry), bytes it left in the
 * allocator's memory; srv_pb_owned_kept returns them for as long as the message lives. */
typedef void *srv_pb_decode_fn(ProtobufCAllocator *a, size_t n, const uint8_t *p,
                               ProtobufCBinaryData *kept);
void *srv_pb_decode_owned(struct fl_arena_pool *pool, srv_pb_decode_fn *decode, size_t msg_size,
                          size_t n, const uint8_t *p);
void srv_pb_free_owned(void *msg);
/* What decode kept for msg (a result of srv_pb_decode_owned). */
ProtobufCBinaryData srv_pb_owned_kept(const void *msg);

#endif
