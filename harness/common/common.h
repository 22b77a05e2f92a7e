/*
 * common.h: the few things every faultline module shares: assertions that stay on
 * in every build, the operating-error enum, checked allocation, (pointer, length)
 * byte buffers, CRC32C for frames and a 64-bit digest built on xxHash.
 *
 * Programmer errors are FL_ASSERT and abort after printing the seed, simulated time
 * and event number of the run that hit them (fl_assert_ctx, kept current by the
 * simulator), so every crash is a replayable bug report. Operating errors (bad input,
 * I/O, a peer that is down) are return codes from enum fl_err.
 *
 * Nothing here reads a clock, an environment variable or a random source.
 */
#ifndef FL_COMMON_H
#define FL_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What the assertion handler prints besides the failed condition. The simulator
 * updates these fields as it runs; zero when no world is running. */
struct fl_assert_ctx {
    uint64_t seed;
    int64_t now_ns;
    uint64_t event_no;
    const char *scenario; /* may be NULL */
};
extern struct fl_assert_ctx fl_assert_ctx;

_Noreturn void fl_assert_fail(const char *cond, const char *file, int line, const char *func,
                              const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Stays on in Release and sanitizer builds alike. */
#define FL_ASSERT(cond)                                                                            \
    do {                                                                                           \
        if (__builtin_expect(!(cond), 0))                                                          \
            fl_assert_fail(#cond, __FILE__, __LINE__, __func__, NULL);                             \
    } while (0)
#define FL_ASSERTF(cond, ...)                                                                      \
    do {                                                                                           \
        if (__builtin_expect(!(cond), 0))                                                          \
            fl_assert_fail(#cond, __FILE__, __LINE__, __func__, __VA_ARGS__);                      \
    } while (0)
#define FL_UNREACHABLE() fl_assert_fail("unreachable", __FILE__, __LINE__, __func__, NULL)

#define FL_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
/* An enum's name from its table of names (designated initializers, `[X] = "x"`): the
 * one form of every value-to-text function, instead of a switch of case/return pairs.
 * dflt for a value outside the table or one the table leaves out. */
static inline const char *fl_enum_name(const char *const *names, size_t n, long long v,
                                       const char *dflt)
{
    return v >= 0 && (unsigned long long)v < n && names[v] ? names[v] : dflt;
}
#define FL_ENUM_NAME(names, v, dflt) fl_enum_name(names, FL_ARRAY_LEN(names), (long long)(v), dflt)
#define FL_MIN(a, b)                 ((a) < (b) ? (a) : (b))
#define FL_MAX(a, b)                 ((a) > (b) ? (a) : (b))

/* Simulated time units, in nanoseconds. */
#define FL_NS INT64_C(1)
#define FL_US INT64_C(1000)
#define FL_MS INT64_C(1000000)
#define FL_S  INT64_C(1000000000)

/* Operating errors. Keep fl_strerror in step. */
enum fl_err {
    FL_OK = 0,
    FL_EINVAL,   /* bad argument or input */
    FL_ENOMEM,   /* out of memory */
    FL_EIO,      /* I/O error (real or simulated) */
    FL_ENOENT,   /* no such thing */
    FL_EEXIST,   /* already exists */
    FL_EBUSY,    /* busy, try later */
    FL_ETIMEOUT, /* timed out */
    FL_EDOWN,    /* peer or node is down */
    FL_ECORRUPT, /* data failed an integrity check */
    FL_ERANGE,   /* out of range */
    FL_EFULL,    /* a bounded queue or quota is full */
    FL_EUNSUP,   /* not supported */
    FL_EINTERNAL /* internal error */
};
const char *fl_strerror(int err);

/* Checked allocation: out of memory aborts through the assertion handler (a
 * simulation that cannot allocate cannot be replayed faithfully anyway). */
void *fl_malloc(size_t n);
void *fl_calloc(size_t count, size_t n);
void *fl_realloc(void *p, size_t n);
char *fl_strdup(const char *s);
void *fl_memdup(const void *p, size_t n);

/* Dynamic arrays grow through one rule: the capacity doubles from cap (from cap_min
 * when cap is 0) until it holds need elements, so n appends cost O(n) copies.
 * fl_grow_cap returns that capacity (cap itself when it already holds need) and
 * asserts that it and its byte size (times elem_bytes) fit in size_t. */
size_t fl_grow_cap(size_t cap, size_t need, size_t cap_min, size_t elem_bytes);
/* Zeroes elements [from, to) of an array of elem_bytes-sized elements (from < to).
 * Out of line: inlined under the sanitizers' -O0, gcc's stringop-overflow check
 * reads FL_GROW_ZERO's guarded (to - from) as possibly negative and fails -Werror. */
void fl_zero_range(void *base, size_t from, size_t to, size_t elem_bytes);

/* Makes room for need elements in the array p (fl_realloc'd, may be NULL while cap
 * is 0) whose capacity is cap: p and cap are updated together, elements past the old
 * capacity are uninitialised, out of memory aborts. p and cap are lvalues evaluated
 * more than once (no side effects); cap may be any integer type and the new value
 * is asserted to fit it. The usual append:
 *     FL_GROW(v->items, v->cap, v->len + 1, 16);
 *     v->items[v->len++] = x;                                                      */
#define FL_GROW(p, cap, need, cap_min)                                                             \
    do {                                                                                           \
        size_t fl_need_ = (size_t)(need);                                                          \
        if (fl_need_ > (size_t)(cap)) {                                                            \
            size_t fl_cap_ = fl_grow_cap((size_t)(cap), fl_need_, (cap_min), sizeof(*(p)));        \
            (p) = fl_realloc((p), fl_cap_ * sizeof(*(p)));                                         \
            (cap) = (__typeof__(cap))fl_cap_;                                                      \
            FL_ASSERT((size_t)(cap) == fl_cap_);                                                   \
        }                                                                                          \
    } while (0)

/* FL_GROW to need elements, then p[len..need) zeroed and len = need; nothing when
 * need <= len. For a table indexed by position that must cover need - 1, and for a
 * push of one zeroed element (need = len + 1; the new one is p[len - 1]). len is read
 * before it changes, so need may be written in terms of it. */
#define FL_GROW_ZERO(p, len, cap, need, cap_min)                                                   \
    do {                                                                                           \
        size_t fl_to_ = (size_t)(need), fl_from_ = (size_t)(len);                                  \
        if (fl_to_ > fl_from_) {                                                                   \
            FL_GROW(p, cap, fl_to_, cap_min);                                                      \
            fl_zero_range((p), fl_from_, fl_to_, sizeof(*(p)));                                    \
            (len) = (__typeof__(len))fl_to_;                                                       \
        }                                                                                          \
    } while (0)

/* A growable byte buffer. data may be NULL while len == cap == 0. The buffer owns
 * data; fl_buf_close frees it. Never truncates silently. */
struct fl_buf {
    uint8_t *data;
    size_t len;
    size_t cap;
};
void fl_buf_init(struct fl_buf *b);
void fl_buf_close(struct fl_buf *b);
void fl_buf_reserve(struct fl_buf *b, size_t extra);
void fl_buf_append(struct fl_buf *b, const void *p, size_t n);
void fl_buf_printf(struct fl_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void fl_buf_reset(struct fl_buf *b); /* len = 0, keeps memory */
/* Appends a NUL without counting it in len, and returns data as a C string. */
const char *fl_buf_cstr(struct fl_buf *b);

/* Parses the n bytes at s as a plain decimal number: digits only (no sign, space,
 * prefix or exponent, unlike strtoull) and at least one; false when anything else
 * is there or the value does not fit in 64 bits, and *out is then left alone. */
bool fl_parse_u64(const char *s, size_t n, uint64_t *out);

/* CRC32C (Castagnoli), as used to frame every simulated message. */
/* Tells malloc to serve large buffers from the heap and keep freed memory (once per
 * process; a cluster calls it): snapshots and WAL segments are large and short-lived,
 * and fresh mappings for each were faulted in and zeroed every time (a seventh of a
 * saturated cluster's time). Processes that never run a cluster keep the defaults. */
void fl_heap_keep_big_buffers(void);
uint32_t fl_crc32c(uint32_t crc, const void *p, size_t n);
/* The portable table version, and whether fl_crc32c uses the CPU's instruction
 * (FL_CRC32C_SOFTWARE=1 in the environment forces the tables). Same results. */
uint32_t fl_crc32c_sw(uint32_t crc, const void *p, size_t n);
bool fl_crc32c_hw_available(void);

/* The run digest: a 64-bit xxHash (XXH3) folded over the bytes fed to it. */
struct fl_digest {
    void *state; /* XXH3_state_t, owned */
};
void fl_digest_init(struct fl_digest *d);
void fl_digest_close(struct fl_digest *d);
void fl_digest_update(struct fl_digest *d, const void *p, size_t n);
void fl_digest_u64(struct fl_digest *d, uint64_t v); /* little-endian, portable */
void fl_digest_i64(struct fl_digest *d, int64_t v);
void fl_digest_str(struct fl_digest *d, const char *s); /* length-prefixed; NULL allowed */
uint64_t fl_digest_value(const struct fl_digest *d);
/* Writes 16 lowercase hex digits and a NUL into out[17]. */
void fl_digest_hex(uint64_t v, char out[17]);

/* One-shot 64-bit hash for lookups (never for iteration order). */
uint64_t fl_hash64(const void *p, size_t n);

/* Invariant checkers that report instead of aborting (a core's *_invariants_ok, run
 * after every step by tests and --paranoid): fl_inv_fail writes "FILE:LINE: message"
 * (FILE without its directories) into why when why_len > 0, and returns false.
 * FL_INV / FL_INVF return it from the enclosing function, which must have
 * `char *why, size_t why_len` in scope. */
bool fl_inv_fail(char *why, size_t why_len, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
#define FL_INV(cond)                                                                               \
    do {                                                                                           \
        if (!(cond))                                                                               \
            return fl_inv_fail(why, why_len, __FILE__, __LINE__, "%s", #cond);                     \
    } while (0)
#define FL_INVF(cond, ...)                                                                         \
    do {                                                                                           \
        if (!(cond))                                                                               \
            return fl_inv_fail(why, why_len, __FILE__, __LINE__, __VA_ARGS__);                     \
    } while (0)

/* Logging to stderr. Level names: error, warn, info, debug. fl_log_level defaults
 * to warn; the CLI raises it with -v. Messages are never part of a digest. */
enum fl_log_level { FL_LOG_ERROR, FL_LOG_WARN, FL_LOG_INFO, FL_LOG_DEBUG };
extern int fl_log_level;
void fl_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
