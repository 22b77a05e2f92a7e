/*
 * client_codec.c: the edge where the client's plain structs (client.h) meet the
 * protobuf-c types of rpc.proto. Requests are deep-copied once when a call starts
 * (so the caller's buffers may go away) and encoded once (retries resend the same
 * bytes); responses are decoded into arrays that live in a scratch block for the
 * length of one callback. protobuf-c types never leave nodes/client.
 */
#include "nodes/client/client_int.h"
#include "nodes/proto/codec.h"

void *kvc_scratch_alloc(struct kvc_scratch *s, size_t size)
{
    FL_GROW(s->ptrs, s->cap, s->n + 1, 8);
    void *p = fl_calloc(1, size ? size : 1);
    s->ptrs[s->n++] = p;
    return p;
}

void kvc_scratch_free(struct kvc_scratch *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->ptrs[i]);
    free(s->ptrs);
    memset(s, 0, sizeof(*s));
}

/* ---------------------------------------------------------------- copy -------- */

/* A bump allocator over one block sized in a first pass. */
struct kvc_block {
    uint8_t *base;
    size_t used, size;
};

static void *kvc_block_take(struct kvc_block *b, size_t n)
{
    size_t at = (b->used + 7) & ~(size_t)7;
    if (b->base == NULL) { /* sizing pass */
        b->used = at + n;
        return NULL;
    }
    FL_ASSERT(at + n <= b->size);
    b->used = at + n;
    return b->base + at;
}

static void kvc_block_bytes(struct kvc_block *b, struct kvc_bytes *dst, struct kvc_bytes src)
{
    uint8_t *p = kvc_block_take(b, src.n);
    if (p == NULL)
        return;
    if (src.n)
        memcpy(p, src.p, src.n);
    dst->p = src.n ? p : NULL;
    dst->n = src.n;
}

static void kvc_block_op(struct kvc_block *b, struct kvc_op *dst, const struct kvc_op *src)
{
    if (b->base)
        *dst = *src;
    kvc_block_bytes(b, &dst->key, src->key);
    kvc_block_bytes(b, &dst->range_end, src->range_end);
    kvc_block_bytes(b, &dst->value, src->value);
}

static const struct kvc_op *kvc_block_ops(struct kvc_block *b, const struct kvc_op *src, size_t n)
{
    struct kvc_op *ops = kvc_block_take(b, n * sizeof(*ops));
    struct kvc_op dummy;
    for (size_t i = 0; i < n; i++)
        kvc_block_op(b, ops ? &ops[i] : &dummy, &src[i]);
    return ops;
}

static void kvc_request_fill(struct kvc_block *b, struct kvc_request *dst,
                             const struct kvc_request *src)
{
    struct kvc_request dummy;
    if (dst == NULL)
        dst = &dummy;
    if (b->base)
        *dst = *src;
    kvc_block_op(b, &dst->op, &src->op);
    struct kvc_compare *cmps = kvc_block_take(b, src->cmp_count * sizeof(*cmps));
    for (size_t i = 0; i < src->cmp_count; i++) {
        struct kvc_compare dc;
        struct kvc_compare *d = cmps ? &cmps[i] : &dc;
        if (cmps)
            *d = src->cmps[i];
        kvc_block_bytes(b, &d->key, src->cmps[i].key);
        kvc_block_bytes(b, &d->range_end, src->cmps[i].range_end);
        kvc_block_bytes(b, &d->value, src->cmps[i].value);
    }
    const struct kvc_op *then_ops = kvc_block_ops(b, src->then_ops, src->then_count);
    const struct kvc_op *else_ops = kvc_block_ops(b, src->else_ops, src->else_count);
    char *url = NULL;
    if (src->peer_url) {
        size_t n = strlen(src->peer_url) + 1;
        url = kvc_block_take(b, n);
        if (url)
            memcpy(url, src->peer_url, n);
    }
    if (b->base) {
        dst->cmps = src->cmp_count ? cmps : NULL;
        dst->then_ops = src->then_count ? then_ops : NULL;
        dst->else_ops = src->else_count ? else_ops : NULL;
        dst->peer_url = url;
    }
}

void *kvc_request_copy(struct kvc_request *dst, const struct kvc_request *src)
{
    struct kvc_block b = {0};
    kvc_request_fill(&b, NULL, src);
    b.size = b.used + 8;
    b.base = fl_calloc(1, b.size);
    b.used = 0;
    kvc_request_fill(&b, dst, src);
    return b.base;
}

/* ---------------------------------------------------------------- encode ------ */

static ProtobufCBinaryData kvc_pb_bytes(struct kvc_bytes b)
{
    ProtobufCBinaryData d = {b.n, (uint8_t *)b.p};
    return d;
}

/* Builds the protobuf form of one KV op into a RequestOp (allocations in s). */
static void kvc_pb_op(Rpc__RequestOp *ro, const struct kvc_op *op, struct kvc_scratch *s)
{
    rpc__request_op__init(ro);
    switch (op->kind) {
    case KVC_OP_RANGE: {
        Rpc__RangeRequest *r = kvc_scratch_alloc(s, sizeof(*r));
        rpc__range_request__init(r);
        r->key = kvc_pb_bytes(op->key);
        r->range_end = kvc_pb_bytes(op->range_end);
        r->limit = op->limit;
        r->revision = op->revision;
        r->serializable = op->serializable;
        r->keys_only = op->keys_only;
        r->count_only = op->count_only;
        ro->request_case = RPC__REQUEST_OP__REQUEST_REQUEST_RANGE;
        ro->request_range = r;
        break;
    }
    case KVC_OP_PUT: {
        Rpc__PutRequest *p = kvc_scratch_alloc(s, sizeof(*p));
        rpc__put_request__init(p);
        p->key = kvc_pb_bytes(op->key);
        p->value = kvc_pb_bytes(op->value);
        p->lease = op->lease;
        p->prev_kv = op->prev_kv;
        ro->request_case = RPC__REQUEST_OP__REQUEST_REQUEST_PUT;
        ro->request_put = p;
        break;
    }
    case KVC_OP_DELETE: {
        Rpc__DeleteRangeRequest *d = kvc_scratch_alloc(s, sizeof(*d));
        rpc__delete_range_request__init(d);
        d->key = kvc_pb_bytes(op->key);
        d->range_end = kvc_pb_bytes(op->range_end);
        d->prev_kv = op->prev_kv;
        ro->request_case = RPC__REQUEST_OP__REQUEST_REQUEST_DELETE_RANGE;
        ro->request_delete_range = d;
        break;
    }
    default:
        FL_UNREACHABLE();
    }
}

static Rpc__RequestOp **kvc_pb_ops(const struct kvc_op *ops, size_t n, struct kvc_scratch *s)
{
    Rpc__RequestOp **arr = kvc_scratch_alloc(s, n * sizeof(*arr));
    for (size_t i = 0; i < n; i++) {
        arr[i] = kvc_scratch_alloc(s, sizeof(**arr));
        kvc_pb_op(arr[i], &ops[i], s);
    }
    return arr;
}

static Rpc__TxnRequest *kvc_pb_txn(const struct kvc_request *req, struct kvc_scratch *s)
{
    Rpc__TxnRequest *t = kvc_scratch_alloc(s, sizeof(*t));
    rpc__txn_request__init(t);
    t->n_compare = req->cmp_count;
    t->compare = kvc_scratch_alloc(s, req->cmp_count * sizeof(*t->compare));
    for (size_t i = 0; i < req->cmp_count; i++) {
        const struct kvc_compare *k = &req->cmps[i];
        Rpc__Compare *cmp = kvc_scratch_alloc(s, sizeof(*cmp));
        rpc__compare__init(cmp);
        cmp->result = (Rpc__Compare__CompareResult)k->result;
        cmp->target = (Rpc__Compare__CompareTarget)k->target;
        cmp->key = kvc_pb_bytes(k->key);
        cmp->range_end = kvc_pb_bytes(k->range_end);
        switch (k->target) {
        case KVC_CMP_VERSION:
            cmp->target_union_case = RPC__COMPARE__TARGET_UNION_VERSION;
            cmp->version = k->number;
            break;
        case KVC_CMP_CREATE:
            cmp->target_union_case = RPC__COMPARE__TARGET_UNION_CREATE_REVISION;
            cmp->create_revision = k->number;
            break;
        case KVC_CMP_MOD:
            cmp->target_union_case = RPC__COMPARE__TARGET_UNION_MOD_REVISION;
            cmp->mod_revision = k->number;
            break;
        case KVC_CMP_VALUE:
            cmp->target_union_case = RPC__COMPARE__TARGET_UNION_VALUE;
            cmp->value = kvc_pb_bytes(k->value);
            break;
        case KVC_CMP_LEASE:
            cmp->target_union_case = RPC__COMPARE__TARGET_UNION_LEASE;
            cmp->lease = k->number;
            break;
        default:
            FL_UNREACHABLE();
        }
        t->compare[i] = cmp;
    }
    t->n_success = req->then_count;
    t->success = kvc_pb_ops(req->then_ops, req->then_count, s);
    t->n_failure = req->else_count;
    t->failure = kvc_pb_ops(req->else_ops, req->else_count, s);
    return t;
}

/* Fills the ClientMsg body of the maintenance and cluster methods. */
static void kvc_pb_admin(Rpc__ClientMsg *m, const struct kvc_request *req, struct kvc_scratch *s)
{
    switch (req->method) {
    case KVC_MEMBER_LIST: {
        Rpc__MemberListRequest *r = kvc_scratch_alloc(s, sizeof(*r));
        rpc__member_list_request__init(r);
        r->linearizable = req->linearizable;
        m->req_case = RPC__CLIENT_MSG__REQ_MEMBER_LIST;
        m->member_list = r;
        break;
    }
    case KVC_MEMBER_ADD: {
        Rpc__MemberAddRequest *r = kvc_scratch_alloc(s, sizeof(*r));
        rpc__member_add_request__init(r);
        r->islearner = req->learner;
        r->node = (uint32_t)req->add_node;
        if (req->peer_url) {
            r->n_peerurls = 1;
            r->peerurls = kvc_scratch_alloc(s, sizeof(char *));
            r->peerurls[0] = (char *)req->peer_url;
        }
        m->req_case = RPC__CLIENT_MSG__REQ_MEMBER_ADD;
        m->member_add = r;
        break;
    }
    case KVC_MEMBER_REMOVE: {
        Rpc__MemberRemoveRequest *r = kvc_scratch_alloc(s, sizeof(*r));
        rpc__member_remove_request__init(r);
        r->id = req->member_id;
        m->req_case = RPC__CLIENT_MSG__REQ_MEMBER_REMOVE;
        m->member_remove = r;
        break;
    }
    case KVC_MEMBER_PROMOTE: {
        Rpc__MemberPromoteRequest *r = kvc_scratch_alloc(s, sizeof(*r));
        rpc__member_promote_request__init(r);
        r->id = req->member_id;
        m->req_case = RPC__CLIENT_MSG__REQ_MEMBER_PROMOTE;
        m->member_promote = r;
        break;
    }
    case KVC_STATUS: {
        Rpc__StatusRequest *r = kvc_scratch_alloc(s, sizeof(*r));
        rpc__status_request__init(r);
        m->req_case = RPC__CLIENT_MSG__REQ_STATUS;
        m->status = r;
        break;
    }
    case KVC_DEFRAGMENT: {
        Rpc__DefragmentRequest *r = kvc_scratch_alloc(s, sizeof(*r));
        rpc__defragment_request__init(r);
        m->req_case = RPC__CLIENT_MSG__REQ_DEFRAGMENT;
        m->defragment = r;
        break;
    }
    case KVC_ALARM: {
        Rpc__AlarmRequest *r = kvc_scratch_alloc(s, sizeof(*r));
        rpc__alarm_request__init(r);
        r->action = (Rpc__AlarmRequest__AlarmAction)req->alarm_action;
        r->memberid = req->alarm_member;
        r->alarm = (Rpc__AlarmType)req->alarm_type;
        m->req_case = RPC__CLIENT_MSG__REQ_ALARM;
        m->alarm = r;
        break;
    }
    case KVC_HASH_KV: {
        Rpc__HashKVRequest *r = kvc_scratch_alloc(s, sizeof(*r));
        rpc__hash_kvrequest__init(r);
        r->revision = req->revision;
        m->req_case = RPC__CLIENT_MSG__REQ_HASH_KV;
        m->hash_kv = r;
        break;
    }
    case KVC_SNAPSHOT: {
        Rpc__SnapshotRequest *r = kvc_scratch_alloc(s, sizeof(*r));
        rpc__snapshot_request__init(r);
        m->req_case = RPC__CLIENT_MSG__REQ_SNAPSHOT;
        m->snapshot = r;
        break;
    }
    case KVC_MOVE_LEADER: {
        Rpc__MoveLeaderRequest *r = kvc_scratch_alloc(s, sizeof(*r));
        rpc__move_leader_request__init(r);
        r->targetid = req->target_id;
        m->req_case = RPC__CLIENT_MSG__REQ_MOVE_LEADER;
        m->move_leader = r;
        break;
    }
    default:
        FL_ASSERTF(false, "method %d is not a unary admin call", (int)req->method);
    }
}

/* Fills the ClientMsg body of the KV and lease methods; others go to kvc_pb_admin. */
static void kvc_pb_body(Rpc__ClientMsg *m, const struct kvc_request *req, struct kvc_scratch *s)
{
    Rpc__RequestOp ro;
    switch (req->method) {
    case KVC_RANGE:
    case KVC_PUT:
    case KVC_DELETE:
        kvc_pb_op(&ro, &req->op, s);
        if (ro.request_case == RPC__REQUEST_OP__REQUEST_REQUEST_RANGE) {
            m->req_case = RPC__CLIENT_MSG__REQ_RANGE;
            m->range = ro.request_range;
        } else if (ro.request_case == RPC__REQUEST_OP__REQUEST_REQUEST_PUT) {
            m->req_case = RPC__CLIENT_MSG__REQ_PUT;
            m->put = ro.request_put;
        } else {
            m->req_case = RPC__CLIENT_MSG__REQ_DELETE_RANGE;
            m->delete_range = ro.request_delete_range;
        }
        break;
    case KVC_TXN:
        m->req_case = RPC__CLIENT_MSG__REQ_TXN;
        m->txn = kvc_pb_txn(req, s);
        break;
    case KVC_COMPACT: {
        Rpc__CompactionRequest *r = kvc_scratch_alloc(s, sizeof(*r));
        rpc__compaction_request__init(r);
        r->revision = req->revision;
        r->physical = req->physical;
        m->req_case = RPC__CLIENT_MSG__REQ_COMPACT;
        m->compact = r;
        break;
    }
    case KVC_LEASE_GRANT: {
        Rpc__LeaseGrantRequest *r = kvc_scratch_alloc(s, sizeof(*r));
        rpc__lease_grant_request__init(r);
        r->ttl = req->ttl_s;
        r->id = req->lease_id;
        m->req_case = RPC__CLIENT_MSG__REQ_LEASE_GRANT;
        m->lease_grant = r;
        break;
    }
    case KVC_LEASE_REVOKE: {
        Rpc__LeaseRevokeRequest *r = kvc_scratch_alloc(s, sizeof(*r));
        rpc__lease_revoke_request__init(r);
        r->id = req->lease_id;
        m->req_case = RPC__CLIENT_MSG__REQ_LEASE_REVOKE;
        m->lease_revoke = r;
        break;
    }
    case KVC_LEASE_TTL: {
        Rpc__LeaseTimeToLiveRequest *r = kvc_scratch_alloc(s, sizeof(*r));
        rpc__lease_time_to_live_request__init(r);
        r->id = req->lease_id;
        r->keys = req->keys;
        m->req_case = RPC__CLIENT_MSG__REQ_LEASE_TTL;
        m->lease_ttl = r;
        break;
    }
    default:
        kvc_pb_admin(m, req, s);
    }
}

uint8_t *kvc_encode_msg(const Rpc__ClientMsg *m, size_t *len)
{
    struct fl_buf b; /* the wire form: nodes/proto/codec.h */
    fl_buf_init(&b);
    *len = rpc_client_msg_encode(m, &b);
    return b.data ? b.data : fl_malloc(1);
}

uint8_t *kvc_encode_request(const struct kvc_request *req, uint64_t call_id, bool require_leader,
                            int client_id, size_t *len)
{
    struct kvc_scratch s = {0};
    Rpc__ClientMsg m = RPC__CLIENT_MSG__INIT;
    m.call_id = call_id;
    m.method = (Rpc__Method)req->method;
    m.require_leader = require_leader;
    m.client_id = (uint32_t)client_id;
    kvc_pb_body(&m, req, &s);
    uint8_t *buf = kvc_encode_msg(&m, len);
    kvc_scratch_free(&s);
    return buf;
}

/* ---------------------------------------------------------------- decode ------ */

static struct kvc_bytes kvc_bytes_of(ProtobufCBinaryData d)
{
    struct kvc_bytes b = {d.data, d.len};
    return b;
}

void kvc_decode_kv(struct kvc_kv *out, const Rpc__KeyValue *kv)
{
    memset(out, 0, sizeof(*out));
    if (kv == NULL)
        return;
    out->key = kvc_bytes_of(kv->key);
    out->value = kvc_bytes_of(kv->value);
    out->create_rev = kv->create_revision;
    out->mod_rev = kv->mod_revision;
    out->version = kv->version;
    out->lease = kv->lease;
}

static const struct kvc_kv *kvc_decode_kvs(Rpc__KeyValue **kvs, size_t n, struct kvc_scratch *s)
{
    struct kvc_kv *arr = kvc_scratch_alloc(s, n * sizeof(*arr));
    for (size_t i = 0; i < n; i++)
        kvc_decode_kv(&arr[i], kvs[i]);
    return arr;
}

static void kvc_decode_range(struct kvc_op_result *o, const Rpc__RangeResponse *r,
                             struct kvc_scratch *s)
{
    o->kind = KVC_OP_RANGE;
    if (r == NULL)
        return;
    o->kvs = kvc_decode_kvs(r->kvs, r->n_kvs, s);
    o->kv_count = r->n_kvs;
    o->count = r->count;
    o->more = r->more;
}

static void kvc_decode_put(struct kvc_op_result *o, const Rpc__PutResponse *r)
{
    o->kind = KVC_OP_PUT;
    if (r && r->prev_kv) {
        o->has_prev_kv = true;
        kvc_decode_kv(&o->prev_kv, r->prev_kv);
    }
}

static void kvc_decode_delete(struct kvc_op_result *o, const Rpc__DeleteRangeResponse *r,
                              struct kvc_scratch *s)
{
    o->kind = KVC_OP_DELETE;
    if (r == NULL)
        return;
    o->deleted = r->deleted;
    o->prev_kvs = kvc_decode_kvs(r->prev_kvs, r->n_prev_kvs, s);
    o->prev_kv_count = r->n_prev_kvs;
}

static void kvc_decode_txn(struct kvc_result *r, const Rpc__TxnResponse *t, struct kvc_scratch *s)
{
    if (t == NULL)
        return;
    r->succeeded = t->succeeded;
    struct kvc_op_result *ops = kvc_scratch_alloc(s, t->n_responses * sizeof(*ops));
    for (size_t i = 0; i < t->n_responses; i++) {
        const Rpc__ResponseOp *ro = t->responses[i];
        switch (ro->response_case) {
        case RPC__RESPONSE_OP__RESPONSE_RESPONSE_RANGE:
            kvc_decode_range(&ops[i], ro->response_range, s);
            break;
        case RPC__RESPONSE_OP__RESPONSE_RESPONSE_PUT:
            kvc_decode_put(&ops[i], ro->response_put);
            break;
        case RPC__RESPONSE_OP__RESPONSE_RESPONSE_DELETE_RANGE:
            kvc_decode_delete(&ops[i], ro->response_delete_range, s);
            break;
        default: /* nested txns are not produced by this client */
            break;
        }
    }
    r->ops = ops;
    r->op_count = t->n_responses;
}

static const struct kvc_member *kvc_decode_members(Rpc__Member **ms, size_t n,
                                                   struct kvc_scratch *s)
{
    struct kvc_member *arr = kvc_scratch_alloc(s, n * sizeof(*arr));
    for (size_t i = 0; i < n; i++) {
        arr[i].id = ms[i]->id;
        arr[i].name = ms[i]->name ? ms[i]->name : "";
        arr[i].node = (int)ms[i]->node;
        arr[i].is_learner = ms[i]->islearner;
    }
    return arr;
}

void kvc_decode_header(struct kvc_header *h, const Rpc__ServerMsg *m)
{
    memset(h, 0, sizeof(*h));
    if (m->header == NULL)
        return;
    h->cluster_id = m->header->cluster_id;
    h->member_id = m->header->member_id;
    h->revision = m->header->revision;
    h->raft_term = m->header->raft_term;
}

/* Maintenance and cluster answers. */
static void kvc_decode_admin(struct kvc_result *r, const Rpc__ServerMsg *m, struct kvc_scratch *s)
{
    switch (m->resp_case) {
    case RPC__SERVER_MSG__RESP_MEMBER_LIST:
        r->members = kvc_decode_members(m->member_list->members, m->member_list->n_members, s);
        r->member_count = m->member_list->n_members;
        break;
    case RPC__SERVER_MSG__RESP_MEMBER_ADD:
        r->members = kvc_decode_members(m->member_add->members, m->member_add->n_members, s);
        r->member_count = m->member_add->n_members;
        if (m->member_add->member)
            r->member = *kvc_decode_members(&m->member_add->member, 1, s);
        break;
    case RPC__SERVER_MSG__RESP_MEMBER_REMOVE:
        r->members = kvc_decode_members(m->member_remove->members, m->member_remove->n_members, s);
        r->member_count = m->member_remove->n_members;
        break;
    case RPC__SERVER_MSG__RESP_MEMBER_PROMOTE:
        r->members =
            kvc_decode_members(m->member_promote->members, m->member_promote->n_members, s);
        r->member_count = m->member_promote->n_members;
        break;
    case RPC__SERVER_MSG__RESP_STATUS: {
        const Rpc__StatusResponse *st = m->status;
        r->member_status.member_id = r->header.member_id;
        r->member_status.leader = st->leader;
        r->member_status.raft_term = st->raftterm;
        r->member_status.raft_index = st->raftindex;
        r->member_status.raft_applied = st->raftappliedindex;
        r->member_status.db_size = st->dbsize;
        r->member_status.db_size_in_use = st->dbsizeinuse;
        r->member_status.quorum_contact_age_ns = st->quorum_contact_age_ns;
        r->member_status.is_learner = st->islearner;
        break;
    }
    case RPC__SERVER_MSG__RESP_ALARM: {
        struct kvc_alarm *a = kvc_scratch_alloc(s, m->alarm->n_alarms * sizeof(*a));
        for (size_t i = 0; i < m->alarm->n_alarms; i++) {
            a[i].member_id = m->alarm->alarms[i]->memberid;
            a[i].type = (enum kvc_alarm_type)m->alarm->alarms[i]->alarm;
        }
        r->alarms = a;
        r->alarm_count = m->alarm->n_alarms;
        break;
    }
    case RPC__SERVER_MSG__RESP_HASH_KV:
        r->hash = m->hash_kv->hash;
        r->hash_revision = m->hash_kv->hash_revision;
        r->compact_revision = m->hash_kv->compact_revision;
        break;
    default: /* defragment, move leader, compact: nothing beyond the header */
        break;
    }
}

void kvc_decode_result(struct kvc_result *r, const Rpc__ServerMsg *m, struct kvc_scratch *s)
{
    kvc_decode_header(&r->header, m);
    switch (m->resp_case) {
    case RPC__SERVER_MSG__RESP_RANGE:
        kvc_decode_range(&r->op, m->range, s);
        break;
    case RPC__SERVER_MSG__RESP_PUT:
        kvc_decode_put(&r->op, m->put);
        break;
    case RPC__SERVER_MSG__RESP_DELETE_RANGE:
        kvc_decode_delete(&r->op, m->delete_range, s);
        break;
    case RPC__SERVER_MSG__RESP_TXN:
        kvc_decode_txn(r, m->txn, s);
        break;
    case RPC__SERVER_MSG__RESP_LEASE_GRANT:
        r->lease_id = m->lease_grant->id;
        r->ttl_s = m->lease_grant->ttl;
        break;
    case RPC__SERVER_MSG__RESP_LEASE_KEEPALIVE:
        r->lease_id = m->lease_keepalive->id;
        r->ttl_s = m->lease_keepalive->ttl;
        break;
    case RPC__SERVER_MSG__RESP_LEASE_TTL: {
        const Rpc__LeaseTimeToLiveResponse *t = m->lease_ttl;
        r->lease_id = t->id;
        r->ttl_s = t->ttl;
        r->granted_ttl_s = t->grantedttl;
        struct kvc_bytes *keys = kvc_scratch_alloc(s, t->n_keys * sizeof(*keys));
        for (size_t i = 0; i < t->n_keys; i++)
            keys[i] = kvc_bytes_of(t->keys[i]);
        r->keys = keys;
        r->key_count = t->n_keys;
        break;
    }
    default:
        kvc_decode_admin(r, m, s);
    }
    /* The op kind follows the method even when the body was empty. */
    if (r->method == KVC_RANGE)
        r->op.kind = KVC_OP_RANGE;
    else if (r->method == KVC_PUT)
        r->op.kind = KVC_OP_PUT;
    else if (r->method == KVC_DELETE)
        r->op.kind = KVC_OP_DELETE;
}

struct kvc_event *kvc_decode_events(const Rpc__WatchResponse *w, struct kvc_scratch *s)
{
    struct kvc_event *ev = kvc_scratch_alloc(s, w->n_events * sizeof(*ev));
    for (size_t i = 0; i < w->n_events; i++) {
        const Rpc__Event *e = w->events[i];
        ev[i].kind = e->type == RPC__EVENT__EVENT_TYPE__DELETE ? KVC_EV_DELETE : KVC_EV_PUT;
        kvc_decode_kv(&ev[i].kv, e->kv);
        if (e->prev_kv) {
            ev[i].has_prev_kv = true;
            kvc_decode_kv(&ev[i].prev_kv, e->prev_kv);
        }
    }
    return ev;
}
