/*
 * hist_fixture.h: what the hand-built JSON-lines history tests (test_load_*.c) share:
 * judge() loads a history and judges it with each linearizability engine forced (the
 * revision engine, then the search) and the watch checker after the first, and the
 * JSON-lines op macros. One copy of what each such test used to write out.
 */
#ifndef FL_TEST_HIST_FIXTURE_H
#define FL_TEST_HIST_FIXTURE_H

#include "checkers/checkers.h"
#include "fl_test.h"
#include "harness/history/load.h"

/* Each engine's verdict (-1: the history did not load), the revision engine's reason
 * and the unknown ops it revealed. */
struct verdicts {
    int rev, search, watch;
    uint32_t revealed;
    char reason[256];
};

/* Loads text; judges with each engine forced, and the watch checker after engine 1.
 * complete >= 0 sets the history's revisions_complete (else the loader's). */
static inline struct verdicts judge_complete(const char *text, int complete)
{
    struct verdicts v = {-1, -1, -1, 0, ""};
    struct chk_history h;
    chk_history_init(&h);
    struct fl_buf e;
    fl_buf_init(&e);
    if (hist_load_jsonl_mem("t.jsonl", text, strlen(text), &h, &e) != FL_OK) {
        fprintf(stderr, "load: %s\n", fl_buf_cstr(&e));
        goto out;
    }
    if (complete >= 0)
        h.revisions_complete = complete;
    struct chk_limits lim = {0};
    lim.engine = CHK_ENGINE_REVISION;
    struct chk_result r;
    chk_check(&h, &lim, &r);
    v.rev = r.lin.verdict;
    v.watch = r.watch.verdict;
    v.revealed = r.lin.revealed;
    snprintf(v.reason, sizeof(v.reason), "%s", r.lin.reason);
    if (r.verdict != CHK_PASS) {
        struct fl_buf t;
        fl_buf_init(&t);
        chk_result_explain(&h, &r, &t);
        fprintf(stderr, "(info) %s", fl_buf_cstr(&t));
        fl_buf_close(&t);
    }
    chk_result_close(&r);
    lim.engine = CHK_ENGINE_SEARCH;
    struct chk_lin_result s;
    chk_lin_check(&h, &lim, &s);
    v.search = s.verdict;
    chk_lin_result_close(&s);
out:
    fl_buf_close(&e);
    chk_history_close(&h);
    return v;
}

static inline struct verdicts judge(const char *text)
{
    return judge_complete(text, -1);
}

/* A get of k answered with value v (last modified at mod) at revision rev. */
#define GET(c, k, v, mod, call, ret, rev)                                                          \
    "{\"client\":" #c ",\"op\":\"get\",\"key\":\"" k "\",\"value\":\"" v "\",\"mod_rev\":" #mod    \
    ",\"call\":" #call ",\"return\":" #ret ",\"status\":\"ok\",\"rev\":" #rev "}\n"

#endif
