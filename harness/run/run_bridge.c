/*
 * run_bridge.c: the simulated process that stands at a live member's slot on both
 * live targets (--target etcd, --target live). Our clients dial it as they dial a
 * simulated member: it has that member's name ("nSLOT") and listens on its client
 * port; each target's accept callback carries the frames on to the real process.
 */
#include "harness/run/run_int.h"

#include "nodes/server/server.h"

int run_bridge_proc_add(struct sim_world *w, int slot, const struct sim_proc_ops *ops,
                        net_accept_fn *accept, void *ctx)
{
    char name[16];
    snprintf(name, sizeof name, "n%d", slot);
    int proc = sim_proc_add(w, name, ops, ctx);
    net_listen(w, proc, SRV_CLIENT_PORT, accept, ctx);
    return proc;
}
