/*
 * liveness_fixture.h: what the liveness checker's unit tests (test_liveness,
 * test_liveness_swarm) share: the client operations a case fabricates (lv_op appends,
 * lv_clear empties), the judge's detail (lv_out, which liveness_judge resets on each
 * call), lv_judge that fills an input's ops and timeline in and judges it, and lv_has
 * that looks for a string in the detail (and prints the detail when it is missing).
 */
#ifndef FL_TEST_LIVENESS_FIXTURE_H
#define FL_TEST_LIVENESS_FIXTURE_H

#include "checkers/liveness.h"
#include "fl_test.h"

static struct liveness_op lv_ops[4096];
static size_t lv_n_ops;
static struct fl_buf lv_out; /* all zero: an empty fl_buf */

static inline void lv_clear(void)
{
    lv_n_ops = 0;
}

/* A call of client from call_ms to return_ms (negative: it never returned). */
static inline void lv_op(int client, int64_t call_ms, int64_t return_ms, bool ok, bool write)
{
    FL_ASSERT(lv_n_ops < sizeof lv_ops / sizeof lv_ops[0]);
    lv_ops[lv_n_ops++] = (struct liveness_op){client, call_ms * FL_MS,
                                              return_ms < 0 ? -1 : return_ms * FL_MS, ok, write};
}

/* Judges `in` (its constants) over the timeline sg and the ops so far, to end_ms. */
static inline enum liveness_verdict
lv_judge(struct liveness_input in, const struct liveness_segment *sg, size_t n_sg, int64_t end_ms)
{
    in.segments = sg;
    in.n_segments = n_sg;
    in.end_ns = end_ms * FL_MS;
    in.ops = lv_ops;
    in.n_ops = lv_n_ops;
    return liveness_judge(&in, &lv_out);
}

static inline bool lv_has(const char *s)
{
    bool yes = strstr(fl_buf_cstr(&lv_out), s) != NULL;
    if (!yes)
        fprintf(stderr, "  no '%s' in %s\n", s, fl_buf_cstr(&lv_out));
    return yes;
}

/* The end of a program: frees the detail, returns fl_test_end(). */
static inline int lv_end(void)
{
    fl_buf_close(&lv_out);
    return fl_test_end();
}

#endif
