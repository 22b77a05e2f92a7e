/*
 * live_proxy.c: the TCP proxy of live_proxy.h. Each accepted connection has two
 * directions (fwd: client->server, back: server->client), each a FIFO of chunks as
 * read. The link of a direction is consulted when its head chunk is about to leave
 * (pump): cut drops the queue and breaks the connection, clog holds it, delay and
 * loss set the head's release time, which a per-connection timer waits for.
 */
#include "harness/live/live_proxy.h"
#include "harness/common/list.h"
#include "harness/common/rng.h"

#include <strings.h>

#define QUEUE_HIGH_BYTES (8u << 20) /* stop reading the sender above this */
#define QUEUE_LOW_BYTES  (1u << 20) /* and read again below this */
#define IDENTIFY_MAX     16384

struct lv_chunk {
    struct lv_chunk *next;
    int64_t in_ms, release_ms; /* release_ms -1 until the chunk is at the head */
    size_t len;
    char data[];
};

struct lv_dir {
    uv_tcp_t *src, *dst;
    int from, to;
    struct lv_chunk *head, *tail;
    size_t queued;
    int64_t last_release_ms;
    bool eof, reading;
};

struct lv_conn {
    struct lv_proxy *p;
    uv_tcp_t down, up;
    uv_connect_t creq;
    uv_timer_t timer;
    struct lv_dir fwd, back;
    bool up_connected, identified, broken, closing;
    bool reidentify; /* identified as from_default: a later request may name its sender */
    int handles;
    struct lv_conn *next, *prev;
};

void lv_net_init(struct lv_net *n, uv_loop_t *loop, uint64_t seed)
{
    memset(n, 0, sizeof *n);
    n->loop = loop;
    n->rng = seed;
    n->loss_rto_ms = 200;
}

struct lv_link *lv_net_link(struct lv_net *n, int from, int to)
{
    FL_ASSERT(from >= 0 && from <= LV_EXTERNAL && to >= 0 && to <= LV_EXTERNAL);
    return &n->link[from][to];
}

void lv_net_cut(struct lv_net *n, int from, int to, bool both, bool on)
{
    lv_net_link(n, from, to)->cut = on;
    if (both)
        lv_net_link(n, to, from)->cut = on;
}

void lv_net_clog(struct lv_net *n, int from, int to, bool both, bool on)
{
    lv_net_link(n, from, to)->clog = on;
    if (both)
        lv_net_link(n, to, from)->clog = on;
}

void lv_net_heal_all(struct lv_net *n)
{
    memset(n->link, 0, sizeof n->link);
}

/* ---- connections ----------------------------------------------------------------- */

static void conn_close(struct lv_conn *c);
static void pump(struct lv_conn *c);

static void on_handle_closed(uv_handle_t *h)
{
    struct lv_conn *c = h->data;
    c->p->handles--;
    if (--c->handles > 0)
        return;
    for (struct lv_dir *d = &c->fwd; d; d = d == &c->fwd ? &c->back : NULL) {
        while (d->head) {
            struct lv_chunk *k = d->head;
            d->head = k->next;
            free(k);
        }
    }
    free(c);
}

static void conn_close(struct lv_conn *c)
{
    if (c->closing)
        return;
    c->closing = true;
    struct lv_proxy *p = c->p;
    FL_LIST_REMOVE(p->conns, c, prev, next);
    uv_close((uv_handle_t *)&c->down, on_handle_closed);
    uv_close((uv_handle_t *)&c->up, on_handle_closed);
    uv_close((uv_handle_t *)&c->timer, on_handle_closed);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    (void)h;
    struct lv_chunk *k = fl_malloc(sizeof *k + suggested);
    buf->base = k->data;
    buf->len = suggested;
}

static struct lv_dir *dir_of_src(struct lv_conn *c, uv_stream_t *s)
{
    return (uv_tcp_t *)s == c->fwd.src ? &c->fwd : &c->back;
}

/* The sender from the bytes queued on fwd, once enough of them are there. */
static void try_identify(struct lv_conn *c)
{
    struct lv_proxy *p = c->p;
    int from = p->from_default;
    if (p->identify) {
        char buf[IDENTIFY_MAX];
        size_t n = 0;
        for (struct lv_chunk *k = c->fwd.head; k && n < sizeof buf; k = k->next) {
            size_t m = k->len < sizeof buf - n ? k->len : sizeof buf - n;
            memcpy(buf + n, k->data, m);
            n += m;
        }
        int r = p->identify((const uint8_t *)buf, n, p->identify_arg);
        if (r < 0 && n < IDENTIFY_MAX && !c->fwd.eof)
            return;
        if (r >= 0)
            from = r;
    }
    struct sockaddr_in sa;
    int len = (int)sizeof sa;
    if (p->identify_port && from == p->from_default &&
        uv_tcp_getpeername(&c->down, (struct sockaddr *)&sa, &len) == 0 &&
        sa.sin_family == AF_INET) {
        int r = p->identify_port(ntohs(sa.sin_port), p->identify_port_arg);
        if (r >= 0)
            from = r;
    }
    c->identified = true;
    c->reidentify = p->identify && from == p->from_default;
    c->fwd.from = c->back.to = from;
    c->fwd.to = c->back.from = p->node;
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    struct lv_conn *c = s->data;
    struct lv_chunk *k =
        buf->base ? (struct lv_chunk *)(buf->base - offsetof(struct lv_chunk, data)) : NULL;
    struct lv_dir *d = dir_of_src(c, s);
    if (nread <= 0 || c->closing) {
        free(k);
        if (nread == 0 || c->closing)
            return;
        d->eof = true; /* UV_EOF or an error: no more bytes this way */
        uv_read_stop(s);
        d->reading = false;
    } else {
        k->next = NULL;
        k->len = (size_t)nread;
        k->in_ms = (int64_t)uv_now(s->loop);
        k->release_ms = -1;
        if (d->tail)
            d->tail->next = k;
        else
            d->head = k;
        d->tail = k;
        d->queued += k->len;
        if (d->queued > QUEUE_HIGH_BYTES) {
            uv_read_stop(s);
            d->reading = false;
        }
    }
    if (!c->identified) {
        try_identify(c);
    } else if (c->reidentify && nread > 0 && d == &c->fwd) {
        /* HTTP/1.1 keeps connections: etcd's peer prober (GET /raft/probing, without
         * X-Server-From) opens one, then its pipeline sends Raft messages on it (POST
         * /raft, with X-Server-From): a request naming its sender attributes the
         * connection from then on, so a cut applies to it (it leaked past a partition
         * before). */
        int r = c->p->identify((const uint8_t *)k->data, k->len, c->p->identify_arg);
        if (r >= 0 && r != c->p->from_default) {
            c->reidentify = false;
            c->fwd.from = c->back.to = r;
        }
    }
    pump(c);
}

struct wreq {
    uv_write_t w;
    struct lv_chunk *k;
};

static void on_written(uv_write_t *w, int status)
{
    struct wreq *r = (struct wreq *)w;
    struct lv_conn *c = w->data;
    free(r->k);
    free(r);
    if (status < 0 && status != UV_ECANCELED)
        conn_close(c);
}

static void on_timer(uv_timer_t *t)
{
    pump(t->data);
}

static void drop_queue(struct lv_conn *c, struct lv_dir *d)
{
    struct lv_net *net = c->p->net;
    while (d->head) {
        struct lv_chunk *k = d->head;
        d->head = k->next;
        net->bytes_dropped += k->len;
        free(k);
        if (!c->broken)
            net->conns_broken++;
        c->broken = true;
    }
    d->tail = NULL;
    d->queued = 0;
}

static void write_chunk(struct lv_conn *c, struct lv_dir *d, struct lv_chunk *k)
{
    struct wreq *r = fl_malloc(sizeof *r);
    r->k = k;
    r->w.data = c;
    uv_buf_t b = uv_buf_init(k->data, (unsigned)k->len);
    c->p->net->bytes_forwarded += k->len;
    if (uv_write(&r->w, (uv_stream_t *)d->dst, &b, 1, on_written) != 0) {
        free(k);
        free(r);
        conn_close(c);
    }
}

/* Moves what may leave d now; returns the ms until its head may leave (-1: nothing
 * waits on time). */
static int64_t pump_dir(struct lv_conn *c, struct lv_dir *d, int64_t now)
{
    struct lv_net *net = c->p->net;
    const struct lv_link *l = lv_net_link(net, d->from, d->to);
    int64_t wait = -1;
    if (l->cut) {
        drop_queue(c, d);
    } else {
        while (d->head && !l->clog && !c->closing) {
            struct lv_chunk *k = d->head;
            if (k->release_ms < 0) {
                int64_t r = k->in_ms + l->delay_ms;
                if (l->loss_ppm && fl_splitmix64(&net->rng) % 1000000u < l->loss_ppm) {
                    r += net->loss_rto_ms;
                    net->chunks_lost++;
                }
                k->release_ms = r > d->last_release_ms ? r : d->last_release_ms;
            }
            if (k->release_ms > now) {
                wait = k->release_ms - now;
                break;
            }
            d->head = k->next;
            if (!d->head)
                d->tail = NULL;
            d->queued -= k->len;
            d->last_release_ms = k->release_ms;
            write_chunk(c, d, k);
        }
    }
    if (!c->closing && !d->reading && !d->eof && d->queued < QUEUE_LOW_BYTES) {
        d->reading = uv_read_start((uv_stream_t *)d->src, on_alloc, on_read) == 0;
    }
    return wait;
}

static void pump(struct lv_conn *c)
{
    if (c->closing || !c->identified || !c->up_connected)
        return;
    const struct lv_net *net = c->p->net;
    if (c->broken && !net->link[c->fwd.from][c->fwd.to].cut &&
        !net->link[c->back.from][c->back.to].cut) {
        conn_close(c); /* healed: a stream with a hole must not go on */
        return;
    }
    int64_t now = (int64_t)uv_now(c->p->net->loop);
    int64_t w1 = pump_dir(c, &c->fwd, now);
    int64_t w2 = c->closing ? -1 : pump_dir(c, &c->back, now);
    if (c->closing)
        return;
    if ((c->fwd.eof && !c->fwd.head) || (c->back.eof && !c->back.head)) {
        conn_close(c); /* one side is done and all it sent is delivered */
        return;
    }
    int64_t w = w1 < 0 ? w2 : w2 < 0 ? w1 : (w1 < w2 ? w1 : w2);
    if (w >= 0)
        uv_timer_start(&c->timer, on_timer, (uint64_t)w, 0);
}

void lv_net_update(struct lv_net *n)
{
    for (struct lv_proxy *p = n->proxies; p; p = p->next) {
        struct lv_conn *next;
        for (struct lv_conn *c = p->conns; c; c = next) {
            next = c->next; /* pump may close (unlink) c */
            pump(c);
        }
    }
}

static void on_up_connected(uv_connect_t *req, int status)
{
    struct lv_conn *c = req->data;
    if (c->closing)
        return;
    if (status < 0) {
        conn_close(c);
        return;
    }
    c->up_connected = true;
    uv_tcp_nodelay(&c->up, 1);
    c->back.reading = uv_read_start((uv_stream_t *)&c->up, on_alloc, on_read) == 0;
    pump(c);
}

static void on_connection(uv_stream_t *server, int status)
{
    struct lv_proxy *p = server->data;
    if (status < 0)
        return;
    struct lv_conn *c = fl_calloc(1, sizeof *c);
    c->p = p;
    uv_loop_t *loop = p->net->loop;
    uv_tcp_init(loop, &c->down);
    uv_tcp_init(loop, &c->up);
    uv_timer_init(loop, &c->timer);
    c->down.data = c->up.data = c->timer.data = c->creq.data = c;
    c->handles = 3;
    p->handles += 3;
    FL_LIST_INSERT_HEAD(p->conns, c, prev, next);
    c->fwd.src = c->back.dst = &c->down;
    c->fwd.dst = c->back.src = &c->up;
    if (uv_accept(server, (uv_stream_t *)&c->down) != 0) {
        conn_close(c);
        return;
    }
    p->accepted++;
    uv_tcp_nodelay(&c->down, 1);
    struct sockaddr_in to;
    uv_ip4_addr("127.0.0.1", p->target_port, &to);
    if (uv_tcp_connect(&c->creq, &c->up, (const struct sockaddr *)&to, on_up_connected) != 0) {
        conn_close(c);
        return;
    }
    c->fwd.reading = uv_read_start((uv_stream_t *)&c->down, on_alloc, on_read) == 0;
    if (!p->identify)
        try_identify(c);
}

int lv_proxy_start(struct lv_proxy *p, struct lv_net *net, int node, int listen_port,
                   int target_port, int from_default, lv_identify_fn identify, void *arg,
                   struct fl_buf *err)
{
    memset(p, 0, sizeof *p);
    p->net = net;
    p->node = node;
    p->from_default = from_default;
    p->listen_port = listen_port;
    p->target_port = target_port;
    p->identify = identify;
    p->identify_arg = arg;
    uv_tcp_init(net->loop, &p->listener);
    p->listener.data = p;
    p->handles = 1;
    struct sockaddr_in a;
    uv_ip4_addr("127.0.0.1", listen_port, &a);
    int rc = uv_tcp_bind(&p->listener, (const struct sockaddr *)&a, 0);
    if (!rc)
        rc = uv_listen((uv_stream_t *)&p->listener, 128, on_connection);
    if (rc) {
        fl_buf_printf(err, "proxy on port %d: %s", listen_port, uv_strerror(rc));
        lv_proxy_close(p);
        return FL_EIO;
    }
    p->next = net->proxies;
    net->proxies = p;
    return FL_OK;
}

void lv_proxy_reset_unidentified(struct lv_proxy *p)
{
    struct lv_conn *next;
    for (struct lv_conn *c = p->conns; c; c = next) {
        next = c->next;
        if (!c->identified || c->fwd.from == p->from_default)
            conn_close(c);
    }
}

size_t lv_proxy_queued(const struct lv_proxy *p)
{
    size_t n = 0;
    for (const struct lv_conn *c = p->conns; c; c = c->next)
        n += c->fwd.queued + c->back.queued;
    return n;
}

static void on_listener_closed(uv_handle_t *h)
{
    ((struct lv_proxy *)h->data)->handles--;
}

void lv_proxy_close(struct lv_proxy *p)
{
    for (struct lv_proxy **q = &p->net->proxies; *q; q = &(*q)->next) {
        if (*q == p) {
            *q = p->next;
            break;
        }
    }
    while (p->conns)
        conn_close(p->conns);
    if (!uv_is_closing((uv_handle_t *)&p->listener))
        uv_close((uv_handle_t *)&p->listener, on_listener_closed);
    while (p->handles > 0)
        uv_run(p->net->loop, UV_RUN_ONCE);
}

/* ---- etcd's peers ---------------------------------------------------------------- */

int lv_identify_etcd_peer(const uint8_t *p, size_t n, void *arg)
{
    const struct lv_id_table *t = arg;
    static const char hdr[] = "\r\nx-server-from:";
    size_t hl = sizeof hdr - 1;
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '\r' && i + 3 < n && !memcmp(p + i, "\r\n\r\n", 4))
            return LV_EXTERNAL; /* the head ended without the header */
        if (i + hl > n || strncasecmp((const char *)p + i, hdr, hl))
            continue;
        size_t j = i + hl;
        while (j < n && p[j] == ' ')
            j++;
        uint64_t id = 0;
        size_t d = 0;
        for (; j < n && d < 16; j++, d++) {
            char ch = (char)p[j];
            int v = ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : -1;
            if (v < 0)
                break;
            id = id * 16 + (uint64_t)v;
        }
        if (j >= n)
            return -1; /* the value may go on */
        for (int k = 0; k < t->n; k++)
            if (t->id[k] == id)
                return k;
        return LV_EXTERNAL;
    }
    return -1;
}
