/*
 * run_target_live.c: `faultline run SCENARIO --target live` (issue 16 §2): the run
 * driver over our own members, each its own OS process (`faultline member`: libuv,
 * loopback TCP, real files and fsync under the work directory), started by
 * lv_member_cluster (live_member.h: process groups, parent-death signal, a proxy on
 * every member's peer port and client port). It fills run_target_live_ops (run_int.h).
 *
 * Pacing is the etcd target's (run_etcd.h): the world's clock is the only clock the
 * scenario, the workload, the clients and the recorder read, and an event at simulated
 * time t runs once wall time since the cluster came up has reached t; meanwhile the
 * libuv loop runs the proxies, the supervisor and the bridges' connections. What a
 * member sends back enters the world as an event at the wall time it came. Times in
 * the history are wall times and the run has no digest.
 *
 * Bridges. Member slot i is a simulated process "n<i>" listening on the client port,
 * so the clients and their four balancer policies run unchanged. Each connection a
 * client opens to it becomes one real TCP connection to member i's client proxy
 * (which forwards it to the member): it opens with env_uv's hello frame, then every
 * rpc.proto frame of the client is copied verbatim (4-byte little-endian length and
 * the bytes), and every frame the member sends is handed to the client's socket. A
 * real connection that ends (the member died, the proxy cut it) closes the client's
 * socket; a client socket that closes closes the real connection.
 *
 * Faults. kill / restart / pause / resume act on the member's process (SIGKILL and a
 * start on the same data directory; SIGSTOP / SIGCONT); a kill also kills its bridge
 * (the clients' connections reset and new ones are refused until the restart), a
 * pause leaves it (frames reach a stopped process, as over a real network). Cuts and
 * clogs between two members are mirrored onto the peer proxies (live_net_sync); cuts
 * between a client and a member stay the simulator's (the bridge is the member's
 * endpoint). skew writes DATA/skew_ppm and sends SIGUSR1 (cmd_member.c), and becomes
 * --skew-ppm of the member's later starts.
 *
 * Observation. Every member is asked for its Status over a connection of its own
 * (straight to its client port, so client cuts do not hide it) every 100 ms; status()
 * reports the latest answer and leader() the member that names itself leader at the
 * highest term. node_events are the members' own event files (`faultline member
 * --events`), read at every poll (lv_member_events_poll) and entered at the time they
 * were read. The checks that need every member's Raft feeds in one place (raft_safety,
 * converge) and liveness are not run (summary "not_on_target").
 */
#include "harness/live/live_member.h"
#include "harness/run/run_int.h"
#include "nodes/env/env_uv.h"
#include "nodes/proto/codec.h"
#include "nodes/proto/errors.h"
#include "nodes/raft/raft.h"
#include "nodes/server/proc.h"
#include "nodes/server/server.h"

#include <errno.h>
#include <signal.h>

#define POLL_MS         100
#define STATUS_STALE_MS 1000
#define LIVE_HELLO_ADDR 1000 /* the address our hello frames name: not a member's */
#define CTL_TIMEOUT_MS  10000
#define START_MS        20000
#define CTL_CALL_BIT    ((uint64_t)1 << 62) /* control calls' ids on a Status connection */

struct run_live;

/* One frame (or, frame NULL, a close) to hand to a client socket at the wall time it
 * came from the member. */
struct ldelivery {
    struct run_live *L;
    int slot;
    uint32_t epoch;
    net_sock sock;
    uint8_t *frame;
    size_t len;
    struct ldelivery *prev, *next;
};

/* A client's connection to a bridge, carried by a real TCP connection. */
struct lconn {
    struct run_live *L;
    int slot;
    uint32_t epoch;
    net_sock sock;
    uv_tcp_t tcp;
    uv_connect_t creq;
    bool connected, closing;
    struct fl_buf out; /* frames written before the connection was made */
    struct fl_buf in;  /* bytes read, not yet a whole frame */
    struct lconn *prev, *next;
};

/* The Status connection to one member. */
struct lstat {
    struct run_live *L;
    int slot;
    uv_tcp_t tcp;
    uv_connect_t creq;
    bool open, connected;
    struct fl_buf in;
    uint64_t call_id;
    double asked_s, answered_s; /* wall seconds; 0 never */
    /* the last answer */
    bool ok;
    uint64_t leader_id, term, index, applied;
    int64_t revision, db_size, db_in_use, contact_age_ns;
    bool learner;
    uint64_t cluster_id;
};

/* A control call of the scenario (compact, defrag, ...) on a Status connection. */
struct lctl {
    struct run_live *L;
    int slot;
    uint64_t call_id;
    run_target_ctl_fn *done;
    void *ud;
    const char *kind;     /* static */
    bool start;           /* member_add: start the new member once added */
    bool add;             /* member_add: counted in run_live.adds until it finishes */
    bool sync;            /* copy_db: waited for in place, not entered into the world */
    bool finished;        /* ... and answered */
    uint64_t answered_id; /* member_add: the new member's ID as answered */
    int answered_node;    /* ... and its slot */
    int node;             /* member_add: the new member's slot; remove/promote: the member's */
    int code;
    char text[256];
    int64_t revision;
    struct fl_buf data; /* snapshot_save: the blobs so far */
    double deadline_s;
    struct lctl *prev, *next;
};

struct lbridge {
    struct run_live *L;
    int slot, proc;
    uint32_t epoch; /* bumped at every kill: frames from an older life are dropped */
    int64_t rate_ppm;
    char rate_arg[24];
    double started_s;  /* wall seconds of its process's last start */
    bool skew_pending; /* SIGUSR1 to send once the process answered a Status */
    bool up_pending;   /* the bridge listens again once the process answered a Status */
    bool awaits_start; /* added with member_add{ start = false }, not started yet */
    bool fp_pending;   /* SIGUSR2 to send (DATA/failpoints changed), as skew_pending */
    struct lfp {       /* its failpoints, as DATA/failpoints lists them */
        int fp;        /* enum flt_point */
        char line[160];
    } fps[8];
    int n_fps;
    bool removed; /* its removal was answered: its process was stopped */
};

struct run_live {
    struct run_world *rw;
    uv_loop_t loop;
    bool loop_open;
    struct lv_workdir wd;
    bool wd_open;
    struct lv_member_cluster c;
    bool cluster_open;
    struct lbridge b[LV_MEMBERS_MAX + 1]; /* [slot] */
    struct lstat st[LV_MEMBERS_MAX + 1];
    int n;
    struct run_pacer pace; /* run_int.h */
    uv_timer_t poll;
    bool timers_open;
    uint64_t leader_id, term; /* last seen by polling */
    int64_t last_event_ns;
    struct ldelivery *deliveries;
    struct lconn *conns;
    struct lctl *ctls;
    uint64_t ctl_seq;
    bool closing;
    char extra_vals[16][24];
    const char *extra[LV_MEMBER_EXTRA_MAX + 1]; /* the members' options (extra_vals) */
    char self[4096];                            /* the faultline binary */
    int adds;                                   /* member adds in flight */
    int restores;                               /* restore() calls so far */
};

static void put_u32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static uint32_t get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void frame_put(struct fl_buf *b, const uint8_t *p, size_t n)
{
    uint8_t h[4];
    put_u32(h, (uint32_t)n);
    fl_buf_append(b, h, 4);
    fl_buf_append(b, p, n);
}

/* env_uv's hello frame (env_uv.c eu_hello_put): "FLHI" and the dialler's address. */
static void hello_put(struct fl_buf *b)
{
    uint8_t h[8] = {'F', 'L', 'H', 'I', 0, 0, 0, 0};
    put_u32(h + 4, LIVE_HELLO_ADDR);
    frame_put(b, h, sizeof h);
}

/* Appends the n bytes read to in, then hands every whole frame in it (4-byte
 * little-endian length and the bytes) to fn; what is left waits for more bytes. */
static void frames_take(struct fl_buf *in, const char *bytes, size_t n,
                        void (*fn)(void *arg, const uint8_t *p, size_t n), void *arg)
{
    fl_buf_append(in, bytes, n);
    size_t off = 0;
    while (in->len - off >= 4) {
        uint32_t len = get_u32(in->data + off);
        if (in->len - off - 4 < len)
            break;
        fn(arg, in->data + off + 4, len);
        off += 4 + (size_t)len;
    }
    if (off) {
        memmove(in->data, in->data + off, in->len - off);
        in->len -= off;
    }
}

/* ---- writes ---------------------------------------------------------------------------- */

struct lwrite {
    uv_write_t req;
    uint8_t *data;
};

static void on_written(uv_write_t *req, int status)
{
    (void)status; /* a failed write: the read side sees the connection end */
    struct lwrite *w = (struct lwrite *)req;
    free(w->data);
    free(w);
}

/* Writes b's bytes on stream (b emptied). */
static void write_buf(uv_stream_t *s, struct fl_buf *b)
{
    if (!b->len)
        return;
    struct lwrite *w = fl_calloc(1, sizeof *w);
    w->data = b->data; /* the buffer's memory, now the write's */
    uv_buf_t ub = uv_buf_init((char *)w->data, (unsigned)b->len);
    fl_buf_init(b);
    if (uv_write(&w->req, s, &ub, 1, on_written)) {
        free(w->data);
        free(w);
    }
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    (void)h;
    buf->base = fl_malloc(suggested);
    buf->len = suggested;
}

/* ---- deliveries into the world --------------------------------------------------------- */

static void delivery_fire(struct sim_world *w, void *ctx)
{
    struct ldelivery *d = ctx;
    struct run_live *L = d->L;
    RUN_UNLINK(L->deliveries, d);
    if (L->b[d->slot].epoch == d->epoch && net_sock_open(w, d->sock)) {
        if (d->frame)
            net_send(w, d->sock, d->frame, d->len);
        else
            net_close(w, d->sock);
    }
    free(d->frame);
    free(d);
}

static void deliver(struct run_live *L, const struct lconn *c, const uint8_t *p, size_t n)
{
    struct ldelivery *d = fl_calloc(1, sizeof *d);
    d->L = L;
    d->slot = c->slot;
    d->epoch = c->epoch;
    d->sock = c->sock;
    if (p) {
        d->frame = fl_malloc(n ? n : 1);
        memcpy(d->frame, p, n);
        d->len = n;
    }
    RUN_LINK(L->deliveries, d);
    sim_schedule_at(L->rw->w, run_pacer_arrival(&L->pace, L->rw->w), delivery_fire, d);
}

/* ---- bridged connections ----------------------------------------------------------------- */

static void conn_closed(uv_handle_t *h)
{
    struct lconn *c = h->data;
    fl_buf_close(&c->out);
    fl_buf_close(&c->in);
    free(c);
}

/* Ends the real connection; tell: the client's socket closes too (after the frames
 * that came before). */
static void conn_end(struct lconn *c, bool tell)
{
    if (c->closing)
        return;
    c->closing = true;
    RUN_UNLINK(c->L->conns, c);
    if (tell && !c->L->closing)
        deliver(c->L, c, NULL, 0);
    uv_close((uv_handle_t *)&c->tcp, conn_closed);
}

static void conn_frame(void *arg, const uint8_t *p, size_t n)
{
    struct lconn *c = arg;
    deliver(c->L, c, p, n);
}

static void conn_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    struct lconn *c = s->data;
    if (nread > 0 && !c->closing) {
        frames_take(&c->in, buf->base, (size_t)nread, conn_frame, c);
    }
    free(buf->base);
    if (nread < 0)
        conn_end(c, true);
}

static void conn_connected(uv_connect_t *req, int status)
{
    struct lconn *c = req->data;
    if (c->closing)
        return;
    if (status < 0) {
        conn_end(c, true);
        return;
    }
    c->connected = true;
    uv_read_start((uv_stream_t *)&c->tcp, on_alloc, conn_read);
    write_buf((uv_stream_t *)&c->tcp, &c->out);
}

static struct lconn *conn_of(struct run_live *L, net_sock s)
{
    for (struct lconn *c = L->conns; c; c = c->next)
        if (c->sock == s)
            return c;
    return NULL;
}

static void bridge_on_message(struct sim_world *w, net_sock s, const uint8_t *p, size_t n,
                              void *ctx)
{
    (void)w;
    struct lconn *c = conn_of(ctx, s);
    if (!c)
        return;
    frame_put(&c->out, p, n);
    if (c->connected)
        write_buf((uv_stream_t *)&c->tcp, &c->out);
}

static void bridge_on_close(struct sim_world *w, net_sock s, int reason, void *ctx)
{
    (void)w;
    (void)reason;
    struct lconn *c = conn_of(ctx, s);
    if (c)
        conn_end(c, false);
}

static int slot_of_proc(const struct run_live *L, int proc)
{
    for (int i = 1; i <= L->n; i++)
        if (L->b[i].proc == proc)
            return i;
    return 0;
}

static void bridge_accept(struct sim_world *w, net_sock s, int peer, void *ctx)
{
    (void)peer;
    static const struct net_sock_ops ops = {NULL, bridge_on_message, bridge_on_close};
    struct run_live *L = ctx;
    int slot = slot_of_proc(L, net_sock_proc(w, s));
    if (!slot) {
        net_close(w, s);
        return;
    }
    net_sock_bind(w, s, &ops, ctx);
    struct lconn *c = fl_calloc(1, sizeof *c);
    c->L = L;
    c->slot = slot;
    c->epoch = L->b[slot].epoch;
    c->sock = s;
    fl_buf_init(&c->out);
    fl_buf_init(&c->in);
    hello_put(&c->out);
    uv_tcp_init(&L->loop, &c->tcp);
    c->tcp.data = c;
    c->creq.data = c;
    RUN_LINK(L->conns, c);
    struct sockaddr_in a;
    uv_ip4_addr("127.0.0.1", L->c.m[slot - 1].client_proxy_port, &a);
    if (uv_tcp_connect(&c->creq, &c->tcp, (const struct sockaddr *)&a, conn_connected))
        conn_end(c, true);
}

static void bridge_on_kill(struct sim_world *w, int proc, void *ctx)
{
    (void)w;
    struct run_live *L = ctx;
    int slot = slot_of_proc(L, proc);
    L->b[slot].epoch++;
    struct lconn *c = L->conns;
    while (c) {
        struct lconn *next = c->next;
        if (c->slot == slot)
            conn_end(c, false);
        c = next;
    }
}

static void bridge_on_restart(struct sim_world *w, int proc, void *ctx)
{
    net_listen(w, proc, SRV_CLIENT_PORT, bridge_accept, ctx);
}

static void bridge_add(struct run_live *L, int slot)
{
    static const struct sim_proc_ops ops = {bridge_on_kill, bridge_on_restart};
    char name[16];
    snprintf(name, sizeof name, "n%d", slot);
    L->b[slot].L = L;
    L->b[slot].slot = slot;
    L->b[slot].rate_ppm = SIM_PPM;
    L->b[slot].proc = sim_proc_add(L->rw->w, name, &ops, L);
    net_listen(L->rw->w, L->b[slot].proc, SRV_CLIENT_PORT, bridge_accept, L);
}

/* ---- node events and status polling ------------------------------------------------------ */

/* The static name (raft.h) a member's event file spelled: a role for from_state /
 * to_state, a reason for reason; NULL when absent or not one of them. */
static const char *raft_name(json_t *ev, const char *field)
{
    const char *v = json_string_value(json_object_get(ev, field));
    if (!v)
        return NULL;
    if (strcmp(field, "reason")) {
        for (int r = RAFT_FOLLOWER; r <= RAFT_LEADER; r++)
            if (!strcmp(raft_role_name((enum raft_role)r), v))
                return raft_role_name((enum raft_role)r);
        return NULL;
    }
    for (int r = RAFT_REASON_NONE + 1; r < RAFT_REASON_COUNT; r++)
        if (raft_reason_name((enum raft_reason)r) &&
            !strcmp(raft_reason_name((enum raft_reason)r), v))
            return raft_reason_name((enum raft_reason)r);
    return NULL;
}

/* A line of a member's event file ({"at_ns","node","member_id","kind","term",
 * "detail"[,"revision"][,"peer","index","from_state","to_state","reason","vote","pre"]},
 * proc.c), entered now with its typed fields, as the simulator's node events. */
static void on_member_event(void *arg, int slot, json_t *ev)
{
    struct run_live *L = arg;
    const char *kind = json_string_value(json_object_get(ev, "kind"));
    const char *detail = json_string_value(json_object_get(ev, "detail"));
    const char *mid = json_string_value(json_object_get(ev, "member_id"));
    if (!kind || L->closing)
        return;
    struct srv_event e;
    memset(&e, 0, sizeof e);
    e.at_ns = sim_now_ns(L->rw->w);
    e.node = slot;
    e.member_id = mid ? strtoull(mid, NULL, 16) : 0;
    e.kind = kind;
    e.term = (uint64_t)json_integer_value(json_object_get(ev, "term"));
    e.detail = detail ? detail : "";
    e.revision = (int64_t)json_integer_value(json_object_get(ev, "revision"));
    json_int_t peer = json_integer_value(json_object_get(ev, "peer"));
    e.f.peer = peer > 0 && peer <= LV_MEMBERS_MAX ? (int)peer : 0;
    e.f.index = (uint64_t)json_integer_value(json_object_get(ev, "index"));
    e.f.from_state = raft_name(ev, "from_state");
    e.f.to_state = raft_name(ev, "to_state");
    e.f.reason = raft_name(ev, "reason");
    e.f.vote = json_is_true(json_object_get(ev, "vote"));
    e.f.pre = json_is_true(json_object_get(ev, "pre"));
    run_events_note(L->rw, &e);
}

static int slot_of_member(const struct run_live *L, uint64_t id)
{
    for (int i = 1; i <= L->n && id; i++)
        if (L->c.m[i - 1].member_id == id)
            return i;
    return 0;
}

/* The leader as polling sees it: of the members that run and answered Status lately,
 * one that names itself leader, the one with the highest term. 0 when none does. */
static int polled_leader(struct run_live *L, uint64_t *term)
{
    int best = 0;
    *term = 0;
    for (int i = 1; i <= L->n; i++) {
        const struct lv_proc *p = &L->c.m[i - 1].proc;
        const struct lstat *s = &L->st[i];
        if (!p->running || p->paused || !s->ok)
            continue;
        if (s->leader_id == L->c.m[i - 1].member_id && (!best || s->term > *term)) {
            best = i;
            *term = s->term;
        }
    }
    return best;
}

static void stat_closed(uv_handle_t *h)
{
    struct lstat *s = h->data;
    s->open = false;
    s->connected = false;
    s->in.len = 0;
}

static void ctls_fail(struct run_live *L, int slot, bool timed_out_only);

static void stat_end(struct lstat *s)
{
    s->ok = false;
    if (s->L && !s->L->closing)
        ctls_fail(s->L, s->slot, false);
    if (s->open && !uv_is_closing((uv_handle_t *)&s->tcp))
        uv_close((uv_handle_t *)&s->tcp, stat_closed);
}

/* ---- control calls ------------------------------------------------------------------------ */

static void ctl_fire(struct sim_world *w, void *ctx)
{
    (void)w;
    struct lctl *c = ctx;
    struct run_live *L = c->L;
    RUN_UNLINK(L->ctls, c);
    struct run_ctl_result r = {.code = c->code,
                               .node = c->code ? 0 : c->node,
                               .text = c->text,
                               .revision = c->revision,
                               .data = c->data.data,
                               .len = c->data.len};
    c->done(c->ud, &r);
    fl_buf_close(&c->data);
    free(c);
}

/* The call is over: its answer enters the world at the wall time now (fire: what
 * runs then). */
static void ctl_finish_with(struct lctl *c, int code, const char *text, sim_event_fn *fire)
{
    struct run_live *L = c->L;
    c->code = code;
    snprintf(c->text, sizeof c->text, "%s", text ? text : "");
    c->call_id = 0; /* answered: nothing more is taken for it */
    if (c->add) {
        c->add = false;
        L->adds--;
    }
    if (c->sync) {
        c->finished = true;
        return;
    }
    sim_schedule_at(L->rw->w, run_pacer_arrival(&L->pace, L->rw->w), fire, c);
}

static void ctl_finish(struct lctl *c, int code, const char *text)
{
    ctl_finish_with(c, code, text, ctl_fire);
}

static void member_started(struct run_live *L, int slot);
static void live_node_fault(struct run_world *rw, int id, const char *kind);

/* Member add answered: the new member gets its slot (ports, proxies, data directory,
 * a bridge the clients can dial) and, unless added with start = false, its process,
 * as an operator starts `etcd --initial-cluster-state existing` once member add
 * returned. Member remove answered: the removed member's process is stopped, as the
 * simulator stops it once its removal applied. Both in the world's turn (a kill runs
 * the loop until the process exited: not from inside a read callback), right before
 * the answer enters the world. */
static void member_fire(struct sim_world *w, void *ctx)
{
    struct lctl *c = ctx;
    struct run_live *L = c->L;
    if (c->code || L->closing) {
        ctl_fire(w, c);
        return;
    }
    if (!strcmp(c->kind, "member_remove")) {
        if (c->node >= 1 && c->node <= L->n && !L->b[c->node].removed) {
            L->b[c->node].removed = true;
            L->b[c->node].awaits_start = false;
            live_node_fault(L->rw, c->node, "kill");
        }
        ctl_fire(w, c);
        return;
    }
    struct fl_buf err;
    fl_buf_init(&err);
    int slot = -1;
    if (!c->answered_id || c->answered_node != L->n + 1 || L->c.n != L->n)
        fl_buf_printf(&err,
                      "target live: member add answered slot %d (member %016llx), the next "
                      "slot is %d",
                      c->answered_node, (unsigned long long)c->answered_id, L->n + 1);
    else
        slot = lv_member_add(&L->c, &L->wd, L->self, L->rw->seed, L->extra, c->answered_id, &err);
    if (slot > 0) {
        L->n = L->c.n;
        bridge_add(L, slot);
        fl_buf_init(&L->st[slot].in);
        L->b[slot].awaits_start = !c->start;
        if (c->start)
            member_started(L, slot);
        else if (lv_member_dir_write(&L->c, &err) != FL_OK)
            fl_log(FL_LOG_ERROR, "target live: %s", fl_buf_cstr(&err));
        c->node = slot;
    } else { /* a slot half set up is closed with the others (L->c.n counts it) */
        c->code = RPC_CODE_INTERNAL;
        snprintf(c->text, sizeof c->text, "%s", fl_buf_cstr(&err));
    }
    fl_buf_close(&err);
    ctl_fire(w, c);
}

static void member_answered(struct run_live *L, struct lctl *c, const Rpc__ServerMsg *m)
{
    if (m->resp_case == RPC__SERVER_MSG__RESP_MEMBER_ADD) {
        const Rpc__Member *mem = m->member_add ? m->member_add->member : NULL;
        c->answered_id = mem ? mem->id : 0;
        c->answered_node = mem ? (int)mem->node : 0;
    }
    ctl_finish_with(c, 0, "", member_fire);
}

/* Starts the process of a member added (at once, or by start(n)): the directory says
 * it was started before it runs, so that the leader counts it (strict reconfiguration
 * check) and dials it. */
static void member_started(struct run_live *L, int slot)
{
    struct lv_member *m = &L->c.m[slot - 1];
    struct fl_buf err;
    fl_buf_init(&err);
    m->started = true;
    L->b[slot].awaits_start = false;
    if (lv_member_dir_write(&L->c, &err) != FL_OK)
        fl_log(FL_LOG_ERROR, "target live: %s", fl_buf_cstr(&err));
    fl_buf_reset(&err);
    L->b[slot].started_s = run_target_wall_s();
    L->b[slot].skew_pending = false;
    if (lv_proc_start(&m->proc, &err))
        fl_log(FL_LOG_ERROR, "target live: start of member %d: %s", slot, fl_buf_cstr(&err));
    fl_buf_close(&err);
}

/* A frame of a control call's answer. */
static void ctl_answer(struct run_live *L, int slot, const Rpc__ServerMsg *m)
{
    for (struct lctl *c = L->ctls; c; c = c->next) {
        if (c->slot != slot || c->call_id != m->call_id)
            continue;
        if (m->header)
            c->revision = m->header->revision;
        if (m->error) {
            ctl_finish(c, m->error->code, m->error->message);
        } else if (m->resp_case == RPC__SERVER_MSG__RESP_MEMBER_ADD ||
                   m->resp_case == RPC__SERVER_MSG__RESP_MEMBER_REMOVE) {
            member_answered(L, c, m);
        } else if (m->resp_case == RPC__SERVER_MSG__RESP_SNAPSHOT) {
            fl_buf_append(&c->data, m->snapshot->blob.data, m->snapshot->blob.len);
            if (m->snapshot->remaining_bytes == 0 || m->stream_end)
                ctl_finish(c, 0, "");
        } else {
            ctl_finish(c, 0, "");
        }
        return;
    }
}

/* Calls in flight on slot's Status connection (every one when slot is 0) that can no
 * longer be answered: the connection ended, or their time is up. */
static void ctls_fail(struct run_live *L, int slot, bool timed_out_only)
{
    double now = run_target_wall_s();
    for (struct lctl *c = L->ctls; c; c = c->next) {
        if (!c->call_id || (slot && c->slot != slot))
            continue;
        if (timed_out_only && now < c->deadline_s)
            continue;
        if (timed_out_only)
            ctl_finish(c, RPC_CODE_DEADLINE_EXCEEDED, rpc_err_text(RPC_ERR_CLIENT_DEADLINE));
        else
            ctl_finish(c, RPC_CODE_UNAVAILABLE, rpc_err_text(RPC_ERR_CONN_REFUSED));
    }
}

static void stat_answer(struct lstat *s, const uint8_t *p, size_t n)
{
    Rpc__ServerMsg *m = rpc_server_msg_decode(NULL, n, p);
    if (!m)
        return;
    if (m->call_id & CTL_CALL_BIT)
        ctl_answer(s->L, s->slot, m);
    if (m->resp_case == RPC__SERVER_MSG__RESP_STATUS && m->call_id == s->call_id) {
        const Rpc__StatusResponse *r = m->status;
        s->ok = true;
        s->answered_s = run_target_wall_s();
        s->leader_id = r->leader;
        s->term = r->raftterm;
        s->index = r->raftindex;
        s->applied = r->raftappliedindex;
        s->db_size = r->dbsize;
        s->db_in_use = r->dbsizeinuse;
        s->learner = r->islearner;
        s->contact_age_ns = r->quorum_contact_age_ns;
        s->revision = m->header ? m->header->revision : 0;
        s->cluster_id = m->header ? m->header->cluster_id : 0;
    }
    rpc__server_msg__free_unpacked(m, NULL);
}

static void stat_frame(void *arg, const uint8_t *p, size_t n)
{
    stat_answer(arg, p, n);
}

static void stat_read(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf)
{
    struct lstat *s = st->data;
    if (nread > 0) {
        frames_take(&s->in, buf->base, (size_t)nread, stat_frame, s);
    }
    free(buf->base);
    if (nread < 0)
        stat_end(s);
}

static void stat_connected(uv_connect_t *req, int status)
{
    struct lstat *s = req->data;
    if (status < 0 || uv_is_closing((uv_handle_t *)&s->tcp)) {
        stat_end(s);
        return;
    }
    s->connected = true;
    uv_read_start((uv_stream_t *)&s->tcp, on_alloc, stat_read);
    struct fl_buf b;
    fl_buf_init(&b);
    hello_put(&b);
    write_buf((uv_stream_t *)&s->tcp, &b);
}

static void stat_ask(struct run_live *L, int slot)
{
    struct lstat *s = &L->st[slot];
    const struct lv_proc *p = &L->c.m[slot - 1].proc;
    if (!p->running) {
        stat_end(s);
        return;
    }
    if (s->answered_s && run_target_wall_s() - s->answered_s > STATUS_STALE_MS / 1000.0)
        s->ok = false; /* hung, paused or restarting: no fresh answer */
    if (!s->open) {
        s->L = L;
        s->slot = slot;
        uv_tcp_init(&L->loop, &s->tcp);
        s->tcp.data = s;
        s->creq.data = s;
        s->open = true;
        struct sockaddr_in a;
        uv_ip4_addr("127.0.0.1", L->c.m[slot - 1].client_port, &a);
        if (uv_tcp_connect(&s->creq, &s->tcp, (const struct sockaddr *)&a, stat_connected))
            stat_end(s);
        return;
    }
    if (!s->connected)
        return;
    Rpc__ClientMsg m = RPC__CLIENT_MSG__INIT;
    Rpc__StatusRequest r = RPC__STATUS_REQUEST__INIT;
    m.call_id = ++s->call_id;
    m.method = RPC__METHOD__METHOD_STATUS;
    m.req_case = RPC__CLIENT_MSG__REQ_STATUS;
    m.status = &r;
    struct fl_buf f, b;
    fl_buf_init(&f);
    fl_buf_init(&b);
    rpc_client_msg_encode(&m, &f);
    frame_put(&b, f.data, f.len);
    fl_buf_close(&f);
    s->asked_s = run_target_wall_s();
    write_buf((uv_stream_t *)&s->tcp, &b);
}

static void poll_note(struct run_live *L)
{
    uint64_t term;
    int slot = polled_leader(L, &term);
    if (!slot || L->closing)
        return;
    uint64_t id = L->c.m[slot - 1].member_id;
    if (id == L->leader_id && term == L->term)
        return;
    L->leader_id = id;
    L->term = term;
}

/* A skew the member process takes now (SIGUSR1: it reads DATA/skew_ppm), once it can:
 * SIGUSR1 ends a process that has not installed its handler yet (the pdeath wrapper,
 * or a member still starting), so only after it answered a Status since its start. */
static void fp_signal(struct run_live *L, int slot)
{
    struct lbridge *b = &L->b[slot];
    const struct lv_proc *p = &L->c.m[slot - 1].proc;
    if (!b->fp_pending || !p->running || p->pid <= 0 || L->st[slot].answered_s <= b->started_s)
        return;
    b->fp_pending = false;
    kill(p->pid, SIGUSR2);
}

static void skew_signal(struct run_live *L, int slot)
{
    struct lbridge *b = &L->b[slot];
    const struct lv_proc *p = &L->c.m[slot - 1].proc;
    if (!b->skew_pending || !p->running || p->pid <= 0 || L->st[slot].answered_s <= b->started_s)
        return;
    b->skew_pending = false;
    kill(p->pid, SIGUSR1); /* a paused member takes it when it resumes */
}

static void bridge_up_fire(struct sim_world *w, void *ctx)
{
    struct lbridge *b = ctx;
    if (b->L->c.m[b->slot - 1].proc.running && sim_proc_state(w, b->proc) == SIM_PROC_DOWN)
        sim_proc_restart(w, b->proc);
}

/* A restarted member's bridge listens again (its clients can connect) once the new
 * process serves: it answered a Status since its start. Until then a client's dial is
 * refused, as a dial to a process that does not listen yet is. */
static void bridge_up(struct run_live *L, int slot)
{
    struct lbridge *b = &L->b[slot];
    if (!b->up_pending || !L->c.m[slot - 1].proc.running || L->st[slot].answered_s <= b->started_s)
        return;
    b->up_pending = false;
    sim_schedule_at(L->rw->w, run_pacer_arrival(&L->pace, L->rw->w), bridge_up_fire, b);
}

static void on_poll_timer(uv_timer_t *t)
{
    struct run_live *L = t->data;
    if (L->closing)
        return;
    lv_member_events_poll(&L->c, on_member_event, L);
    for (int i = 1; i <= L->n; i++) {
        skew_signal(L, i);
        fp_signal(L, i);
        bridge_up(L, i);
    }
    ctls_fail(L, 0, true);
    for (int i = 1; i <= L->n; i++)
        stat_ask(L, i);
    poll_note(L);
}

/* ---- set-up and close ---------------------------------------------------------------------- */

/* scenario{ cluster = {...} } as `faultline member` options where it has one; what it
 * has none for is named in the summary ("cluster_ignored"). */
static void member_flags(struct run_live *L, const struct run_cluster_config *c, const char **extra)
{
    int n = 0, v = 0;
#define FLAG(name, val)                                                                            \
    do {                                                                                           \
        snprintf(L->extra_vals[v], sizeof L->extra_vals[v], "%lld", (long long)(val));             \
        extra[n++] = name;                                                                         \
        extra[n++] = L->extra_vals[v++];                                                           \
    } while (0)
    if (c->election_ms)
        FLAG("--election-ms", c->election_ms);
    if (c->heartbeat_ms)
        FLAG("--heartbeat-ms", c->heartbeat_ms);
    if (c->snapshot_count)
        FLAG("--snapshot-count", c->snapshot_count);
    if (c->prevote >= 0)
        FLAG("--prevote", c->prevote);
    if (c->check_quorum >= 0)
        FLAG("--check-quorum", c->check_quorum);
    if (c->quota_bytes)
        FLAG("--quota-backend-bytes", c->quota_bytes);
#undef FLAG
    extra[n] = NULL;
    json_t *ignored = json_array();
    if (c->snapshot_catchup)
        json_array_append_new(ignored, json_string("snapshot_catchup"));
    if (c->fsync_us)
        json_array_append_new(ignored, json_string("fsync_us (real fsync)"));
    if (c->net_latency_us || c->net_jitter_us)
        json_array_append_new(ignored, json_string("net_latency_us (real TCP)"));
    if (c->progress_notify_ms > 0)
        json_array_append_new(ignored, json_string("progress_notify_ms"));
    if (c->max_msg_bytes > 0)
        json_array_append_new(ignored, json_string("max_msg_bytes"));
    if (c->watch_buffer > 0)
        json_array_append_new(ignored, json_string("watch_buffer"));
    if (c->loose_reconfig)
        json_array_append_new(ignored, json_string("loose_reconfig"));
    if (c->auto_compaction_mode)
        json_array_append_new(ignored, json_string("auto_compaction"));
    if (json_array_size(ignored))
        run_summary_set(L->rw, "cluster_ignored", ignored);
    else
        json_decref(ignored);
}

static void live_close(struct run_world *rw);

static bool all_serve(void *arg)
{
    struct run_live *L = arg;
    for (int i = 1; i <= L->n; i++)
        if (!L->st[i].answered_s)
            return false;
    return true;
}

static int live_setup(struct run_world *rw, const struct run_cluster_config *cfg, char *err,
                      size_t err_len)
{
    const struct run_live *L0 = NULL; /* for sizeof */
    int n = cfg->nodes ? cfg->nodes : 3;
    if (n < 1 || n > LV_MEMBERS_MAX || n > SRV_PROC_NODES_MAX) {
        snprintf(err, err_len, "cluster.nodes must be in [1, %d] on the live target",
                 FL_MIN(LV_MEMBERS_MAX, SRV_PROC_NODES_MAX));
        return FL_EINVAL;
    }
    char self[sizeof L0->self];
    size_t self_len = sizeof self;
    if (uv_exepath(self, &self_len) != 0) {
        snprintf(err, err_len, "target live: cannot find the faultline binary (uv_exepath)");
        return FL_EIO;
    }
    /* a write on a connection the member (or a proxy) just closed is an error of that
     * write (EPIPE), not the end of the run: libuv writes with write(2) */
    signal(SIGPIPE, SIG_IGN);
    struct run_live *L = fl_calloc(1, sizeof *L);
    rw->lv = L;
    L->rw = rw;
    L->n = n;
    snprintf(L->self, sizeof L->self, "%s", self);
    uv_loop_init(&L->loop);
    L->loop_open = true;
    struct fl_buf eb;
    fl_buf_init(&eb);
    int rc = lv_workdir_open(&L->wd, rw->target.workdir, rw->target.keep, &eb);
    if (!rc) {
        L->wd_open = true;
        member_flags(L, cfg, L->extra);
        rc = lv_member_cluster_start(&L->c, &L->loop, &L->wd, n, L->self, rw->seed, L->extra, &eb);
        L->cluster_open = true;
    }
    if (rc) {
        snprintf(err, err_len, "target live: %s", fl_buf_cstr(&eb));
        fl_buf_close(&eb);
        return rc;
    }
    fl_buf_close(&eb);
    for (int i = 1; i <= n; i++) {
        bridge_add(L, i);
        L->b[i].started_s = run_target_wall_s();
        fl_buf_init(&L->st[i].in);
    }
    uv_timer_init(&L->loop, &L->poll);
    L->poll.data = L;
    L->timers_open = true;
    uv_timer_start(&L->poll, on_poll_timer, 0, POLL_MS);
    /* the scenario starts once every member serves (answered a Status) */
    if (!lv_run_until(&L->loop, all_serve, L, START_MS)) {
        snprintf(err, err_len,
                 "target live: not every member answered within %d ms (see %s/m*.log)", START_MS,
                 L->wd.path);
        return FL_ETIMEOUT;
    }
    run_pacer_init(&L->pace, &L->loop, rw->w); /* the scenario's clock starts here */
    return FL_OK;
}

static void on_closed(uv_handle_t *h)
{
    (void)h;
}

static void live_close(struct run_world *rw)
{
    struct run_live *L = rw->lv;
    if (!L)
        return;
    L->closing = true;
    while (L->conns)
        conn_end(L->conns, false);
    for (int i = 1; i <= L->n; i++)
        stat_end(&L->st[i]);
    if (L->timers_open) {
        uv_timer_stop(&L->poll);
        uv_close((uv_handle_t *)&L->poll, on_closed);
        if (L->pace.loop) /* set up once every member served */
            run_pacer_close(&L->pace);
    }
    if (L->cluster_open)
        lv_member_cluster_close(&L->c); /* kills every member, closes the proxies */
    while (L->ctls) {
        struct lctl *c = L->ctls;
        RUN_UNLINK(L->ctls, c);
        fl_buf_close(&c->data);
        free(c);
    }
    while (L->deliveries) {
        struct ldelivery *d = L->deliveries;
        RUN_UNLINK(L->deliveries, d);
        free(d->frame);
        free(d);
    }
    if (L->loop_open) {
        uv_run(&L->loop, UV_RUN_NOWAIT);
        uv_run(&L->loop, UV_RUN_NOWAIT);
        uv_loop_close(&L->loop);
    }
    for (int i = 0; i <= LV_MEMBERS_MAX; i++)
        fl_buf_close(&L->st[i].in);
    if (L->wd_open)
        lv_workdir_close(&L->wd);
    free(L);
    rw->lv = NULL;
}

/* ---- pacing (run_int.h run_pacer) -------------------------------------------------------------
 */

static void live_pace(struct run_world *rw, int64_t t_ns)
{
    run_pacer_pace(rw, &rw->lv->pace, t_ns);
}

static void live_advance(struct run_world *rw, int64_t until_ns)
{
    run_pacer_advance(rw, &rw->lv->pace, until_ns);
}

/* ---- cluster view ------------------------------------------------------------------------------
 */

static int live_slots(struct run_world *rw)
{
    return rw->lv ? rw->lv->n : 0;
}

static int live_node_proc(struct run_world *rw, int node)
{
    struct run_live *L = rw->lv;
    if (!L || node < 1 || node > L->n)
        return -1;
    return L->b[node].proc;
}

static bool live_removed(struct run_world *rw, int node)
{
    struct run_live *L = rw->lv;
    return L && node >= 1 && node <= L->n && L->b[node].removed;
}

static bool live_awaits_start(struct run_world *rw, int node)
{
    struct run_live *L = rw->lv;
    return L && node >= 1 && node <= L->n && L->b[node].awaits_start;
}

static int live_member_start(struct run_world *rw, int node)
{
    if (!live_awaits_start(rw, node))
        return FL_EINVAL;
    member_started(rw->lv, node);
    return FL_OK;
}

static bool live_alive(struct run_world *rw, int node)
{
    struct run_live *L = rw->lv;
    return L && node >= 1 && node <= L->n && L->c.m[node - 1].proc.running;
}

static int live_leader(struct run_world *rw)
{
    uint64_t term;
    return rw->lv ? polled_leader(rw->lv, &term) : 0;
}

static const char *live_version(struct run_world *rw)
{
    (void)rw;
    return SRV_VERSION;
}

static int live_node_status(struct run_world *rw, int id, struct run_node_status *out)
{
    struct run_live *L = rw->lv;
    memset(out, 0, sizeof *out);
    if (!L || id < 1 || id > L->n)
        return FL_ENOENT;
    const struct lv_member *m = &L->c.m[id - 1];
    const struct lstat *s = &L->st[id];
    out->alive = m->proc.running;
    out->paused = m->proc.paused;
    out->member_id = m->member_id;
    out->version = SRV_VERSION;
    out->leader_contact_ns = -1;
    out->removed = L->b[id].removed;
    /* the member's identity is its data directory's, down or not (as on sim): the
     * cluster ID of its last answer (none yet after a restore) */
    out->cluster_id = s->cluster_id;
    if (!out->alive || out->paused || !s->ok)
        return FL_OK;
    out->leader_id = s->leader_id;
    out->leader_node = slot_of_member(L, s->leader_id);
    out->is_leader = s->leader_id == out->member_id;
    out->learner = s->learner;
    out->term = s->term;
    out->last_index = s->index;
    out->commit = s->index;
    out->applied = s->applied;
    out->revision = s->revision;
    out->leader_contact_ns = s->contact_age_ns;
    out->db_size = s->db_size;
    out->db_size_in_use = s->db_in_use;
    return FL_OK;
}

/* ---- faults
 * -------------------------------------------------------------------------------------- */

/* argv's "--skew-ppm" value (added when absent): the rate of the member's next starts. */
static void argv_set_rate(struct lv_proc *p, const char *rate)
{
    size_t n = 0;
    while (p->argv && p->argv[n])
        n++;
    for (size_t i = 0; i + 1 < n; i++)
        if (!strcmp(p->argv[i], "--skew-ppm")) {
            free(p->argv[i + 1]);
            p->argv[i + 1] = fl_strdup(rate);
            return;
        }
    p->argv = fl_realloc(p->argv, (n + 3) * sizeof *p->argv);
    p->argv[n] = fl_strdup("--skew-ppm");
    p->argv[n + 1] = fl_strdup(rate);
    p->argv[n + 2] = NULL;
}

static void live_skew(struct run_world *rw, int id, int64_t rate_ppm)
{
    struct run_live *L = rw->lv;
    if (!L || id < 1 || id > L->n)
        return;
    struct lbridge *b = &L->b[id];
    struct lv_member *m = &L->c.m[id - 1];
    if (b->rate_ppm == rate_ppm)
        return;
    b->rate_ppm = rate_ppm;
    snprintf(b->rate_arg, sizeof b->rate_arg, "%lld", (long long)rate_ppm);
    argv_set_rate(&m->proc, b->rate_arg);
    struct fl_buf path;
    fl_buf_init(&path);
    fl_buf_printf(&path, "%s/skew_ppm", m->data_dir);
    FILE *f = fopen(fl_buf_cstr(&path), "w");
    bool ok = f && fprintf(f, "%s\n", b->rate_arg) > 0;
    if (f && fclose(f))
        ok = false;
    fl_buf_close(&path);
    if (!ok) {
        fl_log(FL_LOG_ERROR, "target live: cannot write %s/skew_ppm", m->data_dir);
        return;
    }
    b->skew_pending = true; /* a member not running takes it from --skew-ppm at its start */
    skew_signal(L, id);
}

static void live_node_fault(struct run_world *rw, int id, const char *kind)
{
    struct run_live *L = rw->lv;
    struct lv_member *m = &L->c.m[id - 1];
    int proc = L->b[id].proc;
    struct fl_buf err;
    fl_buf_init(&err);
    if (!strcmp(kind, "kill")) {
        lv_proc_kill(&m->proc);
        L->b[id].up_pending = false;
        if (sim_proc_state(rw->w, proc) != SIM_PROC_DOWN)
            sim_proc_kill(rw->w, proc);
        stat_end(&L->st[id]);
    } else if (!strcmp(kind, "restart")) {
        if (!m->proc.running) {
            L->b[id].started_s = run_target_wall_s();
            L->b[id].skew_pending = false; /* its --skew-ppm is the rate */
            L->b[id].up_pending = true;    /* its bridge follows once it serves */
            if (lv_proc_start(&m->proc, &err))
                fl_log(FL_LOG_ERROR, "target live: restart of member %d: %s", id,
                       fl_buf_cstr(&err));
        } else if (sim_proc_state(rw->w, proc) == SIM_PROC_DOWN && !L->b[id].up_pending) {
            sim_proc_restart(rw->w, proc);
        }
    } else if (!strcmp(kind, "pause")) {
        if (m->proc.running && !m->proc.paused)
            lv_proc_pause(&m->proc);
        L->st[id].ok = false; /* a stopped process answers nothing */
    } else {
        if (m->proc.paused)
            lv_proc_resume(&m->proc);
    }
    fl_buf_close(&err);
}

static void live_set_prevote(struct run_world *rw, int id, bool on)
{
    struct run_live *L = rw->lv;
    char **argv = L->c.m[id - 1].proc.argv;
    for (size_t i = 0; argv && argv[i] && argv[i + 1]; i++)
        if (!strcmp(argv[i], "--prevote")) {
            free(argv[i + 1]);
            argv[i + 1] = fl_strdup(on ? "1" : "0");
            return;
        }
    struct lv_proc *p = &L->c.m[id - 1].proc;
    size_t n = 0;
    while (p->argv[n])
        n++;
    p->argv = fl_realloc(p->argv, (n + 3) * sizeof *p->argv);
    p->argv[n] = fl_strdup("--prevote");
    p->argv[n + 1] = fl_strdup(on ? "1" : "0");
    p->argv[n + 2] = NULL;
}

/* Member-member links in the world (between bridges, which never talk to each other)
 * become the real peer links' state in the proxies; node index = slot
 * (live_member.h): a cut, and net()'s loss and added delay (its duplication has no
 * meaning on a TCP stream: only the simulated client links carry it). */
static void live_net_sync(struct run_world *rw)
{
    struct run_live *L = rw->lv;
    if (!L)
        return;
    const struct net_link *base = &rw->net.base_link;
    for (int i = 1; i <= L->n; i++)
        for (int j = 1; j <= L->n; j++) {
            if (i == j)
                continue;
            struct lv_link *l = lv_net_link(&L->c.net, i, j);
            struct net_link s;
            net_link_get(rw->w, L->b[i].proc, L->b[j].proc, &s);
            l->cut = net_blocked(rw->w, L->b[i].proc, L->b[j].proc);
            l->loss_ppm = s.loss_ppm;
            l->delay_ms =
                s.latency_ns > base->latency_ns ? (s.latency_ns - base->latency_ns) / FL_MS : 0;
        }
    lv_net_update(&L->c.net);
}

static void live_clog(struct run_world *rw, int from_proc, int to_proc, bool on)
{
    struct run_live *L = rw->lv;
    if (!L)
        return;
    for (int i = 1; i <= L->n; i++)
        for (int j = 1; j <= L->n; j++)
            if (i != j && (from_proc < 0 || from_proc == L->b[i].proc) &&
                (to_proc < 0 || to_proc == L->b[j].proc))
                lv_net_link(&L->c.net, i, j)->clog = on;
    lv_net_update(&L->c.net);
}

/* Control calls as the RPC a client would send (nodes/server/cluster_ctl.c does the
 * same in the simulator), on the Status connection of the member named, else of the
 * leader (move_leader: always the leader). Refused before the script runs: membership
 * changes (run_target.c live_refuses). */
static void member_ctl(struct run_live *L, struct lctl *c, const char *kind, int64_t arg);

static void live_ctl(struct run_world *rw, const char *kind, int node, int64_t arg,
                     run_target_ctl_fn *done, void *ud)
{
    struct run_live *L = rw->lv;
    struct lctl *c = fl_calloc(1, sizeof *c);
    c->L = L;
    c->done = done;
    c->ud = ud;
    fl_buf_init(&c->data);
    RUN_LINK(L->ctls, c);
    int at = node;
    if (!at || !strcmp(kind, "move_leader"))
        at = live_leader(rw);
    if (!at)
        at = 1;
    c->slot = at;
    c->call_id = CTL_CALL_BIT | ++L->ctl_seq;
    c->deadline_s = run_target_wall_s() + CTL_TIMEOUT_MS / 1000.0;
    c->kind = kind;
    if (!strncmp(kind, "member_", 7)) {
        member_ctl(L, c, kind, arg);
        return;
    }
    static const struct {
        const char *name;
        enum rpc_ctl_kind kind;
    } kinds[] = {{"compact", RPC_CTL_COMPACT},
                 {"defrag", RPC_CTL_DEFRAG},
                 {"alarm_disarm", RPC_CTL_ALARM_DISARM},
                 {"move_leader", RPC_CTL_MOVE_LEADER},
                 {"snapshot_save", RPC_CTL_SNAPSHOT_SAVE}};
    size_t k = 0;
    while (k < FL_ARRAY_LEN(kinds) && strcmp(kind, kinds[k].name))
        k++;
    if (k == FL_ARRAY_LEN(kinds)) {
        ctl_finish(c, RPC_CODE_UNIMPLEMENTED, "not available on --target live");
        return;
    }
    uint64_t a = (uint64_t)arg;
    if (kinds[k].kind == RPC_CTL_MOVE_LEADER)
        a = arg >= 1 && arg <= L->n ? L->c.m[arg - 1].member_id : 0;
    struct rpc_ctl_req q;
    rpc_ctl_req_init(&q, kinds[k].kind, a);
    q.msg.call_id = c->call_id;
    struct lstat *s = &L->st[at];
    if (at > L->n || !s->connected || !L->c.m[at - 1].proc.running) {
        ctl_finish(c, RPC_CODE_UNAVAILABLE, rpc_err_text(RPC_ERR_CONN_REFUSED));
        return;
    }
    struct fl_buf f, b;
    fl_buf_init(&f);
    fl_buf_init(&b);
    rpc_client_msg_encode(&q.msg, &f);
    frame_put(&b, f.data, f.len);
    fl_buf_close(&f);
    write_buf((uv_stream_t *)&s->tcp, &b);
}

/* The frame of control call c on its member's Status connection (refused when that
 * member does not serve). */
static void ctl_send(struct run_live *L, struct lctl *c, const Rpc__ClientMsg *q)
{
    struct lstat *s = &L->st[c->slot];
    if (c->slot > L->n || !s->connected || !L->c.m[c->slot - 1].proc.running) {
        ctl_finish(c, RPC_CODE_UNAVAILABLE, rpc_err_text(RPC_ERR_CONN_REFUSED));
        return;
    }
    struct fl_buf f, b;
    fl_buf_init(&f);
    fl_buf_init(&b);
    rpc_client_msg_encode(q, &f);
    frame_put(&b, f.data, f.len);
    fl_buf_close(&f);
    write_buf((uv_stream_t *)&s->tcp, &b);
}

/* Membership calls (run_fault.c: member_add / member_add_unstarted with arg the learner
 * flag; member_remove / member_promote with arg the member's slot), to the leader as
 * the simulator's cluster_ctl.c sends them. A member add names its slot: the next one
 * (one more per add in flight), which every member learns from the directory. */
static void member_ctl(struct run_live *L, struct lctl *c, const char *kind, int64_t arg)
{
    Rpc__ClientMsg q = RPC__CLIENT_MSG__INIT;
    Rpc__MemberAddRequest add = RPC__MEMBER_ADD_REQUEST__INIT;
    Rpc__MemberRemoveRequest rm = RPC__MEMBER_REMOVE_REQUEST__INIT;
    Rpc__MemberPromoteRequest pr = RPC__MEMBER_PROMOTE_REQUEST__INIT;
    q.call_id = c->call_id;
    if (!strcmp(kind, "member_add") || !strcmp(kind, "member_add_unstarted")) {
        if (L->n + L->adds >= FL_MIN(LV_MEMBERS_MAX, SRV_PROC_NODES_MAX)) {
            ctl_finish(c, RPC_CODE_RESOURCE_EXHAUSTED,
                       "target live: no slot left for a new member process");
            return;
        }
        c->start = !strcmp(kind, "member_add");
        add.islearner = arg != 0;
        add.node = (uint32_t)(L->n + 1 + L->adds);
        add.no_start = !c->start;
        q.method = RPC__METHOD__METHOD_MEMBER_ADD;
        q.req_case = RPC__CLIENT_MSG__REQ_MEMBER_ADD;
        q.member_add = &add;
        c->add = true;
        L->adds++;
    } else if (!strcmp(kind, "member_remove") || !strcmp(kind, "member_promote")) {
        if (arg < 1 || arg > L->n) {
            ctl_finish(c, RPC_CODE_NOT_FOUND, rpc_err_text(RPC_ERR_MEMBER_NOT_FOUND));
            return;
        }
        c->node = (int)arg;
        uint64_t id = L->c.m[arg - 1].member_id;
        if (kind[7] == 'r') {
            rm.id = id;
            q.method = RPC__METHOD__METHOD_MEMBER_REMOVE;
            q.req_case = RPC__CLIENT_MSG__REQ_MEMBER_REMOVE;
            q.member_remove = &rm;
        } else {
            pr.id = id;
            q.method = RPC__METHOD__METHOD_MEMBER_PROMOTE;
            q.req_case = RPC__CLIENT_MSG__REQ_MEMBER_PROMOTE;
            q.member_promote = &pr;
        }
    } else {
        ctl_finish(c, RPC_CODE_UNIMPLEMENTED, "not available on --target live");
        return;
    }
    ctl_send(L, c, &q);
}

/* ---- copy_db and restore --------------------------------------------------------------------- */

static bool ctl_finished(void *arg)
{
    return ((const struct lctl *)arg)->finished;
}

/* copy_db(n): the member's db file as it is now. The process holds it, so the harness
 * asks for it as `etcdctl snapshot save` does (snapshot_save on the member's Status
 * connection, waited for in place, at most 10 s) and keeps the db image inside the
 * backup, without its hash: what the simulator's copy_db gives (backup.h). FL_ENOENT
 * when the member does not run or answers nothing. */
static int live_copy_db(struct run_world *rw, int node, uint8_t **data, size_t *len)
{
    struct run_live *L = rw->lv;
    *data = NULL;
    *len = 0;
    if (!L || node < 1 || node > L->n || !L->c.m[node - 1].proc.running ||
        L->c.m[node - 1].proc.paused || !L->st[node].connected)
        return FL_ENOENT;
    struct lctl *c = fl_calloc(1, sizeof *c);
    c->L = L;
    c->slot = node;
    c->sync = true;
    c->kind = "copy_db";
    c->call_id = CTL_CALL_BIT | ++L->ctl_seq;
    c->deadline_s = run_target_wall_s() + CTL_TIMEOUT_MS / 1000.0;
    fl_buf_init(&c->data);
    RUN_LINK(L->ctls, c);
    struct rpc_ctl_req q;
    rpc_ctl_req_init(&q, RPC_CTL_SNAPSHOT_SAVE, 0);
    q.msg.call_id = c->call_id;
    ctl_send(L, c, &q.msg);
    lv_run_until(&L->loop, ctl_finished, c, CTL_TIMEOUT_MS + 2 * POLL_MS);
    int rc = FL_ENOENT;
    const uint8_t *db;
    size_t db_len;
    if (c->finished && !c->code &&
        srv_proc_backup_db(c->data.data, c->data.len, &db, &db_len) == FL_OK) {
        *data = fl_malloc(db_len ? db_len : 1);
        memcpy(*data, db, db_len);
        *len = db_len;
        rc = FL_OK;
    } else if (c->finished) {
        fl_log(FL_LOG_ERROR, "target live: copy_db(%d): %s", node,
               c->code ? c->text : "not a backup");
    }
    RUN_UNLINK(L->ctls, c);
    fl_buf_close(&c->data);
    free(c);
    return rc;
}

/* restore(backup, { nodes }): etcd's disaster recovery, as the etcd target does it with
 * `etcdutl snapshot restore` into fresh data directories: every member named is killed,
 * its data directory replaced by the backup restored as a new member of a new cluster
 * (new IDs; backup.h's checks first, with etcd's error texts), the directory updated,
 * and each started again on it. IDs come from the seed and the restore's ordinal. */
static int live_restore(struct run_world *rw, const uint8_t *data, size_t len, const int *nodes,
                        int n_nodes, bool skip_hash_check, char *err, size_t err_len)
{
    struct run_live *L = rw->lv;
    int rc = srv_proc_restore_check(data, len, skip_hash_check, err, err_len);
    if (rc)
        return rc;
    if (n_nodes <= 0 || n_nodes > SRV_PROC_NODES_MAX) {
        snprintf(err, err_len, "restore needs between 1 and %d nodes", SRV_PROC_NODES_MAX);
        return FL_EINVAL;
    }
    for (int i = 0; i < n_nodes; i++)
        if (nodes[i] < 1 || nodes[i] > L->n || L->b[nodes[i]].awaits_start) {
            snprintf(err, err_len, "restore names a node that does not exist");
            return FL_EINVAL;
        }
    uint64_t base =
        rw->seed ^ ((uint64_t)++L->restores << 48) ^ 0x726573746f7265ULL; /* "restore" */
    uint64_t ids[SRV_PROC_NODES_MAX], cluster_id = srv_proc_cluster_id(base);
    for (int i = 0; i < n_nodes; i++)
        ids[i] = srv_proc_member_id(base, nodes[i]);
    for (int i = 0; i < n_nodes && !rc; i++) {
        int slot = nodes[i];
        struct lv_member *m = &L->c.m[slot - 1];
        live_node_fault(rw, slot, "kill");
        const char *e = NULL;
        struct fl_env *env = env_uv_new(&L->loop, slot, m->data_dir, rw->seed, &e);
        if (!env) {
            snprintf(err, err_len, "restore: %s: %s", m->data_dir, e);
            return FL_EIO;
        }
        rc = srv_proc_restore_dir(env, data, len, skip_hash_check, ids[i], cluster_id, ids, n_nodes,
                                  err, err_len);
        while (env_uv_fsyncs(env))
            uv_run(&L->loop, UV_RUN_ONCE);
        env_uv_free(env);
        uv_run(&L->loop, UV_RUN_NOWAIT);
        m->events_off = 0; /* the event file went with the old directory */
        L->st[slot].cluster_id = 0;
        m->member_id = ids[i];
        m->started = true;
        L->b[slot].removed = false;
    }
    struct fl_buf eb;
    fl_buf_init(&eb);
    if (!rc && lv_member_dir_write(&L->c, &eb) != FL_OK) {
        snprintf(err, err_len, "restore: %s", fl_buf_cstr(&eb));
        rc = FL_EIO;
    }
    fl_buf_close(&eb);
    if (rc)
        return rc;
    for (int i = 0; i < n_nodes; i++) {
        live_node_fault(rw, nodes[i], "restart");
        struct srv_event ev;
        memset(&ev, 0, sizeof ev);
        ev.at_ns = sim_now_ns(rw->w);
        ev.node = nodes[i];
        ev.member_id = ids[i];
        ev.kind = SRV_EV_RESTART;
        ev.term = 1;
        ev.detail = "restored from a backup into a new cluster";
        run_events_note(rw, &ev);
    }
    return FL_OK;
}

/* ---- failpoints ------------------------------------------------------------------------------ */

/* failpoint(name, { node, action, ... }) in the member processes: the node code's
 * failpoints fire in env_uv as in the simulator (a crash ends the process as a panic
 * does); the member's list goes to DATA/failpoints and the member reads it at SIGUSR2,
 * sent once the process answered a Status since its start (as skew's), and at every
 * start. The simulated disk's and network's failpoints (disk/..., net/...) have no site
 * in a member process: refused. */
static int live_failpoint(struct run_world *rw, const char *name, int node,
                          const struct flt_spec *spec, bool off, char *err, size_t err_len)
{
    struct run_live *L = rw->lv;
    int fp = 0;
    while (fp < FLT_POINT_COUNT && strcmp(flt_point_name((enum flt_point)fp), name))
        fp++;
    if (fp >= FLT_DISK_FSYNC_EIO) {
        snprintf(err, err_len,
                 "failpoint '%s': not available on --target live (the simulated disk's and "
                 "network's; a member process has the node code's only)",
                 name);
        return FL_EUNSUP;
    }
    static const char *const actions[] = {"none", "crash", "error", "delay", "drop"};
    for (int slot = node ? node : 1; slot <= (node ? node : L->n); slot++) {
        struct lbridge *b = &L->b[slot];
        int k = 0;
        while (k < b->n_fps && b->fps[k].fp != fp)
            k++;
        if (off) {
            if (k < b->n_fps)
                b->fps[k] = b->fps[--b->n_fps];
        } else {
            if (k == b->n_fps && b->n_fps == (int)FL_ARRAY_LEN(b->fps)) {
                snprintf(err, err_len, "failpoint '%s': at most %d on one member", name,
                         (int)FL_ARRAY_LEN(b->fps));
                return FL_EFULL;
            }
            if (k == b->n_fps)
                b->n_fps++;
            b->fps[k].fp = fp;
            snprintf(b->fps[k].line, sizeof b->fps[k].line, "%s %s %lld %u %u %u\n", name,
                     actions[spec->action], (long long)spec->delay_ms, spec->p_ppm, spec->count,
                     spec->skip);
        }
        struct fl_buf path, tmp;
        fl_buf_init(&path);
        fl_buf_init(&tmp);
        fl_buf_printf(&path, "%s/failpoints", L->c.m[slot - 1].data_dir);
        fl_buf_printf(&tmp, "%s.tmp", fl_buf_cstr(&path));
        FILE *f = fopen(fl_buf_cstr(&tmp), "w");
        bool ok = f != NULL;
        for (int i = 0; ok && i < b->n_fps; i++)
            ok = fputs(b->fps[i].line, f) >= 0;
        if (f && fclose(f))
            ok = false;
        ok = ok && rename(fl_buf_cstr(&tmp), fl_buf_cstr(&path)) == 0;
        if (!ok)
            snprintf(err, err_len, "failpoint: cannot write %s", fl_buf_cstr(&path));
        fl_buf_close(&path);
        fl_buf_close(&tmp);
        if (!ok)
            return FL_EIO;
        b->fp_pending = true; /* a member not running reads it at its start */
        fp_signal(L, slot);
    }
    return FL_OK;
}

/* ---- the target's table -------------------------------------------------------------------------
 */

/* What the live target cannot do (yet), and why. */
static const struct run_target_refusal live_refuses[] = {
    {"bug", "bug switches are set in the harness process, not in the member processes"},
    {"hold", "holding frames in flight is a simulator fault (use clog)"},
    {"release", "holding frames in flight is a simulator fault (use clog)"},
    {"swarm", "the swarm draws simulator-only faults (power loss, failpoints, net bursts)"},
    {"on", "typed Raft events of member processes do not reach the harness"},
    {"config", "a member's configuration is read in its own process (see its log)"},
    {NULL, NULL},
};

const struct run_target_ops run_target_live_ops = {
    .name = "live",
    .setup = live_setup,
    .close = live_close,
    .pace = live_pace,
    .advance = live_advance,
    .slots = live_slots,
    .node_proc = live_node_proc,
    .alive = live_alive,
    .removed = live_removed,
    .awaits_start = live_awaits_start,
    .member_start = live_member_start,
    .leader = live_leader,
    .node_status = live_node_status,
    .version = live_version,
    .set_prevote = live_set_prevote,
    .node_fault = live_node_fault,
    .skew = live_skew,
    .net_sync = live_net_sync,
    .clog = live_clog,
    .ctl = live_ctl,
    .failpoint = live_failpoint,
    .copy_db = live_copy_db,
    .restore = live_restore,
    .converged = NULL,
    .checkpoints = NULL,
    .nemesis_kinds = RUN_NEMESIS_PARTITION | RUN_NEMESIS_KILL | RUN_NEMESIS_PAUSE,
    .refuses = live_refuses,
};
