/*
 * client_arena.c: the protobuf-c allocator for decoding server frames, over common's
 * bump allocator (harness/common/arena.h). A frame is decoded, handled and dropped
 * within kvc_conn_on_message, so its fields (a range response carries every key and
 * value) cost one pointer bump each instead of a malloc and a free, and the whole
 * message goes at once when the handler is done. Blocks start at 4 KiB and double up
 * to 256 KiB; a reset keeps the largest, so a steady load settles on one block and
 * allocates nothing.
 */
#include "nodes/client/client_int.h"

#define BLOCK_MIN ((size_t)4 * 1024)
#define BLOCK_MAX ((size_t)256 * 1024)

static void *arena_alloc(void *ud, size_t size)
{
    struct kvc_arena *a = ud;
    return fl_arena_alloc(&a->fl, size);
}

static void arena_free(void *ud, void *p)
{
    (void)ud;
    (void)p; /* everything goes at kvc_arena_reset */
}

void kvc_arena_init(struct kvc_arena *a)
{
    a->alloc.alloc = arena_alloc;
    a->alloc.free = arena_free;
    a->alloc.allocator_data = a;
    /* a reset keeps the largest block, however large (a big range response) */
    fl_arena_init(&a->fl, BLOCK_MIN, BLOCK_MAX, SIZE_MAX);
}

void kvc_arena_reset(struct kvc_arena *a)
{
    fl_arena_reset(&a->fl);
}

void kvc_arena_close(struct kvc_arena *a)
{
    fl_arena_close(&a->fl);
}
