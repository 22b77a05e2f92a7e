/*
 * apply.c: the apply loop. Every member applies the committed entries in log order
 * to its MVCC store; the member that proposed an entry also answers the client
 * request waiting on it. Configuration entries update the applied configuration
 * (the configuration in force changed already when the entry was appended, in the
 * Raft core) and answer member add/remove/promote.
 *
 * The "capped" applier of etcd lives here: while a NOSPACE alarm is active, Put, Txn
 * with writes and LeaseGrant are refused at apply time on every member alike, so the
 * stores stay identical.
 */
#include "nodes/server/convert.h"
#include "nodes/server/srv_int.h"

#include <inttypes.h>

bool srv_alarm_active(const struct srv_member *m, uint32_t type)
{
    for (uint32_t i = 0; i < m->app.n_alarms; i++)
        if (m->app.alarms[i].type == type)
            return true;
    return false;
}

static void alarm_set(struct srv_member *m, uint64_t member, uint32_t type, bool on)
{
    for (uint32_t i = 0; i < m->app.n_alarms; i++) {
        if ((m->app.alarms[i].member == member || member == 0) && m->app.alarms[i].type == type) {
            if (on)
                return;
            m->app.alarms[i] = m->app.alarms[--m->app.n_alarms];
            i--;
        }
    }
    if (on && m->app.n_alarms < SRV_ALARMS_MAX) {
        m->app.alarms[m->app.n_alarms].member = member;
        m->app.alarms[m->app.n_alarms].type = type;
        m->app.n_alarms++;
    }
    char d[96];
    snprintf(d, sizeof d, "%s %s", on ? "activate" : "deactivate",
             type == RPC__ALARM_TYPE__NOSPACE ? "NOSPACE" : "CORRUPT");
    srv_member_event(m, SRV_EV_ALARM, d);
}

static Rpc__AlarmResponse *alarm_list_pb(struct srv_arena *a, struct srv_member *m)
{
    Rpc__AlarmResponse *o = srv_arena_alloc(a, sizeof *o);
    rpc__alarm_response__init(o);
    o->alarms = srv_arena_alloc(a, (m->app.n_alarms + 1) * sizeof *o->alarms);
    for (uint32_t i = 0; i < m->app.n_alarms; i++) {
        Rpc__AlarmMember *am = srv_arena_alloc(a, sizeof *am);
        rpc__alarm_member__init(am);
        am->memberid = m->app.alarms[i].member;
        am->alarm = (Rpc__AlarmType)m->app.alarms[i].type;
        o->alarms[o->n_alarms++] = am;
    }
    return o;
}

/* Results whose arrays must live until the reply is packed. */
struct apply_keep {
    struct mvcc_delete_result del;
    bool has_del;
    struct mvcc_txn_result txn;
    bool has_txn;
};

/* FL_BUG(SERVER_TXN_DROPS_RANGES), etcd#18667: a member that holds no waiter for a
 * txn needs none of its read results, so etcd removed the txn's range operations
 * before applying it there (removeNeedlessRangeReqs). A range at a compacted revision
 * then fails the txn on the proposer only: the other members apply its writes. The
 * fix keeps every range (reduced to a count-only probe) so all members validate it. */
static const struct mvcc_op *drop_ranges(struct srv_arena *a, const struct mvcc_op *ops, size_t *n)
{
    struct mvcc_op *kept = srv_arena_alloc(a, (*n + 1) * sizeof *kept);
    size_t k = 0;
    for (size_t i = 0; i < *n; i++)
        if (ops[i].kind != MVCC_OP_RANGE)
            kept[k++] = ops[i];
    *n = k;
    return kept;
}

/* A compaction's apply, a client's or the auto-compactor's, between its two failpoints
 * (etcd's compactBeforeCommitBatch and compactAfterCommitBatch). Returns false when the
 * member crashed at one of them (m->stopping is set, nothing more may happen);
 * otherwise *err is MVCC's answer and *hrev the header revision. */
static bool compact_apply(struct srv_member *m, int64_t rev, int64_t *hrev, enum mvcc_err *err)
{
    struct env_fault_hit hit;
    if (env_failpoint(m->env, FLT_MVCC_COMPACT_BATCH, &hit) == ENV_FAULT_CRASH) {
        m->stopping = true;
        return false;
    }
    *err = mvcc_compact(m->kv, rev, hrev);
    if (*err == MVCC_OK && env_failpoint(m->env, FLT_MVCC_COMPACT_AFTER, &hit) == ENV_FAULT_CRASH) {
        m->stopping = true;
        return false;
    }
    return true;
}

/* etcd's quota applier (etcd-facts §B.3): a Put, a Txn with writes or a LeaseGrant that
 * crosses the quota is applied all the same, on every member, and its proposer answers
 * "database space exceeded". The gRPC check before proposing (rpc.c) refuses with the
 * same text, so a client cannot tell the two apart: the outcome is unknown to it. The
 * same cost as that check. */
static bool over_quota(struct srv_member *m, size_t key_len, size_t value_len)
{
    int64_t quota = srv_member_config(m)->quota_backend_bytes;
    return quota > 0 &&
           mvcc_size_bytes(m->kv) + mvcc_put_cost_bytes(m->kv, key_len, value_len) > quota;
}

/* Applies one client request; fills resp (arena memory) or returns an error id
 * (RPC_ERR_NONE with *merr set for MVCC errors). proposer: a client waits on this
 * member for the answer. */
static int apply_client(struct srv_member *m, struct srv_arena *a, const Rpc__ClientMsg *cm,
                        bool proposer, Rpc__ServerMsg *resp, enum mvcc_err *merr,
                        struct apply_keep *k)
{
    bool nospace = srv_alarm_active(m, RPC__ALARM_TYPE__NOSPACE);
    *merr = MVCC_OK;
    switch (cm->req_case) {
    case RPC__CLIENT_MSG__REQ_PUT: {
        if (nospace)
            return RPC_ERR_NO_SPACE;
        struct mvcc_put_req req;
        struct mvcc_put_result res;
        srv_put_from_pb(cm->put, &req);
        bool over = over_quota(m, cm->put->key.len, cm->put->value.len);
        if ((*merr = mvcc_put(m->kv, &req, &res)) != MVCC_OK)
            return RPC_ERR_NONE;
        if (over)
            return RPC_ERR_NO_SPACE; /* applied all the same */
        resp->resp_case = RPC__SERVER_MSG__RESP_PUT;
        if (!a)
            return RPC_ERR_NONE; /* nobody waits here: no response to build */
        resp->put = srv_put_resp_pb(a, &res);
        resp->header->revision = res.header_rev;
        return RPC_ERR_NONE;
    }
    case RPC__CLIENT_MSG__REQ_DELETE_RANGE: {
        struct mvcc_delete_req req;
        srv_delete_from_pb(cm->delete_range, &req);
        if ((*merr = mvcc_delete(m->kv, &req, &k->del)) != MVCC_OK)
            return RPC_ERR_NONE;
        k->has_del = true;
        resp->resp_case = RPC__SERVER_MSG__RESP_DELETE_RANGE;
        if (a)
            resp->delete_range = srv_delete_resp_pb(a, &k->del);
        resp->header->revision = k->del.header_rev;
        return RPC_ERR_NONE;
    }
    case RPC__CLIENT_MSG__REQ_TXN: {
        if (nospace && srv_txn_has_writes(cm->txn))
            return RPC_ERR_NO_SPACE;
        struct mvcc_txn_req req;
        if (!srv_txn_from_pb(a, cm->txn, &req)) {
            *merr = MVCC_ERR_INVALID;
            return RPC_ERR_NONE;
        }
        if (FL_BUG(SERVER_TXN_DROPS_RANGES) && !proposer) {
            req.success = drop_ranges(a, req.success, &req.success_len);
            req.failure = drop_ranges(a, req.failure, &req.failure_len);
        }
        bool over = srv_txn_has_writes(cm->txn) && over_quota(m, 0, 0);
        if ((*merr = mvcc_txn(m->kv, &req, &k->txn)) != MVCC_OK)
            return RPC_ERR_NONE;
        k->has_txn = true;
        if (over)
            return RPC_ERR_NO_SPACE; /* applied all the same */
        resp->resp_case = RPC__SERVER_MSG__RESP_TXN;
        resp->txn = srv_txn_resp_pb(a, &k->txn);
        resp->header->revision = k->txn.header_rev;
        return RPC_ERR_NONE;
    }
    case RPC__CLIENT_MSG__REQ_COMPACT: {
        int64_t hrev = 0;
        if (!compact_apply(m, cm->compact->revision, &hrev, merr))
            return RPC_ERR_STOPPED; /* the process died mid-compaction */
        if (*merr != MVCC_OK)
            return RPC_ERR_NONE;
        Rpc__CompactionResponse *cr = srv_arena_alloc(a, sizeof *cr);
        rpc__compaction_response__init(cr);
        resp->resp_case = RPC__SERVER_MSG__RESP_COMPACT;
        resp->compact = cr;
        char d[64];
        snprintf(d, sizeof d, "compacted to revision %" PRId64, cm->compact->revision);
        srv_member_event_compact(m, cm->compact->revision, d);
        return RPC_ERR_NONE;
    }
    case RPC__CLIENT_MSG__REQ_LEASE_GRANT: {
        if (nospace)
            return RPC_ERR_NO_SPACE;
        int64_t ttl = 0;
        bool over = over_quota(m, 0, 0);
        if ((*merr = mvcc_lease_grant(m->kv, cm->lease_grant->id, cm->lease_grant->ttl,
                                      srv_member_now(m), &ttl)) != MVCC_OK)
            return RPC_ERR_NONE;
        if (over)
            return RPC_ERR_NO_SPACE; /* granted all the same */
        Rpc__LeaseGrantResponse *lr = srv_arena_alloc(a, sizeof *lr);
        rpc__lease_grant_response__init(lr);
        lr->id = cm->lease_grant->id;
        lr->ttl = ttl;
        resp->resp_case = RPC__SERVER_MSG__RESP_LEASE_GRANT;
        resp->lease_grant = lr;
        return RPC_ERR_NONE;
    }
    case RPC__CLIENT_MSG__REQ_LEASE_REVOKE: {
        int64_t hrev = 0;
        if ((*merr = mvcc_lease_revoke(m->kv, cm->lease_revoke->id, NULL, &hrev)) != MVCC_OK)
            return RPC_ERR_NONE;
        Rpc__LeaseRevokeResponse *lr = srv_arena_alloc(a, sizeof *lr);
        rpc__lease_revoke_response__init(lr);
        resp->resp_case = RPC__SERVER_MSG__RESP_LEASE_REVOKE;
        resp->lease_revoke = lr;
        resp->header->revision = hrev;
        return RPC_ERR_NONE;
    }
    case RPC__CLIENT_MSG__REQ_ALARM: {
        const Rpc__AlarmRequest *ar = cm->alarm;
        if (ar->action == RPC__ALARM_REQUEST__ALARM_ACTION__DEACTIVATE)
            alarm_set(m, ar->memberid, (uint32_t)ar->alarm, false);
        else if (ar->action == RPC__ALARM_REQUEST__ALARM_ACTION__ACTIVATE)
            alarm_set(m, ar->memberid, (uint32_t)ar->alarm, true);
        resp->resp_case = RPC__SERVER_MSG__RESP_ALARM;
        resp->alarm = alarm_list_pb(a, m);
        return RPC_ERR_NONE;
    }
    default:
        *merr = MVCC_ERR_INVALID;
        return RPC_ERR_NONE;
    }
}

/* Decodes a client entry (see SRV_ENTRY_CLIENT) into *cm, whose request member
 * points into the apply arena. The proposing member already holds the decoded
 * request (wt->req, which the entry was packed from) and uses it as it is. */
static const Rpc__ClientMsg *client_entry_decode(struct srv_member *m, const uint8_t *p, size_t n,
                                                 const struct srv_waiter *wt, Rpc__ClientMsg *cm)
{
    if (n < 2)
        return NULL;
    if (wt && wt->req && wt->req->method == p[0] && wt->req->req_case == p[1])
        return wt->req;
    rpc__client_msg__init(cm);
    cm->method = (Rpc__Method)p[0];
    cm->req_case = (Rpc__ClientMsg__ReqCase)p[1];
    const ProtobufCFieldDescriptor *fd =
        protobuf_c_message_descriptor_get_field(&rpc__client_msg__descriptor, p[1]);
    if (!fd || fd->type != PROTOBUF_C_TYPE_MESSAGE || !fd->descriptor)
        return NULL;
    ProtobufCMessage *sub =
        protobuf_c_message_unpack(fd->descriptor, &m->pb_apply.alloc, n - 2, p + 2);
    if (!sub)
        return NULL;
    *(ProtobufCMessage **)((char *)cm + fd->offset) = sub;
    return cm;
}

static void apply_client_entry(struct srv_member *m, const uint8_t *p, size_t n,
                               struct srv_waiter *wt)
{
    srv_pb_arena_reset(&m->pb_apply);
    Rpc__ClientMsg shell;
    const Rpc__ClientMsg *cm = client_entry_decode(m, p, n, wt, &shell);
    if (!cm)
        return; /* a member never proposes garbage; nothing to apply */
    struct srv_arena a = {0};
    Rpc__ServerMsg resp = RPC__SERVER_MSG__INIT;
    Rpc__ResponseHeader hdr = RPC__RESPONSE_HEADER__INIT;
    resp.header = &hdr;
    srv_header_fill(m, &hdr);
    resp.method = cm->method;
    enum mvcc_err merr = MVCC_OK;
    struct apply_keep k;
    memset(&k, 0, sizeof k);
    /* Only the proposer answers: the others build no response for puts and deletes
     * (a txn converts its request in the arena, so it always gets one). */
    bool hot = cm->req_case == RPC__CLIENT_MSG__REQ_PUT ||
               cm->req_case == RPC__CLIENT_MSG__REQ_DELETE_RANGE;
    int r = apply_client(m, wt || !hot ? &a : NULL, cm, wt != NULL, &resp, &merr, &k);
    if (wt) {
        if (r != RPC_ERR_NONE)
            srv_reply_error(m, &wt->reply, cm->method, (enum rpc_err_id)r);
        else if (merr != MVCC_OK)
            srv_reply_mvcc_error(m, &wt->reply, cm->method, merr);
        else
            srv_reply_send(m, &wt->reply, &resp);
        srv_waiter_done(m, wt);
    }
    if (k.has_del)
        mvcc_delete_result_free(&k.del);
    if (k.has_txn)
        mvcc_txn_result_free(&k.txn);
    srv_arena_free(&a);
    srv_pb_arena_reset(&m->pb_apply);
}

static void apply_conf_entry(struct srv_member *m, const struct raft_entry *e)
{
    struct raft_conf_change cc;
    if (raft_conf_change_decode(e, &cc) != FL_OK)
        return;
    raft_conf_apply(&m->app.applied_conf, &cc);
    Raftpb__MemberInfo *mi = NULL;
    if (cc.context_len)
        mi = raftpb__member_info__unpack(NULL, cc.context_len, cc.context);
    struct srv_waiter *wt = NULL;
    if (mi && mi->origin == m->id) {
        wt = srv_waiter_find(m, mi->req_id);
        /* etcd: the operator starts the new member once member add returned, i.e.
         * once the change is applied; it cannot help commit its own addition (a
         * second member added to a one-member cluster is started at the proposal:
         * rpc_admin.c propose_conf). */
        if (cc.type == RAFT_CC_ADD_VOTER || cc.type == RAFT_CC_ADD_LEARNER)
            srv_host_start_joiner(m->host, (int)mi->node, cc.node_id, m->cluster_id, !mi->no_start);
    }
    if (wt) {
        Rpc__ServerMsg resp = RPC__SERVER_MSG__INIT;
        resp.method = wt->req ? wt->req->method : 0;
        if (wt->req && wt->req->req_case == RPC__CLIENT_MSG__REQ_MEMBER_ADD) {
            Rpc__MemberAddResponse r = RPC__MEMBER_ADD_RESPONSE__INIT;
            Rpc__Member mem = RPC__MEMBER__INIT;
            mem.id = cc.node_id;
            mem.node = (uint32_t)srv_host_dir_node(m->host, cc.node_id);
            mem.islearner = cc.type == RAFT_CC_ADD_LEARNER;
            r.member = &mem;
            resp.resp_case = RPC__SERVER_MSG__RESP_MEMBER_ADD;
            resp.member_add = &r;
            srv_reply_send(m, &wt->reply, &resp);
        } else if (wt->req && wt->req->req_case == RPC__CLIENT_MSG__REQ_MEMBER_PROMOTE) {
            Rpc__MemberPromoteResponse r = RPC__MEMBER_PROMOTE_RESPONSE__INIT;
            resp.resp_case = RPC__SERVER_MSG__RESP_MEMBER_PROMOTE;
            resp.member_promote = &r;
            srv_reply_send(m, &wt->reply, &resp);
        } else {
            Rpc__MemberRemoveResponse r = RPC__MEMBER_REMOVE_RESPONSE__INIT;
            resp.resp_case = RPC__SERVER_MSG__RESP_MEMBER_REMOVE;
            resp.member_remove = &r;
            srv_reply_send(m, &wt->reply, &resp);
        }
        srv_waiter_done(m, wt);
    }
    if (mi)
        raftpb__member_info__free_unpacked(mi, NULL);
    srv_member_hook(m, SRV_HOOK_CONF_APPLIED, e->index, cc.node_id, false, NULL);
    if (cc.type == RAFT_CC_REMOVE && cc.node_id == m->id && !m->removed)
        m->removed = true;
    /* A removed member rarely applies its own removal (the leader stops replicating
     * to it once the entry is appended); etcd's peers tell it, and it stops. Here the
     * cluster stops its process once any member has applied the removal. */
    if (cc.type == RAFT_CC_REMOVE)
        srv_host_member_removed(m->host, srv_host_dir_node(m->host, cc.node_id));
}

/* A lease the leader found expired: its keys go at one revision; the node event
 * names them so the history can record the deletes no client asked for. */
static void apply_lease_expiry(struct srv_member *m, int64_t id)
{
    struct mvcc_lease_info li;
    if (mvcc_lease_ttl(m->kv, id, srv_member_now(m), true, &li) != MVCC_OK)
        return; /* revoked already (a client's revoke won the race) */
    struct fl_buf kb;
    fl_buf_init(&kb);
    for (size_t i = 0; i < li.keys_len; i++)
        fl_buf_append(&kb, li.keys[i], li.key_lens[i]);
    struct srv_bytes *keys = fl_calloc(li.keys_len + 1, sizeof *keys);
    size_t off = 0;
    for (size_t i = 0; i < li.keys_len; i++) {
        keys[i].p = kb.data + off;
        keys[i].n = li.key_lens[i];
        off += li.key_lens[i];
    }
    size_t n = li.keys_len;
    mvcc_lease_info_free(&li);
    int64_t hrev = 0;
    if (mvcc_lease_revoke(m->kv, id, NULL, &hrev) == MVCC_OK)
        srv_member_event_lease_end(m, id, hrev, keys, n);
    free(keys);
    fl_buf_close(&kb);
}

void srv_apply_entry(struct srv_member *m, const struct raft_entry *e)
{
    if (e->type == RAFT_ENTRY_CONF_CHANGE) {
        apply_conf_entry(m, e);
        return;
    }
    if (e->len == 0)
        return; /* a new leader's empty entry */
    if (e->data[0] == SRV_ENTRY_CLIENT && e->len >= SRV_ENTRY_CLIENT_HDR) {
        uint64_t id = 0, origin = 0;
        for (int i = 7; i >= 0; i--) {
            id = id << 8 | e->data[1 + i];
            origin = origin << 8 | e->data[9 + i];
        }
        struct srv_waiter *wt = origin == m->id ? srv_waiter_find(m, id) : NULL;
        if (wt && wt->kind != SRV_WAIT_PROPOSAL)
            wt = NULL;
        apply_client_entry(m, e->data + SRV_ENTRY_CLIENT_HDR - 2,
                           e->len - (SRV_ENTRY_CLIENT_HDR - 2), wt);
        return;
    }
    if (e->data[0] != SRV_ENTRY_INTERNAL)
        return; /* not ours: nothing to apply */
    Raftpb__InternalRequest *ir = raftpb__internal_request__unpack(NULL, e->len - 1, e->data + 1);
    if (!ir)
        return;
    switch (ir->kind) {
    case RAFTPB__INTERNAL_KIND__INTERNAL_LEASE_REVOKE:
        apply_lease_expiry(m, ir->lease_id);
        break;
    case RAFTPB__INTERNAL_KIND__INTERNAL_ALARM:
        alarm_set(m, ir->alarm_member, ir->alarm_type, ir->alarm_activate);
        break;
    case RAFTPB__INTERNAL_KIND__INTERNAL_COMPACT: {
        int64_t h;
        enum mvcc_err err = MVCC_OK;
        if (!compact_apply(m, ir->revision, &h, &err))
            break;
        if (err == MVCC_OK) {
            char d[64];
            snprintf(d, sizeof d, "auto compaction to revision %" PRId64, ir->revision);
            srv_member_event_compact(m, ir->revision, d);
        }
        break;
    }
    default:
        break;
    }
    raftpb__internal_request__free_unpacked(ir, NULL);
}
