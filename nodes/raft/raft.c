/*
 * raft.c: the node's role state machine — lifecycle, ticks, elections (with
 * pre-vote and check-quorum, Raft paper §5.2 and thesis §9.6), the term rules every
 * message passes through (§5.1), vote granting with the election restriction
 * (§5.4.1), and the public entry points that are not replication-specific.
 *
 * Nothing here reads a clock: election_elapsed counts ticks; the randomised timeout
 * in [election_ticks, 2*election_ticks) comes from this node's own xoshiro256** state.
 */
#include "nodes/raft/raft_int.h"

/* ---- rng: harness/common's xoshiro256** (rng.h), one stream per node ---- */

uint64_t raft__rng_next(struct raft *r)
{
    return fl_rng_u64(&r->rng);
}

static void reset_randomized_timeout(struct raft *r)
{
    uint32_t et = r->cfg.election_ticks;
    r->randomized_timeout = et + (uint32_t)(raft__rng_next(r) % et);
    FL_ASSERT(r->randomized_timeout >= et && r->randomized_timeout < 2 * et);
}

/* ---- names ---- */

const char *raft_role_name(enum raft_role role)
{
    static const char *const names[] = {"follower", "pre_candidate", "candidate", "leader"};
    return (unsigned)role < FL_ARRAY_LEN(names) ? names[role] : "unknown";
}

const char *raft_reason_name(enum raft_reason r)
{
    static const char *const names[RAFT_REASON_COUNT] = {
        [RAFT_REASON_LOG_NOT_UP_TO_DATE] = "log_not_up_to_date",
        [RAFT_REASON_ALREADY_VOTED] = "already_voted",
        [RAFT_REASON_LEADER_LEASE] = "leader_lease",
        [RAFT_REASON_LEARNER] = "learner",
        [RAFT_REASON_CAMPAIGN] = "campaign",
        [RAFT_REASON_HIGHER_TERM] = "higher_term",
        [RAFT_REASON_ELECTION_LOST] = "election_lost",
        [RAFT_REASON_PREVOTE_LOST] = "prevote_lost",
        [RAFT_REASON_LEADER_FOUND] = "leader_found",
        [RAFT_REASON_REMOVED] = "removed",
        [RAFT_REASON_CHECK_QUORUM] = "check_quorum",
        [RAFT_REASON_TRANSFER_TIMEOUT] = "transfer_timeout",
        [RAFT_REASON_TRANSFER] = "transfer",
        [RAFT_REASON_ADD_VOTER] = "add_voter",
        [RAFT_REASON_ADD_LEARNER] = "add_learner",
        [RAFT_REASON_PROMOTE] = "promote",
        [RAFT_REASON_REMOVE] = "remove",
        [RAFT_REASON_SNAPSHOT] = "snapshot",
        [RAFT_REASON_ROLLBACK] = "rollback",
        [RAFT_REASON_INVALID] = "invalid",
    };
    return (unsigned)r < RAFT_REASON_COUNT ? names[r] : NULL;
}

/* Marks ev as a role change from -> to, for reason. */
static void event_roles(struct raft_event *ev, enum raft_role from, enum raft_role to,
                        enum raft_reason reason)
{
    ev->role_change = true;
    ev->from = from;
    ev->to = to;
    ev->reason = reason;
}

const char *raft_msg_type_name(enum raft_msg_type t)
{
    static const char *const names[] = {
        "append",        "append_resp", "vote",           "vote_resp", "pre_vote",
        "pre_vote_resp", "heartbeat",   "heartbeat_resp", "snapshot",  "timeout_now",
        "propose",       "read_index",  "read_index_resp"};
    _Static_assert(FL_ARRAY_LEN(names) == RAFT_MSG_TYPE_COUNT, "names");
    return (unsigned)t < FL_ARRAY_LEN(names) ? names[t] : "unknown";
}

const char *raft_event_kind_name(enum raft_event_kind k)
{
    static const char *const names[] = {
        "campaign", "prevote",     "vote_granted",  "vote_rejected",    "leader",       "step_down",
        "term",     "conf_change", "snapshot_sent", "snapshot_applied", "follower_lost"};
    _Static_assert(FL_ARRAY_LEN(names) == RAFT_EV_KIND_COUNT, "names");
    return (unsigned)k < FL_ARRAY_LEN(names) ? names[k] : "unknown";
}

/* ---- lifecycle ---- */

void raft_config_default(struct raft_config *cfg, uint64_t id, uint64_t seed)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->id = id;
    cfg->election_ticks = 10;
    cfg->heartbeat_ticks = 1;
    cfg->pre_vote = true;
    cfg->check_quorum = true;
    cfg->seed = seed;
    cfg->max_msg_bytes = 1024 * 1024;
    cfg->max_inflight = 512;
    cfg->snapshot_catchup_entries = 5000;
    cfg->read_pending_max = 4096;
}

struct raft *raft_new(const struct raft_config *cfg)
{
    FL_ASSERT(cfg != NULL && cfg->id != RAFT_NONE);
    FL_ASSERT(cfg->election_ticks >= 1 && cfg->heartbeat_ticks >= 1);
    struct raft *r = fl_calloc(1, sizeof(*r));
    r->cfg = *cfg;
    if (r->cfg.max_inflight == 0)
        r->cfg.max_inflight = 512;
    if (r->cfg.max_msg_bytes == 0)
        r->cfg.max_msg_bytes = 1024 * 1024;
    if (r->cfg.read_pending_max == 0)
        r->cfg.read_pending_max = 4096;
    fl_rng_seed(&r->rng, cfg->seed ^ (cfg->id * UINT64_C(0x9E3779B97F4A7C15)));
    r->role = RAFT_FOLLOWER;
    r->prev_role = RAFT_FOLLOWER;
    r->applied = cfg->applied;
    reset_randomized_timeout(r);
    return r;
}

void raft_free(struct raft *r)
{
    if (!r)
        return;
    raft__progress_close_all(r);
    raft__log_close(&r->log);
    raft__outbox_close(&r->box);
    free(r->snap_data);
    free(r->reads);
    free(r->read_waits);
    free(r);
}

int raft_bootstrap(struct raft *r, const uint64_t *voters, size_t n)
{
    FL_ASSERT(r != NULL);
    if (raft__last_index(r) != 0 || r->term != 0 || n == 0 || n > RAFT_NODES_MAX || !voters)
        return FL_EINVAL;
    for (size_t i = 0; i < n; i++) {
        if (voters[i] == RAFT_NONE)
            return FL_EINVAL;
        for (size_t j = 0; j < i; j++)
            if (voters[j] == voters[i])
                return FL_EINVAL;
    }
    r->term = 1;
    for (size_t i = 0; i < n; i++) {
        uint8_t buf[RAFT_CC_HEADER_BYTES];
        buf[0] = RAFT_CC_ADD_VOTER;
        for (int k = 0; k < 8; k++)
            buf[1 + k] = (uint8_t)(voters[i] >> (8 * k));
        raft__log_append(r, 1, RAFT_ENTRY_CONF_CHANGE, buf, sizeof(buf));
    }
    r->commit = n;
    FL_ASSERT(raft_conf(r)->voters_count == n);
    return FL_OK;
}

int raft_restore(struct raft *r, const struct raft_hard_state *hs, const struct raft_snapshot *snap,
                 const struct raft_entry *entries, size_t n)
{
    FL_ASSERT(r != NULL && hs != NULL);
    if (raft__last_index(r) != 0 || r->term != 0 || (n && !entries))
        return FL_EINVAL;
    if (snap && snap->index) {
        struct raft_conf_state conf = snap->conf;
        raft__log_reset(r, snap->index, snap->term, &conf);
        r->snap = *snap;
        r->snap_data = snap->len ? fl_memdup(snap->data, snap->len) : NULL;
        r->snap.data = r->snap_data;
    }
    for (size_t i = 0; i < n; i++) {
        const struct raft_entry *e = &entries[i];
        if (e->index <= r->log.base_index)
            continue;
        if (e->index != raft__last_index(r) + 1 || e->term < raft__last_term(r))
            return FL_EINVAL;
        raft__log_append(r, e->term, e->type, e->data, e->len);
    }
    r->log.stable = raft__last_index(r);
    r->term = FL_MAX(hs->term, raft__last_term(r));
    r->vote = hs->term == r->term ? hs->vote : RAFT_NONE;
    /* A snapshot is committed by definition; a commit index past the log (the tail
     * was lost) is clamped: what is not on disk cannot be re-applied. */
    r->commit = FL_MIN(FL_MAX(hs->commit, r->log.base_index), raft__last_index(r));
    r->prev_hs = *hs; /* a clamped value goes out in the first ready */
    if (r->applied < r->log.base_index)
        r->applied = r->log.base_index;
    if (r->applied > r->commit)
        r->applied = r->commit; /* the app state claims more than the log holds */
    r->box.events_count = 0;    /* conf events of replaying the log are not news */
    r->box.notes_count = 0;
    return FL_OK;
}

/* ---- roles ---- */

bool raft__promotable(const struct raft *r)
{
    return raft_conf_is_voter(raft_conf(r), r->cfg.id);
}

/* Clears the per-term state; redraw_timeout picks a new randomised election timeout.
 * etcd's raft (v3.4 raft.go) redraws it in reset(), that is on becoming follower,
 * candidate or leader, but not in becomePreCandidate: a node whose pre-vote rounds go
 * unanswered keeps one timeout across them. */
static void reset_term_state(struct raft *r, uint64_t term, bool redraw_timeout)
{
    if (r->term != term) {
        FL_ASSERT(term > r->term);
        r->term = term;
        r->vote = RAFT_NONE;
    }
    r->lead = RAFT_NONE;
    r->election_elapsed = 0;
    r->heartbeat_elapsed = 0;
    if (redraw_timeout)
        reset_randomized_timeout(r);
    r->transferee = RAFT_NONE;
    r->votes_count = 0;
    r->removed_self_quorum = 0;
    r->flush_pending = false;
    r->flush_allow_empty = false;
    r->read_flush = false;
    raft__reads_clear(r);
}

static void reset_for_term(struct raft *r, uint64_t term)
{
    reset_term_state(r, term, true);
}

void raft__become_follower(struct raft *r, uint64_t term, uint64_t lead, enum raft_reason reason,
                           const char *why)
{
    enum raft_role was = r->role;
    uint64_t old_term = r->term;
    reset_for_term(r, term);
    r->role = RAFT_FOLLOWER;
    r->lead = lead;
    raft__progress_close_all(r);
    if (term != old_term)
        raft__event(r, RAFT_EV_TERM, lead, 0, "term %" PRIu64 " -> %" PRIu64 " (%s)", old_term,
                    term, why)
            ->reason = reason;
    if (was != RAFT_FOLLOWER)
        event_roles(raft__event(r, RAFT_EV_STEP_DOWN, lead, 0, "%s -> follower: %s",
                                raft_role_name(was), why),
                    was, RAFT_FOLLOWER, reason);
}

static void become_leader(struct raft *r)
{
    FL_ASSERT(r->role == RAFT_CANDIDATE);
    reset_for_term(r, r->term);
    r->role = RAFT_LEADER;
    r->lead = r->cfg.id;
    raft__progress_reset_all(r);
    event_roles(raft__event(r, RAFT_EV_LEADER, RAFT_NONE, raft__last_index(r) + 1,
                            "elected leader at term %" PRIu64 " (last log %" PRIu64 "/%" PRIu64 ")",
                            r->term, raft__last_term(r), raft__last_index(r)),
                RAFT_CANDIDATE, RAFT_LEADER, RAFT_REASON_NONE);
    /* An empty entry of the new term: committing it commits everything before it
     * (Raft §5.4.2) and unblocks read-index. */
    raft__leader_append(r, RAFT_ENTRY_NORMAL, NULL, 0);
}

static void vote_record(struct raft *r, uint64_t id, bool granted)
{
    for (uint32_t i = 0; i < r->votes_count; i++)
        if (r->votes_ids[i] == id)
            return;
    FL_ASSERT(r->votes_count < RAFT_NODES_MAX);
    r->votes_ids[r->votes_count] = id;
    r->votes_granted[r->votes_count] = granted;
    r->votes_count++;
}

/* 1: won, -1: lost, 0: pending. Only votes of voters in force count (and learners'
 * too under FL_BUG(RAFT_LEARNER_VOTES)). */
static int vote_tally(const struct raft *r)
{
    const struct raft_conf_state *c = raft_conf(r);
    bool bug = FL_BUG(RAFT_LEARNER_VOTES);
    uint32_t yes = 0, no = 0, electors = c->voters_count + (bug ? c->learners_count : 0);
    for (uint32_t i = 0; i < r->votes_count; i++) {
        if (!raft_conf_is_voter(c, r->votes_ids[i]) &&
            !(bug && raft_conf_is_learner(c, r->votes_ids[i])))
            continue;
        if (r->votes_granted[i])
            yes++;
        else
            no++;
    }
    uint32_t q = raft_conf_quorum(c);
    if (yes >= q)
        return 1;
    if (electors - no < q)
        return -1;
    return 0;
}

/* Starts one (pre-)vote round. Returns true when this node alone is a quorum (a
 * single voter): then nothing is sent and the caller moves on at once. */
static bool campaign_round(struct raft *r, bool pre, bool transfer)
{
    FL_ASSERT(raft__promotable(r));
    const struct raft_conf_state *c = raft_conf(r);
    uint64_t vote_term;
    enum raft_role was = r->role;
    enum raft_reason why = transfer ? RAFT_REASON_TRANSFER : RAFT_REASON_NONE;
    if (pre) {
        uint32_t timeout_before = r->randomized_timeout;
        reset_term_state(r, r->term, false);
        FL_ASSERT(r->randomized_timeout == timeout_before);
        r->role = RAFT_PRE_CANDIDATE;
        vote_term = r->term + 1;
        event_roles(raft__event(r, RAFT_EV_PREVOTE, RAFT_NONE, 0,
                                "pre-vote for term %" PRIu64 " (last log %" PRIu64 "/%" PRIu64 ")",
                                vote_term, raft__last_term(r), raft__last_index(r)),
                    was, RAFT_PRE_CANDIDATE, why);
    } else {
        uint64_t old = r->term;
        reset_for_term(r, r->term + 1);
        r->role = RAFT_CANDIDATE;
        r->vote = r->cfg.id;
        vote_term = r->term;
        raft__event(r, RAFT_EV_TERM, RAFT_NONE, 0, "term %" PRIu64 " -> %" PRIu64 " (campaign)",
                    old, r->term)
            ->reason = RAFT_REASON_CAMPAIGN;
        event_roles(raft__event(r, RAFT_EV_CAMPAIGN, RAFT_NONE, 0,
                                "campaign for term %" PRIu64 "%s (last log %" PRIu64 "/%" PRIu64
                                ")",
                                r->term, transfer ? " (leader transfer)" : "", raft__last_term(r),
                                raft__last_index(r)),
                    was, RAFT_CANDIDATE, why);
    }
    vote_record(r, r->cfg.id, true);
    if (vote_tally(r) == 1)
        return true;
    uint32_t electors = c->voters_count + (FL_BUG(RAFT_LEARNER_VOTES) ? c->learners_count : 0);
    for (uint32_t i = 0; i < electors; i++) {
        uint64_t to = i < c->voters_count ? c->voters[i] : c->learners[i - c->voters_count];
        if (to == r->cfg.id)
            continue;
        struct raft_msg *m = raft__send(r, pre ? RAFT_MSG_PRE_VOTE : RAFT_MSG_VOTE, to);
        m->term = vote_term;
        m->index = raft__last_index(r);
        m->log_term = raft__last_term(r);
        m->context = transfer ? RAFT_CTX_TRANSFER : 0;
    }
    return false;
}

static void campaign(struct raft *r, bool pre, bool transfer)
{
    if (!campaign_round(r, pre, transfer))
        return;
    if (pre && !campaign_round(r, false, transfer))
        return;
    FL_ASSERT(r->role == RAFT_CANDIDATE);
    become_leader(r);
}

int raft_campaign(struct raft *r)
{
    if (!raft__promotable(r) || r->role == RAFT_LEADER)
        return FL_EINVAL;
    campaign(r, r->cfg.pre_vote, false);
    return FL_OK;
}

void raft__conf_changed(struct raft *r)
{
    if (r->role == RAFT_LEADER)
        raft__progress_sync(r);
    if (r->role == RAFT_PRE_CANDIDATE || r->role == RAFT_CANDIDATE) {
        if (!raft__promotable(r))
            raft__become_follower(r, r->term, RAFT_NONE, RAFT_REASON_REMOVED,
                                  "removed from configuration");
    }
}

/* ---- ticks ---- */

void raft_tick(struct raft *r)
{
    if (r->role == RAFT_LEADER) {
        raft__leader_tick(r);
        return;
    }
    r->election_elapsed++;
    if (raft__promotable(r) && r->election_elapsed >= r->randomized_timeout) {
        r->election_elapsed = 0;
        campaign(r, r->cfg.pre_vote, false);
    }
}

uint32_t raft_ticks_to_deadline(const struct raft *r)
{
    if (r->role == RAFT_LEADER) {
        uint32_t hb =
            r->cfg.heartbeat_ticks - FL_MIN(r->heartbeat_elapsed, r->cfg.heartbeat_ticks - 1);
        uint32_t el =
            r->cfg.election_ticks - FL_MIN(r->election_elapsed, r->cfg.election_ticks - 1);
        return FL_MIN(hb, el);
    }
    if (!raft__promotable(r))
        return r->cfg.election_ticks;
    if (r->election_elapsed + 1 >= r->randomized_timeout)
        return 1;
    return r->randomized_timeout - r->election_elapsed;
}

/* ---- voting ---- */

static void vote_event(struct raft_event *ev, bool pre, enum raft_reason reason)
{
    ev->pre = pre;
    ev->reason = reason;
}

static void handle_vote_request(struct raft *r, const struct raft_msg *m)
{
    bool pre = m->type == RAFT_MSG_PRE_VOTE;
    /* A learner must vote when asked (etcd#10998): a candidate that counts it as a
     * voter has seen its promotion, which may not have reached it yet. The bug ignores
     * the request, as etcd's raft did before that fix. */
    if (FL_BUG(RAFT_LEARNER_REFUSES_VOTE) && raft_conf_is_learner(raft_conf(r), r->cfg.id)) {
        vote_event(raft__event(r, RAFT_EV_VOTE_REJECTED, m->from, 0,
                               "%s for term %" PRIu64 " from %" PRIu64
                               " ignored: learner cannot vote",
                               pre ? "pre-vote" : "vote", m->term, m->from),
                   pre, RAFT_REASON_LEARNER);
        return;
    }
    bool can_vote = r->vote == m->from || (r->vote == RAFT_NONE && r->lead == RAFT_NONE) ||
                    (pre && m->term > r->term);
    uint64_t lt = raft__last_term(r), li = raft__last_index(r);
    bool up_to_date = m->log_term > lt || (m->log_term == lt && m->index >= li);
    struct raft_msg *resp =
        raft__send(r, pre ? RAFT_MSG_PRE_VOTE_RESP : RAFT_MSG_VOTE_RESP, m->from);
    if (can_vote && (up_to_date || FL_BUG(RAFT_VOTE_IGNORES_LOG))) {
        /* A granted pre-vote answers in the term asked about (etcd). */
        resp->term = m->term;
        if (!pre) {
            r->election_elapsed = 0;
            r->vote = m->from;
        }
        vote_event(raft__event(r, RAFT_EV_VOTE_GRANTED, m->from, 0,
                               "%s granted to %" PRIu64 " for term %" PRIu64 " (its log %" PRIu64
                               "/%" PRIu64 ", ours %" PRIu64 "/%" PRIu64 ")",
                               pre ? "pre-vote" : "vote", m->from, m->term, m->log_term, m->index,
                               lt, li),
                   pre, RAFT_REASON_NONE);
        return;
    }
    resp->reject = true;
    if (!can_vote)
        vote_event(
            raft__event(r, RAFT_EV_VOTE_REJECTED, m->from, 0,
                        "%s for term %" PRIu64 " refused to %" PRIu64 ": already voted for %" PRIu64
                        " / leader %" PRIu64 " in term %" PRIu64,
                        pre ? "pre-vote" : "vote", m->term, m->from, r->vote, r->lead, r->term),
            pre, RAFT_REASON_ALREADY_VOTED);
    else
        vote_event(raft__event(r, RAFT_EV_VOTE_REJECTED, m->from, 0,
                               "%s for term %" PRIu64 " refused to %" PRIu64
                               ": log not up to date (its %" PRIu64 "/%" PRIu64 " < ours %" PRIu64
                               "/%" PRIu64 ")",
                               pre ? "pre-vote" : "vote", m->term, m->from, m->log_term, m->index,
                               lt, li),
                   pre, RAFT_REASON_LOG_NOT_UP_TO_DATE);
}

static void handle_vote_response(struct raft *r, const struct raft_msg *m)
{
    bool pre = m->type == RAFT_MSG_PRE_VOTE_RESP;
    if (pre && (r->role != RAFT_PRE_CANDIDATE || (!m->reject && m->term != r->term + 1)))
        return;
    if (!pre && r->role != RAFT_CANDIDATE)
        return;
    vote_record(r, m->from, !m->reject);
    int res = vote_tally(r);
    if (res == 1) {
        if (pre)
            campaign(r, false, false);
        else
            become_leader(r);
    } else if (res == -1) {
        raft__become_follower(r, r->term, RAFT_NONE,
                              pre ? RAFT_REASON_PREVOTE_LOST : RAFT_REASON_ELECTION_LOST,
                              pre ? "pre-vote lost" : "election lost");
    }
}

/* ---- message intake: the term rules (Raft §5.1, etcd Step) ---- */

static bool is_from_leader(enum raft_msg_type t)
{
    return t == RAFT_MSG_APPEND || t == RAFT_MSG_HEARTBEAT || t == RAFT_MSG_SNAPSHOT;
}

/* Returns false when the message is consumed by the term rules. */
static bool check_term(struct raft *r, const struct raft_msg *m)
{
    if (m->term == 0 || m->term == r->term)
        return true;
    bool vote_req = m->type == RAFT_MSG_VOTE || m->type == RAFT_MSG_PRE_VOTE;
    if (m->term > r->term) {
        if (vote_req) {
            bool force = m->type == RAFT_MSG_VOTE && m->context == RAFT_CTX_TRANSFER;
            bool in_lease = r->cfg.check_quorum && r->lead != RAFT_NONE &&
                            r->election_elapsed < r->cfg.election_ticks;
            if (!force && in_lease) {
                bool pre = m->type == RAFT_MSG_PRE_VOTE;
                vote_event(raft__event(r, RAFT_EV_VOTE_REJECTED, m->from, 0,
                                       "%s for term %" PRIu64 " from %" PRIu64
                                       " ignored: leader %" PRIu64
                                       " heard within the election timeout",
                                       pre ? "pre-vote" : "vote", m->term, m->from, r->lead),
                           pre, RAFT_REASON_LEADER_LEASE);
                return false;
            }
        }
        if (m->type == RAFT_MSG_PRE_VOTE || (m->type == RAFT_MSG_PRE_VOTE_RESP && !m->reject))
            return true; /* pre-votes never change our term */
        char why[64];
        snprintf(why, sizeof(why), "%s from %" PRIu64, raft_msg_type_name(m->type), m->from);
        raft__become_follower(r, m->term, is_from_leader(m->type) ? m->from : RAFT_NONE,
                              RAFT_REASON_HIGHER_TERM, why);
        return true;
    }
    /* m->term < r->term */
    if ((r->cfg.check_quorum || r->cfg.pre_vote) &&
        (m->type == RAFT_MSG_APPEND || m->type == RAFT_MSG_HEARTBEAT)) {
        /* A leader of an older term (perhaps this node advanced its term while cut
         * off): answer so it learns our term and steps down (etcd). */
        raft__send(r, RAFT_MSG_APPEND_RESP, m->from);
    } else if (m->type == RAFT_MSG_PRE_VOTE) {
        struct raft_msg *resp = raft__send(r, RAFT_MSG_PRE_VOTE_RESP, m->from);
        resp->reject = true;
    }
    return false;
}

int raft_step(struct raft *r, const struct raft_msg *m)
{
    FL_ASSERT(r != NULL && m != NULL);
    if (m->to != r->cfg.id || m->from == RAFT_NONE || m->from == r->cfg.id ||
        m->type >= RAFT_MSG_TYPE_COUNT || (m->entries_count && !m->entries) ||
        (m->type == RAFT_MSG_SNAPSHOT && !m->snapshot))
        return FL_EINVAL;
    if (m->snapshot && (m->snapshot->conf.voters_count > RAFT_NODES_MAX ||
                        m->snapshot->conf.learners_count > RAFT_NODES_MAX ||
                        (m->snapshot->len && !m->snapshot->data)))
        return FL_EINVAL;
    for (size_t i = 0; i < m->entries_count; i++)
        if ((unsigned)m->entries[i].type > RAFT_ENTRY_CONF_CHANGE ||
            (m->entries[i].len && !m->entries[i].data))
            return FL_EINVAL;
    if (!check_term(r, m))
        return FL_OK;
    switch (m->type) {
    case RAFT_MSG_VOTE:
    case RAFT_MSG_PRE_VOTE:
        handle_vote_request(r, m);
        break;
    case RAFT_MSG_VOTE_RESP:
    case RAFT_MSG_PRE_VOTE_RESP:
        handle_vote_response(r, m);
        break;
    case RAFT_MSG_APPEND:
    case RAFT_MSG_HEARTBEAT:
    case RAFT_MSG_SNAPSHOT:
        if (r->role == RAFT_LEADER)
            return FL_OK; /* same term, another leader: impossible unless a bug is on */
        if (r->role != RAFT_FOLLOWER)
            raft__become_follower(r, r->term, m->from, RAFT_REASON_LEADER_FOUND,
                                  "leader of this term found");
        r->election_elapsed = 0;
        r->lead = m->from;
        if (m->type == RAFT_MSG_APPEND)
            raft__handle_append(r, m);
        else if (m->type == RAFT_MSG_HEARTBEAT)
            raft__handle_heartbeat(r, m);
        else
            raft__handle_snapshot(r, m);
        break;
    case RAFT_MSG_APPEND_RESP:
        if (r->role == RAFT_LEADER)
            raft__handle_append_resp(r, m);
        break;
    case RAFT_MSG_HEARTBEAT_RESP:
        if (r->role == RAFT_LEADER)
            raft__handle_heartbeat_resp(r, m);
        break;
    case RAFT_MSG_TIMEOUT_NOW:
        if (raft__promotable(r) && r->role != RAFT_LEADER)
            campaign(r, false, true);
        break;
    case RAFT_MSG_PROPOSE:
        if (r->role == RAFT_LEADER && r->transferee == RAFT_NONE && !raft__removed_leader(r))
            for (size_t i = 0; i < m->entries_count; i++)
                if (m->entries[i].type == RAFT_ENTRY_NORMAL)
                    raft__leader_append(r, RAFT_ENTRY_NORMAL, m->entries[i].data,
                                        m->entries[i].len);
        break;
    case RAFT_MSG_READ_INDEX:
        if (r->role == RAFT_LEADER)
            raft__read_request(r, m->context, m->from);
        break;
    case RAFT_MSG_READ_INDEX_RESP:
        if (!m->reject)
            raft__read_state(r, m->context, m->index);
        break;
    default:
        return FL_EINVAL;
    }
    return FL_OK;
}

/* ---- proposals ---- */

int raft_propose(struct raft *r, const void *data, size_t len, uint64_t *index_out)
{
    FL_ASSERT(r != NULL && (len == 0 || data != NULL));
    if (index_out)
        *index_out = 0;
    if (r->role == RAFT_LEADER) {
        if (r->transferee != RAFT_NONE || raft__removed_leader(r))
            return FL_EBUSY;
        raft__leader_append(r, RAFT_ENTRY_NORMAL, data, len);
        if (index_out)
            *index_out = raft__last_index(r);
        return FL_OK;
    }
    if (r->lead == RAFT_NONE)
        return FL_ENOENT;
    struct raft_msg *m = raft__send(r, RAFT_MSG_PROPOSE, r->lead);
    m->term = 0;
    struct raft_entry *e = raft__arena_alloc(&r->box.arena, sizeof(*e));
    memset(e, 0, sizeof(*e));
    e->type = RAFT_ENTRY_NORMAL;
    e->len = len;
    if (len) {
        uint8_t *d = raft__arena_alloc(&r->box.arena, len);
        memcpy(d, data, len);
        e->data = d;
    }
    m->entries = e;
    m->entries_count = 1;
    return FL_OK;
}

int raft_propose_conf_change(struct raft *r, const struct raft_conf_change *cc, uint64_t *index_out)
{
    FL_ASSERT(r != NULL && cc != NULL);
    if (index_out)
        *index_out = 0;
    if (r->role != RAFT_LEADER)
        return FL_ENOENT;
    if (r->transferee != RAFT_NONE || raft__removed_leader(r))
        return FL_EBUSY;
    if (raft__last_conf_index(r) > r->commit && !FL_BUG(RAFT_MULTIPLE_CONF_CHANGES))
        return FL_EBUSY; /* at most one uncommitted configuration entry */
    /* A new leader must first commit an entry of its own term: otherwise a conf
     * entry of a deposed leader that it never saw may still commit, and two
     * single-server changes from different leaders overlap (the single-server
     * membership bug, Ongaro, raft-dev 2015). */
    if (raft__term_at(r, r->commit) != r->term && !FL_BUG(RAFT_MULTIPLE_CONF_CHANGES))
        return FL_EBUSY;
    struct raft_conf_state next = *raft_conf(r);
    int rc = raft_conf_apply(&next, cc);
    if (rc != FL_OK)
        return rc;
    size_t len = RAFT_CC_HEADER_BYTES + cc->context_len;
    uint8_t *buf = fl_malloc(len);
    buf[0] = (uint8_t)cc->type;
    for (int k = 0; k < 8; k++)
        buf[1 + k] = (uint8_t)(cc->node_id >> (8 * k));
    if (cc->context_len)
        memcpy(buf + RAFT_CC_HEADER_BYTES, cc->context, cc->context_len);
    raft__leader_append(r, RAFT_ENTRY_CONF_CHANGE, buf, len);
    free(buf);
    if (index_out)
        *index_out = raft__last_index(r);
    return FL_OK;
}

/* ---- status ---- */

const struct raft_conf_state *raft_conf(const struct raft *r)
{
    return raft__conf_at(r, UINT64_MAX);
}

const struct raft_conf_state *raft_conf_at(const struct raft *r, uint64_t index)
{
    return raft__conf_at(r, index);
}

void raft_status_get(const struct raft *r, struct raft_status *st)
{
    memset(st, 0, sizeof(*st));
    st->id = r->cfg.id;
    st->role = r->role;
    st->term = r->term;
    st->vote = r->vote;
    st->leader = r->lead;
    st->commit = r->commit;
    st->applied = r->applied;
    st->first_index = r->log.base_index + 1;
    st->last_index = raft__last_index(r);
    st->last_term = raft__last_term(r);
    st->snapshot_index = r->snap.index;
    uint64_t lc = raft__last_conf_index(r);
    st->pending_conf_index = lc > r->commit ? lc : 0;
    st->transferee = r->transferee;
    st->election_elapsed = r->election_elapsed;
    st->conf = *raft_conf(r);
}

uint64_t raft_id(const struct raft *r)
{
    return r->cfg.id;
}
uint64_t raft_term(const struct raft *r)
{
    return r->term;
}
uint64_t raft_leader(const struct raft *r)
{
    return r->lead;
}
enum raft_role raft_role(const struct raft *r)
{
    return r->role;
}
uint64_t raft_commit_index(const struct raft *r)
{
    return r->commit;
}
uint64_t raft_last_index(const struct raft *r)
{
    return raft__last_index(r);
}
uint64_t raft_first_index(const struct raft *r)
{
    return r->log.base_index + 1;
}
uint64_t raft_entry_term(const struct raft *r, uint64_t index)
{
    return raft__term_at(r, index);
}

const struct raft_entry *raft_entry_get(const struct raft *r, uint64_t index)
{
    if (index <= r->log.base_index || index > r->log.base_index + r->log.count)
        return NULL;
    return raft__entry_at(r, index);
}
