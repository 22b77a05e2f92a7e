/*
 * run_etcd_codec.c: the etcd target's translation between our client protocol
 * (rpc.proto, nodes/proto) and etcd 3.4's v3 JSON gateway: request messages into
 * gateway paths and bodies, gateway answers into response messages. The gateway
 * spells int64 as decimal strings and omits zero fields, bytes as base64, enums by
 * name; StatusResponse's fields in camelCase (its proto names), the header's in
 * snake_case. Pure translation: no I/O (run_target_etcd.c sends and receives).
 */
#include "harness/run/run_etcd.h"

#include "harness/live/live_etcd.h"

#include <errno.h>

/* Allocations of one answer, freed together once it is encoded. */

void *ec_new(struct ec_scratch *s, size_t n)
{
    FL_GROW(s->p, s->cap, s->n + 1, 64);
    void *p = fl_calloc(1, n ? n : 1);
    s->p[s->n++] = p;
    return p;
}

void ec_free(struct ec_scratch *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->p[i]);
    free(s->p);
    memset(s, 0, sizeof *s);
}

/* The gateway writes int64 as decimal strings (negative ones too) and omits zeros. */
int64_t ec_i64(const json_t *o, const char *name)
{
    const json_t *j = json_object_get(o, name);
    if (json_is_integer(j))
        return (int64_t)json_integer_value(j);
    const char *s = json_string_value(j);
    if (!s)
        return 0;
    errno = 0;
    long long v = strtoll(s, NULL, 10);
    if (errno == ERANGE && s[0] != '-')
        return (int64_t)strtoull(s, NULL, 10);
    return (int64_t)v;
}

bool ec_bool(const json_t *o, const char *name)
{
    return json_is_true(json_object_get(o, name));
}

static ProtobufCBinaryData jbytes(struct ec_scratch *s, const json_t *o, const char *name)
{
    ProtobufCBinaryData d = {0, NULL};
    const json_t *v = json_object_get(o, name);
    if (!v)
        return d;
    struct fl_buf b;
    fl_buf_init(&b);
    if (lv_b64_decode(v, &b) && b.len) {
        d.data = ec_new(s, b.len);
        memcpy(d.data, b.data, b.len);
        d.len = b.len;
    }
    fl_buf_close(&b);
    return d;
}

json_t *ec_b64(ProtobufCBinaryData d)
{
    return lv_b64(d.data, d.len);
}

void ec_set_bytes(json_t *o, const char *name, ProtobufCBinaryData d)
{
    if (d.len)
        json_object_set_new(o, name, ec_b64(d));
}

void ec_set_i64(json_t *o, const char *name, int64_t v)
{
    if (v) {
        char t[24];
        snprintf(t, sizeof t, "%lld", (long long)v);
        json_object_set_new(o, name, json_string(t));
    }
}

void ec_set_u64(json_t *o, const char *name, uint64_t v)
{
    if (v) {
        char t[24];
        snprintf(t, sizeof t, "%llu", (unsigned long long)v);
        json_object_set_new(o, name, json_string(t));
    }
}

Rpc__KeyValue *ec_kv(struct ec_scratch *s, const json_t *o)
{
    if (!json_is_object(o))
        return NULL;
    Rpc__KeyValue *kv = ec_new(s, sizeof *kv);
    rpc__key_value__init(kv);
    kv->key = jbytes(s, o, "key");
    kv->value = jbytes(s, o, "value");
    kv->create_revision = ec_i64(o, "create_revision");
    kv->mod_revision = ec_i64(o, "mod_revision");
    kv->version = ec_i64(o, "version");
    kv->lease = ec_i64(o, "lease");
    return kv;
}

static Rpc__KeyValue **kvs_from(struct ec_scratch *s, const json_t *a, size_t *n)
{
    *n = json_array_size(a);
    if (!*n)
        return NULL;
    Rpc__KeyValue **v = ec_new(s, *n * sizeof *v);
    for (size_t i = 0; i < *n; i++)
        v[i] = ec_kv(s, json_array_get(a, i));
    return v;
}

Rpc__ResponseHeader *ec_header(struct ec_scratch *s, const json_t *h)
{
    Rpc__ResponseHeader *r = ec_new(s, sizeof *r);
    rpc__response_header__init(r);
    r->cluster_id = (uint64_t)ec_i64(h, "cluster_id");
    r->member_id = (uint64_t)ec_i64(h, "member_id");
    r->revision = ec_i64(h, "revision");
    r->raft_term = (uint64_t)ec_i64(h, "raft_term");
    return r;
}

static json_t *range_req(const Rpc__RangeRequest *r)
{
    json_t *o = json_object();
    ec_set_bytes(o, "key", r->key);
    ec_set_bytes(o, "range_end", r->range_end);
    ec_set_i64(o, "limit", r->limit);
    ec_set_i64(o, "revision", r->revision);
    if (r->serializable)
        json_object_set_new(o, "serializable", json_true());
    if (r->keys_only)
        json_object_set_new(o, "keys_only", json_true());
    if (r->count_only)
        json_object_set_new(o, "count_only", json_true());
    return o;
}

static json_t *put_req(const Rpc__PutRequest *r)
{
    json_t *o = json_object();
    ec_set_bytes(o, "key", r->key);
    ec_set_bytes(o, "value", r->value);
    ec_set_i64(o, "lease", r->lease);
    if (r->prev_kv)
        json_object_set_new(o, "prev_kv", json_true());
    if (r->ignore_value)
        json_object_set_new(o, "ignore_value", json_true());
    if (r->ignore_lease)
        json_object_set_new(o, "ignore_lease", json_true());
    return o;
}

static json_t *delete_req(const Rpc__DeleteRangeRequest *r)
{
    json_t *o = json_object();
    ec_set_bytes(o, "key", r->key);
    ec_set_bytes(o, "range_end", r->range_end);
    if (r->prev_kv)
        json_object_set_new(o, "prev_kv", json_true());
    return o;
}

static json_t *txn_req(const Rpc__TxnRequest *t);

static json_t *ops_req(Rpc__RequestOp **ops, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++) {
        const Rpc__RequestOp *op = ops[i];
        json_t *o = json_object();
        switch (op->request_case) {
        case RPC__REQUEST_OP__REQUEST_REQUEST_RANGE:
            json_object_set_new(o, "request_range", range_req(op->request_range));
            break;
        case RPC__REQUEST_OP__REQUEST_REQUEST_PUT:
            json_object_set_new(o, "request_put", put_req(op->request_put));
            break;
        case RPC__REQUEST_OP__REQUEST_REQUEST_DELETE_RANGE:
            json_object_set_new(o, "request_delete_range", delete_req(op->request_delete_range));
            break;
        case RPC__REQUEST_OP__REQUEST_REQUEST_TXN:
            json_object_set_new(o, "request_txn", txn_req(op->request_txn));
            break;
        default:
            break;
        }
        json_array_append_new(a, o);
    }
    return a;
}

static json_t *txn_req(const Rpc__TxnRequest *t)
{
    static const char *const results[] = {"EQUAL", "GREATER", "LESS", "NOT_EQUAL"};
    static const char *const targets[] = {"VERSION", "CREATE", "MOD", "VALUE", "LEASE"};
    json_t *o = json_object(), *cmp = json_array();
    for (size_t i = 0; i < t->n_compare; i++) {
        const Rpc__Compare *c = t->compare[i];
        json_t *j = json_object();
        json_object_set_new(j, "result", json_string(results[(unsigned)c->result % 4u]));
        json_object_set_new(j, "target", json_string(targets[(unsigned)c->target % 5u]));
        ec_set_bytes(j, "key", c->key);
        ec_set_bytes(j, "range_end", c->range_end);
        switch (c->target_union_case) {
        case RPC__COMPARE__TARGET_UNION_VERSION:
            json_object_set_new(j, "version", json_integer((json_int_t)c->version));
            break;
        case RPC__COMPARE__TARGET_UNION_CREATE_REVISION:
            json_object_set_new(j, "create_revision", json_integer((json_int_t)c->create_revision));
            break;
        case RPC__COMPARE__TARGET_UNION_MOD_REVISION:
            json_object_set_new(j, "mod_revision", json_integer((json_int_t)c->mod_revision));
            break;
        case RPC__COMPARE__TARGET_UNION_VALUE:
            json_object_set_new(j, "value", ec_b64(c->value));
            break;
        case RPC__COMPARE__TARGET_UNION_LEASE:
            json_object_set_new(j, "lease", json_integer((json_int_t)c->lease));
            break;
        default:
            break;
        }
        json_array_append_new(cmp, j);
    }
    json_object_set_new(o, "compare", cmp);
    json_object_set_new(o, "success", ops_req(t->success, t->n_success));
    json_object_set_new(o, "failure", ops_req(t->failure, t->n_failure));
    return o;
}

static Rpc__RangeResponse *range_from(struct ec_scratch *s, const json_t *o)
{
    Rpc__RangeResponse *r = ec_new(s, sizeof *r);
    rpc__range_response__init(r);
    r->kvs = kvs_from(s, json_object_get(o, "kvs"), &r->n_kvs);
    r->more = ec_bool(o, "more");
    r->count = ec_i64(o, "count");
    return r;
}

static Rpc__PutResponse *put_from(struct ec_scratch *s, const json_t *o)
{
    Rpc__PutResponse *r = ec_new(s, sizeof *r);
    rpc__put_response__init(r);
    r->prev_kv = ec_kv(s, json_object_get(o, "prev_kv"));
    return r;
}

static Rpc__DeleteRangeResponse *delete_from(struct ec_scratch *s, const json_t *o)
{
    Rpc__DeleteRangeResponse *r = ec_new(s, sizeof *r);
    rpc__delete_range_response__init(r);
    r->deleted = ec_i64(o, "deleted");
    r->prev_kvs = kvs_from(s, json_object_get(o, "prev_kvs"), &r->n_prev_kvs);
    return r;
}

static Rpc__TxnResponse *txn_from(struct ec_scratch *s, const json_t *o)
{
    Rpc__TxnResponse *r = ec_new(s, sizeof *r);
    rpc__txn_response__init(r);
    r->succeeded = ec_bool(o, "succeeded");
    const json_t *a = json_object_get(o, "responses");
    r->n_responses = json_array_size(a);
    if (r->n_responses)
        r->responses = ec_new(s, r->n_responses * sizeof *r->responses);
    for (size_t i = 0; i < r->n_responses; i++) {
        const json_t *j = json_array_get(a, i);
        Rpc__ResponseOp *op = ec_new(s, sizeof *op);
        rpc__response_op__init(op);
        const json_t *x;
        if ((x = json_object_get(j, "response_range"))) {
            op->response_case = RPC__RESPONSE_OP__RESPONSE_RESPONSE_RANGE;
            op->response_range = range_from(s, x);
        } else if ((x = json_object_get(j, "response_put"))) {
            op->response_case = RPC__RESPONSE_OP__RESPONSE_RESPONSE_PUT;
            op->response_put = put_from(s, x);
        } else if ((x = json_object_get(j, "response_delete_range"))) {
            op->response_case = RPC__RESPONSE_OP__RESPONSE_RESPONSE_DELETE_RANGE;
            op->response_delete_range = delete_from(s, x);
        } else if ((x = json_object_get(j, "response_txn"))) {
            op->response_case = RPC__RESPONSE_OP__RESPONSE_RESPONSE_TXN;
            op->response_txn = txn_from(s, x);
        }
        r->responses[i] = op;
    }
    return r;
}

static int slot_of_member(const struct ec_ids *ids, uint64_t id)
{
    for (int i = 0; i < ids->n; i++)
        if (ids->id[i] == id)
            return i + 1;
    return 0;
}

static Rpc__Member **members_from(struct ec_scratch *s, const struct ec_ids *E, const json_t *a,
                                  size_t *n)
{
    *n = json_array_size(a);
    if (!*n)
        return NULL;
    Rpc__Member **v = ec_new(s, *n * sizeof *v);
    for (size_t i = 0; i < *n; i++) {
        const json_t *j = json_array_get(a, i);
        Rpc__Member *m = ec_new(s, sizeof *m);
        rpc__member__init(m);
        m->id = (uint64_t)ec_i64(j, "ID");
        const char *name = json_string_value(json_object_get(j, "name"));
        m->name = ec_new(s, (name ? strlen(name) : 0) + 1);
        if (name)
            memcpy(m->name, name, strlen(name));
        m->islearner = ec_bool(j, "isLearner");
        m->node = (uint32_t)slot_of_member(E, m->id);
        v[i] = m;
    }
    return v;
}

/* The gateway's body of one method into msg (the oneof), from the JSON answer o. */
void ec_answer(struct ec_scratch *s, const struct ec_ids *E, int method, const json_t *o,
               Rpc__ServerMsg *msg)
{
    switch (method) {
    case RPC__METHOD__METHOD_RANGE:
        msg->resp_case = RPC__SERVER_MSG__RESP_RANGE;
        msg->range = range_from(s, o);
        break;
    case RPC__METHOD__METHOD_PUT:
        msg->resp_case = RPC__SERVER_MSG__RESP_PUT;
        msg->put = put_from(s, o);
        break;
    case RPC__METHOD__METHOD_DELETE_RANGE:
        msg->resp_case = RPC__SERVER_MSG__RESP_DELETE_RANGE;
        msg->delete_range = delete_from(s, o);
        break;
    case RPC__METHOD__METHOD_TXN:
        msg->resp_case = RPC__SERVER_MSG__RESP_TXN;
        msg->txn = txn_from(s, o);
        break;
    case RPC__METHOD__METHOD_COMPACT:
        msg->resp_case = RPC__SERVER_MSG__RESP_COMPACT;
        msg->compact = ec_new(s, sizeof *msg->compact);
        rpc__compaction_response__init(msg->compact);
        break;
    case RPC__METHOD__METHOD_LEASE_GRANT:
        msg->resp_case = RPC__SERVER_MSG__RESP_LEASE_GRANT;
        msg->lease_grant = ec_new(s, sizeof *msg->lease_grant);
        rpc__lease_grant_response__init(msg->lease_grant);
        msg->lease_grant->id = ec_i64(o, "ID");
        msg->lease_grant->ttl = ec_i64(o, "TTL");
        break;
    case RPC__METHOD__METHOD_LEASE_REVOKE:
        msg->resp_case = RPC__SERVER_MSG__RESP_LEASE_REVOKE;
        msg->lease_revoke = ec_new(s, sizeof *msg->lease_revoke);
        rpc__lease_revoke_response__init(msg->lease_revoke);
        break;
    case RPC__METHOD__METHOD_LEASE_KEEPALIVE: {
        const json_t *r = json_object_get(o, "result");
        r = r ? r : o;
        msg->resp_case = RPC__SERVER_MSG__RESP_LEASE_KEEPALIVE;
        msg->lease_keepalive = ec_new(s, sizeof *msg->lease_keepalive);
        rpc__lease_keep_alive_response__init(msg->lease_keepalive);
        msg->lease_keepalive->id = ec_i64(r, "ID");
        msg->lease_keepalive->ttl = ec_i64(r, "TTL");
        msg->header = ec_header(s, json_object_get(r, "header"));
        break;
    }
    case RPC__METHOD__METHOD_LEASE_TTL: {
        msg->resp_case = RPC__SERVER_MSG__RESP_LEASE_TTL;
        Rpc__LeaseTimeToLiveResponse *t = ec_new(s, sizeof *t);
        rpc__lease_time_to_live_response__init(t);
        t->id = ec_i64(o, "ID");
        t->ttl = ec_i64(o, "TTL");
        t->grantedttl = ec_i64(o, "grantedTTL");
        const json_t *keys = json_object_get(o, "keys");
        t->n_keys = json_array_size(keys);
        if (t->n_keys)
            t->keys = ec_new(s, t->n_keys * sizeof *t->keys);
        for (size_t i = 0; i < t->n_keys; i++) {
            json_t *holder = json_object();
            json_object_set(holder, "k", json_array_get(keys, i));
            t->keys[i] = jbytes(s, holder, "k");
            json_decref(holder);
        }
        msg->lease_ttl = t;
        break;
    }
    case RPC__METHOD__METHOD_MEMBER_LIST:
        msg->resp_case = RPC__SERVER_MSG__RESP_MEMBER_LIST;
        msg->member_list = ec_new(s, sizeof *msg->member_list);
        rpc__member_list_response__init(msg->member_list);
        msg->member_list->members =
            members_from(s, E, json_object_get(o, "members"), &msg->member_list->n_members);
        break;
    case RPC__METHOD__METHOD_STATUS: {
        msg->resp_case = RPC__SERVER_MSG__RESP_STATUS;
        Rpc__StatusResponse *st = ec_new(s, sizeof *st);
        rpc__status_response__init(st);
        const char *v = json_string_value(json_object_get(o, "version"));
        st->version = ec_new(s, (v ? strlen(v) : 0) + 1);
        if (v)
            memcpy(st->version, v, strlen(v));
        st->dbsize = ec_i64(o, "dbSize");
        st->leader = (uint64_t)ec_i64(o, "leader");
        st->raftindex = (uint64_t)ec_i64(o, "raftIndex");
        st->raftterm = (uint64_t)ec_i64(o, "raftTerm");
        st->raftappliedindex = (uint64_t)ec_i64(o, "raftAppliedIndex");
        st->dbsizeinuse = ec_i64(o, "dbSizeInUse");
        st->islearner = ec_bool(o, "isLearner");
        st->quorum_contact_age_ns = st->leader ? 0 : -1; /* see the header comment */
        msg->status = st;
        break;
    }
    case RPC__METHOD__METHOD_DEFRAGMENT:
        msg->resp_case = RPC__SERVER_MSG__RESP_DEFRAGMENT;
        msg->defragment = ec_new(s, sizeof *msg->defragment);
        rpc__defragment_response__init(msg->defragment);
        break;
    case RPC__METHOD__METHOD_ALARM: {
        msg->resp_case = RPC__SERVER_MSG__RESP_ALARM;
        Rpc__AlarmResponse *a = ec_new(s, sizeof *a);
        rpc__alarm_response__init(a);
        const json_t *al = json_object_get(o, "alarms");
        a->n_alarms = json_array_size(al);
        if (a->n_alarms)
            a->alarms = ec_new(s, a->n_alarms * sizeof *a->alarms);
        for (size_t i = 0; i < a->n_alarms; i++) {
            const json_t *j = json_array_get(al, i);
            Rpc__AlarmMember *m = ec_new(s, sizeof *m);
            rpc__alarm_member__init(m);
            m->memberid = (uint64_t)ec_i64(j, "memberID");
            const char *t = json_string_value(json_object_get(j, "alarm"));
            m->alarm = t && !strcmp(t, "NOSPACE")   ? RPC__ALARM_TYPE__NOSPACE
                       : t && !strcmp(t, "CORRUPT") ? RPC__ALARM_TYPE__CORRUPT
                                                    : RPC__ALARM_TYPE__NONE;
            a->alarms[i] = m;
        }
        msg->alarm = a;
        break;
    }
    case RPC__METHOD__METHOD_HASH_KV:
        msg->resp_case = RPC__SERVER_MSG__RESP_HASH_KV;
        msg->hash_kv = ec_new(s, sizeof *msg->hash_kv);
        rpc__hash_kvresponse__init(msg->hash_kv);
        msg->hash_kv->hash = (uint32_t)ec_i64(o, "hash");
        msg->hash_kv->compact_revision = ec_i64(o, "compact_revision");
        msg->hash_kv->hash_revision = ec_i64(o, "hash_revision");
        break;
    case RPC__METHOD__METHOD_MOVE_LEADER:
        msg->resp_case = RPC__SERVER_MSG__RESP_MOVE_LEADER;
        msg->move_leader = ec_new(s, sizeof *msg->move_leader);
        rpc__move_leader_response__init(msg->move_leader);
        break;
    case RPC__METHOD__METHOD_MEMBER_REMOVE:
        msg->resp_case = RPC__SERVER_MSG__RESP_MEMBER_REMOVE;
        msg->member_remove = ec_new(s, sizeof *msg->member_remove);
        rpc__member_remove_response__init(msg->member_remove);
        msg->member_remove->members =
            members_from(s, E, json_object_get(o, "members"), &msg->member_remove->n_members);
        break;
    case RPC__METHOD__METHOD_MEMBER_PROMOTE:
        msg->resp_case = RPC__SERVER_MSG__RESP_MEMBER_PROMOTE;
        msg->member_promote = ec_new(s, sizeof *msg->member_promote);
        rpc__member_promote_response__init(msg->member_promote);
        msg->member_promote->members =
            members_from(s, E, json_object_get(o, "members"), &msg->member_promote->n_members);
        break;
    default:
        break;
    }
}

/* The gateway path and body of a unary request; NULL path when not served. */
const char *ec_request(const Rpc__ClientMsg *m, json_t **body)
{
    *body = NULL;
    switch (m->req_case) {
    case RPC__CLIENT_MSG__REQ_RANGE:
        *body = range_req(m->range);
        return "/v3/kv/range";
    case RPC__CLIENT_MSG__REQ_PUT:
        *body = put_req(m->put);
        return "/v3/kv/put";
    case RPC__CLIENT_MSG__REQ_DELETE_RANGE:
        *body = delete_req(m->delete_range);
        return "/v3/kv/deleterange";
    case RPC__CLIENT_MSG__REQ_TXN:
        *body = txn_req(m->txn);
        return "/v3/kv/txn";
    case RPC__CLIENT_MSG__REQ_COMPACT:
        *body = json_object();
        ec_set_i64(*body, "revision", m->compact->revision);
        if (m->compact->physical)
            json_object_set_new(*body, "physical", json_true());
        return "/v3/kv/compaction";
    case RPC__CLIENT_MSG__REQ_LEASE_GRANT:
        *body = json_object();
        ec_set_i64(*body, "TTL", m->lease_grant->ttl);
        ec_set_i64(*body, "ID", m->lease_grant->id);
        return "/v3/lease/grant";
    case RPC__CLIENT_MSG__REQ_LEASE_REVOKE:
        *body = json_object();
        ec_set_i64(*body, "ID", m->lease_revoke->id);
        return "/v3/lease/revoke";
    case RPC__CLIENT_MSG__REQ_LEASE_KEEPALIVE:
        *body = json_object();
        ec_set_i64(*body, "ID", m->lease_keepalive->id);
        return "/v3/lease/keepalive";
    case RPC__CLIENT_MSG__REQ_LEASE_TTL:
        *body = json_object();
        ec_set_i64(*body, "ID", m->lease_ttl->id);
        if (m->lease_ttl->keys)
            json_object_set_new(*body, "keys", json_true());
        return "/v3/lease/timetolive";
    case RPC__CLIENT_MSG__REQ_MEMBER_LIST:
        *body = json_object();
        return "/v3/cluster/member/list";
    case RPC__CLIENT_MSG__REQ_MEMBER_REMOVE:
        *body = json_object();
        ec_set_u64(*body, "ID", m->member_remove->id);
        return "/v3/cluster/member/remove";
    case RPC__CLIENT_MSG__REQ_MEMBER_PROMOTE:
        *body = json_object();
        ec_set_u64(*body, "ID", m->member_promote->id);
        return "/v3/cluster/member/promote";
    case RPC__CLIENT_MSG__REQ_STATUS:
        *body = json_object();
        return "/v3/maintenance/status";
    case RPC__CLIENT_MSG__REQ_DEFRAGMENT:
        *body = json_object();
        return "/v3/maintenance/defragment";
    case RPC__CLIENT_MSG__REQ_ALARM: {
        static const char *const act[] = {"GET", "ACTIVATE", "DEACTIVATE"};
        static const char *const type[] = {"NONE", "NOSPACE", "CORRUPT"};
        *body = json_object();
        json_object_set_new(*body, "action", json_string(act[(unsigned)m->alarm->action % 3u]));
        ec_set_u64(*body, "memberID", m->alarm->memberid);
        json_object_set_new(*body, "alarm", json_string(type[(unsigned)m->alarm->alarm % 3u]));
        return "/v3/maintenance/alarm";
    }
    case RPC__CLIENT_MSG__REQ_HASH_KV:
        *body = json_object();
        ec_set_i64(*body, "revision", m->hash_kv->revision);
        return "/v3/maintenance/hash";
    case RPC__CLIENT_MSG__REQ_MOVE_LEADER:
        *body = json_object();
        ec_set_u64(*body, "targetID", m->move_leader->targetid);
        return "/v3/maintenance/transfer-leadership";
    default:
        return NULL;
    }
}

Rpc__Event **ec_events(struct ec_scratch *s, const json_t *a, size_t *n)
{
    *n = json_array_size(a);
    if (!*n)
        return NULL;
    Rpc__Event **v = ec_new(s, *n * sizeof *v);
    for (size_t i = 0; i < *n; i++) {
        const json_t *j = json_array_get(a, i);
        Rpc__Event *ev = ec_new(s, sizeof *ev);
        rpc__event__init(ev);
        const char *t = json_string_value(json_object_get(j, "type"));
        ev->type = t && !strcmp(t, "DELETE") ? RPC__EVENT__EVENT_TYPE__DELETE
                                             : RPC__EVENT__EVENT_TYPE__PUT;
        ev->kv = ec_kv(s, json_object_get(j, "kv"));
        ev->prev_kv = ec_kv(s, json_object_get(j, "prev_kv"));
        v[i] = ev;
    }
    return v;
}
