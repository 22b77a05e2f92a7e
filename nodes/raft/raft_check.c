/*
 * raft_check.c: the Raft core's invariants (raft.h, raft_invariants_ok). One function
 * per part of the node: the log and its conf records, configurations, role/term/vote,
 * and the leader's progress and reads. Every check is bounded (the log's newest 64
 * entries, the newest 8 appends in flight per peer), so a driver can run them after
 * every step — the unit tests' cluster does, and so does a run with --paranoid. They
 * only read. A broken invariant is reported as "raft_check.c:LINE: what" in the
 * caller's buffer; raft_check_invariants turns that into an assertion.
 */
#include "nodes/raft/raft_int.h"

#include <stdarg.h>

/* A broken invariant is reported through common's fl_inv_fail. */
#define RINV  FL_INV
#define RINVF FL_INVF

/* The log: contiguous at both ends and over its newest 64 entries, terms never going
 * down and never above the node's term, conf records on conf entries in order. */
static bool inv_log(const struct raft *r, char *why, size_t why_len)
{
    const struct raft__log *l = &r->log;
    uint64_t last = raft__last_index(r);
    RINVF(l->stable >= l->base_index && l->stable <= last,
          "stable %" PRIu64 " outside [%" PRIu64 ", %" PRIu64 "]", l->stable, l->base_index, last);
    if (l->count) {
        RINV(l->ents[0].index == l->base_index + 1 && l->ents[0].term >= l->base_term);
        RINV(l->ents[l->count - 1].index == last);
        size_t from = l->count > 64 ? l->count - 64 : 0;
        uint64_t prev_term = from ? l->ents[from - 1].term : l->base_term;
        for (size_t i = from; i < l->count; i++) {
            RINVF(l->ents[i].index == l->base_index + 1 + i, "entry %zu has index %" PRIu64, i,
                  l->ents[i].index);
            RINVF(l->ents[i].term >= prev_term, "term goes down at index %" PRIu64,
                  l->ents[i].index);
            RINV(l->ents[i].len == 0 || l->ents[i].data != NULL);
            prev_term = l->ents[i].term;
        }
    }
    RINVF(raft__last_term(r) <= r->term, "last log term %" PRIu64 " above term %" PRIu64,
          raft__last_term(r), r->term);
    for (size_t i = 0; i < l->confs_count; i++) {
        RINV(l->confs[i].index > l->base_index && l->confs[i].index <= last);
        RINV(raft__entry_at(r, l->confs[i].index)->type == RAFT_ENTRY_CONF_CHANGE);
        RINV(i == 0 || l->confs[i - 1].index < l->confs[i].index);
    }
    return true;
}

/* A configuration: each list ascending, no id twice, the two lists disjoint. */
static bool inv_conf(const struct raft_conf_state *c, char *why, size_t why_len)
{
    RINV(c->voters_count <= RAFT_NODES_MAX && c->learners_count <= RAFT_NODES_MAX);
    RINV(c->voters_count + c->learners_count <= RAFT_NODES_MAX);
    for (uint32_t i = 0; i < c->voters_count; i++) {
        RINV(c->voters[i] != RAFT_NONE && (i == 0 || c->voters[i - 1] < c->voters[i]));
        RINVF(!raft_conf_is_learner(c, c->voters[i]), "%" PRIu64 " is voter and learner",
              c->voters[i]);
    }
    for (uint32_t i = 0; i < c->learners_count; i++)
        RINV(c->learners[i] != RAFT_NONE && (i == 0 || c->learners[i - 1] < c->learners[i]));
    return true;
}

/* Role, term and vote: a candidate voted for itself in its term and so did a leader;
 * only a voter campaigns; the leader knows itself as leader and nobody else does. */
static bool inv_role(const struct raft *r, char *why, size_t why_len)
{
    uint64_t id = r->cfg.id;
    RINVF((r->role == RAFT_LEADER) == (r->lead == id), "role %s with leader %" PRIu64,
          raft_role_name(r->role), r->lead);
    if (r->role == RAFT_CANDIDATE || r->role == RAFT_LEADER)
        RINVF(r->vote == id, "%s of term %" PRIu64 " voted for %" PRIu64, raft_role_name(r->role),
              r->term, r->vote);
    if (r->role == RAFT_CANDIDATE || r->role == RAFT_PRE_CANDIDATE)
        RINVF(raft_conf_is_voter(raft_conf(r), id), "%s is not a voter", raft_role_name(r->role));
    RINV(r->role == RAFT_LEADER || r->prs_count == 0);
    RINV(r->role == RAFT_LEADER || r->transferee == RAFT_NONE);
    RINV(r->transferee != id);
    RINV(r->votes_count <= RAFT_NODES_MAX);
    return true;
}

/* The leader's progress: exactly one per member of its configuration, each within the
 * log, in-flight appends ascending and bounded; pending reads at or below commit. */
static bool inv_leader(const struct raft *r, char *why, size_t why_len)
{
    if (r->role != RAFT_LEADER)
        return true;
    const struct raft_conf_state *c = raft_conf(r);
    uint64_t last = raft__last_index(r);
    RINVF(r->prs_count == c->voters_count + c->learners_count,
          "%" PRIu32 " progress records for %" PRIu32 " members", r->prs_count,
          c->voters_count + c->learners_count);
    for (uint32_t i = 0; i < r->prs_count; i++) {
        const struct raft__progress *pr = &r->prs[i];
        RINVF(raft_conf_is_voter(c, pr->id) || raft_conf_is_learner(c, pr->id),
              "progress of %" PRIu64 ", not a member", pr->id);
        RINVF(pr->match <= last && pr->next >= pr->match + 1 && pr->next <= last + 1,
              "progress of %" PRIu64 ": match %" PRIu64 " next %" PRIu64 " last %" PRIu64, pr->id,
              pr->match, pr->next, last);
        RINV(pr->inflight_count <= r->cfg.max_inflight);
        /* the newest 8 in flight (bounded, like the log's 64) */
        for (uint32_t k = pr->inflight_count > 8 ? pr->inflight_count - 8 : 1;
             k < pr->inflight_count; k++) {
            uint32_t a = (pr->inflight_start + k - 1) % r->cfg.max_inflight;
            uint32_t b = (pr->inflight_start + k) % r->cfg.max_inflight;
            RINV(pr->inflight[a] <= pr->inflight[b]);
        }
    }
    for (size_t i = 0; i < r->reads_count; i++)
        RINVF(r->reads[i].index <= r->commit, "read at %" PRIu64 " above commit %" PRIu64,
              r->reads[i].index, r->commit);
    return true;
}

bool raft_invariants_ok(const struct raft *r, char *why, size_t why_len)
{
    uint64_t last = raft__last_index(r);
    RINVF(r->commit <= last, "commit %" PRIu64 " beyond last index %" PRIu64, r->commit, last);
    RINVF(r->applied <= r->commit, "applied %" PRIu64 " beyond commit %" PRIu64, r->applied,
          r->commit);
    RINVF(r->log.base_index <= r->commit || r->commit == 0,
          "snapshot index %" PRIu64 " above commit %" PRIu64, r->log.base_index, r->commit);
    return inv_log(r, why, why_len) && inv_conf(raft_conf(r), why, why_len) &&
           inv_conf(&r->log.base_conf, why, why_len) && inv_role(r, why, why_len) &&
           inv_leader(r, why, why_len);
}

bool raft_check_invariants(const struct raft *r)
{
    char why[256];
    FL_ASSERTF(raft_invariants_ok(r, why, sizeof why), "%s", why);
    return true;
}
