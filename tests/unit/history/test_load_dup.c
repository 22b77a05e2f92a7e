/*
 * test_load_dup.c: a write applied twice (at-most-once broken, e.g. a write re-sent
 * after a timeout) in hand-built JSON-lines histories. A revision whose content is a
 * put of a value a recorded op wrote is that op's effect, never a write from outside
 * the history; seen at more revisions than ops write the value, it is a duplicate
 * application: linearizability fails in both engines, whether a watch event, a read or
 * the response shows the extra revision, and the watch that reported both
 * applications is not blamed. Content no op wrote stays an outside write.
 */
#include "hist_fixture.h"

#define PUT(c, k, v, call, ret, rev)                                                               \
    "{\"client\":" #c ",\"op\":\"put\",\"key\":\"" k "\",\"value\":\"" v "\",\"call\":" #call      \
    ",\"return\":" #ret ",\"status\":\"ok\",\"rev\":" #rev "}\n"
#define PUTU(c, k, v, call)                                                                        \
    "{\"client\":" #c ",\"op\":\"put\",\"key\":\"" k "\",\"value\":\"" v "\",\"call\":" #call      \
    ",\"status\":\"unknown\"}\n"
#define WOPEN "{\"type\":\"watch_open\",\"watch\":1,\"client\":4,\"key\":\"a\",\"start_rev\":1}\n"
#define WEV(resp, v, mod, ver)                                                                     \
    "{\"type\":\"watch_event\",\"watch\":1,\"response\":" #resp                                    \
    ",\"event\":\"put\",\"key\":\"a\",\"value\":\"" v "\",\"mod_rev\":" #mod                       \
    ",\"create_rev\":2,\"version\":" #ver "}\n"

/* put(a, 1) answered at revision 2; the watch shows it applied again at revision 3. */
static void test_twice_seen_by_watch(void)
{
    struct verdicts v = judge(WOPEN PUT(1, "a", "1", 100, 5000, 2) PUT(2, "a", "2", 6000, 6100, 4)
                                  GET(3, "a", "2", 4, 6200, 6300, 4) WEV(1, "1", 2, 1)
                                      WEV(2, "1", 3, 2) WEV(3, "2", 4, 3));
    CHECK_EQ_INT(v.rev, CHK_FAIL);
    CHECK_EQ_INT(v.search, CHK_FAIL);
    CHECK_EQ_INT(v.watch, CHK_PASS); /* it reported both applications faithfully */
    CHECK(strstr(v.reason, "applied at revision 2 (its response) and 3 (a watch event)") != NULL);
    CHECK(strstr(v.reason, "client 1") != NULL);
}

/* The same history without the second application: a linearization. */
static void test_once(void)
{
    struct verdicts v =
        judge(WOPEN PUT(1, "a", "1", 100, 5000, 2) PUT(2, "a", "2", 6000, 6100, 3)
                  GET(3, "a", "2", 3, 6200, 6300, 3) WEV(1, "1", 2, 1) WEV(2, "2", 3, 2));
    CHECK_EQ_INT(v.rev, CHK_PASS);
    CHECK_EQ_INT(v.search, CHK_PASS);
    CHECK_EQ_INT(v.watch, CHK_PASS);
}

/* Content no op wrote (value "z") at an unclaimed revision is still an outside write. */
static void test_outside_value(void)
{
    struct verdicts v = judge(WOPEN PUT(1, "a", "1", 100, 5000, 2) PUT(2, "a", "2", 6000, 6100, 4)
                                  GET(3, "a", "2", 4, 6200, 6300, 4) WEV(1, "1", 2, 1)
                                      WEV(2, "z", 3, 2) WEV(3, "2", 4, 3));
    CHECK_EQ_INT(v.rev, CHK_PASS);
    CHECK_EQ_INT(v.search, CHK_PASS);
    CHECK_EQ_INT(v.watch, CHK_PASS);
}

/* An unknown-outcome put the watch shows at two revisions: applied twice. */
static void test_unknown_twice(void)
{
    struct verdicts v = judge(WOPEN PUTU(1, "a", "1", 100) PUT(2, "a", "2", 6000, 6100, 4) GET(
        3, "a", "2", 4, 6200, 6300, 4) WEV(1, "1", 2, 1) WEV(2, "1", 3, 2) WEV(3, "2", 4, 3));
    CHECK_EQ_INT(v.rev, CHK_FAIL);
    CHECK_EQ_INT(v.search, CHK_FAIL);
    CHECK_EQ_INT(v.watch, CHK_PASS);
    CHECK(strstr(v.reason, "applied at revision 2 (a watch event) and 3 (a watch event)") != NULL);
}

/* No watch: a read shows the value at a revision its put was not answered at. */
static void test_twice_seen_by_read(void)
{
    struct verdicts v = judge(PUT(1, "a", "1", 100, 5000, 2) GET(3, "a", "1", 3, 6200, 6300, 3));
    CHECK_EQ_INT(v.rev, CHK_FAIL);
    CHECK_EQ_INT(v.search, CHK_FAIL);
    CHECK(strstr(v.reason, "3 (a read)") != NULL);
}

/* Two ops writing the same value may apply it at two revisions. */
static void test_same_value_two_ops(void)
{
    struct verdicts v = judge(WOPEN PUT(1, "a", "1", 100, 200, 2) PUT(2, "a", "1", 300, 400, 3) GET(
        3, "a", "1", 3, 500, 600, 3) WEV(1, "1", 2, 1) WEV(2, "1", 3, 2));
    CHECK_EQ_INT(v.rev, CHK_PASS);
    CHECK_EQ_INT(v.search, CHK_PASS);
    CHECK_EQ_INT(v.watch, CHK_PASS);
}

int main(void)
{
    FL_TEST(test_twice_seen_by_watch);
    FL_TEST(test_once);
    FL_TEST(test_outside_value);
    FL_TEST(test_unknown_twice);
    FL_TEST(test_twice_seen_by_read);
    FL_TEST(test_same_value_two_ops);
    return fl_test_end();
}
