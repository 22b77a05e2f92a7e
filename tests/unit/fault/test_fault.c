/*
 * test_fault.c: failpoints: the registry, per-node enabling, count and skip,
 * probabilities decided by our RNG (deterministic per seed, independent per
 * node), the decision really going through libfiu, and the disk and network
 * failpoints the simulator asks about (write/fsync/read EIO, torn write,
 * net/drop, net/corrupt), plus the crash action.
 */
#include "fl_test.h"
#include "harness/fault/fault.h"

#define FIU_ENABLE 1
#include <fiu-control.h>
#include <fiu.h>

static void test_registry(void)
{
    const char *want[] = {"raft/before_save",
                          "raft/after_save",
                          "mvcc/before_commit",
                          "mvcc/compact_batch",
                          "server/defrag_before_rename",
                          "server/before_apply_snapshot",
                          "server/before_send",
                          "disk/fsync_eio",
                          "disk/write_eio",
                          "disk/read_eio",
                          "disk/torn_write",
                          "net/drop",
                          "net/corrupt",
                          "watch/before_send"};
    for (size_t i = 0; i < FL_ARRAY_LEN(want); i++)
        CHECK(flt_failpoint_find(want[i]) != NULL || (printf("missing %s\n", want[i]), 0));
    CHECK(flt_failpoint_count() >= FL_ARRAY_LEN(want));
    for (size_t i = 0; i < flt_failpoint_count(); i++) {
        const struct flt_info *f = flt_failpoint_info(i);
        CHECK(strchr(f->name, '/') != NULL && strlen(f->description) > 10);
    }
    CHECK(flt_failpoint_info(flt_failpoint_count()) == NULL);
    /* One table: the enum, the names the sites use and the registry agree, and each
     * name is there once. */
    CHECK_EQ_INT(flt_failpoint_count(), FLT_POINT_COUNT);
    for (int p = 0; p < FLT_POINT_COUNT; p++) {
        const char *name = flt_point_name((enum flt_point)p);
        CHECK(name != NULL);
        CHECK(strcmp(flt_failpoint_info((size_t)p)->name, name) == 0);
        CHECK(flt_failpoint_find(name) == flt_failpoint_info((size_t)p));
        for (int q = 0; q < p; q++)
            CHECK(strcmp(flt_point_name((enum flt_point)q), name) != 0);
    }
    CHECK(flt_point_name(FLT_POINT_COUNT) == NULL);
    CHECK(strcmp(flt_point_name(FLT_MVCC_COMPACT_BATCH), "mvcc/compact_batch") == 0);
    enum sim_fault a;
    CHECK(flt_action_parse("delay_ms", &a) && a == SIM_FAULT_DELAY);
    CHECK(flt_action_parse("crash", &a) && a == SIM_FAULT_CRASH);
    CHECK(!flt_action_parse("explode", &a));
}

static struct sim_world *world2(uint64_t seed)
{
    struct sim_world *w = sim_world_new(seed);
    sim_proc_add(w, "n0", NULL, NULL);
    sim_proc_add(w, "n1", NULL, NULL);
    return w;
}

static void test_per_node_count_skip(void)
{
    struct sim_world *w = world2(1);
    struct flt_spec s = {.node = 0, .action = SIM_FAULT_ERROR, .count = 2, .skip = 1};
    CHECK_EQ_INT(flt_enable(w, "disk/write_eio", &s), FL_OK);
    CHECK_EQ_INT(flt_enable(w, "no/such", &s), FL_ENOENT);
    struct flt_spec bad = {.node = 7, .action = SIM_FAULT_ERROR};
    CHECK_EQ_INT(flt_enable(w, "disk/write_eio", &bad), FL_EINVAL);
    int rc[5];
    for (int i = 0; i < 5; i++)
        rc[i] = disk_append(w, 0, "f", "x", 1);
    CHECK_EQ_INT(rc[0], FL_OK); /* skipped */
    CHECK_EQ_INT(rc[1], FL_EIO);
    CHECK_EQ_INT(rc[2], FL_EIO);
    CHECK_EQ_INT(rc[3], FL_OK); /* count exhausted */
    CHECK_EQ_INT(rc[4], FL_OK);
    CHECK_EQ_INT(disk_append(w, 1, "f", "x", 1), FL_OK); /* other node untouched */
    CHECK_EQ_INT(flt_fired(w, FLT_DISK_WRITE_EIO), 2);
    uint64_t size;
    disk_size(w, 0, "f", &size);
    CHECK_EQ_INT(size, 3); /* failed writes wrote nothing */
    CHECK_EQ_INT(flt_disable(w, "disk/write_eio", 0), FL_OK);
    CHECK_EQ_INT(flt_disable(w, "disk/write_eio", 0), FL_ENOENT);
    sim_world_free(w);
}

/* A bit pattern of which of n checks on node fired, for p ppm. */
static void pattern(uint64_t seed, bool also_node1, uint32_t ppm, char *out, int n)
{
    struct sim_world *w = world2(seed);
    struct flt_spec s = {.node = 0, .action = SIM_FAULT_ERROR, .p_ppm = ppm};
    flt_enable(w, "raft/before_save", &s);
    if (also_node1) {
        struct flt_spec s1 = {.node = 1, .action = SIM_FAULT_ERROR, .p_ppm = 500000};
        flt_enable(w, "raft/before_save", &s1);
    }
    for (int i = 0; i < n; i++) {
        out[i] = flt_check_proc(w, 0, FLT_RAFT_BEFORE_SAVE, NULL) ? '1' : '0';
        if (also_node1)
            flt_check_proc(w, 1, FLT_RAFT_BEFORE_SAVE, NULL);
    }
    out[n] = 0;
    sim_world_free(w);
}

static void test_probability(void)
{
    static char a[10001], b[10001], c[10001], d[10001];
    pattern(5, false, 300000, a, 10000);
    pattern(5, false, 300000, b, 10000);
    pattern(6, false, 300000, c, 10000);
    pattern(5, true, 300000, d, 10000);
    CHECK(strcmp(a, b) == 0); /* deterministic per seed */
    CHECK(strcmp(a, c) != 0);
    CHECK(strcmp(a, d) == 0); /* node 1's draws do not move node 0's */
    int ones = 0;
    for (int i = 0; i < 10000; i++)
        ones += a[i] == '1';
    CHECK(ones > 2800 && ones < 3200);
}

static void test_through_libfiu(void)
{
    struct sim_world *w = world2(7);
    struct flt_spec s = {.node = -1, .action = SIM_FAULT_DROP};
    flt_enable(w, "watch/before_send", &s);
    CHECK_EQ_INT(flt_check_proc(w, 0, FLT_WATCH_BEFORE_SEND, NULL), SIM_FAULT_DROP);
    /* a stray fiu_fail outside flt_check never fires */
    CHECK_EQ_INT(fiu_fail("watch/before_send"), 0);
    /* switch it off in libfiu behind our back: the decision went through libfiu */
    fiu_disable("watch/before_send");
    CHECK_EQ_INT(flt_check_proc(w, 0, FLT_WATCH_BEFORE_SEND, NULL), SIM_FAULT_NONE);
    sim_world_free(w);
    /* a new world starts with nothing enabled */
    w = world2(7);
    CHECK_EQ_INT(flt_check_proc(w, 0, FLT_WATCH_BEFORE_SEND, NULL), SIM_FAULT_NONE);
    sim_world_free(w);
}

struct fs {
    int done, err;
    int64_t at;
};
static void fsync_done(struct sim_world *w, int proc, int err, void *ctx)
{
    struct fs *f = ctx;
    (void)proc;
    f->done++;
    f->err = err;
    f->at = sim_now_ns(w);
}

static void test_disk_failpoints(void)
{
    struct sim_world *w = world2(8);
    struct flt_spec s = {.node = 0, .action = SIM_FAULT_ERROR, .count = 1};
    flt_enable(w, "disk/fsync_eio", &s);
    struct fs f = {0};
    disk_append(w, 0, "wal", "abc", 3);
    disk_fsync(w, 0, "wal", fsync_done, &f);
    sim_run_for(w, 10 * FL_MS);
    CHECK_EQ_INT(f.err, FL_EIO);
    uint64_t wr, sy;
    disk_watermarks(w, 0, "wal", &wr, &sy);
    CHECK(wr == 3 && sy == 0); /* nothing became durable */
    disk_fsync(w, 0, "wal", fsync_done, &f);
    sim_run_for(w, 10 * FL_MS);
    CHECK_EQ_INT(f.err, FL_OK);
    /* delay */
    struct flt_spec d = {.node = 0, .action = SIM_FAULT_DELAY, .delay_ms = 50, .count = 1};
    flt_enable(w, "disk/fsync_eio", &d);
    int64_t t = sim_now_ns(w);
    disk_fsync(w, 0, "wal", fsync_done, &f);
    sim_run_for(w, FL_S);
    CHECK_EQ_INT(f.at - t, 51 * FL_MS);
    /* latent read error */
    struct flt_spec r = {.node = 0, .action = SIM_FAULT_ERROR, .count = 1};
    flt_enable(w, "disk/read_eio", &r);
    char buf[4];
    size_t got;
    CHECK_EQ_INT(disk_read(w, 0, "wal", 0, buf, 3, &got), FL_EIO);
    CHECK_EQ_INT(disk_read(w, 0, "wal", 0, buf, 3, &got), FL_OK);
    /* torn write decided by the failpoint at the crash */
    struct flt_spec tw = {.node = 0, .action = SIM_FAULT_ERROR};
    flt_enable(w, "disk/torn_write", &tw);
    static uint8_t big[4096];
    memset(big, 7, sizeof big);
    disk_append(w, 0, "wal", big, sizeof big);
    sim_proc_kill(w, 0);
    sim_proc_restart(w, 0);
    struct disk_stats st;
    disk_stats_get(w, 0, &st);
    CHECK_EQ_INT(st.torn_writes, 1);
    CHECK_EQ_INT(flt_fired(w, FLT_DISK_TORN_WRITE), 1);
    sim_world_free(w);
}

static int drops;
static void on_dgram(struct sim_world *w, int from, int to, const uint8_t *p, size_t n, void *ctx)
{
    (void)w, (void)from, (void)to, (void)p, (void)n, (void)ctx;
    drops++;
}

static void test_net_failpoints(void)
{
    struct sim_world *w = world2(9);
    net_dgram_bind(w, 1, 1, on_dgram, NULL);
    struct flt_spec s = {.node = 0, .action = SIM_FAULT_DROP, .count = 3};
    flt_enable(w, "net/drop", &s);
    for (int i = 0; i < 10; i++)
        net_dgram_send(w, 0, 1, 1, "x", 1);
    struct flt_spec c = {.node = 0, .action = SIM_FAULT_ERROR, .count = 2};
    flt_enable(w, "net/corrupt", &c);
    sim_run_for(w, FL_S);
    CHECK_EQ_INT(drops, 7);
    drops = 0;
    for (int i = 0; i < 10; i++)
        net_dgram_send(w, 0, 1, 1, "x", 1);
    sim_run_for(w, FL_S);
    CHECK_EQ_INT(drops, 8); /* two corrupted, dropped by the CRC check */
    sim_world_free(w);
}

struct crash_ctx {
    int proc;
    int killed;
    bool after_check_alive;
    enum sim_fault got;
};
static void crash_kill(struct sim_world *w, int proc, void *ctx)
{
    (void)w, (void)proc;
    ((struct crash_ctx *)ctx)->killed++;
}
static void crash_timer(struct sim_world *w, void *ctx)
{
    struct crash_ctx *c = ctx;
    c->got = flt_check(w, FLT_RAFT_BEFORE_SAVE, NULL);
    c->after_check_alive = sim_proc_alive(w, c->proc);
    CHECK_EQ_INT(c->killed, 0); /* on_kill waits until we return */
}

static void test_crash_action(void)
{
    struct sim_world *w = sim_world_new(10);
    struct crash_ctx c = {0};
    struct sim_proc_ops ops = {.on_kill = crash_kill};
    c.proc = sim_proc_add(w, "n0", &ops, &c);
    struct flt_spec s = {.node = c.proc, .action = SIM_FAULT_CRASH};
    flt_enable(w, "raft/before_save", &s);
    CHECK_EQ_INT(flt_check(w, FLT_RAFT_BEFORE_SAVE, NULL), SIM_FAULT_NONE); /* no node current */
    sim_timer_start(w, c.proc, FL_MS, crash_timer, &c);
    sim_run_for(w, 10 * FL_MS);
    CHECK_EQ_INT(c.got, SIM_FAULT_CRASH);
    CHECK(!c.after_check_alive);
    CHECK_EQ_INT(c.killed, 1);
    sim_world_free(w);
}

int main(void)
{
    FL_TEST(test_registry);
    FL_TEST(test_per_node_count_skip);
    FL_TEST(test_probability);
    FL_TEST(test_through_libfiu);
    FL_TEST(test_disk_failpoints);
    FL_TEST(test_net_failpoints);
    FL_TEST(test_crash_action);
    return fl_test_end();
}
