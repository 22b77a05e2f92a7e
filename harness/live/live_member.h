/*
 * live_member.h: what the live run needs to put our own members (`faultline member`,
 * issue 16 §2) behind the TCP proxies of live_proxy.h: telling which member opened a
 * connection, from the hello frame every member's environment sends first
 * (nodes/env/env_uv.h).
 */
#ifndef FL_LIVE_MEMBER_H
#define FL_LIVE_MEMBER_H

#include <stddef.h>
#include <stdint.h>

/* An lv_identify_fn: the sender of a connection opened by an env_uv environment is
 * the address its hello frame names (a member's address is its slot, which is also
 * its proxy node index). LV_EXTERNAL when the bytes are not a hello or the address is
 * not a node index; -1 while fewer than the hello's 12 bytes arrived. arg unused. */
int lv_identify_member_hello(const uint8_t *p, size_t n, void *arg);

#endif
