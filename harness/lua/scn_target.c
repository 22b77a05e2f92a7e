/*
 * scn_target.c: a scenario on a target that cannot honour some of its functions
 * (run.h run_target_unsupported: skew, failpoints, bug switches... on a real etcd)
 * stops at the first call of one with "SCENARIO:LINE: NAME: not available on
 * --target T: why", exit 2, instead of running something else than it says. The
 * functions are replaced before the script runs; the refusal is a stop of the
 * scenario (SCN_STOP_REFUSED), which pcall cannot catch (scn_guard.c).
 */
#include "harness/lua/scn_int.h"

/* A stop, not a plain error: pcall cannot keep the script going (scn_guard.c). */
int scn_target_refuse(lua_State *L, const char *what)
{
    struct scn *S = scn_of(L);
    /* the script's line, also when called through pcall (a C frame has none) */
    lua_Debug ar;
    int level = 1;
    while (lua_getstack(L, level, &ar) && lua_getinfo(L, "Sl", &ar) && ar.currentline <= 0)
        level++;
    luaL_where(L, level);
    snprintf(S->stop_msg, sizeof S->stop_msg, "%s%s", lua_tostring(L, -1), what);
    if (S->stop == SCN_STOP_NONE)
        S->stop = SCN_STOP_REFUSED;
    lua_pushstring(L, S->stop_msg);
    return lua_error(L);
}

static int l_refused(lua_State *L)
{
    char what[512];
    snprintf(what, sizeof what, "%s: not available on --target %s: %s",
             lua_tostring(L, lua_upvalueindex(1)), lua_tostring(L, lua_upvalueindex(2)),
             lua_tostring(L, lua_upvalueindex(3)));
    return scn_target_refuse(L, what);
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
