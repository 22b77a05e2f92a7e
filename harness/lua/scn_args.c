/*
 * scn_args.c: checking what a script passes in (and pushing JSON back out to it).
 * Every argument goes through one of these, so a mistake in a scenario is a Lua error
 * with file and line, never a crash.
 * Option tables are read with lua_getfield only; the one table walk here collects the
 * keys to name an unknown option, and sorts them first so the message does not depend
 * on Lua's per-process string hash (DESIGN §6).
 */
#include "harness/history/history.h"
#include "harness/lua/scn_int.h"

#include <math.h>

static int64_t to_duration(lua_State *L, int idx, const char *what)
{
    int isint;
    lua_Integer i = lua_tointegerx(L, idx, &isint);
    if (isint) {
        if (i < 0)
            luaL_error(L, "%s: a duration must not be negative (got %I)", what, (lua_Integer)i);
        if (i > SCN_TIME_MAX)
            luaL_error(L, "%s: duration out of range (%I ns; at most 2^62 ns, about 146 years)",
                       what, (lua_Integer)i);
        return (int64_t)i;
    }
    if (lua_type(L, idx) != LUA_TNUMBER)
        luaL_error(L, "%s: a duration (number of nanoseconds, e.g. 2*s) expected, got %s", what,
                   luaL_typename(L, idx));
    lua_Number d = lua_tonumber(L, idx);
    if (d != d)
        luaL_error(L, "%s: a duration expected, got nan", what);
    if (d < 0)
        luaL_error(L, "%s: a duration must not be negative (got %f)", what, (double)d);
    if (d > (lua_Number)SCN_TIME_MAX)
        luaL_error(L, "%s: duration out of range (%f ns; at most 2^62 ns, about 146 years)", what,
                   (double)d);
    return (int64_t)floor(d); /* e.g. 1.5*ms; exact for any literal a script writes */
}

/* "bad argument #idx to 'NAME'" for messages that luaL_argerror cannot build (it takes
 * the name from the call, which a continuation no longer has). */
static void arg_what(lua_State *L, int idx, char *what, size_t n)
{
    lua_Debug ar;
    const char *name = "?";
    if (lua_getstack(L, 0, &ar) && lua_getinfo(L, "n", &ar) && ar.name)
        name = ar.name;
    snprintf(what, n, "bad argument #%d to '%s'", idx, name);
}

int64_t scn_check_duration(lua_State *L, int idx)
{
    if (lua_type(L, idx) != LUA_TNUMBER)
        luaL_typeerror(L, idx, "duration (e.g. 2*s)");
    char what[96];
    arg_what(L, idx, what, sizeof what);
    return to_duration(L, idx, what);
}

int64_t scn_opt_duration(lua_State *L, int idx, int64_t def)
{
    return lua_isnoneornil(L, idx) ? def : scn_check_duration(L, idx);
}

int64_t scn_deadline(lua_State *L, const char *name, int64_t d)
{
    FL_ASSERT(d >= 0);
    int64_t now = run_now_ns(scn_world(L));
    if (now > SCN_TIME_MAX || d > SCN_TIME_MAX - now)
        luaL_error(L,
                   "%s: %I ns from now (%I ns) is past the end of simulated time (2^62 ns, "
                   "about 146 years)",
                   name, (lua_Integer)d, (lua_Integer)now);
    return now + d;
}

/* Pushes "nodes are: 1, 2, 3". */
static void push_node_list(lua_State *L, struct run_world *rw)
{
    int ids[64];
    int n = run_nodes(rw, ids, 64);
    struct fl_buf b;
    fl_buf_init(&b);
    for (int i = 0; i < n; i++)
        fl_buf_printf(&b, "%s%d", i ? ", " : "", ids[i]);
    lua_pushfstring(L, "nodes are: %s", n ? fl_buf_cstr(&b) : "none");
    fl_buf_close(&b);
}

/* Checks the value at idx as a node id; on failure pushes what is wrong (without the
 * position) and returns 0. A number that is not an integer, one beyond any slot and an
 * id no member has are told apart: "node id expected" is only for other types. */
static int node_or_why(lua_State *L, int idx)
{
    idx = lua_absindex(L, idx);
    if (lua_type(L, idx) != LUA_TNUMBER) {
        lua_pushfstring(L, "node id expected, got %s", luaL_typename(L, idx));
        return 0;
    }
    struct run_world *rw = scn_world(L);
    int isint;
    lua_Integer id = lua_tointegerx(L, idx, &isint);
    if (!isint) {
        lua_Number d = lua_tonumber(L, idx);
        if (d == floor(d)) { /* integral but beyond 64 bits (e.g. 2^63) */
            push_node_list(L, rw);
            lua_pushfstring(L, "node id %f out of range (%s)", (double)d, lua_tostring(L, -1));
            lua_remove(L, -2);
        } else {
            lua_pushfstring(L, "node id must be an integer, got %f", (double)d);
        }
        return 0;
    }
    if (id < 1 || id > INT32_MAX || !run_node_exists(rw, (int)id)) {
        push_node_list(L, rw);
        if (id < 1 || id > INT32_MAX)
            lua_pushfstring(L, "node id %I out of range (%s)", id, lua_tostring(L, -1));
        else
            lua_pushfstring(L, "unknown node id %I (%s)", id, lua_tostring(L, -1));
        lua_remove(L, -2);
        return 0;
    }
    return (int)id;
}

int scn_node_or_why(lua_State *L, int idx)
{
    return node_or_why(L, idx);
}

int scn_check_node(lua_State *L, int idx)
{
    int id = node_or_why(L, idx);
    if (!id)
        luaL_argerror(L, idx, lua_tostring(L, -1));
    return id;
}

int scn_check_nodes(lua_State *L, int idx, int *out, int max)
{
    idx = lua_absindex(L, idx);
    if (lua_type(L, idx) == LUA_TNUMBER) {
        out[0] = scn_check_node(L, idx);
        return 1;
    }
    if (lua_type(L, idx) != LUA_TTABLE)
        luaL_typeerror(L, idx, "node id or list of node ids");
    lua_Integer n = luaL_len(L, idx);
    /* Every element is checked (and duplicates refused) before the count: a list longer
     * than the cluster is a list with a mistake in it, and the message names it. */
    int k = 0;
    for (lua_Integer i = 1; i <= n; i++) {
        lua_geti(L, idx, i);
        int id = node_or_why(L, -1);
        if (!id) {
            lua_pushfstring(L, "%s at position %I", lua_tostring(L, -1), i);
            luaL_argerror(L, idx, lua_tostring(L, -1));
        }
        for (int j = 0; j < k; j++)
            if (out[j] == id)
                luaL_argerror(L, idx,
                              lua_pushfstring(L, "node %d is listed twice (positions %d and %I)",
                                              id, j + 1, i));
        if (k == max) /* only reachable with more members than max: a runtime limit */
            luaL_argerror(L, idx, lua_pushfstring(L, "more than %d nodes", max));
        out[k++] = id;
        lua_pop(L, 1);
    }
    return k;
}

/* Rank of a key type for a deterministic "which key is wrong" (DESIGN §6): the table
 * walk below meets keys in hash order, so it keeps the least key by this rank (and by
 * bytes among strings) instead of the first one it meets. */
static int key_type_rank(int t)
{
    switch (t) {
    case LUA_TNUMBER:
        return 0;
    case LUA_TBOOLEAN:
        return 1;
    case LUA_TTABLE:
        return 2;
    case LUA_TFUNCTION:
        return 3;
    case LUA_TUSERDATA:
    case LUA_TLIGHTUSERDATA:
        return 4;
    default:
        return 5;
    }
}

static bool bytes_less(const char *a, size_t la, const char *b, size_t lb)
{
    int c = memcmp(a, b, FL_MIN(la, lb));
    return c < 0 || (c == 0 && la < lb);
}

void scn_check_options(lua_State *L, int idx, const char *what, const char *const known[])
{
    idx = lua_absindex(L, idx);
    luaL_checktype(L, idx, LUA_TTABLE);
    const char *bad = NULL; /* the least unknown name; stays referenced by the table */
    size_t bad_len = 0;
    int nonstr = -1; /* the least rank of a key that is not a string */
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pop(L, 1);
        if (lua_type(L, -1) != LUA_TSTRING) {
            int r = key_type_rank(lua_type(L, -1));
            nonstr = nonstr < 0 || r < nonstr ? r : nonstr;
            continue;
        }
        size_t len;
        const char *k = lua_tolstring(L, -1, &len);
        bool ok = false;
        for (int i = 0; known[i] && !ok; i++)
            ok = strlen(known[i]) == len && !memcmp(known[i], k, len);
        if (!ok && (!bad || bytes_less(k, len, bad, bad_len))) {
            bad = k;
            bad_len = len;
        }
    }
    if (nonstr >= 0) {
        static const char *const names[] = {"number",   "boolean",  "table",
                                            "function", "userdata", "thread"};
        luaL_error(L, "%s: option names must be strings (got a %s key)", what, names[nonstr]);
    }
    if (!bad)
        return;
    struct fl_buf b;
    fl_buf_init(&b);
    for (int i = 0; known[i]; i++)
        fl_buf_printf(&b, "%s%s", i ? ", " : "", known[i]);
    lua_pushfstring(L, "unknown option '%s' in %s (known: %s)", bad, what, fl_buf_cstr(&b));
    fl_buf_close(&b);
    luaL_where(L, 1);
    lua_insert(L, -2);
    lua_concat(L, 2);
    lua_error(L);
}

int64_t scn_field_int(lua_State *L, int idx, const char *what, const char *key, int64_t def,
                      int64_t min, int64_t max)
{
    int t = lua_getfield(L, idx, key);
    int64_t v = def;
    if (t != LUA_TNIL) {
        int isint;
        lua_Integer i = lua_tointegerx(L, -1, &isint);
        if (t != LUA_TNUMBER)
            luaL_error(L, "%s.%s: an integer expected, got %s", what, key, lua_typename(L, t));
        if (!isint) {
            lua_Number d = lua_tonumber(L, -1);
            if (d == floor(d)) /* integral, but beyond 64 bits (e.g. 2^63) */
                luaL_error(L, "%s.%s: %f is out of range [%I, %I]", what, key, (double)d,
                           (lua_Integer)min, (lua_Integer)max);
            luaL_error(L, "%s.%s: an integer expected, got %f", what, key, (double)d);
        }
        if (i < min || i > max)
            luaL_error(L, "%s.%s: %I is out of range [%I, %I]", what, key, i, (lua_Integer)min,
                       (lua_Integer)max);
        v = (int64_t)i;
    }
    lua_pop(L, 1);
    return v;
}

int64_t scn_field_duration(lua_State *L, int idx, const char *what, const char *key, int64_t def)
{
    int64_t v = def;
    if (lua_getfield(L, idx, key) != LUA_TNIL) {
        char w[128];
        snprintf(w, sizeof w, "%s.%s", what, key);
        v = to_duration(L, -1, w);
    }
    lua_pop(L, 1);
    return v;
}

/* Pushes field key of the table at idx; true when it is set, raising "WHAT.KEY: NAME
 * expected, got T" when it is set to another type than want. */
static bool field_of_type(lua_State *L, int idx, const char *what, const char *key, int want,
                          const char *name)
{
    int t = lua_getfield(L, idx, key);
    if (t != LUA_TNIL && t != want)
        luaL_error(L, "%s.%s: %s expected, got %s", what, key, name, lua_typename(L, t));
    return t != LUA_TNIL;
}

int scn_field_bool(lua_State *L, int idx, const char *what, const char *key, int def)
{
    int v =
        field_of_type(L, idx, what, key, LUA_TBOOLEAN, "a boolean") ? lua_toboolean(L, -1) : def;
    lua_pop(L, 1);
    return v;
}

/* The returned string stays valid while the option table is alive (it is a value in
 * it), which callers ensure by keeping the table on the stack. */
const char *scn_field_str(lua_State *L, int idx, const char *what, const char *key, const char *def)
{
    const char *v =
        field_of_type(L, idx, what, key, LUA_TSTRING, "a string") ? lua_tostring(L, -1) : def;
    lua_pop(L, 1);
    return v;
}

/* --- JSON of observed values --------------------------------------------------------- */

/* Strings are bytes, kept faithfully: valid UTF-8 as a JSON string (NUL as \u0000),
 * anything else as {"hex":"..."}, the history's convention (history.h). */
static void json_str(struct fl_buf *out, const char *s, size_t n)
{
    hist_jt_bytes(out, s, n);
}

/* An object key must be a string: invalid UTF-8 bytes show as \xNN there. */
static void json_key(struct fl_buf *out, const char *s, size_t n)
{
    struct fl_buf t;
    fl_buf_init(&t);
    hist_jt_bytes(&t, s, n);
    if (t.len && t.data[0] == '"') {
        fl_buf_append(out, t.data, t.len);
    } else {
        fl_buf_reset(&t);
        for (size_t i = 0; i < n; i++) {
            unsigned char c = (unsigned char)s[i];
            if (c >= 0x20 && c < 0x7f)
                fl_buf_append(&t, &s[i], 1);
            else
                fl_buf_printf(&t, "\\x%02x", c);
        }
        hist_jt_str(out, fl_buf_cstr(&t));
    }
    fl_buf_close(&t);
}

static void to_json(lua_State *L, int idx, struct fl_buf *out, int depth)
{
    idx = lua_absindex(L, idx);
    switch (lua_type(L, idx)) {
    case LUA_TNIL:
        fl_buf_printf(out, "null");
        return;
    case LUA_TBOOLEAN:
        fl_buf_printf(out, lua_toboolean(L, idx) ? "true" : "false");
        return;
    case LUA_TNUMBER:
        if (lua_isinteger(L, idx))
            fl_buf_printf(out, "%lld", (long long)lua_tointeger(L, idx));
        else if (isfinite(lua_tonumber(L, idx)))
            fl_buf_printf(out, "%.17g", (double)lua_tonumber(L, idx));
        else
            fl_buf_printf(out, "null");
        return;
    case LUA_TSTRING: {
        size_t n;
        const char *s = lua_tolstring(L, idx, &n);
        json_str(out, s, n);
        return;
    }
    case LUA_TTABLE:
        break;
    default: {
        const char *tn = luaL_typename(L, idx);
        json_str(out, tn, strlen(tn));
        return;
    }
    }
    if (depth > 8) {
        fl_buf_printf(out, "\"...\"");
        return;
    }
    lua_Integer n = (lua_Integer)lua_rawlen(L, idx);
    if (n > 0) {
        fl_buf_append(out, "[", 1);
        for (lua_Integer i = 1; i <= n && i <= 1000; i++) {
            if (i > 1)
                fl_buf_append(out, ",", 1);
            lua_rawgeti(L, idx, i);
            to_json(L, -1, out, depth + 1);
            lua_pop(L, 1);
        }
        fl_buf_append(out, "]", 1);
        return;
    }
    /* An object with sorted keys, through sorted_pairs. */
    lua_pushcfunction(L, scn_l_sorted_pairs);
    lua_pushvalue(L, idx);
    lua_call(L, 1, 3);
    fl_buf_append(out, "{", 1);
    for (int k = 0;; k++) {
        lua_pushvalue(L, -3);
        lua_pushvalue(L, -3);
        lua_pushvalue(L, -3);
        lua_call(L, 2, 2);
        if (lua_isnil(L, -2)) {
            lua_pop(L, 2);
            break;
        }
        if (k)
            fl_buf_append(out, ",", 1);
        size_t kn;
        lua_pushvalue(L, -2);
        const char *ks = luaL_tolstring(L, -1, &kn);
        json_key(out, ks, kn);
        lua_pop(L, 2);
        fl_buf_append(out, ":", 1);
        to_json(L, -1, out, depth + 1);
        lua_pop(L, 1);
        lua_replace(L, -2); /* control variable = this key */
    }
    lua_pop(L, 3);
    fl_buf_append(out, "}", 1);
}

void scn_to_json(lua_State *L, int idx, struct fl_buf *out)
{
    to_json(L, idx, out, 0);
}

int scn_current_line(lua_State *L, int level)
{
    lua_Debug ar;
    for (int l = level; l < level + 8; l++) {
        if (!lua_getstack(L, l, &ar))
            break;
        lua_getinfo(L, "Sl", &ar);
        if (ar.currentline > 0)
            return ar.currentline;
    }
    return 0;
}

/* A probability option in [0, 1] as parts per million (0 when absent). */
int scn_field_prob_ppm(lua_State *L, int idx, const char *what, const char *key)
{
    int ppm = 0;
    if (lua_getfield(L, idx, key) != LUA_TNIL) {
        if (lua_type(L, -1) != LUA_TNUMBER)
            luaL_error(L, "%s.%s: a probability in [0, 1] expected, got %s", what, key,
                       luaL_typename(L, -1));
        lua_Number p = lua_tonumber(L, -1);
        if (!(p >= 0 && p <= 1))
            luaL_error(L, "%s.%s: a probability must be in [0, 1]", what, key);
        ppm = (int)(p * 1000000.0 + 0.5);
    }
    lua_pop(L, 1);
    return ppm;
}

/* Pushes a JSON value as Lua: objects as tables with the same keys, arrays as lists,
 * integers as integers, null as nil (absent). Depth is bounded by the caller's data. */
void scn_push_json(lua_State *L, json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        lua_createtable(L, 0, (int)json_object_size(v));
        const char *k;
        json_t *e;
        json_object_foreach(v, k, e)
        {
            if (json_is_null(e))
                continue;
            scn_push_json(L, e);
            lua_setfield(L, -2, k);
        }
        break;
    }
    case JSON_ARRAY:
        lua_createtable(L, (int)json_array_size(v), 0);
        for (size_t i = 0; i < json_array_size(v); i++) {
            scn_push_json(L, json_array_get(v, i));
            lua_rawseti(L, -2, (lua_Integer)i + 1);
        }
        break;
    case JSON_STRING:
        lua_pushlstring(L, json_string_value(v), json_string_length(v));
        break;
    case JSON_INTEGER:
        lua_pushinteger(L, (lua_Integer)json_integer_value(v));
        break;
    case JSON_REAL:
        lua_pushnumber(L, json_real_value(v));
        break;
    case JSON_TRUE:
    case JSON_FALSE:
        lua_pushboolean(L, json_is_true(v));
        break;
    default:
        lua_pushnil(L);
        break;
    }
}
