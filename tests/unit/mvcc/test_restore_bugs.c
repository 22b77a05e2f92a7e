/*
 * test_restore_bugs.c: what a store restored from a snapshot does with its watchers and
 * its compacted history, and the bug switches of issue 13 that change it:
 * MVCC_RESTORE_SKIPS_TOMBSTONE (etcd#19179), MVCC_RESTORE_KEEPS_WATCHERS_SYNCED
 * (etcd#8411), MVCC_RESTORE_LOWERS_FUTURE_WATCH (etcd#20221) and, with the stream
 * buffer limit watch_queue_max, MVCC_WATCH_COMPACTED_LOST (etcd#17529).
 */
#include "mvcc_test_util.h"

/* Pops every queued response of watcher id into revs (event mod revisions, in order);
 * returns the number of events; *canceled tells whether a cancel came. */
static int drain(struct mvcc_store *s, int64_t id, int64_t *revs, int cap, bool *canceled)
{
    struct mvcc_watch_resp r;
    int n = 0;
    if (canceled)
        *canceled = false;
    while (mvcc_watch_pop_id(s, id, &r)) {
        for (size_t i = 0; i < r.events_len && n < cap; i++)
            revs[n++] = r.events[i].kv.mod_revision;
        if (r.canceled && canceled)
            *canceled = true;
        mvcc_watch_resp_free(&r);
    }
    return n;
}

/* Restores s from the encoding of src (a leader's snapshot). */
static void restore_from(struct mvcc_store *s, struct mvcc_store *src, enum mvcc_restore_reason why)
{
    struct fl_buf b;
    fl_buf_init(&b);
    mvcc_snapshot_encode(src, &b);
    CHECK_EQ_INT(mvcc_snapshot_restore(s, b.data, b.len, why), MVCC_OK);
    fl_buf_close(&b);
}

/* A key put, deleted at revision 3 and compacted there: the tombstone is its only
 * revision. After a restart, a watch from 3 must start with that delete. Returns the
 * first event's revision (0: none). */
static int64_t tombstone_case(void)
{
    struct mvcc_store *s = mvcc_open(NULL);
    t_put(s, "k", "1");                    /* 2 */
    int64_t d = t_del(s, "k", NULL, NULL); /* 3 */
    t_put(s, "z", "1");                    /* 4 */
    CHECK_EQ_INT(d, 3);
    CHECK_EQ_INT(mvcc_compact(s, 3, NULL), MVCC_OK);
    struct mvcc_store *r = mvcc_open(NULL);
    restore_from(r, s, MVCC_RESTORE_RESTART);
    mvcc_check_invariants(r);
    int64_t w = t_watch(r, "k", NULL, 3, false, false);
    mvcc_watch_sync(r);
    int64_t revs[8];
    int n = drain(r, w, revs, 8, NULL);
    t_put(r, "k", "2"); /* 5: the key comes back as a new generation either way */
    CHECK_EQ_INT(mvcc_current_rev(r), 5);
    mvcc_check_invariants(r);
    mvcc_close(r);
    mvcc_close(s);
    return n ? revs[0] : 0;
}

static void test_restore_tombstone(void)
{
    CHECK_EQ_INT(tombstone_case(), 3);
    fl_bug_set(FL_BUG_MVCC_RESTORE_SKIPS_TOMBSTONE, true);
    CHECK_EQ_INT(tombstone_case(), 0);
    fl_bug_reset();
}

/* A synced watcher at revision 3 on a follower whose store then comes from a leader's
 * snapshot at revision 6: it must deliver 3, 4, 5, 6. Returns the events delivered. */
static int synced_case(int64_t *revs)
{
    struct mvcc_store *s = mvcc_open(NULL);
    t_put(s, "a", "1"); /* 2 */
    int64_t w = t_watch(s, "a", NULL, 0, false, false);
    struct mvcc_store *leader = mvcc_open(NULL);
    for (int i = 0; i < 5; i++)
        t_put(leader, "a", "x"); /* 2..6 */
    restore_from(s, leader, MVCC_RESTORE_RAFT_SNAPSHOT);
    mvcc_watch_sync(s);
    t_put(s, "a", "y"); /* 7 */
    int n = drain(s, w, revs, 16, NULL);
    mvcc_check_invariants(s);
    mvcc_close(leader);
    mvcc_close(s);
    return n;
}

static void test_restore_synced_watchers(void)
{
    int64_t revs[16];
    CHECK_EQ_INT(synced_case(revs), 5); /* 3..6 from the snapshot, then 7 */
    CHECK_EQ_INT(revs[0], 3);
    CHECK_EQ_INT(revs[4], 7);
    fl_bug_set(FL_BUG_MVCC_RESTORE_KEEPS_WATCHERS_SYNCED, true);
    CHECK_EQ_INT(synced_case(revs), 1); /* only what came after the restore */
    CHECK_EQ_INT(revs[0], 7);
    fl_bug_reset();
}

/* A watcher from revision 10 on a store at 2, restored to 6: nothing before 10.
 * Returns the first delivered revision after the store reaches 11. */
static int64_t future_case(void)
{
    struct mvcc_store *s = mvcc_open(NULL);
    t_put(s, "a", "1"); /* 2 */
    int64_t w = t_watch(s, "a", NULL, 10, false, false);
    struct mvcc_store *leader = mvcc_open(NULL);
    for (int i = 0; i < 5; i++)
        t_put(leader, "a", "x"); /* 2..6 */
    restore_from(s, leader, MVCC_RESTORE_RAFT_SNAPSHOT);
    mvcc_watch_sync(s);
    for (int i = 0; i < 5; i++)
        t_put(s, "a", "y"); /* 7..11 */
    int64_t revs[16];
    int n = drain(s, w, revs, 16, NULL);
    mvcc_check_invariants(s);
    mvcc_close(leader);
    mvcc_close(s);
    return n ? revs[0] : 0;
}

static void test_restore_future_watch(void)
{
    CHECK_EQ_INT(future_case(), 10);
    fl_bug_set(FL_BUG_MVCC_RESTORE_LOWERS_FUTURE_WATCH, true);
    CHECK_EQ_INT(future_case(), 7);
    fl_bug_reset();
}

/* A watcher behind the compaction whose stream buffer (2 responses) is full: the
 * cancel waits until the buffer drains (fixed), or never comes and the watcher jumps
 * to the compaction revision (bug). Returns -1 for a cancel, else the first revision
 * delivered after the buffered ones (0: none). */
static int64_t full_buffer_case(void)
{
    struct mvcc_config cfg;
    mvcc_config_default(&cfg);
    cfg.watch_queue_max = 2;
    struct mvcc_store *s = mvcc_open(&cfg);
    int64_t w = t_watch(s, "a", NULL, 0, false, false);
    t_put(s, "a", "1"); /* 2 */
    t_put(s, "a", "2"); /* 3: two responses queued, the buffer is full */
    struct mvcc_store *leader = mvcc_open(NULL);
    for (int i = 0; i < 6; i++)
        t_put(leader, "a", "x"); /* 2..7 */
    CHECK_EQ_INT(mvcc_compact(leader, 6, NULL), MVCC_OK);
    restore_from(s, leader, MVCC_RESTORE_RAFT_SNAPSHOT);
    mvcc_watch_sync(s); /* behind the compaction, the buffer full */
    int64_t revs[16];
    bool canceled = false, canceled2 = false;
    int n = drain(s, w, revs, 16, &canceled);
    CHECK(n >= 2 && revs[0] == 2 && revs[1] == 3);
    CHECK(!canceled);   /* the full buffer refused it */
    mvcc_watch_sync(s); /* the buffer has room now */
    int n2 = drain(s, w, revs + n, 16 - n, &canceled2);
    mvcc_check_invariants(s);
    mvcc_close(leader);
    mvcc_close(s);
    if (canceled2)
        return -1;
    return n + n2 > 2 ? revs[2] : 0;
}

static void test_full_buffer_cancel(void)
{
    CHECK_EQ_INT(full_buffer_case(), -1);
    fl_bug_set(FL_BUG_MVCC_WATCH_COMPACTED_LOST, true);
    CHECK_EQ_INT(full_buffer_case(), 6); /* jumped to the compaction: 4 and 5 never came */
    fl_bug_reset();
}

int main(void)
{
    FL_TEST(test_restore_tombstone);
    FL_TEST(test_restore_synced_watchers);
    FL_TEST(test_restore_future_watch);
    FL_TEST(test_full_buffer_cancel);
    return fl_test_end();
}
