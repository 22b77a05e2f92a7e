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

static json_t *op_result_json(const struct kvc_op_result *r)
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
        json_t *o = op_result_json(&res->op);
        json_object_update(j, o);
        json_decref(o);
        break;
    }
    case KVC_TXN: {
        json_object_set_new(j, "succeeded", json_boolean(res->succeeded));
        json_t *a = json_array();
        for (size_t i = 0; i < res->op_count; i++) {
            json_t *s = json_object();
            json_object_set_new(s, sub_name(res->ops[i].kind), op_result_json(&res->ops[i]));
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

static void on_op_done(void *ud, const struct kvc_client *c, const struct kvc_request *req,
                       const struct kvc_result *res)
{
    struct run_world *rw = ud;
    rw->ops_total++;
    rw->ops_ok += res->status == KVC_OK;
    rw->ops_fail += res->status == KVC_FAIL;
    rw->ops_unknown += res->status == KVC_UNKNOWN;
    if (res->status == KVC_OK && is_write(req) && res->header.revision > rw->last_commit_rev) {
        rw->last_commit_rev = res->header.revision;
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
    char *rq = dump(request_json(req));
    char *rs = res->status == KVC_OK ? dump(response_json(req, res)) : NULL;
    op.request = rq;
    op.response = rs;
    op.call_ns = res->call_ns;
    op.return_ns = res->status == KVC_UNKNOWN && !res->answered ? HIST_NULL : res->return_ns;
    op.status = res->status == KVC_OK     ? HIST_STATUS_OK
                : res->status == KVC_FAIL ? HIST_STATUS_FAIL
                                          : HIST_STATUS_UNKNOWN;
    op.error = res->error && res->error[0] ? res->error : NULL;
    op.revision = res->status == KVC_OK && res->header.revision ? res->header.revision : HIST_NULL;
    fill_columns(&op, req, res);
    hist_op_add(rw->db, &op, NULL);
    free(rq);
    free(rs);
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
    for (size_t i = 0; i < rw->n_lease_ends; i++)
        if (rw->lease_ends[i][0] == ev->lease_id && rw->lease_ends[i][1] == ev->revision)
            return;
    if (rw->n_lease_ends == rw->cap_lease_ends) {
        rw->cap_lease_ends = rw->cap_lease_ends ? rw->cap_lease_ends * 2 : 16;
        rw->lease_ends = fl_realloc(rw->lease_ends, sizeof(*rw->lease_ends) * rw->cap_lease_ends);
    }
    rw->lease_ends[rw->n_lease_ends][0] = ev->lease_id;
    rw->lease_ends[rw->n_lease_ends][1] = ev->revision;
    rw->n_lease_ends++;
    if (ev->n_keys && ev->revision > rw->last_commit_rev) {
        rw->last_commit_rev = ev->revision;
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
    char *rq_text = dump(rq), *rs_text = dump(rs);
    struct hist_op op;
    hist_op_init(&op);
    op.client_id = 0;
    op.node_id = ev->node;
    op.kind = "lease_revoke"; /* checkers.h: a system revoke (client 0, "system") */
    op.request = rq_text;
    op.response = rs_text;
    op.call_ns = ev->at_ns;
    op.return_ns = ev->at_ns;
    op.status = HIST_STATUS_OK;
    op.revision = ev->revision;
    hist_op_add(rw->db, &op, NULL);
    free(rq_text);
    free(rs_text);
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
    for (size_t i = 0; i < rw->n_compactions; i++)
        if (rw->compactions[i] == ev->revision)
            return;
    if (rw->n_compactions == rw->cap_compactions) {
        rw->cap_compactions = rw->cap_compactions ? rw->cap_compactions * 2 : 16;
        rw->compactions =
            fl_realloc(rw->compactions, sizeof(*rw->compactions) * rw->cap_compactions);
    }
    rw->compactions[rw->n_compactions++] = ev->revision;
    if (!rw->db)
        return;
    json_t *rq = json_object(), *rs = json_object(), *hdr = json_object();
    json_object_set_new(rq, "revision", json_integer(ev->revision));
    json_object_set_new(rq, "system", json_true());
    json_object_set_new(hdr, "revision", json_integer(ev->store_rev));
    json_object_set_new(rs, "header", hdr);
    char *rq_text = dump(rq), *rs_text = dump(rs);
    struct hist_op op;
    hist_op_init(&op);
    op.client_id = 0;
    op.node_id = ev->node;
    op.kind = "compact";
    op.request = rq_text;
    op.response = rs_text;
    op.call_ns = ev->at_ns;
    op.return_ns = ev->at_ns;
    op.status = HIST_STATUS_OK;
    op.revision = ev->store_rev;
    hist_op_add(rw->db, &op, NULL);
    free(rq_text);
    free(rs_text);
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
    hist_watch_open(rw->db, &hw);
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
    hist_watch_event_add(rw->db, &ev);
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
        hist_watch_event_add(rw->db, &ev);
    }
}

static void on_watch_close(void *ud, const struct kvc_client *c, uint64_t watch_id,
                           int64_t closed_ns, const char *reason)
{
    struct run_world *rw = ud;
    if (rw->db)
        hist_watch_close(rw->db, run_watch_id(c, watch_id), closed_ns, reason);
}

void run_observer_init(struct run_world *rw, struct kvc_observer *obs)
{
    obs->ud = rw;
    obs->op_done = on_op_done;
    obs->watch_open = on_watch_open;
    obs->watch_resp = on_watch_resp;
    obs->watch_close = on_watch_close;
}
