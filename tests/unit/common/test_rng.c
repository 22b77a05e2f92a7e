/*
 * test_rng.c: harness/common/rng.h, the one generator every module draws from.
 * xoshiro256** and splitmix64 against their published reference outputs, the
 * helpers' bounds, and that a copied stream forks (the simulator, the Raft core and
 * the balancers rely on all three).
 */
#include "fl_test.h"

#include "harness/common/rng.h"

static void test_reference(void)
{
    /* xoshiro256** from state {1,2,3,4}: 11520, 0, 1509978240, ... */
    struct fl_rng r = {{1, 2, 3, 4}};
    CHECK(fl_rng_u64(&r) == 11520);
    CHECK(fl_rng_u64(&r) == 0);
    CHECK(fl_rng_u64(&r) == 1509978240);
    /* splitmix64 from 0: 0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, ... */
    uint64_t x = 0;
    CHECK(fl_splitmix64(&x) == UINT64_C(0xE220A8397B1DCDAF));
    CHECK(fl_splitmix64(&x) == UINT64_C(0x6E789E6AA1B965F4));
    /* seeding is four consecutive splitmix64 outputs */
    struct fl_rng s;
    fl_rng_seed(&s, 0);
    CHECK(s.s[0] == UINT64_C(0xE220A8397B1DCDAF));
    CHECK(s.s[1] == UINT64_C(0x6E789E6AA1B965F4));
}

static void test_fork_and_bounds(void)
{
    struct fl_rng a, b;
    fl_rng_derive(&a, 7, "workload");
    b = a; /* a copy is a fork */
    bool same = true;
    for (int i = 0; i < 100; i++)
        same = same && fl_rng_u64(&a) == fl_rng_u64(&b);
    CHECK(same);
    struct fl_rng c;
    fl_rng_derive(&c, 7, "fault");
    CHECK(fl_rng_u64(&c) != fl_rng_u64(&a));
    bool in = true, lo_seen = false, hi_seen = false;
    for (int i = 0; i < 10000; i++) {
        int64_t v = fl_rng_range(&a, -3, 3);
        in = in && v >= -3 && v <= 3;
        lo_seen |= v == -3;
        hi_seen |= v == 3;
        in = in && fl_rng_below(&a, 5) < 5;
    }
    CHECK(in && lo_seen && hi_seen);
    struct fl_rng before = a;
    CHECK(!fl_rng_chance_ppm(&a, 0));
    CHECK(fl_rng_chance_ppm(&a, (uint32_t)FL_PPM));
    CHECK(memcmp(&before, &a, sizeof(a)) == 0); /* neither drew */
}

int main(void)
{
    FL_TEST(test_reference);
    FL_TEST(test_fork_and_bounds);
    return fl_test_end();
}
