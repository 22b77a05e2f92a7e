/*
 * test_member_hello.c: the live proxies tell our members' connections apart by the
 * hello frame their environment sends first (harness/live/live_member.h,
 * nodes/env/env_uv.h): a whole hello names its slot, a partial one asks for more
 * bytes, anything else (etcd's HTTP, a client's frame, an address beyond the proxy's
 * nodes) is the outside world.
 */
#include "fl_test.h"

#include "harness/live/live_member.h"
#include "nodes/env/env_uv.h"

static void test_identify(void)
{
    const uint8_t hello3[] = {8, 0, 0, 0, 'F', 'L', 'H', 'I', 3, 0, 0, 0, 0x42};
    CHECK_EQ_INT(lv_identify_member_hello(hello3, 12, NULL), 3);
    CHECK_EQ_INT(lv_identify_member_hello(hello3, sizeof hello3, NULL), 3); /* more behind */
    for (size_t n = 1; n < 12; n++)
        CHECK_EQ_INT(lv_identify_member_hello(hello3, n, NULL), -1); /* wait for the rest */
    const uint8_t client[] = {8, 0, 0, 0, 'F', 'L', 'H', 'I', 100, 0, 0, 0};
    CHECK_EQ_INT(lv_identify_member_hello(client, 12, NULL), LV_EXTERNAL); /* not a node */
    const uint8_t http[] = "POST /raft/stream HTTP/1.1\r\n";
    CHECK_EQ_INT(lv_identify_member_hello(http, sizeof http - 1, NULL), LV_EXTERNAL);
    const uint8_t frame[] = {5, 0, 0, 0, 'h', 'e', 'l', 'l', 'o'};
    CHECK_EQ_INT(lv_identify_member_hello(frame, sizeof frame, NULL), LV_EXTERNAL);
    const uint8_t bad_magic[] = {8, 0, 0, 0, 'F', 'L', 'H', 'X'};
    CHECK_EQ_INT(lv_identify_member_hello(bad_magic, sizeof bad_magic, NULL), LV_EXTERNAL);
    CHECK_EQ_INT(ENV_UV_HELLO_LEN, 8);
}

int main(void)
{
    FL_TEST(test_identify);
    return fl_test_end();
}
