/*
 * client_sim.c: a client on a simulated world. It adds the client's process
 * ("client/<id>") to the world and builds the client over that process's node
 * environment (nodes/env/env_sim.h); everything else of the client sees only the
 * environment.
 */
#include "nodes/client/client_int.h"
#include "nodes/env/env_sim.h"

#include <stdio.h>

int kvc_client_new(struct sim_world *w, const struct kvc_config *cfg, struct kvc_client **out,
                   const char **err)
{
    *out = NULL;
    int rc = kvc_config_check(cfg, err);
    if (rc != FL_OK)
        return rc; /* before the process exists, so a bad config leaves no trace */
    char name[48];
    snprintf(name, sizeof(name), "client/%d", cfg->id);
    struct sim_proc_ops ops = {NULL, NULL};
    int proc = sim_proc_add(w, name, &ops, NULL);
    struct fl_env *env = env_sim_new(w, proc);
    rc = kvc_client_new_env(env, proc, cfg, out, err);
    FL_ASSERT(rc == FL_OK); /* the config was checked */
    (*out)->env_free = env_sim_free;
    return FL_OK;
}
