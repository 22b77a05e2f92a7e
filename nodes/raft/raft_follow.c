/*
 * raft_follow.c: the follower's side of replication — AppendEntries with the log
 * matching check and conflict truncation (Raft paper §5.3), heartbeats, and
 * InstallSnapshot (§7). A rejection carries a hint (the follower's best guess of the
 * last entry that could match, and its term) so the leader skips a whole term per
 * round trip instead of one entry (etcd's fast log rejection).
 */
#include "nodes/raft/raft_int.h"

static void commit_to(struct raft *r, uint64_t commit)
{
    if (commit > r->commit) {
        FL_ASSERT(commit <= raft__last_index(r));
        r->commit = commit;
    }
}

void raft__handle_append(struct raft *r, const struct raft_msg *m)
{
    FL_ASSERT(r->role == RAFT_FOLLOWER && r->lead == m->from);
    struct raft_msg *resp = raft__send(r, RAFT_MSG_APPEND_RESP, m->from);
    if (m->index < r->commit) {
        resp->index = r->commit; /* already have and committed it all */
        return;
    }
    uint64_t last = raft__last_index(r);
    if (m->index > last || raft__term_at(r, m->index) != m->log_term) {
        uint64_t hint = raft__find_conflict_by_term(r, FL_MIN(m->index, last), m->log_term);
        resp->reject = true;
        resp->index = m->index;
        resp->reject_hint = hint;
        resp->hint_term = raft__term_at(r, hint);
        return;
    }
    /* Skip entries we already hold; truncate at the first conflict; append the rest. */
    size_t i = 0;
    for (; i < m->entries_count; i++) {
        const struct raft_entry *e = &m->entries[i];
        if (e->index != m->index + 1 + i) {
            resp->reject = true; /* malformed: not contiguous */
            resp->index = m->index;
            resp->reject_hint = raft__last_index(r);
            resp->hint_term = raft__last_term(r);
            return;
        }
        if (e->index > raft__last_index(r))
            break;
        if (raft__term_at(r, e->index) != e->term) {
            /* Never a committed entry, whatever a leader sends (a bug switch, a disk
             * that lost synced data): an append starting below commit was answered
             * above, so every entry here lies past it. etcd panics at this point; the
             * order of the checks makes it unreachable, and the safety checker reports
             * a leader that lacked a committed entry as a verdict. */
            FL_ASSERT(e->index > r->commit);
            raft__log_truncate(r, e->index);
            break;
        }
    }
    for (; i < m->entries_count; i++) {
        const struct raft_entry *e = &m->entries[i];
        if (e->term < raft__last_term(r))
            break; /* malformed; keep what is valid */
        raft__log_append(r, e->term, e->type, e->data, e->len);
    }
    uint64_t last_new = m->index + m->entries_count;
    last_new = FL_MIN(last_new, raft__last_index(r));
    commit_to(r, FL_MIN(m->commit, last_new));
    resp->index = last_new;
}

void raft__handle_heartbeat(struct raft *r, const struct raft_msg *m)
{
    FL_ASSERT(r->role == RAFT_FOLLOWER);
    /* The leader sends min(its commit, our match), so this never passes our log. */
    commit_to(r, FL_MIN(m->commit, raft__last_index(r)));
    struct raft_msg *resp = raft__send(r, RAFT_MSG_HEARTBEAT_RESP, m->from);
    resp->context = m->context;
    resp->index = raft__last_index(r);
    resp->log_term = m->index;
}

void raft__handle_snapshot(struct raft *r, const struct raft_msg *m)
{
    const struct raft_snapshot *s = m->snapshot;
    FL_ASSERT(s != NULL && r->role == RAFT_FOLLOWER);
    struct raft_msg *resp = raft__send(r, RAFT_MSG_APPEND_RESP, m->from);
    if (s->index <= r->commit) {
        resp->index = r->commit;
        return;
    }
    if (raft__term_at(r, s->index) == s->term && s->index <= raft__last_index(r)) {
        /* Our log already holds the snapshot's last entry: just learn the commit. Only
         * up to it is known to match the leader (entries after it may conflict). */
        commit_to(r, s->index);
        resp->index = s->index;
        return;
    }
    raft__log_reset(r, s->index, s->term, &s->conf);
    r->commit = s->index;
    free(r->snap_data);
    r->snap = *s;
    r->snap_data = s->len ? fl_memdup(s->data, s->len) : NULL;
    r->snap.data = r->snap_data;
    r->snap_pending = true;
    raft__event(r, RAFT_EV_SNAPSHOT_APPLIED, m->from, s->index,
                "installed snapshot %" PRIu64 "/%" PRIu64 " (%zu bytes) from %" PRIu64, s->index,
                s->term, s->len, m->from);
    raft__event(r, RAFT_EV_CONF_CHANGE, RAFT_NONE, s->index,
                "configuration from snapshot: %u voters, %u learners", s->conf.voters_count,
                s->conf.learners_count)
        ->reason = RAFT_REASON_SNAPSHOT;
    raft__conf_changed(r);
    resp->index = s->index;
}
