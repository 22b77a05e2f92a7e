/*
 * test_wal.c: WAL records and replay: round trip, torn tails at every byte, CRC
 * damage, conflict truncation, idempotent replay of a rewritten segment.
 */
#include "fl_test.h"
#include "nodes/server/wal.h"

static void put_entries(struct fl_buf *b, uint64_t term, uint64_t from, uint64_t to)
{
    for (uint64_t i = from; i <= to; i++) {
        char d[32];
        int n =
            snprintf(d, sizeof d, "e%llu/t%llu", (unsigned long long)i, (unsigned long long)term);
        srv_wal_put_entry(b, term, i, 0, d, (size_t)n);
    }
}

static void test_roundtrip(void)
{
    struct fl_buf b;
    fl_buf_init(&b);
    srv_wal_put_meta(&b, 11, 22);
    put_entries(&b, 1, 1, 5);
    srv_wal_put_hardstate(&b, 3, 2, 4);
    struct srv_wal_state st;
    srv_wal_state_init(&st);
    int n = srv_wal_replay(&st, b.data, b.len);
    CHECK_EQ_INT(n, 7);
    CHECK(!st.torn);
    CHECK_EQ_INT(st.valid_bytes, b.len);
    CHECK_EQ_INT(st.member_id, 11);
    CHECK_EQ_INT(st.cluster_id, 22);
    CHECK_EQ_INT(st.term, 3);
    CHECK_EQ_INT(st.vote, 2);
    CHECK_EQ_INT(st.commit, 4);
    CHECK_EQ_INT(st.n_entries, 5);
    CHECK_EQ_INT(st.entries[4].index, 5);
    CHECK(st.entries[2].len == 5 && memcmp(st.entries[2].data, "e3/t1", 5) == 0);
    srv_wal_state_close(&st);
    fl_buf_close(&b);
}

/* Every possible crash point: a prefix of the file replays the whole records before
 * it and reports the tail as torn, never a partial record. */
static void test_torn_every_byte(void)
{
    struct fl_buf b;
    fl_buf_init(&b);
    srv_wal_put_meta(&b, 1, 2);
    size_t ends[16];
    int k = 0;
    ends[k++] = b.len;
    for (uint64_t i = 1; i <= 6; i++) {
        put_entries(&b, 1, i, i);
        ends[k++] = b.len;
    }
    int bad = 0;
    for (size_t cut = 0; cut <= b.len; cut++) {
        struct srv_wal_state st;
        srv_wal_state_init(&st);
        int n = srv_wal_replay(&st, b.data, cut);
        int whole = 0;
        while (whole < k && ends[whole] <= cut)
            whole++;
        if (n != whole || st.valid_bytes != (whole ? ends[whole - 1] : 0) ||
            st.torn != (cut != (whole ? ends[whole - 1] : 0)))
            bad++;
        if (whole >= 1 && st.n_entries != (size_t)(whole - 1))
            bad++;
        srv_wal_state_close(&st);
    }
    CHECK_EQ_INT(bad, 0);
    fl_buf_close(&b);
}

static void test_crc_damage(void)
{
    struct fl_buf b;
    fl_buf_init(&b);
    srv_wal_put_meta(&b, 1, 2);
    put_entries(&b, 1, 1, 3);
    size_t third = b.len;
    put_entries(&b, 1, 4, 4);
    b.data[third + 12] ^= 0x40; /* inside entry 4's payload */
    struct srv_wal_state st;
    srv_wal_state_init(&st);
    srv_wal_replay(&st, b.data, b.len);
    CHECK(st.torn);
    CHECK_EQ_INT(st.valid_bytes, third);
    CHECK_EQ_INT(st.n_entries, 3);
    srv_wal_state_close(&st);
    fl_buf_close(&b);
}

static void test_conflict_and_idempotence(void)
{
    struct fl_buf b;
    fl_buf_init(&b);
    put_entries(&b, 1, 1, 6);
    put_entries(&b, 2, 4, 5); /* a new leader overwrote 4.. and truncated 6 */
    struct srv_wal_state st;
    srv_wal_state_init(&st);
    srv_wal_replay(&st, b.data, b.len);
    CHECK_EQ_INT(st.n_entries, 5);
    CHECK_EQ_INT(st.entries[3].term, 2);
    CHECK_EQ_INT(st.entries[4].index, 5);
    /* A rewritten segment (same entries) replayed on top changes nothing. */
    struct fl_buf c;
    fl_buf_init(&c);
    srv_wal_put_snapshot(&c, 2, 1, false);
    for (size_t i = 1; i < st.n_entries; i++)
        srv_wal_put_entry(&c, st.entries[i].term, st.entries[i].index, 0, st.entries[i].data,
                          st.entries[i].len);
    srv_wal_replay(&st, c.data, c.len);
    CHECK_EQ_INT(st.n_entries, 5);
    CHECK_EQ_INT(st.snap_index, 2);
    srv_wal_state_compact(&st, 2);
    CHECK_EQ_INT(st.n_entries, 3);
    CHECK_EQ_INT(st.entries[0].index, 3);
    /* A snapshot from the leader resets the log. */
    fl_buf_reset(&c);
    srv_wal_put_snapshot(&c, 10, 3, true);
    put_entries(&c, 3, 11, 12);
    srv_wal_replay(&st, c.data, c.len);
    CHECK_EQ_INT(st.n_entries, 2);
    CHECK_EQ_INT(st.entries[0].index, 11);
    CHECK_EQ_INT(st.snap_index, 10);
    srv_wal_state_close(&st);
    fl_buf_close(&b);
    fl_buf_close(&c);
}

int main(void)
{
    FL_TEST(test_roundtrip);
    FL_TEST(test_torn_every_byte);
    FL_TEST(test_crc_damage);
    FL_TEST(test_conflict_and_idempotence);
    return fl_test_end();
}
