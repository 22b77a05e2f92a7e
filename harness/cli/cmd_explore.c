/*
 * cmd_explore.c: `faultline explore SCENARIO.lua [--runs N] [--seed S] [--bug NAME]...
 * [-j N] [--json] [--out DIR] [--shrink-runs N] [--keep-going] [--timeout S]` (issue 13
 * §5): the arguments and the report of the guided search (explore_run.c does the
 * search, explore_mutate.c the schedules). With --bug, each bug is explored on its own;
 * the report says, per bug, the runs to its first failure, the false alarms, the
 * corpus and the coverage signatures reached, and the shrunk file with its replay line.
 * stdout holds only what the same invocation always gives (no wall time): a table, or
 * one JSON object with --json.
 */
#include "harness/cli/cli.h"
#include "harness/cli/explore.h"
#include "harness/common/bugs.h"
#include "harness/common/common.h"

#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uv.h>

const char cmd_explore_usage[] =
    "usage: faultline explore SCENARIO.lua [--runs N] [--seed S] [--bug NAME]... [-j N]\n"
    "       [--json] [--out DIR] [--shrink-runs N] [--keep-going] [--timeout S]\n"
    "Guided search: keeps a corpus of fault schedules (a seed plus faults dropped, added,\n"
    "moved and retimed, the swarm's fault mix redrawn, a fault mix over another world),\n"
    "runs them, keeps those whose runs reach new coverage (signatures, and code edges in\n"
    "an explore build: cmake -DFL_EXPLORE_COVERAGE=ON), and mutates the rarest. Every\n"
    "failure (confirmed to pass without the bug switch) is shrunk and written to DIR as a\n"
    "replayable Lua file.\n"
    "With --bug, each bug is explored on its own and the runs to its first failure are\n"
    "reported. defaults: --runs 200, --seed 1, -j <cores>, --out explore-out,\n"
    "--shrink-runs 100, --timeout 600\n";

static int parse_opt(struct xp_args *a, const char *opt, const char *v)
{
    uint64_t n = 0;
    int rc = 0;
    if (!strcmp(opt, "--runs")) {
        rc = cli_u64_arg("explore", opt, v, 1, 1000000, &n);
        a->runs = (int)n;
    } else if (!strcmp(opt, "--seed")) {
        rc = cli_u64_arg("explore", opt, v, 0, UINT64_MAX / 2, &a->seed);
    } else if (!strcmp(opt, "-j") || !strcmp(opt, "--jobs")) {
        rc = cli_u64_arg("explore", opt, v, 1, 1024, &n);
        a->jobs = (int)n;
    } else if (!strcmp(opt, "--shrink-runs")) {
        rc = cli_u64_arg("explore", opt, v, 1, 100000, &n);
        a->shrink_runs = (int)n;
    } else if (!strcmp(opt, "--timeout")) {
        rc = cli_seconds_arg("explore", opt, v, 1e6, &a->timeout_s);
    } else if (!strcmp(opt, "--out")) {
        rc = cli_output_arg("explore", opt, v, true);
        a->out = v;
    } else if (!strcmp(opt, "--bug")) {
        if (!fl_bug_find(v))
            return cli_usage_error("explore: unknown bug '%s' (see faultline list bugs)", v);
        for (int i = 0; i < a->bug_count; i++)
            if (!strcmp(a->bugs[i], v))
                return cli_usage_error("explore: --bug '%s' given twice", v);
        a->bugs[a->bug_count++] = v;
    } else {
        return cli_unknown_option("explore", opt);
    }
    return rc;
}

static int parse_args(int argc, char **argv, struct xp_args *a)
{
    bool seen[6] = {false};
    static const char *const once[] = {"--runs",        "--seed",    "-j",
                                       "--shrink-runs", "--timeout", "--out"};
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        if (!strcmp(s, "--json")) {
            a->json = true;
        } else if (!strcmp(s, "--keep-going")) {
            a->keep_going = true;
        } else if (s[0] == '-' && s[1]) {
            const char *opt = s[1] == 'j' && s[2] ? "-j" : s;
            const char *v = s[1] == 'j' && s[2] ? s + 2 : NULL;
            if (!v && i + 1 >= argc)
                return cli_usage_error("explore: %s needs a value\n%s", s, cmd_explore_usage);
            if (!v)
                v = argv[++i];
            for (size_t k = 0; k < FL_ARRAY_LEN(once); k++)
                if (!strcmp(opt, once[k]) || (!strcmp(opt, "--jobs") && k == 2)) {
                    int rc = cli_once("explore", opt, &seen[k]);
                    if (rc)
                        return rc;
                }
            int rc = parse_opt(a, opt, v);
            if (rc)
                return rc;
        } else if (a->scenario) {
            return cli_usage_error("explore: one scenario at a time ('%s' and '%s')", a->scenario,
                                   s);
        } else {
            a->scenario = s;
        }
    }
    if (!a->scenario)
        return cli_usage_error("explore: a scenario is needed\n%s", cmd_explore_usage);
    size_t len = sizeof a->self;
    if (uv_exepath(a->self, &len) != 0)
        return cli_usage_error("explore: cannot find the faultline binary");
    return 0;
}

/* The scenario's text; a scenario that starts with a shrink{} directive is refused
 * (a schedule is a directive of its own). */
static int read_scenario(const char *path, struct fl_buf *b)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return cli_usage_error("explore: scenario '%s': %s", path, strerror(errno));
    char chunk[8192];
    size_t r;
    while ((r = fread(chunk, 1, sizeof chunk, f)) > 0)
        fl_buf_append(b, chunk, r);
    bool bad = ferror(f);
    fclose(f);
    if (bad)
        return cli_usage_error("explore: scenario '%s': cannot read it", path);
    fl_buf_cstr(b);
    if (scn_directive_prefix_len((const char *)b->data, b->len))
        return cli_usage_error("explore: scenario '%s' starts with a shrink{} directive: explore "
                               "the scenario it was made from",
                               path);
    return 0;
}

/* --- the report ------------------------------------------------------------------------ */

static size_t check_len(const char *v)
{
    const char *c = strchr(v, ':');
    return c ? (size_t)(c - v) : strlen(v);
}

static json_t *row_json(const struct xp_row *r)
{
    json_t *o = json_object();
    const struct xp_finding *f = r->n_found ? &r->found[0] : NULL;
    json_object_set_new(o, "bug", r->bug ? json_string(r->bug) : json_null());
    json_object_set_new(o, "found", json_boolean(f != NULL));
    json_object_set_new(o, "runs", json_integer(f ? f->run : r->runs));
    json_object_set_new(o, "explored", json_integer(r->runs));
    json_object_set_new(o, "executed", json_integer(r->executed));
    json_object_set_new(o, "confirm_runs", json_integer(r->confirm_runs));
    json_object_set_new(o, "fresh", json_integer(r->fresh));
    json_object_set_new(o, "mutants", json_integer(r->mutants));
    json_object_set_new(o, "corpus", json_integer(r->corpus));
    json_object_set_new(o, "signatures", json_integer((json_int_t)r->signatures));
    json_object_set_new(o, "features", json_integer((json_int_t)r->features));
    json_object_set_new(o, "edges", json_integer((json_int_t)r->edges));
    json_object_set_new(o, "corpus_by_edges", json_integer(r->corpus_by_edges));
    json_object_set_new(o, "risky", json_integer((json_int_t)r->risky));
    json_object_set_new(o, "aimed", json_integer(r->aimed));
    json_object_set_new(o, "thinned", json_integer(r->thinned));
    json_object_set_new(o, "focused", json_integer(r->focused));
    json_t *lanes = json_object(); /* the lane bandit: runs and mean reward by lane */
    for (int i = 0; i < RUN_LANE_COUNT; i++)
        if (r->lane_runs[i])
            json_object_set_new(lanes, run_lane_name(1u << i),
                                json_pack("{s:I, s:I}", "runs", (json_int_t)r->lane_runs[i],
                                          "reward", (json_int_t)r->lane_mean[i]));
    json_object_set_new(o, "lane_bandit", lanes);
    json_object_set_new(o, "ablated", json_integer(r->ablated));
    json_object_set_new(o, "errors", json_integer(r->errors));
    json_t *fa = json_array();
    for (int i = 0; i < r->n_false_alarms; i++)
        json_array_append_new(fa, json_integer(r->false_alarms[i]));
    json_object_set_new(o, "false_alarms", fa);
    json_t *fs = json_array(); /* the fresh world seeds drawn, in order */
    for (int i = 0; i < r->n_fresh_seeds; i++)
        json_array_append_new(fs, json_integer((json_int_t)r->fresh_seeds[i]));
    json_object_set_new(o, "fresh_seeds", fs);
    json_t *arr = json_array();
    for (int i = 0; i < r->n_found; i++) {
        const struct xp_finding *x = &r->found[i];
        json_t *j = json_object();
        json_object_set_new(j, "run", json_integer(x->run));
        json_object_set_new(j, "seed", json_integer((json_int_t)x->seed));
        json_object_set_new(j, "schedule", json_string(x->how));
        json_object_set_new(j, "check", json_stringn(x->violation, check_len(x->violation)));
        json_object_set_new(j, "violation", json_string(x->violation));
        json_object_set_new(j, "file", json_string(x->file));
        json_object_set_new(j, "shrunk", json_boolean(x->shrunk));
        json_object_set_new(j, "replay", json_string(x->replay));
        json_array_append_new(arr, j);
    }
    json_object_set_new(o, "findings", arr);
    return o;
}

static void print_json(const struct xp_args *a, const struct xp_row *rows, int n)
{
    json_t *o = json_object();
    json_object_set_new(o, "scenario", json_string(a->scenario));
    json_object_set_new(o, "seed", json_integer((json_int_t)a->seed));
    json_object_set_new(o, "runs", json_integer(a->runs));
    json_t *arr = json_array();
    int found = 0;
    for (int i = 0; i < n; i++) {
        json_array_append_new(arr, row_json(&rows[i]));
        found += rows[i].n_found > 0;
    }
    json_object_set_new(o, "bugs", arr);
    json_object_set_new(o, "found", json_integer(found));
    char *s = json_dumps(o, JSON_COMPACT);
    puts(s);
    free(s);
    json_decref(o);
}

static void print_table(const struct xp_args *a, const struct xp_row *rows, int n)
{
    printf("%-34s %6s %6s %9s %6s  %s\n", "bug", "runs", "corpus", "signatures", "alarms",
           "finding");
    for (int i = 0; i < n; i++) {
        const struct xp_row *r = &rows[i];
        const struct xp_finding *f = r->n_found ? &r->found[0] : NULL;
        printf("%-34s %6d %6d %9zu %6d  ", r->bug ? r->bug : "(no bug)", f ? f->run : r->runs,
               r->corpus, r->signatures, r->n_false_alarms);
        if (f)
            printf("%.*s at run %d: %s\n", (int)check_len(f->violation), f->violation, f->run,
                   f->replay);
        else
            printf("none in %d runs\n", r->runs);
        for (int k = 1; k < r->n_found; k++)
            printf("%-34s %6s %6s %9s %6s  %.*s at run %d: %s\n", "", "", "", "", "",
                   (int)check_len(r->found[k].violation), r->found[k].violation, r->found[k].run,
                   r->found[k].replay);
    }
    printf("explored %s with --seed %llu, at most %d runs per bug\n", a->scenario,
           (unsigned long long)a->seed, a->runs);
}

static int explore_all(const struct xp_args *a, const struct fl_buf *body, struct xp_row *rows,
                       int n)
{
    int rc = 0, found = 0, errors = 0;
    double t0 = (double)uv_hrtime() / 1e9;
    for (int i = 0; i < n && !rc; i++) {
        rc = xp_explore(a, (const char *)body->data, body->len, &rows[i]);
        found += rows[i].n_found > 0;
        errors += rows[i].errors;
    }
    if (rc)
        return rc;
    if (a->json)
        print_json(a, rows, n);
    else
        print_table(a, rows, n);
    fprintf(stderr, "explore: %.1f s\n", (double)uv_hrtime() / 1e9 - t0);
    if (errors)
        return FL_EXIT_INTERNAL;
    if (a->bug_count)
        return found == n ? FL_EXIT_PASS : FL_EXIT_FAIL;
    return found ? FL_EXIT_FAIL : FL_EXIT_PASS;
}

int cmd_explore(int argc, char **argv)
{
    struct xp_args a;
    memset(&a, 0, sizeof a);
    a.runs = 200;
    a.seed = 1;
    a.jobs = (int)uv_available_parallelism();
    a.out = "explore-out";
    a.shrink_runs = 100;
    a.timeout_s = 600;
    a.bugs = fl_calloc((size_t)argc + 1, sizeof *a.bugs);
    struct fl_buf body;
    fl_buf_init(&body);
    int rc = parse_args(argc, argv, &a);
    if (!rc)
        rc = read_scenario(a.scenario, &body);
    if (!rc && mkdir(a.out, 0777) != 0 && errno != EEXIST)
        rc = cli_usage_error("explore: --out '%s': %s", a.out, strerror(errno));
    int n = a.bug_count ? a.bug_count : 1;
    struct xp_row *rows = fl_calloc((size_t)n, sizeof *rows);
    for (int i = 0; i < a.bug_count; i++)
        rows[i].bug = fl_bug_find(a.bugs[i])->name;
    if (!rc)
        rc = explore_all(&a, &body, rows, n);
    for (int i = 0; i < n; i++)
        xp_row_close(&rows[i]);
    free(rows);
    fl_buf_close(&body);
    free(a.bugs);
    return rc;
}
