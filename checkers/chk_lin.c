/*
 * chk_lin.c: choosing a linearizability engine, running both checkers, and turning
 * results into JSON (checks.detail, `faultline check --json`) and human text.
 *
 * Engine choice (auto): a history whose acknowledged operations all carry revisions
 * goes to the revision-order engine; if that engine cannot decide (an ambiguous
 * revision gap) and the history is small enough, the search decides instead. A
 * history without revisions goes to the search. Both can be forced (lim->engine).
 */
#include "checkers/chk_int.h"

#define SEARCH_FALLBACK_OPS_MAX 20000

static void lin_reset(struct chk_lin_result *r)
{
    free(r->changes);
    free(r->order);
    json_decref(r->detail);
    memset(r, 0, sizeof(*r));
}

static int lin_check(struct chk_history *h, const struct chk_limits *lim,
                     struct chk_lin_result *out);

int chk_lin_check(struct chk_history *h, const struct chk_limits *lim, struct chk_lin_result *out)
{
    int rc = lin_check(h, lim, out);
    /* a checked history has a verdict from an engine; a pass of the search on one
     * partition names its linearization, which holds each op at most once */
    FL_ASSERT(rc || (out->verdict >= CHK_PASS && out->verdict <= CHK_UNKNOWN &&
                     out->engine != CHK_ENGINE_NONE));
    FL_ASSERT(out->order_count <= h->op_count && (!out->order_count || out->order));
    return rc;
}

static int lin_check(struct chk_history *h, const struct chk_limits *lim,
                     struct chk_lin_result *out)
{
    FL_ASSERT(h->finished);
    memset(out, 0, sizeof(*out));
    int engine = lim ? lim->engine : 0;
    if (engine == CHK_ENGINE_SEARCH)
        return chk_lin_search(h, lim, out);
    if (engine == CHK_ENGINE_REVISION || h->has_revs) {
        int rc = chk_lin_revision(h, lim, out);
        if (rc || out->verdict != CHK_UNKNOWN || engine == CHK_ENGINE_REVISION ||
            h->op_count > SEARCH_FALLBACK_OPS_MAX)
            return rc;
        char why[256];
        snprintf(why, sizeof(why), "%s", out->reason);
        lin_reset(out);
        rc = chk_lin_search(h, lim, out);
        if (out->detail)
            json_object_set_new(out->detail, "revision_engine", json_string(why));
        return rc;
    }
    return chk_lin_search(h, lim, out);
}

void chk_lin_result_close(struct chk_lin_result *r)
{
    lin_reset(r);
}

int chk_check(struct chk_history *h, const struct chk_limits *lim, struct chk_result *out)
{
    memset(out, 0, sizeof(*out));
    int rc = chk_lin_check(h, lim, &out->lin);
    if (rc)
        return rc;
    rc = chk_watch_check(h, &out->lin, &out->watch);
    if (rc)
        return rc;
    int v = out->lin.verdict;
    if (out->watch.verdict == CHK_FAIL || v == CHK_FAIL)
        v = CHK_FAIL;
    else if (out->watch.verdict == CHK_UNKNOWN)
        v = CHK_UNKNOWN;
    /* the verdict is the worst of the two: fail > unknown > pass */
    FL_ASSERT(v == CHK_FAIL || (out->lin.verdict != CHK_FAIL && out->watch.verdict != CHK_FAIL));
    FL_ASSERT(v != CHK_PASS || (out->lin.verdict == CHK_PASS && out->watch.verdict == CHK_PASS));
    out->verdict = v;
    return FL_OK;
}

void chk_result_close(struct chk_result *r)
{
    chk_lin_result_close(&r->lin);
    chk_watch_result_close(&r->watch);
}

/* ---- JSON ---------------------------------------------------------------------- */

static bool utf8_valid(const uint8_t *p, size_t n)
{
    size_t i = 0;
    while (i < n) {
        uint8_t c = p[i];
        size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
        if (!len || i + len > n)
            return false;
        for (size_t k = 1; k < len; k++) {
            if ((p[i + k] & 0xc0) != 0x80)
                return false;
        }
        i += len;
    }
    return true;
}

json_t *chk_json_bytes(const uint8_t *p, size_t n)
{
    if (utf8_valid(p, n))
        return json_stringn((const char *)p, n);
    static const char hex[] = "0123456789abcdef";
    char *s = fl_malloc(2 * n + 1);
    for (size_t i = 0; i < n; i++) {
        s[2 * i] = hex[p[i] >> 4];
        s[2 * i + 1] = hex[p[i] & 15];
    }
    json_t *o = json_object();
    json_object_set_new(o, "hex", json_stringn(s, 2 * n));
    free(s);
    return o;
}

/* An interned key or value as JSON; null for the negative ids (absent, none). */
static json_t *json_interned(const struct chk_intern *t, int32_t id)
{
    if (id < 0)
        return json_null();
    size_t n;
    const uint8_t *p = chk_intern_bytes(t, id, &n);
    return chk_json_bytes(p, n);
}

json_t *chk_json_key(const struct chk_history *h, int32_t key)
{
    return json_interned(&h->keys, key);
}

json_t *chk_json_value(const struct chk_history *h, int32_t value)
{
    return json_interned(&h->values, value);
}

static const char *const status_names[] = {"ok", "fail", "unknown"};

json_t *chk_json_op(const struct chk_history *h, const struct chk_op *op)
{
    json_t *o = json_object();
    struct fl_buf t;
    fl_buf_init(&t);
    chk_op_text(h, op, &t);
    json_object_set_new(o, "op_id", json_integer(op->op_id));
    json_object_set_new(o, "client", json_integer(op->client));
    json_object_set_new(o, "op", json_string(fl_buf_cstr(&t)));
    json_object_set_new(o, "call", json_integer(op->call_ns));
    json_object_set_new(o, "return",
                        op->return_ns == CHK_NEVER ? json_null() : json_integer(op->return_ns));
    json_object_set_new(o, "status", json_string(status_names[op->status % 3]));
    if (op->rev != CHK_NO_REV)
        json_object_set_new(o, "revision", json_integer(op->rev));
    if (op->line)
        json_object_set_new(o, "line", json_integer(op->line));
    fl_buf_close(&t);
    return o;
}

static void text_bytes(struct fl_buf *out, const uint8_t *p, size_t n)
{
    size_t lim = FL_MIN(n, (size_t)40);
    for (size_t i = 0; i < lim; i++) {
        uint8_t c = p[i];
        if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\')
            fl_buf_append(out, &c, 1);
        else
            fl_buf_printf(out, "\\x%02x", c);
    }
    if (n > lim)
        fl_buf_printf(out, "...(%zu bytes)", n);
}

static void text_key(const struct chk_history *h, int32_t k, struct fl_buf *out)
{
    size_t n;
    const uint8_t *p = chk_key_bytes(h, k, &n);
    text_bytes(out, p, n);
}

static void text_value(const struct chk_history *h, int32_t v, struct fl_buf *out)
{
    if (v < 0) {
        fl_buf_printf(out, "nil");
        return;
    }
    size_t n;
    const uint8_t *p = chk_value_bytes(h, v, &n);
    fl_buf_printf(out, "\"");
    text_bytes(out, p, n);
    fl_buf_printf(out, "\"");
}

static void text_sub(const struct chk_history *h, const struct chk_op *op, const struct chk_sub *s,
                     struct fl_buf *out)
{
    static const char *const names[] = {"get", "put", "delete", "append"};
    fl_buf_printf(out, "%s(", names[s->kind & 3]);
    text_key(h, s->key, out);
    if (s->range_end == CHK_RANGE_ALL)
        fl_buf_printf(out, "..");
    else if (s->range_end >= 0) {
        fl_buf_printf(out, "..");
        text_key(h, s->range_end, out);
    }
    if (s->kind == CHK_SUB_PUT || s->kind == CHK_SUB_APPEND) {
        fl_buf_printf(out, ", ");
        text_value(h, s->value, out);
    }
    if (s->kind == CHK_SUB_RANGE && s->req_rev > 0)
        fl_buf_printf(out, " @%lld", (long long)s->req_rev);
    fl_buf_printf(out, ")");
    if (op->status != CHK_ST_OK || !(s->flags & CHK_SUBF_RESULT_SET))
        return;
    if (s->kind == CHK_SUB_RANGE && (s->flags & CHK_SUBF_KVS_SET)) {
        fl_buf_printf(out, " -> ");
        if (s->range_end == CHK_RANGE_ONE) {
            if (s->kv_count == 0)
                fl_buf_printf(out, "nil");
            else {
                const struct chk_kv *kv = &h->kvs[s->kv_first];
                text_value(h, kv->value, out);
                if (kv->mod_rev != CHK_NO_REV)
                    fl_buf_printf(out, " mod %lld", (long long)kv->mod_rev);
            }
        } else {
            fl_buf_printf(out, "%u kvs", s->kv_count);
        }
    } else if (s->kind == CHK_SUB_DELETE && (s->flags & CHK_SUBF_COUNT_SET)) {
        fl_buf_printf(out, " -> deleted %lld", (long long)s->count);
    }
}

void chk_op_text(const struct chk_history *h, const struct chk_op *op, struct fl_buf *out)
{
    if (op->kind == CHK_OP_COMPACT) {
        fl_buf_printf(out, "compact(%lld)", (long long)op->compact_rev);
        return;
    }
    const struct chk_sub *subs = &h->subs[op->sub_first];
    if ((op->flags & CHK_OPF_LABEL_CAS) && op->cmp_count == 1 && op->then_count == 1) {
        const struct chk_cmp *c = &h->cmps[op->cmp_first];
        fl_buf_printf(out, "cas(");
        text_key(h, c->key, out);
        fl_buf_printf(out, ", ");
        text_value(h, c->target == CHK_CMP_VALUE ? (int32_t)c->operand : CHK_NIL, out);
        fl_buf_printf(out, ", ");
        text_value(h, subs[0].value, out);
        fl_buf_printf(out, ")");
    } else if (op->cmp_count == 0 && op->then_count == 1 && op->else_count == 0) {
        text_sub(h, op, &subs[0], out);
        return;
    } else {
        fl_buf_printf(out, "txn(%u compares; ", op->cmp_count);
        for (uint32_t i = 0; i < op->then_count && i < 4; i++) {
            if (i)
                fl_buf_printf(out, ", ");
            text_sub(h, op, &subs[i], out);
        }
        fl_buf_printf(out, "%s)", op->else_count ? "; else ..." : "");
    }
    if (op->status == CHK_ST_OK && (op->flags & CHK_OPF_SUCCEEDED_SET))
        fl_buf_printf(out, " -> %s", (op->flags & CHK_OPF_SUCCEEDED) ? "ok" : "failed");
}

static const char *const engine_names[] = {"none", "revision", "search"};

json_t *chk_lin_json(const struct chk_history *h, const struct chk_lin_result *r)
{
    json_t *o = json_object();
    json_object_set_new(o, "verdict", json_string(chk_verdict_name(r->verdict)));
    json_object_set_new(o, "engine", json_string(engine_names[r->engine % 3]));
    json_object_set_new(o, "ops", json_integer(h->op_count));
    json_object_set_new(o, "steps", json_integer((json_int_t)r->steps));
    if (r->reason[0])
        json_object_set_new(o, "reason", json_string(r->reason));
    if (r->revealed)
        json_object_set_new(o, "revealed", json_integer(r->revealed));
    if (r->guessed_from)
        json_object_set_new(o, "guessed_from", json_integer(r->guessed_from));
    if (r->detail && r->verdict != CHK_PASS)
        json_object_set_new(o, "explanation", json_deep_copy(r->detail));
    return o;
}

json_t *chk_result_json(const struct chk_history *h, const struct chk_result *r)
{
    json_t *o = json_object();
    json_object_set_new(o, "linearizability", chk_lin_json(h, &r->lin));
    json_object_set_new(o, "watch", chk_watch_json(h, &r->watch));
    return o;
}

void chk_result_explain(const struct chk_history *h, const struct chk_result *r, struct fl_buf *out)
{
    const struct chk_lin_result *l = &r->lin;
    fl_buf_printf(out, "linearizability: %s (%s engine, %u operations",
                  chk_verdict_name(l->verdict), engine_names[l->engine % 3], h->op_count);
    if (l->revealed)
        fl_buf_printf(out, ", %u unknown-outcome placed", l->revealed);
    fl_buf_printf(out, ")\n");
    if (l->reason[0])
        fl_buf_printf(out, "  %s\n", l->reason);
    if (l->verdict == CHK_FAIL && l->detail) {
        json_t *pl = json_object_get(l->detail, "prefix_length");
        if (pl)
            fl_buf_printf(out, "  longest linearizable prefix: %lld operations\n",
                          (long long)json_integer_value(pl));
        json_t *un = json_object_get(l->detail, "unordered_ops");
        size_t i;
        json_t *op;
        if (un)
            fl_buf_printf(out, "  operations that cannot be ordered:\n");
        json_array_foreach(un, i, op)
        {
            json_t *ret = json_object_get(op, "return");
            fl_buf_printf(out, "    client %lld  %s  call %lld  return %s%lld%s\n",
                          (long long)json_integer_value(json_object_get(op, "client")),
                          json_string_value(json_object_get(op, "op")),
                          (long long)json_integer_value(json_object_get(op, "call")),
                          json_is_null(ret) ? "(none" : "", (long long)json_integer_value(ret),
                          json_is_null(ret) ? ")" : "");
        }
        json_t *st = json_object_get(l->detail, "state");
        if (st) {
            char *s = json_dumps(st, JSON_COMPACT);
            fl_buf_printf(out, "  model state there: %s\n", s ? s : "?");
            free(s);
        }
    }
    const struct chk_watch_result *w = &r->watch;
    fl_buf_printf(out, "watch: %s (%u watches, %u events)\n", chk_verdict_name(w->verdict),
                  w->watches, w->events);
    for (int g = 0; g < CHK_G_COUNT; g++) {
        if (w->g_verdict[g] != CHK_PASS)
            fl_buf_printf(out, "  %s: %s (%u violations)\n", chk_guarantee_name(g),
                          chk_verdict_name(w->g_verdict[g]), w->g_fail_count[g]);
    }
    if (w->undecided)
        fl_buf_printf(out, "  %u not judged: %s\n", w->undecided, w->reason);
    for (uint32_t i = 0; i < w->viol_count && i < 10; i++)
        fl_buf_printf(out, "  broke %s: watch %lld, revision %lld: %s\n",
                      chk_guarantee_name(w->viol[i].guarantee), (long long)w->viol[i].watch_id,
                      (long long)w->viol[i].rev, w->viol[i].msg);
    fl_buf_printf(out, "verdict: %s\n", chk_verdict_name(r->verdict));
}
