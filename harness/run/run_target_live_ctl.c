/*
 * run_target_live_ctl.c: control calls of the scenario (compact, defrag, move_leader,
 * snapshot_save, copy_db and the membership calls' transport) on a member's Status connection.
 */
#include "harness/run/run_target_live.h"

void lvt_ctl_fire(struct sim_world *w, void *ctx)
{
    (void)w;
    struct lctl *c = ctx;
    struct run_live *L = c->L;
    RUN_UNLINK(L->ctls, c);
    L->dirty = true; /* status() and leader() after the answer ask the members again */
    struct run_ctl_result r = {.code = c->code,
                               .node = c->code ? 0 : c->node,
                               .text = c->text,
                               .revision = c->revision,
                               .data = c->data.data,
                               .len = c->data.len};
    c->done(c->ud, &r);
    fl_buf_close(&c->data);
    free(c);
}

/* The call is over: its answer enters the world at the wall time now (fire: what
 * runs then). */
void lvt_ctl_finish_with(struct lctl *c, int code, const char *text, sim_event_fn *fire)
{
    struct run_live *L = c->L;
    c->code = code;
    snprintf(c->text, sizeof c->text, "%s", text ? text : "");
    c->call_id = 0; /* answered: nothing more is taken for it */
    if (c->add) {
        c->add = false;
        L->adds--;
        if (code == RPC_CODE_DEADLINE_EXCEEDED || code == RPC_CODE_UNAVAILABLE)
            lvt_member_lost(L, c); /* it may commit all the same */
    }
    if (c->sync) {
        c->finished = true;
        return;
    }
    /* the events the members wrote before this answer came enter the world before it */
    lvt_events_poll(L);
    sim_schedule_at(L->rw->w, run_pacer_arrival(&L->pace, L->rw->w), fire, c);
}

void lvt_ctl_finish(struct lctl *c, int code, const char *text)
{
    lvt_ctl_finish_with(c, code, text, lvt_ctl_fire);
}

/* A frame of a control call's answer. */
void lvt_ctl_answer(struct run_live *L, int slot, const Rpc__ServerMsg *m)
{
    if (m->call_id == L->list_call_id && m->resp_case == RPC__SERVER_MSG__RESP_MEMBER_LIST) {
        lvt_members_listed(L, m);
        return;
    }
    for (struct lctl *c = L->ctls; c; c = c->next) {
        if (c->slot != slot || c->call_id != m->call_id)
            continue;
        if (m->header)
            c->revision = m->header->revision;
        if (m->error) {
            lvt_ctl_finish(c, m->error->code, m->error->message);
        } else if (m->resp_case == RPC__SERVER_MSG__RESP_MEMBER_ADD ||
                   m->resp_case == RPC__SERVER_MSG__RESP_MEMBER_REMOVE) {
            lvt_member_answered(L, c, m);
        } else if (m->resp_case == RPC__SERVER_MSG__RESP_SNAPSHOT) {
            fl_buf_append(&c->data, m->snapshot->blob.data, m->snapshot->blob.len);
            if (m->snapshot->remaining_bytes == 0 || m->stream_end)
                lvt_ctl_finish(c, 0, "");
        } else {
            if (m->resp_case == RPC__SERVER_MSG__RESP_HASH_KV && m->hash_kv) {
                c->hash = m->hash_kv->hash;
                c->compact_revision = m->hash_kv->compact_revision;
            }
            lvt_ctl_finish(c, 0, "");
        }
        return;
    }
}

/* Calls in flight on slot's Status connection (every one when slot is 0) that can no
 * longer be answered: the connection ended, or their time is up. */
void lvt_ctls_fail(struct run_live *L, int slot, bool timed_out_only)
{
    double now = run_target_wall_s();
    for (struct lctl *c = L->ctls; c; c = c->next) {
        if (!c->call_id || (slot && c->slot != slot))
            continue;
        if (timed_out_only && now < c->deadline_s)
            continue;
        if (timed_out_only)
            lvt_ctl_finish(c, RPC_CODE_DEADLINE_EXCEEDED, rpc_err_text(RPC_ERR_CLIENT_DEADLINE));
        else
            lvt_ctl_finish(c, RPC_CODE_UNAVAILABLE, rpc_err_text(RPC_ERR_CONN_REFUSED));
    }
}

/* Control calls as the RPC a client would send (nodes/server/cluster_ctl.c does the
 * same in the simulator), on the Status connection of the member named, else of the
 * leader (move_leader: always the leader). Refused before the script runs: membership
 * changes (run_target.c live_refuses). */
void lvt_ctl(struct run_world *rw, const char *kind, int node, int64_t arg, run_target_ctl_fn *done,
             void *ud)
{
    struct run_live *L = rw->lv;
    struct lctl *c = fl_calloc(1, sizeof *c);
    c->L = L;
    c->done = done;
    c->ud = ud;
    fl_buf_init(&c->data);
    RUN_LINK(L->ctls, c);
    int at = node;
    if (!at || !strcmp(kind, "move_leader"))
        at = lvt_leader(rw);
    if (!at)
        at = 1;
    c->slot = at;
    c->call_id = CTL_CALL_BIT | ++L->ctl_seq;
    c->deadline_s = run_target_wall_s() + CTL_TIMEOUT_MS / 1000.0;
    c->kind = kind;
    if (!strncmp(kind, "member_", 7)) {
        lvt_member_ctl(L, c, kind, arg);
        return;
    }
    static const struct {
        const char *name;
        enum rpc_ctl_kind kind;
    } kinds[] = {{"compact", RPC_CTL_COMPACT},
                 {"defrag", RPC_CTL_DEFRAG},
                 {"alarm_disarm", RPC_CTL_ALARM_DISARM},
                 {"move_leader", RPC_CTL_MOVE_LEADER},
                 {"snapshot_save", RPC_CTL_SNAPSHOT_SAVE}};
    size_t k = 0;
    while (k < FL_ARRAY_LEN(kinds) && strcmp(kind, kinds[k].name))
        k++;
    if (k == FL_ARRAY_LEN(kinds)) {
        lvt_ctl_finish(c, RPC_CODE_UNIMPLEMENTED, "not available on --target live");
        return;
    }
    uint64_t a = (uint64_t)arg;
    if (kinds[k].kind == RPC_CTL_MOVE_LEADER)
        a = arg >= 1 && arg <= L->n ? L->c.m[arg - 1].member_id : 0;
    struct rpc_ctl_req q;
    rpc_ctl_req_init(&q, kinds[k].kind, a);
    q.msg.call_id = c->call_id;
    struct lstat *s = &L->st[at];
    if (at > L->n || !s->connected || !L->c.m[at - 1].proc.running) {
        lvt_ctl_finish(c, RPC_CODE_UNAVAILABLE, rpc_err_text(RPC_ERR_CONN_REFUSED));
        return;
    }
    lvt_msg_write((uv_stream_t *)&s->tcp, &q.msg);
}

/* The frame of control call c on its member's Status connection (refused when that
 * member does not serve). */
void lvt_ctl_send(struct run_live *L, struct lctl *c, const Rpc__ClientMsg *q)
{
    struct lstat *s = &L->st[c->slot];
    if (c->slot > L->n || !s->connected || !L->c.m[c->slot - 1].proc.running) {
        lvt_ctl_finish(c, RPC_CODE_UNAVAILABLE, rpc_err_text(RPC_ERR_CONN_REFUSED));
        return;
    }
    lvt_msg_write((uv_stream_t *)&s->tcp, q);
}

static bool ctl_finished(void *arg)
{
    return ((const struct lctl *)arg)->finished;
}

/* copy_db(n): the member's db file as it is now. The process holds it, so the harness
 * asks for it as `etcdctl snapshot save` does (snapshot_save on the member's Status
 * connection, waited for in place, at most 10 s) and keeps the db image inside the
 * backup, without its hash: what the simulator's copy_db gives (backup.h). FL_ENOENT
 * when the member does not run or answers nothing. */
int lvt_copy_db(struct run_world *rw, int node, uint8_t **data, size_t *len)
{
    struct run_live *L = rw->lv;
    *data = NULL;
    *len = 0;
    if (!L || node < 1 || node > L->n || !L->c.m[node - 1].proc.running ||
        L->c.m[node - 1].proc.paused || !L->st[node].connected)
        return FL_ENOENT;
    struct lctl *c = fl_calloc(1, sizeof *c);
    c->L = L;
    c->slot = node;
    c->sync = true;
    c->kind = "copy_db";
    c->call_id = CTL_CALL_BIT | ++L->ctl_seq;
    c->deadline_s = run_target_wall_s() + CTL_TIMEOUT_MS / 1000.0;
    fl_buf_init(&c->data);
    RUN_LINK(L->ctls, c);
    struct rpc_ctl_req q;
    rpc_ctl_req_init(&q, RPC_CTL_SNAPSHOT_SAVE, 0);
    q.msg.call_id = c->call_id;
    lvt_ctl_send(L, c, &q.msg);
    lv_run_until(&L->loop, ctl_finished, c, CTL_TIMEOUT_MS + 2 * POLL_MS);
    int rc = FL_ENOENT;
    const uint8_t *db;
    size_t db_len;
    if (c->finished && !c->code &&
        srv_proc_backup_db(c->data.data, c->data.len, &db, &db_len) == FL_OK) {
        *data = fl_malloc(db_len ? db_len : 1);
        memcpy(*data, db, db_len);
        *len = db_len;
        rc = FL_OK;
    } else if (c->finished) {
        fl_log(FL_LOG_ERROR, "target live: copy_db(%d): %s", node,
               c->code ? c->text : "not a backup");
    }
    RUN_UNLINK(L->ctls, c);
    fl_buf_close(&c->data);
    free(c);
    return rc;
}
