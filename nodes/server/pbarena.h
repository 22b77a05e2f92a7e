/*
 * pbarena.h: a bump allocator for protobuf-c (ProtobufCAllocator) so that messages
 * decoded only for the length of one handler (a peer frame, an entry being applied)
 * cost one pointer bump per field instead of a malloc and a free. Everything goes at
 * once with srv_pb_arena_reset. Never use it for a message that outlives the reset.
 * The memory is common's fl_arena (harness/common/arena.h).
 */
#ifndef FL_SERVER_PBARENA_H
#define FL_SERVER_PBARENA_H

#include "harness/common/arena.h"

#include <protobuf-c/protobuf-c.h>
#include <stddef.h>

struct srv_pb_arena {
    ProtobufCAllocator alloc; /* pass &arena->alloc to *_unpack / *_free_unpacked */
    struct fl_arena fl;
};

void srv_pb_arena_init(struct srv_pb_arena *a);
/* Frees every allocation; keeps the first block for reuse. */
void srv_pb_arena_reset(struct srv_pb_arena *a);
void srv_pb_arena_close(struct srv_pb_arena *a);

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
typedef void *srv_pb_decode_fn(ProtobufCAllocator *a, size_t n, const uint8_t *p);
void *srv_pb_decode_owned(struct fl_arena_pool *pool, srv_pb_decode_fn *decode, size_t msg_size,
                          size_t n, const uint8_t *p);
void srv_pb_free_owned(void *msg);

#endif
