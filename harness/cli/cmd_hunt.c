/*
 * cmd_hunt.c: `faultline hunt [SCENARIO.lua] [--seeds A..B] [--bug NAME]... [--own] [-j N]
 * [--json] [--timeout S] [--keep DIR]` (issue 13 §5). How fast does a scenario find each
 * known bug? For every bug switch (all of `faultline list bugs` unless --bug names some)
 * the seeds are swept in order with the switch on until one fails; that seed is then run
 * once more with the switch off, so a seed that fails without the bug (a false alarm, or
 * a real bug nobody switched on) is never counted as finding it — the hunt goes on past
 * it. The result is a table (or one JSON object with --json): for each bug the first
 * seed that finds it, the runs it took, runs per wall second and the check that failed.
 *
 * SCENARIO defaults to scenarios/chaos.lua (the generic swarm); --own hunts each bug with
 * its own scenario from the bug table instead. Runs go through harness/sweep (worker
 * processes, -j in parallel, seeds launched in order with --fail-fast, so every seed
 * below the first failure has been run to its end and the first failing seed is exact).
 * Their databases live in a temporary directory removed at the end, or in --keep DIR.
 *
 * Exit code: 0 every hunted bug was found, 1 some were not, 2 bad input, 3 a run
 * errored (crash, hang, script error) or the hunt was interrupted.
 */
#include "harness/cli/cli.h"
#include "harness/common/bugs.h"

#include <limits.h>
#include "harness/common/common.h"
#include "harness/history/history.h"
#include "harness/sweep/sweep.h"

#include <errno.h>
#include <jansson.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uv.h>

const char cmd_hunt_usage[] =
    "usage: faultline hunt [SCENARIO.lua] [--seeds A..B] [--bug NAME]... [--own] [-j N]\n"
    "       [--json] [--timeout S] [--keep DIR]\n"
    "For each bug switch, sweeps the seeds in order with the switch on until a run\n"
    "fails, confirms that seed passes with the switch off, and reports the seeds and\n"
    "time it took. defaults: scenarios/chaos.lua, --seeds 1..200, every bug, -j <cores>\n";

struct hunt_args {
    const char *scenario; /* NULL with --own */
    bool own;
    uint64_t first, last;
    const char **bugs; /* names; every bug when count is 0 */
    int bug_count;
    int jobs;
    bool json;
    double timeout_s;
    const char *keep;
    char self[4096];
};

/* What the hunt found for one bug. */
struct hunt_row {
    const char *bug;
    const char *scenario;
    bool found;
    uint64_t first_seed; /* valid when found */
    int runs;            /* runs with the switch on, up to and including the finding */
    int confirm_runs;    /* runs with the switch off */
    int executed;        /* every run made, those past the finding included */
    double wall_s;
    char *violation;        /* the finding's first violation ("CHECK: detail"), NULL otherwise */
    uint64_t *false_alarms; /* seeds that failed with the switch off too */
    int n_false_alarms;
    int errors; /* runs that crashed, hung or had a script error */
};

static double now_s(void)
{
    return (double)uv_hrtime() / 1e9;
}

static int parse_opt(struct hunt_args *a, const char *opt, const char *v)
{
    if (!strcmp(opt, "--seeds")) {
        if (!sweep_parse_seeds(v, &a->first, &a->last))
            return cli_usage_error("hunt: --seeds '%s': expected A..B with A <= B", v);
    } else if (!strcmp(opt, "-j") || !strcmp(opt, "--jobs")) {
        uint64_t n = 0;
        int rc = cli_u64_arg("hunt", opt, v, 1, 1024, &n); /* plain digits (cli_args.c) */
        if (rc)
            return rc;
        a->jobs = (int)n;
    } else if (!strcmp(opt, "--bug")) {
        int rc = cli_bug_arg("hunt", v, a->bugs, &a->bug_count, INT_MAX); /* argc slots */
        if (rc)
            return rc;
    } else if (!strcmp(opt, "--timeout")) {
        int rc = cli_seconds_arg("hunt", opt, v, 1e6, &a->timeout_s);
        if (rc)
            return rc;
    } else if (!strcmp(opt, "--keep")) {
        if (!*v)
            return cli_usage_error("hunt: --keep needs a directory");
        a->keep = v;
    } else {
        return cli_usage_error("hunt: unknown option '%s'\n%s", opt, cmd_hunt_usage);
    }
    return 0;
}

static int check_scenario(const char *path)
{
    if (access(path, R_OK) != 0)
        return cli_usage_error("hunt: scenario '%s': %s", path, strerror(errno));
    return 0;
}

/* The scenarios the hunt will run must all exist before the first run starts. */
static int check_inputs(struct hunt_args *a)
{
    if (a->own && a->scenario)
        return cli_usage_error("hunt: give a scenario or --own, not both");
    if (!a->own && !a->scenario)
        a->scenario = "scenarios/chaos.lua";
    if (!a->own)
        return check_scenario(a->scenario);
    int n = a->bug_count ? a->bug_count : FL_BUG_COUNT;
    for (int i = 0; i < n; i++) {
        const struct fl_bug_info *b = a->bug_count ? fl_bug_find(a->bugs[i]) : &fl_bug_table[i];
        int rc = check_scenario(b->scenario);
        if (rc)
            return rc;
    }
    return 0;
}

static int parse_args(int argc, char **argv, struct hunt_args *a)
{
    a->first = 1;
    a->last = 200;
    a->jobs = (int)uv_available_parallelism();
    a->timeout_s = 600;
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        if (!strcmp(s, "--help") || !strcmp(s, "-h")) {
            fputs(cmd_hunt_usage, stdout);
            return -1;
        } else if (!strcmp(s, "--json")) {
            a->json = true;
        } else if (!strcmp(s, "--own")) {
            a->own = true;
        } else if (s[0] == '-' && s[1] == 'j' && s[2]) {
            int rc = parse_opt(a, "-j", s + 2);
            if (rc)
                return rc;
        } else if (s[0] == '-' && s[1]) {
            if (i + 1 >= argc)
                return cli_usage_error("hunt: %s needs a value\n%s", s, cmd_hunt_usage);
            int rc = parse_opt(a, s, argv[++i]);
            if (rc)
                return rc;
        } else if (a->scenario) {
            return cli_usage_error("hunt: one scenario at a time ('%s' and '%s')", a->scenario, s);
        } else {
            a->scenario = s;
        }
    }
    int rc = check_inputs(a);
    if (rc)
        return rc;
    size_t len = sizeof a->self;
    if (uv_exepath(a->self, &len) != 0)
        return cli_usage_error("hunt: cannot find the faultline binary");
    return 0;
}

/* One sweep of seeds [first, last] of one scenario, with bug on (NULL: no bug). */
static int hunt_sweep(const struct hunt_args *a, const char *scenario, const char *bug,
                      uint64_t first, uint64_t last, bool fail_fast, const char *db,
                      struct sweep_report *rep)
{
    const char *scenarios[1] = {scenario};
    const char *bugs[1] = {bug};
    struct sweep_options o = {
        .scenarios = scenarios,
        .scenario_count = 1,
        .seed_first = first,
        .seed_last = last,
        .shard_k = 1,
        .shard_n = 1,
        .jobs = a->jobs,
        .worker = a->self,
        .db_path = db,
        .bugs = bug ? bugs : NULL,
        .bug_count = bug ? 1 : 0,
        .timeout_s = a->timeout_s,
        .fail_fast = fail_fast,
    };
    char err[1024];
    if (sweep_run(&o, rep, err, sizeof err)) {
        fprintf(stderr, "faultline: hunt: %s\n", err);
        return FL_EXIT_INTERNAL;
    }
    return 0;
}

/* The lowest failing seed of a fail-fast sweep, or NULL: seeds go out in order, so every
 * seed below it has finished. */
static const struct sweep_result *lowest_failure(const struct sweep_report *rep)
{
    const struct sweep_result *best = NULL;
    for (int i = 0; i < rep->count; i++) {
        const struct sweep_result *r = &rep->results[i];
        if (r->verdict == SWEEP_FAIL && (!best || r->seed < best->seed))
            best = r;
    }
    return best;
}

/* Counts the runs up to and including seed (all of them when seed is 0) and the errors
 * among them; returns the highest seed run. */
static uint64_t count_runs(const struct sweep_report *rep, uint64_t upto, struct hunt_row *row)
{
    uint64_t high = 0;
    for (int i = 0; i < rep->count; i++) {
        const struct sweep_result *r = &rep->results[i];
        if (upto && r->seed > upto)
            continue;
        row->runs++;
        if (r->verdict == SWEEP_ERROR)
            row->errors++;
        if (r->seed > high)
            high = r->seed;
    }
    return high;
}

/* Is seed a failure without the bug as well? */
static int confirm(const struct hunt_args *a, struct hunt_row *row, uint64_t seed, const char *db,
                   bool *alarm)
{
    struct sweep_report rep;
    int rc = hunt_sweep(a, row->scenario, NULL, seed, seed, false, db, &rep);
    if (rc)
        return rc;
    row->confirm_runs++;
    row->executed += rep.count;
    *alarm = rep.count != 1 || rep.results[0].verdict != SWEEP_PASS;
    sweep_report_close(&rep);
    return 0;
}

/* Records seed as a false alarm; returns false when no seed is left after it. */
static bool note_false_alarm(struct hunt_row *row, uint64_t seed)
{
    row->false_alarms =
        fl_realloc(row->false_alarms, sizeof(uint64_t) * (size_t)(row->n_false_alarms + 1));
    row->false_alarms[row->n_false_alarms++] = seed;
    free(row->violation);
    row->violation = NULL;
    return seed != UINT64_MAX;
}

/*
 * One round: sweeps [*from, last] with the bug on until a run fails. A failing seed is
 * confirmed with the bug off: found, or a false alarm and the hunt goes on after it. A
 * round that stopped at an error (fail-fast stops there too) goes on after the highest
 * seed it ran. Sets *more when another round is needed.
 */
static int hunt_round(const struct hunt_args *a, struct hunt_row *row, const char *db,
                      const char *cdb, uint64_t *from, bool *more)
{
    struct sweep_report rep;
    *more = false;
    int rc = hunt_sweep(a, row->scenario, row->bug, *from, a->last, true, db, &rep);
    if (rc)
        return rc;
    const struct sweep_result *f = lowest_failure(&rep);
    uint64_t seed = f ? f->seed : 0;
    uint64_t high = count_runs(&rep, seed, row);
    row->executed += rep.count;
    if (f)
        row->violation = fl_strdup(f->first_violation ? f->first_violation : "");
    bool interrupted = rep.interrupted, empty = rep.count == 0;
    sweep_report_close(&rep);
    if (interrupted)
        return FL_EXIT_INTERNAL;
    if (!seed) {
        *more = !empty && high < a->last;
        *from = high + 1;
        return 0;
    }
    bool alarm = false;
    rc = confirm(a, row, seed, cdb, &alarm);
    if (rc)
        return rc;
    if (!alarm) {
        row->found = true;
        row->first_seed = seed;
        return 0;
    }
    *more = note_false_alarm(row, seed) && seed < a->last;
    *from = seed + 1;
    return 0;
}

static int hunt_one(const struct hunt_args *a, const char *dir, struct hunt_row *row)
{
    char db[8192], cdb[8192];
    snprintf(db, sizeof db, "%.4000s/%.100s.db", dir, row->bug);
    snprintf(cdb, sizeof cdb, "%.4000s/%.100s.control.db", dir, row->bug);
    double t0 = now_s();
    uint64_t from = a->first;
    bool more = true;
    int rc = 0;
    while (!rc && more)
        rc = hunt_round(a, row, db, cdb, &from, &more);
    row->wall_s = now_s() - t0;
    return rc;
}

/* The length of the check's name at the start of a first violation ("linearizability: ..."). */
static size_t check_len(const char *violation)
{
    const char *colon = strchr(violation, ':');
    return colon ? (size_t)(colon - violation) : strlen(violation);
}

static json_t *row_json(const struct hunt_row *r)
{
    json_t *o = json_object();
    json_object_set_new(o, "bug", json_string(r->bug));
    json_object_set_new(o, "scenario", json_string(r->scenario));
    json_object_set_new(o, "found", json_boolean(r->found));
    json_object_set_new(o, "first_seed",
                        r->found ? json_integer((json_int_t)r->first_seed) : json_null());
    json_object_set_new(o, "runs", json_integer(r->runs));
    json_object_set_new(o, "confirm_runs", json_integer(r->confirm_runs));
    json_object_set_new(o, "wall_s", json_real(r->wall_s));
    json_object_set_new(o, "runs_per_s", json_real(r->wall_s > 0 ? r->executed / r->wall_s : 0));
    json_object_set_new(o, "executed", json_integer(r->executed));
    json_object_set_new(
        o, "check", r->found ? json_stringn(r->violation, check_len(r->violation)) : json_null());
    json_object_set_new(o, "violation", r->found ? json_string(r->violation) : json_null());
    json_t *fa = json_array();
    for (int i = 0; i < r->n_false_alarms; i++)
        json_array_append_new(fa, json_integer((json_int_t)r->false_alarms[i]));
    json_object_set_new(o, "false_alarms", fa);
    json_object_set_new(o, "errors", json_integer(r->errors));
    return o;
}

static void print_json(const struct hunt_args *a, const struct hunt_row *rows, int n, int found,
                       double wall_s)
{
    json_t *o = json_object();
    json_object_set_new(o, "scenario", a->own ? json_null() : json_string(a->scenario));
    json_object_set_new(o, "own", json_boolean(a->own));
    char seeds[64];
    snprintf(seeds, sizeof seeds, "%llu..%llu", (unsigned long long)a->first,
             (unsigned long long)a->last);
    json_object_set_new(o, "seeds", json_string(seeds));
    json_object_set_new(o, "jobs", json_integer(a->jobs));
    json_t *arr = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(arr, row_json(&rows[i]));
    json_object_set_new(o, "bugs", arr);
    json_object_set_new(o, "found", json_integer(found));
    json_object_set_new(o, "hunted", json_integer(n));
    json_object_set_new(o, "wall_s", json_real(wall_s));
    char *s = json_dumps(o, JSON_COMPACT);
    puts(s);
    free(s);
    json_decref(o);
}

static void print_table(const struct hunt_args *a, const struct hunt_row *rows, int n, int found,
                        double wall_s)
{
    printf("%-34s %10s %6s %8s  %s\n", "bug", "first seed", "runs", "runs/s", "check");
    for (int i = 0; i < n; i++) {
        const struct hunt_row *r = &rows[i];
        double rate = r->wall_s > 0 ? r->executed / r->wall_s : 0;
        char seed[32];
        if (r->found)
            snprintf(seed, sizeof seed, "%llu", (unsigned long long)r->first_seed);
        else
            snprintf(seed, sizeof seed, "-");
        if (r->found)
            printf("%-34s %10s %6d %8.1f  %.*s", r->bug, seed, r->runs, rate,
                   (int)check_len(r->violation), r->violation);
        else
            printf("%-34s %10s %6d %8.1f  not found", r->bug, seed, r->runs, rate);
        if (a->own)
            printf("  (%s)", r->scenario);
        for (int k = 0; k < r->n_false_alarms; k++)
            printf("%s%llu", k ? "," : "  false alarm at seed ",
                   (unsigned long long)r->false_alarms[k]);
        if (r->errors)
            printf("  %d run%s errored", r->errors, r->errors == 1 ? "" : "s");
        putchar('\n');
    }
    printf("found %d of %d bug%s in seeds %llu..%llu (%s) in %.1f s\n", found, n, n == 1 ? "" : "s",
           (unsigned long long)a->first, (unsigned long long)a->last,
           a->own ? "each bug's own scenario" : a->scenario, wall_s);
}

/* A fresh directory for the runs' databases (the --keep one, or a temporary one). */
static int work_dir(const struct hunt_args *a, char *dir, size_t len)
{
    if (a->keep) {
        if (mkdir(a->keep, 0777) != 0 && errno != EEXIST)
            return cli_usage_error("hunt: --keep '%s': %s", a->keep, strerror(errno));
        snprintf(dir, len, "%s", a->keep);
        return 0;
    }
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, len, "%s/faultline-hunt.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        fprintf(stderr, "faultline: hunt: cannot make a directory in %s: %s\n",
                tmp && *tmp ? tmp : "/tmp", strerror(errno));
        return FL_EXIT_INTERNAL;
    }
    return 0;
}

/* Removes the temporary directory and the databases the hunt wrote into it. */
static void remove_dir(const struct hunt_args *a, const char *dir, const struct hunt_row *rows,
                       int n)
{
    if (a->keep)
        return;
    char path[8192];
    for (int i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%.4000s/%.100s.db", dir, rows[i].bug);
        hist_remove(path);
        snprintf(path, sizeof path, "%.4000s/%.100s.control.db", dir, rows[i].bug);
        hist_remove(path);
    }
    rmdir(dir);
}

static int hunt_all(const struct hunt_args *a, struct hunt_row *rows, int n)
{
    char dir[4096];
    int rc = work_dir(a, dir, sizeof dir);
    if (rc)
        return rc;
    double t0 = now_s();
    int found = 0, errors = 0;
    for (int i = 0; i < n && !rc; i++) {
        rc = hunt_one(a, dir, &rows[i]);
        found += rows[i].found;
        errors += rows[i].errors;
        if (!a->json)
            fprintf(stderr, "hunt: %s: %s after %d run%s\n", rows[i].bug,
                    rows[i].found ? "found" : "not found", rows[i].runs,
                    rows[i].runs == 1 ? "" : "s");
    }
    double wall_s = now_s() - t0;
    if (!rc) {
        if (a->json)
            print_json(a, rows, n, found, wall_s);
        else
            print_table(a, rows, n, found, wall_s);
    }
    remove_dir(a, dir, rows, n);
    if (rc)
        return rc;
    if (errors)
        return FL_EXIT_INTERNAL;
    return found == n ? FL_EXIT_PASS : FL_EXIT_FAIL;
}

int cmd_hunt(int argc, char **argv)
{
    struct hunt_args a;
    memset(&a, 0, sizeof a);
    a.bugs = fl_calloc((size_t)argc + 1, sizeof *a.bugs);
    int rc = parse_args(argc, argv, &a);
    if (rc) {
        free(a.bugs);
        return rc < 0 ? FL_EXIT_PASS : rc;
    }
    int n = a.bug_count ? a.bug_count : FL_BUG_COUNT;
    struct hunt_row *rows = fl_calloc((size_t)n, sizeof *rows);
    for (int i = 0; i < n; i++) {
        const struct fl_bug_info *b = a.bug_count ? fl_bug_find(a.bugs[i]) : &fl_bug_table[i];
        rows[i].bug = b->name;
        rows[i].scenario = a.own ? b->scenario : a.scenario;
    }
    rc = hunt_all(&a, rows, n);
    for (int i = 0; i < n; i++) {
        free(rows[i].false_alarms);
        free(rows[i].violation);
    }
    free(rows);
    free(a.bugs);
    return rc;
}
