/*
 * cmd_sweep.c: `faultline sweep SCENARIO.lua... [--seeds A..B] [-j N] [--shard K/N]
 * [--db FILE] [--junit FILE] [--report DIR] [--fail-fast] [--bug NAME]... [--timeout S]
 * [--worker CMD]` (DESIGN §3.9, §8). Parses the arguments, runs harness/sweep, writes
 * the JUnit file and the report, and prints the failing seeds with their replay
 * commands. Exit code: 3 if any run errored (crash, hang, script error) or the sweep
 * was interrupted, else 1 if any failed, else 4 if any was unknown, else 0; bad
 * arguments 2.
 *
 * --worker replaces the executable each run is started with (the faultline binary
 * itself by default); tests use it to put in a worker that crashes or hangs.
 */
#include "harness/cli/cli.h"
#include "harness/common/bugs.h"
#include "harness/common/common.h"
#include "harness/sweep/sweep.h"
#include "reports/report.h"

#include <errno.h>
#include <unistd.h>
#include <uv.h>

#define SWEEP_RUNS_MAX 10000000

static const char usage[] =
    "usage: faultline sweep SCENARIO.lua... [--seeds A..B] [-j N] [--shard K/N] [--db FILE]\n"
    "       [--junit FILE] [--report DIR] [--fail-fast] [--bug NAME]... [--timeout S]\n"
    "       [--worker CMD]\n"
    "defaults: --seeds 1..100, -j <cores>, --db faultline.db, --timeout 600\n";

struct sweep_args {
    struct sweep_options o;
    const char **scenarios;
    const char **bugs;
    const char *junit, *report;
    char self[4096];
};

static int parse_opt(struct sweep_args *a, const char *opt, const char *v)
{
    struct sweep_options *o = &a->o;
    char *end;
    if (!strcmp(opt, "--seeds")) {
        if (!sweep_parse_seeds(v, &o->seed_first, &o->seed_last))
            return cli_usage_error("sweep: --seeds '%s': expected A..B with A <= B", v);
    } else if (!strcmp(opt, "-j") || !strcmp(opt, "--jobs")) {
        errno = 0;
        long n = strtol(v, &end, 10);
        if (errno || *end || n < 1 || n > 1024)
            return cli_usage_error("sweep: -j '%s': expected a number of workers (1..1024)", v);
        o->jobs = (int)n;
    } else if (!strcmp(opt, "--shard")) {
        if (!sweep_parse_shard(v, &o->shard_k, &o->shard_n))
            return cli_usage_error("sweep: --shard '%s': expected K/N with 1 <= K <= N", v);
    } else if (!strcmp(opt, "--db")) {
        o->db_path = v;
    } else if (!strcmp(opt, "--junit")) {
        a->junit = v;
    } else if (!strcmp(opt, "--report")) {
        a->report = v;
    } else if (!strcmp(opt, "--worker")) {
        o->worker = v;
    } else if (!strcmp(opt, "--timeout")) {
        errno = 0;
        double t = strtod(v, &end);
        if (errno || *end || end == v || !(t > 0) || t > 1e6)
            return cli_usage_error("sweep: --timeout '%s': expected seconds > 0", v);
        o->timeout_s = t;
    } else if (!strcmp(opt, "--bug")) {
        if (!fl_bug_find(v))
            return cli_usage_error("sweep: unknown bug '%s' (see faultline list bugs)", v);
        a->bugs[o->bug_count++] = v;
    } else {
        return cli_usage_error("sweep: unknown option '%s'\n%s", opt, usage);
    }
    return 0;
}

static int parse_args(int argc, char **argv, struct sweep_args *a)
{
    struct sweep_options *o = &a->o;
    o->seed_first = 1;
    o->seed_last = 100;
    o->shard_k = o->shard_n = 1;
    o->jobs = (int)uv_available_parallelism();
    o->db_path = "faultline.db";
    o->timeout_s = 600;
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        if (!strcmp(s, "--fail-fast")) {
            o->fail_fast = true;
        } else if (!strcmp(s, "--help") || !strcmp(s, "-h")) {
            fputs(usage, stdout);
            return -1;
        } else if (s[0] == '-' && s[1] == 'j' && s[2]) {
            /* -jN, as make takes it, besides -j N */
            int rc = parse_opt(a, "-j", s + 2);
            if (rc)
                return rc;
        } else if (s[0] == '-' && s[1]) {
            if (i + 1 >= argc)
                return cli_usage_error("sweep: %s needs a value\n%s", s, usage);
            int rc = parse_opt(a, s, argv[++i]);
            if (rc)
                return rc;
        } else {
            if (access(s, R_OK) != 0)
                return cli_usage_error("sweep: scenario '%s': %s", s, strerror(errno));
            a->scenarios[o->scenario_count++] = s;
        }
    }
    if (!o->scenario_count)
        return cli_usage_error("sweep: no scenario given\n%s", usage);
    size_t n_seeds = 0;
    uint64_t span = o->seed_last - o->seed_first;
    if (span / (uint64_t)o->shard_n >= SWEEP_RUNS_MAX)
        return cli_usage_error("sweep: --seeds %llu..%llu: more than %d runs per shard",
                               (unsigned long long)o->seed_first, (unsigned long long)o->seed_last,
                               SWEEP_RUNS_MAX);
    free(sweep_shard_seeds(o->seed_first, o->seed_last, o->shard_k, o->shard_n, &n_seeds));
    if (o->worker && access(o->worker, X_OK) != 0)
        return cli_usage_error("sweep: --worker '%s': %s", o->worker, strerror(errno));
    if (!o->worker) {
        size_t len = sizeof a->self;
        if (uv_exepath(a->self, &len) != 0)
            return cli_usage_error("sweep: cannot find the faultline binary (use --worker)");
        o->worker = a->self;
    }
    return 0;
}

/* JUnit and report of the runs this sweep made (the database may hold older ones). */
static int outputs(const struct sweep_args *a, const struct sweep_report *rep)
{
    if (!a->junit && !a->report)
        return 0;
    char err[1024];
    int64_t *ids = fl_calloc((size_t)rep->count + 1, sizeof *ids);
    size_t n = 0;
    for (int i = 0; i < rep->count; i++)
        if (rep->results[i].run_id > 0)
            ids[n++] = rep->results[i].run_id;
    int rc = 0;
    if (rpt_write_runs(a->o.db_path, ids, n, a->report, a->junit, err, sizeof err)) {
        fprintf(stderr, "faultline: %s\n", err);
        rc = FL_EXIT_USAGE;
    }
    free(ids);
    return rc;
}

int cmd_sweep(int argc, char **argv)
{
    struct sweep_args a;
    memset(&a, 0, sizeof a);
    a.scenarios = fl_calloc((size_t)argc + 1, sizeof *a.scenarios);
    a.bugs = fl_calloc((size_t)argc + 1, sizeof *a.bugs);
    int rc = parse_args(argc, argv, &a);
    if (rc) {
        rc = rc < 0 ? FL_EXIT_PASS : rc;
        goto out;
    }
    a.o.scenarios = a.scenarios;
    a.o.bugs = a.bugs;
    a.o.progress = isatty(STDERR_FILENO) ? 2 : 1;
    a.o.progress_out = stderr;
    struct sweep_report rep;
    char err[1024];
    if (sweep_run(&a.o, &rep, err, sizeof err)) {
        rc = cli_usage_error("%s", err);
        goto out;
    }
    sweep_print_failures(&rep, &a.o, stderr);
    fprintf(stderr, "sweep: database %s\n", a.o.db_path);
    int out_rc = outputs(&a, &rep);
    rc = rep.error || rep.interrupted ? FL_EXIT_INTERNAL
         : rep.fail                   ? FL_EXIT_FAIL
         : rep.unknown                ? FL_EXIT_UNKNOWN
         : out_rc                     ? out_rc
                                      : FL_EXIT_PASS;
    sweep_report_close(&rep);
out:
    free(a.scenarios);
    free(a.bugs);
    return rc;
}
