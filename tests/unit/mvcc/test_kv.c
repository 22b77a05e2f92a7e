/*
 * test_kv.c: revisions, versions, Range variants, delete and re-create, Txn compares
 * of every kind and branch choice, duplicate-key refusal, error texts and codes.
 */
#include "mvcc_test_util.h"

static void test_revisions(void)
{
    struct mvcc_store *s = mvcc_open(NULL);
    CHECK_EQ_INT(mvcc_current_rev(s), 1);
    CHECK_EQ_INT(t_put(s, "a", "1"), 2);
    CHECK_EQ_INT(t_put(s, "a", "2"), 3);
    CHECK_EQ_INT(t_put(s, "b", "x"), 4);
    bool found;
    struct mvcc_kv kv = {0};
    CHECK_EQ_INT(t_get(s, "a", 0, &found, &kv), MVCC_OK);
    CHECK(found && kv_is(&kv, "a", "2"));
    CHECK_EQ_INT(kv.create_revision, 2);
    CHECK_EQ_INT(kv.mod_revision, 3);
    CHECK_EQ_INT(kv.version, 2);
    /* history kept */
    CHECK_EQ_STR(t_val(s, "a", 2), "1");
    CHECK_EQ_STR(t_val(s, "a", 1), "<none>");
    CHECK_EQ_STR(t_val(s, "b", 3), "<none>");
    /* delete writes a tombstone; a later put starts a new generation */
    int64_t deleted = 0;
    CHECK_EQ_INT(t_del(s, "a", NULL, &deleted), 5);
    CHECK_EQ_INT(deleted, 1);
    CHECK_EQ_STR(t_val(s, "a", 0), "<none>");
    CHECK_EQ_STR(t_val(s, "a", 4), "2");
    /* deleting a missing key changes nothing */
    CHECK_EQ_INT(t_del(s, "a", NULL, &deleted), 5);
    CHECK_EQ_INT(deleted, 0);
    CHECK_EQ_INT(mvcc_current_rev(s), 5);
    CHECK_EQ_INT(t_put(s, "a", "3"), 6);
    CHECK_EQ_INT(t_get(s, "a", 0, &found, &kv), MVCC_OK);
    CHECK_EQ_INT(kv.create_revision, 6);
    CHECK_EQ_INT(kv.version, 1);
    /* future revision */
    CHECK_EQ_INT(t_get(s, "a", 7, &found, &kv), MVCC_ERR_FUTURE_REV);
    CHECK_EQ_STR(mvcc_err_text(MVCC_ERR_FUTURE_REV),
                 "etcdserver: mvcc: required revision is a future revision");
    CHECK_EQ_INT(mvcc_err_code(MVCC_ERR_FUTURE_REV), MVCC_GRPC_OUT_OF_RANGE);
    /* empty key */
    CHECK_EQ_INT(t_get(s, "", 0, &found, &kv), MVCC_ERR_KEY_NOT_GIVEN);
    CHECK_EQ_STR(mvcc_err_text(MVCC_ERR_KEY_NOT_GIVEN), "etcdserver: key is not provided");
    mvcc_check_invariants(s);
    mvcc_close(s);
}

static void test_put_options(void)
{
    struct mvcc_store *s = mvcc_open(NULL);
    t_put(s, "k", "v1");
    struct mvcc_put_req r = {0};
    struct mvcc_put_result out;
    r.key = (const uint8_t *)"k";
    r.key_len = 1;
    r.value = (const uint8_t *)"v2";
    r.value_len = 2;
    r.prev_kv = true;
    CHECK_EQ_INT(mvcc_put(s, &r, &out), MVCC_OK);
    CHECK(out.has_prev && kv_is(&out.prev_kv, "k", "v1"));
    CHECK_EQ_INT(out.prev_kv.mod_revision, 2);
    CHECK_EQ_INT(out.header_rev, 3);
    /* ignore_value keeps v2 */
    r.ignore_value = true;
    r.value = (const uint8_t *)"zz";
    CHECK_EQ_INT(mvcc_put(s, &r, &out), MVCC_OK);
    CHECK_EQ_STR(t_val(s, "k", 0), "v2");
    /* ignore_value on a missing key */
    r.key = (const uint8_t *)"nope";
    r.key_len = 4;
    CHECK_EQ_INT(mvcc_put(s, &r, &out), MVCC_ERR_KEY_NOT_FOUND);
    CHECK_EQ_STR(mvcc_err_text(MVCC_ERR_KEY_NOT_FOUND), "etcdserver: key not found");
    /* lease not found: nothing written */
    enum mvcc_err e;
    t_put_lease(s, "q", "v", 77, &e);
    CHECK_EQ_INT(e, MVCC_ERR_LEASE_NOT_FOUND);
    CHECK_EQ_STR(mvcc_err_text(e), "etcdserver: requested lease not found");
    CHECK_EQ_INT(mvcc_err_code(e), MVCC_GRPC_NOT_FOUND);
    CHECK_EQ_INT(mvcc_current_rev(s), 4);
    /* binary keys and values, empty value */
    struct mvcc_put_req b = {0};
    uint8_t key[3] = {0, 0xff, 1};
    b.key = key;
    b.key_len = 3;
    CHECK_EQ_INT(mvcc_put(s, &b, &out), MVCC_OK);
    struct mvcc_range_req rr = {0};
    struct mvcc_range_result res;
    rr.key = key;
    rr.key_len = 3;
    CHECK_EQ_INT(mvcc_range(s, &rr, &res), MVCC_OK);
    CHECK_EQ_INT(res.kvs_len, 1);
    CHECK_EQ_INT(res.kvs[0].value_len, 0);
    mvcc_range_result_free(&res);
    mvcc_check_invariants(s);
    mvcc_close(s);
}

static struct mvcc_range_result range(struct mvcc_store *s, const char *k, const char *end,
                                      int64_t rev, int64_t limit, bool count_only, bool keys_only)
{
    struct mvcc_range_req r = {0};
    struct mvcc_range_result out;
    T_KEY_RANGE(r, k, end);
    r.revision = rev;
    r.limit = limit;
    r.count_only = count_only;
    r.keys_only = keys_only;
    CHECK_EQ_INT(mvcc_range(s, &r, &out), MVCC_OK);
    return out;
}

static void test_ranges(void)
{
    struct mvcc_store *s = mvcc_open(NULL);
    const char *keys[] = {"foo/c", "bar", "foo/a", "foo", "foo/b", "fop", "zzz"};
    for (size_t i = 0; i < FL_ARRAY_LEN(keys); i++)
        t_put(s, keys[i], keys[i]);
    /* prefix foo/ = [foo/, foo0) */
    struct mvcc_range_result r = range(s, "foo/", "foo0", 0, 0, false, false);
    CHECK_EQ_INT(r.count, 3);
    CHECK_EQ_INT(r.kvs_len, 3);
    CHECK(kv_is(&r.kvs[0], "foo/a", "foo/a") && kv_is(&r.kvs[2], "foo/c", "foo/c"));
    CHECK_EQ_INT(r.header_rev, 8);
    CHECK(!r.more);
    mvcc_range_result_free(&r);
    /* limit */
    r = range(s, "foo/", "foo0", 0, 2, false, false);
    CHECK_EQ_INT(r.count, 3);
    CHECK_EQ_INT(r.kvs_len, 2);
    CHECK(r.more);
    mvcc_range_result_free(&r);
    /* "\0" = every key >= key */
    r = range(s, "foo", "", 0, 0, false, false);
    CHECK_EQ_INT(r.count, 6);
    CHECK(kv_is(&r.kvs[0], "foo", NULL) && kv_is(&r.kvs[5], "zzz", NULL));
    mvcc_range_result_free(&r);
    /* all keys: key "\0", end "\0" */
    struct mvcc_range_req all = {0};
    struct mvcc_range_result out;
    all.key = (const uint8_t *)"\0";
    all.key_len = 1;
    all.range_end = (const uint8_t *)"\0";
    all.range_end_len = 1;
    CHECK_EQ_INT(mvcc_range(s, &all, &out), MVCC_OK);
    CHECK_EQ_INT(out.count, 7);
    CHECK(kv_is(&out.kvs[0], "bar", NULL));
    mvcc_range_result_free(&out);
    /* count only, keys only */
    r = range(s, "a", "z", 0, 0, true, false);
    CHECK_EQ_INT(r.count, 6);
    CHECK_EQ_INT(r.kvs_len, 0);
    mvcc_range_result_free(&r);
    r = range(s, "a", "z", 0, 0, false, true);
    CHECK_EQ_INT(r.kvs_len, 6);
    CHECK(r.kvs[0].value == NULL && r.kvs[0].value_len == 0 && r.kvs[0].mod_revision == 3);
    mvcc_range_result_free(&r);
    /* at a revision: only the first 3 puts exist at rev 4 */
    r = range(s, "a", "", 4, 0, false, false);
    CHECK_EQ_INT(r.count, 3);
    CHECK_EQ_INT(r.header_rev, 8);
    mvcc_range_result_free(&r);
    /* a deleted range disappears, history stays */
    int64_t n = 0;
    CHECK_EQ_INT(t_del(s, "foo/", "foo0", &n), 9);
    CHECK_EQ_INT(n, 3);
    r = range(s, "foo/", "foo0", 0, 0, false, false);
    CHECK_EQ_INT(r.count, 0);
    mvcc_range_result_free(&r);
    r = range(s, "foo/", "foo0", 8, 0, false, false);
    CHECK_EQ_INT(r.count, 3);
    mvcc_range_result_free(&r);
    /* delete everything with prev_kv */
    struct mvcc_delete_req d = {0};
    struct mvcc_delete_result dr;
    d.key = (const uint8_t *)"\0";
    d.key_len = 1;
    d.range_end = (const uint8_t *)"\0";
    d.range_end_len = 1;
    d.prev_kv = true;
    CHECK_EQ_INT(mvcc_delete(s, &d, &dr), MVCC_OK);
    CHECK_EQ_INT(dr.deleted, 4);
    CHECK_EQ_INT(dr.prev_kvs_len, 4);
    CHECK(kv_is(&dr.prev_kvs[0], "bar", "bar") && kv_is(&dr.prev_kvs[3], "zzz", "zzz"));
    CHECK_EQ_INT(dr.header_rev, 10);
    mvcc_delete_result_free(&dr);
    mvcc_check_invariants(s);
    mvcc_close(s);
}

/* ---------------------------------------------------------------- txn */

static struct mvcc_compare cmp_num(const char *k, enum mvcc_cmp_target t, enum mvcc_cmp_op op,
                                   int64_t n)
{
    struct mvcc_compare c = {0};
    c.key = (const uint8_t *)k;
    c.key_len = strlen(k);
    c.target = t;
    c.op = op;
    c.number = n;
    return c;
}

static struct mvcc_compare cmp_val(const char *k, enum mvcc_cmp_op op, const char *v)
{
    struct mvcc_compare c = cmp_num(k, MVCC_CMP_VALUE, op, 0);
    c.value = (const uint8_t *)v;
    c.value_len = strlen(v);
    return c;
}

static struct mvcc_op op_put(const char *k, const char *v)
{
    struct mvcc_op o = {0};
    o.kind = MVCC_OP_PUT;
    o.u.put.key = (const uint8_t *)k;
    o.u.put.key_len = strlen(k);
    o.u.put.value = (const uint8_t *)v;
    o.u.put.value_len = strlen(v);
    return o;
}

static struct mvcc_op op_get(const char *k)
{
    struct mvcc_op o = {0};
    o.kind = MVCC_OP_RANGE;
    o.u.range.key = (const uint8_t *)k;
    o.u.range.key_len = strlen(k);
    return o;
}

static struct mvcc_op op_del(const char *k, const char *end)
{
    struct mvcc_op o = {0};
    o.kind = MVCC_OP_DELETE;
    o.u.del.key = (const uint8_t *)k;
    o.u.del.key_len = strlen(k);
    if (end) {
        o.u.del.range_end = (const uint8_t *)end;
        o.u.del.range_end_len = strlen(end);
    }
    return o;
}

/* Runs a one-compare txn with then = put(k2, "then"), else = put(k2, "else");
 * returns whether the success branch ran. */
static bool txn_one(struct mvcc_store *s, struct mvcc_compare c)
{
    struct mvcc_op then = op_put("out", "then"), els = op_put("out", "else");
    struct mvcc_txn_req t = {&c, 1, &then, 1, &els, 1};
    struct mvcc_txn_result r;
    CHECK_EQ_INT(mvcc_txn(s, &t, &r), MVCC_OK);
    bool ok = r.succeeded;
    CHECK_EQ_STR(t_val(s, "out", 0), ok ? "then" : "else");
    mvcc_txn_result_free(&r);
    return ok;
}

static void test_txn_compares(void)
{
    struct mvcc_store *s = mvcc_open(NULL);
    t_put(s, "k", "b"); /* rev 2 */
    t_put(s, "k", "c"); /* rev 3: create 2, mod 3, version 2 */
    /* value */
    CHECK(txn_one(s, cmp_val("k", MVCC_CMP_EQUAL, "c")));
    CHECK(!txn_one(s, cmp_val("k", MVCC_CMP_EQUAL, "b")));
    CHECK(txn_one(s, cmp_val("k", MVCC_CMP_NOT_EQUAL, "b")));
    CHECK(txn_one(s, cmp_val("k", MVCC_CMP_GREATER, "b")));
    CHECK(!txn_one(s, cmp_val("k", MVCC_CMP_GREATER, "c")));
    CHECK(txn_one(s, cmp_val("k", MVCC_CMP_LESS, "ca")));
    CHECK(!txn_one(s, cmp_val("missing", MVCC_CMP_NOT_EQUAL, "x"))); /* missing: false */
    /* version */
    CHECK(txn_one(s, cmp_num("k", MVCC_CMP_VERSION, MVCC_CMP_EQUAL, 2)));
    CHECK(txn_one(s, cmp_num("k", MVCC_CMP_VERSION, MVCC_CMP_GREATER, 1)));
    CHECK(!txn_one(s, cmp_num("k", MVCC_CMP_VERSION, MVCC_CMP_LESS, 2)));
    CHECK(txn_one(s, cmp_num("missing", MVCC_CMP_VERSION, MVCC_CMP_EQUAL, 0)));
    /* create */
    CHECK(txn_one(s, cmp_num("k", MVCC_CMP_CREATE, MVCC_CMP_EQUAL, 2)));
    CHECK(txn_one(s, cmp_num("k", MVCC_CMP_CREATE, MVCC_CMP_NOT_EQUAL, 3)));
    CHECK(txn_one(s, cmp_num("missing", MVCC_CMP_CREATE, MVCC_CMP_EQUAL, 0)));
    /* mod */
    CHECK(txn_one(s, cmp_num("k", MVCC_CMP_MOD, MVCC_CMP_EQUAL, 3)));
    CHECK(txn_one(s, cmp_num("k", MVCC_CMP_MOD, MVCC_CMP_LESS, 4)));
    CHECK(!txn_one(s, cmp_num("k", MVCC_CMP_MOD, MVCC_CMP_GREATER, 3)));
    /* lease */
    CHECK(txn_one(s, cmp_num("k", MVCC_CMP_LEASE, MVCC_CMP_EQUAL, 0)));
    CHECK_EQ_INT(mvcc_lease_grant(s, 5, 60, 0, NULL), MVCC_OK);
    enum mvcc_err e;
    t_put_lease(s, "l", "v", 5, &e);
    CHECK_EQ_INT(e, MVCC_OK);
    CHECK(txn_one(s, cmp_num("l", MVCC_CMP_LEASE, MVCC_CMP_EQUAL, 5)));
    CHECK(!txn_one(s, cmp_num("l", MVCC_CMP_LEASE, MVCC_CMP_NOT_EQUAL, 5)));
    /* a compare over a range: every key must hold */
    struct mvcc_compare rc = cmp_num("k", MVCC_CMP_VERSION, MVCC_CMP_GREATER, 0);
    rc.range_end = (const uint8_t *)"m";
    rc.range_end_len = 1;
    CHECK(txn_one(s, rc));
    rc.number = 1; /* "l" has version 1 */
    CHECK(!txn_one(s, rc));
    /* several compares: all must hold */
    struct mvcc_compare two[2] = {cmp_val("k", MVCC_CMP_EQUAL, "c"),
                                  cmp_num("k", MVCC_CMP_VERSION, MVCC_CMP_EQUAL, 9)};
    struct mvcc_op p = op_put("x", "1");
    struct mvcc_txn_req t = {two, 2, &p, 1, NULL, 0};
    struct mvcc_txn_result r;
    int64_t before = mvcc_current_rev(s);
    CHECK_EQ_INT(mvcc_txn(s, &t, &r), MVCC_OK);
    CHECK(!r.succeeded);
    /* an empty else branch writes nothing: no new revision */
    CHECK_EQ_INT(r.header_rev, before);
    CHECK_EQ_INT(mvcc_current_rev(s), before);
    mvcc_txn_result_free(&r);
    mvcc_check_invariants(s);
    mvcc_close(s);
}

static void test_txn_ops(void)
{
    struct mvcc_store *s = mvcc_open(NULL);
    t_put(s, "a", "1");
    t_put(s, "b", "2");
    /* one txn = one revision with sub-revisions; reads see earlier writes */
    struct mvcc_op ops[4] = {op_put("c", "3"), op_get("c"), op_del("a", NULL), op_get("b")};
    struct mvcc_txn_req t = {NULL, 0, ops, 4, NULL, 0};
    struct mvcc_txn_result r;
    CHECK_EQ_INT(mvcc_txn(s, &t, &r), MVCC_OK);
    CHECK(r.succeeded);
    CHECK_EQ_INT(r.header_rev, 4);
    CHECK_EQ_INT(r.results_len, 4);
    CHECK_EQ_INT(r.results[1].u.range.kvs_len, 1);
    CHECK(kv_is(&r.results[1].u.range.kvs[0], "c", "3"));
    CHECK_EQ_INT(r.results[1].u.range.kvs[0].mod_revision, 4);
    CHECK_EQ_INT(r.results[2].u.del.deleted, 1);
    CHECK_EQ_INT(r.results[0].u.put.header_rev, 4);
    mvcc_txn_result_free(&r);
    CHECK_EQ_INT(mvcc_current_rev(s), 4);
    CHECK_EQ_STR(t_val(s, "a", 0), "<none>");
    CHECK_EQ_STR(t_val(s, "c", 0), "3");
    /* a read-only txn keeps the revision */
    struct mvcc_op ro = op_get("c");
    struct mvcc_txn_req t2 = {NULL, 0, &ro, 1, NULL, 0};
    CHECK_EQ_INT(mvcc_txn(s, &t2, &r), MVCC_OK);
    CHECK_EQ_INT(r.header_rev, 4);
    mvcc_txn_result_free(&r);
    /* duplicate keys in one branch */
    struct mvcc_op dup[2] = {op_put("x", "1"), op_put("x", "2")};
    struct mvcc_txn_req t3 = {NULL, 0, dup, 2, NULL, 0};
    CHECK_EQ_INT(mvcc_txn(s, &t3, &r), MVCC_ERR_DUPLICATE_KEY);
    CHECK_EQ_STR(mvcc_err_text(MVCC_ERR_DUPLICATE_KEY),
                 "etcdserver: duplicate key given in txn request");
    CHECK_EQ_INT(mvcc_err_code(MVCC_ERR_DUPLICATE_KEY), MVCC_GRPC_INVALID_ARGUMENT);
    /* put inside a deleted range of the same branch */
    struct mvcc_op pd[2] = {op_del("a", "z"), op_put("m", "1")};
    struct mvcc_txn_req t4 = {NULL, 0, pd, 2, NULL, 0};
    CHECK_EQ_INT(mvcc_txn(s, &t4, &r), MVCC_ERR_DUPLICATE_KEY);
    /* the same key in then and else is fine */
    struct mvcc_op th = op_put("x", "then"), el = op_put("x", "else");
    struct mvcc_txn_req t5 = {NULL, 0, &th, 1, &el, 1};
    CHECK_EQ_INT(mvcc_txn(s, &t5, &r), MVCC_OK);
    mvcc_txn_result_free(&r);
    CHECK_EQ_INT(mvcc_current_rev(s), 5);
    /* nested txn: its put collides with the parent's put */
    struct mvcc_op inner = op_put("y", "in");
    struct mvcc_txn_req nested = {NULL, 0, &inner, 1, NULL, 0};
    struct mvcc_op outer[2] = {op_put("y", "out"), {.kind = MVCC_OP_TXN, .u.txn = &nested}};
    struct mvcc_txn_req t6 = {NULL, 0, outer, 2, NULL, 0};
    CHECK_EQ_INT(mvcc_txn(s, &t6, &r), MVCC_ERR_DUPLICATE_KEY);
    /* nested txn without collision; its compare is evaluated before the txn writes */
    struct mvcc_compare nc = cmp_num("z", MVCC_CMP_VERSION, MVCC_CMP_EQUAL, 0);
    struct mvcc_op nin = op_put("w", "nested"), nel = op_put("w", "nested-else");
    struct mvcc_txn_req nested2 = {&nc, 1, &nin, 1, &nel, 1};
    struct mvcc_op outer2[2] = {op_put("z", "1"), {.kind = MVCC_OP_TXN, .u.txn = &nested2}};
    struct mvcc_txn_req t7 = {NULL, 0, outer2, 2, NULL, 0};
    CHECK_EQ_INT(mvcc_txn(s, &t7, &r), MVCC_OK);
    CHECK_EQ_INT(r.results_len, 2);
    CHECK(r.results[1].u.txn->succeeded);
    mvcc_txn_result_free(&r);
    CHECK_EQ_STR(t_val(s, "w", 0), "nested");
    CHECK_EQ_INT(mvcc_current_rev(s), 6);
    /* a failing op (missing lease) leaves no trace */
    struct mvcc_op lp[2] = {op_put("p", "1"), op_put("q", "2")};
    lp[1].u.put.lease = 999;
    struct mvcc_txn_req t8 = {NULL, 0, lp, 2, NULL, 0};
    CHECK_EQ_INT(mvcc_txn(s, &t8, &r), MVCC_ERR_LEASE_NOT_FOUND);
    CHECK_EQ_STR(t_val(s, "p", 0), "<none>");
    CHECK_EQ_INT(mvcc_current_rev(s), 6);
    /* a read at a future revision inside a txn */
    struct mvcc_op fr[2] = {op_put("p", "1"), op_get("p")};
    fr[1].u.range.revision = 100;
    struct mvcc_txn_req t9 = {NULL, 0, fr, 2, NULL, 0};
    CHECK_EQ_INT(mvcc_txn(s, &t9, &r), MVCC_ERR_FUTURE_REV);
    CHECK_EQ_INT(mvcc_current_rev(s), 6);
    /* too many ops */
    struct mvcc_config cfg;
    mvcc_config_default(&cfg);
    cfg.max_txn_ops = 1;
    struct mvcc_store *s2 = mvcc_open(&cfg);
    struct mvcc_op two[2] = {op_put("a", "1"), op_put("b", "1")};
    struct mvcc_txn_req t10 = {NULL, 0, two, 2, NULL, 0};
    CHECK_EQ_INT(mvcc_txn(s2, &t10, &r), MVCC_ERR_TOO_MANY_OPS);
    CHECK_EQ_STR(mvcc_err_text(MVCC_ERR_TOO_MANY_OPS),
                 "etcdserver: too many operations in txn request");
    mvcc_close(s2);
    mvcc_check_invariants(s);
    mvcc_close(s);
}

static void test_sort(void)
{
    struct mvcc_store *s = mvcc_open(NULL);
    t_put(s, "a", "3"); /* 2 */
    t_put(s, "b", "1"); /* 3 */
    t_put(s, "c", "2"); /* 4 */
    t_put(s, "b", "9"); /* 5: b version 2 */
    struct mvcc_range_req r = {0};
    struct mvcc_range_result out;
    r.key = (const uint8_t *)"a";
    r.key_len = 1;
    r.range_end = (const uint8_t *)"z";
    r.range_end_len = 1;
    r.sort_order = MVCC_SORT_DESCEND;
    r.limit = 2;
    CHECK_EQ_INT(mvcc_range(s, &r, &out), MVCC_OK);
    CHECK_EQ_INT(out.kvs_len, 2);
    CHECK(kv_is(&out.kvs[0], "c", "2") && kv_is(&out.kvs[1], "b", "9"));
    CHECK(out.more && out.count == 3);
    mvcc_range_result_free(&out);
    r.sort_order = MVCC_SORT_ASCEND;
    r.sort_target = MVCC_SORT_VALUE;
    r.limit = 0;
    CHECK_EQ_INT(mvcc_range(s, &r, &out), MVCC_OK);
    CHECK(kv_is(&out.kvs[0], "c", "2") && kv_is(&out.kvs[1], "a", "3") &&
          kv_is(&out.kvs[2], "b", "9"));
    mvcc_range_result_free(&out);
    r.sort_target = MVCC_SORT_MOD;
    r.sort_order = MVCC_SORT_DESCEND;
    r.limit = 1;
    CHECK_EQ_INT(mvcc_range(s, &r, &out), MVCC_OK);
    CHECK(out.kvs_len == 1 && kv_is(&out.kvs[0], "b", "9"));
    mvcc_range_result_free(&out);
    r.sort_target = MVCC_SORT_VERSION;
    r.sort_order = MVCC_SORT_ASCEND;
    r.limit = 0;
    CHECK_EQ_INT(mvcc_range(s, &r, &out), MVCC_OK);
    CHECK(kv_is(&out.kvs[0], "a", NULL) && kv_is(&out.kvs[1], "c", NULL) &&
          kv_is(&out.kvs[2], "b", NULL)); /* version 1, 1 (ties by key), 2 */
    mvcc_range_result_free(&out);
    r.sort_target = MVCC_SORT_CREATE;
    r.sort_order = MVCC_SORT_DESCEND;
    CHECK_EQ_INT(mvcc_range(s, &r, &out), MVCC_OK);
    CHECK(kv_is(&out.kvs[0], "c", NULL) && kv_is(&out.kvs[2], "a", NULL));
    mvcc_range_result_free(&out);
    r.sort_target = (enum mvcc_sort_target)42;
    CHECK_EQ_INT(mvcc_range(s, &r, &out), MVCC_ERR_INVALID);
    mvcc_close(s);
}

int main(void)
{
    FL_TEST(test_sort);
    FL_TEST(test_revisions);
    FL_TEST(test_put_options);
    FL_TEST(test_ranges);
    FL_TEST(test_txn_compares);
    FL_TEST(test_txn_ops);
    return fl_test_end();
}
