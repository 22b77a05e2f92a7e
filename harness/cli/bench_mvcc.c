/*
 * bench_mvcc.c: the MVCC core's figures for faultline bench (DESIGN §7); owned by the
 * mvcc module.
 *
 * - mvcc_puts_per_s: single-key Put calls with 100-byte values over 1,000 keys, in
 *   rounds of 100,000 puts each followed by a compaction to the current revision
 *   (counted in the time: a store that never compacts grows without bound);
 * - mvcc_range_per_s: Range calls returning 10 consecutive keys ([k, k+10), byte
 *   order) on a store holding 100,000 keys, start keys from an integer LCG;
 * - mvcc_get_per_s (extra): single-key Range calls on the same store;
 * - mvcc_watch_events_per_s (extra): puts delivered to 10 synced prefix watchers
 *   and drained, counted in events produced per second.
 * Each figure is the best of three rounds. Only the figures are timed, never a run.
 */
#include "harness/cli/bench.h"
#include "harness/common/rng.h"
#include "nodes/mvcc/mvcc.h"

#define BENCH_MVCC_KEYS          1000
#define BENCH_MVCC_PUTS          1000000
#define BENCH_MVCC_COMPACT_EVERY 100000
#define BENCH_MVCC_RANGE_KEYS    100000
#define BENCH_MVCC_RANGES        300000
#define BENCH_MVCC_ROUNDS        3

static void bench_mvcc_key(char *out, size_t cap, uint64_t i)
{
    snprintf(out, cap, "/registry/bench/%08llu", (unsigned long long)i);
}

static double bench_mvcc_puts(void)
{
    struct mvcc_store *s = mvcc_open(NULL);
    uint8_t val[100];
    memset(val, 'v', sizeof(val));
    char keys[BENCH_MVCC_KEYS][32];
    for (int i = 0; i < BENCH_MVCC_KEYS; i++)
        bench_mvcc_key(keys[i], sizeof(keys[i]), (uint64_t)i);
    struct mvcc_put_req r = {0};
    struct mvcc_put_result out;
    r.value = val;
    r.value_len = sizeof(val);
    double t0 = bench_now_s();
    for (int i = 0; i < BENCH_MVCC_PUTS; i++) {
        r.key = (const uint8_t *)keys[i % BENCH_MVCC_KEYS];
        r.key_len = strlen(keys[i % BENCH_MVCC_KEYS]);
        val[(size_t)i % sizeof(val)] = (uint8_t)i;
        FL_ASSERT(mvcc_put(s, &r, &out) == MVCC_OK);
        if ((i + 1) % BENCH_MVCC_COMPACT_EVERY == 0)
            FL_ASSERT(mvcc_compact(s, mvcc_current_rev(s), NULL) == MVCC_OK);
    }
    double dt = bench_now_s() - t0;
    FL_ASSERT(mvcc_current_rev(s) == BENCH_MVCC_PUTS + 1);
    mvcc_close(s);
    return dt > 0 ? BENCH_MVCC_PUTS / dt : 0;
}

static struct mvcc_store *bench_mvcc_big_store(void)
{
    struct mvcc_store *s = mvcc_open(NULL);
    uint8_t val[100];
    memset(val, 'r', sizeof(val));
    char key[32];
    struct mvcc_put_req r = {0};
    struct mvcc_put_result out;
    r.value = val;
    r.value_len = sizeof(val);
    r.key = (const uint8_t *)key;
    for (uint64_t i = 0; i < BENCH_MVCC_RANGE_KEYS; i++) {
        /* a scattered insertion order, so the index really merges */
        bench_mvcc_key(key, sizeof(key), (i * 7919) % BENCH_MVCC_RANGE_KEYS);
        r.key_len = strlen(key);
        FL_ASSERT(mvcc_put(s, &r, &out) == MVCC_OK);
    }
    return s;
}

/* Ranges of 10 keys (or single gets when width is 1) per second. */
static double bench_mvcc_ranges(struct mvcc_store *s, int width)
{
    char key[32], end[32];
    struct mvcc_range_req r = {0};
    struct mvcc_range_result out;
    struct fl_rng rng;
    fl_rng_seed(&rng, 20261202);
    int64_t seen = 0;
    double t0 = bench_now_s();
    for (int i = 0; i < BENCH_MVCC_RANGES; i++) {
        uint64_t k = fl_rng_below(&rng, BENCH_MVCC_RANGE_KEYS - (uint64_t)width);
        bench_mvcc_key(key, sizeof(key), k);
        r.key = (const uint8_t *)key;
        r.key_len = strlen(key);
        if (width > 1) {
            bench_mvcc_key(end, sizeof(end), k + (uint64_t)width);
            r.range_end = (const uint8_t *)end;
            r.range_end_len = strlen(end);
        }
        FL_ASSERT(mvcc_range(s, &r, &out) == MVCC_OK);
        seen += (int64_t)out.kvs_len;
        mvcc_range_result_free(&out);
    }
    double dt = bench_now_s() - t0;
    FL_ASSERT(seen == (int64_t)BENCH_MVCC_RANGES * width);
    return dt > 0 ? BENCH_MVCC_RANGES / dt : 0;
}

static double bench_mvcc_watch(void)
{
    struct mvcc_store *s = mvcc_open(NULL);
    const char *prefix = "/registry/bench/";
    const char *end = "/registry/bench0";
    for (int i = 0; i < 10; i++) {
        struct mvcc_watch_req w = {0};
        int64_t id;
        w.key = (const uint8_t *)prefix;
        w.key_len = strlen(prefix);
        w.range_end = (const uint8_t *)end;
        w.range_end_len = strlen(end);
        w.prev_kv = i % 2 == 0;
        FL_ASSERT(mvcc_watch_create(s, &w, &id, NULL) == MVCC_OK);
    }
    uint8_t val[100];
    memset(val, 'w', sizeof(val));
    char key[32];
    struct mvcc_put_req r = {0};
    struct mvcc_put_result out;
    struct mvcc_watch_resp resp;
    r.value = val;
    r.value_len = sizeof(val);
    r.key = (const uint8_t *)key;
    int64_t events = 0;
    double t0 = bench_now_s();
    for (int i = 0; i < 100000; i++) {
        bench_mvcc_key(key, sizeof(key), (uint64_t)(i % BENCH_MVCC_KEYS));
        r.key_len = strlen(key);
        FL_ASSERT(mvcc_put(s, &r, &out) == MVCC_OK);
        while (mvcc_watch_pop(s, &resp)) {
            events += (int64_t)resp.events_len;
            mvcc_watch_resp_free(&resp);
        }
    }
    double dt = bench_now_s() - t0;
    FL_ASSERT(events == 1000000);
    mvcc_close(s);
    return dt > 0 ? (double)events / dt : 0;
}

void bench_mvcc(const struct bench_ctx *ctx, json_t *out)
{
    (void)ctx;
    double puts = 0, ranges = 0, gets = 0, watch = 0;
    for (int round = 0; round < BENCH_MVCC_ROUNDS; round++)
        puts = FL_MAX(puts, bench_mvcc_puts());
    struct mvcc_store *big = bench_mvcc_big_store();
    for (int round = 0; round < BENCH_MVCC_ROUNDS; round++) {
        ranges = FL_MAX(ranges, bench_mvcc_ranges(big, 10));
        gets = FL_MAX(gets, bench_mvcc_ranges(big, 1));
    }
    mvcc_close(big);
    for (int round = 0; round < BENCH_MVCC_ROUNDS; round++)
        watch = FL_MAX(watch, bench_mvcc_watch());
    json_object_set_new(out, "mvcc_puts_per_s", json_integer((json_int_t)puts));
    json_object_set_new(out, "mvcc_range_per_s", json_integer((json_int_t)ranges));
    json_object_set_new(out, "mvcc_get_per_s", json_integer((json_int_t)gets));
    json_object_set_new(out, "mvcc_watch_events_per_s", json_integer((json_int_t)watch));
}
