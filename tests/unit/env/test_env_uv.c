/*
 * test_env_uv.c: the node environment over libuv (nodes/env/env_uv.h, partial): its
 * timers fire on the loop after their delay and not once stopped, a skewed local
 * clock shortens them in real time, and its files are real files in the data
 * directory: appends, whole-file views, a real fsync completed on the loop, rename,
 * listing by prefix in name order, truncate, remove and wipe; and two environments on
 * one loop talk over loopback TCP: frames sent before the connection opens and a
 * 200 KB frame arrive whole and in order, a close reaches the other side as
 * ENV_CLOSE_PEER, a port nobody listens on is ENV_CLOSE_REFUSED.
 */
#include "fl_port.h"
#include "fl_test.h"

#include "nodes/env/env_uv.h"

#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

static int fired;
static void on_fire(void *ctx)
{
    (void)ctx;
    fired++;
}

static char dir[256];

static struct fl_env *new_env_at(uv_loop_t *loop, int self)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/fl_env_uv_XXXXXX", tmp && *tmp ? tmp : "/tmp");
    CHECK(mkdtemp(dir) != NULL);
    const char *err = NULL;
    struct fl_env *e = env_uv_new(loop, self, dir, 7, &err);
    CHECK(e != NULL);
    return e;
}

static struct fl_env *new_env(uv_loop_t *loop)
{
    return new_env_at(loop, 1);
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

static struct fl_env *srv_env, *cli_env;
static struct env_sock_cb srv_cb, cli_cb;
static int srv_frames, cli_frames, srv_closed_reason, cli_closed_reason, cli_opened;
static size_t srv_bytes;
static env_sock cli_sock;
static uint8_t *big;

static void srv_on_message(void *ctx, env_sock s, const uint8_t *p, size_t n)
{
    (void)ctx;
    srv_frames++;
    srv_bytes += n;
    if (srv_frames == 1)
        CHECK(n == 5 && memcmp(p, "hello", 5) == 0);
    if (srv_frames == 2)
        CHECK(n == 200000 && memcmp(p, big, n) == 0);
    uint8_t echo[8] = "echo";
    env_send(srv_env, s, echo, 4);
}
static void srv_on_close(void *ctx, env_sock s, int reason)
{
    (void)ctx;
    (void)s;
    srv_closed_reason = reason;
    env_unlisten(srv_env, 2379);
}
static void srv_on_accept(void *ctx, env_sock s, int peer)
{
    (void)ctx;
    CHECK_EQ_INT(peer, 5); /* the dialler's address, from its hello frame */
    CHECK_EQ_INT(env_sock_peer(srv_env, s), 5);
    CHECK_EQ_INT(env_sock_bind(srv_env, s, &srv_cb), FL_OK);
}
static void cli_on_open(void *ctx, env_sock s)
{
    (void)ctx;
    cli_opened++;
    CHECK(env_sock_open(cli_env, s));
    CHECK_EQ_INT(env_send(cli_env, s, big, 200000), FL_OK);
}
static void cli_on_message(void *ctx, env_sock s, const uint8_t *p, size_t n)
{
    (void)ctx;
    CHECK(n == 4 && memcmp(p, "echo", 4) == 0);
    if (++cli_frames == 2)
        env_close(cli_env, s); /* no callback to us; the server hears it */
}
static void cli_on_close(void *ctx, env_sock s, int reason)
{
    (void)ctx;
    (void)s;
    cli_closed_reason = reason;
}

static void test_sockets(void)
{
    uv_loop_t loop;
    uv_loop_init(&loop);
    char d1[256], d2[256];
    srv_env = new_env(&loop);
    snprintf(d1, sizeof d1, "%s", dir);
    cli_env = new_env_at(&loop, 5);
    snprintf(d2, sizeof d2, "%s", dir);
    int port = fl_free_port(), dead = fl_free_port();
    CHECK(port > 0 && dead > 0);
    env_uv_map(srv_env, 1, 2379, port);
    env_uv_map(cli_env, 1, 2379, port);
    env_uv_map(cli_env, 3, 2379, dead);
    srv_cb = (struct env_sock_cb){NULL, srv_on_message, srv_on_close, NULL};
    cli_cb = (struct env_sock_cb){cli_on_open, cli_on_message, cli_on_close, NULL};
    big = fl_malloc(200000);
    for (size_t i = 0; i < 200000; i++)
        big[i] = (uint8_t)(i * 7);
    CHECK_EQ_INT(env_listen(srv_env, 2379, srv_on_accept, NULL), FL_OK);
    CHECK_EQ_INT(env_listen(srv_env, 2379, srv_on_accept, NULL), FL_EEXIST);
    cli_sock = env_connect(cli_env, 1, 2379, &cli_cb);
    CHECK(cli_sock != 0);
    CHECK(!env_sock_open(cli_env, cli_sock));
    CHECK_EQ_INT(env_send(cli_env, cli_sock, "hello", 5), FL_OK); /* waits for the open */
    uv_run(&loop, UV_RUN_DEFAULT);
    CHECK_EQ_INT(cli_opened, 1);
    CHECK_EQ_INT(srv_frames, 2);
    CHECK(srv_bytes == 200005);
    CHECK_EQ_INT(cli_frames, 2);
    CHECK_EQ_INT(srv_closed_reason, ENV_CLOSE_PEER);
    CHECK_EQ_INT(cli_closed_reason, 0); /* closing yourself makes no callback */
    CHECK_EQ_INT(env_send(cli_env, cli_sock, "x", 1), FL_EDOWN);

    env_sock r = env_connect(cli_env, 3, 2379, &cli_cb);
    CHECK(r != 0);
    uv_run(&loop, UV_RUN_DEFAULT);
    CHECK_EQ_INT(cli_closed_reason, ENV_CLOSE_REFUSED);
    CHECK_EQ_INT(env_connect(cli_env, 9, 2379, &cli_cb), 0); /* nobody mapped */

    env_uv_free(srv_env);
    env_uv_free(cli_env);
    uv_run(&loop, UV_RUN_DEFAULT);
    CHECK_EQ_INT(uv_loop_close(&loop), 0);
    free(big);
    rmdir(d1);
    rmdir(d2);
}

/* The incarnation counts the starts on one data directory, across environments. */
static void test_incarnation(void)
{
    uv_loop_t loop;
    uv_loop_init(&loop);
    struct fl_env *e = new_env(&loop);
    const char *err = NULL;
    CHECK_EQ_INT((int)env_incarnation(e), 0);
    CHECK_EQ_INT(env_uv_count_start(e, &err), FL_OK);
    CHECK_EQ_INT((int)env_incarnation(e), 0); /* the first start */
    env_uv_free(e);
    for (int i = 1; i <= 2; i++) {
        e = env_uv_new(&loop, 1, dir, 7, &err);
        CHECK(e != NULL);
        CHECK_EQ_INT(env_uv_count_start(e, &err), FL_OK);
        CHECK_EQ_INT((int)env_incarnation(e), i);
        env_uv_free(e);
    }
    char path[300];
    snprintf(path, sizeof path, "%s/incarnation", dir);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    fputs("garbage\n", f);
    fclose(f);
    e = env_uv_new(&loop, 1, dir, 7, &err);
    CHECK_EQ_INT(env_uv_count_start(e, &err), FL_EINVAL);
    env_uv_free(e);
    remove(path);
    uv_run(&loop, UV_RUN_DEFAULT);
    CHECK_EQ_INT(uv_loop_close(&loop), 0);
    rmdir(dir);
}

int main(void)
{
    FL_TEST(test_incarnation);
    FL_TEST(test_sockets);
    FL_TEST(test_timers);
    FL_TEST(test_files);
    return fl_test_end();
}
