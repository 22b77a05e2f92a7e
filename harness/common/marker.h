/*
 * marker.h: SQLite's two weaker strengths of check, beside FL_ASSERT (what is
 * proved and must hold in every build):
 *
 *  - FL_TESTCASE(cond): a rare branch that tests must reach. Each time cond is true
 *    at that line, the marker's own record counts one hit. A module's marker test
 *    (tests/unit/checkers/test_markers.c for checkers/) runs the histories that
 *    reach each marker and fails when a marker of the module has no hits, so a rare
 *    branch cannot lose its test silently.
 *  - FL_ALWAYS(cond) / FL_NEVER(cond): what is believed but still defended against.
 *    Each is an expression with cond's truth value, so the defensive branch written
 *    around it still runs; a broken belief (ALWAYS false, NEVER true) counts a hit,
 *    and in a test build (FL_MARKERS_STRICT: Debug and sanitizer builds, see
 *    harness/common/CMakeLists.txt) it is an assertion failure instead.
 *
 * Every marker is a static record in the linker section "fl_marker_section", so
 * fl_markers() lists all markers linked into the program, reached or not. Markers
 * only count: they never change a verdict, a digest or a run, and a hit count is
 * diagnostic state (like a gcov counter), never read by anything that decides.
 * Pure: no I/O; the records are the only mutable file-scope state.
 */
#ifndef FL_MARKER_H
#define FL_MARKER_H

#include "harness/common/common.h"

enum fl_marker_kind { FL_MARKER_TESTCASE = 1, FL_MARKER_ALWAYS, FL_MARKER_NEVER };

struct fl_marker {
    const char *file; /* __FILE__ of the marker */
    const char *cond; /* the condition's source text */
    int line;
    int kind; /* enum fl_marker_kind */
    uint64_t hits;
};

/* A static record for the marker at this line, in section fl_marker_section. */
#define FL__MARKER(kind_, cond_text)                                                               \
    __extension__({                                                                                \
        static struct fl_marker fl__marker_                                                        \
            __attribute__((section("fl_marker_section"), used, aligned(8))) = {                    \
                __FILE__, cond_text, __LINE__, kind_, 0};                                          \
        &fl__marker_;                                                                              \
    })

#define FL_TESTCASE(cond)                                                                          \
    do {                                                                                           \
        if (cond)                                                                                  \
            FL__MARKER(FL_MARKER_TESTCASE, #cond)->hits++;                                         \
    } while (0)

/* A broken belief: counts it, and aborts through the assertion handler in a test
 * build. Returns nothing useful; the macros below give the condition's value. */
void fl__marker_broken(struct fl_marker *m);

#define FL_ALWAYS(cond)                                                                            \
    (__builtin_expect(!!(cond), 1)                                                                 \
         ? true                                                                                    \
         : (fl__marker_broken(FL__MARKER(FL_MARKER_ALWAYS, #cond)), false))
#define FL_NEVER(cond)                                                                             \
    (__builtin_expect(!!(cond), 0) ? (fl__marker_broken(FL__MARKER(FL_MARKER_NEVER, #cond)), true) \
                                   : false)

/* Every marker linked into the program: *count records from the returned pointer
 * (NULL and 0 when there are none). The records belong to the program. */
struct fl_marker *fl_markers(size_t *count);
/* The marker whose file ends with file_suffix and whose condition text is cond
 * (the first in link order when several match), or NULL. */
struct fl_marker *fl_marker_find(const char *file_suffix, const char *cond);
/* Sets every marker's hits to 0 (for tests that count from a known start). */
void fl_markers_reset(void);
/* Whether markers are strict in this build (broken beliefs abort). */
bool fl_markers_strict(void);

#endif
