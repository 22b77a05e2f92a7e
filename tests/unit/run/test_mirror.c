/*
 * test_mirror.c: the history the run keeps in memory for the checkers (run_mirror.c)
 * is the one the database holds. Every run here sets verify_history, so at the end
 * the run loads the database too and a difference aborts (the test then fails); the
 * runs cover the bench workload (8 clients, 1,000 keys, 100-byte values, paced and
 * saturated), watches, every nemesis kind, leases, compactions, txns with every
 * compare target the loader accepts, and a key with a NUL byte, whose JSON the loader
 * refuses: the run must report that refusal exactly as before (the mirror steps
 * aside). The verdicts are compared with `faultline check`'s reading of the same
 * database (hist_load_db_path + chk_check).
 */
#include "harness/history/load.h"
#include "harness/run/run.h"
#include "nodes/client/client.h"

#include "fl_test.h"
#include "fl_tmpdir.h"
#include "run_fixture.h"

#include <stdlib.h>
#include <unistd.h>

static char dir[] = "/tmp/fl-test-mirror-XXXXXX";
static int db_no;

static struct run_world *open_world(uint64_t seed, char *db, size_t n)
{
    snprintf(db, n, "%s/m%d.db", dir, ++db_no);
    struct run_options o = {
        .scenario = "test_mirror.c", .seed = seed, .db_path = db, .verify_history = true};
    return fx_open(&o);
}

static void setup(struct run_world *rw, int clients, int rate, int keys, int value_size,
                  int watchers)
{
    struct fx_config x;
    fx_config_default(&x);
    x.k.count = clients;
    x.w.rate = rate;
    x.w.keys = keys;
    x.w.value_size = value_size;
    x.w.watchers = watchers;
    fx_setup(rw, &x, RUN_CHECK_LINEARIZABILITY | RUN_CHECK_WATCH);
}

static const char *verdict(json_t *summary, const char *check)
{
    return json_string_value(
        json_object_get(json_object_get(json_object_get(summary, "checks"), check), "verdict"));
}

/* Finishes the run; its verdicts must be what a fresh load of the database gives. */
static json_t *finish(struct run_world *rw, const char *db, const char *want_lin)
{
    struct run_result res;
    CHECK_EQ_INT(run_world_finish(rw, NULL, &res), FL_OK);
    json_t *s = json_incref(res.summary);
    int64_t run_id = res.run_id;
    run_result_close(&res);
    run_world_close(rw);
    const char *lin = verdict(s, "linearizability");
    CHECK(lin && !strcmp(lin, want_lin));
    if (lin && strcmp(lin, want_lin))
        fprintf(stderr, "linearizability %s, want %s: %s\n", lin, want_lin,
                json_dumps(json_object_get(s, "checks"), JSON_COMPACT));
    struct chk_history h;
    struct fl_buf err;
    chk_history_init(&h);
    fl_buf_init(&err);
    int rc = hist_load_db_path(db, run_id, &h, NULL, &err);
    if (rc == FL_OK) {
        struct chk_result r;
        CHECK_EQ_INT(chk_check(&h, NULL, &r), FL_OK);
        CHECK_EQ_STR(chk_verdict_name(r.lin.verdict), lin ? lin : "");
        const char *wv = verdict(s, "watch");
        CHECK_EQ_STR(chk_verdict_name(r.watch.verdict), wv ? wv : "");
        chk_result_close(&r);
    } else {
        CHECK_EQ_STR(lin ? lin : "", "unknown"); /* the run could not load it either */
    }
    chk_history_close(&h);
    fl_buf_close(&err);
    return s;
}

static void test_bench_paced(void)
{
    char db[256];
    struct run_world *rw = open_world(1, db, sizeof db);
    if (!rw)
        return;
    setup(rw, 8, 100, 1000, 100, 2);
    run_advance(rw, 20 * FL_S);
    json_decref(finish(rw, db, "pass"));
}

static void test_bench_saturated(void)
{
    char db[256];
    struct run_world *rw = open_world(2, db, sizeof db);
    if (!rw)
        return;
    setup(rw, 8, -1, 1000, 100, 0);
    run_advance(rw, 3 * FL_S);
    json_decref(finish(rw, db, "pass"));
}

static void test_nemesis(void)
{
    for (uint64_t seed = 3; seed <= 4; seed++) {
        char db[256];
        struct run_world *rw = open_world(seed, db, sizeof db);
        if (!rw)
            return;
        setup(rw, 4, 150, 8, 16, 2);
        CHECK_EQ_INT(run_nemesis(rw, RUN_NEMESIS_ALL, 2 * FL_S, 0), FL_OK);
        run_advance(rw, 25 * FL_S);
        run_heal_all(rw);
        run_advance(rw, 30 * FL_S);
        json_decref(finish(rw, db, "pass"));
    }
}

struct waiter {
    bool done;
    int64_t lease_id;
};

static void on_done(void *ud, const struct kvc_result *r)
{
    struct waiter *w = ud;
    w->done = true;
    w->lease_id = r->lease_id;
}

static void call(struct run_world *rw, const struct kvc_request *req)
{
    struct waiter w = {0};
    kvc_call(run_client(rw, 1), req, NULL, on_done, &w);
    for (int i = 0; i < 200 && !w.done; i++)
        run_advance(rw, run_now_ns(rw) + 50 * FL_MS);
    CHECK(w.done);
}

/* Calls the fast path does not take: leases, a leased put, a compaction, member list,
 * txns with value/version/create compares and prev_kv, a delete of a range. */
static void test_other_calls(void)
{
    char db[256];
    struct run_world *rw = open_world(5, db, sizeof db);
    if (!rw)
        return;
    setup(rw, 2, 40, 4, 16, 1);
    run_advance(rw, 3 * FL_S);
    struct waiter w = {0};
    struct kvc_request g = {.method = KVC_LEASE_GRANT, .ttl_s = 5};
    kvc_call(run_client(rw, 1), &g, NULL, on_done, &w);
    for (int i = 0; i < 100 && !w.done; i++)
        run_advance(rw, run_now_ns(rw) + 50 * FL_MS);
    CHECK(w.done && w.lease_id != 0);
    struct kvc_bytes k = {(const uint8_t *)"leased", 6}, v = {(const uint8_t *)"v\xff", 2};
    struct kvc_request p = {
        .method = KVC_PUT,
        .op = {.kind = KVC_OP_PUT, .key = k, .value = v, .lease = w.lease_id, .prev_kv = true}};
    call(rw, &p);
    struct kvc_compare cmps[3] = {
        {.target = KVC_CMP_VALUE, .result = KVC_CMP_EQUAL, .key = k, .value = v},
        {.target = KVC_CMP_VERSION, .result = KVC_CMP_GREATER, .key = k, .number = 0},
        {.target = KVC_CMP_CREATE, .result = KVC_CMP_NOT_EQUAL, .key = k, .number = 1}};
    struct kvc_op then_ops[2] = {
        {.kind = KVC_OP_PUT, .key = {(const uint8_t *)"key1", 4}, .value = v, .prev_kv = true},
        {.kind = KVC_OP_DELETE, .key = {(const uint8_t *)"key2", 4}, .prev_kv = true}};
    struct kvc_op else_ops[1] = {{.kind = KVC_OP_RANGE,
                                  .key = {(const uint8_t *)"key", 3},
                                  .range_end = {(const uint8_t *)"kez", 3},
                                  .limit = 2}};
    struct kvc_request t = {.method = KVC_TXN,
                            .cmps = cmps,
                            .cmp_count = 3,
                            .then_ops = then_ops,
                            .then_count = 2,
                            .else_ops = else_ops,
                            .else_count = 1};
    call(rw, &t);
    struct kvc_request d = {.method = KVC_DELETE,
                            .op = {.kind = KVC_OP_DELETE,
                                   .key = {(const uint8_t *)"key0", 4},
                                   .range_end = {(const uint8_t *)"key3", 4},
                                   .prev_kv = true}};
    call(rw, &d);
    struct kvc_request ttl = {.method = KVC_LEASE_TTL, .lease_id = w.lease_id};
    call(rw, &ttl);
    struct waiter w2 = {0};
    kvc_call(run_client(rw, 1), &g, NULL, on_done, &w2);
    for (int i = 0; i < 100 && !w2.done; i++)
        run_advance(rw, run_now_ns(rw) + 50 * FL_MS);
    struct kvc_request p2 = {.method = KVC_PUT,
                             .op = {.kind = KVC_OP_PUT,
                                    .key = {(const uint8_t *)"key3", 4},
                                    .value = v,
                                    .lease = w2.lease_id}};
    call(rw, &p2);
    struct kvc_request rv = {.method = KVC_LEASE_REVOKE, .lease_id = w2.lease_id};
    call(rw, &rv);
    struct kvc_request ml = {.method = KVC_MEMBER_LIST};
    call(rw, &ml);
    struct kvc_request c = {.method = KVC_COMPACT, .revision = 3};
    call(rw, &c);
    run_advance(rw, run_now_ns(rw) + 10 * FL_S); /* the lease expires */
    json_decref(finish(rw, db, "pass"));
}

/* A NUL byte in a key becomes \u0000 in the row's JSON: keys are bytes, so it must
 * load (JSON_ALLOW_NUL) and be judged like any other key, never end 'unknown' (issue 12
 * item 9; this test expected 'unknown' before). */
static void test_nul_key(void)
{
    char db[256];
    struct run_world *rw = open_world(6, db, sizeof db);
    if (!rw)
        return;
    setup(rw, 2, 20, 4, 16, 0);
    run_advance(rw, 2 * FL_S);
    struct kvc_request p = {.method = KVC_PUT,
                            .op = {.kind = KVC_OP_PUT,
                                   .key = {(const uint8_t *)"n\0l", 3},
                                   .value = {(const uint8_t *)"v\0w", 3}}};
    call(rw, &p);
    struct kvc_request g = {.method = KVC_RANGE,
                            .op = {.kind = KVC_OP_RANGE, .key = {(const uint8_t *)"n\0l", 3}}};
    call(rw, &g);
    run_advance(rw, run_now_ns(rw) + FL_S);
    json_t *s = finish(rw, db, "pass");
    json_decref(s);
}

int main(void)
{
    static const struct fl_case cases[] = {FL_CASE(test_bench_paced), FL_CASE(test_bench_saturated),
                                           FL_CASE(test_nemesis), FL_CASE(test_other_calls),
                                           FL_CASE(test_nul_key)};
    return fl_test_main_in(dir, cases, FL_NCASES(cases));
}
