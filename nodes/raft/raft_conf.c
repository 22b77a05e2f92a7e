/*
 * raft_conf.c: configurations (voters + learners), conf-change encoding, and the
 * two server-side membership checks etcd makes (strict reconfiguration, learner in
 * sync). Pure functions over struct raft_conf_state; no node state here except in
 * raft_learner_in_sync, which reads the leader's progress.
 */
#include "nodes/raft/raft_int.h"

const char *raft_cc_type_name(enum raft_cc_type t)
{
    static const char *const names[] = {[RAFT_CC_ADD_VOTER] = "add_voter",
                                        [RAFT_CC_ADD_LEARNER] = "add_learner",
                                        [RAFT_CC_PROMOTE] = "promote",
                                        [RAFT_CC_REMOVE] = "remove"};
    return FL_ENUM_NAME(names, t, "unknown");
}

int raft_conf_change_decode(const struct raft_entry *e, struct raft_conf_change *cc)
{
    FL_ASSERT(e != NULL && cc != NULL);
    memset(cc, 0, sizeof(*cc));
    if (e->type != RAFT_ENTRY_CONF_CHANGE || e->len < RAFT_CC_HEADER_BYTES || e->data == NULL)
        return FL_EINVAL;
    if (e->data[0] > RAFT_CC_REMOVE)
        return FL_EINVAL;
    cc->type = (enum raft_cc_type)e->data[0];
    uint64_t id = 0;
    for (int i = 7; i >= 0; i--)
        id = (id << 8) | e->data[1 + i];
    if (id == RAFT_NONE)
        return FL_EINVAL;
    cc->node_id = id;
    cc->context = e->len > RAFT_CC_HEADER_BYTES ? e->data + RAFT_CC_HEADER_BYTES : NULL;
    cc->context_len = e->len - RAFT_CC_HEADER_BYTES;
    return FL_OK;
}

static bool ids_has(const uint64_t *ids, uint32_t n, uint64_t id)
{
    for (uint32_t i = 0; i < n; i++)
        if (ids[i] == id)
            return true;
    return false;
}

/* Inserts id keeping the list sorted ascending (total order: determinism). */
static void ids_insert(uint64_t *ids, uint32_t *n, uint64_t id)
{
    FL_ASSERT(*n < RAFT_NODES_MAX);
    uint32_t i = *n;
    while (i > 0 && ids[i - 1] > id) {
        ids[i] = ids[i - 1];
        i--;
    }
    ids[i] = id;
    (*n)++;
}

static void ids_remove(uint64_t *ids, uint32_t *n, uint64_t id)
{
    for (uint32_t i = 0; i < *n; i++) {
        if (ids[i] == id) {
            memmove(&ids[i], &ids[i + 1], (*n - i - 1) * sizeof(ids[0]));
            (*n)--;
            return;
        }
    }
    FL_UNREACHABLE();
}

bool raft_conf_is_voter(const struct raft_conf_state *c, uint64_t id)
{
    return ids_has(c->voters, c->voters_count, id);
}

bool raft_conf_is_learner(const struct raft_conf_state *c, uint64_t id)
{
    return ids_has(c->learners, c->learners_count, id);
}

uint32_t raft_conf_quorum(const struct raft_conf_state *c)
{
    return c->voters_count / 2 + 1;
}

int raft_conf_apply(struct raft_conf_state *c, const struct raft_conf_change *cc)
{
    FL_ASSERT(c != NULL && cc != NULL);
    bool voter = raft_conf_is_voter(c, cc->node_id);
    bool learner = raft_conf_is_learner(c, cc->node_id);
    FL_ASSERT(!(voter && learner));
    if (cc->node_id == RAFT_NONE)
        return FL_EINVAL;
    switch (cc->type) {
    case RAFT_CC_ADD_VOTER:
        if (voter || learner)
            return FL_EEXIST;
        if (c->voters_count + c->learners_count >= RAFT_NODES_MAX)
            return FL_EFULL;
        ids_insert(c->voters, &c->voters_count, cc->node_id);
        return FL_OK;
    case RAFT_CC_ADD_LEARNER:
        if (voter || learner)
            return FL_EEXIST;
        if (c->learners_count >= 1 || c->voters_count + c->learners_count >= RAFT_NODES_MAX)
            return FL_EFULL; /* etcd --max-learners 1 */
        ids_insert(c->learners, &c->learners_count, cc->node_id);
        return FL_OK;
    case RAFT_CC_PROMOTE:
        if (!learner)
            return FL_ENOENT;
        ids_remove(c->learners, &c->learners_count, cc->node_id);
        ids_insert(c->voters, &c->voters_count, cc->node_id);
        return FL_OK;
    case RAFT_CC_REMOVE:
        if (voter) {
            if (c->voters_count == 1)
                return FL_EINVAL; /* a configuration keeps at least one voter */
            ids_remove(c->voters, &c->voters_count, cc->node_id);
        } else if (learner) {
            ids_remove(c->learners, &c->learners_count, cc->node_id);
        } else {
            return FL_ENOENT;
        }
        return FL_OK;
    }
    return FL_EINVAL;
}

uint32_t raft__conf_count_matched(const struct raft_conf_state *c, const uint64_t *ids, size_t n)
{
    uint32_t k = 0;
    for (uint32_t i = 0; i < c->voters_count; i++)
        if (ids_has(ids, (uint32_t)n, c->voters[i]))
            k++;
    FL_ASSERT(k <= c->voters_count);
    return k;
}

/* etcd isReadyToAddVotingMember / isReadyToRemoveVotingMember /
 * isReadyToPromoteMember with --strict-reconfig-check. */
bool raft_conf_change_quorum_ok(const struct raft_conf_state *conf,
                                const struct raft_conf_change *cc, const uint64_t *started,
                                size_t started_count)
{
    FL_ASSERT(conf != NULL && cc != NULL);
    FL_ASSERT(started != NULL || started_count == 0);
    uint32_t nstarted = raft__conf_count_matched(conf, started, started_count);
    uint32_t nvoters = conf->voters_count;
    switch (cc->type) {
    case RAFT_CC_ADD_LEARNER:
        return true;
    case RAFT_CC_ADD_VOTER:
        if (nvoters == 1 && nstarted == 1)
            return true; /* a 1-member cluster may always add a second */
        return nstarted >= (nvoters + 1) / 2 + 1;
    case RAFT_CC_PROMOTE:
        return nstarted + 1 >= (nvoters + 1) / 2 + 1;
    case RAFT_CC_REMOVE:
        if (!raft_conf_is_voter(conf, cc->node_id))
            return true;
        if (ids_has(started, (uint32_t)started_count, cc->node_id))
            nstarted--;
        return nvoters > 1 && nstarted >= (nvoters - 1) / 2 + 1;
    }
    return false;
}

bool raft_learner_in_sync(const struct raft *r, uint64_t learner)
{
    struct raft_progress lp, mine;
    if (raft_progress_get(r, learner, &lp) != FL_OK || !lp.learner)
        return false;
    if (raft_progress_get(r, r->cfg.id, &mine) != FL_OK)
        return false;
    /* etcd readyPercent 0.9 of the leader's match, in integers. */
    return lp.match * 10 >= mine.match * 9;
}
