/*
 * pb_arena.c: a ProtobufCAllocator over an fl_arena (see pb_arena.h).
 */
#include "nodes/proto/pb_arena.h"

static void *pb_arena_alloc(void *ud, size_t size)
{
    struct pb_arena *a = ud;
    return fl_arena_alloc(&a->fl, size);
}

static void pb_arena_free(void *ud, void *p)
{
    (void)ud;
    (void)p; /* everything goes at pb_arena_reset */
}

void pb_arena_bind(struct pb_arena *a)
{
    a->alloc.alloc = pb_arena_alloc;
    a->alloc.free = pb_arena_free;
    a->alloc.allocator_data = a;
}

void pb_arena_init(struct pb_arena *a, size_t block_min, size_t block_max)
{
    pb_arena_bind(a);
    fl_arena_init(&a->fl, block_min, block_max, SIZE_MAX);
}

void pb_arena_close(struct pb_arena *a)
{
    fl_arena_close(&a->fl);
}
