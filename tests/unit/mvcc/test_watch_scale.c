/*
 * test_watch_scale.c: many watchers cost the store work in the watchers a write or a
 * drain concerns, not in all of them (issue 12, item 7: 5000 watches and 5000 puts
 * took 4.7 s, a fifth of it matching every watcher against every event).
 *
 * The test counts work, not time: mvcc_watch_steps() counts the watchers the watch
 * bookkeeping examined. 4000 watchers on single keys, 400 on ranges of ten keys, two
 * on every key from a prefix on and one on an empty range; a put to each watched key
 * with the responses drained after each; then 2000 watchers that start in the past,
 * each followed by a catch-up (as a member does when a watch is created); then a
 * cancel of each. Every watcher must get exactly its events, the drain must come in
 * store order, the invariants must hold, and the steps must stay within a bound per
 * watcher and write (the former scans, counted the same way, examined every
 * watcher on every write, every drained response and every catch-up: 105,672,000
 * steps for the puts and 32,421,000 for the catch-ups, against about 200,000 and
 * 4,000 now).
 */
#include "mvcc_test_util.h"

#define EXACT          4000
#define RANGES         400 /* each over ten of the exact keys */
#define PAST           2000
#define STEPS_PER_UNIT 64

static int events_of[EXACT + RANGES + PAST + 8];
static uint64_t last_seq;
static int out_of_order;

/* Drains every queued response (what a member's drain does) and counts events. */
static void drain(struct mvcc_store *s, int64_t first_id)
{
    struct mvcc_watch_resp r;
    while (mvcc_watch_pop(s, &r)) {
        out_of_order += r.seq <= last_seq;
        last_seq = r.seq;
        int64_t i = r.watch_id - first_id;
        if (i >= 0 && i < (int64_t)FL_ARRAY_LEN(events_of))
            events_of[i] += (int)r.events_len;
        mvcc_watch_resp_free(&r);
    }
}

int main(void)
{
    struct mvcc_store *s = mvcc_open(NULL);
    char k[32], e[32];
    int64_t first = 0, id;
    for (int i = 0; i < EXACT; i++) {
        snprintf(k, sizeof(k), "key/%05d", i);
        id = t_watch(s, k, NULL, 0, false, false);
        first = first ? first : id;
    }
    for (int i = 0; i < RANGES; i++) {
        snprintf(k, sizeof(k), "key/%04d", i);
        snprintf(e, sizeof(e), "key/%04d", i + 1);
        t_watch(s, k, e, 0, false, false);
    }
    int64_t all1 = t_watch(s, "key/", "", 0, false, false);
    int64_t all2 = t_watch(s, "k", "", 0, false, false);
    int64_t empty = t_watch(s, "z", "a", 0, false, false); /* range_end < key: nothing */
    mvcc_check_invariants(s);
    uint64_t before = mvcc_watch_steps(s);
    for (int i = 0; i < EXACT; i++) {
        snprintf(k, sizeof(k), "key/%05d", i);
        t_put(s, k, "v");
        drain(s, first);
        if (i % 500 == 0)
            mvcc_check_invariants(s);
    }
    uint64_t put_steps = mvcc_watch_steps(s) - before;
    int exact_ok = 0, range_ok = 0;
    for (int i = 0; i < EXACT; i++)
        exact_ok += events_of[i] == 1;
    for (int i = 0; i < RANGES; i++)
        range_ok += events_of[EXACT + i] == 10;
    CHECK_EQ_INT(exact_ok, EXACT);
    CHECK_EQ_INT(range_ok, RANGES);
    CHECK_EQ_INT(events_of[all1 - first], EXACT);
    CHECK_EQ_INT(events_of[all2 - first], EXACT);
    CHECK_EQ_INT(events_of[empty - first], 0);
    CHECK_EQ_INT(out_of_order, 0);
    int watchers = EXACT + RANGES + 3;
    printf("%d watchers, %d puts: %llu steps (%.1f per watcher and put)\n", watchers, EXACT,
           (unsigned long long)put_steps, (double)put_steps / (watchers + EXACT));
    CHECK(put_steps <= (uint64_t)STEPS_PER_UNIT * (uint64_t)(watchers + EXACT));

    /* Watchers from revision 2 (the first put), each caught up at once. */
    before = mvcc_watch_steps(s);
    for (int i = 0; i < PAST; i++) {
        snprintf(k, sizeof(k), "key/%05d", i);
        t_watch(s, k, NULL, 2, false, false);
        CHECK_EQ_INT(mvcc_watch_sync(s), 0);
        drain(s, first);
    }
    uint64_t past_steps = mvcc_watch_steps(s) - before;
    int past_ok = 0;
    for (int i = 0; i < PAST; i++)
        past_ok += events_of[watchers + i] == 1;
    CHECK_EQ_INT(past_ok, PAST);
    printf("%d catch-ups: %llu steps\n", PAST, (unsigned long long)past_steps);
    CHECK(past_steps <= (uint64_t)STEPS_PER_UNIT * PAST);
    mvcc_check_invariants(s);

    /* One more put after all that: still only its own watchers' work. */
    before = mvcc_watch_steps(s);
    t_put(s, "key/00007", "w");
    drain(s, first);
    uint64_t one = mvcc_watch_steps(s) - before;
    printf("one put among %d watchers: %llu steps\n", watchers + PAST, (unsigned long long)one);
    CHECK(one <= 64);
    CHECK_EQ_INT(events_of[7], 2);
    CHECK_EQ_INT(events_of[watchers + 7], 2);

    for (int64_t w = first; w < first + watchers + PAST; w++)
        CHECK_EQ_INT(mvcc_watch_cancel(s, w), MVCC_OK);
    mvcc_check_invariants(s);
    struct mvcc_stats st;
    mvcc_stats_get(s, &st);
    CHECK_EQ_INT(st.watchers, 0);
    mvcc_close(s);
    return fl_test_end();
}
