/*
 * hash.c: CRC32C for message frames, WAL records and snapshots, and the run digest
 * on xxHash's XXH3-64 streaming API.
 *
 * No Debian library ships CRC32C, so it is here: the SSE4.2 crc32 instruction when
 * the CPU has it (chosen once at run time), else slicing-by-8 tables built from the
 * Castagnoli polynomial. Both compute the same function (tested against each other
 * and against the standard check value), so a run's bytes never depend on the CPU.
 */
#include "harness/common/common.h"

#include <xxhash.h>

static uint32_t crc_table[8][256];
static bool crc_ready;

static void crc_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
        crc_table[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int t = 1; t < 8; t++)
            crc_table[t][i] = (crc_table[t - 1][i] >> 8) ^ crc_table[0][crc_table[t - 1][i] & 0xff];
    crc_ready = true;
}

uint32_t fl_crc32c_sw(uint32_t crc, const void *p, size_t n)
{
    if (!crc_ready)
        crc_init();
    const uint8_t *s = p;
    crc = ~crc;
    while (n >= 8) {
        uint32_t lo = crc ^ ((uint32_t)s[0] | (uint32_t)s[1] << 8 | (uint32_t)s[2] << 16 |
                             (uint32_t)s[3] << 24);
        crc = crc_table[7][lo & 0xff] ^ crc_table[6][(lo >> 8) & 0xff] ^
              crc_table[5][(lo >> 16) & 0xff] ^ crc_table[4][lo >> 24] ^ crc_table[3][s[4]] ^
              crc_table[2][s[5]] ^ crc_table[1][s[6]] ^ crc_table[0][s[7]];
        s += 8;
        n -= 8;
    }
    while (n--)
        crc = (crc >> 8) ^ crc_table[0][(crc ^ *s++) & 0xff];
    return ~crc;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define FL_CRC_HW 1
__attribute__((target("sse4.2"))) static uint32_t crc32c_hw(uint32_t crc, const void *p, size_t n)
{
    const uint8_t *s = p;
    uint64_t c = ~crc;
    while (n && ((uintptr_t)s & 7)) {
        c = __builtin_ia32_crc32qi((uint32_t)c, *s++);
        n--;
    }
    while (n >= 8) {
        uint64_t v;
        memcpy(&v, s, 8); /* little-endian: the byte order the instruction expects */
        c = __builtin_ia32_crc32di(c, v);
        s += 8;
        n -= 8;
    }
    while (n--)
        c = __builtin_ia32_crc32qi((uint32_t)c, *s++);
    return ~(uint32_t)c;
}
#endif

/* 0: not chosen yet, 1: hardware, 2: tables. */
static int crc_impl;

bool fl_crc32c_hw_available(void)
{
#ifdef FL_CRC_HW
    __builtin_cpu_init();
    return __builtin_cpu_supports("sse4.2");
#else
    return false;
#endif
}

uint32_t fl_crc32c(uint32_t crc, const void *p, size_t n)
{
    if (!crc_impl)
        crc_impl = fl_crc32c_hw_available() && !getenv("FL_CRC32C_SOFTWARE") ? 1 : 2;
#ifdef FL_CRC_HW
    if (crc_impl == 1)
        return crc32c_hw(crc, p, n);
#endif
    return fl_crc32c_sw(crc, p, n);
}

void fl_digest_init(struct fl_digest *d)
{
    XXH3_state_t *st = XXH3_createState();
    FL_ASSERT(st != NULL);
    XXH3_64bits_reset(st);
    d->state = st;
}

void fl_digest_close(struct fl_digest *d)
{
    if (d->state)
        XXH3_freeState(d->state);
    d->state = NULL;
}

void fl_digest_update(struct fl_digest *d, const void *p, size_t n)
{
    if (n)
        XXH3_64bits_update(d->state, p, n);
}

void fl_digest_u64(struct fl_digest *d, uint64_t v)
{
    uint8_t b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (uint8_t)(v >> (8 * i));
    XXH3_64bits_update(d->state, b, 8);
}

void fl_digest_i64(struct fl_digest *d, int64_t v)
{
    fl_digest_u64(d, (uint64_t)v);
}

void fl_digest_str(struct fl_digest *d, const char *s)
{
    if (!s) {
        fl_digest_u64(d, UINT64_MAX);
        return;
    }
    size_t n = strlen(s);
    fl_digest_u64(d, n);
    fl_digest_update(d, s, n);
}

uint64_t fl_digest_value(const struct fl_digest *d)
{
    return XXH3_64bits_digest(d->state);
}

void fl_digest_hex(uint64_t v, char out[17])
{
    static const char hex[] = "0123456789abcdef";
    for (int i = 15; i >= 0; i--) {
        out[i] = hex[v & 0xf];
        v >>= 4;
    }
    out[16] = 0;
}

uint64_t fl_hash64(const void *p, size_t n)
{
    return XXH3_64bits(p, n);
}
