/*
 * mvcc_txn.c: Txn, etcd style. Three passes so an error never leaves a half-applied
 * transaction behind:
 *  1. shape checks on the whole request (keys given, ops per branch, and the
 *     duplicate-key rule: within one branch no key is put twice and no put falls in
 *     a deleted range, nested txns included; their two branches may overlap each
 *     other since only one runs);
 *  2. every compare on the path that will run is evaluated against the state before
 *     the txn (as etcd does), fixing the branch of each nested txn;
 *  3. the ops on that path are checked against the current state (lease exists,
 *     read revisions not compacted or future), then executed as one write txn.
 */
#include "nodes/mvcc/mvcc_int.h"

/* Txns nest; a bound keeps the recursion (and a hostile request) small. */
#define TXN_DEPTH_MAX 16

/* ---------------------------------------------------------------- pass 1 */

struct span {
    const uint8_t *key, *end;
    size_t key_len, end_len;
};
struct span_vec {
    struct span *v;
    size_t len, cap;
};

static void span_push(struct span_vec *sv, const uint8_t *k, size_t kn, const uint8_t *e, size_t en)
{
    FL_GROW(sv->v, sv->cap, sv->len + 1, 8);
    sv->v[sv->len++] = (struct span){k, e, kn, en};
}

static bool put_in_puts(const struct span_vec *puts, const struct span *p)
{
    for (size_t i = 0; i < puts->len; i++)
        if (mvcc__bytes_cmp(puts->v[i].key, puts->v[i].key_len, p->key, p->key_len) == 0)
            return true;
    return false;
}

static bool put_in_dels(const struct span_vec *dels, const struct span *p)
{
    for (size_t i = 0; i < dels->len; i++)
        if (mvcc__in_range(p->key, p->key_len, dels->v[i].key, dels->v[i].key_len, dels->v[i].end,
                           dels->v[i].end_len))
            return true;
    return false;
}

static enum mvcc_err check_branch(const struct mvcc_store *s, const struct mvcc_op *ops, size_t n,
                                  int depth, struct span_vec *puts, struct span_vec *dels);

/* Adds a nested txn's writes (union of its branches) to the parent's sets. */
static enum mvcc_err check_nested(const struct mvcc_store *s, const struct mvcc_txn_req *t,
                                  int depth, struct span_vec *puts, struct span_vec *dels)
{
    struct span_vec p1 = {0}, d1 = {0}, p2 = {0}, d2 = {0};
    enum mvcc_err err = check_branch(s, t->success, t->success_len, depth + 1, &p1, &d1);
    if (!err)
        err = check_branch(s, t->failure, t->failure_len, depth + 1, &p2, &d2);
    if (!err && s->cfg.max_txn_ops > 0 && (int64_t)t->compares_len > s->cfg.max_txn_ops)
        err = MVCC_ERR_TOO_MANY_OPS;
    /* The nested writes may not touch what the parent branch writes. */
    for (size_t i = 0; !err && i < p2.len; i++)
        if (!put_in_puts(&p1, &p2.v[i]))
            span_push(&p1, p2.v[i].key, p2.v[i].key_len, NULL, 0);
    for (size_t i = 0; !err && i < d2.len; i++)
        span_push(&d1, d2.v[i].key, d2.v[i].key_len, d2.v[i].end, d2.v[i].end_len);
    for (size_t i = 0; !err && i < p1.len; i++)
        if (put_in_puts(puts, &p1.v[i]) || put_in_dels(dels, &p1.v[i]))
            err = MVCC_ERR_DUPLICATE_KEY;
    for (size_t i = 0; !err && i < puts->len; i++)
        if (put_in_dels(&d1, &puts->v[i]))
            err = MVCC_ERR_DUPLICATE_KEY;
    for (size_t i = 0; !err && i < p1.len; i++)
        span_push(puts, p1.v[i].key, p1.v[i].key_len, NULL, 0);
    for (size_t i = 0; !err && i < d1.len; i++)
        span_push(dels, d1.v[i].key, d1.v[i].key_len, d1.v[i].end, d1.v[i].end_len);
    free(p1.v);
    free(d1.v);
    free(p2.v);
    free(d2.v);
    return err;
}

static enum mvcc_err check_branch(const struct mvcc_store *s, const struct mvcc_op *ops, size_t n,
                                  int depth, struct span_vec *puts, struct span_vec *dels)
{
    if (depth > TXN_DEPTH_MAX)
        return MVCC_ERR_INVALID;
    if (s->cfg.max_txn_ops > 0 && (int64_t)n > s->cfg.max_txn_ops)
        return MVCC_ERR_TOO_MANY_OPS;
    /* Own puts and deletes first, then nested txns against them. */
    for (size_t i = 0; i < n; i++) {
        const struct mvcc_op *op = &ops[i];
        if (op->kind == MVCC_OP_RANGE && op->u.range.key_len == 0)
            return MVCC_ERR_KEY_NOT_GIVEN;
        if (op->kind == MVCC_OP_DELETE) {
            if (op->u.del.key_len == 0)
                return MVCC_ERR_KEY_NOT_GIVEN;
            span_push(dels, op->u.del.key, op->u.del.key_len, op->u.del.range_end,
                      op->u.del.range_end_len);
        }
        if (op->kind == MVCC_OP_PUT) {
            if (op->u.put.key_len == 0)
                return MVCC_ERR_KEY_NOT_GIVEN;
            struct span p = {op->u.put.key, NULL, op->u.put.key_len, 0};
            if (put_in_puts(puts, &p))
                return MVCC_ERR_DUPLICATE_KEY;
            span_push(puts, p.key, p.key_len, NULL, 0);
        }
        if (op->kind == MVCC_OP_TXN && !op->u.txn)
            return MVCC_ERR_INVALID;
    }
    for (size_t i = 0; i < puts->len; i++)
        if (put_in_dels(dels, &puts->v[i]))
            return MVCC_ERR_DUPLICATE_KEY;
    for (size_t i = 0; i < n; i++) {
        if (ops[i].kind != MVCC_OP_TXN)
            continue;
        enum mvcc_err err = check_nested(s, ops[i].u.txn, depth, puts, dels);
        if (err)
            return err;
    }
    return MVCC_OK;
}

/* ---------------------------------------------------------------- pass 2 */

static bool cmp_int(enum mvcc_cmp_op op, int64_t have, int64_t want)
{
    switch (op) {
    case MVCC_CMP_EQUAL:
        return have == want;
    case MVCC_CMP_NOT_EQUAL:
        return have != want;
    case MVCC_CMP_GREATER:
        return have > want;
    case MVCC_CMP_LESS:
        return have < want;
    }
    return false;
}

/* One key against one compare; r NULL = the key does not exist. */
static bool compare_one(const struct mvcc_compare *c, const struct mvcc_rev *r)
{
    switch (c->target) {
    case MVCC_CMP_VERSION:
        return cmp_int(c->op, r ? r->version : 0, c->number);
    case MVCC_CMP_CREATE:
        return cmp_int(c->op, r ? r->create_rev : 0, c->number);
    case MVCC_CMP_MOD:
        return cmp_int(c->op, r ? r->mod_rev : 0, c->number);
    case MVCC_CMP_LEASE:
        return cmp_int(c->op, r ? r->lease : 0, c->number);
    case MVCC_CMP_VALUE: {
        if (!r)
            return false; /* etcd: a value compare on a missing key fails */
        int v = mvcc__bytes_cmp(r->val, r->val_len, c->value, c->value_len);
        return cmp_int(c->op, v, 0);
    }
    }
    return false;
}

static bool compare_holds(struct mvcc_store *s, const struct mvcc_compare *c)
{
    if (c->range_end_len == 0) {
        const struct mvcc_key *k = mvcc__key_find(s, c->key, c->key_len);
        const struct mvcc_rev *r = NULL;
        if (k && k->revs_len && !mvcc__rev_is_tomb(&k->revs[k->revs_len - 1]))
            r = &k->revs[k->revs_len - 1];
        return compare_one(c, r);
    }
    mvcc__index_sort(s);
    bool any = false;
    for (size_t i = mvcc__index_lower(s, c->key, c->key_len); i < s->keys_len; i++) {
        const struct mvcc_key *k = s->keys[i];
        if (!mvcc__in_range(k->key, k->key_len, c->key, c->key_len, c->range_end, c->range_end_len))
            break;
        const struct mvcc_rev *r = &k->revs[k->revs_len - 1];
        if (mvcc__rev_is_tomb(r))
            continue;
        any = true;
        if (!compare_one(c, r))
            return false;
    }
    return any || compare_one(c, NULL);
}

/* Decisions of every txn on the path, in pre-order of execution. */
struct path {
    bool *v;
    size_t len, cap;
};

static void path_push(struct path *p, bool b)
{
    FL_GROW(p->v, p->cap, p->len + 1, 8);
    p->v[p->len++] = b;
}

/* Evaluates the txn's compares, records the decision, descends into the chosen
 * branch, and checks its ops against the pre-txn state (pass 3's validation). */
static enum mvcc_err plan(struct mvcc_store *s, const struct mvcc_txn_req *t, struct path *p)
{
    bool ok = true;
    for (size_t i = 0; ok && i < t->compares_len; i++)
        ok = compare_holds(s, &t->compares[i]);
    path_push(p, ok);
    const struct mvcc_op *ops = ok ? t->success : t->failure;
    size_t n = ok ? t->success_len : t->failure_len;
    for (size_t i = 0; i < n; i++) {
        enum mvcc_err err = MVCC_OK;
        if (ops[i].kind == MVCC_OP_RANGE)
            err = mvcc__check_range(s, &ops[i].u.range);
        else if (ops[i].kind == MVCC_OP_PUT)
            err = mvcc__check_put(s, &ops[i].u.put);
        else if (ops[i].kind == MVCC_OP_TXN)
            err = plan(s, ops[i].u.txn, p);
        if (err)
            return err;
    }
    return MVCC_OK;
}

/* ---------------------------------------------------------------- pass 3 */

static void run(struct mvcc_store *s, const struct mvcc_txn_req *t, const struct path *p,
                size_t *pi, struct mvcc_txn_result *out)
{
    FL_ASSERT(*pi < p->len);
    bool ok = p->v[(*pi)++];
    const struct mvcc_op *ops = ok ? t->success : t->failure;
    size_t n = ok ? t->success_len : t->failure_len;
    out->succeeded = ok;
    out->results = n ? fl_calloc(n, sizeof(*out->results)) : NULL;
    out->results_len = n;
    for (size_t i = 0; i < n; i++) {
        struct mvcc_op_result *r = &out->results[i];
        r->kind = ops[i].kind;
        switch (ops[i].kind) {
        case MVCC_OP_RANGE: {
            /* Reads see the txn's own earlier writes (etcd's txn read-your-writes). */
            int64_t cur = s->write_sub ? s->write_rev : s->current_rev;
            int64_t rev = ops[i].u.range.revision ? ops[i].u.range.revision : cur;
            mvcc__range_at(s, &ops[i].u.range, rev, &r->u.range);
            break;
        }
        case MVCC_OP_PUT:
            mvcc__write_put(s, &ops[i].u.put, &r->u.put);
            break;
        case MVCC_OP_DELETE:
            mvcc__write_delete(s, &ops[i].u.del, &r->u.del);
            break;
        case MVCC_OP_TXN:
            r->u.txn = fl_calloc(1, sizeof(*r->u.txn));
            run(s, ops[i].u.txn, p, pi, r->u.txn);
            break;
        }
    }
}

static void set_headers(struct mvcc_txn_result *out, int64_t rev)
{
    out->header_rev = rev;
    for (size_t i = 0; i < out->results_len; i++) {
        struct mvcc_op_result *r = &out->results[i];
        if (r->kind == MVCC_OP_RANGE)
            r->u.range.header_rev = rev;
        else if (r->kind == MVCC_OP_PUT)
            r->u.put.header_rev = rev;
        else if (r->kind == MVCC_OP_DELETE)
            r->u.del.header_rev = rev;
        else
            set_headers(r->u.txn, rev);
    }
}

enum mvcc_err mvcc_txn(struct mvcc_store *s, const struct mvcc_txn_req *req,
                       struct mvcc_txn_result *out)
{
    memset(out, 0, sizeof(*out));
    FL_ASSERT(!s->in_write);
    if (s->cfg.max_txn_ops > 0 && (int64_t)req->compares_len > s->cfg.max_txn_ops)
        return MVCC_ERR_TOO_MANY_OPS;
    struct span_vec puts = {0}, dels = {0};
    enum mvcc_err err = check_branch(s, req->success, req->success_len, 0, &puts, &dels);
    puts.len = dels.len = 0;
    if (!err)
        err = check_branch(s, req->failure, req->failure_len, 0, &puts, &dels);
    free(puts.v);
    free(dels.v);
    for (size_t i = 0; !err && i < req->compares_len; i++)
        if (req->compares[i].key_len == 0)
            err = MVCC_ERR_KEY_NOT_GIVEN;
    if (err)
        return err;
    struct path p = {0};
    err = plan(s, req, &p);
    if (!err) {
        size_t pi = 0;
        mvcc__write_begin(s);
        run(s, req, &p, &pi, out);
        FL_ASSERT(pi == p.len);
        set_headers(out, mvcc__write_end(s));
    }
    free(p.v);
    return err;
}

void mvcc_txn_result_free(struct mvcc_txn_result *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->results_len; i++) {
        struct mvcc_op_result *o = &r->results[i];
        if (o->kind == MVCC_OP_RANGE)
            mvcc_range_result_free(&o->u.range);
        else if (o->kind == MVCC_OP_DELETE)
            mvcc_delete_result_free(&o->u.del);
        else if (o->kind == MVCC_OP_TXN) {
            mvcc_txn_result_free(o->u.txn);
            free(o->u.txn);
        }
    }
    free(r->results);
    r->results = NULL;
    r->results_len = 0;
}
