/*
 * cmd_diff.c: `faultline diff SCENARIO.lua [--seeds A..B] [--targets sim,etcd] [--db FILE]
 * [--json] [--timeout S]` (issue 16 §4). Runs one scenario on several targets, seed by
 * seed, and shows side by side what each target said: the verdict, each check's
 * verdict, each expect (matched by line and message) and each client's figures
 * (availability, longest stall, retries). Rows where the targets disagree on a verdict
 * (run, check or expect) are marked '*'; the figures are shown, never judged (the
 * simulator's time is simulated, etcd's is wall time). A target the scenario cannot run
 * on (a function it refuses, exit 2) is a disagreement too, with its reason.
 *
 * Exit codes: 0 every seed agrees, 1 some seed differs, 2 bad input (also a scenario
 * that is an error on every target), 3 internal error. Each run goes into --db (default:
 * a temporary database, removed at the end), one run per (seed, target).
 *
 * On etcd the transport's keepalive pings are answered by the member's bridge process
 * (etcd's JSON gateway speaks HTTP/1.1: no HTTP/2 pings), only while the member
 * answers the periodic health calls (Maintenance Status every 100 ms); they stop when
 * the member is paused, killed, cut from the client or does not serve, as etcd's
 * would. The note is printed with every etcd diff.
 */
#include "harness/cli/cli.h"
#include "harness/common/common.h"
#include "harness/common/exit_codes.h"
#include "harness/common/text.h"
#include "harness/history/history.h"
#include "harness/lua/scn.h"
#include "harness/run/run.h"
#include "harness/sweep/sweep.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <unistd.h>

#define DIFF_TARGETS_MAX 2
#define DIFF_SEEDS_MAX   10000

const char cmd_diff_usage[] =
    "usage: faultline diff SCENARIO.lua [--seeds A..B] [--targets sim,etcd] [--db FILE]\n"
    "       [--json] [--timeout SECONDS]\n"
    "\n"
    "  --seeds A..B      seeds to run, inclusive (default 1..1)\n"
    "  --targets LIST    two targets, comma-separated (default sim,etcd)\n"
    "  --db FILE         keep every run in FILE (default: a temporary database)\n"
    "  --json            one JSON object on stdout: per seed, each target's summary\n"
    "                    items and the rows that differ\n"
    "  --timeout S       wall-clock limit of each run (default 600)\n"
    "\n"
    "exit codes: 0 the targets agree, 1 they differ, 2 bad input, 3 internal error\n";

struct diff_args {
    const char *scenario;
    uint64_t first, last;
    int targets[DIFF_TARGETS_MAX];
    const char *db;
    bool json;
    double timeout_s;
};

static int parse_targets(const char *s, int *out)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%s", s);
    char *comma = strchr(buf, ',');
    if (!comma)
        return cli_usage_error("diff: --targets wants two targets, e.g. sim,etcd");
    *comma = '\0';
    out[0] = run_target_find(buf);
    out[1] = run_target_find(comma + 1);
    if (out[0] < 0 || out[1] < 0 || out[0] == out[1])
        return cli_usage_error("diff: --targets '%s': two different targets of sim, etcd", s);
    return 0;
}

static int parse_args(int argc, char **argv, struct diff_args *a)
{
    memset(a, 0, sizeof *a);
    a->first = a->last = 1;
    a->targets[0] = RUN_TARGET_SIM;
    a->targets[1] = RUN_TARGET_ETCD;
    a->timeout_s = SCN_TIMEOUT_S_DEFAULT;
    bool seen_seeds = false, seen_targets = false, seen_db = false, seen_json = false,
         seen_timeout = false;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        bool has_val = i + 1 < argc;
        int rc = 0;
        if (!strcmp(o, "--seeds")) {
            if ((rc = cli_value_once("diff", o, has_val, "A..B", &seen_seeds)))
                return rc;
            if (!sweep_parse_seeds(argv[++i], &a->first, &a->last))
                return cli_usage_error("diff: --seeds '%s': want A..B with A <= B", argv[i]);
            if (a->last - a->first >= DIFF_SEEDS_MAX)
                return cli_usage_error("diff: --seeds: at most %d seeds", DIFF_SEEDS_MAX);
        } else if (!strcmp(o, "--targets")) {
            if ((rc = cli_value_once("diff", o, has_val, "a list, e.g. sim,etcd", &seen_targets)) ||
                (rc = parse_targets(argv[++i], a->targets)))
                return rc;
        } else if (!strcmp(o, "--db")) {
            if ((rc = cli_value_once("diff", o, has_val, "a file", &seen_db)) ||
                (rc = cli_db_arg("diff", o, argv[++i])))
                return rc;
            a->db = argv[i];
        } else if (!strcmp(o, "--timeout")) {
            if ((rc = cli_value_once("diff", o, has_val, "seconds", &seen_timeout)) ||
                (rc = cli_seconds_arg("diff", o, argv[++i], 1e6, &a->timeout_s)))
                return rc;
        } else if (!strcmp(o, "--json")) {
            if ((rc = cli_once("diff", o, &seen_json)))
                return rc;
            a->json = true;
        } else if ((rc = cli_scenario_arg("diff", o, &a->scenario))) {
            return rc;
        }
    }
    return a->scenario ? 0 : cli_missing("diff", "missing scenario");
}

/* What one run said, in the rows diff compares: {"verdict": ..., "check linearizability":
 * ..., "expect L12 message": ...}, and the per-client figures. */
struct side {
    int exit_code;
    json_t *rows;    /* name -> verdict text */
    json_t *clients; /* array of {id, balancer, availability, max_stall_ms, retries} */
    char error[1024];
};

static void side_close(struct side *s)
{
    json_decref(s->rows);
    json_decref(s->clients);
}

static void side_fill(struct side *sd, const struct scn_result *res)
{
    sd->rows = json_object();
    sd->clients = json_array();
    sd->exit_code = res->exit_code;
    snprintf(sd->error, sizeof sd->error, "%s", res->error);
    const json_t *s = res->run.summary;
    json_object_set_new(
        sd->rows, "verdict",
        json_string(s ? json_string_value(json_object_get(s, "verdict")) : "error"));
    if (!s)
        return;
    const char *name;
    json_t *c;
    json_object_foreach(json_object_get(s, "checks"), name, c)
    {
        if (!strcmp(name, "expect"))
            continue;
        char key[64];
        snprintf(key, sizeof key, "check %s", name);
        json_object_set_new(sd->rows, key,
                            json_string(json_string_value(json_object_get(c, "verdict"))));
    }
    json_t *off = json_object_get(s, "not_on_target"), *v;
    size_t i;
    json_array_foreach(off, i, v)
    {
        char key[64];
        snprintf(key, sizeof key, "check %s", json_string_value(v));
        json_object_set_new(sd->rows, key, json_string("not on target"));
    }
    json_t *items =
        json_object_get(json_object_get(json_object_get(s, "checks"), "expect"), "items");
    json_array_foreach(items, i, v)
    {
        char key[200];
        snprintf(key, sizeof key, "expect L%lld %.160s",
                 (long long)json_integer_value(json_object_get(v, "line")),
                 json_string_value(json_object_get(v, "message")));
        /* one row per (line, message): a claim made several times keeps its worst */
        const char *now = json_string_value(json_object_get(sd->rows, key));
        const char *verdict = json_string_value(json_object_get(v, "verdict"));
        if (!now || strcmp(verdict ? verdict : "", "pass") != 0)
            json_object_set_new(sd->rows, key, json_string(verdict ? verdict : "?"));
    }
    json_array_foreach(json_object_get(s, "clients"), i, v)
    {
        json_t *k = json_object();
        static const char *const keep[] = {"id",      "balancer", "availability", "max_stall_ms",
                                           "retries", "ok",       "fail",         "unknown"};
        for (size_t j = 0; j < FL_ARRAY_LEN(keep); j++)
            if (json_object_get(v, keep[j]))
                json_object_set(k, keep[j], json_object_get(v, keep[j]));
        json_array_append_new(sd->clients, k);
    }
}

static int run_one(const struct diff_args *a, uint64_t seed, int target, const char *db,
                   struct side *out)
{
    struct scn_options o = {.path = a->scenario,
                            .seed = seed,
                            .db_path = db,
                            .timeout_s = a->timeout_s,
                            .lua_mem_bytes = (size_t)SCN_LUA_MEM_MB_DEFAULT << 20,
                            .target = target};
    struct scn_result res;
    scn_run(&o, &res);
    side_fill(out, &res);
    scn_result_close(&res);
    return out->exit_code;
}

static const char *row_of(const struct side *s, const char *key)
{
    const char *v = json_string_value(json_object_get(s->rows, key));
    return v ? v : "-";
}

/* Rows of both sides in a stable order: verdict, checks, expects (by line). */
static json_t *all_keys(const struct side *sd, int n)
{
    json_t *keys = json_array();
    json_array_append_new(keys, json_string("verdict"));
    for (int pass = 0; pass < 2; pass++) {
        const char *prefix = pass == 0 ? "check " : "expect ";
        for (int t = 0; t < n; t++) {
            const char *k;
            json_t *v;
            json_object_foreach(sd[t].rows, k, v)
            {
                (void)v;
                if (strncmp(k, prefix, strlen(prefix)))
                    continue;
                bool have = false;
                size_t i;
                json_t *x;
                json_array_foreach(keys, i, x) have = have || !strcmp(json_string_value(x), k);
                if (!have)
                    json_array_append_new(keys, json_string(k));
            }
        }
    }
    return keys;
}

/* A row differs when both sides judged it and disagree, or one side could not run. */
static bool row_differs(const char *a, const char *b)
{
    if (!strcmp(a, "not on target") || !strcmp(b, "not on target"))
        return false;
    return strcmp(a, b) != 0;
}

static bool print_seed(const struct diff_args *a, uint64_t seed, const struct side *sd, json_t *out)
{
    json_t *keys = all_keys(sd, DIFF_TARGETS_MAX), *differ = json_array(), *k;
    size_t i;
    const char *t0 = run_target_name(a->targets[0]), *t1 = run_target_name(a->targets[1]);
    if (!a->json)
        printf("seed %" PRIu64 "\n  %-52s %-14s %s\n", seed, "", t0, t1);
    json_array_foreach(keys, i, k)
    {
        const char *key = json_string_value(k), *v0 = row_of(&sd[0], key),
                   *v1 = row_of(&sd[1], key);
        bool d = row_differs(v0, v1);
        if (d)
            json_array_append_new(differ, json_string(key));
        if (!a->json)
            printf("%c %-52.52s %-14s %s\n", d ? '*' : ' ', key, v0, v1);
    }
    for (int t = 0; t < DIFF_TARGETS_MAX; t++)
        if (sd[t].exit_code == FL_EXIT_USAGE || sd[t].exit_code == FL_EXIT_INTERNAL) {
            if (!a->json)
                printf("  %s: %s\n", run_target_name(a->targets[t]), sd[t].error);
        }
    if (!a->json) {
        size_t n = FL_MAX(json_array_size(sd[0].clients), json_array_size(sd[1].clients));
        for (size_t c = 0; c < n; c++) {
            printf("  client %zu", c + 1);
            for (int t = 0; t < DIFF_TARGETS_MAX; t++) {
                json_t *x = json_array_get(sd[t].clients, c);
                if (!x) {
                    printf("  | %s: -", run_target_name(a->targets[t]));
                    continue;
                }
                printf("  | %s %s: avail %.3f, stall %lld ms, retries %lld",
                       run_target_name(a->targets[t]),
                       json_string_value(json_object_get(x, "balancer")),
                       json_number_value(json_object_get(x, "availability")),
                       (long long)json_integer_value(json_object_get(x, "max_stall_ms")),
                       (long long)json_integer_value(json_object_get(x, "retries")));
            }
            printf("\n");
        }
    }
    bool agree = json_array_size(differ) == 0;
    if (out) {
        json_t *s = json_object();
        json_object_set_new(s, "seed", json_integer((json_int_t)seed));
        for (int t = 0; t < DIFF_TARGETS_MAX; t++) {
            json_t *o = json_object();
            json_object_set(o, "rows", sd[t].rows);
            json_object_set(o, "clients", sd[t].clients);
            json_object_set_new(o, "exit_code", json_integer(sd[t].exit_code));
            if (sd[t].error[0])
                json_object_set_new(o, "error", json_string(sd[t].error));
            json_object_set_new(s, run_target_name(a->targets[t]), o);
        }
        json_object_set_new(s, "differ", differ);
        json_array_append_new(out, s);
    } else {
        json_decref(differ);
    }
    json_decref(keys);
    return agree;
}

int cmd_diff(int argc, char **argv)
{
    struct diff_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc)
        return rc;
    if (access(a.scenario, R_OK) != 0)
        return cli_usage_error("diff: cannot read scenario '%s'", a.scenario);
    char tmp[4096] = "";
    const char *db = a.db;
    if (!db) {
        const char *dir = getenv("TMPDIR");
        snprintf(tmp, sizeof tmp, "%s/faultline-diff-XXXXXX", dir && *dir ? dir : "/tmp");
        int fd = mkstemp(tmp);
        if (fd < 0)
            return cli_usage_error("diff: cannot create a temporary database in %s",
                                   dir && *dir ? dir : "/tmp");
        close(fd);
        unlink(tmp); /* the recorder creates it */
        db = tmp;
    }
    hist_sigint_install();
    json_t *seeds = a.json ? json_array() : NULL;
    int differ = 0, errors_everywhere = 0, total = 0;
    for (uint64_t seed = a.first;; seed++) {
        struct side sd[DIFF_TARGETS_MAX];
        memset(sd, 0, sizeof sd);
        int errs = 0;
        for (int t = 0; t < DIFF_TARGETS_MAX; t++)
            errs += run_one(&a, seed, a.targets[t], db, &sd[t]) == FL_EXIT_USAGE;
        total++;
        if (errs == DIFF_TARGETS_MAX)
            errors_everywhere++;
        if (!print_seed(&a, seed, sd, seeds))
            differ++;
        for (int t = 0; t < DIFF_TARGETS_MAX; t++)
            side_close(&sd[t]);
        if (seed == a.last)
            break;
    }
    bool etcd = a.targets[0] == RUN_TARGET_ETCD || a.targets[1] == RUN_TARGET_ETCD;
    const char *note = "on etcd, keepalive is done by periodic health calls: the JSON gateway is "
                       "HTTP/1.1 (no HTTP/2 pings), so the member's bridge answers a ping only "
                       "while the member answered its last Maintenance Status poll (every "
                       "100 ms, 1 s timeout); pings stop when the member is paused, killed, "
                       "cut from the client or does not serve";
    if (a.json) {
        json_t *o = json_object();
        json_object_set_new(o, "scenario", json_string(a.scenario));
        json_object_set_new(
            o, "targets",
            json_pack("[ss]", run_target_name(a.targets[0]), run_target_name(a.targets[1])));
        json_object_set_new(o, "seeds", seeds);
        json_object_set_new(o, "differ", json_integer(differ));
        if (etcd)
            json_object_set_new(o, "note", json_string(note));
        char *text = json_dumps(o, JSON_COMPACT);
        puts(text);
        free(text);
        json_decref(o);
    } else {
        printf("%d of %d seeds differ\n", differ, total);
        if (etcd)
            printf("note: %s\n", note);
    }
    if (tmp[0])
        hist_remove(tmp);
    if (errors_everywhere == total)
        return FL_EXIT_USAGE;
    return differ ? FL_EXIT_FAIL : FL_EXIT_PASS;
}
