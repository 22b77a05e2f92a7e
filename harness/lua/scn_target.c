/*
 * scn_target.c: a scenario on a target that cannot honour some of its functions
 * (run.h run_target_unsupported: skew, failpoints, bug switches... on a real etcd)
 * stops at the first call of one with "SCENARIO:LINE: NAME: not available on
 * --target T: why", exit 2, instead of running something else than it says. The
 * functions are replaced before the script runs, so even a call inside pcall is
 * refused the same way (the error still ends the run: see scn_guard.c).
 */
#include "harness/lua/scn_int.h"

static int l_refused(lua_State *L)
{
    return luaL_error(L, "%s: not available on --target %s: %s",
                      lua_tostring(L, lua_upvalueindex(1)), lua_tostring(L, lua_upvalueindex(2)),
                      lua_tostring(L, lua_upvalueindex(3)));
}

void scn_target_restrict(lua_State *L, struct run_world *rw)
{
    for (const char *const *n = scn_api_names; *n; n++) {
        const char *why = strchr(*n, ':') ? NULL : run_target_unsupported(rw, *n);
        if (!why)
            continue;
        lua_pushstring(L, *n);
        lua_pushstring(L, run_target_name(run_target(rw)));
        lua_pushstring(L, why);
        lua_pushcclosure(L, l_refused, 3);
        lua_setglobal(L, *n);
    }
}
