/*
 * run_liveness.c: what the `liveness` check (checkers/liveness.h) needs from a run: the
 * fault timeline as segments (healed, minority, other), the times leaders were elected,
 * and the client operations with each client's balancer policy.
 *
 * The fault state is read from the world, not from fault names, so that any way of
 * making a fault counts: each time the fault log gets a row (run_log_fault calls
 * run_liveness_fault), the state is evaluated again before the next event runs (the
 * fault itself is applied right after its row is written). Healed means: every voter
 * that has ever run is up, not paused and not skewed; no two members and no client
 * and member are cut apart; the network has its base link parameters; no link is
 * held or clogged; no failpoint is on; no fault kind this file does not know is in
 * force. Minority means: the only faults are voters down, paused or cut off, and the
 * voters still up and connected to each other are a quorum. Anything else is other.
 * Holds, clogs and failpoints have no world query, so they are followed from their
 * rows; a row of an unknown kind counts as a fault until heal_all.
 *
 * Reads only: it adds no event and no row, so a run's digest does not depend on it.
 */
#include "harness/run/run_int.h"

#include "checkers/liveness.h"

/* Kinds of fault rows that are no fault in force by themselves. */
static bool kind_neutral(const char *kind)
{
    static const char *const names[] = {"heal",           "heal_all",     "restart",
                                        "resume",         "bug",          "restore",
                                        "nemesis",        "kill",         "pause",
                                        "skew",           "net",          "partition",
                                        "partition_ring", "member_add",   "member_remove",
                                        "member_promote", "move_leader",  "compact",
                                        "defrag",         "alarm_disarm", "snapshot_save",
                                        "member_start"};
    for (size_t i = 0; i < FL_ARRAY_LEN(names); i++)
        if (!strcmp(kind, names[i]))
            return true;
    return false;
}

void run_liveness_fault(struct run_world *rw, const char *kind, const char *target, json_t *detail)
{
    rw->live.gen++;
    if (!strcmp(kind, "heal_all")) {
        rw->live.holds = rw->live.clogs = rw->live.failpoints = 0;
        rw->live.unknown = false;
    } else if (!strcmp(kind, "heal")) {
        rw->live.clogs = 0; /* net_heal removes every clog */
    } else if (!strcmp(kind, "hold")) {
        rw->live.holds++;
    } else if (!strcmp(kind, "release")) {
        rw->live.holds = strcmp(target, "*>*") ? FL_MAX(0, rw->live.holds - 1) : 0;
    } else if (!strcmp(kind, "clog")) {
        rw->live.clogs++;
    } else if (!strcmp(kind, "unclog")) {
        rw->live.clogs = strcmp(target, "*>*") ? FL_MAX(0, rw->live.clogs - 1) : 0;
    } else if (!strcmp(kind, "failpoint")) {
        const char *action = json_string_value(json_object_get(detail, "action"));
        if (action && !strcmp(action, "off"))
            rw->live.failpoints = FL_MAX(0, rw->live.failpoints - 1);
        else
            rw->live.failpoints++;
    } else if (!kind_neutral(kind)) {
        rw->live.unknown = true;
    }
}

/* Marks in reach[] the members connected (both ways) to member i. */
static void reach_from(struct run_world *rw, const int *procs, const bool *up, int n, int i,
                       bool *reach)
{
    int stack[RUN_NODES_MAX], top = 0;
    reach[i] = true;
    stack[top++] = i;
    while (top) {
        int a = stack[--top];
        for (int b = 0; b < n; b++) {
            if (reach[b] || !up[b] || net_blocked(rw->w, procs[a], procs[b]) ||
                net_blocked(rw->w, procs[b], procs[a]))
                continue;
            reach[b] = true;
            stack[top++] = b;
        }
    }
}

/* Something besides voters down, paused or cut off: skew, network, clients cut.
 * skewed: a real target's member runs skewed (its clock is its process's). */
static bool other_faults(struct run_world *rw, const int *procs, int n, bool skewed)
{
    struct net_link l;
    net_link_get(rw->w, -1, -1, &l);
    if (rw->net.changed || rw->live.holds || rw->live.clogs || rw->live.failpoints ||
        rw->live.unknown || skewed || memcmp(&l, &rw->net.base_link, sizeof l) != 0)
        return true;
    for (int i = 0; i < n; i++)
        if (sim_proc_alive(rw->w, procs[i]) && sim_proc_rate(rw->w, procs[i]) != SIM_PPM)
            return true;
    for (int c = 0; c < rw->n_clients; c++) {
        if (!rw->clients[c].c)
            continue;
        int cp = kvc_client_proc(rw->clients[c].c);
        for (int i = 0; i < n; i++)
            if (net_blocked(rw->w, cp, procs[i]) || net_blocked(rw->w, procs[i], cp))
                return true;
    }
    return false;
}

/* The voters that count (started, not removed) into nodes, procs, up and alive (its
 * process runs, paused or not); their number. *skewed: a real target's voter that is
 * up runs skewed. */
static int voters(struct run_world *rw, int *nodes, int *procs, bool *up, bool *alive, bool *skewed)
{
    int k = 0;
    *skewed = false;
    if (rw->tgt) { /* the live target: its members' processes (the bridges' links) */
        for (int node = 1; node <= rw->tgt->slots(rw) && k < RUN_NODES_MAX; node++) {
            bool u = false, sk = false;
            if (!rw->tgt->liveness_voter(rw, node, &u, &sk))
                continue;
            nodes[k] = node;
            procs[k] = rw->tgt->node_proc(rw, node);
            up[k] = u && procs[k] >= 0;
            alive[k] = rw->tgt->alive(rw, node);
            *skewed = *skewed || (up[k] && sk);
            k++;
        }
        return k;
    }
    int n = srv_cluster_voters(rw->cl, nodes, RUN_NODES_MAX);
    for (int i = 0; i < n; i++) {
        if (srv_cluster_is_removed(rw->cl, nodes[i]) || !srv_cluster_is_started(rw->cl, nodes[i]))
            continue; /* not a fault: a member not started yet */
        nodes[k] = nodes[i];
        procs[k] = srv_cluster_node_proc(rw->cl, nodes[i]);
        up[k] = srv_cluster_is_alive(rw->cl, nodes[i]) && procs[k] >= 0 &&
                sim_proc_state(rw->w, procs[k]) == SIM_PROC_UP;
        alive[k] = srv_cluster_is_alive(rw->cl, nodes[i]) && procs[k] >= 0 &&
                   sim_proc_state(rw->w, procs[k]) != SIM_PROC_DOWN;
        k++;
    }
    return k;
}

static void evaluate(struct run_world *rw)
{
    rw->live.seen = rw->live.gen;
    int nodes[RUN_NODES_MAX], procs[RUN_NODES_MAX];
    bool up[RUN_NODES_MAX], alive[RUN_NODES_MAX], reach[RUN_NODES_MAX], skewed;
    int k = voters(rw, nodes, procs, up, alive, &skewed);
    int best = 0, leader = run_leader(rw), leader_at = -1;
    bool best_set[RUN_NODES_MAX] = {false};
    for (int i = 0; i < k; i++) {
        if (!up[i])
            continue;
        memset(reach, 0, sizeof reach);
        reach_from(rw, procs, up, k, i, reach);
        int m = 0;
        for (int b = 0; b < k; b++)
            m += reach[b];
        if (m > best) {
            best = m;
            memcpy(best_set, reach, sizeof best_set);
        }
    }
    for (int i = 0; i < k; i++)
        if (nodes[i] == leader)
            leader_at = i;
    struct liveness_segment sg = {.at_ns = sim_now_ns(rw->w), .leader = leader != 0};
    if (other_faults(rw, procs, k, skewed))
        sg.state = LIVENESS_OTHER;
    else if (best == k)
        sg.state = LIVENESS_HEALED;
    else if (k > 0 && best >= k / 2 + 1)
        sg.state = LIVENESS_MINORITY;
    else
        sg.state = LIVENESS_OTHER;
    /* (only a minority window cares; a healed or other one goes on whoever leads) */
    sg.leader_affected = sg.state == LIVENESS_MINORITY && (leader_at < 0 || !best_set[leader_at]);
    for (int i = 0; i < k && sg.state == LIVENESS_MINORITY; i++)
        sg.gray = sg.gray || (!best_set[i] && alive[i]);
    struct liveness_segment *last = rw->live.n ? &rw->live.segs[rw->live.n - 1] : NULL;
    if (last && last->state == sg.state && last->leader_affected == sg.leader_affected &&
        last->gray == sg.gray)
        return; /* the same state goes on */
    if (last && last->at_ns == sg.at_ns) {
        *last = sg; /* several rows at one instant: the last state counts */
        return;
    }
    FL_GROW(rw->live.segs, rw->live.cap, rw->live.n + 1, 16);
    rw->live.segs[rw->live.n++] = sg;
}

void run_liveness_update(struct run_world *rw)
{
    if (rw->live.gen == rw->live.seen)
        return; /* (every simulated step asks: the cheap test first) */
    /* on a real target only when asked: it reads the members afresh (leader()) */
    if (rw->cl || (rw->tgt && rw->tgt->liveness_voter && (rw->checks & RUN_CHECK_LIVENESS)))
        evaluate(rw);
}

/* The liveness ops of history h: client calls, writes marked, system ops left out. */
static struct liveness_op *ops_of(const struct chk_history *h, size_t *n)
{
    struct liveness_op *ops = fl_calloc((size_t)h->op_count + 1, sizeof *ops);
    size_t k = 0;
    for (uint32_t i = 0; i < h->op_count; i++) {
        const struct chk_op *o = &h->ops[i];
        if (o->client <= 0 || o->kind != CHK_OP_TXN)
            continue;
        bool write = false;
        for (uint32_t s = 0; s < (uint32_t)o->then_count + o->else_count; s++) {
            uint8_t kind = h->subs[o->sub_first + s].kind;
            write =
                write || kind == CHK_SUB_PUT || kind == CHK_SUB_DELETE || kind == CHK_SUB_APPEND;
        }
        ops[k++] = (struct liveness_op){.client = o->client,
                                        .call_ns = o->call_ns,
                                        .return_ns = o->return_ns == CHK_NEVER ? -1 : o->return_ns,
                                        .ok = o->status == CHK_ST_OK,
                                        .write = write};
    }
    *n = k;
    return ops;
}

/* The times an alarm (NOSPACE, CORRUPT) was active, from the members' "alarm" events:
 * from an activation while none was active to the next deactivation. Pairs [from, to),
 * to = -1 while still active at the end. */
static int64_t *alarm_intervals(const struct run_node_event *ev, size_t n_ev, size_t *n)
{
    int64_t *a = fl_calloc(2 * n_ev + 2, sizeof *a);
    size_t k = 0;
    bool on = false;
    for (size_t i = 0; i < n_ev; i++) {
        if (strcmp(ev[i].kind, SRV_EV_ALARM))
            continue;
        bool activate = !strncmp(ev[i].detail, "activate", 8);
        if (activate && !on) {
            a[2 * k] = ev[i].at_ns;
            a[2 * k + 1] = -1;
            on = true;
        } else if (!activate && on) {
            a[2 * k++ + 1] = ev[i].at_ns;
            on = false;
        }
    }
    *n = k + on;
    return a;
}

json_t *run_liveness_judge(struct run_world *rw, const struct chk_history *h, int *verdict)
{
    run_liveness_update(rw);
    size_t n_ops = 0, n_ev = 0, n_leaders = 0;
    struct liveness_op *ops = ops_of(h, &n_ops);
    const struct run_node_event *ev = run_node_events(rw, &n_ev);
    int64_t *leaders = fl_calloc(n_ev + 1, sizeof *leaders);
    for (size_t i = 0; i < n_ev; i++)
        if (!strcmp(ev[i].kind, SRV_EV_LEADER))
            leaders[n_leaders++] = ev[i].at_ns;
    struct liveness_client clients[RUN_CLIENTS_MAX];
    for (int i = 0; i < rw->n_clients; i++)
        clients[i] = (struct liveness_client){
            i + 1, i < rw->kcfg.n_balancers ? rw->kcfg.balancers[i] : rw->kcfg.balancer};
    size_t n_alarms = 0;
    int64_t *alarms = alarm_intervals(ev, n_ev, &n_alarms);
    int64_t election_ns = (rw->ccfg.election_ms ? rw->ccfg.election_ms : 1000) * FL_MS;
    int64_t timeout_ns = (rw->kcfg.timeout_ms ? rw->kcfg.timeout_ms : 2000) * FL_MS;
    /* a swarm world judges the cluster only (liveness.h), with a bound from its drawn
     * timeouts: ten election timeouts, and two request timeouts for the calls in flight
     * to a member that died (they fail over after their timeout) */
    bool swarm = rw->swarm.drawn;
    struct liveness_input in = {
        .cluster_only = swarm,
        .heal_bound_ns = swarm ? LIVENESS_HEAL_ELECTIONS * election_ns + 2 * timeout_ns : 0,
        .alarms_ns = alarms,
        .n_alarms = n_alarms,
        .election_ns = election_ns,
        .client_timeout_ns = timeout_ns,
        .end_ns = rw->live.end_ns,
        .segments = rw->live.segs,
        .n_segments = rw->live.n,
        .leaders_ns = leaders,
        .n_leaders = n_leaders,
        .clients = clients,
        .n_clients = (size_t)rw->n_clients,
        .ops = ops,
        .n_ops = n_ops};
    struct fl_buf out;
    fl_buf_init(&out);
    enum liveness_verdict lv = liveness_judge(&in, &out);
    *verdict = lv == LIVENESS_PASS ? CHK_PASS : lv == LIVENESS_FAIL ? CHK_FAIL : CHK_UNKNOWN;
    json_t *d = json_loads(fl_buf_cstr(&out), 0, NULL);
    FL_ASSERTF(d != NULL, "liveness detail is not JSON: %s", fl_buf_cstr(&out));
    fl_buf_close(&out);
    free(alarms);
    free(leaders);
    free(ops);
    return d;
}
