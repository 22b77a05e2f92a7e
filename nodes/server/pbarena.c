/*
 * pbarena.c: the server's owned messages (see pbarena.h): each a pb_arena of its own
 * whose first block comes from the cluster's pool.
 */
#include "nodes/server/pbarena.h"

void srv_pb_pool_init(struct fl_arena_pool *pool)
{
    fl_arena_pool_init(pool, SRV_PB_POOL_BLOCK, SRV_PB_POOL_KEEP);
}

/* An owned message: its arena's bookkeeping (and what decode kept) sits in the arena's
 * first block, just before the message (protobuf-c allocates the top message first), so
 * the message pointer alone finds and frees everything. */
struct owned_hdr {
    struct srv_pb_arena a;
    ProtobufCBinaryData kept;
};
#define OWNED_HDR ((sizeof(struct owned_hdr) + 15u) & ~(size_t)15u)

void *srv_pb_decode_owned(struct fl_arena_pool *pool, srv_pb_decode_fn *decode, size_t msg_size,
                          size_t n, const uint8_t *p)
{
    struct srv_pb_arena a;
    pb_arena_bind(&a);
    size_t need = OWNED_HDR + msg_size + 2 * n + 256;
    if (need <= pool->block_bytes)
        fl_arena_init_pooled(&a.fl, pool, SRV_PB_BLOCK_MAX, SIZE_MAX);
    else
        fl_arena_init(&a.fl, FL_MAX(need, SRV_PB_BLOCK_MIN), FL_MAX(need, SRV_PB_BLOCK_MAX),
                      SIZE_MAX);
    struct owned_hdr *hdr = fl_arena_alloc(&a.fl, sizeof *hdr);
    ProtobufCBinaryData kept = {0, NULL};
    void *msg = decode(&a.alloc, n, p, &kept);
    if (!msg) {
        fl_arena_close(&a.fl);
        return NULL;
    }
    FL_ASSERT((char *)msg == (char *)hdr + OWNED_HDR);
    hdr->a = a;
    hdr->kept = kept;
    pb_arena_bind(&hdr->a);
    return msg;
}

void srv_pb_free_owned(void *msg)
{
    if (!msg)
        return;
    struct srv_pb_arena a = ((struct owned_hdr *)((char *)msg - OWNED_HDR))->a;
    fl_arena_close(&a.fl);
}

ProtobufCBinaryData srv_pb_owned_kept(const void *msg)
{
    return ((const struct owned_hdr *)((const char *)msg - OWNED_HDR))->kept;
}
