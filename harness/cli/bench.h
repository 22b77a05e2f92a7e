/*
 * bench.h: `faultline bench` (DESIGN §7). cmd_bench.c owns the JSON object and the
 * process-wide figures (peak_rss_mb); each module owner fills its own keys in its own
 * bench_*.c file so no two people edit one file. A function sets only keys it has
 * really measured; a key nobody sets is printed as null.
 *
 * corpus_dir is the porcupine corpus folder, or NULL when absent.
 */
#ifndef FL_BENCH_H
#define FL_BENCH_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bench_ctx {
    const char *corpus_dir; /* may be NULL */
    const char *self_exe;   /* path of the faultline binary (for sweep figures) */
};

/* Writes to out the folder `up` levels above the binary self_exe (1: the folder it is
 * in, 2: that folder's parent, the repo root for build/faultline). False when the path
 * has fewer levels. */
bool bench_exe_up(const char *self_exe, int up, char *out, size_t size);

/* Wall-clock seconds from a monotonic clock; for benchmarks only, never a run. */
double bench_now_s(void);

struct chk_gen_opts;
/* The generated history the checker benches judge (bench_checkers.c, and the curves'
 * checker points): seed, ops operations, 8 clients, 1,000 keys, 4 watches, 0.5% failed
 * calls, unknown_pm per mille of unknown outcome, a 40-op concurrency window. */
void bench_gen_opts(struct chk_gen_opts *o, uint64_t seed, uint32_t ops, uint32_t unknown_pm);
void bench_sim(const struct bench_ctx *ctx, json_t *out);      /* sim_events_per_s */
void bench_checkers(const struct bench_ctx *ctx, json_t *out); /* lin_revision_ops_per_s,
                                                                  porcupine_corpus_ms */
void bench_mvcc(const struct bench_ctx *ctx, json_t *out);     /* mvcc_puts_per_s, ... */
void bench_idle(const struct bench_ctx *ctx, json_t *out);     /* idle_cluster_speedup */
void bench_cluster(const struct bench_ctx *ctx, json_t *out);  /* cluster_messages_per_s,
                                                                  raft_commits_per_s */
void bench_e2e(const struct bench_ctx *ctx, json_t *out);      /* e2e_speedup,
                                                                  recorded_ops_per_s */
void bench_sweep(const struct bench_ctx *ctx, json_t *out);    /* sweep_runs_per_s_j1/_j2 */

/* `bench --curves` (bench_curves.c): the cost curves, each point in a child process;
 * returns the "curves" object. bench_curves_print writes it as tables. */
json_t *bench_curves(const struct bench_ctx *ctx);
void bench_curves_print(json_t *curves);

#endif
