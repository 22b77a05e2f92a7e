/*
 * sweep.h: many (scenario, seed) runs on all cores (DESIGN §7, §8). Each run is its
 * own worker process, spawned with libuv (uv_spawn) as `WORKER run SCENARIO --seed N
 * --json --db PER-WORKER-DB [--bug NAME]...`; its JSON summary is read over a pipe.
 * A per-run wall-clock timeout kills a hung worker; a worker that crashes, hangs or
 * prints no summary is recorded as verdict 'error' (a runs row is inserted for it)
 * and the sweep goes on. SIGINT stops launching, kills running workers and finishes
 * with the partial results. At the end the per-worker databases are merged into one
 * (ATTACH + INSERT, run_ids renumbered) and the per-worker files removed.
 *
 * Seeds: --seeds A..B inclusive; --shard K/N keeps the seeds whose position in the
 * range is K-1 modulo N (K from 1), so N shards cover every seed exactly once.
 *
 * The sweep itself reads wall clocks (timeouts, progress, rate) and the environment
 * (terminal or not); none of it enters any run, which stays deterministic.
 */
#ifndef FL_SWEEP_H
#define FL_SWEEP_H

#include "harness/common/common.h"

enum sweep_verdict { SWEEP_PASS, SWEEP_FAIL, SWEEP_UNKNOWN, SWEEP_ERROR };
const char *sweep_verdict_name(enum sweep_verdict v);

struct sweep_options {
    const char *const *scenarios; /* borrowed */
    int scenario_count;
    uint64_t seed_first, seed_last; /* inclusive */
    int shard_k, shard_n;           /* 1/1 = everything */
    int jobs;                       /* >= 1 */
    const char *worker;             /* executable to spawn (the faultline binary) */
    const char *db_path;            /* merged database; required */
    const char *const *bugs;        /* --bug NAME..., passed on to every worker */
    int bug_count;
    double timeout_s;   /* per run, wall clock; <= 0: none */
    bool fail_fast;     /* stop launching after the first failure or error */
    bool paranoid;      /* pass --paranoid to every run */
    int progress;       /* 0 none, 1 plain lines, 2 terminal line with \r */
    FILE *progress_out; /* stderr usually */
    /* faultline explore: one job per scenario, scenario i with seed job_seeds[i] (the
     * seed range and the shard are then unused); NULL: every scenario x every seed */
    const uint64_t *job_seeds;
    bool keep_summaries; /* keep each worker's --json summary in its result */
};

/* One finished run. */
struct sweep_result {
    char *scenario;
    uint64_t seed;
    enum sweep_verdict verdict;
    char *digest;   /* NULL when none */
    char *error;    /* why a run is 'error' (timeout, signal, no summary), or NULL */
    int64_t run_id; /* in the merged database, 0 before the merge */
    double wall_s;
    char *first_violation;  /* one line, "" for a passing run (after the merge) */
    struct json_t *summary; /* keep_summaries: the worker's --json summary (owned), or NULL */
};

struct sweep_report {
    struct sweep_result *results; /* in (scenario, seed) order */
    int count;
    int planned; /* runs the seed range and shard asked for */
    int pass, fail, unknown, error;
    bool interrupted;
    double wall_s;
};

/* Parses "A..B" (or "N", one seed) into first/last; false on bad input or A > B. */
bool sweep_parse_seeds(const char *s, uint64_t *first, uint64_t *last);
/* Parses "K/N" with 1 <= K <= N; false otherwise. */
bool sweep_parse_shard(const char *s, int *k, int *n);
/* --shard auto: the shard from a job runner's environment (sweep_shard_env.c: Kubernetes
 * Indexed Jobs with FAULTLINE_SHARD_COUNT, GitLab, CircleCI, Buildkite, Slurm arrays).
 * FL_OK with k (from 1), n and src (which runner and variables, for the log); FL_ENOENT
 * when none is set, FL_EINVAL when one is set but malformed, with a message in err. The
 * environment is read through get (getenv, or a test's own). */
typedef const char *(*sweep_getenv_fn)(const char *name);
int sweep_shard_from_env(sweep_getenv_fn get, int *k, int *n, char *src, size_t src_len, char *err,
                         size_t err_len);
/* The seeds of shard k/n in [first, last], ascending, into a fl_malloc'ed array the
 * caller frees; *count gets their number. */
uint64_t *sweep_shard_seeds(uint64_t first, uint64_t last, int k, int n, size_t *count);

/*
 * Runs the sweep. Returns FL_OK when every planned run was attempted or the sweep was
 * interrupted / stopped by --fail-fast (see rep), or an error code with a message in
 * err (cannot create the database, cannot spawn at all). rep is filled in either case
 * and released with sweep_report_close.
 */
int sweep_run(const struct sweep_options *opts, struct sweep_report *rep, char *err,
              size_t err_len);
void sweep_report_close(struct sweep_report *rep);

/*
 * Merges the runs of database src into dst (created if missing) with ATTACH + INSERT:
 * every run gets a fresh run_id in dst, and its rows in every history table follow
 * (columns matched by name). *first_id and *count (may be NULL) receive the new run_ids'
 * range (consecutive, in src's run_id order).
 */
int sweep_db_merge(const char *dst, const char *src, int64_t *first_id, int *count, char *err,
                   size_t err_len);

/* Inserts a runs row with verdict 'error' for a run that produced none, and a checks
 * row (checker "worker", verdict "error", detail {"reason": why}). *run_id_out may be
 * NULL. */
int sweep_db_add_error(const char *db_path, const char *scenario, uint64_t seed,
                       const char *const *bugs, int bug_count, const char *why, int64_t *run_id_out,
                       char *err, size_t err_len);

/* Marks a merged run as 'error' and adds a checks row (checker "worker") saying why:
 * its worker crashed or timed out after the runs row was written. */
int sweep_db_mark_error(const char *db_path, int64_t run_id, const char *why, char *err,
                        size_t err_len);

/* The same three on a database handle the caller keeps open (a sweep merges each run
 * as soon as the runs before it are done, through one connection). A merge goes
 * through a context made for db (sweep_merge_new), which keeps what it learnt of the
 * last source's schema for the next source; freed (sweep_merge_free, NULL is fine)
 * before db is closed. */
struct hist_db;
struct sweep_merge;
struct sweep_merge *sweep_merge_new(struct hist_db *db);
void sweep_merge_free(struct sweep_merge *mg);
int sweep_merge_from(struct sweep_merge *mg, const char *src, int64_t *first_id, int *count,
                     char *err, size_t err_len);
int sweep_db_add_error_into(struct hist_db *db, const char *scenario, uint64_t seed,
                            const char *const *bugs, int bug_count, const char *why,
                            int64_t *run_id_out, char *err, size_t err_len);
int sweep_db_mark_error_into(struct hist_db *db, int64_t run_id, const char *why, char *err,
                             size_t err_len);

/* Prints every run that did not pass with its replay command, grouped by the first
 * violated check (then errors and unknowns), and a one-line total. */
void sweep_print_failures(const struct sweep_report *rep, const struct sweep_options *opts,
                          FILE *out);

#endif
