/*
 * raft_safety.c: the online Raft safety checker (see raft_safety.h for the contract):
 * logs, commits and applies. Terms, votes, restarts and configurations are in
 * raft_safety_votes.c.
 *
 * Model. Every node's log is summarised by a hash chain: chain(i) = mix(chain(i-1),
 * term(i), data_hash(i)), chain(0) = 0, so two logs agree on a prefix exactly when
 * their chains agree at its last index. A global table has one record per index: the
 * first (term, chain, data hash) seen there — or, once the index commits, the
 * committed one — plus what was applied there. Other terms seen at an index before
 * it commits are kept in a side list, pruned once the index commits (any later
 * disagreement with a committed index is a violation on its own).
 *
 * Per node we keep its log view above its commit index (term and chain of each
 * entry); at or below its commit index the chain is the committed one by
 * construction, so the view is trimmed as commit advances. The global table is
 * trimmed below the lowest index any node may still apply (bounded memory over long
 * runs; indexes below the floor are no longer checked).
 *
 * Pure: no I/O. Nodes are found by a linear scan (a cluster has a handful; member
 * churn adds ids over a run, each kept).
 */
#include "checkers/raft_safety_int.h"

#include <stdarg.h>

static uint64_t mix(uint64_t chain, uint64_t term, uint64_t hash)
{
    uint64_t x = chain ^ (term * UINT64_C(0x9E3779B97F4A7C15));
    x ^= hash + UINT64_C(0x632BE59BD9B4E019) + (x << 6) + (x >> 2);
    x ^= x >> 31;
    x *= UINT64_C(0xBF58476D1CE4E5B9);
    x ^= x >> 29;
    return x;
}

struct raft_safety *raft_safety_new(void)
{
    struct raft_safety *c = fl_calloc(1, sizeof(*c));
    c->g_base = 1;
    fl_buf_init(&c->violation);
    return c;
}

void raft_safety_free(struct raft_safety *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->nodes_count; i++) {
        free(c->nodes[i].terms);
        free(c->nodes[i].chains);
        rs__node_close(&c->nodes[i]);
    }
    free(c->nodes);
    free(c->g);
    free(c->alts);
    free(c->leaders);
    free(c->grants);
    fl_buf_close(&c->violation);
    free(c);
}

bool rs__violate(struct raft_safety *c, const char *property, uint64_t node, uint64_t other,
                 uint64_t index, uint64_t term, const char *fmt, ...)
{
    if (c->failed)
        return false;
    c->failed = true;
    c->property = property;
    char detail[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof(detail), fmt, ap);
    va_end(ap);
    fl_buf_reset(&c->violation);
    fl_buf_printf(&c->violation,
                  "{\"property\":\"%s\",\"node\":%" PRIu64 ",\"other_node\":%" PRIu64
                  ",\"index\":%" PRIu64 ",\"term\":%" PRIu64 ",\"detail\":\"",
                  property, node, other, index, term);
    for (const char *p = detail; *p; p++) { /* JSON-escape (the text is ours, ASCII) */
        if (*p == '"' || *p == '\\')
            fl_buf_printf(&c->violation, "\\%c", *p);
        else if ((unsigned char)*p < 0x20)
            fl_buf_printf(&c->violation, "\\u%04x", (unsigned char)*p);
        else
            fl_buf_append(&c->violation, p, 1);
    }
    fl_buf_printf(&c->violation, "\"}");
    return false;
}

struct rs_node *rs__node_find(const struct raft_safety *c, uint64_t id)
{
    FL_ASSERT(id != 0);
    for (size_t i = 0; i < c->nodes_count; i++)
        if (c->nodes[i].id == id)
            return &c->nodes[i];
    return NULL;
}

struct rs_node *rs__node_get(struct raft_safety *c, uint64_t id)
{
    struct rs_node *found = rs__node_find(c, id);
    if (found) {
        found->retired = false;
        return found;
    }
    FL_GROW_ZERO(c->nodes, c->nodes_count, c->nodes_cap, c->nodes_count + 1, 8);
    struct rs_node *n = &c->nodes[c->nodes_count - 1];
    n->id = id;
    n->conf_known = true; /* a new member's log is empty: no configuration yet */
    return n;
}

/* The global record of index i, growing the table; NULL below the trimmed floor. */
static struct rs_rec *rec_get(struct raft_safety *c, uint64_t i)
{
    if (i < c->g_base)
        return NULL;
    size_t k = (size_t)(i - c->g_base);
    FL_GROW_ZERO(c->g, c->g_count, c->g_cap, k + 1, 1024);
    return &c->g[k];
}

/* Term of n's entry i (≤ last); below the view it is the committed term (0 when
 * that is no longer known). */
static uint64_t node_term_at(struct raft_safety *c, const struct rs_node *n, uint64_t i)
{
    FL_ASSERT(i <= n->last);
    if (i > n->base)
        return n->terms[i - n->base - 1];
    if (i == n->base)
        return n->base_term;
    struct rs_rec *r = i ? rec_get(c, i) : NULL;
    return r && (r->flags & RS_COMMITTED) ? r->term : 0;
}

/* Chain of n's log at i (≤ last). At or below the view's base it is the base chain
 * (i == base) or the committed chain (i < base: the node committed it). */
static bool node_chain_at(struct raft_safety *c, const struct rs_node *n, uint64_t i,
                          uint64_t *chain)
{
    FL_ASSERT(i <= n->last);
    if (i > n->base) {
        *chain = n->chains[i - n->base - 1];
        return true;
    }
    if (i == n->base) {
        *chain = n->base_chain;
        return true;
    }
    if (i == 0) {
        *chain = 0;
        return true;
    }
    struct rs_rec *r = rec_get(c, i);
    if (!r || !(r->flags & RS_COMMITTED) || (r->flags & RS_NOCHAIN))
        return false;
    *chain = r->chain;
    return true;
}

bool rs__chain_at(struct raft_safety *c, const struct rs_node *n, uint64_t i, uint64_t *chain)
{
    return node_chain_at(c, n, i, chain);
}

bool rs__last_term(struct raft_safety *c, const struct rs_node *n, uint64_t *term)
{
    *term = n->last ? node_term_at(c, n, n->last) : 0;
    return !n->last || *term != 0;
}

void rs__view_truncate(struct raft_safety *c, struct rs_node *n, uint64_t last)
{
    if (last >= n->last)
        return;
    if (last < n->base) {
        /* Below the view (a crash lost committed entries): rebase on committed data. */
        uint64_t chain = 0;
        bool known = node_chain_at(c, n, last, &chain);
        struct rs_rec *r = last ? rec_get(c, last) : NULL;
        n->base = last;
        n->base_chain = chain;
        n->base_term = r ? r->term : 0;
        n->unanchored = n->unanchored || !known;
        rs__conf_forget(n); /* the records below the old base were folded away */
    }
    n->last = last;
    if (n->commit > last)
        n->commit = last;
    rs__conf_truncate(n, last);
}

/* The node's log now ends at last with entries we never saw: restart the view
 * there, unanchored (its chain is unknown, so only terms can be compared). */
void rs__view_rebase_unknown(struct rs_node *n, uint64_t last)
{
    FL_ASSERT(last > n->last);
    n->base = last;
    n->base_chain = 0;
    n->base_term = 0;
    n->last = last;
    n->unanchored = true;
    if (n->commit < n->base)
        n->commit = n->base; /* the unseen entries' commits cannot be checked */
    rs__conf_forget(n);      /* unseen entries may hold conf changes */
}

static void node_view_push(struct rs_node *n, uint64_t term, uint64_t chain)
{
    size_t k = (size_t)(n->last - n->base);
    if (k >= n->cap) {
        n->cap = fl_grow_cap(n->cap, k + 1, 256, sizeof(uint64_t));
        n->terms = fl_realloc(n->terms, n->cap * sizeof(uint64_t));
        n->chains = fl_realloc(n->chains, n->cap * sizeof(uint64_t));
    }
    n->terms[k] = term;
    n->chains[k] = chain;
    n->last++;
}

/* Drops the view below the node's commit index (its chain there is committed). */
static void node_view_trim(struct rs_node *n)
{
    if (n->commit <= n->base + RS_TRIM_SLACK || n->unanchored)
        return;
    uint64_t to = n->commit;
    size_t drop = (size_t)(to - n->base);
    n->base_chain = n->chains[drop - 1];
    n->base_term = n->terms[drop - 1];
    size_t keep = (size_t)(n->last - to);
    memmove(n->terms, n->terms + drop, keep * sizeof(uint64_t));
    memmove(n->chains, n->chains + drop, keep * sizeof(uint64_t));
    n->base = to;
    rs__conf_trim(n, to);
}

/* Whether node n must hold the committed entry of record r right now (Leader
 * Completeness, Raft §5.4): it leads a term later than any term on record when
 * the entry committed, and no later leader has deposed it. Other nodes may hold a
 * stale uncommitted entry there for a while; committing or applying it is what
 * the other checks catch. */
static bool must_hold(const struct raft_safety *c, const struct rs_node *n, const struct rs_rec *r)
{
    return n->leader && n->leader_term >= c->max_leader_term && n->leader_term > r->commit_bound;
}

/* Finds or records (i, term) -> chain; false when the same (index, term) was seen
 * with another chain (log matching broken). *other_chain gets the recorded one. */
static bool log_matching_check(struct raft_safety *c, uint64_t i, uint64_t term, uint64_t chain,
                               uint64_t hash, uint64_t *other_chain)
{
    struct rs_rec *r = rec_get(c, i);
    if (!r)
        return true;
    if (!(r->flags & RS_SEEN)) {
        r->flags |= RS_SEEN;
        r->term = term;
        r->chain = chain;
        r->hash = hash;
        return true;
    }
    if (r->term == term) {
        if (r->flags & RS_NOCHAIN) { /* first anchored copy of a committed entry */
            r->chain = chain;
            r->hash = hash;
            r->flags &= (uint8_t) ~(RS_NOCHAIN | RS_NOHASH);
        }
        *other_chain = r->chain;
        return r->chain == chain;
    }
    if (r->flags & RS_COMMITTED)
        return true; /* the committed check reports this */
    for (size_t k = c->alts_count; k > 0; k--) {
        struct rs_alt *a = &c->alts[k - 1];
        if (a->index == i && a->term == term) {
            *other_chain = a->chain;
            return a->chain == chain;
        }
    }
    FL_GROW(c->alts, c->alts_cap, c->alts_count + 1, 64);
    c->alts[c->alts_count++] = (struct rs_alt){i, term, chain, hash};
    return true;
}

bool raft_safety_leader(struct raft_safety *c, uint64_t node, uint64_t term)
{
    FL_ASSERT(c != NULL && node != 0);
    RS_RECORD(c, .op = RAFT_SAFETY_OP_LEADER, .node = node, .a = {term});
    struct rs_node *n = rs__node_get(c, node);
    c->n_leaders++;
    FL_GROW_ZERO(c->leaders, c->leaders_len, c->leaders_cap, (size_t)term + 1, 64);
    if (c->leaders[term] != 0 && c->leaders[term] != node)
        return rs__violate(c, "election_safety", node, c->leaders[term], 0, term,
                           "two leaders in term %" PRIu64 ": node %" PRIu64 " and node %" PRIu64,
                           term, c->leaders[term], node);
    c->leaders[term] = node;
    if (term > c->max_leader_term)
        c->max_leader_term = term;
    n->leader = true;
    n->leader_term = term;
    /* Leader completeness: the new leader holds every entry committed so far. Its
     * view may lag its log (the driver feeds entries when it persists them), so only
     * a view that reaches the commit index is compared here; a shorter log shows up
     * as soon as the leader appends over a committed index. */
    uint64_t mc = c->max_commit, chain = 0;
    struct rs_rec *r = mc ? rec_get(c, mc) : NULL;
    if (r && (r->flags & RS_COMMITTED) && !(r->flags & RS_NOCHAIN) && r->commit_bound < term &&
        !n->unanchored && n->last >= mc && node_chain_at(c, n, mc, &chain) && chain != r->chain)
        return rs__violate(c, "committed_lost", node, 0, mc, term,
                           "leader of term %" PRIu64 " holds a different entry at committed "
                           "index %" PRIu64 " (or before it)",
                           term, mc);
    return !c->failed;
}

bool raft_safety_not_leader(struct raft_safety *c, uint64_t node)
{
    RS_RECORD(c, .op = RAFT_SAFETY_OP_NOT_LEADER, .node = node);
    struct rs_node *n = rs__node_get(c, node);
    n->leader = false;
    return !c->failed;
}

bool raft_safety_append(struct raft_safety *c, uint64_t node, uint64_t index, uint64_t term,
                        uint64_t data_hash)
{
    FL_ASSERT(c != NULL && index >= 1);
    RS_RECORD(c, .op = RAFT_SAFETY_OP_APPEND, .node = node, .a = {index, term, data_hash});
    struct rs_node *n = rs__node_get(c, node);
    if (index > n->last + 1)
        rs__view_rebase_unknown(n, index - 1); /* entries we never saw (a torn write) */
    c->n_appends++;
    bool ok = true;
    if (index <= n->last) {
        /* A leader that was deposed may not have been reported as such yet (drivers
         * feed a ready's entries before its role change). Only an append from a leader
         * of a later term can overwrite a log, and that leader was reported before it
         * sent anything: so a later-term leader on record means this one is deposed. */
        if (n->leader && c->max_leader_term > n->leader_term)
            n->leader = false;
        if (n->leader && !c->failed && node_term_at(c, n, index) != term)
            ok = rs__violate(c, "leader_append_only", node, 0, index, term,
                             "leader of term %" PRIu64 " overwrote its entry %" PRIu64
                             " (term %" PRIu64 " -> %" PRIu64 ")",
                             n->leader_term, index, node_term_at(c, n, index), term);
        else if (n->leader && !c->failed)
            ok = rs__violate(c, "leader_append_only", node, 0, index, term,
                             "leader of term %" PRIu64 " rewrote its log from index %" PRIu64,
                             n->leader_term, index);
        rs__view_truncate(c, n, index - 1);
    }
    uint64_t prev = 0;
    bool anchored = node_chain_at(c, n, index - 1, &prev) && !n->unanchored;
    uint64_t chain = mix(prev, term, data_hash);
    node_view_push(n, term, chain);
    if (!anchored) {
        /* Prefix unknown: the term of a committed index can still be compared. */
        struct rs_rec *cr = rec_get(c, index);
        n->unanchored = true;
        if (cr && (cr->flags & RS_COMMITTED) && must_hold(c, n, cr) && cr->term != term)
            ok = rs__violate(c, "committed_lost", node, 0, index, term,
                             "node %" PRIu64 " now holds (index %" PRIu64 ", term %" PRIu64
                             ") but term %" PRIu64 " was committed there",
                             node, index, term, cr->term);
        return ok && !c->failed;
    }
    uint64_t other = 0;
    if (!log_matching_check(c, index, term, chain, data_hash, &other))
        ok = rs__violate(c, "log_matching", node, 0, index, term,
                         "node %" PRIu64 " holds (index %" PRIu64 ", term %" PRIu64
                         ") with a different prefix than another node",
                         node, index, term);
    struct rs_rec *r = rec_get(c, index);
    if (r && (r->flags & RS_COMMITTED) && must_hold(c, n, r) &&
        (r->term != term || (!(r->flags & RS_NOCHAIN) && r->chain != chain)))
        ok = rs__violate(c, "committed_lost", node, 0, index, term,
                         "leader %" PRIu64 " of term %" PRIu64 " writes (index %" PRIu64
                         ", term %" PRIu64 ") over committed (index %" PRIu64 ", term %" PRIu64 ")",
                         node, n->leader_term, index, term, index, r->term);
    return ok && !c->failed;
}

bool rs__view_recovered(struct raft_safety *c, struct rs_node *n,
                        const struct raft_safety_entry *es, size_t count)
{
    if (count == 0)
        return !c->failed;
    /* A view based on a snapshot the disk does not hold (fed when the member installed
     * it, lost with the unsynced WAL record): the disk's log runs through the view's
     * base with another entry there. The view restarts below, on committed data. */
    const struct raft_safety_entry *last = &es[count - 1];
    if (es[0].index <= n->base && n->base <= last->index &&
        es[n->base - es[0].index].term != n->base_term)
        rs__view_truncate(c, n, es[0].index - 1);
    size_t k = 0;
    for (; k < count; k++) {
        const struct raft_safety_entry *e = &es[k];
        if (e->index > n->last)
            break;
        if (e->index <= n->base)
            continue; /* committed (or its snapshot): not in the view */
        uint64_t prev = 0;
        node_chain_at(c, n, e->index - 1, &prev); /* index - 1 >= base: in the view */
        size_t at = (size_t)(e->index - n->base - 1);
        if (n->terms[at] != e->term || n->chains[at] != mix(prev, e->term, e->data_hash))
            break;
    }
    if (k == count)
        return !c->failed;
    uint64_t id = n->id;
    n->leader = false; /* it restarted: whatever it wrote, it wrote before */
    bool ok = true;
    for (; k < count; k++) {
        const struct raft_safety_entry *e = &es[k];
        ok = raft_safety_append(c, id, e->index, e->term, e->data_hash) && ok;
        if (e->conf_change)
            ok = raft_safety_conf_entry(c, id, e->index, e->conf_type, e->conf_member) && ok;
    }
    return ok && !c->failed;
}

bool raft_safety_restart(struct raft_safety *c, uint64_t node, uint64_t last_index)
{
    RS_RECORD(c, .op = RAFT_SAFETY_OP_RESTART, .node = node, .a = {last_index});
    struct rs_node *n = rs__node_get(c, node);
    n->leader = false;
    if (last_index > n->last)
        rs__view_rebase_unknown(n, last_index); /* unsynced bytes that survived */
    else
        rs__view_truncate(c, n, last_index);
    if (n->applied > last_index)
        n->applied = last_index; /* it re-applies from its snapshot */
    n->applied_unknown = true;   /* ... which the caller did not say, */
    n->commit_unknown = true;    /* nor what commit index it recovered */
    return !c->failed;
}

bool raft_safety_snapshot(struct raft_safety *c, uint64_t node, uint64_t index, uint64_t term)
{
    RS_RECORD(c, .op = RAFT_SAFETY_OP_SNAPSHOT, .node = node, .a = {index, term});
    struct rs_node *n = rs__node_get(c, node);
    rs__conf_forget(n); /* raft_safety_snapshot_conf sets it again */
    struct rs_rec *r = rec_get(c, index);
    bool ok = true;
    uint64_t chain = mix(UINT64_C(0x5eed), index, term);
    bool known = false;
    if (r && (r->flags & RS_COMMITTED)) {
        if (r->term != term)
            ok = rs__violate(c, "committed_lost", node, 0, index, term,
                             "snapshot at (index %" PRIu64 ", term %" PRIu64 ") but term %" PRIu64
                             " was committed there",
                             index, term, r->term);
        chain = r->chain;
        known = !(r->flags & RS_NOCHAIN);
    } else if (r && (r->flags & RS_SEEN) && r->term == term) {
        chain = r->chain;
        known = true;
    }
    n->base = index;
    n->base_chain = chain;
    n->base_term = term;
    n->last = index;
    n->unanchored = !known;
    if (n->commit < index)
        n->commit = index;
    if (n->commit_fed < index)
        n->commit_fed = index;
    if (n->applied < index)
        n->applied = index;
    n->applied_unknown = false;
    return ok && !c->failed;
}

/* Lowest index any node may still apply or read back: everything below can go. */
static void global_trim(struct raft_safety *c)
{
    uint64_t floor = UINT64_MAX;
    for (size_t i = 0; i < c->nodes_count; i++)
        if (!c->nodes[i].retired)
            floor = FL_MIN(floor, FL_MIN(c->nodes[i].applied, c->nodes[i].base));
    if (floor == UINT64_MAX || floor <= c->g_base + 2 * RS_TRIM_SLACK)
        return;
    size_t drop = (size_t)(floor - RS_TRIM_SLACK - c->g_base);
    drop = FL_MIN(drop, c->g_count);
    memmove(c->g, c->g + drop, (c->g_count - drop) * sizeof(c->g[0]));
    c->g_count -= drop;
    c->g_base += drop;
    size_t k = 0;
    for (size_t i = 0; i < c->alts_count; i++)
        if (c->alts[i].index > c->max_commit)
            c->alts[k++] = c->alts[i];
    c->alts_count = k;
}

/* Marks record r (index i) committed with term (and chain when have). When the
 * committed entry is not the record's first-seen one, its alternate is promoted;
 * an entry only unanchored nodes reported keeps just its term. */
static void commit_record(struct raft_safety *c, struct rs_rec *r, uint64_t i, uint64_t term,
                          bool have, uint64_t chain)
{
    bool seen = (r->flags & RS_SEEN) != 0;
    r->flags |= RS_COMMITTED | RS_SEEN;
    r->commit_bound = FL_MAX(c->max_leader_term, term);
    if (seen && r->term == term && (!have || r->chain == chain))
        return; /* the first-seen entry is the committed one */
    const struct rs_alt *alt = NULL;
    for (size_t k = 0; k < c->alts_count; k++)
        if (c->alts[k].index == i && c->alts[k].term == term &&
            (!have || c->alts[k].chain == chain))
            alt = &c->alts[k];
    r->term = term;
    r->flags &= (uint8_t) ~(RS_NOCHAIN | RS_NOHASH);
    if (alt) {
        r->chain = alt->chain;
        r->hash = alt->hash;
    } else if (have) {
        r->chain = chain;
        r->flags |= RS_NOHASH;
    } else {
        r->flags |= RS_NOCHAIN | RS_NOHASH;
    }
}

bool raft_safety_commit(struct raft_safety *c, uint64_t node, uint64_t commit)
{
    RS_RECORD(c, .op = RAFT_SAFETY_OP_COMMIT, .node = node, .a = {commit});
    struct rs_node *n = rs__node_get(c, node);
    c->n_commits++;
    bool ok = true;
    uint64_t fed = commit;
    if (commit > n->last)
        commit = n->last; /* never beyond its log (the core asserts this) */
    for (uint64_t i = n->commit + 1; i <= commit && ok; i++) {
        struct rs_rec *r = rec_get(c, i);
        uint64_t term = node_term_at(c, n, i), chain = 0;
        bool have = node_chain_at(c, n, i, &chain) && !n->unanchored;
        if (!r)
            continue;
        if (r->flags & RS_COMMITTED) {
            bool chain_known = have && !(r->flags & RS_NOCHAIN);
            if (r->term != term || (chain_known && r->chain != chain))
                ok = rs__violate(c, "committed_lost", node, 0, i, term,
                                 "node %" PRIu64 " committed (index %" PRIu64 ", term %" PRIu64
                                 ") but (index %" PRIu64 ", term %" PRIu64 ") was committed before",
                                 node, i, term, i, r->term);
            continue;
        }
        commit_record(c, r, i, term, have, chain);
    }
    if (!n->commit_unknown && fed < n->commit_fed)
        ok = rs__violate(c, "commit_regressed", node, 0, fed, 0,
                         "node %" PRIu64 "'s commit index went back from %" PRIu64 " to %" PRIu64
                         " while it ran",
                         node, n->commit_fed, fed);
    n->commit_fed = fed;
    n->commit_unknown = false;
    if (commit > n->commit)
        n->commit = commit;
    if (commit > c->max_commit)
        c->max_commit = commit;
    node_view_trim(n);
    if (c->g_count > 4 * RS_TRIM_SLACK && (c->n_commits & 1023) == 0)
        global_trim(c);
    return ok && !c->failed;
}

/* A member applies each index once, in order, and only committed ones. After a
 * restart told nothing of its applied index (raft_safety_restart) the next apply sets
 * it; after one that did not tell its commit index the next commit does. */
static bool apply_order_check(struct raft_safety *c, const struct rs_node *n, uint64_t index,
                              uint64_t term)
{
    if (!n->applied_unknown && index <= n->applied)
        return rs__violate(c, "applied_regressed", n->id, 0, index, term,
                           "node %" PRIu64 " applied index %" PRIu64 " again (it had applied "
                           "up to %" PRIu64 ")",
                           n->id, index, n->applied);
    if (!n->applied_unknown && index > n->applied + 1)
        return rs__violate(c, "apply_gap", n->id, 0, index, term,
                           "node %" PRIu64 " applied index %" PRIu64 " after %" PRIu64
                           ", skipping the entries between",
                           n->id, index, n->applied);
    if (!n->commit_unknown && index > n->commit_fed)
        return rs__violate(c, "apply_uncommitted", n->id, 0, index, term,
                           "node %" PRIu64 " applied index %" PRIu64
                           " beyond its commit index %" PRIu64,
                           n->id, index, n->commit_fed);
    return !c->failed;
}

bool raft_safety_apply(struct raft_safety *c, uint64_t node, uint64_t index, uint64_t term,
                       uint64_t data_hash)
{
    RS_RECORD(c, .op = RAFT_SAFETY_OP_APPLY, .node = node, .a = {index, term, data_hash});
    struct rs_node *n = rs__node_get(c, node);
    c->n_applies++;
    if (!apply_order_check(c, n, index, term))
        return false;
    n->applied = index;
    n->applied_unknown = false;
    struct rs_rec *r = rec_get(c, index);
    if (!r)
        return !c->failed;
    if ((r->flags & RS_COMMITTED) &&
        (r->term != term || (!(r->flags & RS_NOHASH) && r->hash != data_hash)))
        return rs__violate(c, "state_machine_safety", node, 0, index, term,
                           "node %" PRIu64 " applied (index %" PRIu64 ", term %" PRIu64
                           ") but (index %" PRIu64 ", term %" PRIu64 ") is the committed entry",
                           node, index, term, index, r->term);
    if (r->flags & RS_APPLIED) {
        if (r->apply_term != term || r->apply_hash != data_hash)
            return rs__violate(c, "state_machine_safety", node, r->apply_node, index, term,
                               "nodes %" PRIu64 " and %" PRIu64 " applied different entries at "
                               "index %" PRIu64 " (terms %" PRIu64 " and %" PRIu64 ")",
                               r->apply_node, node, index, r->apply_term, term);
        return !c->failed;
    }
    r->flags |= RS_APPLIED;
    r->apply_term = term;
    r->apply_hash = data_hash;
    r->apply_node = node;
    return !c->failed;
}

void raft_safety_forget(struct raft_safety *c, uint64_t node)
{
    if (c->sink) {
        rs__record(c, &(struct raft_safety_feed){.op = RAFT_SAFETY_OP_FORGET, .node = node});
        return;
    }
    struct rs_node *n = rs__node_get(c, node);
    n->leader = false;
    n->retired = true;
}

bool raft_safety_failed(const struct raft_safety *c)
{
    return c->failed;
}

const char *raft_safety_violation_json(const struct raft_safety *c)
{
    if (!c->failed)
        return "null";
    return fl_buf_cstr((struct fl_buf *)&c->violation);
}

const char *raft_safety_violation_property(const struct raft_safety *c)
{
    return c->failed ? c->property : NULL;
}

void raft_safety_summary_json(const struct raft_safety *c, struct fl_buf *out)
{
    fl_buf_reset(out);
    fl_buf_printf(out,
                  "{\"leaders\":%" PRIu64 ",\"appends\":%" PRIu64 ",\"commits\":%" PRIu64
                  ",\"applies\":%" PRIu64 ",\"max_commit\":%" PRIu64 ",\"records\":%zu"
                  ",\"votes\":%" PRIu64 ",\"elections\":%" PRIu64 ",\"restarts\":%" PRIu64
                  ",\"conf_checks\":%" PRIu64 "}",
                  c->n_leaders, c->n_appends, c->n_commits, c->n_applies, c->max_commit, c->g_count,
                  c->n_votes, c->n_elections, c->n_restarts, c->n_conf_checks);
}
