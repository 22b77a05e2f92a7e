/*
 * cmd_bench.c: `faultline bench [--json] [--corpus DIR]` (DESIGN §7). It builds one
 * JSON object holding every key of the §7 table, in the table's order, each null until
 * the module that owns it measures it (bench_sim, bench_checkers, bench_mvcc,
 * bench_cluster, bench_sweep, each in its own bench_*.c), then adds the process-wide
 * figures this file owns: the raw history recorder insert rate (history_rows_per_s,
 * an extra key) and peak_rss_mb. With --json the object is the only thing on stdout;
 * otherwise a readable table with the targets.
 *
 * Wall-clock time is read here, for figures only; nothing measured feeds a run.
 */
#include "harness/cli/bench.h"
#include "harness/cli/cli.h"
#include "harness/common/common.h"
#include "harness/history/history.h"

#include <limits.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The stable keys of DESIGN §7, in its order, with the targets the table prints
 * (issue 17's, which replaced the first ones). */
static const struct {
    const char *key;
    const char *target;
} bench_keys[] = {
    {"sim_events_per_s", ">= 15,000,000"},
    {"cluster_messages_per_s", ">= 1,000,000"},
    {"idle_cluster_speedup", ">= 10,000"},
    {"raft_commits_per_s", ">= 300,000"},
    {"e2e_speedup", ">= 1000"},
    {"recorded_ops_per_s", ">= 100,000"},
    {"mvcc_puts_per_s", ">= 1,000,000"},
    {"lin_revision_ops_per_s", ">= 2,000,000"},
    {"porcupine_corpus_ms", "<= 120"},
    {"sweep_runs_per_s_j1", ""},
    {"sweep_runs_per_s_j2", ">= 1.9 x j1"},
    {"history_rows_per_s", "(extra) raw recorder inserts"},
    {"peak_rss_mb", "<= 512"},
};

/* Rows the recorder benchmark writes: enough for a steady rate, well under a second. */
#define BENCH_HIST_ROWS 200000

double bench_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

bool bench_exe_up(const char *self_exe, int up, char *out, size_t size)
{
    snprintf(out, size, "%s", self_exe);
    for (int i = 0; i < up; i++) {
        char *slash = strrchr(out, '/');
        if (!slash)
            return false;
        *slash = '\0';
    }
    return true;
}

static bool is_dir(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

/* The porcupine corpus: $FL_SHARED/corpus/porcupine, then ../shared/corpus/porcupine
 * from the current directory, then from the repo root (the binary is build/faultline,
 * so the root is the binary's parent folder's parent). Returns a malloc'ed path or
 * NULL. */
static char *find_corpus(const char *self_exe)
{
    char path[PATH_MAX + 64];
    const char *shared = getenv("FL_SHARED");
    if (shared && *shared) {
        snprintf(path, sizeof path, "%s/corpus/porcupine", shared);
        if (is_dir(path))
            return fl_strdup(path);
    }
    if (is_dir("../shared/corpus/porcupine"))
        return fl_strdup("../shared/corpus/porcupine");
    char root[PATH_MAX];
    if (self_exe && bench_exe_up(self_exe, 2, root, sizeof root)) {
        snprintf(path, sizeof path, "%s/../shared/corpus/porcupine", root);
        if (is_dir(path))
            return fl_strdup(path);
    }
    return NULL;
}

/* One op row as a saturated cluster would record it: 100-byte values on 1,000 keys. */
static int bench_hist_row(struct hist_db *h, int64_t i, const char *value)
{
    char key[16], req[64], resp[64];
    snprintf(key, sizeof key, "key-%04d", (int)(i % 1000));
    snprintf(req, sizeof req, "{\"op\":\"put\",\"key\":\"%s\"}", key);
    snprintf(resp, sizeof resp, "{\"rev\":%lld}", (long long)(i + 2));
    struct hist_op op;
    hist_op_init(&op);
    op.client_id = i % 8;
    op.node_id = i % 3 + 1;
    op.kind = "put";
    op.key = key;
    op.key_len = strlen(key);
    op.value = value;
    op.value_len = 100;
    op.request = req;
    op.call_ns = i * 1000;
    op.return_ns = i * 1000 + 700;
    op.status = HIST_STATUS_OK;
    op.revision = i + 2;
    op.response = resp;
    return hist_op_add(h, &op, NULL);
}

/* history_rows_per_s: ops rows inserted (prepared statement, batched transactions,
 * digest folding, WAL) per wall second into a fresh database in $TMPDIR. */
static void bench_history(const struct bench_ctx *ctx, json_t *out)
{
    (void)ctx;
    const char *base = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char dir[PATH_MAX], path[PATH_MAX + 32], err[512];
    snprintf(dir, sizeof dir, "%s/fl_bench_XXXXXX", base);
    if (!mkdtemp(dir)) {
        fprintf(stderr, "faultline: bench: cannot create a folder in %s\n", base);
        return;
    }
    snprintf(path, sizeof path, "%s/bench.db", dir);
    struct hist_db *h = NULL;
    struct fl_digest d;
    fl_digest_init(&d);
    char value[101];
    memset(value, 'v', 100);
    value[100] = 0;
    int rc = hist_open(path, HIST_OPEN_WRITE, &h, err, sizeof err);
    double t0 = bench_now_s();
    if (!rc)
        rc = hist_run_begin(h, "bench", 1, NULL, &d, NULL);
    for (int64_t i = 0; !rc && i < BENCH_HIST_ROWS; i++)
        rc = bench_hist_row(h, i, value);
    if (!rc)
        rc = hist_run_end(h, BENCH_HIST_ROWS * INT64_C(1000), 0, NULL, "pass");
    double dt = bench_now_s() - t0;
    if (rc)
        fprintf(stderr, "faultline: bench: %s\n", h ? hist_errmsg(h) : err);
    else if (dt > 0)
        json_object_set_new(out, "history_rows_per_s",
                            json_integer((json_int_t)(BENCH_HIST_ROWS / dt)));
    hist_close(h);
    fl_digest_close(&d);
    hist_remove(path);
    rmdir(dir);
}

static void print_table(json_t *obj)
{
    printf("%-26s %16s   %s\n", "figure", "value", "target");
    const char *key;
    json_t *v;
    json_object_foreach(obj, key, v)
    {
        const char *target = "";
        for (size_t i = 0; i < FL_ARRAY_LEN(bench_keys); i++)
            if (!strcmp(bench_keys[i].key, key))
                target = bench_keys[i].target;
        if (json_is_integer(v))
            printf("%-26s %16lld   %s\n", key, (long long)json_integer_value(v), target);
        else if (json_is_real(v))
            printf("%-26s %16.2f   %s\n", key, json_real_value(v), target);
        else if (json_is_null(v))
            printf("%-26s %16s   %s\n", key, "(not measured)", target);
        else {
            char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
            printf("%-26s %16s   %s\n", key, s ? s : "?", target);
            free(s);
        }
    }
}

/* The groups `--only` accepts, each one bench_*.c function (or this file's own), in
 * the order they run. */
static const struct {
    const char *name;
    void (*run)(const struct bench_ctx *ctx, json_t *out);
} bench_groups[] = {
    {"sim", bench_sim},     {"checkers", bench_checkers}, {"mvcc", bench_mvcc},
    {"idle", bench_idle},   {"cluster", bench_cluster},   {"e2e", bench_e2e},
    {"sweep", bench_sweep}, {"history", bench_history},
};

static bool group_known(const char *g, size_t n)
{
    for (size_t i = 0; i < FL_ARRAY_LEN(bench_groups); i++)
        if (strlen(bench_groups[i].name) == n && !strncmp(bench_groups[i].name, g, n))
            return true;
    return false;
}

/* True when `only` (a comma-separated group list, or NULL for all) names `group`. */
static bool group_on(const char *only, const char *group)
{
    if (!only)
        return true;
    size_t gl = strlen(group);
    for (const char *p = only; *p;) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n == gl && !strncmp(p, group, n))
            return true;
        p += n + (e ? 1 : 0);
    }
    return false;
}

const char cmd_bench_usage[] =
    "usage: faultline bench [--json] [--corpus DIR] [--only GROUP[,GROUP...]]\n"
    "       faultline bench --curves [--json]\n"
    "  --json    print one JSON object (the keys of DESIGN section 7) on stdout\n"
    "  --corpus  the porcupine corpus folder (default: ../shared/corpus/porcupine)\n"
    "  --only    run only these figure groups (a profiling aid); other keys stay null:\n"
    "            sim, checkers, mvcc, idle, cluster, e2e, sweep, history\n"
    "  --curves  instead of the figures: how cost grows (e2e at 3/5/7 members and 8/64\n"
    "            clients; checking 100k/1M/10M operations; sweep -j1/-j2), each point\n"
    "            in a child process with its own peak memory (several minutes)\n"
    "environment: FL_BENCH_SIM_MS=N runs the saturated cluster for N simulated ms\n"
    "  instead of 3 wall seconds (the same work on every build: for profilers);\n"
    "  FL_BENCH_CURVES_QUICK=1 shrinks every --curves size (tests the machinery only)\n";

static int parse_args(int argc, char **argv, bool *json, const char **corpus, const char **only,
                      bool *curves)
{
    bool seen_json = false, seen_corpus = false, seen_only = false, seen_curves = false;
    for (int i = 1; i < argc; i++) {
        int rc = 0;
        if (!strcmp(argv[i], "--json")) {
            if ((rc = cli_once("bench", argv[i], &seen_json)))
                return rc;
            *json = true;
        } else if (!strcmp(argv[i], "--curves")) {
            if ((rc = cli_once("bench", argv[i], &seen_curves)))
                return rc;
            *curves = true;
        } else if (!strcmp(argv[i], "--corpus")) {
            if (i + 1 >= argc)
                return cli_usage_error("bench: --corpus needs a folder");
            if ((rc = cli_once("bench", argv[i], &seen_corpus)))
                return rc;
            *corpus = argv[++i];
            if (!is_dir(*corpus))
                return cli_usage_error("bench: corpus folder '%s' does not exist", *corpus);
        } else if (!strcmp(argv[i], "--only")) {
            if (i + 1 >= argc)
                return cli_usage_error("bench: --only needs a group list (sim, checkers, "
                                       "mvcc, idle, cluster, e2e, sweep, history)");
            if ((rc = cli_once("bench", argv[i], &seen_only)))
                return rc;
            *only = argv[++i];
            for (const char *p = *only;;) {
                const char *e = strchr(p, ',');
                size_t n = e ? (size_t)(e - p) : strlen(p);
                if (!group_known(p, n))
                    return cli_usage_error("bench: unknown group '%.*s' in --only (known: "
                                           "sim, checkers, mvcc, idle, cluster, e2e, sweep, "
                                           "history)",
                                           (int)n, p);
                if (!e)
                    break;
                p = e + 1;
            }
        } else {
            return cli_unknown_option("bench", argv[i]);
        }
    }
    if (*curves && (seen_only || seen_corpus))
        return cli_usage_error("bench: --curves takes no --only or --corpus");
    return FL_EXIT_PASS;
}

int cmd_bench(int argc, char **argv)
{
    bool json = false, curves = false;
    const char *corpus_arg = NULL, *only = NULL;
    int rc = parse_args(argc, argv, &json, &corpus_arg, &only, &curves);
    if (rc)
        return rc;

    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 0] = 0;
    char *corpus = corpus_arg ? fl_strdup(corpus_arg) : find_corpus(n > 0 ? self : NULL);
    struct bench_ctx ctx = {.corpus_dir = corpus, .self_exe = n > 0 ? self : NULL};
    if (curves) {
        json_t *c = bench_curves(&ctx);
        if (json) {
            json_t *o = json_pack("{s:o}", "curves", c);
            char *s = json_dumps(o, JSON_INDENT(2));
            if (s)
                puts(s);
            free(s);
            json_decref(o);
        } else {
            bench_curves_print(c);
            json_decref(c);
        }
        free(corpus);
        return FL_EXIT_PASS;
    }
    if (!json)
        fprintf(stderr, "faultline: bench: corpus %s\n", corpus ? corpus : "(none)");

    json_t *out = json_object();
    for (size_t i = 0; i < FL_ARRAY_LEN(bench_keys); i++)
        json_object_set_new(out, bench_keys[i].key, json_null());
    for (size_t i = 0; i < FL_ARRAY_LEN(bench_groups); i++)
        if (group_on(only, bench_groups[i].name))
            bench_groups[i].run(&ctx, out);
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) == 0) /* ru_maxrss is in KiB on Linux */
        json_object_set_new(out, "peak_rss_mb", json_real((double)ru.ru_maxrss / 1024.0));

    if (json) {
        char *s = json_dumps(out, JSON_INDENT(2));
        if (s)
            puts(s);
        free(s);
    } else {
        print_table(out);
    }
    json_decref(out);
    free(corpus);
    return FL_EXIT_PASS;
}
