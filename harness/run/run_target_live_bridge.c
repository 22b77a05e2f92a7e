/*
 * run_target_live_bridge.c: the bridges: a simulated process "n<slot>" per member that the clients
 * dial; each client connection becomes a real TCP connection to the member's client proxy, frames
 * copied both ways and entered into the world at the wall time they came (run_target_live.c tells
 * the whole design).
 */
#include "harness/run/run_target_live.h"

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

void lvt_frame_put(struct fl_buf *b, const uint8_t *p, size_t n)
{
    uint8_t h[4];
    put_u32(h, (uint32_t)n);
    fl_buf_append(b, h, 4);
    fl_buf_append(b, p, n);
}

/* env_uv's hello frame (env_uv.c eu_hello_put): "FLHI" and the dialler's address. */
void lvt_hello_put(struct fl_buf *b)
{
    uint8_t h[8] = {'F', 'L', 'H', 'I', 0, 0, 0, 0};
    put_u32(h + 4, LIVE_HELLO_ADDR);
    lvt_frame_put(b, h, sizeof h);
}

/* Appends the n bytes read to in, then hands every whole frame in it (4-byte
 * little-endian length and the bytes) to fn; what is left waits for more bytes. */
void lvt_frames_take(struct fl_buf *in, const char *bytes, size_t n,
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
void lvt_write_buf(uv_stream_t *s, struct fl_buf *b)
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

void lvt_msg_write(uv_stream_t *s, const Rpc__ClientMsg *m)
{
    struct fl_buf f, b;
    fl_buf_init(&f);
    fl_buf_init(&b);
    rpc_client_msg_encode(m, &f);
    lvt_frame_put(&b, f.data, f.len);
    fl_buf_close(&f);
    lvt_write_buf(s, &b);
}

void lvt_on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    (void)h;
    buf->base = fl_malloc(suggested);
    buf->len = suggested;
}

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

static void conn_closed(uv_handle_t *h)
{
    struct lconn *c = h->data;
    fl_buf_close(&c->out);
    fl_buf_close(&c->in);
    free(c);
}

/* Ends the real connection; tell: the client's socket closes too (after the frames
 * that came before). */
void lvt_conn_end(struct lconn *c, bool tell)
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
        lvt_frames_take(&c->in, buf->base, (size_t)nread, conn_frame, c);
    }
    free(buf->base);
    if (nread < 0)
        lvt_conn_end(c, true);
}

static void conn_connected(uv_connect_t *req, int status)
{
    struct lconn *c = req->data;
    if (c->closing)
        return;
    if (status < 0) {
        lvt_conn_end(c, true);
        return;
    }
    c->connected = true;
    uv_read_start((uv_stream_t *)&c->tcp, lvt_on_alloc, conn_read);
    lvt_write_buf((uv_stream_t *)&c->tcp, &c->out);
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
    lvt_frame_put(&c->out, p, n);
    if (c->connected)
        lvt_write_buf((uv_stream_t *)&c->tcp, &c->out);
}

static void bridge_on_close(struct sim_world *w, net_sock s, int reason, void *ctx)
{
    (void)w;
    (void)reason;
    struct lconn *c = conn_of(ctx, s);
    if (c)
        lvt_conn_end(c, false);
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
    lvt_hello_put(&c->out);
    uv_tcp_init(&L->loop, &c->tcp);
    c->tcp.data = c;
    c->creq.data = c;
    RUN_LINK(L->conns, c);
    struct sockaddr_in a;
    uv_ip4_addr("127.0.0.1", L->c.m[slot - 1].client_proxy_port, &a);
    if (uv_tcp_connect(&c->creq, &c->tcp, (const struct sockaddr *)&a, conn_connected))
        lvt_conn_end(c, true);
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
            lvt_conn_end(c, false);
        c = next;
    }
}

static void bridge_on_restart(struct sim_world *w, int proc, void *ctx)
{
    net_listen(w, proc, SRV_CLIENT_PORT, bridge_accept, ctx);
}

void lvt_bridge_add(struct run_live *L, int slot)
{
    static const struct sim_proc_ops ops = {bridge_on_kill, bridge_on_restart};
    L->b[slot].L = L;
    L->b[slot].slot = slot;
    L->b[slot].rate_ppm = SIM_PPM;
    L->b[slot].proc = run_bridge_proc_add(L->rw->w, slot, &ops, bridge_accept, L);
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
void lvt_bridge_up(struct run_live *L, int slot)
{
    struct lbridge *b = &L->b[slot];
    if (!b->up_pending || !L->c.m[slot - 1].proc.running || L->st[slot].answered_s <= b->started_s)
        return;
    b->up_pending = false;
    sim_schedule_at(L->rw->w, run_pacer_arrival(&L->pace, L->rw->w), bridge_up_fire, b);
}
