/*
 * mvcc_watch.c: watchers, as etcd's watchable store models them. A synced watcher
 * gets one response per applied revision that touches its range, produced when the
 * write txn ends. An unsynced watcher (start revision in the past, or moved back by
 * a restore) catches up from the revision log in mvcc_watch_sync, in responses that
 * never split a revision; a start below the compact revision cancels it with the
 * compact revision. Progress notifications carry the current revision and are only
 * produced for a synced watcher with no queued events (the Bookmarkable guarantee).
 *
 * Every response owns its bytes in one allocation (events array followed by key and
 * value bytes), so the store may compact or restore while responses wait.
 */
#include "nodes/mvcc/mvcc_int.h"
#include "harness/common/lower_bound.h"

/* ---------------------------------------------------------------- response building */

struct ev_ref {
    const struct mvcc_key *key;
    const struct mvcc_rev *rev;  /* the event's revision */
    const struct mvcc_rev *prev; /* NULL: no prev_kv */
};
struct ev_vec {
    struct ev_ref *v;
    size_t len, cap;
};

static void ev_push(struct ev_vec *ev, struct ev_ref r)
{
    FL_GROW(ev->v, ev->cap, ev->len + 1, 8);
    ev->v[ev->len++] = r;
}

static uint8_t *copy_bytes(uint8_t **cursor, const uint8_t *p, size_t n)
{
    if (!n)
        return NULL;
    uint8_t *at = *cursor;
    memcpy(at, p, n);
    *cursor += n;
    return at;
}

static void fill_event(struct mvcc_event *e, const struct ev_ref *r, uint8_t **cur)
{
    bool tomb = mvcc__rev_is_tomb(r->rev);
    e->type = tomb ? MVCC_EVENT_DELETE : MVCC_EVENT_PUT;
    mvcc__kv_fill(&e->kv, r->key, r->rev, tomb);
    e->kv.key = copy_bytes(cur, r->key->key, r->key->key_len);
    e->kv.value = copy_bytes(cur, r->rev->val, r->rev->val_len);
    if (r->prev) {
        e->has_prev = true;
        mvcc__kv_fill(&e->prev_kv, r->key, r->prev, false);
        e->prev_kv.key = e->kv.key;
        e->prev_kv.value = copy_bytes(cur, r->prev->val, r->prev->val_len);
    }
}

/* Builds an owned response from event refs [from, to). */
static void build_resp(struct mvcc_store *s, struct mvcc_watcher *w, const struct ev_ref *ev,
                       size_t n, struct mvcc_watch_resp *out)
{
    memset(out, 0, sizeof(*out));
    out->watch_id = w->id;
    out->seq = s->next_resp_seq++;
    out->header_rev = s->current_rev;
    if (!n)
        return;
    size_t bytes = n * sizeof(struct mvcc_event);
    for (size_t i = 0; i < n; i++) {
        bytes += ev[i].key->key_len + ev[i].rev->val_len;
        if (ev[i].prev)
            bytes += ev[i].prev->val_len;
    }
    out->events = fl_calloc(1, bytes);
    uint8_t *cur = (uint8_t *)(out->events + n);
    for (size_t i = 0; i < n; i++)
        fill_event(&out->events[i], &ev[i], &cur);
    FL_ASSERT(cur == (uint8_t *)out->events + bytes);
    out->events_len = n;
}

void mvcc_watch_resp_free(struct mvcc_watch_resp *r)
{
    if (!r)
        return;
    free(r->events);
    r->events = NULL;
    r->events_len = 0;
}

/* ---------------------------------------------------------------- ready heap */

/* Watchers with queued responses, in a binary min-heap by the seq of the first one:
 * mvcc_watch_pop takes the store-wide oldest response without looking at the others,
 * the same choice the former scan of every watcher made (seqs are unique). */

static uint64_t head_seq(const struct mvcc_watcher *w)
{
    FL_ASSERT(w->q_head < w->q_len);
    return w->q[w->q_head].seq;
}

static void ready_place(struct mvcc_store *s, size_t i, struct mvcc_watcher *w)
{
    s->ready[i] = w;
    w->ready_pos = i;
}

static void ready_sift_up(struct mvcc_store *s, size_t i)
{
    struct mvcc_watcher *w = s->ready[i];
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (head_seq(s->ready[parent]) <= head_seq(w))
            break;
        ready_place(s, i, s->ready[parent]);
        i = parent;
    }
    ready_place(s, i, w);
}

static void ready_sift_down(struct mvcc_store *s, size_t i)
{
    struct mvcc_watcher *w = s->ready[i];
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= s->ready_len)
            break;
        if (c + 1 < s->ready_len && head_seq(s->ready[c + 1]) < head_seq(s->ready[c]))
            c++;
        if (head_seq(w) <= head_seq(s->ready[c]))
            break;
        ready_place(s, i, s->ready[c]);
        i = c;
    }
    ready_place(s, i, w);
}

static void ready_remove(struct mvcc_store *s, struct mvcc_watcher *w)
{
    size_t i = w->ready_pos;
    if (i == SIZE_MAX)
        return;
    FL_ASSERT(i < s->ready_len && s->ready[i] == w);
    w->ready_pos = SIZE_MAX;
    struct mvcc_watcher *last = s->ready[--s->ready_len];
    if (i == s->ready_len)
        return;
    ready_place(s, i, last);
    ready_sift_up(s, i);
    ready_sift_down(s, last->ready_pos);
}

/* w's queue changed (a push, a push to the front, a pop): its place in the heap. */
static void ready_fix(struct mvcc_store *s, struct mvcc_watcher *w)
{
    if (w->q_head == w->q_len) {
        ready_remove(s, w);
        return;
    }
    if (w->ready_pos == SIZE_MAX) {
        FL_GROW(s->ready, s->ready_cap, s->ready_len + 1, 16);
        ready_place(s, s->ready_len++, w);
        ready_sift_up(s, w->ready_pos);
        return;
    }
    ready_sift_up(s, w->ready_pos);
    ready_sift_down(s, w->ready_pos);
}

static void q_push(struct mvcc_store *s, struct mvcc_watcher *w, const struct mvcc_watch_resp *r,
                   bool front)
{
    if (w->q_head > 0 && (front || w->q_len == w->q_cap)) {
        /* Compact the consumed prefix away (keeps one free slot at the front). */
        memmove(w->q + 1, w->q + w->q_head, (w->q_len - w->q_head) * sizeof(*w->q));
        w->q_len -= w->q_head - 1;
        w->q_head = 1;
    }
    FL_GROW(w->q, w->q_cap, w->q_len + 1, 4);
    if (front) {
        if (w->q_head == 0) {
            memmove(w->q + 1, w->q, w->q_len * sizeof(*w->q));
            w->q_len++;
        } else {
            w->q_head--;
        }
        w->q[w->q_head] = *r;
    } else {
        w->q[w->q_len++] = *r;
    }
    s->pending_resps++;
    ready_fix(s, w);
}

/* ---------------------------------------------------------------- matching */

static bool watcher_filtered(const struct mvcc_watcher *w, const struct mvcc_rev *r)
{
    bool tomb = mvcc__rev_is_tomb(r);
    return (tomb && w->filter_delete) || (!tomb && w->filter_put);
}

static bool watcher_wants(const struct mvcc_watcher *w, const struct mvcc_key *k,
                          const struct mvcc_rev *r)
{
    if (watcher_filtered(w, r))
        return false;
    return mvcc__in_range(k->key, k->key_len, w->key, w->key_len, w->end, w->end_len);
}

/* The event of log record lr, with its previous revision when the watcher asked. */
static struct ev_ref event_of(const struct mvcc_watcher *w, const struct mvcc_logrec *lr)
{
    long at = mvcc__key_at(lr->key, lr->main);
    FL_ASSERT(at >= 0 && lr->key->revs[at].mod_rev == lr->main);
    struct ev_ref e = {lr->key, &lr->key->revs[at], NULL};
    if (w->prev_kv && at > 0 && !mvcc__rev_is_tomb(&lr->key->revs[at - 1]))
        e.prev = &lr->key->revs[at - 1];
    return e;
}

static struct mvcc_watcher *watcher_of(struct fl_ivnode *n)
{
    return (struct mvcc_watcher *)(void *)((char *)n - offsetof(struct mvcc_watcher, iv));
}

struct notify_ctx {
    struct mvcc_store *s;
    int64_t rev;
    size_t j; /* the log record being matched */
    const struct mvcc_rev *r;
};

/* A watcher whose range holds the written key: it gets the event when it is synced
 * (so not canceled), has reached this revision (a future start revision waits) and
 * does not filter the event's kind. */
static void notify_hit(void *ctx, struct fl_ivnode *n)
{
    struct notify_ctx *nc = ctx;
    struct mvcc_store *s = nc->s;
    struct mvcc_watcher *w = watcher_of(n);
    if (!w->synced || w->min_rev > nc->rev || watcher_filtered(w, nc->r))
        return;
    FL_GROW(s->hits, s->hits_cap, s->hits_len + 1, 64);
    s->hits[s->hits_len++] = (struct mvcc_watch_hit){w, nc->j};
}

static int hit_cmp(const void *pa, const void *pb)
{
    const struct mvcc_watch_hit *a = pa, *b = pb;
    if (a->w->id != b->w->id)
        return a->w->id < b->w->id ? -1 : 1;
    return a->j < b->j ? -1 : (a->j > b->j ? 1 : 0);
}

/* One response per concerned synced watcher, in watcher id order, holding its events
 * in log order: what visiting every watcher and every record produced, found through
 * the key-range tree. A synced watcher that gets nothing moves on to the next
 * revision without being visited (its min_rev is read as at least current + 1). */
static bool q_full(const struct mvcc_store *s, const struct mvcc_watcher *w);
static void watcher_set_synced(struct mvcc_store *s, struct mvcc_watcher *w, bool synced);

void mvcc__watch_notify(struct mvcc_store *s, size_t log_start)
{
    struct notify_ctx nc = {s, s->current_rev, 0, NULL};
    s->hits_len = 0;
    for (size_t j = log_start; j < s->log_len && s->watch_tree.len > 0; j++) {
        const struct mvcc_logrec *lr = &s->log[j];
        FL_ASSERT(lr->main == nc.rev);
        nc.j = j;
        nc.r = &lr->key->revs[lr->key->revs_len - 1];
        FL_ASSERT(nc.r->mod_rev == nc.rev);
        s->watch_steps +=
            fl_ivtree_stab(&s->watch_tree, lr->key->key, lr->key->key_len, notify_hit, &nc);
    }
    if (s->hits_len == 0)
        return;
    s->watch_steps += s->hits_len;
    qsort(s->hits, s->hits_len, sizeof(*s->hits), hit_cmp);
    struct ev_vec ev = {0};
    for (size_t i = 0; i < s->hits_len;) {
        struct mvcc_watcher *w = s->hits[i].w;
        ev.len = 0;
        for (; i < s->hits_len && s->hits[i].w == w; i++) {
            const struct mvcc_logrec *lr = &s->log[s->hits[i].j];
            FL_ASSERT(watcher_wants(w, lr->key, &lr->key->revs[lr->key->revs_len - 1]));
            ev_push(&ev, event_of(w, lr));
        }
        /* etcd's notify: a send on a full stream buffer fails and the watcher becomes
         * a victim (out of the synced group, its batch kept for later); once its
         * stream has room it goes to the unsynced group and catches up from there, so
         * a compaction meanwhile reaches it as one for an unsynced watcher. The batch
         * is queued here at once: nothing else reaches the watcher before it. */
        bool full = q_full(s, w);
        struct mvcc_watch_resp resp;
        build_resp(s, w, ev.v, ev.len, &resp);
        q_push(s, w, &resp, false);
        if (full) {
            w->min_rev = s->current_rev + 1;
            watcher_set_synced(s, w, false);
        }
    }
    free(ev.v);
    s->hits_len = 0;
}

/* The next revision w delivers (see struct mvcc_watcher). */
static int64_t watcher_next_rev(const struct mvcc_store *s, const struct mvcc_watcher *w)
{
    return w->synced ? FL_MAX(w->min_rev, s->current_rev + 1) : w->min_rev;
}

/* ---------------------------------------------------------------- create, cancel */

static size_t watcher_slot(const struct mvcc_store *s, int64_t id)
{
    size_t lo;
    FL_LOWER_BOUND(lo, s->watchers_len, mid, s->watcher_ids[mid] < id);
    return lo;
}

static struct mvcc_watcher *watcher_find(const struct mvcc_store *s, int64_t id)
{
    size_t i = watcher_slot(s, id);
    return i < s->watchers_len && s->watcher_ids[i] == id ? s->watchers[i] : NULL;
}

/* The unsynced array: the watchers mvcc_watch_sync works on, by ascending id. */
static size_t unsynced_slot(const struct mvcc_store *s, int64_t id)
{
    size_t lo;
    FL_LOWER_BOUND(lo, s->unsynced_len, mid, s->unsynced[mid]->id < id);
    return lo;
}

static void unsynced_add(struct mvcc_store *s, struct mvcc_watcher *w)
{
    size_t i = unsynced_slot(s, w->id);
    FL_ASSERT(i == s->unsynced_len || s->unsynced[i] != w);
    FL_GROW(s->unsynced, s->unsynced_cap, s->unsynced_len + 1, 16);
    memmove(s->unsynced + i + 1, s->unsynced + i, (s->unsynced_len - i) * sizeof(*s->unsynced));
    s->unsynced[i] = w;
    s->unsynced_len++;
}

static void unsynced_del(struct mvcc_store *s, struct mvcc_watcher *w)
{
    size_t i = unsynced_slot(s, w->id);
    FL_ASSERT(i < s->unsynced_len && s->unsynced[i] == w);
    memmove(s->unsynced + i, s->unsynced + i + 1, (s->unsynced_len - i - 1) * sizeof(*s->unsynced));
    s->unsynced_len--;
}

/* Changes whether a live, not canceled watcher is synced, keeping the array. */
static void watcher_set_synced(struct mvcc_store *s, struct mvcc_watcher *w, bool synced)
{
    FL_ASSERT(!w->canceled);
    if (w->synced == synced)
        return;
    w->synced = synced;
    if (synced)
        unsynced_del(s, w);
    else
        unsynced_add(s, w);
}

static void watchers_append(struct mvcc_store *s, struct mvcc_watcher *w)
{
    if (s->watchers_len == s->watchers_cap) {
        s->watchers_cap =
            fl_grow_cap(s->watchers_cap, s->watchers_len + 1, 8, sizeof(*s->watchers));
        s->watchers = fl_realloc(s->watchers, s->watchers_cap * sizeof(*s->watchers));
        s->watcher_ids = fl_realloc(s->watcher_ids, s->watchers_cap * sizeof(*s->watcher_ids));
    }
    FL_ASSERT(s->watchers_len == 0 || s->watcher_ids[s->watchers_len - 1] < w->id);
    s->watchers[s->watchers_len] = w; /* ids only grow: stays sorted */
    s->watcher_ids[s->watchers_len] = w->id;
    s->watchers_len++;
    s->watchers_live++;
}

enum mvcc_err mvcc_watch_create(struct mvcc_store *s, const struct mvcc_watch_req *req, int64_t *id,
                                int64_t *header_rev)
{
    if (req->key_len == 0)
        return MVCC_ERR_KEY_NOT_GIVEN;
    if (req->start_rev < 0)
        return MVCC_ERR_INVALID;
    struct mvcc_watcher *w = fl_calloc(1, sizeof(*w));
    w->id = s->next_watch_id++;
    w->key = fl_memdup(req->key, req->key_len);
    w->key_len = req->key_len;
    w->end = req->range_end_len ? fl_memdup(req->range_end, req->range_end_len) : NULL;
    w->end_len = req->range_end_len;
    w->start_rev = req->start_rev ? req->start_rev : s->current_rev + 1;
    w->min_rev = w->start_rev;
    w->prev_kv = req->prev_kv;
    w->progress_notify = req->progress_notify;
    w->filter_put = req->filter_put;
    w->filter_delete = req->filter_delete;
    w->ready_pos = SIZE_MAX;
    w->synced = w->min_rev > s->current_rev;
    watchers_append(s, w);
    if (!w->synced)
        unsynced_add(s, w);
    w->in_tree =
        fl_ivnode_set_etcd(&w->iv, (uint64_t)w->id, w->key, w->key_len, w->end, w->end_len);
    if (w->in_tree)
        fl_ivtree_insert(&s->watch_tree, &w->iv);
    *id = w->id;
    if (header_rev)
        *header_rev = s->current_rev;
    return MVCC_OK;
}

static void watcher_free(struct mvcc_store *s, struct mvcc_watcher *w)
{
    for (size_t i = w->q_head; i < w->q_len; i++)
        mvcc_watch_resp_free(&w->q[i]);
    s->pending_resps -= w->q_len - w->q_head;
    free(w->q);
    free(w->key);
    free(w->end);
    free(w);
}

/* Drops the holes once they outnumber the live watchers (amortised O(1) a removal). */
static void watchers_maybe_compact(struct mvcc_store *s)
{
    size_t holes = s->watchers_len - s->watchers_live;
    if (holes < 16 || holes <= s->watchers_live)
        return;
    size_t k = 0;
    for (size_t i = 0; i < s->watchers_len; i++) {
        if (!s->watchers[i])
            continue;
        s->watchers[k] = s->watchers[i];
        s->watcher_ids[k] = s->watcher_ids[i];
        k++;
    }
    FL_ASSERT(k == s->watchers_live);
    s->watchers_len = k;
}

static void watcher_remove(struct mvcc_store *s, struct mvcc_watcher *w)
{
    size_t i = watcher_slot(s, w->id);
    FL_ASSERT(i < s->watchers_len && s->watchers[i] == w);
    s->watchers[i] = NULL;
    s->watchers_live--;
    if (w->in_tree)
        fl_ivtree_remove(&s->watch_tree, &w->iv);
    if (w->canceled)
        s->canceled_len--;
    else if (!w->synced)
        unsynced_del(s, w);
    ready_remove(s, w);
    watcher_free(s, w);
    watchers_maybe_compact(s);
}

enum mvcc_err mvcc_watch_cancel(struct mvcc_store *s, int64_t id)
{
    struct mvcc_watcher *w = watcher_find(s, id);
    if (!w)
        return MVCC_ERR_WATCH_NOT_FOUND;
    watcher_remove(s, w);
    return MVCC_OK;
}

void mvcc__watch_close_all(struct mvcc_store *s)
{
    for (size_t i = 0; i < s->watchers_len; i++)
        if (s->watchers[i])
            watcher_free(s, s->watchers[i]);
    free(s->watchers);
    free(s->watcher_ids);
    free(s->unsynced);
    free(s->ready);
    free(s->hits);
    s->watchers = NULL;
    s->watcher_ids = NULL;
    s->unsynced = NULL;
    s->ready = NULL;
    s->hits = NULL;
    s->watchers_len = s->watchers_cap = s->watchers_live = 0;
    s->unsynced_len = s->unsynced_cap = s->canceled_len = 0;
    s->ready_len = s->ready_cap = s->hits_len = s->hits_cap = 0;
    s->watch_tree.root = NULL;
    s->watch_tree.len = 0;
}

/* ---------------------------------------------------------------- catch-up */

static void cancel_compacted(struct mvcc_store *s, struct mvcc_watcher *w)
{
    struct mvcc_watch_resp r;
    build_resp(s, w, NULL, 0, &r);
    r.canceled = true;
    r.compact_rev = s->compact_rev;
    r.cancel_err = MVCC_ERR_COMPACTED;
    q_push(s, w, &r, false);
    w->canceled = true;
    w->synced = false;
    s->canceled_len++;
}

/* Flushes events [from, ev->len) into responses of at most watch_batch_events_max
 * events, cutting only between revisions. */
static void flush_batches(struct mvcc_store *s, struct mvcc_watcher *w, const struct ev_vec *ev)
{
    size_t i = 0;
    size_t max = (size_t)s->cfg.watch_batch_events_max;
    while (i < ev->len) {
        size_t j = i;
        while (j < ev->len) {
            size_t k = j; /* one whole revision */
            while (k < ev->len && ev->v[k].rev->mod_rev == ev->v[j].rev->mod_rev)
                k++;
            if (j > i && k - i > max)
                break;
            j = k;
        }
        struct mvcc_watch_resp r;
        build_resp(s, w, ev->v + i, j - i, &r);
        q_push(s, w, &r, false);
        i = j;
    }
}

static bool q_full(const struct mvcc_store *s, const struct mvcc_watcher *w)
{
    return s->cfg.watch_queue_max > 0 && (int64_t)(w->q_len - w->q_head) >= s->cfg.watch_queue_max;
}

/* Catches one unsynced watcher up from the log (mvcc_watch_sync keeps the unsynced
 * array: this only sets the flags). */
static void sync_one(struct mvcc_store *s, struct mvcc_watcher *w, struct ev_vec *ev)
{
    if (w->min_rev < s->compact_rev) {
        if (!q_full(s, w)) {
            cancel_compacted(s, w);
            return;
        }
        /* The stream's buffer refused the cancel (etcd: the send on a full channel
         * fails): retry at the next sync. etcd#17529: the watcher stayed among those
         * being synced and was moved past everything, as if it had caught up. */
        if (!FL_BUG(MVCC_WATCH_COMPACTED_LOST))
            return;
        w->min_rev = s->compact_rev;
    }
    /* A victim: its stream has no room for what it would catch up (etcd keeps the
     * watcher a victim until a send succeeds). */
    if (q_full(s, w))
        return;
    size_t lo;
    FL_LOWER_BOUND(lo, s->log_len, mid, s->log[mid].main < w->min_rev);
    int64_t budget = s->cfg.watch_sync_events_max;
    int64_t scanned = 0;
    ev->len = 0;
    size_t j = lo;
    while (j < s->log_len) {
        int64_t rev = s->log[j].main;
        if (budget > 0 && scanned >= budget)
            break; /* stop between revisions; continue next sync */
        for (; j < s->log_len && s->log[j].main == rev; j++, scanned++) {
            const struct mvcc_logrec *lr = &s->log[j];
            struct ev_ref e = event_of(w, lr);
            if (!watcher_wants(w, lr->key, e.rev))
                continue;
            /* etcd#18089/#19179: the catch-up read of the compacted backend missed
             * the tombstone sitting at the compaction revision. */
            if (FL_BUG(MVCC_WATCH_SKIP_ON_COMPACT) && mvcc__rev_is_tomb(e.rev) &&
                s->compacted_once && rev == s->compact_rev)
                continue;
            ev_push(ev, e);
        }
        w->min_rev = rev + 1;
    }
    flush_batches(s, w, ev);
    if (j == s->log_len) {
        w->min_rev = s->current_rev + 1;
        w->synced = true;
    }
}

/* Visits only the unsynced watchers, in id order as the scan of every watcher did;
 * those still unsynced stay in the array, in order. */
int64_t mvcc_watch_sync(struct mvcc_store *s)
{
    FL_ASSERT(!s->in_write);
    if (s->unsynced_len == 0)
        return 0;
    struct ev_vec ev = {0};
    int64_t left = 0;
    size_t k = 0;
    for (size_t i = 0; i < s->unsynced_len; i++) {
        struct mvcc_watcher *w = s->unsynced[i];
        FL_ASSERT(!w->synced && !w->canceled);
        s->watch_steps++;
        if (w->min_rev > s->current_rev) {
            /* A watcher on a future revision has nothing to catch up. etcd#20221 (fixed
             * by etcd PR 20281): the resync assumed a watcher can only be behind and set
             * each one it synced to the current revision + 1, so a future watcher a
             * restore had moved there went back below its start revision and delivered
             * events it never asked for. */
            if (FL_BUG(MVCC_RESTORE_LOWERS_FUTURE_WATCH))
                w->min_rev = s->current_rev + 1;
            w->synced = true;
            continue;
        }
        sync_one(s, w, &ev);
        if (!w->synced && !w->canceled) {
            s->unsynced[k++] = w;
            left++;
        }
    }
    s->unsynced_len = k;
    free(ev.v);
    return left;
}

/* ---------------------------------------------------------------- progress */

static bool has_queued_events(const struct mvcc_watcher *w)
{
    for (size_t i = w->q_head; i < w->q_len; i++)
        if (w->q[i].events_len)
            return true;
    return false;
}

static bool progress_one(struct mvcc_store *s, struct mvcc_watcher *w)
{
    if (w->canceled)
        return false;
    bool bug = FL_BUG(MVCC_PROGRESS_BEFORE_EVENTS);
    /* etcd#15220: the notification was sent without checking that the watcher had
     * delivered everything up to the revision it announces. */
    if (!bug && (!w->synced || has_queued_events(w)))
        return false;
    /* A watcher that starts past this store's revision (one resumed on a member that
     * is behind the member it came from) was promised every event up to its start:
     * announcing the store's revision would take its progress back below events it
     * already received. It hears nothing until the store reaches its start. */
    if (w->min_rev > s->current_rev + 1)
        return false;
    struct mvcc_watch_resp r;
    build_resp(s, w, NULL, 0, &r);
    r.progress = true;
    q_push(s, w, &r, bug);
    return true;
}

bool mvcc_watch_idle(const struct mvcc_store *s, int64_t id)
{
    const struct mvcc_watcher *w = watcher_find(s, id);
    return w && w->synced && !w->canceled && !has_queued_events(w);
}

bool mvcc_watch_request_progress(struct mvcc_store *s, int64_t id)
{
    struct mvcc_watcher *w = watcher_find(s, id);
    return w ? progress_one(s, w) : false;
}

int64_t mvcc_watch_progress_all(struct mvcc_store *s)
{
    int64_t n = 0;
    s->watch_steps += s->watchers_len;
    for (size_t i = 0; i < s->watchers_len; i++)
        if (s->watchers[i] && s->watchers[i]->progress_notify)
            n += progress_one(s, s->watchers[i]);
    return n;
}

/* ---------------------------------------------------------------- draining */

static void pop_from(struct mvcc_store *s, struct mvcc_watcher *w, struct mvcc_watch_resp *out)
{
    FL_ASSERT(w->q_head < w->q_len);
    *out = w->q[w->q_head++];
    s->pending_resps--;
    if (w->q_head == w->q_len)
        w->q_head = w->q_len = 0;
    if (out->canceled)
        watcher_remove(s, w);
    else
        ready_fix(s, w);
}

bool mvcc_watch_pop(struct mvcc_store *s, struct mvcc_watch_resp *out)
{
    if (s->ready_len == 0)
        return false;
    s->watch_steps++;
    pop_from(s, s->ready[0], out);
    return true;
}

bool mvcc_watch_pop_id(struct mvcc_store *s, int64_t id, struct mvcc_watch_resp *out)
{
    struct mvcc_watcher *w = watcher_find(s, id);
    if (!w || w->q_head == w->q_len)
        return false;
    pop_from(s, w, out);
    return true;
}

void mvcc_watcher_counts(const struct mvcc_store *s, int64_t *watchers, int64_t *unsynced)
{
    *watchers = (int64_t)s->watchers_live;
    *unsynced = (int64_t)(s->unsynced_len + s->canceled_len);
}

uint64_t mvcc_watch_steps(const struct mvcc_store *s)
{
    return s->watch_steps;
}

size_t mvcc_watch_pending(const struct mvcc_store *s)
{
    return s->pending_resps;
}

enum mvcc_err mvcc_watch_rewind(struct mvcc_store *s, int64_t id, int64_t rev)
{
    struct mvcc_watcher *w = watcher_find(s, id);
    if (!w)
        return MVCC_ERR_WATCH_NOT_FOUND;
    if (w->canceled)
        return MVCC_OK;
    w->min_rev = rev > 0 ? rev : 1;
    watcher_set_synced(s, w, w->min_rev > s->current_rev);
    return MVCC_OK;
}

int64_t mvcc_watch_next_rev(const struct mvcc_store *s, int64_t id)
{
    const struct mvcc_watcher *w = watcher_find(s, id);
    return w ? watcher_next_rev(s, w) : 0;
}

void mvcc__watch_after_restore(struct mvcc_store *s, int64_t old_rev,
                               enum mvcc_restore_reason reason)
{
    s->watch_steps += s->watchers_len;
    s->unsynced_len = 0;
    for (size_t i = 0; i < s->watchers_len; i++) {
        struct mvcc_watcher *w = s->watchers[i];
        if (!w || w->canceled)
            continue;
        /* What the synced watcher had reached under the old revision. */
        if (w->synced)
            w->min_rev = FL_MAX(w->min_rev, old_rev + 1);
        /* etcd#15271: after a snapshot from the leader, watchers were moved back and
         * resent revisions they had already delivered. */
        if (FL_BUG(MVCC_WATCH_OLD_AFTER_PARTITION) && reason == MVCC_RESTORE_RAFT_SNAPSHOT)
            w->min_rev = w->start_rev;
        /* etcd#8411 (fixed by moving synced watchers to the unsynced group on restore):
         * the restore left every synced watcher in the synced group, which only hears
         * of revisions applied from then on, so what the snapshot brought is skipped. */
        if (FL_BUG(MVCC_RESTORE_KEEPS_WATCHERS_SYNCED) && w->synced &&
            w->min_rev <= s->current_rev) {
            w->min_rev = s->current_rev + 1;
            continue;
        }
        w->synced = w->min_rev > s->current_rev;
        /* etcd moves every watcher to the unsynced group, future ones included; the
         * resync that follows must leave those alone (see mvcc_watch_sync). */
        if (FL_BUG(MVCC_RESTORE_LOWERS_FUTURE_WATCH))
            w->synced = false;
        if (!w->synced) {
            FL_GROW(s->unsynced, s->unsynced_cap, s->unsynced_len + 1, 16);
            s->unsynced[s->unsynced_len++] = w; /* in id order */
        }
    }
}

static void check_one(const struct mvcc_store *s, const struct mvcc_watcher *w)
{
    FL_ASSERT(w->id > 0 && w->id < s->next_watch_id);
    FL_ASSERT(w->q_head <= w->q_len && w->q_len <= w->q_cap);
    FL_ASSERT(!(w->synced && w->canceled));
    FL_ASSERT(watcher_next_rev(s, w) > s->current_rev || !w->synced);
    FL_ASSERT(w->in_tree == fl_ivnode_set_etcd(&(struct fl_ivnode){0}, 0, w->key, w->key_len,
                                               w->end, w->end_len));
    if (w->q_head < w->q_len) {
        FL_ASSERT(w->ready_pos < s->ready_len && s->ready[w->ready_pos] == w);
        if (w->ready_pos > 0)
            FL_ASSERT(head_seq(s->ready[(w->ready_pos - 1) / 2]) < head_seq(w));
    } else {
        FL_ASSERT(w->ready_pos == SIZE_MAX);
    }
    /* Responses of one watcher are in production order, events in revision order and
     * never ahead of the revision the response carries. */
    for (size_t j = w->q_head; j < w->q_len; j++) {
        const struct mvcc_watch_resp *r = &w->q[j];
        for (size_t e = 1; e < r->events_len; e++)
            FL_ASSERT(r->events[e - 1].kv.mod_revision <= r->events[e].kv.mod_revision);
    }
}

void mvcc__watch_check(const struct mvcc_store *s)
{
    size_t pending = 0, live = 0, unsynced = 0, canceled = 0, in_tree = 0, ready = 0;
    for (size_t i = 0; i < s->watchers_len; i++) {
        if (i > 0)
            FL_ASSERT(s->watcher_ids[i - 1] < s->watcher_ids[i]);
        const struct mvcc_watcher *w = s->watchers[i];
        if (!w)
            continue;
        FL_ASSERT(w->id == s->watcher_ids[i]);
        check_one(s, w);
        live++;
        pending += w->q_len - w->q_head;
        canceled += w->canceled;
        in_tree += w->in_tree;
        ready += w->q_head < w->q_len;
        if (!w->synced && !w->canceled) {
            FL_ASSERT(unsynced < s->unsynced_len && s->unsynced[unsynced] == w);
            unsynced++;
        }
    }
    FL_ASSERT(live == s->watchers_live && canceled == s->canceled_len);
    FL_ASSERT(unsynced == s->unsynced_len && ready == s->ready_len);
    FL_ASSERT(in_tree == s->watch_tree.len);
    fl_ivtree_check(&s->watch_tree);
    FL_ASSERT(pending == s->pending_resps);
}
