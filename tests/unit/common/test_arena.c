/*
 * test_arena.c: harness/common/arena.h, the one bump allocator (the Raft outbox and
 * the client's frame decoding use it). Allocations are 16-byte aligned, distinct and
 * stable while blocks are added; block sizes double from the minimum up to the
 * maximum and a large request gets a block of its own; a reset keeps the largest
 * block up to keep_bytes_max and nothing above it.
 */
#include "fl_test.h"

#include "harness/common/arena.h"

#include <stdint.h>

static void test_alloc(void)
{
    struct fl_arena a;
    fl_arena_init(&a, 64, 256, SIZE_MAX);
    CHECK(fl_arena_bytes(&a) == 0);
    unsigned char *p[100];
    bool aligned = true, stable = true;
    for (int i = 0; i < 100; i++) {
        p[i] = fl_arena_alloc(&a, (size_t)i % 7);
        aligned = aligned && ((uintptr_t)p[i] & 15) == 0;
        memset(p[i], i, (size_t)i % 7);
    }
    for (int i = 0; i < 100; i++) {
        for (int j = 0; j < i % 7; j++)
            stable = stable && p[i][j] == (unsigned char)i;
    }
    CHECK(aligned && stable);
    CHECK(p[0] != p[1]); /* a zero-byte allocation still takes room */
    /* 100 x 16 bytes: blocks of 64, 128, 256, 256, ... (never above the maximum) */
    size_t held = fl_arena_bytes(&a);
    CHECK(held >= 1600 && held <= 1600 + 256 + 64 + 128);
    void *big = fl_arena_alloc(&a, 10000); /* a block of its own */
    CHECK(big != NULL && fl_arena_bytes(&a) >= held + 10000);
    fl_arena_reset(&a);
    CHECK(fl_arena_bytes(&a) == 10000); /* the largest is kept */
    void *again = fl_arena_alloc(&a, 5000);
    CHECK(again == big); /* reused from its start */
    fl_arena_close(&a);
    CHECK(fl_arena_bytes(&a) == 0);
}

static void test_keep_max(void)
{
    struct fl_arena a;
    fl_arena_init(&a, 64, 1024, 1024);
    fl_arena_alloc(&a, 16);
    fl_arena_alloc(&a, 4096); /* a huge cycle */
    fl_arena_reset(&a);
    CHECK(fl_arena_bytes(&a) == 64); /* the 4096-byte block is not hoarded */
    fl_arena_close(&a);
    fl_arena_init(&a, 64, 1024, 16);
    fl_arena_alloc(&a, 16);
    fl_arena_reset(&a);
    CHECK(fl_arena_bytes(&a) == 0); /* nothing small enough to keep */
    fl_arena_close(&a);
}

/* One block that a reset keeps (the inline reset): everything is reused from its start,
 * again and again, and nothing is freed or added. */
static void test_one_block(void)
{
    struct fl_arena a;
    fl_arena_init(&a, 64, 256, SIZE_MAX);
    void *first = fl_arena_alloc(&a, 16);
    void *second = fl_arena_alloc(&a, 1);
    CHECK(second == (char *)first + 16);
    bool same = true;
    for (int i = 0; i < 10; i++) {
        fl_arena_reset(&a);
        same = same && fl_arena_alloc(&a, 48) == first && fl_arena_alloc(&a, 16) != first;
        same = same && fl_arena_bytes(&a) == 64;
    }
    CHECK(same);
    fl_arena_reset(&a);
    void *p = fl_arena_alloc(&a, 100); /* outgrows the block: a second one */
    CHECK(p != first && fl_arena_bytes(&a) == 64 + 128);
    fl_arena_reset(&a); /* keeps the larger */
    CHECK(fl_arena_bytes(&a) == 128 && fl_arena_alloc(&a, 16) == p);
    fl_arena_close(&a);
    CHECK(fl_arena_bytes(&a) == 0);
    fl_arena_reset(&a); /* closed: nothing to keep */
    CHECK(fl_arena_bytes(&a) == 0);
}

int main(void)
{
    FL_TEST(test_one_block);
    FL_TEST(test_alloc);
    FL_TEST(test_keep_max);
    return fl_test_end();
}
