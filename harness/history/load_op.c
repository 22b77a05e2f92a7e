/*
 * load_op.c: one operation's request/response JSON (the shapes documented in
 * checkers/checkers.h) into a checker transaction: compares, then/else
 * sub-operations and their results. Shared by the database and JSON-lines loaders.
 * A flat shape is accepted too: a get may carry "value", "mod_rev", "create_rev",
 * "version" instead of "kvs", a delete "deleted", a cas "expect" and "succeeded".
 */
#include "harness/history/history.h"
#include "harness/history/load_int.h"

#include <errno.h>
#include <sys/stat.h>

/* history.h's convention (hist_json_bytes_get: null, a string, or {"hex":"..."}), and
 * integers tolerated as their decimal text. */
int ld_bytes(const json_t *j, struct fl_buf *out, bool *is_null)
{
    if (json_is_integer(j)) {
        fl_buf_reset(out);
        *is_null = false;
        fl_buf_printf(out, "%lld", (long long)json_integer_value(j));
        return FL_OK;
    }
    return hist_json_bytes_get(j, out, is_null);
}

int ld_error_kind(const char *error)
{
    if (!error || !*error)
        return CHK_ERR_NONE;
    if (strstr(error, "required revision has been compacted"))
        return CHK_ERR_COMPACTED;
    if (strstr(error, "future revision"))
        return CHK_ERR_FUTURE_REV;
    return CHK_ERR_OTHER;
}

int ld_read_file(const char *path, char **data, size_t *len, struct fl_buf *err)
{
    struct stat sb;
    *data = NULL;
    *len = 0;
    if (stat(path, &sb) != 0) {
        fl_buf_printf(err, "%s: no such file", path);
        return FL_ENOENT;
    }
    if (S_ISDIR(sb.st_mode)) {
        fl_buf_printf(err, "%s: not a regular file (a directory)", path);
        return FL_EINVAL;
    }
    FILE *f = fopen(path, "rb");
    if (!f) {
        fl_buf_printf(err, "%s: cannot be read (%s)", path, strerror(errno));
        return FL_EIO;
    }
    /* Read to the end whatever size the OS reports: /proc files say 0, pipes have none. */
    size_t cap = S_ISREG(sb.st_mode) && sb.st_size > 0 ? (size_t)sb.st_size + 1 : 65536, n = 0;
    char *buf = fl_malloc(cap);
    for (;;) {
        n += fread(buf + n, 1, cap - 1 - n, f);
        if (n < cap - 1 || feof(f) || ferror(f))
            break;
        FL_GROW(buf, cap, cap + 1, 65536); /* doubles cap */
    }
    bool bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        fl_buf_printf(err, "%s: read error", path);
        return FL_EIO;
    }
    buf[n] = 0;
    *data = buf;
    *len = n;
    return FL_OK;
}

/* ---- building ------------------------------------------------------------------ */

struct bctx {
    struct chk_history *h;
    struct fl_buf b;
    char *err;
    size_t err_size;
};

static bool geti(const json_t *o, const char *name, int64_t *out)
{
    const json_t *j = o ? json_object_get(o, name) : NULL;
    if (!j || !json_is_integer(j))
        return false;
    *out = json_integer_value(j);
    return true;
}

static int64_t geti_or(const json_t *o, const char *a, const char *b, int64_t dflt)
{
    int64_t v;
    if (geti(o, a, &v) || (b && geti(o, b, &v)))
        return v;
    return dflt;
}

/* Interns the key named name; -1 (and an error) when missing/bad, -2 when absent and
 * optional. */
static int32_t get_key(struct bctx *c, const json_t *o, const char *name, bool optional)
{
    const json_t *j = o ? json_object_get(o, name) : NULL;
    bool is_null;
    if (!j || json_is_null(j)) {
        if (optional)
            return -2;
        snprintf(c->err, c->err_size, "missing \"%s\"", name);
        return -1;
    }
    if (ld_bytes(j, &c->b, &is_null)) {
        snprintf(c->err, c->err_size, "bad bytes in \"%s\"", name);
        return -1;
    }
    return chk_history_key(c->h, c->b.data ? (const char *)c->b.data : "", c->b.len);
}

/* Value id; *present false when the field is missing. */
static int get_value(struct bctx *c, const json_t *o, const char *name, int32_t *out, bool *present)
{
    const json_t *j = o ? json_object_get(o, name) : NULL;
    *present = j != NULL;
    *out = CHK_NIL;
    if (!j)
        return 0;
    bool is_null;
    if (ld_bytes(j, &c->b, &is_null)) {
        snprintf(c->err, c->err_size, "bad bytes in \"%s\"", name);
        return -1;
    }
    *out = is_null ? CHK_NIL
                   : chk_history_value(c->h, c->b.data ? (const char *)c->b.data : "", c->b.len);
    return 0;
}

static int32_t get_range_end(struct bctx *c, const json_t *o)
{
    const json_t *j = o ? json_object_get(o, "range_end") : NULL;
    if (!j || json_is_null(j))
        return CHK_RANGE_ONE;
    bool is_null;
    if (ld_bytes(j, &c->b, &is_null))
        return -10;
    if (c->b.len == 1 && c->b.data[0] == 0)
        return CHK_RANGE_ALL;
    return chk_history_key(c->h, (const char *)c->b.data, c->b.len);
}

static int add_kv(struct bctx *c, const json_t *kvj)
{
    int32_t key = get_key(c, kvj, "key", false);
    if (key < 0)
        return -1;
    int32_t v;
    bool present;
    if (get_value(c, kvj, "value", &v, &present))
        return -1;
    int64_t cr = geti_or(kvj, "create_revision", "create_rev", CHK_NO_REV);
    int64_t mr = geti_or(kvj, "mod_revision", "mod_rev", CHK_NO_REV);
    int64_t ver = geti_or(kvj, "version", NULL, CHK_NO_REV);
    if ((cr < 0 && cr != CHK_NO_REV) || (mr < 0 && mr != CHK_NO_REV) ||
        (ver < 0 && ver != CHK_NO_REV)) {
        snprintf(c->err, c->err_size, "negative revision or version in a key-value");
        return -1;
    }
    struct chk_kv *kv = chk_history_kv_add(c->h);
    kv->key = key;
    kv->value = v;
    kv->create_rev = cr;
    kv->mod_rev = mr;
    kv->version = ver;
    return 0;
}

static int add_kvs(struct bctx *c, const json_t *arr)
{
    size_t i;
    json_t *x;
    if (!json_is_array(arr)) {
        snprintf(c->err, c->err_size, "\"kvs\" is not an array");
        return -1;
    }
    json_array_foreach(arr, i, x)
    {
        if (add_kv(c, x))
            return -1;
    }
    return 0;
}

/* Result fields of a range: kvs/count, or the flat single-key "value". */
static int range_result(struct bctx *c, const json_t *resp, int32_t key, bool single)
{
    struct chk_sub *s = &c->h->subs[c->h->sub_count - 1];
    s->flags |= CHK_SUBF_RESULT_SET;
    const json_t *kvs = resp ? json_object_get(resp, "kvs") : NULL;
    int64_t count;
    if (kvs) {
        s->flags |= CHK_SUBF_KVS_SET;
        if (add_kvs(c, kvs))
            return -1;
    } else if (single && resp && json_object_get(resp, "value")) {
        int32_t v;
        bool present;
        if (get_value(c, resp, "value", &v, &present))
            return -1;
        s = &c->h->subs[c->h->sub_count - 1];
        s->flags |= CHK_SUBF_KVS_SET | CHK_SUBF_COUNT_SET;
        s->count = v == CHK_NIL ? 0 : 1;
        if (v != CHK_NIL) {
            struct chk_kv *kv = chk_history_kv_add(c->h);
            kv->key = key;
            kv->value = v;
            kv->create_rev = geti_or(resp, "create_rev", "create_revision", CHK_NO_REV);
            kv->mod_rev = geti_or(resp, "mod_rev", "mod_revision", CHK_NO_REV);
            kv->version = geti_or(resp, "version", NULL, CHK_NO_REV);
        }
    }
    s = &c->h->subs[c->h->sub_count - 1];
    if (geti(resp, "count", &count)) {
        if (!chk_count_fits(count)) {
            snprintf(c->err, c->err_size, "\"count\" %lld is out of range (want %d..%d)",
                     (long long)count, INT32_MIN, INT32_MAX);
            return -1;
        }
        s->count = (int32_t)count;
        s->flags |= CHK_SUBF_COUNT_SET;
    }
    return 0;
}

/* One sub-operation (kind given) with request rq and result rs (may be NULL). */
static int add_sub(struct bctx *c, int kind, const json_t *rq, const json_t *rs, bool else_branch)
{
    int32_t key = get_key(c, rq, "key", false);
    if (key < 0)
        return -1;
    int32_t end = get_range_end(c, rq);
    if (end == -10) {
        snprintf(c->err, c->err_size, "bad bytes in \"range_end\"");
        return -1;
    }
    int32_t v = CHK_NIL;
    bool present = false;
    if ((kind == CHK_SUB_PUT || kind == CHK_SUB_APPEND) && get_value(c, rq, "value", &v, &present))
        return -1;
    struct chk_sub *s = chk_history_sub_add(c->h, else_branch);
    s->kind = (uint8_t)kind;
    s->key = key;
    s->range_end = end;
    s->value = v;
    s->req_rev = kind == CHK_SUB_RANGE ? geti_or(rq, "revision", NULL, 0) : 0;
    if (kind == CHK_SUB_PUT) {
        int64_t lease = geti_or(rq, "lease", NULL, 0);
        chk_history_sub_lease_set(c->h, s, lease);
        if (lease != 0)
            c->h->revisions_complete = false;
    }
    s->limit = kind == CHK_SUB_RANGE ? chk_limit32(geti_or(rq, "limit", NULL, 0)) : 0;
    const json_t *pk = rq ? json_object_get(rq, "prev_kv") : NULL;
    if (pk && json_is_true(pk))
        s->flags |= CHK_SUBF_PREV_KV;
    if (!rs)
        return 0;
    if (kind == CHK_SUB_RANGE)
        return range_result(c, rs, key, end == CHK_RANGE_ONE);
    s->flags |= CHK_SUBF_RESULT_SET;
    if (kind == CHK_SUB_DELETE) {
        int64_t d;
        if (geti(rs, "deleted", &d)) {
            if (!chk_count_fits(d)) {
                snprintf(c->err, c->err_size, "\"deleted\" %lld is out of range (want %d..%d)",
                         (long long)d, INT32_MIN, INT32_MAX);
                return -1;
            }
            s->count = (int32_t)d;
            s->flags |= CHK_SUBF_COUNT_SET;
        }
        const json_t *pkv = json_object_get(rs, "prev_kvs");
        if (pkv && (s->flags & CHK_SUBF_PREV_KV)) {
            s->flags |= CHK_SUBF_KVS_SET;
            return add_kvs(c, pkv);
        }
    } else if (kind == CHK_SUB_PUT && (s->flags & CHK_SUBF_PREV_KV)) {
        const json_t *pkv = json_object_get(rs, "prev_kv");
        s->flags |= CHK_SUBF_KVS_SET;
        if (pkv && !json_is_null(pkv))
            return add_kv(c, pkv);
    }
    return 0;
}

static int sub_kind(const char *k)
{
    if (!strcmp(k, "get") || !strcmp(k, "range"))
        return CHK_SUB_RANGE;
    if (!strcmp(k, "put"))
        return CHK_SUB_PUT;
    if (!strcmp(k, "delete") || !strcmp(k, "delete_range"))
        return CHK_SUB_DELETE;
    if (!strcmp(k, "append"))
        return CHK_SUB_APPEND;
    return -1;
}

static int add_compare(struct bctx *c, const json_t *cj)
{
    int32_t key = get_key(c, cj, "key", false);
    if (key < 0)
        return -1;
    const char *t = json_string_value(json_object_get(cj, "target"));
    const char *r = json_string_value(json_object_get(cj, "result"));
    int target = !t                                                      ? -1
                 : !strcmp(t, "value")                                   ? CHK_CMP_VALUE
                 : !strcmp(t, "version")                                 ? CHK_CMP_VERSION
                 : !strcmp(t, "create") || !strcmp(t, "create_revision") ? CHK_CMP_CREATE
                 : !strcmp(t, "mod") || !strcmp(t, "mod_revision")       ? CHK_CMP_MOD
                                                                         : -1;
    int result = !r                                    ? CHK_CMP_EQ
                 : !strcmp(r, "=") || !strcmp(r, "==") ? CHK_CMP_EQ
                 : !strcmp(r, "!=")                    ? CHK_CMP_NE
                 : !strcmp(r, ">")                     ? CHK_CMP_GT
                 : !strcmp(r, "<")                     ? CHK_CMP_LT
                                                       : -1;
    if (target < 0 || result < 0) {
        snprintf(c->err, c->err_size, "bad compare target/result");
        return -1;
    }
    int64_t operand = 0;
    if (target == CHK_CMP_VALUE) {
        int32_t v;
        bool present;
        if (get_value(c, cj, "value", &v, &present))
            return -1;
        operand = v;
    } else {
        static const char *const names[] = {"value", "version", "create_revision", "mod_revision"};
        if (!geti(cj, names[target], &operand) && !geti(cj, "value", &operand)) {
            snprintf(c->err, c->err_size, "compare without an operand");
            return -1;
        }
    }
    struct chk_cmp *cmp = chk_history_cmp_add(c->h);
    cmp->key = key;
    cmp->target = (uint8_t)target;
    cmp->result = (uint8_t)result;
    cmp->operand = operand;
    return 0;
}

/* A SUB object {"put":{...}} or {"op":"put",...}: its kind and request. */
static int sub_of(const json_t *x, const json_t **rq)
{
    const char *op = json_string_value(json_object_get(x, "op"));
    if (op) {
        *rq = x;
        return sub_kind(op);
    }
    static const char *const names[] = {"range", "put", "delete", "get", "delete_range"};
    for (size_t i = 0; i < FL_ARRAY_LEN(names); i++) {
        const json_t *in = json_object_get(x, names[i]);
        if (in) {
            *rq = in;
            return sub_kind(names[i]);
        }
    }
    return -1;
}

static int build_txn(struct bctx *c, const struct ld_op *o, struct chk_op *op)
{
    const json_t *cmps = json_object_get(o->req, "compare");
    size_t i;
    json_t *x;
    json_array_foreach(cmps, i, x)
    {
        if (add_compare(c, x))
            return -1;
    }
    const json_t *succ = o->resp ? json_object_get(o->resp, "succeeded") : NULL;
    bool known = succ && json_is_boolean(succ) && o->status == CHK_ST_OK;
    op = &c->h->ops[c->h->op_count - 1];
    if (known) {
        op->flags |= CHK_OPF_SUCCEEDED_SET;
        if (json_is_true(succ))
            op->flags |= CHK_OPF_SUCCEEDED;
    }
    const json_t *resps = o->resp ? json_object_get(o->resp, "responses") : NULL;
    for (int b = 0; b < 2; b++) {
        const json_t *list = json_object_get(o->req, b ? "failure" : "success");
        bool taken = known && (b == 0) == json_is_true(succ);
        json_array_foreach(list, i, x)
        {
            const json_t *rq = NULL;
            int k = sub_of(x, &rq);
            if (k < 0) {
                snprintf(c->err, c->err_size, "unknown txn operation");
                return -1;
            }
            const json_t *rs = NULL;
            if (taken && resps) {
                const json_t *r0 = json_array_get(resps, i);
                const json_t *dummy = NULL;
                rs = r0 && sub_of(r0, &dummy) >= 0 ? dummy : r0;
            }
            if (add_sub(c, k, rq, rs, b == 1))
                return -1;
        }
    }
    return 0;
}

static int build_cas(struct bctx *c, const struct ld_op *o)
{
    int32_t key = get_key(c, o->req, "key", false);
    if (key < 0)
        return -1;
    int32_t expect, value;
    bool present;
    if (get_value(c, o->req, "expect", &expect, &present) ||
        get_value(c, o->req, "value", &value, &present))
        return -1;
    const json_t *succ = o->resp ? json_object_get(o->resp, "succeeded") : NULL;
    int s = succ && json_is_boolean(succ) ? json_is_true(succ) : -1;
    if (o->status == CHK_ST_OK && s < 0) {
        snprintf(c->err, c->err_size, "cas without \"succeeded\"");
        return -1;
    }
    chk_history_cas(c->h, o->client, key, expect, value, o->call_ns, o->return_ns, o->status,
                    o->rev, s);
    return 0;
}

/* A lease revoke or expiry (checkers.h): a txn of single-key deletes, unjudged; the
 * keys from request "keys", else derived by chk_history_finish. */
static int build_lease_end(struct bctx *c, const struct ld_op *o)
{
    int64_t lease = 0;
    if (!geti(o->req, "lease_id", &lease) && !geti(o->req, "ID", &lease) &&
        !geti(o->req, "id", &lease) && !geti(o->req, "lease", &lease)) {
        snprintf(c->err, c->err_size, "%s without \"lease_id\"", o->kind);
        return -1;
    }
    struct chk_op *op = chk_history_op_add(c->h);
    op->client = o->client;
    op->call_ns = o->call_ns;
    op->return_ns = o->return_ns;
    op->status = (uint8_t)o->status;
    op->rev = o->rev;
    op->lease = lease;
    op->flags |= CHK_OPF_LEASE_END;
    const json_t *keys = o->req ? json_object_get(o->req, "keys") : NULL;
    if (keys && !json_is_array(keys)) {
        snprintf(c->err, c->err_size, "%s: \"keys\" is not an array", o->kind);
        return -1;
    }
    if (keys)
        op->flags |= CHK_OPF_LEASE_KEYS; /* known, even when empty: nothing to derive */
    size_t i;
    const json_t *k;
    json_array_foreach(keys, i, k)
    {
        bool is_null = false;
        fl_buf_reset(&c->b);
        if (ld_bytes(k, &c->b, &is_null) || is_null) {
            snprintf(c->err, c->err_size, "%s: bad key in \"keys\"", o->kind);
            return -1;
        }
        struct chk_sub *s = chk_history_sub_add(c->h, false);
        s->kind = CHK_SUB_DELETE;
        s->key = chk_history_key(c->h, c->b.data ? (const char *)c->b.data : "", c->b.len);
    }
    c->h->revisions_complete = false; /* expiries may be missing from the history */
    return 0;
}

int ld_build_op(struct chk_history *h, const struct ld_op *o, char *err, size_t err_size)
{
    struct bctx c = {h, {0}, err, err_size};
    fl_buf_init(&c.b);
    int rc = 0;
    const char *k = o->kind ? o->kind : "";
    int sk = sub_kind(k);
    if (!strcmp(k, "lease_revoke") || !strcmp(k, "lease_expire") || !strcmp(k, "lease_expiry") ||
        !strcmp(k, "leaseRevoke")) {
        int rc2 = build_lease_end(&c, o);
        if (rc2 == 0 && !chk_op_id_fits(o->op_id)) {
            snprintf(err, err_size, "operation id %lld is out of range (want 0..%lu)",
                     (long long)o->op_id, (unsigned long)UINT32_MAX);
            rc2 = -1;
        }
        if (rc2 == 0) {
            struct chk_op *op = &h->ops[h->op_count - 1];
            op->op_id = (uint32_t)o->op_id;
            op->line = o->line;
            op->err = (uint8_t)(o->status == CHK_ST_FAIL ? ld_error_kind(o->error) : CHK_ERR_NONE);
        }
        fl_buf_close(&c.b);
        return rc2;
    }
    bool is_txn = !strcmp(k, "txn"), is_cas = !strcmp(k, "cas"), is_compact = !strcmp(k, "compact");
    if (sk < 0 && !is_txn && !is_cas && !is_compact) {
        fl_buf_close(&c.b);
        static const char *const skip[] = {
            "lease_grant", "lease_revoke", "lease_keepalive", "lease_ttl", "defragment",
            "status",      "alarm",        "hash_kv",         "snapshot",  "move_leader",
            "watch",       "leaseGrant",   "leaseRevoke",     "moveleader"};
        if (!strncmp(k, "lease", 5))
            h->revisions_complete = false; /* leases delete keys when they end */
        if (o->lenient || !strncmp(k, "lease", 5) || !strncmp(k, "member", 6))
            return 1;
        for (size_t i = 0; i < FL_ARRAY_LEN(skip); i++) {
            if (!strcmp(k, skip[i]))
                return 1;
        }
        snprintf(err, err_size, "unknown op \"%s\"", k);
        return -1;
    }
    const json_t *rs = o->status == CHK_ST_OK ? o->resp : NULL;
    if (is_cas) {
        rc = build_cas(&c, o);
    } else {
        struct chk_op *op = chk_history_op_add(h);
        op->client = o->client;
        op->call_ns = o->call_ns;
        op->return_ns = o->return_ns;
        op->status = (uint8_t)o->status;
        op->rev = o->rev;
        op->err = (uint8_t)(o->status == CHK_ST_FAIL ? ld_error_kind(o->error) : CHK_ERR_NONE);
        if (o->status == CHK_ST_OK)
            op->flags |= CHK_OPF_HAS_RESULT;
        if (is_compact) {
            op->kind = CHK_OP_COMPACT;
            int64_t r = 0;
            if (!geti(o->req, "revision", &r) && !geti(o->req, "compact_rev", &r)) {
                snprintf(err, err_size, "compact without \"revision\"");
                rc = -1;
            }
            op->compact_rev = r;
        } else if (is_txn) {
            rc = build_txn(&c, o, op);
        } else {
            rc = add_sub(&c, sk, o->req, rs, false);
        }
    }
    if (rc == 0 && !chk_op_id_fits(o->op_id)) {
        snprintf(err, err_size, "operation id %lld is out of range (want 0..%lu)",
                 (long long)o->op_id, (unsigned long)UINT32_MAX);
        rc = -1;
    }
    if (rc == 0) {
        struct chk_op *op = &h->ops[h->op_count - 1];
        if (sk == CHK_SUB_RANGE && json_is_true(json_object_get(o->req, "serializable")))
            op->flags |= CHK_OPF_SERIALIZABLE;
        op->op_id = (uint32_t)o->op_id;
        op->line = o->line;
        op->err = (uint8_t)(o->status == CHK_ST_FAIL ? ld_error_kind(o->error) : CHK_ERR_NONE);
    }
    fl_buf_close(&c.b);
    return rc;
}

int ld_finish(const char *name, struct chk_history *h, struct fl_buf *err)
{
    struct fl_buf e2;
    fl_buf_init(&e2);
    int rc = chk_history_finish(h, &e2);
    if (rc) {
        const char *m = fl_buf_cstr(&e2);
        unsigned line;
        int used = 0;
        if (sscanf(m, "line %u: %n", &line, &used) == 1 && used > 0 && line > 0)
            fl_buf_printf(err, "%s:%u: %s", name, line, m + used);
        else if (used > 0) /* line 0: no source line (a database row names itself) */
            fl_buf_printf(err, "%s: %s", name, m + used);
        else
            fl_buf_printf(err, "%s: %s", name, m);
    }
    fl_buf_close(&e2);
    return rc;
}
