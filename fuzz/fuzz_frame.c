/*
 * fuzz_frame.c: fuzz target for the wire: the protobuf frame decoders (rpc.ClientMsg,
 * rpc.ServerMsg, raftpb.PeerFrame) and the CRC framing of the simulated network, and
 * what members and clients do with whatever a frame decodes to.
 *
 * The first input byte picks a mode, the rest is the frame (seeded from frames that
 * a real cluster sent: fuzz/corpus/frame, written by fuzz/mkcorpus.sh):
 *   0 ClientMsg, 1 ServerMsg, 2 PeerFrame: decode; a frame that decodes re-encodes
 *     to bytes that decode and re-encode to themselves (the codec is stable);
 *   3 CRC framing: the bytes cross a simulated connection whose link flips a bit
 *     (or not): they arrive exactly as sent, or not at all and the connection breaks;
 *   4 a ClientMsg sent to a member of a live 3-member cluster, 5 a PeerFrame (with
 *     the cluster and member ids patched in when it decodes, so it gets past the
 *     cluster-id check) sent to a member's peer port: the cluster survives (no crash,
 *     no assertion) and still serves a write afterwards;
 *   6 a ServerMsg answering a real client's put, watch or keep-alive (its call id
 *     patched in when it decodes) from a fake member: the client survives it.
 * Every simulated run is short (a few simulated seconds) so an input stays cheap.
 */
#include "fuzz/fuzz.h"
#include "harness/common/bugs.h"
#include "harness/sim/sim.h"
#include "nodes/client/client.h"
#include "nodes/proto/codec.h"
#include "nodes/proto/raft.pb-c.h"
#include "nodes/server/cluster.h"
#include "nodes/server/server.h"

#include <string.h>

/* ---------------------------------------------------------------- codec -------- */

static void fz_same(const struct fl_buf *a, const struct fl_buf *b, const char *what)
{
    /* An empty message encodes to no bytes: data may then be NULL. */
    FZ_REQUIRE(a->len == b->len && (a->len == 0 || memcmp(a->data, b->data, a->len) == 0),
               "%s: re-encoding is not stable (%zu vs %zu bytes)", what, a->len, b->len);
}

static void fz_client_msg(const uint8_t *p, size_t n)
{
    Rpc__ClientMsg *m = rpc_client_msg_decode(NULL, n, p);
    if (!m)
        return;
    struct fl_buf a, b;
    fl_buf_init(&a);
    fl_buf_init(&b);
    rpc_client_msg_encode(m, &a);
    rpc__client_msg__free_unpacked(m, NULL);
    Rpc__ClientMsg *m2 = rpc_client_msg_decode(NULL, a.len, a.data);
    FZ_REQUIRE(m2 != NULL, "ClientMsg: an encoded message does not decode");
    rpc_client_msg_encode(m2, &b);
    rpc__client_msg__free_unpacked(m2, NULL);
    fz_same(&a, &b, "ClientMsg");
    fl_buf_close(&a);
    fl_buf_close(&b);
}

static void fz_server_msg(const uint8_t *p, size_t n)
{
    Rpc__ServerMsg *m = rpc_server_msg_decode(NULL, n, p);
    if (!m)
        return;
    struct fl_buf a, b;
    fl_buf_init(&a);
    fl_buf_init(&b);
    rpc_server_msg_encode(m, &a);
    rpc__server_msg__free_unpacked(m, NULL);
    Rpc__ServerMsg *m2 = rpc_server_msg_decode(NULL, a.len, a.data);
    FZ_REQUIRE(m2 != NULL, "ServerMsg: an encoded message does not decode");
    rpc_server_msg_encode(m2, &b);
    rpc__server_msg__free_unpacked(m2, NULL);
    fz_same(&a, &b, "ServerMsg");
    fl_buf_close(&a);
    fl_buf_close(&b);
}

static void fz_pack_peer(const Raftpb__PeerFrame *f, struct fl_buf *out)
{
    size_t n = raftpb__peer_frame__get_packed_size(f);
    fl_buf_reserve(out, n + 1); /* never a NULL buffer, even for an empty frame */
    FZ_REQUIRE(raftpb__peer_frame__pack(f, out->data + out->len) == n, "PeerFrame pack size");
    out->len += n;
}

static void fz_peer_frame(const uint8_t *p, size_t n)
{
    Raftpb__PeerFrame *f = raftpb__peer_frame__unpack(NULL, n, p);
    if (!f)
        return;
    struct fl_buf a, b;
    fl_buf_init(&a);
    fl_buf_init(&b);
    fz_pack_peer(f, &a);
    raftpb__peer_frame__free_unpacked(f, NULL);
    Raftpb__PeerFrame *f2 = raftpb__peer_frame__unpack(NULL, a.len, a.data);
    FZ_REQUIRE(f2 != NULL, "PeerFrame: a packed frame does not unpack");
    fz_pack_peer(f2, &b);
    raftpb__peer_frame__free_unpacked(f2, NULL);
    fz_same(&a, &b, "PeerFrame");
    fl_buf_close(&a);
    fl_buf_close(&b);
}

/* ---------------------------------------------------------------- CRC framing -- */

struct fz_recv {
    const uint8_t *want;
    size_t want_n;
    int got, closed;
};

static void fz_recv_msg(struct sim_world *w, net_sock s, const uint8_t *p, size_t n, void *ctx)
{
    (void)w;
    (void)s;
    struct fz_recv *r = ctx;
    FZ_REQUIRE(n == r->want_n && (n == 0 || memcmp(p, r->want, n) == 0),
               "a frame arrived changed (%zu bytes, sent %zu)", n, r->want_n);
    r->got++;
}

static void fz_recv_close(struct sim_world *w, net_sock s, int reason, void *ctx)
{
    (void)w;
    (void)s;
    (void)reason;
    ((struct fz_recv *)ctx)->closed++;
}

static void fz_accept(struct sim_world *w, net_sock s, int peer, void *ctx)
{
    (void)peer;
    static const struct net_sock_ops ops = {NULL, fz_recv_msg, fz_recv_close};
    net_sock_bind(w, s, &ops, ctx);
}

static void fz_crc(uint8_t how, const uint8_t *p, size_t n)
{
    struct sim_world *w = sim_world_new(how);
    static const struct sim_proc_ops none = {NULL, NULL};
    int a = sim_proc_add(w, "a", &none, NULL);
    int b = sim_proc_add(w, "b", &none, NULL);
    struct fz_recv r = {p, n, 0, 0};
    FZ_REQUIRE(net_listen(w, b, 7, fz_accept, &r) == 0, "listen");
    struct net_link l;
    net_link_get(w, a, b, &l);
    bool corrupt = how & 1;
    l.corrupt_ppm = corrupt ? 1000000 : 0;
    net_link_set(w, a, b, &l);
    static const struct net_sock_ops cops = {NULL, NULL, NULL};
    net_sock s = net_connect(w, a, b, 7, &cops, NULL);
    net_send(w, s, p, n);
    net_send(w, s, p, n); /* a second frame: never delivered after a broken first */
    sim_run_for(w, 1 * FL_S);
    if (corrupt)
        FZ_REQUIRE(r.got == 0, "a corrupted frame was delivered (%d)", r.got);
    else
        FZ_REQUIRE(r.got == 2, "an intact frame was lost (%d of 2)", r.got);
    sim_world_free(w);
}

/* ---------------------------------------------------------------- a live cluster */

struct fz_done {
    int calls, ok;
};

static void fz_on_done(void *ud, const struct kvc_result *r)
{
    struct fz_done *d = ud;
    d->calls++;
    d->ok += r->status == KVC_OK;
}

static void fz_on_watch(void *ud, const struct kvc_watch_resp *r)
{
    (void)ud;
    (void)r;
}

static struct kvc_client *fz_client(struct sim_world *w, const int *procs, int n)
{
    struct kvc_endpoint eps[3];
    for (int i = 0; i < n; i++) {
        eps[i].node = i + 1;
        eps[i].proc = procs[i];
    }
    struct kvc_config kc;
    kvc_config_default(&kc);
    kc.id = 1;
    kc.balancer = LB_ROUND_ROBIN;
    kc.endpoints = eps;
    kc.endpoint_count = (size_t)n;
    kc.timeout_ms = 1000;
    struct kvc_client *c = NULL;
    const char *err = NULL;
    FZ_REQUIRE(kvc_client_new(w, &kc, &c, &err) == 0, "client: %s", err ? err : "?");
    return c;
}

/* Patches the ids a member checks into a decodable peer frame. */
static void fz_patch_peer(struct srv_cluster *cl, int node, const uint8_t *p, size_t n,
                          struct fl_buf *out)
{
    Raftpb__PeerFrame *f = raftpb__peer_frame__unpack(NULL, n, p);
    if (!f) {
        fl_buf_append(out, p, n);
        return;
    }
    f->cluster_id = srv_cluster_id(cl, node);
    f->to_member = srv_cluster_member_id(cl, node);
    if (f->from_member == 0 || f->from_member == f->to_member)
        f->from_member = srv_cluster_member_id(cl, node == 1 ? 2 : 1);
    fz_pack_peer(f, out);
    raftpb__peer_frame__free_unpacked(f, NULL);
}

static void fz_cluster(uint8_t how, const uint8_t *p, size_t n, bool peer)
{
    struct sim_world *w = sim_world_new(11);
    struct srv_config cfg;
    srv_config_default(&cfg);
    struct srv_cluster *cl = NULL;
    const char *err = NULL;
    FZ_REQUIRE(srv_cluster_create(w, &cfg, NULL, NULL, &cl, &err) == 0, "cluster: %s", err);
    for (int i = 0; i < 40 && srv_cluster_leader(cl) == 0; i++)
        sim_run_for(w, 100 * FL_MS);
    static const struct sim_proc_ops none = {NULL, NULL};
    int rogue = sim_proc_add(w, "rogue", &none, NULL);
    int node = how % 3 + 1;
    static const struct net_sock_ops cops = {NULL, NULL, NULL};
    net_sock s = net_connect(w, rogue, srv_cluster_node_proc(cl, node),
                             peer ? SRV_PEER_PORT : SRV_CLIENT_PORT, &cops, NULL);
    struct fl_buf f;
    fl_buf_init(&f);
    if (peer)
        fz_patch_peer(cl, node, p, n, &f);
    else
        fl_buf_append(&f, p, n);
    net_send(w, s, f.data, f.len);
    net_send(w, s, f.data, f.len);
    fl_buf_close(&f);
    sim_run_for(w, 2 * FL_S);
    /* The cluster still serves a write (or, when the frame legitimately changed it,
     * at least answers or fails the call in bounded time without crashing). */
    int procs[3];
    for (int i = 0; i < 3; i++)
        procs[i] = srv_cluster_node_proc(cl, i + 1);
    struct kvc_client *c = fz_client(w, procs, 3);
    struct fz_done d = {0, 0};
    kvc_put(c, (struct kvc_bytes){(const uint8_t *)"k", 1},
            (struct kvc_bytes){(const uint8_t *)"v", 1}, 0, NULL, fz_on_done, &d);
    sim_run_for(w, 3 * FL_S);
    FZ_REQUIRE(d.calls == 1, "a put got no answer within its timeout");
    kvc_client_free(c);
    srv_cluster_destroy(cl);
    sim_world_free(w);
    fl_bug_reset();
}

/* ---------------------------------------------------------------- a fake member */

struct fz_fake {
    const uint8_t *p;
    size_t n;
    int answered;
};

static void fz_fake_msg(struct sim_world *w, net_sock s, const uint8_t *p, size_t n, void *ctx)
{
    struct fz_fake *f = ctx;
    Rpc__ClientMsg *req = rpc_client_msg_decode(NULL, n, p);
    if (!req)
        return;
    uint64_t call_id = req->call_id;
    rpc__client_msg__free_unpacked(req, NULL);
    if (f->answered >= 4)
        return;
    f->answered++;
    Rpc__ServerMsg *m = rpc_server_msg_decode(NULL, f->n, f->p);
    if (!m) {
        net_send(w, s, f->p, f->n);
        return;
    }
    m->call_id = call_id;
    struct fl_buf b;
    fl_buf_init(&b);
    rpc_server_msg_encode(m, &b);
    rpc__server_msg__free_unpacked(m, NULL);
    net_send(w, s, b.data, b.len);
    net_send(w, s, b.data, b.len); /* and once more: a duplicate answer */
    fl_buf_close(&b);
}

static void fz_fake_accept(struct sim_world *w, net_sock s, int peer, void *ctx)
{
    (void)peer;
    static const struct net_sock_ops ops = {NULL, fz_fake_msg, NULL};
    net_sock_bind(w, s, &ops, ctx);
}

static void fz_client_side(uint8_t how, const uint8_t *p, size_t n)
{
    struct sim_world *w = sim_world_new(13);
    static const struct sim_proc_ops none = {NULL, NULL};
    int fake = sim_proc_add(w, "fake", &none, NULL);
    struct fz_fake f = {p, n, 0};
    FZ_REQUIRE(net_listen(w, fake, SRV_CLIENT_PORT, fz_fake_accept, &f) == 0, "listen");
    struct kvc_client *c = fz_client(w, &fake, 1);
    struct fz_done d = {0, 0};
    struct kvc_bytes k = {(const uint8_t *)"k", 1};
    switch (how % 3) {
    case 0:
        kvc_put(c, k, k, 0, NULL, fz_on_done, &d);
        break;
    case 1: {
        struct kvc_watch_req wr;
        memset(&wr, 0, sizeof(wr));
        wr.key = k;
        wr.prev_kv = true;
        kvc_watch(c, &wr, NULL, fz_on_watch, NULL);
        break;
    }
    default:
        kvc_lease_keepalive(c, 7, NULL, fz_on_done, &d);
        break;
    }
    sim_run_for(w, 3 * FL_S);
    kvc_client_free(c);
    sim_world_free(w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    uint8_t mode = data[0] % 7, how = data[1];
    const uint8_t *p = data + 2;
    size_t n = size - 2;
    switch (mode) {
    case 0:
        fz_client_msg(p, n);
        break;
    case 1:
        fz_server_msg(p, n);
        break;
    case 2:
        fz_peer_frame(p, n);
        break;
    case 3:
        fz_crc(how, p, n);
        break;
    case 4:
        fz_cluster(how, p, n, false);
        break;
    case 5:
        fz_cluster(how, p, n, true);
        break;
    default:
        fz_client_side(how, p, n);
        break;
    }
    return 0;
}
