/*
 * run_target_etcd_bridge.c: the etcd target's bridges (see run_target_etcd.c): the
 * simulated process "n<i>" that stands for etcd member i, decodes our clients' rpc.proto
 * frames, makes each call on the member through its JSON gateway and enters the answer
 * into the world at the wall time it came.
 */
#include "harness/run/run_etcd_int.h"

#include "nodes/proto/errors.h"
#include "nodes/server/server.h"

int run_etcd__slot_of_member(const struct run_etcd *E, uint64_t id)
{
    for (int i = 0; i < E->n; i++)
        if (E->c.m[i].id == id)
            return i + 1;
    return 0;
}

/* ---- deliveries into the world ---------------------------------------------------- */

static void delivery_fire(struct sim_world *w, void *ctx)
{
    struct delivery *d = ctx;
    struct run_etcd *E = d->E;
    RUN_UNLINK(E->deliveries, d);
    if (E->b[d->slot].epoch == d->epoch && net_sock_open(w, d->sock))
        net_send(w, d->sock, d->frame, d->len);
    free(d->frame);
    free(d);
}

/* Enters msg, to be sent on sock by bridge slot, into the world at the wall time now. */
void run_etcd__deliver(struct run_etcd *E, int slot, uint32_t epoch, net_sock sock,
                       const Rpc__ServerMsg *msg)
{
    struct delivery *d = fl_calloc(1, sizeof *d);
    struct fl_buf b;
    fl_buf_init(&b);
    rpc_server_msg_encode(msg, &b);
    d->E = E;
    d->slot = slot;
    d->epoch = epoch;
    d->sock = sock;
    d->frame = b.data; /* the buffer's memory, now the delivery's */
    d->len = b.len;
    RUN_LINK(E->deliveries, d);
    sim_schedule_at(E->rw->w, run_pacer_arrival(&E->pace, E->rw->w), delivery_fire, d);
}

void run_etcd__error_msg(Rpc__ServerMsg *msg, Rpc__Error *e, int code, const char *text)
{
    rpc__error__init(e);
    e->code = code;
    e->message = (char *)text;
    msg->error = e;
}

/* An etcd error answer: the gateway's {"error","code","message"}; a transport failure
 * (nothing answered) is what gRPC reports for a refused connection. */
void run_etcd__reply_error(Rpc__ServerMsg *msg, Rpc__Error *e, const struct lv_etcd_reply *r)
{
    if (r->http_status == 0) {
        if (r->timed_out)
            run_etcd__error_msg(msg, e, RPC_CODE_DEADLINE_EXCEEDED,
                                rpc_err_text(RPC_ERR_CLIENT_DEADLINE));
        else
            run_etcd__error_msg(msg, e, RPC_CODE_UNAVAILABLE, rpc_err_text(RPC_ERR_CONN_REFUSED));
        return;
    }
    /* a unary call's {"code": N, ...}; a streaming call's {"error": {"grpc_code": N}} */
    const json_t *se = r->resp ? json_object_get(r->resp, "error") : NULL;
    int code = json_is_object(se) ? (int)ec_i64(se, "grpc_code")
               : r->resp          ? (int)ec_i64(r->resp, "code")
                                  : RPC_CODE_UNKNOWN;
    const char *text = r->error && r->error[0] ? r->error : "HTTP error";
    if (code <= 0 || code >= RPC_CODE_COUNT) {
        enum rpc_err_id id = rpc_err_find(text);
        code = id < RPC_ERR_COUNT ? (int)rpc_err_code(id) : RPC_CODE_UNKNOWN;
    }
    run_etcd__error_msg(msg, e, code, text);
}

static void on_call_reply(const struct lv_etcd_reply *r, void *arg)
{
    struct ecall *c = arg;
    struct run_etcd *E = c->o.E;
    RUN_UNLINK(E->calls, c);
    struct ec_scratch s = {NULL, 0, 0};
    Rpc__ServerMsg msg = RPC__SERVER_MSG__INIT;
    Rpc__Error e;
    msg.call_id = c->o.call_id;
    msg.method = (Rpc__Method)c->method;
    if (r->http_status == 200 && r->resp) {
        msg.header = ec_header(&s, json_object_get(r->resp, "header"));
        struct ec_ids ids = {.n = E->n};
        for (int i = 0; i < E->n; i++)
            ids.id[i] = E->c.m[i].id;
        ec_answer(&s, &ids, c->method, r->resp, &msg);
        const json_t *err = json_object_get(r->resp, "error"); /* a stream's error item */
        if (json_is_object(err))
            run_etcd__error_msg(&msg, &e, (int)ec_i64(err, "grpc_code"),
                                json_string_value(json_object_get(err, "message")));
    } else {
        run_etcd__reply_error(&msg, &e, r);
    }
    run_etcd__deliver(E, c->o.slot, c->o.epoch, c->o.sock, &msg);
    ec_free(&s);
    free(c);
}

struct origin run_etcd__origin_of(struct run_etcd *E, int slot, net_sock sock, uint64_t call_id)
{
    return (struct origin){E, slot, E->b[slot].epoch, sock, call_id};
}

/* ---- bridge processes --------------------------------------------------------------- */

static int slot_of_proc(const struct run_etcd *E, int proc)
{
    for (int i = 1; i <= E->n; i++)
        if (E->b[i].proc == proc)
            return i;
    return 0;
}

static void bridge_frame(struct run_etcd *E, int slot, net_sock sock, const uint8_t *p, size_t n)
{
    struct sim_world *w = E->rw->w;
    Rpc__ClientMsg *m = rpc_client_msg_decode(NULL, n, p);
    if (!m)
        return; /* not a frame: our members drop it as well */
    if (m->req_case == RPC__CLIENT_MSG__REQ_PING && !E->b[slot].st_ok) {
        /* keepalive by periodic health calls: the member did not answer its last
         * Maintenance Status poll (not ready, hung, or down), so the ping is not
         * answered, as an HTTP/2 ping to a gRPC server that does not serve is not */
    } else if (m->req_case == RPC__CLIENT_MSG__REQ_PING) {
        Rpc__ServerMsg msg = RPC__SERVER_MSG__INIT;
        Rpc__Pong pong = RPC__PONG__INIT;
        pong.seq = m->ping->seq;
        msg.method = RPC__METHOD__METHOD_PING;
        msg.resp_case = RPC__SERVER_MSG__RESP_PONG;
        msg.pong = &pong;
        struct fl_buf b;
        fl_buf_init(&b);
        rpc_server_msg_encode(&msg, &b);
        net_send(w, sock, b.data, b.len);
        fl_buf_close(&b);
    } else if (m->close_stream) {
        run_etcd__watch_close(E, slot, sock, m->call_id);
    } else if (m->req_case == RPC__CLIENT_MSG__REQ_WATCH) {
        run_etcd__watch_open(E, slot, sock, m);
    } else {
        json_t *body;
        const char *path = ec_request(m, &body);
        if (!path) {
            Rpc__ServerMsg msg = RPC__SERVER_MSG__INIT;
            Rpc__Error e;
            msg.call_id = m->call_id;
            msg.method = m->method;
            run_etcd__error_msg(&msg, &e, RPC_CODE_UNIMPLEMENTED, "not served on the etcd target");
            run_etcd__deliver(E, slot, E->b[slot].epoch, sock, &msg);
        } else {
            struct ecall *c = fl_calloc(1, sizeof *c);
            c->o = run_etcd__origin_of(E, slot, sock, m->call_id);
            c->method = (int)m->method;
            RUN_LINK(E->calls, c);
            lv_etcd_call_rl(&E->c.client, E->c.m[slot - 1].client_url, path, body, CALL_TIMEOUT_MS,
                            m->require_leader, on_call_reply, c);
        }
    }
    rpc__client_msg__free_unpacked(m, NULL);
}

static void bridge_on_message(struct sim_world *w, net_sock s, const uint8_t *p, size_t n,
                              void *ctx)
{
    struct run_etcd *E = ctx;
    int slot = slot_of_proc(E, net_sock_proc(w, s));
    if (slot)
        bridge_frame(E, slot, s, p, n);
}

static void bridge_on_close(struct sim_world *w, net_sock s, int reason, void *ctx)
{
    (void)reason;
    struct run_etcd *E = ctx;
    int slot = slot_of_proc(E, net_sock_proc(w, s));
    for (struct ewatch *x = E->watches; x; x = x->next)
        if (x->o.sock == s && (slot == 0 || x->o.slot == slot))
            x->dead = true;
    run_etcd__watches_sweep(E);
}

static void bridge_accept(struct sim_world *w, net_sock s, int peer, void *ctx)
{
    (void)peer;
    static const struct net_sock_ops ops = {NULL, bridge_on_message, bridge_on_close};
    net_sock_bind(w, s, &ops, ctx);
}

static void bridge_on_kill(struct sim_world *w, int proc, void *ctx)
{
    (void)w;
    struct run_etcd *E = ctx;
    int slot = slot_of_proc(E, proc);
    E->b[slot].epoch++;
    for (struct ewatch *x = E->watches; x; x = x->next)
        if (x->o.slot == slot)
            x->dead = true;
    run_etcd__watches_sweep(E);
}

static void bridge_on_restart(struct sim_world *w, int proc, void *ctx)
{
    net_listen(w, proc, SRV_CLIENT_PORT, bridge_accept, ctx);
}

void run_etcd__bridge_add(struct run_etcd *E, int slot)
{
    static const struct sim_proc_ops ops = {bridge_on_kill, bridge_on_restart};
    E->b[slot].slot = slot;
    E->b[slot].E = E;
    E->b[slot].proc = run_bridge_proc_add(E->rw->w, slot, &ops, bridge_accept, E);
}
