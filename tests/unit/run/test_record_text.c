/*
 * test_record_text.c: the recorder's request/response text (run_request_text,
 * run_response_text) is byte for byte what the jansson builders it replaced give
 * (json_dumps with JSON_COMPACT | JSON_ENSURE_ASCII), on random calls of every method:
 * keys and values of random bytes (strings, escapes, hex), ranges, txns with every
 * compare target, results with kvs, prev kvs, leases. The reference builders below
 * are the former run_record.c code, kept verbatim.
 */
#include "harness/run/run_int.h"

#include "fl_test.h"

#include <stdlib.h>

/* ---- reference: the jansson builders run_record.c used before ---------------------- */

static json_t *jbytes(struct kvc_bytes b)
{
    return hist_json_bytes(b.p ? b.p : (const uint8_t *)"", b.n);
}

static json_t *kv_json(const struct kvc_kv *kv)
{
    json_t *j = json_object();
    json_object_set_new(j, "key", jbytes(kv->key));
    json_object_set_new(j, "value", jbytes(kv->value));
    json_object_set_new(j, "create_revision", json_integer(kv->create_rev));
    json_object_set_new(j, "mod_revision", json_integer(kv->mod_rev));
    json_object_set_new(j, "version", json_integer(kv->version));
    if (kv->lease)
        json_object_set_new(j, "lease", json_integer(kv->lease));
    return j;
}

static json_t *op_request_json(const struct kvc_op *op)
{
    json_t *j = json_object();
    json_object_set_new(j, "key", jbytes(op->key));
    if (op->kind != KVC_OP_PUT && op->range_end.n)
        json_object_set_new(j, "range_end", jbytes(op->range_end));
    if (op->kind == KVC_OP_PUT) {
        json_object_set_new(j, "value", jbytes(op->value));
        if (op->lease)
            json_object_set_new(j, "lease", json_integer(op->lease));
    }
    if (op->kind == KVC_OP_RANGE) {
        if (op->revision)
            json_object_set_new(j, "revision", json_integer(op->revision));
        if (op->limit)
            json_object_set_new(j, "limit", json_integer(op->limit));
        if (op->serializable)
            json_object_set_new(j, "serializable", json_true());
    }
    if (op->prev_kv && op->kind != KVC_OP_RANGE)
        json_object_set_new(j, "prev_kv", json_true());
    return j;
}

static const char *sub_name(enum kvc_op_kind k)
{
    return k == KVC_OP_RANGE ? "range" : k == KVC_OP_PUT ? "put" : "delete";
}

static json_t *sub_list_json(const struct kvc_op *ops, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++) {
        json_t *s = json_object();
        json_object_set_new(s, sub_name(ops[i].kind), op_request_json(&ops[i]));
        json_array_append_new(a, s);
    }
    return a;
}

static json_t *cmp_json(const struct kvc_compare *c)
{
    static const char *targets[] = {"version", "create", "mod", "value", "lease"};
    static const char *results[] = {"=", ">", "<", "!="};
    json_t *j = json_object();
    json_object_set_new(j, "key", jbytes(c->key));
    if (c->range_end.n)
        json_object_set_new(j, "range_end", jbytes(c->range_end));
    json_object_set_new(j, "target", json_string(targets[c->target]));
    json_object_set_new(j, "result", json_string(results[c->result]));
    switch (c->target) {
    case KVC_CMP_VALUE:
        json_object_set_new(j, "value", jbytes(c->value));
        break;
    case KVC_CMP_VERSION:
        json_object_set_new(j, "version", json_integer(c->number));
        break;
    case KVC_CMP_CREATE:
        json_object_set_new(j, "create_revision", json_integer(c->number));
        break;
    case KVC_CMP_MOD:
        json_object_set_new(j, "mod_revision", json_integer(c->number));
        break;
    case KVC_CMP_LEASE:
        json_object_set_new(j, "lease", json_integer(c->number));
        break;
    }
    return j;
}

static json_t *request_json(const struct kvc_request *req)
{
    switch (req->method) {
    case KVC_RANGE:
    case KVC_PUT:
    case KVC_DELETE:
        return op_request_json(&req->op);
    case KVC_TXN: {
        json_t *j = json_object(), *cmps = json_array();
        for (size_t i = 0; i < req->cmp_count; i++)
            json_array_append_new(cmps, cmp_json(&req->cmps[i]));
        json_object_set_new(j, "compare", cmps);
        json_object_set_new(j, "success", sub_list_json(req->then_ops, req->then_count));
        json_object_set_new(j, "failure", sub_list_json(req->else_ops, req->else_count));
        return j;
    }
    case KVC_COMPACT: {
        json_t *j = json_object();
        json_object_set_new(j, "revision", json_integer(req->revision));
        return j;
    }
    default: {
        json_t *j = json_object();
        json_object_set_new(j, "method", json_string(kvc_method_name(req->method)));
        if (req->lease_id)
            json_object_set_new(j, "lease_id", json_integer(req->lease_id));
        if (req->ttl_s)
            json_object_set_new(j, "ttl", json_integer(req->ttl_s));
        if (req->member_id)
            json_object_set_new(j, "member_id", json_integer((json_int_t)req->member_id));
        return j;
    }
    }
}

static json_t *ref_op_result_json(const struct kvc_op_result *r)
{
    json_t *j = json_object();
    if (r->kind == KVC_OP_RANGE) {
        json_t *kvs = json_array();
        for (size_t i = 0; i < r->kv_count; i++)
            json_array_append_new(kvs, kv_json(&r->kvs[i]));
        json_object_set_new(j, "kvs", kvs);
        json_object_set_new(j, "count", json_integer(r->count));
    } else if (r->kind == KVC_OP_PUT) {
        if (r->has_prev_kv)
            json_object_set_new(j, "prev_kv", kv_json(&r->prev_kv));
    } else {
        json_object_set_new(j, "deleted", json_integer(r->deleted));
        if (r->prev_kv_count) {
            json_t *p = json_array();
            for (size_t i = 0; i < r->prev_kv_count; i++)
                json_array_append_new(p, kv_json(&r->prev_kvs[i]));
            json_object_set_new(j, "prev_kvs", p);
        }
    }
    return j;
}

static json_t *response_json(const struct kvc_request *req, const struct kvc_result *res)
{
    json_t *j = json_object(), *h = json_object();
    json_object_set_new(h, "revision", json_integer(res->header.revision));
    json_object_set_new(h, "raft_term", json_integer((json_int_t)res->header.raft_term));
    json_object_set_new(j, "header", h);
    switch (req->method) {
    case KVC_RANGE:
    case KVC_PUT:
    case KVC_DELETE: {
        json_t *o = ref_op_result_json(&res->op);
        json_object_update(j, o);
        json_decref(o);
        break;
    }
    case KVC_TXN: {
        json_object_set_new(j, "succeeded", json_boolean(res->succeeded));
        json_t *a = json_array();
        for (size_t i = 0; i < res->op_count; i++) {
            json_t *s = json_object();
            json_object_set_new(s, sub_name(res->ops[i].kind), ref_op_result_json(&res->ops[i]));
            json_array_append_new(a, s);
        }
        json_object_set_new(j, "responses", a);
        break;
    }
    case KVC_LEASE_GRANT:
    case KVC_LEASE_KEEPALIVE:
    case KVC_LEASE_TTL:
        json_object_set_new(j, "lease_id", json_integer(res->lease_id));
        json_object_set_new(j, "ttl", json_integer(res->ttl_s));
        break;
    default:
        break;
    }
    return j;
}

static char *dump(json_t *j)
{
    char *s = json_dumps(j, JSON_COMPACT | JSON_ENSURE_ASCII);
    json_decref(j);
    return s;
}

/* ---- random calls ------------------------------------------------------------------ */

static uint64_t rng = 0x2545f4914f6cdd1du;

static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static int64_t rnd_int(void)
{
    switch (next() % 4) {
    case 0:
        return 0;
    case 1:
        return (int64_t)(next() % 100);
    case 2:
        return (int64_t)next();
    default:
        return -(int64_t)(next() % 1000);
    }
}

static uint8_t pool[1 << 20];
static size_t pool_used;

static struct kvc_bytes rnd_bytes(void)
{
    size_t n = next() % 24;
    if (next() % 8 == 0)
        return (struct kvc_bytes){NULL, 0};
    if (pool_used + n + 8 > sizeof pool)
        pool_used = 0;
    uint8_t *p = pool + pool_used;
    int mode = (int)(next() % 4);
    for (size_t i = 0; i < n; i++)
        p[i] = mode == 0   ? (uint8_t)next()
               : mode == 1 ? (uint8_t)(next() % 0x80)
                           : (uint8_t)('a' + next() % 26);
    if (mode == 3 && n >= 2) { /* é */
        p[0] = 0xc3;
        p[1] = 0xa9;
    }
    pool_used += n;
    return (struct kvc_bytes){p, n};
}

static struct kvc_op rnd_op(void)
{
    struct kvc_op op;
    memset(&op, 0, sizeof op);
    op.kind = (enum kvc_op_kind)(next() % 3);
    op.key = rnd_bytes();
    if (next() % 2)
        op.range_end = rnd_bytes();
    op.value = rnd_bytes();
    op.lease = next() % 2 ? rnd_int() : 0;
    op.revision = next() % 2 ? rnd_int() : 0;
    op.limit = next() % 2 ? rnd_int() : 0;
    op.prev_kv = next() % 2;
    op.serializable = next() % 2;
    return op;
}

static struct kvc_kv rnd_kv(void)
{
    struct kvc_kv kv = {rnd_bytes(), rnd_bytes(), rnd_int(), rnd_int(), rnd_int(), 0};
    if (next() % 2)
        kv.lease = rnd_int();
    return kv;
}

#define N_MAX 4
struct call {
    struct kvc_request req;
    struct kvc_result res;
    struct kvc_compare cmps[N_MAX];
    struct kvc_op then_ops[N_MAX], else_ops[N_MAX];
    struct kvc_op_result ops[N_MAX];
    struct kvc_kv kvs[N_MAX * 4 * (N_MAX + 1)];
    size_t kv_used;
};

static void rnd_result(struct call *c, struct kvc_op_result *r)
{
    memset(r, 0, sizeof *r);
    r->kind = (enum kvc_op_kind)(next() % 3);
    size_t n = next() % N_MAX;
    struct kvc_kv *kvs = &c->kvs[c->kv_used];
    for (size_t i = 0; i < n; i++)
        kvs[i] = rnd_kv();
    c->kv_used += n;
    r->kvs = kvs;
    r->kv_count = n;
    r->count = rnd_int();
    r->has_prev_kv = next() % 2;
    r->prev_kv = rnd_kv();
    r->deleted = rnd_int();
    r->prev_kvs = kvs;
    r->prev_kv_count = next() % 2 ? n : 0;
}

static void rnd_call(struct call *c)
{
    memset(c, 0, sizeof *c);
    static const enum kvc_method methods[] = {
        KVC_RANGE,         KVC_PUT,          KVC_DELETE,          KVC_TXN,       KVC_COMPACT,
        KVC_LEASE_GRANT,   KVC_LEASE_REVOKE, KVC_LEASE_KEEPALIVE, KVC_LEASE_TTL, KVC_MEMBER_ADD,
        KVC_MEMBER_REMOVE, KVC_STATUS,       KVC_DEFRAGMENT,      KVC_ALARM,     KVC_MOVE_LEADER};
    c->req.method = methods[next() % (sizeof methods / sizeof methods[0])];
    c->req.op = rnd_op();
    if (c->req.method == KVC_RANGE)
        c->req.op.kind = KVC_OP_RANGE;
    else if (c->req.method == KVC_PUT)
        c->req.op.kind = KVC_OP_PUT;
    else if (c->req.method == KVC_DELETE)
        c->req.op.kind = KVC_OP_DELETE;
    c->req.cmp_count = next() % N_MAX;
    for (size_t i = 0; i < c->req.cmp_count; i++) {
        struct kvc_compare *k = &c->cmps[i];
        k->target = (enum kvc_cmp_target)(next() % 5);
        k->result = (enum kvc_cmp_result)(next() % 4);
        k->key = rnd_bytes();
        if (next() % 2)
            k->range_end = rnd_bytes();
        k->number = rnd_int();
        k->value = rnd_bytes();
    }
    c->req.cmps = c->cmps;
    c->req.then_count = next() % N_MAX;
    c->req.else_count = next() % N_MAX;
    for (size_t i = 0; i < N_MAX; i++) {
        c->then_ops[i] = rnd_op();
        c->else_ops[i] = rnd_op();
    }
    c->req.then_ops = c->then_ops;
    c->req.else_ops = c->else_ops;
    c->req.revision = rnd_int();
    c->req.lease_id = next() % 2 ? rnd_int() : 0;
    c->req.ttl_s = next() % 2 ? rnd_int() : 0;
    c->req.member_id = next() % 2 ? next() : 0;
    c->res.method = c->req.method;
    c->res.status = KVC_OK;
    c->res.header.revision = rnd_int();
    c->res.header.raft_term = next() % 2 ? next() : next() % 10;
    rnd_result(c, &c->res.op);
    c->res.succeeded = next() % 2;
    c->res.op_count = next() % N_MAX;
    for (size_t i = 0; i < c->res.op_count; i++)
        rnd_result(c, &c->ops[i]);
    c->res.ops = c->ops;
    c->res.lease_id = rnd_int();
    c->res.ttl_s = rnd_int();
}

static int shown;

static void same(const char *what, char *want, struct fl_buf *got, bool nul)
{
    bool ok = want && !strcmp(want, fl_buf_cstr(got));
    if (!ok && shown++ < 5)
        fprintf(stderr, "%s:\n want %s\n  got %s\n", what, want ? want : "(null)",
                fl_buf_cstr(got));
    CHECK(ok);
    /* the NUL flag is right whenever a NUL escape could only come from the data */
    if (want && !strstr(want, "\\\\u0000"))
        CHECK_EQ_INT(nul, strstr(want, "\\u0000") != NULL);
    free(want);
}

int main(void)
{
    struct call *c = malloc(sizeof *c);
    struct fl_buf b;
    fl_buf_init(&b);
    for (int i = 0; i < 30000; i++) {
        rnd_call(c);
        fl_buf_reset(&b);
        bool nul = run_request_text(&b, &c->req);
        same("request", dump(request_json(&c->req)), &b, nul);
        fl_buf_reset(&b);
        nul = run_response_text(&b, &c->req, &c->res);
        same("response", dump(response_json(&c->req, &c->res)), &b, nul);
    }
    fl_buf_close(&b);
    free(c);
    return fl_test_end();
}
