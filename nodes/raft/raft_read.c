/*
 * raft_read.c: linearizable reads by ReadIndex (Raft thesis §6.4) and leader transfer
 * (thesis §3.10, etcd MsgTimeoutNow).
 *
 * ReadIndex: the leader records its commit index for the request, then confirms it
 * is still leader by a heartbeat round whose context is the request's sequence
 * number; once a quorum of voters answered that round (or a later one), the request
 * and every earlier one are released with their recorded index. A leader that has
 * not yet committed an entry of its own term does not know the latest commit index,
 * so requests wait until it has. Requests are a queue with consecutive sequence
 * numbers, so an acknowledgement finds its request in O(1).
 */
#include "nodes/raft/raft_int.h"

static void read_release(struct raft *r, const struct raft__read *rd)
{
    if (rd->from == r->cfg.id) {
        raft__read_state(r, rd->context, rd->index);
        return;
    }
    struct raft_msg *m = raft__send(r, RAFT_MSG_READ_INDEX_RESP, rd->from);
    m->context = rd->context;
    m->index = rd->index;
}

static bool committed_in_term(const struct raft *r)
{
    return raft__term_at(r, r->commit) == r->term;
}

static uint32_t read_acks_voters(const struct raft *r, const struct raft__read *rd)
{
    return raft__conf_count_matched(raft_conf(r), rd->acks, rd->acks_count);
}

void raft__read_request(struct raft *r, uint64_t context, uint64_t from)
{
    FL_ASSERT(r->role == RAFT_LEADER);
    struct raft__read rd;
    memset(&rd, 0, sizeof(rd));
    rd.context = context;
    rd.from = from;
    if (!committed_in_term(r)) {
        if (r->read_waits_count >= r->cfg.read_pending_max)
            return;
        FL_GROW(r->read_waits, r->read_waits_cap, r->read_waits_count + 1, 16);
        r->read_waits[r->read_waits_count++] = rd;
        return;
    }
    rd.index = r->commit;
    const struct raft_conf_state *c = raft_conf(r);
    if (c->voters_count == 1 && raft_conf_is_voter(c, r->cfg.id)) {
        read_release(r, &rd); /* a single voter is its own quorum */
        return;
    }
    if (r->reads_count >= r->cfg.read_pending_max)
        return;
    FL_GROW(r->reads, r->reads_cap, r->reads_count + 1, 16);
    rd.seq = ++r->read_seq;
    rd.acks[rd.acks_count++] = r->cfg.id;
    FL_ASSERT(r->reads_count == 0 || r->reads[r->reads_count - 1].seq + 1 == rd.seq);
    r->reads[r->reads_count++] = rd;
    /* One heartbeat round at the next ready confirms every request made until then. */
    r->read_flush = true;
}

void raft__read_ack(struct raft *r, uint64_t seq, uint64_t from)
{
    if (r->reads_count == 0 || seq < r->reads[0].seq)
        return;
    size_t k = (size_t)(seq - r->reads[0].seq);
    if (k >= r->reads_count)
        return;
    struct raft__read *rd = &r->reads[k];
    FL_ASSERT(rd->seq == seq);
    for (uint32_t i = 0; i < rd->acks_count; i++)
        if (rd->acks[i] == from)
            return;
    if (rd->acks_count < RAFT_NODES_MAX)
        rd->acks[rd->acks_count++] = from;
    if (read_acks_voters(r, rd) < raft_conf_quorum(raft_conf(r)))
        return;
    /* Leadership confirmed after every request up to k was recorded. */
    for (size_t i = 0; i <= k; i++)
        read_release(r, &r->reads[i]);
    memmove(r->reads, r->reads + k + 1, (r->reads_count - k - 1) * sizeof(r->reads[0]));
    r->reads_count -= k + 1;
}

void raft__reads_on_commit(struct raft *r)
{
    if (r->read_waits_count == 0 || !committed_in_term(r) || r->role != RAFT_LEADER)
        return;
    size_t n = r->read_waits_count;
    r->read_waits_count = 0;
    for (size_t i = 0; i < n; i++)
        raft__read_request(r, r->read_waits[i].context, r->read_waits[i].from);
    FL_ASSERT(r->read_waits_count == 0);
}

void raft__reads_clear(struct raft *r)
{
    r->reads_count = 0;
    r->read_waits_count = 0;
}

int raft_read_index(struct raft *r, uint64_t context)
{
    FL_ASSERT(r != NULL);
    if (r->role == RAFT_LEADER) {
        if (r->reads_count + r->read_waits_count >= r->cfg.read_pending_max)
            return FL_EFULL;
        raft__read_request(r, context, r->cfg.id);
        return FL_OK;
    }
    if (r->lead == RAFT_NONE)
        return FL_ENOENT;
    struct raft_msg *m = raft__send(r, RAFT_MSG_READ_INDEX, r->lead);
    m->term = 0;
    m->context = context;
    return FL_OK;
}

/* ---- leader transfer ---- */

static void send_timeout_now(struct raft *r, uint64_t to)
{
    raft__send(r, RAFT_MSG_TIMEOUT_NOW, to);
}

void raft__transfer_check(struct raft *r, struct raft__progress *pr)
{
    if (r->role == RAFT_LEADER && r->transferee == pr->id && pr->match == raft__last_index(r))
        send_timeout_now(r, pr->id);
}

int raft_transfer_leader(struct raft *r, uint64_t target)
{
    FL_ASSERT(r != NULL);
    if (r->role != RAFT_LEADER)
        return FL_ENOENT;
    if (target == r->cfg.id)
        return FL_OK;
    if (!raft_conf_is_voter(raft_conf(r), target))
        return FL_EINVAL;
    struct raft__progress *pr = raft__progress_find(r, target);
    FL_ASSERT(pr != NULL);
    if (r->transferee == target)
        return FL_OK;
    r->transferee = target;
    r->election_elapsed = 0; /* the transfer must finish within an election timeout */
    if (pr->match == raft__last_index(r))
        send_timeout_now(r, target);
    else
        raft__send_append(r, pr, false);
    return FL_OK;
}
