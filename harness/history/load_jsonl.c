/*
 * load_jsonl.c: JSON-lines histories (DESIGN §3.7), one object a line:
 *   {"type":"op", "client", "op", "key", ..., "call", "return", "status", "rev", ...}
 *   {"type":"watch_open", "watch", "client", "key", "range_end", "start_rev",
 *    "prev_kv", "progress_notify", "filters":"noput,nodelete", "t"}
 *   {"type":"watch_event", "watch", "response", "event":"put"|"delete"|"progress",
 *    "key", "value", "prev_value", "mod_rev", "create_rev", "version", "rev", "t"}
 *   {"type":"watch_close", "watch", "t"}
 * "type" defaults to "op"; unknown fields are ignored; the operation fields are the
 * request/response shapes of checkers/checkers.h, flat on the line. Errors name
 * FILE:LINE.
 *
 * Strict where a loose history would be judged wrongly: an op "id" given twice, a
 * watch closed twice, a watch event after its watch's close (in the file or in time),
 * negative times, revisions or ids are errors. Strings may hold any byte, NUL
 * included (\u0000); bytes that are not UTF-8 go as {"hex":"..."}.
 */
#include "harness/history/load_int.h"

static bool int_field(const json_t *o, const char *name, int64_t *out)
{
    const json_t *j = json_object_get(o, name);
    if (!j || !json_is_integer(j))
        return false;
    *out = json_integer_value(j);
    return true;
}

static int64_t int_or(const json_t *o, const char *name, int64_t dflt)
{
    int64_t v;
    return int_field(o, name, &v) ? v : dflt;
}

/* The first of the named integer fields of o (NULL-terminated list) that is negative,
 * or NULL. Times, revisions, ids and counts are never negative. */
static const char *negative_field(const json_t *o, const char *const *names)
{
    for (; *names; names++) {
        int64_t v;
        if (int_field(o, *names, &v) && v < 0)
            return *names;
    }
    return NULL;
}

/* What the loader remembers across lines (state the checkers' structures lack). */
struct jl_id {
    int64_t id;
    uint32_t line;
};

struct jl_state {
    struct jl_id *ids; /* explicit op ids */
    size_t n_ids, cap_ids;
    struct jl_watch {
        int64_t id, closed_t;
        uint32_t closed_line;
    } * w; /* by open order */
    size_t n_w, cap_w;
};

static struct jl_watch *jl_watch_find(struct jl_state *st, int64_t id)
{
    for (size_t i = st->n_w; i-- > 0;)
        if (st->w[i].id == id)
            return &st->w[i];
    return NULL;
}

static int jl_op(struct chk_history *h, json_t *o, uint32_t line, int64_t op_no, char *msg,
                 size_t msg_size, struct jl_state *js)
{
    struct ld_op d;
    memset(&d, 0, sizeof(d));
    d.kind = json_string_value(json_object_get(o, "op"));
    if (!d.kind) {
        snprintf(msg, msg_size, "operation without \"op\"");
        return -1;
    }
    static const char *const nonneg[] = {"client",   "id",      "call",       "return",  "rev",
                                         "revision", "mod_rev", "create_rev", "version", NULL};
    const char *neg = negative_field(o, nonneg);
    if (neg) {
        snprintf(msg, msg_size, "\"%s\" is negative", neg);
        return -1;
    }
    int64_t client = int_or(o, "client", 0);
    if (client > INT32_MAX) {
        snprintf(msg, msg_size, "\"client\" out of range");
        return -1;
    }
    d.client = (int32_t)client;
    d.op_id = int_or(o, "id", op_no);
    d.line = line;
    if (!int_field(o, "call", &d.call_ns)) {
        snprintf(msg, msg_size, "operation without an integer \"call\"");
        return -1;
    }
    const json_t *rj = json_object_get(o, "return");
    d.return_ns = rj && json_is_integer(rj) ? json_integer_value(rj) : CHK_NEVER;
    if (rj && !json_is_integer(rj) && !json_is_null(rj)) {
        snprintf(msg, msg_size, "\"return\" is not an integer or null");
        return -1;
    }
    if (d.return_ns != CHK_NEVER && d.return_ns < d.call_ns) {
        snprintf(msg, msg_size, "return (%lld) before call (%lld)", (long long)d.return_ns,
                 (long long)d.call_ns);
        return -1;
    }
    const char *st = json_string_value(json_object_get(o, "status"));
    if (!st)
        d.status = d.return_ns == CHK_NEVER ? CHK_ST_UNKNOWN : CHK_ST_OK;
    else if (!strcmp(st, "ok"))
        d.status = CHK_ST_OK;
    else if (!strcmp(st, "fail"))
        d.status = CHK_ST_FAIL;
    else if (!strcmp(st, "unknown") || !strcmp(st, "info"))
        d.status = CHK_ST_UNKNOWN;
    else {
        snprintf(msg, msg_size, "unknown status \"%s\"", st);
        return -1;
    }
    if (d.status == CHK_ST_OK && d.return_ns == CHK_NEVER) {
        snprintf(msg, msg_size, "status ok without a return time");
        return -1;
    }
    d.error = json_string_value(json_object_get(o, "error"));
    d.rev = int_or(o, "rev", CHK_NO_REV);
    if (d.status == CHK_ST_OK && d.rev == CHK_NO_REV) {
        const json_t *hd = json_object_get(o, "header");
        if (hd)
            d.rev = int_or(hd, "revision", CHK_NO_REV);
    }
    d.req = o;
    d.resp = o;
    int rc = ld_build_op(h, &d, msg, msg_size);
    if (rc >= 0 && json_object_get(o, "id")) {
        FL_GROW(js->ids, js->cap_ids, js->n_ids + 1, 64);
        js->ids[js->n_ids].id = d.op_id;
        js->ids[js->n_ids++].line = line;
    }
    return rc < 0 ? -1 : 0;
}

static int jl_key(struct chk_history *h, json_t *o, const char *name, int32_t *out, bool optional,
                  struct fl_buf *b)
{
    const json_t *j = json_object_get(o, name);
    bool is_null;
    if (!j || json_is_null(j)) {
        *out = optional ? CHK_RANGE_ONE : 0;
        return optional ? 0 : -1;
    }
    if (ld_bytes(j, b, &is_null))
        return -1;
    if (optional && b->len == 1 && b->data[0] == 0) {
        *out = CHK_RANGE_ALL;
        return 0;
    }
    *out = chk_history_key(h, b->data ? (const char *)b->data : "", b->len);
    return 0;
}

static int jl_watch_open(struct chk_history *h, json_t *o, uint32_t line, char *msg,
                         size_t msg_size, struct fl_buf *b, struct jl_state *st)
{
    int64_t id;
    if (!int_field(o, "watch", &id)) {
        snprintf(msg, msg_size, "watch_open without an integer \"watch\"");
        return -1;
    }
    static const char *const nonneg[] = {"watch", "client", "start_rev", "t", NULL};
    const char *neg = negative_field(o, nonneg);
    if (neg) {
        snprintf(msg, msg_size, "\"%s\" is negative", neg);
        return -1;
    }
    int32_t key, end;
    if (jl_key(h, o, "key", &key, false, b) || jl_key(h, o, "range_end", &end, true, b)) {
        snprintf(msg, msg_size, "watch_open with a bad \"key\" or \"range_end\"");
        return -1;
    }
    struct chk_watch *w = chk_history_watch_add(h);
    w->watch_id = id;
    w->client = (int32_t)int_or(o, "client", 0);
    w->key = key;
    w->range_end = end;
    w->start_rev = int_or(o, "start_rev", 0);
    w->opened_ns = int_or(o, "t", 0);
    w->line = line;
    if (json_is_true(json_object_get(o, "prev_kv")))
        w->flags |= CHK_WF_PREV_KV;
    if (json_is_true(json_object_get(o, "progress_notify")))
        w->flags |= CHK_WF_PROGRESS_NOTIFY;
    const char *filters = json_string_value(json_object_get(o, "filters"));
    if (filters && strstr(filters, "noput"))
        w->flags |= CHK_WF_NOPUT;
    if (filters && strstr(filters, "nodelete"))
        w->flags |= CHK_WF_NODELETE;
    FL_GROW(st->w, st->cap_w, st->n_w + 1, 16);
    st->w[st->n_w++] = (struct jl_watch){id, CHK_NEVER, 0};
    return 0;
}

static int jl_value(struct chk_history *h, json_t *o, const char *name, int32_t *out,
                    struct fl_buf *b)
{
    const json_t *j = json_object_get(o, name);
    bool is_null;
    if (!j) {
        *out = CHK_NOT_GIVEN;
        return 0;
    }
    if (ld_bytes(j, b, &is_null))
        return -1;
    *out = is_null ? CHK_NIL : chk_history_value(h, b->data ? (const char *)b->data : "", b->len);
    return 0;
}

static int jl_watch_event(struct chk_history *h, json_t *o, uint32_t line, char *msg,
                          size_t msg_size, struct fl_buf *b, struct jl_state *st)
{
    static const char *const nonneg[] = {"watch",   "response", "rev", "mod_rev", "create_rev",
                                         "version", "t",        "seq", NULL};
    const char *neg = negative_field(o, nonneg);
    if (neg) {
        snprintf(msg, msg_size, "\"%s\" is negative", neg);
        return -1;
    }
    int64_t id;
    const char *ev = json_string_value(json_object_get(o, "event"));
    if (!int_field(o, "watch", &id) || !ev) {
        snprintf(msg, msg_size, "watch_event without \"watch\" or \"event\"");
        return -1;
    }
    int kind = !strcmp(ev, "put")        ? CHK_EV_PUT
               : !strcmp(ev, "delete")   ? CHK_EV_DELETE
               : !strcmp(ev, "progress") ? CHK_EV_PROGRESS
                                         : -1;
    if (kind < 0) {
        snprintf(msg, msg_size, "unknown watch event \"%s\"", ev);
        return -1;
    }
    const struct jl_watch *jw = jl_watch_find(st, id);
    if (jw && jw->closed_line) {
        snprintf(msg, msg_size, "event of watch %lld after its close at line %u", (long long)id,
                 jw->closed_line);
        return -1;
    }
    int32_t key = 0, value = CHK_NIL, prev = CHK_NOT_GIVEN;
    int64_t mod;
    if (kind == CHK_EV_PROGRESS) {
        if (!int_field(o, "rev", &mod)) {
            snprintf(msg, msg_size, "progress event without \"rev\"");
            return -1;
        }
    } else {
        if (jl_key(h, o, "key", &key, false, b) || !int_field(o, "mod_rev", &mod)) {
            snprintf(msg, msg_size, "watch event without \"key\" or \"mod_rev\"");
            return -1;
        }
        if ((kind == CHK_EV_PUT && jl_value(h, o, "value", &value, b)) ||
            jl_value(h, o, "prev_value", &prev, b)) {
            snprintf(msg, msg_size, "bad bytes in a watch event value");
            return -1;
        }
        if (value == CHK_NOT_GIVEN)
            value = CHK_NIL;
    }
    int64_t seq = int_or(o, "seq", (int64_t)line);
    if (seq > INT32_MAX) { /* chk_wevent.seq is 32-bit */
        snprintf(msg, msg_size, "\"seq\" %lld is out of range (want 0..2147483647)",
                 (long long)seq);
        return -1;
    }
    struct chk_wevent *e = chk_history_event_add(h);
    e->watch_id = id;
    e->response = int_or(o, "response", (int64_t)line);
    e->kind = (uint8_t)kind;
    e->key = key;
    e->value = value;
    e->prev_value = prev;
    e->mod_rev = mod;
    e->create_rev = int_or(o, "create_rev", CHK_NO_REV);
    e->version = int_or(o, "version", CHK_NO_REV);
    e->t_ns = int_or(o, "t", 0);
    e->seq = (uint32_t)seq;
    e->line = line;
    return 0;
}

static int jl_watch_close(struct chk_history *h, json_t *o, uint32_t line, char *msg,
                          size_t msg_size, struct jl_state *st)
{
    int64_t id = int_or(o, "watch", -1), t = int_or(o, "t", 0);
    if (t < 0) {
        snprintf(msg, msg_size, "\"t\" is negative");
        return -1;
    }
    struct jl_watch *jw = jl_watch_find(st, id);
    if (!jw) {
        snprintf(msg, msg_size, "watch_close of watch %lld that was never opened", (long long)id);
        return -1;
    }
    if (jw->closed_line) {
        snprintf(msg, msg_size, "watch %lld closed twice (first at line %u)", (long long)id,
                 jw->closed_line);
        return -1;
    }
    for (uint32_t i = 0; i < h->watch_count; i++) {
        if (h->watches[i].watch_id != id)
            continue;
        if (t < h->watches[i].opened_ns) {
            snprintf(msg, msg_size, "watch %lld closed (t %lld) before it was opened (t %lld)",
                     (long long)id, (long long)t, (long long)h->watches[i].opened_ns);
            return -1;
        }
        /* Events already read must not be later than the close. */
        for (uint32_t e = 0; e < h->event_count; e++) {
            if (h->events[e].watch_id == id && h->events[e].t_ns > t) {
                snprintf(msg, msg_size,
                         "watch %lld closed (t %lld) before its event at line %u (t %lld)",
                         (long long)id, (long long)t, h->events[e].line,
                         (long long)h->events[e].t_ns);
                return -1;
            }
        }
        h->watches[i].closed_ns = t;
    }
    jw->closed_t = t;
    jw->closed_line = line;
    return 0;
}

static int jl_line(struct chk_history *h, json_t *o, uint32_t line, int64_t *op_no, char *msg,
                   size_t msg_size, struct fl_buf *b, struct jl_state *st)
{
    if (!json_is_object(o)) {
        snprintf(msg, msg_size, "not a JSON object");
        return -1;
    }
    const char *type = json_string_value(json_object_get(o, "type"));
    if (!type || !strcmp(type, "op"))
        return jl_op(h, o, line, ++*op_no, msg, msg_size, st);
    if (!strcmp(type, "watch_open"))
        return jl_watch_open(h, o, line, msg, msg_size, b, st);
    if (!strcmp(type, "watch_event"))
        return jl_watch_event(h, o, line, msg, msg_size, b, st);
    if (!strcmp(type, "watch_close"))
        return jl_watch_close(h, o, line, msg, msg_size, st);
    snprintf(msg, msg_size, "unknown type \"%s\"", type);
    return -1;
}

static int id_cmp(const void *a, const void *b)
{
    const struct jl_id *x = a, *y = b;
    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    return (x->line > y->line) - (x->line < y->line);
}

/* An op id given twice: the later line is the error. */
static int dup_ids(const char *name, struct jl_state *st, struct fl_buf *err)
{
    if (st->n_ids < 2)
        return FL_OK;
    qsort(st->ids, st->n_ids, sizeof *st->ids, id_cmp);
    for (size_t i = 1; i < st->n_ids; i++) {
        if (st->ids[i].id == st->ids[i - 1].id) {
            fl_buf_printf(err, "%s:%u: op id %lld repeats the op at line %u", name, st->ids[i].line,
                          (long long)st->ids[i].id, st->ids[i - 1].line);
            return FL_EINVAL;
        }
    }
    return FL_OK;
}

int hist_load_jsonl_mem(const char *name, const char *text, size_t len, struct chk_history *h,
                        struct fl_buf *err)
{
    const char *p = text, *end = text + len;
    uint32_t line = 0;
    int64_t op_no = 0;
    char msg[256];
    struct jl_state st;
    memset(&st, 0, sizeof st);
    struct fl_buf b;
    fl_buf_init(&b);
    int rc = FL_OK;
    while (p < end && !rc) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        line++;
        const char *q = p;
        while (q < le && (*q == ' ' || *q == '\t' || *q == '\r'))
            q++;
        if (q < le) {
            json_error_t je;
            json_t *o = json_loadb(q, (size_t)(le - q), JSON_ALLOW_NUL, &je);
            if (!o) {
                fl_buf_printf(err, "%s:%u: malformed JSON: %s", name, line, je.text);
                rc = FL_EINVAL;
            } else if (jl_line(h, o, line, &op_no, msg, sizeof(msg), &b, &st)) {
                fl_buf_printf(err, "%s:%u: %s", name, line, msg);
                rc = FL_EINVAL;
            }
            json_decref(o);
        }
        p = nl ? nl + 1 : end;
    }
    fl_buf_close(&b);
    if (!rc)
        rc = dup_ids(name, &st, err);
    free(st.ids);
    free(st.w);
    if (!rc)
        rc = ld_finish(name, h, err);
    return rc;
}
