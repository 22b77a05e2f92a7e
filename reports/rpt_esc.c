/*
 * rpt_esc.c: escaping of history text for every place a report puts it, and the replay
 * command. Keys and values in the history are arbitrary bytes, so every byte string is
 * first cut into valid UTF-8 sequences (kept) and everything else (shown as \xNN); the
 * HTML and XML escapers then take care of markup characters. In readable text
 * (rpt_bytes_text, the first stage for keys and values) a backslash is itself written
 * as \\ so that "\x00" typed by a user and a real NUL byte never look the same; the
 * HTML and XML escapers leave backslashes alone so that text is not escaped twice.
 */
#include "reports/rpt_int.h"
#include "harness/common/text.h"

/* Length of the valid UTF-8 sequence at p (fl_utf8_seq), or 0 when the bytes there are
 * not one. U+FFFE and U+FFFF are not characters (XML 1.0 refuses them): shown as
 * bytes. */
static size_t utf8_seq(const uint8_t *p, size_t n)
{
    uint32_t cp;
    size_t len = fl_utf8_seq(p, n, &cp);
    return len && cp != 0xfffe && cp != 0xffff ? len : 0;
}

static void hex_byte(struct fl_buf *out, uint8_t c)
{
    static const char digits[] = "0123456789abcdef";
    char t[4] = {'\\', 'x', digits[c >> 4], digits[c & 15]};
    fl_buf_append(out, t, 4);
}

enum esc_mode { ESC_TEXT, ESC_HTML, ESC_XML };

static void escape(struct fl_buf *out, const void *s, size_t n, enum esc_mode mode)
{
    const uint8_t *p = s;
    size_t i = 0;
    while (i < n) {
        uint8_t c = p[i];
        size_t len = utf8_seq(p + i, n - i);
        if (len == 0 || (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) {
            hex_byte(out, c);
            i++;
            continue;
        }
        if (len > 1) {
            fl_buf_append(out, p + i, len);
            i += len;
            continue;
        }
        i++;
        if (c == '\\' && mode == ESC_TEXT) {
            fl_buf_append(out, "\\\\", 2);
            continue;
        }
        if (mode != ESC_TEXT) {
            const char *ent = c == '&'                       ? "&amp;"
                              : c == '<'                     ? "&lt;"
                              : c == '>'                     ? "&gt;"
                              : c == '"'                     ? "&quot;"
                              : c == '\''                    ? "&#39;"
                              : c == '\n' && mode == ESC_XML ? "&#10;"
                                                             : NULL;
            if (ent) {
                fl_buf_append(out, ent, strlen(ent));
                continue;
            }
        }
        fl_buf_append(out, &c, 1);
    }
}

void rpt_html_escape(struct fl_buf *out, const void *s, size_t n)
{
    escape(out, s, n, ESC_HTML);
}

void rpt_xml_escape(struct fl_buf *out, const void *s, size_t n)
{
    escape(out, s, n, ESC_XML);
}

void rpt_bytes_text(struct fl_buf *out, const void *s, size_t n)
{
    escape(out, s, n, ESC_TEXT);
}

void rpt_html_escape_str(struct fl_buf *out, const char *s)
{
    if (s)
        escape(out, s, strlen(s), ESC_HTML);
}

/* Markdown table cells: readable text with | ` * _ [ ] < > escaped, newlines folded. */
void rpt_md_escape(struct fl_buf *out, const char *s)
{
    struct fl_buf t;
    fl_buf_init(&t);
    if (s)
        escape(&t, s, strlen(s), ESC_TEXT);
    for (size_t i = 0; i < t.len; i++) {
        char c = (char)t.data[i];
        if (c == '\n' || c == '\t')
            c = ' ';
        if (strchr("|`*_[]<>#", c))
            fl_buf_append(out, "\\", 1);
        fl_buf_append(out, &c, 1);
    }
    fl_buf_close(&t);
}

char *rpt_text_cap(const char *s, size_t max)
{
    if (!s)
        return NULL;
    size_t n = strlen(s);
    if (n <= max)
        return fl_strdup(s);
    size_t cut = max;
    while (cut > 0 && ((uint8_t)s[cut] & 0xc0) == 0x80)
        cut--;
    char *r = fl_malloc(cut + 4);
    memcpy(r, s, cut);
    memcpy(r + cut, "\xe2\x80\xa6", 4); /* "…" and the NUL */
    return r;
}

const char *rpt_fmt_ns(int64_t ns, char *buf, size_t n)
{
    if (ns == HIST_NULL)
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%lld.%03lld s", (long long)(ns / FL_S), (long long)((ns % FL_S) / FL_MS));
    return buf;
}

/* Appends s to out as one POSIX shell word (harness/common/text.h): quoted when it
 * holds anything unusual, control bytes produced by printf so none reach a terminal. */
static void shell_word(struct fl_buf *out, const char *s)
{
    fl_shell_word(out, s);
}

char *rpt_replay_command(const char *scenario, uint64_t seed, const char *options_json)
{
    struct fl_buf b;
    fl_buf_init(&b);
    fl_buf_printf(&b, "faultline run ");
    shell_word(&b, scenario ? scenario : "?");
    fl_buf_printf(&b, " --seed %llu", (unsigned long long)seed);
    json_t *o = options_json ? json_loads(options_json, 0, NULL) : NULL;
    json_t *bugs = o ? json_object_get(o, "bugs") : NULL;
    size_t i;
    json_t *v;
    json_array_foreach(bugs, i, v)
    {
        if (!json_is_string(v))
            continue;
        fl_buf_printf(&b, " --bug ");
        shell_word(&b, json_string_value(v));
    }
    if (o && json_is_true(json_object_get(o, "unsafe_lua")))
        fl_buf_printf(&b, " --unsafe-lua");
    json_decref(o);
    char *r = fl_strdup(fl_buf_cstr(&b));
    fl_buf_close(&b);
    return r;
}
