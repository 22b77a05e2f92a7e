/*
 * scn_on.c: on(kind, fn) — a scenario reacts to node events the moment they happen
 * (run.h run_on_events; the kinds are nodes/server/server.h's srv_hook_kind names: "vote_granted",
 * "term", "leader", "append", "persisted", "snapshot_sent", "snapshot_install",
 * "snapshot_applied", "conf_change", "conf_applied", "compact", "defrag", "snapshot").
 * Each event of the kind starts fn(ev) as a new coroutine, which the driver resumes
 * before the world processes its next event: a kill(ev.node) from it lands right after
 * the member's event, e.g. between an append and its fsync.
 *
 *   on("vote_granted", function(ev) if not ev.pre then kill(ev.node) end end)
 *
 * Ordinals (shrinking): each on() call is a rule with an ordinal (recorded as a fault
 * "on"); the k-th event it handles is ordinal rule * RUN_FIRING_BASE + k, and every
 * fault its handler applies belongs to that one ordinal (the coroutine's fault scope),
 * so events that come and go with the cluster's state never move other ordinals.
 * A skipped rule's handler never runs; a skipped firing's runs but its faults do
 * nothing. Rules live in the Lua registry, in the order they were made.
 */
#include "harness/lua/scn_int.h"

#define ON_RULES "faultline.on"

struct on_state {
    struct scn *S;
    unsigned kinds; /* union of the rules' kinds */
};

static struct on_state *state_of(lua_State *L)
{
    lua_getfield(L, LUA_REGISTRYINDEX, ON_RULES ".state");
    struct on_state *st = lua_touserdata(L, -1);
    lua_pop(L, 1);
    return st;
}

static void set_field_int(lua_State *L, const char *k, lua_Integer v)
{
    lua_pushinteger(L, v);
    lua_setfield(L, -2, k);
}

/* Pushes the event table {kind, at, node, peer?, term, index, pre, leader, reason?, detail}. */
static void push_event(lua_State *L, const struct run_event *ev)
{
    lua_createtable(L, 0, 10);
    lua_pushstring(L, ev->kind);
    lua_setfield(L, -2, "kind");
    set_field_int(L, "at", ev->at_ns);
    set_field_int(L, "node", ev->node);
    if (ev->peer)
        set_field_int(L, "peer", ev->peer);
    set_field_int(L, "term", (lua_Integer)ev->term);
    set_field_int(L, "index", (lua_Integer)ev->index);
    lua_pushboolean(L, ev->pre);
    lua_setfield(L, -2, "pre");
    lua_pushboolean(L, ev->leader);
    lua_setfield(L, -2, "leader");
    if (ev->reason) {
        lua_pushstring(L, ev->reason);
        lua_setfield(L, -2, "reason");
    }
    lua_pushstring(L, ev->detail);
    lua_setfield(L, -2, "detail");
}

/* From inside the event loop (never while Lua runs): one coroutine per matching rule. */
static void on_event(void *ud, const struct run_event *ev)
{
    struct on_state *st = ud;
    struct scn *S = st->S;
    lua_State *L = S->L;
    if (S->stopping)
        return;
    int kind = run_event_kind_find(ev->kind);
    lua_getfield(L, LUA_REGISTRYINDEX, ON_RULES);
    lua_Integer n = luaL_len(L, -1);
    for (lua_Integer i = 1; i <= n; i++) {
        lua_geti(L, -1, i); /* rule {kind, fn, ordinal, fired, dry} */
        lua_getfield(L, -1, "kind");
        bool match = lua_tointeger(L, -1) == kind;
        lua_pop(L, 1);
        lua_getfield(L, -1, "dry");
        bool dry = lua_toboolean(L, -1);
        lua_pop(L, 1);
        if (!match || dry) {
            lua_pop(L, 1);
            continue;
        }
        lua_getfield(L, -1, "fired");
        lua_Integer k = lua_tointeger(L, -1) + 1;
        lua_pop(L, 1);
        set_field_int(L, "fired", k);
        lua_getfield(L, -1, "ordinal");
        int64_t ord = (int64_t)lua_tointeger(L, -1);
        lua_pop(L, 1);
        lua_getfield(L, -1, "fn");
        push_event(L, ev);
        struct scn_co *co = scn_co_start(S, L, 1);
        co->fault_scope = ord * RUN_FIRING_BASE + (int64_t)k;
        lua_pop(L, 1); /* the rule */
    }
    lua_pop(L, 1); /* the rules */
}

/* The rule's log line, in its own scope (run_scope). */
static void log_rule(struct run_world *rw, void *name)
{
    run_log_rule(rw, "on", name);
}

static int l_on(lua_State *L)
{
    const char *name = luaL_checkstring(L, 1);
    luaL_checktype(L, 2, LUA_TFUNCTION);
    lua_settop(L, 2);
    int kind = run_event_kind_find(name);
    if (kind < 0)
        return luaL_error(L,
                          "on: unknown event kind '%s' (known: vote_granted, term, leader, "
                          "append, persisted, snapshot_sent, snapshot_install, "
                          "snapshot_applied, conf_change, conf_applied, compact, defrag, "
                          "snapshot)",
                          name);
    struct scn *S = scn_of(L);
    struct run_world *rw = scn_world(L);
    if (scn_co_of(L)->fault_scope)
        return luaL_error(L, "on: not from inside an on() handler");
    struct on_state *st = state_of(L);
    int64_t ord;
    bool live = run_rule_begin(rw, &ord);
    if (live)
        run_scope(rw, ord, RUN_SCOPE_LIVE, log_rule, (void *)name);
    lua_getfield(L, LUA_REGISTRYINDEX, ON_RULES);
    lua_createtable(L, 0, 5);
    set_field_int(L, "kind", kind);
    lua_pushvalue(L, 2);
    lua_setfield(L, -2, "fn");
    set_field_int(L, "ordinal", ord);
    set_field_int(L, "fired", 0);
    lua_pushboolean(L, !live);
    lua_setfield(L, -2, "dry");
    lua_rawseti(L, -2, luaL_len(L, -2) + 1);
    lua_pop(L, 1);
    st->S = S;
    st->kinds |= 1u << kind;
    run_on_events(rw, st->kinds, on_event, st);
    return 0;
}

void scn_open_on(lua_State *L)
{
    lua_newtable(L);
    lua_setfield(L, LUA_REGISTRYINDEX, ON_RULES);
    struct on_state *st = lua_newuserdatauv(L, sizeof *st, 0);
    memset(st, 0, sizeof *st);
    lua_setfield(L, LUA_REGISTRYINDEX, ON_RULES ".state");
    lua_register(L, "on", l_on);
}
