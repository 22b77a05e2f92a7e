/*
 * bench_curves.c: `faultline bench --curves` (issue 17 §2): how cost grows, not one
 * point. Three curves, each point measured in a child process of its own (fork), so
 * that its peak memory is its own (wait4's ru_maxrss) and a point that crashes or runs
 * out of memory is reported as such instead of taking the others with it:
 *
 *   e2e       one whole run (clients, recorder, checkers) at 3/5/7 members and
 *             8/64/512 clients, each client at the bench's per-client load (e2e_speedup runs 8
 *             clients at 100 ops/s in all: 12.5 ops/s each), 20 simulated s: simulated
 *             s per wall s, and operations per wall s;
 *   checkers  linearizability (the revision engine) and watch checking of generated
 *             histories of 100k, 1M and 10M operations: wall and CPU ms, verdicts;
 *   sweep     smoke-scenario runs per wall second at -j1 and -j2 (bench_sweep).
 *
 * A checker point also reports history_rss_mb (after generation, the generator freed)
 * and check_peak_rss_mb (VmHWM reset through /proc/self/clear_refs: the peak of checking
 * alone, the history included). None of this is counted in `bench`'s own peak_rss_mb:
 * the 90-second bench does not run it. FL_BENCH_CURVES_QUICK=1 shrinks every size (a
 * test of the machinery, not a figure). FL_BENCH_CURVES_OPS=N[,N...] runs only the
 * checker curve, at those sizes (for measuring one point, e.g. 10M, alone). Wall time is read here,
 * for figures only; nothing measured feeds a run.
 */
#include "harness/cli/bench.h"
#include "checkers/checkers.h"
#include "checkers/gen.h"
#include "harness/common/common.h"
#include "harness/run/run.h"

#include <errno.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define E2E_RATE_PER_8 100 /* ops/s over 8 clients, as e2e_speedup */

typedef json_t *(*point_fn)(const void *arg);

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Reads all of fd into a NUL-terminated malloc'ed string. */
static char *read_all(int fd)
{
    struct fl_buf b;
    fl_buf_init(&b);
    uint8_t chunk[4096];
    for (;;) {
        ssize_t n = read(fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        fl_buf_append(&b, chunk, (size_t)n);
    }
    fl_buf_append(&b, "", 1);
    return (char *)b.data;
}

/* Runs fn(arg) in a child; returns its JSON object with "peak_rss_mb" and "cpu_s" (the
 * child's own user + system CPU, a figure a loaded machine disturbs less than wall
 * time; a sweep's worker processes are not in it) added, or an object with "error"
 * saying how the child ended. */
static json_t *in_child(point_fn fn, const void *arg)
{
    int p[2];
    if (pipe(p) != 0)
        return json_pack("{s:s}", "error", "pipe failed");
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(p[0]);
        close(p[1]);
        return json_pack("{s:s}", "error", "fork failed");
    }
    if (pid == 0) {
        close(p[0]);
        json_t *o = fn(arg);
        char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;
        size_t n = s ? strlen(s) : 0, off = 0;
        while (off < n) {
            ssize_t w = write(p[1], s + off, n - off);
            if (w <= 0)
                _exit(3);
            off += (size_t)w;
        }
        _exit(s ? 0 : 4);
    }
    close(p[1]);
    char *text = read_all(p[0]);
    close(p[0]);
    int status = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR) {
    }
    json_t *o = NULL;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        o = json_loads(text, 0, NULL);
    if (!o) {
        char why[96];
        if (WIFSIGNALED(status))
            snprintf(why, sizeof why, "killed by signal %d", WTERMSIG(status));
        else
            snprintf(why, sizeof why, "exited %d", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        o = json_pack("{s:s}", "error", why);
    }
    free(text);
    json_object_set_new(o, "peak_rss_mb", json_real((double)ru.ru_maxrss / 1024.0));
    double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
                 (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
    json_object_set_new(o, "cpu_s", json_real(cpu));
    return o;
}

struct e2e_point {
    int members, clients;
    int64_t sim_ns;
};

static json_t *e2e_point(const void *arg)
{
    const struct e2e_point *e = arg;
    struct run_bench_result r;
    int rate = e->clients * E2E_RATE_PER_8 / 8;
    int rc = run_bench(1, e->members, e->clients, rate, e->sim_ns, &r);
    if (rc != FL_OK || r.wall_s <= 0)
        return json_pack("{s:i,s:i,s:s}", "members", e->members, "clients", e->clients, "error",
                         "run failed");
    return json_pack("{s:i,s:i,s:f,s:f,s:f,s:I,s:f}", "members", e->members, "clients", e->clients,
                     "sim_s", r.sim_s, "wall_s", r.wall_s, "e2e_speedup", r.sim_s / r.wall_s, "ops",
                     (json_int_t)r.ops_done, "ops_per_wall_s", (double)r.ops_done / r.wall_s);
}

/* The process's VmRSS or VmHWM (peak) in MB from /proc/self/status, -1 when unread. */
static double proc_status_mb(const char *field)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    char line[256];
    double mb = -1;
    size_t n = strlen(field);
    while (fgets(line, sizeof line, f))
        if (strncmp(line, field, n) == 0 && line[n] == ':') {
            mb = (double)strtoll(line + n + 1, NULL, 10) / 1024.0;
            break;
        }
    fclose(f);
    return mb;
}

/* Resets the process's peak RSS to its current RSS (Linux >= 4.0: "5" to clear_refs),
 * so that VmHWM afterwards is the peak of what follows. */
static bool reset_peak_rss(void)
{
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (!f)
        return false;
    bool ok = fputs("5", f) >= 0;
    return fclose(f) == 0 && ok;
}

static json_t *checker_point(const void *arg)
{
    uint32_t ops = *(const uint32_t *)arg;
    struct chk_gen_opts o;
    bench_gen_opts(&o, 20261201, ops, 0);
    struct chk_history h;
    chk_history_init(&h);
    double g0 = bench_now_s();
    if (chk_gen_history(&o, CHK_MUT_NONE, &h) != FL_OK) {
        chk_history_close(&h);
        return json_pack("{s:i,s:s}", "ops", (int)ops, "error", "generation failed");
    }
    /* The generator's own state is freed by now; what the checkers cost is the peak
     * from here on (the history included), not the generator's. */
    double history_mb = proc_status_mb("VmRSS");
    bool peak_reset = reset_peak_rss();
    struct chk_limits lim = {0};
    lim.engine = CHK_ENGINE_REVISION;
    double t0 = bench_now_s(), c0 = cpu_s();
    struct chk_lin_result r;
    chk_lin_check(&h, &lim, &r);
    double t1 = bench_now_s(), c1 = cpu_s();
    struct chk_watch_result w;
    chk_watch_check(&h, &r, &w);
    double t2 = bench_now_s(), c2 = cpu_s();
    json_t *j = json_pack("{s:I,s:I,s:f,s:f,s:f,s:s,s:f,s:f,s:s}", "ops", (json_int_t)h.op_count,
                          "events", (json_int_t)h.event_count, "generate_ms", (t0 - g0) * 1e3,
                          "lin_ms", (t1 - t0) * 1e3, "lin_cpu_ms", (c1 - c0) * 1e3, "lin_verdict",
                          chk_verdict_name(r.verdict), "watch_ms", (t2 - t1) * 1e3, "watch_cpu_ms",
                          (c2 - c1) * 1e3, "watch_verdict", chk_verdict_name(w.verdict));
    json_object_set_new(j, "subs", json_integer(h.sub_count));
    json_object_set_new(j, "kvs", json_integer(h.kv_count));
    json_object_set_new(j, "values", json_integer(h.values.count));
    json_object_set_new(j, "history_rss_mb", json_real(history_mb));
    json_object_set_new(j, "check_peak_rss_mb",
                        json_real(peak_reset ? proc_status_mb("VmHWM") : -1.0));
    chk_watch_result_close(&w);
    chk_lin_result_close(&r);
    chk_history_close(&h);
    return j;
}

static json_t *sweep_point(const void *arg)
{
    const struct bench_ctx *ctx = arg;
    json_t *o = json_object();
    bench_sweep(ctx, o);
    return o;
}

static bool quick(void)
{
    const char *q = getenv("FL_BENCH_CURVES_QUICK");
    return q && *q && strcmp(q, "0") != 0;
}

static json_t *e2e_curve(bool q)
{
    static const int members[] = {3, 5, 7};
    static const int clients[] = {8, 64, 512};
    json_t *a = json_array();
    for (size_t i = 0; i < FL_ARRAY_LEN(members); i++)
        for (size_t k = 0; k < FL_ARRAY_LEN(clients); k++) {
            struct e2e_point e = {members[i], clients[k], (q ? 1 : 20) * FL_S};
            fprintf(stderr, "faultline: bench --curves: e2e %d members, %d clients\n", e.members,
                    e.clients);
            json_array_append_new(a, in_child(e2e_point, &e));
        }
    return a;
}

/* FL_BENCH_CURVES_OPS's sizes into sizes[max]; how many (0: unset or malformed). */
static size_t env_sizes(uint32_t *sizes, size_t max)
{
    const char *s = getenv("FL_BENCH_CURVES_OPS");
    size_t n = 0;
    while (s && *s && n < max) {
        char *end;
        unsigned long long v = strtoull(s, &end, 10);
        if (end == s || v == 0 || v > UINT32_MAX || (*end && *end != ','))
            return 0;
        sizes[n++] = (uint32_t)v;
        s = *end ? end + 1 : end;
    }
    return n;
}

static json_t *checker_curve(bool q)
{
    static const uint32_t full[] = {100000, 1000000, 10000000};
    static const uint32_t small[] = {1000, 10000};
    uint32_t given[8];
    size_t ng = env_sizes(given, FL_ARRAY_LEN(given));
    const uint32_t *sizes = ng ? given : q ? small : full;
    size_t n = ng ? ng : q ? FL_ARRAY_LEN(small) : FL_ARRAY_LEN(full);
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++) {
        fprintf(stderr, "faultline: bench --curves: checkers at %u ops\n", sizes[i]);
        json_array_append_new(a, in_child(checker_point, &sizes[i]));
    }
    return a;
}

json_t *bench_curves(const struct bench_ctx *ctx)
{
    bool q = quick();
    uint32_t given[8];
    bool only_checkers = env_sizes(given, FL_ARRAY_LEN(given)) > 0;
    json_t *out = json_object();
    json_object_set_new(out, "quick", json_boolean(q));
    json_object_set_new(out, "e2e", only_checkers ? json_array() : e2e_curve(q));
    json_object_set_new(out, "checkers", checker_curve(q));
    if (only_checkers)
        return out;
    fprintf(stderr, "faultline: bench --curves: sweep -j1 and -j2\n");
    json_object_set_new(out, "sweep", in_child(sweep_point, ctx));
    return out;
}

static double num(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    return json_is_number(v) ? json_number_value(v) : -1;
}

void bench_curves_print(json_t *c)
{
    size_t i;
    json_t *p;
    printf("e2e (%.1f ops/s per client)\n%8s %8s %12s %10s %8s %12s\n", E2E_RATE_PER_8 / 8.0,
           "members", "clients", "speedup", "ops", "cpu_s", "peak_rss_mb");
    json_array_foreach(json_object_get(c, "e2e"), i, p)
    {
        if (json_object_get(p, "error"))
            printf("%8d %8d   %s\n", (int)num(p, "members"), (int)num(p, "clients"),
                   json_string_value(json_object_get(p, "error")));
        else
            printf("%8d %8d %12.1f %10.0f %8.2f %12.1f\n", (int)num(p, "members"),
                   (int)num(p, "clients"), num(p, "e2e_speedup"), num(p, "ops"), num(p, "cpu_s"),
                   num(p, "peak_rss_mb"));
    }
    printf("checkers\n%10s %10s %10s %10s %10s %12s %12s %12s\n", "ops", "lin_ms", "lin_cpu_ms",
           "watch_ms", "watch_cpu_ms", "history_mb", "check_peak_mb", "peak_rss_mb");
    json_array_foreach(json_object_get(c, "checkers"), i, p)
    {
        if (json_object_get(p, "error"))
            printf("%10.0f   %s\n", num(p, "ops"), json_string_value(json_object_get(p, "error")));
        else
            printf("%10.0f %10.1f %10.1f %10.1f %10.1f %12.1f %12.1f %12.1f\n", num(p, "ops"),
                   num(p, "lin_ms"), num(p, "lin_cpu_ms"), num(p, "watch_ms"),
                   num(p, "watch_cpu_ms"), num(p, "history_rss_mb"), num(p, "check_peak_rss_mb"),
                   num(p, "peak_rss_mb"));
    }
    json_t *s = json_object_get(c, "sweep");
    printf("sweep runs/s: -j1 %.2f, -j2 %.2f\n", num(s, "sweep_runs_per_s_j1"),
           num(s, "sweep_runs_per_s_j2"));
}
