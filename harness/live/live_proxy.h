/*
 * live_proxy.h: a libuv TCP proxy in front of every listening port of a live run,
 * so that any link can be cut both ways or one way, clogged (bytes held, then
 * released in order), slowed (delay) or made lossy, from C (issue 16 §2-3).
 *
 * Nodes and links. A struct lv_net numbers the run's processes 0..LV_NODES_MAX-1;
 * LV_EXTERNAL stands for everything else (clients, tools). Each ordered pair
 * (from, to) has one struct lv_link, and every byte the proxies carry belongs to one
 * pair: a proxy sits in front of node `node`; a connection made to it is attributed
 * to a sender (its identify callback reads the first bytes, e.g. etcd's
 * X-Server-From header; without one, the proxy's from_default), and then bytes
 * client->server take link (sender, node) and bytes server->client link (node,
 * sender). So cutting (a, b) drops what a sends to b on every connection, whoever
 * opened it (etcd receives a peer's messages on a stream it opened to that peer).
 *
 * What each fault does to a TCP stream:
 *  - cut: bytes on that link are dropped and the connection is marked broken: its
 *    stream has a hole, so when the link heals (lv_net_update) the proxy closes it and
 *    the peers reconnect, as after a TCP timeout. While cut, new connections are
 *    accepted and their bytes dropped likewise (a black hole, not a refusal).
 *  - clog: bytes are held (the sender keeps writing until 8 MiB are queued, then the
 *    proxy stops reading: TCP backpressure); unclogging releases them in order.
 *  - delay_ms: every chunk leaves delay_ms after it arrived (order kept).
 *  - loss_ppm: a chunk is "lost" with that probability; above TCP a lost segment is
 *    a retransmission, so it is held loss_rto_ms (default 200 ms) longer, and the
 *    chunks behind it wait too. Draws come from the net's seeded generator, but a live
 *    run is not deterministic anyway (wall time, real scheduling).
 * Changes apply to bytes not yet forwarded; call lv_net_update after changing links
 * so held bytes move and broken connections close.
 */
#ifndef FL_LIVE_PROXY_H
#define FL_LIVE_PROXY_H

#include "harness/common/common.h"

#include <uv.h>

#define LV_NODES_MAX 16
#define LV_EXTERNAL  LV_NODES_MAX

struct lv_link {
    bool cut, clog;
    int64_t delay_ms;
    uint32_t loss_ppm;
};

struct lv_proxy;

struct lv_net {
    uv_loop_t *loop;
    struct lv_link link[LV_NODES_MAX + 1][LV_NODES_MAX + 1]; /* [from][to] */
    uint64_t rng;
    int64_t loss_rto_ms;
    struct lv_proxy *proxies;
    uint64_t bytes_forwarded, bytes_dropped, chunks_lost, conns_broken;
};

void lv_net_init(struct lv_net *n, uv_loop_t *loop, uint64_t seed);
/* The link from -> to (indexes 0..LV_NODES_MAX, LV_EXTERNAL included). */
struct lv_link *lv_net_link(struct lv_net *n, int from, int to);
/* Convenience: the same change on from->to, and on to->from when both. */
void lv_net_cut(struct lv_net *n, int from, int to, bool both, bool on);
void lv_net_clog(struct lv_net *n, int from, int to, bool both, bool on);
/* Every link back to normal (no cut, clog, delay or loss). */
void lv_net_heal_all(struct lv_net *n);
/* After link changes: held bytes that may go now go, broken connections whose links
 * are whole again are closed. */
void lv_net_update(struct lv_net *n);

/* The sender of a connection from its first bytes: a node index, LV_EXTERNAL, or -1
 * when more bytes are needed (after 16 KiB the proxy stops asking and uses
 * from_default). */
typedef int (*lv_identify_fn)(const uint8_t *p, size_t n, void *arg);

struct lv_conn;

struct lv_proxy {
    struct lv_net *net;
    uv_tcp_t listener;
    int node, from_default;
    int listen_port, target_port;
    lv_identify_fn identify;
    void *identify_arg;
    /* Optional (set after lv_proxy_start): the sender of a connection that identify
     * left at from_default, from the port it comes from (a node index, or -1). */
    int (*identify_port)(int peer_port, void *arg);
    void *identify_port_arg;
    struct lv_conn *conns;
    struct lv_proxy *next;
    int handles; /* open libuv handles: the listener and those of its connections */
    uint64_t accepted;
};

/* Listens on 127.0.0.1:listen_port and forwards each connection to
 * 127.0.0.1:target_port. identify may be NULL (every connection from from_default).
 * FL_EIO with err when the port cannot be bound. */
int lv_proxy_start(struct lv_proxy *p, struct lv_net *net, int node, int listen_port,
                   int target_port, int from_default, lv_identify_fn identify, void *arg,
                   struct fl_buf *err);
/* Closes every connection whose sender is not known yet or is from_default, so that
 * they reconnect and are identified again (after the identify table changed). */
void lv_proxy_reset_unidentified(struct lv_proxy *p);
/* Bytes read and not yet forwarded, over every connection of p (a clog's backlog). */
size_t lv_proxy_queued(const struct lv_proxy *p);
/* Closes the listener and every connection, and runs the loop until they are closed. */
void lv_proxy_close(struct lv_proxy *p);

/* An identify callback for etcd's peer port: the hex member id of the first
 * request's X-Server-From header, looked up in ids (index = node); LV_EXTERNAL when
 * the request head ends without it or names an id not in the table. */
struct lv_id_table {
    uint64_t id[LV_NODES_MAX];
    int n;
};
int lv_identify_etcd_peer(const uint8_t *p, size_t n, void *arg);

#endif
