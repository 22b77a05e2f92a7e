/*
 * scn_shrink.c: the shrink{} directive that `faultline shrink` writes on the first line
 * of a reduced scenario, so that it replays with a plain `faultline run FILE --seed N`.
 *
 *   shrink{ skip_faults = {2, 5}, end_at = 12*s, time_scale = 50, scale_from = 3*s,
 *           clients = 2, keys = 3, rate = 50, watchers = 0, nodes = 3 }
 *
 * skip_faults: fault ordinals (run.h) that do nothing; end_at: the scenario stops at
 * that simulated time as if its main chunk had returned (the checkers then judge the
 * run as usual); time_scale: run/sleep/run_until durations, and a nemesis' every and
 * duration, asked for at or after scale_from (default 0) take time_scale percent of
 * what the script says (a nemesis tick keeps its ordinal and its draws); clients,
 * keys, rate, watchers, nodes: replace scenario{}'s clients.count, workload knobs and
 * cluster.nodes; reseed: the swarm's fault draws (lanes, their ticks, failpoints,
 * triggers, a nemesis' draws) come from that number instead of the seed, the rest of
 * the world keeping its own; lanes: the swarm's fault lanes are only these (names as
 * in swarm{ lanes }, intersected with the lanes swarm{} allows): each lane keeps its
 * draws, the others are off, as if swarm{} had named these; add_faults: faults at fixed times, each
 * {kind = "kill"|"power"|"pause"|"isolate"|"crash_save", node = N, at = T, len = D,
 * on = EVENT} (with on, the fault waits from T for member N's next on() event of that
 * kind, node 0: any member's, and applies right after it)
 * (run.h run_add_faults; added fault i is ordinal 10^15 + i, droppable with
 * skip_faults). `faultline explore` writes reseed and add_faults. It must
 * come before scenario{} and before anything that uses the cluster; once. What it
 * asked for is in the --json summary under "shrink" (with "cut_at_ms" when end_at
 * stopped the scenario).
 */
#include "harness/lua/scn_int.h"

#define SKIP_MAX 100000

static void read_skip(lua_State *L, struct scn *S, json_t *info)
{
    if (lua_getfield(L, 1, "skip_faults") == LUA_TNIL) {
        lua_pop(L, 1);
        return;
    }
    if (lua_type(L, -1) != LUA_TTABLE)
        luaL_error(L, "shrink.skip_faults: a list of fault ordinals expected, got %s",
                   luaL_typename(L, -1));
    lua_Integer n = luaL_len(L, -1);
    if (n < 0 || n > SKIP_MAX)
        luaL_error(L, "shrink.skip_faults: at most %d ordinals", SKIP_MAX);
    int64_t *ord = fl_malloc(sizeof(int64_t) * (size_t)(n ? n : 1));
    json_t *arr = json_array();
    for (lua_Integer i = 1; i <= n; i++) {
        int isint;
        lua_geti(L, -1, i);
        lua_Integer v = lua_tointegerx(L, -1, &isint);
        lua_pop(L, 1);
        if (!isint || v < 1) {
            free(ord);
            json_decref(arr);
            luaL_error(L, "shrink.skip_faults[%I]: a positive fault ordinal expected", i);
        }
        ord[i - 1] = (int64_t)v;
        json_array_append_new(arr, json_integer((json_int_t)v));
    }
    lua_pop(L, 1);
    run_skip_faults(S->rw, ord, (int)n);
    free(ord);
    json_object_set_new(info, "skip_faults", arr);
}

/* An integer knob: -1 when absent. */
static int knob(lua_State *L, const char *key, int min, int max, json_t *info)
{
    int t = lua_getfield(L, 1, key);
    lua_pop(L, 1);
    if (t == LUA_TNIL)
        return -1;
    int v = (int)scn_field_int(L, 1, "shrink", key, 0, min, max);
    json_object_set_new(info, key, json_integer(v));
    return v;
}

/* lanes = { "lag", "membership", ... }: the swarm's lanes kept (scn_swarm.c) */
static void read_lanes(lua_State *L, struct scn *S, json_t *info)
{
    if (lua_getfield(L, 1, "lanes") == LUA_TNIL) {
        lua_pop(L, 1);
        return;
    }
    if (lua_type(L, -1) != LUA_TTABLE)
        luaL_error(L, "shrink.lanes: a list of lane names expected, got %s", luaL_typename(L, -1));
    lua_Integer n = luaL_len(L, -1);
    json_t *names = json_array();
    json_object_set_new(info, "lanes", names);
    for (lua_Integer i = 1; i <= n; i++) {
        lua_geti(L, -1, i);
        const char *s = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
        unsigned bit = s ? run_lane_find(s) : 0;
        if (!bit)
            luaL_error(L, "shrink.lanes[%d]: unknown lane '%s' (see swarm{ lanes })", (int)i,
                       s ? s : luaL_typename(L, -1));
        if (!(S->ov_lanes & bit))
            json_array_append_new(names, json_string(s));
        S->ov_lanes |= bit;
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    if (!S->ov_lanes)
        luaL_error(L, "shrink.lanes: at least one lane expected");
}

/* add_faults = { {kind, node, at, len}, ... } */
static void read_added(lua_State *L, struct scn *S, json_t *info)
{
    if (lua_getfield(L, 1, "add_faults") == LUA_TNIL) {
        lua_pop(L, 1);
        return;
    }
    if (lua_type(L, -1) != LUA_TTABLE)
        luaL_error(L, "shrink.add_faults: a list of faults expected, got %s", luaL_typename(L, -1));
    lua_Integer n = luaL_len(L, -1);
    if (n < 0 || n > RUN_ADDED_MAX)
        luaL_error(L, "shrink.add_faults: at most %d faults", RUN_ADDED_MAX);
    static const char *const known[] = {"kind", "node", "at", "len", "on", NULL};
    struct run_added_fault v[RUN_ADDED_MAX];
    json_t *arr = json_array();
    json_object_set_new(info, "add_faults", arr); /* info owns it: an error leaks nothing */
    for (lua_Integer i = 1; i <= n; i++) {
        char what[48];
        snprintf(what, sizeof what, "shrink.add_faults[%lld]", (long long)i);
        if (lua_geti(L, -1, i) != LUA_TTABLE)
            luaL_error(L, "%s: a table expected", what);
        int t = lua_gettop(L);
        scn_check_options(L, t, what, known);
        const char *kind = scn_field_str(L, t, what, "kind", "");
        struct run_added_fault *f = &v[i - 1];
        f->kind = run_added_kind_find(kind);
        if (f->kind < 0)
            luaL_error(L, "%s: unknown kind '%s' (known: kill, power, pause, isolate, crash_save)",
                       what, kind);
        const char *on = scn_field_str(L, t, what, "on", "");
        f->on = *on ? run_event_kind_find(on) + 1 : 0;
        if (f->on == 0 && *on)
            luaL_error(L, "%s: unknown event kind '%s' (see on())", what, on);
        f->node = (int)scn_field_int(L, t, what, "node", 1, f->on ? 0 : 1, 15);
        f->at_ns = scn_field_duration(L, t, what, "at", 0);
        f->for_ns = scn_field_duration(L, t, what, "len", FL_S);
        lua_pop(L, 1);
        json_t *o = json_object();
        json_object_set_new(o, "kind", json_string(kind));
        json_object_set_new(o, "node", json_integer(f->node));
        json_object_set_new(o, "at_ns", json_integer(f->at_ns));
        json_object_set_new(o, "len_ns", json_integer(f->for_ns));
        if (f->on)
            json_object_set_new(o, "on", json_string(on));
        json_array_append_new(arr, o);
    }
    lua_pop(L, 1);
    if (run_add_faults(S->rw, v, (int)n))
        luaL_error(L, "shrink.add_faults: cannot add faults now");
}

static int l_shrink(lua_State *L)
{
    static const char *const known[] = {
        "skip_faults", "end_at", "time_scale", "scale_from", "clients", "keys", "rate",
        "watchers",    "nodes",  "reseed",     "add_faults", "lanes",   NULL};
    struct scn *S = scn_of(L);
    scn_guard_api(L);
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_settop(L, 1);
    scn_check_options(L, 1, "shrink", known);
    if (S->shrink_called || S->scenario_called || (S->rw && run_world_is_setup(S->rw)))
        return luaL_error(L, "shrink{} must be called once, before scenario{} and any "
                             "function that uses the cluster");
    S->shrink_called = true;
    if (S->describe_only)
        return 0; /* `list scenarios` reads scenario{} only */
    /* the summary owns it from here on, so an error below leaks nothing */
    json_t *info = json_object();
    run_summary_set(S->rw, "shrink", info);
    S->shrink_info = info;
    read_skip(L, S, info);
    S->end_at_ns = scn_field_duration(L, 1, "shrink", "end_at", 0);
    if (S->end_at_ns)
        json_object_set_new(info, "end_at_ms", json_integer(S->end_at_ns / FL_MS));
    S->time_scale_pct = (int)scn_field_int(L, 1, "shrink", "time_scale", 100, 1, 100000);
    S->scale_from_ns = scn_field_duration(L, 1, "shrink", "scale_from", 0);
    if (S->time_scale_pct != 100) {
        json_object_set_new(info, "time_scale", json_integer(S->time_scale_pct));
        json_object_set_new(info, "scale_from_ms", json_integer(S->scale_from_ns / FL_MS));
    }
    S->ov_clients = knob(L, "clients", 0, 64, info);
    S->ov_keys = knob(L, "keys", 1, 64, info);
    S->ov_rate = knob(L, "rate", 0, 10000000, info);
    S->ov_watchers = knob(L, "watchers", 0, 64, info);
    S->ov_nodes = knob(L, "nodes", 1, 15, info);
    if (lua_getfield(L, 1, "reseed") != LUA_TNIL) {
        int64_t r = scn_field_int(L, 1, "shrink", "reseed", 0, 0, INT64_MAX);
        run_reseed_faults(S->rw, (uint64_t)r);
        json_object_set_new(info, "reseed", json_integer((json_int_t)r));
    }
    lua_pop(L, 1);
    read_lanes(L, S, info);
    read_added(L, S, info);
    return 0;
}

void scn_shrink_apply(struct scn *S)
{
    if (S->ov_clients >= 0) {
        S->clients.count = S->ov_clients;
        if (S->clients.n_balancers > S->ov_clients) /* the first ones keep theirs */
            S->clients.n_balancers = S->ov_clients;
    }
    if (S->ov_keys >= 0)
        S->workload.keys = S->ov_keys;
    if (S->ov_rate >= 0)
        S->workload.rate = S->ov_rate;
    if (S->ov_watchers >= 0)
        S->workload.watchers = S->ov_watchers;
    if (S->ov_nodes >= 0)
        S->cluster.nodes = S->ov_nodes;
}

int64_t scn_scale_duration(struct scn *S, int64_t d)
{
    if (S->time_scale_pct == 100 || !S->rw || run_now_ns(S->rw) < S->scale_from_ns)
        return d;
    int64_t pct = S->time_scale_pct;
    /* d * pct / 100 without overflow; past SCN_TIME_MAX it stays just past it, so that the
     * deadline check (scn_deadline) refuses it */
    if (d / 100 > SCN_TIME_MAX / pct)
        return SCN_TIME_MAX + 1;
    return FL_MIN(d / 100 * pct + d % 100 * pct / 100, SCN_TIME_MAX + 1);
}

void scn_open_shrink(lua_State *L)
{
    lua_register(L, "shrink", l_shrink);
}
