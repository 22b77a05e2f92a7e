/*
 * test_arena_pool.c: harness/common/arena.h's pool (struct fl_arena_pool), which the
 * server's owned request messages draw their first block from. An arena's first block
 * of the pool's size comes from the pool and goes back at close or reset; blocks of
 * other sizes and later blocks never do; the pool keeps at most keep_max and gives the
 * same block back (no malloc in a steady state); closing it frees what it keeps.
 */
#include "fl_test.h"

#include "harness/common/arena.h"

static void test_reuse(void)
{
    struct fl_arena_pool pool;
    fl_arena_pool_init(&pool, 256, 2);
    struct fl_arena a;
    fl_arena_init_pooled(&a, &pool, 1024, SIZE_MAX);
    void *first = fl_arena_alloc(&a, 16);
    CHECK(fl_arena_bytes(&a) == 256);
    fl_arena_close(&a);
    CHECK(pool.n == 1); /* back in the pool */
    fl_arena_init_pooled(&a, &pool, 1024, SIZE_MAX);
    CHECK(fl_arena_alloc(&a, 16) == first); /* the same block again */
    CHECK(pool.n == 0);
    fl_arena_alloc(&a, 400); /* a second block, not the pool's */
    CHECK(fl_arena_bytes(&a) == 256 + 512);
    fl_arena_close(&a);
    CHECK(pool.n == 1); /* only the first block went back */
    fl_arena_pool_close(&pool);
    CHECK(pool.n == 0 && pool.free == NULL);
}

static void test_keep_max(void)
{
    struct fl_arena_pool pool;
    fl_arena_pool_init(&pool, 64, 2);
    struct fl_arena a[4];
    for (int i = 0; i < 4; i++) {
        fl_arena_init_pooled(&a[i], &pool, 64, SIZE_MAX);
        fl_arena_alloc(&a[i], 32);
    }
    CHECK(pool.n == 0);
    for (int i = 0; i < 4; i++)
        fl_arena_close(&a[i]);
    CHECK(pool.n == 2); /* two kept, two freed */
    /* A first allocation larger than the pool's block gets a block of its own, which
     * never enters the pool. */
    fl_arena_init_pooled(&a[0], &pool, 64, SIZE_MAX);
    fl_arena_alloc(&a[0], 100);
    CHECK(pool.n == 2);
    fl_arena_close(&a[0]);
    CHECK(pool.n == 2);
    /* A reset that keeps the pool's block keeps it in the arena. */
    fl_arena_init_pooled(&a[0], &pool, 64, SIZE_MAX);
    fl_arena_alloc(&a[0], 16);
    CHECK(pool.n == 1);
    fl_arena_reset(&a[0]);
    CHECK(pool.n == 1 && fl_arena_bytes(&a[0]) == 64);
    fl_arena_close(&a[0]);
    CHECK(pool.n == 2);
    fl_arena_pool_close(&pool);
}

int main(void)
{
    FL_TEST(test_reuse);
    FL_TEST(test_keep_max);
    return fl_test_end();
}
