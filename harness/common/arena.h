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
 * outbox (entries, snapshots and data a ready shows) and the client's decoding of
 * one server frame. Pure: no I/O; out of memory aborts (fl_malloc).
 */
#ifndef FL_ARENA_H
#define FL_ARENA_H

#include "harness/common/common.h"

struct fl_arena_block;

struct fl_arena {
    struct fl_arena_block *head; /* the current block; older ones behind it */
    size_t block_min, block_max, keep_bytes_max;
};

/* An empty arena (no block until the first allocation). */
void fl_arena_init(struct fl_arena *a, size_t block_min, size_t block_max, size_t keep_bytes_max);
/* n bytes aligned to 16 (n == 0 still gives a distinct pointer), owned by the arena;
 * never NULL. */
void *fl_arena_alloc(struct fl_arena *a, size_t n);
/* Frees every allocation; keeps one block as described above. */
void fl_arena_reset(struct fl_arena *a);
/* Frees everything; the arena may be initialised again. */
void fl_arena_close(struct fl_arena *a);
/* Bytes held in blocks (for tests and accounting). */
size_t fl_arena_bytes(const struct fl_arena *a);

#endif
