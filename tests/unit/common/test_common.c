/* Unit tests of harness/common: buffers, CRC32C against the published check value,
 * digest stability across calls. */
#include "harness/common/common.h"
#include "harness/common/bugs.h"
#include "fl_test.h"

int main(void)
{
    /* CRC32C check value from RFC 3720 / the Castagnoli paper: "123456789". */
    CHECK_EQ_INT(fl_crc32c(0, "123456789", 9), 0xE3069283u);
    uint8_t zeros[32] = {0};
    CHECK_EQ_INT(fl_crc32c(0, zeros, 32), 0x8A9136AAu);
    /* Incremental equals one-shot. */
    CHECK_EQ_INT(fl_crc32c(fl_crc32c(0, "1234", 4), "56789", 5), 0xE3069283u);
    /* The table version gives the same values as the one fl_crc32c picked (the CPU
     * instruction where there is one), at every length and alignment. */
    CHECK_EQ_INT(fl_crc32c_sw(0, "123456789", 9), 0xE3069283u);
    uint8_t buf[300];
    uint64_t x = 0x9E3779B97F4A7C15u;
    for (size_t i = 0; i < sizeof buf; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        buf[i] = (uint8_t)x;
    }
    for (size_t off = 0; off < 9; off++)
        for (size_t n = 0; n + off <= sizeof buf; n += 7) {
            CHECK_EQ_INT(fl_crc32c(0, buf + off, n), fl_crc32c_sw(0, buf + off, n));
            CHECK_EQ_INT(fl_crc32c(0x12345678u, buf + off, n),
                         fl_crc32c_sw(0x12345678u, buf + off, n));
        }

    struct fl_buf b;
    fl_buf_init(&b);
    for (int i = 0; i < 1000; i++)
        fl_buf_printf(&b, "%d,", i);
    CHECK(b.len > 3000);
    CHECK(strncmp(fl_buf_cstr(&b), "0,1,2,", 6) == 0);
    fl_buf_close(&b);

    struct fl_digest d1, d2;
    fl_digest_init(&d1);
    fl_digest_init(&d2);
    fl_digest_u64(&d1, 42);
    fl_digest_str(&d1, "abc");
    fl_digest_u64(&d2, 42);
    fl_digest_str(&d2, "abc");
    CHECK(fl_digest_value(&d1) == fl_digest_value(&d2));
    fl_digest_str(&d2, NULL);
    CHECK(fl_digest_value(&d1) != fl_digest_value(&d2));
    char hex[17];
    fl_digest_hex(0x0123456789abcdefULL, hex);
    CHECK_EQ_STR(hex, "0123456789abcdef");
    fl_digest_close(&d1);
    fl_digest_close(&d2);
    /* Bug registry: names resolve, ids match rows, reset clears. */
    CHECK(!FL_BUG(RAFT_VOTE_IGNORES_LOG));
    CHECK(fl_bug_enable("raft.vote_ignores_log"));
    CHECK(FL_BUG(RAFT_VOTE_IGNORES_LOG));
    CHECK(!fl_bug_enable("no.such_bug"));
    for (int i = 0; i < FL_BUG_COUNT; i++)
        CHECK(fl_bug_find(fl_bug_table[i].name) == &fl_bug_table[i]);
    fl_bug_reset();
    CHECK(!FL_BUG(RAFT_VOTE_IGNORES_LOG));
    return fl_test_end();
}
