/*
 * sweep_shard_env.c: `--shard auto` (DESIGN §8). A seed sweep spreads over machines
 * through the job runners people already have; each runner tells a job its place in
 * the array through its own environment variables, and this file turns them into a
 * shard K/N (K from 1). Supported, checked in this order:
 *
 *   Kubernetes Indexed Job  JOB_COMPLETION_INDEX (from 0); the count from
 *                           FAULTLINE_SHARD_COUNT, which the manifest sets
 *   GitLab CI (parallel:)   CI_NODE_INDEX (from 1), CI_NODE_TOTAL
 *   CircleCI (parallelism)  CIRCLE_NODE_INDEX (from 0), CIRCLE_NODE_TOTAL
 *   Buildkite (parallelism) BUILDKITE_PARALLEL_JOB (from 0), BUILDKITE_PARALLEL_JOB_COUNT
 *   Slurm job array         SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_COUNT, and
 *                           SLURM_ARRAY_TASK_MIN / _STEP when set (--array=1-8 or 0-30:2)
 *
 * The first runner whose index variable is set is the one used; its variables must all
 * be plain numbers in range, or the sweep refuses to guess (exit 2). The environment is
 * read through a function the caller passes, so tests give their own.
 */
#include "harness/sweep/sweep.h"

struct shard_runner {
    const char *name;
    const char *index_var, *count_var;
    int index_base; /* 0 or 1: what the runner calls its first job */
};

static const struct shard_runner runners[] = {
    {"Kubernetes Indexed Job", "JOB_COMPLETION_INDEX", "FAULTLINE_SHARD_COUNT", 0},
    {"GitLab CI", "CI_NODE_INDEX", "CI_NODE_TOTAL", 1},
    {"CircleCI", "CIRCLE_NODE_INDEX", "CIRCLE_NODE_TOTAL", 0},
    {"Buildkite", "BUILDKITE_PARALLEL_JOB", "BUILDKITE_PARALLEL_JOB_COUNT", 0},
    {"Slurm job array", "SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT", 0},
};

/* A plain decimal number (digits only) up to 10^9. */
static bool env_number(const char *s, uint64_t *out)
{
    uint64_t v;
    if (!s || strlen(s) > 10 || !fl_parse_u64(s, strlen(s), &v) || v > 1000000000)
        return false;
    *out = v;
    return true;
}

/* Slurm numbers its tasks by the --array expression: index = (ID - MIN) / STEP. */
static bool slurm_index(sweep_getenv_fn get, uint64_t id, uint64_t *index, char *err,
                        size_t err_len)
{
    uint64_t min = 0, step = 1;
    const char *m = get("SLURM_ARRAY_TASK_MIN"), *st = get("SLURM_ARRAY_TASK_STEP");
    if ((m && !env_number(m, &min)) || (st && (!env_number(st, &step) || step == 0))) {
        snprintf(err, err_len,
                 "--shard auto: SLURM_ARRAY_TASK_MIN='%s', SLURM_ARRAY_TASK_STEP='%s': "
                 "expected numbers (step above 0)",
                 m ? m : "", st ? st : "");
        return false;
    }
    if (id < min || (id - min) % step != 0) {
        snprintf(err, err_len,
                 "--shard auto: SLURM_ARRAY_TASK_ID=%llu is not a task of the array "
                 "(min %llu, step %llu)",
                 (unsigned long long)id, (unsigned long long)min, (unsigned long long)step);
        return false;
    }
    *index = (id - min) / step;
    return true;
}

static int from_runner(const struct shard_runner *r, sweep_getenv_fn get, int *k, int *n, char *src,
                       size_t src_len, char *err, size_t err_len)
{
    const char *iv = get(r->index_var), *cv = get(r->count_var);
    uint64_t index = 0, count = 0;
    if (!env_number(iv, &index)) {
        snprintf(err, err_len, "--shard auto: %s: %s='%s' is not a job index", r->name,
                 r->index_var, iv);
        return FL_EINVAL;
    }
    if (!cv || !env_number(cv, &count) || count < 1 || count > 1000000) {
        snprintf(err, err_len,
                 "--shard auto: %s: %s=%s but %s is %s%s%s (the number of jobs, "
                 "1 to 1000000)",
                 r->name, r->index_var, iv, r->count_var, cv ? "'" : "not set", cv ? cv : "",
                 cv ? "'" : "");
        return FL_EINVAL;
    }
    if (r->index_var[0] == 'S' && !slurm_index(get, index, &index, err, err_len))
        return FL_EINVAL;
    if (index < (uint64_t)r->index_base || index - (uint64_t)r->index_base >= count) {
        snprintf(err, err_len,
                 "--shard auto: %s: %s=%s is outside the %llu jobs (%s counts from "
                 "%d)",
                 r->name, r->index_var, iv, (unsigned long long)count, r->name, r->index_base);
        return FL_EINVAL;
    }
    *k = (int)(index - (uint64_t)r->index_base) + 1;
    *n = (int)count;
    snprintf(src, src_len, "%s (%s=%s, %s=%s)", r->name, r->index_var, iv, r->count_var, cv);
    return FL_OK;
}

int sweep_shard_from_env(sweep_getenv_fn get, int *k, int *n, char *src, size_t src_len, char *err,
                         size_t err_len)
{
    FL_ASSERT(get && k && n && src && err);
    for (size_t i = 0; i < FL_ARRAY_LEN(runners); i++)
        if (get(runners[i].index_var))
            return from_runner(&runners[i], get, k, n, src, src_len, err, err_len);
    snprintf(err, err_len,
             "--shard auto: no job runner's shard variables are set (looked for "
             "JOB_COMPLETION_INDEX with FAULTLINE_SHARD_COUNT, CI_NODE_INDEX, "
             "CIRCLE_NODE_INDEX, BUILDKITE_PARALLEL_JOB, SLURM_ARRAY_TASK_ID); "
             "give --shard K/N instead");
    return FL_ENOENT;
}
