/*
 * rng.h: the one pseudo-random generator of faultline, xoshiro256** (Blackman and
 * Vigna) seeded through splitmix64, and the integer-only helpers every random
 * decision goes through. The simulator's named streams (sim_rng_*), the Raft core's
 * election timeouts and the client balancers' choices all draw from it, so a run's
 * randomness has exactly one definition.
 *
 * A stream is a plain value (struct fl_rng): copying it forks it. It owns nothing.
 * Pure: no I/O, no clock, no global state; nothing random goes through a float.
 * Changing any function here changes every bundled scenario's digest.
 */
#ifndef FL_RNG_H
#define FL_RNG_H

#include "harness/common/common.h"

struct fl_rng {
    uint64_t s[4];
};

/* One step of splitmix64: advances *x by the golden-ratio increment and returns its
 * mix. Used to expand a 64-bit seed into the 256-bit state. */
uint64_t fl_splitmix64(uint64_t *x);

/* Seeds r from one 64-bit value: the state is four consecutive splitmix64 outputs.
 * Never leaves the generator's one forbidden (all-zero) state. */
void fl_rng_seed(struct fl_rng *r, uint64_t seed);
/* Seeds r from (master seed, stream name): streams with different names are
 * independent, so drawing from one never moves another. */
void fl_rng_derive(struct fl_rng *r, uint64_t master_seed, const char *name);
/* The next 64 bits of the stream. */
uint64_t fl_rng_u64(struct fl_rng *r);
/* Uniform in [0, n) without modulo bias (Lemire's multiply-and-reject); n > 0. */
uint64_t fl_rng_below(struct fl_rng *r, uint64_t n);
/* Uniform in [lo, hi], both inclusive; lo <= hi. */
int64_t fl_rng_range(struct fl_rng *r, int64_t lo, int64_t hi);
/* True with probability ppm / 1,000,000 (0 never draws and is false; >= 1e6 is
 * always true without drawing). */
bool fl_rng_chance_ppm(struct fl_rng *r, uint32_t ppm);

#define FL_PPM INT64_C(1000000)

#endif
