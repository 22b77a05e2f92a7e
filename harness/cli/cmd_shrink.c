/*
 * cmd_shrink.c: `faultline shrink SCENARIO.lua --seed N [--bug NAME]... [--check NAME]
 * [-o FILE] [--max-runs N] [--quiet] [--json]` (DESIGN §3.9). Finds a smaller run that
 * still fails the same check with the same seed (harness/lua/scn_shrinker.c) and writes it as a Lua
 * file that replays with a plain `faultline run FILE --seed N`. Progress and what was
 * removed go to stderr; on success the written path is the one line on stdout (with
 * --json: one object {"scenario", "seed", "exit_code", "check", "out", "error", "runs",
 * "faults_before", "faults_after", "script_ms_before", "script_ms_after", "directive"}
 * whatever the outcome).
 * Exit codes: 0 written; 1 the run fails but nothing smaller fails the same check
 * (nothing written); 2 bad input, a script error, or a seed that does not fail;
 * 3 internal error (a replay crashed or hung, or the written file did not fail again)
 * or interrupted before anything smaller was found. SIGINT stops the search and writes
 * the smallest failing run found so far.
 */
#include "harness/cli/cli.h"
#include "harness/history/history.h"
#include "harness/common/bugs.h"
#include "harness/common/common.h"
#include "harness/lua/scn.h"

#include <errno.h>
#include <jansson.h>

#define SHRINK_BUGS_MAX 64

struct shrink_args {
    const char *scenario;
    uint64_t seed;
    bool seed_given;
    const char *out;
    const char *check;
    int max_runs;
    bool quiet;
    bool json;
    const char *bugs[SHRINK_BUGS_MAX];
    int bug_count;
};

static bool parse_u64(const char *s, uint64_t *out)
{
    if (!s || !*s || *s == '-')
        return false;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end)
        return false;
    *out = v;
    return true;
}

static const char usage[] = "usage: faultline shrink SCENARIO.lua --seed N [--bug NAME]... "
                            "[--check NAME] [-o FILE] [--max-runs N] [--quiet] [--json]";

static int parse_option(int argc, char **argv, int *i, struct shrink_args *a)
{
    const char *o = argv[*i];
    const char *val = *i + 1 < argc ? argv[*i + 1] : NULL;
    uint64_t u;
    if (!strcmp(o, "--quiet") || !strcmp(o, "-q")) {
        a->quiet = true;
        return 0;
    }
    if (!strcmp(o, "--json")) {
        a->json = true;
        return 0;
    }
    if (!val)
        return cli_usage_error("shrink: %s needs a value (%s)", o, usage);
    ++*i;
    if (!strcmp(o, "--seed")) {
        if (!parse_u64(val, &a->seed))
            return cli_usage_error("shrink: --seed needs a non-negative integer");
        a->seed_given = true;
    } else if (!strcmp(o, "-o") || !strcmp(o, "--out")) {
        a->out = val;
    } else if (!strcmp(o, "--check")) {
        static const char *const names[] = {"linearizability", "watch", "raft_safety", "converge",
                                            "expect"};
        bool known = false;
        for (size_t k = 0; k < FL_ARRAY_LEN(names); k++)
            known = known || !strcmp(names[k], val);
        if (!known)
            return cli_usage_error("shrink: unknown check '%s' (linearizability, watch, "
                                   "raft_safety, converge, expect)",
                                   val);
        a->check = val;
    } else if (!strcmp(o, "--max-runs")) {
        if (!parse_u64(val, &u) || u < 2 || u > 1000000)
            return cli_usage_error("shrink: --max-runs needs an integer in [2, 1000000]");
        a->max_runs = (int)u;
    } else if (!strcmp(o, "--bug")) {
        if (!fl_bug_find(val))
            return cli_usage_error("shrink: unknown bug '%s' (see faultline list bugs)", val);
        if (a->bug_count == SHRINK_BUGS_MAX)
            return cli_usage_error("shrink: too many --bug options");
        a->bugs[a->bug_count++] = val;
    } else {
        return cli_usage_error("shrink: unknown option '%s' (%s)", o, usage);
    }
    return 0;
}

static int parse_args(int argc, char **argv, struct shrink_args *a)
{
    memset(a, 0, sizeof *a);
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        if (o[0] == '-' && o[1]) {
            int rc = parse_option(argc, argv, &i, a);
            if (rc)
                return rc;
        } else if (!a->scenario) {
            a->scenario = o;
        } else {
            return cli_usage_error("shrink: more than one scenario given ('%s', '%s')", a->scenario,
                                   o);
        }
    }
    if (!a->scenario)
        return cli_usage_error("shrink: missing scenario (%s)", usage);
    if (!a->seed_given)
        return cli_usage_error("shrink: --seed is required: the seed of the failing run (%s)",
                               usage);
    return 0;
}

/* --json: one object on stdout whatever the outcome. */
static void print_json(const struct shrink_args *a, const struct scn_shrink_result *res)
{
    json_t *o = json_object();
    json_object_set_new(o, "scenario", json_string(a->scenario));
    json_object_set_new(o, "seed", hist_seed_json(a->seed));
    json_object_set_new(o, "exit_code", json_integer(res->exit_code));
    json_object_set_new(o, "check", res->check[0] ? json_string(res->check) : json_null());
    json_object_set_new(o, "out", res->exit_code == 0 ? json_string(res->out_path) : json_null());
    json_object_set_new(o, "error", res->error[0] ? json_string(res->error) : json_null());
    json_object_set_new(o, "runs", json_integer(res->runs));
    json_object_set_new(o, "faults_before", json_integer(res->faults_before));
    json_object_set_new(o, "faults_after", json_integer(res->faults_after));
    json_object_set_new(o, "script_ms_before", json_integer(res->script_ms_before));
    json_object_set_new(o, "script_ms_after", json_integer(res->script_ms_after));
    if (res->exit_code == 0) {
        struct fl_buf b;
        fl_buf_init(&b);
        scn_directive_format(&res->found, &b);
        json_object_set_new(o, "directive", json_string(fl_buf_cstr(&b)));
        fl_buf_close(&b);
    }
    char *text = json_dumps(o, JSON_COMPACT);
    puts(text ? text : "{}");
    free(text);
    json_decref(o);
}

int cmd_shrink(int argc, char **argv)
{
    struct shrink_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc)
        return rc;
    struct scn_shrink_options o = {.path = a.scenario,
                                   .seed = a.seed,
                                   .bugs = a.bugs,
                                   .bug_count = a.bug_count,
                                   .check = a.check,
                                   .out_path = a.out,
                                   .max_runs = a.max_runs,
                                   .log = a.quiet ? NULL : stderr};
    struct scn_shrink_result res;
    int code = scn_shrink(&o, &res);
    if (code != 0)
        fprintf(stderr, "faultline: shrink: %s\n", res.error);
    if (a.json)
        print_json(&a, &res);
    else if (code == 0)
        printf("%s\n", res.out_path);
    fflush(stdout);
    scn_shrink_result_close(&res);
    return code;
}
