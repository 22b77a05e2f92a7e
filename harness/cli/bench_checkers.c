/*
 * bench_checkers.c: the checkers' figures for `faultline bench` (DESIGN §7).
 *   porcupine_corpus_ms     wall ms to parse and check the 108 non-empty porcupine
 *                           corpus histories (the files of expected_verdicts.tsv);
 *                           null when the corpus is absent
 *   porcupine_corpus_agree  how many of them got the expected verdict
 *   lin_revision_ops_per_s  revision-order check of a generated 1,000,000-operation
 *                           history with watches (generation not timed)
 *   lin_revision_1m_ms, watch_check_1m_ms, lin_revision_1m_verdict
 *   lin_revision_1m_cpu_ms, porcupine_corpus_cpu_ms   process CPU time of the same
 *                           (the machine is shared: wall time includes waiting)
 *   lin_unknown_1m_{watched,reads}_{verdict,ms,cpu_ms}  1,000,000 operations of
 *                           which 0.5% have unknown outcome: "watched" has a watch on
 *                           every key from revision 1 (events pin every revision),
 *                           "reads" only the default watches (reads pin the rest)
 * Measured, never asserted. FL_BENCH_CHECKERS=corpus,revision,unknown (a profiling aid,
 * like FL_BENCH_SIM_MS) runs only the named parts; the others' keys are left out.
 */
#include "checkers/checkers.h"
#include "checkers/gen.h"
#include "harness/cli/bench.h"
#include "harness/history/load.h"

#include <time.h>

/* Process CPU seconds (bench only). */
static double cpu_now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void bench_corpus(const char *dir, json_t *out)
{
    char tsv[1200];
    snprintf(tsv, sizeof(tsv), "%s/expected_verdicts.tsv", dir);
    FILE *f = fopen(tsv, "r");
    if (!f)
        return;
    char line[512];
    int files = 0, agree = 0;
    double total_s = 0, cpu_s = 0;
    while (fgets(line, sizeof(line), f)) {
        char file[256], expected[64];
        if (sscanf(line, "%255s %63s", file, expected) != 2 || !strcmp(expected, "none") ||
            !strcmp(file, "file"))
            continue;
        char path[1600];
        snprintf(path, sizeof(path), "%s/%s", dir, file);
        double t0 = bench_now_s(), c0 = cpu_now_s();
        struct chk_history h;
        chk_history_init(&h);
        struct fl_buf err;
        fl_buf_init(&err);
        int v = -1;
        if (hist_load(path, HIST_FMT_AUTO, 0, &h, NULL, &err) == FL_OK) {
            struct chk_result r;
            chk_check(&h, NULL, &r);
            v = r.lin.verdict;
            chk_result_close(&r);
        }
        chk_history_close(&h);
        fl_buf_close(&err);
        total_s += bench_now_s() - t0;
        cpu_s += cpu_now_s() - c0;
        files++;
        agree += (v == CHK_PASS && !strcmp(expected, "linearizable")) ||
                 (v == CHK_FAIL && !strcmp(expected, "not_linearizable"));
    }
    fclose(f);
    if (!files)
        return;
    json_object_set_new(out, "porcupine_corpus_ms", json_real(total_s * 1000.0));
    json_object_set_new(out, "porcupine_corpus_cpu_ms", json_real(cpu_s * 1000.0));
    json_object_set_new(out, "porcupine_corpus_files", json_integer(files));
    json_object_set_new(out, "porcupine_corpus_agree", json_integer(agree));
}

void bench_gen_opts(struct chk_gen_opts *o, uint64_t seed, uint32_t ops, uint32_t unknown_pm)
{
    chk_gen_opts_default(o, seed);
    o->ops = ops;
    o->clients = 8;
    o->keys = 1000;
    o->watches = 4;
    o->unknown_pm = unknown_pm;
    o->fail_pm = 5;
    o->window = 40;
}

static void bench_revision(json_t *out)
{
    struct chk_gen_opts o;
    /* acknowledged and failed outcomes only: every revision decided */
    bench_gen_opts(&o, 20261129, 1000000, 0);
    struct chk_history h;
    chk_history_init(&h);
    if (chk_gen_history(&o, CHK_MUT_NONE, &h) != FL_OK) {
        chk_history_close(&h);
        return;
    }
    struct chk_limits lim = {0};
    lim.engine = CHK_ENGINE_REVISION;
    double t0 = bench_now_s(), c0 = cpu_now_s();
    struct chk_lin_result r;
    chk_lin_check(&h, &lim, &r);
    double t1 = bench_now_s(), c1 = cpu_now_s();
    struct chk_watch_result w;
    chk_watch_check(&h, &r, &w);
    double t2 = bench_now_s();
    json_object_set_new(out, "lin_revision_ops_per_s", json_real((double)h.op_count / (t1 - t0)));
    json_object_set_new(out, "lin_revision_1m_ms", json_real((t1 - t0) * 1000.0));
    json_object_set_new(out, "lin_revision_1m_cpu_ms", json_real((c1 - c0) * 1000.0));
    json_object_set_new(out, "lin_revision_1m_verdict", json_string(chk_verdict_name(r.verdict)));
    json_object_set_new(out, "watch_check_1m_events", json_integer(h.event_count));
    json_object_set_new(out, "watch_check_1m_ms", json_real((t2 - t1) * 1000.0));
    chk_watch_result_close(&w);
    chk_lin_result_close(&r);
    chk_history_close(&h);
}

/* 1,000,000 operations, 0.5% of unknown outcome: engine 1 (auto choice; the search
 * is not tried at this size). */
static void bench_unknown(json_t *out, bool watched)
{
    struct chk_gen_opts o;
    bench_gen_opts(&o, 20261129, 1000000, 5);
    o.full_watch = watched;
    struct chk_history h;
    chk_history_init(&h);
    if (chk_gen_history(&o, CHK_MUT_NONE, &h) != FL_OK) {
        chk_history_close(&h);
        return;
    }
    double t0 = bench_now_s(), c0 = cpu_now_s();
    struct chk_lin_result r;
    chk_lin_check(&h, NULL, &r);
    double t1 = bench_now_s(), c1 = cpu_now_s();
    char k[64];
    const char *w = watched ? "watched" : "reads";
    snprintf(k, sizeof(k), "lin_unknown_1m_%s_verdict", w);
    json_object_set_new(out, k, json_string(chk_verdict_name(r.verdict)));
    snprintf(k, sizeof(k), "lin_unknown_1m_%s_ms", w);
    json_object_set_new(out, k, json_real((t1 - t0) * 1000.0));
    snprintf(k, sizeof(k), "lin_unknown_1m_%s_cpu_ms", w);
    json_object_set_new(out, k, json_real((c1 - c0) * 1000.0));
    chk_lin_result_close(&r);
    chk_history_close(&h);
}

/* Is part named in FL_BENCH_CHECKERS (a comma-separated list; unset or empty: all)? */
static bool part_on(const char *part)
{
    const char *only = getenv("FL_BENCH_CHECKERS");
    if (!only || !*only)
        return true;
    size_t n = strlen(part);
    for (const char *p = only; *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && !strncmp(p, part, n))
            return true;
        p += len + (e ? 1 : 0);
    }
    return false;
}

void bench_checkers(const struct bench_ctx *ctx, json_t *out)
{
    if (part_on("corpus")) {
        if (ctx->corpus_dir)
            bench_corpus(ctx->corpus_dir, out);
        else
            json_object_set_new(out, "porcupine_corpus_ms", json_null());
    }
    if (part_on("revision"))
        bench_revision(out);
    if (part_on("unknown")) {
        bench_unknown(out, true);
        bench_unknown(out, false);
    }
}
