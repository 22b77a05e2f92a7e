/*
 * mvcc_kv.c: Range, Put, DeleteRange and compaction over the key index, and the
 * write-transaction primitives every write goes through (a write txn is one main
 * revision; each put or deleted key inside it takes the next sub-revision).
 *
 * Revision rules follow etcd: a write txn bumps the revision by one only if it
 * wrote something; reads answer with the store's current revision in the header;
 * a revision below the compact revision is "compacted", above the current one is
 * "future". Txn lives in mvcc_txn.c, HashKV in mvcc_hash.c.
 */
#include "nodes/mvcc/mvcc_int.h"
#include "harness/common/lower_bound.h"

void mvcc__kv_fill(struct mvcc_kv *out, const struct mvcc_key *k, const struct mvcc_rev *r,
                   bool keys_only)
{
    out->key = k->key;
    out->key_len = k->key_len;
    out->value = keys_only ? NULL : r->val;
    out->value_len = keys_only ? 0 : r->val_len;
    out->create_revision = r->create_rev;
    out->mod_revision = r->mod_rev;
    out->version = r->version;
    out->lease = r->lease;
}

/* ---------------------------------------------------------------- write primitives */

void mvcc__write_begin(struct mvcc_store *s)
{
    FL_ASSERT(!s->in_write);
    s->in_write = true;
    s->write_rev = s->current_rev + 1;
    s->write_sub = 0;
    s->write_log_start = s->log_len;
}

int64_t mvcc__write_end(struct mvcc_store *s)
{
    FL_ASSERT(s->in_write);
    s->in_write = false;
    if (s->write_sub == 0)
        return s->current_rev;
    s->current_rev = s->write_rev;
    mvcc__watch_notify(s, s->write_log_start);
    return s->current_rev;
}

static struct mvcc_rev *append_rev(struct mvcc_store *s, struct mvcc_key *k)
{
    FL_ASSERT(s->in_write);
    FL_ASSERT(k->revs_len == 0 || k->revs[k->revs_len - 1].mod_rev < s->write_rev);
    /* not FL_GROW_ZERO: one revision per write, and its out-of-line zeroing (a call,
     * a memset of variable size) costs more than this clear of constant size */
    FL_GROW(k->revs, k->revs_cap, k->revs_len + 1, 2);
    struct mvcc_rev *r = &k->revs[k->revs_len++];
    memset(r, 0, sizeof(*r));
    r->mod_rev = s->write_rev;
    r->sub = s->write_sub++;
    FL_GROW(s->log, s->log_cap, s->log_len + 1, 256);
    s->log[s->log_len++] = (struct mvcc_logrec){r->mod_rev, r->sub, k};
    return r;
}

static void account_write(struct mvcc_store *s, const struct mvcc_key *k, const struct mvcc_rev *r)
{
    int64_t c = mvcc__rev_cost(s, k, r);
    s->size_bytes += c;
    s->live_bytes += c;
}

void mvcc__write_tomb(struct mvcc_store *s, struct mvcc_key *k)
{
    FL_ASSERT(k->revs_len > 0 && !mvcc__rev_is_tomb(&k->revs[k->revs_len - 1]));
    s->state_hash -= k->live_hash;
    mvcc__lease_detach(s, k);
    struct mvcc_rev *r = append_rev(s, k);
    account_write(s, k, r);
}

/* A put inside an open write txn. The caller validated lease and ignore_* flags. */
static void write_put(struct mvcc_store *s, const struct mvcc_put_req *req,
                      struct mvcc_put_result *out)
{
    struct mvcc_key *k = mvcc__key_get_or_add(s, req->key, req->key_len);
    const struct mvcc_rev *prev = NULL;
    if (k->revs_len && !mvcc__rev_is_tomb(&k->revs[k->revs_len - 1]))
        prev = &k->revs[k->revs_len - 1];
    int64_t create = prev ? prev->create_rev : s->write_rev;
    int64_t version = prev ? prev->version + 1 : 1;
    int64_t lease = req->ignore_lease && prev ? prev->lease : req->lease;
    const uint8_t *val = req->value;
    size_t val_len = req->value_len;
    if (req->ignore_value && prev) {
        val = prev->val;
        val_len = prev->val_len;
    }
    FL_ASSERT(val_len <= UINT32_MAX);
    uint8_t *copy = mvcc__val_store(k, val, val_len); /* chunks never move: prev stays */
    memset(out, 0, sizeof(*out));
    if (prev && req->prev_kv) {
        /* Fill before append_rev may move the revision array. */
        out->has_prev = true;
        mvcc__kv_fill(&out->prev_kv, k, prev, false);
    }
    if (prev)
        s->state_hash -= k->live_hash;
    struct mvcc_rev *r = append_rev(s, k);
    r->create_rev = create;
    r->version = version;
    r->lease = lease;
    r->val = copy;
    r->val_len = (uint32_t)val_len;
    k->live_hash = mvcc__rev_state_hash(k, r);
    s->state_hash += k->live_hash;
    if (k->lease != lease) {
        mvcc__lease_detach(s, k);
        if (lease)
            mvcc__lease_attach(s, k, lease);
    }
    account_write(s, k, r);
    out->header_rev = s->write_rev;
}

/* ---------------------------------------------------------------- checks */

static enum mvcc_err check_read_rev(const struct mvcc_store *s, int64_t rev)
{
    if (rev < 0)
        return MVCC_ERR_INVALID;
    if (rev > s->current_rev)
        return MVCC_ERR_FUTURE_REV;
    if (rev > 0 && rev < s->compact_rev)
        return MVCC_ERR_COMPACTED;
    return MVCC_OK;
}

static enum mvcc_err check_put(const struct mvcc_store *s, const struct mvcc_put_req *req)
{
    if (req->key_len == 0)
        return MVCC_ERR_KEY_NOT_GIVEN;
    if (req->ignore_value || req->ignore_lease) {
        const struct mvcc_key *k = mvcc__key_find(s, req->key, req->key_len);
        if (!k || !k->revs_len || mvcc__rev_is_tomb(&k->revs[k->revs_len - 1]))
            return MVCC_ERR_KEY_NOT_FOUND;
    }
    if (req->lease && !req->ignore_lease && !mvcc__lease_find(s, req->lease))
        return MVCC_ERR_LEASE_NOT_FOUND;
    if (req->value_len > UINT32_MAX)
        return MVCC_ERR_INVALID;
    return MVCC_OK;
}

/* ---------------------------------------------------------------- range */

struct kv_vec {
    struct mvcc_kv *v;
    size_t len, cap;
};

static void kv_push(struct kv_vec *kv, const struct mvcc_key *k, const struct mvcc_rev *r,
                    bool keys_only)
{
    FL_GROW(kv->v, kv->cap, kv->len + 1, 8);
    mvcc__kv_fill(&kv->v[kv->len++], k, r, keys_only);
}

/* Sort comparators: the target first, ties by key (unique), so a total order. */
static int kv_key_cmp(const struct mvcc_kv *x, const struct mvcc_kv *y)
{
    return mvcc__bytes_cmp(x->key, x->key_len, y->key, y->key_len);
}
static int kv_num_cmp(int64_t a, int64_t b, const struct mvcc_kv *x, const struct mvcc_kv *y)
{
    return a != b ? (a < b ? -1 : 1) : kv_key_cmp(x, y);
}
static int kv_cmp_key(const void *a, const void *b)
{
    return kv_key_cmp(a, b);
}
static int kv_cmp_version(const void *a, const void *b)
{
    const struct mvcc_kv *x = a, *y = b;
    return kv_num_cmp(x->version, y->version, x, y);
}
static int kv_cmp_create(const void *a, const void *b)
{
    const struct mvcc_kv *x = a, *y = b;
    return kv_num_cmp(x->create_revision, y->create_revision, x, y);
}
static int kv_cmp_mod(const void *a, const void *b)
{
    const struct mvcc_kv *x = a, *y = b;
    return kv_num_cmp(x->mod_revision, y->mod_revision, x, y);
}
static int kv_cmp_value(const void *a, const void *b)
{
    const struct mvcc_kv *x = a, *y = b;
    int c = mvcc__bytes_cmp(x->value, x->value_len, y->value, y->value_len);
    return c ? c : kv_key_cmp(x, y);
}
static int (*const kv_cmp_fns[])(const void *, const void *) = {
    [MVCC_SORT_KEY] = kv_cmp_key,       [MVCC_SORT_VERSION] = kv_cmp_version,
    [MVCC_SORT_CREATE] = kv_cmp_create, [MVCC_SORT_MOD] = kv_cmp_mod,
    [MVCC_SORT_VALUE] = kv_cmp_value,
};

/* Reads at revision rev (already resolved and checked); used by Range and by reads
 * inside a txn, which may read at the txn's own pending revision. */
static void range_at(struct mvcc_store *s, const struct mvcc_range_req *req, int64_t rev,
                     struct mvcc_range_result *out)
{
    struct kv_vec kv = {0};
    int64_t count = 0;
    bool want = !req->count_only;
    /* Anything but key order needs every match before the limit cuts. */
    bool sorted_later =
        want && (req->sort_target != MVCC_SORT_KEY || req->sort_order == MVCC_SORT_DESCEND);
    if (req->range_end_len == 0) {
        const struct mvcc_key *k = mvcc__key_find(s, req->key, req->key_len);
        long at = k ? mvcc__key_at(k, rev) : -1;
        if (at >= 0 && !mvcc__rev_is_tomb(&k->revs[at])) {
            count = 1;
            if (want)
                kv_push(&kv, k, &k->revs[at], req->keys_only);
        }
    } else {
        mvcc__index_sort(s);
        bool to_end = req->range_end_len == 1 && req->range_end[0] == 0;
        for (size_t i = mvcc__index_lower(s, req->key, req->key_len); i < s->keys_len; i++) {
            const struct mvcc_key *k = s->keys[i];
            if (!to_end &&
                mvcc__bytes_cmp(k->key, k->key_len, req->range_end, req->range_end_len) >= 0)
                break;
            long at = mvcc__key_at(k, rev);
            if (at < 0 || mvcc__rev_is_tomb(&k->revs[at]))
                continue;
            count++;
            if (want && (sorted_later || req->limit == 0 || (int64_t)kv.len < req->limit))
                kv_push(&kv, k, &k->revs[at], req->keys_only);
        }
    }
    if (sorted_later && kv.len > 1) {
        qsort(kv.v, kv.len, sizeof(*kv.v), kv_cmp_fns[req->sort_target]);
        if (req->sort_order == MVCC_SORT_DESCEND)
            for (size_t i = 0, j = kv.len - 1; i < j; i++, j--) {
                struct mvcc_kv t = kv.v[i];
                kv.v[i] = kv.v[j];
                kv.v[j] = t;
            }
    }
    if (sorted_later && req->limit > 0 && (int64_t)kv.len > req->limit)
        kv.len = (size_t)req->limit;
    out->kvs = kv.v;
    out->kvs_len = kv.len;
    out->count = count;
    out->more = req->limit > 0 && count > req->limit;
}

static enum mvcc_err check_range(const struct mvcc_store *s, const struct mvcc_range_req *req)
{
    if (req->key_len == 0)
        return MVCC_ERR_KEY_NOT_GIVEN;
    if (req->limit < 0 || (unsigned)req->sort_target > MVCC_SORT_VALUE ||
        (unsigned)req->sort_order > MVCC_SORT_DESCEND)
        return MVCC_ERR_INVALID;
    return check_read_rev(s, req->revision);
}

enum mvcc_err mvcc_range(struct mvcc_store *s, const struct mvcc_range_req *req,
                         struct mvcc_range_result *out)
{
    memset(out, 0, sizeof(*out));
    FL_ASSERT(!s->in_write);
    enum mvcc_err err = check_range(s, req);
    if (err)
        return err;
    range_at(s, req, req->revision ? req->revision : s->current_rev, out);
    out->header_rev = s->current_rev;
    return MVCC_OK;
}

void mvcc_range_result_free(struct mvcc_range_result *r)
{
    if (!r)
        return;
    free(r->kvs);
    r->kvs = NULL;
    r->kvs_len = 0;
}

/* ---------------------------------------------------------------- put, delete */

enum mvcc_err mvcc_put(struct mvcc_store *s, const struct mvcc_put_req *req,
                       struct mvcc_put_result *out)
{
    memset(out, 0, sizeof(*out));
    enum mvcc_err err = check_put(s, req);
    if (err)
        return err;
    mvcc__write_begin(s);
    write_put(s, req, out);
    out->header_rev = mvcc__write_end(s);
    return MVCC_OK;
}

/* Deletes every live key in the range inside an open write txn. */
static void write_delete(struct mvcc_store *s, const struct mvcc_delete_req *req,
                         struct mvcc_delete_result *out)
{
    struct kv_vec prev = {0};
    int64_t deleted = 0;
    if (req->range_end_len == 0) {
        struct mvcc_key *k = mvcc__key_find(s, req->key, req->key_len);
        if (k && k->revs_len && !mvcc__rev_is_tomb(&k->revs[k->revs_len - 1])) {
            if (req->prev_kv)
                kv_push(&prev, k, &k->revs[k->revs_len - 1], false);
            mvcc__write_tomb(s, k);
            deleted = 1;
        }
    } else {
        mvcc__index_sort(s);
        bool to_end = req->range_end_len == 1 && req->range_end[0] == 0;
        for (size_t i = mvcc__index_lower(s, req->key, req->key_len); i < s->keys_len; i++) {
            struct mvcc_key *k = s->keys[i];
            if (!to_end &&
                mvcc__bytes_cmp(k->key, k->key_len, req->range_end, req->range_end_len) >= 0)
                break;
            if (!k->revs_len || mvcc__rev_is_tomb(&k->revs[k->revs_len - 1]))
                continue;
            if (req->prev_kv)
                kv_push(&prev, k, &k->revs[k->revs_len - 1], false);
            mvcc__write_tomb(s, k);
            deleted++;
        }
    }
    out->deleted = deleted;
    out->prev_kvs = prev.v;
    out->prev_kvs_len = prev.len;
}

enum mvcc_err mvcc_delete(struct mvcc_store *s, const struct mvcc_delete_req *req,
                          struct mvcc_delete_result *out)
{
    memset(out, 0, sizeof(*out));
    if (req->key_len == 0)
        return MVCC_ERR_KEY_NOT_GIVEN;
    mvcc__write_begin(s);
    write_delete(s, req, out);
    out->header_rev = mvcc__write_end(s);
    return MVCC_OK;
}

void mvcc_delete_result_free(struct mvcc_delete_result *r)
{
    if (!r)
        return;
    free(r->prev_kvs);
    r->prev_kvs = NULL;
    r->prev_kvs_len = 0;
}

enum mvcc_err mvcc__check_range(const struct mvcc_store *s, const struct mvcc_range_req *req)
{
    return check_range(s, req);
}
enum mvcc_err mvcc__check_put(const struct mvcc_store *s, const struct mvcc_put_req *req)
{
    return check_put(s, req);
}
void mvcc__range_at(struct mvcc_store *s, const struct mvcc_range_req *req, int64_t rev,
                    struct mvcc_range_result *out)
{
    range_at(s, req, rev, out);
}
void mvcc__write_put(struct mvcc_store *s, const struct mvcc_put_req *req,
                     struct mvcc_put_result *out)
{
    write_put(s, req, out);
}
void mvcc__write_delete(struct mvcc_store *s, const struct mvcc_delete_req *req,
                        struct mvcc_delete_result *out)
{
    write_delete(s, req, out);
}

/* ---------------------------------------------------------------- compaction */

/* Compacts one key: drops revisions below rev except the newest at or below rev,
 * which goes too when it is a tombstone older than rev. Returns bytes freed. */
static int64_t compact_key(struct mvcc_store *s, struct mvcc_key *k, int64_t rev)
{
    long at = mvcc__key_at(k, rev);
    if (at < 0)
        return 0;
    size_t drop = (size_t)at;
    if (mvcc__rev_is_tomb(&k->revs[at]) && k->revs[at].mod_rev < rev)
        drop++;
    int64_t freed = 0;
    for (size_t i = 0; i < drop; i++) {
        freed += mvcc__rev_cost(s, k, &k->revs[i]);
        mvcc__val_drop(k, &k->revs[i]);
    }
    s->last_compact_removed += (int64_t)drop;
    if (drop) {
        memmove(k->revs, k->revs + drop, (k->revs_len - drop) * sizeof(*k->revs));
        k->revs_len -= drop;
        mvcc__vals_maybe_rebuild(k);
    }
    return freed;
}

enum mvcc_err mvcc_compact(struct mvcc_store *s, int64_t rev, int64_t *header_rev)
{
    FL_ASSERT(!s->in_write);
    if (header_rev)
        *header_rev = s->current_rev;
    if (rev < 0)
        return MVCC_ERR_INVALID;
    /* etcd starts its compact revision at -1, so the first compaction accepts 0. */
    if (s->compacted_once && rev <= s->compact_rev)
        return MVCC_ERR_COMPACTED;
    if (rev > s->current_rev)
        return MVCC_ERR_FUTURE_REV;
    s->compacted_once = true;
    s->compact_rev = rev;
    /* The log keeps revisions >= rev: drop its prefix first, while every key it
     * points at is still alive. */
    size_t lo;
    FL_LOWER_BOUND(lo, s->log_len, mid, s->log[mid].main < rev);
    if (lo) {
        memmove(s->log, s->log + lo, (s->log_len - lo) * sizeof(*s->log));
        s->log_len -= lo;
    }
    int64_t freed = 0;
    s->last_compact_removed = 0;
    for (size_t i = 0; i < s->keys_len; i++)
        freed += compact_key(s, s->keys[i], rev);
    s->live_bytes -= freed;
    mvcc__index_prune(s);
    return MVCC_OK;
}
