/*
 * bench_sweep.c: sweep throughput for `faultline bench` (DESIGN §7):
 * sweep_runs_per_s_j1 and sweep_runs_per_s_j2, smoke scenario runs per wall second in a
 * real sweep (one worker process per seed, spawned from ctx->self_exe, per-worker
 * databases merged at the end) with -j1 and -j2. Each figure sweeps a fixed number of
 * seeds (bounded so that both together stay well under 15 s here) into a temporary
 * database that is removed afterwards. The smoke scenario is looked up as
 * scenarios/smoke.lua in the current directory, then beside the binary's parent
 * folder (build/faultline -> scenarios/); without it the keys stay null.
 */
#include <malloc.h>
#include "harness/cli/bench.h"
#include "harness/common/common.h"
#include "harness/history/history.h"
#include "harness/sweep/sweep.h"

#include <limits.h>
#include <unistd.h>

#define BENCH_SWEEP_SEEDS_J1 8
#define BENCH_SWEEP_SEEDS_J2 16

static char *find_smoke(const char *self_exe)
{
    if (access("scenarios/smoke.lua", R_OK) == 0)
        return fl_strdup("scenarios/smoke.lua");
    if (!self_exe)
        return NULL;
    char root[PATH_MAX], path[PATH_MAX + 32];
    for (int up = 1; up <= 2; up++) {
        if (!bench_exe_up(self_exe, up, root, sizeof root))
            return NULL;
        snprintf(path, sizeof path, "%s/scenarios/smoke.lua", root);
        if (access(path, R_OK) == 0)
            return fl_strdup(path);
    }
    return NULL;
}

/* Runs per wall second of one sweep; 0 when it could not run. */
static double measure(const char *exe, const char *scenario, const char *dir, int jobs, int seeds)
{
    char db[PATH_MAX];
    snprintf(db, sizeof db, "%s/j%d.db", dir, jobs);
    const char *scenarios[] = {scenario};
    struct sweep_options o = {
        .scenarios = scenarios,
        .scenario_count = 1,
        .seed_first = 1,
        .seed_last = (uint64_t)seeds,
        .shard_k = 1,
        .shard_n = 1,
        .jobs = jobs,
        .worker = exe,
        .db_path = db,
        .timeout_s = 60,
    };
    struct sweep_report rep;
    char err[512];
    double t0 = bench_now_s();
    int rc = sweep_run(&o, &rep, err, sizeof err);
    double el = bench_now_s() - t0;
    int done = rc ? 0 : rep.pass + rep.fail + rep.unknown;
    if (rc)
        fprintf(stderr, "bench: sweep: %s\n", err);
    else
        sweep_report_close(&rep);
    hist_remove(db);
    return done == seeds && el > 0 ? (double)done / el : 0;
}

void bench_sweep(const struct bench_ctx *ctx, json_t *out)
{
    /* Earlier figures (the 1M-op checker workloads) leave a large heap, which main()
     * tells malloc to keep; give it back first, or every worker spawned from this
     * process pays to copy its page tables and the -j2 figure measures that. */
    malloc_trim(0);
    char *smoke = find_smoke(ctx->self_exe);
    if (!smoke || !ctx->self_exe) {
        free(smoke);
        return;
    }
    char dir[] = "/tmp/fl-bench-sweep-XXXXXX";
    if (!mkdtemp(dir)) {
        free(smoke);
        return;
    }
    double j1 = measure(ctx->self_exe, smoke, dir, 1, BENCH_SWEEP_SEEDS_J1);
    double j2 = measure(ctx->self_exe, smoke, dir, 2, BENCH_SWEEP_SEEDS_J2);
    if (j1 > 0)
        json_object_set_new(out, "sweep_runs_per_s_j1", json_real(j1));
    if (j2 > 0)
        json_object_set_new(out, "sweep_runs_per_s_j2", json_real(j2));
    rmdir(dir);
    free(smoke);
}
