/*
 * mvcc_snap.c: HashKV and the snapshot codec.
 *
 * Snapshot format (all integers little-endian):
 *   "FLMVCC01"  magic, 8 bytes
 *   u64 current_rev, compact_rev, compacted_once, applied_index, size_bytes
 *   u64 lease count, then per lease (ascending id): u64 id, u64 ttl_s
 *   u64 key count, then per key (byte order): u64 key_len, key bytes, u64 rev count,
 *       per revision: u64 mod_rev, u64 sub, u64 create_rev, u64 version, u64 lease,
 *       u64 val_len, value bytes
 *   u32 CRC32C of everything before it
 * Decoding checks every length against the remaining bytes and every semantic rule
 * the invariant checker asserts, so corrupt input is an error, never a crash.
 */
#include "nodes/mvcc/mvcc_int.h"

static const uint8_t snap_magic[8] = {'F', 'L', 'M', 'V', 'C', 'C', '0', '1'};

/* ---------------------------------------------------------------- HashKV */

enum mvcc_err mvcc_hash_kv(struct mvcc_store *s, int64_t rev, struct mvcc_hashkv *out)
{
    memset(out, 0, sizeof(*out));
    out->header_rev = s->current_rev;
    if (rev < 0)
        return MVCC_ERR_INVALID;
    if (rev > s->current_rev)
        return MVCC_ERR_FUTURE_REV;
    if (rev == 0)
        rev = s->current_rev;
    if (rev < s->compact_rev)
        return MVCC_ERR_COMPACTED;
    mvcc__index_sort(s);
    struct fl_digest d;
    fl_digest_init(&d);
    fl_digest_i64(&d, s->compact_rev);
    for (size_t i = 0; i < s->keys_len; i++) {
        const struct mvcc_key *k = s->keys[i];
        for (size_t j = 0; j < k->revs_len && k->revs[j].mod_rev <= rev; j++) {
            const struct mvcc_rev *r = &k->revs[j];
            fl_digest_u64(&d, k->key_len);
            fl_digest_update(&d, k->key, k->key_len);
            fl_digest_i64(&d, r->mod_rev);
            fl_digest_u64(&d, r->sub);
            fl_digest_i64(&d, r->create_rev);
            fl_digest_i64(&d, r->version);
            fl_digest_i64(&d, r->lease);
            fl_digest_u64(&d, r->val_len);
            fl_digest_update(&d, r->val, r->val_len);
        }
    }
    out->hash = fl_digest_value(&d);
    fl_digest_close(&d);
    out->hash_rev = rev;
    out->compact_rev = s->compact_rev;
    return MVCC_OK;
}

/* ---------------------------------------------------------------- encode */

/* The encoder measures the image first and then writes it with one reservation:
 * no buffer growth (each would copy everything written so far) and no call per
 * field. */
static uint8_t *put_u64(uint8_t *p, uint64_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(p, &v, 8); /* the format is little-endian: one store */
#else
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
#endif
    return p + 8;
}

static uint8_t *put_raw(uint8_t *p, const void *src, size_t n)
{
    if (n)
        memcpy(p, src, n);
    return p + n;
}

static size_t encoded_size(const struct mvcc_store *s)
{
    size_t n = sizeof(snap_magic) + 6 * 8 + s->leases_len * 16 + 8 + 4;
    for (size_t i = 0; i < s->keys_len; i++) {
        const struct mvcc_key *k = s->keys[i];
        n += 16 + k->key_len + k->revs_len * 48;
        for (size_t j = 0; j < k->revs_len; j++)
            n += k->revs[j].val_len;
    }
    return n;
}

void mvcc_snapshot_encode(struct mvcc_store *s, struct fl_buf *out)
{
    FL_ASSERT(!s->in_write);
    mvcc__index_sort(s);
    size_t size = encoded_size(s);
    fl_buf_reserve(out, size);
    uint8_t *const start = out->data + out->len, *p = start;
    p = put_raw(p, snap_magic, sizeof(snap_magic));
    p = put_u64(p, (uint64_t)s->current_rev);
    p = put_u64(p, (uint64_t)s->compact_rev);
    p = put_u64(p, s->compacted_once);
    p = put_u64(p, s->applied_index);
    p = put_u64(p, (uint64_t)s->size_bytes);
    p = put_u64(p, s->leases_len);
    for (size_t i = 0; i < s->leases_len; i++) {
        p = put_u64(p, (uint64_t)s->leases[i]->id);
        p = put_u64(p, (uint64_t)s->leases[i]->ttl_s);
    }
    p = put_u64(p, s->keys_len);
    for (size_t i = 0; i < s->keys_len; i++) {
        const struct mvcc_key *k = s->keys[i];
        p = put_u64(p, k->key_len);
        p = put_raw(p, k->key, k->key_len);
        p = put_u64(p, k->revs_len);
        for (size_t j = 0; j < k->revs_len; j++) {
            const struct mvcc_rev *r = &k->revs[j];
            p = put_u64(p, (uint64_t)r->mod_rev);
            p = put_u64(p, r->sub);
            p = put_u64(p, (uint64_t)r->create_rev);
            p = put_u64(p, (uint64_t)r->version);
            p = put_u64(p, (uint64_t)r->lease);
            p = put_u64(p, r->val_len);
            p = put_raw(p, r->val, r->val_len);
        }
    }
    uint32_t crc = fl_crc32c(0, start, (size_t)(p - start));
    for (int i = 0; i < 4; i++)
        *p++ = (uint8_t)(crc >> (8 * i));
    FL_ASSERT((size_t)(p - start) == size);
    out->len += size;
}

/* ---------------------------------------------------------------- decode */

struct rd {
    const uint8_t *p;
    size_t left;
    bool bad;
};

static uint64_t get_u64(struct rd *r)
{
    if (r->bad || r->left < 8) {
        r->bad = true;
        return 0;
    }
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)r->p[i] << (8 * i);
    r->p += 8;
    r->left -= 8;
    return v;
}

/* A signed field that must lie in [lo, hi]. */
static int64_t get_i64(struct rd *r, int64_t lo, int64_t hi)
{
    uint64_t u = get_u64(r);
    int64_t v = (int64_t)u;
    if (u > (uint64_t)INT64_MAX || v < lo || v > hi)
        r->bad = true;
    return r->bad ? lo : v;
}

static const uint8_t *get_bytes(struct rd *r, size_t n)
{
    if (r->bad || r->left < n) {
        r->bad = true;
        return NULL;
    }
    const uint8_t *p = r->p;
    r->p += n;
    r->left -= n;
    return p;
}

static void log_push(struct mvcc_store *s, int64_t main, uint32_t sub, struct mvcc_key *k)
{
    FL_GROW(s->log, s->log_cap, s->log_len + 1, 256);
    s->log[s->log_len++] = (struct mvcc_logrec){main, sub, k};
}

static int logrec_cmp(const void *a, const void *b)
{
    const struct mvcc_logrec *x = a, *y = b;
    if (x->main != y->main)
        return x->main < y->main ? -1 : 1;
    if (x->sub != y->sub)
        return x->sub < y->sub ? -1 : 1;
    return 0; /* (main, sub) is unique once validated */
}

/* Reads one key's revisions into k, checking the generation rules. */
/* FL_BUG(MVCC_REVISION_RESET_ON_RESTART) leaves a store whose revision went back below
 * its compact revision (etcd#17780's shape; etcd's bbolt holds it and restarts from it):
 * its snapshots must decode too, so the checks that assume current >= compact relax. */
static bool below_compact_ok(void)
{
    return FL_BUG(MVCC_REVISION_RESET_ON_RESTART);
}

static void read_revs(struct rd *r, struct mvcc_store *t, struct mvcc_key *k, size_t n)
{
    k->revs = fl_calloc(n ? n : 1, sizeof(*k->revs));
    k->revs_cap = n ? n : 1;
    for (size_t j = 0; j < n && !r->bad; j++) {
        struct mvcc_rev *v = &k->revs[j];
        v->mod_rev = get_i64(r, 1, t->current_rev);
        v->sub = (uint32_t)get_i64(r, 0, UINT32_MAX);
        v->create_rev = get_i64(r, 0, v->mod_rev);
        v->version = get_i64(r, 0, INT64_MAX);
        v->lease = get_i64(r, 0, INT64_MAX);
        size_t vl = (size_t)get_i64(r, 0, UINT32_MAX);
        const uint8_t *vp = get_bytes(r, vl);
        if (r->bad)
            break;
        k->revs_len = j + 1;
        v->val_len = (uint32_t)vl;
        v->val = mvcc__val_store(k, vp, vl);
        bool tomb = v->version == 0;
        if (tomb && (v->create_rev || v->lease || vl))
            r->bad = true;
        if (!tomb && (v->create_rev == 0 || v->version > v->mod_rev - v->create_rev + 1))
            r->bad = true;
        if (j > 0) {
            const struct mvcc_rev *p = &k->revs[j - 1];
            if (p->mod_rev >= v->mod_rev)
                r->bad = true;
            if (!tomb && mvcc__rev_is_tomb(p) && (v->version != 1 || v->create_rev != v->mod_rev))
                r->bad = true;
            if (!tomb && !mvcc__rev_is_tomb(p) &&
                (v->version != p->version + 1 || v->create_rev != p->create_rev))
                r->bad = true;
        }
        if (j == 1 && v->mod_rev <= t->compact_rev && !below_compact_ok())
            r->bad = true;
    }
    if (n == 0)
        r->bad = true;
}

static void read_keys(struct rd *r, struct mvcc_store *t)
{
    uint64_t nkeys = get_u64(r);
    for (uint64_t i = 0; i < nkeys && !r->bad; i++) {
        size_t kl = (size_t)get_i64(r, 1, (int64_t)r->left);
        const uint8_t *kp = get_bytes(r, kl);
        if (r->bad)
            break;
        if (t->keys_len && mvcc__bytes_cmp(t->keys[t->keys_len - 1]->key,
                                           t->keys[t->keys_len - 1]->key_len, kp, kl) >= 0) {
            r->bad = true; /* keys must be strictly increasing */
            break;
        }
        struct mvcc_key *k = mvcc__key_get_or_add(t, kp, kl);
        t->sorted_len = t->keys_len;
        size_t n = (size_t)get_i64(r, 0, (int64_t)(r->left / 48));
        read_revs(r, t, k, n);
    }
}

/* Rebuilds the log, lease attachments and live size of a freshly decoded store. */
static void rebuild_derived(struct rd *r, struct mvcc_store *t)
{
    int64_t live = t->cfg.backend_base_bytes + (int64_t)t->leases_len * MVCC_LEASE_OVERHEAD_BYTES;
    for (size_t i = 0; i < t->keys_len && !r->bad; i++) {
        struct mvcc_key *k = t->keys[i];
        for (size_t j = 0; j < k->revs_len; j++) {
            live += mvcc__rev_cost(t, k, &k->revs[j]);
            if (k->revs[j].mod_rev >= t->compact_rev)
                log_push(t, k->revs[j].mod_rev, k->revs[j].sub, k);
        }
        const struct mvcc_rev *last = &k->revs[k->revs_len - 1];
        if (mvcc__rev_is_tomb(&k->revs[0]) && k->revs[0].mod_rev < t->compact_rev &&
            !below_compact_ok())
            r->bad = true;
        if (!mvcc__rev_is_tomb(last) && last->lease) {
            if (!mvcc__lease_find(t, last->lease))
                r->bad = true;
            else
                mvcc__lease_attach(t, k, last->lease);
        }
    }
    if (t->log_len)
        qsort(t->log, t->log_len, sizeof(*t->log), logrec_cmp);
    for (size_t i = 1; i < t->log_len && !r->bad; i++)
        if (logrec_cmp(&t->log[i - 1], &t->log[i]) == 0)
            r->bad = true;
    t->live_bytes = live;
    if (t->size_bytes < live)
        r->bad = true;
}

static struct mvcc_store *decode(const struct mvcc_config *cfg, const uint8_t *data, size_t len)
{
    if (len < sizeof(snap_magic) + 4 || memcmp(data, snap_magic, sizeof(snap_magic)) != 0)
        return NULL;
    const uint8_t *c = data + len - 4;
    uint32_t want =
        (uint32_t)c[0] | (uint32_t)c[1] << 8 | (uint32_t)c[2] << 16 | (uint32_t)c[3] << 24;
    if (fl_crc32c(0, data, len - 4) != want)
        return NULL;
    struct rd r = {data + sizeof(snap_magic), len - 4 - sizeof(snap_magic), false};
    struct mvcc_store *t = mvcc_open(cfg);
    t->current_rev = get_i64(&r, 1, INT64_MAX / 2);
    t->compact_rev = get_i64(&r, 0, below_compact_ok() ? INT64_MAX / 2 : t->current_rev);
    t->compacted_once = get_i64(&r, 0, 1) != 0;
    t->applied_index = get_u64(&r);
    t->size_bytes = get_i64(&r, 0, INT64_MAX / 2);
    uint64_t nleases = get_u64(&r);
    for (uint64_t i = 0; i < nleases && !r.bad; i++) {
        int64_t id = get_i64(&r, 1, INT64_MAX);
        int64_t ttl = get_i64(&r, 1, INT64_MAX / FL_S / 2);
        if (r.bad || (t->leases_len && t->leases[t->leases_len - 1]->id >= id)) {
            r.bad = true;
            break;
        }
        mvcc__lease_insert(t, id, ttl, INT64_MAX);
    }
    read_keys(&r, t);
    if (!r.bad)
        rebuild_derived(&r, t);
    if (r.bad || r.left != 0) {
        mvcc_close(t);
        return NULL;
    }
    return t;
}

/* etcd#17780-like: the restarted member derives its revision from the newest live
 * revision it finds and forgets the tombstones above it. */
static void reset_revision_bug(struct mvcc_store *t)
{
    int64_t top = 1;
    for (size_t i = 0; i < t->keys_len; i++) {
        const struct mvcc_key *k = t->keys[i];
        for (size_t j = 0; j < k->revs_len; j++)
            if (!mvcc__rev_is_tomb(&k->revs[j]))
                top = FL_MAX(top, k->revs[j].mod_rev);
    }
    if (top >= t->current_rev)
        return;
    for (size_t i = 0; i < t->keys_len; i++) {
        struct mvcc_key *k = t->keys[i];
        while (k->revs_len && k->revs[k->revs_len - 1].mod_rev > top) {
            struct mvcc_rev *r = &k->revs[--k->revs_len];
            t->live_bytes -= mvcc__rev_cost(t, k, r);
            mvcc__val_drop(k, r);
        }
        if (k->revs_len && !mvcc__rev_is_tomb(&k->revs[k->revs_len - 1])) {
            struct mvcc_rev *last = &k->revs[k->revs_len - 1];
            if (last->lease && !k->lease && mvcc__lease_find(t, last->lease))
                mvcc__lease_attach(t, k, last->lease);
            else if (last->lease && !mvcc__lease_find(t, last->lease))
                last->lease = 0; /* its lease is gone (etcd logs "failed to attach") */
        }
    }
    size_t o = 0;
    for (size_t i = 0; i < t->log_len; i++)
        if (t->log[i].main <= top)
            t->log[o++] = t->log[i];
    t->log_len = o;
    t->current_rev = top;
    mvcc__index_prune(t);
}

/* FL_BUG(MVCC_RESTORE_SKIPS_TOMBSTONE), etcd#19179: etcd rebuilds its key index from
 * the backend at every restore (restart, snapshot from the leader) and skipped a
 * tombstone met before any other revision of its key, i.e. the delete a compaction at
 * its revision had kept as the key's only history. The delete is then gone from the
 * index that watch catch-up and compaction read: a watch from the compaction revision
 * misses it. The fix restores such a tombstone as a key of its own. */
static void skip_first_tombstones(struct mvcc_store *t)
{
    bool dropped = false;
    for (size_t i = 0; i < t->keys_len; i++) {
        struct mvcc_key *k = t->keys[i];
        if (!k->revs_len || !mvcc__rev_is_tomb(&k->revs[0]))
            continue;
        t->live_bytes -= mvcc__rev_cost(t, k, &k->revs[0]);
        memmove(k->revs, k->revs + 1, (k->revs_len - 1) * sizeof(*k->revs));
        k->revs_len--;
        dropped = true;
    }
    if (!dropped)
        return;
    size_t o = 0;
    for (size_t i = 0; i < t->log_len; i++) {
        const struct mvcc_logrec *lr = &t->log[i];
        long at = mvcc__key_at(lr->key, lr->main);
        if (at >= 0 && lr->key->revs[at].mod_rev == lr->main)
            t->log[o++] = t->log[i];
    }
    t->log_len = o;
    mvcc__index_prune(t);
}

enum mvcc_err mvcc_snapshot_restore(struct mvcc_store *s, const uint8_t *data, size_t len,
                                    enum mvcc_restore_reason reason)
{
    FL_ASSERT(!s->in_write);
    if (!data)
        return MVCC_ERR_BAD_SNAPSHOT;
    struct mvcc_store *t = decode(&s->cfg, data, len);
    if (!t)
        return MVCC_ERR_BAD_SNAPSHOT;
    if (FL_BUG(MVCC_REVISION_RESET_ON_RESTART) && reason == MVCC_RESTORE_RESTART)
        reset_revision_bug(t);
    if (FL_BUG(MVCC_RESTORE_SKIPS_TOMBSTONE))
        skip_first_tombstones(t);
    /* Swap the data; keep watchers, ids and the response sequence. */
    struct mvcc_store tmp = *s;
    s->current_rev = t->current_rev;
    s->compact_rev = t->compact_rev;
    s->compacted_once = t->compacted_once;
    s->applied_index = t->applied_index;
    s->keys = t->keys;
    s->keys_len = t->keys_len;
    s->keys_cap = t->keys_cap;
    s->sorted_len = t->sorted_len;
    s->table = t->table;
    s->table_cap = t->table_cap;
    s->table_used = t->table_used;
    s->log = t->log;
    s->log_len = t->log_len;
    s->log_cap = t->log_cap;
    s->leases = t->leases;
    s->leases_len = t->leases_len;
    s->leases_cap = t->leases_cap;
    s->lease_primary = false;
    s->size_bytes = t->size_bytes;
    s->live_bytes = t->live_bytes;
    s->state_hash = mvcc__state_hash_full(s);
    /* Hand the old data to t and free it there (t has no watchers). */
    t->keys = tmp.keys;
    t->keys_len = tmp.keys_len;
    t->table = tmp.table;
    t->log = tmp.log;
    t->leases = tmp.leases;
    t->leases_len = tmp.leases_len;
    mvcc_close(t);
    mvcc__watch_after_restore(s, tmp.current_rev, reason);
    return MVCC_OK;
}
