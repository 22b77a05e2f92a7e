/*
 * test_env_uv.c: the client over real sockets. The client runs on a libuv node
 * environment (nodes/env/env_uv.h) and dials a one-key server written here on a
 * second environment of the same loop, over loopback TCP with the environment's
 * framing: a put and then a get of the same key complete with the server's revision
 * and value, as the harness will run clients against live members (issue 16 §2).
 */
#include "fl_port.h"
#include "fl_test.h"

#include "nodes/client/client.h"
#include "nodes/env/env_uv.h"
#include "nodes/proto/codec.h"
#include "nodes/server/server.h"

#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

/* ---- the server: one key, revision counting from 1 ---- */
static struct fl_env *srv;
static struct env_sock_cb srv_cb;
static char srv_key[32], srv_val[32];
static int64_t srv_rev = 1, srv_mod_rev;
static int srv_calls;

static void srv_reply(env_sock s, Rpc__ServerMsg *m)
{
    Rpc__ResponseHeader h = RPC__RESPONSE_HEADER__INIT;
    h.cluster_id = 1;
    h.member_id = 1;
    h.revision = srv_rev;
    h.raft_term = 1;
    m->header = &h;
    struct fl_buf b;
    fl_buf_init(&b);
    size_t n = rpc_server_msg_encode(m, &b);
    CHECK_EQ_INT(env_send(srv, s, b.data, n), FL_OK);
    fl_buf_close(&b);
}

static void srv_on_message(void *ctx, env_sock s, const uint8_t *p, size_t n)
{
    (void)ctx;
    Rpc__ClientMsg *m = rpc_client_msg_decode(NULL, n, p);
    CHECK(m != NULL);
    if (!m)
        return;
    Rpc__ServerMsg r = RPC__SERVER_MSG__INIT;
    r.call_id = m->call_id;
    r.method = m->method;
    if (m->req_case == RPC__CLIENT_MSG__REQ_PUT) {
        srv_calls++;
        snprintf(srv_key, sizeof srv_key, "%.*s", (int)m->put->key.len, m->put->key.data);
        snprintf(srv_val, sizeof srv_val, "%.*s", (int)m->put->value.len, m->put->value.data);
        srv_mod_rev = ++srv_rev;
        Rpc__PutResponse pr = RPC__PUT_RESPONSE__INIT;
        r.resp_case = RPC__SERVER_MSG__RESP_PUT;
        r.put = &pr;
        srv_reply(s, &r);
    } else if (m->req_case == RPC__CLIENT_MSG__REQ_RANGE) {
        srv_calls++;
        Rpc__KeyValue kv = RPC__KEY_VALUE__INIT, *kvs[1] = {&kv};
        kv.key.data = (uint8_t *)srv_key;
        kv.key.len = strlen(srv_key);
        kv.value.data = (uint8_t *)srv_val;
        kv.value.len = strlen(srv_val);
        kv.create_revision = kv.mod_revision = srv_mod_rev;
        kv.version = 1;
        Rpc__RangeResponse rr = RPC__RANGE_RESPONSE__INIT;
        bool hit = m->range->key.len == strlen(srv_key) &&
                   memcmp(m->range->key.data, srv_key, m->range->key.len) == 0;
        rr.n_kvs = hit ? 1 : 0;
        rr.kvs = kvs;
        rr.count = hit ? 1 : 0;
        r.resp_case = RPC__SERVER_MSG__RESP_RANGE;
        r.range = &rr;
        srv_reply(s, &r);
    } /* pings and the rest: unanswered */
    rpc__client_msg__free_unpacked(m, NULL);
}

static void srv_on_close(void *ctx, env_sock s, int reason)
{
    (void)ctx;
    (void)s;
    CHECK_EQ_INT(reason, ENV_CLOSE_PEER);
    env_unlisten(srv, SRV_CLIENT_PORT); /* the loop ends when nothing is left */
}

static void srv_on_accept(void *ctx, env_sock s, int peer)
{
    (void)ctx;
    (void)peer;
    env_sock_bind(srv, s, &srv_cb);
}

/* ---- the client ---- */
static struct kvc_client *cli;
static int put_status = -1, get_status = -1;
static int64_t put_rev, get_mod_rev;
static char got[32];

static void on_get(void *ud, const struct kvc_result *r)
{
    (void)ud;
    get_status = r->status;
    if (r->op.kv_count == 1) {
        snprintf(got, sizeof got, "%.*s", (int)r->op.kvs[0].value.n,
                 (const char *)r->op.kvs[0].value.p);
        get_mod_rev = r->op.kvs[0].mod_rev;
    }
    kvc_client_close(cli); /* its sockets and timers: the loop can end */
}

static void on_put(void *ud, const struct kvc_result *r)
{
    (void)ud;
    put_status = r->status;
    put_rev = r->header.revision;
    struct kvc_bytes k = {(const uint8_t *)"greeting", 8};
    kvc_get(cli, k, (struct kvc_bytes){NULL, 0}, NULL, on_get, NULL);
}

static void test_put_get_over_tcp(void)
{
    uv_loop_t loop;
    uv_loop_init(&loop);
    const char *tmp = getenv("TMPDIR");
    char d1[256], d2[256];
    snprintf(d1, sizeof d1, "%s/fl_cli_uv_XXXXXX", tmp && *tmp ? tmp : "/tmp");
    snprintf(d2, sizeof d2, "%s/fl_cli_uv_XXXXXX", tmp && *tmp ? tmp : "/tmp");
    CHECK(mkdtemp(d1) && mkdtemp(d2));
    const char *err = NULL;
    srv = env_uv_new(&loop, 7, d1, 1, &err);
    struct fl_env *ce = env_uv_new(&loop, 42, d2, 2, &err);
    CHECK(srv && ce);
    int port = fl_free_port();
    CHECK(port > 0);
    env_uv_map(srv, 7, SRV_CLIENT_PORT, port);
    env_uv_map(ce, 7, SRV_CLIENT_PORT, port);
    srv_cb = (struct env_sock_cb){NULL, srv_on_message, srv_on_close, NULL};
    CHECK_EQ_INT(env_listen(srv, SRV_CLIENT_PORT, srv_on_accept, NULL), FL_OK);

    static const struct kvc_endpoint eps[] = {{1, 7}};
    struct kvc_config cfg;
    kvc_config_default(&cfg);
    cfg.endpoints = eps;
    cfg.endpoint_count = 1;
    CHECK_EQ_INT(kvc_client_new_env(ce, 42, &cfg, &cli, &err), FL_OK);
    struct kvc_bytes k = {(const uint8_t *)"greeting", 8}, v = {(const uint8_t *)"hello", 5};
    kvc_put(cli, k, v, 0, NULL, on_put, NULL);
    uv_run(&loop, UV_RUN_DEFAULT);

    CHECK_EQ_INT(put_status, KVC_OK);
    CHECK_EQ_INT(put_rev, 2);
    CHECK_EQ_INT(get_status, KVC_OK);
    CHECK_EQ_STR(got, "hello");
    CHECK_EQ_INT(get_mod_rev, 2);
    CHECK_EQ_INT(srv_calls, 2);
    kvc_client_free(cli);
    env_uv_free(ce);
    env_uv_free(srv);
    uv_run(&loop, UV_RUN_DEFAULT);
    CHECK_EQ_INT(uv_loop_close(&loop), 0);
    rmdir(d1);
    rmdir(d2);
}

int main(void)
{
    FL_TEST(test_put_get_over_tcp);
    return fl_test_end();
}
