/*
 * raft_log.c: the in-memory Raft log and the configuration stack.
 *
 * The log is an array of entries after a base (index, term) left by the last
 * compaction or snapshot install. Entry data is copied into the log's chunks (see
 * struct raft__chunk).
 *
 * Membership (DESIGN §3.4, Raft thesis §4.1): a conf entry is in force as soon as it
 * is appended. For each conf entry in the log we keep the configuration that results
 * from it, so that truncating the entry (a new leader overwrote it) rolls the
 * configuration back to the previous record, or to the base configuration. The
 * configuration in force is always the last record (or the base).
 */
#include "nodes/raft/raft_int.h"

uint64_t raft__last_index(const struct raft *r)
{
    return r->log.base_index + r->log.count;
}

uint64_t raft__last_term(const struct raft *r)
{
    return r->log.count ? r->log.ents[r->log.count - 1].term : r->log.base_term;
}

uint64_t raft__term_at(const struct raft *r, uint64_t index)
{
    const struct raft__log *l = &r->log;
    if (index == l->base_index)
        return l->base_term;
    if (index < l->base_index || index > l->base_index + l->count)
        return 0;
    return l->ents[index - l->base_index - 1].term;
}

const struct raft_entry *raft__entry_at(const struct raft *r, uint64_t index)
{
    const struct raft__log *l = &r->log;
    FL_ASSERT(index > l->base_index && index <= l->base_index + l->count);
    const struct raft_entry *e = &l->ents[index - l->base_index - 1];
    FL_ASSERT(e->index == index);
    return e;
}

const struct raft_conf_state *raft__conf_at(const struct raft *r, uint64_t index)
{
    const struct raft__log *l = &r->log;
    /* Newest record at or below index; the stack is short (one uncommitted entry at a
     * time plus committed ones not yet compacted), so a backwards scan is fine. */
    for (size_t i = l->confs_count; i > 0; i--)
        if (l->confs[i - 1].index <= index)
            return &l->confs[i - 1].conf;
    return &l->base_conf;
}

uint64_t raft__last_conf_index(const struct raft *r)
{
    return r->log.confs_count ? r->log.confs[r->log.confs_count - 1].index : 0;
}

#define RAFT_CHUNK_BYTES ((size_t)64 * 1024)

static const uint8_t *chunk_copy(struct raft__log *l, uint64_t index, const void *data, size_t len)
{
    struct raft__chunk *c = l->chunk_tail;
    if (!c || c->cap - c->used < len) {
        size_t cap = FL_MAX(RAFT_CHUNK_BYTES, len);
        c = fl_malloc(sizeof(*c) + cap);
        c->next = NULL;
        c->max_index = 0;
        c->cap = cap;
        c->used = 0;
        if (l->chunk_tail)
            l->chunk_tail->next = c;
        else
            l->chunk_head = c;
        l->chunk_tail = c;
    }
    uint8_t *d = c->data + c->used;
    memcpy(d, data, len);
    c->used += (len + 7) & ~(size_t)7;
    if (c->used > c->cap)
        c->used = c->cap;
    c->max_index = FL_MAX(c->max_index, index);
    return d;
}

/* Frees the chunks whose every entry is at or below upto (all of them: UINT64_MAX). */
static void chunks_free_upto(struct raft__log *l, uint64_t upto)
{
    while (l->chunk_head && l->chunk_head->max_index <= upto) {
        struct raft__chunk *c = l->chunk_head;
        l->chunk_head = c->next;
        if (l->chunk_tail == c)
            l->chunk_tail = NULL;
        free(c);
    }
}

static void conf_push(struct raft *r, uint64_t index, const struct raft_conf_state *conf)
{
    struct raft__log *l = &r->log;
    FL_ASSERT(l->confs_count == 0 || l->confs[l->confs_count - 1].index < index);
    FL_GROW(l->confs, l->confs_cap, l->confs_count + 1, 4);
    l->confs[l->confs_count].index = index;
    l->confs[l->confs_count].conf = *conf;
    l->confs_count++;
}

static enum raft_reason cc_reason(enum raft_cc_type t)
{
    switch (t) {
    case RAFT_CC_ADD_VOTER:
        return RAFT_REASON_ADD_VOTER;
    case RAFT_CC_ADD_LEARNER:
        return RAFT_REASON_ADD_LEARNER;
    case RAFT_CC_PROMOTE:
        return RAFT_REASON_PROMOTE;
    case RAFT_CC_REMOVE:
        return RAFT_REASON_REMOVE;
    }
    return RAFT_REASON_NONE;
}

void raft__log_append(struct raft *r, uint64_t term, enum raft_entry_type type, const void *data,
                      size_t len)
{
    struct raft__log *l = &r->log;
    FL_ASSERT(term >= raft__last_term(r));
    FL_ASSERT(len == 0 || data != NULL);
    FL_GROW(l->ents, l->cap, l->count + 1, 64);
    struct raft_entry *e = &l->ents[l->count++];
    e->index = l->base_index + l->count;
    e->term = term;
    e->type = type;
    e->len = len;
    e->data = len ? chunk_copy(l, e->index, data, len) : NULL;
    if (type != RAFT_ENTRY_CONF_CHANGE)
        return;
    struct raft_conf_change cc;
    struct raft_conf_state next = *raft__conf_at(r, e->index);
    int rc = raft_conf_change_decode(e, &cc);
    if (rc == FL_OK)
        rc = raft_conf_apply(&next, &cc);
    /* An entry that does not fit leaves the configuration as it was (the leader
     * validated it; a forged one must not crash a follower), but is still recorded so
     * rollback stays exact. */
    conf_push(r, e->index, &next);
    if (rc == FL_OK)
        raft__event(r, RAFT_EV_CONF_CHANGE, cc.node_id, e->index, "appended %s %" PRIu64,
                    raft_cc_type_name(cc.type), cc.node_id)
            ->reason = cc_reason(cc.type);
    else
        raft__event(r, RAFT_EV_CONF_CHANGE, RAFT_NONE, e->index,
                    "appended conf entry that does not apply (%s), ignored", fl_strerror(rc))
            ->reason = RAFT_REASON_INVALID;
    raft__conf_changed(r);
}

void raft__log_truncate(struct raft *r, uint64_t from)
{
    struct raft__log *l = &r->log;
    FL_ASSERT(from > l->base_index && from <= raft__last_index(r));
    FL_ASSERT(from > r->commit); /* callers refuse to overwrite committed entries */
    size_t keep = (size_t)(from - l->base_index - 1);
    l->count = keep; /* their bytes stay in the chunks until compaction passes them */
    if (l->stable >= from)
        l->stable = from - 1;
    if (r->ready_out && from < r->ready_trunc_min)
        r->ready_trunc_min = from;
    bool rolled = false;
    while (l->confs_count && l->confs[l->confs_count - 1].index >= from) {
        l->confs_count--;
        rolled = true;
    }
    if (rolled) {
        raft__event(r, RAFT_EV_CONF_CHANGE, RAFT_NONE, from,
                    "conf entry truncated at %" PRIu64 ", rolled back to index %" PRIu64, from,
                    raft__last_conf_index(r))
            ->reason = RAFT_REASON_ROLLBACK;
        raft__conf_changed(r);
    }
}

void raft__log_compact(struct raft *r, uint64_t upto)
{
    struct raft__log *l = &r->log;
    FL_ASSERT(upto <= r->applied && upto <= raft__last_index(r));
    if (upto <= l->base_index)
        return;
    size_t drop = (size_t)(upto - l->base_index);
    uint64_t new_term = l->ents[drop - 1].term;
    l->base_conf = *raft__conf_at(r, upto);
    chunks_free_upto(l, upto);
    memmove(l->ents, l->ents + drop, (l->count - drop) * sizeof(l->ents[0]));
    l->count -= drop;
    l->base_index = upto;
    l->base_term = new_term;
    if (l->stable < upto)
        l->stable = upto;
    size_t k = 0;
    while (k < l->confs_count && l->confs[k].index <= upto)
        k++;
    if (k) {
        memmove(l->confs, l->confs + k, (l->confs_count - k) * sizeof(l->confs[0]));
        l->confs_count -= k;
    }
    FL_ASSERT(l->count == 0 || l->ents[0].index == upto + 1);
}

void raft__log_reset(struct raft *r, uint64_t index, uint64_t term,
                     const struct raft_conf_state *conf)
{
    struct raft__log *l = &r->log;
    chunks_free_upto(l, UINT64_MAX);
    l->count = 0;
    l->base_index = index;
    l->base_term = term;
    l->stable = index;
    l->base_conf = *conf;
    l->confs_count = 0;
    if (r->ready_out && index + 1 < r->ready_trunc_min)
        r->ready_trunc_min = index + 1;
    FL_ASSERT(raft__last_index(r) == index);
}

void raft__log_close(struct raft__log *l)
{
    chunks_free_upto(l, UINT64_MAX);
    free(l->ents);
    free(l->confs);
    memset(l, 0, sizeof(*l));
}

uint64_t raft__find_conflict_by_term(const struct raft *r, uint64_t index, uint64_t term)
{
    uint64_t last = raft__last_index(r);
    if (index > last)
        index = last;
    if (index <= r->log.base_index)
        return index; /* compacted: the caller falls back to a snapshot */
    /* Bounded by the log length: each step moves one entry towards the base. */
    while (index > r->log.base_index && raft__term_at(r, index) > term)
        index--;
    FL_ASSERT(index >= r->log.base_index);
    return index;
}

int raft_compact(struct raft *r, uint64_t index, const void *data, size_t len)
{
    FL_ASSERT(r != NULL && (len == 0 || data != NULL));
    if (index == 0 || index > r->applied || index <= r->snap.index || index < r->log.base_index)
        return FL_EINVAL;
    uint64_t term = raft__term_at(r, index);
    FL_ASSERT(term != 0);
    struct raft_snapshot s;
    memset(&s, 0, sizeof(s));
    s.index = index;
    s.term = term;
    s.conf = *raft__conf_at(r, index);
    free(r->snap_data);
    r->snap_data = len ? fl_memdup(data, len) : NULL;
    s.data = r->snap_data;
    s.len = len;
    r->snap = s;
    uint64_t keep = r->cfg.snapshot_catchup_entries;
    if (index > keep)
        raft__log_compact(r, index - keep);
    FL_ASSERT(r->log.base_index <= r->snap.index);
    return FL_OK;
}
