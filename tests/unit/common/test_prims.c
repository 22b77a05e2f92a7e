/*
 * test_prims.c: the small primitives of harness/common.h that many modules share:
 * fl_parse_u64 (the one decimal parser of command lines, seed ranges and shard
 * variables) and the growth rule of dynamic arrays (fl_grow_cap, FL_GROW).
 */
#include "fl_test.h"

#include "harness/common/common.h"
#include "harness/common/lower_bound.h"

static bool parse(const char *s, uint64_t *v)
{
    return fl_parse_u64(s, strlen(s), v);
}

static void test_parse_u64(void)
{
    uint64_t v = 7;
    CHECK(parse("0", &v) && v == 0);
    CHECK(parse("18446744073709551615", &v) && v == UINT64_MAX);
    v = 7;
    CHECK(!parse("18446744073709551616", &v) && v == 7); /* overflow leaves *out */
    CHECK(!parse("", &v));
    CHECK(!parse(" 5", &v));
    CHECK(!parse("-5", &v));
    CHECK(!parse("+5", &v));
    CHECK(!parse("0x10", &v));
    CHECK(!parse("5 ", &v));
    CHECK(!fl_parse_u64(NULL, 3, &v));
    /* only the n bytes given are read */
    CHECK(fl_parse_u64("12..34", 2, &v) && v == 12);
}

static void test_grow(void)
{
    CHECK(fl_grow_cap(0, 1, 16, 8) == 16);
    CHECK(fl_grow_cap(16, 17, 16, 8) == 32);
    CHECK(fl_grow_cap(16, 16, 16, 8) == 16); /* already holds need */
    CHECK(fl_grow_cap(4, 100, 16, 1) == 128);
    CHECK(fl_grow_cap(0, 100, 16, 1) == 128);
    /* FL_GROW with a narrow capacity type: same doubling, value kept in range */
    int *a = NULL;
    uint32_t cap = 0, len = 0;
    for (int i = 0; i < 1000; i++) {
        FL_GROW(a, cap, len + 1, 4);
        a[len++] = i;
    }
    CHECK(cap == 1024 && len == 1000);
    long sum = 0;
    for (uint32_t i = 0; i < len; i++)
        sum += a[i];
    CHECK(sum == 999L * 1000 / 2);
    free(a);
    /* growing to what is already there does not move the array */
    char *b = NULL;
    size_t bcap = 0;
    FL_GROW(b, bcap, 10, 8);
    char *before = b;
    FL_GROW(b, bcap, 16, 8);
    CHECK(b == before && bcap == 16);
    free(b);
}

/* FL_GROW_ZERO: the elements between the old and the new length are zero even where
 * realloc hands back dirty memory; a need at or below the length changes nothing; a
 * push of one (need = len + 1) zeroes just the new element. */
static void test_grow_zero(void)
{
    uint64_t *t = NULL;
    size_t len = 0, cap = 0;
    FL_GROW_ZERO(t, len, cap, 3, 4);
    CHECK(len == 3 && cap == 4 && t[0] == 0 && t[1] == 0 && t[2] == 0);
    t[0] = t[1] = t[2] = 7;
    t[3] = 99;                       /* past len, inside cap: must be zeroed when len covers it */
    FL_GROW_ZERO(t, len, cap, 2, 4); /* below len: nothing */
    CHECK(len == 3 && t[2] == 7);
    FL_GROW_ZERO(t, len, cap, len + 1, 4);
    CHECK(len == 4 && cap == 4 && t[3] == 0 && t[2] == 7);
    for (size_t i = 0; i < len; i++)
        t[i] = 0xdeadbeef;
    FL_GROW_ZERO(t, len, cap, 1000, 4);
    CHECK(len == 1000 && cap == 1024);
    bool zero = true;
    for (size_t i = 4; i < len; i++)
        zero = zero && t[i] == 0;
    CHECK(zero && t[0] == 0xdeadbeef && t[3] == 0xdeadbeef);
    free(t);
    /* a narrow length type */
    uint16_t n16 = 0;
    uint32_t c32 = 0;
    char *b = NULL;
    FL_GROW_ZERO(b, n16, c32, 300, 8);
    CHECK(n16 == 300 && c32 == 512 && b[299] == 0);
    free(b);
}

/* fl_enum_name: a named value gives its name; a value the table leaves out, one past
 * it and a negative one give the default; FL_ENUM_NAME sizes the table itself. */
static void test_enum_name(void)
{
    enum { A, B, C, D };
    static const char *const names[] = {[A] = "a", [C] = "c"};
    CHECK_EQ_STR(FL_ENUM_NAME(names, A, "?"), "a");
    CHECK_EQ_STR(FL_ENUM_NAME(names, C, "?"), "c");
    CHECK_EQ_STR(FL_ENUM_NAME(names, B, "?"), "?");
    CHECK_EQ_STR(FL_ENUM_NAME(names, D, "?"), "?");
    CHECK_EQ_STR(FL_ENUM_NAME(names, -1, "?"), "?");
    CHECK_EQ_STR(fl_enum_name(names, 1, C, "?"), "?");
    CHECK_EQ_STR(fl_strerror(FL_EIO), "I/O error");
    CHECK_EQ_STR(fl_strerror(-7), "unknown error");
}

/* FL_LOWER_BOUND against a linear scan: every target from below the first value to
 * past the last, over sorted arrays with runs of equal values, of every length 0..9. */
static void test_lower_bound(void)
{
    static const int v[] = {1, 3, 3, 3, 5, 8, 8, 13, 21};
    for (size_t n = 0; n <= FL_ARRAY_LEN(v); n++) {
        for (int x = 0; x <= 22; x++) {
            size_t want = 0;
            while (want < n && v[want] < x)
                want++;
            size_t got = 99;
            FL_LOWER_BOUND(got, n, mid, v[mid] < x);
            CHECK_EQ_INT((long long)got, (long long)want);
        }
    }
    size_t i;
    FL_LOWER_BOUND(i, FL_ARRAY_LEN(v), mid, v[mid] <= 3); /* first past the 3s */
    CHECK_EQ_INT((long long)i, 4);
}

int main(void)
{
    FL_TEST(test_parse_u64);
    FL_TEST(test_grow);
    FL_TEST(test_grow_zero);
    FL_TEST(test_enum_name);
    FL_TEST(test_lower_bound);
    return fl_test_end();
}
