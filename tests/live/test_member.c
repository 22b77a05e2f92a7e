/*
 * test_member.c: `faultline member` as real processes (issue 16 §2). Three members on
 * loopback TCP, each with its own data directory; our client library on a libuv
 * environment in this process dials them.
 *
 * Every peer port is behind a TCP proxy (harness/live/live_proxy.h) that tells the
 * members apart by the hello frame their connections open with.
 *
 *   1. writes go through the three-member cluster;
 *   1b. member 1 is cut off from the others both ways at the proxies: a write through
 *      members 2 and 3 succeeds and is not seen by a serializable read on member 1;
 *      healed, member 1 serves it to a linearizable read;
 *   2. member 1 is killed (SIGKILL): writes go on through the other two; member 1
 *      restarts on its directory and serves, alone as endpoint, a linearizable read
 *      of a key written while it was down (it caught up);
 *   3. every member is killed at once and restarted: every key written is read back
 *      (what was acknowledged was on disk: nothing else holds it now);
 *   4. every member's clock is made to run 4x fast (DATA/skew_ppm and SIGUSR1): a key
 *      on a 2 s lease is gone after 1.5 s of real time (6 s of the members' time);
 *   5. the event files: each start says its incarnation, counted on disk (member 1:
 *      0, 1, 2; the others 0, 1), and no raft_safety line.
 *
 * The members run under the live supervisor (harness/live/live_member.h: claimed
 * ports, process groups, parent-death signal).
 *
 * Usage: test_member FAULTLINE_BINARY WORKDIR (WORKDIR is made afresh);
 *        test_member --hold FAULTLINE_BINARY WORKDIR: starts the members, writes their
 *        pids to WORKDIR/pids and waits to be killed (tests/live/pdeath.sh).
 */
#include "fl_test.h"

#include "harness/live/live_member.h"
#include "harness/live/live_proxy.h"
#include "nodes/client/client.h"
#include "nodes/env/env_uv.h"
#include "nodes/server/server.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define N               3
#define CLIENT_ADDR     100
#define STEP_TIMEOUT_NS (30 * FL_S)

static const char *bin, *work;
static uv_loop_t loop;
static struct fl_env *cenv;
static struct lv_workdir wd;
static struct lv_member_cluster mc;

static const char *const member_opts[] = {"--election-ms", "500", "--heartbeat-ms", "50", NULL};

static void cluster_start(void)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", work, work); /* a fresh build */
    CHECK_EQ_INT(system(cmd), 0);
    struct fl_buf err;
    fl_buf_init(&err);
    CHECK_EQ_INT(lv_workdir_open(&wd, work, true, &err), FL_OK);
    CHECK_EQ_INT(lv_member_cluster_start(&mc, &loop, &wd, N, bin, 7, member_opts, &err), FL_OK);
    if (err.len)
        fprintf(stderr, "%s\n", fl_buf_cstr(&err));
    fl_buf_close(&err);
}

static void member_kill(int node)
{
    struct lv_proc *p = &mc.m[node - 1].proc;
    CHECK(p->running); /* it was still running */
    CHECK_EQ_INT(lv_proc_kill(p), FL_OK);
    CHECK(!p->running && p->term_signal == SIGKILL);
}

static void member_start(int node)
{
    struct fl_buf err;
    fl_buf_init(&err);
    CHECK_EQ_INT(lv_proc_start(&mc.m[node - 1].proc, &err), FL_OK);
    fl_buf_close(&err);
}

/* ---- synchronous calls over the loop ---- */
static bool done;
static int status;
static char got[64];
static int64_t lease_id;

static void on_done(void *ud, const struct kvc_result *r)
{
    (void)ud;
    done = true;
    status = r->status;
    got[0] = 0;
    lease_id = r->lease_id;
    if (r->status == KVC_OK && r->op.kv_count == 1)
        snprintf(got, sizeof got, "%.*s", (int)r->op.kvs[0].value.n,
                 (const char *)r->op.kvs[0].value.p);
}

/* A client of the members in mask (bit i: member i; 0: all). */
static struct kvc_client *client_new(unsigned mask)
{
    static struct kvc_endpoint eps[N];
    size_t n = 0;
    for (int i = 1; i <= N; i++)
        if (!mask || (mask & (1u << i)))
            eps[n++] = (struct kvc_endpoint){i, i};
    struct kvc_config cfg;
    kvc_config_default(&cfg);
    cfg.endpoints = eps;
    cfg.endpoint_count = n;
    struct kvc_client *c = NULL;
    const char *err = NULL;
    CHECK_EQ_INT(kvc_client_new_env(cenv, CLIENT_ADDR, &cfg, &c, &err), FL_OK);
    return c;
}

static void client_free(struct kvc_client *c)
{
    kvc_client_close(c);
    kvc_client_free(c);
}

static void wait_done(void)
{
    uint64_t deadline = uv_hrtime() + (uint64_t)STEP_TIMEOUT_NS;
    while (!done && uv_hrtime() < deadline)
        uv_run(&loop, UV_RUN_ONCE);
}

/* Puts key=val, retrying a failed call until STEP_TIMEOUT_NS (an election may be on). */
static int put(struct kvc_client *c, const char *key, const char *val)
{
    uint64_t deadline = uv_hrtime() + (uint64_t)STEP_TIMEOUT_NS;
    do {
        done = false;
        kvc_put(c, (struct kvc_bytes){(const uint8_t *)key, strlen(key)},
                (struct kvc_bytes){(const uint8_t *)val, strlen(val)}, 0, NULL, on_done, NULL);
        wait_done();
    } while (status != KVC_OK && uv_hrtime() < deadline);
    return status;
}

static int get_as(struct kvc_client *c, const char *key, bool serializable)
{
    uint64_t deadline = uv_hrtime() + (uint64_t)STEP_TIMEOUT_NS;
    struct kvc_request req = {.method = KVC_RANGE};
    req.op.kind = KVC_OP_RANGE;
    req.op.key = (struct kvc_bytes){(const uint8_t *)key, strlen(key)};
    req.op.serializable = serializable;
    do {
        done = false;
        kvc_call(c, &req, NULL, on_done, NULL);
        wait_done();
    } while (status != KVC_OK && uv_hrtime() < deadline);
    return status;
}

static int get(struct kvc_client *c, const char *key)
{
    return get_as(c, key, false);
}

/* Runs the loop (the proxies, the client) for ms. */
static void run_for(int64_t ms)
{
    uint64_t until = uv_hrtime() + (uint64_t)(ms * FL_MS);
    while (uv_hrtime() < until) {
        uv_run(&loop, UV_RUN_NOWAIT);
        usleep(1000);
    }
}

/* Events read through lv_member_events_poll: leader events per slot, and all. */
static int polled_leaders[N + 1], polled;

static void on_event(void *arg, int slot, json_t *ev)
{
    (void)arg;
    polled++;
    CHECK(slot >= 1 && slot <= N);
    CHECK_EQ_INT((int)json_integer_value(json_object_get(ev, "node")), slot);
    CHECK(json_integer_value(json_object_get(ev, "at_ns")) > 0);
    const char *kind = json_string_value(json_object_get(ev, "kind"));
    CHECK(kind != NULL);
    if (kind && !strcmp(kind, "leader"))
        polled_leaders[slot]++;
}

/* How many lines of member node's event file contain both a and b. */
static int event_lines(int node, const char *a, const char *b)
{
    char path[512], line[4096];
    snprintf(path, sizeof path, "%s", mc.m[node - 1].events_path);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    int n = 0;
    while (fgets(line, sizeof line, f))
        n += strstr(line, a) && (!b || strstr(line, b));
    fclose(f);
    return n;
}

static void test_members(void)
{
    uv_loop_init(&loop);
    cluster_start();
    char cdir[512];
    snprintf(cdir, sizeof cdir, "%s/client", work);
    const char *err = NULL;
    cenv = env_uv_new(&loop, CLIENT_ADDR, cdir, 1, &err);
    CHECK(cenv != NULL);
    for (int i = 1; i <= N; i++)
        env_uv_map(cenv, i, SRV_CLIENT_PORT, mc.m[i - 1].client_proxy_port);

    /* 1 */
    struct kvc_client *all = client_new(0);
    char k[16], v[16];
    for (int i = 0; i < 10; i++) {
        snprintf(k, sizeof k, "k%d", i);
        snprintf(v, sizeof v, "v%d", i);
        CHECK_EQ_INT(put(all, k, v), KVC_OK);
    }
    /* 1b */
    lv_member_cluster_isolate(&mc, 0, true);
    struct kvc_client *two = client_new(1u << 2 | 1u << 3);
    CHECK_EQ_INT(put(two, "cut", "during"), KVC_OK);
    client_free(two);
    run_for(300); /* connected, member 1 would have it by now (heartbeat 50 ms) */
    struct kvc_client *one = client_new(1u << 1);
    CHECK_EQ_INT(get_as(one, "cut", true), KVC_OK);
    CHECK_EQ_STR(got, ""); /* it did not hear of it */
    CHECK(mc.net.bytes_dropped > 0);
    lv_member_cluster_isolate(&mc, 0, false);
    CHECK_EQ_INT(get(one, "cut"), KVC_OK);
    CHECK_EQ_STR(got, "during");
    client_free(one);

    /* 2 */
    member_kill(1);
    for (int i = 10; i < 20; i++) {
        snprintf(k, sizeof k, "k%d", i);
        snprintf(v, sizeof v, "v%d", i);
        CHECK_EQ_INT(put(all, k, v), KVC_OK);
    }
    member_start(1);
    one = client_new(1u << 1);
    CHECK_EQ_INT(get(one, "k19"), KVC_OK);
    CHECK_EQ_STR(got, "v19");
    client_free(one);
    client_free(all);

    /* 3 */
    for (int i = 1; i <= N; i++)
        member_kill(i);
    for (int i = 1; i <= N; i++)
        member_start(i);
    all = client_new(0);
    for (int i = 0; i < 20; i++) {
        snprintf(k, sizeof k, "k%d", i);
        snprintf(v, sizeof v, "v%d", i);
        CHECK_EQ_INT(get(all, k), KVC_OK);
        CHECK_EQ_STR(got, v);
    }
    client_free(all);

    /* 4 */
    for (int i = 1; i <= N; i++) {
        char path[600];
        snprintf(path, sizeof path, "%s/skew_ppm", mc.m[i - 1].data_dir);
        FILE *f = fopen(path, "w");
        CHECK(f != NULL);
        fputs("4000000\n", f);
        fclose(f);
        CHECK_EQ_INT(kill(mc.m[i - 1].proc.pid, SIGUSR1), 0);
    }
    run_for(300);
    for (int i = 1; i <= N; i++)
        CHECK_EQ_INT(event_lines(i, "\"kind\":\"skew\"", "clock rate 4000000 ppm"), 1);
    all = client_new(0);
    struct kvc_request grant = {.method = KVC_LEASE_GRANT, .ttl_s = 2};
    done = false;
    kvc_call(all, &grant, NULL, on_done, NULL);
    wait_done();
    CHECK_EQ_INT(status, KVC_OK);
    CHECK(lease_id != 0);
    done = false;
    kvc_put(all, (struct kvc_bytes){(const uint8_t *)"leased", 6},
            (struct kvc_bytes){(const uint8_t *)"x", 1}, lease_id, NULL, on_done, NULL);
    wait_done();
    CHECK_EQ_INT(status, KVC_OK);
    run_for(1500); /* 6 s of the members' clocks: the 2 s lease expired */
    CHECK_EQ_INT(get(all, "leased"), KVC_OK);
    CHECK_EQ_STR(got, "");
    client_free(all);

    /* 5 */
    for (int i = 1; i <= N; i++) {
        struct lv_proc *p = &mc.m[i - 1].proc;
        CHECK_EQ_INT(kill(-p->pid, SIGTERM), 0);
        CHECK_EQ_INT(lv_proc_wait_exit(p, 10000), FL_OK);
        CHECK(p->term_signal == 0 && p->exit_status == 0); /* a clean stop */
    }
    CHECK_EQ_INT(event_lines(1, "\"kind\":\"start\"", "incarnation 0"), 1);
    CHECK_EQ_INT(event_lines(1, "\"kind\":\"restart\"", "incarnation 1"), 1);
    CHECK_EQ_INT(event_lines(1, "\"kind\":\"restart\"", "incarnation 2"), 1);
    CHECK_EQ_INT(event_lines(2, "\"kind\":\"restart\"", "incarnation 1"), 1);
    CHECK_EQ_INT(event_lines(2, "\"kind\":\"restart\"", "incarnation 2"), 0);
    int leaders = 0;
    for (int i = 1; i <= N; i++) {
        CHECK_EQ_INT(event_lines(i, "\"kind\":\"raft_safety\"", NULL), 0);
        leaders += event_lines(i, "\"kind\":\"leader\"", NULL);
    }
    CHECK(leaders >= 2); /* one before the full restart, one after */
    int first = lv_member_events_poll(&mc, on_event, NULL);
    CHECK(first > 0 && first == polled);
    CHECK_EQ_INT(lv_member_events_poll(&mc, on_event, NULL), 0); /* nothing new */
    for (int i = 1; i <= N; i++)
        CHECK_EQ_INT(polled_leaders[i], event_lines(i, "\"kind\":\"leader\"", NULL));

    env_uv_free(cenv);
    lv_member_cluster_close(&mc);
    lv_workdir_close(&wd);
    uv_run(&loop, UV_RUN_DEFAULT);
    CHECK_EQ_INT(uv_loop_close(&loop), 0);
}

/* --hold: the members run until this process is killed; their pids in WORKDIR/pids. */
static _Noreturn void hold(void)
{
    uv_loop_init(&loop);
    cluster_start();
    char path[600];
    snprintf(path, sizeof path, "%s/pids", work);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    for (int i = 0; i < N && f; i++)
        fprintf(f, "%d\n", mc.m[i].proc.pid);
    if (f)
        fclose(f);
    for (;;)
        pause();
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "_pdeath-exec"))
        return lv_pdeath_exec_main(argc - 1, argv + 1);
    if (argc == 4 && !strcmp(argv[1], "--hold")) {
        bin = argv[2];
        work = argv[3];
        hold();
    }
    if (argc != 3) {
        fprintf(stderr, "usage: test_member [--hold] FAULTLINE WORKDIR\n");
        return 2;
    }
    bin = argv[1];
    work = argv[2];
    FL_TEST(test_members);
    return fl_test_end();
}
