/*
 * test_etcd_codec.c: the etcd target's translation between rpc.proto and etcd 3.4's
 * JSON gateway (harness/run/run_etcd_codec.c), on the shapes the gateway really
 * writes: int64 as decimal strings (negative ones too), zero fields left out, bytes in
 * base64, member ids above 2^63 (they must go out unsigned: the gateway refused a
 * signed one with "cannot unmarshal number -1104609378845317290 into Go value of type
 * uint64"), txns with compares and nested answers, and answers of many keys.
 */
#include "harness/run/run_etcd.h"

#include "fl_test.h"

static json_t *j(const char *text)
{
    json_error_t e;
    json_t *o = json_loads(text, 0, &e);
    CHECK(o != NULL);
    return o;
}

static void ints_as_strings(void)
{
    json_t *o = j("{\"a\":\"123\",\"b\":\"-1\",\"c\":7,\"d\":\"17342679894663633346\"}");
    CHECK(ec_i64(o, "a") == 123);
    CHECK(ec_i64(o, "b") == -1);
    CHECK(ec_i64(o, "c") == 7);
    CHECK((uint64_t)ec_i64(o, "d") == UINT64_C(17342679894663633346));
    CHECK(ec_i64(o, "absent") == 0);
    json_t *out = json_object();
    ec_set_u64(out, "ID", UINT64_C(17342679894663633346));
    ec_set_i64(out, "zero", 0);
    CHECK_EQ_STR(json_string_value(json_object_get(out, "ID")), "17342679894663633346");
    CHECK(json_object_get(out, "zero") == NULL); /* omitted, as the gateway does */
    json_decref(out);
    json_decref(o);
}

static void member_promote_request_unsigned(void)
{
    Rpc__ClientMsg m = RPC__CLIENT_MSG__INIT;
    Rpc__MemberPromoteRequest p = RPC__MEMBER_PROMOTE_REQUEST__INIT;
    p.id = UINT64_C(0xf0abcdef01234567);
    m.req_case = RPC__CLIENT_MSG__REQ_MEMBER_PROMOTE;
    m.member_promote = &p;
    json_t *body;
    const char *path = ec_request(&m, &body);
    CHECK_EQ_STR(path, "/v3/cluster/member/promote");
    char want[32];
    snprintf(want, sizeof want, "%llu", (unsigned long long)p.id);
    CHECK_EQ_STR(json_string_value(json_object_get(body, "ID")), want);
    json_decref(body);
}

static void txn_request(void)
{
    Rpc__ClientMsg m = RPC__CLIENT_MSG__INIT;
    Rpc__TxnRequest t = RPC__TXN_REQUEST__INIT;
    Rpc__Compare c = RPC__COMPARE__INIT;
    c.result = RPC__COMPARE__COMPARE_RESULT__EQUAL;
    c.target = RPC__COMPARE__COMPARE_TARGET__MOD;
    c.key = (ProtobufCBinaryData){1, (uint8_t *)"a"};
    c.target_union_case = RPC__COMPARE__TARGET_UNION_MOD_REVISION;
    c.mod_revision = 5;
    Rpc__Compare *cs[] = {&c};
    Rpc__PutRequest put = RPC__PUT_REQUEST__INIT;
    put.key = (ProtobufCBinaryData){1, (uint8_t *)"a"};
    put.value = (ProtobufCBinaryData){2, (uint8_t *)"v2"};
    Rpc__RequestOp op = RPC__REQUEST_OP__INIT;
    op.request_case = RPC__REQUEST_OP__REQUEST_REQUEST_PUT;
    op.request_put = &put;
    Rpc__RequestOp *ops[] = {&op};
    t.n_compare = 1;
    t.compare = cs;
    t.n_success = 1;
    t.success = ops;
    m.req_case = RPC__CLIENT_MSG__REQ_TXN;
    m.txn = &t;
    json_t *body;
    CHECK_EQ_STR(ec_request(&m, &body), "/v3/kv/txn");
    char *text = json_dumps(body, JSON_COMPACT | JSON_SORT_KEYS);
    CHECK_EQ_STR(text, "{\"compare\":[{\"key\":\"YQ==\",\"mod_revision\":5,\"result\":\"EQUAL\","
                       "\"target\":\"MOD\"}],\"failure\":[],\"success\":[{\"request_put\":{"
                       "\"key\":\"YQ==\",\"value\":\"djI=\"}}]}");
    free(text);
    json_decref(body);
}

static void txn_answer(void)
{
    /* as etcd 3.4's gateway writes it: zero fields (PUT event type, revision 0) left out */
    json_t *o = j("{\"header\":{\"cluster_id\":\"1\",\"member_id\":\"17342679894663633346\","
                  "\"revision\":\"9\",\"raft_term\":\"3\"},\"succeeded\":true,\"responses\":"
                  "[{\"response_put\":{\"header\":{\"revision\":\"9\"}}},{\"response_range\":"
                  "{\"header\":{},\"kvs\":[{\"key\":\"YQ==\",\"create_revision\":\"2\","
                  "\"mod_revision\":\"9\",\"version\":\"3\",\"value\":\"djI=\"}],\"count\":"
                  "\"1\"}}]}");
    struct ec_scratch s = {NULL, 0, 0};
    struct ec_ids ids = {.n = 0};
    Rpc__ServerMsg msg = RPC__SERVER_MSG__INIT;
    msg.header = ec_header(&s, json_object_get(o, "header"));
    ec_answer(&s, &ids, RPC__METHOD__METHOD_TXN, o, &msg);
    CHECK(msg.header->revision == 9 && msg.header->raft_term == 3);
    CHECK(msg.header->member_id == UINT64_C(17342679894663633346));
    CHECK(msg.resp_case == RPC__SERVER_MSG__RESP_TXN && msg.txn->succeeded);
    CHECK(msg.txn->n_responses == 2);
    const Rpc__RangeResponse *r = msg.txn->responses[1]->response_range;
    CHECK(r && r->n_kvs == 1 && r->count == 1);
    CHECK(r->kvs[0]->mod_revision == 9 && r->kvs[0]->version == 3);
    CHECK(r->kvs[0]->value.len == 2 && !memcmp(r->kvs[0]->value.data, "v2", 2));
    /* the message encodes as the client will read it */
    struct fl_buf b;
    fl_buf_init(&b);
    CHECK(rpc_server_msg_encode(&msg, &b) > 0);
    Rpc__ServerMsg *back = rpc_server_msg_decode(NULL, b.len, b.data);
    CHECK(back && back->txn && back->txn->n_responses == 2);
    rpc__server_msg__free_unpacked(back, NULL);
    fl_buf_close(&b);
    ec_free(&s);
    json_decref(o);
}

static void many_keys(void)
{
    /* a range of 1000 keys: every allocation of the answer is kept (grows) */
    json_t *o = json_object(), *kvs = json_array();
    for (int i = 0; i < 1000; i++) {
        json_t *kv = json_object();
        json_object_set_new(kv, "key", json_string("YQ=="));
        json_object_set_new(kv, "value", json_string("djI="));
        json_array_append_new(kvs, kv);
    }
    json_object_set_new(o, "kvs", kvs);
    struct ec_scratch s = {NULL, 0, 0};
    struct ec_ids ids = {.n = 0};
    Rpc__ServerMsg msg = RPC__SERVER_MSG__INIT;
    ec_answer(&s, &ids, RPC__METHOD__METHOD_RANGE, o, &msg);
    CHECK(msg.range->n_kvs == 1000);
    CHECK(msg.range->kvs[999]->key.len == 1);
    ec_free(&s);
    json_decref(o);
}

static void watch_events(void)
{
    json_t *a = j("[{\"kv\":{\"key\":\"YQ==\",\"mod_revision\":\"4\"}},{\"type\":\"DELETE\","
                  "\"kv\":{\"key\":\"YQ==\",\"mod_revision\":\"5\"},\"prev_kv\":{\"key\":"
                  "\"YQ==\",\"value\":\"djI=\"}}]");
    struct ec_scratch s = {NULL, 0, 0};
    size_t n;
    Rpc__Event **ev = ec_events(&s, a, &n);
    CHECK(n == 2);
    CHECK(ev[0]->type == RPC__EVENT__EVENT_TYPE__PUT && ev[0]->prev_kv == NULL);
    CHECK(ev[1]->type == RPC__EVENT__EVENT_TYPE__DELETE && ev[1]->kv->mod_revision == 5);
    CHECK(ev[1]->prev_kv && ev[1]->prev_kv->value.len == 2);
    ec_free(&s);
    json_decref(a);
}

int main(void)
{
    FL_TEST(ints_as_strings);
    FL_TEST(member_promote_request_unsigned);
    FL_TEST(txn_request);
    FL_TEST(txn_answer);
    FL_TEST(many_keys);
    FL_TEST(watch_events);
    return fl_test_end();
}
