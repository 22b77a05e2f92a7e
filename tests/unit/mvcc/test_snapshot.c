/*
 * test_snapshot.c: snapshot round trip (data, history, compaction, leases, sizes,
 * applied index, hash), deterministic bytes, rejection of garbage, truncation, bit
 * flips and semantically bad snapshots with a valid checksum, and the
 * revision-reset-on-restart bug switch.
 */
#include "mvcc_test_util.h"

static struct mvcc_store *sample_store(void)
{
    struct mvcc_store *s = mvcc_open(NULL);
    CHECK_EQ_INT(mvcc_lease_grant(s, 5, 30, 0, NULL), MVCC_OK);
    for (int i = 0; i < 40; i++) {
        char k[16], v[32];
        snprintf(k, sizeof(k), "key%02d", (i * 13) % 17);
        snprintf(v, sizeof(v), "value-%d", i);
        t_put(s, k, v);
    }
    enum mvcc_err e;
    t_put_lease(s, "leased", "x", 5, &e);
    t_del(s, "key03", NULL, NULL);
    CHECK_EQ_INT(mvcc_compact(s, 20, NULL), MVCC_OK);
    t_put(s, "key03", "back");
    mvcc_set_applied_index(s, 1234);
    return s;
}

static void test_round_trip(void)
{
    struct mvcc_store *s = sample_store();
    struct fl_buf a, b;
    fl_buf_init(&a);
    fl_buf_init(&b);
    mvcc_snapshot_encode(s, &a);
    mvcc_snapshot_encode(s, &b);
    CHECK(a.len == b.len && memcmp(a.data, b.data, a.len) == 0);
    struct mvcc_store *t = mvcc_open(NULL);
    t_put(t, "junk", "to be replaced");
    CHECK_EQ_INT(mvcc_snapshot_restore(t, a.data, a.len, MVCC_RESTORE_BACKUP), MVCC_OK);
    mvcc_check_invariants(t);
    CHECK_EQ_INT(mvcc_current_rev(t), mvcc_current_rev(s));
    CHECK_EQ_INT(mvcc_compact_rev(t), 20);
    CHECK_EQ_INT(mvcc_applied_index(t), 1234);
    CHECK_EQ_INT(mvcc_size_bytes(t), mvcc_size_bytes(s));
    CHECK_EQ_INT(mvcc_live_bytes(t), mvcc_live_bytes(s));
    struct mvcc_hashkv hs, ht;
    CHECK_EQ_INT(mvcc_hash_kv(s, 0, &hs), MVCC_OK);
    CHECK_EQ_INT(mvcc_hash_kv(t, 0, &ht), MVCC_OK);
    CHECK(hs.hash == ht.hash && hs.compact_rev == ht.compact_rev);
    CHECK_EQ_INT(mvcc_hash_kv(s, 25, &hs), MVCC_OK);
    CHECK_EQ_INT(mvcc_hash_kv(t, 25, &ht), MVCC_OK);
    CHECK(hs.hash == ht.hash);
    CHECK_EQ_STR(t_val(t, "junk", 0), "<none>");
    CHECK_EQ_STR(t_val(t, "key03", 0), "back");
    bool found;
    CHECK_EQ_INT(t_get(t, "key00", 19, &found, NULL), MVCC_ERR_COMPACTED);
    /* re-encoding the restored store gives the same bytes */
    fl_buf_reset(&b);
    mvcc_snapshot_encode(t, &b);
    CHECK(a.len == b.len && memcmp(a.data, b.data, a.len) == 0);
    /* leases survive with their keys; a revoke deletes them */
    struct mvcc_lease_info li;
    CHECK_EQ_INT(mvcc_lease_ttl(t, 5, 0, true, &li), MVCC_OK);
    CHECK_EQ_INT(li.keys_len, 1);
    mvcc_lease_info_free(&li);
    int64_t deleted;
    CHECK_EQ_INT(mvcc_lease_revoke(t, 5, &deleted, NULL), MVCC_OK);
    CHECK_EQ_INT(deleted, 1);
    /* both stores continue identically */
    t_put(s, "new", "1");
    CHECK_EQ_INT(mvcc_lease_revoke(s, 5, &deleted, NULL), MVCC_OK);
    t_put(t, "new", "1");
    /* s: put then revoke, t: revoke then put; same set, different order */
    CHECK_EQ_INT(mvcc_current_rev(s), mvcc_current_rev(t));
    mvcc_check_invariants(s);
    mvcc_check_invariants(t);
    fl_buf_close(&a);
    fl_buf_close(&b);
    mvcc_close(s);
    mvcc_close(t);
}

static void refix_crc(uint8_t *p, size_t len)
{
    uint32_t c = fl_crc32c(0, p, len - 4);
    p[len - 4] = (uint8_t)c;
    p[len - 3] = (uint8_t)(c >> 8);
    p[len - 2] = (uint8_t)(c >> 16);
    p[len - 1] = (uint8_t)(c >> 24);
}

static void test_garbage(void)
{
    struct mvcc_store *s = sample_store();
    struct fl_buf a;
    fl_buf_init(&a);
    mvcc_snapshot_encode(s, &a);
    struct mvcc_store *t = mvcc_open(NULL);
    t_put(t, "keep", "me");
    int64_t rev = mvcc_current_rev(t);
    /* every truncation */
    int bad = 0;
    for (size_t n = 0; n < a.len; n++)
        bad += mvcc_snapshot_restore(t, a.data, n, MVCC_RESTORE_BACKUP) == MVCC_ERR_BAD_SNAPSHOT;
    CHECK_EQ_INT(bad, (long long)a.len);
    /* bit flips (checksum) */
    uint8_t *copy = fl_memdup(a.data, a.len);
    bad = 0;
    for (size_t i = 0; i < a.len; i += 7) {
        copy[i] ^= 0x10;
        bad += mvcc_snapshot_restore(t, copy, a.len, MVCC_RESTORE_BACKUP) == MVCC_ERR_BAD_SNAPSHOT;
        copy[i] ^= 0x10;
    }
    CHECK_EQ_INT(bad, (long long)((a.len + 6) / 7));
    /* flips with a re-fixed checksum: decode must still never crash, and every
     * accepted result must satisfy the invariants */
    uint64_t x = 12345;
    int accepted = 0;
    for (int round = 0; round < 3000; round++) {
        memcpy(copy, a.data, a.len);
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        size_t at = 8 + (size_t)((x >> 33) % (a.len - 12));
        copy[at] ^= (uint8_t)(1u << ((x >> 20) % 8));
        refix_crc(copy, a.len);
        struct mvcc_store *u = mvcc_open(NULL);
        if (mvcc_snapshot_restore(u, copy, a.len, MVCC_RESTORE_BACKUP) == MVCC_OK) {
            accepted++;
            mvcc_check_invariants(u);
        }
        mvcc_close(u);
    }
    CHECK(accepted < 3000); /* most structural flips are caught */
    /* pure garbage */
    uint8_t junk[256];
    for (size_t i = 0; i < sizeof(junk); i++)
        junk[i] = (uint8_t)(i * 31 + 7);
    CHECK_EQ_INT(mvcc_snapshot_restore(t, junk, sizeof(junk), MVCC_RESTORE_BACKUP),
                 MVCC_ERR_BAD_SNAPSHOT);
    CHECK_EQ_INT(mvcc_snapshot_restore(t, NULL, 0, MVCC_RESTORE_BACKUP), MVCC_ERR_BAD_SNAPSHOT);
    /* the target was never touched */
    CHECK_EQ_INT(mvcc_current_rev(t), rev);
    CHECK_EQ_STR(t_val(t, "keep", 0), "me");
    mvcc_check_invariants(t);
    free(copy);
    fl_buf_close(&a);
    mvcc_close(s);
    mvcc_close(t);
}

/* Puts, ends with deletes, restarts from a snapshot: the revision after restart. */
static int64_t restart_rev(int64_t *before)
{
    struct mvcc_store *s = mvcc_open(NULL);
    t_put(s, "a", "1");        /* 2 */
    t_put(s, "b", "1");        /* 3 */
    t_del(s, "b", NULL, NULL); /* 4 */
    t_del(s, "a", NULL, NULL); /* 5 */
    *before = mvcc_current_rev(s);
    struct fl_buf b;
    fl_buf_init(&b);
    mvcc_snapshot_encode(s, &b);
    mvcc_close(s);
    struct mvcc_store *t = mvcc_open(NULL);
    CHECK_EQ_INT(mvcc_snapshot_restore(t, b.data, b.len, MVCC_RESTORE_RESTART), MVCC_OK);
    fl_buf_close(&b);
    mvcc_check_invariants(t);
    int64_t rev = mvcc_current_rev(t);
    /* the next write must still get a fresh revision */
    int64_t next = t_put(t, "c", "1");
    CHECK_EQ_INT(next, rev + 1);
    mvcc_check_invariants(t);
    mvcc_close(t);
    return rev;
}

static void test_revision_reset_bug(void)
{
    int64_t before;
    CHECK_EQ_INT(restart_rev(&before), before);
    CHECK_EQ_INT(before, 5);
    fl_bug_set(FL_BUG_MVCC_REVISION_RESET_ON_RESTART, true);
    CHECK_EQ_INT(restart_rev(&before), 3); /* went back below 5 */
    /* etcd#17780's shape: compacted at the current revision, a delete on top; the
     * restarted member lands below its own compact revision and reuses revisions */
    struct mvcc_store *s = mvcc_open(NULL);
    t_put(s, "a", "1");        /* 2 */
    t_put(s, "b", "1");        /* 3 */
    t_del(s, "b", NULL, NULL); /* 4 */
    CHECK_EQ_INT(mvcc_compact(s, 4, NULL), MVCC_OK);
    struct fl_buf b;
    fl_buf_init(&b);
    mvcc_snapshot_encode(s, &b);
    struct mvcc_store *t = mvcc_open(NULL);
    CHECK_EQ_INT(mvcc_snapshot_restore(t, b.data, b.len, MVCC_RESTORE_RESTART), MVCC_OK);
    CHECK_EQ_INT(mvcc_current_rev(t), 2);
    CHECK_EQ_INT(mvcc_compact_rev(t), 4);
    CHECK_EQ_INT(t_put(t, "c", "1"), 3); /* revision 3 handed out twice */
    mvcc_check_invariants(t);
    struct mvcc_hashkv h1, h2;
    t_put(s, "c", "1");
    CHECK_EQ_INT(mvcc_hash_kv(s, 0, &h1), MVCC_OK);
    t_put(t, "x", "1");
    t_put(t, "y", "1");
    CHECK_EQ_INT(mvcc_hash_kv(t, 5, &h2), MVCC_OK);
    CHECK(h1.hash != h2.hash);
    fl_buf_close(&b);
    mvcc_close(s);
    mvcc_close(t);
    fl_bug_reset();
}

int main(void)
{
    FL_TEST(test_round_trip);
    FL_TEST(test_garbage);
    FL_TEST(test_revision_reset_bug);
    return fl_test_end();
}
