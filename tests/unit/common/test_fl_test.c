/*
 * test_fl_test.c: the test framework itself (tests/unit/fl_test.h). A failed CHECK
 * stops its case and only its case; FL_TEST_CASE runs cases by name and a name that
 * matches nothing fails the program; FL_TEST_SEED reaches fl_test_seed. The cases
 * below fail on purpose; main checks the counters they left and then forgets those
 * deliberate failures.
 */
#include "fl_test.h"

static int after_failure, second_ran, a_ran, b_ran;

static void fails_early(void)
{
    CHECK(1 + 1 == 3);
    after_failure = 1; /* never reached: the case stopped */
}

static void runs_next(void)
{
    second_ran = 1;
    CHECK(1 + 1 == 2);
}

static void case_a(void)
{
    a_ran++;
}

static void case_b(void)
{
    b_ran++;
}

int main(void)
{
    /* 1. A failed check stops its case; the next case runs. */
    FL_TEST(fails_early);
    FL_TEST(runs_next);
    int failed = fl_test_failed;
    fl_test_failed = 0; /* the deliberate failure is not this program's */
    CHECK_EQ_INT(failed, 1);
    CHECK_EQ_INT(after_failure, 0);
    CHECK_EQ_INT(second_ran, 1);

    /* 2. Selection by name, a comma list. */
    setenv("FL_TEST_CASE", "case_b", 1);
    FL_TEST(case_a);
    FL_TEST(case_b);
    CHECK_EQ_INT(a_ran, 0);
    CHECK_EQ_INT(b_ran, 1);
    setenv("FL_TEST_CASE", "case_a,case_b", 1);
    FL_TEST(case_a);
    FL_TEST(case_b);
    CHECK_EQ_INT(a_ran, 1);
    CHECK_EQ_INT(b_ran, 2);
    setenv("FL_TEST_CASE", "case_", 1); /* a prefix is not a name */
    FL_TEST(case_a);
    CHECK_EQ_INT(a_ran, 1);

    /* 3. A name that matches no case fails the program (checked by ctest: the
     * test unit.common.test_fl_test.no_such_case runs this program with one). */
    unsetenv("FL_TEST_CASE");

    /* 4. The seed. */
    unsetenv("FL_TEST_SEED");
    CHECK_EQ_INT(fl_test_seed(7), 7);
    uint64_t lo = 1, hi = 60;
    CHECK(!fl_test_seed_range(&lo, &hi));
    CHECK_EQ_INT(lo, 1);
    CHECK_EQ_INT(hi, 60);
    setenv("FL_TEST_SEED", "42", 1);
    CHECK_EQ_INT(fl_test_seed(7), 42);
    uint64_t first = 1, last = 60;
    CHECK(fl_test_seed_range(&first, &last));
    CHECK_EQ_INT(first, 42);
    CHECK_EQ_INT(last, 42);
    unsetenv("FL_TEST_SEED");
    return fl_test_end();
}
