/*
 * test_errors.c: the etcd error table (nodes/proto/errors.h) against the texts and
 * codes of etcd-facts §B.5, written out here independently; the clientv3 retry
 * classifier over every text for each retry policy; the round-robin quorum
 * backoff; and the stall/availability/failover/watch-lag arithmetic of the
 * client's statistics, driven on a simulated clock with no server.
 */
#include "fl_test.h"

#include "nodes/client/client_int.h"
#include "harness/sim/sim.h"

struct expect {
    const char *text;
    int code;
};

/* etcd-facts §B.5, plus the client-side texts of gRPC/clientv3. */
static const struct expect facts[] = {
    {"etcdserver: request timed out", 14},
    {"etcdserver: request timed out, possibly due to previous leader failure", 14},
    {"etcdserver: request timed out, possibly due to connection lost", 14},
    {"etcdserver: request timed out, waiting for the applied index took too long", 14},
    {"etcdserver: leader changed", 14},
    {"etcdserver: no leader", 14},
    {"etcdserver: not leader", 9},
    {"etcdserver: server stopped", 14},
    {"etcdserver: unhealthy cluster", 14},
    {"etcdserver: corrupt cluster", 15},
    {"etcdserver: mvcc: required revision has been compacted", 11},
    {"etcdserver: mvcc: required revision is a future revision", 11},
    {"etcdserver: mvcc: database space exceeded", 8},
    {"etcdserver: too many requests", 8},
    {"etcdserver: request is too large", 3},
    {"etcdserver: key is not provided", 3},
    {"etcdserver: too many operations in txn request", 3},
    {"etcdserver: duplicate key given in txn request", 3},
    {"etcdserver: requested lease not found", 5},
    {"etcdserver: lease already exists", 9},
    {"etcdserver: too large lease TTL", 11},
    {"etcdserver: member ID already exist", 9},
    {"etcdserver: Peer URLs already exists", 9},
    {"etcdserver: member not found", 5},
    {"etcdserver: re-configuration failed due to not enough started members", 9},
    {"etcdserver: can only promote a learner member", 9},
    {"etcdserver: can only promote a learner member which is in sync with leader", 9},
    {"etcdserver: too many learner members in cluster", 9},
    {"etcdserver: rpc not supported for learner", 9},
    {"etcdserver: bad leader transferee", 9},
    {"etcdserver: watch canceled", 1},
    {"etcdserver: request canceled", 1},
    {"etcdserver: context deadline exceeded", 4},
    {"etcdserver: not capable", 9},
    {"etcdserver: cluster ID mismatch", 9},
    {"etcdserver: request timed out, leader transfer took too long", 2},
    {"there is no address available", 14},
    {"there is no connection available", 14},
    {"context deadline exceeded", 4},
    {"context canceled", 1},
    {"transport is closing", 14},
};

static void test_table(void)
{
    for (size_t i = 0; i < FL_ARRAY_LEN(facts); i++) {
        enum rpc_err_id id = rpc_err_find(facts[i].text);
        CHECK(id < RPC_ERR_COUNT);
        if (id >= RPC_ERR_COUNT) {
            fprintf(stderr, "missing: %s\n", facts[i].text);
            continue;
        }
        CHECK_EQ_STR(rpc_err_text(id), facts[i].text);
        CHECK_EQ_INT(rpc_err_code(id), facts[i].code);
    }
    /* Every row: ids in order, texts unique, find() round-trips. */
    for (int i = 0; i < RPC_ERR_COUNT; i++) {
        CHECK_EQ_INT(rpc_err_get((enum rpc_err_id)i)->id, i);
        CHECK_EQ_INT(rpc_err_find(rpc_err_table[i].text), i);
    }
    CHECK_EQ_INT(rpc_err_find(NULL), RPC_ERR_NONE);
    CHECK_EQ_INT(rpc_err_find("etcdserver: no such thing"), RPC_ERR_COUNT);
    CHECK_EQ_STR(rpc_code_name(RPC_CODE_UNAVAILABLE), "Unavailable");
    CHECK_EQ_STR(rpc_code_name(RPC_CODE_OUT_OF_RANGE), "OutOfRange");
    CHECK_EQ_STR(rpc_code_name((enum rpc_code)99), "Unknown");
    CHECK(rpc_err_never_sent("there is no address available"));
    CHECK(rpc_err_never_sent("there is no connection available"));
    CHECK(!rpc_err_never_sent("transport is closing"));
    CHECK(!rpc_err_never_sent("etcdserver: request timed out"));
}

static void test_classifier(void)
{
    for (int i = 1; i < RPC_ERR_COUNT; i++) {
        const struct rpc_err_info *e = &rpc_err_table[i];
        bool learner = i == RPC_ERR_LEARNER_NOT_SUPPORTED;
        bool unavailable = e->code == RPC_CODE_UNAVAILABLE;
        /* repeatable: Unavailable, or the learner refusal with several endpoints */
        CHECK_EQ_INT(rpc_err_retry_safe(RPC_RETRY_REPEATABLE, e->code, e->text, 3),
                     unavailable || learner);
        CHECK_EQ_INT(rpc_err_retry_safe(RPC_RETRY_REPEATABLE, e->code, e->text, 1), unavailable);
        /* non-repeatable: only when the request never left the client */
        bool never = i == RPC_ERR_NO_ADDRESS || i == RPC_ERR_NO_CONNECTION;
        CHECK_EQ_INT(rpc_err_retry_safe(RPC_RETRY_NON_REPEATABLE, e->code, e->text, 1), never);
        CHECK_EQ_INT(rpc_err_retry_safe(RPC_RETRY_NON_REPEATABLE, e->code, e->text, 3),
                     never || learner);
        CHECK(!rpc_err_retry_safe(RPC_RETRY_STREAM, e->code, e->text, 3));
    }
    CHECK(!rpc_err_retry_safe(RPC_RETRY_REPEATABLE, RPC_CODE_OK, "", 3));
    CHECK(rpc_err_retry_safe(RPC_RETRY_REPEATABLE, RPC_CODE_UNAVAILABLE, NULL, 3));
    CHECK(!rpc_err_retry_safe(RPC_RETRY_NON_REPEATABLE, RPC_CODE_UNAVAILABLE, NULL, 3));
    /* Which calls are repeatable (clientv3 retry_interceptor). */
    CHECK_EQ_INT(rpc_method_retry_policy(KVC_RANGE), RPC_RETRY_REPEATABLE);
    CHECK_EQ_INT(rpc_method_retry_policy(KVC_LEASE_GRANT), RPC_RETRY_REPEATABLE);
    CHECK_EQ_INT(rpc_method_retry_policy(KVC_LEASE_REVOKE), RPC_RETRY_REPEATABLE);
    CHECK_EQ_INT(rpc_method_retry_policy(KVC_LEASE_TTL), RPC_RETRY_REPEATABLE);
    CHECK_EQ_INT(rpc_method_retry_policy(KVC_MEMBER_LIST), RPC_RETRY_REPEATABLE);
    CHECK_EQ_INT(rpc_method_retry_policy(KVC_STATUS), RPC_RETRY_REPEATABLE);
    CHECK_EQ_INT(rpc_method_retry_policy(KVC_ALARM), RPC_RETRY_REPEATABLE);
    CHECK_EQ_INT(rpc_method_retry_policy(KVC_HASH_KV), RPC_RETRY_REPEATABLE);
    CHECK_EQ_INT(rpc_method_retry_policy(KVC_MOVE_LEADER), RPC_RETRY_REPEATABLE);
    const int mutating[] = {KVC_PUT,        KVC_DELETE,        KVC_TXN,        KVC_COMPACT,
                            KVC_MEMBER_ADD, KVC_MEMBER_REMOVE, KVC_DEFRAGMENT, KVC_MEMBER_PROMOTE};
    for (size_t i = 0; i < FL_ARRAY_LEN(mutating); i++)
        CHECK_EQ_INT(rpc_method_retry_policy(mutating[i]), RPC_RETRY_NON_REPEATABLE);
    CHECK_EQ_INT(rpc_method_retry_policy(KVC_WATCH), RPC_RETRY_STREAM);
    CHECK_EQ_INT(rpc_method_retry_policy(KVC_LEASE_KEEPALIVE), RPC_RETRY_STREAM);
    CHECK_EQ_INT(rpc_method_retry_policy(999), RPC_RETRY_NON_REPEATABLE);
}

static void test_backoff(void)
{
    /* 3 endpoints: quorum 2, so attempts 2, 4, 6 wait 25 ms +-10%. */
    for (int a = 0; a <= 8; a++) {
        for (uint64_t draw = 0; draw < 200; draw += 7) {
            int64_t w = kvc_backoff_ns(a, 3, 25, 10, draw * 0x9e3779b97f4a7c15ULL);
            if (a > 0 && a % 2 == 0)
                CHECK(w >= 22500 * FL_US && w <= 27500 * FL_US);
            else
                CHECK_EQ_INT(w, 0);
        }
    }
    /* 5 endpoints: quorum 3. */
    CHECK_EQ_INT(kvc_backoff_ns(2, 5, 25, 10, 0), 0);
    CHECK(kvc_backoff_ns(3, 5, 25, 10, 0) > 0);
    CHECK_EQ_INT(kvc_backoff_ns(4, 5, 25, 0, 0), 0);
    CHECK_EQ_INT(kvc_backoff_ns(6, 5, 25, 0, 0), 25 * FL_MS);
    /* 1 endpoint: quorum 1, every retry waits. */
    CHECK(kvc_backoff_ns(1, 1, 25, 10, 5) > 0);
    /* The jitter spans the whole range over draws. */
    int64_t lo = INT64_MAX, hi = 0;
    for (uint64_t d = 0; d < 5001; d++) {
        int64_t w = kvc_backoff_ns(2, 3, 25, 10, d * 1000);
        lo = FL_MIN(lo, w);
        hi = FL_MAX(hi, w);
    }
    CHECK_EQ_INT(lo, 22500 * FL_US);
    CHECK_EQ_INT(hi, 27500 * FL_US);
}

static struct kvc_result res(enum kvc_status st, int64_t call_ns)
{
    struct kvc_result r;
    memset(&r, 0, sizeof(r));
    r.status = st;
    r.call_ns = call_ns;
    return r;
}

/* Statistics on a simulated clock: a client whose only endpoint refuses. */
static void test_stats(void)
{
    struct sim_world *w = sim_world_new(1);
    struct sim_proc_ops ops = {NULL, NULL};
    int dummy = sim_proc_add(w, "dummy", &ops, NULL);
    struct kvc_endpoint ep = {1, dummy};
    struct kvc_config cfg;
    kvc_config_default(&cfg);
    cfg.endpoints = &ep;
    cfg.endpoint_count = 1;
    cfg.id = 7;
    struct kvc_client *c;
    const char *err;
    CHECK_EQ_INT(kvc_client_new(w, &cfg, &c, &err), 0);
    /* Stall: start two ops, one succeeds after 150 ms, the other fails 300 ms later. */
    kvc_stats_op_start(c);
    sim_run_for(w, 100 * FL_MS);
    kvc_stats_op_start(c);
    sim_run_for(w, 50 * FL_MS);
    struct kvc_result r = res(KVC_OK, 0);
    kvc_stats_op_end(c, &r);
    sim_run_for(w, 300 * FL_MS);
    r = res(KVC_FAIL, 100 * FL_MS);
    kvc_stats_op_end(c, &r);
    /* Idle time does not count. */
    sim_run_for(w, 5 * FL_S);
    struct kvc_stats st;
    kvc_client_stats(c, &st);
    CHECK_EQ_INT(st.max_stall_ms, 300);
    CHECK_EQ_INT(st.ok, 1);
    CHECK_EQ_INT(st.fail, 1);
    CHECK(st.availability > 0.49 && st.availability < 0.51);
    CHECK_EQ_INT(st.id, 7);
    CHECK_EQ_STR(st.balancer, "round_robin");
    /* Failover: first success of an op called after the fault. */
    int64_t fault = sim_now_ns(w);
    kvc_client_note_fault(c, fault);
    kvc_stats_op_start(c);
    sim_run_for(w, 40 * FL_MS);
    r = res(KVC_OK, fault - 1); /* called before the fault: no evidence */
    kvc_stats_op_end(c, &r);
    kvc_stats_op_start(c);
    sim_run_for(w, 60 * FL_MS);
    r = res(KVC_UNKNOWN, fault + 1);
    kvc_stats_op_end(c, &r);
    kvc_stats_op_start(c);
    sim_run_for(w, 25 * FL_MS);
    r = res(KVC_OK, fault + 50 * FL_MS);
    kvc_stats_op_end(c, &r);
    kvc_client_stats(c, &st);
    CHECK_EQ_INT(st.fault_count, 1);
    CHECK_EQ_INT(st.failover_ms[0], 125);
    CHECK_EQ_INT(st.unknown, 1);
    /* A stall still open counts up to now. */
    kvc_stats_op_start(c);
    sim_run_for(w, 700 * FL_MS);
    kvc_client_stats(c, &st);
    CHECK_EQ_INT(st.max_stall_ms, 700);
    /* It fails; after an idle gap the next call fails too, then one succeeds: one
     * stall of 700 + 400 + 100 ms (the gap does not count). */
    r = res(KVC_UNKNOWN, sim_now_ns(w) - 700 * FL_MS);
    kvc_stats_op_end(c, &r);
    sim_run_for(w, 2 * FL_S);
    kvc_stats_op_start(c);
    sim_run_for(w, 400 * FL_MS);
    r = res(KVC_FAIL, sim_now_ns(w) - 400 * FL_MS);
    kvc_stats_op_end(c, &r);
    kvc_client_stats(c, &st);
    CHECK_EQ_INT(st.max_stall_ms, 1100);
    kvc_stats_op_start(c);
    sim_run_for(w, 100 * FL_MS);
    r = res(KVC_OK, sim_now_ns(w) - 100 * FL_MS);
    kvc_stats_op_end(c, &r);
    kvc_client_stats(c, &st);
    CHECK_EQ_INT(st.max_stall_ms, 1200);
    /* Watch lag: a watch on "a" (it cannot open: nothing answers). */
    struct kvc_watch_req wr;
    memset(&wr, 0, sizeof(wr));
    wr.key.p = (const uint8_t *)"a";
    wr.key.n = 1;
    wr.start_rev = 5;
    kvc_watch(c, &wr, NULL, NULL, NULL);
    struct kvc_stream *ws = c->streams_head;
    struct kvc_bytes ka = {(const uint8_t *)"a", 1}, kb = {(const uint8_t *)"b", 1};
    kvc_client_note_commit(c, 4, ka, sim_now_ns(w)); /* before start_rev: not owed */
    kvc_client_note_commit(c, 5, kb, sim_now_ns(w)); /* other key */
    kvc_client_note_commit(c, 6, ka, sim_now_ns(w));
    sim_run_for(w, 100 * FL_MS);
    kvc_client_note_commit(c, 7, ka, sim_now_ns(w));
    sim_run_for(w, 100 * FL_MS);
    kvc_stats_watch_reached(c, ws, 6);
    CHECK_EQ_INT(c->st.watch_max_stall_ms, 200);
    sim_run_for(w, 400 * FL_MS);
    kvc_client_stats(c, &st);
    CHECK_EQ_INT(st.watch_max_stall_ms, 500); /* rev 7 still owed, committed 500 ms ago */
    kvc_stats_watch_reached(c, ws, 7);
    kvc_client_note_commit(c, 8, kb, sim_now_ns(w));
    sim_run_for(w, 2 * FL_S);
    kvc_client_stats(c, &st);
    CHECK_EQ_INT(st.watch_max_stall_ms, 500);
    json_t *j = kvc_stats_json(&st);
    const char *keys[] = {"id",
                          "balancer",
                          "ok",
                          "fail",
                          "unknown",
                          "availability",
                          "max_stall_ms",
                          "watch_max_stall_ms",
                          "connections_opened",
                          "retries"};
    for (size_t i = 0; i < FL_ARRAY_LEN(keys); i++)
        CHECK(json_object_get(j, keys[i]) != NULL);
    CHECK_EQ_INT(json_integer_value(json_object_get(j, "watch_max_stall_ms")), 500);
    json_decref(j);
    CHECK(kvc_watch_matches(&wr, ka));
    CHECK(!kvc_watch_matches(&wr, kb));
    wr.range_end.p = (const uint8_t *)"c";
    wr.range_end.n = 1;
    CHECK(kvc_watch_matches(&wr, kb));
    wr.range_end.p = (const uint8_t *)"";
    wr.range_end.n = 1; /* "\0": every key >= "a" */
    CHECK(kvc_watch_matches(&wr, kb));
    kvc_client_free(c);
    sim_world_free(w);
}

int main(void)
{
    FL_TEST(test_table);
    FL_TEST(test_classifier);
    FL_TEST(test_backoff);
    FL_TEST(test_stats);
    return fl_test_end();
}
