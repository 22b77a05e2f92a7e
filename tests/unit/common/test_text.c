/*
 * test_text.c: harness/common/text.h. Terminal escaping leaves valid UTF-8 alone and
 * shows every control byte, C1 character and invalid byte as an escape; shell words
 * round-trip through a real /bin/sh for every byte value and for random strings, and
 * never contain a control byte themselves.
 */
#include "fl_test.h"

#include "harness/common/text.h"

#include <stdlib.h>

static char *term(const char *s, size_t n, int flags)
{
    struct fl_buf b;
    fl_buf_init(&b);
    fl_term_escape(&b, s, n, flags);
    char *r = fl_strdup(fl_buf_cstr(&b));
    fl_buf_close(&b);
    return r;
}

static void test_term(void)
{
    char *r = term("plain text, é ü 日本 🙂", strlen("plain text, é ü 日本 🙂"), 0);
    CHECK_EQ_STR(r, "plain text, é ü 日本 🙂");
    free(r);
    r = term("a\x1b[2Jb\rc\nd\te\x7f", 13, FL_TERM_ONE_LINE);
    CHECK_EQ_STR(r, "a\\x1b[2Jb\\x0dc\\x0ad\\x09e\\x7f");
    free(r);
    r = term("a\nb\tc\x1b", 6, FL_TERM_KEEP_NEWLINES);
    CHECK_EQ_STR(r, "a\nb\tc\\x1b");
    free(r);
    /* C1 CSI as UTF-8 (U+009B), a lone 0x9b byte, overlong '/', a surrogate, a
     * truncated sequence, a NUL */
    r = term("\xc2\x9b|\x9b|\xc0\xaf|\xed\xa0\x80|\xe2\x82|\0", 16, 0);
    CHECK_EQ_STR(r, "\\u009b|\\x9b|\\xc0\\xaf|\\xed\\xa0\\x80|\\xe2\\x82|\\x00");
    free(r);
    r = fl_term_dup(NULL);
    CHECK_EQ_STR(r, "");
    free(r);
}

static bool has_control(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if ((*p < 0x20 && *p != '\n' && *p != '\t') || *p == 0x7f)
            return true;
    return false;
}

/* Runs `printf %s WORD` in /bin/sh and compares what comes back with s. */
static bool round_trips(const char *s)
{
    struct fl_buf cmd;
    fl_buf_init(&cmd);
    fl_buf_printf(&cmd, "printf %%s ");
    fl_shell_word(&cmd, s);
    bool clean = !has_control(fl_buf_cstr(&cmd));
    FILE *f = popen(fl_buf_cstr(&cmd), "r");
    fl_buf_close(&cmd);
    if (!f)
        return false;
    struct fl_buf got;
    fl_buf_init(&got);
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        fl_buf_append(&got, chunk, n);
    bool ok = pclose(f) == 0 && got.len == strlen(s) && (!got.len || !memcmp(got.data, s, got.len));
    if (!ok || !clean)
        fprintf(stderr, "shell word of %zu bytes does not round-trip (clean %d)\n", strlen(s),
                clean);
    fl_buf_close(&got);
    return ok && clean;
}

static void test_shell(void)
{
    struct fl_buf b;
    fl_buf_init(&b);
    fl_shell_word(&b, "scenarios/smoke.lua");
    CHECK_EQ_STR(fl_buf_cstr(&b), "scenarios/smoke.lua");
    fl_buf_reset(&b);
    fl_shell_word(&b, "my scen.lua");
    CHECK_EQ_STR(fl_buf_cstr(&b), "'my scen.lua'");
    fl_buf_reset(&b);
    fl_shell_word(&b, "it's");
    CHECK_EQ_STR(fl_buf_cstr(&b), "'it'\\''s'");
    fl_buf_reset(&b);
    fl_shell_word(&b, "a\x1b"
                      "b");
    CHECK_EQ_STR(fl_buf_cstr(&b), "'a'\"$(printf '\\033')\"'b'");
    fl_buf_close(&b);
    static const char *const words[] = {
        "",   "-",    "~user", "a b",  "$HOME", "`id`",     "$(id)",  "a\"b",     "'", "''",
        "\\", "a\nb", "a\n",   "\n",   "x\r",   "\x1b[2J",  "é",      "\xff",     "*", "a;b|c&d",
        "!x", "#c",   "{a,b}", "[ab]", "\t",    "\xc2\x9b", "é\x1bé", "a'\x01'b",
    };
    for (size_t i = 0; i < FL_ARRAY_LEN(words); i++)
        CHECK(round_trips(words[i]));
    /* every byte value on its own and between letters */
    char one[4];
    bool all = true;
    for (int c = 1; c < 256; c++) {
        snprintf(one, sizeof one, "a%cb", c);
        all = round_trips(one) && all;
    }
    CHECK(all);
    /* random strings of any bytes, seeded: the test is the same every time */
    uint64_t x = 0x9e3779b97f4a7c15u;
    all = true;
    for (int t = 0; t < 200; t++) {
        char s[40];
        size_t len = 1 + (size_t)(t % 38);
        for (size_t i = 0; i < len; i++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            s[i] = (char)(1 + x % 255);
        }
        s[len] = '\0';
        all = round_trips(s) && all;
    }
    CHECK(all);
}

static size_t seq(const char *s, size_t n, uint32_t *cp)
{
    return fl_utf8_seq((const uint8_t *)s, n, cp);
}

/* fl_utf8_seq, the decoder terminal escaping, history JSON text and reports share:
 * each limit of RFC 3629 on both sides, and a sequence cut short. */
static void test_utf8_seq(void)
{
    uint32_t cp = 0;
    CHECK(seq("A", 1, &cp) == 1 && cp == 'A');
    CHECK(seq("\x00", 1, &cp) == 1 && cp == 0);
    CHECK(seq("\x7f", 1, &cp) == 1 && cp == 0x7f);
    CHECK(seq("\x80", 1, &cp) == 0);     /* a lone continuation byte */
    CHECK(seq("\xc1\xbf", 2, &cp) == 0); /* overlong U+007F */
    CHECK(seq("\xc2\x80", 2, &cp) == 2 && cp == 0x80);
    CHECK(seq("\xc2\x80", 1, &cp) == 0);     /* cut short */
    CHECK(seq("\xc2\x41", 2, &cp) == 0);     /* not a continuation */
    CHECK(seq("\xe0\x9f\xbf", 3, &cp) == 0); /* overlong U+07FF */
    CHECK(seq("\xe0\xa0\x80", 3, &cp) == 3 && cp == 0x800);
    CHECK(seq("\xed\x9f\xbf", 3, &cp) == 3 && cp == 0xd7ff);
    CHECK(seq("\xed\xa0\x80", 3, &cp) == 0); /* surrogate U+D800 */
    CHECK(seq("\xed\xbf\xbf", 3, &cp) == 0); /* surrogate U+DFFF */
    CHECK(seq("\xee\x80\x80", 3, &cp) == 3 && cp == 0xe000);
    CHECK(seq("\xef\xbf\xbf", 3, &cp) == 3 && cp == 0xffff);
    CHECK(seq("\xef\xbf\xbf", 2, &cp) == 0);
    CHECK(seq("\xf0\x8f\xbf\xbf", 4, &cp) == 0); /* overlong U+FFFF */
    CHECK(seq("\xf0\x90\x80\x80", 4, &cp) == 4 && cp == 0x10000);
    CHECK(seq("\xf4\x8f\xbf\xbf", 4, &cp) == 4 && cp == 0x10ffff);
    CHECK(seq("\xf4\x90\x80\x80", 4, &cp) == 0); /* U+110000 */
    CHECK(seq("\xf5\x80\x80\x80", 4, &cp) == 0);
    CHECK(seq("\xf0\x90\x80\x41", 4, &cp) == 0);
    CHECK(seq("\xff", 1, &cp) == 0);
}

int main(void)
{
    FL_TEST(test_utf8_seq);
    FL_TEST(test_term);
    FL_TEST(test_shell);
    return fl_test_end();
}
