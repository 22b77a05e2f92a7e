/*
 * scn_world.c: the scenario surface that acts on the world (DESIGN §4): scenario{},
 * the cluster view (leader, nodes, others), node faults, failpoints and
 * bug switches, membership and maintenance (which block the calling coroutine until
 * the cluster answers), expect and nemesis. Each function checks every argument
 * before it acts or yields; an expected failure of the simulated system (a refused
 * member change, say) returns nil and etcd's message, a script mistake raises.
 * The network faults, which take clients too, are in scn_net.c.
 */
#include "harness/lua/scn_int.h"
#include "harness/common/text.h"

#define MAX_NODES 32

/* --- scenario{} ---------------------------------------------------------------------- */

static void read_cluster(lua_State *L, int idx, struct run_cluster_config *c)
{
    static const char *const known[] = {"nodes",
                                        "election_ms",
                                        "heartbeat_ms",
                                        "prevote",
                                        "check_quorum",
                                        "snapshot_count",
                                        "snapshot_catchup",
                                        "quota_bytes",
                                        "fsync_us",
                                        "latency_us",
                                        "jitter_us",
                                        "auto_compaction_mode",
                                        "auto_compaction_retention",
                                        "progress_notify_ms",
                                        "watch_buffer",
                                        NULL};
    const char *w = "scenario.cluster";
    scn_check_options(L, idx, w, known);
    c->nodes = (int)scn_field_int(L, idx, w, "nodes", 3, 1, 15);
    c->election_ms = (int)scn_field_int(L, idx, w, "election_ms", 1000, 1, 600000);
    c->heartbeat_ms = (int)scn_field_int(L, idx, w, "heartbeat_ms", 100, 1, 60000);
    c->prevote = scn_field_bool(L, idx, w, "prevote", -1);
    c->check_quorum = scn_field_bool(L, idx, w, "check_quorum", -1);
    c->snapshot_count = (int)scn_field_int(L, idx, w, "snapshot_count", 0, 0, INT32_MAX);
    c->snapshot_catchup = (int)scn_field_int(L, idx, w, "snapshot_catchup", 0, 0, INT32_MAX);
    c->quota_bytes = scn_field_int(L, idx, w, "quota_bytes", 0, -1, INT64_MAX);
    c->fsync_us = scn_field_int(L, idx, w, "fsync_us", 0, 0, 10000000);
    c->net_latency_us = (int)scn_field_int(L, idx, w, "latency_us", 0, 0, 10000000);
    c->net_jitter_us = (int)scn_field_int(L, idx, w, "jitter_us", 0, 0, 10000000);
    const char *mode = scn_field_str(L, idx, w, "auto_compaction_mode", "none");
    if (!strcmp(mode, "none"))
        c->auto_compaction_mode = 0;
    else if (!strcmp(mode, "revision"))
        c->auto_compaction_mode = 1;
    else if (!strcmp(mode, "periodic"))
        c->auto_compaction_mode = 2;
    else
        luaL_error(L,
                   "%s.auto_compaction_mode: 'none', 'revision' or 'periodic' expected, "
                   "got '%s'",
                   w, mode);
    c->auto_compaction_retention =
        scn_field_int(L, idx, w, "auto_compaction_retention", 0, 0, INT64_MAX);
    c->progress_notify_ms = (int)scn_field_int(L, idx, w, "progress_notify_ms", 0, 0, 3600000);
    c->watch_buffer = (int)scn_field_int(L, idx, w, "watch_buffer", 0, 0, 1000000);
}

/* clients.balancers = { "pinned_random", "health_aware", ... }: one client each. */
static void read_balancers(lua_State *L, int idx, struct run_clients_config *c)
{
    const char *w = "scenario.clients.balancers";
    if (lua_getfield(L, idx, "balancers") == LUA_TNIL) {
        lua_pop(L, 1);
        return;
    }
    if (lua_type(L, -1) != LUA_TTABLE)
        luaL_error(L, "%s: a list of balancer names expected, got %s", w, luaL_typename(L, -1));
    lua_Integer n = luaL_len(L, -1);
    if (n < 1 || n > RUN_BALANCERS_MAX)
        luaL_error(L, "%s: 1 to %d names expected, got %I", w, RUN_BALANCERS_MAX, n);
    for (lua_Integer i = 1; i <= n; i++) {
        lua_geti(L, -1, i);
        const char *b = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
        if (!b || strlen(b) >= RUN_BALANCER_NAME_MAX)
            luaL_error(L, "%s[%I]: a balancer name expected (see faultline list balancers)", w, i);
        snprintf(c->balancers[i - 1], RUN_BALANCER_NAME_MAX, "%s", b);
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    if (c->count != 2 && c->count != (int)n) /* 2: the default, i.e. not given */
        luaL_error(L, "scenario.clients: count = %d but %I balancers; give one or the other",
                   c->count, n);
    c->n_balancers = (int)n;
    c->count = (int)n;
}

static void read_clients(lua_State *L, int idx, struct run_clients_config *c)
{
    static const char *const known[] = {"count", "balancer", "balancers", "timeout_ms", NULL};
    const char *w = "scenario.clients";
    scn_check_options(L, idx, w, known);
    c->count = (int)scn_field_int(L, idx, w, "count", 2, 0, RUN_BALANCERS_MAX);
    const char *b = scn_field_str(L, idx, w, "balancer", "round_robin");
    if (strlen(b) >= sizeof c->balancer)
        luaL_error(L, "%s.balancer: unknown balancer '%s'", w, b);
    snprintf(c->balancer, sizeof c->balancer, "%s", b);
    c->timeout_ms = (int)scn_field_int(L, idx, w, "timeout_ms", 2000, 1, 3600000);
    read_balancers(L, idx, c);
}

static void read_workload(lua_State *L, int idx, struct run_workload_config *wl)
{
    static const char *const known[] = {"rate", "keys", "mix", "watchers", "value_size", NULL};
    static const char *const mix_known[] = {"put", "get", "delete", "txn", "range", NULL};
    const char *w = "scenario.workload";
    scn_check_options(L, idx, w, known);
    wl->rate = (int)scn_field_int(L, idx, w, "rate", 0, 0, 10000000);
    wl->keys = (int)scn_field_int(L, idx, w, "keys", 10, 1, 64);
    wl->watchers = (int)scn_field_int(L, idx, w, "watchers", 0, 0, 64);
    wl->value_size = (int)scn_field_int(L, idx, w, "value_size", 16, 0, 255);
    if (lua_getfield(L, idx, "mix") != LUA_TNIL) {
        int m = lua_gettop(L);
        const char *mw = "scenario.workload.mix";
        scn_check_options(L, m, mw, mix_known);
        wl->mix_put = (int)scn_field_int(L, m, mw, "put", 0, 0, 1000000);
        wl->mix_get = (int)scn_field_int(L, m, mw, "get", 0, 0, 1000000);
        wl->mix_delete = (int)scn_field_int(L, m, mw, "delete", 0, 0, 1000000);
        wl->mix_txn = (int)scn_field_int(L, m, mw, "txn", 0, 0, 1000000);
        wl->mix_range = (int)scn_field_int(L, m, mw, "range", 0, 0, 1000000);
        if (wl->mix_put + wl->mix_get + wl->mix_delete + wl->mix_txn + wl->mix_range <= 0)
            luaL_error(L, "%s: at least one weight must be positive", mw);
    }
    lua_pop(L, 1);
}

static unsigned read_checks(lua_State *L, int idx)
{
    static const struct {
        const char *name;
        unsigned bit;
    } names[] = {{"linearizability", RUN_CHECK_LINEARIZABILITY},
                 {"watch", RUN_CHECK_WATCH},
                 {"raft_safety", RUN_CHECK_RAFT_SAFETY},
                 {"converge", RUN_CHECK_CONVERGE},
                 {"liveness", RUN_CHECK_LIVENESS}};
    unsigned checks = 0;
    lua_Integer n = luaL_len(L, idx);
    for (lua_Integer i = 1; i <= n; i++) {
        lua_geti(L, idx, i);
        const char *s = lua_tostring(L, -1);
        unsigned bit = 0;
        for (size_t k = 0; s && k < FL_ARRAY_LEN(names); k++)
            if (!strcmp(names[k].name, s))
                bit = names[k].bit;
        if (!bit)
            luaL_error(L,
                       "scenario.checks: unknown check '%s' (known: linearizability, watch, "
                       "raft_safety, converge, liveness; expect is always on)",
                       s ? s : luaL_typename(L, -1));
        checks |= bit;
        lua_pop(L, 1);
    }
    return checks;
}

static int l_scenario(lua_State *L)
{
    static const char *const known[] = {"name",     "description", "cluster", "clients",
                                        "workload", "checks",      NULL};
    struct scn *S = scn_of(L);
    scn_guard_api(L);
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_settop(L, 1);
    scn_check_options(L, 1, "scenario", known);
    snprintf(S->name, sizeof S->name, "%s", scn_field_str(L, 1, "scenario", "name", ""));
    snprintf(S->description, sizeof S->description, "%s",
             scn_field_str(L, 1, "scenario", "description", ""));
    if (S->describe_only)
        scn_describe_stop(L);
    if (S->scenario_called || run_world_is_setup(S->rw))
        return luaL_error(L, "scenario{} must be called once, before any function that uses "
                             "the cluster");
    S->scenario_called = true;
    if (lua_getfield(L, 1, "cluster") != LUA_TNIL)
        read_cluster(L, 2, &S->cluster);
    lua_settop(L, 1);
    if (lua_getfield(L, 1, "clients") != LUA_TNIL)
        read_clients(L, 2, &S->clients);
    lua_settop(L, 1);
    if (lua_getfield(L, 1, "workload") != LUA_TNIL)
        read_workload(L, 2, &S->workload);
    lua_settop(L, 1);
    if (lua_getfield(L, 1, "checks") != LUA_TNIL) {
        luaL_checktype(L, 2, LUA_TTABLE);
        S->checks = read_checks(L, 2);
    }
    lua_settop(L, 1);
    scn_world(L); /* sets up now: errors in the configuration point at this line */
    return 0;
}

/* --- cluster view -------------------------------------------------------------------- */

static int l_leader(lua_State *L)
{
    int id = run_leader_announced(scn_world(L));
    if (id)
        lua_pushinteger(L, id);
    else
        lua_pushnil(L);
    return 1;
}

static void push_ids(lua_State *L, const int *ids, int n)
{
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        lua_pushinteger(L, ids[i]);
        lua_rawseti(L, -2, i + 1);
    }
}

static int l_nodes(lua_State *L)
{
    int ids[MAX_NODES];
    int n = run_nodes(scn_world(L), ids, MAX_NODES);
    push_ids(L, ids, n);
    return 1;
}

int scn_nodes_except(struct run_world *rw, const int *ex, int ne, int *out, int max)
{
    FL_ASSERT(max <= RUN_EPS_MAX);
    int ids[RUN_EPS_MAX];
    int n = run_nodes(rw, ids, max), k = 0;
    for (int i = 0; i < n; i++) {
        bool skip = false;
        for (int j = 0; j < ne; j++)
            skip = skip || ids[i] == ex[j];
        if (!skip)
            out[k++] = ids[i];
    }
    return k;
}

static int l_others(lua_State *L)
{
    struct run_world *rw = scn_world(L);
    int ex[MAX_NODES], out[MAX_NODES];
    int ne = scn_check_nodes(L, 1, ex, MAX_NODES);
    int k = scn_nodes_except(rw, ex, ne, out, MAX_NODES);
    push_ids(L, out, k);
    return 1;
}

/* --- node and network faults --------------------------------------------------------- */

static int node_call(lua_State *L, int (*fn)(struct run_world *, int))
{
    int id = scn_check_node(L, 1);
    int rc = fn(scn_world(L), id);
    if (rc)
        return luaL_error(L, "%s", fl_strerror(rc));
    return 0;
}

static int l_kill(lua_State *L)
{
    return node_call(L, run_kill);
}
static int l_restart(lua_State *L)
{
    static const char *const known[] = {"prevote", NULL};
    if (!lua_isnoneornil(L, 2)) {
        int id = scn_check_node(L, 1);
        luaL_checktype(L, 2, LUA_TTABLE);
        scn_check_options(L, 2, "restart options", known);
        int pv = scn_field_bool(L, 2, "restart options", "prevote", -1);
        if (pv >= 0)
            run_set_prevote(scn_world(L), id, pv != 0);
    }
    return node_call(L, run_restart);
}
static int l_pause(lua_State *L)
{
    return node_call(L, run_pause);
}
static int l_resume(lua_State *L)
{
    return node_call(L, run_resume);
}

static int l_skew(lua_State *L)
{
    int id = scn_check_node(L, 1);
    lua_Number rate = luaL_checknumber(L, 2);
    luaL_argcheck(L, rate >= 0.001 && rate <= 100, 2, "rate must be in [0.001, 100]");
    int64_t ppm = (int64_t)(rate * 1000000.0 + 0.5);
    if (run_skew(scn_world(L), id, ppm))
        return luaL_error(L, "skew: rate out of range");
    return 0;
}

static int l_failpoint(lua_State *L)
{
    static const char *const known[] = {"node", "action", "p", "count", "delay_ms", NULL};
    const char *name = luaL_checkstring(L, 1);
    int node = 0, p = 1000000, count = 0, delay = 0;
    const char *action = "error";
    if (!lua_isnoneornil(L, 2)) {
        luaL_checktype(L, 2, LUA_TTABLE);
        scn_check_options(L, 2, "failpoint options", known);
        if (lua_getfield(L, 2, "node") != LUA_TNIL)
            node = scn_check_node(L, -1);
        lua_pop(L, 1);
        action = scn_field_str(L, 2, "failpoint options", "action", "error");
        if (lua_getfield(L, 2, "p") != LUA_TNIL)
            p = scn_field_prob_ppm(L, 2, "failpoint options", "p");
        lua_pop(L, 1);
        count = (int)scn_field_int(L, 2, "failpoint options", "count", 0, 0, INT32_MAX);
        delay = (int)scn_field_int(L, 2, "failpoint options", "delay_ms", 0, 0, 3600000);
    }
    char err[320]; /* etcd's "expected sha256 [..], got [..]" is up to 290 bytes */
    int rc = run_failpoint(scn_world(L), name, node, action, p, count, delay, err, sizeof err);
    if (rc == FL_EUNSUP) { /* a real target that cannot make this one real */
        char what[400];
        snprintf(what, sizeof what, "failpoint: %s", err);
        return scn_target_refuse(L, what);
    }
    if (rc)
        return luaL_error(L, "failpoint: %s", err);
    return 0;
}

static int l_bug(lua_State *L)
{
    const char *name = luaL_checkstring(L, 1);
    if (run_bug(scn_world(L), name))
        return luaL_error(L, "unknown bug '%s' (see faultline list bugs)", name);
    return 0;
}

/* --- blocking control calls ---------------------------------------------------------- */

struct ctl_res {
    int code;
    char *text; /* etcd's message; owned */
    int node;
    int64_t revision;
    uint8_t *data;
    size_t len;
};

static void ctl_res_free(void *p)
{
    struct ctl_res *r = p;
    free(r->text);
    free(r->data);
    free(r);
}

static void ctl_cb(void *arg, const struct run_ctl_result *r)
{
    struct scn_co *co = arg;
    struct ctl_res *c = co->result;
    if (co->S->stopping || !c)
        return;
    c->code = r->code;
    free(c->text);
    c->text = fl_strdup(r->text ? r->text : "");
    c->node = r->node;
    c->revision = r->revision;
    if (r->data && r->len) {
        c->data = fl_memdup(r->data, r->len);
        c->len = r->len;
    }
    scn_co_wake(co);
}

/* Prepares the calling coroutine to wait for a control call; returns it. Every check
 * that may raise comes before: from here to scn_wait_end nothing may. The cluster may
 * answer at once (a dead member, a refused change): ctl_cb then runs inside the call
 * and scn_wait_end hands the result to the continuation without yielding. */
static struct scn_co *ctl_begin(lua_State *L, const char *name)
{
    struct scn_co *co = scn_need_co(L, name);
    FL_ASSERT(!co->result);
    co->result = fl_calloc(1, sizeof(struct ctl_res));
    co->result_free = ctl_res_free;
    scn_wait_begin(co);
    return co;
}

static struct ctl_res *ctl_take(lua_State *L)
{
    struct scn_co *co = scn_co_of(L);
    struct ctl_res *r = co->result;
    co->result = NULL;
    co->result_free = NULL;
    return r;
}

/* nil, message on failure; else calls push and returns its count. */
static int ctl_finish(lua_State *L, int (*push)(lua_State *, struct ctl_res *))
{
    struct ctl_res *r = ctl_take(L);
    int n;
    if (r->code) {
        lua_pushnil(L);
        lua_pushstring(L, r->text && r->text[0] ? r->text : "failed");
        n = 2;
    } else {
        n = push(L, r);
    }
    ctl_res_free(r);
    return n;
}

static int push_true(lua_State *L, struct ctl_res *r)
{
    (void)r;
    lua_pushboolean(L, 1);
    return 1;
}

static int push_node(lua_State *L, struct ctl_res *r)
{
    lua_pushinteger(L, r->node);
    return 1;
}

static int k_bool(lua_State *L, int st, lua_KContext ctx)
{
    (void)st;
    (void)ctx;
    return ctl_finish(L, push_true);
}

static int k_node(lua_State *L, int st, lua_KContext ctx)
{
    (void)st;
    (void)ctx;
    return ctl_finish(L, push_node);
}

/* member_add{ learner = false, start = true } -> slot | nil, message. With start = false
 * the member is in the configuration but its process is not started: start(n) does. */
static int l_member_add(lua_State *L)
{
    static const char *const known[] = {"learner", "start", NULL};
    bool learner = false, start = true;
    if (!lua_isnoneornil(L, 1)) {
        luaL_checktype(L, 1, LUA_TTABLE);
        scn_check_options(L, 1, "member_add options", known);
        learner = scn_field_bool(L, 1, "member_add options", "learner", 0);
        start = scn_field_bool(L, 1, "member_add options", "start", 1);
    }
    struct run_world *rw = scn_world(L);
    struct scn_co *co = ctl_begin(L, "member_add");
    if (start)
        run_member_add(rw, learner, ctl_cb, co);
    else
        run_member_add_unstarted(rw, learner, ctl_cb, co);
    return scn_wait_end(L, 0, k_node);
}

/* start(n): starts a member added with member_add{ start = false } (an empty data
 * directory joining the cluster it was added to). Starting any other member is a script
 * error: restart(n) restarts a killed one. */
static int l_member_start(lua_State *L)
{
    int id = scn_check_node(L, 1);
    struct run_world *rw = scn_world(L);
    if (!run_member_awaits_start(rw, id))
        return luaL_error(L,
                          "start: member %d is not awaiting its start (only a member added "
                          "with member_add{ start = false } and not started yet is)",
                          id);
    int rc = run_member_start(rw, id);
    if (rc)
        return luaL_error(L, "start: %s", fl_strerror(rc));
    return 0;
}

static int node_ctl(lua_State *L, const char *name,
                    void (*fn)(struct run_world *, int, run_ctl_fn *, void *))
{
    int id = scn_check_node(L, 1);
    struct run_world *rw = scn_world(L);
    struct scn_co *co = ctl_begin(L, name);
    fn(rw, id, ctl_cb, co);
    return scn_wait_end(L, 0, k_bool);
}

static int l_member_promote(lua_State *L)
{
    return node_ctl(L, "member_promote", run_member_promote);
}
static int l_member_remove(lua_State *L)
{
    return node_ctl(L, "member_remove", run_member_remove);
}
static int l_move_leader(lua_State *L)
{
    return node_ctl(L, "move_leader", run_move_leader);
}
static int l_defrag(lua_State *L)
{
    return node_ctl(L, "defrag", run_defrag);
}

static int l_compact(lua_State *L)
{
    lua_Integer rev = luaL_checkinteger(L, 1);
    luaL_argcheck(L, rev > 0, 1, "revision must be positive");
    struct run_world *rw = scn_world(L);
    struct scn_co *co = ctl_begin(L, "compact");
    run_compact(rw, rev, ctl_cb, co);
    return scn_wait_end(L, 0, k_bool);
}

static int l_alarm_disarm(lua_State *L)
{
    struct run_world *rw = scn_world(L);
    struct scn_co *co = ctl_begin(L, "alarm_disarm");
    run_alarm_disarm(rw, ctl_cb, co);
    return scn_wait_end(L, 0, k_bool);
}

/* --- snapshots (backups) ------------------------------------------------------------ */

#define SNAP_MT "faultline.snapshot"

struct scn_snap {
    uint8_t *data;
    size_t len;
    bool raw;   /* a copy of the db file, without integrity hash */
    bool freed; /* its __gc ran (only the collector can call it: the metatable is
                 * protected; a finalizer of another object may still hold it) */
};

/* The snapshot at idx; raises when it was freed. */
static struct scn_snap *check_snap(lua_State *L, int idx)
{
    struct scn_snap *s = luaL_checkudata(L, idx, SNAP_MT);
    if (s->freed)
        luaL_error(L, "this snapshot was freed (garbage collected)");
    return s;
}

static struct scn_snap *push_snap(lua_State *L, uint8_t *data, size_t len, bool raw)
{
    struct scn_snap *s = lua_newuserdatauv(L, sizeof *s, 0);
    s->data = data;
    s->len = len;
    s->raw = raw;
    s->freed = false;
    luaL_setmetatable(L, SNAP_MT);
    return s;
}

static int push_snapshot(lua_State *L, struct ctl_res *r)
{
    push_snap(L, r->data, r->len, false);
    r->data = NULL;
    return 1;
}

static int k_snapshot(lua_State *L, int st, lua_KContext ctx)
{
    (void)st;
    (void)ctx;
    return ctl_finish(L, push_snapshot);
}

static int l_snapshot_save(lua_State *L)
{
    int id = scn_check_node(L, 1);
    struct run_world *rw = scn_world(L);
    struct scn_co *co = ctl_begin(L, "snapshot_save");
    run_snapshot_save(rw, id, ctl_cb, co);
    return scn_wait_end(L, 0, k_snapshot);
}

static int l_copy_db(lua_State *L)
{
    int id = scn_check_node(L, 1);
    uint8_t *data = NULL;
    size_t len = 0;
    if (run_copy_db(scn_world(L), id, &data, &len)) {
        lua_pushnil(L);
        lua_pushstring(L, "no db file on that member");
        return 2;
    }
    push_snap(L, data, len, true);
    return 1;
}

static int snap_gc(lua_State *L)
{
    struct scn_snap *s = luaL_checkudata(L, 1, SNAP_MT);
    free(s->data);
    s->data = NULL;
    s->len = 0;
    s->freed = true;
    return 0;
}

static int snap_size(lua_State *L)
{
    struct scn_snap *s = check_snap(L, 1);
    lua_pushinteger(L, (lua_Integer)s->len);
    return 1;
}

static int snap_tostring(lua_State *L)
{
    struct scn_snap *s = luaL_checkudata(L, 1, SNAP_MT);
    if (s->freed)
        lua_pushliteral(L, "<snapshot (freed)>");
    else
        lua_pushfstring(L, "<snapshot %I bytes%s>", (lua_Integer)s->len, s->raw ? ", raw" : "");
    return 1;
}

/* snap:corrupt([offset]): flips one byte (default: the middle) of a copy. */
static int snap_corrupt(lua_State *L)
{
    struct scn_snap *s = check_snap(L, 1);
    lua_Integer off = luaL_optinteger(L, 2, (lua_Integer)s->len / 2);
    luaL_argcheck(L, off >= 0 && (size_t)off < s->len, 2, "offset outside the snapshot");
    uint8_t *copy = fl_memdup(s->data, s->len);
    copy[off] ^= 0x5a;
    push_snap(L, copy, s->len, s->raw);
    return 1;
}

static int l_restore(lua_State *L)
{
    static const char *const known[] = {"nodes", "skip_hash_check", NULL};
    struct scn_snap *s = check_snap(L, 1);
    struct run_world *rw = scn_world(L);
    int nodes[MAX_NODES], n;
    bool skip = false;
    if (!lua_isnoneornil(L, 2)) {
        luaL_checktype(L, 2, LUA_TTABLE);
        scn_check_options(L, 2, "restore options", known);
        skip = scn_field_bool(L, 2, "restore options", "skip_hash_check", 0);
    }
    if (!lua_isnoneornil(L, 2) && lua_getfield(L, 2, "nodes") != LUA_TNIL) {
        n = scn_check_nodes(L, -1, nodes, MAX_NODES);
    } else {
        n = run_nodes(rw, nodes, MAX_NODES);
    }
    char err[512]; /* etcd's hash mismatch text: two 32-byte digests in decimal, ~290 bytes */
    if (run_restore(rw, s->data, s->len, nodes, n, skip, err, sizeof err)) {
        lua_pushnil(L);
        lua_pushstring(L, err);
        return 2;
    }
    lua_pushboolean(L, 1);
    return 1;
}

/* --- expect and nemesis -------------------------------------------------------------- */

static int l_expect(lua_State *L)
{
    luaL_checkany(L, 1);
    bool ok = lua_toboolean(L, 1);
    size_t msg_len;
    const char *msg = luaL_optlstring(L, 2, "expectation", &msg_len);
    struct run_world *rw = scn_world(L);
    struct fl_buf obs;
    fl_buf_init(&obs);
    if (!lua_isnone(L, 3))
        scn_to_json(L, 3, &obs);
    else
        scn_to_json(L, 1, &obs);
    int line = scn_current_line(L, 1);
    run_expect(rw, ok, msg, msg_len, fl_buf_cstr(&obs), line);
    if (!ok) {
        /* script text: no raw control bytes to the terminal (harness/common/text.h) */
        struct fl_buf shown;
        fl_buf_init(&shown);
        fl_term_escape(&shown, msg, msg_len, FL_TERM_ONE_LINE);
        char *path = fl_term_dup(scn_of(L)->opts->path), *seen = fl_term_dup(fl_buf_cstr(&obs));
        fprintf(stderr, "%s:%d: expect failed: %s (observed %s)\n", path, line, fl_buf_cstr(&shown),
                seen);
        free(path);
        free(seen);
        fl_buf_close(&shown);
    }
    fl_buf_close(&obs);
    lua_pushboolean(L, ok);
    return 1;
}

static int l_nemesis(lua_State *L)
{
    static const char *const known[] = {"kinds", "every", "duration", NULL};
    luaL_checktype(L, 1, LUA_TTABLE);
    scn_check_options(L, 1, "nemesis", known);
    if (lua_getfield(L, 1, "kinds") == LUA_TNIL &&
        scn_swarm_nemesis(L, scn_field_duration(L, 1, "nemesis", "duration", 0)))
        return 0; /* swarm{} drew the fault phase (scn_swarm.c) */
    lua_pop(L, 1);
    unsigned kinds = 0;
    if (lua_getfield(L, 1, "kinds") != LUA_TNIL) {
        luaL_checktype(L, -1, LUA_TTABLE);
        lua_Integer n = luaL_len(L, -1);
        for (lua_Integer i = 1; i <= n; i++) {
            lua_geti(L, -1, i);
            const char *k = lua_tostring(L, -1);
            unsigned bit = k ? run_nemesis_kind(k) : 0;
            if (!bit)
                return luaL_error(L,
                                  "nemesis.kinds: unknown kind '%s' (known: partition, kill, "
                                  "pause, skew, membership, net, all)",
                                  k ? k : luaL_typename(L, -1));
            kinds |= bit;
            lua_pop(L, 1);
        }
    } else {
        kinds = RUN_NEMESIS_PARTITION | RUN_NEMESIS_KILL | RUN_NEMESIS_PAUSE;
    }
    lua_pop(L, 1);
    if (!kinds)
        return luaL_error(L, "nemesis.kinds: empty");
    int64_t every = scn_field_duration(L, 1, "nemesis", "every", 2 * FL_S);
    int64_t duration = scn_field_duration(L, 1, "nemesis", "duration", 0);
    /* A tick more often than every millisecond applies a fault per event of the
     * simulation: simulated time barely moves and the run never ends (found by
     * fuzz/fuzz_lua.c: every = 1.5). */
    if (every < FL_MS)
        return luaL_error(L, "nemesis.every must be at least 1 ms");
    struct run_world *rw = scn_world(L);
    /* shrink{ time_scale }: the nemesis' timeline shrinks with the script's */
    every = scn_scale_duration(scn_of(L), every);
    every = FL_MAX(FL_MS, every);
    duration = scn_scale_duration(scn_of(L), duration);
    /* a tick comes every/2 .. 3*every/2 after the last one */
    scn_deadline(L, "nemesis.every", every + every / 2);
    if (duration)
        scn_deadline(L, "nemesis.duration", duration);
    if (run_nemesis(rw, kinds, every, duration) == FL_EUNSUP)
        return luaL_error(L,
                          "nemesis: only kinds partition, kill and pause are available on "
                          "--target %s",
                          run_target_name(run_target(rw)));
    return 0;
}

void scn_open_world(lua_State *L)
{
    static const luaL_Reg fns[] = {
        {"scenario", l_scenario},
        {"leader", l_leader},
        {"nodes", l_nodes},
        {"others", l_others},
        {"kill", l_kill},
        {"restart", l_restart},
        {"pause", l_pause},
        {"resume", l_resume},
        {"skew", l_skew},
        {"failpoint", l_failpoint},
        {"bug", l_bug},
        {"member_add", l_member_add},
        {"start", l_member_start},
        {"member_promote", l_member_promote},
        {"member_remove", l_member_remove},
        {"move_leader", l_move_leader},
        {"compact", l_compact},
        {"defrag", l_defrag},
        {"snapshot_save", l_snapshot_save},
        {"copy_db", l_copy_db},
        {"restore", l_restore},
        {"alarm_disarm", l_alarm_disarm},
        {"expect", l_expect},
        {"nemesis", l_nemesis},
        {NULL, NULL},
    };
    lua_pushglobaltable(L);
    luaL_setfuncs(L, fns, 0);
    lua_pop(L, 1);
    scn_open_net(L); /* partition, isolate, heal, net, hold, ... (scn_net.c) */
    static const luaL_Reg snap_methods[] = {
        {"size", snap_size}, {"corrupt", snap_corrupt}, {NULL, NULL}};
    luaL_newmetatable(L, SNAP_MT);
    lua_pushcfunction(L, snap_gc);
    lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, snap_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pushcfunction(L, snap_size);
    lua_setfield(L, -2, "__len");
    luaL_newlib(L, snap_methods);
    lua_setfield(L, -2, "__index");
    scn_protect_metatable(L, -1);
    lua_pop(L, 1);
}
