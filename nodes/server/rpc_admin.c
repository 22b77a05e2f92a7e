/*
 * rpc_admin.c: the Cluster and Maintenance calls of a member (member list, add,
 * remove, promote with etcd's strict reconfiguration and learner checks, leader
 * transfer, status, HashKV, snapshot save, defrag, lease TTL, alarms). Called from the
 * dispatcher in rpc.c; answers through srv_reply_*.
 */
#include "nodes/server/convert.h"
#include "nodes/server/srv_int.h"

#include <inttypes.h>

#define SNAPSHOT_CHUNK_BYTES (1u << 20)

/* ---- cluster API --------------------------------------------------------------- */

/* etcd's HealthInterval: for the strict reconfiguration check a peer counts as
 * connected only when its stream has been up for at least this long. */
#define HEALTH_INTERVAL_NS (5 * FL_S)

/* The members etcd counts as started (membership.Member.IsStarted: it published its
 * attributes once, i.e. it has run at least once). This member always has. */
static void started_members(struct srv_member *m, uint64_t *out, size_t *n)
{
    const struct raft_conf_state *c = &m->app.applied_conf;
    *n = 0;
    out[(*n)++] = m->id;
    for (uint32_t i = 0; i < c->voters_count; i++)
        if (c->voters[i] != m->id && srv_host_member_started(m->host, c->voters[i]))
            out[(*n)++] = c->voters[i];
    for (uint32_t i = 0; i < c->learners_count; i++)
        if (c->learners[i] != m->id && srv_host_member_started(m->host, c->learners[i]))
            out[(*n)++] = c->learners[i];
}

/* etcd's numConnectedSince over the voters: this member, plus every voter whose
 * stream has been up since before now - HealthInterval. */
static uint32_t voters_connected(struct srv_member *m, const struct raft_conf_state *c)
{
    int64_t since = srv_member_now(m) - HEALTH_INTERVAL_NS;
    uint32_t k = 0;
    for (uint32_t i = 0; i < c->voters_count; i++)
        if (c->voters[i] == m->id || srv_peer_connected_since(m, c->voters[i], since))
            k++;
    FL_ASSERT(k <= c->voters_count);
    return k;
}

/*
 * The connectivity half of etcd's strict reconfiguration check (v3.4 mayAddMember /
 * mayRemoveMember), made after the started-members half: an add (voter or learner)
 * needs every voter connected for the last HealthInterval; a voter's removal must
 * leave a quorum of the remaining voters connected, except that a member whose
 * stream is down may always be removed (it is not part of the active quorum).
 * Promotion has no such check. Returns true when the change may go ahead; false is
 * answered `etcdserver: unhealthy cluster`.
 */
static bool reconfig_healthy(struct srv_member *m, const struct raft_conf_state *c,
                             const struct raft_conf_change *cc)
{
    switch (cc->type) {
    case RAFT_CC_ADD_VOTER:
    case RAFT_CC_ADD_LEARNER:
        return voters_connected(m, c) == c->voters_count;
    case RAFT_CC_REMOVE:
        if (!raft_conf_is_voter(c, cc->node_id))
            return true;
        if (cc->node_id != m->id && !srv_peer_active(m, cc->node_id))
            return true;
        return voters_connected(m, c) - 1 >= 1 + (c->voters_count - 1) / 2;
    case RAFT_CC_PROMOTE:
        return true;
    }
    FL_UNREACHABLE();
}

/* The slot for a new member: the lowest one that never ran a member and on which no
 * member of the configuration is registered (an add still uncommitted keeps its slot);
 * else a new slot. */
static int free_slot(struct srv_member *m, const struct raft_conf_state *c)
{
    int n = srv_host_slots(m->host);
    for (int i = 1; i <= n; i++) {
        bool used = srv_host_slot_used(m->host, i);
        for (uint32_t k = 0; k < c->voters_count && !used; k++)
            used = srv_host_dir_node(m->host, c->voters[k]) == i;
        for (uint32_t k = 0; k < c->learners_count && !used; k++)
            used = srv_host_dir_node(m->host, c->learners[k]) == i;
        if (!used)
            return i;
    }
    return n + 1;
}

void srv_admin_member_list(struct srv_member *m, const struct srv_reply *reply, int method)
{
    const struct raft_conf_state *c = raft_conf(m->raft);
    size_t n = c->voters_count + c->learners_count;
    Rpc__Member *mem = fl_calloc(n + 1, sizeof *mem);
    Rpc__Member **ptr = fl_calloc(n + 1, sizeof *ptr);
    for (size_t i = 0; i < n; i++) {
        bool learner = i >= c->voters_count;
        uint64_t id = learner ? c->learners[i - c->voters_count] : c->voters[i];
        rpc__member__init(&mem[i]);
        mem[i].id = id;
        mem[i].islearner = learner;
        mem[i].node = (uint32_t)FL_MAX(0, srv_host_dir_node(m->host, id));
        ptr[i] = &mem[i];
    }
    Rpc__MemberListResponse r = RPC__MEMBER_LIST_RESPONSE__INIT;
    r.n_members = n;
    r.members = ptr;
    Rpc__ServerMsg msg = RPC__SERVER_MSG__INIT;
    msg.method = method;
    msg.resp_case = RPC__SERVER_MSG__RESP_MEMBER_LIST;
    msg.member_list = &r;
    srv_reply_send(m, reply, &msg);
    free(mem);
    free(ptr);
}

/* Proposes a conf change; the waiter is answered when it applies (apply.c). */
static void propose_conf(struct srv_member *m, const struct srv_reply *reply, Rpc__ClientMsg *req,
                         struct raft_conf_change *cc, uint32_t node)
{
    struct srv_waiter *wt = srv_waiter_add(m, SRV_WAIT_PROPOSAL, reply, req);
    Raftpb__MemberInfo mi = RAFTPB__MEMBER_INFO__INIT;
    mi.id = cc->node_id;
    mi.node = node;
    mi.is_learner = cc->type == RAFT_CC_ADD_LEARNER;
    mi.req_id = wt->id;
    mi.origin = m->id;
    mi.no_start = req->req_case == RPC__CLIENT_MSG__REQ_MEMBER_ADD && req->member_add->no_start;
    size_t n = raftpb__member_info__get_packed_size(&mi);
    uint8_t *buf = fl_malloc(n + 1);
    raftpb__member_info__pack(&mi, buf);
    cc->context = buf;
    cc->context_len = n;
    int err = raft_propose_conf_change(m->raft, cc, NULL);
    free(buf);
    /* A second member added to a one-member cluster (etcd's strict check lets it, for
     * restoring a cluster): etcd commits the change under the old configuration, then
     * the operator starts the member. Here a change is in force from its append, so it
     * commits only once the new member holds it: started at the apply (apply.c), it
     * never would, and the member would campaign alone forever. The operator starts
     * it now, as etcd's recovery guide does right after member add. */
    if (err == FL_OK && cc->type == RAFT_CC_ADD_VOTER && m->app.applied_conf.voters_count == 1 &&
        !mi.no_start)
        srv_host_start_joiner(m->host, (int)node, cc->node_id, m->cluster_id, true);
    if (err == FL_EEXIST) {
        srv_reply_error(m, reply, req->method, RPC_ERR_MEMBER_EXIST);
        srv_waiter_done(m, wt);
    } else if (err == FL_ENOENT && req->req_case != RPC__CLIENT_MSG__REQ_MEMBER_PROMOTE) {
        srv_reply_error(m, reply, req->method, RPC_ERR_MEMBER_NOT_FOUND);
        srv_waiter_done(m, wt);
    } else if (err == FL_EFULL) {
        srv_reply_error(m, reply, req->method, RPC_ERR_TOO_MANY_LEARNERS);
        srv_waiter_done(m, wt);
    } else if (err != FL_OK) {
        /* etcd-raft turns a second pending conf change into an empty entry: the
         * request is never applied and times out. The waiter stays until then. */
        fl_log(FL_LOG_INFO, "member %d: conf change refused (%s)", m->node, fl_strerror(err));
    }
    srv_member_process(m);
}

void srv_admin_member(struct srv_member *m, const struct srv_reply *reply, Rpc__ClientMsg *req)
{
    if (raft_role(m->raft) != RAFT_LEADER) {
        srv_reply_error(m, reply, req->method,
                        raft_leader(m->raft) ? RPC_ERR_NOT_LEADER : RPC_ERR_NO_LEADER);
        goto free_req;
    }
    const struct raft_conf_state *conf = raft_conf(m->raft);
    const struct srv_config *c = srv_member_config(m);
    uint64_t started[RAFT_NODES_MAX + 1];
    size_t n_started = 0;
    started_members(m, started, &n_started);
    struct raft_conf_change cc;
    memset(&cc, 0, sizeof cc);
    uint32_t node = 0;
    if (req->req_case == RPC__CLIENT_MSG__REQ_MEMBER_ADD) {
        cc.type = req->member_add->islearner ? RAFT_CC_ADD_LEARNER : RAFT_CC_ADD_VOTER;
        if (cc.type == RAFT_CC_ADD_LEARNER && conf->learners_count >= 1) {
            srv_reply_error(m, reply, req->method, RPC_ERR_TOO_MANY_LEARNERS);
            goto free_req;
        }
        cc.node_id = srv_host_new_id(m->host);
        int want = (int)req->member_add->node;
        int slot = srv_host_dir_register(m->host, want > 0 ? want : free_slot(m, conf), cc.node_id);
        if (slot < 0) {
            srv_reply_error(m, reply, req->method, RPC_ERR_PEER_URL_EXIST);
            goto free_req;
        }
        node = (uint32_t)slot;
    } else if (req->req_case == RPC__CLIENT_MSG__REQ_MEMBER_REMOVE) {
        cc.type = RAFT_CC_REMOVE;
        cc.node_id = req->member_remove->id;
        if (!raft_conf_is_voter(conf, cc.node_id) && !raft_conf_is_learner(conf, cc.node_id)) {
            srv_reply_error(m, reply, req->method, RPC_ERR_MEMBER_NOT_FOUND);
            goto free_req;
        }
    } else {
        cc.type = RAFT_CC_PROMOTE;
        cc.node_id = req->member_promote->id;
        if (!raft_conf_is_learner(conf, cc.node_id)) {
            srv_reply_error(m, reply, req->method,
                            raft_conf_is_voter(conf, cc.node_id) ? RPC_ERR_MEMBER_NOT_LEARNER
                                                                 : RPC_ERR_MEMBER_NOT_FOUND);
            goto free_req;
        }
        if (!raft_learner_in_sync(m->raft, cc.node_id)) {
            srv_reply_error(m, reply, req->method, RPC_ERR_LEARNER_NOT_READY);
            goto free_req;
        }
    }
    /* etcd makes both halves of the check on its membership, which changes when a
     * configuration entry is applied (not when appended, as Raft's does here). */
    if (c->strict_reconfig_check &&
        !raft_conf_change_quorum_ok(&m->app.applied_conf, &cc, started, n_started)) {
        srv_reply_error(m, reply, req->method, RPC_ERR_NOT_ENOUGH_STARTED);
        goto free_req;
    }
    if (c->strict_reconfig_check && !reconfig_healthy(m, &m->app.applied_conf, &cc)) {
        srv_reply_error(m, reply, req->method, RPC_ERR_UNHEALTHY);
        goto free_req;
    }
    if (cc.type == RAFT_CC_REMOVE)
        node = (uint32_t)FL_MAX(0, srv_host_dir_node(m->host, cc.node_id));
    propose_conf(m, reply, req, &cc, node);
    return;
free_req:
    srv_pb_free_owned(req);
}

void srv_admin_move_leader(struct srv_member *m, const struct srv_reply *reply, Rpc__ClientMsg *req)
{
    uint64_t target = req->move_leader->targetid;
    if (raft_role(m->raft) != RAFT_LEADER) {
        srv_reply_error(m, reply, req->method, RPC_ERR_NOT_LEADER);
        goto free_req;
    }
    if (!raft_conf_is_voter(raft_conf(m->raft), target)) {
        srv_reply_error(m, reply, req->method, RPC_ERR_BAD_LEADER_TRANSFEREE);
        goto free_req;
    }
    if (target == m->id) {
        Rpc__ServerMsg msg = RPC__SERVER_MSG__INIT;
        Rpc__MoveLeaderResponse r = RPC__MOVE_LEADER_RESPONSE__INIT;
        msg.method = req->method;
        msg.resp_case = RPC__SERVER_MSG__RESP_MOVE_LEADER;
        msg.move_leader = &r;
        srv_reply_send(m, reply, &msg);
        goto free_req;
    }
    raft_transfer_leader(m->raft, target);
    /* Answered from srv_rpc_leader_changed when the leader is the target, or with
     * etcd's "leader transfer took too long" at the timeout. */
    struct srv_waiter *wt = srv_waiter_add(m, SRV_WAIT_PROPOSAL, reply, req);
    wt->read_index = target;
    wt->read_ready = true; /* marks a transfer waiter */
    srv_member_process(m);
    return;
free_req:
    srv_pb_free_owned(req);
}

/* ---- maintenance --------------------------------------------------------------- */

void srv_admin_status(struct srv_member *m, const struct srv_reply *reply, int method)
{
    struct srv_member_status st;
    srv_member_status(m, &st);
    Rpc__StatusResponse r = RPC__STATUS_RESPONSE__INIT;
    r.version = (char *)SRV_VERSION;
    r.dbsize = st.db_size_bytes;
    r.dbsizeinuse = st.db_size_in_use_bytes;
    r.leader = st.leader_id;
    r.raftindex = st.raft_index;
    r.raftterm = st.applied_term; /* etcd: RaftTerm is s.Term(), the applied term */
    r.raftappliedindex = st.raft_applied;
    r.islearner = st.is_learner;
    char *errs[2];
    if (st.nospace_alarm) {
        errs[0] = (char *)"memberID:0 alarm:NOSPACE";
        r.n_errors = 1;
        r.errors = errs;
    }
    r.quorum_contact_age_ns = m->soft.last_leader_contact_ns < 0
                                  ? -1
                                  : srv_member_now(m) - m->soft.last_leader_contact_ns;
    Rpc__ServerMsg msg = RPC__SERVER_MSG__INIT;
    msg.method = method;
    msg.resp_case = RPC__SERVER_MSG__RESP_STATUS;
    msg.status = &r;
    srv_reply_send(m, reply, &msg);
}

void srv_admin_hash_kv(struct srv_member *m, const struct srv_reply *reply,
                       const Rpc__ClientMsg *req)
{
    struct mvcc_hashkv h;
    enum mvcc_err err = mvcc_hash_kv(m->kv, req->hash_kv->revision, &h);
    if (err != MVCC_OK) {
        srv_reply_mvcc_error(m, reply, req->method, err);
        return;
    }
    Rpc__HashKVResponse r = RPC__HASH_KVRESPONSE__INIT;
    r.hash = (uint32_t)(h.hash ^ (h.hash >> 32));
    r.compact_revision = h.compact_rev;
    r.hash_revision = h.hash_rev;
    Rpc__ServerMsg msg = RPC__SERVER_MSG__INIT;
    msg.method = req->method;
    msg.resp_case = RPC__SERVER_MSG__RESP_HASH_KV;
    msg.hash_kv = &r;
    srv_reply_send(m, reply, &msg);
}

void srv_admin_snapshot(struct srv_member *m, const struct srv_reply *reply, int method)
{
    struct fl_buf db, bk;
    fl_buf_init(&db);
    fl_buf_init(&bk);
    srv_member_image(m, &db, mvcc_size_bytes(m->kv));
    srv_backup_wrap(db.data, db.len, &bk);
    fl_buf_close(&db);
    if (reply->done) {
        Rpc__SnapshotResponse r = RPC__SNAPSHOT_RESPONSE__INIT;
        r.blob.data = bk.data;
        r.blob.len = bk.len;
        Rpc__ServerMsg msg = RPC__SERVER_MSG__INIT;
        msg.method = method;
        msg.resp_case = RPC__SERVER_MSG__RESP_SNAPSHOT;
        msg.snapshot = &r;
        srv_reply_send(m, reply, &msg);
    } else {
        for (size_t off = 0; off < bk.len || off == 0;) {
            size_t n = FL_MIN((size_t)SNAPSHOT_CHUNK_BYTES, bk.len - off);
            Rpc__SnapshotResponse r = RPC__SNAPSHOT_RESPONSE__INIT;
            r.blob.data = bk.data + off;
            r.blob.len = n;
            r.remaining_bytes = bk.len - off - n;
            Rpc__ServerMsg msg = RPC__SERVER_MSG__INIT;
            msg.method = method;
            msg.resp_case = RPC__SERVER_MSG__RESP_SNAPSHOT;
            msg.snapshot = &r;
            msg.stream_end = r.remaining_bytes == 0;
            srv_reply_send(m, reply, &msg);
            off += n;
            if (n == 0)
                break;
        }
    }
    fl_buf_close(&bk);
}

/* A control call whose member went away: it completes as a stopped server. */
static void ctl_stopped(const struct srv_reply *reply)
{
    struct srv_status st = {rpc_err_code(RPC_ERR_STOPPED), rpc_err_text(RPC_ERR_STOPPED)};
    struct srv_result res;
    memset(&res, 0, sizeof res);
    reply->done(reply->ud, &st, &res);
}

struct defrag_done {
    struct srv_member *m;
    struct srv_reply reply;
    int method;
};

static void on_defrag_done(void *ctx)
{
    struct defrag_done *d = ctx;
    struct srv_member *m = d->m;
    m->maint.defrag_pending = NULL;
    m->maint.blocked_until_ns = 0;
    Rpc__ServerMsg msg = RPC__SERVER_MSG__INIT;
    Rpc__DefragmentResponse r = RPC__DEFRAGMENT_RESPONSE__INIT;
    msg.method = d->method;
    msg.resp_case = RPC__SERVER_MSG__RESP_DEFRAGMENT;
    msg.defragment = &r;
    srv_member_event(m, SRV_EV_DEFRAG, "finished");
    srv_reply_send(m, &d->reply, &msg);
    free(d);
    srv_rpc_replay_deferred(m);
}

void srv_admin_defrag(struct srv_member *m, const struct srv_reply *reply, int method)
{
    if (m->maint.defrag_pending) {
        /* etcd serialises defragmentation behind the backend lock. */
        srv_reply_error(m, reply, method, RPC_ERR_TIMEOUT);
        return;
    }
    struct env_fault_hit hit;
    if (env_failpoint(m->env, FLT_SERVER_DEFRAG_BEFORE_COPY, &hit) == ENV_FAULT_CRASH) {
        /* the process died: a client's connection breaks; a control call hears it */
        if (reply->done)
            ctl_stopped(reply);
        return;
    }
    int64_t dur = mvcc_defrag(m->kv);
    /* The rewritten backend replaces the old file (renamed once durable; the
     * failpoint server/defrag_before_rename fires there). */
    srv_member_save_db(m);
    char d[96];
    snprintf(d, sizeof d, "started, blocks for %" PRId64 " ms, size now %" PRId64 " bytes",
             dur / FL_MS, mvcc_size_bytes(m->kv));
    srv_member_event(m, SRV_EV_DEFRAG, d);
    srv_member_hook(m, SRV_HOOK_DEFRAG, 0, 0, false, d);
    m->maint.blocked_until_ns = srv_member_now(m) + dur;
    struct defrag_done *dd = fl_calloc(1, sizeof *dd);
    dd->m = m;
    dd->reply = *reply;
    dd->method = method;
    m->maint.defrag_pending = dd;
    env_timer_start(m->env, &m->maint.unblock_timer, dur, on_defrag_done, dd);
}

void srv_rpc_fail_pending(struct srv_member *m)
{
    for (size_t i = 0; i < m->req.n_waiters; i++) {
        struct srv_waiter *wt = &m->req.waiters[i];
        if (!wt->dead && wt->reply.done)
            ctl_stopped(&wt->reply);
        if (!wt->dead)
            srv_waiter_done(m, wt);
    }
    struct defrag_done *dd = m->maint.defrag_pending;
    if (dd) {
        m->maint.defrag_pending = NULL;
        if (dd->reply.done)
            ctl_stopped(&dd->reply);
        free(dd);
    }
}

void srv_lease_ttl_reply(struct srv_member *m, const struct srv_reply *reply, int method,
                         int64_t id, bool with_keys, int64_t remaining)
{
    struct mvcc_lease_info li;
    enum mvcc_err err = mvcc_lease_ttl(m->kv, id, srv_member_now(m), with_keys, &li);
    Rpc__LeaseTimeToLiveResponse r = RPC__LEASE_TIME_TO_LIVE_RESPONSE__INIT;
    r.id = id;
    ProtobufCBinaryData *keys = NULL;
    if (err == MVCC_OK && remaining != -1) {
        r.ttl = remaining < -1 ? li.ttl_s : remaining;
        r.grantedttl = li.granted_ttl_s;
        keys = fl_calloc(li.keys_len + 1, sizeof *keys);
        for (size_t i = 0; i < li.keys_len; i++) {
            keys[i].data = (uint8_t *)li.keys[i];
            keys[i].len = li.key_lens[i];
        }
        r.n_keys = li.keys_len;
        r.keys = keys;
    } else {
        r.ttl = -1; /* etcd answers TTL -1 for a lease that does not exist */
    }
    Rpc__ServerMsg msg = RPC__SERVER_MSG__INIT;
    msg.method = method;
    msg.resp_case = RPC__SERVER_MSG__RESP_LEASE_TTL;
    msg.lease_ttl = &r;
    srv_reply_send(m, reply, &msg);
    free(keys);
    if (err == MVCC_OK)
        mvcc_lease_info_free(&li);
}

void srv_admin_lease_ttl(struct srv_member *m, const struct srv_reply *reply, Rpc__ClientMsg *req)
{
    if (raft_role(m->raft) != RAFT_LEADER) {
        /* etcd: only the leader's lessor knows how long a lease has left; a follower
         * forwards TimeToLive to it (and waits for a leader when there is none). */
        struct srv_waiter *wt = srv_waiter_add(m, SRV_WAIT_RENEW, reply, req);
        srv_keepalive_forward(m, wt);
        return;
    }
    srv_lease_ttl_reply(m, reply, req->method, req->lease_ttl->id, req->lease_ttl->keys, -2);
    srv_pb_free_owned(req);
}

void srv_admin_alarm(struct srv_member *m, const struct srv_reply *reply, Rpc__ClientMsg *req)
{
    if (req->alarm->action == RPC__ALARM_REQUEST__ALARM_ACTION__GET) {
        Rpc__AlarmResponse r = RPC__ALARM_RESPONSE__INIT;
        Rpc__AlarmMember am[SRV_ALARMS_MAX];
        Rpc__AlarmMember *ptr[SRV_ALARMS_MAX];
        for (uint32_t i = 0; i < m->app.n_alarms; i++) {
            rpc__alarm_member__init(&am[i]);
            am[i].memberid = m->app.alarms[i].member;
            am[i].alarm = (Rpc__AlarmType)m->app.alarms[i].type;
            ptr[i] = &am[i];
        }
        r.n_alarms = m->app.n_alarms;
        r.alarms = ptr;
        Rpc__ServerMsg msg = RPC__SERVER_MSG__INIT;
        msg.method = req->method;
        msg.resp_case = RPC__SERVER_MSG__RESP_ALARM;
        msg.alarm = &r;
        srv_reply_send(m, reply, &msg);
        srv_pb_free_owned(req);
        return;
    }
    srv_rpc_write(m, reply, req); /* activate / deactivate go through Raft */
}
