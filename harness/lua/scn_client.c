/*
 * scn_client.c: clients in a scenario. client(i) is a userdata ("faultline.client")
 * whose methods put/get/delete/txn/lease_* block the calling coroutine until the
 * simulated client answers: the completion callback pushes the result onto the
 * suspended coroutine's stack and wakes it, and the continuation returns what was
 * pushed. A success returns a table; a failure returns nil, etcd's error text and the
 * status ("fail": surely not applied, "unknown": may have been applied). Every call is
 * recorded in the history like the workload's.
 *
 * watch(key, opts) returns a "faultline.watch" object at once: with opts.callback
 * each event runs callback(ev) in a new coroutine, in delivery order; otherwise events
 * queue in the object and w:next(timeout) / w:events(timeout) take them out.
 * Watch state lives in C (owned by the run), so __gc of the Lua object never acts on
 * the world (GC timing is not deterministic).
 */
#include "harness/lua/scn_int.h"

#include "nodes/client/client.h"

#define CLIENT_MT "faultline.client"
#define WATCH_MT  "faultline.watch"
#define TXN_MAX   32

struct scn_client_ud {
    int index;
};

static struct kvc_client *check_client(lua_State *L, int idx)
{
    struct scn_client_ud *u = luaL_checkudata(L, idx, CLIENT_MT);
    struct kvc_client *c = run_client(scn_world(L), u->index);
    if (!c)
        luaL_error(L, "client %d is closed", u->index);
    return c;
}

int scn_client_index(lua_State *L, int idx)
{
    const struct scn_client_ud *u = luaL_testudata(L, idx, CLIENT_MT);
    return u ? u->index : 0;
}

static int l_client(lua_State *L)
{
    lua_Integer i = luaL_checkinteger(L, 1);
    struct run_world *rw = scn_world(L);
    int n = run_client_count(rw);
    if (i < 1 || i > n)
        return luaL_argerror(L, 1,
                             lua_pushfstring(L, "unknown client %I (the scenario has %d)", i, n));
    struct scn_client_ud *u = lua_newuserdatauv(L, sizeof *u, 0);
    u->index = (int)i;
    luaL_setmetatable(L, CLIENT_MT);
    return 1;
}

/* --- results -------------------------------------------------------------------------- */

static void push_bytes(lua_State *L, struct kvc_bytes b)
{
    lua_pushlstring(L, b.p ? (const char *)b.p : "", b.n);
}

static void push_kv(lua_State *L, const struct kvc_kv *kv)
{
    lua_createtable(L, 0, 6);
    push_bytes(L, kv->key);
    lua_setfield(L, -2, "key");
    push_bytes(L, kv->value);
    lua_setfield(L, -2, "value");
    lua_pushinteger(L, kv->create_rev);
    lua_setfield(L, -2, "create_revision");
    lua_pushinteger(L, kv->mod_rev);
    lua_setfield(L, -2, "mod_revision");
    lua_pushinteger(L, kv->version);
    lua_setfield(L, -2, "version");
    lua_pushinteger(L, kv->lease);
    lua_setfield(L, -2, "lease");
}

static void push_op_result(lua_State *L, const struct kvc_op_result *r)
{
    if (r->kind == KVC_OP_RANGE) {
        lua_createtable(L, (int)r->kv_count, 0);
        for (size_t i = 0; i < r->kv_count; i++) {
            push_kv(L, &r->kvs[i]);
            lua_rawseti(L, -2, (lua_Integer)i + 1);
        }
        lua_setfield(L, -2, "kvs");
        lua_pushinteger(L, r->count);
        lua_setfield(L, -2, "count");
        if (r->kv_count) {
            push_bytes(L, r->kvs[0].value);
            lua_setfield(L, -2, "value");
        }
    } else if (r->kind == KVC_OP_PUT) {
        if (r->has_prev_kv) {
            push_kv(L, &r->prev_kv);
            lua_setfield(L, -2, "prev_kv");
        }
    } else {
        lua_pushinteger(L, r->deleted);
        lua_setfield(L, -2, "deleted");
        if (r->prev_kv_count) {
            lua_createtable(L, (int)r->prev_kv_count, 0);
            for (size_t i = 0; i < r->prev_kv_count; i++) {
                push_kv(L, &r->prev_kvs[i]);
                lua_rawseti(L, -2, (lua_Integer)i + 1);
            }
            lua_setfield(L, -2, "prev_kvs");
        }
    }
}

/* Pushes what the call returns onto L: a table, or nil, error, status. */
static void push_result(lua_State *L, const struct kvc_result *r)
{
    if (r->status != KVC_OK) {
        lua_pushnil(L);
        lua_pushstring(L, r->error && r->error[0] ? r->error : "failed");
        lua_pushstring(L, kvc_status_name(r->status));
        return;
    }
    lua_createtable(L, 0, 8);
    lua_pushinteger(L, r->header.revision);
    lua_setfield(L, -2, "revision");
    lua_pushinteger(L, r->node);
    lua_setfield(L, -2, "node");
    switch (r->method) {
    case KVC_RANGE:
    case KVC_PUT:
    case KVC_DELETE:
        push_op_result(L, &r->op);
        break;
    case KVC_TXN:
        lua_pushboolean(L, r->succeeded);
        lua_setfield(L, -2, "succeeded");
        lua_createtable(L, (int)r->op_count, 0);
        for (size_t i = 0; i < r->op_count; i++) {
            lua_createtable(L, 0, 4);
            push_op_result(L, &r->ops[i]);
            lua_rawseti(L, -2, (lua_Integer)i + 1);
        }
        lua_setfield(L, -2, "responses");
        break;
    case KVC_LEASE_GRANT:
    case KVC_LEASE_TTL:
    case KVC_LEASE_REVOKE:
        lua_pushinteger(L, r->lease_id);
        lua_setfield(L, -2, "id");
        lua_pushinteger(L, r->method == KVC_LEASE_GRANT ? r->granted_ttl_s : r->ttl_s);
        lua_setfield(L, -2, "ttl");
        if (r->method == KVC_LEASE_GRANT && !r->granted_ttl_s) {
            lua_pushinteger(L, r->ttl_s);
            lua_setfield(L, -2, "ttl");
        }
        break;
    default:
        break;
    }
}

static void op_cb(void *ud, const struct kvc_result *r)
{
    struct scn_co *co = ud;
    struct scn *S = co->S;
    if (S->stopping || co->done)
        return;
    /* Called from the client, not from Lua: nothing may raise here (a memory error would
     * unwind through the client's code), so the memory limit waits for the script. */
    bool enforce = S->mem_enforce;
    S->mem_enforce = false;
    lua_checkstack(co->th, 8);
    push_result(co->th, r);
    S->mem_enforce = enforce;
    scn_co_wake(co);
}

/* The continuation: returns everything the callback pushed above the frame's nargs. */
static int k_op(lua_State *L, int status, lua_KContext nargs)
{
    (void)status;
    return lua_gettop(L) - (int)nargs;
}

static int start_call(lua_State *L, const char *name, struct kvc_client *c,
                      const struct kvc_request *req, const struct kvc_call_opts *o)
{
    struct scn_co *co = scn_need_co(L, name);
    int nargs = lua_gettop(L); /* before anything the callback pushes */
    scn_wait_begin(co);
    kvc_call(c, req, o, op_cb, co);
    return scn_wait_end(L, nargs, k_op);
}

/* --- request arguments ---------------------------------------------------------------- */

static struct kvc_bytes check_bytes(lua_State *L, int idx)
{
    size_t n;
    const char *s = luaL_checklstring(L, idx, &n);
    return (struct kvc_bytes){(const uint8_t *)s, n};
}

static struct kvc_bytes field_bytes(lua_State *L, int idx, const char *what, const char *key)
{
    const char *s = scn_field_str(L, idx, what, key, NULL);
    if (!s)
        return (struct kvc_bytes){NULL, 0};
    lua_getfield(L, idx, key);
    size_t n;
    s = lua_tolstring(L, -1, &n);
    lua_pop(L, 1); /* still referenced by the table */
    return (struct kvc_bytes){(const uint8_t *)s, n};
}

/* The end of the prefix range of key (etcd's GetPrefixRangeEnd): key up to its last
 * byte below 0xff, that byte incremented; "\0" (every key) when there is none. The
 * bytes are a new Lua string, of any length, that keeps them alive for the call: left
 * on top of the stack when anchor is 0, else appended to the table at anchor. */
static struct kvc_bytes prefix_end(lua_State *L, int anchor, struct kvc_bytes key)
{
    size_t n = key.n;
    while (n > 0 && key.p[n - 1] == 0xff)
        n--;
    luaL_checkstack(L, 4, "prefix");
    if (n == 0) {
        lua_pushlstring(L, "", 1);
    } else {
        luaL_Buffer b;
        char *p = luaL_buffinitsize(L, &b, n);
        memcpy(p, key.p, n);
        p[n - 1] = (char)((uint8_t)p[n - 1] + 1);
        luaL_pushresultsize(&b, n);
    }
    size_t len;
    const char *s = lua_tolstring(L, -1, &len);
    if (anchor)
        lua_rawseti(L, anchor, (lua_Integer)lua_rawlen(L, anchor) + 1);
    return (struct kvc_bytes){(const uint8_t *)s, len};
}

/* A `timeout` option: a duration whose deadline stays within simulated time; in ms for
 * the client (at least 1), 0 when absent. */
static int64_t field_timeout_ms(lua_State *L, int idx, const char *what)
{
    int64_t t = scn_field_duration(L, idx, what, "timeout", 0);
    if (!t)
        return 0;
    char w[96];
    snprintf(w, sizeof w, "%s.timeout", what);
    scn_deadline(L, w, t);
    return FL_MAX(1, t / FL_MS);
}

static const char *const op_opts[] = {"range_end",      "prefix",  "revision", "limit",
                                      "serializable",   "prev_kv", "lease",    "timeout",
                                      "require_leader", "node",    NULL};

/* Reads the options table at idx (may be none) into op and call options. */
static void read_op_opts(lua_State *L, int idx, const char *what, struct kvc_op *op,
                         struct kvc_call_opts *o)
{
    if (lua_isnoneornil(L, idx))
        return;
    luaL_checktype(L, idx, LUA_TTABLE);
    scn_check_options(L, idx, what, op_opts);
    op->range_end = field_bytes(L, idx, what, "range_end");
    if (scn_field_bool(L, idx, what, "prefix", 0))
        op->range_end = prefix_end(L, 0, op->key); /* stays on top: balanced below */
    op->revision = scn_field_int(L, idx, what, "revision", 0, 0, INT64_MAX);
    op->limit = scn_field_int(L, idx, what, "limit", 0, 0, INT64_MAX);
    op->serializable = scn_field_bool(L, idx, what, "serializable", 0);
    op->prev_kv = scn_field_bool(L, idx, what, "prev_kv", 0);
    op->lease = scn_field_int(L, idx, what, "lease", 0, 0, INT64_MAX);
    o->timeout_ms = field_timeout_ms(L, idx, what);
    o->require_leader = scn_field_bool(L, idx, what, "require_leader", 0);
    if (lua_getfield(L, idx, "node") != LUA_TNIL)
        o->node = scn_check_node(L, lua_gettop(L));
    lua_pop(L, 1);
}

/* put(key, value, opts), get(key, opts), delete(key, opts): one op, its options last. */
static int op_call(lua_State *L, enum kvc_method method, enum kvc_op_kind kind, const char *what,
                   const char *opts_what)
{
    struct kvc_client *c = check_client(L, 1);
    struct kvc_request req = {.method = method};
    struct kvc_call_opts o = {0};
    int idx = 2;
    req.op.kind = kind;
    req.op.key = check_bytes(L, idx++);
    if (kind == KVC_OP_PUT)
        req.op.value = check_bytes(L, idx++);
    read_op_opts(L, idx, opts_what, &req.op, &o);
    if (kind == KVC_OP_PUT)
        req.op.range_end = (struct kvc_bytes){NULL, 0};
    return start_call(L, what, c, &req, &o);
}

static int m_put(lua_State *L)
{
    return op_call(L, KVC_PUT, KVC_OP_PUT, "put", "put options");
}

static int m_get(lua_State *L)
{
    return op_call(L, KVC_RANGE, KVC_OP_RANGE, "get", "get options");
}

static int m_delete(lua_State *L)
{
    return op_call(L, KVC_DELETE, KVC_OP_DELETE, "delete", "delete options");
}

/* --- txn -------------------------------------------------------------------------------- */

static void read_cmp(lua_State *L, int idx, struct kvc_compare *cmp)
{
    static const char *const known[] = {"key",   "range_end", "target",          "result",
                                        "value", "version",   "create_revision", "mod_revision",
                                        "lease", NULL};
    static const char *const targets[] = {"version", "create", "mod", "value", "lease"};
    static const char *const results[] = {"=", ">", "<", "!="};
    const char *w = "txn compare";
    luaL_checktype(L, idx, LUA_TTABLE);
    scn_check_options(L, idx, w, known);
    cmp->key = field_bytes(L, idx, w, "key");
    if (!cmp->key.p)
        luaL_error(L, "%s: key is required", w);
    cmp->range_end = field_bytes(L, idx, w, "range_end");
    const char *t = scn_field_str(L, idx, w, "target", "value");
    const char *r = scn_field_str(L, idx, w, "result", "=");
    int ti = -1, ri = -1;
    for (int i = 0; i < 5; i++)
        ti = strcmp(targets[i], t) ? ti : i;
    for (int i = 0; i < 4; i++)
        ri = strcmp(results[i], r) ? ri : i;
    if (ti < 0)
        luaL_error(L, "%s: unknown target '%s' (value, version, create, mod, lease)", w, t);
    if (ri < 0)
        luaL_error(L, "%s: unknown result '%s' (=, !=, >, <)", w, r);
    cmp->target = (enum kvc_cmp_target)ti;
    cmp->result = (enum kvc_cmp_result)ri;
    cmp->value = field_bytes(L, idx, w, "value");
    static const char *const num_field[] = {"version", "create_revision", "mod_revision", NULL,
                                            "lease"};
    if (num_field[ti])
        cmp->number = scn_field_int(L, idx, w, num_field[ti], 0, INT64_MIN, INT64_MAX);
    else if (!cmp->value.p)
        cmp->value = (struct kvc_bytes){(const uint8_t *)"", 0};
}

/* One sub-operation: {put={key=,value=,...}} | {get={key=,...}} | {delete={key=,...}}.
 * The strings stay referenced by the argument table, which is on the stack. */
static void read_sub(lua_State *L, int idx, struct kvc_op *op, int anchor)
{
    static const char *const kinds[] = {"get", "put", "delete", NULL};
    static const char *const known[] = {"key",   "value",    "range_end", "prefix",       "prev_kv",
                                        "lease", "revision", "limit",     "serializable", NULL};
    luaL_checktype(L, idx, LUA_TTABLE);
    scn_check_options(L, idx, "txn operation", kinds);
    int found = 0;
    for (int k = 0; kinds[k]; k++) {
        if (lua_getfield(L, idx, kinds[k]) == LUA_TNIL) {
            lua_pop(L, 1);
            continue;
        }
        int t = lua_gettop(L);
        char what[32];
        snprintf(what, sizeof what, "txn %s", kinds[k]);
        found++;
        luaL_checktype(L, t, LUA_TTABLE);
        scn_check_options(L, t, what, known);
        op->kind = k == 0 ? KVC_OP_RANGE : k == 1 ? KVC_OP_PUT : KVC_OP_DELETE;
        op->key = field_bytes(L, t, what, "key");
        if (!op->key.p)
            luaL_error(L, "%s: key (a string) is required", what);
        if (op->kind == KVC_OP_PUT) {
            op->value = field_bytes(L, t, what, "value");
            if (!op->value.p)
                luaL_error(L, "%s: value is required", what);
            op->lease = scn_field_int(L, t, what, "lease", 0, 0, INT64_MAX);
        } else {
            op->range_end = field_bytes(L, t, what, "range_end");
            if (scn_field_bool(L, t, what, "prefix", 0))
                op->range_end = prefix_end(L, anchor, op->key);
        }
        op->prev_kv = scn_field_bool(L, t, what, "prev_kv", 0);
        op->revision = scn_field_int(L, t, what, "revision", 0, 0, INT64_MAX);
        op->limit = scn_field_int(L, t, what, "limit", 0, 0, INT64_MAX);
        op->serializable = scn_field_bool(L, t, what, "serializable", 0);
        lua_pop(L, 1);
    }
    if (found != 1)
        luaL_error(L, "txn operation: exactly one of get, put, delete expected");
}

static int read_sub_list(lua_State *L, int idx, const char *key, struct kvc_op *ops, int anchor)
{
    int n = 0;
    if (lua_getfield(L, idx, key) != LUA_TNIL) {
        int t = lua_gettop(L);
        luaL_checktype(L, t, LUA_TTABLE);
        lua_Integer len = luaL_len(L, t);
        if (len > TXN_MAX)
            luaL_error(L, "txn.%s: at most %d operations", key, TXN_MAX);
        for (lua_Integer i = 1; i <= len; i++) {
            lua_geti(L, t, i);
            read_sub(L, lua_gettop(L), &ops[n], anchor);
            n++;
            lua_pop(L, 1);
        }
    }
    lua_pop(L, 1);
    return n;
}

static int m_txn(lua_State *L)
{
    static const char *const known[] = {"compare", "success", "failure", "timeout", NULL};
    struct kvc_client *c = check_client(L, 1);
    luaL_checktype(L, 2, LUA_TTABLE);
    scn_check_options(L, 2, "txn", known);
    struct kvc_compare cmps[TXN_MAX];
    struct kvc_op then_ops[TXN_MAX], else_ops[TXN_MAX];
    lua_settop(L, 2);
    lua_newtable(L); /* 3: keeps the prefix range ends alive for the call */
    memset(cmps, 0, sizeof cmps);
    memset(then_ops, 0, sizeof then_ops);
    memset(else_ops, 0, sizeof else_ops);
    int nc = 0;
    if (lua_getfield(L, 2, "compare") != LUA_TNIL) {
        int t = lua_gettop(L);
        luaL_checktype(L, t, LUA_TTABLE);
        lua_Integer len = luaL_len(L, t);
        if (len > TXN_MAX)
            return luaL_error(L, "txn.compare: at most %d compares", TXN_MAX);
        for (lua_Integer i = 1; i <= len; i++) {
            lua_geti(L, t, i);
            read_cmp(L, lua_gettop(L), &cmps[nc++]);
            lua_pop(L, 1);
        }
    }
    lua_pop(L, 1);
    int nt = read_sub_list(L, 2, "success", then_ops, 3);
    int ne = read_sub_list(L, 2, "failure", else_ops, 3);
    struct kvc_call_opts o = {0};
    o.timeout_ms = field_timeout_ms(L, 2, "txn");
    struct kvc_request req = {.method = KVC_TXN,
                              .cmps = cmps,
                              .cmp_count = (size_t)nc,
                              .then_ops = then_ops,
                              .then_count = (size_t)nt,
                              .else_ops = else_ops,
                              .else_count = (size_t)ne};
    return start_call(L, "txn", c, &req, &o);
}

/* --- leases ----------------------------------------------------------------------------- */

static int m_lease_grant(lua_State *L)
{
    struct kvc_client *c = check_client(L, 1);
    lua_Integer ttl = luaL_checkinteger(L, 2);
    luaL_argcheck(L, ttl > 0, 2, "ttl (seconds) must be positive");
    struct kvc_request req = {.method = KVC_LEASE_GRANT, .ttl_s = ttl};
    return start_call(L, "lease_grant", c, &req, NULL);
}

static int m_lease_revoke(lua_State *L)
{
    struct kvc_client *c = check_client(L, 1);
    struct kvc_request req = {.method = KVC_LEASE_REVOKE, .lease_id = luaL_checkinteger(L, 2)};
    return start_call(L, "lease_revoke", c, &req, NULL);
}

static int m_lease_ttl(lua_State *L)
{
    struct kvc_client *c = check_client(L, 1);
    struct kvc_request req = {.method = KVC_LEASE_TTL, .lease_id = luaL_checkinteger(L, 2)};
    return start_call(L, "lease_ttl", c, &req, NULL);
}

static void keepalive_cb(void *ud, const struct kvc_result *r)
{
    (void)ud;
    (void)r; /* the observer records every answer */
}

/* client:lease_keepalive(id [, { require_leader = true }]) */
static int m_lease_keepalive(lua_State *L)
{
    static const char *const known[] = {"require_leader", NULL};
    struct kvc_client *c = check_client(L, 1);
    lua_Integer id = luaL_checkinteger(L, 2);
    struct kvc_call_opts o = {0};
    if (!lua_isnoneornil(L, 3)) {
        luaL_checktype(L, 3, LUA_TTABLE);
        scn_check_options(L, 3, "lease_keepalive options", known);
        o.require_leader = scn_field_bool(L, 3, "lease_keepalive options", "require_leader", 0);
    }
    uint64_t s = kvc_lease_keepalive(c, id, &o, keepalive_cb, NULL);
    lua_pushinteger(L, (lua_Integer)s);
    return 1;
}

static int m_lease_keepalive_stop(lua_State *L)
{
    struct kvc_client *c = check_client(L, 1);
    lua_Integer id = luaL_checkinteger(L, 2);
    lua_pushboolean(L, kvc_lease_keepalive_stop(c, (uint64_t)id) == 0);
    return 1;
}

/* client:stats(): every field of kvc_stats_json (so new counters of the client show up
 * without a change here), plus the lists fault_ms and failover_ms (-1: no success
 * after that fault yet) that scenarios index by fault number. */
static int m_stats(lua_State *L)
{
    struct kvc_client *c = check_client(L, 1);
    struct kvc_stats st;
    kvc_client_stats(c, &st);
    json_t *j = kvc_stats_json(&st);
    scn_push_json(L, j);
    json_decref(j);
    size_t nf = st.fault_count < KVC_FAULTS_MAX ? st.fault_count : KVC_FAULTS_MAX;
    lua_createtable(L, (int)nf, 0);
    for (size_t i = 0; i < nf; i++) {
        lua_pushinteger(L, (lua_Integer)(st.fault_ns[i] / FL_MS));
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    lua_setfield(L, -2, "fault_ms");
    lua_createtable(L, (int)nf, 0);
    for (size_t i = 0; i < nf; i++) {
        lua_pushinteger(L, (lua_Integer)st.failover_ms[i]);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    lua_setfield(L, -2, "failover_ms");
    return 1;
}

/* client:attempts([n]): the client's last n attempts (default: all it keeps, the last
 * KVC_ATTEMPTS_KEEP), oldest first, each {at, ["end"], member, call, outcome, [error],
 * retry}: times in ns; outcome "ok" | "error" | "transport" | "timeout" | "abandoned" |
 * "canceled" | "outstanding"; error the member's or the transport's text. */
static int m_attempts(lua_State *L)
{
    struct kvc_client *c = check_client(L, 1);
    lua_Integer n = luaL_optinteger(L, 2, 0);
    luaL_argcheck(L, n >= 0, 2, "a count of attempts (0 or more) expected");
    json_t *arr = kvc_attempts_json(c, (size_t)FL_MIN(n, (lua_Integer)KVC_ATTEMPTS_KEEP));
    lua_createtable(L, (int)json_array_size(arr), 0);
    for (size_t i = 0; i < json_array_size(arr); i++) {
        json_t *a = json_array_get(arr, i);
        scn_push_json(L, a); /* null fields (end, error) stay nil */
        lua_getfield(L, -1, "at_ns");
        lua_setfield(L, -2, "at");
        lua_pushnil(L);
        lua_setfield(L, -2, "at_ns");
        lua_getfield(L, -1, "end_ns");
        lua_setfield(L, -2, "end");
        lua_pushnil(L);
        lua_setfield(L, -2, "end_ns");
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    json_decref(arr);
    return 1;
}

/* --- watches ------------------------------------------------------------------------------ */

struct scn_watch {
    struct scn *S;
    struct kvc_client *c;
    uint64_t id;
    int queue_ref; /* Lua table of pending event tables */
    lua_Integer head, tail;
    int cb_ref; /* callback function or LUA_NOREF */
    bool canceled;
    char *cancel_reason;      /* the server's text (NULL: none yet); owned */
    int64_t compact_revision; /* canceled for compaction: the compacted revision */
    struct scn_co *waiter;
    int64_t wait_deadline_ns;
    struct scn_watch *next; /* every watch of the run, freed at the end */
};

static void push_event(lua_State *L, const struct kvc_watch_resp *r, const struct kvc_event *e)
{
    lua_createtable(L, 0, 8);
    lua_pushstring(L, e->kind == KVC_EV_PUT ? "put" : "delete");
    lua_setfield(L, -2, "type");
    push_bytes(L, e->kv.key);
    lua_setfield(L, -2, "key");
    push_bytes(L, e->kv.value);
    lua_setfield(L, -2, "value");
    lua_pushinteger(L, e->kv.mod_rev);
    lua_setfield(L, -2, "mod_revision");
    lua_pushinteger(L, e->kv.create_rev);
    lua_setfield(L, -2, "create_revision");
    lua_pushinteger(L, e->kv.version);
    lua_setfield(L, -2, "version");
    lua_pushinteger(L, r->header.revision);
    lua_setfield(L, -2, "revision");
    if (e->has_prev_kv) {
        push_kv(L, &e->prev_kv);
        lua_setfield(L, -2, "prev_kv");
    }
}

static void watch_deliver(struct scn_watch *w, lua_State *L)
{
    /* event table on top of L (the main state) */
    struct scn *S = w->S;
    if (w->cb_ref != LUA_NOREF) {
        lua_rawgeti(L, LUA_REGISTRYINDEX, w->cb_ref);
        lua_insert(L, -2);
        scn_co_start(S, L, 1);
        return;
    }
    if (w->waiter) {
        struct scn_co *co = w->waiter;
        w->waiter = NULL;
        lua_xmove(L, co->th, 1);
        scn_co_wake(co);
        return;
    }
    lua_rawgeti(L, LUA_REGISTRYINDEX, w->queue_ref);
    lua_insert(L, -2);
    lua_rawseti(L, -2, ++w->tail);
    lua_pop(L, 1);
}

static void watch_cb(void *ud, const struct kvc_watch_resp *r)
{
    struct scn_watch *w = ud;
    struct scn *S = w->S;
    if (S->stopping)
        return;
    lua_State *L = S->L;
    /* From the client, not from Lua: nothing may raise (see op_cb). */
    bool enforce = S->mem_enforce;
    S->mem_enforce = false;
    lua_checkstack(L, 8);
    for (size_t i = 0; i < r->event_count; i++) {
        push_event(L, r, &r->events[i]);
        watch_deliver(w, L);
    }
    S->mem_enforce = enforce;
    if (r->canceled) {
        w->canceled = true;
        free(w->cancel_reason);
        w->cancel_reason = fl_strdup(r->cancel_reason ? r->cancel_reason : "");
        w->compact_revision = r->compact_revision;
        if (w->waiter) {
            struct scn_co *co = w->waiter;
            w->waiter = NULL;
            scn_co_wake(co); /* nothing pushed: next() returns nil, "canceled" */
        }
    }
}

/* The watch at idx. Its record lives until the Lua state closes; the guard keeps a
 * finalizer run by lua_close (--unsafe-lua) from reaching a freed one. */
static struct scn_watch *check_watch(lua_State *L, int idx)
{
    struct scn_watch *w = *(struct scn_watch **)luaL_checkudata(L, idx, WATCH_MT);
    scn_guard_api(L);
    return w;
}

static int m_watch(lua_State *L)
{
    static const char *const known[] = {"range_end",       "prefix",   "start_rev",      "prev_kv",
                                        "progress_notify", "callback", "require_leader", "no_put",
                                        "no_delete",       NULL};
    struct kvc_client *c = check_client(L, 1);
    struct kvc_watch_req req = {0};
    struct kvc_call_opts o = {0};
    req.key = check_bytes(L, 2);
    int cb_ref = LUA_NOREF;
    if (!lua_isnoneornil(L, 3)) {
        const char *w = "watch options";
        luaL_checktype(L, 3, LUA_TTABLE);
        scn_check_options(L, 3, w, known);
        req.range_end = field_bytes(L, 3, w, "range_end");
        if (scn_field_bool(L, 3, w, "prefix", 0))
            req.range_end = prefix_end(L, 0, req.key); /* stays on top: balanced below */
        req.start_rev = scn_field_int(L, 3, w, "start_rev", 0, 0, INT64_MAX);
        req.prev_kv = scn_field_bool(L, 3, w, "prev_kv", 0);
        req.progress_notify = scn_field_bool(L, 3, w, "progress_notify", 0);
        req.no_put = scn_field_bool(L, 3, w, "no_put", 0);
        req.no_delete = scn_field_bool(L, 3, w, "no_delete", 0);
        o.require_leader = scn_field_bool(L, 3, w, "require_leader", 0);
        if (lua_getfield(L, 3, "callback") != LUA_TNIL) {
            luaL_checktype(L, -1, LUA_TFUNCTION);
            cb_ref = luaL_ref(L, LUA_REGISTRYINDEX);
        } else {
            lua_pop(L, 1);
        }
    }
    struct scn_watch *w = fl_calloc(1, sizeof *w);
    w->S = scn_of(L);
    w->c = c;
    w->cb_ref = cb_ref;
    lua_newtable(L);
    w->queue_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    w->next = w->S->watches;
    w->S->watches = w;
    w->id = kvc_watch(c, &req, &o, watch_cb, w);
    struct scn_watch **u = lua_newuserdatauv(L, sizeof *u, 0);
    *u = w;
    luaL_setmetatable(L, WATCH_MT);
    return 1;
}

/* next() without an event: nil, "timeout"; or nil, "canceled", the server's reason
 * (e.g. etcd's "etcdserver: mvcc: required revision has been compacted"; "" when it
 * gave none), the compacted revision (0 unless canceled for compaction). */
static int push_no_event(lua_State *L, const struct scn_watch *w)
{
    lua_pushnil(L);
    if (!w->canceled) {
        lua_pushstring(L, "timeout");
        return 2;
    }
    lua_pushstring(L, "canceled");
    lua_pushstring(L, w->cancel_reason ? w->cancel_reason : "");
    lua_pushinteger(L, (lua_Integer)w->compact_revision);
    return 4;
}

static int k_next(lua_State *L, int status, lua_KContext nargs)
{
    (void)status;
    if (lua_gettop(L) > (int)nargs)
        return 1; /* the event pushed by watch_deliver */
    struct scn_watch *w = check_watch(L, 1);
    return push_no_event(L, w);
}

static void watch_timeout(void *arg)
{
    struct scn_watch *w = arg;
    if (w->waiter && run_now_ns(w->S->rw) >= w->wait_deadline_ns) {
        struct scn_co *co = w->waiter;
        w->waiter = NULL;
        scn_co_wake(co);
    }
}

static int w_next(lua_State *L)
{
    struct scn_watch *w = check_watch(L, 1);
    int64_t timeout = scn_opt_duration(L, 2, 5 * FL_S);
    lua_settop(L, 2);
    if (w->head < w->tail) {
        lua_rawgeti(L, LUA_REGISTRYINDEX, w->queue_ref);
        lua_rawgeti(L, -1, ++w->head);
        lua_pushnil(L);
        lua_rawseti(L, -3, w->head);
        return 1;
    }
    if (w->canceled)
        return push_no_event(L, w);
    if (w->cb_ref != LUA_NOREF)
        return luaL_error(L, "next: this watch delivers to its callback");
    struct scn_co *co = scn_need_co(L, "next");
    if (w->waiter)
        return luaL_error(L, "next: another coroutine is already waiting on this watch");
    struct run_world *rw = scn_world(L);
    int64_t deadline = scn_deadline(L, "next", timeout);
    w->waiter = co;
    w->wait_deadline_ns = deadline;
    scn_wait_begin(co);
    run_at(rw, deadline, watch_timeout, w);
    return scn_wait_end(L, 2, k_next);
}

/* for ev in w:events(timeout) do ... end: stops at the first timeout or cancel. */
static int w_events_iter(lua_State *L)
{
    lua_settop(L, 0);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_pushvalue(L, lua_upvalueindex(2));
    return w_next(L);
}

static int w_events(lua_State *L)
{
    check_watch(L, 1);
    scn_opt_duration(L, 2, 5 * FL_S);
    lua_settop(L, 2);
    if (lua_isnil(L, 2)) {
        lua_pushinteger(L, 5 * FL_S);
        lua_replace(L, 2);
    }
    lua_pushcclosure(L, w_events_iter, 2);
    return 1;
}

static int w_cancel(lua_State *L)
{
    struct scn_watch *w = check_watch(L, 1);
    scn_world(L);
    if (!w->canceled)
        kvc_watch_cancel(w->c, w->id);
    return 0;
}

static int w_id(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)check_watch(L, 1)->id);
    return 1;
}

static void free_watches(struct scn *S)
{
    while (S->watches) {
        struct scn_watch *w = S->watches;
        S->watches = w->next;
        free(w->cancel_reason);
        free(w);
    }
}

static int watches_gc(lua_State *L)
{
    free_watches(scn_of(L)); /* the state closes after the world: no callback follows */
    return 0;
}

static int client_tostring(lua_State *L)
{
    struct scn_client_ud *u = luaL_checkudata(L, 1, CLIENT_MT);
    lua_pushfstring(L, "<client %d>", u->index);
    return 1;
}

void scn_open_client(lua_State *L)
{
    static const luaL_Reg client_methods[] = {
        {"put", m_put},
        {"get", m_get},
        {"delete", m_delete},
        {"txn", m_txn},
        {"watch", m_watch},
        {"lease_grant", m_lease_grant},
        {"lease_revoke", m_lease_revoke},
        {"lease_ttl", m_lease_ttl},
        {"lease_keepalive", m_lease_keepalive},
        {"lease_keepalive_stop", m_lease_keepalive_stop},
        {"stats", m_stats},
        {"attempts", m_attempts},
        {NULL, NULL},
    };
    static const luaL_Reg watch_methods[] = {
        {"next", w_next}, {"events", w_events}, {"cancel", w_cancel}, {"id", w_id}, {NULL, NULL}};
    luaL_newmetatable(L, CLIENT_MT);
    lua_pushcfunction(L, client_tostring);
    lua_setfield(L, -2, "__tostring");
    luaL_newlib(L, client_methods);
    lua_setfield(L, -2, "__index");
    scn_protect_metatable(L, -1);
    lua_pop(L, 1);
    luaL_newmetatable(L, WATCH_MT);
    luaL_newlib(L, watch_methods);
    lua_setfield(L, -2, "__index");
    scn_protect_metatable(L, -1);
    lua_pop(L, 1);
    /* A sentinel whose __gc frees the watch records when the state closes. */
    lua_newuserdatauv(L, 1, 0);
    lua_newtable(L);
    lua_pushcfunction(L, watches_gc);
    lua_setfield(L, -2, "__gc");
    lua_setmetatable(L, -2);
    lua_setfield(L, LUA_REGISTRYINDEX, "faultline.watches");
    lua_pushcfunction(L, l_client);
    lua_setglobal(L, "client");
}
