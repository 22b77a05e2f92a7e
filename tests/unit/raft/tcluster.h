/*
 * tcluster.h: an in-test Raft cluster for the unit tests of nodes/raft. Each node is
 * a struct raft plus a "disk" (the persisted log, hard state and snapshot, written
 * from every ready exactly as a driver must) and the list of entries it applied.
 * Messages go into one FIFO queue and are delivered by hand; links can be cut and
 * message types dropped. Everything is deterministic. Header-only: each test file is
 * its own executable.
 */
#ifndef TCLUSTER_H
#define TCLUSTER_H

#include "nodes/raft/raft.h"
#include "harness/common/bugs.h"
#include "fl_test.h"

#define TC_MAX         8
#define TC_APPLIED_MAX 20000

struct tc_applied {
    uint64_t index, term, hash;
    enum raft_entry_type type;
};

struct tc_node {
    struct raft *r;
    struct raft_ready rd;
    bool down;
    /* disk */
    struct raft_entry *disk;
    size_t disk_count, disk_cap;
    struct raft_hard_state hs;
    struct raft_snapshot snap;
    uint8_t *snap_data;
    /* state machine */
    struct tc_applied *applied;
    size_t applied_count;
    uint64_t app_state; /* hash folded over applied data: the "app snapshot" */
    struct raft_read_state reads[64];
    size_t reads_count;
    size_t events[RAFT_EV_KIND_COUNT];
    size_t notes[RAFT_EV_KIND_COUNT];
    char last_reject[128];
};

struct tc_msg {
    struct raft_msg m;
};

struct tc {
    int n;
    struct tc_node nodes[TC_MAX];
    struct raft_config cfg[TC_MAX];
    struct tc_msg *q;
    size_t q_count, q_cap;
    bool cut[TC_MAX + 1][TC_MAX + 1];
    uint32_t drop_types[TC_MAX + 1]; /* bitmask of msg types dropped towards node */
    size_t sent[RAFT_MSG_TYPE_COUNT];
    size_t delivered;
    bool verbose;
    bool trace_msgs;
};

static inline uint64_t tc_hash(const void *p, size_t n, uint64_t h)
{
    const uint8_t *b = p;
    h ^= 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

static inline struct tc_node *tc_node(struct tc *c, uint64_t id)
{
    FL_ASSERT(id >= 1 && (int)id <= c->n);
    return &c->nodes[id - 1];
}

static inline struct raft *tc_r(struct tc *c, uint64_t id)
{
    return tc_node(c, id)->r;
}

/* Deep copy of a message (entries, data, snapshot) for the queue. */
static inline void tc_msg_copy(struct raft_msg *dst, const struct raft_msg *src)
{
    *dst = *src;
    if (src->entries_count) {
        struct raft_entry *e = fl_malloc(sizeof(*e) * src->entries_count);
        for (size_t i = 0; i < src->entries_count; i++) {
            e[i] = src->entries[i];
            e[i].data =
                src->entries[i].len ? fl_memdup(src->entries[i].data, src->entries[i].len) : NULL;
        }
        dst->entries = e;
    } else {
        dst->entries = NULL;
    }
    if (src->snapshot) {
        struct raft_snapshot *s = fl_malloc(sizeof(*s));
        *s = *src->snapshot;
        s->data = s->len ? fl_memdup(src->snapshot->data, s->len) : NULL;
        dst->snapshot = s;
    }
}

static inline void tc_msg_free(struct raft_msg *m)
{
    for (size_t i = 0; i < m->entries_count; i++)
        free((void *)m->entries[i].data);
    free((void *)m->entries);
    if (m->snapshot) {
        free((void *)m->snapshot->data);
        free((void *)m->snapshot);
    }
}

static inline void tc_disk_truncate(struct tc_node *nd, uint64_t from)
{
    while (nd->disk_count && nd->disk[nd->disk_count - 1].index >= from) {
        free((void *)nd->disk[nd->disk_count - 1].data);
        nd->disk_count--;
    }
}

/* When set, sees every ready after it was persisted and applied, before advance. */
static void (*tc_ready_hook)(struct tc *c, uint64_t id, const struct raft_ready *rd);

/* Persists, sends, applies one ready of node id, then advances. */
static inline bool tc_process(struct tc *c, uint64_t id)
{
    struct tc_node *nd = tc_node(c, id);
    if (nd->down || !raft_has_ready(nd->r))
        return false;
    struct raft_ready *rd = &nd->rd;
    raft_ready(nd->r, rd);
    if (rd->snapshot) {
        tc_disk_truncate(nd, 0);
        free(nd->snap_data);
        nd->snap = *rd->snapshot;
        nd->snap_data = nd->snap.len ? fl_memdup(rd->snapshot->data, nd->snap.len) : NULL;
        nd->snap.data = nd->snap_data;
        /* install the app state */
        FL_ASSERT(nd->snap.len == sizeof(uint64_t));
        memcpy(&nd->app_state, nd->snap_data, sizeof(uint64_t));
    }
    if (rd->entries_count) {
        tc_disk_truncate(nd, rd->entries[0].index);
        for (size_t i = 0; i < rd->entries_count; i++) {
            FL_GROW(nd->disk, nd->disk_cap, nd->disk_count + 1, 64);
            struct raft_entry e = rd->entries[i];
            e.data = e.len ? fl_memdup(e.data, e.len) : NULL;
            nd->disk[nd->disk_count++] = e;
        }
    }
    if (rd->hard_state_changed)
        nd->hs = rd->hard_state;
    for (size_t i = 0; i < rd->msgs_count; i++) {
        FL_GROW(c->q, c->q_cap, c->q_count + 1, 256);
        tc_msg_copy(&c->q[c->q_count++].m, &rd->msgs[i]);
        c->sent[rd->msgs[i].type]++;
    }
    for (size_t i = 0; i < rd->committed_count; i++) {
        const struct raft_entry *e = &rd->committed[i];
        FL_ASSERT(nd->applied_count < TC_APPLIED_MAX);
        uint64_t h = tc_hash(e->data, e->len, e->type);
        nd->applied[nd->applied_count++] = (struct tc_applied){e->index, e->term, h, e->type};
        nd->app_state = tc_hash(&h, sizeof(h), nd->app_state);
    }
    for (size_t i = 0; i < rd->reads_count && nd->reads_count < 64; i++)
        nd->reads[nd->reads_count++] = rd->reads[i];
    for (size_t i = 0; i < rd->events_count; i++) {
        nd->events[rd->events[i].kind]++;
        if (rd->events[i].kind == RAFT_EV_VOTE_REJECTED)
            snprintf(nd->last_reject, sizeof(nd->last_reject), "%s", rd->events[i].detail);
        if (c->verbose)
            fprintf(stderr, "  [%" PRIu64 "] %s t%" PRIu64 ": %s\n", id,
                    raft_event_kind_name(rd->events[i].kind), rd->events[i].term,
                    rd->events[i].detail);
    }
    for (size_t i = 0; i < rd->notes_count; i++)
        nd->notes[rd->notes[i].kind]++;
    if (tc_ready_hook)
        tc_ready_hook(c, id, rd);
    raft_advance(nd->r, rd);
    raft_check_invariants(nd->r);
    return true;
}

static inline void tc_process_all(struct tc *c)
{
    for (int i = 1; i <= c->n; i++)
        while (tc_process(c, (uint64_t)i))
            ;
}

/* Delivers the messages queued now (not those they cause). Returns how many. */
static inline size_t tc_deliver(struct tc *c)
{
    size_t n = c->q_count;
    struct tc_msg *batch = c->q;
    c->q = NULL;
    c->q_count = c->q_cap = 0;
    size_t done = 0;
    for (size_t i = 0; i < n; i++) {
        struct raft_msg *m = &batch[i].m;
        bool drop = m->to < 1 || (int)m->to > c->n || c->cut[m->from][m->to] ||
                    (c->drop_types[m->to] & (1u << m->type)) || tc_node(c, m->to)->down;
        if (!drop && c->trace_msgs)
            fprintf(stderr,
                    "  msg %s %" PRIu64 "->%" PRIu64 " t%" PRIu64 " idx %" PRIu64 " lt %" PRIu64
                    " commit %" PRIu64 " n %zu rej %d hint %" PRIu64 "\n",
                    raft_msg_type_name(m->type), m->from, m->to, m->term, m->index, m->log_term,
                    m->commit, m->entries_count, m->reject, m->reject_hint);
        if (!drop) {
            raft_step(tc_r(c, m->to), m);
            raft_check_invariants(tc_r(c, m->to));
            done++;
        }
        tc_msg_free(m);
    }
    free(batch);
    c->delivered += done;
    return done;
}

/* Delivers queued messages accepted by pred (others dropped). */
static inline size_t tc_deliver_if(struct tc *c, bool (*pred)(const struct raft_msg *m))
{
    size_t kept = 0;
    for (size_t i = 0; i < c->q_count; i++) {
        if (pred(&c->q[i].m))
            c->q[kept++] = c->q[i];
        else
            tc_msg_free(&c->q[i].m);
    }
    c->q_count = kept;
    return tc_deliver(c);
}

/* Processes readies and delivers until quiet (bounded). */
static inline void tc_stabilize(struct tc *c)
{
    for (int round = 0; round < 10000; round++) {
        tc_process_all(c);
        if (c->q_count == 0)
            return;
        tc_deliver(c);
    }
    FL_UNREACHABLE();
}

static inline void tc_drop_queue(struct tc *c)
{
    for (size_t i = 0; i < c->q_count; i++)
        tc_msg_free(&c->q[i].m);
    c->q_count = 0;
}

static inline void tc_tick(struct tc *c, uint64_t id, int n)
{
    for (int i = 0; i < n; i++)
        if (!tc_node(c, id)->down)
            raft_tick(tc_r(c, id));
}

static inline void tc_tick_all(struct tc *c, int n)
{
    for (int k = 0; k < n; k++) {
        for (int i = 1; i <= c->n; i++)
            tc_tick(c, (uint64_t)i, 1);
        tc_stabilize(c);
    }
}

/* When set, adjusts every node's configuration before it is created. */
static void (*tc_cfg_hook)(struct raft_config *cfg);

static inline void tc_new_node(struct tc *c, int i, uint64_t seed, bool pre_vote)
{
    raft_config_default(&c->cfg[i], (uint64_t)i + 1, seed);
    c->cfg[i].pre_vote = pre_vote;
    c->cfg[i].snapshot_catchup_entries = 5;
    if (tc_cfg_hook)
        tc_cfg_hook(&c->cfg[i]);
    c->nodes[i].r = raft_new(&c->cfg[i]);
    raft_ready_init(&c->nodes[i].rd);
    c->nodes[i].applied = fl_calloc(TC_APPLIED_MAX, sizeof(struct tc_applied));
}

/* n nodes, the first `voters` of them bootstrapped as the founding voters; the rest
 * start empty (joiners). */
static inline void tc_init(struct tc *c, int n, int voters, uint64_t seed, bool pre_vote)
{
    memset(c, 0, sizeof(*c));
    c->n = n;
    uint64_t ids[TC_MAX];
    for (int i = 0; i < voters; i++)
        ids[i] = (uint64_t)i + 1;
    for (int i = 0; i < n; i++) {
        tc_new_node(c, i, seed, pre_vote);
        if (i < voters)
            FL_ASSERT(raft_bootstrap(c->nodes[i].r, ids, (size_t)voters) == FL_OK);
    }
    tc_process_all(c);
}

static inline void tc_free_node(struct tc_node *nd)
{
    raft_free(nd->r);
    raft_ready_close(&nd->rd);
    tc_disk_truncate(nd, 0);
    free(nd->disk);
    free(nd->snap_data);
    free(nd->applied);
    memset(nd, 0, sizeof(*nd));
}

static inline void tc_close(struct tc *c)
{
    tc_drop_queue(c);
    free(c->q);
    for (int i = 0; i < c->n; i++)
        tc_free_node(&c->nodes[i]);
}

/* Crash and restart node id from its disk alone. */
static inline void tc_restart(struct tc *c, uint64_t id)
{
    struct tc_node *nd = tc_node(c, id);
    struct tc_node keep = *nd;
    raft_free(nd->r);
    raft_ready_close(&nd->rd);
    struct raft_config cfg = c->cfg[id - 1];
    cfg.applied = keep.snap.index; /* app state is rebuilt from the snapshot */
    cfg.seed += 1000;
    nd->r = raft_new(&cfg);
    raft_ready_init(&nd->rd);
    int rc = raft_restore(nd->r, &keep.hs, keep.snap.index ? &keep.snap : NULL, keep.disk,
                          keep.disk_count);
    FL_ASSERT(rc == FL_OK);
    nd->applied_count = 0;
    nd->app_state = 0;
    if (keep.snap.index)
        memcpy(&nd->app_state, keep.snap_data, sizeof(uint64_t));
    while (nd->applied_count < keep.applied_count &&
           keep.applied[nd->applied_count].index <= keep.snap.index)
        nd->applied_count++;
    nd->down = false;
}

/* The leader, 0 if none or several claim it at the highest term. */
static inline uint64_t tc_leader(struct tc *c)
{
    uint64_t lead = 0, term = 0;
    for (int i = 1; i <= c->n; i++) {
        struct raft *r = tc_r(c, (uint64_t)i);
        if (tc_node(c, (uint64_t)i)->down || raft_role(r) != RAFT_LEADER)
            continue;
        if (raft_term(r) > term) {
            term = raft_term(r);
            lead = (uint64_t)i;
        }
    }
    return lead;
}

static inline uint64_t tc_propose(struct tc *c, uint64_t id, const char *s)
{
    uint64_t idx = 0;
    int rc = raft_propose(tc_r(c, id), s, strlen(s), &idx);
    return rc == FL_OK ? idx : 0;
}

static inline int tc_conf(struct tc *c, uint64_t leader, enum raft_cc_type t, uint64_t node,
                          uint64_t *idx)
{
    struct raft_conf_change cc = {t, node, (const uint8_t *)"ctx", 3};
    return raft_propose_conf_change(tc_r(c, leader), &cc, idx);
}

/* Whether every pair of nodes applied the same entry at every index both applied. */
static inline bool tc_applied_agree(struct tc *c)
{
    for (int a = 0; a < c->n; a++) {
        for (int b = a + 1; b < c->n; b++) {
            struct tc_node *x = &c->nodes[a], *y = &c->nodes[b];
            for (size_t i = 0; i < x->applied_count; i++)
                for (size_t j = 0; j < y->applied_count; j++)
                    if (x->applied[i].index == y->applied[j].index &&
                        (x->applied[i].term != y->applied[j].term ||
                         x->applied[i].hash != y->applied[j].hash))
                        return false;
        }
    }
    return true;
}

static inline uint64_t tc_last_applied(struct tc *c, uint64_t id)
{
    struct tc_node *nd = tc_node(c, id);
    uint64_t a = nd->applied_count ? nd->applied[nd->applied_count - 1].index : 0;
    return FL_MAX(a, nd->snap.index);
}

/* Node id proposes n entries of data, then the cluster settles (tc_stabilize). */
static inline void tc_propose_n(struct tc *c, uint64_t id, int n, const char *data)
{
    for (int i = 0; i < n; i++)
        tc_propose(c, id, data);
    tc_stabilize(c);
}

/* Elects node id (campaign + stabilize); returns whether it is leader. */
static inline bool tc_elect(struct tc *c, uint64_t id)
{
    raft_campaign(tc_r(c, id));
    tc_stabilize(c);
    return raft_role(tc_r(c, id)) == RAFT_LEADER;
}

/* tc_init, then node 1 is elected (checked: a failure stops the case). */
static inline void tc_init_led(struct tc *c, int n, int voters, uint64_t seed, bool pre_vote)
{
    tc_init(c, n, voters, seed, pre_vote);
    CHECK(tc_elect(c, 1));
}

#endif
