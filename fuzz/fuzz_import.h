/*
 * fuzz_import.h: the body of the three importer targets (fuzz_jsonl.c, fuzz_jepsen.c,
 * fuzz_porcupine.c). The input is a history file in one format. Properties:
 *   - the loader never crashes, and a refusal always carries a message;
 *   - an accepted history goes through both checkers (step and memory limits keep
 *     each input cheap) and its result renders as JSON;
 *   - when the history has revisions, the revision-order engine and the general
 *     search agree on every verdict both of them decide.
 */
#ifndef FL_FUZZ_IMPORT_H
#define FL_FUZZ_IMPORT_H

#include "checkers/checkers.h"
#include "fuzz/fuzz.h"
#include "harness/history/load.h"

#include <jansson.h>

typedef int fz_loader_fn(const char *name, const char *text, size_t len, struct chk_history *h,
                         struct fl_buf *err);

static inline void fz_check_engines(struct chk_history *h)
{
    struct chk_limits lim = {0};
    lim.steps_max = 20000;
    lim.mem_bytes_max = 8u << 20;
    lim.engine = CHK_ENGINE_REVISION;
    struct chk_lin_result a, b;
    chk_lin_check(h, &lim, &a);
    lim.engine = CHK_ENGINE_SEARCH;
    chk_lin_check(h, &lim, &b);
    if (a.verdict != CHK_UNKNOWN && b.verdict != CHK_UNKNOWN)
        FZ_REQUIRE(a.verdict == b.verdict, "revision order says %s (%s), search says %s (%s)",
                   chk_verdict_name(a.verdict), a.reason, chk_verdict_name(b.verdict), b.reason);
    chk_lin_result_close(&a);
    chk_lin_result_close(&b);
}

/* What a loader gave (rc, and err when it refused): a refusal carries a message; an
 * accepted history goes through both checkers and its result renders as JSON; with
 * engines, the revision-order engine and the search also agree where both decide. */
static inline void fz_judge_loaded(struct chk_history *h, int rc, const struct fl_buf *err,
                                   bool engines)
{
    if (rc != FL_OK) {
        FZ_REQUIRE(err->len > 0, "loader returned %d without a message", rc);
        return;
    }
    struct chk_limits lim = {0};
    lim.steps_max = 20000;
    lim.mem_bytes_max = 8u << 20;
    struct chk_result res;
    chk_check(h, &lim, &res);
    json_t *j = chk_result_json(h, &res);
    FZ_REQUIRE(j != NULL, "no JSON for a checked history");
    char *s = json_dumps(j, JSON_COMPACT);
    FZ_REQUIRE(s != NULL, "result JSON does not serialise");
    free(s);
    json_decref(j);
    chk_result_close(&res);
    if (engines && h->has_revs)
        fz_check_engines(h);
}

static inline int fz_import_one(fz_loader_fn *load, const char *name, const uint8_t *data,
                                size_t size)
{
    struct chk_history h;
    chk_history_init(&h);
    struct fl_buf err;
    fl_buf_init(&err);
    int rc = load(name, (const char *)data, size, &h, &err);
    fz_judge_loaded(&h, rc, &err, true);
    fl_buf_close(&err);
    chk_history_close(&h);
    return 0;
}

#endif
