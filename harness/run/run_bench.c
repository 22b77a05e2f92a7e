/*
 * run_bench.c: the bench entry point (DESIGN §7 e2e_speedup, recorded_ops_per_s): one
 * whole run without Lua, recording into a temporary database and running the
 * checkers, timed on the wall clock (benchmarks only; never a test assertion).
 */
#include "harness/run/run_int.h"

#include <unistd.h>

int run_bench(uint64_t seed, int nodes, int clients, int rate, int64_t sim_ns,
              struct run_bench_result *out)
{
    memset(out, 0, sizeof *out);
    char path[] = "/tmp/faultline-bench-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return FL_EIO;
    close(fd);
    unlink(path);
    struct run_options o = {.scenario = "(bench)", .seed = seed, .db_path = path};
    struct run_world *rw = NULL;
    char err[256];
    double t0 = run_wall_now_s();
    int rc = run_world_open(&rw, &o, err, sizeof err);
    if (rc)
        goto out;
    struct run_cluster_config cc;
    struct run_clients_config kc;
    struct run_workload_config wc;
    run_cluster_config_default(&cc);
    run_clients_config_default(&kc);
    run_workload_config_default(&wc);
    cc.nodes = nodes;
    kc.count = clients;
    wc.rate = rate > 0 ? rate : -1;
    wc.keys = 1000;
    wc.value_size = 100;
    rc = run_world_setup(rw, &cc, &kc, &wc, RUN_CHECK_LINEARIZABILITY | RUN_CHECK_RAFT_SAFETY, err,
                         sizeof err);
    if (rc)
        goto out;
    run_advance(rw, sim_ns);
    struct run_result res;
    rc = run_world_finish(rw, NULL, &res);
    out->ops_done = rw->sum.ops_ok + rw->sum.ops_fail + rw->sum.ops_unknown;
    out->sim_s = (double)run_now_ns(rw) / 1e9;
    run_result_close(&res);
out:
    run_world_close(rw);
    out->wall_s = run_wall_now_s() - t0;
    hist_remove(path);
    return rc;
}
