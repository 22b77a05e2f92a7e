/*
 * pbarena.c: bump allocator for transient protobuf-c decoding (see pbarena.h).
 */
#include "nodes/server/pbarena.h"
#include "harness/common/common.h"

/* Blocks start small (most uses decode or build one small message) and double up to
 * BLOCK_MAX; a reset keeps the largest, so a steady load settles on one block. */
#define BLOCK_MIN (2u * 1024u)
#define BLOCK_MAX (64u * 1024u)

struct srv_pb_block {
    struct srv_pb_block *next;
    size_t cap, used;
    bool pooled;        /* an owned message's block from the pool below */
    max_align_t data[]; /* aligned storage */
};

static struct srv_pb_block *block_new(size_t need, struct srv_pb_block *next)
{
    size_t cap = next ? FL_MIN((size_t)BLOCK_MAX, next->cap * 2) : BLOCK_MIN;
    if (cap < need)
        cap = need;
    struct srv_pb_block *b = fl_malloc(sizeof *b + cap);
    b->next = next;
    b->cap = cap;
    b->used = 0;
    b->pooled = false;
    return b;
}

/* Owned messages (requests waiting on a member, hundreds at a time under load) take
 * their first block from a free list of same-size blocks: malloc's bins did badly
 * with hundreds of live mid-size blocks of varied sizes. Single-threaded, like the
 * simulator; the list is bounded. */
#define POOL_CAP  1024u
#define POOL_KEEP 4096u
static struct srv_pb_block *pool;
static size_t pool_n;

static struct srv_pb_block *pool_get(void)
{
    struct srv_pb_block *b = pool;
    if (b) {
        pool = b->next;
        pool_n--;
    } else {
        b = fl_malloc(sizeof *b + POOL_CAP);
        b->cap = POOL_CAP;
    }
    b->next = NULL;
    b->used = 0;
    b->pooled = true;
    return b;
}

static void block_free(struct srv_pb_block *b)
{
    if (b->pooled && pool_n < POOL_KEEP) {
        b->next = pool;
        pool = b;
        pool_n++;
    } else {
        free(b);
    }
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
    struct srv_pb_block *keep = a->head;
    if (!keep)
        return;
    for (struct srv_pb_block *b = keep->next; b; b = b->next)
        if (b->cap > keep->cap)
            keep = b;
    struct srv_pb_block *b = a->head;
    while (b) {
        struct srv_pb_block *next = b->next;
        if (b != keep)
            block_free(b);
        b = next;
    }
    keep->next = NULL;
    keep->used = 0;
    a->head = keep;
}

void srv_pb_arena_close(struct srv_pb_arena *a)
{
    while (a->head) {
        struct srv_pb_block *next = a->head->next;
        block_free(a->head);
        a->head = next;
    }
}

/* An owned message: its arena's bookkeeping sits in the arena's first block, just
 * before the message (protobuf-c allocates the top message first), so the message
 * pointer alone finds and frees everything. */
#define OWNED_HDR ((sizeof(struct srv_pb_arena) + 15u) & ~(size_t)15u)

void *srv_pb_decode_owned(srv_pb_decode_fn *decode, size_t msg_size, size_t n, const uint8_t *p)
{
    struct srv_pb_arena a;
    srv_pb_arena_init(&a);
    size_t need = OWNED_HDR + msg_size + 2 * n + 256;
    a.head = need <= POOL_CAP ? pool_get() : block_new(need, NULL);
    struct srv_pb_arena *hdr = arena_alloc(&a, sizeof *hdr);
    void *msg = decode(&a.alloc, n, p);
    if (!msg) {
        srv_pb_arena_close(&a);
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
    srv_pb_arena_close(&a);
}
