/*
 * rng.c: xoshiro256** (Blackman and Vigna) seeded through splitmix64, and the
 * integer-only helpers every random decision of a run goes through. Streams are
 * derived from (master seed, stream name): the name is hashed with fl_hash64 and
 * mixed with the seed through splitmix64, so each name gets its own independent
 * state and drawing from one stream never moves another.
 */
#include "harness/sim/sim.h"

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

static inline uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

void sim_rng_seed(struct sim_rng *r, uint64_t seed)
{
    uint64_t x = seed;
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&x);
    /* splitmix64 never yields four zeros in a row from one sequence, but keep the
     * generator's one forbidden state impossible by construction. */
    FL_ASSERT((r->s[0] | r->s[1] | r->s[2] | r->s[3]) != 0);
}

void sim_rng_derive(struct sim_rng *r, uint64_t master_seed, const char *name)
{
    FL_ASSERT(name != NULL);
    uint64_t h = fl_hash64(name, strlen(name));
    uint64_t x = master_seed;
    uint64_t a = splitmix64(&x);
    x = h ^ rotl(a, 17);
    uint64_t b = splitmix64(&x);
    sim_rng_seed(r, a ^ b ^ h);
}

uint64_t sim_rng_u64(struct sim_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

/* Lemire's multiply-and-reject: unbiased, usually one draw and no division. */
uint64_t sim_rng_below(struct sim_rng *r, uint64_t n)
{
    FL_ASSERT(n > 0);
    unsigned __int128 m = (unsigned __int128)sim_rng_u64(r) * n;
    uint64_t lo = (uint64_t)m;
    if (lo < n) {
        uint64_t threshold = (0 - n) % n;
        while (lo < threshold) {
            m = (unsigned __int128)sim_rng_u64(r) * n;
            lo = (uint64_t)m;
        }
    }
    return (uint64_t)(m >> 64);
}

int64_t sim_rng_range(struct sim_rng *r, int64_t lo, int64_t hi)
{
    FL_ASSERTF(lo <= hi, "empty range [%lld, %lld]", (long long)lo, (long long)hi);
    uint64_t span = (uint64_t)hi - (uint64_t)lo;
    if (span == UINT64_MAX)
        return (int64_t)sim_rng_u64(r);
    return (int64_t)((uint64_t)lo + sim_rng_below(r, span + 1));
}

bool sim_rng_chance_ppm(struct sim_rng *r, uint32_t ppm)
{
    if (ppm == 0)
        return false;
    if (ppm >= SIM_PPM)
        return true;
    return sim_rng_below(r, (uint64_t)SIM_PPM) < ppm;
}
