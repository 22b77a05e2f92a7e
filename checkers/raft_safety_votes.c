/*
 * raft_safety_votes.c: the properties of the Raft safety checker that follow one
 * member over its life (raft_safety.h lists them): the terms and votes it promised
 * others, the quorum that elected each leader, what it must find on its disk after a
 * restart, and the configuration its log and snapshots imply.
 *
 * Promises. Raft lets a member send a message only once what the message depends on
 * is durable: its term (every message carries it) and, for a vote, the vote itself
 * (Raft paper Figure 2, "persistent state ... updated on stable storage before
 * responding to RPCs"). So the checker records, per member, the highest term it ever
 * sent and its last vote, and a restart must come back with at least that term and,
 * in that term, that vote. A vote is also kept in a table of (term, voter, candidate)
 * so that two votes of one member in one term are caught whenever they happen, and so
 * that each new leader can be checked to hold the votes of a quorum of the voters of
 * its configuration — never counting a learner's (learners do not vote).
 *
 * Configurations are modelled here, not read from the Raft core: each member's conf
 * entries (fed with their kind and member id) and installed snapshots' configurations
 * give the configuration at each index of its log view, following the design's rules
 * (in force from the append on, the latest in the log wins, a truncated entry is
 * rolled back). A restarted member must come back with the configuration its view
 * implies at the last index it recovered.
 *
 * Pure: no I/O. Votes are few (a handful per election), so linear scans are fine; the
 * table keeps the newest RS_GRANTS_MAX votes.
 */
#include "checkers/raft_safety_int.h"

#define RS_GRANTS_MAX 4096

/* ---- the configuration model ---------------------------------------------------- */

static int conf_find(const struct rs_conf *cf, uint64_t id)
{
    for (uint32_t i = 0; i < cf->n; i++)
        if (cf->ids[i] == id)
            return (int)i;
    return -1;
}

static uint32_t conf_count(const struct rs_conf *cf, bool learners)
{
    uint32_t k = 0;
    for (uint32_t i = 0; i < cf->n; i++)
        k += (cf->learner[i] != 0) == learners;
    return k;
}

/* Inserts id (absent) keeping ids ascending. */
static void conf_insert(struct rs_conf *cf, uint64_t id, bool learner)
{
    FL_ASSERT(cf->n < RAFT_SAFETY_CONF_MAX);
    uint32_t i = cf->n;
    while (i > 0 && cf->ids[i - 1] > id) {
        cf->ids[i] = cf->ids[i - 1];
        cf->learner[i] = cf->learner[i - 1];
        i--;
    }
    cf->ids[i] = id;
    cf->learner[i] = learner;
    cf->n++;
}

/* Applies one change; one that does not fit changes nothing (raft_safety.h). */
static void conf_apply(struct rs_conf *cf, int type, uint64_t id)
{
    int at = conf_find(cf, id);
    if (id == 0)
        return;
    switch (type) {
    case RAFT_SAFETY_CC_ADD_VOTER:
        if (at < 0 && cf->n < RAFT_SAFETY_CONF_MAX)
            conf_insert(cf, id, false);
        return;
    case RAFT_SAFETY_CC_ADD_LEARNER:
        if (at < 0 && cf->n < RAFT_SAFETY_CONF_MAX && conf_count(cf, true) == 0)
            conf_insert(cf, id, true); /* etcd --max-learners 1 */
        return;
    case RAFT_SAFETY_CC_PROMOTE:
        if (at >= 0 && cf->learner[at])
            cf->learner[at] = 0;
        return;
    case RAFT_SAFETY_CC_REMOVE:
        if (at >= 0) {
            memmove(&cf->ids[at], &cf->ids[at + 1], (cf->n - (uint32_t)at - 1) * sizeof(uint64_t));
            memmove(&cf->learner[at], &cf->learner[at + 1], cf->n - (uint32_t)at - 1);
            cf->n--;
        }
        return;
    default:
        return; /* an entry the core cannot decode changes nothing either */
    }
}

static bool conf_from(struct rs_conf *out, const struct raft_safety_conf *pc)
{
    memset(out, 0, sizeof *out);
    if (pc->n_voters + pc->n_learners > RAFT_SAFETY_CONF_MAX)
        return false;
    for (size_t i = 0; i < pc->n_voters; i++)
        if (conf_find(out, pc->voters[i]) < 0)
            conf_insert(out, pc->voters[i], false);
    for (size_t i = 0; i < pc->n_learners; i++)
        if (conf_find(out, pc->learners[i]) < 0)
            conf_insert(out, pc->learners[i], true);
    return true;
}

static bool conf_equal(const struct rs_conf *a, const struct rs_conf *b)
{
    if (a->n != b->n)
        return false;
    for (uint32_t i = 0; i < a->n; i++)
        if (a->ids[i] != b->ids[i] || (a->learner[i] != 0) != (b->learner[i] != 0))
            return false;
    return true;
}

/* "voters [1 2] learners [3]" into out. */
static void conf_text(const struct rs_conf *cf, char *out, size_t cap)
{
    size_t len = (size_t)snprintf(out, cap, "voters [");
    for (int pass = 0; pass < 2; pass++) {
        bool first = true;
        for (uint32_t i = 0; i < cf->n && len < cap; i++) {
            if ((cf->learner[i] != 0) != (pass == 1))
                continue;
            len +=
                (size_t)snprintf(out + len, cap - len, "%s%" PRIu64, first ? "" : " ", cf->ids[i]);
            first = false;
        }
        if (len < cap)
            len += (size_t)snprintf(out + len, cap - len, pass == 0 ? "] learners [" : "]");
    }
}

/* The configuration of n's view at index (base ≤ index ≤ last). */
static const struct rs_conf *conf_at(const struct rs_node *n, uint64_t index)
{
    for (size_t i = n->confs_count; i > 0; i--)
        if (n->confs[i - 1].index <= index)
            return &n->confs[i - 1].conf;
    return &n->base_conf;
}

void rs__conf_truncate(struct rs_node *n, uint64_t last)
{
    while (n->confs_count && n->confs[n->confs_count - 1].index > last)
        n->confs_count--;
}

void rs__conf_trim(struct rs_node *n, uint64_t base)
{
    size_t k = 0;
    while (k < n->confs_count && n->confs[k].index <= base)
        k++;
    if (k == 0)
        return;
    n->base_conf = n->confs[k - 1].conf;
    memmove(n->confs, n->confs + k, (n->confs_count - k) * sizeof(n->confs[0]));
    n->confs_count -= k;
}

void rs__conf_forget(struct rs_node *n)
{
    n->conf_known = false;
    n->confs_count = 0;
}

void rs__conf_reset(struct rs_node *n, const struct rs_conf *conf)
{
    n->conf_known = true;
    n->base_conf = *conf;
    n->confs_count = 0;
}

void rs__node_close(struct rs_node *n)
{
    free(n->confs);
    n->confs = NULL;
    n->confs_count = n->confs_cap = 0;
}

bool raft_safety_conf_entry(struct raft_safety *c, uint64_t node, uint64_t index, int type,
                            uint64_t member)
{
    RS_RECORD(c, .op = RAFT_SAFETY_OP_CONF_ENTRY, .node = node,
              .a = {index, (uint64_t)(int64_t)type, member});
    struct rs_node *n = rs__node_get(c, node);
    if (!n->conf_known)
        return !c->failed;
    if (index != n->last || index <= n->base) {
        rs__conf_forget(n); /* not the entry just appended: the driver lost track */
        return !c->failed;
    }
    struct rs_conf next = *conf_at(n, index);
    conf_apply(&next, type, member);
    FL_GROW(n->confs, n->confs_cap, n->confs_count + 1, 4);
    n->confs[n->confs_count].index = index;
    n->confs[n->confs_count].conf = next;
    n->confs_count++;
    return !c->failed;
}

bool raft_safety_snapshot_conf(struct raft_safety *c, uint64_t node, uint64_t index, uint64_t term,
                               const struct raft_safety_conf *conf)
{
    if (c->sink)
        return rs__record_conf(c,
                               &(struct raft_safety_feed){.op = RAFT_SAFETY_OP_SNAPSHOT_CONF,
                                                          .node = node,
                                                          .a = {index, term}},
                               conf);
    bool ok = raft_safety_snapshot(c, node, index, term);
    struct rs_node *n = rs__node_get(c, node);
    struct rs_conf cf;
    if (conf && conf_from(&cf, conf))
        rs__conf_reset(n, &cf);
    return ok && !c->failed;
}

/* ---- promises: terms and votes -------------------------------------------------- */

static const struct rs_grant *grant_find(const struct raft_safety *c, uint64_t term, uint64_t voter)
{
    for (size_t i = c->grants_count; i > 0; i--)
        if (c->grants[i - 1].term == term && c->grants[i - 1].voter == voter)
            return &c->grants[i - 1];
    return NULL;
}

static void grant_add(struct raft_safety *c, uint64_t term, uint64_t voter, uint64_t candidate)
{
    if (c->grants_count == RS_GRANTS_MAX) {
        size_t half = RS_GRANTS_MAX / 2; /* the oldest half goes */
        memmove(c->grants, c->grants + half, (c->grants_count - half) * sizeof(c->grants[0]));
        c->grants_count -= half;
    }
    FL_GROW(c->grants, c->grants_cap, c->grants_count + 1, 64);
    c->grants[c->grants_count++] = (struct rs_grant){term, voter, candidate};
}

bool raft_safety_sent(struct raft_safety *c, uint64_t node, uint64_t term, uint64_t vote_for)
{
    FL_ASSERT(c != NULL && node != 0);
    RS_RECORD(c, .op = RAFT_SAFETY_OP_SENT, .node = node, .a = {term, vote_for});
    struct rs_node *n = rs__node_get(c, node);
    if (term > n->promised_term)
        n->promised_term = term;
    if (!vote_for || term == 0)
        return !c->failed;
    const struct rs_grant *g = grant_find(c, term, node);
    if (g && g->candidate != vote_for)
        return rs__violate(c, "double_vote", node, vote_for, 0, term,
                           "node %" PRIu64 " voted for %" PRIu64 " and for %" PRIu64
                           " in term %" PRIu64,
                           node, g->candidate, vote_for, term);
    if (!g) {
        grant_add(c, term, node, vote_for);
        c->n_votes++;
    }
    if (term >= n->grant_term) {
        n->grant_term = term;
        n->grant_to = vote_for;
    }
    return !c->failed;
}

void raft_safety_synced(struct raft_safety *c, uint64_t node)
{
    if (c->sink) {
        rs__record(c, &(struct raft_safety_feed){.op = RAFT_SAFETY_OP_SYNCED, .node = node});
        return;
    }
    struct rs_node *n = rs__node_get(c, node);
    if (!n->commit_unknown && n->commit_fed > n->commit_durable)
        n->commit_durable = n->commit_fed;
}

bool raft_safety_elected(struct raft_safety *c, uint64_t node, uint64_t term,
                         const struct raft_safety_conf *conf)
{
    FL_ASSERT(c != NULL && conf != NULL);
    if (c->sink)
        return rs__record_conf(
            c, &(struct raft_safety_feed){.op = RAFT_SAFETY_OP_ELECTED, .node = node, .a = {term}},
            conf);
    struct rs_conf cf;
    if (!conf_from(&cf, conf) || conf_count(&cf, false) == 0)
        return !c->failed;
    c->n_elections++;
    uint32_t voters = 0, learners = 0, quorum = conf_count(&cf, false) / 2 + 1;
    for (uint32_t i = 0; i < cf.n; i++) {
        uint64_t id = cf.ids[i];
        const struct rs_grant *g = id == node ? NULL : grant_find(c, term, id);
        bool yes = id == node ? !cf.learner[i] : g && g->candidate == node;
        if (yes && cf.learner[i])
            learners++;
        else if (yes)
            voters++;
    }
    if (voters >= quorum)
        return !c->failed;
    if (voters + learners >= quorum)
        return rs__violate(c, "learner_vote", node, 0, 0, term,
                           "node %" PRIu64 " leads term %" PRIu64 " with %" PRIu32
                           " voters' votes and %" PRIu32 " learner's: a quorum only if learners "
                           "vote (quorum %" PRIu32 ")",
                           node, term, voters, learners, quorum);
    char text[400];
    conf_text(&cf, text, sizeof text);
    return rs__violate(c, "election_quorum", node, 0, 0, term,
                       "node %" PRIu64 " leads term %" PRIu64 " with %" PRIu32
                       " votes of the voters of its configuration (%s), quorum %" PRIu32,
                       node, term, voters, text, quorum);
}

/* ---- restarts ------------------------------------------------------------------- */

static bool recovered_durable(struct raft_safety *c, const struct rs_node *n,
                              const struct raft_safety_boot *b)
{
    if (b->term < n->promised_term)
        return rs__violate(c, "term_durability", n->id, 0, 0, b->term,
                           "node %" PRIu64 " restarted in term %" PRIu64 " but had sent a "
                           "message of term %" PRIu64,
                           n->id, b->term, n->promised_term);
    if (n->grant_term && b->term == n->grant_term && b->vote != n->grant_to)
        return rs__violate(c, "vote_durability", n->id, n->grant_to, 0, b->term,
                           "node %" PRIu64 " restarted in term %" PRIu64 " with vote %" PRIu64
                           " but had voted for %" PRIu64 " in that term",
                           n->id, b->term, b->vote, n->grant_to);
    if (b->commit < n->commit_durable)
        return rs__violate(c, "commit_durability", n->id, 0, b->commit, b->term,
                           "node %" PRIu64 " restarted with commit index %" PRIu64 " below %" PRIu64
                           ", which it had made durable",
                           n->id, b->commit, n->commit_durable);
    return !c->failed;
}

static bool recovered_conf(struct raft_safety *c, struct rs_node *n,
                           const struct raft_safety_boot *b)
{
    struct rs_conf got;
    if (!b->conf || !conf_from(&got, b->conf))
        return !c->failed;
    if (!n->conf_known || b->last_index > n->last || b->last_index < n->base)
        return !c->failed;
    c->n_conf_checks++;
    const struct rs_conf *want = conf_at(n, b->last_index);
    if (conf_equal(want, &got))
        return !c->failed;
    char w[400], g[400];
    conf_text(want, w, sizeof w);
    conf_text(&got, g, sizeof g);
    return rs__violate(c, "conf_after_restart", n->id, 0, b->last_index, b->term,
                       "node %" PRIu64 " restarted with %s in force, but its log and snapshot "
                       "up to index %" PRIu64 " imply %s",
                       n->id, g, b->last_index, w);
}

bool raft_safety_recovered(struct raft_safety *c, uint64_t node, const struct raft_safety_boot *b)
{
    FL_ASSERT(c != NULL && b != NULL);
    if (c->sink)
        return rs__record_conf(c,
                               &(struct raft_safety_feed){
                                   .op = RAFT_SAFETY_OP_RECOVERED,
                                   .node = node,
                                   .a = {b->term, b->vote, b->commit, b->last_index, b->applied}},
                               b->conf);
    struct rs_node *n = rs__node_get(c, node);
    c->n_restarts++;
    bool ok = recovered_durable(c, n, b);
    if (b->entries)
        ok = rs__view_recovered(c, n, b->entries, b->n_entries) && ok;
    n = rs__node_get(c, node);
    ok = recovered_conf(c, n, b) && ok;
    raft_safety_restart(c, node, b->last_index);
    n = rs__node_get(c, node); /* (the array does not move, but stay honest) */
    n->applied = b->applied;
    n->applied_unknown = false;
    n->commit_fed = b->commit;
    n->commit_unknown = false;
    n->commit_durable = b->commit; /* it is on its disk */
    n->commit = FL_MAX(n->base, FL_MIN(n->commit, b->commit));
    struct rs_conf cf;
    if (!n->conf_known && b->conf && conf_from(&cf, b->conf) && n->base == b->last_index)
        rs__conf_reset(n, &cf); /* unseen entries: follow it from what it says */
    return ok && !c->failed;
}

/* ---- commits by quorum ---------------------------------------------------------- */

/* Whether member f holds, in its (persisted) log view, the entry whose chain at index i
 * is `chain`. A view that cannot tell (unanchored, or below its base with the chain no
 * longer known) counts as holding it: the property never guesses a violation. */
static bool holds(struct raft_safety *c, const struct rs_node *f, uint64_t i, uint64_t chain)
{
    if (f->last < i)
        return false;
    uint64_t have = 0;
    if (f->unanchored || !rs__chain_at(c, f, i, &have))
        return true;
    return have == chain;
}

static const struct rs_node *node_find(const struct raft_safety *c, uint64_t id)
{
    for (size_t j = 0; j < c->nodes_count; j++)
        if (c->nodes[j].id == id)
            return &c->nodes[j];
    return NULL;
}

/* Whether log f is at most as up-to-date as a log ending at (lt, li) (Raft §5.4.1: the
 * last terms first, then the lengths), so that f would grant that log its vote. A
 * member never fed has an empty log; one whose last term is unknown never counts. */
static bool log_at_most(struct raft_safety *c, const struct rs_node *f, uint64_t lt, uint64_t li)
{
    uint64_t ft = 0;
    if (!f)
        return true;
    if (!rs__last_term(c, f, &ft))
        return false;
    return ft < lt || (ft == lt && f->last <= li);
}

/* Leader Completeness at the commit (Raft §5.4, Figure 8): once an entry is committed,
 * no member without it can be elected, because every log holding it is more up-to-date
 * than every log lacking it (the election restriction then keeps it in every later
 * leader). So when leader `node` commits index i, a voter m of its configuration that
 * lacks the entry must not have a log at least as up-to-date as those of a quorum of
 * the voters (itself included): that quorum could elect it and it would overwrite a
 * committed entry. A leader that counts replicas of an entry of an earlier term
 * (Figure 8's (c)) commits exactly such an entry, which a member holding a later-term
 * entry at that index can replace (its (d)); this catches the commit itself, not only
 * the later overwrite. Members whose view cannot tell are never reported. */
static bool commit_electable_check(struct raft_safety *c, uint64_t node, uint64_t term,
                                   const struct rs_conf *cf, uint64_t i, uint64_t chain,
                                   uint32_t quorum)
{
    for (uint32_t k = 0; k < cf->n; k++) {
        const struct rs_node *m = node_find(c, cf->ids[k]);
        uint64_t mt = 0;
        if (cf->learner[k] || !m || m->id == node || holds(c, m, i, chain) ||
            !rs__last_term(c, m, &mt))
            continue;
        uint32_t votes = 0;
        for (uint32_t v = 0; v < cf->n; v++)
            votes += !cf->learner[v] && log_at_most(c, node_find(c, cf->ids[v]), mt, m->last);
        if (votes < quorum)
            continue;
        char text[400];
        conf_text(cf, text, sizeof text);
        return rs__violate(c, "commit_electable", node, m->id, i, term,
                           "leader %" PRIu64 " of term %" PRIu64 " committed index %" PRIu64
                           ", but node %" PRIu64 ", without that entry (its log ends at %" PRIu64
                           "/%" PRIu64 "), is at least as up-to-date as %" PRIu32
                           " voters of its configuration (%s), quorum %" PRIu32
                           ": it can be elected and overwrite a committed entry",
                           node, term, i, m->id, mt, m->last, votes, text, quorum);
    }
    return !c->failed;
}

/* How many voters of cf hold the entry whose chain at index i is `chain`. */
static uint32_t commit_held(struct raft_safety *c, const struct rs_conf *cf, uint64_t i,
                            uint64_t chain)
{
    uint32_t held = 0;
    for (uint32_t k = 0; k < cf->n; k++) {
        if (cf->learner[k])
            continue;
        const struct rs_node *f = rs__node_find(c, cf->ids[k]);
        held += f && holds(c, f, i, chain);
    }
    return held;
}

/* Whether cf's voters include a quorum holding the entry (no voters: cannot tell). */
static bool commit_quorum_in(struct raft_safety *c, const struct rs_conf *cf, uint64_t i,
                             uint64_t chain)
{
    uint32_t voters = conf_count(cf, false);
    return voters == 0 || commit_held(c, cf, i, chain) >= voters / 2 + 1;
}

bool raft_safety_leader_commit(struct raft_safety *c, uint64_t node, uint64_t term, uint64_t commit)
{
    FL_ASSERT(c != NULL && node != 0);
    RS_RECORD(c, .op = RAFT_SAFETY_OP_LEADER_COMMIT, .node = node, .a = {term, commit});
    struct rs_node *n = rs__node_get(c, node);
    /* The leader decided this commit after the previous one it declared in this term,
     * when its log ended somewhere in [floor, last] (a leader's log only grows in its
     * term); entries fed since may include a conf entry appended after the decision.
     * With changes in force from their append, the configuration that decided it is
     * the one in force at one of those indexes (not necessarily at last: one member,
     * leading alone, commits index i and then appends the change adding a second in
     * the same ready). */
    uint64_t floor = n->lc_term == term ? n->lc_last : 0;
    n->lc_term = term;
    n->lc_last = n->last;
    uint64_t chain = 0;
    if (!n->leader || n->leader_term != term || !n->conf_known || n->unanchored ||
        commit > n->last || commit <= n->base || !rs__chain_at(c, n, commit, &chain))
        return !c->failed; /* nothing new, or the checker cannot tell */
    uint64_t lo = FL_MIN(FL_MAX(commit, floor), n->last);
    const struct rs_conf *cf = conf_at(n, lo);
    bool ok = commit_quorum_in(c, cf, commit, chain);
    for (size_t k = 0; k < n->confs_count && !ok; k++) {
        if (n->confs[k].index <= lo || n->confs[k].index > n->last)
            continue;
        cf = &n->confs[k].conf;
        ok = commit_quorum_in(c, cf, commit, chain);
    }
    if (conf_count(cf, false) == 0)
        return !c->failed; /* no voters known */
    uint32_t quorum = conf_count(cf, false) / 2 + 1;
    if (ok)
        return commit_electable_check(c, node, n->leader_term, cf, commit, chain, quorum);
    uint32_t held = commit_held(c, cf, commit, chain);
    char text[400];
    conf_text(cf, text, sizeof text);
    return rs__violate(c, "commit_quorum", node, 0, commit, n->leader_term,
                       "leader %" PRIu64 " of term %" PRIu64 " declared index %" PRIu64
                       " committed, but only %" PRIu32 " voters of its configuration (%s) hold it "
                       "in their persisted logs, quorum %" PRIu32,
                       node, n->leader_term, commit, held, text, quorum);
}
