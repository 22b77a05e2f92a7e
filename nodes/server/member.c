/*
 * member.c: one member's life on its sim process: boot, recovery from the simulated
 * disk, the tick timer, and the Raft Ready loop (DESIGN §3.1):
 *
 *   ready -> write snapshot / entries / hard state to the WAL -> fsync ->
 *   send messages -> apply committed entries -> answer reads -> advance.
 *
 * Messages that promise durability (votes, append acknowledgements) leave only
 * after the fsync completed, unless FL_BUG(RAFT_ACK_BEFORE_FSYNC) sends them first.
 * A ready that changes only the commit index or carries only messages needs no
 * fsync (etcd's mustSync rule) and is handled at once.
 *
 * Disk layout (names on the sim disk): "wal/<seq>.wal" WAL segments (wal.h records),
 * "snap/<index>.snap" snapshot files ([u32 len][u32 crc][payload]); the db file of
 * etcd is the snapshot image plus the WAL's applied entries, rebuilt in memory.
 *
 * Never: block, read a wall clock, or touch another member's memory.
 */
#include "nodes/server/srv_int.h"

#include <inttypes.h>

static void member_tick(void *ctx);

const struct srv_config *srv_member_config(const struct srv_member *m)
{
    return srv_host_config(m->host);
}

int64_t srv_member_now(const struct srv_member *m)
{
    return env_local_ns(m->env);
}

int64_t srv_member_request_timeout_ns(const struct srv_member *m)
{
    const struct srv_config *c = srv_member_config(m);
    if (c->request_timeout_ms > 0)
        return c->request_timeout_ms * FL_MS;
    return 5 * FL_S + 2 * c->election_ms * FL_MS;
}

void srv_member_event(struct srv_member *m, const char *kind, const char *detail)
{
    srv_host_emit(m->host, &(struct srv_event){.node = m->node,
                                               .member_id = m->id,
                                               .kind = kind,
                                               .term = raft_term(m->raft),
                                               .detail = detail});
}

void srv_member_event_lease_end(struct srv_member *m, int64_t id, int64_t revision,
                                const struct srv_bytes *keys, size_t n_keys)
{
    char d[96];
    snprintf(d, sizeof d, "lease %" PRIx64 " expired: %zu keys deleted at revision %" PRId64,
             (uint64_t)id, n_keys, revision);
    srv_host_emit(m->host, &(struct srv_event){.node = m->node,
                                               .member_id = m->id,
                                               .kind = SRV_EV_LEASE_END,
                                               .term = raft_term(m->raft),
                                               .detail = d,
                                               .revision = revision,
                                               .store_rev = revision,
                                               .lease_id = id,
                                               .keys = keys,
                                               .n_keys = n_keys});
}

void srv_member_event_compact(struct srv_member *m, int64_t revision, const char *detail)
{
    srv_host_emit(m->host, &(struct srv_event){.node = m->node,
                                               .member_id = m->id,
                                               .kind = SRV_EV_COMPACT,
                                               .term = raft_term(m->raft),
                                               .detail = detail,
                                               .f = {.index = (uint64_t)FL_MAX(0, revision)},
                                               .revision = revision,
                                               .store_rev = mvcc_current_rev(m->kv)});
    srv_member_hook(m, SRV_HOOK_COMPACT, (uint64_t)FL_MAX(0, revision), 0, false, detail);
}

/* Calls the host's typed-event hook, if one is wanted, for member m. */
void srv_member_hook(struct srv_member *m, enum srv_hook_kind kind, uint64_t index, uint64_t peer,
                     bool pre, const char *detail)
{
    srv_member_hook_reason(m, kind, index, peer, pre, NULL, detail);
}

void srv_member_hook_reason(struct srv_member *m, enum srv_hook_kind kind, uint64_t index,
                            uint64_t peer, bool pre, const char *reason, const char *detail)
{
    if (!srv_host_hooked(m->host))
        return;
    FL_ASSERT((unsigned)kind < SRV_HOOK_KIND_COUNT);
    struct srv_hook_event ev = {.kind = kind,
                                .node = m->node,
                                .term = raft_term(m->raft),
                                .index = index,
                                .peer = peer ? FL_MAX(0, srv_host_dir_node(m->host, peer)) : 0,
                                .pre = pre,
                                .leader = m->soft.role == RAFT_LEADER,
                                .reason = reason,
                                .detail = detail ? detail : ""};
    m->host->ops->hook(m->host, &ev);
}

/* A feed of the online safety checker: true (nothing to check) when the host runs
 * none (a member process: the checker needs every member's feeds, proc.h). */
#define SRV_FEED(m, call) (!(m)->chk.safety || (call))

static uint64_t entry_hash(const struct raft_entry *e)
{
    return fl_hash64(e->data ? (const void *)e->data : "", e->len) ^ ((uint64_t)e->type << 56);
}

static void safety_check(struct srv_member *m, bool ok)
{
    if (!ok)
        m->host->ops->safety_failed(m->host, m->node, m->id, raft_term(m->raft),
                                    raft_safety_violation_json(m->chk.safety));
}

/* Tells the corruption check (checkers/kv_hash.h) the store's state hash when the
 * store reached a revision it has not reported yet (force: whatever the revision, e.g.
 * after the store was replaced). */
static void feed_kv_hash(struct srv_member *m, bool force)
{
    int64_t rev = mvcc_current_rev(m->kv);
    if (!m->chk.kvh || (!force && rev == m->chk.kvh_rev))
        return;
    m->chk.kvh_rev = rev;
    /* the checker's time is the run's reference clock, not this member's own */
    if (!kvhash_feed(m->chk.kvh, m->id, rev, mvcc_state_hash(m->kv), env_now_ns(m->env)))
        m->host->ops->kv_corrupt(m->host, m->node, m->id, raft_term(m->raft),
                                 kvhash_violation_json(m->chk.kvh));
}

static struct raft_safety_conf safety_conf(const struct raft_conf_state *c)
{
    return (struct raft_safety_conf){c->voters, c->voters_count, c->learners, c->learners_count};
}

/* Sends a ready's messages, telling the safety checker first what they promise: the
 * member's term, and its vote (a granted vote, or its own candidacy). Pre-votes carry
 * the term they ask about, not the member's: they promise nothing. */
static void send_msgs(struct srv_member *m, const struct raft_msg *msgs, size_t n)
{
    bool ok = true;
    for (size_t i = 0; i < n; i++) {
        const struct raft_msg *g = &msgs[i];
        if (g->type == RAFT_MSG_PRE_VOTE || g->type == RAFT_MSG_PRE_VOTE_RESP || !g->term)
            continue;
        uint64_t vote = g->type == RAFT_MSG_VOTE                      ? m->id
                        : g->type == RAFT_MSG_VOTE_RESP && !g->reject ? g->to
                                                                      : 0;
        ok = SRV_FEED(m, raft_safety_sent(m->chk.safety, m->id, g->term, vote)) && ok;
    }
    safety_check(m, ok);
    srv_peer_send_msgs(m, msgs, n);
}

/* ---- allocation and timers ---------------------------------------------------- */

static struct srv_member *member_alloc(struct srv_host *host, struct fl_env *env, int node,
                                       int proc, uint64_t id, uint64_t cluster_id, uint64_t applied)
{
    const struct srv_config *c = srv_host_config(host);
    struct srv_member *m = fl_calloc(1, sizeof *m);
    m->host = host;
    m->env = env;
    m->node = node;
    m->proc = proc;
    m->id = id;
    m->cluster_id = cluster_id;
    m->chk.safety = srv_host_safety(host, cluster_id);
    m->chk.kvh = srv_host_kvhash(host, cluster_id);
    /* Proposal ids (and read contexts) never repeat across incarnations: an entry a
     * member proposed before a crash may be applied after its restart, and must not
     * meet a new request waiting under the same id (etcd's ids carry a time prefix).
     * The first incarnation keeps 1, 2, 3, ... */
    m->req.next_req_id = ((uint64_t)env_incarnation(m->env) << 40) + 1;
    m->soft.last_leader_contact_ns = -1;
    m->soft.last_leader_msg_ns = -1;
    m->net.last_refused_ns = INT64_MIN / 2;
    m->soft.tick_ns = c->heartbeat_ms * FL_MS;
    fl_buf_init(&m->scratch);
    fl_buf_init(&m->disk.pending_wal);
    srv_pb_arena_init(&m->pb_peer);
    srv_pb_arena_init(&m->pb_apply);
    srv_peer_cb_init(m);
    srv_rpc_cb_init(m);
    srv_wal_state_init(&m->disk.log);
    m->disk.log.no_data = true;
    raft_ready_init(&m->rd);

    mvcc_config_default(&m->kv_cfg);
    /* etcd: minTTL = (3 * ElectionTicks / 2) heartbeats, rounded up to seconds. */
    int64_t ticks = FL_MAX(1, c->election_ms / c->heartbeat_ms);
    m->kv_cfg.lease_min_ttl_s = ((3 * ticks / 2) * c->heartbeat_ms + 999) / 1000;
    m->kv_cfg.max_txn_ops = c->max_txn_ops;
    m->kv_cfg.watch_queue_max = c->watch_buffer; /* etcd's chanBufLen: one per stream */
    m->kv = mvcc_open(&m->kv_cfg);

    struct raft_config rc;
    raft_config_default(&rc, id, env_rand_u64(m->env));
    rc.election_ticks = (uint32_t)FL_MAX(1, c->election_ms / c->heartbeat_ms);
    rc.heartbeat_ticks = 1;
    rc.pre_vote = srv_host_prevote(host, node);
    rc.check_quorum = c->check_quorum;
    rc.max_msg_bytes = c->max_msg_bytes;
    rc.max_inflight = (uint32_t)c->max_inflight_msgs;
    rc.snapshot_catchup_entries = c->snapshot_catchup_entries;
    rc.applied = applied;
    m->raft = raft_new(&rc);

    enum mvcc_autocompact_mode acm = MVCC_AUTOCOMPACT_OFF;
    if (c->auto_compaction_mode == SRV_AUTOCOMPACT_REVISION)
        acm = MVCC_AUTOCOMPACT_REVISION;
    else if (c->auto_compaction_mode == SRV_AUTOCOMPACT_PERIODIC)
        acm = MVCC_AUTOCOMPACT_PERIODIC;
    mvcc_autocompact_init(&m->maint.ac, acm, c->auto_compaction_retention, srv_member_now(m));
    m->maint.last_progress_ns = srv_member_now(m);
    return m;
}

static void member_start(struct srv_member *m)
{
    srv_peer_listen(m);
    srv_rpc_listen(m);
    env_timer_start(m->env, &m->soft.tick_timer, m->soft.tick_ns, member_tick, m);
}

void srv_member_free(struct srv_member *m)
{
    if (!m)
        return;
    m->stopping = true;
    env_timer_stop(m->env, &m->soft.tick_timer);
    env_timer_stop(m->env, &m->maint.unblock_timer);
    env_timer_stop(m->env, &m->streams.watch_hold_timer);
    env_timer_stop(m->env, &m->disk.delay_timer);
    fl_buf_close(&m->disk.pending_wal);
    free(m->maint.defrag_pending); /* a plain allocation (rpc.c); its answer is moot now */
    if (env_alive(m->env)) {
        srv_peers_close(m);
        srv_rpc_close_all(m);
    }
    for (size_t i = 0; i < m->req.n_waiters; i++)
        if (m->req.waiters[i].req)
            srv_pb_free_owned(m->req.waiters[i].req);
    free(m->req.waiters);
    free(m->net.peers);
    free(m->net.conns);
    free(m->streams.watches);
    free(m->streams.watch_calls);
    free(m->streams.kas);
    for (size_t i = 0; i < m->maint.n_deferred; i++)
        fl_buf_close(&m->maint.deferred[i]);
    free(m->maint.deferred);
    free(m->maint.deferred_sock);
    mvcc_autocompact_close(&m->maint.ac);
    raft_ready_close(&m->rd);
    raft_free(m->raft);
    mvcc_close(m->kv);
    srv_wal_state_close(&m->disk.log);
    fl_buf_close(&m->scratch);
    srv_pb_arena_close(&m->pb_peer);
    srv_pb_arena_close(&m->pb_apply);
    free(m);
}

/* ---- snapshot image (the state a snapshot carries) ----------------------------- */

void srv_member_image(struct srv_member *m, struct fl_buf *out, int64_t pad_to)
{
    struct srv_db_image img;
    memset(&img, 0, sizeof img);
    img.cluster_id = m->cluster_id;
    img.index = m->app.applied;
    img.term = raft_entry_term(m->raft, m->app.applied);
    const struct raft_conf_state *c = &m->app.applied_conf;
    for (uint32_t i = 0; i < c->voters_count && img.members_count < SRV_BACKUP_MEMBERS_MAX; i++) {
        struct srv_db_member *dm = &img.members[img.members_count++];
        dm->id = c->voters[i];
        dm->node = (uint32_t)FL_MAX(0, srv_host_dir_node(m->host, c->voters[i]));
    }
    for (uint32_t i = 0; i < c->learners_count && img.members_count < SRV_BACKUP_MEMBERS_MAX; i++) {
        struct srv_db_member *dm = &img.members[img.members_count++];
        dm->id = c->learners[i];
        dm->node = (uint32_t)FL_MAX(0, srv_host_dir_node(m->host, c->learners[i]));
        dm->learner = true;
    }
    img.alarms_count = m->app.n_alarms;
    for (uint32_t i = 0; i < m->app.n_alarms; i++) {
        img.alarms[i].member = m->app.alarms[i].member;
        img.alarms[i].type = m->app.alarms[i].type;
    }
    size_t start;
    size_t mark = srv_db_encode_begin(&img, out, &start);
    mvcc_snapshot_encode(m->kv, out);
    srv_db_encode_end(out, start, mark, pad_to);
}

/* Replaces the member's state machine with an image (a leader's snapshot, or the
 * member's own at restart). Returns false when the image does not decode. */
static bool member_load_image(struct srv_member *m, const uint8_t *p, size_t n,
                              enum mvcc_restore_reason why)
{
    struct srv_db_image img;
    /* An image is a db image: the backup decoder reads it. */
    if (srv_backup_open(p, n, true, &img) != SRV_BACKUP_OK)
        return false;
    if (mvcc_snapshot_restore(m->kv, img.mvcc, img.mvcc_len, why) != MVCC_OK)
        return false;
    m->app.n_alarms = 0;
    for (uint32_t i = 0; i < img.alarms_count && i < SRV_ALARMS_MAX; i++) {
        m->app.alarms[m->app.n_alarms].member = img.alarms[i].member;
        m->app.alarms[m->app.n_alarms].type = img.alarms[i].type;
        m->app.n_alarms++;
    }
    return true;
}

/* ---- the Ready loop ----------------------------------------------------------- */

/* The log a restarted member recovered, as the safety checker takes it (NULL when it
 * runs none): its disk may hold entries it wrote but never fed (raft_safety.h). */
static struct raft_safety_entry *safety_entries(const struct srv_member *m,
                                                const struct raft_entry *ents, size_t n)
{
    if (!m->chk.safety)
        return NULL;
    struct raft_safety_entry *out = fl_calloc(n + 1, sizeof *out);
    for (size_t i = 0; i < n; i++) {
        const struct raft_entry *e = &ents[i];
        out[i] = (struct raft_safety_entry){
            .index = e->index, .term = e->term, .data_hash = entry_hash(e)};
        struct raft_conf_change cc;
        if (e->type == RAFT_ENTRY_CONF_CHANGE) {
            out[i].conf_change = true;
            out[i].conf_type = raft_conf_change_decode(e, &cc) == FL_OK ? (int)cc.type : -1;
            out[i].conf_member = out[i].conf_type >= 0 ? cc.node_id : 0;
        }
    }
    return out;
}

static void feed_safety_persisted(struct srv_member *m, const struct raft_ready *rd)
{
    bool ok = true;
    if (rd->snapshot) {
        struct raft_safety_conf sc = safety_conf(&rd->snapshot->conf);
        ok = SRV_FEED(m, raft_safety_snapshot_conf(m->chk.safety, m->id, rd->snapshot->index,
                                                   rd->snapshot->term, &sc));
    }
    for (size_t i = 0; i < rd->entries_count; i++) {
        const struct raft_entry *e = &rd->entries[i];
        ok = SRV_FEED(m,
                      raft_safety_append(m->chk.safety, m->id, e->index, e->term, entry_hash(e))) &&
             ok;
        struct raft_conf_change cc;
        if (e->type == RAFT_ENTRY_CONF_CHANGE) {
            int type = raft_conf_change_decode(e, &cc) == FL_OK ? (int)cc.type : -1;
            ok = SRV_FEED(
                     m, raft_safety_conf_entry(m->chk.safety, m->id, e->index, type, cc.node_id)) &&
                 ok;
        }
    }
    if (rd->hard_state_changed)
        ok = SRV_FEED(m, raft_safety_commit(m->chk.safety, m->id, rd->hard_state.commit)) && ok;
    /* a leader's commit is its own count: judged when the checker knows the member led
     * this term before this ready (in the same term nobody else can have moved it,
     * even in the ready where the member stepped down) */
    if (rd->hard_state_changed)
        ok = SRV_FEED(m, raft_safety_leader_commit(m->chk.safety, m->id, rd->hard_state.term,
                                                   rd->hard_state.commit)) &&
             ok;
    if (m->disk.ready_synced)
        if (m->chk.safety)
            raft_safety_synced(m->chk.safety, m->id); /* everything fed so far is on disk */
    m->disk.ready_synced = false;
    safety_check(m, ok);
}

/* Writes what the ready asks to persist. Returns true when an fsync was started
 * (the rest continues in on_ready_synced), false when nothing needed a sync. Sets
 * *crashed when a failpoint killed the process. */
static bool persist_ready(struct srv_member *m, bool *crashed);

static void after_persist(struct srv_member *m);

static void after_save_resume(void *ctx)
{
    struct srv_member *m = ctx;
    after_persist(m);
    m->disk.persisting = false;
    srv_member_process(m);
}

static void on_ready_synced(struct fl_env *env, void *ctx, int err)
{
    struct srv_member *m = ctx;
    if (m->stopping)
        return;
    if (err) {
        /* etcd panics on a failed fsync: the process dies, the disk keeps what synced. */
        fl_log(FL_LOG_INFO, "member %d: fsync failed (%s), crashing", m->node, fl_strerror(err));
        env_crash(env);
        return;
    }
    if (m->disk.hook_append_index) {
        srv_member_hook(m, SRV_HOOK_PERSISTED, m->disk.hook_append_index, 0, false, NULL);
        m->disk.hook_append_index = 0;
    }
    /* What is durable now is what the safety checker must know, even if the member
     * dies before it goes on (raft/after_save crashes right here). */
    m->disk.ready_synced = true;
    feed_safety_persisted(m, &m->rd);
    m->disk.safety_fed = true;
    struct env_fault_hit hit;
    enum env_fault f = env_failpoint(env, FLT_RAFT_AFTER_SAVE, &hit);
    if (f == ENV_FAULT_ERROR)
        env_crash(env);
    if (f == ENV_FAULT_CRASH || f == ENV_FAULT_ERROR)
        return;
    if (f == ENV_FAULT_DROP)
        m->disk.drop_msgs = true; /* this ready's messages are lost on the way out */
    if (f == ENV_FAULT_DELAY && hit.delay_ns > 0) {
        env_timer_start(m->env, &m->disk.delay_timer, hit.delay_ns, after_save_resume, m);
        return;
    }
    after_save_resume(m);
}

static void install_snapshot(struct srv_member *m, const struct raft_snapshot *s)
{
    struct env_fault_hit hit;
    if (env_failpoint(m->env, FLT_SERVER_BEFORE_APPLY_SNAPSHOT, &hit) == ENV_FAULT_CRASH)
        return;
    srv_snap_file_write(m->env, s->index, s->term, &s->conf, s->data, s->len, true);
    srv_wal_put_snapshot(&m->scratch, s->index, s->term, true);
    srv_wal_state_reset(&m->disk.log);
    m->disk.log.snap_index = s->index;
    m->disk.log.snap_term = s->term;
    if (!member_load_image(m, s->data, s->len, MVCC_RESTORE_RAFT_SNAPSHOT))
        FL_ASSERTF(false, "member %d: leader snapshot at %" PRIu64 " does not decode", m->node,
                   s->index);
    m->app.applied = s->index;
    m->app.snap_index = s->index;
    m->app.applied_since_snap = 0;
    m->app.applied_conf = s->conf;
    mvcc_set_applied_index(m->kv, s->index);
    feed_kv_hash(m, true);
    struct raft_safety_conf sc = safety_conf(&s->conf);
    safety_check(
        m, SRV_FEED(m, raft_safety_snapshot_conf(m->chk.safety, m->id, s->index, s->term, &sc)));
    srv_member_hook(m, SRV_HOOK_SNAPSHOT_INSTALL, s->index, m->soft.leader, false, NULL);
    /* The core reports snapshot_applied itself (raft events of this ready). */
}

/* Appends to the current WAL segment; a write error crashes the member (etcd
 * panics). Returns false when the process died. */
static bool wal_write(struct srv_member *m, const uint8_t *p, size_t n)
{
    int err = env_file_append(m->env, m->disk.wal_name, p, n);
    if (err == FL_EIO)
        env_crash(m->env);
    return err == FL_OK;
}

static void delayed_save(void *ctx)
{
    struct srv_member *m = ctx;
    if (!wal_write(m, m->disk.pending_wal.data, m->disk.pending_wal.len))
        return;
    if (m->disk.hook_append_index)
        srv_member_hook(m, SRV_HOOK_APPEND, m->disk.hook_append_index, 0, false, NULL);
    env_file_fsync(m->env, m->disk.wal_name, on_ready_synced, m);
}

/* Applies one committed entry and records it as applied (member, mvcc, then the
 * kv-hash feed when feed_hash and the safety checker): false when a checker failed. */
static bool apply_committed(struct srv_member *m, const struct raft_entry *e, bool feed_hash)
{
    srv_apply_entry(m, e);
    m->app.applied = e->index;
    m->app.applied_term = e->term;
    mvcc_set_applied_index(m->kv, e->index);
    if (feed_hash)
        feed_kv_hash(m, false);
    return SRV_FEED(m, raft_safety_apply(m->chk.safety, m->id, e->index, e->term, entry_hash(e)));
}

/* Applies rd's committed entries the member has not applied yet, in order, until it
 * stops, then reports a checker failure. in_apply_loop: the apply loop proper
 * (after_persist), where each entry first passes FLT_SERVER_BEFORE_APPLY — a crash there
 * stops the member at once, before the report — and feeds the kv-hash check. */
static void apply_ready_entries(struct srv_member *m, const struct raft_ready *rd,
                                bool in_apply_loop)
{
    struct env_fault_hit hit;
    bool ok = true;
    for (size_t i = 0; i < rd->committed_count && !m->stopping; i++) {
        const struct raft_entry *e = &rd->committed[i];
        if (e->index <= m->app.applied)
            continue;
        if (in_apply_loop &&
            env_failpoint(m->env, FLT_SERVER_BEFORE_APPLY, &hit) == ENV_FAULT_CRASH) {
            m->stopping = true;
            return;
        }
        ok = apply_committed(m, e, in_apply_loop) && ok;
    }
    safety_check(m, ok);
}

/* FL_BUG(SERVER_APPLY_BEFORE_WAL_SYNC), etcd#14370 (etcd <= 3.5.4): the apply loop ran
 * while the raft loop was still saving the same ready to the WAL. A member alone in its
 * cluster commits its own entries as it appends them, so it answered clients before
 * they were durable. The fix waits for the WAL sync when committed entries are among
 * the ones being saved. Called once the ready's bytes left m->scratch. */
static void apply_before_sync(struct srv_member *m, const struct raft_ready *rd)
{
    if (FL_BUG(SERVER_APPLY_BEFORE_WAL_SYNC))
        apply_ready_entries(m, rd, false); /* after_persist skips what is applied here */
}

static void send_early(struct srv_member *m, const struct raft_ready *rd)
{
    send_msgs(m, rd->msgs, rd->msgs_count);
    m->disk.sent_early = true;
}

static bool persist_ready(struct srv_member *m, bool *crashed)
{
    const struct raft_ready *rd = &m->rd;
    bool term_or_vote = rd->hard_state_changed && (rd->hard_state.term != m->disk.log.term ||
                                                   rd->hard_state.vote != m->disk.log.vote);
    bool must_sync = rd->snapshot || rd->entries_count || term_or_vote;
    *crashed = false;
    if (!rd->snapshot && !rd->entries_count && !rd->hard_state_changed)
        return false;
    struct env_fault_hit hit;
    enum env_fault f = env_failpoint(m->env, FLT_RAFT_BEFORE_SAVE, &hit);
    if (f == ENV_FAULT_ERROR) /* etcd panics when its WAL cannot be written */
        env_crash(m->env);
    if (f == ENV_FAULT_CRASH || f == ENV_FAULT_ERROR) {
        *crashed = true;
        return false;
    }
    fl_buf_reset(&m->scratch);
    if (rd->snapshot) {
        install_snapshot(m, rd->snapshot);
        if (!env_alive(m->env)) {
            *crashed = true;
            return false;
        }
    }
    for (size_t i = 0; i < rd->entries_count; i++) {
        const struct raft_entry *e = &rd->entries[i];
        srv_wal_put_entry(&m->scratch, e->term, e->index, e->type, e->data, e->len);
        srv_wal_state_append(&m->disk.log, e->term, e->index, e->type, e->data, e->len);
    }
    if (rd->hard_state_changed) {
        srv_wal_put_hardstate(&m->scratch, rd->hard_state.term, rd->hard_state.vote,
                              rd->hard_state.commit);
        m->disk.log.term = rd->hard_state.term;
        m->disk.log.vote = rd->hard_state.vote;
        m->disk.log.commit = rd->hard_state.commit;
    }
    m->disk.hook_append_index = rd->entries_count && srv_host_hooked(m->host)
                                    ? rd->entries[rd->entries_count - 1].index
                                    : 0;
    /* FL_BUG(RAFT_ACK_BEFORE_FSYNC): votes and append acknowledgements leave before they
     * are durable: right after the write, before its fsync (or, on a slow disk, before
     * the write). They go after the WAL bytes are taken, as sending reuses scratch. */
    bool early = must_sync && FL_BUG(RAFT_ACK_BEFORE_FSYNC) && rd->msgs_count;
    if (must_sync && f == ENV_FAULT_DELAY && hit.delay_ns > 0) {
        /* A slow disk: the write and its fsync start later; nothing waits less. */
        m->disk.persisting = true;
        fl_buf_reset(&m->disk.pending_wal);
        fl_buf_append(&m->disk.pending_wal, m->scratch.data, m->scratch.len);
        env_timer_start(m->env, &m->disk.delay_timer, hit.delay_ns, delayed_save, m);
        if (early)
            send_early(m, rd);
        apply_before_sync(m, rd);
        return true;
    }
    if (!wal_write(m, m->scratch.data, m->scratch.len)) {
        *crashed = true;
        return false;
    }
    if (early)
        send_early(m, rd);
    if (!must_sync)
        return false;
    apply_before_sync(m, rd);
    m->disk.persisting = true;
    if (m->disk.hook_append_index)
        srv_member_hook(m, SRV_HOOK_APPEND, m->disk.hook_append_index, 0, false, NULL);
    env_file_fsync(m->env, m->disk.wal_name, on_ready_synced, m);
    return true;
}

/* A local snapshot of the applied state (etcd: every snapshot_count applied entries;
 * force: now, e.g. after a defrag rewrote the backend, so a restart comes back with
 * the defragmented size). Returns false when the failpoint raft/before_save_snap
 * killed the process (the caller unwinds). */
static bool take_snapshot(struct srv_member *m, bool force)
{
    const struct srv_config *c = srv_member_config(m);
    if (!force && (m->app.applied <= m->app.snap_index ||
                   m->app.applied - m->app.snap_index < c->snapshot_count))
        return true;
    if (m->app.applied == 0)
        return true;
    struct env_fault_hit hit;
    if (!force && env_failpoint(m->env, FLT_RAFT_BEFORE_SAVE_SNAP, &hit) == ENV_FAULT_CRASH) {
        m->stopping = true;
        return false;
    }
    uint64_t term = raft_entry_term(m->raft, m->app.applied);
    if (term == 0 && m->app.applied == m->disk.log.snap_index)
        term = m->disk.log.snap_term;
    /* The image goes straight into the snapshot file's buffer, which the disk takes. */
    struct fl_buf f;
    fl_buf_init(&f);
    size_t off = srv_snap_file_begin(&f, m->app.applied, term, &m->app.applied_conf);
    srv_member_image(m, &f, 0);
    bool compacted = false;
    if (m->app.applied > m->app.snap_index)
        compacted = raft_compact(m->raft, m->app.applied, NULL, 0) == FL_OK; /* data: the file */
    if (!compacted && !force) {
        fl_buf_close(&f);
        return true;
    }
    srv_snap_file_finish(m->env, m->app.applied, &f, off, true);
    m->app.snap_index = m->app.applied;
    m->disk.log.snap_index = m->app.applied;
    m->disk.log.snap_term = term;
    if (compacted) {
        uint64_t first = raft_first_index(m->raft);
        if (first > 0)
            srv_wal_state_compact(&m->disk.log, first - 1);
        srv_wal_rotate(m);
    }
    char d[64];
    snprintf(d, sizeof d, "snapshot at index %" PRIu64, m->app.applied);
    srv_host_emit(m->host, &(struct srv_event){.node = m->node,
                                               .member_id = m->id,
                                               .kind = SRV_EV_SNAPSHOT,
                                               .term = raft_term(m->raft),
                                               .detail = d,
                                               .f = {.index = m->app.applied}});
    srv_member_hook(m, SRV_HOOK_SNAPSHOT, m->app.applied, 0, false, d);
    return true;
}

/* FL_BUG(SERVER_DEFRAG_STALE_CONSISTENT_INDEX), etcd#14685: defragmentation committed
 * the rewritten backend without the hook that stores the consistent index, so the new
 * db file held the current data under the index of the previous commit. Here the db
 * is the snapshot file: the bug rewrites the newest one with the current image but
 * keeps its index, term and configuration, and leaves the WAL alone (a defrag does not
 * touch it), so a restart replays the entries after that index a second time. */
static void save_db_stale_index(struct srv_member *m)
{
    uint64_t index = 0, term = 0;
    struct raft_conf_state conf;
    uint8_t *old = NULL;
    size_t old_len = 0;
    if (!srv_snap_file_read(m->env, &index, &term, &conf, &old, &old_len)) {
        index = 0; /* no commit yet: the db's consistent index is still 0 */
        term = 0;
        conf = m->app.applied_conf;
    }
    free(old);
    struct fl_buf f;
    fl_buf_init(&f);
    size_t off = srv_snap_file_begin(&f, index, term, &conf);
    srv_member_image(m, &f, 0);
    srv_snap_file_finish(m->env, index, &f, off, true);
}

void srv_member_save_db(struct srv_member *m)
{
    if (FL_BUG(SERVER_DEFRAG_STALE_CONSISTENT_INDEX)) {
        save_db_stale_index(m);
        return;
    }
    (void)take_snapshot(m, true); /* forced: no failpoint, nothing to unwind */
}

/* The configuration the member had in force when it won the term of rd: the one at
 * its last index then (the leader event names the index after it, its empty entry).
 * Not the configuration now: a member leading alone can append, in the ready where it
 * won, a pending change adding a second voter (chaos mix91 world 5006), and that
 * configuration never counted its votes. */
static const struct raft_conf_state *elected_conf(const struct srv_member *m,
                                                  const struct raft_ready *rd)
{
    for (size_t i = rd->events_count; i > 0; i--) {
        const struct raft_event *ev = &rd->events[i - 1];
        if (ev->kind == RAFT_EV_LEADER && ev->term == rd->hard_state.term && ev->index > 0)
            return raft_conf_at(m->raft, ev->index - 1);
    }
    return raft_conf(m->raft);
}

static void handle_soft_state(struct srv_member *m, const struct raft_ready *rd)
{
    if (!rd->soft_state_changed)
        return;
    bool was_leader = m->soft.role == RAFT_LEADER;
    uint64_t old_leader = m->soft.leader;
    m->soft.role = rd->role;
    m->soft.leader = rd->leader;
    if (rd->role == RAFT_LEADER && !was_leader) {
        /* The term it won, as of this ready: by the time the ready is durable the core
         * may have stepped down to a later term (a paused member replaying its votes and
         * then a newer leader's messages), in which another member leads. The votes
         * first: a leader elected without a quorum is the cause of what the leader
         * checks (e.g. leader completeness) would find next. */
        struct raft_safety_conf sc = safety_conf(elected_conf(m, rd));
        bool ok = SRV_FEED(m, raft_safety_elected(m->chk.safety, m->id, rd->hard_state.term, &sc));
        ok = SRV_FEED(m, raft_safety_leader(m->chk.safety, m->id, rd->hard_state.term)) && ok;
        safety_check(m, ok);
        const struct srv_config *c = srv_member_config(m);
        mvcc_lease_promote(m->kv, srv_member_now(m), c->election_ms * FL_MS);
        mvcc_autocompact_pause(&m->maint.ac, false); /* etcd: compactor.Resume() */
    } else if (rd->role != RAFT_LEADER && was_leader) {
        safety_check(m, SRV_FEED(m, raft_safety_not_leader(m->chk.safety, m->id)));
        mvcc_lease_demote(m->kv);
        mvcc_autocompact_pause(&m->maint.ac, true); /* etcd: compactor.Pause() */
    }
    if (m->soft.leader != RAFT_NONE)
        m->soft.last_leader_contact_ns = srv_member_now(m);
    if (old_leader != m->soft.leader)
        srv_rpc_leader_changed(m);
}

/* The typed hook for the Raft events that have one. */
static void hook_raft_event(struct srv_member *m, const struct raft_event *ev)
{
    static const int kinds[RAFT_EV_KIND_COUNT] = {
        [RAFT_EV_CAMPAIGN] = -1,
        [RAFT_EV_PREVOTE] = -1,
        [RAFT_EV_VOTE_GRANTED] = SRV_HOOK_VOTE_GRANTED,
        [RAFT_EV_VOTE_REJECTED] = -1,
        [RAFT_EV_LEADER] = SRV_HOOK_LEADER,
        [RAFT_EV_STEP_DOWN] = -1,
        [RAFT_EV_TERM] = SRV_HOOK_TERM,
        [RAFT_EV_CONF_CHANGE] = SRV_HOOK_CONF_CHANGE,
        [RAFT_EV_SNAPSHOT_SENT] = SRV_HOOK_SNAPSHOT_SENT,
        [RAFT_EV_SNAPSHOT_APPLIED] = SRV_HOOK_SNAPSHOT_APPLIED,
        [RAFT_EV_FOLLOWER_LOST] = -1,
    };
    if (!srv_host_hooked(m->host) || kinds[ev->kind] < 0)
        return;
    srv_member_hook_reason(m, (enum srv_hook_kind)kinds[ev->kind], ev->index, ev->peer, ev->pre,
                           raft_reason_name(ev->reason), ev->detail);
}

/* A Raft event's typed facts for its node_events row. */
static struct srv_event_fields raft_event_fields(const struct srv_member *m,
                                                 const struct raft_event *ev)
{
    struct srv_event_fields f = {.index = ev->index, .reason = raft_reason_name(ev->reason)};
    if (ev->peer)
        f.peer = FL_MAX(0, srv_host_dir_node(m->host, ev->peer));
    if (ev->role_change) {
        f.from_state = raft_role_name(ev->from);
        f.to_state = raft_role_name(ev->to);
    }
    f.vote = ev->kind == RAFT_EV_VOTE_GRANTED || ev->kind == RAFT_EV_VOTE_REJECTED;
    f.pre = f.vote && ev->pre;
    return f;
}

static void emit_raft_events(struct srv_member *m, const struct raft_ready *rd)
{
    for (size_t i = 0; i < rd->events_count; i++) {
        const struct raft_event *ev = &rd->events[i];
        char detail[200];
        if (ev->peer)
            snprintf(detail, sizeof detail, "%s%speer=%d", ev->detail, ev->detail[0] ? " " : "",
                     srv_host_dir_node(m->host, ev->peer));
        else
            snprintf(detail, sizeof detail, "%s", ev->detail);
        srv_host_emit(m->host, &(struct srv_event){.node = m->node,
                                                   .member_id = m->id,
                                                   .kind = raft_event_kind_name(ev->kind),
                                                   .term = ev->term,
                                                   .detail = detail,
                                                   .f = raft_event_fields(m, ev)});
        if (ev->kind == RAFT_EV_LEADER)
            m->soft.leader_announced_term = ev->term;
        hook_raft_event(m, ev);
    }
    /* The core's notes are log lines only: no history row, no digest. */
    for (size_t i = 0; i < rd->notes_count; i++)
        fl_log(FL_LOG_DEBUG, "member %d: raft %s: %s", m->node,
               raft_event_kind_name(rd->notes[i].kind), rd->notes[i].detail);
}

static void after_persist(struct srv_member *m)
{
    struct raft_ready *rd = &m->rd;
    if (!m->disk.safety_fed)
        feed_safety_persisted(m, rd); /* no fsync: fed here */
    m->disk.safety_fed = false;
    struct env_fault_hit hit;
    if (rd->snapshot &&
        env_failpoint(m->env, FLT_SERVER_AFTER_APPLY_SNAPSHOT, &hit) == ENV_FAULT_CRASH) {
        m->stopping = true;
        return;
    }
    if (!m->disk.sent_early && !m->disk.drop_msgs && rd->msgs_count)
        send_msgs(m, rd->msgs, rd->msgs_count);
    m->disk.sent_early = false;
    m->disk.drop_msgs = false;
    handle_soft_state(m, rd);
    enum env_fault f =
        rd->committed_count ? env_failpoint(m->env, FLT_MVCC_BEFORE_COMMIT, &hit) : ENV_FAULT_NONE;
    if (f == ENV_FAULT_ERROR)
        env_crash(m->env); /* etcd panics when the backend cannot commit */
    if (f == ENV_FAULT_CRASH || f == ENV_FAULT_ERROR) {
        m->stopping = true;
        return;
    }
    apply_ready_entries(m, rd, true);
    if (m->stopping)
        return; /* a crash failpoint in the apply (compaction) killed the process */
    if (rd->committed_count &&
        env_failpoint(m->env, FLT_MVCC_AFTER_COMMIT, &hit) == ENV_FAULT_CRASH) {
        m->stopping = true;
        return;
    }
    for (size_t i = 0; i < rd->reads_count; i++) {
        struct srv_waiter *wt = srv_waiter_find(m, rd->reads[i].context);
        if (wt && wt->kind == SRV_WAIT_READ) {
            wt->read_index = rd->reads[i].index;
            wt->read_ready = true;
            m->req.reads_ready = true;
        }
    }
    emit_raft_events(m, rd);
    raft_advance(m->raft, rd);
    if (!take_snapshot(m, false))
        return;
    if (m->app.bug_reset_at && m->app.applied >= m->app.bug_reset_at) {
        m->app.bug_reset_at = 0;
        struct fl_buf kv;
        fl_buf_init(&kv);
        mvcc_snapshot_encode(m->kv, &kv);
        mvcc_snapshot_restore(m->kv, kv.data, kv.len, MVCC_RESTORE_RESTART);
        fl_buf_close(&kv);
        feed_kv_hash(m, true);
    }
    srv_rpc_after_apply(m);
}

void srv_member_process(struct srv_member *m)
{
    int guard = 0;
    while (!m->disk.persisting && !m->stopping && raft_has_ready(m->raft)) {
        FL_ASSERT(++guard < 1000000);
        raft_ready(m->raft, &m->rd);
        bool crashed = false;
        if (persist_ready(m, &crashed))
            return;
        if (crashed)
            return;
        after_persist(m);
    }
}

/* ---- tick ----------------------------------------------------------------------- */

static void member_tick(void *ctx)
{
    struct srv_member *m = ctx;
    env_timer_start(m->env, &m->soft.tick_timer, m->soft.tick_ns, member_tick, m);
    if (m->removed)
        return;
    m->soft.ticks++;
    raft_tick(m->raft);
    if (raft_leader(m->raft) == RAFT_NONE)
        m->soft.no_leader_ticks++;
    else
        m->soft.no_leader_ticks = 0;
    srv_rpc_tick(m);
    srv_peers_tick(m);
    srv_member_process(m);
}

/* ---- boot and recovery ------------------------------------------------------------ */

static void wal_start_fresh(struct srv_member *m)
{
    m->disk.wal_seq = 1;
    srv_wal_segment_name(m->disk.wal_name, sizeof m->disk.wal_name, m->disk.wal_seq);
    struct fl_buf b;
    fl_buf_init(&b);
    fl_buf_reserve(&b, SRV_WAL_SEGMENT_BYTES);
    srv_wal_put_meta(&b, m->id, m->cluster_id);
    m->disk.log.member_id = m->id;
    m->disk.log.cluster_id = m->cluster_id;
    env_file_put(m->env, m->disk.wal_name, &b);
}

struct srv_member *srv_member_boot(struct srv_host *host, struct fl_env *env, int node, int proc,
                                   uint64_t id, uint64_t cluster_id, const uint64_t *voters,
                                   size_t n_voters)
{
    struct srv_member *m = member_alloc(host, env, node, proc, id, cluster_id, 0);
    wal_start_fresh(m);
    int err = raft_bootstrap(m->raft, voters, n_voters);
    FL_ASSERT(err == FL_OK);
    member_start(m);
    srv_member_process(m);
    return m;
}

struct srv_member *srv_member_join(struct srv_host *host, struct fl_env *env, int node, int proc,
                                   uint64_t id, uint64_t cluster_id)
{
    struct srv_member *m = member_alloc(host, env, node, proc, id, cluster_id, 0);
    wal_start_fresh(m);
    env_file_fsync(m->env, m->disk.wal_name, srv_fsync_ignore, NULL);
    member_start(m);
    return m;
}

/* The longest prefix of the entries a restart recovered that is a Raft log: indexes
 * follow each other after the snapshot, terms never go down. A correct member's disk
 * always holds one; a WAL that does not (a log that lost synced entries to a bug, then
 * took others over them) is a safety violation of the member's durable state, reported
 * to the online checker like any other (etcd would refuse to start: "was the raft log
 * corrupted, truncated, or lost?"); the member runs on with the valid prefix so that
 * the run can end and be judged. */
static size_t log_prefix_ok(struct srv_member *m, uint64_t snap_index, uint64_t snap_term,
                            const struct raft_entry *e, size_t n)
{
    uint64_t last = snap_index, last_term = snap_term;
    for (size_t i = 0; i < n; i++) {
        if (e[i].index <= snap_index)
            continue;
        if (e[i].index == last + 1 && e[i].term >= last_term) {
            last = e[i].index;
            last_term = e[i].term;
            continue;
        }
        char d[320];
        snprintf(d, sizeof d,
                 "{\"property\":\"durable_log\",\"node\":%" PRIu64 ",\"index\":%" PRIu64
                 ",\"term\":%" PRIu64 ",\"detail\":\"member %d restarts with a WAL that is not a "
                 "Raft log: entry %" PRIu64 "/%" PRIu64 " after %" PRIu64 "/%" PRIu64 "\"}",
                 m->id, e[i].index, e[i].term, m->node, e[i].index, e[i].term, last, last_term);
        m->host->ops->safety_failed(m->host, m->node, m->id, 0, d);
        return i;
    }
    return n;
}

struct srv_member *srv_member_recover(struct srv_host *host, struct fl_env *env, int node, int proc)
{
    struct srv_wal_state st;
    srv_wal_state_init(&st);
    uint64_t seq = 0;
    char name[48] = "";
    srv_wal_replay_disk(env, &st, &seq, name, sizeof name);
    if (!st.member_id) {
        srv_wal_state_close(&st);
        return NULL; /* never persisted its identity: the caller boots it afresh */
    }
    struct raft_snapshot snap;
    memset(&snap, 0, sizeof snap);
    uint8_t *snap_data = NULL;
    size_t snap_len = 0;
    bool have_snap =
        srv_snap_file_read(env, &snap.index, &snap.term, &snap.conf, &snap_data, &snap_len);
    snap.data = snap_data;
    snap.len = snap_len;

    struct srv_member *m = member_alloc(host, env, node, proc, st.member_id, st.cluster_id,
                                        have_snap ? snap.index : 0);
    /* FL_BUG(MVCC_REVISION_RESET_ON_RESTART) without a snapshot file: once the replay of
     * the WAL reaches the commit index, the store is reloaded "for a restart" too. */
    if (FL_BUG(MVCC_REVISION_RESET_ON_RESTART) && st.commit > (have_snap ? snap.index : 0))
        m->app.bug_reset_at = st.commit;
    if (have_snap) {
        bool ok = member_load_image(m, snap_data, snap_len, MVCC_RESTORE_RESTART);
        FL_ASSERTF(ok, "member %d: snapshot file does not decode", node);
        m->app.applied = snap.index;
        m->app.snap_index = snap.index;
        m->app.applied_conf = snap.conf;
        mvcc_set_applied_index(m->kv, snap.index);
        /* Entries after a snapshot that do not continue it belong to a log the
         * snapshot replaced (a crash between the snapshot file and its WAL record). */
        for (size_t i = 0; i < st.n_entries; i++) {
            if (st.entries[i].index == snap.index && st.entries[i].term != snap.term) {
                srv_wal_state_reset(&st);
                break;
            }
        }
        if (st.n_entries && st.entries[0].index > snap.index + 1)
            srv_wal_state_reset(&st);
        srv_wal_state_compact(&st, snap.index);
    }
    struct raft_entry *ents = fl_calloc(st.n_entries + 1, sizeof *ents);
    for (size_t i = 0; i < st.n_entries; i++) {
        ents[i].index = st.entries[i].index;
        ents[i].term = st.entries[i].term;
        ents[i].type = (enum raft_entry_type)st.entries[i].type;
        ents[i].data = st.entries[i].data;
        ents[i].len = st.entries[i].len;
    }
    struct raft_hard_state hs = {st.term, st.vote, st.commit};
    snap.data = NULL; /* the core keeps no copy: a leader reads the file to send it */
    snap.len = 0;
    size_t n_ok =
        log_prefix_ok(m, have_snap ? snap.index : 0, have_snap ? snap.term : 0, ents, st.n_entries);
    int err = raft_restore(m->raft, &hs, have_snap ? &snap : NULL, ents, n_ok);
    FL_ASSERTF(err == FL_OK, "member %d: raft_restore failed (%s)", node, fl_strerror(err));
    struct raft_safety_entry *boot_ents = safety_entries(m, ents, n_ok);
    free(ents);
    free(snap_data);

    srv_wal_state_close(&m->disk.log);
    m->disk.log = st; /* the mirror is what the disk holds */
    srv_wal_state_drop_data(&m->disk.log);
    m->disk.wal_seq = seq;
    snprintf(m->disk.wal_name, sizeof m->disk.wal_name, "%s", name);
    m->soft.term = st.term;
    struct raft_status rs;
    raft_status_get(m->raft, &rs);
    struct raft_safety_conf sc = safety_conf(&rs.conf);
    struct raft_safety_boot boot = {.term = rs.term,
                                    .vote = rs.vote,
                                    .commit = rs.commit,
                                    .last_index = rs.last_index,
                                    .applied = m->app.applied,
                                    .conf = &sc,
                                    .entries = boot_ents,
                                    .n_entries = boot_ents ? n_ok : 0};
    safety_check(m, SRV_FEED(m, raft_safety_recovered(m->chk.safety, m->id, &boot)));
    free(boot_ents);
    feed_kv_hash(m, true); /* its store as restored, before it re-applies its log */
    member_start(m);
    srv_member_process(m);
    return m;
}

/* The member's alarms in a fixed order (its own array is reordered by removals). */
static void status_alarms(const struct srv_member *m, struct srv_member_status *out)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < m->app.n_alarms && n < SRV_STATUS_ALARMS_MAX; i++) {
        struct srv_alarm_info a = {m->app.alarms[i].member, m->app.alarms[i].type};
        uint32_t k = n++;
        while (k > 0 && (out->alarms[k - 1].member_id > a.member_id ||
                         (out->alarms[k - 1].member_id == a.member_id &&
                          out->alarms[k - 1].type > a.type))) {
            out->alarms[k] = out->alarms[k - 1];
            k--;
        }
        out->alarms[k] = a;
    }
    out->n_alarms = n;
}

const char *srv_alarm_type_name(uint32_t type)
{
    switch (type) {
    case RPC__ALARM_TYPE__NOSPACE:
        return "NOSPACE";
    case RPC__ALARM_TYPE__CORRUPT:
        return "CORRUPT";
    default:
        return "NONE";
    }
}

void srv_member_status(struct srv_member *m, struct srv_member_status *out)
{
    memset(out, 0, sizeof *out);
    struct raft_status st;
    raft_status_get(m->raft, &st);
    out->member_id = m->id;
    out->cluster_id = m->cluster_id;
    out->leader_id = st.leader;
    out->raft_term = st.term;
    out->applied_term = m->app.applied_term;
    out->raft_index = st.last_index;
    out->raft_last_term = st.last_term;
    out->raft_applied = m->app.applied;
    out->commit_index = st.commit;
    out->revision = mvcc_current_rev(m->kv);
    out->compact_revision = mvcc_compact_rev(m->kv);
    out->db_size_bytes = mvcc_size_bytes(m->kv);
    out->db_size_in_use_bytes = mvcc_live_bytes(m->kv);
    out->is_learner = raft_conf_is_learner(&st.conf, m->id);
    out->nospace_alarm = srv_alarm_active(m, RPC__ALARM_TYPE__NOSPACE);
    status_alarms(m, out);
    out->last_quorum_contact_ns = m->soft.last_leader_contact_ns;
    out->watch_steps = m->streams.watch_steps + mvcc_watch_steps(m->kv);
    mvcc_watcher_counts(m->kv, &out->watchers, &out->unsynced_watchers);
}
