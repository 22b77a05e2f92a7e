/*
 * finish_fixture.h: chk_history_finish for the checker tests that build a history by
 * hand: true when the history is finished, else false with the reason on stderr.
 * Test-only.
 */
#ifndef FL_TEST_FINISH_FIXTURE_H
#define FL_TEST_FINISH_FIXTURE_H

#include "checkers/checkers.h"

#include <stdio.h>

static inline bool finish(struct chk_history *h)
{
    struct fl_buf err;
    fl_buf_init(&err);
    int rc = chk_history_finish(h, &err);
    if (rc)
        fprintf(stderr, "finish: %s\n", fl_buf_cstr(&err));
    fl_buf_close(&err);
    return rc == FL_OK;
}

#endif
