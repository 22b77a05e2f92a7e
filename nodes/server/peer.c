/*
 * peer.c: the peer transport of a member (etcd's rafthttp streams, simulated). As
 * rafthttp does, each member keeps one connection to every other member of its
 * configuration from the start, redials one that failed every 100 ms, and sends an
 * empty frame (a link heartbeat) on one that carried nothing for a third of the read
 * timeout, so an idle stream stays up and "connected since" means what etcd's
 * ActiveSince means (the strict reconfiguration check reads it). It accepts one
 * connection from each peer; a frame is a raftpb.PeerFrame holding the messages of
 * one ready for that peer. A broken connection is reported to Raft (unreachable,
 * failed snapshot) and re-opened on the next send or dial. Every frame carries the sender's cluster
 * ID; a frame from another cluster is refused and answered with a refusal, which the
 * sender reports as a node event ("etcdserver: cluster ID mismatch").
 *
 * Owns: the sockets in m->net.peers (outgoing) and the accepted peer sockets (bound to
 * the member, closed by the simulator when the process dies).
 */
#include "nodes/proto/pb_bound.h"
#include "nodes/server/srv_int.h"

/* A new peer id. Cold and out of line: peer_get runs for every message a member
 * sends, and a call in its body would make it save registers on every lookup. */
__attribute__((cold)) static struct srv_peer *peer_add(struct srv_member *m, uint64_t id)
{
    FL_GROW_ZERO(m->net.peers, m->net.n_peers, m->net.cap_peers, m->net.n_peers + 1, 8);
    struct srv_peer *p = &m->net.peers[m->net.n_peers - 1];
    p->id = id;
    p->proc = -1;
    p->connected_since_ns = -1;
    return p;
}

static struct srv_peer *peer_get(struct srv_member *m, uint64_t id)
{
    for (size_t i = 0; i < m->net.n_peers; i++)
        if (m->net.peers[i].id == id)
            return &m->net.peers[i];
    return peer_add(m, id);
}

static struct srv_peer *peer_by_sock(struct srv_member *m, env_sock s)
{
    for (size_t i = 0; i < m->net.n_peers; i++)
        if (m->net.peers[i].out == s)
            return &m->net.peers[i];
    return NULL;
}

bool srv_peer_active(struct srv_member *m, uint64_t id)
{
    for (size_t i = 0; i < m->net.n_peers; i++)
        if (m->net.peers[i].id == id)
            return m->net.peers[i].out && m->net.peers[i].connected_since_ns >= 0 &&
                   env_sock_open(m->env, m->net.peers[i].out);
    return false;
}

bool srv_peer_connected_since(struct srv_member *m, uint64_t id, int64_t since_ns)
{
    if (!srv_peer_active(m, id))
        return false;
    for (size_t i = 0; i < m->net.n_peers; i++)
        if (m->net.peers[i].id == id)
            return m->net.peers[i].connected_since_ns < since_ns;
    return false;
}

/* ---- conversions ---------------------------------------------------------------- */

/* Scratch arrays for the entries of the messages of one ready. */
struct ent_arrays {
    uint64_t *index, *term;
    uint32_t *type;
    ProtobufCBinaryData *data;
};

/* The scalar fields a raft_msg and a Raftpb__Message share under the same names: both
 * conversions copy them with PEER_COPY_FIELD (out->f = in->f). */
/* clang-format off */
#define PEER_MSG_SCALARS(X) \
    X(from)                 \
    X(to)                   \
    X(term)                 \
    X(log_term)             \
    X(index)                \
    X(commit)               \
    X(context)              \
    X(reject)               \
    X(reject_hint)          \
    X(hint_term)
/* clang-format on */
#define PEER_COPY_FIELD(f) out->f = in->f;

static void msg_to_pb(const struct raft_msg *in, Raftpb__Message *out, struct ent_arrays *ea,
                      size_t off, Raftpb__Snapshot *snap, Raftpb__ConfState *cs)
{
    raftpb__message__init(out);
    out->type = (uint32_t)in->type;
    PEER_MSG_SCALARS(PEER_COPY_FIELD)
    size_t n = in->entries_count;
    for (size_t i = 0; i < n; i++) {
        ea->index[off + i] = in->entries[i].index;
        ea->term[off + i] = in->entries[i].term;
        ea->type[off + i] = (uint32_t)in->entries[i].type;
        ea->data[off + i].data = (uint8_t *)in->entries[i].data;
        ea->data[off + i].len = in->entries[i].len;
    }
    out->n_entry_index = out->n_entry_term = out->n_entry_type = out->n_entry_data = n;
    out->entry_index = ea->index + off;
    out->entry_term = ea->term + off;
    out->entry_type = ea->type + off;
    out->entry_data = ea->data + off;
    if (in->snapshot) {
        raftpb__snapshot__init(snap);
        raftpb__conf_state__init(cs);
        snap->index = in->snapshot->index;
        snap->term = in->snapshot->term;
        cs->n_voters = in->snapshot->conf.voters_count;
        cs->voters = (uint64_t *)in->snapshot->conf.voters;
        cs->n_learners = in->snapshot->conf.learners_count;
        cs->learners = (uint64_t *)in->snapshot->conf.learners;
        snap->conf = cs;
        snap->data.data = (uint8_t *)in->snapshot->data;
        snap->data.len = in->snapshot->len;
        out->snapshot = snap;
    }
}

/* Fills a raft_msg from a decoded message; entries go into ents (cap: the entry count). */
static bool msg_from_pb(const Raftpb__Message *in, struct raft_msg *out, struct raft_entry *ents,
                        struct raft_snapshot *snap)
{
    if (in->type >= RAFT_MSG_TYPE_COUNT)
        return false;
    memset(out, 0, sizeof *out);
    out->type = (enum raft_msg_type)in->type;
    PEER_MSG_SCALARS(PEER_COPY_FIELD)
    size_t n = in->n_entry_index;
    if (in->n_entry_term != n || in->n_entry_type != n || in->n_entry_data != n)
        return false;
    for (size_t i = 0; i < n; i++) {
        ents[i].index = in->entry_index[i];
        ents[i].term = in->entry_term[i];
        ents[i].type = (enum raft_entry_type)in->entry_type[i];
        ents[i].data = in->entry_data[i].data;
        ents[i].len = in->entry_data[i].len;
    }
    out->entries = ents;
    out->entries_count = n;
    if (in->snapshot) {
        memset(snap, 0, sizeof *snap);
        snap->index = in->snapshot->index;
        snap->term = in->snapshot->term;
        const Raftpb__ConfState *cs = in->snapshot->conf;
        if (cs) {
            if (cs->n_voters > RAFT_NODES_MAX || cs->n_learners > RAFT_NODES_MAX)
                return false;
            snap->conf.voters_count = (uint32_t)cs->n_voters;
            for (size_t i = 0; i < cs->n_voters; i++)
                snap->conf.voters[i] = cs->voters[i];
            snap->conf.learners_count = (uint32_t)cs->n_learners;
            for (size_t i = 0; i < cs->n_learners; i++)
                snap->conf.learners[i] = cs->learners[i];
        }
        snap->data = in->snapshot->data.data;
        snap->len = in->snapshot->data.len;
        out->snapshot = snap;
    }
    return true;
}

/* ---- incoming ------------------------------------------------------------------- */

static void peer_refuse(struct srv_member *m, env_sock s, const Raftpb__PeerFrame *f)
{
    Raftpb__PeerFrame r = RAFTPB__PEER_FRAME__INIT;
    r.cluster_id = m->cluster_id;
    r.from_member = m->id;
    r.to_member = f->from_member;
    r.refused = true;
    r.error = (char *)rpc_err_text(RPC_ERR_CLUSTER_ID_MISMATCH);
    size_t n = raftpb__peer_frame__get_packed_size(&r);
    uint8_t *buf = fl_malloc(n + 1);
    raftpb__peer_frame__pack(&r, buf);
    env_send(m->env, s, buf, n);
    free(buf);
}

static void step_frame(struct srv_member *m, const Raftpb__PeerFrame *f)
{
    size_t cap = 0;
    for (size_t i = 0; i < f->n_msgs; i++)
        cap = FL_MAX(cap, f->msgs[i]->n_entry_index);
    struct raft_entry ents_s[64];
    struct raft_entry *ents = cap <= 64 ? ents_s : fl_calloc(cap, sizeof *ents);
    struct raft_snapshot snap;
    for (size_t i = 0; i < f->n_msgs; i++) {
        struct raft_msg msg;
        if (!msg_from_pb(f->msgs[i], &msg, ents, &snap) || msg.to != m->id)
            continue;
        /* Only a leader sends appends, heartbeats and snapshots. A follower that was
         * cut off has usually given up on its leader (pre-vote resets it), so the
         * gap is measured over those messages, whoever the member believes in. */
        if (msg.type == RAFT_MSG_APPEND || msg.type == RAFT_MSG_HEARTBEAT ||
            msg.type == RAFT_MSG_SNAPSHOT) {
            int64_t now = srv_member_now(m);
            const struct srv_config *c = srv_member_config(m);
            if (FL_BUG(MVCC_WATCH_OLD_AFTER_PARTITION) && m->soft.last_leader_msg_ns >= 0 &&
                now - m->soft.last_leader_msg_ns > c->election_ms * FL_MS)
                srv_watches_rewind(m); /* etcd#15271: the rejoined member resyncs wrongly */
            m->soft.last_leader_msg_ns = now;
            if (msg.from == raft_leader(m->raft))
                m->soft.last_leader_contact_ns = now;
        }
        raft_step(m->raft, &msg);
        if (m->stopping)
            break;
    }
    if (ents != ents_s)
        free(ents);
}

static void on_peer_message(void *ctx, env_sock s, const uint8_t *p, size_t n)
{
    struct srv_member *m = ctx;
    if (m->stopping || m->removed)
        return;
    srv_pb_arena_reset(&m->pb_peer);
    Raftpb__PeerFrame *f = raftpb__peer_frame__unpack(&m->pb_peer.alloc, n, p);
    if (!f)
        return; /* garbage: etcd drops it */
    if (f->refused && srv_member_now(m) - m->net.last_refused_ns >= FL_S) {
        m->net.last_refused_ns = srv_member_now(m);
        char d[160];
        snprintf(d, sizeof d, "refused by the member on process %d: %s", env_sock_peer(m->env, s),
                 f->error ? f->error : "");
        srv_member_event(m, SRV_EV_PEER_REFUSED, d);
    } else if (f->refused) {
        /* already reported within the last second */
    } else if (f->cluster_id != m->cluster_id) {
        peer_refuse(m, s, f);
    } else if (f->to_member == m->id) {
        peer_get(m, f->from_member)->last_heard_ns = srv_member_now(m);
        step_frame(m, f);
        for (size_t i = 0; i < f->n_lease_renews && !m->stopping; i++)
            srv_rpc_on_renew(m, f->from_member, f->lease_renews[i]);
        srv_member_process(m);
    }
    srv_pb_arena_reset(&m->pb_peer);
}

static void on_peer_in_close(void *ctx, env_sock s, int reason)
{
    (void)s;
    (void)reason;
    (void)ctx;
}

static void on_peer_accept(void *ctx, env_sock s, int peer)
{
    struct srv_member *m = ctx;
    (void)peer;
    env_sock_bind(m->env, s, &m->net.peer_in_cb);
}

int srv_peer_listen(struct srv_member *m)
{
    return env_listen(m->env, SRV_PEER_PORT, on_peer_accept, m);
}

/* ---- outgoing ------------------------------------------------------------------- */

static void on_out_open(void *ctx, env_sock s)
{
    struct srv_member *m = ctx;
    struct srv_peer *p = peer_by_sock(m, s);
    if (p)
        p->connected_since_ns = srv_member_now(m);
}

/* p's outgoing connection is gone (closed by the peer or timed out here): raft learns
 * the peer is unreachable, and a snapshot being sent to it failed. */
static void out_lost(struct srv_member *m, struct srv_peer *p)
{
    p->out = 0;
    p->connected_since_ns = -1;
    raft_report_unreachable(m->raft, p->id);
    struct raft_progress pr;
    if (raft_progress_get(m->raft, p->id, &pr) == FL_OK && pr.state == RAFT_PR_SNAPSHOT)
        raft_report_snapshot(m->raft, p->id, false);
}

static void on_out_close(void *ctx, env_sock s, int reason)
{
    (void)reason;
    struct srv_member *m = ctx;
    struct srv_peer *p = peer_by_sock(m, s);
    if (!p || m->stopping)
        return;
    out_lost(m, p);
    srv_member_process(m);
}

void srv_peer_cb_init(struct srv_member *m)
{
    m->net.peer_in_cb = (struct env_sock_cb){NULL, on_peer_message, on_peer_in_close, m};
    m->net.peer_out_cb = (struct env_sock_cb){on_out_open, on_peer_message, on_out_close, m};
}

/* The outgoing socket to peer id, connecting when needed; 0 when the peer's address
 * is unknown or this process is down. */
static env_sock peer_sock(struct srv_member *m, uint64_t id)
{
    struct srv_peer *p = peer_get(m, id);
    int proc = srv_host_dir_proc(m->host, id);
    if (proc < 0)
        return 0;
    if (p->out && p->proc != proc) {
        env_close(m->env, p->out);
        p->out = 0;
    }
    if (!p->out) {
        p->proc = proc;
        p->connected_since_ns = -1;
        p->attempt_ns = srv_member_now(m);
        p->out = env_connect(m->env, proc, SRV_PEER_PORT, &m->net.peer_out_cb);
    }
    return p->out;
}

struct delayed_frame {
    struct env_timer timer;
    struct srv_member *m;
    uint64_t to;
    uint8_t *buf;
    size_t len;
};

static void send_delayed(void *ctx)
{
    struct delayed_frame *d = ctx;
    struct srv_peer *p = peer_get(d->m, d->to);
    if (p->out)
        env_send(d->m->env, p->out, d->buf, d->len);
    free(d->buf);
    free(d);
}

static void send_frame(struct srv_member *m, uint64_t to, Raftpb__PeerFrame *f)
{
    struct env_fault_hit hit;
    enum env_fault fault = env_failpoint(m->env, FLT_SERVER_BEFORE_SEND, &hit);
    if (fault == ENV_FAULT_CRASH || fault == ENV_FAULT_DROP || fault == ENV_FAULT_ERROR)
        return; /* crashed, or the frame is lost before it leaves */
    env_sock s = peer_sock(m, to);
    if (!s)
        return;
    peer_get(m, to)->last_sent_ns = srv_member_now(m);
    if (fault == ENV_FAULT_DELAY && hit.delay_ns > 0) {
        f->cluster_id = m->cluster_id;
        f->from_member = m->id;
        f->to_member = to;
        struct delayed_frame *d = fl_calloc(1, sizeof *d);
        d->m = m;
        d->to = to;
        d->len = raftpb__peer_frame__get_packed_size(f);
        d->buf = fl_malloc(d->len + 1);
        raftpb__peer_frame__pack(f, d->buf);
        if (!env_timer_start(m->env, &d->timer, hit.delay_ns, send_delayed, d)) {
            free(d->buf);
            free(d);
        }
        return;
    }
    f->cluster_id = m->cluster_id;
    f->from_member = m->id;
    f->to_member = to;
    /* Packed into the member's reused buffer reserved to a bound, with no sizing walk
     * first; only the n bytes written go out (pb_bound.h). */
    fl_buf_reset(&m->scratch);
    size_t n = pb_pack_append(&f->base, pb_peer_frame_bound(f), &m->scratch);
    if (env_send(m->env, s, m->scratch.data, n) != FL_OK) {
        struct srv_peer *p = peer_get(m, to);
        env_close(m->env, p->out);
        p->out = 0;
        p->connected_since_ns = -1;
    }
}

#define SEND_STACK_MSGS 16
#define SEND_STACK_ENTS 128

void srv_peer_send_msgs(struct srv_member *m, const struct raft_msg *msgs, size_t n)
{
    /* Scratch for the protobuf view of the messages: on the stack for the usual
     * ready (heartbeats, a few appends), on the heap for big ones. */
    bool done_s[SEND_STACK_MSGS];
    Raftpb__Message pm_s[SEND_STACK_MSGS], *pptr_s[SEND_STACK_MSGS];
    Raftpb__Snapshot snaps_s[SEND_STACK_MSGS];
    Raftpb__ConfState css_s[SEND_STACK_MSGS];
    uint64_t eidx_s[SEND_STACK_ENTS], eterm_s[SEND_STACK_ENTS];
    uint32_t etype_s[SEND_STACK_ENTS];
    ProtobufCBinaryData edata_s[SEND_STACK_ENTS];
    size_t total_ents = 0;
    for (size_t i = 0; i < n; i++)
        total_ents += msgs[i].entries_count;
    bool big_m = n > SEND_STACK_MSGS, big_e = total_ents > SEND_STACK_ENTS;
    bool *done = big_m ? fl_calloc(n, sizeof *done) : done_s;
    Raftpb__Message *pm = big_m ? fl_calloc(n, sizeof *pm) : pm_s;
    Raftpb__Message **pptr = big_m ? fl_calloc(n, sizeof *pptr) : pptr_s;
    Raftpb__Snapshot *snaps = big_m ? fl_calloc(n, sizeof *snaps) : snaps_s;
    Raftpb__ConfState *css = big_m ? fl_calloc(n, sizeof *css) : css_s;
    struct ent_arrays ea = {eidx_s, eterm_s, etype_s, edata_s};
    if (big_e) {
        ea.index = fl_calloc(total_ents, sizeof *ea.index);
        ea.term = fl_calloc(total_ents, sizeof *ea.term);
        ea.type = fl_calloc(total_ents, sizeof *ea.type);
        ea.data = fl_calloc(total_ents, sizeof *ea.data);
    }
    if (!big_m)
        memset(done, 0, n * sizeof *done);
    size_t eoff = 0;
    for (size_t i = 0; i < n; i++) {
        msg_to_pb(&msgs[i], &pm[i], &ea, eoff, &snaps[i], &css[i]);
        eoff += msgs[i].entries_count;
        /* The member's own snapshots live only in their files (see take_snapshot). */
        const struct raft_snapshot *sn = msgs[i].snapshot;
        if (sn && sn->len == 0 && sn->index > 0) {
            const uint8_t *d;
            size_t dl;
            if (srv_snap_file_view(m->env, sn->index, &d, &dl)) {
                snaps[i].data.data = (uint8_t *)d;
                snaps[i].data.len = dl;
            } else {
                done[i] = true; /* unreadable: the core probes again later */
                raft_report_snapshot(m->raft, msgs[i].to, false);
            }
        }
    }
    /* One frame per destination, messages in their order. */
    for (size_t i = 0; i < n; i++) {
        if (done[i])
            continue;
        uint64_t to = msgs[i].to;
        size_t k = 0;
        bool snap = false;
        for (size_t j = i; j < n; j++) {
            if (!done[j] && msgs[j].to == to) {
                pptr[k++] = &pm[j];
                done[j] = true;
                snap = snap || msgs[j].type == RAFT_MSG_SNAPSHOT;
            }
        }
        Raftpb__PeerFrame f = RAFTPB__PEER_FRAME__INIT;
        f.n_msgs = k;
        f.msgs = pptr;
        send_frame(m, to, &f);
        /* A snapshot that left on an open connection counts as delivered: the
         * connection breaks (and reports failure) if it is lost. */
        if (snap)
            raft_report_snapshot(m->raft, to, peer_get(m, to)->out != 0);
    }
    if (big_m) {
        free(done);
        free(pm);
        free(pptr);
        free(snaps);
        free(css);
    }
    if (big_e) {
        free(ea.index);
        free(ea.term);
        free(ea.type);
        free(ea.data);
    }
}

void srv_peer_send_renew(struct srv_member *m, uint64_t to, const Raftpb__LeaseRenew *lr)
{
    Raftpb__PeerFrame f = RAFTPB__PEER_FRAME__INIT;
    Raftpb__LeaseRenew *arr[1] = {(Raftpb__LeaseRenew *)lr};
    f.n_lease_renews = 1;
    f.lease_renews = arr;
    send_frame(m, to, &f);
}

/* Dials every other member of the configuration that has no stream, at most every
 * SRV_PEER_DIAL_RETRY_NS (rafthttp's streamReader retries every 100 ms). */
static void peers_dial(struct srv_member *m, int64_t now)
{
    const struct raft_conf_state *c = raft_conf(m->raft);
    for (uint32_t k = 0; k < c->voters_count + c->learners_count; k++) {
        uint64_t id = k < c->voters_count ? c->voters[k] : c->learners[k - c->voters_count];
        if (id == m->id)
            continue;
        struct srv_peer *p = peer_get(m, id);
        if (!p->out && (p->attempt_ns == 0 || now - p->attempt_ns >= SRV_PEER_DIAL_RETRY_NS))
            peer_sock(m, id);
    }
}

/* An empty frame on each open stream that carried nothing for a while (rafthttp's
 * linkHeartbeatMessage), so the peer's read timeout does not close an idle stream. */
static void peers_link_heartbeat(struct srv_member *m, int64_t now)
{
    for (size_t i = 0; i < m->net.n_peers; i++) {
        struct srv_peer *p = &m->net.peers[i];
        if (!p->out || p->connected_since_ns < 0 ||
            now - FL_MAX(p->last_sent_ns, p->connected_since_ns) < SRV_PEER_LINK_HEARTBEAT_NS)
            continue;
        Raftpb__PeerFrame f = RAFTPB__PEER_FRAME__INIT;
        send_frame(m, p->id, &f);
    }
}

void srv_peers_tick(struct srv_member *m)
{
    int64_t now = srv_member_now(m);
    peers_dial(m, now);
    peers_link_heartbeat(m, now);
    for (size_t i = 0; i < m->net.n_peers; i++) {
        struct srv_peer *p = &m->net.peers[i];
        if (!p->out)
            continue;
        /* A connection still opening is judged by its attempt alone: frames the peer
         * sends us arrive on its own connection and say nothing of ours (its SYN or
         * the answer may be lost: etcd's dial timeout). */
        int64_t since =
            p->connected_since_ns < 0 ? p->attempt_ns : FL_MAX(p->last_heard_ns, p->attempt_ns);
        if (now - since < SRV_PEER_READ_TIMEOUT_NS)
            continue;
        env_close(m->env, p->out);
        out_lost(m, p);
    }
}

void srv_peers_close(struct srv_member *m)
{
    for (size_t i = 0; i < m->net.n_peers; i++) {
        if (m->net.peers[i].out)
            env_close(m->env, m->net.peers[i].out);
        m->net.peers[i].out = 0;
    }
    env_unlisten(m->env, SRV_PEER_PORT);
}
