/*
 * scn_sched.c: time in a scenario: run(d) / sleep(d) block the calling coroutine for d
 * of simulated time while the world runs; run_until(pred, limit) re-evaluates pred
 * (which may itself block, through lua_callk) every poll interval until it is true or
 * limit has passed; spawn(fn, ...) starts a coroutine; now() is the simulated time.
 */
#include "harness/lua/scn_int.h"

static int after_sleep(lua_State *L, int status, lua_KContext ctx)
{
    (void)status;
    (void)ctx;
    lua_pushinteger(L, run_now_ns(scn_of(L)->rw));
    return 1;
}

/* run(d) and sleep(d): the same thing under two names; run reads better in the main
 * chunk ("let the world run 5 s"), sleep in a spawned coroutine. Returns the time. */
static int block_for(lua_State *L, const char *name)
{
    int64_t d = scn_check_duration(L, 1);
    scn_world(L);
    scn_need_co(L, name);
    d = scn_scale_duration(scn_of(L), d);
    scn_deadline(L, name, d);
    return scn_sleep_k(L, d, 0, after_sleep);
}

static int l_run(lua_State *L)
{
    return block_for(L, "run");
}

static int l_sleep(lua_State *L)
{
    return block_for(L, "sleep");
}

/* run_until(pred, limit [, poll]): stack 1 = pred, 2 = deadline (ns), 3 = poll (ns). */
static int until_check(lua_State *L, int status, lua_KContext ctx);

static int until_after_call(lua_State *L, int status, lua_KContext ctx)
{
    (void)status;
    bool ok = lua_toboolean(L, -1);
    lua_settop(L, 3);
    struct run_world *rw = scn_of(L)->rw;
    int64_t now = run_now_ns(rw), deadline = lua_tointeger(L, 2);
    if (ok || now >= deadline) {
        lua_pushboolean(L, ok);
        return 1;
    }
    int64_t step = FL_MIN(lua_tointeger(L, 3), deadline - now);
    return scn_sleep_k(L, step, ctx, until_check);
}

static int until_check(lua_State *L, int status, lua_KContext ctx)
{
    (void)status;
    lua_settop(L, 3);
    lua_pushvalue(L, 1);
    lua_callk(L, 0, 1, ctx, until_after_call);
    return until_after_call(L, LUA_OK, ctx);
}

static int l_run_until(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TFUNCTION);
    int64_t limit = scn_check_duration(L, 2);
    int64_t poll = scn_opt_duration(L, 3, 10 * FL_MS);
    luaL_argcheck(L, poll > 0, 3, "poll interval must be positive");
    scn_world(L);
    scn_need_co(L, "run_until");
    int64_t deadline = scn_deadline(L, "run_until", scn_scale_duration(scn_of(L), limit));
    lua_settop(L, 1);
    lua_pushinteger(L, deadline);
    lua_pushinteger(L, poll);
    return until_check(L, LUA_OK, 0);
}

static int l_spawn(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TFUNCTION);
    struct scn *S = scn_of(L);
    scn_world(L);
    int nargs = lua_gettop(L) - 1;
    struct scn_co *co = scn_co_start(S, L, nargs);
    lua_pushinteger(L, co->id);
    return 1;
}

static int l_now(lua_State *L)
{
    lua_pushinteger(L, run_now_ns(scn_world(L)));
    return 1;
}

void scn_open_sched(lua_State *L)
{
    static const luaL_Reg fns[] = {
        {"run", l_run},     {"sleep", l_sleep}, {"run_until", l_run_until},
        {"spawn", l_spawn}, {"now", l_now},     {NULL, NULL}};
    lua_pushglobaltable(L);
    luaL_setfuncs(L, fns, 0);
    lua_pop(L, 1);
}
