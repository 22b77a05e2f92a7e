/*
 * test_shard_env.c: `--shard auto` (sweep_shard_env.c) against a fake environment: each
 * job runner's variables give the right shard K/N (index bases differ: GitLab counts
 * from 1, the others from 0; Slurm arrays may start above 0 and step), every job of an
 * array gets a different shard and together they cover 1..N, the first runner set wins,
 * and missing or malformed variables are refused with a message naming them.
 */
#include "fl_test.h"

#include "harness/sweep/sweep.h"

#define ENV_MAX 8
static const char *env_names[ENV_MAX], *env_values[ENV_MAX];
static int env_n;

static void env_clear(void)
{
    env_n = 0;
}

static void env_set(const char *name, const char *value)
{
    env_names[env_n] = name;
    env_values[env_n++] = value;
}

static const char *env_get(const char *name)
{
    for (int i = 0; i < env_n; i++)
        if (!strcmp(env_names[i], name))
            return env_values[i];
    return NULL;
}

static int shard(int *k, int *n, char *err, size_t len)
{
    char src[256];
    *k = *n = 0;
    return sweep_shard_from_env(env_get, k, n, src, sizeof src, err, len);
}

/* Every job of a 4-job array gets a different shard of 4; together 1..4. */
static void check_array(const char *index_var, const char *count_var, int base)
{
    bool seen[5] = {false};
    for (int job = 0; job < 4; job++) {
        char idx[8], err[512];
        snprintf(idx, sizeof idx, "%d", job + base);
        env_clear();
        env_set(index_var, idx);
        env_set(count_var, "4");
        int k, n;
        CHECK_EQ_INT(shard(&k, &n, err, sizeof err), FL_OK);
        CHECK_EQ_INT(n, 4);
        CHECK(k >= 1 && k <= 4 && !seen[k]);
        if (k >= 1 && k <= 4)
            seen[k] = true;
    }
    CHECK(seen[1] && seen[2] && seen[3] && seen[4]);
}

static void test_runners(void)
{
    check_array("JOB_COMPLETION_INDEX", "FAULTLINE_SHARD_COUNT", 0);
    check_array("CI_NODE_INDEX", "CI_NODE_TOTAL", 1);
    check_array("CIRCLE_NODE_INDEX", "CIRCLE_NODE_TOTAL", 0);
    check_array("BUILDKITE_PARALLEL_JOB", "BUILDKITE_PARALLEL_JOB_COUNT", 0);
    check_array("SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT", 0);
    /* GitLab's first job is shard 1, CircleCI's job 0 too */
    int k, n;
    char err[512];
    env_clear();
    env_set("CI_NODE_INDEX", "1");
    env_set("CI_NODE_TOTAL", "3");
    CHECK_EQ_INT(shard(&k, &n, err, sizeof err), FL_OK);
    CHECK(k == 1 && n == 3);
    env_clear();
    env_set("CIRCLE_NODE_INDEX", "0");
    env_set("CIRCLE_NODE_TOTAL", "3");
    CHECK_EQ_INT(shard(&k, &n, err, sizeof err), FL_OK);
    CHECK(k == 1 && n == 3);
}

/* --array=1-8 gives IDs 1..8 with MIN 1; --array=0-30:10 gives 0, 10, 20, 30. */
static void test_slurm(void)
{
    int k, n;
    char err[512];
    env_clear();
    env_set("SLURM_ARRAY_TASK_ID", "8");
    env_set("SLURM_ARRAY_TASK_COUNT", "8");
    env_set("SLURM_ARRAY_TASK_MIN", "1");
    CHECK_EQ_INT(shard(&k, &n, err, sizeof err), FL_OK);
    CHECK(k == 8 && n == 8);
    env_clear();
    env_set("SLURM_ARRAY_TASK_ID", "20");
    env_set("SLURM_ARRAY_TASK_COUNT", "4");
    env_set("SLURM_ARRAY_TASK_MIN", "0");
    env_set("SLURM_ARRAY_TASK_STEP", "10");
    CHECK_EQ_INT(shard(&k, &n, err, sizeof err), FL_OK);
    CHECK(k == 3 && n == 4);
    env_clear();
    env_set("SLURM_ARRAY_TASK_ID", "25");
    env_set("SLURM_ARRAY_TASK_COUNT", "4");
    env_set("SLURM_ARRAY_TASK_STEP", "10");
    CHECK_EQ_INT(shard(&k, &n, err, sizeof err), FL_EINVAL);
    CHECK(strstr(err, "not a task of the array") != NULL);
}

static void test_refusals(void)
{
    int k, n;
    char err[512];
    env_clear();
    CHECK_EQ_INT(shard(&k, &n, err, sizeof err), FL_ENOENT);
    CHECK(strstr(err, "no job runner") != NULL && strstr(err, "--shard K/N") != NULL);
    /* Kubernetes gives the index only: the manifest must set the count */
    env_set("JOB_COMPLETION_INDEX", "0");
    CHECK_EQ_INT(shard(&k, &n, err, sizeof err), FL_EINVAL);
    CHECK(strstr(err, "FAULTLINE_SHARD_COUNT") != NULL && strstr(err, "not set") != NULL);
    static const char *const bad_index[] = {"", "-1", "+1", "1.0", " 1", "0x1", "99999999999"};
    for (size_t i = 0; i < sizeof bad_index / sizeof *bad_index; i++) {
        env_clear();
        env_set("CIRCLE_NODE_INDEX", bad_index[i]);
        env_set("CIRCLE_NODE_TOTAL", "4");
        CHECK_EQ_INT(shard(&k, &n, err, sizeof err), FL_EINVAL);
        CHECK(strstr(err, "CIRCLE_NODE_INDEX") != NULL);
    }
    static const char *const bad_count[] = {"0", "", "x", "2000000"};
    for (size_t i = 0; i < sizeof bad_count / sizeof *bad_count; i++) {
        env_clear();
        env_set("BUILDKITE_PARALLEL_JOB", "0");
        env_set("BUILDKITE_PARALLEL_JOB_COUNT", bad_count[i]);
        CHECK_EQ_INT(shard(&k, &n, err, sizeof err), FL_EINVAL);
        CHECK(strstr(err, "BUILDKITE_PARALLEL_JOB_COUNT") != NULL);
    }
    /* outside the array: GitLab's 0, CircleCI's N */
    env_clear();
    env_set("CI_NODE_INDEX", "0");
    env_set("CI_NODE_TOTAL", "4");
    CHECK_EQ_INT(shard(&k, &n, err, sizeof err), FL_EINVAL);
    CHECK(strstr(err, "outside") != NULL);
    env_clear();
    env_set("CIRCLE_NODE_INDEX", "4");
    env_set("CIRCLE_NODE_TOTAL", "4");
    CHECK_EQ_INT(shard(&k, &n, err, sizeof err), FL_EINVAL);
    /* two runners' variables: the first in the documented order is used */
    env_clear();
    env_set("CIRCLE_NODE_INDEX", "0");
    env_set("CIRCLE_NODE_TOTAL", "2");
    env_set("CI_NODE_INDEX", "3");
    env_set("CI_NODE_TOTAL", "3");
    CHECK_EQ_INT(shard(&k, &n, err, sizeof err), FL_OK);
    CHECK(k == 3 && n == 3);
}

int main(void)
{
    FL_TEST(test_runners);
    FL_TEST(test_slurm);
    FL_TEST(test_refusals);
    return fl_test_end();
}
