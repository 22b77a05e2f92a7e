/*
 * test_mirror_watch_scale.c: closing watches costs the run's in-memory history
 * (run_mirror.c) work linear in their number (issue 12, item 7: each close scanned
 * every watch from the end, so N watches closed in the order they opened cost
 * N^2/2 steps).
 *
 * A recorded run with two clients opens N watches on each, interleaved (their ids,
 * client * 1,000,000 + the client's own, are not in opening order), then cancels them
 * all in opening order and finishes. The work is counted, not timed: the mirror's
 * watch_steps (slots examined by close lookups and rebuilds of its id map) must stay
 * within a few per watch. The run verifies the mirror against its database at the end
 * (verify_history), so every close must have reached the right watch: a wrong one is
 * exit 3 and an 'error' row. Before the map, counted the same way (one step per watch
 * compared), the closes took 18,003,000 steps; 7,635 now.
 */
#include "harness/run/run_int.h"

#include "fl_test.h"
#include "fl_tmpdir.h"
#include "run_fixture.h"

#include <stdlib.h>
#include <unistd.h>

#define PER_CLIENT 3000

static char dir[] = "/tmp/fl-test-mirror-scale-XXXXXX";

int main(void)
{
    if (!fl_tmpdir_make(dir))
        return 1;
    char db[256];
    snprintf(db, sizeof db, "%s/m.db", dir);
    struct run_options o = {
        .scenario = "test_mirror_watch_scale.c", .seed = 5, .db_path = db, .verify_history = true};
    struct run_world *rw = fx_open(&o);
    struct fx_config x;
    fx_config_default(&x);
    x.k.count = 2;
    x.w.rate = 0;
    fx_setup(rw, &x, RUN_CHECK_WATCH);
    run_advance(rw, 2 * FL_S);

    static uint64_t ids[2][PER_CLIENT];
    static char keys[PER_CLIENT][16];
    for (int i = 0; i < PER_CLIENT; i++) {
        int n = snprintf(keys[i], sizeof keys[i], "key/%05d", i);
        struct kvc_watch_req wr;
        memset(&wr, 0, sizeof wr);
        wr.key = (struct kvc_bytes){(const uint8_t *)keys[i], (size_t)n};
        for (int cl = 0; cl < 2; cl++)
            ids[cl][i] = kvc_watch(rw->clients[cl].c, &wr, NULL, NULL, NULL);
    }
    run_advance(rw, 1 * FL_S);
    uint64_t before = rw->mirror.watch_steps;
    for (int i = 0; i < PER_CLIENT; i++)
        for (int cl = 0; cl < 2; cl++)
            CHECK_EQ_INT(kvc_watch_cancel(rw->clients[cl].c, ids[cl][i]), FL_OK);
    uint64_t closes = rw->mirror.watch_steps - before;
    CHECK(!rw->mirror.broken);
    run_advance(rw, 1 * FL_S);
    uint64_t all = rw->mirror.watch_steps;
    printf("%d watches closed: %llu steps (%llu with opening)\n", 2 * PER_CLIENT,
           (unsigned long long)closes, (unsigned long long)all);
    CHECK(closes <= 4u * 2 * PER_CLIENT);
    CHECK(all <= 16u * 2 * PER_CLIENT);

    struct run_result res;
    CHECK_EQ_INT(run_world_finish(rw, NULL, &res), FL_OK);
    const char *v = json_string_value(json_object_get(res.summary, "verdict"));
    CHECK_EQ_STR(v, "pass");
    run_result_close(&res);
    run_world_close(rw);
    fl_tmpdir_remove(dir);
    return fl_test_end();
}
