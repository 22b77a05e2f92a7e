/*
 * test_marker.c: harness/common/marker.h. A FL_TESTCASE counts only when its
 * condition holds, every marker linked in is listed (reached or not) and can be
 * found by file and condition, and a broken FL_ALWAYS / FL_NEVER belief is counted
 * and returns the condition's value (so the defensive branch runs), or aborts
 * through the assertion handler in a strict (Debug / sanitizer) build.
 */
#include "fl_test.h"

#include "harness/common/marker.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

static int rare(int x)
{
    FL_TESTCASE(x > 5);
    return x * 2;
}

static int believed(int x)
{
    if (FL_NEVER(x < 0))
        return -1; /* defended against, believed unreachable */
    if (!FL_ALWAYS(x < 1000))
        return -2;
    return x;
}

static void test_testcase(void)
{
    fl_markers_reset();
    struct fl_marker *m = fl_marker_find("test_marker.c", "x > 5");
    CHECK(m != NULL);
    if (!m)
        return;
    CHECK(m->kind == FL_MARKER_TESTCASE && m->line > 0);
    CHECK(rare(3) == 6 && m->hits == 0); /* listed before it is ever reached */
    CHECK(rare(7) == 14 && m->hits == 1);
    rare(9);
    CHECK(m->hits == 2);
    fl_markers_reset();
    CHECK(m->hits == 0);
    CHECK(fl_marker_find("test_marker.c", "no such condition") == NULL);
    CHECK(fl_marker_find("other_file.c", "x > 5") == NULL);
}

static void test_listing(void)
{
    size_t n = 0;
    struct fl_marker *all = fl_markers(&n);
    int here = 0, kinds = 0;
    for (size_t i = 0; i < n; i++) {
        size_t fl = strlen(all[i].file);
        if (fl >= 13 && !strcmp(all[i].file + fl - 13, "test_marker.c")) {
            here++;
            kinds |= 1 << all[i].kind;
        }
    }
    /* the three markers of this file, one of each kind, as one packed array */
    CHECK(here == 3);
    CHECK(kinds == (1 << FL_MARKER_TESTCASE | 1 << FL_MARKER_ALWAYS | 1 << FL_MARKER_NEVER));
}

static void test_beliefs(void)
{
    fl_markers_reset();
    struct fl_marker *never = fl_marker_find("test_marker.c", "x < 0");
    struct fl_marker *always = fl_marker_find("test_marker.c", "x < 1000");
    CHECK(never && always);
    if (!never || !always)
        return;
    CHECK(believed(10) == 10 && never->hits == 0 && always->hits == 0);
    if (!fl_markers_strict()) {
        CHECK(believed(-4) == -1 && never->hits == 1);
        CHECK(believed(5000) == -2 && always->hits == 1);
        return;
    }
    /* strict: a broken belief is an assertion failure (SIGABRT) */
    for (int k = 0; k < 2; k++) {
        pid_t pid = fork();
        if (pid == 0) {
            (void)!freopen("/dev/null", "w", stderr);
            believed(k ? 5000 : -4);
            _exit(0);
        }
        int status = 0;
        CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
        CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
    }
}

int main(void)
{
    FL_TEST(test_testcase);
    FL_TEST(test_listing);
    FL_TEST(test_beliefs);
    return fl_test_end();
}
