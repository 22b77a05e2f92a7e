/*
 * test_last_log_term.c: run_node_status reports each member's last log term (the term
 * of the last entry in its log, what Raft's election restriction compares) in the
 * simulation. A leader's last entry is of its own term (its first entry as leader); a
 * leader cut off with the workload's writes keeps entries of its old term while the
 * others elect a leader of a newer term, whose last entry is of that newer term; no
 * member's last log term is above its term. Explore's log_term_split signal
 * (run_coverage.c) reads this field; a status that left it 0 fails every check below.
 */
#include "harness/run/run.h"

#include "fl_test.h"
#include "run_fixture.h"

static void status(struct run_world *rw, int id, struct run_node_status *st)
{
    CHECK_EQ_INT(run_node_status(rw, id, st), FL_OK);
    CHECK(st->last_log_term <= st->term);
}

int main(void)
{
    struct run_options o = {.scenario = "test_last_log_term.c", .seed = 3};
    struct run_world *rw = fx_open(&o);
    struct fx_config x;
    fx_config_default(&x);
    fx_setup(rw, &x, RUN_CHECK_ALL);
    run_advance(rw, 3 * FL_S);
    int a = run_leader(rw);
    CHECK(a > 0);
    if (a <= 0)
        return fl_test_end();
    struct run_node_status st;
    status(rw, a, &st);
    CHECK(st.term > 0);
    CHECK(st.last_index > 0);
    CHECK_EQ_INT(st.last_log_term, st.term);
    uint64_t old_term = st.term;
    /* cut off: the others elect a leader of a newer term */
    CHECK_EQ_INT(run_isolate(rw, a), FL_OK);
    run_advance(rw, 9 * FL_S);
    int b = run_leader(rw);
    CHECK(b > 0 && b != a);
    if (b <= 0 || b == a)
        return fl_test_end();
    struct run_node_status sb, sa;
    status(rw, b, &sb);
    status(rw, a, &sa);
    CHECK(sb.term > old_term);
    CHECK_EQ_INT(sb.last_log_term, sb.term);
    CHECK_EQ_INT(sa.last_log_term, old_term); /* nothing of a newer term reached it */
    for (int id = 1; id <= 3; id++)
        status(rw, id, &st);
    fx_finish(rw);
    return fl_test_end();
}
