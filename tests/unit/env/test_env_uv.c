/*
 * test_env_uv.c: the node environment over libuv (nodes/env/env_uv.h, partial): its
 * timers fire on the loop after their delay and not once stopped, a skewed local
 * clock shortens them in real time, and its files are real files in the data
 * directory: appends, whole-file views, a real fsync completed on the loop, rename,
 * listing by prefix in name order, truncate, remove and wipe.
 */
#include "fl_test.h"

#include "nodes/env/env_uv.h"

#include <stdlib.h>
#include <unistd.h>

static int fired;
static void on_fire(void *ctx)
{
    (void)ctx;
    fired++;
}

static char dir[256];

static struct fl_env *new_env(uv_loop_t *loop)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/fl_env_uv_XXXXXX", tmp && *tmp ? tmp : "/tmp");
    CHECK(mkdtemp(dir) != NULL);
    const char *err = NULL;
    struct fl_env *e = env_uv_new(loop, dir, 7, &err);
    CHECK(e != NULL);
    return e;
}

static void test_timers(void)
{
    uv_loop_t loop;
    uv_loop_init(&loop);
    struct fl_env *e = new_env(&loop);
    struct env_timer a = {0}, b = {0};
    fired = 0;
    int64_t t0 = env_now_ns(e);
    CHECK(env_timer_start(e, &a, 20 * FL_MS, on_fire, NULL));
    CHECK(env_timer_start(e, &b, 10 * FL_MS, on_fire, NULL));
    CHECK(env_timer_active(&a) && env_timer_active(&b));
    env_timer_stop(e, &b);
    CHECK(!env_timer_active(&b));
    uv_run(&loop, UV_RUN_DEFAULT);
    CHECK_EQ_INT(fired, 1); /* a only */
    CHECK(!env_timer_active(&a));
    CHECK(env_now_ns(e) - t0 >= 20 * FL_MS);

    /* 4x fast: 200 ms of local time pass in 50 ms of real time */
    env_uv_set_rate(e, 4000000);
    int64_t r0 = env_now_ns(e), l0 = env_local_ns(e);
    CHECK(env_timer_start(e, &a, 200 * FL_MS, on_fire, NULL));
    uv_run(&loop, UV_RUN_DEFAULT);
    int64_t real = env_now_ns(e) - r0, local = env_local_ns(e) - l0;
    CHECK_EQ_INT(fired, 2);
    CHECK(real >= 49 * FL_MS && real < 190 * FL_MS);
    CHECK(local >= 199 * FL_MS);
    env_uv_free(e);
    CHECK_EQ_INT(rmdir(dir), 0);
    CHECK_EQ_INT(uv_loop_close(&loop), 0); /* every handle closed */
}

static int synced, sync_err = -1;
static void on_synced(struct fl_env *e, void *ctx, int err)
{
    (void)e;
    (void)ctx;
    synced++;
    sync_err = err;
}

static char listed[8][64];
static int n_listed;
static void on_list(const char *name, uint64_t size, void *ctx)
{
    (void)ctx;
    if (n_listed < 8)
        snprintf(listed[n_listed++], sizeof listed[0], "%s:%llu", name, (unsigned long long)size);
}

static void test_files(void)
{
    uv_loop_t loop;
    uv_loop_init(&loop);
    struct fl_env *e = new_env(&loop);
    CHECK_EQ_INT(env_file_append(e, "wal/0002.wal", "ab", 2), FL_OK);
    CHECK_EQ_INT(env_file_append(e, "wal/0002.wal", "cd", 2), FL_OK);
    CHECK_EQ_INT(env_file_write(e, "wal/0001.wal", 1, "xy", 2), FL_OK); /* a zero gap first */
    const uint8_t *p;
    size_t n;
    CHECK_EQ_INT(env_file_view(e, "wal/0002.wal", &p, &n), FL_OK);
    CHECK(n == 4 && memcmp(p, "abcd", 4) == 0);
    CHECK_EQ_INT(env_file_view(e, "wal/0001.wal", &p, &n), FL_OK);
    CHECK(n == 3 && p[0] == 0 && p[1] == 'x');
    CHECK_EQ_INT(env_file_view(e, "nope", &p, &n), FL_ENOENT);

    synced = 0;
    CHECK_EQ_INT(env_file_fsync(e, "wal/0002.wal", on_synced, NULL), FL_OK);
    CHECK_EQ_INT(synced, 0); /* completes on the loop, never inside the call */
    uv_run(&loop, UV_RUN_DEFAULT);
    CHECK_EQ_INT(synced, 1);
    CHECK_EQ_INT(sync_err, FL_OK);
    CHECK_EQ_INT(env_file_fsync(e, "wal/none", on_synced, NULL), FL_ENOENT);

    struct fl_buf b;
    fl_buf_init(&b);
    fl_buf_append(&b, "snapshot", 8);
    CHECK_EQ_INT(env_file_put(e, "snap/1.snap.tmp", &b), FL_OK);
    CHECK_EQ_INT(env_file_rename(e, "snap/1.snap.tmp", "snap/1.snap"), FL_OK);
    CHECK_EQ_INT(env_file_truncate(e, "wal/0002.wal", 1), FL_OK);

    n_listed = 0;
    CHECK_EQ_INT(env_file_list(e, "wal/", on_list, NULL), 2);
    CHECK_EQ_STR(listed[0], "wal/0001.wal:3");
    CHECK_EQ_STR(listed[1], "wal/0002.wal:1");
    n_listed = 0;
    CHECK_EQ_INT(env_file_list(e, "snap/", on_list, NULL), 1);
    CHECK_EQ_STR(listed[0], "snap/1.snap:8");

    CHECK_EQ_INT(env_file_remove(e, "wal/0001.wal"), FL_OK);
    CHECK_EQ_INT(env_file_remove(e, "wal/0001.wal"), FL_ENOENT);
    env_files_wipe(e);
    n_listed = 0;
    CHECK_EQ_INT(env_file_list(e, "wal/", on_list, NULL), 0);
    CHECK_EQ_INT(env_file_list(e, "snap/", on_list, NULL), 0);
    char path[300];
    snprintf(path, sizeof path, "%s/wal", dir);
    rmdir(path);
    snprintf(path, sizeof path, "%s/snap", dir);
    rmdir(path);
    CHECK_EQ_INT(rmdir(dir), 0); /* nothing else was left behind */
    env_uv_free(e);
    CHECK_EQ_INT(uv_loop_close(&loop), 0);
}

int main(void)
{
    FL_TEST(test_timers);
    FL_TEST(test_files);
    return fl_test_end();
}
