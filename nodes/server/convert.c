/*
 * convert.c: rpc.proto <-> MVCC core translations (see convert.h).
 */
#include "nodes/server/convert.h"

void *srv_arena_alloc(struct srv_arena *a, size_t n)
{
    if (!a->pb.alloc.alloc)
        srv_pb_arena_init(&a->pb);
    void *p = a->pb.alloc.alloc(a->pb.alloc.allocator_data, n);
    memset(p, 0, n);
    return p;
}

void srv_arena_free(struct srv_arena *a)
{
    srv_pb_arena_close(&a->pb);
    memset(a, 0, sizeof *a);
}

void srv_range_from_pb(const Rpc__RangeRequest *in, struct mvcc_range_req *out)
{
    memset(out, 0, sizeof *out);
    out->key = in->key.data;
    out->key_len = in->key.len;
    out->range_end = in->range_end.len ? in->range_end.data : NULL;
    out->range_end_len = in->range_end.len;
    out->revision = in->revision;
    out->limit = in->limit;
    out->count_only = in->count_only;
    out->keys_only = in->keys_only;
}

void srv_put_from_pb(const Rpc__PutRequest *in, struct mvcc_put_req *out)
{
    memset(out, 0, sizeof *out);
    out->key = in->key.data;
    out->key_len = in->key.len;
    out->value = in->value.data;
    out->value_len = in->value.len;
    out->lease = in->lease;
    out->prev_kv = in->prev_kv;
    out->ignore_value = in->ignore_value;
    out->ignore_lease = in->ignore_lease;
}

void srv_delete_from_pb(const Rpc__DeleteRangeRequest *in, struct mvcc_delete_req *out)
{
    memset(out, 0, sizeof *out);
    out->key = in->key.data;
    out->key_len = in->key.len;
    out->range_end = in->range_end.len ? in->range_end.data : NULL;
    out->range_end_len = in->range_end.len;
    out->prev_kv = in->prev_kv;
}

static void compare_from_pb(const Rpc__Compare *in, struct mvcc_compare *out)
{
    memset(out, 0, sizeof *out);
    switch (in->target) {
    case RPC__COMPARE__COMPARE_TARGET__VERSION:
        out->target = MVCC_CMP_VERSION;
        break;
    case RPC__COMPARE__COMPARE_TARGET__CREATE:
        out->target = MVCC_CMP_CREATE;
        break;
    case RPC__COMPARE__COMPARE_TARGET__MOD:
        out->target = MVCC_CMP_MOD;
        break;
    case RPC__COMPARE__COMPARE_TARGET__VALUE:
        out->target = MVCC_CMP_VALUE;
        break;
    default:
        out->target = MVCC_CMP_LEASE;
        break;
    }
    switch (in->result) {
    case RPC__COMPARE__COMPARE_RESULT__GREATER:
        out->op = MVCC_CMP_GREATER;
        break;
    case RPC__COMPARE__COMPARE_RESULT__LESS:
        out->op = MVCC_CMP_LESS;
        break;
    case RPC__COMPARE__COMPARE_RESULT__NOT_EQUAL:
        out->op = MVCC_CMP_NOT_EQUAL;
        break;
    default:
        out->op = MVCC_CMP_EQUAL;
        break;
    }
    out->key = in->key.data;
    out->key_len = in->key.len;
    out->range_end = in->range_end.len ? in->range_end.data : NULL;
    out->range_end_len = in->range_end.len;
    switch (in->target_union_case) {
    case RPC__COMPARE__TARGET_UNION_VERSION:
        out->number = in->version;
        break;
    case RPC__COMPARE__TARGET_UNION_CREATE_REVISION:
        out->number = in->create_revision;
        break;
    case RPC__COMPARE__TARGET_UNION_MOD_REVISION:
        out->number = in->mod_revision;
        break;
    case RPC__COMPARE__TARGET_UNION_LEASE:
        out->number = in->lease;
        break;
    case RPC__COMPARE__TARGET_UNION_VALUE:
        out->value = in->value.data;
        out->value_len = in->value.len;
        break;
    default:
        break;
    }
}

static bool ops_from_pb(struct srv_arena *a, Rpc__RequestOp *const *in, size_t n,
                        const struct mvcc_op **out)
{
    struct mvcc_op *ops = srv_arena_alloc(a, (n + 1) * sizeof *ops);
    for (size_t i = 0; i < n; i++) {
        const Rpc__RequestOp *op = in[i];
        switch (op->request_case) {
        case RPC__REQUEST_OP__REQUEST_REQUEST_RANGE:
            ops[i].kind = MVCC_OP_RANGE;
            srv_range_from_pb(op->request_range, &ops[i].u.range);
            break;
        case RPC__REQUEST_OP__REQUEST_REQUEST_PUT:
            ops[i].kind = MVCC_OP_PUT;
            srv_put_from_pb(op->request_put, &ops[i].u.put);
            break;
        case RPC__REQUEST_OP__REQUEST_REQUEST_DELETE_RANGE:
            ops[i].kind = MVCC_OP_DELETE;
            srv_delete_from_pb(op->request_delete_range, &ops[i].u.del);
            break;
        case RPC__REQUEST_OP__REQUEST_REQUEST_TXN: {
            struct mvcc_txn_req *t = srv_arena_alloc(a, sizeof *t);
            if (!srv_txn_from_pb(a, op->request_txn, t))
                return false;
            ops[i].kind = MVCC_OP_TXN;
            ops[i].u.txn = t;
            break;
        }
        default:
            return false;
        }
    }
    *out = ops;
    return true;
}

bool srv_txn_from_pb(struct srv_arena *a, const Rpc__TxnRequest *in, struct mvcc_txn_req *out)
{
    memset(out, 0, sizeof *out);
    struct mvcc_compare *cmps = srv_arena_alloc(a, (in->n_compare + 1) * sizeof *cmps);
    for (size_t i = 0; i < in->n_compare; i++)
        compare_from_pb(in->compare[i], &cmps[i]);
    out->compares = cmps;
    out->compares_len = in->n_compare;
    if (!ops_from_pb(a, in->success, in->n_success, &out->success))
        return false;
    out->success_len = in->n_success;
    if (!ops_from_pb(a, in->failure, in->n_failure, &out->failure))
        return false;
    out->failure_len = in->n_failure;
    return true;
}

static bool ops_write(Rpc__RequestOp *const *ops, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        switch (ops[i]->request_case) {
        case RPC__REQUEST_OP__REQUEST_REQUEST_PUT:
            return true;
        case RPC__REQUEST_OP__REQUEST_REQUEST_TXN:
            if (srv_txn_has_writes(ops[i]->request_txn))
                return true;
            break;
        default:
            break;
        }
    }
    return false;
}

bool srv_txn_has_writes(const Rpc__TxnRequest *in)
{
    /* etcd's quota cost counts puts only (deletes free space). */
    return ops_write(in->success, in->n_success) || ops_write(in->failure, in->n_failure);
}

Rpc__KeyValue *srv_kv_pb(struct srv_arena *a, const struct mvcc_kv *kv)
{
    Rpc__KeyValue *o = srv_arena_alloc(a, sizeof *o);
    rpc__key_value__init(o);
    o->key.data = (uint8_t *)kv->key;
    o->key.len = kv->key_len;
    o->value.data = (uint8_t *)kv->value;
    o->value.len = kv->value_len;
    o->create_revision = kv->create_revision;
    o->mod_revision = kv->mod_revision;
    o->version = kv->version;
    o->lease = kv->lease;
    return o;
}

Rpc__RangeResponse *srv_range_resp_pb(struct srv_arena *a, const struct mvcc_range_result *r)
{
    Rpc__RangeResponse *o = srv_arena_alloc(a, sizeof *o);
    rpc__range_response__init(o);
    o->n_kvs = r->kvs_len;
    o->kvs = srv_arena_alloc(a, (r->kvs_len + 1) * sizeof *o->kvs);
    for (size_t i = 0; i < r->kvs_len; i++)
        o->kvs[i] = srv_kv_pb(a, &r->kvs[i]);
    o->more = r->more;
    o->count = r->count;
    return o;
}

Rpc__PutResponse *srv_put_resp_pb(struct srv_arena *a, const struct mvcc_put_result *r)
{
    Rpc__PutResponse *o = srv_arena_alloc(a, sizeof *o);
    rpc__put_response__init(o);
    if (r->has_prev)
        o->prev_kv = srv_kv_pb(a, &r->prev_kv);
    return o;
}

Rpc__DeleteRangeResponse *srv_delete_resp_pb(struct srv_arena *a,
                                             const struct mvcc_delete_result *r)
{
    Rpc__DeleteRangeResponse *o = srv_arena_alloc(a, sizeof *o);
    rpc__delete_range_response__init(o);
    o->deleted = r->deleted;
    o->n_prev_kvs = r->prev_kvs_len;
    o->prev_kvs = srv_arena_alloc(a, (r->prev_kvs_len + 1) * sizeof *o->prev_kvs);
    for (size_t i = 0; i < r->prev_kvs_len; i++)
        o->prev_kvs[i] = srv_kv_pb(a, &r->prev_kvs[i]);
    return o;
}

Rpc__TxnResponse *srv_txn_resp_pb(struct srv_arena *a, const struct mvcc_txn_result *r)
{
    Rpc__TxnResponse *o = srv_arena_alloc(a, sizeof *o);
    rpc__txn_response__init(o);
    o->succeeded = r->succeeded;
    o->n_responses = r->results_len;
    o->responses = srv_arena_alloc(a, (r->results_len + 1) * sizeof *o->responses);
    for (size_t i = 0; i < r->results_len; i++) {
        const struct mvcc_op_result *res = &r->results[i];
        Rpc__ResponseOp *op = srv_arena_alloc(a, sizeof *op);
        rpc__response_op__init(op);
        switch (res->kind) {
        case MVCC_OP_RANGE:
            op->response_case = RPC__RESPONSE_OP__RESPONSE_RESPONSE_RANGE;
            op->response_range = srv_range_resp_pb(a, &res->u.range);
            break;
        case MVCC_OP_PUT:
            op->response_case = RPC__RESPONSE_OP__RESPONSE_RESPONSE_PUT;
            op->response_put = srv_put_resp_pb(a, &res->u.put);
            break;
        case MVCC_OP_DELETE:
            op->response_case = RPC__RESPONSE_OP__RESPONSE_RESPONSE_DELETE_RANGE;
            op->response_delete_range = srv_delete_resp_pb(a, &res->u.del);
            break;
        case MVCC_OP_TXN:
            op->response_case = RPC__RESPONSE_OP__RESPONSE_RESPONSE_TXN;
            op->response_txn = srv_txn_resp_pb(a, res->u.txn);
            break;
        }
        o->responses[i] = op;
    }
    return o;
}

Rpc__WatchResponse *srv_watch_resp_pb(struct srv_arena *a, const struct mvcc_watch_resp *r)
{
    Rpc__WatchResponse *o = srv_arena_alloc(a, sizeof *o);
    rpc__watch_response__init(o);
    o->watch_id = r->watch_id;
    o->canceled = r->canceled;
    o->compact_revision = r->compact_rev;
    if (r->canceled && r->cancel_err != MVCC_OK)
        o->cancel_reason = (char *)mvcc_err_text(r->cancel_err);
    o->n_events = r->events_len;
    o->events = srv_arena_alloc(a, (r->events_len + 1) * sizeof *o->events);
    for (size_t i = 0; i < r->events_len; i++) {
        const struct mvcc_event *e = &r->events[i];
        Rpc__Event *ev = srv_arena_alloc(a, sizeof *ev);
        rpc__event__init(ev);
        ev->type = e->type == MVCC_EVENT_PUT ? RPC__EVENT__EVENT_TYPE__PUT
                                             : RPC__EVENT__EVENT_TYPE__DELETE;
        ev->kv = srv_kv_pb(a, &e->kv);
        if (e->has_prev)
            ev->prev_kv = srv_kv_pb(a, &e->prev_kv);
        o->events[i] = ev;
    }
    return o;
}
