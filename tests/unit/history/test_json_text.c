/*
 * test_json_text.c: the hist_jt_* text writers give byte for byte what jansson's
 * json_dumps(JSON_COMPACT | JSON_ENSURE_ASCII) gives for the same values: bytes as
 * strings or {"hex":...} (random bytes, valid UTF-8 of every length, the escapes,
 * NUL, surrogates and overlong forms that must turn into hex), integers at the
 * edges, and a small object built both ways.
 */
#include "harness/history/history.h"

#include "fl_test.h"

#include <stdlib.h>

static uint64_t rng = 0x9e3779b97f4a7c15u;

static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static int mismatches;

static void same_bytes(const uint8_t *p, size_t n)
{
    json_t *j = hist_json_bytes(p, n);
    char *want = json_dumps(j, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_ENCODE_ANY);
    json_decref(j);
    struct fl_buf b;
    fl_buf_init(&b);
    bool nul = hist_jt_bytes(&b, p, n);
    const char *got = fl_buf_cstr(&b);
    bool ok = want && !strcmp(want, got);
    if (!ok && mismatches++ < 5)
        fprintf(stderr, "want %s\n got %s\n", want ? want : "(null)", got);
    CHECK(ok);
    CHECK_EQ_INT(nul, want && strstr(want, "\\u0000") != NULL && p && memchr(p, 0, n) != NULL);
    free(want);
    fl_buf_close(&b);
}

/* A random code point of the given UTF-8 length, encoded (valid). */
static size_t put_cp(uint8_t *o, int len)
{
    uint32_t cp;
    switch (len) {
    case 1:
        cp = (uint32_t)(next() % 0x80);
        o[0] = (uint8_t)cp;
        return 1;
    case 2:
        cp = 0x80 + (uint32_t)(next() % (0x800 - 0x80));
        o[0] = (uint8_t)(0xC0 | cp >> 6);
        o[1] = (uint8_t)(0x80 | (cp & 0x3F));
        return 2;
    case 3:
        do
            cp = 0x800 + (uint32_t)(next() % (0x10000 - 0x800));
        while (cp >= 0xD800 && cp <= 0xDFFF);
        o[0] = (uint8_t)(0xE0 | cp >> 12);
        o[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (uint8_t)(0x80 | (cp & 0x3F));
        return 3;
    default:
        cp = 0x10000 + (uint32_t)(next() % (0x110000 - 0x10000));
        o[0] = (uint8_t)(0xF0 | cp >> 18);
        o[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
        o[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
        o[3] = (uint8_t)(0x80 | (cp & 0x3F));
        return 4;
    }
}

static void test_bytes(void)
{
    same_bytes(NULL, 0);
    same_bytes((const uint8_t *)"", 0);
    same_bytes((const uint8_t *)"key12", 5);
    same_bytes((const uint8_t *)"a\"b\\c/d\b\f\n\r\t\x01\x1f\x7f", 14);
    same_bytes((const uint8_t *)"nul\0inside", 10);
    static const char *const odd[] = {
        "\xc0\x80",         /* overlong NUL */
        "\xc1\xbf",         /* overlong */
        "\xe0\x80\x80",     /* overlong */
        "\xed\xa0\x80",     /* surrogate */
        "\xf4\x90\x80\x80", /* above U+10FFFF */
        "\xf5\x80\x80\x80", "\x80", "\xbf", "\xc3", "\xe2\x82", "\xf0\x9f\x98", "\xc3\xa9", /* é */
        "\xe2\x82\xac",     /* € */
        "\xf0\x9f\x98\x80", /* U+1F600: surrogate pair */
        "\xef\xbf\xbf",     /* U+FFFF */
        "\xf4\x8f\xbf\xbf", /* U+10FFFF */
    };
    for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++)
        same_bytes((const uint8_t *)odd[i], strlen(odd[i]));
    uint8_t buf[256];
    for (int round = 0; round < 20000; round++) {
        size_t n = 0, want = (size_t)(next() % 40);
        int mode = (int)(next() % 4);
        while (n < want && n + 4 <= sizeof buf) {
            if (mode == 0) /* random bytes: mostly hex */
                buf[n++] = (uint8_t)next();
            else if (mode == 1) /* printable ASCII and the escapes */
                buf[n++] = (uint8_t)(next() % 0x80);
            else /* valid UTF-8, sometimes broken by one random byte */
                n += put_cp(buf + n, 1 + (int)(next() % 4));
        }
        if (mode == 3 && n)
            buf[next() % n] = (uint8_t)next();
        same_bytes(buf, n);
    }
}

static void same_int(int64_t x)
{
    json_t *j = json_integer(x);
    char *want = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY);
    json_decref(j);
    struct fl_buf b;
    fl_buf_init(&b);
    hist_jt_int(&b, x);
    CHECK_EQ_STR(fl_buf_cstr(&b), want);
    free(want);
    fl_buf_close(&b);
}

static void test_ints(void)
{
    static const int64_t edge[] = {
        0,         1, -1, 9, 10, -10, 99, 100, INT64_MAX, INT64_MIN, INT64_MIN + 1, 1234567890123LL,
        -987654321};
    for (size_t i = 0; i < sizeof edge / sizeof edge[0]; i++)
        same_int(edge[i]);
    for (int i = 0; i < 2000; i++)
        same_int((int64_t)next() >> (next() % 64));
}

static void test_object(void)
{
    json_t *o = json_object(), *a = json_array(), *h = json_object();
    json_object_set_new(h, "revision", json_integer(42));
    json_object_set_new(o, "header", h);
    json_object_set_new(o, "method", json_string("lease_grant"));
    json_array_append_new(a, hist_json_bytes("k\xff", 2));
    json_array_append_new(a, hist_json_bytes("v", 1));
    json_object_set_new(o, "kvs", a);
    json_object_set_new(o, "empty", json_array());
    char *want = json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII);
    json_decref(o);
    struct fl_buf b;
    fl_buf_init(&b);
    fl_buf_append(&b, "{", 1);
    hist_jt_key(&b, true, "header");
    fl_buf_append(&b, "{", 1);
    hist_jt_key(&b, true, "revision");
    hist_jt_int(&b, 42);
    fl_buf_append(&b, "}", 1);
    hist_jt_key(&b, false, "method");
    hist_jt_str(&b, "lease_grant");
    hist_jt_key(&b, false, "kvs");
    fl_buf_append(&b, "[", 1);
    hist_jt_bytes(&b, "k\xff", 2);
    fl_buf_append(&b, ",", 1);
    hist_jt_bytes(&b, "v", 1);
    fl_buf_append(&b, "]", 1);
    hist_jt_key(&b, false, "empty");
    fl_buf_append(&b, "[]}", 3);
    CHECK_EQ_STR(fl_buf_cstr(&b), want);
    free(want);
    fl_buf_close(&b);
}

int main(void)
{
    FL_TEST(test_bytes);
    FL_TEST(test_ints);
    FL_TEST(test_object);
    return fl_test_end();
}
