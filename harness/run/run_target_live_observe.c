/*
 * run_target_live_observe.c: observation of the member processes: the Status connection to each
 * member, polled every POLL_MS; status() and leader() read its answers; node events are read from
 * the members' event files.
 */
#include "harness/run/run_target_live.h"

/* The static name (raft.h) a member's event file spelled: a role for from_state /
 * to_state, a reason for reason; NULL when absent or not one of them. */
static const char *raft_name(json_t *ev, const char *field)
{
    const char *v = json_string_value(json_object_get(ev, field));
    if (!v)
        return NULL;
    if (strcmp(field, "reason")) {
        for (int r = RAFT_FOLLOWER; r <= RAFT_LEADER; r++)
            if (!strcmp(raft_role_name((enum raft_role)r), v))
                return raft_role_name((enum raft_role)r);
        return NULL;
    }
    for (int r = RAFT_REASON_NONE + 1; r < RAFT_REASON_COUNT; r++)
        if (raft_reason_name((enum raft_reason)r) &&
            !strcmp(raft_reason_name((enum raft_reason)r), v))
            return raft_reason_name((enum raft_reason)r);
    return NULL;
}

/* A line of a member's event file ({"at_ns","node","member_id","kind","term",
 * "detail"[,"revision"][,"peer","index","from_state","to_state","reason","vote","pre"]},
 * proc.c), entered now with its typed fields, as the simulator's node events. */
static void on_member_event(void *arg, int slot, json_t *ev)
{
    struct run_live *L = arg;
    const char *kind = json_string_value(json_object_get(ev, "kind"));
    const char *detail = json_string_value(json_object_get(ev, "detail"));
    const char *mid = json_string_value(json_object_get(ev, "member_id"));
    if (!kind || L->closing)
        return;
    struct srv_event e;
    memset(&e, 0, sizeof e);
    e.at_ns = sim_now_ns(L->rw->w);
    e.node = slot;
    e.member_id = mid ? strtoull(mid, NULL, 16) : 0;
    e.kind = kind;
    e.term = (uint64_t)json_integer_value(json_object_get(ev, "term"));
    e.detail = detail ? detail : "";
    e.revision = (int64_t)json_integer_value(json_object_get(ev, "revision"));
    json_int_t peer = json_integer_value(json_object_get(ev, "peer"));
    e.f.peer = peer > 0 && peer <= LV_MEMBERS_MAX ? (int)peer : 0;
    e.f.index = (uint64_t)json_integer_value(json_object_get(ev, "index"));
    e.f.from_state = raft_name(ev, "from_state");
    e.f.to_state = raft_name(ev, "to_state");
    e.f.reason = raft_name(ev, "reason");
    e.f.vote = json_is_true(json_object_get(ev, "vote"));
    e.f.pre = json_is_true(json_object_get(ev, "pre"));
    if (e.term > L->b[slot].ev_term)
        L->b[slot].ev_term = e.term;
    if (!strcmp(kind, SRV_EV_SAFETY) && !L->member_violation)
        L->member_violation = fl_strdup(e.detail); /* run_target_live_safety.c */
    if (!strcmp(kind, SRV_EV_RAFT_FEED_LOST) && !L->feed_problem[0])
        snprintf(L->feed_problem, sizeof L->feed_problem, "not judged: member %d: %s", slot,
                 e.detail);
    run_events_note(L->rw, &e);
}

static int slot_of_member(const struct run_live *L, uint64_t id)
{
    for (int i = 1; i <= L->n && id; i++)
        if (L->c.m[i - 1].member_id == id)
            return i;
    return 0;
}

/* The leader as polling sees it: of the members that run and answered Status lately,
 * one that names itself leader, the one with the highest term. 0 when none does. */
static int polled_leader(struct run_live *L, uint64_t *term)
{
    int best = 0;
    *term = 0;
    for (int i = 1; i <= L->n; i++) {
        const struct lv_proc *p = &L->c.m[i - 1].proc;
        const struct lstat *s = &L->st[i];
        if (!p->running || p->paused || !s->ok)
            continue;
        if (s->leader_id == L->c.m[i - 1].member_id && (!best || s->term > *term)) {
            best = i;
            *term = s->term;
        }
    }
    return best;
}

static void stat_closed(uv_handle_t *h)
{
    struct lstat *s = h->data;
    s->open = false;
    s->connected = false;
    s->in.len = 0;
}

void lvt_stat_end(struct lstat *s)
{
    s->ok = false;
    if (s->L && !s->L->closing)
        lvt_ctls_fail(s->L, s->slot, false);
    if (s->open && !uv_is_closing((uv_handle_t *)&s->tcp))
        uv_close((uv_handle_t *)&s->tcp, stat_closed);
}

static void stat_answer(struct lstat *s, const uint8_t *p, size_t n)
{
    Rpc__ServerMsg *m = rpc_server_msg_decode(NULL, n, p);
    if (!m)
        return;
    if (m->call_id & CTL_CALL_BIT)
        lvt_ctl_answer(s->L, s->slot, m);
    if (m->resp_case == RPC__SERVER_MSG__RESP_STATUS && m->call_id == s->call_id) {
        const Rpc__StatusResponse *r = m->status;
        s->ok = true;
        s->answered_s = run_target_wall_s();
        s->answered_id = m->call_id;
        s->leader_id = r->leader;
        s->term = r->raftterm;
        s->index = r->raftindex;
        s->applied = r->raftappliedindex;
        s->db_size = r->dbsize;
        s->db_in_use = r->dbsizeinuse;
        s->learner = r->islearner;
        s->contact_age_ns = r->quorum_contact_age_ns;
        s->revision = m->header ? m->header->revision : 0;
        s->cluster_id = m->header ? m->header->cluster_id : 0;
    }
    rpc__server_msg__free_unpacked(m, NULL);
}

static void stat_frame(void *arg, const uint8_t *p, size_t n)
{
    stat_answer(arg, p, n);
}

static void stat_read(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf)
{
    struct lstat *s = st->data;
    if (nread > 0) {
        lvt_frames_take(&s->in, buf->base, (size_t)nread, stat_frame, s);
    }
    free(buf->base);
    if (nread < 0)
        lvt_stat_end(s);
}

static void stat_connected(uv_connect_t *req, int status)
{
    struct lstat *s = req->data;
    if (status < 0 || uv_is_closing((uv_handle_t *)&s->tcp)) {
        lvt_stat_end(s);
        return;
    }
    s->connected = true;
    uv_read_start((uv_stream_t *)&s->tcp, lvt_on_alloc, stat_read);
    struct fl_buf b;
    fl_buf_init(&b);
    lvt_hello_put(&b);
    lvt_write_buf((uv_stream_t *)&s->tcp, &b);
}

/* Asks the member for its Status on its connection (once connected). */
static void stat_send(struct lstat *s)
{
    if (!s->connected)
        return;
    Rpc__ClientMsg m = RPC__CLIENT_MSG__INIT;
    Rpc__StatusRequest r = RPC__STATUS_REQUEST__INIT;
    m.call_id = ++s->call_id;
    m.method = RPC__METHOD__METHOD_STATUS;
    m.req_case = RPC__CLIENT_MSG__REQ_STATUS;
    m.status = &r;
    s->asked_s = run_target_wall_s();
    lvt_msg_write((uv_stream_t *)&s->tcp, &m);
}

static void stat_ask(struct run_live *L, int slot)
{
    struct lstat *s = &L->st[slot];
    const struct lv_proc *p = &L->c.m[slot - 1].proc;
    if (!p->running) {
        lvt_stat_end(s);
        return;
    }
    if (s->answered_s && run_target_wall_s() - s->answered_s > STATUS_STALE_MS / 1000.0)
        s->ok = false; /* hung, paused or restarting: no fresh answer */
    if (!s->open) {
        s->L = L;
        s->slot = slot;
        uv_tcp_init(&L->loop, &s->tcp);
        s->tcp.data = s;
        s->creq.data = s;
        s->open = true;
        struct sockaddr_in a;
        uv_ip4_addr("127.0.0.1", L->c.m[slot - 1].client_port, &a);
        if (uv_tcp_connect(&s->creq, &s->tcp, (const struct sockaddr *)&a, stat_connected))
            lvt_stat_end(s);
        return;
    }
    stat_send(s);
}

static void poll_note(struct run_live *L)
{
    uint64_t term;
    int slot = polled_leader(L, &term);
    if (!slot || L->closing)
        return;
    uint64_t id = L->c.m[slot - 1].member_id;
    if (id == L->leader_id && term == L->term)
        return;
    L->leader_id = id;
    L->term = term;
}

void lvt_on_poll_timer(uv_timer_t *t)
{
    struct run_live *L = t->data;
    if (L->closing)
        return;
    for (int i = 1; i <= L->n; i++) {
        lvt_skew_signal(L, i);
        lvt_fp_signal(L, i);
        lvt_bridge_up(L, i);
    }
    lvt_ctls_fail(L, 0, true);
    for (int i = 1; i <= L->n; i++)
        stat_ask(L, i);
    lvt_members_ask(L);
    poll_note(L);
}

/* The members' event files, read every EVENTS_POLL_MS (a node event enters the world
 * when it is read: at most that much after the member wrote it). */
void lvt_on_events_timer(uv_timer_t *t)
{
    struct run_live *L = t->data;
    if (!L->closing)
        lvt_events_poll(L);
}

void lvt_events_poll(struct run_live *L)
{
    lv_member_events_poll(&L->c, on_member_event, L);
}

struct refresh {
    struct run_live *L;
    uint64_t want[LV_MEMBERS_MAX + 1]; /* [slot]: the Status call to wait for; 0 none */
};

static bool refreshed(void *arg)
{
    const struct refresh *r = arg;
    for (int i = 1; i <= r->L->n; i++) {
        const struct lstat *s = &r->L->st[i];
        const struct lv_proc *p = &r->L->c.m[i - 1].proc;
        if (r->want[i] && s->connected && p->running && s->answered_id < r->want[i])
            return false;
    }
    return true;
}

/* status() and leader() as the members are now, not as the last poll (up to POLL_MS
 * old) saw them: when a call was answered or a fault applied since the last look, or
 * the world's time moved and FRESH_MS of wall time passed, every member that runs (not
 * paused) is asked for its Status at once and the loop runs until each answered (at
 * most REFRESH_MS; one that does not keeps its last answer, stale after
 * STATUS_STALE_MS), then the event files are read: a member writes an event before it
 * answers what follows it, so every event before the answers is in. Only from the
 * world's turn (it runs the loop), never from a libuv callback. */
void lvt_refresh(struct run_live *L)
{
    double now = run_target_wall_s();
    int64_t sim = sim_now_ns(L->rw->w);
    if (L->closing || L->refreshing || !L->pace.loop)
        return;
    if (!L->dirty && (sim == L->fresh_sim_ns || now - L->fresh_s < FRESH_MS / 1000.0))
        return;
    L->refreshing = true;
    struct refresh r = {.L = L};
    for (int i = 1; i <= L->n; i++) {
        struct lstat *s = &L->st[i];
        const struct lv_proc *p = &L->c.m[i - 1].proc;
        if (!p->running || p->paused || !s->connected)
            continue;
        stat_send(s);
        r.want[i] = s->call_id;
    }
    lv_run_until(&L->loop, refreshed, &r, REFRESH_MS);
    lvt_events_poll(L);
    poll_note(L);
    L->dirty = false;
    L->fresh_s = run_target_wall_s();
    L->fresh_sim_ns = sim;
    L->refreshing = false;
}

int lvt_polled_leader(struct run_live *L)
{
    uint64_t term;
    return polled_leader(L, &term);
}

int lvt_leader(struct run_world *rw)
{
    uint64_t term;
    if (!rw->lv)
        return 0;
    lvt_refresh(rw->lv);
    return polled_leader(rw->lv, &term);
}

int lvt_node_status(struct run_world *rw, int id, struct run_node_status *out)
{
    struct run_live *L = rw->lv;
    memset(out, 0, sizeof *out);
    if (!L || id < 1 || id > L->n)
        return FL_ENOENT;
    lvt_refresh(L);
    const struct lv_member *m = &L->c.m[id - 1];
    const struct lstat *s = &L->st[id];
    out->alive = m->proc.running;
    out->paused = m->proc.paused;
    out->member_id = m->member_id;
    out->version = SRV_VERSION;
    out->leader_contact_ns = -1;
    out->removed = L->b[id].removed;
    /* the member's identity is its data directory's, down or not (as on sim): the
     * cluster ID of its last answer (none yet after a restore) */
    out->cluster_id = s->cluster_id;
    if (!out->alive || out->paused || !s->ok)
        return FL_OK;
    out->leader_id = s->leader_id;
    out->leader_node = slot_of_member(L, s->leader_id);
    out->is_leader = s->leader_id == out->member_id;
    out->learner = s->learner;
    out->term = FL_MAX(s->term, L->b[id].ev_term);
    out->status_term = s->term;
    out->last_index = s->index;
    out->commit = s->index;
    out->applied = s->applied;
    out->revision = s->revision;
    out->leader_contact_ns = s->contact_age_ns;
    out->db_size = s->db_size;
    out->db_size_in_use = s->db_in_use;
    return FL_OK;
}
