/*
 * sweep_seeds.c: seed ranges and shards (DESIGN §3.9, §8). "A..B" is inclusive; shard
 * K/N (K from 1) takes the seeds whose position in the range is K-1 modulo N, so the N
 * shards of a range are disjoint and together cover it, whatever N is.
 */
#include "harness/sweep/sweep.h"

#include <errno.h>

const char *sweep_verdict_name(enum sweep_verdict v)
{
    static const char *const names[] = {[SWEEP_PASS] = "pass",
                                        [SWEEP_FAIL] = "fail",
                                        [SWEEP_UNKNOWN] = "unknown",
                                        [SWEEP_ERROR] = "error"};
    return FL_ENUM_NAME(names, v, "error");
}

bool sweep_parse_seeds(const char *s, uint64_t *first, uint64_t *last)
{
    const char *dots = strstr(s, "..");
    if (!dots)
        return fl_parse_u64(s, strlen(s), first) && (*last = *first, true);
    uint64_t a, b;
    if (!fl_parse_u64(s, (size_t)(dots - s), &a) || !fl_parse_u64(dots + 2, strlen(dots + 2), &b) ||
        a > b)
        return false;
    *first = a;
    *last = b;
    return true;
}

bool sweep_parse_shard(const char *s, int *k, int *n)
{
    const char *slash = strchr(s, '/');
    uint64_t a, b;
    if (!slash || !fl_parse_u64(s, (size_t)(slash - s), &a) ||
        !fl_parse_u64(slash + 1, strlen(slash + 1), &b) || a < 1 || b < 1 || a > b || b > 1000000)
        return false;
    *k = (int)a;
    *n = (int)b;
    return true;
}

uint64_t *sweep_shard_seeds(uint64_t first, uint64_t last, int k, int n, size_t *count)
{
    FL_ASSERT(first <= last && k >= 1 && k <= n);
    uint64_t span = last - first; /* positions 0..span */
    uint64_t start = (uint64_t)(k - 1);
    size_t c = start > span ? 0 : (size_t)((span - start) / (uint64_t)n + 1);
    uint64_t *out = fl_malloc((c ? c : 1) * sizeof *out);
    for (size_t i = 0; i < c; i++)
        out[i] = first + start + (uint64_t)i * (uint64_t)n;
    *count = c;
    return out;
}
