/*
 * test_lease.c: leases: grant, keep-alive, expiry only on the primary lessor,
 * promotion extending every lease, revoke deleting the attached keys as one
 * revision, time-to-live, re-attachment on put, and the error texts.
 */
#include "mvcc_test_util.h"

static void test_grant_errors(void)
{
    struct mvcc_config cfg;
    mvcc_config_default(&cfg);
    cfg.lease_min_ttl_s = 3;
    struct mvcc_store *s = mvcc_open(&cfg);
    int64_t ttl = 0;
    CHECK_EQ_INT(mvcc_lease_grant(s, 1, 1, 0, &ttl), MVCC_OK);
    CHECK_EQ_INT(ttl, 3); /* raised to the minimum */
    CHECK_EQ_INT(mvcc_lease_grant(s, 1, 10, 0, &ttl), MVCC_ERR_LEASE_EXISTS);
    CHECK_EQ_STR(mvcc_err_text(MVCC_ERR_LEASE_EXISTS), "etcdserver: lease already exists");
    CHECK_EQ_INT(mvcc_lease_grant(s, 2, INT64_C(9000000001), 0, &ttl), MVCC_ERR_LEASE_TTL_LARGE);
    CHECK_EQ_STR(mvcc_err_text(MVCC_ERR_LEASE_TTL_LARGE), "etcdserver: too large lease TTL");
    CHECK_EQ_INT(mvcc_lease_grant(s, 0, 10, 0, &ttl), MVCC_ERR_INVALID);
    CHECK_EQ_INT(mvcc_lease_revoke(s, 42, NULL, NULL), MVCC_ERR_LEASE_NOT_FOUND);
    /* grants do not move the revision */
    CHECK_EQ_INT(mvcc_current_rev(s), 1);
    int64_t *ids;
    CHECK_EQ_INT(mvcc_lease_list(s, &ids), 1);
    CHECK_EQ_INT(ids[0], 1);
    free(ids);
    mvcc_close(s);
}

static void test_expiry_and_revoke(void)
{
    struct mvcc_store *s = mvcc_open(NULL);
    int64_t t0 = 100 * FL_S;
    CHECK_EQ_INT(mvcc_lease_grant(s, 7, 10, t0, NULL), MVCC_OK);
    CHECK_EQ_INT(mvcc_lease_grant(s, 8, 60, t0, NULL), MVCC_OK);
    enum mvcc_err e;
    t_put_lease(s, "b", "1", 7, &e); /* 2 */
    CHECK_EQ_INT(e, MVCC_OK);
    t_put_lease(s, "a", "1", 7, &e); /* 3 */
    t_put_lease(s, "c", "1", 8, &e); /* 4 */
    t_put(s, "d", "1");              /* 5 */
    /* not primary: nothing expires, keep-alive refused */
    int64_t ids[4];
    CHECK_EQ_INT(mvcc_lease_expired(s, t0 + 1000 * FL_S, ids, 4), 0);
    CHECK_EQ_INT(mvcc_next_deadline_ns(s), INT64_MAX);
    int64_t ttl;
    CHECK_EQ_INT(mvcc_lease_renew(s, 7, t0, &ttl), MVCC_ERR_NOT_LEADER);
    /* promotion extends every lease by the election timeout */
    int64_t t1 = t0 + 50 * FL_S;
    mvcc_lease_promote(s, t1, 1 * FL_S);
    CHECK(mvcc_lease_is_primary(s));
    CHECK_EQ_INT(mvcc_next_deadline_ns(s), t1 + 11 * FL_S);
    CHECK_EQ_INT(mvcc_lease_expired(s, t1 + 10 * FL_S, ids, 4), 0);
    CHECK_EQ_INT(mvcc_lease_expired(s, t1 + 11 * FL_S, ids, 4), 1);
    CHECK_EQ_INT(ids[0], 7);
    /* keep-alive pushes the expiry */
    CHECK_EQ_INT(mvcc_lease_renew(s, 7, t1 + 5 * FL_S, &ttl), MVCC_OK);
    CHECK_EQ_INT(ttl, 10);
    CHECK_EQ_INT(mvcc_lease_expired(s, t1 + 14 * FL_S, ids, 4), 0);
    struct mvcc_lease_info li;
    CHECK_EQ_INT(mvcc_lease_ttl(s, 7, t1 + 9 * FL_S + 1, true, &li), MVCC_OK);
    CHECK_EQ_INT(li.granted_ttl_s, 10);
    CHECK_EQ_INT(li.ttl_s, 6); /* 5.999... s left, rounded up */
    CHECK_EQ_INT(li.keys_len, 2);
    CHECK(li.key_lens[0] == 1 && li.keys[0][0] == 'a' && li.keys[1][0] == 'b');
    mvcc_lease_info_free(&li);
    /* both expire; lease 7 first by id */
    CHECK_EQ_INT(mvcc_lease_expired(s, t1 + 100 * FL_S, ids, 4), 2);
    CHECK_EQ_INT(ids[0], 7);
    CHECK_EQ_INT(ids[1], 8);
    CHECK_EQ_INT(mvcc_lease_renew(s, 7, t1 + 100 * FL_S, &ttl), MVCC_ERR_LEASE_NOT_FOUND);
    /* handed out once per retry interval */
    CHECK_EQ_INT(mvcc_lease_expired_take(s, t1 + 100 * FL_S, ids, 4), 2);
    CHECK_EQ_INT(mvcc_lease_expired_take(s, t1 + 101 * FL_S, ids, 4), 0);
    CHECK_EQ_INT(mvcc_lease_expired_take(s, t1 + 103 * FL_S, ids, 4), 2);
    CHECK_EQ_INT(ids[1], 8);
    /* a watcher sees the revoke as one revision with both deletes */
    struct mvcc_watch_req wr = {0};
    wr.key = (const uint8_t *)"a";
    wr.key_len = 1;
    wr.range_end = (const uint8_t *)"z";
    wr.range_end_len = 1;
    int64_t w;
    CHECK_EQ_INT(mvcc_watch_create(s, &wr, &w, NULL), MVCC_OK);
    int64_t deleted = 0, hdr = 0;
    CHECK_EQ_INT(mvcc_lease_revoke(s, 7, &deleted, &hdr), MVCC_OK);
    CHECK_EQ_INT(deleted, 2);
    CHECK_EQ_INT(hdr, 6);
    CHECK_EQ_STR(t_val(s, "a", 0), "<none>");
    CHECK_EQ_STR(t_val(s, "b", 0), "<none>");
    CHECK_EQ_STR(t_val(s, "c", 0), "1");
    struct mvcc_watch_resp r;
    CHECK(mvcc_watch_pop(s, &r));
    CHECK_EQ_INT(r.events_len, 2);
    CHECK(r.events[0].type == MVCC_EVENT_DELETE && r.events[0].kv.key[0] == 'a');
    CHECK(r.events[1].kv.key[0] == 'b' && r.events[1].kv.mod_revision == 6);
    mvcc_watch_resp_free(&r);
    CHECK_EQ_INT(mvcc_lease_ttl(s, 7, t1, false, &li), MVCC_ERR_LEASE_NOT_FOUND);
    CHECK_EQ_INT(li.ttl_s, -1);
    /* re-put of c without lease detaches it; revoking 8 then deletes nothing */
    t_put(s, "c", "2"); /* 7 */
    CHECK_EQ_INT(mvcc_lease_revoke(s, 8, &deleted, &hdr), MVCC_OK);
    CHECK_EQ_INT(deleted, 0);
    CHECK_EQ_INT(hdr, 7);
    CHECK_EQ_STR(t_val(s, "c", 0), "2");
    /* demotion: nothing expires */
    CHECK_EQ_INT(mvcc_lease_grant(s, 9, 5, t1, NULL), MVCC_OK);
    mvcc_lease_demote(s);
    CHECK_EQ_INT(mvcc_lease_expired(s, INT64_MAX - 1, ids, 4), 0);
    mvcc_check_invariants(s);
    mvcc_close(s);
}

static void test_attach_moves(void)
{
    struct mvcc_store *s = mvcc_open(NULL);
    CHECK_EQ_INT(mvcc_lease_grant(s, 1, 10, 0, NULL), MVCC_OK);
    CHECK_EQ_INT(mvcc_lease_grant(s, 2, 10, 0, NULL), MVCC_OK);
    enum mvcc_err e;
    t_put_lease(s, "k", "v", 1, &e);
    t_put_lease(s, "k", "v", 2, &e); /* moves to lease 2 */
    mvcc_check_invariants(s);
    int64_t deleted;
    CHECK_EQ_INT(mvcc_lease_revoke(s, 1, &deleted, NULL), MVCC_OK);
    CHECK_EQ_INT(deleted, 0);
    /* ignore_lease keeps lease 2 */
    struct mvcc_put_req r = {0};
    struct mvcc_put_result out;
    r.key = (const uint8_t *)"k";
    r.key_len = 1;
    r.ignore_lease = true;
    CHECK_EQ_INT(mvcc_put(s, &r, &out), MVCC_OK);
    bool found;
    struct mvcc_kv kv = {0};
    CHECK_EQ_INT(t_get(s, "k", 0, &found, &kv), MVCC_OK);
    CHECK_EQ_INT(kv.lease, 2);
    /* a delete detaches */
    t_del(s, "k", NULL, NULL);
    CHECK_EQ_INT(mvcc_lease_revoke(s, 2, &deleted, NULL), MVCC_OK);
    CHECK_EQ_INT(deleted, 0);
    mvcc_check_invariants(s);
    mvcc_close(s);
}

int main(void)
{
    FL_TEST(test_grant_errors);
    FL_TEST(test_expiry_and_revoke);
    FL_TEST(test_attach_moves);
    return fl_test_end();
}
