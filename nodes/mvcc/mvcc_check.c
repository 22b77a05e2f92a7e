/*
 * mvcc_check.c: the store's invariants (mvcc.h, mvcc_invariants_ok). One function per
 * part of the store: each key and its revisions, the revision log, the leases, the
 * watchers, and the totals (sizes, the state hash). They read and never write: the
 * key index is not sorted here (its sorted prefix is checked for order and every key,
 * tail included, must be the one its bytes find), so checking after every simulated
 * event (--paranoid) cannot change what a run does.
 *
 * A broken invariant is reported as "mvcc_check.c:LINE: what" in the caller's buffer;
 * mvcc_check_invariants turns that into an assertion for tests.
 */
#include "nodes/mvcc/mvcc_int.h"

#include <inttypes.h>
#include <stdarg.h>

/* A broken invariant is reported through common's fl_inv_fail. */
#define MINV  FL_INV
#define MINVF FL_INVF

/* One revision of k (p: the one before it, or NULL). */
static bool check_rev(const struct mvcc_store *s, const struct mvcc_rev *p,
                      const struct mvcc_rev *r, char *why, size_t why_len)
{
    MINVF(r->mod_rev >= 1 && r->mod_rev <= s->current_rev,
          "revision %" PRId64 " outside [1, %" PRId64 "]", r->mod_rev, s->current_rev);
    if (p) {
        MINV(p->mod_rev < r->mod_rev);
        /* Inside one generation versions count up by one from the create. */
        if (!mvcc__rev_is_tomb(r) && !mvcc__rev_is_tomb(p))
            MINV(r->create_rev == p->create_rev && r->version == p->version + 1);
        if (!mvcc__rev_is_tomb(r) && mvcc__rev_is_tomb(p))
            MINV(r->version == 1 && r->create_rev == r->mod_rev);
    }
    if (mvcc__rev_is_tomb(r)) {
        MINV(r->create_rev == 0 && r->lease == 0 && r->val_len == 0);
    } else {
        MINV(r->create_rev >= 1 && r->create_rev <= r->mod_rev);
        MINV(r->version >= 1 && r->version <= r->mod_rev - r->create_rev + 1);
        MINV(r->lease >= 0);
    }
    MINV((r->val == NULL) == (r->val_len == 0));
    return true;
}

static bool check_key(const struct mvcc_store *s, const struct mvcc_key *k, int64_t *live,
                      uint64_t *state, char *why, size_t why_len)
{
    MINV(k->key_len > 0 && k->revs_len > 0 && k->revs_len <= k->revs_cap);
    MINV(k->hash == fl_hash64(k->key, k->key_len));
    MINVF(mvcc__key_find(s, k->key, k->key_len) == k, "key '%.*s' is not the one its bytes find",
          (int)FL_MIN(k->key_len, 64), (const char *)k->key);
    for (size_t j = 0; j < k->revs_len; j++) {
        if (!check_rev(s, j ? &k->revs[j - 1] : NULL, &k->revs[j], why, why_len))
            return false;
        *live += mvcc__rev_cost(s, k, &k->revs[j]);
    }
    /* Compaction keeps at most one revision below the compact revision, and a
     * tombstone only when it sits at or above it. (MVCC_REVISION_RESET_ON_RESTART
     * breaks this on purpose: revisions are reused below the compact revision.) */
    if (!FL_BUG(MVCC_REVISION_RESET_ON_RESTART)) {
        MINV(k->revs_len < 2 || k->revs[1].mod_rev > s->compact_rev);
        MINV(!mvcc__rev_is_tomb(&k->revs[0]) || k->revs[0].mod_rev >= s->compact_rev);
    }
    const struct mvcc_rev *last = &k->revs[k->revs_len - 1];
    if (mvcc__rev_is_tomb(last)) {
        MINV(k->lease == 0);
    } else {
        MINV(k->lease == last->lease);
        uint64_t h = mvcc__rev_state_hash(k, last);
        MINVF(k->live_hash == h, "key's kept state hash %016" PRIx64 ", %016" PRIx64 " recomputed",
              k->live_hash, h);
        *state += h;
    }
    if (k->lease) {
        const struct mvcc_lease *l = mvcc__lease_find(s, k->lease);
        MINVF(l && k->lease_slot < l->keys_len && l->keys[k->lease_slot] == k,
              "key attached to lease %" PRId64 " is not in its list", k->lease);
    }
    return true;
}

/* The key index: its sorted prefix in byte order, every key checked. */
static bool check_keys(const struct mvcc_store *s, int64_t *live, uint64_t *state, char *why,
                       size_t why_len)
{
    MINV(s->sorted_len <= s->keys_len && s->keys_len <= s->keys_cap);
    for (size_t i = 0; i < s->keys_len; i++) {
        const struct mvcc_key *k = s->keys[i];
        if (i > 0 && i < s->sorted_len) {
            const struct mvcc_key *p = s->keys[i - 1];
            MINV(mvcc__bytes_cmp(p->key, p->key_len, k->key, k->key_len) < 0);
        }
        if (!check_key(s, k, live, state, why, why_len))
            return false;
    }
    MINV(s->table_used == s->keys_len && s->table_used * 2 <= s->table_cap);
    return true;
}

/* The revision log: every kept revision at or above the compact revision, once, in
 * (main, sub) order, each pointing at its key's revision. */
static bool check_log(const struct mvcc_store *s, char *why, size_t why_len)
{
    size_t total = 0;
    for (size_t i = 0; i < s->keys_len; i++)
        for (size_t j = 0; j < s->keys[i]->revs_len; j++)
            total += s->keys[i]->revs[j].mod_rev >= s->compact_rev;
    MINVF(total == s->log_len, "log %zu vs revisions %zu", s->log_len, total);
    for (size_t i = 0; i < s->log_len; i++) {
        const struct mvcc_logrec *r = &s->log[i];
        MINV(r->main >= s->compact_rev && r->main <= s->current_rev);
        if (i > 0) {
            const struct mvcc_logrec *p = &s->log[i - 1];
            MINV(p->main < r->main || (p->main == r->main && p->sub < r->sub));
        }
        long at = mvcc__key_at(r->key, r->main);
        MINV(at >= 0 && r->key->revs[at].mod_rev == r->main && r->key->revs[at].sub == r->sub);
    }
    return true;
}

static bool check_leases(const struct mvcc_store *s, int64_t *live, char *why, size_t why_len)
{
    for (size_t i = 0; i < s->leases_len; i++) {
        const struct mvcc_lease *l = s->leases[i];
        MINV(i == 0 || s->leases[i - 1]->id < l->id);
        MINV(l->id > 0 && l->ttl_s > 0);
        for (size_t j = 0; j < l->keys_len; j++)
            MINV(l->keys[j]->lease == l->id && l->keys[j]->lease_slot == j);
        *live += MVCC_LEASE_OVERHEAD_BYTES;
        if (!s->lease_primary)
            MINV(l->expiry_ns == INT64_MAX);
    }
    return true;
}

/* Watchers: ids ascending and handed out; queues within bounds and their total the
 * store's count; a synced watcher is never behind; responses in production order,
 * events in revision order and never above the revision their response carries. */
static bool check_watchers(const struct mvcc_store *s, char *why, size_t why_len)
{
    size_t pending = 0;
    for (size_t i = 0; i < s->watchers_len; i++) {
        /* A removed watcher leaves its slot NULL and its id (mvcc_watch.c's index). */
        MINV(i == 0 || s->watcher_ids[i - 1] < s->watcher_ids[i]);
        const struct mvcc_watcher *w = s->watchers[i];
        if (!w)
            continue;
        MINV(w->id == s->watcher_ids[i]);
        MINV(w->id > 0 && w->id < s->next_watch_id);
        MINV(w->q_head <= w->q_len && w->q_len <= w->q_cap);
        pending += w->q_len - w->q_head;
        /* A synced watcher's next revision is past the store's (mvcc_watch_next_rev
         * computes it from min_rev); an unsynced one is never ahead of what it asked. */
        MINVF(!w->synced || w->canceled || mvcc_watch_next_rev(s, w->id) > s->current_rev,
              "synced watcher %" PRId64 " behind: next %" PRId64 ", current %" PRId64, w->id,
              mvcc_watch_next_rev(s, w->id), s->current_rev);
        for (size_t j = w->q_head; j < w->q_len; j++) {
            const struct mvcc_watch_resp *r = &w->q[j];
            /* (MVCC_PROGRESS_BEFORE_EVENTS queues its notification in front on purpose) */
            MINV(j == w->q_head || w->q[j - 1].seq < r->seq || FL_BUG(MVCC_PROGRESS_BEFORE_EVENTS));
            MINV(r->seq < s->next_resp_seq);
            for (size_t e = 0; e < r->events_len; e++) {
                MINV(e == 0 || r->events[e - 1].kv.mod_revision <= r->events[e].kv.mod_revision);
                MINVF(r->events[e].kv.mod_revision <= r->header_rev,
                      "watch %" PRId64 ": event at %" PRId64 " in a response of revision %" PRId64,
                      w->id, r->events[e].kv.mod_revision, r->header_rev);
            }
        }
    }
    MINVF(pending == s->pending_resps, "%zu queued responses, %zu counted", pending,
          s->pending_resps);
    return true;
}

bool mvcc_invariants_ok(const struct mvcc_store *s, char *why, size_t why_len)
{
    bool reset_bug = FL_BUG(MVCC_REVISION_RESET_ON_RESTART);
    MINV(!s->in_write);
    MINV(s->current_rev >= 1);
    MINV(reset_bug || (s->compact_rev >= 0 && s->compact_rev <= s->current_rev));
    int64_t live = s->cfg.backend_base_bytes;
    uint64_t state = 0;
    if (!check_keys(s, &live, &state, why, why_len) || !check_leases(s, &live, why, why_len))
        return false;
    MINVF(live == s->live_bytes, "live %" PRId64 " vs %" PRId64, live, s->live_bytes);
    MINV(s->live_bytes <= s->size_bytes);
    MINVF(state == s->state_hash, "state hash %016" PRIx64 " kept, %016" PRIx64 " recomputed",
          s->state_hash, state);
    if (!reset_bug && !check_log(s, why, why_len))
        return false;
    return check_watchers(s, why, why_len);
}

static uint64_t fp_mix(uint64_t h, uint64_t v)
{
    h ^= v + UINT64_C(0x9E3779B97F4A7C15) + (h << 6) + (h >> 2);
    return h;
}

uint64_t mvcc_fingerprint(const struct mvcc_store *s)
{
    uint64_t h = 0;
    h = fp_mix(h, (uint64_t)s->current_rev);
    h = fp_mix(h, (uint64_t)s->compact_rev);
    h = fp_mix(h, s->keys_len);
    h = fp_mix(h, s->sorted_len);
    h = fp_mix(h, s->log_len);
    h = fp_mix(h, s->leases_len);
    h = fp_mix(h, s->watchers_len);
    h = fp_mix(h, s->pending_resps);
    h = fp_mix(h, s->next_resp_seq);
    h = fp_mix(h, (uint64_t)s->next_watch_id);
    h = fp_mix(h, (uint64_t)s->size_bytes);
    h = fp_mix(h, (uint64_t)s->live_bytes);
    h = fp_mix(h, s->state_hash);
    h = fp_mix(h, s->applied_index);
    return fp_mix(h, (uint64_t)s->lease_primary | (uint64_t)s->in_write << 1);
}

void mvcc_check_invariants(struct mvcc_store *s)
{
    char why[256];
    mvcc__index_sort(s); /* tests: the whole index in order too */
    FL_ASSERTF(mvcc_invariants_ok(s, why, sizeof why), "%s", why);
}
