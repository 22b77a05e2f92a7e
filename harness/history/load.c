/*
 * load.c: choosing a history format (by name or by sniffing the first bytes) and the
 * two porcupine corpus formats (corpus/porcupine/README.md):
 *   Jepsen etcd logs: "INFO  jepsen.util - P :type :f VALUE", one CAS register whose
 *     initial value is absent; :info means unknown outcome (the op stays in flight).
 *   porcupine kv logs: "{:process P, :type :invoke, :f :get, :key "K", :value V}",
 *     get/put/append per key; every key starts as "".
 * Times are line numbers. A completion closes the latest invoke of its process.
 * Errors name FILE:LINE.
 */
#include "harness/history/load_int.h"

#include <ctype.h>
#include <sys/stat.h>

static const char *const fmt_names[] = {"auto", "db", "jsonl", "jepsen", "porcupine-kv"};

bool hist_format_parse(const char *s, int *out)
{
    for (int i = 0; i < (int)FL_ARRAY_LEN(fmt_names); i++) {
        if (!strcmp(s, fmt_names[i])) {
            *out = i;
            return true;
        }
    }
    return false;
}

const char *hist_format_name(int fmt)
{
    return fmt >= 0 && fmt < (int)FL_ARRAY_LEN(fmt_names) ? fmt_names[fmt] : "?";
}

/* A UTF-8 byte order mark at the start of a text history is skipped. */
static size_t bom_len(const char *data, size_t len)
{
    return len >= 3 && !memcmp(data, "\xEF\xBB\xBF", 3) ? 3 : 0;
}

/* The format of data[0..len) (the whole file, or at least its first bytes). */
static int sniff_buf(const char *path, const char *data, size_t len, int *fmt_out,
                     struct fl_buf *err)
{
    size_t i = bom_len(data, len);
    while (i < len && isspace((unsigned char)data[i]))
        i++;
    if (len >= 16 && !memcmp(data, "SQLite format 3", 16))
        *fmt_out = HIST_FMT_DB;
    else if (i == len) {
        fl_buf_printf(err, "%s: no operations (the history is empty)", path);
        return FL_EINVAL;
    } else if (!strncmp(data + i, "INFO", 4) || memmem(data + i, len - i, "jepsen.util", 11))
        *fmt_out = HIST_FMT_JEPSEN;
    else if (data[i] == '{' && !strncmp(data + i, "{:process", 9))
        *fmt_out = HIST_FMT_PORCUPINE_KV;
    else if (data[i] == '{')
        *fmt_out = HIST_FMT_JSONL;
    else {
        fl_buf_printf(err, "%s:1: not a history (no format matches; use --format)", path);
        return FL_EINVAL;
    }
    return FL_OK;
}

/* Whether path is a regular file starting with SQLite's header (read without loading
 * the whole database). */
static bool is_sqlite_file(const char *path)
{
    struct stat sb;
    if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
        return false;
    FILE *f = fopen(path, "rb");
    char h[16];
    bool ok = f && fread(h, 1, sizeof h, f) == sizeof h && !memcmp(h, "SQLite format 3", 16);
    if (f)
        fclose(f);
    return ok;
}

int hist_format_sniff(const char *path, int *fmt_out, struct fl_buf *err)
{
    if (is_sqlite_file(path)) {
        *fmt_out = HIST_FMT_DB;
        return FL_OK;
    }
    char *data;
    size_t len;
    int rc = ld_read_file(path, &data, &len, err);
    if (rc)
        return rc;
    rc = sniff_buf(path, data, len, fmt_out, err);
    free(data);
    return rc;
}

static int load_text(const char *path, int fmt, const char *data, size_t len, struct chk_history *h,
                     struct fl_buf *err)
{
    size_t b = bom_len(data, len);
    switch (fmt) {
    case HIST_FMT_JSONL:
        return hist_load_jsonl_mem(path, data + b, len - b, h, err);
    case HIST_FMT_JEPSEN:
        return hist_load_jepsen_mem(path, data + b, len - b, h, err);
    case HIST_FMT_PORCUPINE_KV:
        return hist_load_porcupine_kv_mem(path, data + b, len - b, h, err);
    case HIST_FMT_DB:
        fl_buf_printf(err, "%s: a history database must be a regular file", path);
        return FL_EINVAL;
    default:
        fl_buf_printf(err, "%s: unknown format", path);
        return FL_EINVAL;
    }
}

int hist_load_fmt(const char *path, int *fmt, int64_t run_id, struct chk_history *h,
                  int64_t *run_id_out, struct fl_buf *err)
{
    if (run_id_out)
        *run_id_out = 0;
    int rc;
    if (*fmt == HIST_FMT_DB || (*fmt == HIST_FMT_AUTO && is_sqlite_file(path))) {
        *fmt = HIST_FMT_DB;
        rc = hist_load_db_path(path, run_id, h, run_id_out, err);
    } else {
        /* Read once: a pipe cannot be read twice (sniffing, then loading). */
        char *data;
        size_t len;
        rc = ld_read_file(path, &data, &len, err);
        if (!rc && *fmt == HIST_FMT_AUTO)
            rc = sniff_buf(path, data, len, fmt, err);
        if (!rc)
            rc = load_text(path, *fmt, data, len, h, err);
        free(data);
    }
    if (!rc && h->op_count == 0 && h->watch_count == 0 && h->event_count == 0) {
        fl_buf_printf(err, "%s: no operations (nothing to check)", path);
        rc = FL_EINVAL;
    }
    return rc;
}

int hist_load(const char *path, int fmt, int64_t run_id, struct chk_history *h, int64_t *run_id_out,
              struct fl_buf *err)
{
    return hist_load_fmt(path, &fmt, run_id, h, run_id_out, err);
}

typedef int (*mem_loader)(const char *, const char *, size_t, struct chk_history *,
                          struct fl_buf *);

static int load_file(const char *path, mem_loader fn, struct chk_history *h, struct fl_buf *err)
{
    char *data;
    size_t len;
    int rc = ld_read_file(path, &data, &len, err);
    if (rc)
        return rc;
    size_t b = bom_len(data, len);
    rc = fn(path, data + b, len - b, h, err);
    free(data);
    return rc;
}

int hist_load_jepsen(const char *path, struct chk_history *h, struct fl_buf *err)
{
    return load_file(path, hist_load_jepsen_mem, h, err);
}

int hist_load_porcupine_kv(const char *path, struct chk_history *h, struct fl_buf *err)
{
    return load_file(path, hist_load_porcupine_kv_mem, h, err);
}

int hist_load_jsonl(const char *path, struct chk_history *h, struct fl_buf *err)
{
    return load_file(path, hist_load_jsonl_mem, h, err);
}

/* ---- pending invokes, per process ------------------------------------------------ */

enum { F_READ = 0, F_WRITE, F_CAS, F_GET, F_PUT, F_APPEND };

struct pend {
    bool open;
    int f;
    int32_t key, a, b; /* value ids: write/put/append arg in a; cas [a b] */
    int64_t call;
    uint32_t line;
};

struct pends {
    struct pend *v;
    size_t n;
};

static struct pend *pend_get(struct pends *p, long proc)
{
    if ((size_t)proc >= p->n) {
        size_t nn = FL_MAX((size_t)proc + 1, p->n * 2);
        p->v = fl_realloc(p->v, nn * sizeof(*p->v));
        memset(p->v + p->n, 0, (nn - p->n) * sizeof(*p->v));
        p->n = nn;
    }
    return &p->v[proc];
}

/* Next whitespace-separated token of [*s, end) into tok (NUL-terminated, truncated at
 * 63); false at end of line. */
static bool next_tok(const char **s, const char *end, char tok[64])
{
    const char *p = *s;
    while (p < end && isspace((unsigned char)*p))
        p++;
    if (p == end)
        return false;
    size_t n = 0;
    while (p < end && !isspace((unsigned char)*p)) {
        if (n < 63)
            tok[n++] = *p;
        p++;
    }
    tok[n] = 0;
    *s = p;
    return true;
}

static bool parse_long(const char *t, long *out)
{
    char *e;
    if (!*t)
        return false;
    long v = strtol(t, &e, 10);
    if (*e)
        return false;
    *out = v;
    return true;
}

static int32_t jep_value(struct chk_history *h, const char *t)
{
    if (!strcmp(t, "nil"))
        return CHK_NIL;
    return chk_history_value(h, t, strlen(t));
}

/* Closes one Jepsen op. type: 0 ok, 1 fail, 2 info. */
static int jep_close(struct chk_history *h, struct pend *pd, int type, int f, const char *v1,
                     const char *v2, int64_t t, char *msg, size_t msg_size)
{
    if (f != pd->f) {
        snprintf(msg, msg_size, "completion of a different operation than was invoked");
        return -1;
    }
    int64_t ret = type == 2 ? CHK_NEVER : t;
    int status = type == 2 ? CHK_ST_UNKNOWN : CHK_ST_OK;
    struct chk_op *op = NULL;
    if (f == F_READ) {
        if (type == 0) {
            long x;
            if (strcmp(v1, "nil") && !parse_long(v1, &x)) {
                snprintf(msg, msg_size, "bad read value \"%s\"", v1);
                return -1;
            }
            op = chk_history_get(h, 0, pd->key, jep_value(h, v1), pd->call, ret, status, CHK_NO_REV,
                                 CHK_NO_REV, CHK_NO_REV, CHK_NO_REV);
        } else {
            op = chk_history_get(h, 0, pd->key, CHK_NIL, pd->call, type == 2 ? ret : t,
                                 type == 2 ? CHK_ST_UNKNOWN : CHK_ST_FAIL, CHK_NO_REV, CHK_NO_REV,
                                 CHK_NO_REV, CHK_NO_REV);
            op->err = CHK_ERR_OTHER;
        }
    } else if (f == F_WRITE) {
        op = chk_history_put(h, 0, pd->key, pd->a, pd->call, ret, type == 1 ? CHK_ST_FAIL : status,
                             CHK_NO_REV);
    } else {
        /* :fail :cas is a definite outcome: the compare failed. */
        op = chk_history_cas(h, 0, pd->key, pd->a, pd->b, pd->call, ret, status, CHK_NO_REV,
                             type == 0 ? 1 : 0);
    }
    (void)v2;
    op->line = pd->line;
    pd->open = false;
    return 0;
}

static int jep_line(struct chk_history *h, struct pends *ps, int32_t key, const char *s,
                    const char *end, int64_t t, uint32_t line, char *msg, size_t msg_size)
{
    const char *m = NULL;
    for (const char *p = s; p + 14 <= end; p++) {
        if (!memcmp(p, "jepsen.util - ", 14)) {
            m = p + 14;
            break;
        }
    }
    char tp[64], tt[64], tf[64], v1[64], v2[64];
    long proc;
    if (!m || !next_tok(&m, end, tp) || !next_tok(&m, end, tt) || !next_tok(&m, end, tf) ||
        !next_tok(&m, end, v1) || !parse_long(tp, &proc) || proc < 0 || proc > 1000000) {
        snprintf(msg, msg_size, "malformed line (expected \"INFO  jepsen.util - P :type :f V\")");
        return -1;
    }
    v2[0] = 0;
    next_tok(&m, end, v2);
    int f = !strcmp(tf, ":read")    ? F_READ
            : !strcmp(tf, ":write") ? F_WRITE
            : !strcmp(tf, ":cas")   ? F_CAS
                                    : -1;
    int type = !strcmp(tt, ":ok")       ? 0
               : !strcmp(tt, ":fail")   ? 1
               : !strcmp(tt, ":info")   ? 2
               : !strcmp(tt, ":invoke") ? 3
                                        : -1;
    if (f < 0 || type < 0) {
        snprintf(msg, msg_size, "unknown op \"%s %s\"", tt, tf);
        return -1;
    }
    struct pend *pd = pend_get(ps, proc);
    if (type != 3) {
        if (!pd->open) {
            snprintf(msg, msg_size, "completion of process %ld without an invoke", proc);
            return -1;
        }
        int rc = jep_close(h, pd, type, f, v1, v2, t, msg, msg_size);
        if (!rc)
            h->ops[h->op_count - 1].client = (int32_t)proc;
        return rc;
    }
    if (pd->open) {
        snprintf(msg, msg_size, "process %ld invokes while its operation at line %u is open", proc,
                 pd->line);
        return -1;
    }
    memset(pd, 0, sizeof(*pd));
    pd->open = true;
    pd->f = f;
    pd->key = key;
    pd->call = t;
    pd->line = line;
    if (f == F_WRITE) {
        long x;
        if (!parse_long(v1, &x)) {
            snprintf(msg, msg_size, "bad write value \"%s\"", v1);
            return -1;
        }
        pd->a = jep_value(h, v1);
    } else if (f == F_CAS) {
        long a, b;
        size_t n1 = strlen(v1), n2 = strlen(v2);
        if (v1[0] != '[' || n2 < 2 || v2[n2 - 1] != ']')
            goto bad_cas;
        memmove(v1, v1 + 1, n1);
        v2[n2 - 1] = 0;
        if (!parse_long(v1, &a) || !parse_long(v2, &b))
            goto bad_cas;
        pd->a = jep_value(h, v1);
        pd->b = jep_value(h, v2);
    }
    return 0;
bad_cas:
    snprintf(msg, msg_size, "bad cas argument (expected [A B])");
    return -1;
}

/* Invokes still open at end of input: unknown outcome, in flight forever. */
static void close_open(struct chk_history *h, struct pends *ps, bool kv)
{
    for (size_t i = 0; i < ps->n; i++) {
        struct pend *pd = &ps->v[i];
        if (!pd->open)
            continue;
        struct chk_op *op;
        if (pd->f == F_READ || pd->f == F_GET)
            op = chk_history_get(h, (int32_t)i, pd->key, CHK_NIL, pd->call, CHK_NEVER,
                                 CHK_ST_UNKNOWN, CHK_NO_REV, CHK_NO_REV, CHK_NO_REV, CHK_NO_REV);
        else if (pd->f == F_CAS)
            op = chk_history_cas(h, (int32_t)i, pd->key, pd->a, pd->b, pd->call, CHK_NEVER,
                                 CHK_ST_UNKNOWN, CHK_NO_REV, -1);
        else if (pd->f == F_APPEND)
            op = chk_history_append(h, (int32_t)i, pd->key, pd->a, pd->call, CHK_NEVER,
                                    CHK_ST_UNKNOWN);
        else
            op = chk_history_put(h, (int32_t)i, pd->key, pd->a, pd->call, CHK_NEVER, CHK_ST_UNKNOWN,
                                 CHK_NO_REV);
        op->line = pd->line;
        pd->open = false;
    }
    (void)kv;
}

typedef int (*line_fn)(struct chk_history *h, struct pends *ps, int32_t key, const char *s,
                       const char *end, int64_t t, uint32_t line, char *msg, size_t msg_size);

static int load_lines(const char *name, const char *text, size_t len, struct chk_history *h,
                      struct fl_buf *err, line_fn fn, int32_t key, bool kv)
{
    struct pends ps = {0};
    const char *p = text, *end = text + len;
    uint32_t line = 0;
    int rc = FL_OK;
    char msg[200];
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        line++;
        const char *q = p;
        while (q < le && isspace((unsigned char)*q))
            q++;
        if (q < le && fn(h, &ps, key, q, le, line, line, msg, sizeof(msg))) {
            fl_buf_printf(err, "%s:%u: %s", name, line, msg);
            rc = FL_EINVAL;
            break;
        }
        p = nl ? nl + 1 : end;
    }
    if (!rc) {
        close_open(h, &ps, kv);
        rc = ld_finish(name, h, err);
    }
    free(ps.v);
    return rc;
}

int hist_load_jepsen_mem(const char *name, const char *text, size_t len, struct chk_history *h,
                         struct fl_buf *err)
{
    int32_t key = chk_history_key(h, "register", 8);
    return load_lines(name, text, len, h, err, jep_line, key, false);
}

/* ---- porcupine kv ---------------------------------------------------------------- */

/* Finds `field` (e.g. ":key ") in [s, end); returns the position after it or NULL. */
static const char *edn_field(const char *s, const char *end, const char *field)
{
    size_t n = strlen(field);
    for (const char *p = s; p + n <= end; p++) {
        if (!memcmp(p, field, n))
            return p + n;
    }
    return NULL;
}

/* Does [p, end) start with lit? (The text need not be NUL-terminated.) */
static bool edn_starts(const char *p, const char *end, const char *lit)
{
    size_t n = strlen(lit);
    return (size_t)(end - p) >= n && !memcmp(p, lit, n);
}

/* Parses an EDN string at p (must start with '"') into out; returns the position after
 * the closing quote or NULL. */
static const char *edn_string(const char *p, const char *end, struct fl_buf *out)
{
    fl_buf_reset(out);
    if (p >= end || *p != '"')
        return NULL;
    for (p++; p < end; p++) {
        if (*p == '"')
            return p + 1;
        if (*p == '\\' && p + 1 < end)
            p++;
        fl_buf_append(out, p, 1);
    }
    return NULL;
}

static int kv_line(struct chk_history *h, struct pends *ps, int32_t unused, const char *s,
                   const char *end, int64_t t, uint32_t line, char *msg, size_t msg_size)
{
    (void)unused;
    const char *pp = edn_field(s, end, ":process ");
    const char *pt = edn_field(s, end, ":type :");
    const char *pf = edn_field(s, end, ":f :");
    const char *pk = edn_field(s, end, ":key ");
    const char *pv = edn_field(s, end, ":value ");
    if (*s != '{' || !pp || !pt || !pf || !pk || !pv) {
        snprintf(msg, msg_size,
                 "malformed line (expected {:process P, :type T, :f F, :key K, "
                 ":value V})");
        return -1;
    }
    /* Every read stays inside [s, end): the text of a *_mem call may end anywhere. */
    long proc = 0;
    const char *e = pp;
    while (e < end && *e >= '0' && *e <= '9' && proc <= 1000000)
        proc = proc * 10 + (*e++ - '0');
    if (e == pp || proc > 1000000) {
        snprintf(msg, msg_size, "bad :process");
        return -1;
    }
    bool invoke = edn_starts(pt, end, "invoke,"), ok = edn_starts(pt, end, "ok,");
    int f = edn_starts(pf, end, "get,")      ? F_GET
            : edn_starts(pf, end, "put,")    ? F_PUT
            : edn_starts(pf, end, "append,") ? F_APPEND
                                             : -1;
    if ((!invoke && !ok) || f < 0) {
        snprintf(msg, msg_size, "unknown op (type/f)");
        return -1;
    }
    struct fl_buf b;
    fl_buf_init(&b);
    int rc = -1;
    if (!edn_string(pk, end, &b)) {
        snprintf(msg, msg_size, "bad :key string");
        goto out;
    }
    int32_t key = chk_history_key(h, (const char *)b.data, b.len);
    bool vnil = edn_starts(pv, end, "nil");
    int32_t val = CHK_NIL;
    if (!vnil) {
        if (!edn_string(pv, end, &b)) {
            snprintf(msg, msg_size, "bad :value");
            goto out;
        }
        val = chk_history_value(h, (const char *)b.data, b.len);
    }
    struct pend *pd = pend_get(ps, proc);
    if (invoke) {
        if (pd->open) {
            snprintf(msg, msg_size, "process %ld invokes while its operation at line %u is open",
                     proc, pd->line);
            goto out;
        }
        *pd = (struct pend){true, f, key, val, CHK_NIL, t, line};
        rc = 0;
        goto out;
    }
    if (!pd->open || pd->f != f || pd->key != key) {
        snprintf(msg, msg_size, "completion without a matching invoke of process %ld", proc);
        goto out;
    }
    struct chk_op *op;
    if (f == F_GET)
        op = chk_history_get(h, (int32_t)proc, key, vnil ? CHK_NIL : val, pd->call, t, CHK_ST_OK,
                             CHK_NO_REV, CHK_NO_REV, CHK_NO_REV, CHK_NO_REV);
    else if (f == F_PUT)
        op = chk_history_put(h, (int32_t)proc, key, pd->a, pd->call, t, CHK_ST_OK, CHK_NO_REV);
    else
        op = chk_history_append(h, (int32_t)proc, key, pd->a, pd->call, t, CHK_ST_OK);
    op->line = pd->line;
    pd->open = false;
    rc = 0;
out:
    fl_buf_close(&b);
    return rc;
}

int hist_load_porcupine_kv_mem(const char *name, const char *text, size_t len,
                               struct chk_history *h, struct fl_buf *err)
{
    h->empty_is_absent = true;
    return load_lines(name, text, len, h, err, kv_line, 0, true);
}
