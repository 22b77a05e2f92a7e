/*
 * test_watch_victim.c: a synced watcher whose stream buffer (watch_queue_max) is full
 * when a write concerns it becomes a victim, as in etcd's notify: it leaves the synced
 * group, and once its stream has room it catches up as an unsynced watcher. A
 * compaction past it meanwhile must cancel it with the compacted revision once the
 * buffer has room for the cancel; with MVCC_WATCH_COMPACTED_LOST (etcd#17529, whose
 * regression scenario is one member, a starved stream and compactions: no snapshot)
 * the refused cancel moves it on to the compaction and the events in between are lost.
 */
#include "mvcc_test_util.h"

/* Pops every queued response of watcher id, appending event revisions to revs (n of
 * them so far, cap at most); sets *compact to a cancel's compacted revision. */
static int pop_all(struct mvcc_store *s, int64_t id, int64_t *revs, int n, int cap,
                   int64_t *compact)
{
    struct mvcc_watch_resp r;
    while (mvcc_watch_pop_id(s, id, &r)) {
        for (size_t i = 0; i < r.events_len && n < cap; i++)
            revs[n++] = r.events[i].kv.mod_revision;
        if (r.canceled)
            *compact = r.compact_rev;
        mvcc_watch_resp_free(&r);
    }
    return n;
}

static struct mvcc_store *open_small_buffer(void)
{
    struct mvcc_config cfg;
    mvcc_config_default(&cfg);
    cfg.watch_queue_max = 2;
    return mvcc_open(&cfg);
}

/* No compaction: the victim catches up with every event, in order, then is synced. */
static void test_victim_catches_up(void)
{
    struct mvcc_store *s = open_small_buffer();
    int64_t w = t_watch(s, "a", NULL, 0, false, false);
    for (int i = 0; i < 6; i++)
        t_put(s, "a", "v"); /* 2..7; the third one finds the buffer full */
    mvcc_watch_sync(s);     /* still full: it waits */
    mvcc_check_invariants(s);
    int64_t revs[16], compact = 0;
    int n = pop_all(s, w, revs, 0, 16, &compact);
    CHECK_EQ_INT(n, 3);
    mvcc_watch_sync(s); /* room: 5..7 */
    n = pop_all(s, w, revs, n, 16, &compact);
    t_put(s, "a", "v"); /* 8: synced again, notified */
    n = pop_all(s, w, revs, n, 16, &compact);
    mvcc_check_invariants(s);
    CHECK_EQ_INT(n, 7);
    for (int i = 0; i < n; i++)
        CHECK_EQ_INT(revs[i], i + 2);
    CHECK_EQ_INT(compact, 0);
    mvcc_close(s);
}

/* A compaction past the victim: returns the compacted revision of its cancel (0: none)
 * and sets *lost to the revisions it skipped without a cancel. */
static int64_t compacted_victim_case(int *lost)
{
    struct mvcc_store *s = open_small_buffer();
    int64_t w = t_watch(s, "a", NULL, 0, false, false);
    for (int i = 0; i < 6; i++)
        t_put(s, "a", "v"); /* 2..7: a victim from 4 on, waiting at 5 */
    CHECK_EQ_INT(mvcc_compact(s, 6, NULL), MVCC_OK);
    mvcc_watch_sync(s); /* behind the compaction, the buffer full: refused */
    int64_t revs[16], compact = 0;
    int n = pop_all(s, w, revs, 0, 16, &compact);
    CHECK_EQ_INT(n, 3);
    CHECK_EQ_INT(compact, 0);
    mvcc_watch_sync(s); /* room now */
    n = pop_all(s, w, revs, n, 16, &compact);
    mvcc_check_invariants(s);
    *lost = 0;
    for (int i = 1; i < n; i++)
        *lost += (int)(revs[i] - revs[i - 1] - 1);
    mvcc_close(s);
    return compact;
}

static void test_victim_behind_compaction(void)
{
    int lost = -1;
    CHECK_EQ_INT(compacted_victim_case(&lost), 6);
    CHECK_EQ_INT(lost, 0);
    fl_bug_set(FL_BUG_MVCC_WATCH_COMPACTED_LOST, true);
    CHECK_EQ_INT(compacted_victim_case(&lost), 0);
    CHECK_EQ_INT(lost, 1); /* 5 never came: it went from 4 to 6 */
    fl_bug_reset();
}

int main(void)
{
    FL_TEST(test_victim_catches_up);
    FL_TEST(test_victim_behind_compaction);
    return fl_test_end();
}
