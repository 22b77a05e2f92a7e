/* Unit tests of checkers/kv_hash (the online corruption check of `converge`): members
 * that report the same hash at every shared revision pass, whatever order and gaps
 * (a member that jumps by snapshot, one that restarts from an older revision); a
 * member whose hash differs at one revision is reported with both members, both
 * hashes and the revision; trimming keeps memory bounded without losing comparisons
 * of revisions members still reach. */
#include "checkers/kv_hash.h"
#include "fl_test.h"

static uint64_t state(int64_t rev)
{
    return (uint64_t)rev * UINT64_C(0x9E3779B97F4A7C15) ^ UINT64_C(0x1234);
}

static void test_agree(void)
{
    struct kvhash *k = kvhash_new();
    for (int64_t r = 1; r <= 100; r++)
        CHECK(kvhash_feed(k, 1, r, state(r), r));
    for (int64_t r = 1; r <= 50; r++) /* a follower behind */
        CHECK(kvhash_feed(k, 2, r, state(r), 1000 + r));
    CHECK(kvhash_feed(k, 3, 90, state(90), 2000)); /* joins by snapshot at 90 */
    CHECK(kvhash_feed(k, 3, 91, state(91), 2001));
    for (int64_t r = 40; r <= 100; r++) /* restarts from an older snapshot, replays */
        CHECK(kvhash_feed(k, 2, r, state(r), 3000 + r));
    CHECK(!kvhash_failed(k));
    CHECK_EQ_STR(kvhash_violation_json(k), "null");
    CHECK_EQ_INT(kvhash_compared(k), 50 + 2 + 61);
    struct fl_buf b;
    fl_buf_init(&b);
    kvhash_summary_json(k, &b);
    CHECK(strstr(fl_buf_cstr(&b), "\"revisions\":100") != NULL);
    fl_buf_close(&b);
    kvhash_free(k);
}

static void test_mismatch(void)
{
    struct kvhash *k = kvhash_new();
    for (int64_t r = 1; r <= 20; r++)
        CHECK(kvhash_feed(k, 7, r, state(r), r * 10));
    for (int64_t r = 1; r <= 11; r++)
        CHECK(kvhash_feed(k, 8, r, state(r), 500 + r));
    /* Member 8 applies revision 12 differently (e.g. a revision reused after a reset). */
    CHECK(!kvhash_feed(k, 8, 12, state(12) + 1, 512));
    CHECK(kvhash_failed(k));
    const char *j = kvhash_violation_json(k);
    CHECK(strstr(j, "\"revision\":12") != NULL);
    CHECK(strstr(j, "\"member\":8") != NULL);
    CHECK(strstr(j, "\"other_member\":7") != NULL);
    CHECK(strstr(j, "\"other_at_ns\":120") != NULL);
    CHECK(!kvhash_feed(k, 8, 13, state(13), 513)); /* failed stays failed */
    kvhash_free(k);
}

static void test_trim(void)
{
    struct kvhash *k = kvhash_new();
    bool ok = true;
    for (int64_t r = 1; r <= 100000; r++) {
        ok = kvhash_feed(k, 1, r, state(r), r) && ok;
        ok = kvhash_feed(k, 2, r, state(r), r) && ok;
    }
    CHECK(ok);
    kvhash_forget(k, 2);
    /* A member far behind below the floor is not compared there, but is again once
     * it reaches revisions still held. */
    CHECK(kvhash_feed(k, 3, 5, state(5) + 1, 0));
    CHECK(!kvhash_failed(k));
    CHECK(!kvhash_feed(k, 3, 99999, state(99999) + 1, 0));
    CHECK(kvhash_failed(k));
    struct fl_buf b;
    fl_buf_init(&b);
    kvhash_summary_json(k, &b);
    CHECK(strstr(fl_buf_cstr(&b), "\"below_floor\":1") != NULL);
    fl_buf_close(&b);
    kvhash_free(k);
}

int main(void)
{
    FL_TEST(test_agree);
    FL_TEST(test_mismatch);
    FL_TEST(test_trim);
    return fl_test_end();
}
