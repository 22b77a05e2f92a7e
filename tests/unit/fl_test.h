/*
 * fl_test.h: the smallest test framework that does the job. CHECK records a failure
 * with file and line and goes on; a test program returns fl_test_end(), which prints
 * "N passed, N failed" and is non-zero when anything failed.
 */
#ifndef FL_TEST_H
#define FL_TEST_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int fl_test_passed, fl_test_failed;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (cond) {                                                                                \
            fl_test_passed++;                                                                      \
        } else {                                                                                   \
            fl_test_failed++;                                                                      \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);               \
        }                                                                                          \
    } while (0)
#define CHECK_EQ_INT(a, b)                                                                         \
    do {                                                                                           \
        long long fl_a_ = (long long)(a), fl_b_ = (long long)(b);                                  \
        if (fl_a_ == fl_b_) {                                                                      \
            fl_test_passed++;                                                                      \
        } else {                                                                                   \
            fl_test_failed++;                                                                      \
            fprintf(stderr, "%s:%d: CHECK failed: %s == %s (%lld vs %lld)\n", __FILE__, __LINE__,  \
                    #a, #b, fl_a_, fl_b_);                                                         \
        }                                                                                          \
    } while (0)
#define CHECK_EQ_STR(a, b)                                                                         \
    do {                                                                                           \
        const char *fl_a_ = (a), *fl_b_ = (b);                                                     \
        if (fl_a_ && fl_b_ && strcmp(fl_a_, fl_b_) == 0) {                                         \
            fl_test_passed++;                                                                      \
        } else {                                                                                   \
            fl_test_failed++;                                                                      \
            fprintf(stderr, "%s:%d: CHECK failed: %s == %s (\"%s\" vs \"%s\")\n", __FILE__,        \
                    __LINE__, #a, #b, fl_a_ ? fl_a_ : "(null)", fl_b_ ? fl_b_ : "(null)");         \
        }                                                                                          \
    } while (0)

static inline int fl_test_end(void)
{
    printf("%d passed, %d failed\n", fl_test_passed, fl_test_failed);
    return fl_test_failed ? 1 : 0;
}

#endif
