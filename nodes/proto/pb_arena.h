/*
 * pb_arena.h: protobuf-c decoding into common's bump allocator (harness/common/arena.h),
 * the one copy for the client and the server. A pb_arena is an fl_arena behind a
 * ProtobufCAllocator: pass &arena->alloc to *_unpack, and each field of the decoded
 * message costs a pointer bump instead of a malloc and a free; the allocator's free does
 * nothing, and everything goes at once at pb_arena_reset. Never use it for a message
 * that outlives the reset, nor pass such a message to *_free_unpacked.
 *
 * Users: the client's decoding of one server frame (client.c), the server's of one
 * peer frame or applied entry, and its owned messages (nodes/server/pbarena.h).
 */
#ifndef FL_PROTO_PB_ARENA_H
#define FL_PROTO_PB_ARENA_H

#include "harness/common/arena.h"

#include <protobuf-c/protobuf-c.h>
#include <stddef.h>

struct pb_arena {
    ProtobufCAllocator alloc; /* pass &arena->alloc to *_unpack */
    struct fl_arena fl;
};

/* An empty arena whose blocks start at block_min bytes and double up to block_max; a
 * reset keeps the largest block, however large (a big range response). */
void pb_arena_init(struct pb_arena *a, size_t block_min, size_t block_max);
/* Points a->alloc at a->fl (for an arena whose fl is set up otherwise, or was moved). */
void pb_arena_bind(struct pb_arena *a);
/* Frees every allocation; keeps one block for reuse. Inline (fl_arena_reset's usual
 * case is one store): the server resets an arena twice per frame. */
static inline void pb_arena_reset(struct pb_arena *a)
{
    fl_arena_reset(&a->fl);
}
void pb_arena_close(struct pb_arena *a);

#endif
