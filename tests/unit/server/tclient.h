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

/* Frees an answer (NULL: nothing). */
static inline void tc_free(Rpc__ServerMsg *m)
{
    if (m)
        rpc__server_msg__free_unpacked(m, NULL);
}

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

/* msg carries the request r of method NAME (its request case has the same name) in its
 * field `field`. */
#define TC_REQ(msg, NAME, field, r)                                                                \
    ((msg).method = RPC__METHOD__METHOD_##NAME, (msg).req_case = RPC__CLIENT_MSG__REQ_##NAME,      \
     (msg).field = (r))

/* Sends msg under call_id (a stream's, or a new call's) and returns it. */
static inline uint64_t tc_send_as(struct tclient *c, Rpc__ClientMsg *msg, uint64_t call_id)
{
    msg->call_id = call_id;
    struct fl_buf b;
    fl_buf_init(&b);
    size_t n = rpc_client_msg_encode(msg, &b);
    net_send(c->w, c->sock, b.data, n);
    fl_buf_close(&b);
    return call_id;
}

/* Sends msg (call_id assigned) and returns it. */
static inline uint64_t tc_send(struct tclient *c, Rpc__ClientMsg *msg)
{
    return tc_send_as(c, msg, c->next_call++);
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

/* Sends a put of k = v under lease (0: none) and returns its call id (tc_wait). */
static inline uint64_t tc_put_send(struct tclient *c, const char *k, const char *v, int64_t lease)
{
    Rpc__ClientMsg msg = RPC__CLIENT_MSG__INIT;
    Rpc__PutRequest r = RPC__PUT_REQUEST__INIT;
    r.key.data = (uint8_t *)k;
    r.key.len = strlen(k);
    r.value.data = (uint8_t *)v;
    r.value.len = strlen(v);
    r.lease = lease;
    TC_REQ(msg, PUT, put, &r);
    return tc_send(c, &msg);
}

static inline Rpc__ServerMsg *tc_put(struct tclient *c, const char *k, const char *v)
{
    return tc_wait(c, tc_put_send(c, k, v, 0), 10 * FL_S);
}

/* Opens a watch on [key, end) (end NULL: the key alone) from revision start (0: now);
 * returns its call id, under which its events arrive (tc_events). */
static inline uint64_t tc_watch_send(struct tclient *c, const char *key, const char *end,
                                     int64_t start, bool require_leader)
{
    Rpc__ClientMsg msg = RPC__CLIENT_MSG__INIT;
    Rpc__WatchRequest wr = RPC__WATCH_REQUEST__INIT;
    Rpc__WatchCreateRequest cr = RPC__WATCH_CREATE_REQUEST__INIT;
    cr.key.data = (uint8_t *)key;
    cr.key.len = strlen(key);
    cr.range_end.data = (uint8_t *)end;
    cr.range_end.len = end ? strlen(end) : 0;
    cr.start_revision = start;
    wr.request_union_case = RPC__WATCH_REQUEST__REQUEST_UNION_CREATE_REQUEST;
    wr.create_request = &cr;
    TC_REQ(msg, WATCH, watch, &wr);
    msg.require_leader = require_leader;
    return tc_send(c, &msg);
}

/* Appends to revs[n..cap) the mod revisions of the events queued so far for watch call
 * id; returns the new count. *canceled (may be NULL) is set when the watch was
 * canceled or its stream ended. */
static inline int tc_events(struct tclient *c, uint64_t id, int64_t *revs, int n, int cap,
                            bool *canceled)
{
    Rpc__ServerMsg *m;
    while ((m = tc_take(c, id))) {
        if (m->resp_case == RPC__SERVER_MSG__RESP_WATCH) {
            for (size_t i = 0; i < m->watch->n_events && n < cap; i++)
                revs[n++] = m->watch->events[i]->kv->mod_revision;
            if (m->watch->canceled && canceled)
                *canceled = true;
        }
        if (m->stream_end && canceled)
            *canceled = true;
        rpc__server_msg__free_unpacked(m, NULL);
    }
    return n;
}

/* Grants a lease of ttl seconds; its id, 0 when refused or not answered in time. */
static inline int64_t tc_lease_grant(struct tclient *c, int64_t ttl, int64_t timeout_ns)
{
    Rpc__ClientMsg msg = RPC__CLIENT_MSG__INIT;
    Rpc__LeaseGrantRequest r = RPC__LEASE_GRANT_REQUEST__INIT;
    r.ttl = ttl;
    TC_REQ(msg, LEASE_GRANT, lease_grant, &r);
    Rpc__ServerMsg *m = tc_call(c, &msg, timeout_ns);
    int64_t id = m && !m->error && m->lease_grant ? m->lease_grant->id : 0;
    tc_free(m);
    return id;
}

/* One keep-alive request for lease on the keep-alive stream `stream` (a call id the
 * caller took: the answers arrive under it). */
static inline void tc_keepalive(struct tclient *c, uint64_t stream, int64_t lease)
{
    Rpc__ClientMsg msg = RPC__CLIENT_MSG__INIT;
    Rpc__LeaseKeepAliveRequest r = RPC__LEASE_KEEP_ALIVE_REQUEST__INIT;
    r.id = lease;
    TC_REQ(msg, LEASE_KEEPALIVE, lease_keepalive, &r);
    tc_send_as(c, &msg, stream);
}

/* LeaseTimeToLive of lease; the answer (NULL: none within 10 s), freed by the caller. */
static inline Rpc__ServerMsg *tc_lease_ttl(struct tclient *c, int64_t lease)
{
    Rpc__ClientMsg msg = RPC__CLIENT_MSG__INIT;
    Rpc__LeaseTimeToLiveRequest r = RPC__LEASE_TIME_TO_LIVE_REQUEST__INIT;
    r.id = lease;
    TC_REQ(msg, LEASE_TTL, lease_ttl, &r);
    return tc_call(c, &msg, 10 * FL_S);
}

/* A progress request on the watch stream of call id (the answer arrives under it). */
static inline void tc_watch_progress(struct tclient *c, uint64_t id)
{
    Rpc__ClientMsg msg = RPC__CLIENT_MSG__INIT;
    Rpc__WatchRequest wr = RPC__WATCH_REQUEST__INIT;
    Rpc__WatchProgressRequest pr = RPC__WATCH_PROGRESS_REQUEST__INIT;
    wr.request_union_case = RPC__WATCH_REQUEST__REQUEST_UNION_PROGRESS_REQUEST;
    wr.progress_request = &pr;
    TC_REQ(msg, WATCH, watch, &wr);
    tc_send_as(c, &msg, id);
}

static inline Rpc__ServerMsg *tc_get(struct tclient *c, const char *k, bool serializable)
{
    Rpc__ClientMsg msg = RPC__CLIENT_MSG__INIT;
    Rpc__RangeRequest r = RPC__RANGE_REQUEST__INIT;
    r.key.data = (uint8_t *)k;
    r.key.len = strlen(k);
    r.serializable = serializable;
    TC_REQ(msg, RANGE, range, &r);
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

/* Whether m is an answer without error; frees it. */
static inline bool tc_ok(Rpc__ServerMsg *m)
{
    bool ok = m && !m->error;
    tc_free(m);
    return ok;
}

static inline const char *tc_err(const Rpc__ServerMsg *m)
{
    if (!m)
        return "(no answer)";
    return m->error ? m->error->message : "";
}

#endif
