/*
 * net_int.h: internals shared by net.c (frames, delivery, sockets) and net_ctl.c
 * (link parameters, partitions, clog/hold, counters). Nothing outside harness/sim
 * includes this file.
 */
#ifndef FL_SIM_NET_INT_H
#define FL_SIM_NET_INT_H

/* Internal to harness/sim: compiled only into fl_sim (which defines FL_INTERNAL_sim)
 * and into the white-box tests that declare it (tests/CMakeLists.txt). */
#ifndef FL_INTERNAL_sim
#error "harness/sim/net_int.h is internal to harness/sim: include its public header instead"
#endif

#include "harness/sim/sim_int.h"

enum { FR_DATA = 1, FR_SYN, FR_SYNACK, FR_FIN, FR_RST, FR_DGRAM };
enum { END_NONE = 0, END_CONNECTING, END_OPEN, END_PEER_GONE, END_CLOSED };

#define CONN_NONE UINT32_MAX

/* Where a frame is in its life (net.c checks every step; the frame pool question of
 * issue 12): created, on the wire (its arrival event pending), waiting in a link's
 * queue, arrived (being routed), handed to the receiving process (its callback
 * pending, maybe deferred while the process is paused), done (freed). A frame is
 * delivered or dropped exactly once: any other step is an assertion. */
enum { FS_NEW = 0x51, FS_WIRE, FS_LINK, FS_ARRIVED, FS_PROC, FS_DONE };

struct net_frame {
    uint8_t state; /* FS_* */
    uint8_t type;
    uint8_t to_side;
    uint8_t reason;
    bool lost;
    bool corrupt; /* corrupt_frame flipped a bit: the CRC check fails */
    int32_t from, to, port;
    uint32_t conn_idx, conn_gen;
    uint32_t crc;
    uint64_t tag;
    size_t len;
    uint8_t data[];
};

struct net_end {
    int proc;
    int state;
    bool bound;
    struct net_sock_ops ops;
    void *ctx;
    int64_t last_arrival_ns;
    uint32_t waiting;
    /* Frames this end sent were lost with its process (held at a link when it died)
     * while later ones were still on the wire: those are never delivered, as a TCP
     * receiver never passes a hole in the stream (the reset that follows closes it). */
    bool hole;
    /* This closed end's reset (or FIN) never left: it waited at a held or cut link when
     * its process died again, and the second death dropped it. The peer's end would stay
     * open for ever, sending into a connection nobody holds. A TCP stack answers a
     * segment for a connection it does not know with a reset: the next frame that
     * reaches this end gets one (on_data). */
    bool reset_owed;
};

struct net_conn {
    uint32_t gen;
    bool used;
    int port;
    uint32_t next_free;
    struct net_end end[2];
};

struct net_linkst {
    struct net_link p;
    bool blocked, clogged, held, drain_scheduled;
    struct net_frame **q;
    size_t nq, cap;
};

struct net_listener {
    int proc, port;
    net_accept_fn *fn;
    void *ctx;
};

struct net_binding {
    int proc, port;
    net_dgram_fn *fn;
    void *ctx;
};

struct net_state {
    struct net_link defaults;
    /* dim x dim in use, in a cap x cap array: links[from * cap + to]. cap grows by
     * doubling, so adding P processes one by one costs O(P^2), not O(P^3). */
    struct net_linkst *links;
    int dim, cap;
    struct net_conn *conns;
    uint32_t nconns, cap_conns, free_conn;
    struct net_listener *lis;
    size_t nlis, cap_lis;
    struct net_binding *binds;
    size_t nbinds, cap_binds;
    struct net_stats *stats; /* per proc */
    net_tap_fn *tap;         /* net_set_tap; NULL: none */
    void *tap_ctx;
    struct sim_rng *rng;
};

static inline struct net_linkst *net__link_at(const struct sim_world *w, int from, int to)
{
    const struct net_state *n = w->net;
    FL_ASSERTF(from >= 0 && from < n->dim && to >= 0 && to < n->dim, "bad link %d->%d", from, to);
    return &n->links[from * n->cap + to];
}

static inline bool net__link_open(const struct net_linkst *l)
{
    return !l->blocked && !l->clogged && !l->held;
}

/* Schedules delivery of the frames waiting at from->to if it is open again. */
void net__link_schedule_drain(struct sim_world *w, int from, int to);

#endif
