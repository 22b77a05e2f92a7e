/*
 * net.c: the simulated network (see net.h for the model). Frames are heap copies
 * of the caller's bytes plus a header; each travels as one world-level event that
 * fires when the frame reaches the receiving end of its link. There the "kernel"
 * part runs (partition/clog/hold wait, CRC check, loss breaking the connection,
 * SYN handling), and what the process must see (accept, open, message, close) runs
 * through sim__run_in_proc, so a paused process gets it deferred in order and a
 * dead one never gets it.
 *
 * Order on a connection: each end remembers the arrival time of the last frame it
 * sent and never schedules a later frame earlier; equal times keep send order by
 * the queue's sequence numbers. Frames that must wait at a link join the link's
 * queue, and while the queue is non-empty every new arrival on that link queues
 * behind it; a drain event delivers the whole queue in order once the link is
 * open again.
 *
 * The fault controls (link parameters, partitions, clog/hold) are in net_ctl.c.
 *
 * Never hold a struct net_conn pointer across a user callback: the callback may
 * open connections and move the array.
 */
#include "harness/sim/net_int.h"

/* ---------------------------------------------------------------- helpers -----*/

static inline net_sock sock_make(const struct net_conn *c, uint32_t idx, int side)
{
    return ((uint64_t)c->gen << 32) | ((uint64_t)idx << 1) | (uint64_t)side;
}

static struct net_conn *conn_get(const struct sim_world *w, uint32_t idx, uint32_t gen)
{
    struct net_state *n = w->net;
    if (idx >= n->nconns)
        return NULL;
    struct net_conn *c = &n->conns[idx];
    return c->used && c->gen == gen ? c : NULL;
}

static struct net_conn *sock_get(const struct sim_world *w, net_sock s, uint32_t *idx, int *side)
{
    if (s == 0)
        return NULL;
    *idx = (uint32_t)(s & 0xffffffffu) >> 1;
    *side = (int)(s & 1);
    return conn_get(w, *idx, (uint32_t)(s >> 32));
}

static struct net_frame *frame_new(int type, int from, int to, const void *p, size_t len)
{
    struct net_frame *f = fl_malloc(sizeof(*f) + len);
    memset(f, 0, sizeof(*f));
    f->state = FS_NEW;
    f->type = (uint8_t)type;
    f->from = from;
    f->to = to;
    f->len = len;
    if (len)
        memcpy(f->data, p, len);
    f->crc = fl_crc32c(0, f->data, len);
    /* The digest tag: the frame's CRC32C already covers every payload byte, so it
     * stands in for them without hashing the payload a second time. */
    f->tag = ((uint64_t)type << 56) ^ ((uint64_t)(len & 0xffffff) << 32) ^ f->crc;
    return f;
}

/* Moves f from one of the states in `from` (a bit set of 1 << FS_x - FS_NEW) to
 * `to`; anything else is a frame seen twice (a double delivery or a stale pointer). */
#define FS_BIT(s) (1u << ((s)-FS_NEW))
static void frame_step(struct net_frame *f, unsigned from, int to)
{
    FL_ASSERTF(f->state >= FS_NEW && f->state <= FS_DONE && (FS_BIT(f->state) & from),
               "simulator frame in state %d cannot go to %d (type %d, %d->%d, %zu bytes): a "
               "frame delivered or dropped twice",
               f->state, to, f->type, f->from, f->to, f->len);
    f->state = (uint8_t)to;
}

/* The end of a frame's life: delivered or dropped, from any live state. */
static void frame_release(struct net_frame *f)
{
    frame_step(f,
               FS_BIT(FS_NEW) | FS_BIT(FS_WIRE) | FS_BIT(FS_LINK) | FS_BIT(FS_ARRIVED) |
                   FS_BIT(FS_PROC),
               FS_DONE);
    free(f);
}

/* The drop function of a frame's pending event (a discarded event, a dead process):
 * the frame is on the wire or handed to its process. */
static void frame_free(void *ctx)
{
    struct net_frame *f = ctx;
    frame_step(f, FS_BIT(FS_WIRE) | FS_BIT(FS_PROC), FS_PROC);
    frame_release(f);
}

/* Hands an arrived frame to its receiving process (fn runs there, now or later). */
static void frame_to_proc(struct sim_world *w, int proc, uint32_t kind, uint64_t tag,
                          sim_event_fn *fn, struct net_frame *f)
{
    frame_step(f, FS_BIT(FS_ARRIVED), FS_PROC);
    sim__run_in_proc(w, proc, kind, f->from, f->to, tag, fn, frame_free, f);
}

/* The callback of a handed frame runs: once. */
static struct net_frame *frame_in_proc(void *ctx)
{
    struct net_frame *f = ctx;
    frame_step(f, FS_BIT(FS_PROC), FS_PROC);
    return f;
}

static int64_t draw_latency(struct sim_world *w, const struct net_linkst *l)
{
    int64_t lat = l->p.latency_ns;
    if (l->p.jitter_ns > 0)
        lat += sim_rng_range(w->net->rng, 0, l->p.jitter_ns);
    return lat;
}

static void count_drop(struct sim_world *w, const struct net_frame *f)
{
    if (f->type != FR_DATA && f->type != FR_DGRAM)
        return;
    struct net_stats *st = &w->net->stats[f->from];
    st->dropped_msgs++;
    st->dropped_bytes += f->len;
}

static void drop_frame(struct sim_world *w, struct net_frame *f)
{
    count_drop(w, f);
    frame_release(f);
}

/* Flips one bit chosen by the net stream; the receiver's CRC check catches it. */
static void corrupt_frame(struct sim_world *w, struct net_frame *f)
{
    f->corrupt = true;
    if (f->len == 0) {
        f->crc ^= 1;
        return;
    }
    uint64_t bit = sim_rng_below(w->net->rng, (uint64_t)f->len * 8);
    f->data[bit / 8] ^= (uint8_t)(1u << (bit % 8));
}

/* The receiver's CRC check. CRC32C detects every single-bit error, and corrupt_frame
 * is the only thing that changes a frame after frame_new, so the check fails exactly
 * for the frames it hit: the flag gives the answer without hashing every delivered
 * frame a second time (unit.sim.test_net checks corrupt frames never arrive). */
static bool frame_intact(const struct net_frame *f)
{
    return !f->corrupt;
}

static void frame_arrive(struct sim_world *w, void *ctx);

/* Sends f from end `side` of conn idx to the other end, in order. */
static void conn_emit(struct sim_world *w, uint32_t idx, int side, struct net_frame *f)
{
    struct net_conn *c = &w->net->conns[idx];
    struct net_end *e = &c->end[side];
    f->conn_idx = idx;
    f->conn_gen = c->gen;
    f->to_side = (uint8_t)(1 - side);
    f->port = c->port;
    int64_t at = w->now_ns + draw_latency(w, net__link_at(w, f->from, f->to));
    if (at < e->last_arrival_ns)
        at = e->last_arrival_ns;
    e->last_arrival_ns = at;
    frame_step(f, FS_BIT(FS_NEW), FS_WIRE);
    sim__schedule(w, at, -1, SIM_EV_NET, f->from, f->to, f->tag, frame_arrive, frame_free, f);
}

/* Sends a control frame (SYN-ACK, FIN, reset) from end `side`. */
static void ctl_send(struct sim_world *w, uint32_t idx, int side, int type, int reason)
{
    struct net_conn *c = &w->net->conns[idx];
    struct net_frame *f = frame_new(type, c->end[side].proc, c->end[1 - side].proc, NULL, 0);
    f->reason = (uint8_t)reason;
    conn_emit(w, idx, side, f);
}

static void conn_maybe_free(struct sim_world *w, uint32_t idx)
{
    struct net_state *n = w->net;
    struct net_conn *c = &n->conns[idx];
    if (c->end[0].state != END_CLOSED)
        return;
    if (c->end[1].state != END_CLOSED && c->end[1].state != END_NONE)
        return;
    c->used = false;
    c->gen++;
    if (c->gen == 0)
        c->gen = 1;
    c->next_free = n->free_conn;
    n->free_conn = idx;
}

/* ---------------------------------------------------------------- delivery ----*/

static void close_cb(struct sim_world *w, void *ctx)
{
    struct net_frame *f = frame_in_proc(ctx);
    struct net_conn *c = conn_get(w, f->conn_idx, f->conn_gen);
    if (c && c->end[f->to_side].state != END_CLOSED) {
        struct net_end *e = &c->end[f->to_side];
        net_sock s = sock_make(c, f->conn_idx, f->to_side);
        struct net_sock_ops ops = e->ops;
        void *uctx = e->ctx;
        e->state = END_CLOSED;
        conn_maybe_free(w, f->conn_idx);
        if (ops.on_close)
            ops.on_close(w, s, f->reason, uctx);
    }
    frame_release(f);
}

/* The end to_side of the frame's connection learns the peer is gone. */
static void end_peer_gone(struct sim_world *w, struct net_frame *f, int reason)
{
    struct net_conn *c = &w->net->conns[f->conn_idx];
    struct net_end *e = &c->end[f->to_side];
    if (e->state != END_CONNECTING && e->state != END_OPEN) {
        frame_release(f);
        return;
    }
    e->state = END_PEER_GONE;
    f->reason = (uint8_t)reason;
    frame_step(f, FS_BIT(FS_WIRE) | FS_BIT(FS_ARRIVED), FS_ARRIVED); /* WIRE: link overflow */
    frame_to_proc(w, e->proc, SIM_EV_NET_CTL, (uint64_t)reason, close_cb, f);
}

/* A lost or corrupt frame: the receiver is told at once, the sender by a reset. */
static void conn_break(struct sim_world *w, struct net_frame *f)
{
    count_drop(w, f);
    struct net_conn *c = &w->net->conns[f->conn_idx];
    int sender = 1 - f->to_side;
    if (c->end[sender].state != END_CLOSED && c->end[sender].state != END_NONE)
        ctl_send(w, f->conn_idx, f->to_side, FR_RST, NET_CLOSE_RESET);
    f->len = 0;
    end_peer_gone(w, f, NET_CLOSE_RESET);
}

static void data_cb(struct sim_world *w, void *ctx)
{
    struct net_frame *f = frame_in_proc(ctx);
    struct net_conn *c = conn_get(w, f->conn_idx, f->conn_gen);
    if (!c || c->end[f->to_side].state == END_CLOSED) {
        drop_frame(w, f);
        return;
    }
    struct net_end *e = &c->end[f->to_side];
    FL_ASSERTF(e->bound, "accepted socket of %s was never bound", sim_proc_name(w, e->proc));
    if (!e->ops.on_message) {
        drop_frame(w, f); /* a send-only socket: what arrives is discarded */
        return;
    }
    struct net_stats *st = &w->net->stats[f->to];
    st->delivered_msgs++;
    st->delivered_bytes += f->len;
    net_sock s = sock_make(c, f->conn_idx, f->to_side);
    e->ops.on_message(w, s, f->data, f->len, e->ctx);
    frame_release(f);
}

static void on_data(struct sim_world *w, struct net_frame *f)
{
    struct net_conn *c = conn_get(w, f->conn_idx, f->conn_gen);
    if (!c) {
        drop_frame(w, f);
        return;
    }
    int st = c->end[f->to_side].state;
    if (st == END_CLOSED && c->end[f->to_side].reset_owed &&
        sim_proc_alive(w, c->end[f->to_side].proc)) { /* a dead machine answers nothing */
        c->end[f->to_side].reset_owed = false;
        int ps = c->end[1 - f->to_side].state;
        if (ps == END_OPEN || ps == END_CONNECTING)
            ctl_send(w, f->conn_idx, f->to_side, FR_RST, NET_CLOSE_RESET);
    }
    if (st == END_CLOSED || st == END_NONE || c->end[1 - f->to_side].hole) {
        drop_frame(w, f);
        return;
    }
    if (f->lost || !frame_intact(f)) {
        conn_break(w, f);
        return;
    }
    frame_to_proc(w, f->to, SIM_EV_NET, f->tag, data_cb, f);
}

static struct net_listener *listener_find(const struct sim_world *w, int proc, int port)
{
    struct net_state *n = w->net;
    for (size_t i = 0; i < n->nlis; i++)
        if (n->lis[i].proc == proc && n->lis[i].port == port)
            return &n->lis[i];
    return NULL;
}

static void accept_cb(struct sim_world *w, void *ctx)
{
    struct net_frame *f = frame_in_proc(ctx);
    struct net_conn *c = conn_get(w, f->conn_idx, f->conn_gen);
    if (!c || c->end[1].state == END_CLOSED) {
        frame_release(f);
        return;
    }
    net_sock s = sock_make(c, f->conn_idx, 1);
    struct net_listener *l = listener_find(w, f->to, f->port);
    if (!l) {
        net_close(w, s); /* stopped listening meanwhile */
        frame_release(f);
        return;
    }
    l->fn(w, s, f->from, l->ctx);
    c = conn_get(w, f->conn_idx, f->conn_gen);
    FL_ASSERTF(!c || c->end[1].bound || c->end[1].state == END_CLOSED,
               "accept callback of %s neither bound nor closed the socket",
               sim_proc_name(w, f->to));
    frame_release(f);
}

static void on_syn(struct sim_world *w, struct net_frame *f)
{
    struct net_conn *c = conn_get(w, f->conn_idx, f->conn_gen);
    if (!c) {
        frame_release(f);
        return;
    }
    if (!sim_proc_alive(w, f->to) || !listener_find(w, f->to, f->port)) {
        ctl_send(w, f->conn_idx, 1, FR_RST, NET_CLOSE_REFUSED);
        frame_release(f);
        return;
    }
    struct net_end *e = &c->end[1];
    e->state = END_OPEN;
    e->bound = false;
    ctl_send(w, f->conn_idx, 1, FR_SYNACK, 0);
    frame_to_proc(w, f->to, SIM_EV_NET_CTL, f->tag, accept_cb, f);
}

static void open_cb(struct sim_world *w, void *ctx)
{
    struct net_frame *f = frame_in_proc(ctx);
    struct net_conn *c = conn_get(w, f->conn_idx, f->conn_gen);
    if (c && c->end[0].state != END_CLOSED) {
        struct net_end *e = &c->end[0];
        w->net->stats[e->proc].conns_opened++;
        if (e->ops.on_open)
            e->ops.on_open(w, sock_make(c, f->conn_idx, 0), e->ctx);
    }
    frame_release(f);
}

static void on_synack(struct sim_world *w, struct net_frame *f)
{
    struct net_conn *c = conn_get(w, f->conn_idx, f->conn_gen);
    if (!c || c->end[0].state != END_CONNECTING) {
        frame_release(f);
        return;
    }
    c->end[0].state = END_OPEN;
    frame_to_proc(w, f->to, SIM_EV_NET_CTL, f->tag, open_cb, f);
}

static void on_close_frame(struct sim_world *w, struct net_frame *f)
{
    if (!conn_get(w, f->conn_idx, f->conn_gen)) {
        frame_release(f);
        return;
    }
    end_peer_gone(w, f, f->reason);
}

static struct net_binding *binding_find(const struct sim_world *w, int proc, int port)
{
    struct net_state *n = w->net;
    for (size_t i = 0; i < n->nbinds; i++)
        if (n->binds[i].proc == proc && n->binds[i].port == port)
            return &n->binds[i];
    return NULL;
}

static void dgram_cb(struct sim_world *w, void *ctx)
{
    struct net_frame *f = frame_in_proc(ctx);
    struct net_binding *b = binding_find(w, f->to, f->port);
    if (!b) {
        drop_frame(w, f);
        return;
    }
    struct net_stats *st = &w->net->stats[f->to];
    st->delivered_msgs++;
    st->delivered_bytes += f->len;
    b->fn(w, f->from, f->to, f->data, f->len, b->ctx);
    frame_release(f);
}

static void on_dgram(struct sim_world *w, struct net_frame *f)
{
    if (!sim_proc_alive(w, f->to) || !frame_intact(f) || !binding_find(w, f->to, f->port)) {
        drop_frame(w, f);
        return;
    }
    frame_to_proc(w, f->to, SIM_EV_NET, f->tag, dgram_cb, f);
}

static void frame_deliver(struct sim_world *w, struct net_frame *f)
{
    frame_step(f, FS_BIT(FS_WIRE) | FS_BIT(FS_LINK), FS_ARRIVED);
    switch (f->type) {
    case FR_DATA:
        on_data(w, f);
        break;
    case FR_SYN:
        on_syn(w, f);
        break;
    case FR_SYNACK:
        on_synack(w, f);
        break;
    case FR_FIN:
    case FR_RST:
        on_close_frame(w, f);
        break;
    case FR_DGRAM:
        on_dgram(w, f);
        break;
    default:
        FL_UNREACHABLE();
    }
}

/* ---------------------------------------------------------------- links -------*/

static void drain_cb(struct sim_world *w, void *ctx);

static void *link_key(int from, int to)
{
    return (void *)(uintptr_t)(((uint64_t)(uint32_t)from << 32) | (uint32_t)to);
}

void net__link_schedule_drain(struct sim_world *w, int from, int to)
{
    struct net_linkst *l = net__link_at(w, from, to);
    if (l->drain_scheduled || l->nq == 0 || !net__link_open(l))
        return;
    l->drain_scheduled = true;
    sim__schedule(w, w->now_ns, -1, SIM_EV_NET, from, to, l->nq, drain_cb, NULL,
                  link_key(from, to));
}

/* Frames of a connection waiting at a link count against NET_QUEUE_MAX. */
static void waiting_adjust(struct sim_world *w, const struct net_frame *f, int delta)
{
    if (f->type != FR_DATA)
        return;
    struct net_conn *c = conn_get(w, f->conn_idx, f->conn_gen);
    if (c)
        c->end[1 - f->to_side].waiting += (uint32_t)delta;
}

static void link_enqueue(struct sim_world *w, struct net_linkst *l, struct net_frame *f)
{
    if (f->type == FR_DATA) {
        struct net_conn *c = conn_get(w, f->conn_idx, f->conn_gen);
        if (c && c->end[1 - f->to_side].waiting >= NET_QUEUE_MAX) {
            /* The sender's buffer is full: the connection breaks at the sender. */
            int sender = 1 - f->to_side;
            if (c->end[f->to_side].state != END_CLOSED && c->end[f->to_side].state != END_NONE)
                ctl_send(w, f->conn_idx, sender, FR_RST, NET_CLOSE_RESET);
            count_drop(w, f);
            f->to_side = (uint8_t)sender;
            f->len = 0;
            end_peer_gone(w, f, NET_CLOSE_OVERFLOW);
            return;
        }
    }
    FL_GROW(l->q, l->cap, l->nq + 1, 16);
    frame_step(f, FS_BIT(FS_WIRE), FS_LINK);
    l->q[l->nq++] = f;
    waiting_adjust(w, f, 1);
}

static void frame_arrive(struct sim_world *w, void *ctx)
{
    struct net_frame *f = ctx;
    frame_step(f, FS_BIT(FS_WIRE), FS_WIRE); /* arrives once */
    struct net_linkst *l = net__link_at(w, f->from, f->to);
    if (net__link_open(l) && l->nq == 0) {
        frame_deliver(w, f);
        return;
    }
    if (l->blocked && !l->clogged && !l->held && f->type == FR_DGRAM) {
        drop_frame(w, f); /* a partition drops datagrams */
        return;
    }
    int from = f->from, to = f->to;
    link_enqueue(w, l, f); /* may consume f (overflow) */
    net__link_schedule_drain(w, from, to);
}

static void drain_cb(struct sim_world *w, void *ctx)
{
    uint64_t key = (uint64_t)(uintptr_t)ctx;
    int from = (int)(key >> 32), to = (int)(uint32_t)key;
    struct net_linkst *l = net__link_at(w, from, to);
    l->drain_scheduled = false;
    if (!net__link_open(l))
        return;
    struct net_frame **q = l->q;
    size_t nq = l->nq;
    l->q = NULL;
    l->nq = l->cap = 0;
    for (size_t i = 0; i < nq; i++) {
        struct net_frame *f = q[i];
        waiting_adjust(w, f, -1);
        sim__digest_event(w, w->now_ns, SIM_EV_NET, f->from, f->to, f->tag);
        frame_deliver(w, f);
    }
    free(q);
}

/* ---------------------------------------------------------------- state -------*/

void net__init(struct sim_world *w)
{
    struct net_state *n = fl_calloc(1, sizeof(*n));
    n->defaults.latency_ns = 500 * FL_US;
    n->defaults.jitter_ns = 500 * FL_US;
    n->free_conn = CONN_NONE;
    w->net = n;
    n->rng = sim_rng(w, "net");
}

void net__free(struct sim_world *w)
{
    struct net_state *n = w->net;
    if (!n)
        return;
    for (int a = 0; a < n->dim; a++)
        for (int b = 0; b < n->dim; b++) {
            struct net_linkst *l = &n->links[a * n->cap + b];
            for (size_t k = 0; k < l->nq; k++)
                frame_release(l->q[k]);
            free(l->q);
        }
    free(n->links);
    free(n->conns);
    free(n->lis);
    free(n->binds);
    free(n->stats);
    free(n);
    w->net = NULL;
}

void net__proc_added(struct sim_world *w, int proc)
{
    struct net_state *n = w->net;
    int dim = proc + 1;
    FL_ASSERT(dim == w->nprocs && dim > n->dim);
    if (dim > n->cap) {
        int cap = FL_MAX(dim, n->cap ? 2 * n->cap : 8);
        struct net_linkst *links = fl_calloc((size_t)cap * (size_t)cap, sizeof(*links));
        for (int a = 0; a < n->dim; a++)
            memcpy(&links[a * cap], &n->links[a * n->cap], (size_t)n->dim * sizeof(*links));
        free(n->links);
        n->links = links;
        n->cap = cap;
    }
    /* the new process's row and column: untouched zeroes until now */
    for (int a = 0; a < dim; a++) {
        n->links[a * n->cap + proc].p = n->defaults;
        n->links[proc * n->cap + a].p = n->defaults;
    }
    n->dim = dim;
    n->stats = fl_realloc(n->stats, (size_t)dim * sizeof(*n->stats));
    memset(&n->stats[proc], 0, sizeof(n->stats[proc]));
}

void net__proc_killed(struct sim_world *w, int proc)
{
    struct net_state *n = w->net;
    /* What the dead machine had sent but a partition, clog or hold kept at its links
     * never left it (unacknowledged segments it would have retransmitted): lost.
     * Frames already on the wire still arrive, unless they follow a lost one on the
     * same connection (struct net_end.hole). */
    for (int to = 0; to < n->dim; to++) {
        struct net_linkst *l = net__link_at(w, proc, to);
        for (size_t k = 0; k < l->nq; k++) {
            struct net_frame *f = l->q[k];
            struct net_conn *c = conn_get(w, f->conn_idx, f->conn_gen);
            if (c && f->type == FR_DATA)
                c->end[1 - f->to_side].hole = true;
            else if (c && (f->type == FR_RST || f->type == FR_FIN))
                c->end[1 - f->to_side].reset_owed = true;
            waiting_adjust(w, f, -1);
            drop_frame(w, f);
        }
        l->nq = 0;
    }
    for (uint32_t i = 0; i < n->nconns; i++) {
        struct net_conn *c = &n->conns[i];
        if (!c->used)
            continue;
        for (int side = 0; side < 2; side++) {
            struct net_end *e = &c->end[side];
            if (e->proc != proc || e->state == END_NONE || e->state == END_CLOSED)
                continue;
            e->state = END_CLOSED;
            int ps = c->end[1 - side].state;
            if (ps != END_NONE && ps != END_CLOSED)
                ctl_send(w, i, side, FR_RST, NET_CLOSE_RESET);
        }
        conn_maybe_free(w, i);
    }
    size_t j = 0;
    for (size_t i = 0; i < n->nlis; i++)
        if (n->lis[i].proc != proc)
            n->lis[j++] = n->lis[i];
    n->nlis = j;
    j = 0;
    for (size_t i = 0; i < n->nbinds; i++)
        if (n->binds[i].proc != proc)
            n->binds[j++] = n->binds[i];
    n->nbinds = j;
}

/* ---------------------------------------------------------------- sockets -----*/

const char *net_close_reason_str(int reason)
{
    static const char *const names[] = {[NET_CLOSE_REFUSED] = "refused",
                                        [NET_CLOSE_PEER] = "closed by peer",
                                        [NET_CLOSE_RESET] = "reset",
                                        [NET_CLOSE_OVERFLOW] = "send buffer overflow"};
    return FL_ENUM_NAME(names, reason, "unknown");
}

int net_listen(struct sim_world *w, int proc, int port, net_accept_fn *fn, void *ctx)
{
    FL_ASSERT(fn != NULL);
    if (!sim_proc_alive(w, proc))
        return FL_EDOWN;
    if (listener_find(w, proc, port))
        return FL_EEXIST;
    struct net_state *n = w->net;
    FL_GROW(n->lis, n->cap_lis, n->nlis + 1, 8);
    n->lis[n->nlis++] = (struct net_listener){proc, port, fn, ctx};
    return FL_OK;
}

int net_unlisten(struct sim_world *w, int proc, int port)
{
    struct net_listener *l = listener_find(w, proc, port);
    if (!l)
        return FL_ENOENT;
    struct net_state *n = w->net;
    size_t i = (size_t)(l - n->lis);
    memmove(&n->lis[i], &n->lis[i + 1], (n->nlis - i - 1) * sizeof(*n->lis));
    n->nlis--;
    return FL_OK;
}

static uint32_t conn_alloc(struct sim_world *w)
{
    struct net_state *n = w->net;
    if (n->free_conn != CONN_NONE) {
        uint32_t i = n->free_conn;
        n->free_conn = n->conns[i].next_free;
        return i;
    }
    FL_ASSERT(n->nconns < (UINT32_MAX >> 2));
    FL_GROW(n->conns, n->cap_conns, n->nconns + 1, 64);
    uint32_t i = n->nconns++;
    n->conns[i].gen = 1;
    return i;
}

net_sock net_connect(struct sim_world *w, int from, int to, int port,
                     const struct net_sock_ops *ops, void *ctx)
{
    FL_ASSERT(ops != NULL);
    if (!sim_proc_alive(w, from))
        return 0;
    sim__proc(w, to);
    uint32_t idx = conn_alloc(w);
    struct net_conn *c = &w->net->conns[idx];
    uint32_t gen = c->gen;
    memset(c, 0, sizeof(*c));
    c->gen = gen;
    c->used = true;
    c->port = port;
    c->end[0] = (struct net_end){.proc = from,
                                 .state = END_CONNECTING,
                                 .bound = true,
                                 .ops = *ops,
                                 .ctx = ctx,
                                 .last_arrival_ns = INT64_MIN};
    c->end[1] = (struct net_end){.proc = to, .state = END_NONE, .last_arrival_ns = INT64_MIN};
    struct net_frame *f = frame_new(FR_SYN, from, to, NULL, 0);
    conn_emit(w, idx, 0, f);
    return sock_make(c, idx, 0);
}

int net_sock_bind(struct sim_world *w, net_sock s, const struct net_sock_ops *ops, void *ctx)
{
    uint32_t idx;
    int side;
    struct net_conn *c = sock_get(w, s, &idx, &side);
    if (!c || c->end[side].state == END_CLOSED)
        return FL_EDOWN;
    c->end[side].ops = *ops;
    c->end[side].ctx = ctx;
    c->end[side].bound = true;
    return FL_OK;
}

int net_send(struct sim_world *w, net_sock s, const void *p, size_t n)
{
    uint32_t idx;
    int side;
    struct net_conn *c = sock_get(w, s, &idx, &side);
    if (!c)
        return FL_EDOWN;
    struct net_end *e = &c->end[side];
    if (e->state != END_CONNECTING && e->state != END_OPEN)
        return FL_EDOWN;
    int from = e->proc, to = c->end[1 - side].proc;
    if (!sim_proc_alive(w, from))
        return FL_EDOWN;
    if (w->net->tap)
        w->net->tap(w->net->tap_ctx, from, to, c->port, p, n);
    struct net_frame *f = frame_new(FR_DATA, from, to, p, n);
    struct net_stats *st = &w->net->stats[from];
    st->sent_msgs++;
    st->sent_bytes += n;
    const struct net_linkst *l = net__link_at(w, from, to);
    struct sim_fault_hit hit;
    if (sim_rng_chance_ppm(w->net->rng, l->p.loss_ppm) ||
        sim_fault_check(w, from, FLT_NET_DROP, &hit))
        f->lost = true;
    if (sim_rng_chance_ppm(w->net->rng, l->p.corrupt_ppm) ||
        sim_fault_check(w, from, FLT_NET_CORRUPT, &hit))
        corrupt_frame(w, f);
    conn_emit(w, idx, side, f);
    return FL_OK;
}

void net_set_tap(struct sim_world *w, net_tap_fn *fn, void *ctx)
{
    w->net->tap = fn;
    w->net->tap_ctx = ctx;
}

void net_close(struct sim_world *w, net_sock s)
{
    uint32_t idx;
    int side;
    struct net_conn *c = sock_get(w, s, &idx, &side);
    if (!c || c->end[side].state == END_CLOSED)
        return;
    c->end[side].state = END_CLOSED;
    int ps = c->end[1 - side].state;
    if (ps != END_NONE && ps != END_CLOSED)
        ctl_send(w, idx, side, FR_FIN, NET_CLOSE_PEER);
    conn_maybe_free(w, idx);
}

bool net_sock_open(const struct sim_world *w, net_sock s)
{
    uint32_t idx;
    int side;
    struct net_conn *c = sock_get(w, s, &idx, &side);
    return c && c->end[side].state == END_OPEN;
}

int net_sock_proc(const struct sim_world *w, net_sock s)
{
    uint32_t idx;
    int side;
    struct net_conn *c = sock_get(w, s, &idx, &side);
    return c && c->end[side].state != END_CLOSED ? c->end[side].proc : -1;
}

int net_sock_peer(const struct sim_world *w, net_sock s)
{
    uint32_t idx;
    int side;
    struct net_conn *c = sock_get(w, s, &idx, &side);
    return c && c->end[side].state != END_CLOSED ? c->end[1 - side].proc : -1;
}

/* ---------------------------------------------------------------- datagrams ---*/

int net_dgram_bind(struct sim_world *w, int proc, int port, net_dgram_fn *fn, void *ctx)
{
    FL_ASSERT(fn != NULL);
    if (!sim_proc_alive(w, proc))
        return FL_EDOWN;
    struct net_binding *b = binding_find(w, proc, port);
    if (b) {
        b->fn = fn;
        b->ctx = ctx;
        return FL_OK;
    }
    struct net_state *n = w->net;
    FL_GROW(n->binds, n->cap_binds, n->nbinds + 1, 8);
    n->binds[n->nbinds++] = (struct net_binding){proc, port, fn, ctx};
    return FL_OK;
}

int net_dgram_send(struct sim_world *w, int from, int to, int port, const void *p, size_t n)
{
    if (!sim_proc_alive(w, from))
        return FL_EDOWN;
    sim__proc(w, to);
    struct net_state *ns = w->net;
    const struct net_linkst *l = net__link_at(w, from, to);
    struct net_stats *st = &ns->stats[from];
    st->sent_msgs++;
    st->sent_bytes += n;
    struct sim_fault_hit hit;
    if (sim_rng_chance_ppm(ns->rng, l->p.loss_ppm) ||
        sim_fault_check(w, from, FLT_NET_DROP, &hit)) {
        st->dropped_msgs++;
        st->dropped_bytes += n;
        return FL_OK;
    }
    int copies = sim_rng_chance_ppm(ns->rng, l->p.dup_ppm) ? 2 : 1;
    for (int i = 0; i < copies; i++) {
        struct net_frame *f = frame_new(FR_DGRAM, from, to, p, n);
        f->port = port;
        if (sim_rng_chance_ppm(ns->rng, l->p.corrupt_ppm) ||
            sim_fault_check(w, from, FLT_NET_CORRUPT, &hit))
            corrupt_frame(w, f);
        int64_t at = w->now_ns + draw_latency(w, l);
        frame_step(f, FS_BIT(FS_NEW), FS_WIRE);
        sim__schedule(w, at, -1, SIM_EV_NET, from, to, f->tag, frame_arrive, frame_free, f);
    }
    return FL_OK;
}
