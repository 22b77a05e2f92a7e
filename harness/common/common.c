/*
 * common.c: assertion handler, error strings, checked allocation, byte buffers,
 * logging. See common.h.
 */
#include <malloc.h>
#include "harness/common/common.h"
#include "harness/common/text.h"

#include <stdarg.h>

struct fl_assert_ctx fl_assert_ctx;
int fl_log_level = FL_LOG_WARN;

void fl_assert_fail(const char *cond, const char *file, int line, const char *func, const char *fmt,
                    ...)
{
    fprintf(stderr, "faultline: assertion failed: %s\n  at %s:%d in %s()\n", cond, file, line,
            func);
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        fputs("  ", stderr);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        va_end(ap);
    }
    fprintf(stderr, "  seed=%llu sim_time_ns=%lld event=%llu%s",
            (unsigned long long)fl_assert_ctx.seed, (long long)fl_assert_ctx.now_ns,
            (unsigned long long)fl_assert_ctx.event_no, fl_assert_ctx.scenario ? " scenario=" : "");
    if (fl_assert_ctx.scenario)
        fl_shell_word_write(stderr, fl_assert_ctx.scenario);
    fputc('\n', stderr);
    if (fl_assert_ctx.scenario) {
        /* shell-quoted, no allocation (this may be an out-of-memory abort) */
        fputs("  replay: faultline run ", stderr);
        fl_shell_word_write(stderr, fl_assert_ctx.scenario);
        fprintf(stderr, " --seed %llu\n", (unsigned long long)fl_assert_ctx.seed);
    }
    fflush(stderr);
    abort();
}

const char *fl_strerror(int err)
{
    static const char *const names[] = {[FL_OK] = "ok",
                                        [FL_EINVAL] = "invalid argument",
                                        [FL_ENOMEM] = "out of memory",
                                        [FL_EIO] = "I/O error",
                                        [FL_ENOENT] = "not found",
                                        [FL_EEXIST] = "already exists",
                                        [FL_EBUSY] = "busy",
                                        [FL_ETIMEOUT] = "timed out",
                                        [FL_EDOWN] = "peer down",
                                        [FL_ECORRUPT] = "corrupt data",
                                        [FL_ERANGE] = "out of range",
                                        [FL_EFULL] = "full",
                                        [FL_EUNSUP] = "not supported",
                                        [FL_EINTERNAL] = "internal error"};
    return FL_ENUM_NAME(names, err, "unknown error");
}

void *fl_malloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    FL_ASSERTF(p != NULL, "out of memory allocating %zu bytes", n);
    return p;
}

void *fl_calloc(size_t count, size_t n)
{
    void *p = calloc(count ? count : 1, n ? n : 1);
    FL_ASSERTF(p != NULL, "out of memory allocating %zu x %zu bytes", count, n);
    return p;
}

void *fl_realloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    FL_ASSERTF(q != NULL, "out of memory reallocating %zu bytes", n);
    return q;
}

char *fl_strdup(const char *s)
{
    return s ? fl_memdup(s, strlen(s) + 1) : NULL;
}

void *fl_memdup(const void *p, size_t n)
{
    void *q = fl_malloc(n);
    if (n)
        memcpy(q, p, n);
    return q;
}

void fl_buf_init(struct fl_buf *b)
{
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
}

void fl_buf_close(struct fl_buf *b)
{
    free(b->data);
    fl_buf_init(b);
}

void fl_buf_reserve(struct fl_buf *b, size_t extra)
{
    FL_ASSERT(b->len + extra >= b->len);
    FL_GROW(b->data, b->cap, b->len + extra, 64);
}

void fl_buf_append(struct fl_buf *b, const void *p, size_t n)
{
    if (n == 0)
        return;
    fl_buf_reserve(b, n);
    memcpy(b->data + b->len, p, n);
    b->len += n;
}

void fl_buf_printf(struct fl_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    FL_ASSERT(n >= 0);
    fl_buf_reserve(b, (size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf((char *)b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void fl_buf_reset(struct fl_buf *b)
{
    b->len = 0;
}

const char *fl_buf_cstr(struct fl_buf *b)
{
    fl_buf_reserve(b, 1);
    b->data[b->len] = 0;
    return (const char *)b->data;
}

void fl_log(int level, const char *fmt, ...)
{
    static const char *names[] = {"error", "warn", "info", "debug"};
    if (level > fl_log_level)
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "faultline: %s: ", names[level]);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

void fl_heap_keep_big_buffers(void)
{
    static bool done;
    if (done)
        return;
    done = true;
    mallopt(M_MMAP_THRESHOLD, 512 << 20);
    mallopt(M_TRIM_THRESHOLD, 1024 << 20);
}

bool fl_parse_u64(const char *s, size_t n, uint64_t *out)
{
    if (!s || n == 0)
        return false;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        uint64_t d = (uint64_t)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return false;
        v = v * 10 + d;
    }
    *out = v;
    return true;
}

void fl_zero_range(void *base, size_t from, size_t to, size_t elem_bytes)
{
    FL_ASSERT(from < to);
    memset((char *)base + from * elem_bytes, 0, (to - from) * elem_bytes);
}

size_t fl_grow_cap(size_t cap, size_t need, size_t cap_min, size_t elem_bytes)
{
    FL_ASSERT(cap_min > 0 && elem_bytes > 0);
    size_t c = cap ? cap : cap_min;
    while (c < need) {
        FL_ASSERTF(c <= SIZE_MAX / 2, "capacity overflow growing to %zu", need);
        c *= 2;
    }
    FL_ASSERTF(c <= SIZE_MAX / elem_bytes, "array of %zu x %zu bytes overflows", c, elem_bytes);
    FL_ASSERT(c >= need && c >= cap);
    return c;
}

bool fl_inv_fail(char *why, size_t why_len, const char *file, int line, const char *fmt, ...)
{
    if (!why || !why_len)
        return false;
    const char *base = strrchr(file, '/');
    int k = snprintf(why, why_len, "%s:%d: ", base ? base + 1 : file, line);
    va_list ap;
    va_start(ap, fmt);
    if (k >= 0 && (size_t)k < why_len)
        vsnprintf(why + k, why_len - (size_t)k, fmt, ap);
    va_end(ap);
    return false;
}
