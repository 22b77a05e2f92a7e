/*
 * export_jsonl.c: struct chk_history to JSON lines (export.h). One json_t per line,
 * built field by field in a fixed order and dumped compact, so the same history
 * always gives the same bytes.
 */
#include "harness/export/export.h"

static json_t *key_json(const struct chk_history *h, int32_t id)
{
    size_t n;
    const uint8_t *p = chk_key_bytes(h, id, &n);
    return chk_json_bytes(p, n);
}

static json_t *value_json(const struct chk_history *h, int32_t id)
{
    if (id == CHK_NIL || id == CHK_NOT_GIVEN)
        return json_null();
    size_t n;
    const uint8_t *p = chk_value_bytes(h, id, &n);
    return chk_json_bytes(p, n);
}

static void set_int(json_t *o, const char *name, int64_t v)
{
    if (v != CHK_NO_REV)
        json_object_set_new(o, name, json_integer(v));
}

static void set_range_end(const struct chk_history *h, json_t *o, int32_t end)
{
    if (end == CHK_RANGE_ALL)
        json_object_set_new(o, "range_end", json_stringn("", 1));
    else if (end != CHK_RANGE_ONE)
        json_object_set_new(o, "range_end", key_json(h, end));
}

static json_t *kv_json(const struct chk_history *h, const struct chk_kv *kv)
{
    json_t *o = json_object();
    json_object_set_new(o, "key", key_json(h, kv->key));
    json_object_set_new(o, "value", value_json(h, kv->value));
    set_int(o, "create_revision", kv->create_rev);
    set_int(o, "mod_revision", kv->mod_rev);
    set_int(o, "version", kv->version);
    return o;
}

static json_t *kvs_json(const struct chk_history *h, const struct chk_sub *s)
{
    json_t *a = json_array();
    for (uint32_t i = 0; i < s->kv_count; i++)
        json_array_append_new(a, kv_json(h, &h->kvs[s->kv_first + i]));
    return a;
}

static const char *sub_name(int kind)
{
    static const char *const names[] = {"range", "put", "delete", "append"};
    return kind >= 0 && kind < 4 ? names[kind] : "range";
}

/* The request fields of s into o (what load_op.c's add_sub reads). */
static void sub_request(const struct chk_history *h, const struct chk_sub *s, json_t *o)
{
    json_object_set_new(o, "key", key_json(h, s->key));
    set_range_end(h, o, s->range_end);
    if (s->kind == CHK_SUB_PUT || s->kind == CHK_SUB_APPEND)
        json_object_set_new(o, "value", value_json(h, s->value));
    int64_t lease = s->kind == CHK_SUB_PUT ? chk_sub_lease(h, s) : 0;
    if (lease)
        json_object_set_new(o, "lease", json_integer(lease));
    if (s->kind == CHK_SUB_RANGE && s->req_rev)
        json_object_set_new(o, "revision", json_integer(s->req_rev));
    if (s->kind == CHK_SUB_RANGE && s->limit)
        json_object_set_new(o, "limit", json_integer(s->limit));
    if (s->flags & CHK_SUBF_PREV_KV)
        json_object_set_new(o, "prev_kv", json_true());
}

/* A range result that the flat single-key shape carries exactly: one key asked, the
 * count recorded and equal to the kvs (0, or 1 kv of that key with a value). */
static bool range_flat(const struct chk_history *h, const struct chk_sub *s)
{
    uint32_t want = (CHK_SUBF_KVS_SET | CHK_SUBF_COUNT_SET);
    if (s->range_end != CHK_RANGE_ONE || (s->flags & want) != want || s->kv_count > 1 ||
        s->count != (int64_t)s->kv_count)
        return false;
    return !s->kv_count ||
           (h->kvs[s->kv_first].key == s->key && h->kvs[s->kv_first].value != CHK_NIL);
}

/* The result fields of s into o. flat: the flat single-key shape where it is exact. */
static void sub_result(const struct chk_history *h, const struct chk_sub *s, json_t *o, bool flat)
{
    if (s->kind == CHK_SUB_RANGE) {
        if (flat && range_flat(h, s)) {
            const struct chk_kv *kv = s->kv_count ? &h->kvs[s->kv_first] : NULL;
            json_object_set_new(o, "value", kv ? value_json(h, kv->value) : json_null());
            if (kv) {
                set_int(o, "mod_rev", kv->mod_rev);
                set_int(o, "create_rev", kv->create_rev);
                set_int(o, "version", kv->version);
            }
            return;
        }
        if (s->flags & CHK_SUBF_KVS_SET)
            json_object_set_new(o, "kvs", kvs_json(h, s));
        if (s->flags & CHK_SUBF_COUNT_SET)
            json_object_set_new(o, "count", json_integer(s->count));
    } else if (s->kind == CHK_SUB_DELETE) {
        if (s->flags & CHK_SUBF_COUNT_SET)
            json_object_set_new(o, "deleted", json_integer(s->count));
        if ((s->flags & CHK_SUBF_KVS_SET) && (s->flags & CHK_SUBF_PREV_KV))
            json_object_set_new(o, "prev_kvs", kvs_json(h, s));
    } else if (s->kind == CHK_SUB_PUT && (s->flags & CHK_SUBF_KVS_SET) &&
               (s->flags & CHK_SUBF_PREV_KV)) {
        json_object_set_new(o, "prev_kv",
                            s->kv_count ? kv_json(h, &h->kvs[s->kv_first]) : json_null());
    }
}

static const char *error_text(int err)
{
    switch (err) {
    case CHK_ERR_COMPACTED:
        return "etcdserver: mvcc: required revision has been compacted";
    case CHK_ERR_FUTURE_REV:
        return "etcdserver: mvcc: required revision is a future revision";
    case CHK_ERR_NONE:
        return NULL;
    default:
        return "error";
    }
}

/* The fields every op line has: type, op, id, client, call, return, status, error, rev. */
static json_t *op_head(const struct chk_op *op, const char *kind)
{
    static const char *const status[] = {"ok", "fail", "unknown"};
    json_t *o = json_object();
    json_object_set_new(o, "type", json_string("op"));
    json_object_set_new(o, "op", json_string(kind));
    json_object_set_new(o, "id", json_integer(op->op_id));
    json_object_set_new(o, "client", json_integer(op->client));
    json_object_set_new(o, "call", json_integer(op->call_ns));
    json_object_set_new(o, "return",
                        op->return_ns == CHK_NEVER ? json_null() : json_integer(op->return_ns));
    json_object_set_new(o, "status", json_string(status[op->status % 3]));
    const char *e = op->status == CHK_ST_FAIL ? error_text(op->err) : NULL;
    if (e)
        json_object_set_new(o, "error", json_string(e));
    set_int(o, "rev", op->rev);
    return o;
}

static json_t *cmp_json(const struct chk_history *h, const struct chk_cmp *c)
{
    static const char *const target[] = {"value", "version", "create", "mod"};
    static const char *const operand[] = {"value", "version", "create_revision", "mod_revision"};
    static const char *const result[] = {"=", "!=", ">", "<"};
    json_t *o = json_object();
    json_object_set_new(o, "key", key_json(h, c->key));
    json_object_set_new(o, "target", json_string(target[c->target % 4]));
    json_object_set_new(o, "result", json_string(result[c->result % 4]));
    json_object_set_new(o, operand[c->target % 4],
                        c->target == CHK_CMP_VALUE ? value_json(h, (int32_t)c->operand)
                                                   : json_integer(c->operand));
    return o;
}

/* {"put":{...}} for a txn branch, {"op":"append",...} for an append (the loader
 * knows appends only in that form). */
static json_t *txn_sub(const struct chk_history *h, const struct chk_sub *s)
{
    json_t *in = json_object();
    sub_request(h, s, in);
    if (s->kind == CHK_SUB_APPEND) {
        json_object_set_new(in, "op", json_string("append"));
        return in;
    }
    json_t *o = json_object();
    json_object_set_new(o, sub_name(s->kind), in);
    return o;
}

static void txn_body(const struct chk_history *h, const struct chk_op *op, json_t *o)
{
    json_t *cmps = json_array(), *br[2] = {json_array(), json_array()};
    for (uint32_t i = 0; i < op->cmp_count; i++)
        json_array_append_new(cmps, cmp_json(h, &h->cmps[op->cmp_first + i]));
    const struct chk_sub *subs = &h->subs[op->sub_first];
    for (uint32_t i = 0; i < (uint32_t)op->then_count + op->else_count; i++)
        json_array_append_new(br[i >= op->then_count], txn_sub(h, &subs[i]));
    json_object_set_new(o, "compare", cmps);
    json_object_set_new(o, "success", br[0]);
    json_object_set_new(o, "failure", br[1]);
    if (!(op->flags & CHK_OPF_SUCCEEDED_SET))
        return;
    bool then = op->flags & CHK_OPF_SUCCEEDED;
    json_object_set_new(o, "succeeded", json_boolean(then));
    uint32_t first = then ? 0 : op->then_count, n = then ? op->then_count : op->else_count;
    bool any = false;
    for (uint32_t i = 0; i < n; i++)
        any |= (subs[first + i].flags & CHK_SUBF_RESULT_SET) != 0;
    if (!any)
        return;
    json_t *resps = json_array();
    for (uint32_t i = 0; i < n; i++) {
        const struct chk_sub *s = &subs[first + i];
        json_t *r = json_object(), *w = json_object();
        sub_result(h, s, r, false);
        json_object_set_new(w, sub_name(s->kind), r);
        json_array_append_new(resps, (s->flags & CHK_SUBF_RESULT_SET) ? w : json_null());
        if (!(s->flags & CHK_SUBF_RESULT_SET))
            json_decref(w);
    }
    json_object_set_new(o, "responses", resps);
}

static json_t *cas_line(const struct chk_history *h, const struct chk_op *op)
{
    json_t *o = op_head(op, "cas");
    const struct chk_cmp *c = &h->cmps[op->cmp_first];
    const struct chk_sub *s = &h->subs[op->sub_first];
    json_object_set_new(o, "key", key_json(h, c->key));
    json_object_set_new(
        o, "expect", c->target == CHK_CMP_VALUE ? value_json(h, (int32_t)c->operand) : json_null());
    json_object_set_new(o, "value", value_json(h, s->value));
    if (op->flags & CHK_OPF_SUCCEEDED_SET)
        json_object_set_new(o, "succeeded", json_boolean(op->flags & CHK_OPF_SUCCEEDED));
    return o;
}

static json_t *lease_end_line(const struct chk_history *h, const struct chk_op *op)
{
    json_t *o = op_head(op, "lease_revoke");
    json_object_set_new(o, "lease_id", json_integer(op->lease));
    if (!(op->flags & CHK_OPF_LEASE_KEYS))
        return o; /* the loader derives the keys again from the leased puts */
    json_t *keys = json_array();
    for (uint32_t i = 0; i < op->then_count; i++)
        json_array_append_new(keys, key_json(h, h->subs[op->sub_first + i].key));
    json_object_set_new(o, "keys", keys);
    return o;
}

/* A single sub-operation without compares, as one flat line; NULL when the flat
 * shape would lose something (then the op goes out as a txn). */
static json_t *flat_line(const struct chk_history *h, const struct chk_op *op)
{
    if (op->cmp_count || op->else_count || op->then_count != 1 ||
        (op->flags & (CHK_OPF_SUCCEEDED_SET | CHK_OPF_LABEL_CAS)))
        return NULL;
    const struct chk_sub *s = &h->subs[op->sub_first];
    bool has = s->flags & CHK_SUBF_RESULT_SET;
    if (s->kind == CHK_SUB_PUT && has && (s->flags & CHK_SUBF_PREV_KV))
        return NULL;
    json_t *o = op_head(op, s->kind == CHK_SUB_RANGE ? "get" : sub_name(s->kind));
    sub_request(h, s, o);
    if (op->flags & CHK_OPF_SERIALIZABLE)
        json_object_set_new(o, "serializable", json_true());
    if (has)
        sub_result(h, s, o, true);
    return o;
}

static json_t *op_line(const struct chk_history *h, const struct chk_op *op)
{
    if (op->kind == CHK_OP_COMPACT) {
        json_t *o = op_head(op, "compact");
        json_object_set_new(o, "revision", json_integer(op->compact_rev));
        return o;
    }
    if (op->flags & CHK_OPF_LEASE_END)
        return lease_end_line(h, op);
    if ((op->flags & CHK_OPF_LABEL_CAS) && op->cmp_count == 1 && op->then_count == 1 &&
        !op->else_count)
        return cas_line(h, op);
    json_t *o = flat_line(h, op);
    if (o)
        return o;
    o = op_head(op, "txn");
    txn_body(h, op, o);
    return o;
}

static json_t *watch_open_line(const struct chk_history *h, const struct chk_watch *w)
{
    json_t *o = json_object();
    json_object_set_new(o, "type", json_string("watch_open"));
    json_object_set_new(o, "watch", json_integer(w->watch_id));
    json_object_set_new(o, "client", json_integer(w->client));
    json_object_set_new(o, "key", key_json(h, w->key));
    set_range_end(h, o, w->range_end);
    json_object_set_new(o, "start_rev", json_integer(w->start_rev));
    if (w->flags & CHK_WF_PREV_KV)
        json_object_set_new(o, "prev_kv", json_true());
    if (w->flags & CHK_WF_PROGRESS_NOTIFY)
        json_object_set_new(o, "progress_notify", json_true());
    bool np = w->flags & CHK_WF_NOPUT, nd = w->flags & CHK_WF_NODELETE;
    if (np || nd)
        json_object_set_new(o, "filters",
                            json_string(np && nd ? "noput,nodelete"
                                        : np     ? "noput"
                                                 : "nodelete"));
    json_object_set_new(o, "t", json_integer(w->opened_ns));
    return o;
}

static json_t *event_line(const struct chk_history *h, const struct chk_wevent *e)
{
    static const char *const kind[] = {"put", "delete", "progress"};
    json_t *o = json_object();
    json_object_set_new(o, "type", json_string("watch_event"));
    json_object_set_new(o, "watch", json_integer(e->watch_id));
    json_object_set_new(o, "response", json_integer(e->response));
    json_object_set_new(o, "seq", json_integer(e->seq));
    json_object_set_new(o, "event", json_string(kind[e->kind % 3]));
    if (e->kind == CHK_EV_PROGRESS) {
        json_object_set_new(o, "rev", json_integer(e->mod_rev));
    } else {
        json_object_set_new(o, "key", key_json(h, e->key));
        if (e->kind == CHK_EV_PUT)
            json_object_set_new(o, "value", value_json(h, e->value));
        if (e->prev_value != CHK_NOT_GIVEN)
            json_object_set_new(o, "prev_value", value_json(h, e->prev_value));
        json_object_set_new(o, "mod_rev", json_integer(e->mod_rev));
    }
    set_int(o, "create_rev", e->create_rev);
    set_int(o, "version", e->version);
    json_object_set_new(o, "t", json_integer(e->t_ns));
    return o;
}

static json_t *watch_close_line(const struct chk_watch *w)
{
    json_t *o = json_object();
    json_object_set_new(o, "type", json_string("watch_close"));
    json_object_set_new(o, "watch", json_integer(w->watch_id));
    json_object_set_new(o, "t", json_integer(w->closed_ns));
    return o;
}

/* Dumps o (stolen) as one line into out. */
static int put_line(json_t *o, struct fl_buf *out)
{
    char *s = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(o);
    if (!s)
        return FL_ENOMEM;
    fl_buf_append(out, s, strlen(s));
    fl_buf_append(out, "\n", 1);
    free(s);
    return FL_OK;
}

int exp_jsonl_write(const struct chk_history *h, struct fl_buf *out)
{
    int rc = FL_OK;
    for (uint32_t i = 0; i < h->op_count && !rc; i++)
        rc = put_line(op_line(h, &h->ops[i]), out);
    for (uint32_t i = 0; i < h->watch_count && !rc; i++)
        rc = put_line(watch_open_line(h, &h->watches[i]), out);
    for (uint32_t i = 0; i < h->event_count && !rc; i++)
        rc = put_line(event_line(h, &h->events[i]), out);
    for (uint32_t i = 0; i < h->watch_count && !rc; i++) {
        if (h->watches[i].closed_ns != CHK_NEVER)
            rc = put_line(watch_close_line(&h->watches[i]), out);
    }
    return rc;
}

int exp_jsonl_file(const struct chk_history *h, FILE *f)
{
    struct fl_buf b;
    fl_buf_init(&b);
    int rc = exp_jsonl_write(h, &b);
    if (!rc && b.len && fwrite(b.data, 1, b.len, f) != b.len)
        rc = FL_EIO;
    if (!rc && fflush(f))
        rc = FL_EIO;
    fl_buf_close(&b);
    return rc;
}
