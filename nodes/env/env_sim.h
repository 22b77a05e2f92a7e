/*
 * env_sim.h: the node environment (env.h) of one process of a simulated world
 * (harness/sim). Every env call is the simulator call the node code made before the
 * environment existed, with the same arguments in the same order, so a run's digest
 * is the same through it. Only the code that creates nodes on a world (the
 * constructors kvc_client_new, srv_cluster_*, and tests) includes this header.
 */
#ifndef FL_ENV_SIM_H
#define FL_ENV_SIM_H

#include "nodes/env/env.h"
#include "harness/sim/sim.h"

/* The environment of process proc of world w (the process must exist). Owned by
 * the caller: free with env_sim_free after the last use (it outlives kills and
 * restarts of the process; fsync callbacks pending at a kill are reclaimed). */
struct fl_env *env_sim_new(struct sim_world *w, int proc);
void env_sim_free(struct fl_env *e);

/* The world and process behind an environment made by env_sim_new. */
struct sim_world *env_sim_world(const struct fl_env *e);
int env_sim_proc(const struct fl_env *e);

#endif
