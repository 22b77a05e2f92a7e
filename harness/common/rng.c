/*
 * rng.c: xoshiro256** seeded through splitmix64 (see rng.h). Streams are derived
 * from (master seed, stream name): the name is hashed with fl_hash64 and mixed with
 * the seed through splitmix64, so each name gets its own independent state.
 *
 * The constants and the order of every draw are part of every run's digest: a change
 * here is a change of every bundled scenario's digest.
 */
#include "harness/common/rng.h"

uint64_t fl_splitmix64(uint64_t *x)
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

void fl_rng_seed(struct fl_rng *r, uint64_t seed)
{
    uint64_t x = seed;
    for (int i = 0; i < 4; i++)
        r->s[i] = fl_splitmix64(&x);
    /* splitmix64 never yields four zeros in a row from one sequence, but keep the
     * generator's one forbidden state impossible by construction. */
    FL_ASSERT((r->s[0] | r->s[1] | r->s[2] | r->s[3]) != 0);
}

void fl_rng_derive(struct fl_rng *r, uint64_t master_seed, const char *name)
{
    FL_ASSERT(name != NULL);
    uint64_t h = fl_hash64(name, strlen(name));
    uint64_t x = master_seed;
    uint64_t a = fl_splitmix64(&x);
    x = h ^ rotl(a, 17);
    uint64_t b = fl_splitmix64(&x);
    fl_rng_seed(r, a ^ b ^ h);
}

uint64_t fl_rng_u64(struct fl_rng *r)
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
uint64_t fl_rng_below(struct fl_rng *r, uint64_t n)
{
    FL_ASSERT(n > 0);
    unsigned __int128 m = (unsigned __int128)fl_rng_u64(r) * n;
    uint64_t lo = (uint64_t)m;
    if (lo < n) {
        uint64_t threshold = (0 - n) % n;
        while (lo < threshold) {
            m = (unsigned __int128)fl_rng_u64(r) * n;
            lo = (uint64_t)m;
        }
    }
    uint64_t v = (uint64_t)(m >> 64);
    FL_ASSERT(v < n);
    return v;
}

int64_t fl_rng_range(struct fl_rng *r, int64_t lo, int64_t hi)
{
    FL_ASSERTF(lo <= hi, "empty range [%lld, %lld]", (long long)lo, (long long)hi);
    uint64_t span = (uint64_t)hi - (uint64_t)lo;
    if (span == UINT64_MAX)
        return (int64_t)fl_rng_u64(r);
    return (int64_t)((uint64_t)lo + fl_rng_below(r, span + 1));
}

bool fl_rng_chance_ppm(struct fl_rng *r, uint32_t ppm)
{
    if (ppm == 0)
        return false;
    if (ppm >= FL_PPM)
        return true;
    return fl_rng_below(r, (uint64_t)FL_PPM) < ppm;
}
