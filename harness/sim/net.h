/*
 * net.h: the simulated network (DESIGN §3.2). Endpoints are processes (sim.h): the
 * endpoint id of a node or client is its process id. Every frame is a copy of the
 * caller's bytes (protobuf-c encoded by the node modules) framed with a CRC32C;
 * frames travel per-direction links with latency = base + uniform jitter, and can
 * be lost, duplicated (datagrams only), corrupted, clogged, held or cut off by a
 * partition.
 *
 * CONNECTIONS (the normal mode; etcd peers and clients use HTTP/2 over TCP):
 * - net_connect takes a round trip (SYN out, SYN-ACK back) before on_open. A dead
 *   process or a port nobody listens on refuses: on_close(NET_CLOSE_REFUSED) one
 *   round trip later. A partitioned peer makes the connect hang (the SYN waits at
 *   the partition, as TCP retransmits would) until the caller closes the socket
 *   on its own timeout, or the partition heals.
 * - Frames on one connection arrive in order or not at all. A lost or corrupted
 *   frame breaks the connection: the receiving end gets on_close(NET_CLOSE_RESET)
 *   when the frame would have arrived and a reset travels back to the sender.
 *   Frames across a partition are not lost: they wait at the partition (requests
 *   hang) and arrive, in order, after heal unless the connection was closed.
 * - A process killed: its ends close without callbacks; its peers get
 *   on_close(NET_CLOSE_RESET) when the reset reaches them. A paused process keeps
 *   its connections; frames to it are deferred until resume.
 * - net_close: the peer gets on_close(NET_CLOSE_PEER) after the FIN's latency; the
 *   closing side gets no callback. Frames still arriving at a closed end are
 *   discarded (the peer learns of the close from the FIN or reset already sent).
 * - Reordering happens only across connections. No duplication.
 * DATAGRAMS (for tests of the model itself): each frame draws its own latency, so
 * frames reorder freely; loss, duplication and corruption drop or copy single
 * frames; a partition drops them.
 *
 * Clog and hold both make frames wait at the receiving end of a link (in order)
 * until unclog/release, then deliver them at once; a partition does the same to
 * connection frames and drops datagrams. heal clears partitions and clogs (not
 * holds).
 *
 * Sockets (uint64_t, 0 = none) name one end of a connection and are
 * generation-checked: using a closed socket returns FL_EDOWN, never touches
 * another connection.
 */
#ifndef FL_SIM_NET_H
#define FL_SIM_NET_H

#include "harness/sim/sim.h"

typedef uint64_t net_sock;

/* Why on_close was called. Values go into the digest: append only. */
enum net_close_reason {
    NET_CLOSE_REFUSED = 1, /* connect refused: peer down or not listening */
    NET_CLOSE_PEER = 2,    /* the peer closed the connection */
    NET_CLOSE_RESET = 3,   /* a frame was lost or corrupted, or the peer died */
    NET_CLOSE_OVERFLOW = 4 /* more than NET_QUEUE_MAX frames waiting on a link */
};
const char *net_close_reason_str(int reason);

/* Frames of one connection direction that may wait at a partition/clog/hold
 * before the connection breaks with NET_CLOSE_OVERFLOW (a TCP buffer filling). */
#define NET_QUEUE_MAX 65536

/* Callbacks of one socket. They run in the owning process's context
 * (sim_current_proc() == its proc), never inside net_* calls. p is valid only
 * during on_message; copy what you keep. After on_close the socket is dead. Any
 * callback may be NULL (frames to a socket without on_message are discarded and
 * counted as dropped). */
struct net_sock_ops {
    void (*on_open)(struct sim_world *w, net_sock s, void *ctx); /* initiator only */
    void (*on_message)(struct sim_world *w, net_sock s, const uint8_t *p, size_t n, void *ctx);
    void (*on_close)(struct sim_world *w, net_sock s, int reason, void *ctx);
};

/* Called for each accepted connection in the listener's process. The acceptor
 * MUST call net_sock_bind (or net_close) on s before returning. */
typedef void net_accept_fn(struct sim_world *w, net_sock s, int peer, void *ctx);

/* Listens on (proc, port). A process's listeners are forgotten when it is
 * killed: re-listen from on_restart. FL_EEXIST if already listening. */
int net_listen(struct sim_world *w, int proc, int port, net_accept_fn *fn, void *ctx);
int net_unlisten(struct sim_world *w, int proc, int port);

/* Opens a connection from process `from` to (to, port). Returns the socket (never
 * 0 for a live `from`); the outcome comes later through ops: on_open, or on_close
 * with a reason. Frames sent before on_open are queued behind the SYN and arrive
 * after the accept. Returns 0 when `from` is DOWN. ops is copied; ctx is the
 * caller's. */
net_sock net_connect(struct sim_world *w, int from, int to, int port,
                     const struct net_sock_ops *ops, void *ctx);
/* Sets the callbacks of an accepted socket (or replaces any socket's). */
int net_sock_bind(struct sim_world *w, net_sock s, const struct net_sock_ops *ops, void *ctx);
/* Sends a copy of p[0..n). FL_OK when the frame left (it may still be lost);
 * FL_EDOWN when the socket is closed or the peer is known gone. */
int net_send(struct sim_world *w, net_sock s, const void *p, size_t n);
/* A tap sees every connection frame a live process sends (its bytes, before any
 * fault acts on them), for tools that collect real frames (fuzz/seed_frame.c). It
 * must not act on the world: it only observes, so it cannot change a run. NULL
 * removes it. */
typedef void net_tap_fn(void *ctx, int from, int to, int port, const uint8_t *p, size_t n);
void net_set_tap(struct sim_world *w, net_tap_fn *fn, void *ctx);
/* Closes this end (no callback to the caller); idempotent. */
void net_close(struct sim_world *w, net_sock s);
bool net_sock_open(const struct sim_world *w, net_sock s); /* established, not closed */
int net_sock_proc(const struct sim_world *w, net_sock s);  /* owner, -1 if dead socket */
int net_sock_peer(const struct sim_world *w, net_sock s);  /* remote proc, -1 if dead */

/* Datagrams. A binding is forgotten when its process is killed. */
typedef void net_dgram_fn(struct sim_world *w, int from, int to, const uint8_t *p, size_t n,
                          void *ctx);
int net_dgram_bind(struct sim_world *w, int proc, int port, net_dgram_fn *fn, void *ctx);
/* FL_EDOWN when `from` is DOWN; otherwise FL_OK (the frame may be dropped). */
int net_dgram_send(struct sim_world *w, int from, int to, int port, const void *p, size_t n);

/* Per-direction link parameters. Defaults: latency 500 us, jitter 500 us, no
 * loss, duplication or corruption. */
struct net_link {
    int64_t latency_ns;   /* base one-way latency */
    int64_t jitter_ns;    /* plus uniform [0, jitter_ns] per frame */
    uint32_t loss_ppm;    /* frame lost (connection: breaks it) */
    uint32_t dup_ppm;     /* datagrams only: delivered twice */
    uint32_t corrupt_ppm; /* a bit flipped; the receiver's CRC check drops it */
};
/* from or to may be -1 meaning every endpoint (also those added later, when both
 * are -1). */
void net_link_set(struct sim_world *w, int from, int to, const struct net_link *l);
void net_link_get(const struct sim_world *w, int from, int to, struct net_link *out);

/* Partitions. net_block cuts one direction. net_partition cuts every a->b (and
 * b->a unless oneway). net_isolate cuts proc from every other endpoint both ways.
 * net_heal removes every cut and every clog. from/to may be -1 (every endpoint). */
void net_block(struct sim_world *w, int from, int to);
void net_unblock(struct sim_world *w, int from, int to);
void net_partition(struct sim_world *w, const int *a, size_t na, const int *b, size_t nb,
                   bool oneway);
void net_isolate(struct sim_world *w, int proc);
void net_heal(struct sim_world *w);
bool net_blocked(const struct sim_world *w, int from, int to);
/* Clog / hold a direction (-1 = every endpoint): frames wait until unclog /
 * release. */
void net_clog(struct sim_world *w, int from, int to);
void net_unclog(struct sim_world *w, int from, int to);
void net_hold(struct sim_world *w, int from, int to);
void net_release(struct sim_world *w, int from, int to);
/* Frames waiting at the receiving end of from->to (partition, clog or hold). */
size_t net_waiting(const struct sim_world *w, int from, int to);

/* Counters per endpoint. sent/dropped count frames this endpoint sent; delivered
 * counts frames handed to this endpoint's callbacks. Control frames (SYN, FIN,
 * reset) are not counted. */
struct net_stats {
    uint64_t sent_msgs, sent_bytes;
    uint64_t delivered_msgs, delivered_bytes;
    uint64_t dropped_msgs, dropped_bytes; /* lost, corrupted, partitioned, dead end */
    uint64_t conns_opened;                /* connect calls that reached on_open */
};
void net_stats_get(const struct sim_world *w, int proc, struct net_stats *out);

#endif
