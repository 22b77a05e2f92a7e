/*
 * env_uv.h: the node environment (env.h) of a real process, over a libuv loop
 * (issue 16 §2). PARTIAL: the clocks, timers, random stream and files (a data
 * directory; real write, rename and fsync) are implemented; sockets (TCP with our
 * framing), listening and accepting are not yet: they fail with FL_EINVAL (connect
 * returns 0), so a client or member cannot run over it until they are.
 *
 * Clocks: both are the loop's monotonic clock (uv_hrtime); the local clock can be
 * skewed by a rate in parts per million (env_uv_set_rate), which also scales timer
 * delays, as the simulator's skew does. Failpoints never fire. A crash exits the
 * process (_exit(70)), as a panic would.
 */
#ifndef FL_ENV_UV_H
#define FL_ENV_UV_H

#include "nodes/env/env.h"

#include <uv.h>

/* An environment over loop with its files under dir (created if absent; must not
 * end with '/'), its random stream seeded from seed. Owned by the caller: free with
 * env_uv_free after the last timer and fsync completed or was stopped (the loop is
 * not run here). NULL, with *err set (static), when dir cannot be made. */
struct fl_env *env_uv_new(uv_loop_t *loop, const char *dir, uint64_t seed, const char **err);
void env_uv_free(struct fl_env *e);
/* Skews the local clock: rate_ppm in [1000, 100e6], 1,000,000 exact (continuous). */
void env_uv_set_rate(struct fl_env *e, int64_t rate_ppm);

#endif
