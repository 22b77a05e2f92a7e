/*
 * pbarena.c: protobuf-c decoding into common's bump allocator (see pbarena.h). The
 * arena is an fl_arena behind a ProtobufCAllocator; an owned message is an fl_arena
 * of its own whose first block comes from the cluster's pool.
 */
#include "nodes/server/pbarena.h"

/* Blocks start small (most uses decode or build one small message) and double up to
 * BLOCK_MAX; a reset keeps the largest, so a steady load settles on one block. */
#define BLOCK_MIN ((size_t)2 * 1024)
#define BLOCK_MAX ((size_t)64 * 1024)

static void *arena_alloc(void *ud, size_t size)
{
    struct srv_pb_arena *a = ud;
    return fl_arena_alloc(&a->fl, size);
}

static void arena_free(void *ud, void *p)
{
    (void)ud;
    (void)p; /* released by srv_pb_arena_reset */
}

static void allocator_set(struct srv_pb_arena *a)
{
    a->alloc.alloc = arena_alloc;
    a->alloc.free = arena_free;
    a->alloc.allocator_data = a;
}

void srv_pb_arena_init(struct srv_pb_arena *a)
{
    allocator_set(a);
    fl_arena_init(&a->fl, BLOCK_MIN, BLOCK_MAX, SIZE_MAX);
}

void srv_pb_arena_reset(struct srv_pb_arena *a)
{
    fl_arena_reset(&a->fl);
}

void srv_pb_arena_close(struct srv_pb_arena *a)
{
    fl_arena_close(&a->fl);
}

void srv_pb_pool_init(struct fl_arena_pool *pool)
{
    fl_arena_pool_init(pool, SRV_PB_POOL_BLOCK, SRV_PB_POOL_KEEP);
}

/* An owned message: its arena's bookkeeping sits in the arena's first block, just
 * before the message (protobuf-c allocates the top message first), so the message
 * pointer alone finds and frees everything. */
#define OWNED_HDR ((sizeof(struct srv_pb_arena) + 15u) & ~(size_t)15u)

void *srv_pb_decode_owned(struct fl_arena_pool *pool, srv_pb_decode_fn *decode, size_t msg_size,
                          size_t n, const uint8_t *p)
{
    struct srv_pb_arena a;
    allocator_set(&a);
    size_t need = OWNED_HDR + msg_size + 2 * n + 256;
    if (need <= pool->block_bytes)
        fl_arena_init_pooled(&a.fl, pool, BLOCK_MAX, SIZE_MAX);
    else
        fl_arena_init(&a.fl, FL_MAX(need, BLOCK_MIN), FL_MAX(need, BLOCK_MAX), SIZE_MAX);
    struct srv_pb_arena *hdr = fl_arena_alloc(&a.fl, sizeof *hdr);
    void *msg = decode(&a.alloc, n, p);
    if (!msg) {
        fl_arena_close(&a.fl);
        return NULL;
    }
    FL_ASSERT((char *)msg == (char *)hdr + OWNED_HDR);
    *hdr = a;
    hdr->alloc.allocator_data = hdr;
    return msg;
}

void srv_pb_free_owned(void *msg)
{
    if (!msg)
        return;
    struct srv_pb_arena a = *(struct srv_pb_arena *)((char *)msg - OWNED_HDR);
    fl_arena_close(&a.fl);
}
