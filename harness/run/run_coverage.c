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
 * A run keeps at most RUN_COV_MAX signatures (the rest are counted, not kept).
 */
#include "harness/run/run_int.h"

#include <stdlib.h>

#define RUN_COV_MAX 4096 /* signatures kept per run */

#define RUN_FEAT_CAP 8192 /* feature slots (~20 kinds x 7 roles x (4 lags + 16 state pairs)) */

struct run_cov {
    uint64_t *set; /* open addressing, 0 = empty (a hash of 0 is stored as 1) */
    size_t cap, n;
    uint64_t dropped;             /* signatures past RUN_COV_MAX */
    uint64_t feat[RUN_FEAT_CAP];  /* features (open addressing) ... */
    uint32_t count[RUN_FEAT_CAP]; /* ... and how often the run reached each */
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
    bool compacted = false;
    if (self >= 0 && st[self].alive) {
        struct srv_member_status ms;
        srv_cluster_status(rw->cl, ev->node, &ms);
        compacted = ms.compact_revision > 0;
    }
    len = snprintf(text, sizeof text, "P|%s|%c w%d u%d n%d z%d", ev->kind, me[0], watchers_open(rw),
                   uncommitted, learners > 0 && leaders == 0, compacted);
    feat_count(rw->explore.cov, fl_hash64(text, (size_t)FL_MIN(len, (int)sizeof text - 1)));
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
    if (c->dropped)
        json_object_set_new(o, "dropped", json_integer((json_int_t)c->dropped));
    return o;
}
