/*
 * scn_net.c: the network faults of the scenario surface (DESIGN §4): partition,
 * isolate, heal, heal_all, net, hold, release and clog. Each takes members and clients
 * alike (issue 14 §2): a member is its slot number, a client the object client(i)
 * returns, so `partition({client(1)}, {1, 2})` cuts client 1 from members 1 and 2 and
 * nothing else. The run layer (harness/run/run_net.c) applies and records them; here
 * every argument is checked first, so a mistake is a script error naming the file and
 * line, and nothing is applied.
 */
#include "harness/lua/scn_int.h"

/* A side of a partition: every member and every client. */
#define EPS_MAX RUN_EPS_MAX

/* "node 3" or "client 1", for messages. */
static const char *ep_name(lua_State *L, int e)
{
    return RUN_EP_IS_CLIENT(e) ? lua_pushfstring(L, "client %d", -e)
                               : lua_pushfstring(L, "node %d", e);
}

/* The value at idx as an endpoint (a member id or a client object), or 0 with what is
 * wrong pushed. Anything that is not a client is read as a member id, with the
 * messages scn_check_node gives. */
static int ep_or_why(lua_State *L, int idx)
{
    int ci = scn_client_index(L, idx);
    if (ci == 0)
        return scn_node_or_why(L, idx);
    if (!run_endpoint_exists(scn_world(L), RUN_EP_CLIENT(ci))) {
        lua_pushfstring(L, "client %d is closed", ci);
        return 0;
    }
    return RUN_EP_CLIENT(ci);
}

/* Raises msg about argument idx, or about option `what` (net.from) when not NULL. */
static _Noreturn void ep_raise(lua_State *L, int idx, const char *what, const char *msg)
{
    if (what)
        luaL_error(L, "%s: %s", what, msg);
    else
        luaL_argerror(L, idx, msg);
    FL_UNREACHABLE();
}

static int check_ep(lua_State *L, int idx, const char *what)
{
    int e = ep_or_why(L, idx);
    if (!e)
        ep_raise(L, idx, what, lua_tostring(L, -1));
    return e;
}

/* A link end argument: an endpoint, or nil for every endpoint (0). */
static int opt_ep(lua_State *L, int idx)
{
    return lua_isnoneornil(L, idx) ? 0 : check_ep(L, idx, NULL);
}

/* Endpoints from one endpoint or a list of them (argument idx, or option `what`);
 * returns how many. A mistake in the list names its position; an endpoint listed twice
 * is refused. */
static int check_eps(lua_State *L, int idx, const char *what, int *out)
{
    idx = lua_absindex(L, idx);
    if (lua_type(L, idx) != LUA_TTABLE) {
        out[0] = check_ep(L, idx, what);
        return 1;
    }
    lua_Integer n = luaL_len(L, idx);
    int k = 0;
    for (lua_Integer i = 1; i <= n; i++) {
        lua_geti(L, idx, i);
        int e = ep_or_why(L, -1);
        if (!e)
            ep_raise(L, idx, what, lua_pushfstring(L, "%s at position %I", lua_tostring(L, -1), i));
        for (int j = 0; j < k; j++)
            if (out[j] == e)
                ep_raise(L, idx, what,
                         lua_pushfstring(L, "%s is listed twice (positions %d and %I)",
                                         ep_name(L, e), j + 1, i));
        if (k == EPS_MAX) /* only reachable with a list longer than the world */
            ep_raise(L, idx, what, lua_pushfstring(L, "more than %d endpoints", EPS_MAX));
        out[k++] = e;
        lua_pop(L, 1);
    }
    return k;
}

/* Raises when an endpoint is on both sides. */
static void check_disjoint(lua_State *L, const char *what, const int *a, int na, const int *b,
                           int nb)
{
    for (int i = 0; i < na; i++)
        for (int j = 0; j < nb; j++)
            if (a[i] == b[j])
                luaL_error(L, "%s: %s is on both sides", what, ep_name(L, a[i]));
}

/* partition(a [, b] [, {oneway}]): b defaults to every member not in a (clients are
 * never implied: a client is cut only from what is named). */
static int l_partition(lua_State *L)
{
    static const char *const known[] = {"oneway", NULL};
    int a[EPS_MAX], b[EPS_MAX], na, nb = 0;
    struct run_world *rw = scn_world(L);
    na = check_eps(L, 1, NULL, a);
    if (lua_isnoneornil(L, 2)) {
        nb = scn_nodes_except(rw, a, na, b, EPS_MAX);
    } else {
        nb = check_eps(L, 2, NULL, b);
    }
    bool oneway = false;
    if (!lua_isnoneornil(L, 3)) {
        luaL_checktype(L, 3, LUA_TTABLE);
        scn_check_options(L, 3, "partition options", known);
        oneway = scn_field_bool(L, 3, "partition options", "oneway", 0);
    }
    check_disjoint(L, "partition", a, na, b, nb);
    int rc = run_partition(rw, a, na, b, nb, oneway);
    if (rc)
        return luaL_error(L, "partition: %s", fl_strerror(rc));
    return 0;
}

static int l_isolate(lua_State *L)
{
    int e = check_ep(L, 1, NULL);
    int rc = run_isolate(scn_world(L), e);
    if (rc)
        return luaL_error(L, "isolate: %s", fl_strerror(rc));
    return 0;
}

static int l_heal(lua_State *L)
{
    run_heal(scn_world(L));
    return 0;
}

static int l_heal_all(lua_State *L)
{
    run_heal_all(scn_world(L));
    return 0;
}

/* The endpoints of net{}'s field key (absent: 0 of them, meaning every endpoint). */
static int net_side(lua_State *L, const char *key, int *out)
{
    int n = 0;
    if (lua_getfield(L, 1, key) != LUA_TNIL) {
        const char *what = lua_pushfstring(L, "net.%s", key);
        n = check_eps(L, -2, what, out);
        if (n == 0)
            luaL_error(L, "%s: an empty list (leave it out for every endpoint)", what);
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    return n;
}

/* net{ drop, dup, delay_ms [, from, to, oneway] }: without from and to, every link;
 * with them, the links between (from -> to only when oneway). */
static int l_net(lua_State *L)
{
    static const char *const known[] = {"drop", "dup", "delay_ms", "from", "to", "oneway", NULL};
    luaL_checktype(L, 1, LUA_TTABLE);
    scn_check_options(L, 1, "net", known);
    int drop = scn_field_prob_ppm(L, 1, "net", "drop"),
        dup = scn_field_prob_ppm(L, 1, "net", "dup");
    int delay = (int)scn_field_int(L, 1, "net", "delay_ms", 0, 0, 3600000);
    struct run_world *rw = scn_world(L);
    int a[EPS_MAX], b[EPS_MAX];
    int na = net_side(L, "from", a), nb = net_side(L, "to", b);
    int oneway = scn_field_bool(L, 1, "net", "oneway", -1);
    if (na == 0 && nb == 0) {
        if (oneway >= 0)
            return luaL_error(L, "net.oneway: only with from or to");
        run_net(rw, drop, dup, delay);
        return 0;
    }
    check_disjoint(L, "net", a, na, b, nb);
    int rc = run_net_links(rw, a, na, b, nb, oneway > 0, drop, dup, delay);
    if (rc)
        return luaL_error(L, "net: %s", fl_strerror(rc));
    return 0;
}

static int l_hold(lua_State *L)
{
    int from = opt_ep(L, 1), to = opt_ep(L, 2);
    run_hold(scn_world(L), from, to);
    return 0;
}

static int l_release(lua_State *L)
{
    int from = opt_ep(L, 1), to = opt_ep(L, 2);
    run_release(scn_world(L), from, to);
    return 0;
}

static int l_clog(lua_State *L)
{
    int from = opt_ep(L, 1), to = opt_ep(L, 2);
    bool on =
        lua_isnoneornil(L, 3) ? true : (luaL_checktype(L, 3, LUA_TBOOLEAN), lua_toboolean(L, 3));
    run_clog(scn_world(L), from, to, on);
    return 0;
}

void scn_open_net(lua_State *L)
{
    static const luaL_Reg fns[] = {
        {"partition", l_partition}, {"isolate", l_isolate}, {"heal", l_heal},
        {"heal_all", l_heal_all},   {"net", l_net},         {"hold", l_hold},
        {"release", l_release},     {"clog", l_clog},       {NULL, NULL},
    };
    lua_pushglobaltable(L);
    luaL_setfuncs(L, fns, 0);
    lua_pop(L, 1);
}
