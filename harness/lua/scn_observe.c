/*
 * scn_observe.c: what a scenario can look at besides leader() and nodes(): a member's
 * state right now (`status(n)`) and the node events seen so far (`node_events{}`), so
 * that `expect` can be asserted on observed terms, refused votes, elections, snapshots
 * and member IDs (DESIGN §4). Neither blocks nor changes the run.
 */
#include "harness/lua/scn_int.h"

#include <inttypes.h>

static void set_int(lua_State *L, const char *k, lua_Integer v)
{
    lua_pushinteger(L, v);
    lua_setfield(L, -2, k);
}

static void set_bool(lua_State *L, const char *k, bool v)
{
    lua_pushboolean(L, v);
    lua_setfield(L, -2, k);
}

static void set_id(lua_State *L, const char *k, uint64_t id)
{
    if (!id)
        return; /* nil: none */
    char hex[24];
    snprintf(hex, sizeof hex, "%016" PRIx64, id);
    lua_pushstring(L, hex);
    lua_setfield(L, -2, k);
}

/* status(n) -> { node, alive, paused, removed, learner, leader (bool), member_id (hex),
 *   leader_id (hex), cluster_id (hex), leader_node, term, last_index, commit, applied, revision,
 *   leader_contact (ns) } */
static int l_status(lua_State *L)
{
    int id = scn_check_node(L, 1);
    struct run_node_status st;
    run_node_status(scn_world(L), id, &st);
    lua_createtable(L, 0, 14);
    set_int(L, "node", id);
    set_bool(L, "alive", st.alive);
    set_bool(L, "paused", st.paused);
    set_bool(L, "removed", st.removed);
    set_bool(L, "learner", st.learner);
    set_bool(L, "leader", st.is_leader);
    set_id(L, "member_id", st.member_id);
    set_id(L, "leader_id", st.leader_id);
    set_id(L, "cluster_id", st.cluster_id);
    if (st.leader_node)
        set_int(L, "leader_node", st.leader_node);
    set_int(L, "term", (lua_Integer)st.term);
    set_int(L, "last_index", (lua_Integer)st.last_index);
    set_int(L, "commit", (lua_Integer)st.commit);
    set_int(L, "applied", (lua_Integer)st.applied);
    set_int(L, "revision", st.revision);
    if (st.leader_contact_ns >= 0)
        set_int(L, "leader_contact", st.leader_contact_ns);
    return 1;
}

/* node_events{ node, kind, since } -> { {at, node, kind, term, detail, peer?}, ... } in
 * order */
static int l_node_events(lua_State *L)
{
    static const char *const known[] = {"node", "kind", "since", NULL};
    int node = 0;
    const char *kind = NULL;
    int64_t since = 0;
    if (!lua_isnoneornil(L, 1)) {
        luaL_checktype(L, 1, LUA_TTABLE);
        scn_check_options(L, 1, "node_events options", known);
        if (lua_getfield(L, 1, "node") != LUA_TNIL)
            node = scn_check_node(L, -1);
        lua_pop(L, 1);
        kind = scn_field_str(L, 1, "node_events options", "kind", NULL);
        since = scn_field_duration(L, 1, "node_events options", "since", 0);
    }
    size_t n;
    const struct run_node_event *ev = run_node_events(scn_world(L), &n);
    lua_newtable(L);
    lua_Integer k = 0;
    for (size_t i = 0; i < n; i++) {
        const struct run_node_event *e = &ev[i];
        if ((node && e->node != node) || (kind && strcmp(kind, e->kind)) || e->at_ns < since)
            continue;
        lua_createtable(L, 0, 5);
        set_int(L, "at", e->at_ns);
        set_int(L, "node", e->node);
        lua_pushstring(L, e->kind);
        lua_setfield(L, -2, "kind");
        set_int(L, "term", (lua_Integer)e->term);
        lua_pushstring(L, e->detail);
        lua_setfield(L, -2, "detail");
        /* the member's Raft events name the other member as "peer=<slot>" at the end */
        const char *p = strstr(e->detail, "peer=");
        for (const char *q = p; q; q = strstr(q + 1, "peer="))
            p = q;
        if (p && p[5] >= '0' && p[5] <= '9')
            set_int(L, "peer", strtol(p + 5, NULL, 10));
        lua_rawseti(L, -2, ++k);
    }
    return 1;
}

void scn_open_observe(lua_State *L)
{
    lua_register(L, "status", l_status);
    lua_register(L, "node_events", l_node_events);
}
