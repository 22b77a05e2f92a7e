/*
 * cmd_run.c: `faultline run SCENARIO.lua [--seed N] [--db FILE] [--report DIR] [--json]
 * [--bug NAME]... [--timeout SECONDS] [--lua-mem-mb N] [--unsafe-lua] [--paranoid]`
 * (DESIGN §3.9, §9). Runs one scenario through harness/lua
 * and prints the result: with --json exactly one JSON object on stdout whatever the
 * verdict, otherwise a short human summary ending with "digest: <16 hex>"; messages and
 * the replay command of a failing run go to stderr. Exit codes: 0 pass, 1 violation,
 * 2 bad input or script error, 3 internal error or interrupted, 4 unknown.
 *
 * --report DIR writes the run's report (reports/report.h: index.html, summary.json,
 * junit.xml, summary.md) from the database once the run is committed. The exit code
 * stays the run's, except that a report that cannot be written turns a passing run's
 * 0 into 2 (a message names the problem on stderr): CI must not miss a lost report.
 *
 * --timeout bounds the whole run in wall-clock time (default 600 s): harness/lua stops
 * the script or the simulation at the deadline and the run ends 'error', exit 3; a
 * process stuck past it in one C call is ended by its watchdog (scn_guard.c).
 * --lua-mem-mb bounds the scenario's Lua state (default 1024).
 *
 * --target etcd runs the scenario against a real etcd cluster (issue 16 §3; harness/run
 * run_target_etcd.c): paced by the wall clock, no digest, the replay line says so.
 * --workdir DIR keeps the members' data and logs in DIR; --keep keeps the default
 * temporary one. A function etcd cannot do here is a script error naming it (exit 2).
 * --target live runs it against our own members, each its own OS process (issue 16 §2;
 * run_target_live.c), the same way: paced, no digest, refusals naming the function.
 *
 * --paranoid checks the Raft and MVCC cores' invariants after every simulated event
 * (run.h); FAULTLINE_PARANOID=1 in the environment makes it the default (the test suite
 * sets it), =0 not. It changes no event and no digest, only wall time and, when an
 * invariant breaks, the verdict.
 */
#include "harness/cli/cli.h"
#include "harness/common/bugs.h"
#include "harness/common/common.h"
#include "harness/common/text.h"
#include "harness/history/history.h"
#include "harness/lua/scn.h"
#include "harness/run/run.h"
#include "reports/report.h"

#include <inttypes.h>
#include <jansson.h>

#define RUN_BUGS_MAX       64
#define RUN_LUA_MEM_MB_MAX (1 << 20) /* 1 TiB: beyond it the figure is a typo */

/* The command line: what scn_run takes is filled into o as it is parsed. */
struct run_args {
    struct scn_options o; /* .bugs points at bugs[] */
    const char *report;
    bool json;
    bool paranoid_given; /* --paranoid on the command line (not only the environment) */
    bool help;
    uint64_t lua_mem_mb;
    const char *bugs[RUN_BUGS_MAX];
};

const char cmd_run_usage[] =
    "usage: faultline run SCENARIO.lua [--seed N] [--db FILE] [--report DIR] [--json]\n"
    "       [--bug NAME]... [--timeout SECONDS] [--lua-mem-mb N] [--unsafe-lua] [--paranoid]\n"
    "       [--target sim|etcd|live] [--workdir DIR] [--keep]\n"
    "\n"
    "  --seed N          master seed, 0..18446744073709551615 (default 1)\n"
    "  --db FILE         history database (default faultline.db; runs accumulate)\n"
    "  --report DIR      write the HTML/JSON/JUnit/Markdown report into DIR\n"
    "  --json            print exactly one JSON summary object on stdout\n"
    "  --bug NAME        turn on a bug switch (faultline list bugs); repeatable\n"
    "  --timeout S       wall-clock limit of the whole run in seconds (default 600);\n"
    "                    past it the run ends 'error' with exit code 3\n"
    "  --lua-mem-mb N    memory limit of the scenario's Lua state in MiB (default 1024);\n"
    "                    reaching it is a script error (exit 2)\n"
    "  --unsafe-lua      open Lua's standard libraries (runs may not replay)\n"
    "  --paranoid        check the Raft and MVCC cores' invariants after every event\n"
    "                    (default: FAULTLINE_PARANOID=1 in the environment)\n"
    "  --target T        sim (default): the simulator; etcd: a real etcd cluster\n"
    "                    ($FL_ETCD or etcd on PATH), wall-clock paced, no digest\n"
    "                    live: our members, each its own process (faultline member),\n"
    "                    over loopback TCP, wall-clock paced, no digest\n"
    "  --workdir DIR     etcd/live target: members' data and logs in DIR (kept)\n"
    "  --keep            etcd/live target: keep the temporary work directory\n"
    "\n"
    "exit codes: 0 pass, 1 violation, 2 bad input or script error, 3 internal error,\n"
    "timeout or interrupted, 4 unknown\n";

/* What was given already: value options and flags may appear once. */
struct run_seen {
    bool seed, db, report, json, unsafe_lua, timeout, lua_mem_mb, paranoid, target, workdir, keep;
};

static int parse_args(int argc, char **argv, struct run_args *a)
{
    memset(a, 0, sizeof *a);
    struct run_seen seen = {0};
    a->o.seed = 1;
    a->o.db_path = "faultline.db";
    a->o.bugs = a->bugs;
    a->o.timeout_s = SCN_TIMEOUT_S_DEFAULT;
    a->lua_mem_mb = SCN_LUA_MEM_MB_DEFAULT;
    const char *env = getenv("FAULTLINE_PARANOID");
    a->o.paranoid = env && env[0] && strcmp(env, "0") != 0;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        bool has_val = i + 1 < argc;
        int rc = 0;
        if (!strcmp(o, "--seed")) {
            if ((rc = cli_value_once("run", o, has_val, "a number", &seen.seed)) ||
                (rc = cli_u64_arg("run", o, argv[++i], 0, UINT64_MAX, &a->o.seed)))
                return rc;
        } else if (!strcmp(o, "--db")) {
            if ((rc = cli_value_once("run", o, has_val, "a file", &seen.db)) ||
                (rc = cli_db_arg("run", o, argv[++i])))
                return rc;
            a->o.db_path = argv[i];
        } else if (!strcmp(o, "--report")) {
            if ((rc = cli_value_once("run", o, has_val, "a directory", &seen.report)) ||
                (rc = cli_output_arg("run", o, argv[i + 1], true)))
                return rc;
            a->report = argv[++i];
        } else if (!strcmp(o, "--bug")) {
            if (!has_val)
                return cli_usage_error("run: --bug needs a name (see faultline list bugs)");
            if ((rc = cli_bug_arg("run", argv[++i], a->bugs, &a->o.bug_count, RUN_BUGS_MAX)))
                return rc;
        } else if (!strcmp(o, "--timeout")) {
            if ((rc = cli_value_once("run", o, has_val, "seconds", &seen.timeout)) ||
                (rc = cli_seconds_arg("run", o, argv[++i], 1e6, &a->o.timeout_s)))
                return rc;
        } else if (!strcmp(o, "--lua-mem-mb")) {
            if ((rc = cli_value_once("run", o, has_val, "a number of MiB", &seen.lua_mem_mb)) ||
                (rc = cli_u64_arg("run", o, argv[++i], 1, RUN_LUA_MEM_MB_MAX, &a->lua_mem_mb)))
                return rc;
        } else if (!strcmp(o, "--target")) {
            if ((rc = cli_value_once("run", o, has_val, "sim, etcd or live", &seen.target)))
                return rc;
            a->o.target = run_target_find(argv[++i]);
            if (a->o.target < 0)
                return cli_usage_error("run: unknown target '%s' (sim, etcd or live)", argv[i]);
        } else if (!strcmp(o, "--workdir")) {
            if ((rc = cli_value_once("run", o, has_val, "a directory", &seen.workdir)))
                return rc;
            a->o.workdir = argv[++i];
        } else if (!strcmp(o, "--keep")) {
            if ((rc = cli_once("run", o, &seen.keep)))
                return rc;
            a->o.keep = true;
        } else if (!strcmp(o, "--help") || !strcmp(o, "-h")) {
            a->help = true;
            return 0;
        } else if (!strcmp(o, "--json")) {
            if ((rc = cli_once("run", o, &seen.json)))
                return rc;
            a->json = true;
        } else if (!strcmp(o, "--unsafe-lua")) {
            if ((rc = cli_once("run", o, &seen.unsafe_lua)))
                return rc;
            a->o.unsafe_lua = true;
        } else if (!strcmp(o, "--paranoid")) {
            if ((rc = cli_once("run", o, &seen.paranoid)))
                return rc;
            a->o.paranoid = a->paranoid_given = true;
        } else if ((rc = cli_scenario_arg("run", o, &a->o.path))) {
            return rc;
        }
    }
    if ((a->o.workdir || a->o.keep) && a->o.target == RUN_TARGET_SIM)
        return cli_usage_error("run: --workdir and --keep need --target etcd or live");
    if (a->o.bug_count && a->o.target == RUN_TARGET_ETCD)
        return cli_usage_error("run: --bug: not available on --target %s: bug switches exist "
                               "only in our own members (sim, live)",
                               run_target_name(a->o.target));
    if (!a->o.path)
        return cli_missing("run", "missing scenario");
    a->o.lua_mem_bytes = (size_t)a->lua_mem_mb << 20;
    return 0;
}

/* The replay command; for a violation (exit 1) also the command that shrinks it. Every
 * word is shell-quoted (harness/common/text.h): the line runs as printed. A swarm's
 * world comes back from the seed: one line before them says what it drew. */
static void print_replay(const struct run_args *a, int code, const json_t *s)
{
    struct fl_buf b;
    fl_buf_init(&b);
    struct fl_buf sw;
    fl_buf_init(&sw);
    run_swarm_brief(json_object_get(s, "swarm"), &sw);
    if (sw.len)
        fl_buf_printf(&b, "swarm: %s\n", fl_buf_cstr(&sw));
    fl_buf_close(&sw);
    for (int shrink = 0; shrink < 2; shrink++) {
        if (shrink && (code != 1 || a->o.unsafe_lua || a->o.target != RUN_TARGET_SIM))
            break;
        fl_buf_printf(&b, "%s: faultline %s ", shrink ? "shrink" : "replay",
                      shrink ? "shrink" : "run");
        fl_shell_word(&b, a->o.path);
        fl_buf_printf(&b, " --seed %" PRIu64, a->o.seed);
        for (int i = 0; i < a->o.bug_count; i++) {
            fl_buf_printf(&b, " --bug ");
            fl_shell_word(&b, a->bugs[i]);
        }
        if (a->o.unsafe_lua)
            fl_buf_printf(&b, " --unsafe-lua");
        if (!shrink && a->paranoid_given)
            fl_buf_printf(&b, " --paranoid"); /* given: FAULTLINE_PARANOID stays as it is */
        if (!shrink && a->lua_mem_mb != SCN_LUA_MEM_MB_DEFAULT)
            fl_buf_printf(&b, " --lua-mem-mb %" PRIu64, a->lua_mem_mb);
        if (a->o.target != RUN_TARGET_SIM)
            fl_buf_printf(&b, " --target %s  # a live run: not deterministic, may differ",
                          run_target_name(a->o.target));
        fl_buf_printf(&b, "\n");
    }
    fputs(fl_buf_cstr(&b), stderr);
    fl_buf_close(&b);
}

static void print_human(const json_t *s)
{
    json_t *ops = json_object_get(s, "ops"), *checks = json_object_get(s, "checks");
    uint64_t seed = 0;
    hist_seed_from_json(json_object_get(s, "seed"), &seed); /* unsigned 64-bit */
    char *scenario = fl_term_dup(json_string_value(json_object_get(s, "scenario")));
    fprintf(stdout, "%s seed %llu: %s\n", scenario, (unsigned long long)seed,
            json_string_value(json_object_get(s, "verdict")));
    free(scenario);
    fprintf(stdout,
            "  simulated %" JSON_INTEGER_FORMAT " ms in %" JSON_INTEGER_FORMAT
            " ms; ops %" JSON_INTEGER_FORMAT " (ok %" JSON_INTEGER_FORMAT
            ", fail %" JSON_INTEGER_FORMAT ", unknown %" JSON_INTEGER_FORMAT ")"
            "; faults %zu; leaders %zu\n",
            json_integer_value(json_object_get(s, "sim_ms")),
            json_integer_value(json_object_get(s, "wall_ms")),
            json_integer_value(json_object_get(ops, "total")),
            json_integer_value(json_object_get(ops, "ok")),
            json_integer_value(json_object_get(ops, "fail")),
            json_integer_value(json_object_get(ops, "unknown")),
            json_array_size(json_object_get(s, "faults")),
            json_array_size(json_object_get(s, "leaders")));
    static const char *const names[] = {"linearizability", "watch",    "raft_safety",
                                        "converge",        "liveness", "expect"};
    for (size_t i = 0; i < FL_ARRAY_LEN(names); i++) {
        json_t *c = json_object_get(checks, names[i]);
        if (c)
            fprintf(stdout, "  %-16s %s\n", names[i],
                    json_string_value(json_object_get(c, "verdict")));
    }
    json_t *shrink = json_object_get(s, "shrink");
    if (shrink) {
        /* a shrunk scenario: say what its directive changed */
        char *text = json_dumps(shrink, JSON_COMPACT);
        fprintf(stdout, "  shrink{}         %s\n", text ? text : "");
        free(text);
    }
    const char *digest = json_string_value(json_object_get(s, "digest"));
    if (digest)
        fprintf(stdout, "digest: %s\n", digest);
    else if (json_object_get(s, "etcd_version"))
        fprintf(stdout, "digest: none (target %s, etcd %s: a live run is not deterministic)\n",
                json_string_value(json_object_get(s, "target")),
                json_string_value(json_object_get(s, "etcd_version")));
    else
        fprintf(stdout, "digest: none (target %s: a live run is not deterministic)\n",
                json_string_value(json_object_get(s, "target")));
}

int cmd_run(int argc, char **argv)
{
    struct run_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc)
        return rc;
    if (a.help) {
        fputs(cmd_run_usage, stdout);
        return FL_EXIT_PASS;
    }
    hist_sigint_install();
    struct scn_result res;
    int code = scn_run(&a.o, &res);
    json_t *s = res.run.summary;
    if (res.error[0]) {
        /* a script's error text: no raw control bytes to the terminal */
        struct fl_buf e;
        fl_buf_init(&e);
        fl_term_escape(&e, res.error, strlen(res.error), FL_TERM_KEEP_NEWLINES);
        fprintf(stderr, "%s%s\n", s ? "" : "faultline: ", fl_buf_cstr(&e));
        fl_buf_close(&e);
    }
    if (!s) {
        /* the run never started (missing scenario, unwritable db): still one object */
        if (a.json) {
            s = json_object();
            json_object_set_new(s, "scenario", json_string(a.o.path));
            json_object_set_new(s, "seed", hist_seed_json(a.o.seed));
            json_object_set_new(s, "digest", json_null());
            json_object_set_new(s, "verdict", json_string("error"));
            json_object_set_new(s, "error", json_string(res.error));
            char *text = json_dumps(s, JSON_COMPACT);
            puts(text);
            free(text);
            json_decref(s);
        }
        scn_result_close(&res);
        return code;
    }
    if (a.json) {
        char *text = json_dumps(s, JSON_COMPACT);
        puts(text);
        free(text);
    } else {
        print_human(s);
    }
    if (code != 0)
        print_replay(&a, code, s);
    if (a.report) {
        char err[512];
        if (rpt_write_dir(a.o.db_path, res.run.run_id, a.report, s, err, sizeof err)) {
            cli_usage_error("--report: %s", err);
            if (code == 0)
                code = 2;
        } else {
            char *dir = fl_term_dup(a.report);
            fprintf(stderr, "report: %s/index.html\n", dir);
            free(dir);
        }
    }
    fflush(stdout);
    scn_result_close(&res);
    return code;
}
