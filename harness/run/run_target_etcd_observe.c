/*
 * run_target_etcd_observe.c: what the etcd target sees of its members: Maintenance
 * Status polled every POLL_MS (E->poll_ms), the leader it names, and the Raft events each member
 * writes to its log, recorded as node events.
 */
#include "harness/run/run_etcd_int.h"

#include "nodes/server/server.h"

/* ---- status polling ------------------------------------------------------------------ */

static void node_event_f(struct run_etcd *E, int slot, const char *kind, uint64_t term,
                         const char *detail, const struct srv_event_fields *f)
{
    struct run_world *rw = E->rw;
    struct srv_event ev;
    memset(&ev, 0, sizeof ev);
    if (f)
        ev.f = *f;
    ev.at_ns = sim_now_ns(rw->w);
    ev.node = slot;
    ev.member_id = slot ? E->c.m[slot - 1].id : 0;
    ev.kind = kind;
    ev.term = term;
    ev.detail = detail;
    run_events_note(rw, &ev);
}

static void node_event(struct run_etcd *E, int slot, const char *kind, uint64_t term,
                       const char *detail)
{
    node_event_f(E, slot, kind, term, detail, NULL);
}

/* ---- Raft events from the members' logs ------------------------------------------------ */

/* "<16 hex> became candidate at term 7": the term after `what`, true when msg is that. */
static bool log_role(const char *msg, const char *what, uint64_t *term)
{
    const char *p = strchr(msg, ' ');
    if (!p || strncmp(p + 1, what, strlen(what)))
        return false;
    p += 1 + strlen(what);
    if (strncmp(p, " at term ", 9))
        return false;
    *term = strtoull(p + 9, NULL, 10);
    return true;
}

/* One line of member slot's log (etcd's zap JSON): the Raft events etcd logs become
 * node events, recorded as read from its log: a role change of its Raft node
 * (pre-candidate: prevote, candidate: campaign, leader to follower: step_down), a
 * local snapshot ("triggering snapshot"), a snapshot sent to a peer ("sent database
 * snapshot", remote-peer-id) or applied ("applied snapshot"). Leader changes stay
 * those of Status polling. */
static void log_line(struct run_etcd *E, int slot, const char *line, size_t len)
{
    json_t *o = json_loadb(line, len, JSON_DECODE_INT_AS_REAL, NULL);
    const char *msg = json_string_value(json_object_get(o, "msg"));
    struct bridge *b = &E->b[slot];
    uint64_t term = b->st.raft_term;
    struct srv_event_fields f;
    memset(&f, 0, sizeof f);
    const char *kind = NULL, *detail = "seen in the member's log";
    if (!msg) {
        /* not a JSON log line */
    } else if (log_role(msg, "became pre-candidate", &term)) {
        kind = SRV_EV_PREVOTE;
        b->log_leader = false;
    } else if (log_role(msg, "became candidate", &term)) {
        kind = SRV_EV_CAMPAIGN;
        b->log_leader = false;
    } else if (log_role(msg, "became leader", &term)) {
        b->log_leader = true;
    } else if (log_role(msg, "became follower", &term)) {
        if (b->log_leader) {
            kind = SRV_EV_STEP_DOWN;
            f.from_state = "leader";
            f.to_state = "follower";
        }
        b->log_leader = false;
    } else if (!strcmp(msg, "triggering snapshot")) {
        kind = SRV_EV_SNAPSHOT;
        f.index = (uint64_t)json_number_value(json_object_get(o, "local-member-applied-index"));
    } else if (!strcmp(msg, "sent database snapshot")) {
        kind = SRV_EV_SNAPSHOT_SENT;
        const char *to = json_string_value(json_object_get(o, "remote-peer-id"));
        f.peer = to ? run_etcd__slot_of_member(E, strtoull(to, NULL, 16)) : 0;
        f.index = (uint64_t)json_number_value(json_object_get(o, "snapshot-index"));
    } else if (!strcmp(msg, "applied snapshot")) {
        kind = SRV_EV_SNAPSHOT_APPLIED;
    }
    if (msg && strstr(msg, " at term ") && term > b->log_term)
        b->log_term = term;
    if (kind && !E->closing)
        node_event_f(E, slot, kind, term, detail, &f);
    json_decref(o);
}

/* What every member wrote to its log since the last look, line by line. */
static void logs_scan(struct run_etcd *E)
{
    for (int i = 1; i <= E->n; i++) {
        struct bridge *b = &E->b[i];
        const char *path = E->c.m[i - 1].log_path;
        FILE *f = path ? fopen(path, "rb") : NULL;
        if (!f)
            continue;
        if (fseek(f, b->log_off, SEEK_SET) == 0) {
            char chunk[65536];
            size_t n;
            while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
                b->log_off += (long)n;
                fl_buf_append(&b->log_part, chunk, n);
            }
        }
        fclose(f);
        size_t start = 0;
        const char *d = (const char *)b->log_part.data;
        for (size_t k = 0; k < b->log_part.len; k++)
            if (d[k] == '\n') {
                log_line(E, i, d + start, k - start);
                start = k + 1;
            }
        if (start) { /* keep the partial last line */
            memmove(b->log_part.data, d + start, b->log_part.len - start);
            b->log_part.len -= start;
        }
    }
}

/* The leader as polling sees it: of the members that run and answered Status, one that
 * names itself leader, the one with the highest Raft term (as status().term: the
 * highest of Status raftTerm and the terms its log named) (a deposed leader cut off from
 * the others may still name itself, at an older term: etcd 3.4 runs without
 * check-quorum by default). 0 when none does. */
int run_etcd__polled_leader(struct run_etcd *E, uint64_t *term)
{
    int best = 0;
    *term = 0;
    for (int i = 1; i <= E->n; i++) {
        const struct lv_proc *p = &E->c.m[i - 1].proc;
        const struct bridge *b = &E->b[i];
        if (!p->running || p->paused || !b->st_ok || !b->st.leader)
            continue;
        /* the Raft term: Status raftTerm is the term of its last applied entry, which
         * lags a new leader's term until it applies an entry of it. The log is read
         * after the Status answers: once it has named a role, a Status that says
         * leader counts only while the log's last role change made it leader (a
         * deposed leader's "became follower at term N" must not lend it term N). */
        if (b->log_term && !b->log_leader)
            continue;
        uint64_t t = FL_MAX(b->st.raft_term, b->log_term);
        if (b->st.leader == E->c.m[i - 1].id && (!best || t > *term)) {
            best = i;
            *term = t;
        }
    }
    return best;
}

static void poll_note(struct run_etcd *E)
{
    uint64_t term;
    int slot = run_etcd__polled_leader(E, &term);
    if (!slot || E->closing)
        return;
    uint64_t id = E->c.m[slot - 1].id;
    if (id == E->leader_id && term == E->term)
        return;
    E->leader_id = id;
    E->term = term;
    char d[96];
    if (E->refreshing)
        snprintf(d, sizeof d, "seen by Maintenance Status after a control call");
    else
        snprintf(d, sizeof d, "seen by Maintenance Status polling (every %d ms)", E->poll_ms);
    node_event(E, slot, SRV_EV_LEADER, term, d);
}

static void on_poll_reply(const struct lv_etcd_reply *r, void *arg)
{
    struct run_etcd_poll *a = arg;
    struct run_etcd *E = a->E;
    struct bridge *b = &E->b[a->slot];
    if (a->refresh)
        E->refresh_out--;
    else
        E->polls_out--;
    bool stale = a->seq < b->st_seq;
    b->st_seq = FL_MAX(b->st_seq, a->seq);
    if (!stale)
        b->st_ok = r->http_status == 200 && r->resp;
    if (!stale && b->st_ok) {
        const json_t *h = json_object_get(r->resp, "header");
        memset(&b->st, 0, sizeof b->st);
        b->st.member_id = (uint64_t)ec_i64(h, "member_id");
        b->cluster_id = (uint64_t)ec_i64(h, "cluster_id");
        b->st.revision = (uint64_t)ec_i64(h, "revision");
        b->st.leader = (uint64_t)ec_i64(r->resp, "leader");
        b->st.raft_term = (uint64_t)ec_i64(r->resp, "raftTerm");
        b->st.raft_index = (uint64_t)ec_i64(r->resp, "raftIndex");
        b->st.raft_applied_index = (uint64_t)ec_i64(r->resp, "raftAppliedIndex");
        b->st.db_size = (uint64_t)ec_i64(r->resp, "dbSize");
        b->st.db_size_in_use = (uint64_t)ec_i64(r->resp, "dbSizeInUse");
        b->st.is_learner = ec_bool(r->resp, "isLearner");
        const char *v = json_string_value(json_object_get(r->resp, "version"));
        snprintf(b->st.version, sizeof b->st.version, "%s", v ? v : "");
    }
    memset(a, 0, sizeof *a); /* answered: free for the next round */
    if (E->polls_out == 0 && !E->refreshing && !E->closing) {
        logs_scan(E); /* the term a new leader's log named before its Status said so */
        poll_note(E);
    }
}

/* A member killed by its crash failpoint (strace's SIGKILL at a WAL call): its bridge
 * dies too, as kill() does it, at the wall time the poll saw the member gone. */
static void fp_crash_fire(struct sim_world *w, void *ctx)
{
    struct bridge *b = ctx;
    if (sim_proc_state(w, b->proc) == SIM_PROC_UP)
        sim_proc_kill(w, b->proc);
    b->st_ok = false;
}

/* A Status call to every member that runs (none while a round is out); serving_only:
 * only to those that answered the last one. */
static void poll_round(struct run_etcd *E, bool serving_only)
{
    if (serving_only ? E->refresh_out > 0 : E->polls_out > 0)
        return;
    for (int i = 1; i <= E->n; i++) {
        struct lv_etcd_member *m = &E->c.m[i - 1];
        if (!m->proc.running && E->b[i].fp_on && E->b[i].fp_crash && !E->b[i].fp_crashed) {
            E->b[i].fp_crashed = true; /* died of the failpoint: its bridge dies too */
            sim_schedule_at(E->rw->w, run_pacer_arrival(&E->pace, E->rw->w), fp_crash_fire,
                            &E->b[i]);
        }
        if (!m->proc.running || m->proc.paused) {
            E->b[i].st_ok = false;
            continue;
        }
        if (serving_only && !E->b[i].st_ok)
            continue;
        struct run_etcd_poll *a = &E->b[i].poll[serving_only];
        FL_ASSERT(!a->E); /* none of its kind in flight: the round's guard above */
        a->E = E;
        a->slot = i;
        a->refresh = serving_only;
        a->seq = ++E->poll_seq;
        if (serving_only)
            E->refresh_out++;
        else
            E->polls_out++;
        lv_etcd_call(&E->c.client, m->direct_url, "/v3/maintenance/status", json_object(), 1000,
                     on_poll_reply, a);
    }
}

void run_etcd__on_poll_timer(uv_timer_t *t)
{
    struct run_etcd *E = t->data;
    logs_scan(E);
    if ((E->rw->checks & RUN_CHECK_CONVERGE) && !E->closing &&
        run_target_wall_s() >= E->checkpoint_at_s + CHECKPOINT_MS / 1000.0) {
        E->checkpoint_at_s = run_target_wall_s();
        run_etcd__checkpoint(E);
    }
    poll_round(E, false);
}

static bool refresh_done(void *arg)
{
    const struct run_etcd *E = arg;
    return E->refresh_out == 0;
}

/* A round of Status calls started after the call ended (beside the poll round in
 * flight, if any, whose older answers are then dropped) to the members that served at
 * the last poll (one just
 * started, or not ready, is not waited for: the world stands still meanwhile), waited
 * for (each call times out in 1 s), then the
 * members' logs read: what status(), leader() and node_events() report once a control
 * call has returned is etcd's state at that moment, not a poll up to
 * E->poll_ms older.
 * Runs the loop: only from a world event (never from a loop callback). */
void run_etcd__refresh(struct run_etcd *E)
{
    if (E->closing)
        return;
    E->refreshing = true;
    poll_round(E, true);
    lv_run_until(&E->loop, refresh_done, E, 2000);
    logs_scan(E); /* after the answers: the terms their logs named by then */
    poll_note(E);
    E->refreshing = false;
}
