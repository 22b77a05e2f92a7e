/*
 * test_order.c: harness/common/order.h. A comparator of FL_CMP_STEP lines orders any
 * two integers (any sign, the int64_t extremes without overflow, equal 0) and decides
 * by its first differing field, as the comparators it replaced did; fl_permute_gather
 * leaves record j as the one that was at perm[j], for every permutation tried (identity, one cycle,
 * many cycles, random), for records of odd sizes, and consumes perm (each entry its own index
 * after).
 */
#include "fl_test.h"
#include "harness/common/order.h"

/* Comparators of one and two fields, as the checkers write theirs. */
static int one_field(int64_t x, int64_t y)
{
    FL_CMP_STEP(x, y);
    return 0;
}

static int two_fields(const int64_t *x, const int64_t *y)
{
    FL_CMP_STEP(x[0], y[0]);
    FL_CMP_STEP(x[1], y[1]);
    return 0;
}

static void test_cmp(void)
{
    CHECK_EQ_INT(one_field(3, 3), 0);
    CHECK_EQ_INT(one_field(-1, 0), -1);
    CHECK_EQ_INT(one_field(0, -1), 1);
    CHECK_EQ_INT(one_field(INT64_MIN, INT64_MAX), -1); /* no overflow, as a - b would */
    CHECK_EQ_INT(one_field(INT64_MAX, INT64_MIN), 1);
    CHECK_EQ_INT(two_fields((int64_t[]){1, 2}, (int64_t[]){1, 2}), 0);
    CHECK_EQ_INT(two_fields((int64_t[]){1, 9}, (int64_t[]){2, 0}), -1); /* first field decides */
    CHECK_EQ_INT(two_fields((int64_t[]){2, 0}, (int64_t[]){1, 9}), 1);
    CHECK_EQ_INT(two_fields((int64_t[]){5, 1}, (int64_t[]){5, 2}), -1); /* a tie goes on */
}

struct rec3 {
    uint8_t b[3];
};

/* One permutation of n records of 3 bytes against the obvious copy. */
static void permute_case(const uint32_t *perm0, uint32_t n)
{
    struct rec3 *a = fl_malloc((size_t)n * sizeof(*a)), *want = fl_malloc((size_t)n * sizeof(*a));
    uint32_t *perm = fl_malloc((size_t)n * sizeof(uint32_t));
    for (uint32_t i = 0; i < n; i++) {
        a[i] = (struct rec3){{(uint8_t)i, (uint8_t)(i >> 8), (uint8_t)(i * 7)}};
        perm[i] = perm0[i];
    }
    for (uint32_t j = 0; j < n; j++)
        want[j] = a[perm0[j]];
    struct rec3 held;
    fl_permute_gather(a, sizeof(*a), perm, n, &held);
    CHECK(memcmp(a, want, (size_t)n * sizeof(*a)) == 0);
    for (uint32_t i = 0; i < n; i++)
        CHECK(perm[i] == i);
    free(a);
    free(want);
    free(perm);
}

static void test_permute(void)
{
    permute_case((uint32_t[]){0}, 1);
    permute_case((uint32_t[]){0, 1, 2, 3}, 4);    /* identity */
    permute_case((uint32_t[]){1, 2, 3, 0}, 4);    /* one cycle */
    permute_case((uint32_t[]){3, 0, 1, 2}, 4);    /* the other way round */
    permute_case((uint32_t[]){1, 0, 3, 2, 4}, 5); /* two swaps, a fixed point */
    uint64_t s = 12345;
    for (uint32_t n = 2; n <= 300; n += 37) {
        uint32_t *p = fl_malloc((size_t)n * sizeof(uint32_t));
        for (uint32_t i = 0; i < n; i++)
            p[i] = i;
        for (uint32_t i = n - 1; i > 0; i--) { /* Fisher-Yates */
            s = s * 6364136223846793005ULL + 1442695040888963407ULL;
            uint32_t j = (uint32_t)((s >> 33) % (i + 1));
            uint32_t t = p[i];
            p[i] = p[j];
            p[j] = t;
        }
        permute_case(p, n);
        free(p);
    }
}

int main(void)
{
    FL_TEST(test_cmp);
    FL_TEST(test_permute);
    return fl_test_end();
}
