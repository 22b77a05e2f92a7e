/*
 * cmd_check.c: `faultline check HISTORY [--format auto|db|jsonl|jepsen|porcupine-kv]
 * [--run ID] [--json] [--timeout S] [--engine auto|revision|search]` (DESIGN §3.9).
 *
 * Loads a history (a faultline database or a foreign log), runs the
 * linearizability and watch checkers and reports. It only reads: verdicts of a run
 * are stored by the run driver, not here. Exit codes: 0 pass, 1 a violation, 2 bad
 * input (with FILE:LINE), 4 a checker gave up (time or memory bound).
 */
#include "checkers/checkers.h"
#include "harness/cli/cli.h"
#include "harness/common/common.h"
#include "harness/history/load.h"

#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts); /* wall clock: the timeout and wall_ms only */
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static bool deadline_passed(void *arg)
{
    return now_s() > *(double *)arg;
}

struct check_args {
    const char *path;
    int fmt;
    int64_t run_id;
    bool json;
    double timeout_s;
    int engine;
};

static int parse_args(int argc, char **argv, struct check_args *a)
{
    memset(a, 0, sizeof(*a));
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(s, "--json")) {
            a->json = true;
        } else if (!strcmp(s, "--format")) {
            if (!v || !hist_format_parse(v, &a->fmt))
                return cli_usage_error("check: --format wants auto|db|jsonl|jepsen|porcupine-kv");
            i++;
        } else if (!strcmp(s, "--run")) {
            char *e;
            if (!v || (a->run_id = strtoll(v, &e, 10)) <= 0 || *e)
                return cli_usage_error("check: --run wants a positive run id");
            i++;
        } else if (!strcmp(s, "--timeout")) {
            char *e;
            if (!v || (a->timeout_s = strtod(v, &e)) <= 0 || *e)
                return cli_usage_error("check: --timeout wants seconds > 0");
            i++;
        } else if (!strcmp(s, "--engine")) {
            if (!v)
                return cli_usage_error("check: --engine wants auto|revision|search");
            a->engine = !strcmp(v, "revision") ? CHK_ENGINE_REVISION
                        : !strcmp(v, "search") ? CHK_ENGINE_SEARCH
                        : !strcmp(v, "auto")   ? 0
                                               : -1;
            if (a->engine < 0)
                return cli_usage_error("check: --engine wants auto|revision|search");
            i++;
        } else if (s[0] == '-' && s[1]) {
            return cli_unknown_option("check", s);
        } else if (!a->path) {
            a->path = s;
        } else {
            return cli_usage_error("check: one history at a time (got %s and %s)", a->path, s);
        }
    }
    if (!a->path)
        return cli_usage_error("usage: faultline check HISTORY [--format auto|db|jsonl|jepsen|"
                               "porcupine-kv] [--run ID] [--json] [--timeout S]");
    return FL_EXIT_PASS;
}

static json_t *ops_counts(const struct chk_history *h)
{
    int64_t c[3] = {0, 0, 0};
    for (uint32_t i = 0; i < h->op_count; i++)
        c[h->ops[i].status % 3]++;
    json_t *o = json_object();
    json_object_set_new(o, "total", json_integer(h->op_count));
    json_object_set_new(o, "ok", json_integer(c[CHK_ST_OK]));
    json_object_set_new(o, "fail", json_integer(c[CHK_ST_FAIL]));
    json_object_set_new(o, "unknown", json_integer(c[CHK_ST_UNKNOWN]));
    return o;
}

int cmd_check(int argc, char **argv)
{
    struct check_args a;
    int ex = parse_args(argc, argv, &a);
    if (ex)
        return ex;
    double t0 = now_s();
    struct chk_history h;
    chk_history_init(&h);
    struct fl_buf err;
    fl_buf_init(&err);
    int fmt = a.fmt;
    int64_t run_id = 0;
    if (hist_load_fmt(a.path, &fmt, a.run_id, &h, &run_id, &err)) {
        fprintf(stderr, "faultline: %s\n", fl_buf_cstr(&err));
        ex = FL_EXIT_USAGE;
        goto out;
    }
    double deadline = t0 + a.timeout_s;
    struct chk_limits lim = {0};
    lim.engine = a.engine;
    if (a.timeout_s > 0) {
        lim.should_stop = deadline_passed;
        lim.stop_arg = &deadline;
        lim.steps_max = UINT64_MAX;
    }
    struct chk_result r;
    chk_check(&h, &lim, &r);
    double wall_ms = (now_s() - t0) * 1000.0;
    if (a.json) {
        json_t *o = json_object();
        json_object_set_new(o, "verdict", json_string(chk_verdict_name(r.verdict)));
        json_object_set_new(o, "history", json_string(a.path));
        json_object_set_new(o, "format", json_string(hist_format_name(fmt)));
        if (run_id)
            json_object_set_new(o, "run", json_integer(run_id));
        json_object_set_new(o, "ops", ops_counts(&h));
        json_object_set_new(o, "wall_ms", json_integer((json_int_t)wall_ms));
        json_object_set_new(o, "checks", chk_result_json(&h, &r));
        char *s = json_dumps(o, JSON_COMPACT);
        printf("%s\n", s);
        free(s);
        json_decref(o);
    } else {
        struct fl_buf t;
        fl_buf_init(&t);
        printf("history %s (%s%s", a.path, hist_format_name(fmt), run_id ? ", run " : "");
        if (run_id)
            printf("%lld", (long long)run_id);
        printf("): %u operations, %u watches, %u watch events\n", h.op_count, h.watch_count,
               h.event_count);
        chk_result_explain(&h, &r, &t);
        fputs(fl_buf_cstr(&t), stdout);
        fl_buf_close(&t);
    }
    ex = r.verdict == CHK_PASS   ? FL_EXIT_PASS
         : r.verdict == CHK_FAIL ? FL_EXIT_FAIL
                                 : FL_EXIT_UNKNOWN;
    chk_result_close(&r);
out:
    fl_buf_close(&err);
    chk_history_close(&h);
    return ex;
}
