/*
 * cmd_sweep.c: `faultline sweep SCENARIO.lua... [--seeds A..B] [-j N] [--shard K/N]
 * [--db FILE] [--junit FILE] [--report DIR] [--fail-fast] [--bug NAME]... [--timeout S]
 * [--worker CMD] [--paranoid]` (DESIGN §3.9, §8). --paranoid is passed on to every run
 * (run's --paranoid: the cores' invariants after every simulated event). Parses the arguments, runs
 * harness/sweep, writes the JUnit file and the report, and prints the failing seeds with their
 * replay commands. Exit code: 3 if any run errored (crash, hang, script error) or the sweep was
 * interrupted, else 1 if any failed, else 4 if any was unknown, else 0; bad arguments 2.
 *
 * --worker replaces the executable each run is started with (the faultline binary
 * itself by default); tests use it to put in a worker that crashes or hangs.
 */
#include "harness/cli/cli.h"
#include "harness/common/bugs.h"

#include <limits.h>
#include "harness/common/common.h"
#include "harness/sweep/sweep.h"
#include "reports/report.h"

#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uv.h>

#define SWEEP_RUNS_MAX 10000000
#define SWEEP_JOBS_MAX 1024

const char cmd_sweep_usage[] =
    "usage: faultline sweep SCENARIO.lua... [--seeds A..B] [-j N] [--shard K/N] [--db FILE]\n"
    "       [--junit FILE] [--report DIR] [--fail-fast] [--bug NAME]... [--timeout S]\n"
    "       [--worker CMD] [--paranoid]\n"
    "  --seeds A..B  the seeds to run, inclusive, or one seed N (default 1..100)\n"
    "  -j N          workers at once, 1 to 1024 (default: the number of cores; fewer when\n"
    "                the limit of open files says so)\n"
    "  --shard K/N   only the seeds whose position in the range is K-1 modulo N; auto: K\n"
    "                and N from the job runner (Kubernetes Indexed Job with\n"
    "                FAULTLINE_SHARD_COUNT, GitLab, CircleCI, Buildkite, Slurm array)\n"
    "  --db FILE     the history database the runs are added to (default faultline.db)\n"
    "  --junit FILE  a JUnit XML file with one test case per run\n"
    "  --report DIR  the HTML report of the runs\n"
    "  --fail-fast   start no more runs after the first failure or error\n"
    "  --bug NAME    turn a known bug back on in every run; repeatable\n"
    "  --timeout S   wall-clock seconds a run may take before it is killed (default 600)\n"
    "  --worker CMD  the executable each run is started with (default: this faultline)\n"
    "  --paranoid    every run checks the Raft and MVCC invariants after every event\n"
    "exit codes: 0 all pass, 1 a violation, 2 bad input, 3 an error or interrupted,\n"
    "  4 unknown\n";

struct sweep_args {
    struct sweep_options o;
    const char **scenarios;
    const char **bugs;
    const char *junit, *report;
    const char *seeds_text, *shard_text;
    char self[4096];
    struct {
        bool seeds, jobs, shard, db, junit, report, worker, timeout, fail_fast, paranoid;
    } seen;
};

/* --seeds A..B or N, with a message that says what is wrong with it. */
static int parse_seeds(struct sweep_options *o, const char *v)
{
    static const char range[] = "0 to 18446744073709551615";
    const char *dots = strstr(v, "..");
    struct fl_buf a, b;
    fl_buf_init(&a);
    fl_buf_init(&b);
    fl_buf_append(&a, v, dots ? (size_t)(dots - v) : strlen(v));
    if (dots)
        fl_buf_append(&b, dots + 2, strlen(dots + 2));
    else
        fl_buf_append(&b, v, strlen(v));
    const char *as = fl_buf_cstr(&a), *bs = fl_buf_cstr(&b);
    bool digits = *as && *bs && strspn(as, "0123456789") == strlen(as) &&
                  strspn(bs, "0123456789") == strlen(bs);
    uint64_t first = 0, last = 0;
    bool fits = digits && cli_parse_u64(as, &first) && cli_parse_u64(bs, &last);
    int rc = 0;
    if (!digits)
        rc = cli_usage_error("sweep: --seeds '%s': expected A..B (both inclusive) or one seed N, "
                             "whole numbers from %s",
                             v, range);
    else if (!fits)
        rc = cli_usage_error("sweep: --seeds '%s': a seed is out of range (%s)", v, range);
    else if (first > last)
        rc = cli_usage_error("sweep: --seeds '%s': the first seed is above the last", v);
    fl_buf_close(&a);
    fl_buf_close(&b);
    if (!rc) {
        o->seed_first = first;
        o->seed_last = last;
    }
    return rc;
}

static const char *env_get(const char *name)
{
    return getenv(name);
}

/* --shard auto: the job runner's environment names the shard (sweep_shard_env.c). */
static int shard_auto(struct sweep_options *o)
{
    char src[256], err[512];
    if (sweep_shard_from_env(env_get, &o->shard_k, &o->shard_n, src, sizeof src, err, sizeof err))
        return cli_usage_error("sweep: %s", err);
    fprintf(stderr, "sweep: --shard auto: shard %d/%d from %s\n", o->shard_k, o->shard_n, src);
    return 0;
}

static int parse_shard(struct sweep_options *o, const char *v)
{
    if (!strcmp(v, "auto"))
        return shard_auto(o);
    const char *slash = strchr(v, '/');
    uint64_t k = 0, n = 0;
    bool shape = slash && slash > v && strspn(v, "0123456789") == (size_t)(slash - v) && slash[1] &&
                 strspn(slash + 1, "0123456789") == strlen(slash + 1);
    if (shape) {
        char kbuf[32];
        size_t kl = (size_t)(slash - v);
        shape = kl < sizeof kbuf;
        if (shape) {
            memcpy(kbuf, v, kl);
            kbuf[kl] = '\0';
            shape = cli_parse_u64(kbuf, &k) && cli_parse_u64(slash + 1, &n);
        }
    }
    if (!shape)
        return cli_usage_error("sweep: --shard '%s': expected K/N, e.g. 2/8 (the second of eight "
                               "shards)",
                               v);
    if (n < 1 || n > 1000000)
        return cli_usage_error("sweep: --shard '%s': the number of shards must be 1 to 1000000", v);
    if (k < 1 || k > n)
        return cli_usage_error("sweep: --shard '%s': the shard must be 1 to %llu (K counts from 1)",
                               v, (unsigned long long)n);
    o->shard_k = (int)k;
    o->shard_n = (int)n;
    return 0;
}

static int parse_jobs(struct sweep_args *a, const char *opt, const char *v)
{
    uint64_t n = 0;
    int rc = cli_once("sweep", "-j", &a->seen.jobs);
    if (!rc)
        rc = cli_u64_arg("sweep", opt, v, 1, SWEEP_JOBS_MAX, &n);
    if (!rc)
        a->o.jobs = (int)n;
    return rc;
}

/* A value option that takes a path: once, and not empty; an output (kind 1 a file,
 * 2 a folder) must have a writable folder to go into. */
static int path_opt(const char *opt, const char *v, bool *seen, const char **out, int kind)
{
    int rc = cli_once("sweep", opt, seen);
    if (!rc && !v[0])
        rc = cli_usage_error("sweep: %s needs a non-empty path", opt);
    if (!rc && kind)
        rc = cli_output_arg("sweep", opt, v, kind == 2);
    if (!rc)
        *out = v;
    return rc;
}

static int parse_opt(struct sweep_args *a, const char *opt, const char *v)
{
    struct sweep_options *o = &a->o;
    int rc = 0;
    if (!strcmp(opt, "--seeds")) {
        if (!(rc = cli_once("sweep", opt, &a->seen.seeds)) && !(rc = parse_seeds(o, v)))
            a->seeds_text = v;
    } else if (!strcmp(opt, "-j") || !strcmp(opt, "--jobs")) {
        rc = parse_jobs(a, opt, v);
    } else if (!strcmp(opt, "--shard")) {
        if (!(rc = cli_once("sweep", opt, &a->seen.shard)) && !(rc = parse_shard(o, v)))
            a->shard_text = v;
    } else if (!strcmp(opt, "--db")) {
        if (!(rc = cli_once("sweep", opt, &a->seen.db)) && !(rc = cli_db_arg("sweep", opt, v)))
            o->db_path = v;
    } else if (!strcmp(opt, "--junit")) {
        rc = path_opt(opt, v, &a->seen.junit, &a->junit, 1);
    } else if (!strcmp(opt, "--report")) {
        rc = path_opt(opt, v, &a->seen.report, &a->report, 2);
    } else if (!strcmp(opt, "--worker")) {
        rc = path_opt(opt, v, &a->seen.worker, &o->worker, 0);
    } else if (!strcmp(opt, "--timeout")) {
        if (!(rc = cli_once("sweep", opt, &a->seen.timeout)))
            rc = cli_seconds_arg("sweep", opt, v, 1e6, &o->timeout_s);
    } else if (!strcmp(opt, "--bug")) {
        rc = cli_bug_arg("sweep", v, a->bugs, &o->bug_count, INT_MAX); /* argc slots */
    } else {
        rc = cli_unknown_option("sweep", opt);
    }
    return rc;
}

static int add_scenario(struct sweep_args *a, const char *s)
{
    struct stat st;
    if (access(s, R_OK) != 0 || stat(s, &st) != 0)
        return cli_usage_error("sweep: scenario '%s': %s", s, strerror(errno));
    if (S_ISDIR(st.st_mode))
        return cli_usage_error("sweep: scenario '%s' is a directory", s);
    a->scenarios[a->o.scenario_count++] = s;
    return 0;
}

static int parse_argv(int argc, char **argv, struct sweep_args *a)
{
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        int rc = 0;
        if (!strcmp(s, "--fail-fast")) {
            rc = cli_once("sweep", s, &a->seen.fail_fast);
            a->o.fail_fast = true;
        } else if (!strcmp(s, "--paranoid")) {
            rc = cli_once("sweep", s, &a->seen.paranoid);
            a->o.paranoid = true;
        } else if (s[0] == '-' && s[1] == 'j' && s[2]) {
            rc = parse_jobs(a, "-j", s + 2); /* -jN, as make takes it, besides -j N */
        } else if (s[0] == '-' && s[1]) {
            static const char *const valued[] = {"--seeds",   "-j",      "--jobs",   "--shard",
                                                 "--db",      "--junit", "--report", "--worker",
                                                 "--timeout", "--bug"};
            bool known = false;
            for (size_t k = 0; k < FL_ARRAY_LEN(valued); k++)
                known = known || !strcmp(s, valued[k]);
            if (!known)
                return cli_unknown_option("sweep", s);
            if (i + 1 >= argc)
                return cli_usage_error("sweep: %s needs a value", s);
            rc = parse_opt(a, s, argv[++i]);
        } else {
            rc = add_scenario(a, s);
        }
        if (rc)
            return rc;
    }
    return 0;
}

/* The runs this sweep plans: a shard with none, or too many, is bad input. */
static int check_plan(const struct sweep_args *a)
{
    const struct sweep_options *o = &a->o;
    uint64_t span = o->seed_last - o->seed_first; /* positions 0..span */
    uint64_t start = (uint64_t)(o->shard_k - 1);
    uint64_t n_seeds = start > span ? 0 : (span - start) / (uint64_t)o->shard_n + 1;
    if (n_seeds == 0)
        return cli_usage_error("sweep: --shard %s of --seeds %llu..%llu: this shard has no runs "
                               "(the range has %llu seed%s)",
                               a->shard_text, (unsigned long long)o->seed_first,
                               (unsigned long long)o->seed_last, (unsigned long long)(span + 1),
                               span == 0 ? "" : "s");
    if (n_seeds > SWEEP_RUNS_MAX / (uint64_t)o->scenario_count)
        return cli_usage_error("sweep: %llu seeds x %d scenario%s: more than %d runs in one sweep "
                               "(use --shard)",
                               (unsigned long long)n_seeds, o->scenario_count,
                               o->scenario_count == 1 ? "" : "s", SWEEP_RUNS_MAX);
    return 0;
}

static int parse_args(int argc, char **argv, struct sweep_args *a)
{
    struct sweep_options *o = &a->o;
    o->seed_first = 1;
    o->seed_last = 100;
    o->shard_k = o->shard_n = 1;
    unsigned cores = uv_available_parallelism();
    o->jobs = cores < 1 ? 1 : cores > SWEEP_JOBS_MAX ? SWEEP_JOBS_MAX : (int)cores;
    o->db_path = "faultline.db";
    o->timeout_s = 600;
    int rc = parse_argv(argc, argv, a);
    if (rc)
        return rc;
    if (!o->scenario_count) {
        cli_usage_error("sweep: no scenario given");
        fputs(cmd_sweep_usage, stderr);
        return FL_EXIT_USAGE;
    }
    if ((rc = check_plan(a)))
        return rc;
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
    a.shard_text = "1/1";
    int rc = parse_args(argc, argv, &a);
    if (rc)
        goto out;
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
