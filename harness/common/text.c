/*
 * text.c: escaping for terminals and quoting for shells (text.h). Both walk the bytes
 * once, classify each UTF-8 sequence, and never truncate. The UTF-8 rules are the
 * strict ones of RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF.
 */
#include "harness/common/text.h"

size_t fl_utf8_seq(const uint8_t *p, size_t n, uint32_t *cp)
{
    FL_ASSERT(n > 0);
    uint8_t b = p[0];
    size_t len;
    uint8_t lo = 0x80, hi = 0xbf; /* the allowed range of the second byte */
    if (b < 0x80) {
        *cp = b;
        return 1;
    }
    if (b >= 0xc2 && b <= 0xdf) {
        len = 2;
        *cp = b & 0x1fu;
    } else if (b >= 0xe0 && b <= 0xef) {
        len = 3;
        *cp = b & 0x0fu;
        lo = b == 0xe0 ? 0xa0 : 0x80;
        hi = b == 0xed ? 0x9f : 0xbf;
    } else if (b >= 0xf0 && b <= 0xf4) {
        len = 4;
        *cp = b & 0x07u;
        lo = b == 0xf0 ? 0x90 : 0x80;
        hi = b == 0xf4 ? 0x8f : 0xbf;
    } else {
        return 0;
    }
    if (n < len || p[1] < lo || p[1] > hi)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0;
        *cp = (*cp << 6) | (p[i] & 0x3fu);
    }
    return len;
}

/* True for a character a terminal may act on rather than show. */
static bool is_control(uint32_t cp)
{
    return cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f);
}

void fl_term_escape(struct fl_buf *out, const void *p, size_t n, int flags)
{
    const uint8_t *s = p;
    size_t i = 0;
    while (i < n) {
        uint32_t cp = 0;
        size_t len = fl_utf8_seq(s + i, n - i, &cp);
        bool keep = (flags & FL_TERM_KEEP_NEWLINES) && (cp == '\n' || cp == '\t');
        if (len == 0) {
            fl_buf_printf(out, "\\x%02x", s[i]);
            i++;
            continue;
        }
        if (is_control(cp) && !keep) {
            if (cp < 0x80)
                fl_buf_printf(out, "\\x%02x", (unsigned)cp);
            else
                fl_buf_printf(out, "\\u%04x", (unsigned)cp);
        } else {
            fl_buf_append(out, s + i, len);
        }
        i += len;
    }
}

char *fl_term_dup(const char *s)
{
    struct fl_buf b;
    fl_buf_init(&b);
    if (s)
        fl_term_escape(&b, s, strlen(s), FL_TERM_ONE_LINE);
    char *r = fl_strdup(fl_buf_cstr(&b));
    fl_buf_close(&b);
    return r;
}

/* Bytes that need no quoting in any POSIX shell (nor start a tilde or option). */
static bool shell_plain(const char *s)
{
    if (!*s)
        return false;
    for (const char *c = s; *c; c++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%", *c))
            return false;
    return true;
}

/* Length of the run of bytes at s that must come from printf (control characters and
 * invalid UTF-8; a newline stays literal), 0 when s starts with a showable one. */
static size_t shell_hidden_run(const uint8_t *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        uint32_t cp = 0;
        size_t len = fl_utf8_seq(s + i, n - i, &cp);
        if (len && (!is_control(cp) || cp == '\n' || cp == '\t'))
            break;
        i += len ? len : 1;
    }
    return i;
}

/* Where a shell word goes: a buffer, or a stream (no allocation: assertion handler). */
struct shell_sink {
    struct fl_buf *buf;
    FILE *f;
};

static void put(struct shell_sink *k, const void *p, size_t n)
{
    if (k->buf)
        fl_buf_append(k->buf, p, n);
    else
        fwrite(p, 1, n, k->f);
}

static void shell_word(struct shell_sink *k, const char *s)
{
    if (shell_plain(s)) {
        put(k, s, strlen(s));
        return;
    }
    const uint8_t *p = (const uint8_t *)s;
    size_t n = strlen(s), i = 0;
    bool quoted = false; /* inside '...' */
    if (n == 0)
        put(k, "''", 2);
    while (i < n) {
        size_t hidden = shell_hidden_run(p + i, n - i);
        if ((hidden || p[i] == '\'') && quoted) {
            put(k, "'", 1);
            quoted = false;
        }
        if (hidden) {
            put(k, "\"$(printf '", 11);
            for (size_t b = 0; b < hidden; b++) {
                char oct[5] = {'\\', (char)('0' + (p[i + b] >> 6)),
                               (char)('0' + ((p[i + b] >> 3) & 7)), (char)('0' + (p[i + b] & 7)),
                               0};
                put(k, oct, 4);
            }
            put(k, "')\"", 3);
            i += hidden;
        } else if (p[i] == '\'') {
            put(k, "\\'", 2);
            i++;
        } else {
            uint32_t cp = 0;
            size_t len = fl_utf8_seq(p + i, n - i, &cp); /* >= 1: not hidden */
            if (!quoted)
                put(k, "'", 1);
            quoted = true;
            put(k, p + i, len);
            i += len;
        }
    }
    if (quoted)
        put(k, "'", 1);
}

void fl_shell_word(struct fl_buf *out, const char *s)
{
    struct shell_sink k = {.buf = out, .f = NULL};
    shell_word(&k, s);
}

void fl_shell_word_write(FILE *f, const char *s)
{
    struct shell_sink k = {.buf = NULL, .f = f};
    shell_word(&k, s);
}
