/*
 * rs_fixture.h: what the raft_safety unit tests share: an entry's data hash, and the
 * bootstrap of members 1..n (conf entries 1..n adding each as a voter, term 1,
 * committed and synced on every member). Test-only.
 */
#ifndef FL_TEST_RS_FIXTURE_H
#define FL_TEST_RS_FIXTURE_H

#include "checkers/raft_safety.h"
#include "fl_test.h"

/* The hash the tests give entry data v. */
static inline uint64_t h(uint64_t v)
{
    return v * UINT64_C(0x9E3779B97F4A7C15) + 1;
}

/* Members 1..n bootstrap: conf entries 1..n (term 1), committed and synced on each;
 * with apply, also applied. */
static inline struct raft_safety *rs_boot(uint64_t n, bool apply)
{
    struct raft_safety *c = raft_safety_new();
    for (uint64_t m = 1; m <= n; m++) {
        for (uint64_t i = 1; i <= n; i++) {
            CHECK(raft_safety_append(c, m, i, 1, h(i)));
            CHECK(raft_safety_conf_entry(c, m, i, RAFT_SAFETY_CC_ADD_VOTER, i));
        }
        CHECK(raft_safety_commit(c, m, n));
        raft_safety_synced(c, m);
        for (uint64_t i = 1; apply && i <= n; i++)
            CHECK(raft_safety_apply(c, m, i, 1, h(i)));
    }
    return c;
}

#endif
