/*
 * raft_repl.c: the leader's side of log replication (Raft paper §5.3, thesis §3.5).
 *
 * One progress record per member of the configuration in force: match and next
 * indexes and a state — PROBE (one append at a time until the follower's log is
 * found), REPLICATE (optimistic pipelining up to max_inflight messages of up to
 * max_msg_bytes of entry data) or SNAPSHOT (waiting for an InstallSnapshot to land).
 * A rejected append backs off using the follower's hint (etcd findConflictByTerm).
 *
 * Commit (§5.4.2, the Figure 8 rule): the largest index a quorum of the voters in
 * force holds, and only if that entry is of the current term — unless
 * FL_BUG(RAFT_COMMIT_OLD_TERM). A leader that removed itself counts quorum without
 * itself (DESIGN §3.4); once the removal commits it stays leader, as etcd 3.4's does,
 * until the server stops it (raft__after_commit).
 */
#include "nodes/raft/raft_int.h"

struct raft__progress *raft__progress_find(struct raft *r, uint64_t id)
{
    for (uint32_t i = 0; i < r->prs_count; i++)
        if (r->prs[i].id == id)
            return &r->prs[i];
    return NULL;
}

static void progress_init(struct raft *r, struct raft__progress *pr, uint64_t id)
{
    memset(pr, 0, sizeof(*pr));
    pr->id = id;
    pr->next = raft__last_index(r) + 1;
    pr->match = 0;
    pr->state = RAFT_PR_PROBE;
    pr->recent_active = true; /* etcd: a fresh peer gets the benefit of the doubt */
    if (id == r->cfg.id)
        pr->match = raft__last_index(r);
}

void raft__progress_close_all(struct raft *r)
{
    for (uint32_t i = 0; i < r->prs_count; i++)
        free(r->prs[i].inflight);
    r->prs_count = 0;
}

/* Rebuilds the progress set to match the configuration in force, keeping the records
 * of members that stay (ascending id order: deterministic iteration). */
void raft__progress_sync(struct raft *r)
{
    FL_ASSERT(r->role == RAFT_LEADER);
    const struct raft_conf_state *c = raft_conf(r);
    struct raft__progress old[RAFT_NODES_MAX];
    uint32_t old_count = r->prs_count;
    memcpy(old, r->prs, sizeof(old[0]) * old_count);
    uint64_t ids[2 * RAFT_NODES_MAX];
    uint32_t n = 0;
    for (uint32_t i = 0; i < c->voters_count; i++)
        ids[n++] = c->voters[i];
    for (uint32_t i = 0; i < c->learners_count; i++)
        ids[n++] = c->learners[i];
    FL_ASSERT(n <= RAFT_NODES_MAX);
    r->prs_count = 0;
    for (uint32_t i = 0; i < n; i++) {
        struct raft__progress *pr = &r->prs[r->prs_count++];
        bool found = false;
        for (uint32_t j = 0; j < old_count; j++) {
            if (old[j].id == ids[i]) {
                *pr = old[j];
                old[j].inflight = NULL;
                found = true;
                break;
            }
        }
        if (!found)
            progress_init(r, pr, ids[i]);
    }
    for (uint32_t j = 0; j < old_count; j++)
        free(old[j].inflight);
    /* Members added by a conf entry get their first append at once (not on election:
     * the new leader's empty entry goes out right after). */
    for (uint32_t i = 0; i < r->prs_count && old_count > 0; i++)
        if (r->prs[i].id != r->cfg.id && r->prs[i].match == 0 && !r->prs[i].probe_sent)
            raft__send_append(r, &r->prs[i], true);
}

void raft__progress_reset_all(struct raft *r)
{
    raft__progress_close_all(r);
    raft__progress_sync(r);
    FL_ASSERT(r->prs_count <= RAFT_NODES_MAX);
}

static void inflight_add(struct raft *r, struct raft__progress *pr, uint64_t last)
{
    if (!pr->inflight)
        pr->inflight = fl_malloc(sizeof(uint64_t) * r->cfg.max_inflight);
    FL_ASSERT(pr->inflight_count < r->cfg.max_inflight);
    pr->inflight[(pr->inflight_start + pr->inflight_count) % r->cfg.max_inflight] = last;
    pr->inflight_count++;
}

static void inflight_free_to(struct raft *r, struct raft__progress *pr, uint64_t index)
{
    while (pr->inflight_count && pr->inflight[pr->inflight_start] <= index) {
        pr->inflight_start = (pr->inflight_start + 1) % r->cfg.max_inflight;
        pr->inflight_count--;
    }
}

static void become_probe(struct raft *r, struct raft__progress *pr)
{
    if (pr->state == RAFT_PR_SNAPSHOT)
        pr->next = FL_MAX(pr->match + 1, pr->pending_snapshot + 1);
    else
        pr->next = pr->match + 1;
    pr->state = RAFT_PR_PROBE;
    pr->probe_sent = false;
    pr->pending_snapshot = 0;
    pr->inflight_count = 0;
    pr->inflight_start = 0;
    pr->stall_ticks = 0;
    FL_ASSERT(pr->next >= 1);
}

static void become_replicate(struct raft *r, struct raft__progress *pr)
{
    pr->state = RAFT_PR_REPLICATE;
    pr->next = pr->match + 1;
    pr->probe_sent = false;
    pr->inflight_count = 0;
    pr->inflight_start = 0;
    pr->stall_ticks = 0;
    FL_ASSERT(r->role == RAFT_LEADER);
}

static bool send_snapshot(struct raft *r, struct raft__progress *pr)
{
    if (r->snap.index == 0)
        return false; /* cannot happen: entries are only dropped behind a snapshot */
    struct raft_msg *m = raft__send(r, RAFT_MSG_SNAPSHOT, pr->id);
    raft__msg_attach_snapshot(r, m);
    pr->state = RAFT_PR_SNAPSHOT;
    pr->pending_snapshot = r->snap.index;
    pr->stall_ticks = 0;
    raft__event(r, RAFT_EV_SNAPSHOT_SENT, pr->id, r->snap.index,
                "snapshot at %" PRIu64 "/%" PRIu64 " (%zu bytes) sent to %" PRIu64 " (next %" PRIu64
                " compacted)",
                r->snap.index, r->snap.term, r->snap.len, pr->id, pr->next);
    return true;
}

/* Sends pr the entries from pr->next (or a snapshot when they are gone). Returns
 * whether a message went out. allow_empty: send even with no entries (to carry the
 * commit index or probe). */
bool raft__send_append(struct raft *r, struct raft__progress *pr, bool allow_empty)
{
    FL_ASSERT(r->role == RAFT_LEADER && pr->id != r->cfg.id);
    if (pr->state == RAFT_PR_SNAPSHOT)
        return false;
    if (pr->state == RAFT_PR_PROBE && pr->probe_sent)
        return false;
    if (pr->state == RAFT_PR_REPLICATE && pr->inflight_count >= r->cfg.max_inflight)
        return false;
    uint64_t prev = pr->next - 1;
    uint64_t last = raft__last_index(r);
    if (prev < r->log.base_index)
        return send_snapshot(r, pr);
    if (pr->next > last && !allow_empty)
        return false;
    struct raft_msg *m = raft__send(r, RAFT_MSG_APPEND, pr->id);
    m->index = prev;
    m->log_term = raft__term_at(r, prev);
    m->commit = r->commit;
    if (pr->next <= last) {
        size_t bytes = 0;
        uint64_t to = pr->next;
        /* Batch up to max_msg_bytes of data, at least one entry; bounded by the log. */
        while (to <= last) {
            bytes += raft__entry_at(r, to)->len;
            if (to > pr->next && bytes > r->cfg.max_msg_bytes)
                break;
            to++;
        }
        to--;
        raft__msg_attach_entries(r, m, pr->next, to);
        if (pr->state == RAFT_PR_REPLICATE) {
            pr->next = to + 1;
            inflight_add(r, pr, to);
        }
    }
    if (pr->state == RAFT_PR_PROBE)
        pr->probe_sent = true;
    return true;
}

void raft__bcast_append(struct raft *r)
{
    for (uint32_t i = 0; i < r->prs_count; i++)
        if (r->prs[i].id != r->cfg.id)
            raft__send_append(r, &r->prs[i], true);
}

void raft__bcast_heartbeat(struct raft *r, uint64_t ctx)
{
    FL_ASSERT(r->role == RAFT_LEADER);
    for (uint32_t i = 0; i < r->prs_count; i++) {
        struct raft__progress *pr = &r->prs[i];
        if (pr->id == r->cfg.id)
            continue;
        struct raft_msg *m = raft__send(r, RAFT_MSG_HEARTBEAT, pr->id);
        /* Never tell a follower to commit beyond what it is known to hold (etcd): its
         * log past the match may be a deposed leader's obsolete suffix. The bug sends
         * the whole commit index (scylladb#9965, atomix/copycat#265), and the follower,
         * which caps it at its own last index only, commits that suffix. */
        m->commit =
            FL_BUG(RAFT_HEARTBEAT_COMMIT_UNMATCHED) ? r->commit : FL_MIN(pr->match, r->commit);
        m->context = ctx;
        m->index = pr->next - 1;
    }
}

/* The largest index held by `need` of the voters in force; self counted only if it
 * is a voter, or when with_self (FL_BUG(RAFT_REMOVED_LEADER_COUNTS_SELF)). */
static uint64_t quorum_index(struct raft *r, uint32_t need, bool with_self)
{
    const struct raft_conf_state *c = raft_conf(r);
    uint64_t m[RAFT_NODES_MAX + 1];
    uint32_t n = 0;
    for (uint32_t i = 0; i < c->voters_count; i++) {
        struct raft__progress *pr = raft__progress_find(r, c->voters[i]);
        m[n++] = c->voters[i] == r->cfg.id ? raft__last_index(r) : (pr ? pr->match : 0);
    }
    if (with_self && !raft_conf_is_voter(c, r->cfg.id))
        m[n++] = raft__last_index(r);
    if (need == 0 || need > n)
        return 0;
    /* Insertion sort, descending (n ≤ 16). */
    for (uint32_t i = 1; i < n; i++) {
        uint64_t v = m[i];
        uint32_t j = i;
        while (j > 0 && m[j - 1] < v) {
            m[j] = m[j - 1];
            j--;
        }
        m[j] = v;
    }
    return m[need - 1];
}

bool raft__maybe_commit(struct raft *r)
{
    FL_ASSERT(r->role == RAFT_LEADER);
    const struct raft_conf_state *c = raft_conf(r);
    uint32_t need = raft_conf_quorum(c);
    /* Thesis §4.2.2: a leader managing a configuration that excludes it does not count
     * itself. The bug (camunda#15231) keeps counting it toward the new quorum, so an
     * entry held by the leader and one other member commits, which the members of the
     * new configuration that lack it can outvote. */
    bool counts_self = FL_BUG(RAFT_REMOVED_LEADER_COUNTS_SELF);
    if (!raft_conf_is_voter(c, r->cfg.id) && r->removed_self_quorum && !counts_self)
        need = FL_MIN(r->removed_self_quorum, c->voters_count);
    uint64_t n = quorum_index(r, need, counts_self);
    if (n <= r->commit)
        return false;
    if (raft__term_at(r, n) != r->term && !FL_BUG(RAFT_COMMIT_OLD_TERM))
        return false; /* Figure 8: only current-term entries are committed by counting */
    r->commit = n;
    FL_ASSERT(r->commit <= raft__last_index(r));
    return true;
}

/* After the commit index moved on the leader: tell followers and serve reads waiting
 * for a current-term commit. A leader whose own removal committed does not step down:
 * etcd 3.4's raft keeps it leader (raft.go switchToConfig: "This node is leader and
 * was removed ... TODO(tbg): step down", it returns as leader), sending appends and
 * heartbeats to the others and dropping new proposals (raft__removed_leader); the
 * server stops the member once it applies its own removal (etcdserver applyAll:
 * stopWithDelay, "the member has been permanently removed from the cluster"). */
void raft__after_commit(struct raft *r)
{
    /* Followers learn the new commit index from the next append; many commits
     * between two readies share one message per follower. */
    r->flush_pending = true;
    r->flush_allow_empty = true;
    raft__reads_on_commit(r);
}

/* A leader whose own removal committed (etcd: applied, when the configuration in force
 * no longer has it): etcd's stepLeader drops its proposals (ErrProposalDropped). */
bool raft__removed_leader(const struct raft *r)
{
    return r->role == RAFT_LEADER && !raft_conf_is_voter(raft_conf(r), r->cfg.id) &&
           !raft_conf_is_learner(raft_conf(r), r->cfg.id) && raft__last_conf_index(r) <= r->commit;
}

void raft__flush(struct raft *r)
{
    if (r->role == RAFT_LEADER && r->flush_pending)
        for (uint32_t i = 0; i < r->prs_count; i++)
            if (r->prs[i].id != r->cfg.id)
                raft__send_append(r, &r->prs[i], r->flush_allow_empty);
    if (r->role == RAFT_LEADER && r->read_flush && r->reads_count)
        raft__bcast_heartbeat(r, r->reads[r->reads_count - 1].seq);
    r->flush_pending = false;
    r->flush_allow_empty = false;
    r->read_flush = false;
}

void raft__leader_append(struct raft *r, enum raft_entry_type type, const void *data, size_t len)
{
    FL_ASSERT(r->role == RAFT_LEADER);
    bool was_voter = raft_conf_is_voter(raft_conf(r), r->cfg.id);
    uint32_t old_quorum = raft_conf_quorum(raft_conf(r));
    raft__log_append(r, r->term, type, data, len);
    if (r->role != RAFT_LEADER)
        return;
    if (was_voter && !raft_conf_is_voter(raft_conf(r), r->cfg.id))
        r->removed_self_quorum = old_quorum; /* quorum of the old set, counted without self */
    struct raft__progress *self = raft__progress_find(r, r->cfg.id);
    if (self)
        self->match = raft__last_index(r), self->next = self->match + 1;
    /* Appends go out at the next raft_ready: proposals made in between are batched
     * into one message per follower (up to max_msg_bytes). */
    r->flush_pending = true;
    if (raft__maybe_commit(r))
        raft__after_commit(r);
}

/* With durable storage a follower never loses what it acknowledged, so its hint is
 * never below match. Below it, the follower lost acknowledged entries (acks before
 * fsync, a disk that lost synced data): believe it, or the leader would resend from
 * match + 1 forever while the follower rejects. Commit never moves back. */
static void follower_lost_entries(struct raft *r, struct raft__progress *pr, uint64_t last)
{
    FL_ASSERT(last < pr->match);
    raft__note(r, RAFT_EV_FOLLOWER_LOST, pr->id, pr->match,
               "follower %" PRIu64 " lost acknowledged entries (%" PRIu64 " -> %" PRIu64 ")",
               pr->id, pr->match, last);
    pr->match = last;
    become_probe(r, pr);
}

void raft__handle_append_resp(struct raft *r, const struct raft_msg *m)
{
    struct raft__progress *pr = raft__progress_find(r, m->from);
    if (!pr)
        return;
    pr->recent_active = true;
    if (!m->reject && m->index > raft__last_index(r))
        return; /* claims more than we have: only possible with a bug switch on */
    if (m->reject) {
        /* Stale rejections (for an index we no longer probe) are ignored. */
        if (pr->state == RAFT_PR_REPLICATE) {
            if (m->index <= pr->match)
                return;
            become_probe(r, pr);
        } else if (pr->next - 1 != m->index) {
            return;
        }
        uint64_t hint = raft__find_conflict_by_term(r, m->reject_hint, m->hint_term);
        if (hint < pr->match)
            follower_lost_entries(r, pr, hint);
        pr->next = FL_MAX(FL_MIN(m->index, hint + 1), pr->match + 1);
        pr->probe_sent = false;
        raft__send_append(r, pr, true);
        return;
    }
    uint64_t old_match = pr->match;
    if (m->index > pr->match) {
        pr->match = m->index;
        pr->stall_ticks = 0;
    }
    pr->next = FL_MAX(pr->next, m->index + 1);
    if (pr->state == RAFT_PR_PROBE)
        become_replicate(r, pr);
    else if (pr->state == RAFT_PR_SNAPSHOT && pr->match >= pr->pending_snapshot)
        become_replicate(r, pr);
    else if (pr->state == RAFT_PR_REPLICATE)
        inflight_free_to(r, pr, m->index);
    if (pr->match > old_match && raft__maybe_commit(r))
        raft__after_commit(r);
    if (r->role != RAFT_LEADER)
        return;
    /* Keep the pipe full. */
    while (raft__send_append(r, pr, false))
        if (pr->state != RAFT_PR_REPLICATE)
            break;
    raft__transfer_check(r, pr);
}

void raft__handle_heartbeat_resp(struct raft *r, const struct raft_msg *m)
{
    struct raft__progress *pr = raft__progress_find(r, m->from);
    if (!pr)
        return;
    pr->recent_active = true;
    pr->probe_sent = false;
    if (m->index < pr->match)
        follower_lost_entries(r, pr, m->index);
    /* Messages on a connection arrive in order or not at all: the answers to the
     * appends sent before this heartbeat precede its answer. If match is still
     * behind, an append or its answer was lost (a broken connection): probe again. */
    if (pr->state == RAFT_PR_REPLICATE && pr->match < m->log_term && m->log_term < pr->next)
        become_probe(r, pr);
    /* The follower's log reaches the snapshot: it was installed even if the answer
     * to it was lost. Probe from there. */
    if (pr->state == RAFT_PR_SNAPSHOT && m->index >= pr->pending_snapshot)
        become_probe(r, pr);
    /* A probe may carry no entries (next = last + 1): it still finds the match. */
    if (pr->match < raft__last_index(r))
        raft__send_append(r, pr, pr->state == RAFT_PR_PROBE);
    if (m->context)
        raft__read_ack(r, m->context, m->from);
}

/* Check-quorum (thesis §6.2): a quorum of voters must have been heard from during
 * the last election timeout, else the leader steps down. */
static bool quorum_active(struct raft *r)
{
    const struct raft_conf_state *c = raft_conf(r);
    uint32_t active = 0;
    for (uint32_t i = 0; i < c->voters_count; i++) {
        struct raft__progress *pr = raft__progress_find(r, c->voters[i]);
        if (c->voters[i] == r->cfg.id || (pr && pr->recent_active))
            active++;
    }
    for (uint32_t i = 0; i < r->prs_count; i++)
        r->prs[i].recent_active = r->prs[i].id == r->cfg.id;
    return active >= raft_conf_quorum(c);
}

/* Recovers peers whose messages were lost without a report from the transport. */
static void progress_stall_tick(struct raft *r, struct raft__progress *pr)
{
    bool waiting = (pr->state == RAFT_PR_REPLICATE && pr->inflight_count > 0) ||
                   pr->state == RAFT_PR_SNAPSHOT || (pr->state == RAFT_PR_PROBE && pr->probe_sent);
    if (!waiting) {
        pr->stall_ticks = 0;
        return;
    }
    pr->stall_ticks++;
    uint32_t limit = r->cfg.election_ticks * (pr->state == RAFT_PR_SNAPSHOT ? 10u : 2u);
    if (pr->stall_ticks >= limit) {
        become_probe(r, pr);
        raft__send_append(r, pr, true);
    }
}

void raft__leader_tick(struct raft *r)
{
    FL_ASSERT(r->role == RAFT_LEADER);
    r->heartbeat_elapsed++;
    r->election_elapsed++;
    if (r->election_elapsed >= r->cfg.election_ticks) {
        r->election_elapsed = 0;
        if (r->cfg.check_quorum && !quorum_active(r)) {
            raft__become_follower(r, r->term, RAFT_NONE, RAFT_REASON_CHECK_QUORUM,
                                  "check-quorum: no contact with a quorum for an election timeout");
            return;
        }
        if (r->transferee != RAFT_NONE) {
            raft__event(r, RAFT_EV_STEP_DOWN, r->transferee, 0,
                        "leader transfer to %" PRIu64 " timed out, aborted", r->transferee)
                ->reason = RAFT_REASON_TRANSFER_TIMEOUT;
            r->transferee = RAFT_NONE;
        }
    }
    if (r->heartbeat_elapsed >= r->cfg.heartbeat_ticks) {
        r->heartbeat_elapsed = 0;
        uint64_t ctx = r->reads_count ? r->reads[r->reads_count - 1].seq : 0;
        raft__bcast_heartbeat(r, ctx);
        for (uint32_t i = 0; i < r->prs_count; i++)
            if (r->prs[i].id != r->cfg.id)
                progress_stall_tick(r, &r->prs[i]);
    }
}

void raft_report_unreachable(struct raft *r, uint64_t peer)
{
    if (r->role != RAFT_LEADER)
        return;
    struct raft__progress *pr = raft__progress_find(r, peer);
    if (pr && pr->state == RAFT_PR_REPLICATE)
        become_probe(r, pr);
}

void raft_report_snapshot(struct raft *r, uint64_t peer, bool ok)
{
    if (r->role != RAFT_LEADER)
        return;
    struct raft__progress *pr = raft__progress_find(r, peer);
    if (!pr || pr->state != RAFT_PR_SNAPSHOT)
        return;
    if (!ok)
        pr->pending_snapshot = 0;
    /* Either way probe: on success the follower's next answer moves it to replicate. */
    become_probe(r, pr);
    pr->probe_sent = ok; /* wait for the follower's answer to the snapshot */
}

int raft_progress_get(const struct raft *r, uint64_t peer, struct raft_progress *out)
{
    FL_ASSERT(r != NULL && out != NULL);
    memset(out, 0, sizeof(*out));
    if (r->role != RAFT_LEADER)
        return FL_ENOENT;
    if (peer == r->cfg.id) {
        out->id = peer;
        out->match = raft__last_index(r);
        out->next = out->match + 1;
        out->state = RAFT_PR_REPLICATE;
        out->recent_active = true;
        out->learner = raft_conf_is_learner(raft_conf(r), peer);
        return FL_OK;
    }
    const struct raft__progress *pr = raft__progress_find((struct raft *)r, peer);
    if (!pr)
        return FL_ENOENT;
    out->id = pr->id;
    out->match = peer == r->cfg.id ? raft__last_index(r) : pr->match;
    out->next = peer == r->cfg.id ? raft__last_index(r) + 1 : pr->next;
    out->state = pr->state;
    out->recent_active = pr->recent_active;
    out->learner = raft_conf_is_learner(raft_conf(r), peer);
    out->inflight = pr->inflight_count;
    out->pending_snapshot = pr->pending_snapshot;
    return FL_OK;
}
