/*
 * history_json.c: one convention for raw bytes (keys, values) inside the JSON text of
 * ops.request/ops.response and other detail columns, so writers and readers agree:
 * valid UTF-8 (NUL bytes included, escaped as \u0000 by jansson) is a JSON string,
 * anything else {"hex":"<lowercase hex>"}; no bytes at all is null.
 *
 * The hist_jt_* writers produce the same JSON text without jansson values, byte for
 * byte what json_dumps(JSON_COMPACT | JSON_ENSURE_ASCII) gives: the recorder writes
 * one request and one response per operation, and building then dumping jansson
 * values was most of what recording cost.
 */
#include "harness/common/text.h"
#include "harness/history/history.h"

#include <string.h>

#include <errno.h>

json_t *hist_json_bytes(const void *p, size_t n)
{
    if (!p)
        return json_null();
    json_t *s = json_stringn(n ? p : "", n); /* NULL when not valid UTF-8 */
    if (s)
        return s;
    static const char digits[] = "0123456789abcdef";
    const uint8_t *b = p;
    char *hex = fl_malloc(2 * n + 1);
    for (size_t i = 0; i < n; i++) {
        hex[2 * i] = digits[b[i] >> 4];
        hex[2 * i + 1] = digits[b[i] & 0xf];
    }
    hex[2 * n] = 0;
    json_t *obj = json_object();
    json_object_set_new(obj, "hex", json_stringn(hex, 2 * n));
    free(hex);
    return obj;
}

static int hex_val(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int hist_json_bytes_get(const json_t *j, struct fl_buf *out, bool *is_null)
{
    fl_buf_reset(out);
    *is_null = false;
    if (!j || json_is_null(j)) {
        *is_null = true;
        return FL_OK;
    }
    if (json_is_string(j)) {
        fl_buf_append(out, json_string_value(j), json_string_length(j));
        return FL_OK;
    }
    const json_t *h = json_is_object(j) ? json_object_get(j, "hex") : NULL;
    if (!h || !json_is_string(h) || json_object_size(j) != 1)
        return FL_EINVAL;
    const char *s = json_string_value(h);
    size_t n = json_string_length(h);
    if (n % 2)
        return FL_EINVAL;
    fl_buf_reserve(out, n / 2);
    for (size_t i = 0; i < n; i += 2) {
        int hi = hex_val(s[i]), lo = hex_val(s[i + 1]);
        if (hi < 0 || lo < 0) {
            fl_buf_reset(out);
            return FL_EINVAL;
        }
        uint8_t byte = (uint8_t)(hi << 4 | lo);
        fl_buf_append(out, &byte, 1);
    }
    return FL_OK;
}

/* ---- JSON text without jansson values (history.h: hist_jt_*) ------------------------- */

static bool utf8_valid(const uint8_t *p, size_t n)
{
    uint32_t cp;
    for (size_t i = 0; i < n;) {
        if (p[i] < 0x80) {
            i++;
            continue;
        }
        size_t l = fl_utf8_seq(p + i, n - i, &cp);
        if (!l)
            return false;
        i += l;
    }
    return true;
}

static const char hex_lower[] = "0123456789abcdef";
static const char hex_upper[] = "0123456789ABCDEF";

static void put_u16_escape(struct fl_buf *out, uint32_t v)
{
    char e[6] = {'\\',
                 'u',
                 hex_upper[(v >> 12) & 0xF],
                 hex_upper[(v >> 8) & 0xF],
                 hex_upper[(v >> 4) & 0xF],
                 hex_upper[v & 0xF]};
    fl_buf_append(out, e, sizeof e);
}

/* jansson's dump_string with JSON_ENSURE_ASCII over valid UTF-8: printable ASCII as
 * is, the short escapes, other control characters and everything above 0x7F as
 * \uXXXX (upper-case hex; a surrogate pair above the BMP). Returns true when a NUL
 * was escaped. */
static bool put_string(struct fl_buf *out, const uint8_t *p, size_t n)
{
    bool nul = false;
    fl_buf_reserve(out, n + 2);
    out->data[out->len++] = '"';
    size_t run = 0; /* start of the bytes not yet copied */
    for (size_t i = 0; i < n;) {
        uint8_t c = p[i];
        if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
            i++;
            continue;
        }
        fl_buf_append(out, p + run, i - run);
        uint32_t cp;
        size_t l = fl_utf8_seq(p + i, n - i, &cp);
        FL_ASSERT(l > 0); /* validated by the caller */
        i += l;
        run = i;
        const char *esc = NULL;
        switch (cp) {
        case '\\':
            esc = "\\\\";
            break;
        case '"':
            esc = "\\\"";
            break;
        case '\b':
            esc = "\\b";
            break;
        case '\f':
            esc = "\\f";
            break;
        case '\n':
            esc = "\\n";
            break;
        case '\r':
            esc = "\\r";
            break;
        case '\t':
            esc = "\\t";
            break;
        default:
            break;
        }
        if (esc) {
            fl_buf_append(out, esc, 2);
        } else if (cp < 0x10000) {
            nul |= cp == 0;
            put_u16_escape(out, cp);
        } else {
            cp -= 0x10000;
            put_u16_escape(out, 0xD800 | ((cp & 0xFFC00) >> 10));
            put_u16_escape(out, 0xDC00 | (cp & 0x3FF));
        }
    }
    fl_buf_append(out, p + run, n - run);
    fl_buf_append(out, "\"", 1);
    return nul;
}

/* Length of the leading run of bytes that go into a JSON string as they are
 * (printable ASCII but '"' and '\\'), eight at a time: a word has none of the others
 * when no byte has the high bit, none is below 0x20 and none equals '"' or '\\'
 * (the exact has-zero-byte / has-less-than tests). */
static size_t plain_prefix(const uint8_t *p, size_t n)
{
    const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        uint64_t q = w ^ (ones * '"'), b = w ^ (ones * '\\');
        uint64_t bad = (w | ((w - ones * 0x20) & ~w) | ((q - ones) & ~q) | ((b - ones) & ~b));
        if (bad & highs)
            break;
    }
    while (i < n && p[i] >= 0x20 && p[i] < 0x80 && p[i] != '"' && p[i] != '\\')
        i++;
    return i;
}

bool hist_jt_bytes(struct fl_buf *out, const void *p, size_t n)
{
    if (!p) {
        fl_buf_append(out, "null", 4);
        return false;
    }
    const uint8_t *b = p;
    size_t plain = plain_prefix(b, n);
    if (plain == n) { /* the usual key or value: copied as it is */
        fl_buf_reserve(out, n + 2);
        out->data[out->len++] = '"';
        memcpy(out->data + out->len, b, n);
        out->len += n;
        out->data[out->len++] = '"';
        return false;
    }
    if (utf8_valid(b + plain, n - plain))
        return put_string(out, b, n);
    fl_buf_reserve(out, 2 * n + 10);
    fl_buf_append(out, "{\"hex\":\"", 8);
    for (size_t i = 0; i < n; i++) {
        out->data[out->len++] = (uint8_t)hex_lower[b[i] >> 4];
        out->data[out->len++] = (uint8_t)hex_lower[b[i] & 0xF];
    }
    fl_buf_append(out, "\"}", 2);
    return false;
}

void hist_jt_str(struct fl_buf *out, const char *s)
{
    size_t n = strlen(s);
    FL_ASSERT(utf8_valid((const uint8_t *)s, n));
    put_string(out, (const uint8_t *)s, n);
}

size_t hist_jt_int_put(char *dst, int64_t x)
{
    char tmp[HIST_JT_INT_MAX];
    size_t i = sizeof tmp;
    uint64_t u = x < 0 ? (uint64_t)0 - (uint64_t)x : (uint64_t)x;
    do {
        tmp[--i] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (x < 0)
        tmp[--i] = '-';
    memcpy(dst, tmp + i, sizeof tmp - i);
    return sizeof tmp - i;
}

void hist_jt_int(struct fl_buf *out, int64_t x)
{
    char tmp[HIST_JT_INT_MAX];
    fl_buf_append(out, tmp, hist_jt_int_put(tmp, x));
}

void hist_jt_key(struct fl_buf *out, bool first, const char *name)
{
    size_t n = strlen(name);
    fl_buf_reserve(out, n + 4);
    if (!first)
        out->data[out->len++] = ',';
    out->data[out->len++] = '"';
    memcpy(out->data + out->len, name, n);
    out->len += n;
    out->data[out->len++] = '"';
    out->data[out->len++] = ':';
}

/* ---- seeds ---------------------------------------------------------------------- */

json_t *hist_seed_json(uint64_t seed)
{
    if (seed <= (uint64_t)INT64_MAX)
        return json_integer((json_int_t)seed);
    char s[24];
    snprintf(s, sizeof s, "%llu", (unsigned long long)seed);
    return json_string(s);
}

bool hist_seed_from_json(const json_t *j, uint64_t *out)
{
    if (json_is_integer(j) && json_integer_value(j) >= 0) {
        *out = (uint64_t)json_integer_value(j);
        return true;
    }
    const char *s = json_string_value(j);
    if (!s || *s < '0' || *s > '9')
        return false;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end)
        return false;
    *out = v;
    return true;
}
