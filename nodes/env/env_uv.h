/*
 * env_uv.h: the node environment (env.h) of a real process, over a libuv loop
 * (issue 16 §2): clocks, timers, a random stream, files (a data directory; real
 * write, rename and fsync) and sockets (loopback TCP, each frame a 4-byte
 * little-endian length and the bytes). Addresses: env_connect(peer, port) dials the
 * TCP port env_uv_map gave (peer, port); env_listen(port) listens on the one mapped
 * for (self, port). Every connection it dials starts with a hello frame naming its
 * own address, which the acceptor reads before it announces the connection, so an
 * accepted connection's peer is the dialler's address (self), even through a proxy.
 * Failpoints: the node code's (env_failpoint) fire as env_uv_failpoint_set says, as
 * the simulator's flt_check would for this process; the simulated disk's and
 * network's (disk/..., net/...) have no site here.
 *
 * Clocks: both are the loop's monotonic clock (uv_hrtime); the local clock can be
 * skewed by a rate in parts per million (env_uv_set_rate), which also scales timer
 * delays, as the simulator's skew does. A crash (env_crash, a failpoint's crash)
 * exits the process (_exit(70)), as a panic would.
 */
#ifndef FL_ENV_UV_H
#define FL_ENV_UV_H

#include "nodes/env/env.h"

#include <uv.h>

/* The hello frame that opens every connection an env_uv dials: a frame of
 * ENV_UV_HELLO_LEN bytes, ENV_UV_HELLO_MAGIC and the dialler's address (u32, little
 * endian). A proxy can tell the sender from it (harness/live/live_member.h). */
#define ENV_UV_HELLO_MAGIC "FLHI"
#define ENV_UV_HELLO_LEN   8

/* An environment over loop with its files under dir (created if absent; must not
 * end with '/'), its random stream seeded from seed. Owned by the caller: free with
 * env_uv_free after the last timer and fsync completed or was stopped; sockets and
 * listeners still open are closed by it (run the loop once more to release them). NULL, with *err
 * set (static), when dir cannot be made. */
struct fl_env *env_uv_new(uv_loop_t *loop, int self, const char *dir, uint64_t seed,
                          const char **err);
/* A member process starts on its data directory: the incarnation (env_incarnation) is
 * the number of earlier starts on it, kept in the file "incarnation", which now counts
 * this one too (written and synced before this returns). FL_OK, or an error with *err
 * set (static). Without this call the incarnation is 0 (clients, tests). */
int env_uv_count_start(struct fl_env *e, const char **err);
/* Address (addr, port) is loopback TCP port tcp_port (set again: replaced). */
void env_uv_map(struct fl_env *e, int addr, int port, int tcp_port);
void env_uv_free(struct fl_env *e);
/* fsyncs started and not completed yet (a caller that frees the environment runs the
 * loop until none is left). */
int env_uv_fsyncs(struct fl_env *e);
/* Failpoint fp of this process fires action (ENV_FAULT_NONE: off) with delay_ns for
 * a delay, probability p_ppm (0: always), at most count times (0: unlimited), after
 * skip hits; set again: replaced, its counts start over. */
void env_uv_failpoint_set(struct fl_env *e, enum flt_point fp, enum env_fault action,
                          int64_t delay_ns, uint32_t p_ppm, uint32_t count, uint32_t skip);
/* Skews the local clock: rate_ppm in [1000, 100e6], 1,000,000 exact (continuous). */
void env_uv_set_rate(struct fl_env *e, int64_t rate_ppm);

#endif
