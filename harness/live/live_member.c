/*
 * live_member.c: the proxies' view of our members' connections (live_member.h).
 * Reads only the first bytes of a connection; never consumes them (the proxy
 * forwards them, and the member's environment reads the hello itself).
 */
#include "harness/live/live_member.h"

#include "harness/live/live_proxy.h"
#include "nodes/env/env_uv.h"

#include <string.h>

int lv_identify_member_hello(const uint8_t *p, size_t n, void *arg)
{
    (void)arg;
    uint8_t head[8] = {ENV_UV_HELLO_LEN, 0, 0, 0};
    memcpy(head + 4, ENV_UV_HELLO_MAGIC, 4);
    if (memcmp(p, head, n < sizeof head ? n : sizeof head) != 0)
        return LV_EXTERNAL;
    if (n < sizeof head + 4)
        return -1;
    uint32_t a =
        (uint32_t)p[8] | (uint32_t)p[9] << 8 | (uint32_t)p[10] << 16 | (uint32_t)p[11] << 24;
    return a < LV_NODES_MAX ? (int)a : LV_EXTERNAL;
}
