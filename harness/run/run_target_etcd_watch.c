/*
 * run_target_etcd_watch.c: the etcd target's watches: a client's watch stream carried
 * by a streamed gateway watch on the member; its messages enter the world as rpc.proto
 * watch answers.
 */
#include "harness/run/run_etcd_int.h"

#include "nodes/proto/errors.h"

/* ---- watches ---------------------------------------------------------------------- */

static void on_watch_msg(json_t *m, const struct lv_etcd_reply *end, void *arg)
{
    struct ewatch *x = arg;
    struct run_etcd *E = x->o.E;
    struct ec_scratch s = {NULL, 0, 0};
    Rpc__ServerMsg msg = RPC__SERVER_MSG__INIT;
    Rpc__Error e;
    msg.call_id = x->o.call_id;
    msg.method = RPC__METHOD__METHOD_WATCH;
    if (!m) {
        /* the gateway stream ended (the member died, or the connection broke): the
         * client resumes the watch, as after a broken gRPC stream */
        x->w = NULL;
        x->dead = true;
        msg.stream_end = true;
        (void)end;
        run_etcd__error_msg(&msg, &e, RPC_CODE_UNAVAILABLE,
                            rpc_err_text(RPC_ERR_TRANSPORT_CLOSING));
        run_etcd__deliver(E, x->o.slot, x->o.epoch, x->o.sock, &msg);
        return;
    }
    const json_t *r = json_object_get(m, "result");
    const json_t *err = json_object_get(m, "error");
    if (!r) {
        int code = err ? (int)ec_i64(err, "grpc_code") : RPC_CODE_UNKNOWN;
        const char *text = err ? json_string_value(json_object_get(err, "message")) : NULL;
        msg.stream_end = true;
        run_etcd__error_msg(&msg, &e, code ? code : RPC_CODE_UNKNOWN,
                            text ? text : "watch stream error");
        x->dead = true;
        run_etcd__deliver(E, x->o.slot, x->o.epoch, x->o.sock, &msg);
        return;
    }
    Rpc__WatchResponse *wr = ec_new(&s, sizeof *wr);
    rpc__watch_response__init(wr);
    msg.header = ec_header(&s, json_object_get(r, "header"));
    wr->watch_id = ec_i64(r, "watch_id");
    wr->created = ec_bool(r, "created");
    wr->canceled = ec_bool(r, "canceled");
    wr->compact_revision = ec_i64(r, "compact_revision");
    const char *reason = json_string_value(json_object_get(r, "cancel_reason"));
    wr->cancel_reason = (char *)(reason ? reason : "");
    wr->fragment = ec_bool(r, "fragment");
    wr->events = ec_events(&s, json_object_get(r, "events"), &wr->n_events);
    msg.resp_case = RPC__SERVER_MSG__RESP_WATCH;
    msg.watch = wr;
    if (wr->canceled) {
        msg.stream_end = true;
        x->dead = true; /* cancelled after this callback returns (run_etcd_pace) */
    }
    run_etcd__deliver(E, x->o.slot, x->o.epoch, x->o.sock, &msg);
    ec_free(&s);
}

void run_etcd__watch_free(struct run_etcd *E, struct ewatch *x)
{
    RUN_UNLINK(E->watches, x);
    if (x->w)
        lv_etcd_watch_cancel(x->w);
    free(x);
}

/* Watches marked dead inside curl's callbacks, cancelled outside them. */
void run_etcd__watches_sweep(struct run_etcd *E)
{
    struct ewatch *x = E->watches;
    while (x) {
        struct ewatch *next = x->next;
        if (x->dead)
            run_etcd__watch_free(E, x);
        x = next;
    }
}

/* After every turn of the loop (run_pacer): the watches that ended in it. */
void run_etcd__pace_turn(void *ud)
{
    run_etcd__watches_sweep(ud);
}

void run_etcd__watch_open(struct run_etcd *E, int slot, net_sock sock, const Rpc__ClientMsg *m)
{
    const Rpc__WatchRequest *wr = m->watch;
    if (wr->request_union_case != RPC__WATCH_REQUEST__REQUEST_UNION_CREATE_REQUEST)
        return; /* progress requests: the gateway stream takes one request only */
    const Rpc__WatchCreateRequest *c = wr->create_request;
    json_t *o = json_object();
    ec_set_bytes(o, "key", c->key);
    ec_set_bytes(o, "range_end", c->range_end);
    ec_set_i64(o, "start_revision", c->start_revision);
    if (c->progress_notify)
        json_object_set_new(o, "progress_notify", json_true());
    if (c->prev_kv)
        json_object_set_new(o, "prev_kv", json_true());
    if (c->n_filters) {
        json_t *f = json_array();
        for (size_t i = 0; i < c->n_filters; i++)
            json_array_append_new(
                f, json_string(c->filters[i] == RPC__WATCH_CREATE_REQUEST__FILTER_TYPE__NODELETE
                                   ? "NODELETE"
                                   : "NOPUT"));
        json_object_set_new(o, "filters", f);
    }
    struct ewatch *x = fl_calloc(1, sizeof *x);
    x->o = run_etcd__origin_of(E, slot, sock, m->call_id);
    RUN_LINK(E->watches, x);
    x->w = lv_etcd_watch_open_rl(&E->c.client, E->c.m[slot - 1].client_url, o, m->require_leader,
                                 on_watch_msg, x);
}

void run_etcd__watch_close(struct run_etcd *E, int slot, net_sock sock, uint64_t call_id)
{
    for (struct ewatch *x = E->watches; x; x = x->next)
        if (x->o.slot == slot && x->o.sock == sock && (call_id == 0 || x->o.call_id == call_id))
            x->dead = true;
    run_etcd__watches_sweep(E);
}
