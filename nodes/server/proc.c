/*
 * proc.c: the member host of one member in a process of its own (see proc.h). The
 * directory is the founding slots; a slot's address on the environment is its slot
 * number. Events go to a JSON-lines file, written with one write(2) per line on an
 * O_APPEND descriptor so that a kill never leaves half a line behind a whole one.
 *
 * Never: read a wall clock (the environment's clocks only), or touch the simulator.
 */
#include "nodes/server/proc.h"

#include "nodes/server/srv_int.h"

#include "checkers/raft_safety.h"
#include "harness/common/rng.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct srv_proc {
    struct srv_host host; /* first */
    struct fl_env *env;
    struct srv_proc_opts o;
    uint64_t ids[SRV_PROC_NODES_MAX];
    struct fl_arena_pool pb_pool;
    int events_fd; /* -1: none */
    int feed_fd;   /* the Raft safety feed file (o.raft_feed_path); -1: none */
    struct proc_feed {
        struct srv_proc *p;
        uint64_t cluster_id;
        struct raft_safety *rec;           /* raft_safety_new_recorder */
        struct raft_safety_feed last_sent; /* the last "sent" written, op COUNT none */
    } feeds[4];                            /* one per cluster ID the member had */
    int n_feeds;
    bool feed_lost; /* a feed could not be written (said once in the event file) */
    bool failed;    /* a safety violation was written */
    bool removed;
    struct srv_member *m;
    /* members that are not founders: registered here by a member add this member
     * proposed, or named by the directory (o.dir_lookup) */
    struct proc_dir {
        uint64_t id;
        int node;
        bool started;
    } dyn[64];
    int n_dyn;
};

static struct srv_proc *proc_of(struct srv_host *h)
{
    return (struct srv_proc *)((char *)h - offsetof(struct srv_proc, host));
}

uint64_t srv_proc_member_id(uint64_t seed, int node)
{
    uint64_t x = seed ^ ((uint64_t)(uint32_t)node << 32) ^ 0x6d656d626572ULL; /* "member" */
    uint64_t v;
    do
        v = fl_splitmix64(&x);
    while (v == 0);
    return v;
}

uint64_t srv_proc_cluster_id(uint64_t seed)
{
    return srv_proc_member_id(seed, 0);
}

/* ---- the event file ------------------------------------------------------------- */

static void json_str(struct fl_buf *b, const char *s)
{
    fl_buf_printf(b, "\"");
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fl_buf_printf(b, "\\%c", *p);
        else if (*p < 0x20)
            fl_buf_printf(b, "\\u%04x", *p);
        else
            fl_buf_append(b, p, 1);
    }
    fl_buf_printf(b, "\"");
}

static void event_write(struct srv_proc *p, const struct srv_event *ev)
{
    if (p->events_fd < 0)
        return;
    struct fl_buf b;
    fl_buf_init(&b);
    fl_buf_printf(&b,
                  "{\"at_ns\":%" PRId64 ",\"node\":%d,\"member_id\":\"%016" PRIx64 "\",\"kind\":",
                  ev->at_ns, ev->node, ev->member_id);
    json_str(&b, ev->kind);
    fl_buf_printf(&b, ",\"term\":%" PRIu64 ",\"detail\":", ev->term);
    json_str(&b, ev->detail);
    if (ev->revision)
        fl_buf_printf(&b, ",\"revision\":%" PRId64, ev->revision);
    /* the typed fields (server.h srv_event_fields), as the simulator's node events
     * carry them: only those the event has */
    const struct srv_event_fields *f = &ev->f;
    if (f->peer)
        fl_buf_printf(&b, ",\"peer\":%d", f->peer);
    if (f->index)
        fl_buf_printf(&b, ",\"index\":%" PRIu64, f->index);
    const char *names[3] = {"from_state", "to_state", "reason"};
    const char *vals[3] = {f->from_state, f->to_state, f->reason};
    for (int i = 0; i < 3; i++)
        if (vals[i]) {
            fl_buf_printf(&b, ",\"%s\":", names[i]);
            json_str(&b, vals[i]);
        }
    if (f->vote)
        fl_buf_printf(&b, ",\"vote\":true,\"pre\":%s", f->pre ? "true" : "false");
    fl_buf_printf(&b, "}\n");
    /* one write: an O_APPEND line is whole or absent; a failing disk loses events only */
    ssize_t n = write(p->events_fd, b.data, b.len);
    (void)n;
    fl_buf_close(&b);
}

/* ---- the host ------------------------------------------------------------------- */

static const struct srv_config *ph_config(struct srv_host *h)
{
    return &proc_of(h)->o.cfg;
}

static bool ph_prevote(struct srv_host *h, int node)
{
    (void)node;
    return proc_of(h)->o.cfg.prevote;
}

static struct proc_dir *dyn_find(struct srv_proc *p, uint64_t member_id)
{
    for (int i = 0; i < p->n_dyn; i++)
        if (p->dyn[i].id == member_id)
            return &p->dyn[i];
    return NULL;
}

/* Asks the directory about member_id (a member added after the start): noted when
 * named. */
static struct proc_dir *dyn_lookup(struct srv_proc *p, uint64_t member_id)
{
    struct proc_dir *d = dyn_find(p, member_id);
    if ((d && d->started) || !p->o.dir_lookup || !member_id)
        return d;
    bool started = false;
    int node = p->o.dir_lookup(p->o.dir_ud, member_id, &started);
    if (node <= 0)
        return d;
    if (!d) {
        if (p->n_dyn == (int)FL_ARRAY_LEN(p->dyn))
            return NULL;
        d = &p->dyn[p->n_dyn++];
        d->id = member_id;
    }
    d->node = node;
    d->started = started;
    return d;
}

static int founder_node(struct srv_proc *p, uint64_t member_id)
{
    for (int i = 0; i < p->o.n_nodes; i++)
        if (p->ids[i] == member_id)
            return p->o.nodes[i];
    return -1;
}

static int ph_dir_node(struct srv_host *h, uint64_t member_id)
{
    struct srv_proc *p = proc_of(h);
    int node = founder_node(p, member_id);
    if (node > 0)
        return node;
    const struct proc_dir *d = dyn_lookup(p, member_id);
    return d ? d->node : -1;
}

static bool ph_member_started(struct srv_host *h, uint64_t member_id)
{
    /* the founders are started once they are in the configuration (etcd publishes its
     * attributes at its first start); a member added later once the harness started
     * its process (the directory says so) */
    struct srv_proc *p = proc_of(h);
    if (founder_node(p, member_id) > 0)
        return true;
    const struct proc_dir *d = dyn_lookup(p, member_id);
    return d && d->started;
}

static int ph_slots(struct srv_host *h)
{
    struct srv_proc *p = proc_of(h);
    int n = p->o.nodes[p->o.n_nodes - 1];
    for (int i = 0; i < p->n_dyn; i++)
        n = FL_MAX(n, p->dyn[i].node);
    return FL_MAX(n, p->o.node);
}

static bool ph_slot_used(struct srv_host *h, int node)
{
    struct srv_proc *p = proc_of(h);
    for (int i = 0; i < p->o.n_nodes; i++)
        if (p->o.nodes[i] == node)
            return true;
    for (int i = 0; i < p->n_dyn; i++)
        if (p->dyn[i].node == node)
            return true;
    return node == p->o.node;
}

/* A recorded feed (proc.h): one line, one write(2), before the member goes on. A
 * "sent" that repeats the last one written (a heartbeat of the same term) adds nothing
 * the checker does not know and is not written again. */
static void feed_sink(void *ud, const struct raft_safety_feed *f)
{
    struct proc_feed *pf = ud;
    struct srv_proc *p = pf->p;
    if (f->op == RAFT_SAFETY_OP_SENT) {
        if (pf->last_sent.op == RAFT_SAFETY_OP_SENT && pf->last_sent.node == f->node &&
            pf->last_sent.a[0] == f->a[0] && pf->last_sent.a[1] == f->a[1])
            return;
        pf->last_sent = *f;
    }
    struct fl_buf b;
    fl_buf_init(&b);
    fl_buf_printf(&b, "%016" PRIx64 " ", pf->cluster_id);
    raft_safety_feed_format(f, &b);
    fl_buf_printf(&b, "\n");
    ssize_t want = (ssize_t)b.len, n = write(p->feed_fd, b.data, b.len);
    int err = errno;
    fl_buf_close(&b);
    if (n == want || p->feed_lost)
        return;
    p->feed_lost = true;
    char d[160];
    snprintf(d, sizeof d, "a Raft safety feed was not written to the feed file: %s",
             n < 0 ? strerror(err) : "short write");
    if (p->m)
        srv_member_event(p->m, SRV_EV_RAFT_FEED_LOST, d);
}

/* No online checker runs here: its properties (a quorum behind every election, one
 * leader per term) are judged on every member's feeds together, and one process has
 * only its own; a checker fed by one member finds "violations" in what it cannot see
 * (an election won with votes it was not told of). With a feed file the feeds are
 * recorded for the harness (proc.h). */
static struct raft_safety *ph_safety(struct srv_host *h, uint64_t cluster_id)
{
    struct srv_proc *p = proc_of(h);
    if (p->feed_fd < 0)
        return NULL;
    for (int i = 0; i < p->n_feeds; i++)
        if (p->feeds[i].cluster_id == cluster_id)
            return p->feeds[i].rec;
    /* a process has one member, of one cluster ID (a restore restarts the process) */
    FL_ASSERT(p->n_feeds < (int)FL_ARRAY_LEN(p->feeds));
    struct proc_feed *pf = &p->feeds[p->n_feeds++];
    pf->p = p;
    pf->cluster_id = cluster_id;
    pf->last_sent.op = RAFT_SAFETY_OP_COUNT;
    pf->rec = raft_safety_new_recorder(feed_sink, pf);
    return pf->rec;
}

static struct kvhash *ph_kvhash(struct srv_host *h, uint64_t cluster_id)
{
    (void)h;
    (void)cluster_id;
    return NULL;
}

static void ph_safety_failed(struct srv_host *h, int node, uint64_t member_id, uint64_t term,
                             const char *json)
{
    struct srv_proc *p = proc_of(h);
    if (p->failed)
        return;
    p->failed = true;
    h->ops->emit(h, &(struct srv_event){.node = node,
                                        .member_id = member_id,
                                        .kind = SRV_EV_SAFETY,
                                        .term = term,
                                        .detail = json});
}

/* Never called: no KV hash check runs here (ph_kvhash); kept for the table. */
static void ph_kv_corrupt(struct srv_host *h, int node, uint64_t member_id, uint64_t term,
                          const char *json)
{
    h->ops->emit(h, &(struct srv_event){.node = node,
                                        .member_id = member_id,
                                        .kind = SRV_EV_CORRUPT,
                                        .term = term,
                                        .detail = json});
}

static void ph_emit(struct srv_host *h, struct srv_event *ev)
{
    struct srv_proc *p = proc_of(h);
    ev->at_ns = env_now_ns(p->env);
    if (!ev->detail)
        ev->detail = "";
    event_write(p, ev);
}

static bool ph_hooked(struct srv_host *h)
{
    (void)h;
    return false;
}

static void ph_hook(struct srv_host *h, const struct srv_hook_event *ev)
{
    (void)h;
    (void)ev;
    FL_UNREACHABLE(); /* never hooked */
}

/* A member add this member proposes: slot node (the one the request named, the
 * harness's choice) runs member_id, unless a founder or another member has it. */
static int ph_dir_register(struct srv_host *h, int node, uint64_t member_id)
{
    struct srv_proc *p = proc_of(h);
    if (node <= 0 || node > SRV_PROC_SLOTS_MAX)
        return -1;
    for (int i = 0; i < p->o.n_nodes; i++)
        if (p->o.nodes[i] == node)
            return -1; /* "Peer URLs already exists" */
    /* a slot registered by an add that was refused (unhealthy, not leader...) and never
     * started is the next add's, as the simulator reuses a slot that never ran */
    for (int i = 0; i < p->n_dyn; i++)
        if (p->dyn[i].node == node && p->dyn[i].id != member_id) {
            if (p->dyn[i].started)
                return -1;
            p->dyn[i].id = member_id;
        }
    if (node == p->o.node || p->n_dyn == (int)FL_ARRAY_LEN(p->dyn))
        return -1;
    struct proc_dir *d = dyn_find(p, member_id);
    if (!d) {
        d = &p->dyn[p->n_dyn++];
        d->id = member_id;
        d->started = false;
    }
    d->node = node;
    return node;
}

static void ph_start_joiner(struct srv_host *h, int node, uint64_t member_id, uint64_t cluster_id,
                            bool start)
{
    (void)h;
    (void)node;
    (void)member_id;
    (void)cluster_id;
    (void)start; /* the harness starts the process once member add answered */
}

static void ph_member_removed(struct srv_host *h, int node)
{
    struct srv_proc *p = proc_of(h);
    if (node != p->o.node)
        return;
    p->removed = true;
    struct srv_event ev = {.at_ns = env_now_ns(p->env),
                           .node = node,
                           .member_id = p->o.join_id ? p->o.join_id : p->ids[0],
                           .kind = SRV_EV_CONF_CHANGE,
                           .detail = "removed: this member serves nothing more"};
    for (int i = 0; i < p->o.n_nodes; i++)
        if (p->o.nodes[i] == node)
            ev.member_id = p->ids[i];
    event_write(p, &ev);
}

static uint64_t ph_new_id(struct srv_host *h)
{
    uint64_t v;
    do
        v = env_rand_u64(proc_of(h)->env);
    while (v == 0);
    return v;
}

static struct fl_arena_pool *ph_pb_pool(struct srv_host *h)
{
    return &proc_of(h)->pb_pool;
}

static const struct srv_host_ops proc_host_ops = {
    .config = ph_config,
    .prevote = ph_prevote,
    .dir_node = ph_dir_node,
    .dir_proc = ph_dir_node, /* a slot's address is its slot number */
    .member_started = ph_member_started,
    .slots = ph_slots,
    .slot_used = ph_slot_used,
    .safety = ph_safety,
    .kvhash = ph_kvhash,
    .safety_failed = ph_safety_failed,
    .kv_corrupt = ph_kv_corrupt,
    .emit = ph_emit,
    .hooked = ph_hooked,
    .hook = ph_hook,
    .dir_register = ph_dir_register,
    .start_joiner = ph_start_joiner,
    .member_removed = ph_member_removed,
    .new_id = ph_new_id,
    .pb_pool = ph_pb_pool,
};

/* ---- life ----------------------------------------------------------------------- */

static const char *opts_check(const struct srv_proc_opts *o)
{
    if (o->n_nodes < 1 || o->n_nodes > SRV_PROC_NODES_MAX)
        return "a live cluster has 1 to 16 founding members";
    bool self = false;
    for (int i = 0; i < o->n_nodes; i++) {
        if (o->nodes[i] < 1 || (i > 0 && o->nodes[i] <= o->nodes[i - 1]))
            return "member slots must be positive and listed once each, ascending";
        self = self || o->nodes[i] == o->node;
    }
    if (!self && !o->join_id)
        return "the member's own slot is not among the cluster's members";
    if (self && o->join_id)
        return "a joining member's slot is not a founder's";
    return srv_config_check(&o->cfg);
}

struct srv_proc *srv_proc_start(struct fl_env *env, const struct srv_proc_opts *o, const char **err)
{
    const char *bad = opts_check(o);
    if (bad) {
        *err = bad;
        return NULL;
    }
    struct srv_proc *p = fl_calloc(1, sizeof *p);
    p->host.ops = &proc_host_ops;
    p->env = env;
    p->o = *o;
    p->o.cfg.nodes = o->n_nodes;
    p->o.events_path = NULL; /* not kept: the caller's string */
    p->o.raft_feed_path = NULL;
    p->events_fd = -1;
    p->feed_fd = -1;
    if (o->events_path) {
        p->events_fd = open(o->events_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (p->events_fd < 0) {
            free(p);
            *err = "cannot open the event file";
            return NULL;
        }
    }
    if (o->raft_feed_path) {
        p->feed_fd = open(o->raft_feed_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (p->feed_fd < 0) {
            if (p->events_fd >= 0)
                close(p->events_fd);
            free(p);
            *err = "cannot open the Raft safety feed file";
            return NULL;
        }
    }
    for (int i = 0; i < o->n_nodes; i++)
        p->ids[i] = srv_proc_member_id(o->seed, o->nodes[i]);
    srv_pb_pool_init(&p->pb_pool);
    if (o->join_id) {
        p->dyn[0] = (struct proc_dir){o->join_id, o->node, true};
        p->n_dyn = 1;
    }
    p->m = srv_member_recover(&p->host, env, o->node, o->node);
    if (!p->m && o->join_id) {
        p->m = srv_member_join(&p->host, env, o->node, o->node, o->join_id,
                               srv_proc_cluster_id(o->seed));
    } else if (!p->m) {
        int self = 0;
        for (int i = 0; i < o->n_nodes; i++)
            if (o->nodes[i] == o->node)
                self = i;
        p->m = srv_member_boot(&p->host, env, o->node, o->node, p->ids[self],
                               srv_proc_cluster_id(o->seed), p->ids, (size_t)o->n_nodes);
    }
    char d[128];
    snprintf(d, sizeof d, "started (incarnation %u): applied %" PRIu64 ", last index %" PRIu64,
             env_incarnation(env), p->m->app.applied, raft_last_index(p->m->raft));
    if (o->join_id && !env_incarnation(env))
        srv_member_event(p->m, SRV_EV_RESTART, SRV_EV_JOINED_DETAIL); /* as the simulator's */
    else
        srv_member_event(p->m, env_incarnation(env) ? SRV_EV_RESTART : "start", d);
    return p;
}

void srv_proc_status(struct srv_proc *p, struct srv_member_status *out)
{
    srv_member_status(p->m, out);
}

void srv_proc_event(struct srv_proc *p, const char *kind, const char *detail)
{
    srv_member_event(p->m, kind, detail);
}

bool srv_proc_removed(const struct srv_proc *p)
{
    return p->removed;
}

void srv_proc_stop(struct srv_proc *p)
{
    if (!p)
        return;
    srv_member_free(p->m);
    fl_arena_pool_close(&p->pb_pool);
    if (p->events_fd >= 0)
        close(p->events_fd);
    if (p->feed_fd >= 0)
        close(p->feed_fd);
    for (int i = 0; i < p->n_feeds; i++)
        raft_safety_free(p->feeds[i].rec);
    free(p);
}

/* ---- backup and restore (the live target) --------------------------------------- */

int srv_proc_backup_db(const uint8_t *bk, size_t len, const uint8_t **db, size_t *db_len)
{
    struct srv_db_image img;
    /* backup.h: "FLBK", u32 version, the db image, its SHA-256 (32 bytes) */
    if (len < 8 + 32 || memcmp(bk, "FLBK", 4) ||
        srv_backup_open(bk, len, false, &img) != SRV_BACKUP_OK)
        return FL_ECORRUPT;
    *db = bk + 8;
    *db_len = len - 8 - 32;
    return FL_OK;
}

int srv_proc_restore_check(const uint8_t *data, size_t len, bool skip_hash_check, char *text,
                           size_t text_len)
{
    struct srv_db_image img;
    enum srv_backup_err e = srv_backup_open(data, len, skip_hash_check, &img);
    if (e == SRV_BACKUP_OK)
        return FL_OK;
    srv_backup_err_format(e, data, len, text, text_len);
    return e == SRV_BACKUP_BAD_FORMAT ? FL_EINVAL : FL_ECORRUPT;
}

static int cmp_id(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int srv_proc_restore_dir(struct fl_env *env, const uint8_t *data, size_t len, bool skip_hash_check,
                         uint64_t member_id, uint64_t cluster_id, const uint64_t *ids, int n,
                         char *text, size_t text_len)
{
    int rc = srv_proc_restore_check(data, len, skip_hash_check, text, text_len);
    if (rc)
        return rc;
    struct srv_db_image img;
    srv_backup_open(data, len, skip_hash_check, &img);
    struct raft_conf_state conf;
    memset(&conf, 0, sizeof conf);
    for (int i = 0; i < n && i < RAFT_NODES_MAX; i++)
        conf.voters[conf.voters_count++] = ids[i];
    qsort(conf.voters, conf.voters_count, sizeof conf.voters[0], cmp_id);
    rc =
        srv_disk_write_restored(env, member_id, cluster_id, &img, &conf, img.index ? img.index : 1);
    if (rc)
        snprintf(text, text_len, "cannot write the restored data directory: %s", fl_strerror(rc));
    return rc;
}
