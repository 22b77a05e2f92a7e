/*
 * test_watch.c: watch delivery: synced watchers, catch-up from an old revision,
 * grouping by revision, prev_kv, filters, compacted starts, progress notification
 * semantics, and the watch bug switches changing behaviour.
 */
#include "mvcc_test_util.h"

static int64_t watch(struct mvcc_store *s, const char *k, const char *end, int64_t start,
                     bool prev_kv)
{
    return t_watch(s, k, end, start, prev_kv, true);
}

/* Pops every queued response of watcher id; returns the count and fills revs with
 * the mod revisions of all events in order (rev_n of them). */
static int drain(struct mvcc_store *s, int64_t id, int64_t *revs, int *rev_n, int cap)
{
    struct mvcc_watch_resp r;
    int n = 0;
    *rev_n = 0;
    while (mvcc_watch_pop_id(s, id, &r)) {
        for (size_t i = 0; i < r.events_len && *rev_n < cap; i++)
            revs[(*rev_n)++] = r.events[i].kv.mod_revision;
        mvcc_watch_resp_free(&r);
        n++;
    }
    return n;
}

static void test_synced(void)
{
    struct mvcc_store *s = mvcc_open(NULL);
    t_put(s, "a", "0");
    int64_t w = watch(s, "a", "c", 0, true);
    int64_t other = watch(s, "x", NULL, 0, false);
    CHECK_EQ_INT(mvcc_watch_next_rev(s, w), 3);
    t_put(s, "a", "1"); /* 3 */
    t_put(s, "z", "1"); /* 4: outside */
    t_put(s, "b", "1"); /* 5 */
    /* a txn writing two keys in range: one response, both events */
    struct mvcc_op ops[2] = {0};
    ops[0].kind = ops[1].kind = MVCC_OP_PUT;
    ops[0].u.put.key = (const uint8_t *)"a";
    ops[0].u.put.key_len = 1;
    ops[1].u.put.key = (const uint8_t *)"b";
    ops[1].u.put.key_len = 1;
    struct mvcc_txn_req t = {NULL, 0, ops, 2, NULL, 0};
    struct mvcc_txn_result tr;
    CHECK_EQ_INT(mvcc_txn(s, &t, &tr), MVCC_OK); /* 6 */
    mvcc_txn_result_free(&tr);
    t_del(s, "a", NULL, NULL); /* 7 */
    CHECK_EQ_INT(mvcc_watch_pending(s), 4);
    struct mvcc_watch_resp r;
    CHECK(mvcc_watch_pop(s, &r));
    CHECK_EQ_INT(r.watch_id, w);
    CHECK_EQ_INT(r.events_len, 1);
    CHECK(r.events[0].type == MVCC_EVENT_PUT && kv_is(&r.events[0].kv, "a", "1"));
    CHECK(r.events[0].has_prev && kv_is(&r.events[0].prev_kv, "a", "0"));
    CHECK_EQ_INT(r.header_rev, 3);
    mvcc_watch_resp_free(&r);
    CHECK(mvcc_watch_pop(s, &r));
    CHECK_EQ_INT(r.events_len, 1);
    CHECK(kv_is(&r.events[0].kv, "b", "1") && !r.events[0].has_prev);
    CHECK_EQ_INT(r.events[0].kv.create_revision, 5);
    mvcc_watch_resp_free(&r);
    CHECK(mvcc_watch_pop(s, &r));
    CHECK_EQ_INT(r.events_len, 2);
    CHECK_EQ_INT(r.events[0].kv.mod_revision, 6);
    CHECK_EQ_INT(r.events[1].kv.mod_revision, 6);
    CHECK(kv_is(&r.events[0].kv, "a", "") && kv_is(&r.events[1].kv, "b", ""));
    mvcc_watch_resp_free(&r);
    /* compaction while a response waits: the response owns its bytes */
    CHECK_EQ_INT(mvcc_compact(s, 7, NULL), MVCC_OK);
    CHECK(mvcc_watch_pop(s, &r));
    CHECK_EQ_INT(r.events_len, 1);
    CHECK(r.events[0].type == MVCC_EVENT_DELETE && kv_is(&r.events[0].kv, "a", NULL));
    CHECK_EQ_INT(r.events[0].kv.mod_revision, 7);
    CHECK_EQ_INT(r.events[0].kv.version, 0);
    CHECK(r.events[0].has_prev && kv_is(&r.events[0].prev_kv, "a", ""));
    mvcc_watch_resp_free(&r);
    CHECK(!mvcc_watch_pop(s, &r));
    CHECK_EQ_INT(mvcc_watch_cancel(s, other), MVCC_OK);
    CHECK_EQ_INT(mvcc_watch_cancel(s, other), MVCC_ERR_WATCH_NOT_FOUND);
    mvcc_check_invariants(s);
    mvcc_close(s);
}

static void test_catch_up(void)
{
    struct mvcc_config cfg;
    mvcc_config_default(&cfg);
    cfg.watch_batch_events_max = 2;
    struct mvcc_store *s = mvcc_open(&cfg);
    t_put(s, "k1", "a"); /* 2 */
    t_put(s, "k2", "a"); /* 3 */
    /* 4: three keys in one revision */
    struct mvcc_op ops[3] = {0};
    const char *ks[3] = {"k1", "k2", "k3"};
    for (int i = 0; i < 3; i++) {
        ops[i].kind = MVCC_OP_PUT;
        ops[i].u.put.key = (const uint8_t *)ks[i];
        ops[i].u.put.key_len = 2;
    }
    struct mvcc_txn_req t = {NULL, 0, ops, 3, NULL, 0};
    struct mvcc_txn_result tr;
    CHECK_EQ_INT(mvcc_txn(s, &t, &tr), MVCC_OK);
    mvcc_txn_result_free(&tr);
    t_put(s, "k1", "b"); /* 5 */
    t_put(s, "k2", "b"); /* 6 */
    int64_t w = watch(s, "k", "l", 3, true);
    /* nothing until the sync step */
    CHECK_EQ_INT(mvcc_watch_pending(s), 0);
    CHECK_EQ_INT(mvcc_watch_sync(s), 0);
    /* responses: [3], [4 x3] (never split although the batch is 2), [5, 6] */
    struct mvcc_watch_resp r;
    CHECK(mvcc_watch_pop_id(s, w, &r));
    CHECK_EQ_INT(r.events_len, 1);
    CHECK_EQ_INT(r.events[0].kv.mod_revision, 3);
    mvcc_watch_resp_free(&r);
    CHECK(mvcc_watch_pop_id(s, w, &r));
    CHECK_EQ_INT(r.events_len, 3);
    for (size_t i = 0; i < r.events_len; i++)
        CHECK_EQ_INT(r.events[i].kv.mod_revision, 4);
    CHECK(r.events[0].has_prev && kv_is(&r.events[0].prev_kv, "k1", "a"));
    CHECK(!r.events[2].has_prev);
    mvcc_watch_resp_free(&r);
    CHECK(mvcc_watch_pop_id(s, w, &r));
    CHECK_EQ_INT(r.events_len, 2);
    CHECK_EQ_INT(r.events[0].kv.mod_revision, 5);
    CHECK_EQ_INT(r.events[1].kv.mod_revision, 6);
    mvcc_watch_resp_free(&r);
    CHECK(!mvcc_watch_pop_id(s, w, &r));
    /* synced now: new writes flow directly */
    CHECK_EQ_INT(mvcc_watch_next_rev(s, w), 7);
    t_put(s, "k9", "x");
    int64_t revs[16];
    int rn;
    CHECK_EQ_INT(drain(s, w, revs, &rn, 16), 1);
    CHECK_EQ_INT(rn, 1);
    CHECK_EQ_INT(revs[0], 7);
    /* a future start revision only sees revisions from there */
    int64_t fw = watch(s, "k", "l", 9, false);
    t_put(s, "k1", "c"); /* 8 */
    t_put(s, "k1", "d"); /* 9 */
    CHECK_EQ_INT(drain(s, fw, revs, &rn, 16), 1);
    CHECK_EQ_INT(revs[0], 9);
    mvcc_check_invariants(s);
    mvcc_close(s);
}

static void test_compacted_start(void)
{
    struct mvcc_store *s = mvcc_open(NULL);
    for (int i = 0; i < 6; i++)
        t_put(s, "a", "v"); /* 2..7 */
    CHECK_EQ_INT(mvcc_compact(s, 5, NULL), MVCC_OK);
    int64_t w = watch(s, "a", NULL, 3, false);
    int64_t ok = watch(s, "a", NULL, 5, false); /* at the compact revision: fine */
    mvcc_watch_sync(s);
    struct mvcc_watch_resp r;
    CHECK(mvcc_watch_pop_id(s, w, &r));
    CHECK(r.canceled);
    CHECK_EQ_INT(r.compact_rev, 5);
    CHECK_EQ_INT(r.cancel_err, MVCC_ERR_COMPACTED);
    CHECK_EQ_INT(r.events_len, 0);
    mvcc_watch_resp_free(&r);
    /* the canceled watcher is gone */
    CHECK_EQ_INT(mvcc_watch_cancel(s, w), MVCC_ERR_WATCH_NOT_FOUND);
    int64_t revs[16];
    int rn;
    drain(s, ok, revs, &rn, 16);
    CHECK_EQ_INT(rn, 3);
    CHECK_EQ_INT(revs[0], 5);
    CHECK_EQ_INT(revs[2], 7);
    mvcc_check_invariants(s);
    mvcc_close(s);
}

/* A watcher starting at the compaction revision where a delete happened, compacted
 * while it catches up: etcd#18089. Returns how many events it saw. */
static int skip_on_compact_case(int *deletes)
{
    struct mvcc_config cfg;
    mvcc_config_default(&cfg);
    cfg.watch_sync_events_max = 1; /* catch up one revision per sync step */
    struct mvcc_store *s = mvcc_open(&cfg);
    t_put(s, "a", "1");        /* 2 */
    t_put(s, "b", "1");        /* 3 */
    t_del(s, "a", NULL, NULL); /* 4 */
    t_put(s, "b", "2");        /* 5 */
    int64_t w = watch(s, "a", "z", 3, false);
    CHECK_EQ_INT(mvcc_watch_sync(s), 1); /* delivered 3, next is 4 */
    CHECK_EQ_INT(mvcc_watch_next_rev(s, w), 4);
    CHECK_EQ_INT(mvcc_compact(s, 4, NULL), MVCC_OK); /* concurrent compaction */
    while (mvcc_watch_sync(s) > 0)
        ;
    struct mvcc_watch_resp r;
    int n = 0;
    *deletes = 0;
    while (mvcc_watch_pop_id(s, w, &r)) {
        CHECK(!r.canceled);
        for (size_t i = 0; i < r.events_len; i++) {
            n++;
            *deletes += r.events[i].type == MVCC_EVENT_DELETE;
        }
        mvcc_watch_resp_free(&r);
    }
    mvcc_check_invariants(s);
    mvcc_close(s);
    return n;
}

static void test_skip_on_compact_bug(void)
{
    int dels;
    CHECK_EQ_INT(skip_on_compact_case(&dels), 3); /* 3, 4 (delete), 5 */
    CHECK_EQ_INT(dels, 1);
    fl_bug_set(FL_BUG_MVCC_WATCH_SKIP_ON_COMPACT, true);
    CHECK_EQ_INT(skip_on_compact_case(&dels), 2);
    CHECK_EQ_INT(dels, 0);
    fl_bug_reset();
}

static void test_progress(void)
{
    struct mvcc_store *s = mvcc_open(NULL);
    t_put(s, "a", "1");
    int64_t w = watch(s, "a", NULL, 0, false);
    CHECK(mvcc_watch_idle(s, w));
    CHECK(!mvcc_watch_idle(s, 12345));
    /* synced, nothing queued: progress with the current revision */
    CHECK(mvcc_watch_request_progress(s, w));
    struct mvcc_watch_resp r;
    CHECK(mvcc_watch_pop_id(s, w, &r));
    CHECK(r.progress && r.events_len == 0);
    CHECK_EQ_INT(r.header_rev, 2);
    mvcc_watch_resp_free(&r);
    /* an event waits: no progress */
    t_put(s, "a", "2");
    CHECK(!mvcc_watch_idle(s, w));
    CHECK(!mvcc_watch_request_progress(s, w));
    CHECK(mvcc_watch_pop_id(s, w, &r));
    CHECK(!r.progress && r.events_len == 1);
    mvcc_watch_resp_free(&r);
    /* unsynced (catching up): no progress */
    t_put(s, "a", "3");
    int64_t old = watch(s, "a", NULL, 2, false);
    CHECK(!mvcc_watch_request_progress(s, old));
    CHECK_EQ_INT(mvcc_watch_progress_all(s), 0); /* w has a queued event, old unsynced */
    mvcc_watch_sync(s);
    int64_t revs[8];
    int rn;
    drain(s, w, revs, &rn, 8);
    drain(s, old, revs, &rn, 8);
    CHECK_EQ_INT(rn, 3);
    CHECK_EQ_INT(mvcc_watch_progress_all(s), 2);
    CHECK_EQ_INT(mvcc_watch_pending(s), 2);
    while (mvcc_watch_pop(s, &r)) {
        CHECK(r.progress);
        CHECK_EQ_INT(r.header_rev, 4);
        mvcc_watch_resp_free(&r);
    }
    /* bug: progress overtakes pending events */
    fl_bug_set(FL_BUG_MVCC_PROGRESS_BEFORE_EVENTS, true);
    t_put(s, "a", "4"); /* 5 */
    CHECK(mvcc_watch_request_progress(s, w));
    CHECK(mvcc_watch_pop_id(s, w, &r));
    CHECK(r.progress);
    CHECK_EQ_INT(r.header_rev, 5); /* announces 5 ... */
    mvcc_watch_resp_free(&r);
    CHECK(mvcc_watch_pop_id(s, w, &r));
    CHECK_EQ_INT(r.events_len, 1); /* ... before the event at 5 */
    CHECK_EQ_INT(r.events[0].kv.mod_revision, 5);
    mvcc_watch_resp_free(&r);
    /* and is sent to an unsynced watcher */
    int64_t lag = watch(s, "a", NULL, 2, false);
    CHECK(mvcc_watch_request_progress(s, lag));
    fl_bug_reset();
    mvcc_check_invariants(s);
    mvcc_close(s);
}

/* Restores a snapshot of the same data into a store with a live watcher; counts
 * the events the watcher sees afterwards. */
static int restore_case(void)
{
    struct mvcc_store *s = mvcc_open(NULL);
    t_put(s, "a", "1"); /* 2 */
    int64_t w = watch(s, "a", NULL, 2, false);
    mvcc_watch_sync(s);
    int64_t revs[16];
    int rn;
    drain(s, w, revs, &rn, 16);
    CHECK_EQ_INT(rn, 1);
    t_put(s, "a", "2"); /* 3 */
    drain(s, w, revs, &rn, 16);
    CHECK_EQ_INT(rn, 1);
    /* the leader is ahead by one revision; its snapshot arrives */
    struct mvcc_store *leader = mvcc_open(NULL);
    t_put(leader, "a", "1");
    t_put(leader, "a", "2");
    t_put(leader, "a", "3"); /* 4 */
    struct fl_buf b;
    fl_buf_init(&b);
    mvcc_snapshot_encode(leader, &b);
    CHECK_EQ_INT(mvcc_snapshot_restore(s, b.data, b.len, MVCC_RESTORE_RAFT_SNAPSHOT), MVCC_OK);
    fl_buf_close(&b);
    mvcc_close(leader);
    mvcc_watch_sync(s);
    drain(s, w, revs, &rn, 16);
    mvcc_check_invariants(s);
    mvcc_close(s);
    return rn;
}

static void test_restore_watchers(void)
{
    CHECK_EQ_INT(restore_case(), 1); /* only revision 4 is new */
    fl_bug_set(FL_BUG_MVCC_WATCH_OLD_AFTER_PARTITION, true);
    CHECK_EQ_INT(restore_case(), 3); /* 2 and 3 again, then 4 */
    fl_bug_reset();
    /* the explicit hook */
    struct mvcc_store *s = mvcc_open(NULL);
    for (int i = 0; i < 4; i++)
        t_put(s, "a", "v"); /* 2..5 */
    int64_t w = watch(s, "a", NULL, 0, false);
    CHECK_EQ_INT(mvcc_watch_rewind(s, w, 3), MVCC_OK);
    mvcc_watch_sync(s);
    int64_t revs[16];
    int rn;
    drain(s, w, revs, &rn, 16);
    CHECK_EQ_INT(rn, 3);
    CHECK_EQ_INT(revs[0], 3);
    CHECK_EQ_INT(mvcc_watch_rewind(s, 999, 3), MVCC_ERR_WATCH_NOT_FOUND);
    mvcc_close(s);
}

static void test_filters_and_pop_order(void)
{
    struct mvcc_store *s = mvcc_open(NULL);
    struct mvcc_watch_req r = {0};
    r.key = (const uint8_t *)"a";
    r.key_len = 1;
    r.filter_put = true;
    int64_t nodel = 0, noput = 0;
    CHECK_EQ_INT(mvcc_watch_create(s, &r, &noput, NULL), MVCC_OK);
    r.filter_put = false;
    r.filter_delete = true;
    CHECK_EQ_INT(mvcc_watch_create(s, &r, &nodel, NULL), MVCC_OK);
    t_put(s, "a", "1");
    t_del(s, "a", NULL, NULL);
    struct mvcc_watch_resp resp;
    /* pop gives responses in production order across watchers */
    uint64_t last = 0;
    int puts = 0, dels = 0;
    while (mvcc_watch_pop(s, &resp)) {
        CHECK(resp.seq > last);
        last = resp.seq;
        CHECK_EQ_INT(resp.events_len, 1);
        if (resp.watch_id == noput) {
            CHECK(resp.events[0].type == MVCC_EVENT_DELETE);
            dels++;
        } else {
            CHECK(resp.events[0].type == MVCC_EVENT_PUT);
            puts++;
        }
        mvcc_watch_resp_free(&resp);
    }
    CHECK_EQ_INT(puts, 1);
    CHECK_EQ_INT(dels, 1);
    mvcc_close(s);
}

/* Pops one response of watch w: false when the queue is empty. Events come in
 * revision order (checked against *last_rev); *events counts responses with events. */
static bool pop_in_order(struct mvcc_store *s, int64_t w, int64_t *last_rev, int *events)
{
    struct mvcc_watch_resp r;
    if (!mvcc_watch_pop_id(s, w, &r))
        return false;
    if (r.events_len) {
        CHECK(r.events[0].kv.mod_revision > *last_rev);
        *last_rev = r.events[0].kv.mod_revision;
        (*events)++;
    }
    mvcc_watch_resp_free(&r);
    return true;
}

/* The queue under front pushes (bug on), back pushes and pops interleaved. */
static void test_queue_stress(void)
{
    struct mvcc_store *s = mvcc_open(NULL);
    int64_t w = watch(s, "a", NULL, 0, false);
    fl_bug_set(FL_BUG_MVCC_PROGRESS_BEFORE_EVENTS, true);
    int pushed = 0, popped = 0, events = 0;
    int64_t last_event_rev = 0;
    for (int i = 0; i < 300; i++) {
        t_put(s, "a", "v");
        pushed++;
        if (i % 3 == 0)
            pushed += mvcc_watch_request_progress(s, w);
        for (int j = 0; j < i % 4 && pop_in_order(s, w, &last_event_rev, &events); j++)
            popped++;
        mvcc_check_invariants(s);
    }
    while (pop_in_order(s, w, &last_event_rev, &events))
        popped++;
    CHECK_EQ_INT(popped, pushed);
    CHECK_EQ_INT(events, 300);
    CHECK_EQ_INT(mvcc_watch_pending(s), 0);
    fl_bug_reset();
    mvcc_close(s);
}

int main(void)
{
    FL_TEST(test_queue_stress);
    FL_TEST(test_synced);
    FL_TEST(test_catch_up);
    FL_TEST(test_compacted_start);
    FL_TEST(test_skip_on_compact_bug);
    FL_TEST(test_progress);
    FL_TEST(test_restore_watchers);
    FL_TEST(test_filters_and_pop_order);
    return fl_test_end();
}
