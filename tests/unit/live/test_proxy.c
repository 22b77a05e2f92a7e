/*
 * test_proxy.c: the live TCP proxy (harness/live/live_proxy.h) over loopback, with a
 * tiny echo server and client on the same libuv loop: bytes pass; delay holds them;
 * clog holds them until released, in order; a one-way cut drops one direction only
 * (the server sees the bytes or not, the client gets the echo or not) and the
 * broken connection is closed when the link heals, after which new connections work;
 * loss holds a chunk one retransmission time; etcd's X-Server-From attributes a
 * connection to its sender.
 */
#include "fl_test.h"

#include "harness/live/live.h"
#include "harness/live/live_proxy.h"

static uv_loop_t loop;

/* ---- echo server: counts what it received, sends it back ---------------------- */

struct echo {
    uv_tcp_t listener;
    size_t received;
    int conns;
};

static void on_alloc(uv_handle_t *h, size_t sz, uv_buf_t *b)
{
    (void)h;
    b->base = malloc(sz);
    b->len = sz;
}

static void on_free_close(uv_handle_t *h)
{
    free(h);
}

static void on_echo_written(uv_write_t *w, int st)
{
    (void)st;
    free(w->data);
    free(w);
}

static void on_echo_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b)
{
    struct echo *e = s->data;
    if (n < 0) {
        free(b->base);
        uv_close((uv_handle_t *)s, on_free_close);
        return;
    }
    if (n == 0) {
        free(b->base);
        return;
    }
    e->received += (size_t)n;
    uv_write_t *w = malloc(sizeof *w);
    w->data = b->base;
    uv_buf_t o = uv_buf_init(b->base, (unsigned)n);
    uv_write(w, s, &o, 1, on_echo_written);
}

static void on_echo_conn(uv_stream_t *srv, int st)
{
    struct echo *e = srv->data;
    uv_tcp_t *c = malloc(sizeof *c);
    uv_tcp_init(&loop, c);
    c->data = e;
    if (st < 0 || uv_accept(srv, (uv_stream_t *)c)) {
        uv_close((uv_handle_t *)c, on_free_close);
        return;
    }
    e->conns++;
    uv_read_start((uv_stream_t *)c, on_alloc, on_echo_read);
}

/* ---- client ---------------------------------------------------------------------- */

struct client {
    uv_tcp_t tcp;
    uv_connect_t creq;
    char got[4096];
    size_t n, total; /* kept (at most sizeof got), and received in all */
    bool connected, eof, closed, pattern_broken;
};

static void on_client_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b)
{
    struct client *c = s->data;
    if (n < 0)
        c->eof = true;
    for (ssize_t i = 0; i < n; i++) {
        if (c->n < sizeof c->got)
            c->got[c->n++] = b->base[i];
        c->pattern_broken |= (unsigned char)b->base[i] != (unsigned char)(c->total % 251);
        c->total++;
    }
    free(b->base);
}

static void on_client_connected(uv_connect_t *r, int st)
{
    struct client *c = r->data;
    c->connected = st == 0;
    if (st == 0)
        uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_client_read);
}

static bool is_connected(void *a)
{
    return ((struct client *)a)->connected;
}

static void client_open(struct client *c, int port)
{
    memset(c, 0, sizeof *c);
    uv_tcp_init(&loop, &c->tcp);
    c->tcp.data = c->creq.data = c;
    struct sockaddr_in a;
    uv_ip4_addr("127.0.0.1", port, &a);
    uv_tcp_connect(&c->creq, &c->tcp, (const struct sockaddr *)&a, on_client_connected);
    CHECK(lv_run_until(&loop, is_connected, c, 5000));
}

static void on_sent(uv_write_t *w, int st)
{
    (void)st;
    free(w);
}

static void client_send(struct client *c, const char *s)
{
    uv_write_t *w = malloc(sizeof *w);
    uv_buf_t b = uv_buf_init((char *)s, (unsigned)strlen(s));
    uv_write(w, (uv_stream_t *)&c->tcp, &b, 1, on_sent);
}

static void on_client_closed(uv_handle_t *h)
{
    ((struct client *)h->data)->closed = true;
}

static bool is_closed(void *a)
{
    return ((struct client *)a)->closed;
}

static void client_close(struct client *c)
{
    uv_close((uv_handle_t *)&c->tcp, on_client_closed);
    lv_run_until(&loop, is_closed, c, 5000);
}

struct want {
    struct client *c;
    size_t n;
};

static bool got_n(void *a)
{
    struct want *w = a;
    return w->c->n >= w->n;
}

/* Runs the loop until c received n bytes (true) or ms passed. */
static bool receive(struct client *c, size_t n, int64_t ms)
{
    struct want w = {c, n};
    return lv_run_until(&loop, got_n, &w, ms);
}

static bool got_eof(void *a)
{
    return ((struct client *)a)->eof;
}

/* ---- fixture --------------------------------------------------------------------- */

static struct echo echo;
static struct lv_net net;
static struct lv_proxy proxy;
static struct lv_ports ports;
static int echo_port, proxy_port;

static void setup(lv_identify_fn identify, void *arg)
{
    uv_loop_init(&loop);
    struct fl_buf err;
    fl_buf_init(&err);
    lv_ports_init(&ports);
    CHECK(lv_port_claim(&ports, &echo_port, &err) == FL_OK);
    CHECK(lv_port_claim(&ports, &proxy_port, &err) == FL_OK);
    memset(&echo, 0, sizeof echo);
    uv_tcp_init(&loop, &echo.listener);
    echo.listener.data = &echo;
    struct sockaddr_in a;
    uv_ip4_addr("127.0.0.1", echo_port, &a);
    CHECK(uv_tcp_bind(&echo.listener, (const struct sockaddr *)&a, 0) == 0);
    CHECK(uv_listen((uv_stream_t *)&echo.listener, 16, on_echo_conn) == 0);
    lv_net_init(&net, &loop, 42);
    /* node 0 is the echo server; the client is node 1 unless identified otherwise */
    CHECK(lv_proxy_start(&proxy, &net, 0, proxy_port, echo_port, 1, identify, arg, &err) == FL_OK);
    fl_buf_close(&err);
}

static void walk_close(uv_handle_t *h, void *arg)
{
    (void)arg;
    if (!uv_is_closing(h))
        uv_close(h, h == (uv_handle_t *)&echo.listener ? NULL : on_free_close);
}

static void teardown(void)
{
    lv_proxy_close(&proxy);
    uv_walk(&loop, walk_close, NULL); /* the echo server's handles */
    uv_run(&loop, UV_RUN_DEFAULT);
    CHECK(uv_loop_close(&loop) == 0);
    lv_ports_close(&ports);
}

static void passes_and_delays(void)
{
    setup(NULL, NULL);
    struct client c;
    client_open(&c, proxy_port);
    client_send(&c, "hello");
    CHECK(receive(&c, 5, 5000));
    CHECK(!memcmp(c.got, "hello", 5));
    lv_net_link(&net, 1, 0)->delay_ms = 300; /* client -> server only */
    uint64_t t0 = uv_now(&loop);
    client_send(&c, "later");
    CHECK(receive(&c, 10, 5000));
    uint64_t dt = uv_now(&loop) - t0;
    CHECK(dt >= 300 && dt < 3000);
    CHECK(!memcmp(c.got + 5, "later", 5));
    client_close(&c);
    teardown();
}

static void clog_holds_then_releases_in_order(void)
{
    setup(NULL, NULL);
    struct client c;
    client_open(&c, proxy_port);
    lv_net_clog(&net, 1, 0, false, true);
    client_send(&c, "abc");
    client_send(&c, "def");
    CHECK(!receive(&c, 1, 300));
    CHECK_EQ_INT(echo.received, 0);
    lv_net_clog(&net, 1, 0, false, false);
    lv_net_update(&net);
    CHECK(receive(&c, 6, 5000));
    CHECK(!memcmp(c.got, "abcdef", 6));
    client_close(&c);
    teardown();
}

/* Cut server -> client: the server gets the bytes, the client no echo. Cut client ->
 * server: the server gets nothing. Healing closes the broken connection; a new one
 * works. */
static void one_way_cuts(void)
{
    setup(NULL, NULL);
    struct client c;
    client_open(&c, proxy_port);
    lv_net_cut(&net, 0, 1, false, true);
    client_send(&c, "ping");
    CHECK(!receive(&c, 1, 300));
    CHECK_EQ_INT(echo.received, 4);
    CHECK(net.bytes_dropped == 4 && net.conns_broken == 1);
    lv_net_heal_all(&net);
    lv_net_update(&net);
    CHECK(lv_run_until(&loop, got_eof, &c, 5000)); /* the stream had a hole: closed */
    client_close(&c);

    lv_net_cut(&net, 1, 0, false, true);
    struct client d;
    client_open(&d, proxy_port); /* accepted while cut: a black hole, not a refusal */
    client_send(&d, "pong");
    CHECK(!receive(&d, 1, 300));
    CHECK_EQ_INT(echo.received, 4); /* nothing more reached the server */
    lv_net_cut(&net, 1, 0, false, false);
    lv_net_update(&net);
    CHECK(lv_run_until(&loop, got_eof, &d, 5000));
    client_close(&d);

    struct client e;
    client_open(&e, proxy_port);
    client_send(&e, "again");
    CHECK(receive(&e, 5, 5000));
    client_close(&e);
    teardown();
}

static void loss_holds_a_retransmission_time(void)
{
    setup(NULL, NULL);
    net.loss_rto_ms = 250;
    lv_net_link(&net, 0, 1)->loss_ppm = 1000000; /* every chunk server -> client */
    struct client c;
    client_open(&c, proxy_port);
    uint64_t t0 = uv_now(&loop);
    client_send(&c, "x");
    CHECK(receive(&c, 1, 5000));
    CHECK(uv_now(&loop) - t0 >= 250);
    CHECK(net.chunks_lost >= 1);
    client_close(&c);
    teardown();
}

struct want_total {
    struct client *c;
    size_t n;
};

static bool got_total(void *a)
{
    struct want_total *w = a;
    return w->c->total >= w->n;
}

/* 24 MiB into a clogged link: the proxy holds at most its 8 MiB high mark (plus one
 * read) and the rest waits in the sender (TCP backpressure); released, every byte
 * comes back through the echo, in order. */
static void clog_backpressure(void)
{
    setup(NULL, NULL);
    struct client c;
    client_open(&c, proxy_port);
    lv_net_clog(&net, 1, 0, false, true);
    size_t len = 24u << 20;
    char *big = malloc(len);
    for (size_t i = 0; i < len; i++)
        big[i] = (char)(i % 251);
    uv_write_t w;
    uv_buf_t b = uv_buf_init(big, (unsigned)len);
    CHECK(uv_write(&w, (uv_stream_t *)&c.tcp, &b, 1, NULL) == 0);
    CHECK(!receive(&c, 1, 1000));
    size_t held = lv_proxy_queued(&proxy);
    printf("clogged: %zu bytes held by the proxy, %zu waiting in the sender\n", held,
           uv_stream_get_write_queue_size((uv_stream_t *)&c.tcp));
    CHECK(held >= (1u << 20) && held <= (8u << 20) + (256u << 10));
    CHECK(uv_stream_get_write_queue_size((uv_stream_t *)&c.tcp) > 0);
    lv_net_clog(&net, 1, 0, false, false);
    lv_net_update(&net);
    struct want_total wt = {&c, len};
    CHECK(lv_run_until(&loop, got_total, &wt, 30000));
    CHECK(c.total == len && !c.pattern_broken && echo.received == len);
    client_close(&c);
    free(big);
    teardown();
}

static void etcd_identify(void)
{
    struct lv_id_table t = {{0x2a, 0x8e9e05c52164694dull}, 2};
    const char *full = "GET /raft/stream/msgappv2/2a HTTP/1.1\r\nHost: x\r\n"
                       "X-Server-From: 8e9e05c52164694d\r\nX-Raft-To: 2a\r\n\r\n";
    CHECK_EQ_INT(lv_identify_etcd_peer((const uint8_t *)full, strlen(full), &t), 1);
    CHECK_EQ_INT(lv_identify_etcd_peer((const uint8_t *)full, 30, &t), -1);
    CHECK_EQ_INT(lv_identify_etcd_peer((const uint8_t *)full, 70, &t), -1); /* value cut */
    const char *none = "GET /version HTTP/1.1\r\nHost: x\r\n\r\n";
    CHECK_EQ_INT(lv_identify_etcd_peer((const uint8_t *)none, strlen(none), &t), LV_EXTERNAL);
    const char *other = "POST /raft HTTP/1.1\r\nx-server-from: 77\r\n\r\n";
    CHECK_EQ_INT(lv_identify_etcd_peer((const uint8_t *)other, strlen(other), &t), LV_EXTERNAL);

    /* through a proxy: the connection is node 1's, so cutting 1 -> 0 stops it */
    setup(lv_identify_etcd_peer, &t);
    lv_net_cut(&net, 1, 0, false, true);
    struct client c;
    client_open(&c, proxy_port);
    client_send(&c, "POST /raft HTTP/1.1\r\nX-Server-From: 8e9e05c52164694d\r\n\r\n");
    CHECK(!receive(&c, 1, 300));
    CHECK_EQ_INT(echo.received, 0);
    client_close(&c);
    /* an external sender is not on that link */
    struct client d;
    client_open(&d, proxy_port);
    client_send(&d, "GET /version HTTP/1.1\r\n\r\n");
    CHECK(receive(&d, 25, 5000));
    client_close(&d);
    teardown();
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "_pdeath-exec"))
        return lv_pdeath_exec_main(argc - 1, argv + 1);
    FL_TEST(passes_and_delays);
    FL_TEST(clog_holds_then_releases_in_order);
    FL_TEST(one_way_cuts);
    FL_TEST(loss_holds_a_retransmission_time);
    FL_TEST(clog_backpressure);
    FL_TEST(etcd_identify);
    return fl_test_end();
}
