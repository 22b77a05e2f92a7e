/*
 * run_observe.c: what a scenario may observe of the members besides the history — a
 * member's Raft and MVCC state right now (run_node_status) and the node events seen so
 * far (run_node_events), kept in memory in the order the cluster emitted them so that
 * `expect` can be asserted on terms, elections, refused votes and snapshots (DESIGN §4).
 */
#include "harness/run/run_int.h"

void run_events_keep(struct run_world *rw, const struct srv_event *ev)
{
    FL_GROW_ZERO(rw->obs.events, rw->obs.n_events, rw->obs.cap_events, rw->obs.n_events + 1, 256);
    struct run_node_event *e = &rw->obs.events[rw->obs.n_events - 1];
    e->at_ns = ev->at_ns;
    e->node = ev->node;
    e->term = ev->term;
    snprintf(e->kind, sizeof e->kind, "%s", ev->kind);
    snprintf(e->detail, sizeof e->detail, "%s", ev->detail);
    e->peer = ev->f.peer;
    e->index = ev->f.index;
    e->from_state = ev->f.from_state;
    e->to_state = ev->f.to_state;
    e->reason = ev->f.reason;
    e->vote = ev->f.vote;
    e->pre = ev->f.pre;
}

void run_record_node_event(struct run_world *rw, const struct srv_event *ev)
{
    const struct srv_event_fields *f = &ev->f;
    struct hist_node_fields h = {
        .peer = f->peer ? f->peer : HIST_NULL,
        .log_index = f->index ? (int64_t)f->index : HIST_NULL,
        .from_state = f->from_state,
        .to_state = f->to_state,
        .reason = f->reason,
        .pre = f->vote ? (int64_t)f->pre : HIST_NULL,
    };
    hist_node_event_add_typed(rw->db, ev->at_ns, ev->node, ev->kind, (int64_t)ev->term, ev->detail,
                              &h);
}

void run_events_free(struct run_world *rw)
{
    free(rw->obs.events);
    rw->obs.events = NULL;
    rw->obs.n_events = rw->obs.cap_events = 0;
}

void run_events_note(struct run_world *rw, const struct srv_event *ev)
{
    run_events_keep(rw, ev);
    if (rw->db)
        run_record_node_event(rw, ev);
    if (!strcmp(ev->kind, SRV_EV_LEADER)) {
        json_t *l = json_object();
        json_object_set_new(l, "at_ms", json_integer(ev->at_ns / FL_MS));
        json_object_set_new(l, "node", json_integer(ev->node));
        json_object_set_new(l, "term", json_integer((json_int_t)ev->term));
        json_array_append_new(rw->sum.leaders, l);
    }
}

const struct run_node_event *run_node_events(const struct run_world *rw, size_t *n)
{
    *n = rw->obs.n_events;
    return rw->obs.events;
}

int run_node_status(struct run_world *rw, int id, struct run_node_status *out)
{
    memset(out, 0, sizeof *out);
    if (rw->tgt)
        return rw->tgt->node_status(rw, id, out);
    int proc = run_node_proc(rw, id);
    if (proc < 0)
        return FL_ENOENT;
    struct srv_member_status st;
    srv_cluster_status(rw->cl, id, &st);
    enum sim_proc_state ps = sim_proc_state(rw->w, proc);
    out->alive = srv_cluster_is_alive(rw->cl, id) && ps != SIM_PROC_DOWN;
    out->paused = ps == SIM_PROC_PAUSED;
    out->removed = srv_cluster_is_removed(rw->cl, id);
    out->learner = st.is_learner;
    out->member_id = st.member_id;
    out->leader_id = st.leader_id;
    out->cluster_id = st.cluster_id;
    out->is_leader = out->alive && st.leader_id && st.leader_id == st.member_id;
    out->term = st.raft_term;
    out->status_term = st.applied_term;
    out->last_index = st.raft_index;
    out->last_log_term = st.raft_last_term;
    out->commit = st.commit_index;
    out->applied = st.raft_applied;
    out->revision = st.revision;
    out->leader_contact_ns = out->alive ? st.last_quorum_contact_ns : -1;
    out->db_size = st.db_size_bytes;
    out->db_size_in_use = st.db_size_in_use_bytes;
    int64_t quota = srv_cluster_config(rw->cl)->quota_backend_bytes;
    out->quota_backend_bytes = quota > 0 ? quota : 0;
    for (uint32_t i = 0; i < st.n_alarms && i < FL_ARRAY_LEN(out->alarms); i++)
        out->alarms[out->n_alarms++] =
            (struct run_alarm){st.alarms[i].member_id, srv_alarm_type_name(st.alarms[i].type)};
    out->version = SRV_VERSION;
    int slots = srv_cluster_slots(rw->cl);
    for (int i = 1; i <= slots && st.leader_id; i++)
        if (srv_cluster_node_proc(rw->cl, i) >= 0 &&
            srv_cluster_member_id(rw->cl, i) == st.leader_id)
            out->leader_node = i;
    return FL_OK;
}

int run_node_config(struct run_world *rw, int id, struct run_node_config *out)
{
    memset(out, 0, sizeof *out);
    if (run_node_proc(rw, id) < 0)
        return FL_ENOENT;
    const struct srv_config *c = srv_cluster_config(rw->cl);
    out->snapshot_count = c->snapshot_count;
    out->snapshot_catchup_entries = c->snapshot_catchup_entries;
    out->quota_backend_bytes = c->quota_backend_bytes > 0 ? c->quota_backend_bytes : 0;
    out->auto_compaction_mode = c->auto_compaction_mode == SRV_AUTOCOMPACT_REVISION   ? 1
                                : c->auto_compaction_mode == SRV_AUTOCOMPACT_PERIODIC ? 2
                                                                                      : 0;
    out->auto_compaction_retention = out->auto_compaction_mode == 2
                                         ? c->auto_compaction_retention / FL_MS
                                         : c->auto_compaction_retention;
    out->election_ms = c->election_ms;
    out->heartbeat_ms = c->heartbeat_ms;
    out->request_timeout_ms =
        c->request_timeout_ms > 0 ? c->request_timeout_ms : 5000 + 2 * c->election_ms;
    out->progress_notify_ms = c->progress_notify_ms;
    out->fsync_us = c->fsync_latency_ns / FL_US;
    out->prevote = srv_cluster_member_prevote(rw->cl, id);
    out->check_quorum = c->check_quorum;
    out->strict_reconfig_check = c->strict_reconfig_check;
    out->max_request_bytes = c->max_request_bytes;
    out->max_msg_bytes = c->max_msg_bytes;
    out->max_txn_ops = c->max_txn_ops;
    out->max_inflight_msgs = c->max_inflight_msgs;
    return FL_OK;
}

bool run_member_awaits_start(struct run_world *rw, int node)
{
    if (rw->tgt) /* members are added started, unless the target can do otherwise */
        return rw->tgt->awaits_start && rw->tgt->awaits_start(rw, node);
    return run_node_proc(rw, node) >= 0 && srv_cluster_awaits_start(rw->cl, node) &&
           !srv_cluster_is_removed(rw->cl, node);
}

int run_set_prevote(struct run_world *rw, int id, bool on)
{
    if (run_node_proc(rw, id) < 0)
        return FL_ENOENT;
    if (rw->tgt)
        rw->tgt->set_prevote(rw, id, on); /* its --pre-vote flag at its next start */
    else
        srv_cluster_set_prevote(rw->cl, id, on);
    return FL_OK;
}
