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
#include "harness/common/text.h"
#include "harness/lua/scn.h"

#include <jansson.h>

#define SHRINK_BUGS_MAX 64

/* The command line: what scn_shrink takes is filled into o as it is parsed. */
struct shrink_args {
    struct scn_shrink_options o; /* .bugs points at bugs[] */
    bool seed_given;
    bool quiet;
    bool json;
    const char *bugs[SHRINK_BUGS_MAX];
};

const char cmd_shrink_usage[] =
    "usage: faultline shrink SCENARIO.lua --seed N [--bug NAME]... [--check NAME] [-o FILE]\n"
    "       [--max-runs N] [--quiet] [--json]\n"
    "  --seed N      the seed of the failing run (required)\n"
    "  --bug NAME    a bug switch the failing run had on; repeatable\n"
    "  --check NAME  the check that must keep failing: linearizability, watch, raft_safety,\n"
    "                converge or expect (default: the run's first failing one)\n"
    "  -o FILE       where to write the smaller scenario (default: NAME-seedN.shrunk.lua in\n"
    "                the current directory)\n"
    "  --max-runs N  at most N replays, 2 to 1000000\n"
    "  --quiet       no progress on stderr\n"
    "  --json        print one JSON object on stdout, whatever the outcome\n"
    "exit codes: 0 written, 1 nothing smaller fails, 2 bad input, 3 internal error\n";

/* Value options and flags may appear once; --bug once per name. */
struct shrink_seen {
    bool seed, out, check, max_runs, quiet, json;
};

static int parse_value(const char *o, const char *val, struct shrink_args *a,
                       struct shrink_seen *seen)
{
    uint64_t u;
    int rc = 0;
    if (!strcmp(o, "--seed")) {
        if ((rc = cli_once("shrink", o, &seen->seed)) ||
            (rc = cli_u64_arg("shrink", o, val, 0, UINT64_MAX, &a->o.seed)))
            return rc;
        a->seed_given = true;
    } else if (!strcmp(o, "-o") || !strcmp(o, "--out")) {
        if ((rc = cli_once("shrink", "-o", &seen->out)))
            return rc;
        if (!val[0] || strlen(val) >= 4096) /* scn_shrink_result.out_path holds 4096 */
            return cli_usage_error("shrink: %s needs a file name shorter than 4096 bytes", o);
        a->o.out_path = val;
    } else if (!strcmp(o, "--check")) {
        static const char *const names[] = {"linearizability", "watch",    "raft_safety",
                                            "converge",        "liveness", "expect"};
        bool known = false;
        for (size_t k = 0; k < FL_ARRAY_LEN(names); k++)
            known = known || !strcmp(names[k], val);
        if (!known)
            return cli_usage_error("shrink: unknown check '%s' (linearizability, watch, "
                                   "raft_safety, converge, liveness, expect)",
                                   val);
        if ((rc = cli_once("shrink", o, &seen->check)))
            return rc;
        a->o.check = val;
    } else if (!strcmp(o, "--max-runs")) {
        if ((rc = cli_once("shrink", o, &seen->max_runs)) ||
            (rc = cli_u64_arg("shrink", o, val, 2, 1000000, &u)))
            return rc;
        a->o.max_runs = (int)u;
    } else {
        /* --bug */
        if ((rc = cli_bug_arg("shrink", val, a->bugs, &a->o.bug_count, SHRINK_BUGS_MAX)))
            return rc;
    }
    return 0;
}

static int parse_option(int argc, char **argv, int *i, struct shrink_args *a,
                        struct shrink_seen *seen)
{
    static const char *const valued[] = {"--seed", "-o", "--out", "--check", "--max-runs", "--bug"};
    const char *o = argv[*i];
    if (!strcmp(o, "--quiet") || !strcmp(o, "-q")) {
        a->quiet = true;
        return cli_once("shrink", "--quiet", &seen->quiet);
    }
    if (!strcmp(o, "--json")) {
        a->json = true;
        return cli_once("shrink", o, &seen->json);
    }
    bool known = false;
    for (size_t k = 0; k < FL_ARRAY_LEN(valued); k++)
        known = known || !strcmp(o, valued[k]);
    if (!known)
        return cli_unknown_option("shrink", o);
    if (*i + 1 >= argc)
        return cli_usage_error("shrink: %s needs a value", o);
    ++*i;
    return parse_value(o, argv[*i], a, seen);
}

static int parse_args(int argc, char **argv, struct shrink_args *a)
{
    memset(a, 0, sizeof *a);
    struct shrink_seen seen = {0};
    a->o.bugs = a->bugs;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        int rc = o[0] == '-' && o[1] ? parse_option(argc, argv, &i, a, &seen)
                                     : cli_scenario_arg("shrink", o, &a->o.path);
        if (rc)
            return rc;
    }
    if (!a->o.path)
        return cli_missing("shrink", "missing scenario");
    if (!a->seed_given)
        return cli_missing("shrink", "--seed is required: the seed of the failing run");
    a->o.log = a->quiet ? NULL : stderr;
    return 0;
}

/* --json: one object on stdout whatever the outcome. */
static void print_json(const struct shrink_args *a, const struct scn_shrink_result *res)
{
    json_t *o = json_object();
    json_object_set_new(o, "scenario", json_string(a->o.path));
    json_object_set_new(o, "seed", hist_seed_json(a->o.seed));
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
    struct scn_shrink_result res;
    int code = scn_shrink(&a.o, &res);
    if (code != 0)
        cli_usage_error("shrink: %s", res.error); /* escapes script text; code stays */
    if (code == 0 && !a.json) {
        /* the path as it is, unless it holds control bytes (then escaped) */
        char *path = fl_term_dup(res.out_path);
        printf("%s\n", path);
        free(path);
    }
    if (a.json)
        print_json(&a, &res);
    fflush(stdout);
    scn_shrink_result_close(&res);
    return code;
}
