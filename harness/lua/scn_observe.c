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

static void set_str(lua_State *L, const char *k, const char *v)
{
    lua_pushstring(L, v);
    lua_setfield(L, -2, k);
}

/* etcd's Maintenance Status fields beside ours: raft_index is the commit index (etcd
 * reports its committed index there), raft_applied_index the applied one, raft_term
 * the term of the last applied entry (etcd's s.Term(); `term` is the Raft term). */
static void push_maintenance(lua_State *L, const struct run_node_status *st)
{
    set_int(L, "db_size", st->db_size);
    set_int(L, "db_size_in_use", st->db_size_in_use);
    set_int(L, "quota_backend_bytes", st->quota_backend_bytes);
    set_int(L, "raft_index", (lua_Integer)st->commit);
    set_int(L, "raft_applied_index", (lua_Integer)st->applied);
    set_int(L, "raft_term", (lua_Integer)st->status_term);
    set_bool(L, "is_learner", st->learner);
    set_str(L, "version", st->version);
    lua_createtable(L, st->n_alarms, 0);
    for (int i = 0; i < st->n_alarms; i++) {
        lua_createtable(L, 0, 2);
        set_id(L, "member_id", st->alarms[i].member_id);
        set_str(L, "alarm", st->alarms[i].alarm);
        lua_rawseti(L, -2, i + 1);
    }
    lua_setfield(L, -2, "alarms");
}

/* status(n) -> { node, alive, paused, removed, learner, leader (bool), member_id (hex),
 *   leader_id (hex), cluster_id (hex), leader_node, term, last_index, commit, applied, revision,
 *   leader_contact (ns), awaiting_start, and etcd's Maintenance Status: db_size,
 *   db_size_in_use, quota_backend_bytes, alarms, raft_index, raft_applied_index, raft_term,
 *   is_learner, version } */
static int l_status(lua_State *L)
{
    int id = scn_check_node(L, 1);
    struct run_node_status st;
    run_node_status(scn_world(L), id, &st);
    lua_createtable(L, 0, 26);
    set_int(L, "node", id);
    set_bool(L, "alive", st.alive);
    set_bool(L, "paused", st.paused);
    set_bool(L, "removed", st.removed);
    set_bool(L, "learner", st.learner);
    set_bool(L, "leader", st.is_leader);
    set_bool(L, "awaiting_start", run_member_awaits_start(scn_world(L), id));
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
    push_maintenance(L, &st);
    return 1;
}

/* config(n) -> the member's knobs, named as scenario.cluster names them, with etcd's
 * names for the two that differ (snapshot_catchup_entries, quota_backend_bytes). */
static int l_config(lua_State *L)
{
    static const char *const modes[] = {"none", "revision", "periodic"};
    int id = scn_check_node(L, 1);
    struct run_node_config c;
    run_node_config(scn_world(L), id, &c);
    lua_createtable(L, 0, 18);
    set_int(L, "snapshot_count", (lua_Integer)c.snapshot_count);
    set_int(L, "snapshot_catchup_entries", (lua_Integer)c.snapshot_catchup_entries);
    set_int(L, "quota_backend_bytes", c.quota_backend_bytes);
    set_str(L, "auto_compaction_mode", modes[c.auto_compaction_mode]);
    set_int(L, "auto_compaction_retention", c.auto_compaction_retention);
    set_int(L, "election_ms", c.election_ms);
    set_int(L, "heartbeat_ms", c.heartbeat_ms);
    set_int(L, "request_timeout_ms", c.request_timeout_ms);
    set_int(L, "progress_notify_ms", c.progress_notify_ms);
    set_int(L, "fsync_us", c.fsync_us);
    set_bool(L, "prevote", c.prevote);
    set_bool(L, "check_quorum", c.check_quorum);
    set_bool(L, "strict_reconfig_check", c.strict_reconfig_check);
    set_int(L, "max_request_bytes", (lua_Integer)c.max_request_bytes);
    set_int(L, "max_txn_ops", c.max_txn_ops);
    set_int(L, "max_msg_bytes", (lua_Integer)c.max_msg_bytes);
    set_int(L, "max_inflight_msgs", c.max_inflight_msgs);
    return 1;
}

/* One node event: {at, node, kind, term, detail} and its typed facts, each nil when the
 * event has none: peer (slot), index, from_state, to_state, reason, pre (vote events). */
static void push_node_event(lua_State *L, const struct run_node_event *e)
{
    lua_createtable(L, 0, 11);
    set_int(L, "at", e->at_ns);
    set_int(L, "node", e->node);
    set_str(L, "kind", e->kind);
    set_int(L, "term", (lua_Integer)e->term);
    set_str(L, "detail", e->detail);
    if (e->peer)
        set_int(L, "peer", e->peer);
    if (e->index)
        set_int(L, "index", (lua_Integer)e->index);
    if (e->from_state)
        set_str(L, "from_state", e->from_state);
    if (e->to_state)
        set_str(L, "to_state", e->to_state);
    if (e->reason)
        set_str(L, "reason", e->reason);
    if (e->vote)
        set_bool(L, "pre", e->pre);
}

/* node_events{ node, kind, since } -> { event, ... } in the order they happened */
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
        push_node_event(L, e);
        lua_rawseti(L, -2, ++k);
    }
    return 1;
}

void scn_open_observe(lua_State *L)
{
    lua_register(L, "status", l_status);
    lua_register(L, "node_events", l_node_events);
    lua_register(L, "config", l_config);
}
