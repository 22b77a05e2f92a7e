/*
 * tclient.h: a tiny raw rpc.proto client for the server's tests: one connection to a
 * member's client port, synchronous calls that step the world until the answer
 * arrives (or a simulated deadline passes), and a queue of stream frames. Test-only.
 */
#ifndef FL_TEST_TCLIENT_H
#define FL_TEST_TCLIENT_H

#include "nodes/proto/codec.h"
#include "harness/sim/sim.h"
#include "nodes/proto/rpc.pb-c.h"
#include "nodes/server/cluster.h"

#define TC_QUEUE_MAX 4096

struct tclient {
    struct sim_world *w;
    int proc;
    net_sock sock;
    bool closed;
    uint64_t next_call;
    Rpc__ServerMsg *q[TC_QUEUE_MAX];
    size_t qn;
};

static void tc_on_message(struct sim_world *w, net_sock s, const uint8_t *p, size_t n, void *ctx)
{
    (void)w;
    (void)s;
    struct tclient *c = ctx;
    Rpc__ServerMsg *m = rpc_server_msg_decode(NULL, n, p);
    if (m && c->qn < TC_QUEUE_MAX)
        c->q[c->qn++] = m;
    else if (m)
        rpc__server_msg__free_unpacked(m, NULL);
}

static void tc_on_close(struct sim_world *w, net_sock s, int reason, void *ctx)
{
    (void)w;
    (void)s;
    (void)reason;
    ((struct tclient *)ctx)->closed = true;
}

static inline void tc_open(struct tclient *c, struct sim_world *w, int client_proc, int server_proc)
{
    memset(c, 0, sizeof *c);
    c->w = w;
    c->proc = client_proc;
    c->next_call = 1;
    static const struct net_sock_ops ops = {NULL, tc_on_message, tc_on_close};
    c->sock = net_connect(w, client_proc, server_proc, SRV_CLIENT_PORT, &ops, c);
}

static inline void tc_close(struct tclient *c)
{
    if (!c->closed)
        net_close(c->w, c->sock);
    for (size_t i = 0; i < c->qn; i++)
        rpc__server_msg__free_unpacked(c->q[i], NULL);
    c->qn = 0;
}

/* Removes and returns the first queued frame of call_id (NULL if none). */
static inline Rpc__ServerMsg *tc_take(struct tclient *c, uint64_t call_id)
{
    for (size_t i = 0; i < c->qn; i++) {
        if (c->q[i]->call_id == call_id) {
            Rpc__ServerMsg *m = c->q[i];
            memmove(c->q + i, c->q + i + 1, (c->qn - i - 1) * sizeof *c->q);
            c->qn--;
            return m;
        }
    }
    return NULL;
}

/* Sends msg (call_id assigned) and returns it. */
static inline uint64_t tc_send(struct tclient *c, Rpc__ClientMsg *msg)
{
    msg->call_id = c->next_call++;
    struct fl_buf b;
    fl_buf_init(&b);
    size_t n = rpc_client_msg_encode(msg, &b);
    net_send(c->w, c->sock, b.data, n);
    fl_buf_close(&b);
    return msg->call_id;
}

/* Steps the world until a frame of call_id arrives or timeout_ns of simulated time
 * passed. The caller frees the answer (rpc__server_msg__free_unpacked). */
static inline Rpc__ServerMsg *tc_wait(struct tclient *c, uint64_t call_id, int64_t timeout_ns)
{
    int64_t until = sim_now_ns(c->w) + timeout_ns;
    Rpc__ServerMsg *m;
    while (!(m = tc_take(c, call_id))) {
        if (c->closed || sim_next_time_ns(c->w) > until)
            return NULL;
        sim_step(c->w);
    }
    return m;
}

static inline Rpc__ServerMsg *tc_call(struct tclient *c, Rpc__ClientMsg *msg, int64_t timeout_ns)
{
    return tc_wait(c, tc_send(c, msg), timeout_ns);
}

static inline Rpc__ServerMsg *tc_put(struct tclient *c, const char *k, const char *v)
{
    Rpc__ClientMsg msg = RPC__CLIENT_MSG__INIT;
    Rpc__PutRequest r = RPC__PUT_REQUEST__INIT;
    r.key.data = (uint8_t *)k;
    r.key.len = strlen(k);
    r.value.data = (uint8_t *)v;
    r.value.len = strlen(v);
    msg.method = RPC__METHOD__METHOD_PUT;
    msg.req_case = RPC__CLIENT_MSG__REQ_PUT;
    msg.put = &r;
    return tc_call(c, &msg, 10 * FL_S);
}

static inline Rpc__ServerMsg *tc_get(struct tclient *c, const char *k, bool serializable)
{
    Rpc__ClientMsg msg = RPC__CLIENT_MSG__INIT;
    Rpc__RangeRequest r = RPC__RANGE_REQUEST__INIT;
    r.key.data = (uint8_t *)k;
    r.key.len = strlen(k);
    r.serializable = serializable;
    msg.method = RPC__METHOD__METHOD_RANGE;
    msg.req_case = RPC__CLIENT_MSG__REQ_RANGE;
    msg.range = &r;
    return tc_call(c, &msg, 10 * FL_S);
}

/* The value of a range answer's first kv, or NULL. Valid while m lives. */
static inline const char *tc_value(const Rpc__ServerMsg *m, size_t *len)
{
    if (!m || m->error || m->resp_case != RPC__SERVER_MSG__RESP_RANGE || !m->range->n_kvs)
        return NULL;
    *len = m->range->kvs[0]->value.len;
    return (const char *)m->range->kvs[0]->value.data;
}

static inline const char *tc_err(const Rpc__ServerMsg *m)
{
    if (!m)
        return "(no answer)";
    return m->error ? m->error->message : "";
}

#endif
