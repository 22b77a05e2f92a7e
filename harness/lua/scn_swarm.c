/*
 * scn_swarm.c: swarm{} — the scenario asks for its world to be drawn from the seed
 * (run.h RUN_SWARM_*, run_swarm.c): the cluster, the clients, the workload, which
 * fault lanes run and how often, BUGGIFY failpoints and fault triggers. It must come
 * before scenario{} (after shrink{}, which still overrides the drawn counts), once:
 *
 *   local world = swarm { }                              -- every aspect
 *   swarm { "cluster", "faults", nodes = { 3, 5 } }      -- a subset, sizes 3 or 5
 *   swarm { except = { "buggify" }, lanes = { "partition", "kill", "membership" } }
 *
 * The drawn aspects replace what scenario{} says about them (the cluster, the
 * clients and the workload are drawn whole). It returns what was drawn as a table
 * (the --json summary's "swarm"), so a script can size its waits to the drawn timeouts.
 * nemesis{} without `kinds` then runs the swarm's fault phase (run_nemesis_swarm).
 * Nothing here draws a number itself: every draw is run_swarm.c's, from the seed.
 */
#include "harness/lua/scn_int.h"

static const struct {
    const char *name;
    unsigned bit;
} aspects[] = {
    {"cluster", RUN_SWARM_CLUSTER},   {"clients", RUN_SWARM_CLIENTS},
    {"workload", RUN_SWARM_WORKLOAD}, {"faults", RUN_SWARM_FAULTS},
    {"buggify", RUN_SWARM_BUGGIFY},   {"triggers", RUN_SWARM_TRIGGERS},
};

static unsigned aspect_bit(lua_State *L, const char *what, int idx)
{
    const char *s = lua_tostring(L, idx);
    for (size_t i = 0; s && i < FL_ARRAY_LEN(aspects); i++)
        if (!strcmp(aspects[i].name, s))
            return aspects[i].bit;
    luaL_error(L,
               "%s: unknown aspect '%s' (known: cluster, clients, workload, faults, buggify, "
               "triggers)",
               what, s ? s : luaL_typename(L, idx));
    return 0;
}

/* The list at field `key` of the table at 1: each entry through fn; returns a count. */
static int read_list(lua_State *L, const char *key, void (*fn)(lua_State *, int, void *), void *ud)
{
    if (lua_getfield(L, 1, key) == LUA_TNIL) {
        lua_pop(L, 1);
        return 0;
    }
    if (lua_type(L, -1) != LUA_TTABLE)
        luaL_error(L, "swarm.%s: a list expected, got %s", key, luaL_typename(L, -1));
    lua_Integer n = luaL_len(L, -1);
    for (lua_Integer i = 1; i <= n; i++) {
        lua_geti(L, -1, i);
        fn(L, (int)i, ud);
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    return (int)n;
}

static void except_one(lua_State *L, int i, void *ud)
{
    (void)i;
    *(unsigned *)ud &= ~aspect_bit(L, "swarm.except", -1);
}

static void size_one(lua_State *L, int i, void *ud)
{
    struct run_swarm_options *o = ud;
    int isint;
    lua_Integer v = lua_tointegerx(L, -1, &isint);
    if (!isint || v < 1 || v > 15)
        luaL_error(L, "swarm.nodes[%d]: a cluster size in [1, 15] expected", i);
    if (o->n_sizes >= RUN_SWARM_SIZES_MAX)
        luaL_error(L, "swarm.nodes: at most %d sizes", RUN_SWARM_SIZES_MAX);
    o->sizes[o->n_sizes++] = (int)v;
}

static void lane_one(lua_State *L, int i, void *ud)
{
    const char *s = lua_tostring(L, -1);
    unsigned bit = s ? run_lane_find(s) : 0;
    if (!bit)
        luaL_error(L,
                   "swarm.lanes[%d]: unknown lane '%s' (known: partition, kill, power, pause, "
                   "skew, net, hold, membership, move_leader, compact, defrag, quota, snapshot, "
                   "slow, leader_crash, lag, restore, churn)",
                   i, s ? s : luaL_typename(L, -1));
    *(unsigned *)ud |= bit;
}

/* The drawn world on one line of stderr at the start of the run (the run's log; the
 * same object is its first `faults` row and the summary's "swarm"). */
static void print_drawn(const struct scn *S, json_t *drawn)
{
    char *t = json_dumps(drawn, JSON_COMPACT | JSON_PRESERVE_ORDER);
    fprintf(stderr, "%s: swarm: %s\n", S->opts->path, t ? t : "{}");
    free(t);
}

static int l_swarm(lua_State *L)
{
    static const char *const known[] = {"except", "nodes", "lanes", NULL};
    struct scn *S = scn_of(L);
    if (lua_isnoneornil(L, 1))
        lua_newtable(L);
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_settop(L, 1);
    /* the array part names aspects; the rest are options */
    lua_Integer n = luaL_len(L, 1);
    lua_pushnil(L);
    while (lua_next(L, 1)) {
        lua_pop(L, 1);
        if (lua_type(L, -1) == LUA_TNUMBER && lua_isinteger(L, -1) && lua_tointeger(L, -1) >= 1 &&
            lua_tointeger(L, -1) <= n)
            continue;
        bool ok = false;
        for (size_t i = 0; lua_type(L, -1) == LUA_TSTRING && known[i]; i++)
            ok = ok || !strcmp(known[i], lua_tostring(L, -1));
        if (!ok)
            scn_check_options(L, 1, "swarm", known); /* raises, naming the key */
    }
    struct run_swarm_options o;
    memset(&o, 0, sizeof o);
    for (lua_Integer i = 1; i <= n; i++) {
        lua_geti(L, 1, i);
        o.aspects |= aspect_bit(L, "swarm", -1);
        lua_pop(L, 1);
    }
    if (!n)
        o.aspects = RUN_SWARM_ALL;
    read_list(L, "except", except_one, &o.aspects);
    read_list(L, "nodes", size_one, &o);
    read_list(L, "lanes", lane_one, &o.lanes);
    if (S->ov_lanes) {
        /* shrink{ lanes }: only these of the lanes allowed, each with its own draws */
        o.lanes = (o.lanes ? o.lanes : RUN_LANE_ALL | RUN_LANE_RESTORE) & S->ov_lanes;
        if (!o.lanes)
            return luaL_error(L, "shrink.lanes: none of them is a lane this swarm{} allows");
    }
    if (S->scenario_called || (S->rw && run_world_is_setup(S->rw)) || S->swarm_called)
        return luaL_error(L, "swarm{} must be called once, before scenario{} and any function "
                             "that uses the cluster");
    S->swarm_called = true;
    if (S->describe_only)
        return 0; /* `list scenarios` reads scenario{} only */
    json_t *drawn = NULL;
    if (run_swarm_draw(S->rw, &o, &drawn))
        return luaL_error(L, "swarm{}: the world cannot be drawn now");
    print_drawn(S, drawn);
    scn_push_json(L, drawn);
    return 1;
}

void scn_swarm_apply(struct scn *S)
{
    run_swarm_apply(S->rw, &S->cluster, &S->clients, &S->workload);
}

bool scn_swarm_nemesis(lua_State *L, int64_t duration_ns)
{
    struct scn *S = scn_of(L);
    struct run_world *rw = scn_world(L);
    if (!run_swarm_active(rw, RUN_SWARM_FAULTS | RUN_SWARM_BUGGIFY | RUN_SWARM_TRIGGERS))
        return false;
    int pct =
        S->time_scale_pct != 100 && run_now_ns(rw) >= S->scale_from_ns ? S->time_scale_pct : 100;
    run_nemesis_swarm(rw, scn_scale_duration(S, duration_ns), pct);
    return true;
}

void scn_open_swarm(lua_State *L)
{
    lua_register(L, "swarm", l_swarm);
}
