/*
 * test_compact.c: compaction edges (at the current revision, twice, future,
 * tombstones, reads below it), the auto-compaction policy figures of DESIGN §5, the
 * backend size model with defrag, and HashKV equality.
 */
#include "mvcc_test_util.h"

static void test_compact_edges(void)
{
    struct mvcc_store *s = mvcc_open(NULL);
    t_put(s, "a", "1");        /* 2 */
    t_put(s, "a", "2");        /* 3 */
    t_put(s, "b", "1");        /* 4 */
    t_del(s, "b", NULL, NULL); /* 5 */
    t_put(s, "c", "1");        /* 6 */
    t_del(s, "c", NULL, NULL); /* 7 */
    int64_t hdr = 0;
    /* the first compaction accepts 0 (etcd starts at -1) */
    CHECK_EQ_INT(mvcc_compact(s, 0, &hdr), MVCC_OK);
    CHECK_EQ_INT(hdr, 7);
    CHECK_EQ_INT(mvcc_compact(s, 0, NULL), MVCC_ERR_COMPACTED);
    CHECK_EQ_INT(mvcc_compact(s, 8, NULL), MVCC_ERR_FUTURE_REV);
    CHECK_EQ_INT(mvcc_compact(s, 4, NULL), MVCC_OK);
    CHECK_EQ_INT(mvcc_compact_rev(s), 4);
    struct mvcc_stats st0;
    mvcc_stats_get(s, &st0);
    CHECK_EQ_INT(st0.last_compact_removed, 1); /* a@2 */
    /* twice, and below */
    CHECK_EQ_INT(mvcc_compact(s, 4, NULL), MVCC_ERR_COMPACTED);
    CHECK_EQ_INT(mvcc_compact(s, 3, NULL), MVCC_ERR_COMPACTED);
    CHECK_EQ_STR(mvcc_err_text(MVCC_ERR_COMPACTED),
                 "etcdserver: mvcc: required revision has been compacted");
    CHECK_EQ_INT(mvcc_err_code(MVCC_ERR_COMPACTED), MVCC_GRPC_OUT_OF_RANGE);
    /* reads below fail, at or above work */
    bool found;
    CHECK_EQ_INT(t_get(s, "a", 3, &found, NULL), MVCC_ERR_COMPACTED);
    CHECK_EQ_STR(t_val(s, "a", 4), "2");
    CHECK_EQ_STR(t_val(s, "b", 4), "1");
    CHECK_EQ_STR(t_val(s, "b", 5), "<none>");
    CHECK_EQ_STR(t_val(s, "a", 0), "2");
    struct mvcc_stats st;
    mvcc_stats_get(s, &st);
    CHECK_EQ_INT(st.keys, 3);
    CHECK_EQ_INT(st.revisions, 5); /* a@3, b@4, b@5(tomb), c@6, c@7(tomb) */
    mvcc_check_invariants(s);
    /* compact at the current revision, whose write is a tombstone: kept exactly
     * there (a watch from 7 must still see the delete), invisible to reads */
    CHECK_EQ_INT(mvcc_compact(s, 7, NULL), MVCC_OK);
    mvcc_stats_get(s, &st);
    CHECK_EQ_INT(st.keys, 2);      /* b is gone, c keeps its tombstone at 7 */
    CHECK_EQ_INT(st.revisions, 2); /* a@3, c@7 */
    CHECK_EQ_INT(st.live_keys, 1);
    CHECK_EQ_STR(t_val(s, "c", 7), "<none>");
    CHECK_EQ_INT(t_get(s, "a", 6, &found, NULL), MVCC_ERR_COMPACTED);
    mvcc_check_invariants(s);
    /* one more write and compaction drops the old tombstone */
    t_put(s, "d", "1"); /* 8 */
    CHECK_EQ_INT(mvcc_compact(s, 8, NULL), MVCC_OK);
    mvcc_stats_get(s, &st);
    CHECK_EQ_INT(st.keys, 2); /* a, d */
    CHECK_EQ_INT(st.revisions, 2);
    /* a recreated key after compaction starts a new generation */
    t_put(s, "b", "again");
    struct mvcc_kv kv = {0};
    CHECK_EQ_INT(t_get(s, "b", 0, &found, &kv), MVCC_OK);
    CHECK(found && kv.version == 1 && kv.create_revision == 9);
    mvcc_check_invariants(s);
    mvcc_close(s);
}

static void test_size_model(void)
{
    struct mvcc_store *s = mvcc_open(NULL);
    int64_t base = mvcc_size_bytes(s);
    CHECK_EQ_INT(base, mvcc_live_bytes(s));
    char v[101];
    memset(v, 'v', 100);
    v[100] = 0;
    for (int i = 0; i < 200; i++)
        t_put(s, "key", v);
    int64_t grown = mvcc_size_bytes(s);
    CHECK_EQ_INT(grown, base + 200 * mvcc_put_cost_bytes(s, 3, 100));
    CHECK_EQ_INT(mvcc_live_bytes(s), grown);
    /* compaction frees inside the file only */
    CHECK_EQ_INT(mvcc_compact(s, mvcc_current_rev(s), NULL), MVCC_OK);
    CHECK_EQ_INT(mvcc_size_bytes(s), grown);
    CHECK_EQ_INT(mvcc_live_bytes(s), base + mvcc_put_cost_bytes(s, 3, 100));
    /* defrag duration grows with size, and defrag shrinks to live */
    int64_t d_big = mvcc_defrag_duration_ns(s);
    int64_t blocked = mvcc_defrag(s);
    CHECK_EQ_INT(blocked, d_big);
    CHECK_EQ_INT(mvcc_size_bytes(s), mvcc_live_bytes(s));
    CHECK(mvcc_defrag_duration_ns(s) < d_big);
    CHECK(mvcc_defrag_duration_ns(s) >= 10 * FL_MS);
    /* deletes grow the file too */
    int64_t before = mvcc_size_bytes(s);
    t_del(s, "key", NULL, NULL);
    CHECK(mvcc_size_bytes(s) > before);
    mvcc_check_invariants(s);
    mvcc_close(s);
}

static void test_hash(void)
{
    struct mvcc_store *a = mvcc_open(NULL), *b = mvcc_open(NULL);
    /* same writes, keys created in different orders across revisions */
    for (int i = 0; i < 50; i++) {
        char k[16], v[16];
        snprintf(k, sizeof(k), "k%02d", (i * 7) % 50);
        snprintf(v, sizeof(v), "v%d", i);
        t_put(a, k, v);
        t_put(b, k, v);
    }
    struct mvcc_hashkv ha, hb;
    CHECK_EQ_INT(mvcc_hash_kv(a, 0, &ha), MVCC_OK);
    CHECK_EQ_INT(mvcc_hash_kv(b, 0, &hb), MVCC_OK);
    CHECK(ha.hash == hb.hash);
    CHECK_EQ_INT(ha.hash_rev, 51);
    /* at an older revision too, and it differs from the current one */
    struct mvcc_hashkv ha30, hb30;
    CHECK_EQ_INT(mvcc_hash_kv(a, 30, &ha30), MVCC_OK);
    CHECK_EQ_INT(mvcc_hash_kv(b, 30, &hb30), MVCC_OK);
    CHECK(ha30.hash == hb30.hash && ha30.hash != ha.hash);
    /* a diverging value changes it */
    t_put(a, "k00", "x");
    t_put(b, "k00", "y");
    CHECK_EQ_INT(mvcc_hash_kv(a, 0, &ha), MVCC_OK);
    CHECK_EQ_INT(mvcc_hash_kv(b, 0, &hb), MVCC_OK);
    CHECK(ha.hash != hb.hash);
    CHECK_EQ_INT(mvcc_hash_kv(a, 30, &ha), MVCC_OK);
    CHECK(ha.hash == ha30.hash);
    /* errors */
    CHECK_EQ_INT(mvcc_hash_kv(a, 99, &ha), MVCC_ERR_FUTURE_REV);
    CHECK_EQ_INT(mvcc_compact(a, 40, NULL), MVCC_OK);
    CHECK_EQ_INT(mvcc_hash_kv(a, 39, &ha), MVCC_ERR_COMPACTED);
    CHECK_EQ_INT(mvcc_hash_kv(a, 0, &ha), MVCC_OK);
    CHECK_EQ_INT(ha.compact_rev, 40);
    mvcc_close(a);
    mvcc_close(b);
}

static void test_autocompact_revision(void)
{
    /* retention 1000, 500 new revisions per 5 minutes */
    struct mvcc_autocompact ac;
    int64_t t0 = 7 * FL_S;
    mvcc_autocompact_init(&ac, MVCC_AUTOCOMPACT_REVISION, 1000, t0);
    mvcc_autocompact_pause(&ac, false); /* the leader's */
    CHECK_EQ_INT(mvcc_autocompact_next_ns(&ac), t0 + 5 * 60 * FL_S);
    int64_t rev = 1, compacted = 0, compactions = 0;
    int64_t got[8] = {0};
    for (int step = 1; step <= 8; step++) {
        rev += 500;
        int64_t now = mvcc_autocompact_next_ns(&ac);
        CHECK_EQ_INT(now, t0 + step * 5 * 60 * FL_S);
        int64_t target = mvcc_autocompact_step(&ac, now, rev);
        got[step - 1] = target;
        if (target) {
            CHECK_EQ_INT(target, rev - 1000);
            if (compacted)
                CHECK_EQ_INT(target - compacted, 500);
            compacted = target;
            compactions++;
        }
    }
    /* first two intervals: rev - 1000 <= 0 ... then one every interval */
    CHECK_EQ_INT(got[0], 0);
    CHECK_EQ_INT(got[1], 1);
    CHECK_EQ_INT(got[2], 501);
    CHECK_EQ_INT(compactions, 7);
    /* no new revisions: same target, nothing to do */
    CHECK_EQ_INT(mvcc_autocompact_step(&ac, mvcc_autocompact_next_ns(&ac), rev), 0);
    /* stepping early does nothing */
    CHECK_EQ_INT(mvcc_autocompact_step(&ac, mvcc_autocompact_next_ns(&ac) - 1, rev + 900), 0);
    mvcc_autocompact_close(&ac);
}

static void test_autocompact_periodic(void)
{
    /* retention 8h; 100 revisions per minute; the server wakes at next_ns */
    struct mvcc_autocompact ac;
    int64_t h = 3600 * FL_S;
    mvcc_autocompact_init(&ac, MVCC_AUTOCOMPACT_PERIODIC, 8 * h, 0);
    mvcc_autocompact_pause(&ac, false);
    int64_t targets[32], at[32];
    int n = 0;
    int64_t now = 0;
    while (now <= 12 * h && n < 32) {
        now = mvcc_autocompact_next_ns(&ac);
        int64_t rev = 1 + now / (60 * FL_S) * 100;
        int64_t t = mvcc_autocompact_step(&ac, now, rev);
        if (t) {
            targets[n] = t;
            at[n] = now;
            n++;
        }
    }
    /* compactions at 8h, 9h, 10h, 11h, 12h to the revisions of 0h, 1h, 2h, ... */
    CHECK_EQ_INT(n, 5);
    for (int i = 0; i < n && i < 5; i++) {
        CHECK_EQ_INT(at[i], (8 + i) * h);
        CHECK_EQ_INT(targets[i], 1 + i * 60 * 100);
    }
    /* samples stay bounded */
    CHECK(ac.samples_len <= 90);
    mvcc_autocompact_close(&ac);

    /* retention 30 min: every 30 min, to the revision of 30 min earlier */
    mvcc_autocompact_init(&ac, MVCC_AUTOCOMPACT_PERIODIC, 30 * 60 * FL_S, 0);
    mvcc_autocompact_pause(&ac, false);
    n = 0;
    now = 0;
    while (now <= 2 * h && n < 32) {
        now = mvcc_autocompact_next_ns(&ac);
        int64_t t = mvcc_autocompact_step(&ac, now, 1 + now / FL_S);
        if (t) {
            at[n] = now;
            targets[n] = t;
            n++;
        }
    }
    CHECK_EQ_INT(n, 4);
    CHECK_EQ_INT(at[0], 30 * 60 * FL_S);
    CHECK_EQ_INT(targets[0], 1);
    CHECK_EQ_INT(at[1], 60 * 60 * FL_S);
    CHECK_EQ_INT(targets[1], 1 + 30 * 60);
    /* failure: retry after retention / 10 */
    mvcc_autocompact_failed(&ac, at[3]);
    CHECK_EQ_INT(mvcc_autocompact_next_ns(&ac) <= at[3] + 3 * 60 * FL_S, 1);
    mvcc_autocompact_close(&ac);

    mvcc_autocompact_init(&ac, MVCC_AUTOCOMPACT_PERIODIC, 0, 0);
    CHECK(ac.mode == MVCC_AUTOCOMPACT_OFF);
    CHECK(mvcc_autocompact_next_ns(&ac) == INT64_MAX);
    mvcc_autocompact_close(&ac);
}

/* etcd's compactor keeps its phase from the member's start and is only paused while
 * the member is not the leader: a member that starts at 0 and becomes leader at 960 s
 * compacts at the 1200 s tick (not at 1260 s), and nothing happens while paused. */
static void test_autocompact_paused(void)
{
    struct mvcc_autocompact ac;
    mvcc_autocompact_init(&ac, MVCC_AUTOCOMPACT_REVISION, 100, 0);
    int64_t rev = 1000;
    /* followers: ticks at 300, 600, 900 s hand out nothing and move no target */
    for (int k = 1; k <= 3; k++) {
        CHECK_EQ_INT(mvcc_autocompact_next_ns(&ac), k * 300 * FL_S);
        CHECK_EQ_INT(mvcc_autocompact_step(&ac, k * 300 * FL_S, rev), 0);
    }
    mvcc_autocompact_pause(&ac, false); /* elected at 960 s */
    CHECK_EQ_INT(mvcc_autocompact_next_ns(&ac), 1200 * FL_S);
    CHECK_EQ_INT(mvcc_autocompact_step(&ac, 1200 * FL_S, rev), rev - 100);
    /* paused again: the next tick passes without a compaction, the one after it
     * (leader again) compacts to the then current revision */
    mvcc_autocompact_pause(&ac, true);
    CHECK_EQ_INT(mvcc_autocompact_step(&ac, 1500 * FL_S, rev + 50), 0);
    mvcc_autocompact_pause(&ac, false);
    CHECK_EQ_INT(mvcc_autocompact_next_ns(&ac), 1800 * FL_S);
    CHECK_EQ_INT(mvcc_autocompact_step(&ac, 1800 * FL_S, rev + 60), rev - 40);
    mvcc_autocompact_close(&ac);

    /* PERIODIC (retention 1 h, samples every 6 min): sampling goes on while paused; a
     * compaction that fell due while paused comes at the first tick after the resume,
     * to the revision sampled one retention before. */
    int64_t h = 3600 * FL_S;
    mvcc_autocompact_init(&ac, MVCC_AUTOCOMPACT_PERIODIC, h, 0);
    int64_t now = 0;
    while (now < 90 * 60 * FL_S) {
        now = mvcc_autocompact_next_ns(&ac);
        CHECK_EQ_INT(mvcc_autocompact_step(&ac, now, 1 + now / (60 * FL_S)), 0);
    }
    mvcc_autocompact_pause(&ac, false);
    now = mvcc_autocompact_next_ns(&ac);
    CHECK_EQ_INT(now, 96 * 60 * FL_S);
    CHECK_EQ_INT(mvcc_autocompact_step(&ac, now, 1 + 96), 1 + 36);
    mvcc_autocompact_close(&ac);
}

/* Values live in per-key chunks that compaction rebuilds once most of their space is
 * dead: every surviving revision must keep its exact bytes through rebuilds, and a
 * snapshot round trip must give the same hash. */
static void test_value_chunks(void)
{
    struct mvcc_store *s = mvcc_open(NULL);
    char v[200];
    static int64_t revs[2000];
    for (int i = 0; i < 2000; i++) {
        snprintf(v, sizeof v, "value-%03d-%0*d", i, 100 + i % 80, i); /* 110..189 bytes */
        revs[i] = t_put(s, i % 2 ? "odd" : "even", v);
        if (i % 3 == 0)
            t_put(s, "other", "x");
    }
    static const int keep[] = {500, 1200, 1800, 1990}; /* compact below these puts */
    for (size_t round = 0; round < FL_ARRAY_LEN(keep); round++) {
        CHECK_EQ_INT(mvcc_compact(s, revs[keep[round]], NULL), MVCC_OK);
        mvcc_check_invariants(s);
        for (int i = keep[round]; i < 2000; i++) {
            snprintf(v, sizeof v, "value-%03d-%0*d", i, 100 + i % 80, i);
            CHECK_EQ_STR(t_val(s, i % 2 ? "odd" : "even", revs[i]), v);
        }
    }
    struct mvcc_hashkv h1, h2;
    CHECK_EQ_INT(mvcc_hash_kv(s, 0, &h1), MVCC_OK);
    struct fl_buf img;
    fl_buf_init(&img);
    mvcc_snapshot_encode(s, &img);
    struct mvcc_store *t = mvcc_open(NULL);
    CHECK_EQ_INT(mvcc_snapshot_restore(t, img.data, img.len, MVCC_RESTORE_RESTART), MVCC_OK);
    CHECK_EQ_INT(mvcc_hash_kv(t, 0, &h2), MVCC_OK);
    CHECK_EQ_INT(h1.hash, h2.hash);
    mvcc_check_invariants(t);
    fl_buf_close(&img);
    mvcc_close(t);
    mvcc_close(s);
}

int main(void)
{
    FL_TEST(test_value_chunks);
    FL_TEST(test_compact_edges);
    FL_TEST(test_size_model);
    FL_TEST(test_hash);
    FL_TEST(test_autocompact_revision);
    FL_TEST(test_autocompact_periodic);
    FL_TEST(test_autocompact_paused);
    return fl_test_end();
}
