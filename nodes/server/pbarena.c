/*
 * pbarena.c: bump allocator for transient protobuf-c decoding (see pbarena.h).
 */
#include "nodes/server/pbarena.h"
#include "harness/common/common.h"

#define BLOCK_BYTES (64u * 1024u)

struct srv_pb_block {
    struct srv_pb_block *next;
    size_t cap, used;
    max_align_t data[]; /* aligned storage */
};

static struct srv_pb_block *block_new(size_t need, struct srv_pb_block *next)
{
    size_t cap = need > BLOCK_BYTES ? need : BLOCK_BYTES;
    struct srv_pb_block *b = fl_malloc(sizeof *b + cap);
    b->next = next;
    b->cap = cap;
    b->used = 0;
    return b;
}

static void *arena_alloc(void *ud, size_t size)
{
    struct srv_pb_arena *a = ud;
    size_t n = (size + 15u) & ~(size_t)15u;
    if (n == 0)
        n = 16;
    if (!a->head || a->head->cap - a->head->used < n)
        a->head = block_new(n, a->head);
    void *p = (char *)a->head->data + a->head->used;
    a->head->used += n;
    return p;
}

static void arena_free(void *ud, void *p)
{
    (void)ud;
    (void)p; /* released by srv_pb_arena_reset */
}

void srv_pb_arena_init(struct srv_pb_arena *a)
{
    a->alloc.alloc = arena_alloc;
    a->alloc.free = arena_free;
    a->alloc.allocator_data = a;
    a->head = NULL;
}

void srv_pb_arena_reset(struct srv_pb_arena *a)
{
    struct srv_pb_block *b = a->head;
    if (!b)
        return;
    /* keep the oldest block (the first one allocated), free the rest */
    while (b->next) {
        struct srv_pb_block *next = b->next;
        free(b);
        b = next;
    }
    b->used = 0;
    a->head = b;
}

void srv_pb_arena_close(struct srv_pb_arena *a)
{
    while (a->head) {
        struct srv_pb_block *next = a->head->next;
        free(a->head);
        a->head = next;
    }
}
