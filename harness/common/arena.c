/*
 * arena.c: the bump allocator (arena.h). Blocks form a list, newest first; only the
 * newest is bumped into (a->cur up to a->end, by the inline fl_arena_alloc), so an
 * allocation never searches; this file adds a block when the newest is full.
 */
#include "harness/common/arena.h"

#define ARENA_ALIGN ((size_t)16)

struct fl_arena_block {
    struct fl_arena_block *next;
    size_t cap;
    bool pooled;        /* one of a pool's blocks: goes back to it */
    max_align_t data[]; /* aligned storage */
};

void fl_arena_init(struct fl_arena *a, size_t block_min, size_t block_max, size_t keep_bytes_max)
{
    FL_ASSERT(block_min >= ARENA_ALIGN && block_min <= block_max);
    a->cur = a->end = a->base = NULL;
    a->solo = false;
    a->head = NULL;
    a->block_min = block_min;
    a->block_max = block_max;
    a->keep_bytes_max = keep_bytes_max;
    a->pool = NULL;
}

void fl_arena_init_pooled(struct fl_arena *a, struct fl_arena_pool *pool, size_t block_max,
                          size_t keep_bytes_max)
{
    FL_ASSERT(pool && pool->block_bytes > 0);
    fl_arena_init(a, pool->block_bytes, FL_MAX(block_max, pool->block_bytes), keep_bytes_max);
    a->pool = pool;
}

void fl_arena_pool_init(struct fl_arena_pool *p, size_t block_bytes, size_t keep_max)
{
    FL_ASSERT(block_bytes >= ARENA_ALIGN);
    p->free = NULL;
    p->n = 0;
    p->keep_max = keep_max;
    p->block_bytes = block_bytes;
}

void fl_arena_pool_close(struct fl_arena_pool *p)
{
    while (p->free) {
        struct fl_arena_block *next = p->free->next;
        free(p->free);
        p->free = next;
        p->n--;
    }
    FL_ASSERT(p->n == 0);
}

/* A block of cap bytes: a's pool's when it has one of that size and none is in use. */
static struct fl_arena_block *block_get(struct fl_arena *a, size_t cap)
{
    struct fl_arena_pool *p = a->pool;
    struct fl_arena_block *b;
    if (p && !a->head && cap == p->block_bytes && p->free) {
        b = p->free;
        p->free = b->next;
        p->n--;
    } else {
        b = fl_malloc(sizeof *b + cap);
        b->cap = cap;
        b->pooled = p && !a->head && cap == p->block_bytes;
    }
    FL_ASSERT(b->cap == cap);
    return b;
}

static void block_put(struct fl_arena *a, struct fl_arena_block *b)
{
    struct fl_arena_pool *p = a->pool;
    if (b->pooled && p && p->n < p->keep_max) {
        FL_ASSERT(b->cap == p->block_bytes);
        b->next = p->free;
        p->free = b;
        p->n++;
    } else {
        free(b);
    }
}

void *fl_arena_alloc_block(struct fl_arena *a, size_t n)
{
    FL_ASSERT(a->block_min > 0 && n <= SIZE_MAX - ARENA_ALIGN);
    n = n ? (n + ARENA_ALIGN - 1) & ~(ARENA_ALIGN - 1) : ARENA_ALIGN;
    struct fl_arena_block *h = a->head;
    /* only called when the current block's room is short */
    FL_ASSERT(!h || (uintptr_t)a->end - (uintptr_t)a->cur < n);
    size_t cap = h ? FL_MIN(a->block_max, h->cap * 2) : a->block_min;
    cap = FL_MAX(cap, n);
    struct fl_arena_block *b = block_get(a, cap);
    b->next = h;
    a->head = b;
    char *p = (char *)b->data;
    FL_ASSERT(((uintptr_t)p & (ARENA_ALIGN - 1)) == 0);
    a->cur = p + n;
    a->end = p + cap;
    a->base = p;
    a->solo = !h && cap <= a->keep_bytes_max;
    return p;
}

void fl_arena_reset_blocks(struct fl_arena *a)
{
    struct fl_arena_block *keep = NULL;
    for (struct fl_arena_block *b = a->head; b; b = b->next) {
        if (b->cap <= a->keep_bytes_max && (!keep || b->cap > keep->cap))
            keep = b;
    }
    for (struct fl_arena_block *b = a->head, *next; b; b = next) {
        next = b->next;
        if (b != keep)
            block_put(a, b);
    }
    if (keep)
        keep->next = NULL;
    a->head = keep;
    a->base = a->cur = keep ? (char *)keep->data : NULL;
    a->end = keep ? (char *)keep->data + keep->cap : NULL;
    a->solo = keep != NULL;
}

void fl_arena_close(struct fl_arena *a)
{
    while (a->head) {
        struct fl_arena_block *next = a->head->next;
        block_put(a, a->head);
        a->head = next;
    }
    a->cur = a->end = a->base = NULL;
    a->solo = false;
}

size_t fl_arena_bytes(const struct fl_arena *a)
{
    size_t n = 0;
    for (const struct fl_arena_block *b = a->head; b; b = b->next)
        n += b->cap;
    return n;
}
