/*
 * scn_sandbox.c: the Lua environment a scenario runs in (DESIGN §4, §6).
 *
 * Safe mode (the default) opens only base, table, string, math and utf8, and removes
 * or replaces everything that could make a run depend on something other than
 * (script, seed, options):
 *   - no os, io, debug, package/require, coroutine (spawn is the way to run things
 *     concurrently; a private coroutine.yield would steal the simulator's yields);
 *   - dofile, loadfile and collectgarbage are gone; load accepts text chunks only;
 *     string.dump is gone (no bytecode in or out);
 *   - math.random / math.randomseed draw from the run's "lua" RNG stream;
 *   - pairs and next iterate in sorted key order (Lua's string hash is seeded per
 *     process, so native order changes from run to run); sorted_pairs is the explicit
 *     name; a table with a table (function, ...) as a key cannot be iterated;
 *   - setmetatable refuses __gc and __mode: no finalizers, no weak tables (what they do
 *     depends on when the collector runs);
 *   - table.sort is a stable merge sort (Lua's quicksort picks pivots from the clock);
 *   - tostring of a table or function without __tostring and string.format("%p")
 *     never show an address; print writes to stderr (stdout belongs to --json).
 * Unsafe mode (--unsafe-lua) opens the standard libraries as they are; math.random
 * stays bound to the seeded stream and sorted_pairs stays available.
 */
#include "harness/lua/scn_int.h"
#include "harness/common/text.h"

/* --- math.random ------------------------------------------------------------------- */

/* A uniform integer in [0, n) by rejection: integer arithmetic only (DESIGN §6). */
static uint64_t rand_below(struct run_world *rw, uint64_t n)
{
    FL_ASSERT(n > 0);
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    for (int i = 0; i < 1000; i++) {
        uint64_t x = run_rng_next(rw);
        if (x < limit)
            return x % n;
    }
    FL_UNREACHABLE();
}

static int l_random(lua_State *L)
{
    struct run_world *rw = scn_world(L);
    lua_Integer lo, hi;
    switch (lua_gettop(L)) {
    case 0: {
        /* 53 random bits scaled exactly: the same float on every machine. */
        uint64_t x = run_rng_next(rw) >> 11;
        lua_pushnumber(L, (lua_Number)x * (1.0 / 9007199254740992.0));
        return 1;
    }
    case 1:
        lo = 1;
        hi = luaL_checkinteger(L, 1);
        if (hi == 0) { /* Lua 5.4: random(0) is a whole random integer */
            lua_pushinteger(L, (lua_Integer)run_rng_next(rw));
            return 1;
        }
        break;
    case 2:
        lo = luaL_checkinteger(L, 1);
        hi = luaL_checkinteger(L, 2);
        break;
    default:
        return luaL_error(L, "wrong number of arguments to 'random'");
    }
    luaL_argcheck(L, lo <= hi, lua_gettop(L), "interval is empty");
    uint64_t span = (uint64_t)hi - (uint64_t)lo;
    uint64_t r = span == UINT64_MAX ? run_rng_next(rw) : rand_below(rw, span + 1);
    lua_pushinteger(L, (lua_Integer)((uint64_t)lo + r));
    return 1;
}

static int l_randomseed(lua_State *L)
{
    struct run_world *rw = scn_world(L);
    uint64_t n = lua_isnoneornil(L, 1) ? 0 : (uint64_t)luaL_checkinteger(L, 1);
    run_rng_reseed(rw, n);
    return 0;
}

/* --- sorted iteration ---------------------------------------------------------------- */

static int key_rank(lua_State *L, int idx)
{
    switch (lua_type(L, idx)) {
    case LUA_TNUMBER:
        return 0;
    case LUA_TSTRING:
        return 1;
    case LUA_TBOOLEAN:
        return 2;
    default:
        return -1;
    }
}

/* Total order on keys: numbers < strings < booleans; numbers by value, strings by
 * bytes, false < true. */
static bool key_less(lua_State *L, int a, int b)
{
    int ra = key_rank(L, a), rb = key_rank(L, b);
    if (ra != rb)
        return ra < rb;
    if (ra == 0)
        return lua_compare(L, a, b, LUA_OPLT);
    if (ra == 1) {
        size_t la, lb;
        const char *sa = lua_tolstring(L, a, &la), *sb = lua_tolstring(L, b, &lb);
        int c = memcmp(sa, sb, FL_MIN(la, lb));
        return c < 0 || (c == 0 && la < lb);
    }
    return !lua_toboolean(L, a) && lua_toboolean(L, b);
}

/* Merge sort of the array at index arr (1..n) into a stable order, using key_less or
 * the comparator at cmp (0 = none). Scratch array at tmp. */
static bool sort_less(lua_State *L, int cmp, int a, int b)
{
    a = lua_absindex(L, a);
    b = lua_absindex(L, b);
    if (!cmp) {
        if (lua_type(L, a) == LUA_TNUMBER && lua_type(L, b) == LUA_TNUMBER)
            return lua_compare(L, a, b, LUA_OPLT);
        if (lua_type(L, a) == LUA_TSTRING && lua_type(L, b) == LUA_TSTRING)
            return key_less(L, a, b);
        return lua_compare(L, a, b, LUA_OPLT); /* raises for mixed types, like Lua */
    }
    lua_pushvalue(L, cmp);
    lua_pushvalue(L, a);
    lua_pushvalue(L, b);
    lua_call(L, 2, 1);
    bool r = lua_toboolean(L, -1);
    lua_pop(L, 1);
    return r;
}

static void merge_sort(lua_State *L, int arr, int tmp, int cmp, lua_Integer n)
{
    for (lua_Integer width = 1; width < n; width *= 2) {
        for (lua_Integer lo = 1; lo <= n; lo += 2 * width) {
            lua_Integer mid = FL_MIN(lo + width, n + 1), hi = FL_MIN(lo + 2 * width, n + 1);
            lua_Integer i = lo, j = mid, k = lo;
            while (i < mid || j < hi) {
                bool take_right = false;
                if (i < mid && j < hi) {
                    lua_geti(L, arr, j);
                    lua_geti(L, arr, i);
                    take_right = sort_less(L, cmp, -2, -1);
                    lua_pop(L, 2);
                } else {
                    take_right = i >= mid;
                }
                lua_geti(L, arr, take_right ? j++ : i++);
                lua_seti(L, tmp, k++);
            }
            for (k = lo; k < hi; k++) {
                lua_geti(L, tmp, k);
                lua_seti(L, arr, k);
            }
        }
    }
}

static int l_sort(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_Integer n = luaL_len(L, 1);
    int cmp = 0;
    if (!lua_isnoneornil(L, 2)) {
        luaL_checktype(L, 2, LUA_TFUNCTION);
        cmp = 2;
    }
    lua_settop(L, 2);
    lua_createtable(L, (int)FL_MIN(n, INT32_MAX), 0);
    merge_sort(L, 1, 3, cmp, n);
    return 0;
}

/* Keys that have no order (tables, functions, userdata, threads as keys): named by a
 * fixed preference, so that the message does not depend on which one the hash walk
 * meets first. */
static int unordered_rank(int t)
{
    switch (t) {
    case LUA_TTABLE:
        return 0;
    case LUA_TFUNCTION:
        return 1;
    case LUA_TUSERDATA:
    case LUA_TLIGHTUSERDATA:
        return 2;
    default:
        return 3;
    }
}

static _Noreturn void unordered_error(lua_State *L, const char *fname, int rank)
{
    static const char *const names[] = {"table", "function", "userdata", "thread"};
    luaL_error(L,
               "%s: the table has a %s as a key, and such keys have no deterministic order "
               "(use numbers, strings or booleans as keys)",
               fname, names[rank]);
    FL_UNREACHABLE();
}

/* Pushes an array of the keys of the table at t, sorted by key_less; returns how many.
 * Raises (naming fname) when a key has no order. */
static lua_Integer push_sorted_keys(lua_State *L, int t, const char *fname)
{
    t = lua_absindex(L, t);
    luaL_checkstack(L, 8, "sorted keys");
    lua_newtable(L);
    int keys = lua_gettop(L);
    lua_Integer n = 0;
    int bad = -1;
    lua_pushnil(L);
    while (lua_next(L, t)) {
        lua_pop(L, 1);
        if (key_rank(L, -1) < 0) {
            int r = unordered_rank(lua_type(L, -1));
            bad = bad < 0 || r < bad ? r : bad;
            continue;
        }
        lua_pushvalue(L, -1);
        lua_seti(L, keys, ++n);
    }
    if (bad >= 0)
        unordered_error(L, fname, bad);
    lua_createtable(L, (int)FL_MIN(n, INT32_MAX), 0); /* scratch of the merge sort */
    int tmp = lua_gettop(L);
    for (lua_Integer width = 1; width < n; width *= 2) {
        for (lua_Integer lo = 1; lo <= n; lo += 2 * width) {
            lua_Integer mid = FL_MIN(lo + width, n + 1), hi = FL_MIN(lo + 2 * width, n + 1);
            lua_Integer i = lo, j = mid, k = lo;
            while (i < mid || j < hi) {
                bool right = i >= mid;
                if (i < mid && j < hi) {
                    lua_rawgeti(L, keys, j);
                    lua_rawgeti(L, keys, i);
                    right = key_less(L, -2, -1);
                    lua_pop(L, 2);
                }
                lua_rawgeti(L, keys, right ? j++ : i++);
                lua_rawseti(L, tmp, k++);
            }
            for (k = lo; k < hi; k++) {
                lua_rawgeti(L, tmp, k);
                lua_rawseti(L, keys, k);
            }
        }
    }
    lua_pop(L, 1);
    return n;
}

/* sorted_pairs(t) and the sandbox's pairs: the keys of t collected when the loop starts,
 * sorted by key_less, and visited in that order. A key whose value became nil during
 * the loop is skipped (as next does); keys added during the loop are not visited. */
static int sorted_next(lua_State *L)
{
    /* upvalue 1: sorted key array; upvalue 2: position */
    for (;;) {
        lua_Integer pos = lua_tointeger(L, lua_upvalueindex(2)) + 1;
        if (lua_rawgeti(L, lua_upvalueindex(1), pos) == LUA_TNIL)
            return 1;
        lua_pushinteger(L, pos);
        lua_replace(L, lua_upvalueindex(2));
        lua_pushvalue(L, -1);
        if (lua_rawget(L, 1) != LUA_TNIL)
            return 2;
        lua_pop(L, 2);
    }
}

int scn_l_sorted_pairs(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_settop(L, 1);
    push_sorted_keys(L, 1, "pairs");
    lua_pushinteger(L, 0);
    lua_pushcclosure(L, sorted_next, 2);
    lua_pushvalue(L, 1);
    lua_pushnil(L);
    return 3;
}

/* --- next ------------------------------------------------------------------------------ */

/* The sandbox's next(t, k): the key after k in the order of sorted_pairs (the least key
 * when k is nil), skipping keys whose value is nil, and its value. Lua's own next walks
 * the hash part, whose order follows the per-process string hash seed.
 *
 * A traversal would cost a sort per step; so the sorted keys of the last few tables
 * traversed are kept (most recent first, the oldest dropped: which one is kept depends
 * only on the calls the script made), with where the last step stopped, and a step
 * that continues a kept traversal costs O(1). When k is not among the kept keys (a key
 * added since, or no traversal kept), the keys are collected and sorted again and the
 * step goes on from the least key greater than k. next(t) alone is a linear scan for
 * the least key, so `next(t) == nil` stays cheap. */

static void slot_drop(lua_State *L, struct scn *S, int i)
{
    luaL_unref(L, LUA_REGISTRYINDEX, S->next_slots[i].t_ref);
    luaL_unref(L, LUA_REGISTRYINDEX, S->next_slots[i].keys_ref);
    memmove(&S->next_slots[i], &S->next_slots[i + 1],
            sizeof S->next_slots[0] * (size_t)(S->n_next_slots - i - 1));
    S->n_next_slots--;
}

/* The slot of the table at index 1, moved to the front; -1 when none. */
static int slot_find(lua_State *L, struct scn *S)
{
    for (int i = 0; i < S->n_next_slots; i++) {
        lua_rawgeti(L, LUA_REGISTRYINDEX, S->next_slots[i].t_ref);
        bool same = lua_rawequal(L, -1, 1);
        lua_pop(L, 1);
        if (same) {
            struct scn_next_slot keep = S->next_slots[i];
            memmove(&S->next_slots[1], &S->next_slots[0], sizeof keep * (size_t)i);
            S->next_slots[0] = keep;
            return 0;
        }
    }
    return -1;
}

/* Sorts the keys of the table at index 1 into a new front slot (dropping its old one
 * and, when full, the oldest). */
static void slot_build(lua_State *L, struct scn *S)
{
    if (slot_find(L, S) == 0)
        slot_drop(L, S, 0);
    if (S->n_next_slots == (int)FL_ARRAY_LEN(S->next_slots))
        slot_drop(L, S, S->n_next_slots - 1);
    lua_Integer n = push_sorted_keys(L, 1, "next");
    struct scn_next_slot sl = {.n = n, .pos = 0};
    sl.keys_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_pushvalue(L, 1);
    sl.t_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    memmove(&S->next_slots[1], &S->next_slots[0], sizeof sl * (size_t)S->n_next_slots);
    S->next_slots[0] = sl;
    S->n_next_slots++;
}

/* In the front slot's keys (pushed at keys), the number of keys <= the key at index 2;
 * *found when one of them is that key. */
static lua_Integer slot_rank(lua_State *L, struct scn *S, int keys, bool *found)
{
    struct scn_next_slot *sl = &S->next_slots[0];
    *found = false;
    if (sl->pos >= 1 && sl->pos <= sl->n) { /* the usual case: the step after the last */
        lua_rawgeti(L, keys, sl->pos);
        *found = lua_rawequal(L, -1, 2);
        lua_pop(L, 1);
        if (*found)
            return sl->pos;
    }
    lua_Integer lo = 0, hi = sl->n; /* keys[1..lo] <= k < keys[hi+1..n] */
    while (lo < hi) {
        lua_Integer mid = lo + (hi - lo + 1) / 2;
        lua_rawgeti(L, keys, mid);
        bool greater = key_less(L, 2, -1);
        lua_pop(L, 1);
        if (greater)
            hi = mid - 1;
        else
            lo = mid;
    }
    if (lo > 0) {
        lua_rawgeti(L, keys, lo);
        *found = lua_rawequal(L, -1, 2);
        lua_pop(L, 1);
    }
    return lo;
}

static int next_first(lua_State *L)
{
    int bad = -1;
    bool have = false;
    lua_pushnil(L); /* 3: the least key so far */
    lua_pushnil(L);
    while (lua_next(L, 1)) {
        lua_pop(L, 1);
        if (key_rank(L, -1) < 0) {
            int r = unordered_rank(lua_type(L, -1));
            bad = bad < 0 || r < bad ? r : bad;
        } else if (!have || key_less(L, -1, 3)) {
            lua_pushvalue(L, -1);
            lua_replace(L, 3);
            have = true;
        }
    }
    if (bad >= 0)
        unordered_error(L, "next", bad);
    if (!have)
        return 1; /* nil: empty */
    lua_pushvalue(L, 3);
    lua_rawget(L, 1);
    return 2;
}

static int l_next(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_settop(L, 2);
    if (lua_isnil(L, 2))
        return next_first(L);
    if (key_rank(L, 2) < 0)
        return luaL_error(L, "invalid key to 'next'"); /* such keys are never iterated */
    struct scn *S = scn_of(L);
    bool found = false;
    lua_Integer rank = 0;
    if (slot_find(L, S) == 0) {
        lua_rawgeti(L, LUA_REGISTRYINDEX, S->next_slots[0].keys_ref);
        rank = slot_rank(L, S, 3, &found);
        if (!found)
            lua_pop(L, 1);
    }
    if (!found) { /* no kept traversal has k: the keys as they are now */
        slot_build(L, S);
        lua_rawgeti(L, LUA_REGISTRYINDEX, S->next_slots[0].keys_ref);
        rank = slot_rank(L, S, 3, &found);
    }
    struct scn_next_slot *sl = &S->next_slots[0];
    for (lua_Integer i = rank + 1; i <= sl->n; i++) {
        lua_rawgeti(L, 3, i);
        lua_pushvalue(L, -1);
        if (lua_rawget(L, 1) != LUA_TNIL) {
            sl->pos = i;
            return 2;
        }
        lua_pop(L, 2);
    }
    slot_drop(L, S, 0); /* the traversal is over */
    lua_pushnil(L);
    return 1;
}

/* --- setmetatable ------------------------------------------------------------------------ */

/* setmetatable(t, mt) without finalizers or weak tables: when the collector runs a
 * __gc, and what it removes from a weak table, depends on memory use and collection
 * timing, which the string hash seed and the build can move; a scenario's outcome must
 * not. (A __gc added to mt later is never called: Lua marks an object for
 * finalization only when its metatable has __gc at setmetatable time.) */
static int l_setmetatable(lua_State *L)
{
    int t = lua_type(L, 2);
    luaL_checktype(L, 1, LUA_TTABLE);
    luaL_argexpected(L, t == LUA_TNIL || t == LUA_TTABLE, 2, "nil or table");
    static const struct {
        const char *field, *what, *why;
    } refused[] = {
        {"__gc", "finalizers (__gc)", "when the garbage collector runs them"},
        {"__mode", "weak tables (__mode)",
         "what the garbage collector removes from them, and when,"},
    };
    for (size_t i = 0; t == LUA_TTABLE && i < FL_ARRAY_LEN(refused); i++) {
        lua_pushstring(L, refused[i].field);
        if (lua_rawget(L, 2) != LUA_TNIL)
            return luaL_error(L,
                              "setmetatable: %s are not available in scenarios: %s is not "
                              "deterministic",
                              refused[i].what, refused[i].why);
        lua_pop(L, 1);
    }
    /* the rest is Lua's own setmetatable (lbaselib.c) */
    if (luaL_getmetafield(L, 1, "__metatable") != LUA_TNIL)
        return luaL_error(L, "cannot change a protected metatable");
    lua_settop(L, 2);
    lua_setmetatable(L, 1);
    return 1;
}

/* --- replacements for address-revealing functions ------------------------------------ */

/* True for values whose default tostring shows an address. */
static bool is_ref_type(int t)
{
    return t == LUA_TTABLE || t == LUA_TFUNCTION || t == LUA_TUSERDATA || t == LUA_TTHREAD ||
           t == LUA_TLIGHTUSERDATA;
}

/* Pushes the sandbox string form of the value at idx: __tostring when present, else
 * "<NAME>" (the metatable __name or the type name) for reference types. */
static void push_safe_string(lua_State *L, int idx)
{
    idx = lua_absindex(L, idx);
    if (is_ref_type(lua_type(L, idx)) && luaL_getmetafield(L, idx, "__tostring") == LUA_TNIL) {
        if (luaL_getmetafield(L, idx, "__name") == LUA_TSTRING) {
            lua_pushfstring(L, "<%s>", lua_tostring(L, -1));
            lua_remove(L, -2);
        } else {
            lua_pushfstring(L, "<%s>", luaL_typename(L, idx));
        }
        return;
    }
    if (is_ref_type(lua_type(L, idx)))
        lua_pop(L, 1); /* the __tostring pushed by luaL_getmetafield */
    luaL_tolstring(L, idx, NULL);
}

static int l_tostring(lua_State *L)
{
    luaL_checkany(L, 1);
    lua_settop(L, 1);
    push_safe_string(L, 1);
    return 1;
}

static int l_format(lua_State *L)
{
    size_t n;
    const char *f = luaL_checklstring(L, 1, &n);
    for (size_t i = 0; i + 1 < n; i++) {
        if (f[i] != '%')
            continue;
        size_t j = i + 1;
        if (f[j] == '%') {
            i = j;
            continue;
        }
        while (j < n && strchr("-+ #0123456789.", f[j]))
            j++;
        if (j < n && f[j] == 'p')
            return luaL_error(L, "string.format: %%p shows an address, which is not "
                                 "deterministic; not allowed in scenarios");
        i = j;
    }
    int top = lua_gettop(L);
    for (int i = 2; i <= top; i++) {
        if (is_ref_type(lua_type(L, i))) {
            push_safe_string(L, i);
            lua_replace(L, i);
        }
    }
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, top, LUA_MULTRET);
    return lua_gettop(L);
}

static int l_load(lua_State *L)
{
    /* load(chunk, name, mode, env): text only, env defaults to the sandbox globals. */
    int top = lua_gettop(L);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_pushvalue(L, 1);
    if (top >= 2)
        lua_pushvalue(L, 2);
    else
        lua_pushnil(L);
    lua_pushliteral(L, "t");
    if (top >= 4)
        lua_pushvalue(L, 4);
    else
        lua_pushglobaltable(L);
    lua_call(L, 4, LUA_MULTRET);
    return lua_gettop(L) - top;
}

static int l_print(lua_State *L)
{
    int n = lua_gettop(L);
    for (int i = 1; i <= n; i++) {
        size_t len;
        const char *s;
        lua_getglobal(L, "tostring");
        lua_pushvalue(L, i);
        lua_call(L, 1, 1);
        s = lua_tolstring(L, -1, &len);
        if (!s)
            return luaL_error(L, "'tostring' must return a string to 'print'");
        if (i > 1)
            fputc('\t', stderr);
        struct fl_buf shown; /* no raw control bytes to the terminal (common/text.h) */
        fl_buf_init(&shown);
        fl_term_escape(&shown, s, len, FL_TERM_KEEP_NEWLINES);
        if (shown.len)
            fwrite(shown.data, 1, shown.len, stderr);
        fl_buf_close(&shown);
        lua_pop(L, 1);
    }
    fputc('\n', stderr);
    return 0;
}

static void set_nil(lua_State *L, int tbl, const char *name)
{
    tbl = lua_absindex(L, tbl);
    lua_pushnil(L);
    lua_setfield(L, tbl, name);
}

void scn_open_sandbox(lua_State *L, bool unsafe)
{
    if (unsafe) {
        luaL_openlibs(L);
    } else {
        static const luaL_Reg libs[] = {
            {LUA_GNAME, luaopen_base},        {LUA_TABLIBNAME, luaopen_table},
            {LUA_STRLIBNAME, luaopen_string}, {LUA_MATHLIBNAME, luaopen_math},
            {LUA_UTF8LIBNAME, luaopen_utf8},  {NULL, NULL}};
        for (const luaL_Reg *lib = libs; lib->func; lib++) {
            luaL_requiref(L, lib->name, lib->func, 1);
            lua_pop(L, 1);
        }
    }
    lua_pushglobaltable(L);
    int g = lua_gettop(L);

    lua_getglobal(L, LUA_MATHLIBNAME);
    lua_pushcfunction(L, l_random);
    lua_setfield(L, -2, "random");
    lua_pushcfunction(L, l_randomseed);
    lua_setfield(L, -2, "randomseed");
    lua_pop(L, 1);
    lua_pushcfunction(L, scn_l_sorted_pairs);
    lua_setfield(L, g, "sorted_pairs");
    lua_pushcfunction(L, l_print);
    lua_setfield(L, g, "print");

    if (!unsafe) {
        set_nil(L, g, "dofile");
        set_nil(L, g, "loadfile");
        set_nil(L, g, "collectgarbage");
        lua_getfield(L, g, "load");
        lua_pushcclosure(L, l_load, 1);
        lua_setfield(L, g, "load");
        lua_pushcfunction(L, scn_l_sorted_pairs);
        lua_setfield(L, g, "pairs");
        lua_pushcfunction(L, l_next);
        lua_setfield(L, g, "next");
        lua_pushcfunction(L, l_setmetatable);
        lua_setfield(L, g, "setmetatable");
        lua_pushcfunction(L, l_tostring);
        lua_setfield(L, g, "tostring");
        lua_getglobal(L, LUA_STRLIBNAME);
        set_nil(L, -1, "dump");
        lua_getfield(L, -1, "format");
        lua_pushcclosure(L, l_format, 1);
        lua_setfield(L, -2, "format");
        lua_pop(L, 1);
        lua_getglobal(L, LUA_TABLIBNAME);
        lua_pushcfunction(L, l_sort);
        lua_setfield(L, -2, "sort");
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
}
