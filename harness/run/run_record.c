/*
 * run_record.c: what the clients see, into the history (DESIGN §3.6). Every finished
 * unary call becomes one ops row whose request/response JSON follow the shapes that
 * checkers/checkers.h reads; every watch, watch response and watch close becomes
 * watches / watch_events rows. The workload's calls and the scenario's own calls go
 * through the same client observer, so both are judged by the checkers.
 *
 * JSON is built in a fixed field order (jansson keeps insertion order) so the rows,
 * and therefore the digest, are the same on every run with the same seed.
 */
#include "harness/run/run_int.h"

/* Bytes as history.h's convention has them (an absent pointer is the empty string).
 * Returns true when a NUL byte went into a JSON string. */
static bool jt_bytes(struct fl_buf *b, struct kvc_bytes v)
{
    return hist_jt_bytes(b, v.p ? v.p : (const uint8_t *)"", v.n);
}

#define JT_LIT(b, lit) fl_buf_append((b), (lit), sizeof(lit) - 1)

static void jt_char(struct fl_buf *b, char c)
{
    fl_buf_append(b, &c, 1);
}

/* ,"name":x: a member after an object's first. */
static void jt_int_member(struct fl_buf *b, const char *name, int64_t x)
{
    hist_jt_key(b, false, name);
    hist_jt_int(b, x);
}

/* The member only when x is not 0, and "name":true only when on: etcd's JSON leaves
 * zero and false fields out. */
static void jt_int_opt(struct fl_buf *b, const char *name, int64_t x)
{
    if (x)
        jt_int_member(b, name, x);
}

static void jt_true_opt(struct fl_buf *b, const char *name, bool on)
{
    if (on) {
        hist_jt_key(b, false, name);
        JT_LIT(b, "true");
    }
}

/* Writes into room the caller reserved: the kv objects of a range response are most
 * of what a saturated run records (some 80 per range), and one reservation for the
 * fixed parts of each, instead of a bounds-checked append per part, took ~40% off
 * building them. The text is hist_jt_int's and JT_LIT's, byte for byte. */
#define KV_FIXED_MAX 160 /* the names below and four integers of up to 20 characters */
#define JT_PUT(b, lit)                                                                             \
    (memcpy((b)->data + (b)->len, (lit), sizeof(lit) - 1), (b)->len += sizeof(lit) - 1)

static void int_put(struct fl_buf *b, int64_t x)
{
    b->len += hist_jt_int_put((char *)(b->data + b->len), x);
}

static bool kv_text(struct fl_buf *b, const struct kvc_kv *kv)
{
    JT_LIT(b, "{\"key\":");
    bool nul = jt_bytes(b, kv->key);
    JT_LIT(b, ",\"value\":");
    nul |= jt_bytes(b, kv->value);
    fl_buf_reserve(b, KV_FIXED_MAX);
    JT_PUT(b, ",\"create_revision\":");
    int_put(b, kv->create_rev);
    JT_PUT(b, ",\"mod_revision\":");
    int_put(b, kv->mod_rev);
    JT_PUT(b, ",\"version\":");
    int_put(b, kv->version);
    if (kv->lease) {
        JT_PUT(b, ",\"lease\":");
        int_put(b, kv->lease);
    }
    b->data[b->len++] = '}';
    return nul;
}

static bool op_request_text(struct fl_buf *b, const struct kvc_op *op)
{
    jt_char(b, '{');
    hist_jt_key(b, true, "key");
    bool nul = jt_bytes(b, op->key);
    if (op->kind != KVC_OP_PUT && op->range_end.n) {
        hist_jt_key(b, false, "range_end");
        nul |= jt_bytes(b, op->range_end);
    }
    if (op->kind == KVC_OP_PUT) {
        hist_jt_key(b, false, "value");
        nul |= jt_bytes(b, op->value);
        jt_int_opt(b, "lease", op->lease);
    }
    if (op->kind == KVC_OP_RANGE) {
        jt_int_opt(b, "revision", op->revision);
        jt_int_opt(b, "limit", op->limit);
        jt_true_opt(b, "serializable", op->serializable);
    }
    jt_true_opt(b, "prev_kv", op->prev_kv && op->kind != KVC_OP_RANGE);
    jt_char(b, '}');
    return nul;
}

static const char *sub_name(enum kvc_op_kind k)
{
    return k == KVC_OP_RANGE ? "range" : k == KVC_OP_PUT ? "put" : "delete";
}

static bool sub_list_text(struct fl_buf *b, const struct kvc_op *ops, size_t n)
{
    bool nul = false;
    jt_char(b, '[');
    for (size_t i = 0; i < n; i++) {
        if (i)
            jt_char(b, ',');
        jt_char(b, '{');
        hist_jt_key(b, true, sub_name(ops[i].kind));
        nul |= op_request_text(b, &ops[i]);
        jt_char(b, '}');
    }
    jt_char(b, ']');
    return nul;
}

static bool cmp_text(struct fl_buf *b, const struct kvc_compare *c)
{
    static const char *targets[] = {"version", "create", "mod", "value", "lease"};
    static const char *results[] = {"=", ">", "<", "!="};
    jt_char(b, '{');
    hist_jt_key(b, true, "key");
    bool nul = jt_bytes(b, c->key);
    if (c->range_end.n) {
        hist_jt_key(b, false, "range_end");
        nul |= jt_bytes(b, c->range_end);
    }
    hist_jt_key(b, false, "target");
    hist_jt_str(b, targets[c->target]);
    hist_jt_key(b, false, "result");
    hist_jt_str(b, results[c->result]);
    switch (c->target) {
    case KVC_CMP_VALUE:
        hist_jt_key(b, false, "value");
        nul |= jt_bytes(b, c->value);
        break;
    case KVC_CMP_VERSION:
        jt_int_member(b, "version", c->number);
        break;
    case KVC_CMP_CREATE:
        jt_int_member(b, "create_revision", c->number);
        break;
    case KVC_CMP_MOD:
        jt_int_member(b, "mod_revision", c->number);
        break;
    case KVC_CMP_LEASE:
        jt_int_member(b, "lease", c->number);
        break;
    }
    jt_char(b, '}');
    return nul;
}

bool run_request_text(struct fl_buf *b, const struct kvc_request *req)
{
    switch (req->method) {
    case KVC_RANGE:
    case KVC_PUT:
    case KVC_DELETE:
        return op_request_text(b, &req->op);
    case KVC_TXN: {
        bool nul = false;
        JT_LIT(b, "{\"compare\":[");
        for (size_t i = 0; i < req->cmp_count; i++) {
            if (i)
                jt_char(b, ',');
            nul |= cmp_text(b, &req->cmps[i]);
        }
        jt_char(b, ']');
        hist_jt_key(b, false, "success");
        nul |= sub_list_text(b, req->then_ops, req->then_count);
        hist_jt_key(b, false, "failure");
        nul |= sub_list_text(b, req->else_ops, req->else_count);
        jt_char(b, '}');
        return nul;
    }
    case KVC_COMPACT:
        jt_char(b, '{');
        hist_jt_key(b, true, "revision");
        hist_jt_int(b, req->revision);
        jt_char(b, '}');
        return false;
    default:
        jt_char(b, '{');
        hist_jt_key(b, true, "method");
        hist_jt_str(b, kvc_method_name(req->method));
        jt_int_opt(b, "lease_id", req->lease_id);
        jt_int_opt(b, "ttl", req->ttl_s);
        jt_int_opt(b, "member_id", (int64_t)req->member_id);
        jt_char(b, '}');
        return false;
    }
}

/* "name":[kv,...]; true when a key or value held a NUL (kv_text). */
static bool kvs_member(struct fl_buf *b, bool first, const char *name, const struct kvc_kv *kvs,
                       size_t n)
{
    bool nul = false;
    hist_jt_key(b, first, name);
    jt_char(b, '[');
    for (size_t i = 0; i < n; i++) {
        if (i)
            jt_char(b, ',');
        nul |= kv_text(b, &kvs[i]);
    }
    jt_char(b, ']');
    return nul;
}

/* The members of an op result's object, after `first` (the caller writes the braces:
 * a range/put/delete response merges them into the object that holds "header"). */
static bool op_result_members(struct fl_buf *b, const struct kvc_op_result *r, bool first)
{
    bool nul = false;
    if (r->kind == KVC_OP_RANGE) {
        nul |= kvs_member(b, first, "kvs", r->kvs, r->kv_count);
        jt_int_member(b, "count", r->count);
    } else if (r->kind == KVC_OP_PUT) {
        if (r->has_prev_kv) {
            hist_jt_key(b, first, "prev_kv");
            nul |= kv_text(b, &r->prev_kv);
        }
    } else {
        hist_jt_key(b, first, "deleted");
        hist_jt_int(b, r->deleted);
        if (r->prev_kv_count) {
            nul |= kvs_member(b, false, "prev_kvs", r->prev_kvs, r->prev_kv_count);
        }
    }
    return nul;
}

bool run_response_text(struct fl_buf *b, const struct kvc_request *req,
                       const struct kvc_result *res)
{
    bool nul = false;
    JT_LIT(b, "{\"header\":{\"revision\":");
    hist_jt_int(b, res->header.revision);
    jt_int_member(b, "raft_term", (int64_t)res->header.raft_term);
    jt_char(b, '}');
    switch (req->method) {
    case KVC_RANGE:
    case KVC_PUT:
    case KVC_DELETE:
        nul = op_result_members(b, &res->op, false);
        break;
    case KVC_TXN:
        hist_jt_key(b, false, "succeeded");
        if (res->succeeded)
            JT_LIT(b, "true");
        else
            JT_LIT(b, "false");
        hist_jt_key(b, false, "responses");
        jt_char(b, '[');
        for (size_t i = 0; i < res->op_count; i++) {
            if (i)
                jt_char(b, ',');
            jt_char(b, '{');
            hist_jt_key(b, true, sub_name(res->ops[i].kind));
            jt_char(b, '{');
            nul |= op_result_members(b, &res->ops[i], true);
            jt_char(b, '}');
            jt_char(b, '}');
        }
        jt_char(b, ']');
        break;
    case KVC_LEASE_GRANT:
    case KVC_LEASE_KEEPALIVE:
    case KVC_LEASE_TTL:
        jt_int_member(b, "lease_id", res->lease_id);
        jt_int_member(b, "ttl", res->ttl_s);
        break;
    default:
        break;
    }
    jt_char(b, '}');
    return nul;
}

static char *dump(json_t *j)
{
    char *s = json_dumps(j, JSON_COMPACT | JSON_ENSURE_ASCII);
    json_decref(j);
    return s;
}

static const char *op_kind(const struct kvc_request *req)
{
    if (req->method == KVC_RANGE)
        return req->op.range_end.n ? "range" : "get";
    return kvc_method_name(req->method);
}

/* The single-key columns (value, revisions) of a get or a put. */
static void fill_columns(struct hist_op *op, const struct kvc_request *req,
                         const struct kvc_result *res)
{
    if (req->method == KVC_PUT) {
        op->value = req->op.value.p ? (const void *)req->op.value.p : "";
        op->value_len = req->op.value.n;
        if (res->status == KVC_OK)
            op->mod_rev = res->header.revision;
    } else if (req->method == KVC_RANGE && !req->op.range_end.n && res->status == KVC_OK) {
        if (res->op.kv_count) {
            const struct kvc_kv *kv = &res->op.kvs[0];
            op->value = kv->value.p ? (const void *)kv->value.p : "";
            op->value_len = kv->value.n;
            op->mod_rev = kv->mod_rev;
            op->create_rev = kv->create_rev;
            op->version = kv->version;
        }
    } else if (req->method == KVC_DELETE && res->status == KVC_OK) {
        op->deleted = res->op.deleted;
    } else if (req->method == KVC_TXN && res->status == KVC_OK) {
        op->succeeded = res->succeeded;
    }
}

static bool is_write(const struct kvc_request *req)
{
    return req->method == KVC_PUT || req->method == KVC_DELETE || req->method == KVC_TXN;
}

/* Writes the row and hands it to the mirror (run_mirror.c). */
static void mirror_op(struct run_world *rw, const struct hist_op *op, const struct kvc_request *req,
                      const struct kvc_result *res, bool nul)
{
    int64_t op_id = 0;
    if (hist_op_add(rw->db, op, &op_id) == FL_OK)
        run_mirror_op(rw, op_id, op, req, res, nul);
    else
        run_mirror_break(rw);
}

/* A system op (client 0) that member ev->node did at ev->at_ns, done at once: its
 * request rq and response rs (JSON, taken), at revision. */
static void record_system_op(struct run_world *rw, const struct srv_event *ev, const char *kind,
                             json_t *rq, json_t *rs, int64_t revision)
{
    char *rq_text = dump(rq), *rs_text = dump(rs);
    struct hist_op op;
    hist_op_init(&op);
    op.client_id = 0;
    op.node_id = ev->node;
    op.kind = kind;
    op.request = rq_text;
    op.response = rs_text;
    op.call_ns = ev->at_ns;
    op.return_ns = ev->at_ns;
    op.status = HIST_STATUS_OK;
    op.revision = revision;
    mirror_op(rw, &op, NULL, NULL, false);
    free(rq_text);
    free(rs_text);
}

static void on_op_done(void *ud, const struct kvc_client *c, const struct kvc_request *req,
                       const struct kvc_result *res)
{
    struct run_world *rw = ud;
    rw->sum.ops_total++;
    rw->sum.ops_ok += res->status == KVC_OK;
    rw->sum.ops_fail += res->status == KVC_FAIL;
    rw->sum.ops_unknown += res->status == KVC_UNKNOWN;
    if (res->status == KVC_OK && is_write(req) && res->header.revision > rw->sum.last_commit_rev) {
        rw->sum.last_commit_rev = res->header.revision;
        struct kvc_bytes key = req->method == KVC_TXN ? (struct kvc_bytes){0} : req->op.key;
        for (int i = 0; i < rw->n_clients; i++)
            if (rw->clients[i].c && !rw->clients[i].closed)
                kvc_client_note_commit(rw->clients[i].c, res->header.revision, key, res->return_ns);
    }
    if (!rw->db)
        return;
    struct hist_op op;
    hist_op_init(&op);
    op.client_id = kvc_client_id(c);
    op.node_id = res->node ? res->node : HIST_NULL;
    op.kind = op_kind(req);
    if (req->method == KVC_RANGE || req->method == KVC_PUT || req->method == KVC_DELETE) {
        op.key = req->op.key.p ? (const void *)req->op.key.p : "";
        op.key_len = req->op.key.n;
        if (req->op.range_end.n) {
            op.range_end = req->op.range_end.p;
            op.range_end_len = req->op.range_end.n;
        }
    }
    fl_buf_reset(&rw->rec.request);
    fl_buf_reset(&rw->rec.response);
    bool nul = run_request_text(&rw->rec.request, req);
    op.request = fl_buf_cstr(&rw->rec.request);
    if (res->status == KVC_OK) {
        nul |= run_response_text(&rw->rec.response, req, res);
        op.response = fl_buf_cstr(&rw->rec.response);
    }
    op.call_ns = res->call_ns;
    op.return_ns = res->status == KVC_UNKNOWN && !res->answered ? HIST_NULL : res->return_ns;
    op.status = res->status == KVC_OK     ? HIST_STATUS_OK
                : res->status == KVC_FAIL ? HIST_STATUS_FAIL
                                          : HIST_STATUS_UNKNOWN;
    op.error = res->error && res->error[0] ? res->error : NULL;
    op.revision = res->status == KVC_OK && res->header.revision ? res->header.revision : HIST_NULL;
    fill_columns(&op, req, res);
    mirror_op(rw, &op, req, res, nul);
}

/* Lease expiries: etcd deletes a lease's keys through Raft when it expires, with no
 * client call behind it. The history gets them as system ops (client 0, kind
 * "lease_revoke", request {"lease_id", "keys", "system": true}, response header revision =
 * the revision of the deletes), so the checkers know about those deletes. Every
 * member reports the expiry when it applies it (and again after a restart replays
 * its log); the first report is the one recorded, at its time (call = return: the
 * moment the first member applied it). The clients' watch lag clocks learn of the
 * revision too. */
void run_record_lease_end(struct run_world *rw, const struct srv_event *ev)
{
    for (size_t i = 0; i < rw->rec.n_lease_ends; i++)
        if (rw->rec.lease_ends[i][0] == ev->lease_id && rw->rec.lease_ends[i][1] == ev->revision)
            return;
    FL_GROW(rw->rec.lease_ends, rw->rec.cap_lease_ends, rw->rec.n_lease_ends + 1, 16);
    rw->rec.lease_ends[rw->rec.n_lease_ends][0] = ev->lease_id;
    rw->rec.lease_ends[rw->rec.n_lease_ends][1] = ev->revision;
    rw->rec.n_lease_ends++;
    if (ev->n_keys && ev->revision > rw->sum.last_commit_rev) {
        rw->sum.last_commit_rev = ev->revision;
        for (int i = 0; i < rw->n_clients; i++)
            if (rw->clients[i].c && !rw->clients[i].closed)
                kvc_client_note_commit(rw->clients[i].c, ev->revision, (struct kvc_bytes){0},
                                       ev->at_ns);
    }
    if (!rw->db)
        return;
    json_t *rq = json_object(), *keys = json_array();
    json_object_set_new(rq, "lease_id", json_integer(ev->lease_id));
    for (size_t i = 0; i < ev->n_keys; i++)
        json_array_append_new(
            keys,
            hist_json_bytes(ev->keys[i].p ? ev->keys[i].p : (const uint8_t *)"", ev->keys[i].n));
    json_object_set_new(rq, "keys", keys);
    json_object_set_new(rq, "system", json_true());
    json_t *rs = json_object(), *hdr = json_object();
    json_object_set_new(hdr, "revision", json_integer(ev->revision));
    json_object_set_new(rs, "header", hdr);
    /* checkers.h: a system revoke (client 0, "system") */
    record_system_op(rw, ev, "lease_revoke", rq, rs, ev->revision);
}

/* Compactions: a scenario's compact() goes through the cluster's control path and
 * auto-compaction through Raft, neither through a recorded client call, yet a client
 * read below the compacted revision fails with "required revision has been
 * compacted". The history gets each compaction once as a system op (client 0, kind
 * "compact", request {"revision", "system"}, response header revision = the store's
 * revision then), at the time the first member applied it, so the checkers can hold
 * such errors against the compactions that explain them. */
void run_record_compact(struct run_world *rw, const struct srv_event *ev)
{
    for (size_t i = 0; i < rw->rec.n_compactions; i++)
        if (rw->rec.compactions[i] == ev->revision)
            return;
    FL_GROW(rw->rec.compactions, rw->rec.cap_compactions, rw->rec.n_compactions + 1, 16);
    rw->rec.compactions[rw->rec.n_compactions++] = ev->revision;
    if (!rw->db)
        return;
    json_t *rq = json_object(), *rs = json_object(), *hdr = json_object();
    json_object_set_new(rq, "revision", json_integer(ev->revision));
    json_object_set_new(rq, "system", json_true());
    json_object_set_new(hdr, "revision", json_integer(ev->store_rev));
    json_object_set_new(rs, "header", hdr);
    record_system_op(rw, ev, "compact", rq, rs, ev->store_rev);
}

/* Watch ids are per client; the history needs them unique in the run. */
static int64_t run_watch_id(const struct kvc_client *c, uint64_t id)
{
    return (int64_t)kvc_client_id(c) * 1000000 + (int64_t)id;
}

static void on_watch_open(void *ud, const struct kvc_client *c, uint64_t watch_id,
                          const struct kvc_watch_req *req, int64_t opened_ns)
{
    struct run_world *rw = ud;
    if (!rw->db)
        return;
    struct hist_watch hw;
    hist_watch_init(&hw);
    hw.watch_id = run_watch_id(c, watch_id);
    hw.client_id = kvc_client_id(c);
    hw.key = req->key.p ? (const void *)req->key.p : "";
    hw.key_len = req->key.n;
    if (req->range_end.n) {
        hw.range_end = req->range_end.p;
        hw.range_end_len = req->range_end.n;
    }
    hw.start_rev = req->start_rev;
    hw.opened_ns = opened_ns;
    hw.prev_kv = req->prev_kv;
    hw.progress_notify = req->progress_notify;
    hw.filters = req->no_put      ? (req->no_delete ? "noput,nodelete" : "noput")
                 : req->no_delete ? "nodelete"
                                  : NULL;
    if (hist_watch_open(rw->db, &hw) == FL_OK)
        run_mirror_watch_open(rw, &hw);
    else
        run_mirror_break(rw);
}

static void watch_event_add(struct run_world *rw, const struct hist_watch_event *ev)
{
    if (hist_watch_event_add(rw->db, ev) == FL_OK)
        run_mirror_event(rw, ev);
    else
        run_mirror_break(rw);
}

static void add_event(struct run_world *rw, int64_t wid, const struct kvc_watch_resp *r,
                      const struct kvc_event *e)
{
    struct hist_watch_event ev;
    hist_watch_event_init(&ev);
    ev.watch_id = wid;
    ev.response_seq = r->response_seq;
    ev.kind = e->kind == KVC_EV_PUT ? "put" : "delete";
    ev.key = e->kv.key.p ? (const void *)e->kv.key.p : "";
    ev.key_len = e->kv.key.n;
    if (e->kind == KVC_EV_PUT) {
        ev.value = e->kv.value.p ? (const void *)e->kv.value.p : "";
        ev.value_len = e->kv.value.n;
        ev.create_rev = e->kv.create_rev;
        ev.version = e->kv.version;
    }
    ev.mod_rev = e->kv.mod_rev;
    ev.prev_kv = e->has_prev_kv;
    if (e->has_prev_kv && e->prev_kv.key.n) {
        ev.prev_value = e->prev_kv.value.p ? (const void *)e->prev_kv.value.p : "";
        ev.prev_value_len = e->prev_kv.value.n;
        ev.prev_mod_rev = e->prev_kv.mod_rev;
    }
    ev.revision = r->header.revision;
    ev.delivered_ns = r->delivered_ns;
    watch_event_add(rw, &ev);
}

static void on_watch_resp(void *ud, const struct kvc_client *c, const struct kvc_watch_resp *r)
{
    struct run_world *rw = ud;
    if (!rw->db)
        return;
    int64_t wid = run_watch_id(c, r->watch_id);
    for (size_t i = 0; i < r->event_count; i++)
        add_event(rw, wid, r, &r->events[i]);
    if (r->progress && !r->event_count && !r->canceled) {
        struct hist_watch_event ev;
        hist_watch_event_init(&ev);
        ev.watch_id = wid;
        ev.response_seq = r->response_seq;
        ev.kind = "progress";
        ev.mod_rev = r->header.revision;
        ev.revision = r->header.revision;
        ev.delivered_ns = r->delivered_ns;
        watch_event_add(rw, &ev);
    }
}

static void on_watch_close(void *ud, const struct kvc_client *c, uint64_t watch_id,
                           int64_t closed_ns, const char *reason)
{
    struct run_world *rw = ud;
    if (!rw->db)
        return;
    int64_t wid = run_watch_id(c, watch_id);
    if (hist_watch_close(rw->db, wid, closed_ns, reason) == FL_OK)
        run_mirror_watch_close(rw, wid, closed_ns);
    else
        run_mirror_break(rw);
}

void run_observer_init(struct run_world *rw, struct kvc_observer *obs)
{
    obs->ud = rw;
    obs->op_done = on_op_done;
    obs->watch_open = on_watch_open;
    obs->watch_resp = on_watch_resp;
    obs->watch_close = on_watch_close;
}
