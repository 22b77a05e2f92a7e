/*
 * fl_test.h: the smallest test framework that does the job.
 *
 * A test program is a list of cases, each a `static void name(void)`, run from main
 * by FL_TEST(name) and closed by `return fl_test_end();`, which prints "N passed,
 * N failed" and is non-zero when anything failed. CHECK records a failure with file
 * and line; inside a case the failure also stops that case (the next case runs), so
 * one broken expectation never cascades into pointer walks over a state it has
 * already shown to be wrong. Outside a case (helpers called from main) CHECK records
 * and goes on.
 *
 * Choosing what runs, from the environment:
 *   FL_TEST_CASE=name[,name...]  only these cases (a name that matches no case is a
 *                                failure: a typo must not pass as "0 failed");
 *   FL_TEST_SEED=N               fl_test_seed(default) answers N, for cases that draw
 *                                randomness, so a failing draw can be run alone.
 * A case that stops on a failure leaks what it allocated; the run fails anyway.
 */
#ifndef FL_TEST_H
#define FL_TEST_H

#include <inttypes.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fl_test_passed, fl_test_failed, fl_test_cases_run;
static const char *fl_test_current; /* the case running, or NULL */
static jmp_buf fl_test_jmp;

/* A failed check: counted; inside a case, the case stops here. */
static inline void fl_test_fail_here(void)
{
    fl_test_failed++;
    if (fl_test_current)
        longjmp(fl_test_jmp, 1);
}

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (cond) {                                                                                \
            fl_test_passed++;                                                                      \
        } else {                                                                                   \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);               \
            fl_test_fail_here();                                                                   \
        }                                                                                          \
    } while (0)
#define CHECK_EQ_INT(a, b)                                                                         \
    do {                                                                                           \
        long long fl_a_ = (long long)(a), fl_b_ = (long long)(b);                                  \
        if (fl_a_ == fl_b_) {                                                                      \
            fl_test_passed++;                                                                      \
        } else {                                                                                   \
            fprintf(stderr, "%s:%d: CHECK failed: %s == %s (%lld vs %lld)\n", __FILE__, __LINE__,  \
                    #a, #b, fl_a_, fl_b_);                                                         \
            fl_test_fail_here();                                                                   \
        }                                                                                          \
    } while (0)
#define CHECK_EQ_STR(a, b)                                                                         \
    do {                                                                                           \
        const char *fl_a_ = (a), *fl_b_ = (b);                                                     \
        if (fl_a_ && fl_b_ && strcmp(fl_a_, fl_b_) == 0) {                                         \
            fl_test_passed++;                                                                      \
        } else {                                                                                   \
            fprintf(stderr, "%s:%d: CHECK failed: %s == %s (\"%s\" vs \"%s\")\n", __FILE__,        \
                    __LINE__, #a, #b, fl_a_ ? fl_a_ : "(null)", fl_b_ ? fl_b_ : "(null)");         \
            fl_test_fail_here();                                                                   \
        }                                                                                          \
    } while (0)

/* Whether FL_TEST_CASE selects the case `name` (every case when it is unset). */
static inline bool fl_test_selected(const char *name)
{
    const char *sel = getenv("FL_TEST_CASE");
    if (!sel || !*sel)
        return true;
    size_t n = strlen(name);
    for (const char *p = sel; *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && memcmp(p, name, n) == 0)
            return true;
        p += len + (end != NULL);
    }
    return false;
}

/* Runs one case (when selected); a failed CHECK inside it ends it. The case's locals
 * are not touched after a longjmp back here: the case is over. */
static inline void fl_test_run(const char *name, void (*fn)(void))
{
    if (!fl_test_selected(name))
        return;
    fl_test_cases_run++;
    fl_test_current = name;
    if (setjmp(fl_test_jmp) == 0)
        fn();
    else
        fprintf(stderr, "case %s stopped at its first failed check\n", name);
    fl_test_current = NULL;
}
#define FL_TEST(fn) fl_test_run(#fn, fn)

/* A program's cases as a table, run in order by fl_test_cases (each still chosen by
 * FL_TEST_CASE): `static const struct fl_case cases[] = {FL_CASE(a), FL_CASE(b)};`. */
struct fl_case {
    const char *name;
    void (*fn)(void);
};
#define FL_CASE(fn)                                                                                \
    {                                                                                              \
#fn, fn                                                                                    \
    }
#define FL_NCASES(cases) (sizeof(cases) / sizeof((cases)[0]))

static inline void fl_test_cases(const struct fl_case *cases, size_t n)
{
    for (size_t i = 0; i < n; i++)
        fl_test_run(cases[i].name, cases[i].fn);
}

/* The seed a randomised case draws from: FL_TEST_SEED when set, else `dflt`. */
static inline uint64_t fl_test_seed(uint64_t dflt)
{
    const char *s = getenv("FL_TEST_SEED");
    if (!s || !*s)
        return dflt;
    char *end;
    unsigned long long v = strtoull(s, &end, 0);
    if (*end) {
        fprintf(stderr, "FL_TEST_SEED=%s is not a number\n", s);
        exit(2);
    }
    return (uint64_t)v;
}

/* A loop over the seeds *first..*last: FL_TEST_SEED=N narrows it to N alone and
 * returns true, and the caller then judges nothing over the whole range (how many
 * seeds saw something), only what each seed checks. */
static inline bool fl_test_seed_range(uint64_t *first, uint64_t *last)
{
    if (!getenv("FL_TEST_SEED"))
        return false;
    *first = *last = fl_test_seed(*first);
    return true;
}

static inline int fl_test_end(void)
{
    const char *sel = getenv("FL_TEST_CASE");
    if (sel && *sel && fl_test_cases_run == 0) {
        fprintf(stderr, "FL_TEST_CASE=%s matches no case of this program\n", sel);
        fl_test_failed++;
    }
    printf("%d passed, %d failed\n", fl_test_passed, fl_test_failed);
    return fl_test_failed ? 1 : 0;
}

#endif
