/*
 * arena.c: the bump allocator (arena.h). Blocks form a list, newest first; only the
 * newest is bumped into, so an allocation never searches.
 */
#include "harness/common/arena.h"

#define ARENA_ALIGN ((size_t)16)

struct fl_arena_block {
    struct fl_arena_block *next;
    size_t cap, used;
    max_align_t data[]; /* aligned storage */
};

void fl_arena_init(struct fl_arena *a, size_t block_min, size_t block_max, size_t keep_bytes_max)
{
    FL_ASSERT(block_min >= ARENA_ALIGN && block_min <= block_max);
    a->head = NULL;
    a->block_min = block_min;
    a->block_max = block_max;
    a->keep_bytes_max = keep_bytes_max;
}

void *fl_arena_alloc(struct fl_arena *a, size_t n)
{
    FL_ASSERT(a->block_min > 0 && n <= SIZE_MAX - ARENA_ALIGN);
    n = n ? (n + ARENA_ALIGN - 1) & ~(ARENA_ALIGN - 1) : ARENA_ALIGN;
    struct fl_arena_block *h = a->head;
    if (!h || h->cap - h->used < n) {
        size_t cap = h ? FL_MIN(a->block_max, h->cap * 2) : a->block_min;
        cap = FL_MAX(cap, n);
        struct fl_arena_block *b = fl_malloc(sizeof *b + cap);
        b->next = h;
        b->cap = cap;
        b->used = 0;
        a->head = h = b;
    }
    void *p = (char *)h->data + h->used;
    h->used += n;
    FL_ASSERT(h->used <= h->cap && ((uintptr_t)p & (ARENA_ALIGN - 1)) == 0);
    return p;
}

void fl_arena_reset(struct fl_arena *a)
{
    struct fl_arena_block *keep = NULL;
    for (struct fl_arena_block *b = a->head; b; b = b->next) {
        if (b->cap <= a->keep_bytes_max && (!keep || b->cap > keep->cap))
            keep = b;
    }
    for (struct fl_arena_block *b = a->head, *next; b; b = next) {
        next = b->next;
        if (b != keep)
            free(b);
    }
    if (keep) {
        keep->next = NULL;
        keep->used = 0;
    }
    a->head = keep;
}

void fl_arena_close(struct fl_arena *a)
{
    while (a->head) {
        struct fl_arena_block *next = a->head->next;
        free(a->head);
        a->head = next;
    }
}

size_t fl_arena_bytes(const struct fl_arena *a)
{
    size_t n = 0;
    for (const struct fl_arena_block *b = a->head; b; b = b->next)
        n += b->cap;
    return n;
}
