/*
 * arena.h: the bump allocator. An allocation costs a pointer bump in the current
 * block; everything goes at once at fl_arena_reset or fl_arena_close. Blocks never
 * move, so a pointer stays valid until the next reset. Block sizes double from
 * block_min up to block_max (a larger request gets a block of its own size); a reset
 * keeps the largest block not above keep_bytes_max for reuse, so a steady load
 * settles on one block and allocates nothing, while a rare huge cycle (a snapshot)
 * is not hoarded.
 *
 * Used for memory that lives for one step and is dropped whole: the Raft core's
 * outbox (entries, snapshots and data a ready shows), the client's decoding of one
 * server frame, and the server's protobuf decoding (nodes/server/pbarena.c). Pure: no
 * I/O; out of memory aborts (fl_malloc).
 *
 * A pool (struct fl_arena_pool) serves many short-lived arenas that each start with
 * one small block (the server's owned request messages, hundreds alive under load):
 * their first block comes from a free list of same-size blocks and goes back to it,
 * since malloc's bins did badly with hundreds of live mid-size blocks of varied sizes.
 * The pool belongs to whoever owns those arenas (the cluster), never to the process:
 * it must outlive every arena drawing on it.
 */
#ifndef FL_ARENA_H
#define FL_ARENA_H

#include "harness/common/common.h"

struct fl_arena_block;

/* A free list of blocks of block_bytes each, at most keep_max kept. */
struct fl_arena_pool {
    struct fl_arena_block *free;
    size_t n, keep_max, block_bytes;
};

struct fl_arena {
    /* The free room of the current block: [cur, end), both NULL with no block. Only
     * fl_arena_alloc's inline path and arena.c touch them. A copy of the struct owns the
     * same blocks; allocate through one copy only. */
    char *cur, *end;
    /* Whether head is the only block and a reset keeps it (its cap <= keep_bytes_max):
     * then fl_arena_reset only moves cur back to base, the start of its room. */
    bool solo;
    char *base;
    struct fl_arena_block *head; /* the current block; older ones behind it */
    size_t block_min, block_max, keep_bytes_max;
    struct fl_arena_pool *pool; /* where the first block comes from; NULL: malloc */
};

void fl_arena_pool_init(struct fl_arena_pool *p, size_t block_bytes, size_t keep_max);
/* Frees the kept blocks; arenas still holding pool blocks must be closed first. */
void fl_arena_pool_close(struct fl_arena_pool *p);

/* An empty arena (no block until the first allocation). */
void fl_arena_init(struct fl_arena *a, size_t block_min, size_t block_max, size_t keep_bytes_max);
/* An arena whose first block is one of pool's (block_min = the pool's block size);
 * its blocks return to the pool when it is reset or closed. */
void fl_arena_init_pooled(struct fl_arena *a, struct fl_arena_pool *pool, size_t block_max,
                          size_t keep_bytes_max);
/* The slow path of fl_arena_alloc: a new block (n as given, not rounded). */
void *fl_arena_alloc_block(struct fl_arena *a, size_t n);

/* n bytes aligned to 16 (n == 0 still gives a distinct pointer), owned by the arena;
 * never NULL. Inline: the usual call is a bump in the current block (the protobuf
 * decoders allocate a few times per field, some 400,000 times in the e2e bench run). */
static inline void *fl_arena_alloc(struct fl_arena *a, size_t n)
{
    /* n + 15 wraps for a huge n: the rounded size is then small, so also check n */
    size_t r = n ? (n + 15u) & ~(size_t)15u : 16u;
    if (__builtin_expect(r >= n && (uintptr_t)a->end - (uintptr_t)a->cur >= r, 1)) {
        void *p = a->cur;
        a->cur += r;
        return p;
    }
    return fl_arena_alloc_block(a, n);
}
/* The general fl_arena_reset: several blocks, or one a reset frees. */
void fl_arena_reset_blocks(struct fl_arena *a);
/* Frees every allocation; keeps one block as described above. Inline for the usual
 * case (a steady load settled on one block): the server resets its peer-frame arena
 * twice per frame. */
static inline void fl_arena_reset(struct fl_arena *a)
{
    if (a->solo)
        a->cur = a->base;
    else
        fl_arena_reset_blocks(a);
}
/* Frees everything; the arena may be initialised again. */
void fl_arena_close(struct fl_arena *a);
/* Bytes held in blocks (for tests and accounting). */
size_t fl_arena_bytes(const struct fl_arena *a);

#endif
