/*
 * test_gen_asserts.c: the history generator (checkers/chk_gen.c) states its contract.
 * A mutation number it does not know is an assertion failure (SIGABRT), not an
 * unmutated history that a test would take for a mutated one; the mutations it knows
 * still generate (or find no place, FL_ENOENT), with every internal invariant of the
 * generator checked along the way (the change log in revision order, the op array in
 * effect order, sequential clients, a range's keys in order).
 */
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "checkers/checkers.h"
#include "checkers/gen.h"
#include "fl_test.h"

/* Does generating with this mutation end in an assertion failure (in a child)? */
static bool gen_aborts(int mutation)
{
    pid_t pid = fork();
    if (pid == 0) {
        (void)!freopen("/dev/null", "w", stderr);
        struct chk_gen_opts o;
        chk_gen_opts_default(&o, 7);
        struct chk_history h;
        chk_history_init(&h);
        int rc = chk_gen_history(&o, mutation, &h);
        chk_history_close(&h);
        _exit(rc == FL_OK ? 0 : 1);
    }
    int status = 0;
    return pid > 0 && waitpid(pid, &status, 0) == pid && WIFSIGNALED(status) &&
           WTERMSIG(status) == SIGABRT;
}

static void test_unknown_mutation_asserts(void)
{
    CHECK(gen_aborts(CHK_MUT_COUNT));
    CHECK(gen_aborts(CHK_MUT_COUNT + 40));
    CHECK(gen_aborts(-1));
}

/* The option families: test_gen.c's three and a wide one (many clients and keys, a
 * long window, outside writes). */
static void family(struct chk_gen_opts *o, uint64_t seed)
{
    chk_gen_opts_default(o, seed);
    switch (seed % 4) {
    case 1:
        o->txn = o->deletes = false;
        break;
    case 2:
        o->clients = 6;
        o->keys = 3;
        break;
    case 3:
        o->ops = 2000;
        o->clients = 16;
        o->keys = 40;
        o->window = 100;
        o->outside_pm = 50;
        break;
    default:
        break;
    }
}

/* Every known mutation on every family: generated or no place, never an assertion. */
static void test_known_mutations_generate(void)
{
    for (uint64_t seed = 1; seed <= 12; seed++) {
        struct chk_gen_opts o;
        family(&o, seed);
        for (int m = CHK_MUT_NONE; m < CHK_MUT_COUNT; m++) {
            struct chk_history h;
            chk_history_init(&h);
            int rc = chk_gen_history(&o, m, &h);
            CHECK(rc == FL_OK || (rc == FL_ENOENT && m != CHK_MUT_NONE));
            if (rc == FL_OK)
                CHECK(h.op_count > 0);
            chk_history_close(&h);
        }
    }
}

int main(void)
{
    FL_TEST(test_unknown_mutation_asserts);
    FL_TEST(test_known_mutations_generate);
    return fl_test_end();
}
