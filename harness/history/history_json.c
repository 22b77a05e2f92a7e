/*
 * history_json.c: one convention for raw bytes (keys, values) inside the JSON text of
 * ops.request/ops.response and other detail columns, so writers and readers agree:
 * valid UTF-8 (NUL bytes included, escaped as \u0000 by jansson) is a JSON string,
 * anything else {"hex":"<lowercase hex>"}; no bytes at all is null.
 */
#include "harness/history/history.h"

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
