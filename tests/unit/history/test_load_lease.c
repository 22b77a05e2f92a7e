/*
 * test_load_lease.c: writes no client asked for, in hand-built JSON-lines histories.
 * Lease revokes and expiries delete keys through Raft: recorded as "lease_revoke" ops
 * (keys given, or derived from the puts that carried the lease), or not recorded at
 * all, when only watch events show the deletes. Unknown-outcome writes must not be
 * placed at a revision whose watch events they cannot have made, and both
 * linearizability engines must reason the same way (revisions_complete decides
 * whether an unexplained revision is an outside write or a violation).
 */
#include "hist_fixture.h"

#define PUTL(c, k, v, lease, call, ret, rev)                                                       \
    "{\"client\":" #c ",\"op\":\"put\",\"key\":\"" k "\",\"value\":\"" v "\",\"lease\":" #lease    \
    ",\"call\":" #call ",\"return\":" #ret ",\"status\":\"ok\",\"rev\":" #rev "}\n"
#define GETNIL(c, k, call, ret, rev)                                                               \
    "{\"client\":" #c ",\"op\":\"get\",\"key\":\"" k "\",\"value\":null,\"call\":" #call           \
    ",\"return\":" #ret ",\"status\":\"ok\",\"rev\":" #rev "}\n"

/* A client revoke that names its keys deletes them at its revision. */
static void test_revoke_with_keys(void)
{
    const char *base = PUTL(1, "k", "v", 7, 10, 20, 2)
        PUTL(1, "j", "w", 0, 21, 22,
             3) "{\"client\":1,\"op\":\"lease_revoke\",\"lease_id\":7,\"keys\":[\"k\"],"
                "\"call\":30,\"return\":40,\"status\":\"ok\",\"rev\":4}\n";
    char t[2048];
    snprintf(t, sizeof(t), "%s%s%s", base, GETNIL(2, "k", 50, 60, 4),
             GET(2, "j", "w", 3, 50, 60, 4));
    struct verdicts v = judge_complete(t, -1);
    CHECK_EQ_INT(v.rev, CHK_PASS);
    CHECK_EQ_INT(v.search, CHK_PASS);
    /* the key cannot survive its lease's revoke */
    snprintf(t, sizeof(t), "%s%s", base, GET(2, "k", "v", 2, 50, 60, 4));
    v = judge_complete(t, -1);
    CHECK_EQ_INT(v.rev, CHK_FAIL);
    CHECK_EQ_INT(v.search, CHK_FAIL);
    /* a revoke that failed deleted nothing */
    const char *failed = PUTL(
        1, "k", "v", 7, 10, 20,
        2) "{\"client\":1,\"op\":\"lease_revoke\",\"lease_id\":7,\"keys\":[\"k\"],"
           "\"call\":30,\"return\":40,\"status\":\"fail\",\"error\":\"etcdserver: requested lease "
           "not found\"}\n" GET(2, "k", "v", 2, 50, 60, 2);
    v = judge_complete(failed, -1);
    CHECK_EQ_INT(v.rev, CHK_PASS);
    CHECK_EQ_INT(v.search, CHK_PASS);
}

/* Without "keys", the keys whose last acknowledged write before the revoke was a put
 * with the lease: a later put without the lease detaches a key. */
static void test_revoke_derived_keys(void)
{
    const char *base = PUTL(1, "a", "1", 7, 10, 20, 2) PUTL(1, "b", "1", 7, 21, 22, 3)
        PUTL(1, "b", "2", 0, 23, 24, 4)
            PUTL(1, "c", "1", 8, 25, 26,
                 5) "{\"client\":0,\"op\":\"lease_revoke\",\"lease_id\":7,\"system\":true,"
                    "\"call\":30,\"return\":40,\"status\":\"ok\",\"rev\":6}\n";
    char t[2048];
    snprintf(t, sizeof(t), "%s%s%s%s", base, GETNIL(2, "a", 50, 60, 6),
             GET(2, "b", "2", 4, 50, 60, 6), GET(3, "c", "1", 5, 50, 60, 6));
    struct chk_history h;
    chk_history_init(&h);
    struct fl_buf e;
    fl_buf_init(&e);
    CHECK_EQ_INT(hist_load_jsonl_mem("t.jsonl", t, strlen(t), &h, &e), FL_OK);
    CHECK_EQ_INT(h.op_count, 8);
    const struct chk_op *rv = &h.ops[4];
    CHECK(rv->flags & CHK_OPF_LEASE_END);
    CHECK_EQ_INT(rv->lease, 7);
    CHECK_EQ_INT(rv->then_count, 1); /* a only */
    if (rv->then_count == 1) {
        size_t n;
        const uint8_t *p = chk_key_bytes(&h, h.subs[rv->sub_first].key, &n);
        CHECK(n == 1 && p[0] == 'a');
        CHECK_EQ_INT(h.subs[rv->sub_first].kind, CHK_SUB_DELETE);
    }
    chk_history_close(&h);
    fl_buf_close(&e);
    struct verdicts v = judge_complete(t, -1);
    CHECK_EQ_INT(v.rev, CHK_PASS);
    CHECK_EQ_INT(v.search, CHK_PASS);
    /* b was detached from the lease: deleting it is wrong */
    snprintf(t, sizeof(t), "%s%s", base, GETNIL(2, "b", 50, 60, 6));
    v = judge_complete(t, -1);
    CHECK_EQ_INT(v.rev, CHK_FAIL);
    CHECK_EQ_INT(v.search, CHK_FAIL);
    /* a revoke of a lease that holds no key writes nothing: revision unchanged */
    const char *empty =
        PUTL(1, "a", "1", 0, 10, 20,
             2) "{\"client\":1,\"op\":\"lease_revoke\",\"lease_id\":9,\"call\":30,\"return\":40,"
                "\"status\":\"ok\",\"rev\":2}\n" GET(2, "a", "1", 2, 50, 60, 2);
    v = judge_complete(empty, -1);
    CHECK_EQ_INT(v.rev, CHK_PASS);
    CHECK_EQ_INT(v.search, CHK_PASS);
}

#define WATCH_LEASE                                                                                \
    "{\"type\":\"watch_open\",\"watch\":1,\"client\":4,\"key\":\"lease/\",\"range_end\":"          \
    "\"lease0\",\"start_rev\":1}\n"                                                                \
    "{\"type\":\"watch_event\",\"watch\":1,\"response\":1,\"event\":\"put\",\"key\":\"lease/a\","  \
    "\"value\":\"x\",\"mod_rev\":2,\"create_rev\":2,\"version\":1,\"t\":21}\n"
#define EV_EXPIRY                                                                                  \
    "{\"type\":\"watch_event\",\"watch\":1,\"response\":2,\"event\":\"delete\",\"key\":"           \
    "\"lease/a\",\"mod_rev\":3,\"t\":60}\n"

/* An expiry nobody recorded: the watch shows the delete at revision 3. Both engines take
 * that content for the revision no op explains; without the event, the read that sees
 * the key gone fails in both; in a complete history revision 3 is a violation. */
static void test_expiry_from_watch(void)
{
    const char *ops = PUTL(1, "lease/a", "x", 7, 10, 20, 2) GETNIL(2, "lease/a", 70, 80, 3);
    char t[2048];
    snprintf(t, sizeof(t), "%s%s%s", ops, WATCH_LEASE, EV_EXPIRY);
    struct verdicts v = judge_complete(t, -1);
    CHECK_EQ_INT(v.rev, CHK_PASS);
    CHECK_EQ_INT(v.search, CHK_PASS);
    CHECK_EQ_INT(v.watch, CHK_PASS);
    v = judge_complete(t, 1);
    CHECK_EQ_INT(v.rev, CHK_FAIL);
    CHECK_EQ_INT(v.search, CHK_FAIL);
    snprintf(t, sizeof(t), "%s%s", ops, WATCH_LEASE);
    v = judge_complete(t, -1);
    CHECK_EQ_INT(v.rev, CHK_FAIL);
    CHECK_EQ_INT(v.search, CHK_FAIL);
    /* a put seen by a watch at a revision no op explains: later reads see it */
    const char *put = PUTL(1, "lease/a", "x", 7, 10, 20, 2) WATCH_LEASE
        "{\"type\":\"watch_event\",\"watch\":1,\"response\":2,\"event\":\"put\",\"key\":"
        "\"lease/a\",\"value\":\"y\",\"mod_rev\":3,\"create_rev\":2,\"version\":2,\"t\":60}\n"
        "{\"client\":2,\"op\":\"get\",\"key\":\"lease/a\",\"value\":\"y\",\"mod_rev\":3,"
        "\"create_rev\":2,\"version\":2,\"call\":70,\"return\":80,\"status\":\"ok\",\"rev\":3}\n";
    v = judge_complete(put, -1);
    CHECK_EQ_INT(v.rev, CHK_PASS);
    CHECK_EQ_INT(v.search, CHK_PASS);
}

/* An unknown-outcome put of another key cannot have made the revision whose watch
 * events show a lease delete; the put of the watched value can. */
static void test_unknown_not_at_lease_delete(void)
{
    const char *t =
        PUTL(1, "lease/a", "x", 7, 10, 20,
             2) "{\"client\":2,\"op\":\"put\",\"key\":\"key1\",\"value\":\"u\",\"call\":25,"
                "\"return\":null,\"status\":\"unknown\"}\n" GETNIL(3, "lease/a", 70, 80, 3)
                    WATCH_LEASE EV_EXPIRY;
    struct verdicts v = judge_complete(t, -1);
    CHECK_EQ_INT(v.rev, CHK_PASS);
    CHECK_EQ_INT(v.search, CHK_PASS);
    CHECK_EQ_INT(v.watch, CHK_PASS); /* no "event that no write made" at revision 3 */
    CHECK_EQ_INT(v.revealed, 0);
    /* the unknown put is what a watch on its key saw at revision 3: placed there */
    const char *w =
        "{\"client\":2,\"op\":\"put\",\"key\":\"key1\",\"value\":\"u\",\"call\":25,"
        "\"return\":null,\"status\":\"unknown\"}\n" PUTL(1, "key2", "x", 0, 10, 20, 2)
            GET(3, "key1", "u", 3, 70, 80,
                3) "{\"type\":\"watch_open\",\"watch\":1,\"client\":4,\"key\":\"key1\",\"start_"
                   "rev\":1}\n"
                   "{\"type\":\"watch_event\",\"watch\":1,\"response\":1,\"event\":\"put\",\"key\":"
                   "\"key1\","
                   "\"value\":\"u\",\"mod_rev\":3,\"create_rev\":3,\"version\":1,\"t\":60}\n";
    v = judge_complete(w, -1);
    CHECK_EQ_INT(v.rev, CHK_PASS);
    CHECK_EQ_INT(v.search, CHK_PASS);
    CHECK_EQ_INT(v.watch, CHK_PASS);
    CHECK_EQ_INT(v.revealed, 1);
}

/* A watch on [a, z) that delivered revision 3 saw only the delete of b: an unknown txn
 * that deletes b and puts c cannot be revision 3 (c would have been delivered too). */
static void test_unknown_refused_by_atomic_revision(void)
{
    const char *t =
        PUTL(1, "b", "1", 7, 10, 20,
             2) "{\"client\":2,\"op\":\"txn\",\"compare\":[],\"success\":["
                "{\"delete\":{\"key\":\"b\"}},{\"put\":{\"key\":\"c\","
                "\"value\":\"u\"}}],\"failure\":[],\"call\":25,"
                "\"return\":null,\"status\":\"unknown\"}\n" GETNIL(
                    3, "b", 70, 80,
                    3) "{\"type\":\"watch_open\",\"watch\":1,\"client\":4,\"key\":\"a\",\"range_"
                       "end\":\"z\","
                       "\"start_rev\":1}\n"
                       "{\"type\":\"watch_event\",\"watch\":1,\"response\":1,\"event\":\"put\","
                       "\"key\":\"b\","
                       "\"value\":\"1\",\"mod_rev\":2,\"create_rev\":2,\"version\":1,\"t\":21}\n"
                       "{\"type\":\"watch_event\",\"watch\":1,\"response\":2,\"event\":\"delete\","
                       "\"key\":\"b\","
                       "\"mod_rev\":3,\"t\":60}\n";
    struct verdicts v = judge_complete(t, -1);
    CHECK_EQ_INT(v.rev, CHK_PASS);
    CHECK_EQ_INT(v.search, CHK_PASS);
    CHECK_EQ_INT(v.watch, CHK_PASS);
    CHECK_EQ_INT(v.revealed, 0);
}

/* A watch event that no write made (a bogus delete at a revision nobody claims) never
 * fails linearizability: both engines judge again without watch content. */
static void test_bogus_watch_content(void)
{
    const char *t = PUTL(1, "lease/a", "x", 7, 10, 20, 2)
        WATCH_LEASE EV_EXPIRY GET(2, "lease/a", "x", 2, 70, 80, 3);
    struct verdicts v = judge_complete(t, -1);
    CHECK_EQ_INT(v.rev, CHK_PASS);
    CHECK_EQ_INT(v.search, CHK_PASS);
}

static void test_bad_lease_revoke(void)
{
    struct chk_history h;
    chk_history_init(&h);
    struct fl_buf e;
    fl_buf_init(&e);
    const char *t = "{\"client\":1,\"op\":\"lease_revoke\",\"keys\":[\"k\"],\"call\":1,"
                    "\"return\":2,\"status\":\"ok\",\"rev\":2}\n";
    CHECK_EQ_INT(hist_load_jsonl_mem("t.jsonl", t, strlen(t), &h, &e), FL_EINVAL);
    CHECK(strstr(fl_buf_cstr(&e), "t.jsonl:1:") != NULL);
    CHECK(strstr(fl_buf_cstr(&e), "lease_id") != NULL);
    chk_history_close(&h);
    fl_buf_close(&e);
}

int main(void)
{
    FL_TEST(test_revoke_with_keys);
    FL_TEST(test_revoke_derived_keys);
    FL_TEST(test_expiry_from_watch);
    FL_TEST(test_unknown_not_at_lease_delete);
    FL_TEST(test_unknown_refused_by_atomic_revision);
    FL_TEST(test_bogus_watch_content);
    FL_TEST(test_bad_lease_revoke);
    return fl_test_end();
}
