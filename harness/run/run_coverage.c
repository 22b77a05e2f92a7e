/*
 * run_coverage.c: the abstract coverage of a run, for `faultline explore` (issue 13
 * §5). At every node event (the node_events rows: leader, term, crash, snapshot_sent,
 * conf_change, compact, ...) the cluster's state is folded into a short abstract
 * signature, and the run keeps the set of distinct signatures it reached. explore
 * keeps the fault schedules whose runs reach signatures no earlier run reached.
 *
 * Only when asked: FAULTLINE_COVERAGE=1 in the environment (explore sets it for its
 * workers). The state is only read (member status, the network's cuts), never
 * changed, and no event is scheduled and no random number drawn, so the run and its
 * digest are the same with or without it; only the --json summary gains a
 * "coverage" object: {"encoding": 1, "signatures": [16 hex digits, ...]} (sorted).
 *
 * Encoding 1 (each signature is the 64-bit XXH3 of this text):
 *
 *   KIND|vV lL kK cC dD|RTG
 *
 *   KIND  the node event's kind ("leader", "snapshot_applied", "crash", ...)
 *   V     voters against the initial cluster size: '-' fewer, '=' as many, '+' more
 *   L     learners present: 0 or 1
 *   K     members that believe they lead: 0, 1 or 2 (two or more)
 *   C     a network cut is in force between two members: 0 or 1
 *   D     members down or paused: 0, 1 or 2 (two or more)
 *   RTG   the member the event is about:
 *         R  role: 'D' down, 'P' paused, 'R' removed, 'l' learner, 'L' leader,
 *            'F' follower that knows a leader, 'C' no leader known (campaigning)
 *         T  how far its term is behind the highest: '0', '1', '2' (two or more)
 *         G  how far its commit index is behind the highest: '0' none, '1' under 10
 *            entries, '2' under 100, '3' 100 or more (a snapshot's distance)
 *
 * (The whole cluster's member codes were tried first: nearly every run then reached
 * new signatures, which left the search nothing to choose by.)
 *
 * Features, for choosing which schedules to mutate (AFL's edges with hit counts): the
 * text "KIND|RG" (the event's kind, the member's role and commit lag as above) and how
 * many times the run reached it, in AFL's buckets (1, 2, 3, 4-7, 8-15, 16-31, 32-127,
 * 128+); the summary lists each as "HHHHHHHHHHHHHHHH#B" (the text's XXH3 in hex,
 * the bucket), sorted, as "features". A run with more snapshot installs than any before reaches a
 * new one.
 *
 * Code edges, in an explore build only (cmake -DFL_EXPLORE_COVERAGE=ON): the node code
 * (nodes/raft, mvcc, server, client) is compiled with -fsanitize-coverage=trace-pc (gcc
 * has no trace-pc-guard) and the callback in edges/run_edges.c counts each edge taken in
 * AFL's 64 K map; the counts start at zero when the run's coverage does, and the summary
 * lists every edge the run took as "N#B" (N its slot in the map, B its count's AFL
 * bucket), sorted by N, as "edges" (absent in a normal build, which has neither the flag
 * nor the callback). Counting reads nothing of the simulation and changes nothing in it:
 * digests stay the same.
 *
 * State pairs, features too (the text "P|KIND|R wW uU nN zZ", counted as above): the
 * event's kind and member role with four facts that mark the worlds where the known
 * bug classes live, none of them naming one: W watchers are open in the run (a
 * snapshot install, a compaction or a restore with watchers to keep right); U the
 * member holds entries past the highest commit index (written, not yet acknowledged
 * by a quorum: an older term's entry on a new leader, an append before its fsync);
 * N a learner is in the configuration while no member leads; Z the member has
 * compacted (a compaction with watchers behind it).
 *
 * Risky situations, features too (the text "R|WHAT", counted as above), and listed with
 * their first two moments as "risky": [{"what", "at_ms", "node", "on"}] (in the order
 * reached; "on" the node event a fault can wait for to land right after it). None names
 * a bug switch; each is a moment the known bug classes need, generic over the code:
 *
 *   change_while_pending        a configuration entry appended on a member while an
 *                               earlier one it appended is not committed there
 *   leader_removes_self         a removal of the member that leads, appended on it
 *   leader_removed              ... appended on another member
 *   promote_during_outage       a promotion while a member is down or a link cut
 *   change_during_outage        any other configuration change then
 *   install_under_synced_watchers  a snapshot installed on a member whose store had
 *                               synced watchers at its previous event
 *   install_with_watchers       ... while watchers are open elsewhere
 *   snapshot_sent_with_watchers a snapshot sent while watchers are open
 *   compact_under_unsynced_watcher  a compaction on a member whose store had a watcher
 *                               catching up (unsynced) at its previous event
 *   compact_with_member_behind  a compaction while watchers are open and a member is
 *                               down, cut off, or at a revision below the compaction
 *   compact_with_watchers       ... with no member behind
 *   leader_with_uncommitted     a new leader that holds entries past the commit index
 *   leader_again_with_uncommitted  ... that led before, while the member that led
 *                               in between is down (Raft's Figure 8: an old leader
 *                               back with entries of its earlier term on no majority)
 *   crash_with_uncommitted      a crash of a member holding such entries
 *   log_term_split              two live voters' logs equally long, their last entries'
 *                               terms different (Figure 8's election restriction
 *                               window), when it opens; on the member with the newer
 *                               last term, "on" its next leader event
 *   restart_with_watchers       a restart while watchers are open
 *
 * explore gives parents with rare risky situations more children (its power schedule)
 * and aims faults at them (explore_mutate.c xp_aim).
 *
 * A run keeps at most RUN_COV_MAX signatures (the rest are counted, not kept).
 */
#include "harness/run/run_int.h"

#include <stdlib.h>

#define RUN_COV_MAX 4096 /* signatures kept per run */

#define RUN_FEAT_CAP 8192 /* feature slots (~20 kinds x 7 roles x (4 lags + 16 state pairs)) */

/* A risky situation a run reached (at most RUN_RISKY_KEEP kept, the first two of each). */
struct run_risky {
    const char *what; /* its name (static) */
    int64_t at_ns;
    int node;
    const char *on; /* the node event (srv_hook_kind name) a fault can wait for, or NULL */
};
#define RUN_RISKY_KEEP 48

struct run_cov {
    uint64_t *set; /* open addressing, 0 = empty (a hash of 0 is stored as 1) */
    size_t cap, n;
    uint64_t dropped;                     /* signatures past RUN_COV_MAX */
    uint64_t feat[RUN_FEAT_CAP];          /* features (open addressing) ... */
    uint32_t count[RUN_FEAT_CAP];         /* ... and how often the run reached each */
    uint64_t conf_idx[RUN_NODES_MAX + 1]; /* per slot: the last configuration entry seen */
    /* per slot, at the member's previous event: its store had synced watchers, unsynced */
    bool synced_w[RUN_NODES_MAX + 1], unsynced_w[RUN_NODES_MAX + 1];
    bool led[RUN_NODES_MAX + 1]; /* per slot: it was leader once */
    bool log_split;              /* at the previous event: a log_term_split was open */
    int last_leader;             /* the slot of the last leader event; 0 none */
    struct run_risky risky[RUN_RISKY_KEEP];
    int n_risky;
};

#ifdef FL_EXPLORE_COVERAGE
#include "harness/run/edges/run_edges.h"
#endif

void run_coverage_init(struct run_world *rw)
{
    const char *e = getenv("FAULTLINE_COVERAGE");
    if (!e || strcmp(e, "1"))
        return;
    rw->explore.cov = fl_calloc(1, sizeof *rw->explore.cov);
    rw->explore.cov->cap = 1024;
    rw->explore.cov->set = fl_calloc(rw->explore.cov->cap, sizeof(uint64_t));
#ifdef FL_EXPLORE_COVERAGE
    memset(run_edge_count, 0, sizeof run_edge_count); /* the run's edges, not the setup's */
    run_edge_prev = 0;
#endif
}

void run_coverage_free(struct run_world *rw)
{
    if (!rw->explore.cov)
        return;
    free(rw->explore.cov->set);
    free(rw->explore.cov);
    rw->explore.cov = NULL;
}

static void cov_insert(uint64_t *set, size_t cap, uint64_t h)
{
    size_t i = (size_t)(h & (cap - 1));
    while (set[i] && set[i] != h)
        i = (i + 1) & (cap - 1);
    set[i] = h;
}

static bool cov_has(const struct run_cov *c, uint64_t h)
{
    size_t i = (size_t)(h & (c->cap - 1));
    while (c->set[i]) {
        if (c->set[i] == h)
            return true;
        i = (i + 1) & (c->cap - 1);
    }
    return false;
}

static void cov_add(struct run_cov *c, uint64_t h)
{
    h = h ? h : 1;
    if (cov_has(c, h))
        return;
    if (c->n >= RUN_COV_MAX) {
        c->dropped++;
        return;
    }
    if (2 * (c->n + 1) > c->cap) {
        size_t cap = c->cap * 2;
        uint64_t *set = fl_calloc(cap, sizeof(uint64_t));
        for (size_t i = 0; i < c->cap; i++)
            if (c->set[i])
                cov_insert(set, cap, c->set[i]);
        free(c->set);
        c->set = set;
        c->cap = cap;
    }
    cov_insert(c->set, c->cap, h);
    c->n++;
}

static void feat_count(struct run_cov *c, uint64_t h)
{
    h = h ? h : 1;
    size_t i = (size_t)(h & (RUN_FEAT_CAP - 1));
    for (size_t k = 0; k < RUN_FEAT_CAP; k++, i = (i + 1) & (RUN_FEAT_CAP - 1)) {
        if (!c->feat[i] || c->feat[i] == h) {
            c->feat[i] = h;
            c->count[i]++;
            return;
        }
    }
    c->dropped++; /* full: never with the kinds there are */
}

/* AFL's hit-count buckets: 1, 2, 3, 4-7, 8-15, 16-31, 32-127, 128 and more. */
static int count_bucket(uint32_t n)
{
    return n <= 3 ? (int)n : n < 8 ? 4 : n < 16 ? 5 : n < 32 ? 6 : n < 128 ? 7 : 8;
}

static char bucket_lag(uint64_t lag)
{
    return lag == 0 ? '0' : lag < 10 ? '1' : lag < 100 ? '2' : '3';
}

/* One member's role character. */
static char role_of(const struct run_node_status *st)
{
    return !st->alive      ? 'D'
           : st->paused    ? 'P'
           : st->removed   ? 'R'
           : st->learner   ? 'l'
           : st->is_leader ? 'L'
           : st->leader_id ? 'F'
                           : 'C';
}

/* Is any link between two live members cut? */
static bool any_cut(struct run_world *rw, const int *ids, int n)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            int a = run_node_proc(rw, ids[i]), b = run_node_proc(rw, ids[j]);
            if (i != j && a >= 0 && b >= 0 && net_blocked(rw->w, a, b))
                return true;
        }
    return false;
}

/* Are watchers open in the run (the workload's fixed ones or its churning ones)? */
static bool watchers_open(const struct run_world *rw)
{
    if (rw->wl.n_watchers > 0)
        return true;
    for (int i = 0; i < RUN_CHURN_MAX; i++)
        if (rw->wl.churn[i].id)
            return true;
    return false;
}

/* A risky situation: counted as the feature "R|WHAT" (and so in its count buckets), its
 * first two occurrences kept with their time, member and the node event a fault can wait
 * for (explore's aim mutation). */
static void risky_on(struct run_cov *c, int64_t at_ns, int node, const char *what, const char *on)
{
    char text[64];
    int len = snprintf(text, sizeof text, "R|%s", what);
    feat_count(c, fl_hash64(text, (size_t)FL_MIN(len, (int)sizeof text - 1)));
    int seen = 0;
    for (int i = 0; i < c->n_risky; i++)
        seen += c->risky[i].what == what;
    if (seen >= 2 || c->n_risky >= RUN_RISKY_KEEP)
        return;
    c->risky[c->n_risky++] = (struct run_risky){what, at_ns, node, on};
}

static void risky(struct run_cov *c, const struct srv_event *ev, const char *what, const char *on)
{
    risky_on(c, ev->at_ns, ev->node, what, on);
}

/* Raft's Figure 8 window for the election restriction: two live voters whose logs are
 * equally long but end in different terms (a new leader's first entry beside an old
 * leader's uncommitted one at the same index), where only the last terms decide which
 * of them may win the other's vote. Reported as log_term_split when it opens (not at
 * every event while it lasts), on the member with the newer last term: a fault right
 * after its next leader event makes the others elect without it. */
static void note_log_split(struct run_cov *c, const struct srv_event *ev,
                           const struct run_node_status *st, const int *ids, int n)
{
    int newer = -1;
    for (int i = 0; i < n && newer < 0; i++)
        for (int j = i + 1; j < n && newer < 0; j++) {
            const struct run_node_status *a = &st[i], *b = &st[j];
            if (a->alive && b->alive && !a->removed && !b->removed && !a->learner && !b->learner &&
                a->last_index == b->last_index && a->last_log_term != b->last_log_term)
                newer = a->last_log_term > b->last_log_term ? i : j;
        }
    if (newer >= 0 && !c->log_split)
        risky_on(c, ev->at_ns, ids[newer], "log_term_split", "leader");
    c->log_split = newer >= 0;
}

static int slot_index(const int *ids, int n, int node)
{
    for (int i = 0; i < n; i++)
        if (ids[i] == node)
            return i;
    return -1;
}

/* The risky situations of one node event: none names a bug switch; each is a moment the
 * known bug classes need (a change while another is pending, a leader removed, a
 * change or a promotion during an outage, a snapshot installed or sent while watchers
 * are open, a compaction while a member or watcher can be behind it, a leader or a
 * crash with entries past the commit index, a restart while watchers are open). */
static void note_risky(struct run_world *rw, const struct srv_event *ev,
                       const struct run_node_status *st, const int *ids, int n, int self, int down,
                       bool cut)
{
    struct run_cov *c = rw->explore.cov;
    bool w = watchers_open(rw);
    uint64_t commit_max = 0;
    for (int i = 0; i < n; i++)
        commit_max = FL_MAX(commit_max, st[i].commit);
    const char *k = ev->kind, *why = ev->f.reason ? ev->f.reason : "";
    if (!strcmp(k, SRV_EV_CONF_CHANGE) && ev->node >= 1 && ev->node <= RUN_NODES_MAX &&
        (!strcmp(why, "add_voter") || !strcmp(why, "add_learner") || !strcmp(why, "promote") ||
         !strcmp(why, "remove")) &&
        ev->f.index) {
        uint64_t *last = &c->conf_idx[ev->node];
        if (self >= 0 && *last && *last<ev->f.index && * last> st[self].commit)
            risky(c, ev, "change_while_pending", "conf_change");
        if (ev->f.index > *last)
            *last = ev->f.index;
        int p = slot_index(ids, n, ev->f.peer);
        if (!strcmp(why, "remove") && p >= 0 && st[p].is_leader)
            risky(c, ev, p == self ? "leader_removes_self" : "leader_removed", "conf_change");
        if (!strcmp(why, "promote") && (down > 0 || cut))
            risky(c, ev, "promote_during_outage", "conf_change");
        else if (down > 0 || cut)
            risky(c, ev, "change_during_outage", "conf_change");
    } else if (!strcmp(k, SRV_EV_SNAPSHOT_APPLIED) && w) {
        bool synced = ev->node >= 1 && ev->node <= RUN_NODES_MAX && c->synced_w[ev->node];
        risky(c, ev, synced ? "install_under_synced_watchers" : "install_with_watchers",
              "snapshot_install");
    } else if (!strcmp(k, SRV_EV_SNAPSHOT_SENT) && w) {
        risky(c, ev, "snapshot_sent_with_watchers", "snapshot_sent");
    } else if (!strcmp(k, SRV_EV_COMPACT) && w) {
        bool behind = down > 0 || cut;
        for (int i = 0; i < n && !behind; i++)
            behind = st[i].alive && !st[i].removed && st[i].revision < ev->revision;
        bool lagging = ev->node >= 1 && ev->node <= RUN_NODES_MAX && c->unsynced_w[ev->node];
        risky(c, ev,
              lagging  ? "compact_under_unsynced_watcher"
              : behind ? "compact_with_member_behind"
                       : "compact_with_watchers",
              "compact");
    } else if (!strcmp(k, SRV_EV_LEADER) && ev->node >= 1 && ev->node <= RUN_NODES_MAX) {
        int prev =
            c->last_leader && c->last_leader != ev->node ? slot_index(ids, n, c->last_leader) : -1;
        bool again = c->led[ev->node] && prev >= 0 && (!st[prev].alive || st[prev].paused);
        if (self >= 0 && st[self].last_index > commit_max)
            risky(c, ev, again ? "leader_again_with_uncommitted" : "leader_with_uncommitted",
                  "leader");
        c->led[ev->node] = true;
        c->last_leader = ev->node;
    } else if (!strcmp(k, SRV_EV_CRASH) && self >= 0 && st[self].last_index > commit_max) {
        risky(c, ev, "crash_with_uncommitted", "append");
    } else if (!strcmp(k, SRV_EV_RESTART) && w) {
        risky(c, ev, "restart_with_watchers", NULL);
    }
}

void run_coverage_note(struct run_world *rw, const struct srv_event *ev)
{
    if (!rw->explore.cov || !rw->cl)
        return;
    int ids[RUN_NODES_MAX], n = run_nodes(rw, ids, RUN_NODES_MAX);
    struct run_node_status st[RUN_NODES_MAX];
    uint64_t term_max = 0, commit_max = 0;
    int leaders = 0, learners = 0, down = 0, self = -1;
    for (int i = 0; i < n; i++) {
        run_node_status(rw, ids[i], &st[i]);
        term_max = FL_MAX(term_max, st[i].term);
        commit_max = FL_MAX(commit_max, st[i].commit);
        leaders += st[i].is_leader && !st[i].paused;
        learners += st[i].learner && !st[i].removed;
        down += (!st[i].alive || st[i].paused) && !st[i].removed;
        if (ids[i] == ev->node)
            self = i;
    }
    char me[4] = "---";
    if (self >= 0) {
        uint64_t behind = term_max - st[self].term;
        me[0] = role_of(&st[self]);
        me[1] = behind == 0 ? '0' : behind == 1 ? '1' : '2';
        me[2] = bucket_lag(commit_max - st[self].commit);
    }
    int v[RUN_NODES_MAX], nv = srv_cluster_voters(rw->cl, v, RUN_NODES_MAX);
    int base = rw->ccfg.nodes ? rw->ccfg.nodes : 3;
    char text[96];
    int len = snprintf(text, sizeof text, "%s|v%c l%d k%d c%d d%d|%s", ev->kind,
                       nv < base   ? '-'
                       : nv > base ? '+'
                                   : '=',
                       learners > 0, FL_MIN(leaders, 2), any_cut(rw, ids, n), FL_MIN(down, 2), me);
    cov_add(rw->explore.cov, fl_hash64(text, (size_t)FL_MIN(len, (int)sizeof text - 1)));
    /* the feature: the kind and the member's role and commit lag, counted */
    len = snprintf(text, sizeof text, "%s|%c%c", ev->kind, me[0], me[2]);
    feat_count(rw->explore.cov, fl_hash64(text, (size_t)FL_MIN(len, (int)sizeof text - 1)));
    /* the state pair: the same event with the facts that mark a world */
    bool uncommitted = self >= 0 && st[self].alive && st[self].last_index > commit_max;
    bool compacted = false, synced_w = false, unsynced_w = false;
    if (self >= 0 && st[self].alive) {
        struct srv_member_status ms;
        srv_cluster_status(rw->cl, ev->node, &ms);
        compacted = ms.compact_revision > 0;
        synced_w = ms.watchers > ms.unsynced_watchers;
        unsynced_w = ms.unsynced_watchers > 0;
    }
    len = snprintf(text, sizeof text, "P|%s|%c w%d u%d n%d z%d", ev->kind, me[0], watchers_open(rw),
                   uncommitted, learners > 0 && leaders == 0, compacted);
    feat_count(rw->explore.cov, fl_hash64(text, (size_t)FL_MIN(len, (int)sizeof text - 1)));
    note_risky(rw, ev, st, ids, n, self, down, any_cut(rw, ids, n));
    note_log_split(rw->explore.cov, ev, st, ids, n);
    if (ev->node >= 1 && ev->node <= RUN_NODES_MAX) { /* for its next event */
        rw->explore.cov->synced_w[ev->node] = synced_w;
        rw->explore.cov->unsynced_w[ev->node] = unsynced_w;
    }
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

json_t *run_coverage_json(const struct run_world *rw)
{
    const struct run_cov *c = rw->explore.cov;
    if (!c)
        return NULL;
    uint64_t *v = fl_malloc(sizeof(uint64_t) * (c->n ? c->n : 1));
    size_t k = 0;
    for (size_t i = 0; i < c->cap; i++)
        if (c->set[i])
            v[k++] = c->set[i];
    qsort(v, k, sizeof *v, cmp_u64);
    json_t *arr = json_array();
    for (size_t i = 0; i < k; i++) {
        char hex[17];
        fl_digest_hex(v[i], hex);
        json_array_append_new(arr, json_string(hex));
    }
    free(v);
    json_t *o = json_object();
    json_object_set_new(o, "encoding", json_integer(1));
    json_object_set_new(o, "signatures", arr);
    /* features with their count bucket, "HHHHHHHHHHHHHHHH#B", sorted by feature */
    k = 0;
    v = fl_malloc(sizeof(uint64_t) * RUN_FEAT_CAP);
    int b[RUN_FEAT_CAP];
    for (size_t i = 0; i < RUN_FEAT_CAP; i++)
        if (c->feat[i])
            v[k++] = c->feat[i];
    qsort(v, k, sizeof *v, cmp_u64);
    for (size_t i = 0; i < k; i++) {
        size_t j = (size_t)(v[i] & (RUN_FEAT_CAP - 1));
        while (c->feat[j] != v[i])
            j = (j + 1) & (RUN_FEAT_CAP - 1);
        b[i] = count_bucket(c->count[j]);
    }
    json_t *fa = json_array();
    for (size_t i = 0; i < k; i++) {
        char t[40];
        snprintf(t, sizeof t, "%016llx#%d", (unsigned long long)v[i], b[i]);
        json_array_append_new(fa, json_string(t));
    }
    free(v);
    json_object_set_new(o, "features", fa);
#ifdef FL_EXPLORE_COVERAGE
    json_t *ea = json_array();
    for (uint32_t i = 0; i < RUN_EDGE_CAP; i++)
        if (run_edge_count[i]) {
            char t[24];
            snprintf(t, sizeof t, "%u#%d", i, count_bucket(run_edge_count[i]));
            json_array_append_new(ea, json_string(t));
        }
    json_object_set_new(o, "edges", ea);
#endif
    /* the risky situations kept, in the order reached */
    json_t *ra = json_array();
    for (int i = 0; i < c->n_risky; i++) {
        const struct run_risky *r = &c->risky[i];
        json_t *j = json_object();
        json_object_set_new(j, "what", json_string(r->what));
        json_object_set_new(j, "at_ms", json_integer(r->at_ns / FL_MS));
        json_object_set_new(j, "node", json_integer(r->node));
        if (r->on)
            json_object_set_new(j, "on", json_string(r->on));
        json_array_append_new(ra, j);
    }
    json_object_set_new(o, "risky", ra);
    if (c->dropped)
        json_object_set_new(o, "dropped", json_integer((json_int_t)c->dropped));
    return o;
}
