/*
 * run_target_etcd.c: `faultline run SCENARIO --target etcd` (issue 16 §3): the run
 * driver over a real etcd 3.4 cluster. See run_etcd.h for the shape.
 *
 * Pacing. The world's clock stays the only clock the scenario, the workload, the
 * clients and the recorder read, but an event at simulated time t runs only when
 * wall time since the cluster came up has reached t (run_etcd_pace); meanwhile the
 * libuv loop runs the etcd members' supervisor, the proxies and the curl requests.
 * An answer from etcd enters the world as an event at the wall time it arrived (never
 * before the world's now). Times in the history are therefore wall times, and the
 * run has no digest: nothing here is deterministic.
 *
 * Bridges. Member slot i is a simulated process "n<i>" listening on the client port,
 * as our own members do, so the clients and their four balancer policies run
 * unchanged. A bridge decodes each rpc.proto frame, makes the same call on etcd
 * member i through its client proxy (JSON gateway), and sends the rpc.proto answer
 * back: etcd's header, its error text and gRPC code as the gateway reports them.
 * Watches become streamed gateway watches. Pings are answered by the bridge (HTTP/1.1
 * has no HTTP/2 pings), and only while the member answered its last Maintenance Status
 * poll (every 100 ms, 1 s timeout): keepalive by periodic health calls, so pings stop
 * when etcd does not serve (killed, paused, hung, or restarted and not ready); a paused
 * member's bridge is paused too. A Status
 * answer carries quorum_contact_age_ns 0 when the member names a leader, else -1:
 * etcd does not expose its last contact with a quorum (health_aware's probe reads it).
 *
 * Faults. kill / restart / pause / resume act on the etcd process (SIGKILL, respawn on
 * the same data directory, SIGSTOP / SIGCONT) and on its bridge (killed: the clients'
 * connections reset; restarted: listens again; paused: frames wait). Cuts between a
 * client and a member are the simulator's (the bridge is the member's endpoint); cuts
 * and clogs between two members are mirrored onto the real peer proxies
 * (run_etcd_net_sync). What etcd cannot do here is refused before the scenario runs
 * (run_target_unsupported, harness/lua names the function and the target).
 *
 * Observation. Every member's Maintenance Status is polled every 100 ms of wall
 * time; status() reports the latest answer, leader() the member that names itself
 * leader at the highest term, and a change of leader or term seen by polling is a node event
 * ("leader", "term"), recorded as such. The Raft events etcd logs (pre-vote, campaign,
 * step-down, snapshots) are read from each member's log at every poll (logs_scan).
 *
 * Backups and convergence. snapshot_save streams Maintenance Snapshot through the
 * gateway; copy_db reads the member's db file; restore runs `etcdctl snapshot restore`.
 * converge compares HashKV (etcdctl: the 3.4 gateway serves Hash, not HashKV, at
 * /v3/maintenance/hash) of every member at one revision, at the end and every 2 s.
 */
#include "harness/run/run_etcd.h"

#include "harness/live/live_etcd.h"
#include "nodes/proto/codec.h"
#include "nodes/proto/errors.h"
#include "nodes/server/server.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <time.h>

#define CALL_TIMEOUT_MS     10000 /* the clients time out first (default 2 s) */
#define POLL_MS             100
#define START_MS            20000
#define SNAPSHOT_TIMEOUT_MS 30000
#define CHECKPOINT_MS       2000

struct run_etcd;

/* One frame to send from a bridge, at the wall time its answer came. */
struct delivery {
    struct run_etcd *E;
    int slot;
    uint32_t epoch;
    net_sock sock;
    uint8_t *frame;
    size_t len;
    struct delivery *prev, *next;
};

/* Where a client's request came from: the answer goes back there, unless the bridge
 * died since (epoch) or the connection closed. */
struct origin {
    struct run_etcd *E;
    int slot;
    uint32_t epoch;
    net_sock sock;
    uint64_t call_id;
};

/* A unary call in flight to etcd. */
struct ecall {
    struct origin o;
    int method;
    struct ecall *prev, *next;
};

/* A client's watch stream, carried by a gateway watch. */
struct ewatch {
    struct origin o;
    struct lv_etcd_watch *w; /* NULL once the gateway stream ended */
    bool dead;               /* to cancel outside curl's callbacks */
    struct ewatch *prev, *next;
};

/* A control call of the scenario (compact, defrag, ...). */
struct ectl {
    struct run_etcd *E;
    run_etcd_ctl_fn *done;
    void *ud;
    int code;
    char text[256];
    int64_t revision;
    int node;                     /* member_add: the slot of the new member, once started */
    int removing;                 /* member_remove: the slot removed when it succeeds */
    int add_idx;                  /* member_add: the prepared member (-1 none) */
    json_t *resp;                 /* member_add: MemberAdd's answer, until the member starts */
    struct fl_buf data;           /* snapshot_save: the blobs so far */
    int disarm_at;                /* alarm_disarm: the member asked */
    size_t disarm_next;           /* alarm_disarm: the next alarm of resp to deactivate */
    struct lv_etcd_watch *stream; /* snapshot_save: the stream, until it ends */
    struct ectl *prev, *next;
};

struct bridge {
    int slot, proc;
    uint32_t epoch; /* bumped at every kill: answers to an older life are dropped */
    struct lv_etcd_status st;
    uint64_t cluster_id; /* the header of its last Status answer */
    bool st_ok;
    bool removed;           /* member_remove succeeded: no longer one of nodes() */
    long log_off;           /* bytes of its log read so far */
    struct fl_buf log_part; /* a line not complete yet */
    bool log_leader;        /* its log's last role change made it leader */
    /* The highest Raft term its log named ("became candidate at term 7", ...). Status
     * raftTerm is the term of the last applied entry (etcd's s.Term()), which stays put
     * while an isolated member campaigns; this is the Raft term status().term reports. */
    uint64_t log_term;
    /* failpoint on its WAL (strace): on, and with what (delay_ms, or a crash) */
    struct run_etcd *E;
    bool fp_on;
    int fp_delay_ms;
    enum lv_wal_crash fp_crash;
    bool fp_crashed; /* its member died of the crash: the bridge is killed too */
};

struct run_etcd {
    struct run_world *rw;
    uv_loop_t loop;
    bool loop_open;
    struct lv_workdir wd;
    bool wd_open;
    struct lv_etcd_cluster c;
    bool cluster_open;
    struct bridge b[LV_NODES_MAX + 1]; /* [slot], 1-based */
    int n;
    struct run_pacer pace; /* run_int.h */
    uv_timer_t poll;       /* status polls */
    bool poll_open;
    int polls_out;
    uint64_t leader_id, term; /* last seen by polling */
    char version[32];
    char *bin;             /* the etcd binary, for members added */
    char flag_vals[8][32]; /* ... and the flags they run with */
    const char *flags[LV_ETCD_EXTRA_MAX + 1];
    struct delivery *deliveries;
    struct ecall *calls;
    struct ewatch *watches;
    struct ectl *ctls;
    /* converge's checkpoints: HashKV of every member at one revision every
     * CHECKPOINT_MS of wall time, taken outside the loop's callbacks (run_etcd_pace) */
    double checkpoint_at_s;
    int64_t checkpoint_rev; /* the revision last compared */
    int checkpoints;        /* revisions compared */
    json_t *corruption;     /* the first mismatch, NULL none */
    struct ckpt *ckpt;      /* the checkpoint whose etcdctl processes run, NULL none */
    bool closing;           /* run_etcd_close: the run has ended, nothing more is recorded */
};

static void checkpoint(struct run_etcd *E);
static int fp_attach(struct run_etcd *E, int slot, struct fl_buf *err);
static void checkpoint_stop(struct run_etcd *E);

static int slot_of_member(const struct run_etcd *E, uint64_t id)
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
static void deliver(struct run_etcd *E, int slot, uint32_t epoch, net_sock sock,
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

static void error_msg(Rpc__ServerMsg *msg, Rpc__Error *e, int code, const char *text)
{
    rpc__error__init(e);
    e->code = code;
    e->message = (char *)text;
    msg->error = e;
}

/* An etcd error answer: the gateway's {"error","code","message"}; a transport failure
 * (nothing answered) is what gRPC reports for a refused connection. */
static void reply_error(Rpc__ServerMsg *msg, Rpc__Error *e, const struct lv_etcd_reply *r)
{
    if (r->http_status == 0) {
        if (r->timed_out)
            error_msg(msg, e, RPC_CODE_DEADLINE_EXCEEDED, rpc_err_text(RPC_ERR_CLIENT_DEADLINE));
        else
            error_msg(msg, e, RPC_CODE_UNAVAILABLE, rpc_err_text(RPC_ERR_CONN_REFUSED));
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
    error_msg(msg, e, code, text);
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
            error_msg(&msg, &e, (int)ec_i64(err, "grpc_code"),
                      json_string_value(json_object_get(err, "message")));
    } else {
        reply_error(&msg, &e, r);
    }
    deliver(E, c->o.slot, c->o.epoch, c->o.sock, &msg);
    ec_free(&s);
    free(c);
}

static struct origin origin_of(struct run_etcd *E, int slot, net_sock sock, uint64_t call_id)
{
    return (struct origin){E, slot, E->b[slot].epoch, sock, call_id};
}

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
        error_msg(&msg, &e, RPC_CODE_UNAVAILABLE, rpc_err_text(RPC_ERR_TRANSPORT_CLOSING));
        deliver(E, x->o.slot, x->o.epoch, x->o.sock, &msg);
        return;
    }
    const json_t *r = json_object_get(m, "result");
    const json_t *err = json_object_get(m, "error");
    if (!r) {
        int code = err ? (int)ec_i64(err, "grpc_code") : RPC_CODE_UNKNOWN;
        const char *text = err ? json_string_value(json_object_get(err, "message")) : NULL;
        msg.stream_end = true;
        error_msg(&msg, &e, code ? code : RPC_CODE_UNKNOWN, text ? text : "watch stream error");
        x->dead = true;
        deliver(E, x->o.slot, x->o.epoch, x->o.sock, &msg);
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
    deliver(E, x->o.slot, x->o.epoch, x->o.sock, &msg);
    ec_free(&s);
}

static void watch_free(struct run_etcd *E, struct ewatch *x)
{
    RUN_UNLINK(E->watches, x);
    if (x->w)
        lv_etcd_watch_cancel(x->w);
    free(x);
}

/* Watches marked dead inside curl's callbacks, cancelled outside them. */
static void watches_sweep(struct run_etcd *E)
{
    struct ewatch *x = E->watches;
    while (x) {
        struct ewatch *next = x->next;
        if (x->dead)
            watch_free(E, x);
        x = next;
    }
}

/* After every turn of the loop (run_pacer): the watches that ended in it. */
static void pace_turn(void *ud)
{
    watches_sweep(ud);
}

static void watch_open(struct run_etcd *E, int slot, net_sock sock, const Rpc__ClientMsg *m)
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
    x->o = origin_of(E, slot, sock, m->call_id);
    RUN_LINK(E->watches, x);
    x->w = lv_etcd_watch_open_rl(&E->c.client, E->c.m[slot - 1].client_url, o, m->require_leader,
                                 on_watch_msg, x);
}

static void watch_close(struct run_etcd *E, int slot, net_sock sock, uint64_t call_id)
{
    for (struct ewatch *x = E->watches; x; x = x->next)
        if (x->o.slot == slot && x->o.sock == sock && (call_id == 0 || x->o.call_id == call_id))
            x->dead = true;
    watches_sweep(E);
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
        watch_close(E, slot, sock, m->call_id);
    } else if (m->req_case == RPC__CLIENT_MSG__REQ_WATCH) {
        watch_open(E, slot, sock, m);
    } else {
        json_t *body;
        const char *path = ec_request(m, &body);
        if (!path) {
            Rpc__ServerMsg msg = RPC__SERVER_MSG__INIT;
            Rpc__Error e;
            msg.call_id = m->call_id;
            msg.method = m->method;
            error_msg(&msg, &e, RPC_CODE_UNIMPLEMENTED, "not served on the etcd target");
            deliver(E, slot, E->b[slot].epoch, sock, &msg);
        } else {
            struct ecall *c = fl_calloc(1, sizeof *c);
            c->o = origin_of(E, slot, sock, m->call_id);
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
    watches_sweep(E);
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
    watches_sweep(E);
}

static void bridge_on_restart(struct sim_world *w, int proc, void *ctx)
{
    net_listen(w, proc, SRV_CLIENT_PORT, bridge_accept, ctx);
}

static void bridge_add(struct run_etcd *E, int slot)
{
    static const struct sim_proc_ops ops = {bridge_on_kill, bridge_on_restart};
    char name[16];
    snprintf(name, sizeof name, "n%d", slot);
    E->b[slot].slot = slot;
    E->b[slot].E = E;
    E->b[slot].proc = sim_proc_add(E->rw->w, name, &ops, E);
    net_listen(E->rw->w, E->b[slot].proc, SRV_CLIENT_PORT, bridge_accept, E);
}

/* ---- status polling ------------------------------------------------------------------ */

struct poll_arg {
    struct run_etcd *E;
    int slot;
};

static void node_event_f(struct run_etcd *E, int slot, const char *kind, uint64_t term,
                         const char *detail, const struct srv_event_fields *f)
{
    struct run_world *rw = E->rw;
    struct srv_event ev;
    memset(&ev, 0, sizeof ev);
    if (f)
        ev.f = *f;
    ev.at_ns = sim_now_ns(rw->w);
    ev.node = slot;
    ev.member_id = slot ? E->c.m[slot - 1].id : 0;
    ev.kind = kind;
    ev.term = term;
    ev.detail = detail;
    run_events_note(rw, &ev);
}

static void node_event(struct run_etcd *E, int slot, const char *kind, uint64_t term,
                       const char *detail)
{
    node_event_f(E, slot, kind, term, detail, NULL);
}

/* ---- Raft events from the members' logs ------------------------------------------------ */

/* "<16 hex> became candidate at term 7": the term after `what`, true when msg is that. */
static bool log_role(const char *msg, const char *what, uint64_t *term)
{
    const char *p = strchr(msg, ' ');
    if (!p || strncmp(p + 1, what, strlen(what)))
        return false;
    p += 1 + strlen(what);
    if (strncmp(p, " at term ", 9))
        return false;
    *term = strtoull(p + 9, NULL, 10);
    return true;
}

/* One line of member slot's log (etcd's zap JSON): the Raft events etcd logs become
 * node events, recorded as read from its log: a role change of its Raft node
 * (pre-candidate: prevote, candidate: campaign, leader to follower: step_down), a
 * local snapshot ("triggering snapshot"), a snapshot sent to a peer ("sent database
 * snapshot", remote-peer-id) or applied ("applied snapshot"). Leader changes stay
 * those of Status polling. */
static void log_line(struct run_etcd *E, int slot, const char *line, size_t len)
{
    json_t *o = json_loadb(line, len, JSON_DECODE_INT_AS_REAL, NULL);
    const char *msg = json_string_value(json_object_get(o, "msg"));
    struct bridge *b = &E->b[slot];
    uint64_t term = b->st.raft_term;
    struct srv_event_fields f;
    memset(&f, 0, sizeof f);
    const char *kind = NULL, *detail = "seen in the member's log";
    if (!msg) {
        /* not a JSON log line */
    } else if (log_role(msg, "became pre-candidate", &term)) {
        kind = SRV_EV_PREVOTE;
        b->log_leader = false;
    } else if (log_role(msg, "became candidate", &term)) {
        kind = SRV_EV_CAMPAIGN;
        b->log_leader = false;
    } else if (log_role(msg, "became leader", &term)) {
        b->log_leader = true;
    } else if (log_role(msg, "became follower", &term)) {
        if (b->log_leader) {
            kind = SRV_EV_STEP_DOWN;
            f.from_state = "leader";
            f.to_state = "follower";
        }
        b->log_leader = false;
    } else if (!strcmp(msg, "triggering snapshot")) {
        kind = SRV_EV_SNAPSHOT;
        f.index = (uint64_t)json_number_value(json_object_get(o, "local-member-applied-index"));
    } else if (!strcmp(msg, "sent database snapshot")) {
        kind = SRV_EV_SNAPSHOT_SENT;
        const char *to = json_string_value(json_object_get(o, "remote-peer-id"));
        f.peer = to ? slot_of_member(E, strtoull(to, NULL, 16)) : 0;
        f.index = (uint64_t)json_number_value(json_object_get(o, "snapshot-index"));
    } else if (!strcmp(msg, "applied snapshot")) {
        kind = SRV_EV_SNAPSHOT_APPLIED;
    }
    if (msg && strstr(msg, " at term ") && term > b->log_term)
        b->log_term = term;
    if (kind && !E->closing)
        node_event_f(E, slot, kind, term, detail, &f);
    json_decref(o);
}

/* What every member wrote to its log since the last look, line by line. */
static void logs_scan(struct run_etcd *E)
{
    for (int i = 1; i <= E->n; i++) {
        struct bridge *b = &E->b[i];
        const char *path = E->c.m[i - 1].log_path;
        FILE *f = path ? fopen(path, "rb") : NULL;
        if (!f)
            continue;
        if (fseek(f, b->log_off, SEEK_SET) == 0) {
            char chunk[65536];
            size_t n;
            while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
                b->log_off += (long)n;
                fl_buf_append(&b->log_part, chunk, n);
            }
        }
        fclose(f);
        size_t start = 0;
        const char *d = (const char *)b->log_part.data;
        for (size_t k = 0; k < b->log_part.len; k++)
            if (d[k] == '\n') {
                log_line(E, i, d + start, k - start);
                start = k + 1;
            }
        if (start) { /* keep the partial last line */
            memmove(b->log_part.data, d + start, b->log_part.len - start);
            b->log_part.len -= start;
        }
    }
}

/* The leader as polling sees it: of the members that run and answered Status, one that
 * names itself leader, the one with the highest term (a deposed leader cut off from
 * the others may still name itself, at an older term: etcd 3.4 runs without
 * check-quorum by default). 0 when none does. */
static int polled_leader(struct run_etcd *E, uint64_t *term)
{
    int best = 0;
    *term = 0;
    for (int i = 1; i <= E->n; i++) {
        const struct lv_proc *p = &E->c.m[i - 1].proc;
        const struct bridge *b = &E->b[i];
        if (!p->running || p->paused || !b->st_ok || !b->st.leader)
            continue;
        if (b->st.leader == E->c.m[i - 1].id && (!best || b->st.raft_term > *term)) {
            best = i;
            *term = b->st.raft_term;
        }
    }
    return best;
}

static void poll_note(struct run_etcd *E)
{
    uint64_t term;
    int slot = polled_leader(E, &term);
    if (!slot || E->closing)
        return;
    uint64_t id = E->c.m[slot - 1].id;
    if (id == E->leader_id && term == E->term)
        return;
    E->leader_id = id;
    E->term = term;
    char d[96];
    snprintf(d, sizeof d, "seen by Maintenance Status polling (every %d ms)", POLL_MS);
    node_event(E, slot, SRV_EV_LEADER, term, d);
}

static void on_poll_reply(const struct lv_etcd_reply *r, void *arg)
{
    struct poll_arg *a = arg;
    struct run_etcd *E = a->E;
    struct bridge *b = &E->b[a->slot];
    E->polls_out--;
    b->st_ok = r->http_status == 200 && r->resp;
    if (b->st_ok) {
        const json_t *h = json_object_get(r->resp, "header");
        memset(&b->st, 0, sizeof b->st);
        b->st.member_id = (uint64_t)ec_i64(h, "member_id");
        b->cluster_id = (uint64_t)ec_i64(h, "cluster_id");
        b->st.revision = (uint64_t)ec_i64(h, "revision");
        b->st.leader = (uint64_t)ec_i64(r->resp, "leader");
        b->st.raft_term = (uint64_t)ec_i64(r->resp, "raftTerm");
        b->st.raft_index = (uint64_t)ec_i64(r->resp, "raftIndex");
        b->st.raft_applied_index = (uint64_t)ec_i64(r->resp, "raftAppliedIndex");
        b->st.db_size = (uint64_t)ec_i64(r->resp, "dbSize");
        b->st.db_size_in_use = (uint64_t)ec_i64(r->resp, "dbSizeInUse");
        b->st.is_learner = ec_bool(r->resp, "isLearner");
        const char *v = json_string_value(json_object_get(r->resp, "version"));
        snprintf(b->st.version, sizeof b->st.version, "%s", v ? v : "");
    }
    free(a);
    if (E->polls_out == 0)
        poll_note(E);
}

/* A member killed by its crash failpoint (strace's SIGKILL at a WAL call): its bridge
 * dies too, as kill() does it, at the wall time the poll saw the member gone. */
static void fp_crash_fire(struct sim_world *w, void *ctx)
{
    struct bridge *b = ctx;
    if (sim_proc_state(w, b->proc) == SIM_PROC_UP)
        sim_proc_kill(w, b->proc);
    b->st_ok = false;
}

static void on_poll_timer(uv_timer_t *t)
{
    struct run_etcd *E = t->data;
    logs_scan(E);
    if ((E->rw->checks & RUN_CHECK_CONVERGE) && !E->closing &&
        run_target_wall_s() >= E->checkpoint_at_s + CHECKPOINT_MS / 1000.0) {
        E->checkpoint_at_s = run_target_wall_s();
        checkpoint(E);
    }
    if (E->polls_out > 0)
        return;
    for (int i = 1; i <= E->n; i++) {
        struct lv_etcd_member *m = &E->c.m[i - 1];
        if (!m->proc.running && E->b[i].fp_on && E->b[i].fp_crash && !E->b[i].fp_crashed) {
            E->b[i].fp_crashed = true; /* died of the failpoint: its bridge dies too */
            sim_schedule_at(E->rw->w, run_pacer_arrival(&E->pace, E->rw->w), fp_crash_fire,
                            &E->b[i]);
        }
        if (!m->proc.running || m->proc.paused) {
            E->b[i].st_ok = false;
            continue;
        }
        struct poll_arg *a = fl_calloc(1, sizeof *a);
        a->E = E;
        a->slot = i;
        E->polls_out++;
        lv_etcd_call(&E->c.client, m->direct_url, "/v3/maintenance/status", json_object(), 1000,
                     on_poll_reply, a);
    }
}

/* ---- set-up and close ----------------------------------------------------------------- */

/* The version `BIN --version` prints ("etcd Version: 3.4.23") as major*10000 +
 * minor*100 + patch, and its text in text; 0 when it cannot be read. */
static int etcd_bin_version(const char *bin, char *text, size_t text_len)
{
    struct fl_buf cmd;
    fl_buf_init(&cmd);
    fl_buf_printf(&cmd, "'");
    for (const char *p = bin; *p; p++)
        fl_buf_printf(&cmd, *p == '\'' ? "'\\''" : "%c", *p);
    fl_buf_printf(&cmd, "' --version 2>/dev/null");
    FILE *f = popen(fl_buf_cstr(&cmd), "r");
    fl_buf_close(&cmd);
    int v = 0, a, b, c;
    char line[256];
    snprintf(text, text_len, "?");
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "etcd Version: %d.%d.%d", &a, &b, &c) == 3 && !v) {
            v = a * 10000 + b * 100 + c;
            snprintf(text, text_len, "%d.%d.%d", a, b, c);
        }
    if (f)
        pclose(f);
    return v;
}

/* What etcd cannot be configured to do: the scenario cannot run there. snapshot_catchup
 * (entries kept after a snapshot for slow followers) is a constant of etcd 3.4
 * (embed/config.go: "Always use DefaultSnapshotCatchUpEntries", 5000); etcd 3.5.7 made
 * it --experimental-snapshot-catchup-entries. */
static int etcd_cluster_refuse(const struct run_cluster_config *c, const char *bin, char *err,
                               size_t err_len)
{
    if (!c->snapshot_catchup)
        return FL_OK;
    char text[32];
    if (etcd_bin_version(bin, text, sizeof text) >= 30507)
        return FL_OK;
    snprintf(err, err_len,
             "cluster.snapshot_catchup = %d: cannot run on etcd %s: needs "
             "--snapshot-catchup-entries (etcd 3.4 keeps a fixed 5000 entries after a snapshot; "
             "etcd >= 3.5.7 has --experimental-snapshot-catchup-entries)",
             c->snapshot_catchup, text);
    return FL_EINVAL;
}

/* scenario{ cluster = {...} } as etcd flags, where etcd has one; what it has none for
 * is named in the summary ("cluster_ignored"). Pre-vote follows our default (on),
 * etcd 3.4's is off; check-quorum is always on in etcd 3.4's server. snapshot_catchup
 * reaches here only for an etcd that has its flag (etcd_cluster_refuse). */
static void etcd_flags(struct run_world *rw, const struct run_cluster_config *c, char vals[8][32],
                       const char **extra)
{
    int n = 0, v = 0;
#define FLAG(name, ...)                                                                            \
    do {                                                                                           \
        snprintf(vals[v], sizeof vals[v], __VA_ARGS__);                                            \
        extra[n++] = name;                                                                         \
        extra[n++] = vals[v++];                                                                    \
    } while (0)
    FLAG("--heartbeat-interval", "%d", c->heartbeat_ms ? c->heartbeat_ms : 100);
    FLAG("--election-timeout", "%d", c->election_ms ? c->election_ms : 1000);
    extra[n++] = c->prevote == 0 ? "--pre-vote=false" : "--pre-vote=true";
    if (c->snapshot_count)
        FLAG("--snapshot-count", "%d", c->snapshot_count);
    if (c->quota_bytes)
        FLAG("--quota-backend-bytes", "%lld", (long long)c->quota_bytes);
    if (c->auto_compaction_mode) {
        extra[n++] = c->auto_compaction_mode == 1 ? "--auto-compaction-mode=revision"
                                                  : "--auto-compaction-mode=periodic";
        if (c->auto_compaction_mode == 1)
            FLAG("--auto-compaction-retention", "%lld", (long long)c->auto_compaction_retention);
        else
            FLAG("--auto-compaction-retention", "%lldms", (long long)c->auto_compaction_retention);
    }
    if (c->progress_notify_ms > 0)
        FLAG("--experimental-watch-progress-notify-interval", "%dms", c->progress_notify_ms);
    if (c->snapshot_catchup)
        FLAG("--experimental-snapshot-catchup-entries", "%d", c->snapshot_catchup);
    if (c->loose_reconfig)
        extra[n++] = "--strict-reconfig-check=false";
#undef FLAG
    extra[n] = NULL;
    FL_ASSERT(n <= LV_ETCD_EXTRA_MAX && v <= 8);
    json_t *ignored = json_array();
    if (c->check_quorum == 0)
        json_array_append_new(ignored, json_string("check_quorum (always on in etcd 3.4)"));
    if (c->fsync_us)
        json_array_append_new(ignored, json_string("fsync_us"));
    if (c->net_latency_us || c->net_jitter_us)
        json_array_append_new(ignored, json_string("net_latency_us/net_jitter_us"));
    if (c->max_msg_bytes)
        json_array_append_new(ignored, json_string("max_msg_bytes"));
    if (c->watch_buffer)
        json_array_append_new(ignored, json_string("watch_buffer"));
    if (json_array_size(ignored))
        run_summary_set(rw, "cluster_ignored", ignored);
    else
        json_decref(ignored);
}

int run_etcd_setup(struct run_world *rw, const struct run_cluster_config *cfg, char *err,
                   size_t err_len)
{
    int n = cfg->nodes ? cfg->nodes : 3;
    if (n < 1 || n > LV_NODES_MAX) {
        snprintf(err, err_len, "cluster.nodes must be in [1, %d] on the etcd target", LV_NODES_MAX);
        return FL_EINVAL;
    }
    char *bin = lv_etcd_find();
    if (!bin) {
        snprintf(err, err_len,
                 "target etcd: no etcd binary ($FL_ETCD, or etcd on PATH; Debian: apt-get "
                 "install etcd-server, or make deps ETCD=1)");
        return FL_EINVAL;
    }
    if (etcd_cluster_refuse(cfg, bin, err, err_len)) {
        free(bin);
        return FL_EINVAL;
    }
    struct run_etcd *E = fl_calloc(1, sizeof *E);
    rw->etcd = E;
    E->rw = rw;
    E->n = n;
    uv_loop_init(&E->loop);
    E->loop_open = true;
    struct fl_buf eb;
    fl_buf_init(&eb);
    int rc = lv_workdir_open(&E->wd, rw->target.workdir, rw->target.keep, &eb);
    E->bin = bin;
    if (!rc) {
        E->wd_open = true;
        etcd_flags(rw, cfg, E->flag_vals, E->flags);
        rc = lv_etcd_cluster_start_args(&E->c, &E->loop, &E->wd, n, bin, E->flags, START_MS, &eb);
        E->cluster_open = true;
    }
    if (rc) {
        snprintf(err, err_len, "target etcd: %s", fl_buf_cstr(&eb));
        fl_buf_close(&eb);
        return rc;
    }
    fl_buf_close(&eb);
    struct lv_etcd_status st;
    if (!lv_etcd_status(&E->c.client, E->c.m[0].direct_url, 2000, &st, NULL))
        snprintf(E->version, sizeof E->version, "%s", st.version);
    for (int i = 1; i <= n; i++)
        bridge_add(E, i);
    uv_timer_init(&E->loop, &E->poll);
    E->poll.data = E;
    E->poll_open = true;
    uv_timer_start(&E->poll, on_poll_timer, 0, POLL_MS);
    run_pacer_init(&E->pace, &E->loop, rw->w); /* the scenario's clock starts here */
    E->pace.turn = pace_turn;
    E->pace.turn_ud = E;
    return FL_OK;
}

static void on_closed(uv_handle_t *h)
{
    (void)h;
}

void run_etcd_close(struct run_world *rw)
{
    struct run_etcd *E = rw->etcd;
    if (!E)
        return;
    E->closing = true; /* the loop still runs while members die: polls answer late */
    checkpoint_stop(E);
    while (E->watches)
        watch_free(E, E->watches);
    if (E->poll_open) {
        uv_timer_stop(&E->poll);
        uv_close((uv_handle_t *)&E->poll, on_closed);
        run_pacer_close(&E->pace);
    }
    if (E->cluster_open)
        lv_etcd_cluster_close(&E->c); /* cancels the calls in flight, without callbacks */
    while (E->calls) {
        struct ecall *c = E->calls;
        RUN_UNLINK(E->calls, c);
        free(c);
    }
    while (E->ctls) {
        struct ectl *c = E->ctls;
        RUN_UNLINK(E->ctls, c);
        json_decref(c->resp);
        fl_buf_close(&c->data);
        free(c);
    }
    while (E->deliveries) {
        struct delivery *d = E->deliveries;
        RUN_UNLINK(E->deliveries, d);
        free(d->frame);
        free(d);
    }
    if (E->loop_open) {
        uv_run(&E->loop, UV_RUN_NOWAIT);
        uv_loop_close(&E->loop);
    }
    for (int i = 0; i <= LV_NODES_MAX; i++)
        fl_buf_close(&E->b[i].log_part);
    if (E->wd_open)
        lv_workdir_close(&E->wd);
    free(E->bin);
    json_decref(E->corruption);
    free(E);
    rw->etcd = NULL;
}

/* ---- pacing ---------------------------------------------------------------------------- */

void run_etcd_pace(struct run_world *rw, int64_t t_ns)
{
    run_pacer_pace(rw, &rw->etcd->pace, t_ns);
}

void run_etcd_advance(struct run_world *rw, int64_t until_ns)
{
    run_pacer_advance(rw, &rw->etcd->pace, until_ns);
}

/* ---- cluster view ----------------------------------------------------------------------- */

int run_etcd_slots(struct run_world *rw)
{
    return rw->etcd ? rw->etcd->n : 0;
}

int run_etcd_node_proc(struct run_world *rw, int node)
{
    struct run_etcd *E = rw->etcd;
    if (!E || node < 1 || node > E->n)
        return -1;
    return E->b[node].proc;
}

bool run_etcd_removed(struct run_world *rw, int node)
{
    struct run_etcd *E = rw->etcd;
    return E && node >= 1 && node <= E->n && E->b[node].removed;
}

bool run_etcd_alive(struct run_world *rw, int node)
{
    struct run_etcd *E = rw->etcd;
    return E && node >= 1 && node <= E->n && E->c.m[node - 1].proc.running;
}

int run_etcd_leader(struct run_world *rw)
{
    uint64_t term;
    return rw->etcd ? polled_leader(rw->etcd, &term) : 0;
}

const char *run_etcd_version(struct run_world *rw)
{
    return rw->etcd ? rw->etcd->version : "";
}

int run_etcd_node_status(struct run_world *rw, int id, struct run_node_status *out)
{
    struct run_etcd *E = rw->etcd;
    memset(out, 0, sizeof *out);
    if (!E || id < 1 || id > E->n)
        return FL_ENOENT;
    const struct lv_etcd_member *m = &E->c.m[id - 1];
    const struct bridge *b = &E->b[id];
    out->alive = m->proc.running;
    out->removed = b->removed;
    out->paused = m->proc.paused;
    out->member_id = m->id;
    out->version = E->version;
    out->leader_contact_ns = -1;
    if (!out->alive || !b->st_ok)
        return FL_OK;
    out->cluster_id = b->cluster_id;
    out->leader_id = b->st.leader;
    out->leader_node = slot_of_member(E, b->st.leader);
    out->is_leader = b->st.leader == m->id;
    out->learner = b->st.is_learner;
    out->term = FL_MAX(b->st.raft_term, b->log_term);
    out->status_term = b->st.raft_term;
    out->last_index = b->st.raft_index;
    out->commit = b->st.raft_index;
    out->applied = b->st.raft_applied_index;
    out->revision = (int64_t)b->st.revision;
    out->db_size = (int64_t)b->st.db_size;
    out->db_size_in_use = (int64_t)b->st.db_size_in_use;
    return FL_OK;
}

/* ---- faults ------------------------------------------------------------------------------ */

void run_etcd_node_fault(struct run_world *rw, int id, const char *kind)
{
    struct run_etcd *E = rw->etcd;
    struct lv_etcd_member *m = &E->c.m[id - 1];
    int proc = E->b[id].proc;
    struct fl_buf err;
    fl_buf_init(&err);
    if (!strcmp(kind, "kill")) {
        lv_etcd_wal_fault_off(&E->c, id - 1); /* its strace; re-attached at the restart */
        lv_proc_kill(&m->proc);
        sim_proc_kill(rw->w, proc);
        E->b[id].st_ok = false; /* healthy again only once a Status poll is answered */
    } else if (!strcmp(kind, "restart")) {
        if (!m->proc.argv) {
            /* a slot whose etcd never ran (a member_add whose member did not start):
             * nothing to restart (lv_proc_restart would read no arguments) */
        } else if (!m->proc.running && lv_proc_restart(&m->proc, &err)) {
            fl_log(FL_LOG_ERROR, "target etcd: restart of %s: %s", m->name, fl_buf_cstr(&err));
        } else if (m->proc.running && E->b[id].fp_on && !(m->tracer_init && m->tracer.running) &&
                   fp_attach(E, id, &err)) { /* a failpoint stays on across a restart */
            fl_log(FL_LOG_ERROR, "target etcd: failpoint on %s after restart: %s", m->name,
                   fl_buf_cstr(&err));
        }
        if (sim_proc_state(rw->w, proc) == SIM_PROC_DOWN)
            sim_proc_restart(rw->w, proc);
    } else if (!strcmp(kind, "pause")) {
        if (m->proc.running && !m->proc.paused)
            lv_proc_pause(&m->proc);
        if (sim_proc_state(rw->w, proc) == SIM_PROC_UP)
            sim_proc_pause(rw->w, proc);
    } else {
        if (m->proc.paused)
            lv_proc_resume(&m->proc);
        if (sim_proc_state(rw->w, proc) == SIM_PROC_PAUSED)
            sim_proc_resume(rw->w, proc);
    }
    fl_buf_close(&err);
}

void run_etcd_set_prevote(struct run_world *rw, int id, bool on)
{
    struct run_etcd *E = rw->etcd;
    char **argv = E->c.m[id - 1].proc.argv;
    for (size_t i = 0; argv && argv[i]; i++)
        if (!strncmp(argv[i], "--pre-vote=", strlen("--pre-vote="))) {
            free(argv[i]);
            argv[i] = fl_strdup(on ? "--pre-vote=true" : "--pre-vote=false");
        }
}

void run_etcd_net_sync(struct run_world *rw)
{
    struct run_etcd *E = rw->etcd;
    if (!E)
        return;
    for (int i = 1; i <= E->n; i++)
        for (int j = 1; j <= E->n; j++) {
            if (i == j)
                continue;
            struct lv_link *l = lv_net_link(&E->c.net, i - 1, j - 1);
            int pi = E->b[i].proc, pj = E->b[j].proc;
            l->cut = net_blocked(rw->w, pi, pj);
        }
    lv_net_update(&E->c.net);
}

void run_etcd_clog(struct run_world *rw, int from_proc, int to_proc, bool on)
{
    struct run_etcd *E = rw->etcd;
    if (!E)
        return;
    for (int i = 1; i <= E->n; i++)
        for (int j = 1; j <= E->n; j++)
            if (i != j && (from_proc < 0 || from_proc == E->b[i].proc) &&
                (to_proc < 0 || to_proc == E->b[j].proc))
                lv_net_link(&E->c.net, i - 1, j - 1)->clog = on;
    lv_net_update(&E->c.net);
}

/* ---- control calls ----------------------------------------------------------------------- */

/* MemberAdd answered: start the new member with the cluster MemberAdd lists, give it
 * a bridge at the next slot and every client that endpoint; refused: undo the
 * preparation. */
static void member_add_finish(struct run_etcd *E, struct ectl *c)
{
    int idx = c->add_idx;
    if (c->code != 0 || !c->resp) {
        lv_etcd_cluster_member_unprepare(&E->c, idx);
        return;
    }
    const json_t *me = json_object_get(c->resp, "member"),
                 *ms = json_object_get(c->resp, "members");
    uint64_t id = (uint64_t)ec_i64(me, "ID");
    struct fl_buf cluster, err;
    fl_buf_init(&cluster);
    fl_buf_init(&err);
    size_t i;
    json_t *m;
    json_array_foreach(ms, i, m)
    {
        uint64_t mid = (uint64_t)ec_i64(m, "ID");
        const char *name = json_string_value(json_object_get(m, "name"));
        if (mid == id || !name || !name[0])
            name = mid == id ? E->c.m[idx].name : NULL;
        const char *url = json_string_value(json_array_get(json_object_get(m, "peerURLs"), 0));
        if (name && url)
            fl_buf_printf(&cluster, "%s%s=%s", cluster.len ? "," : "", name, url);
    }
    if (lv_etcd_cluster_member_start(&E->c, idx, E->bin, id, fl_buf_cstr(&cluster), E->flags,
                                     &err)) {
        c->code = RPC_CODE_UNKNOWN;
        snprintf(c->text, sizeof c->text, "target etcd: %s", fl_buf_cstr(&err));
    } else {
        E->n = E->c.n;
        bridge_add(E, idx + 1);
        c->node = idx + 1;
    }
    fl_buf_close(&cluster);
    fl_buf_close(&err);
}

static void ectl_fire(struct sim_world *w, void *ctx)
{
    (void)w;
    struct ectl *c = ctx;
    struct run_etcd *E = c->E;
    RUN_UNLINK(E->ctls, c);
    if (c->add_idx >= 0)
        member_add_finish(E, c);
    if (c->removing && c->code == 0)
        E->b[c->removing].removed = true;
    struct run_ctl_result r = {.code = c->code,
                               .text = c->text,
                               .node = c->node,
                               .revision = c->revision,
                               .data = c->code == 0 ? c->data.data : NULL,
                               .len = c->code == 0 ? c->data.len : 0};
    if (c->done)
        c->done(c->ud, &r);
    json_decref(c->resp);
    fl_buf_close(&c->data);
    free(c);
}

/* A finished control call enters the world at the wall time it finished. */
static void ectl_enter(struct run_etcd *E, struct ectl *c)
{
    sim_schedule_at(E->rw->w, run_pacer_arrival(&E->pace, E->rw->w), ectl_fire, c);
}

static void on_ctl_reply(const struct lv_etcd_reply *r, void *arg)
{
    struct ectl *c = arg;
    struct run_etcd *E = c->E;
    if (r->http_status == 200) {
        c->code = 0;
        c->revision = r->resp ? ec_i64(json_object_get(r->resp, "header"), "revision") : 0;
        c->resp = r->resp ? json_incref(r->resp) : NULL;
    } else {
        Rpc__ServerMsg msg = RPC__SERVER_MSG__INIT;
        Rpc__Error e;
        reply_error(&msg, &e, r);
        c->code = e.code;
        snprintf(c->text, sizeof c->text, "%s", e.message);
    }
    ectl_enter(E, c);
}

/* alarm_disarm: the list (GET) came, or one DEACTIVATE finished: the next, or done. */
static void on_disarm_reply(const struct lv_etcd_reply *r, void *arg)
{
    struct ectl *c = arg;
    struct run_etcd *E = c->E;
    if (r->http_status != 200) {
        on_ctl_reply(r, c);
        return;
    }
    if (!c->resp) /* the GET's answer: the alarms to deactivate */
        c->resp = json_incref(json_object_get(r->resp, "alarms") ? r->resp : json_object());
    const json_t *list = json_object_get(c->resp, "alarms");
    if (c->disarm_next >= json_array_size(list)) {
        json_decref(c->resp);
        c->resp = NULL;
        on_ctl_reply(r, c);
        return;
    }
    const json_t *a = json_array_get(list, c->disarm_next++);
    json_t *body = json_object();
    json_object_set_new(body, "action", json_string("DEACTIVATE"));
    ec_set_u64(body, "memberID", lv_json_u64(a, "memberID"));
    const char *t = json_string_value(json_object_get(a, "alarm"));
    json_object_set_new(body, "alarm", json_string(t ? t : "NONE"));
    lv_etcd_call(&E->c.client, E->c.m[c->disarm_at - 1].client_url, "/v3/maintenance/alarm", body,
                 CALL_TIMEOUT_MS, on_disarm_reply, c);
}

/* One message of a Maintenance Snapshot stream ({"result":{"blob":..}} or
 * {"error":{..}}), or its end (m NULL). */
static void on_snapshot_msg(json_t *m, const struct lv_etcd_reply *end, void *arg)
{
    struct ectl *c = arg;
    struct run_etcd *E = c->E;
    if (m) {
        const json_t *r = json_object_get(m, "result"), *err = json_object_get(m, "error");
        if (json_is_object(err) && c->code == 0) {
            c->code = (int)ec_i64(err, "grpc_code");
            if (c->code == 0)
                c->code = RPC_CODE_UNKNOWN;
            const char *t = json_string_value(json_object_get(err, "message"));
            snprintf(c->text, sizeof c->text, "%s", t ? t : "snapshot stream error");
        } else if (r) {
            struct fl_buf blob;
            fl_buf_init(&blob);
            if (lv_b64_decode(json_object_get(r, "blob"), &blob)) {
                fl_buf_append(&c->data, blob.data, blob.len);
            } else if (c->code == 0) {
                c->code = RPC_CODE_INTERNAL;
                snprintf(c->text, sizeof c->text, "snapshot: a blob that is not base64");
            }
            fl_buf_close(&blob);
        }
        if (r)
            c->revision = ec_i64(json_object_get(r, "header"), "revision");
        return;
    }
    c->stream = NULL; /* freed by the transport after this call */
    if (c->code == 0 && (end->http_status != 200 || end->error[0])) {
        Rpc__ServerMsg msg = RPC__SERVER_MSG__INIT;
        Rpc__Error e;
        reply_error(&msg, &e, end);
        c->code = e.code ? e.code : RPC_CODE_UNAVAILABLE;
        snprintf(c->text, sizeof c->text, "%s", e.message);
    }
    ectl_enter(E, c);
}

void run_etcd_ctl(struct run_world *rw, const char *kind, int node, int64_t arg,
                  run_etcd_ctl_fn *done, void *ud)
{
    struct run_etcd *E = rw->etcd;
    struct ectl *c = fl_calloc(1, sizeof *c);
    c->E = E;
    c->done = done;
    c->ud = ud;
    c->add_idx = -1;
    RUN_LINK(E->ctls, c);
    /* where: the member named, else the leader, else the first member that runs */
    int at = node;
    if (!at)
        at = run_etcd_leader(rw);
    for (int i = 1; !at && i <= E->n; i++)
        if (E->c.m[i - 1].proc.running)
            at = i;
    if (!at)
        at = 1;
    json_t *body = json_object();
    const char *path;
    if (!strcmp(kind, "snapshot_save")) {
        fl_buf_init(&c->data);
        c->stream =
            lv_etcd_stream_open(&E->c.client, E->c.m[at - 1].client_url, "/v3/maintenance/snapshot",
                                body, SNAPSHOT_TIMEOUT_MS, on_snapshot_msg, c);
        return;
    }
    if (!strcmp(kind, "compact")) {
        path = "/v3/kv/compaction";
        ec_set_i64(body, "revision", arg);
    } else if (!strcmp(kind, "defrag")) {
        path = "/v3/maintenance/defragment";
    } else if (!strcmp(kind, "alarm_disarm")) {
        /* as etcdctl alarm disarm: list the alarms, then deactivate each (member, alarm)
         * (a DEACTIVATE names one member's alarm: memberID 0 deactivates nothing) */
        c->disarm_at = at;
        json_object_set_new(body, "action", json_string("GET"));
        lv_etcd_call(&E->c.client, E->c.m[at - 1].client_url, "/v3/maintenance/alarm", body,
                     CALL_TIMEOUT_MS, on_disarm_reply, c);
        return;
    } else if (!strcmp(kind, "member_add")) {
        struct fl_buf err;
        fl_buf_init(&err);
        if (lv_etcd_cluster_member_prepare(&E->c, &E->wd, &c->add_idx, &err)) {
            c->add_idx = -1;
            c->code = RPC_CODE_RESOURCE_EXHAUSTED;
            snprintf(c->text, sizeof c->text, "target etcd: %s", fl_buf_cstr(&err));
            fl_buf_close(&err);
            json_decref(body);
            sim_schedule(rw->w, 0, ectl_fire, c);
            return;
        }
        fl_buf_close(&err);
        path = "/v3/cluster/member/add";
        json_t *urls = json_array();
        json_array_append_new(urls, json_string(E->c.m[c->add_idx].peer_url));
        json_object_set_new(body, "peerURLs", urls);
        if (arg)
            json_object_set_new(body, "isLearner", json_true());
    } else if (!strcmp(kind, "member_remove") || !strcmp(kind, "member_promote")) {
        path = !strcmp(kind, "member_remove") ? "/v3/cluster/member/remove"
                                              : "/v3/cluster/member/promote";
        if (!strcmp(kind, "member_remove") && arg >= 1 && arg <= E->n)
            c->removing = (int)arg;
        ec_set_u64(body, "ID", arg >= 1 && arg <= E->n ? E->c.m[arg - 1].id : 0);
        if (at == arg)
            at = run_etcd_leader(rw) ? run_etcd_leader(rw) : at;
    } else {
        path = "/v3/maintenance/transfer-leadership";
        ec_set_u64(body, "targetID", arg >= 1 && arg <= E->n ? E->c.m[arg - 1].id : 0);
        at = run_etcd_leader(rw) ? run_etcd_leader(rw) : at;
    }
    lv_etcd_call(&E->c.client, E->c.m[at - 1].client_url, path, body, CALL_TIMEOUT_MS, on_ctl_reply,
                 c);
}

/* ---- backups, restore, convergence ------------------------------------------------------- */

static bool never_done(void *arg)
{
    (void)arg;
    return false;
}

int run_etcd_copy_db(struct run_world *rw, int node, uint8_t **data, size_t *len)
{
    struct run_etcd *E = rw->etcd;
    *data = NULL;
    *len = 0;
    if (!E || node < 1 || node > E->n)
        return FL_ENOENT;
    /* etcd's backend commits its write batch every 100 ms: what a copy taken now holds
     * of the writes just answered depends on that timer, so the copy waits for one
     * batch interval (and a half) first */
    lv_run_until(&E->loop, never_done, NULL, 150);
    struct fl_buf path, b;
    fl_buf_init(&path);
    fl_buf_init(&b);
    fl_buf_printf(&path, "%s/data/member/snap/db", E->c.m[node - 1].data_dir);
    FILE *f = fopen(fl_buf_cstr(&path), "rb");
    fl_buf_close(&path);
    if (!f)
        return FL_ENOENT;
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        fl_buf_append(&b, chunk, n);
    bool bad = ferror(f) != 0;
    fclose(f);
    if (bad || !b.len) {
        fl_buf_close(&b);
        return FL_ENOENT;
    }
    *data = b.data; /* the buffer's memory, now the caller's */
    *len = b.len;
    return FL_OK;
}

/* etcdctl's error: the text after its last "Error: ", else the last line. */
static void etcdctl_error(const char *out, char *err, size_t err_len)
{
    const char *p = NULL, *q = out;
    while ((q = strstr(q, "Error: ")) != NULL) {
        if (q == out || q[-1] == '\n')
            p = q + strlen("Error: ");
        q++;
    }
    if (!p) {
        size_t n = strlen(out);
        while (n && (out[n - 1] == '\n' || out[n - 1] == '\r'))
            n--;
        p = out + n;
        while (p > out && p[-1] != '\n')
            p--;
    }
    snprintf(err, err_len, "%.*s", (int)strcspn(p, "\r\n"), p);
}

/* The member answers Status (its id once restored): waits up to wait_ms. */
static uint64_t wait_member_id(struct run_etcd *E, int slot, int64_t wait_ms)
{
    double t0 = run_target_wall_s();
    while ((run_target_wall_s() - t0) * 1000.0 < (double)wait_ms) {
        struct lv_etcd_status st;
        if (!lv_etcd_status(&E->c.client, E->c.m[slot - 1].direct_url, 500, &st, NULL) &&
            st.member_id)
            return st.member_id;
        lv_run_until(&E->loop, never_done, NULL, 50);
    }
    return 0;
}

int run_etcd_restore(struct run_world *rw, const uint8_t *data, size_t len, const int *nodes,
                     int n_nodes, bool skip_hash_check, char *err, size_t err_len)
{
    static unsigned counter;
    struct run_etcd *E = rw->etcd;
    err[0] = 0;
    if (n_nodes <= 0 || n_nodes > E->n) {
        snprintf(err, err_len, "restore needs between 1 and %d nodes", E->n);
        return FL_EINVAL;
    }
    for (int i = 0; i < n_nodes; i++)
        if (nodes[i] < 1 || nodes[i] > E->n) {
            snprintf(err, err_len, "restore names a node that does not exist");
            return FL_EINVAL;
        }
    unsigned k = ++counter;
    struct fl_buf file, cluster, token, out, dir, log;
    fl_buf_init(&file);
    fl_buf_init(&cluster);
    fl_buf_init(&token);
    fl_buf_init(&out);
    fl_buf_init(&dir);
    fl_buf_init(&log);
    fl_buf_printf(&file, "%s/restore-%u.db", E->wd.path, k);
    fl_buf_printf(&log, "%s/etcdctl-restore-%u.log", E->wd.path, k);
    fl_buf_printf(&token, "%s-restore-%u", E->c.token, k);
    for (int i = 0; i < n_nodes; i++) {
        const struct lv_etcd_member *m = &E->c.m[nodes[i] - 1];
        fl_buf_printf(&cluster, "%s%s=%s", i ? "," : "", m->name, m->peer_url);
    }
    int rc = FL_OK;
    FILE *f = fopen(fl_buf_cstr(&file), "wb");
    if (!f || fwrite(data, 1, len, f) != len) {
        snprintf(err, err_len, "target etcd: cannot write %s", fl_buf_cstr(&file));
        rc = FL_EIO;
    }
    if (f && fclose(f) && !rc) {
        snprintf(err, err_len, "target etcd: cannot write %s", fl_buf_cstr(&file));
        rc = FL_EIO;
    }
    char *ctl = lv_etcdctl_find(E->bin);
    /* every new data directory first: a refusal (integrity, missing hash) touches no member */
    for (int i = 0; i < n_nodes && !rc; i++) {
        const struct lv_etcd_member *m = &E->c.m[nodes[i] - 1];
        fl_buf_reset(&dir);
        fl_buf_printf(&dir, "%s/data.r%u", m->data_dir, k);
        const char *argv[] = {ctl,
                              "snapshot",
                              "restore",
                              fl_buf_cstr(&file),
                              "--name",
                              m->name,
                              "--initial-cluster",
                              fl_buf_cstr(&cluster),
                              "--initial-cluster-token",
                              fl_buf_cstr(&token),
                              "--initial-advertise-peer-urls",
                              m->peer_url,
                              "--data-dir",
                              fl_buf_cstr(&dir),
                              skip_hash_check ? "--skip-hash-check" : NULL,
                              NULL};
        fl_buf_reset(&out);
        int st = lv_etcdctl_run(&E->loop, argv, fl_buf_cstr(&log), 30000, &out);
        if (st != 0) {
            etcdctl_error(fl_buf_cstr(&out), err, err_len);
            rc = st > 0 && st != 127 ? FL_ECORRUPT : FL_EIO;
        }
    }
    free(ctl);
    if (!rc) {
        /* the members stop, their data directories become the restored ones (the old
         * kept as data.old<k>), and they start as the new cluster */
        for (int i = 0; i < n_nodes; i++) {
            int slot = nodes[i];
            struct lv_etcd_member *m = &E->c.m[slot - 1];
            lv_proc_kill(&m->proc);
            if (sim_proc_state(rw->w, E->b[slot].proc) != SIM_PROC_DOWN)
                sim_proc_kill(rw->w, E->b[slot].proc);
            struct fl_buf from, to, old;
            fl_buf_init(&from);
            fl_buf_init(&to);
            fl_buf_init(&old);
            fl_buf_printf(&from, "%s/data.r%u", m->data_dir, k);
            fl_buf_printf(&to, "%s/data", m->data_dir);
            fl_buf_printf(&old, "%s/data.old%u", m->data_dir, k);
            if ((rename(fl_buf_cstr(&to), fl_buf_cstr(&old)) && errno != ENOENT) ||
                rename(fl_buf_cstr(&from), fl_buf_cstr(&to))) {
                snprintf(err, err_len, "target etcd: cannot switch %s to the restored data: %s",
                         fl_buf_cstr(&to), strerror(errno));
                rc = FL_EIO;
            }
            fl_buf_close(&from);
            fl_buf_close(&to);
            fl_buf_close(&old);
        }
        for (int i = 0; i < n_nodes && !rc; i++) {
            int slot = nodes[i];
            struct lv_etcd_member *m = &E->c.m[slot - 1];
            struct fl_buf perr;
            fl_buf_init(&perr);
            if (lv_proc_start(&m->proc, &perr)) {
                snprintf(err, err_len, "target etcd: restart of %s: %s", m->name,
                         fl_buf_cstr(&perr));
                rc = FL_EIO;
            }
            fl_buf_close(&perr);
            sim_proc_restart(rw->w, E->b[slot].proc);
            E->b[slot].removed = false;
            E->b[slot].st_ok = false;
            E->b[slot].log_term = 0; /* a restored member starts a new cluster at term 1 */
        }
        /* their new ids (etcd derives them from the new token): for the peer proxies'
         * attribution and for status() */
        for (int i = 0; i < n_nodes && !rc; i++) {
            int slot = nodes[i];
            uint64_t id = wait_member_id(E, slot, 10000);
            if (!id) {
                snprintf(err, err_len, "target etcd: restored member %s does not answer",
                         E->c.m[slot - 1].name);
                rc = FL_EIO;
                break;
            }
            E->c.m[slot - 1].id = id;
            E->c.ids.id[slot - 1] = id;
        }
        for (int i = 0; i < E->n && !rc; i++)
            lv_proxy_reset_unidentified(&E->c.proxy[i]);
    }
    fl_buf_close(&file);
    fl_buf_close(&cluster);
    fl_buf_close(&token);
    fl_buf_close(&out);
    fl_buf_close(&dir);
    fl_buf_close(&log);
    return rc;
}

/* etcdctl endpoint hashkv -w json's answer among its log lines: FL_OK with the hash
 * and the compact revision, else FL_EIO. */
static int hashkv_parse(const char *out, uint32_t *hash, int64_t *compact)
{
    /* stdout's one JSON line among stderr's log lines: the one that opens with '[' */
    const char *line = NULL;
    for (const char *q = out; q && *q; q = strchr(q, '\n') ? strchr(q, '\n') + 1 : NULL)
        if (*q == '[')
            line = q;
    /* member and cluster ids pass 2^63: numbers as reals (hash and revisions fit) */
    json_t *a = line ? json_loadb(line, strcspn(line, "\n"), JSON_DECODE_INT_AS_REAL, NULL) : NULL;
    const json_t *h = json_object_get(json_array_get(a, 0), "HashKV");
    int rc = FL_EIO;
    if (json_is_object(h)) {
        *hash = (uint32_t)json_number_value(json_object_get(h, "hash"));
        *compact = (int64_t)json_number_value(json_object_get(h, "compact_revision"));
        rc = FL_OK;
    }
    json_decref(a);
    return rc;
}

/* `etcdctl endpoint hashkv --rev REVS` against one member, as argv (HASHKV_ARGC entries,
 * the last NULL): the same command for the checkpoint that waits for it and for the
 * periodic check that does not. */
#define HASHKV_ARGC 12
static void hashkv_argv(struct run_etcd *E, int slot, char *ctl, char *revs, char **argv)
{
    char *a[HASHKV_ARGC] = {ctl,
                            "--endpoints",
                            E->c.m[slot - 1].direct_url,
                            "--command-timeout",
                            "2s",
                            "endpoint",
                            "hashkv",
                            "--rev",
                            revs,
                            "-w",
                            "json",
                            NULL};
    memcpy(argv, a, sizeof a);
}

/* HashKV of one member at revision rev through etcdctl (gRPC: the 3.4 gateway's
 * /v3/maintenance/hash is Hash, the whole backend's, not HashKV). FL_OK with the hash
 * and compact revision, else etcdctl's error in err. */
static int member_hash_kv(struct run_etcd *E, int slot, int64_t rev, uint32_t *hash,
                          int64_t *compact, char *err, size_t err_len)
{
    char *ctl = lv_etcdctl_find(E->bin), revs[32];
    snprintf(revs, sizeof revs, "%lld", (long long)rev);
    struct fl_buf log, out;
    fl_buf_init(&log);
    fl_buf_init(&out);
    fl_buf_printf(&log, "%s/etcdctl-hashkv.log", E->wd.path);
    char *argv[HASHKV_ARGC];
    hashkv_argv(E, slot, ctl, revs, argv);
    int st = lv_etcdctl_run(&E->loop, (const char *const *)argv, fl_buf_cstr(&log), 5000, &out);
    int rc = st == 0 ? hashkv_parse(fl_buf_cstr(&out), hash, compact) : FL_EIO;
    if (st != 0)
        etcdctl_error(fl_buf_cstr(&out), err, err_len);
    else if (rc)
        snprintf(err, err_len, "etcdctl endpoint hashkv: no answer in its output");
    free(ctl);
    fl_buf_close(&log);
    fl_buf_close(&out);
    return rc;
}

bool run_etcd_converged(struct run_world *rw, json_t **state)
{
    struct run_etcd *E = rw->etcd;
    json_t *d = json_object(), *members = json_array();
    *state = d;
    json_object_set_new(d, "members", members);
    json_object_set_new(d, "how",
                        json_string("etcdctl endpoint hashkv at the revision every "
                                    "member of the leader's cluster reports"));
    int lead = run_etcd_leader(rw);
    if (!lead) {
        json_object_set_new(d, "why", json_string("no leader"));
        return false;
    }
    uint64_t cluster = E->b[lead].cluster_id;
    int slots[LV_NODES_MAX], n = 0;
    int64_t rev = -1;
    bool same = true;
    for (int i = 1; i <= E->n; i++) {
        const struct lv_etcd_member *m = &E->c.m[i - 1];
        /* removed, or a member of another cluster (the stale one after a restore, by
         * its last Status) does not count */
        if (E->b[i].removed || (E->b[i].cluster_id && E->b[i].cluster_id != cluster))
            continue;
        /* the last polled Status (a member that is not ready, e.g. cut off from its
         * quorum at start, leaves a call hanging: no waiting on it here) */
        const struct lv_etcd_status *st = &E->b[i].st;
        bool up = m->proc.running && !m->proc.paused && E->b[i].st_ok;
        json_t *o = json_object();
        json_object_set_new(o, "node", json_integer(i));
        json_array_append_new(members, o);
        if (!up) {
            json_object_set_new(o, "state", json_string("down or not answering Status"));
            same = false;
            continue;
        }
        json_object_set_new(o, "revision", json_integer((json_int_t)st->revision));
        if (rev >= 0 && (int64_t)st->revision != rev)
            same = false;
        rev = (int64_t)st->revision;
        slots[n++] = i;
    }
    if (!same || !n) {
        json_object_set_new(
            d, "why", json_string(n ? "members at different revisions" : "no member answers"));
        return false;
    }
    json_object_set_new(d, "revision", json_integer(rev));
    bool ok = true;
    uint32_t hash0 = 0;
    int64_t compact0 = 0;
    for (int k = 0; k < n; k++) {
        uint32_t h = 0;
        int64_t compact = 0;
        char err[256] = "";
        json_t *o = NULL;
        size_t idx;
        json_t *v;
        json_array_foreach(members, idx, v)
        {
            if (json_integer_value(json_object_get(v, "node")) == slots[k])
                o = v;
        }
        if (member_hash_kv(E, slots[k], rev, &h, &compact, err, sizeof err)) {
            json_object_set_new(o, "error", json_string(err));
            ok = false;
            continue;
        }
        json_object_set_new(o, "hash", json_integer(h));
        json_object_set_new(o, "compact_revision", json_integer(compact));
        if (k == 0) {
            hash0 = h;
            compact0 = compact;
        } else if (h != hash0 || compact != compact0) {
            ok = false;
        }
    }
    if (!ok)
        json_object_set_new(d, "why", json_string("HashKV differs (or failed) at one revision"));
    return ok;
}

/* A checkpoint of converge (etcd's corruption check, from outside): the lowest revision
 * every running member of the leader's cluster has reached, if new, hashed by HashKV on
 * each, by etcdctl processes run alongside (uv_spawn: the run does not wait for them;
 * each has its own 2 s command timeout). A member whose HashKV fails there (compacted
 * past it, not answering) is left out of that comparison. */
struct ckpt_job {
    struct ckpt *k;
    uv_process_t proc;
    int slot;
    bool done, ok;
    uint32_t hash;
    int64_t compact;
    char log[4200];
};

struct ckpt {
    struct run_etcd *E;
    int64_t rev;
    int n, running;
    struct ckpt_job job[LV_NODES_MAX];
};

static void ckpt_finish(struct ckpt *k)
{
    struct run_etcd *E = k->E;
    json_t *seen = json_array();
    int compared = 0;
    bool differ = false;
    uint32_t hash0 = 0;
    int64_t compact0 = 0;
    for (int i = 0; i < k->n; i++) {
        struct ckpt_job *j = &k->job[i];
        /* as etcd's own corruption check: hashes compare only at one compact revision
         * (a compaction is applied by each member in its own time) */
        if (!j->ok || (compared && j->compact != compact0))
            continue;
        json_array_append_new(seen,
                              json_pack("{s:i,s:I}", "node", j->slot, "hash", (json_int_t)j->hash));
        if (compared++ == 0) {
            hash0 = j->hash;
            compact0 = j->compact;
        } else if (j->hash != hash0) {
            differ = true;
        }
    }
    if (compared >= 2 && !E->closing)
        E->checkpoints++;
    if (differ && !E->corruption && !E->closing)
        E->corruption = json_pack("{s:I,s:o}", "revision", (json_int_t)k->rev, "members", seen);
    else
        json_decref(seen);
    if (E->ckpt == k)
        E->ckpt = NULL;
    free(k);
}

static void ckpt_closed(uv_handle_t *h)
{
    struct ckpt_job *j = h->data;
    struct ckpt *k = j->k;
    if (--k->running == 0)
        ckpt_finish(k);
}

static void ckpt_exit(uv_process_t *p, int64_t status, int sig)
{
    struct ckpt_job *j = p->data;
    j->done = true;
    if (status == 0 && sig == 0) {
        struct fl_buf out;
        fl_buf_init(&out);
        FILE *f = fopen(j->log, "r");
        char chunk[4096];
        size_t n;
        while (f && (n = fread(chunk, 1, sizeof chunk, f)) > 0)
            fl_buf_append(&out, chunk, n);
        if (f)
            fclose(f);
        j->ok = hashkv_parse(fl_buf_cstr(&out), &j->hash, &j->compact) == FL_OK;
        fl_buf_close(&out);
    }
    uv_close((uv_handle_t *)p, ckpt_closed);
}

static void checkpoint(struct run_etcd *E)
{
    int lead = run_etcd_leader(E->rw);
    if (!lead || E->corruption || E->ckpt)
        return;
    uint64_t cluster = E->b[lead].cluster_id;
    struct ckpt *k = fl_calloc(1, sizeof *k);
    k->E = E;
    k->rev = INT64_MAX;
    for (int i = 1; i <= E->n; i++) {
        const struct bridge *b = &E->b[i];
        const struct lv_proc *p = &E->c.m[i - 1].proc;
        if (b->removed || !b->st_ok || !p->running || p->paused || b->cluster_id != cluster)
            continue;
        k->job[k->n++].slot = i;
        k->rev = FL_MIN(k->rev, (int64_t)b->st.revision);
    }
    if (k->n < 2 || k->rev <= E->checkpoint_rev) {
        free(k);
        return;
    }
    E->checkpoint_rev = k->rev;
    char *ctl = lv_etcdctl_find(E->bin), revs[32];
    snprintf(revs, sizeof revs, "%lld", (long long)k->rev);
    for (int i = 0; i < k->n; i++) {
        struct ckpt_job *j = &k->job[i];
        j->k = k;
        snprintf(j->log, sizeof j->log, "%s/etcdctl-checkpoint-%d.log", E->wd.path, j->slot);
        uv_fs_t req;
        int fd = uv_fs_open(NULL, &req, j->log, O_WRONLY | O_CREAT | O_TRUNC, 0644, NULL);
        uv_fs_req_cleanup(&req);
        char *argv[HASHKV_ARGC];
        hashkv_argv(E, j->slot, ctl, revs, argv);
        uv_stdio_container_t io[3] = {
            {.flags = UV_IGNORE},
            {.flags = fd >= 0 ? UV_INHERIT_FD : UV_IGNORE, .data.fd = fd},
            {.flags = fd >= 0 ? UV_INHERIT_FD : UV_IGNORE, .data.fd = fd}};
        uv_process_options_t o = {
            .exit_cb = ckpt_exit, .file = ctl, .args = argv, .stdio_count = 3, .stdio = io};
        j->proc.data = j;
        if (uv_spawn(&E->loop, &j->proc, &o) == 0)
            k->running++;
        else
            j->done = true;
        if (fd >= 0) {
            uv_fs_close(NULL, &req, fd, NULL);
            uv_fs_req_cleanup(&req);
        }
    }
    free(ctl);
    if (k->running == 0)
        ckpt_finish(k);
    else
        E->ckpt = k;
}

/* At close: the checkpoint's etcdctl processes still running are killed, and waited for. */
static void checkpoint_stop(struct run_etcd *E)
{
    struct ckpt *k = E->ckpt;
    if (!k)
        return;
    for (int i = 0; i < k->n; i++)
        if (!k->job[i].done && k->job[i].proc.data)
            uv_process_kill(&k->job[i].proc, SIGKILL);
    while (E->ckpt)
        uv_run(&E->loop, UV_RUN_ONCE);
}

int run_etcd_checkpoints(struct run_world *rw, const json_t **corruption)
{
    struct run_etcd *E = rw->etcd;
    *corruption = E ? E->corruption : NULL;
    return E ? E->checkpoints : 0;
}

/* ---- failpoints: strace's syscall injection on a member's WAL ------------------------- */

/* Debian's etcd has no gofail, so the failpoints a real etcd can have here are the ones
 * strace makes real on the member's WAL files (live_etcd.h lv_etcd_wal_fault_on):
 * raft/before_save delay = each WAL fdatasync of that member waits delay_ms (etcd's
 * raftBeforeSave sits before the WAL save of every Ready, which syncs), raft/before_save
 * crash = SIGKILL at the WAL's next write (before the entries reach the file),
 * raft/after_save crash = SIGKILL at its next fdatasync (after the write; a process crash
 * keeps the written pages, which is what a crash after the save leaves). */
static const char *etcd_failpoint_refused(struct run_world *rw, const char *name,
                                          const char *action, int p_ppm, int count, int skip)
{
    (void)rw;
    bool before = !strcmp(name, "raft/before_save"), after = !strcmp(name, "raft/after_save");
    if (!before && !after)
        return "Debian's etcd is built without gofail failpoints; only raft/before_save (delay, "
               "crash) and raft/after_save (crash) are made real, by strace's syscall injection "
               "on the member's WAL";
    if (!strcmp(action, "off"))
        return NULL;
    if (strcmp(action, "crash") && !(before && !strcmp(action, "delay")))
        return "raft/before_save takes delay or crash, raft/after_save crash (a slow or "
               "crashing WAL sync by strace's syscall injection)";
    if (p_ppm != 1000000 || count != 0 || skip != 0)
        return "p, count and skip are not carried: strace injects at every WAL call";
    char *strace = lv_strace_find();
    free(strace);
    if (!strace)
        return "needs strace (not installed; scripts/deps.sh installs it with ETCD=1) to slow "
               "or crash the member's WAL";
    return NULL;
}

static int fp_attach(struct run_etcd *E, int slot, struct fl_buf *err)
{
    char *strace = lv_strace_find();
    if (!strace) {
        fl_buf_printf(err, "strace is not installed");
        return FL_EIO;
    }
    struct bridge *b = &E->b[slot];
    b->fp_crashed = false;
    int rc = lv_etcd_wal_fault_on(&E->c, slot - 1, strace, b->fp_delay_ms, b->fp_crash, err);
    free(strace);
    return rc;
}

static int etcd_failpoint(struct run_world *rw, const char *name, int node,
                          const struct flt_spec *spec, bool off, char *err, size_t err_len)
{
    struct run_etcd *E = rw->etcd;
    bool crash = !off && spec->action == SIM_FAULT_CRASH;
    int delay_ms = (int)spec->delay_ms;
    const char *action = off ? "off" : flt_action_str(spec->action);
    int rc = FL_OK;
    for (int i = node ? node : 1; i <= (node ? node : E->n) && rc == FL_OK; i++) {
        struct bridge *b = &E->b[i];
        lv_etcd_wal_fault_off(&E->c, i - 1);
        b->fp_on = !off;
        b->fp_delay_ms = crash ? 0 : delay_ms;
        b->fp_crash = !crash                              ? LV_WAL_CRASH_NONE
                      : !strcmp(name, "raft/before_save") ? LV_WAL_CRASH_AT_WRITE
                                                          : LV_WAL_CRASH_AT_SYNC;
        if (off || !E->c.m[i - 1].proc.running)
            continue; /* a member down gets it at its restart */
        struct fl_buf e;
        fl_buf_init(&e);
        if ((rc = fp_attach(E, i, &e)) != FL_OK)
            snprintf(err, err_len, "'%s' %s on member %d: %s", name, action, i, fl_buf_cstr(&e));
        fl_buf_close(&e);
    }
    return rc;
}

/* ---- the target's table ---------------------------------------------------------------- */

/* What a real etcd cluster here cannot do, and why (issue 16 §3). */
static const struct run_target_refusal etcd_refuses[] = {
    {"skew", "etcd's Go runtime reads the clock without libc, so its clock cannot be skewed"},
    {"bug", "bug switches exist only in faultline's own members"},
    {"net", "loss, duplication and delay of frames are simulator faults (the etcd target cuts "
            "and clogs links only)"},
    {"hold", "holding frames in flight is a simulator fault (use clog)"},
    {"release", "holding frames in flight is a simulator fault (use clog)"},
    {"start", "a member added on etcd is started at once (member_add { start = false } is "
              "not wired)"},
    {"swarm", "the swarm draws simulator-only faults (power loss, skew, failpoints)"},
    {"on", "etcd exposes no typed Raft events to fire faults on"},
    {"config", "a member's configuration is etcd's own (see its log)"},
    {NULL, NULL},
};

const struct run_target_ops run_target_etcd_ops = {
    .name = "etcd",
    .setup = run_etcd_setup,
    .close = run_etcd_close,
    .pace = run_etcd_pace,
    .advance = run_etcd_advance,
    .slots = run_etcd_slots,
    .node_proc = run_etcd_node_proc,
    .alive = run_etcd_alive,
    .removed = run_etcd_removed,
    .leader = run_etcd_leader,
    .node_status = run_etcd_node_status,
    .version = run_etcd_version,
    .set_prevote = run_etcd_set_prevote,
    .node_fault = run_etcd_node_fault,
    .skew = NULL,
    .net_sync = run_etcd_net_sync,
    .clog = run_etcd_clog,
    .ctl = run_etcd_ctl,
    .copy_db = run_etcd_copy_db,
    .restore = run_etcd_restore,
    .converged = run_etcd_converged,
    .checkpoints = run_etcd_checkpoints,
    .failpoint_refused = etcd_failpoint_refused,
    .failpoint = etcd_failpoint,
    .nemesis_kinds = RUN_NEMESIS_PARTITION | RUN_NEMESIS_KILL | RUN_NEMESIS_PAUSE,
    .refuses = etcd_refuses,
};
