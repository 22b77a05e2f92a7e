/*
 * mvcc_lease.c: the lessor. Leases are granted and revoked through Raft on every
 * member (so the lease set and key attachments are replicated state), but only the
 * primary lessor (the leader's) tracks expiry: on the others every lease expires
 * "never" until mvcc_lease_promote. Keep-alives are leader-local, as in etcd.
 * Expiry uses only the times the caller passes in.
 */
#include "nodes/mvcc/mvcc_int.h"
#include "harness/common/lower_bound.h"

static size_t lease_lower(const struct mvcc_store *s, int64_t id)
{
    size_t lo;
    FL_LOWER_BOUND(lo, s->leases_len, mid, s->leases[mid]->id < id);
    return lo;
}

struct mvcc_lease *mvcc__lease_find(const struct mvcc_store *s, int64_t id)
{
    size_t i = lease_lower(s, id);
    return i < s->leases_len && s->leases[i]->id == id ? s->leases[i] : NULL;
}

void mvcc__lease_free(struct mvcc_lease *l)
{
    free(l->keys);
    free(l);
}

void mvcc__lease_attach(struct mvcc_store *s, struct mvcc_key *k, int64_t lease)
{
    FL_ASSERT(k->lease == 0 && lease > 0);
    struct mvcc_lease *l = mvcc__lease_find(s, lease);
    FL_ASSERT(l);
    FL_GROW(l->keys, l->keys_cap, l->keys_len + 1, 4);
    k->lease = lease;
    k->lease_slot = l->keys_len;
    l->keys[l->keys_len++] = k;
}

void mvcc__lease_detach(struct mvcc_store *s, struct mvcc_key *k)
{
    if (!k->lease)
        return;
    struct mvcc_lease *l = mvcc__lease_find(s, k->lease);
    FL_ASSERT(l && k->lease_slot < l->keys_len && l->keys[k->lease_slot] == k);
    /* Swap-remove; order inside a lease never matters (revoke sorts). */
    struct mvcc_key *last = l->keys[--l->keys_len];
    l->keys[k->lease_slot] = last;
    last->lease_slot = k->lease_slot;
    k->lease = 0;
    k->lease_slot = 0;
}

struct mvcc_lease *mvcc__lease_insert(struct mvcc_store *s, int64_t id, int64_t ttl_s,
                                      int64_t expiry_ns)
{
    FL_ASSERT(id > 0 && !mvcc__lease_find(s, id));
    struct mvcc_lease *l = fl_calloc(1, sizeof(*l));
    l->id = id;
    l->ttl_s = ttl_s;
    l->expiry_ns = expiry_ns;
    FL_GROW(s->leases, s->leases_cap, s->leases_len + 1, 8);
    size_t at = lease_lower(s, id);
    memmove(s->leases + at + 1, s->leases + at, (s->leases_len - at) * sizeof(*s->leases));
    s->leases[at] = l;
    s->leases_len++;
    return l;
}

enum mvcc_err mvcc_lease_grant(struct mvcc_store *s, int64_t id, int64_t ttl_s, int64_t now_ns,
                               int64_t *ttl_out)
{
    if (id <= 0 || ttl_s < 0)
        return MVCC_ERR_INVALID;
    if (ttl_s > s->cfg.lease_max_ttl_s)
        return MVCC_ERR_LEASE_TTL_LARGE;
    if (mvcc__lease_find(s, id))
        return MVCC_ERR_LEASE_EXISTS;
    if (ttl_s < s->cfg.lease_min_ttl_s)
        ttl_s = s->cfg.lease_min_ttl_s;
    if (ttl_s < 1)
        ttl_s = 1;
    mvcc__lease_insert(s, id, ttl_s, s->lease_primary ? now_ns + ttl_s * FL_S : INT64_MAX);
    s->size_bytes += MVCC_LEASE_OVERHEAD_BYTES;
    s->live_bytes += MVCC_LEASE_OVERHEAD_BYTES;
    if (ttl_out)
        *ttl_out = ttl_s;
    return MVCC_OK;
}

static int key_ptr_cmp(const void *a, const void *b)
{
    const struct mvcc_key *x = *(struct mvcc_key *const *)a;
    const struct mvcc_key *y = *(struct mvcc_key *const *)b;
    return mvcc__bytes_cmp(x->key, x->key_len, y->key, y->key_len);
}

enum mvcc_err mvcc_lease_revoke(struct mvcc_store *s, int64_t id, int64_t *deleted,
                                int64_t *header_rev)
{
    size_t at = lease_lower(s, id);
    if (at >= s->leases_len || s->leases[at]->id != id)
        return MVCC_ERR_LEASE_NOT_FOUND;
    struct mvcc_lease *l = s->leases[at];
    /* Delete in key byte order (etcd sorts too), as one write txn. */
    size_t n = l->keys_len;
    struct mvcc_key **ks = n ? fl_memdup(l->keys, n * sizeof(*ks)) : NULL;
    if (n)
        qsort(ks, n, sizeof(*ks), key_ptr_cmp);
    mvcc__write_begin(s);
    for (size_t i = 0; i < n; i++)
        mvcc__write_tomb(s, ks[i]);
    FL_ASSERT(l->keys_len == 0);
    free(ks);
    memmove(s->leases + at, s->leases + at + 1, (s->leases_len - at - 1) * sizeof(*s->leases));
    s->leases_len--;
    mvcc__lease_free(l);
    s->live_bytes -= MVCC_LEASE_OVERHEAD_BYTES;
    int64_t rev = mvcc__write_end(s);
    if (deleted)
        *deleted = (int64_t)n;
    if (header_rev)
        *header_rev = rev;
    return MVCC_OK;
}

enum mvcc_err mvcc_lease_renew(struct mvcc_store *s, int64_t id, int64_t now_ns, int64_t *ttl_out)
{
    struct mvcc_lease *l = mvcc__lease_find(s, id);
    if (!l)
        return MVCC_ERR_LEASE_NOT_FOUND;
    if (!s->lease_primary)
        return MVCC_ERR_NOT_LEADER;
    /* An expired lease is being revoked; etcd refuses to renew it. */
    if (l->expiry_ns <= now_ns)
        return MVCC_ERR_LEASE_NOT_FOUND;
    l->expiry_ns = now_ns + l->ttl_s * FL_S;
    l->taken_ns = 0;
    if (ttl_out)
        *ttl_out = l->ttl_s;
    return MVCC_OK;
}

enum mvcc_err mvcc_lease_ttl(struct mvcc_store *s, int64_t id, int64_t now_ns, bool with_keys,
                             struct mvcc_lease_info *out)
{
    memset(out, 0, sizeof(*out));
    out->id = id;
    out->ttl_s = -1;
    struct mvcc_lease *l = mvcc__lease_find(s, id);
    if (!l)
        return MVCC_ERR_LEASE_NOT_FOUND;
    out->granted_ttl_s = l->ttl_s;
    if (l->expiry_ns == INT64_MAX)
        out->ttl_s = l->ttl_s; /* not primary: the full TTL, as a follower reports */
    else if (l->expiry_ns > now_ns)
        out->ttl_s = (l->expiry_ns - now_ns + FL_S - 1) / FL_S;
    if (with_keys && l->keys_len) {
        size_t n = l->keys_len;
        struct mvcc_key **ks = fl_memdup(l->keys, n * sizeof(*ks));
        qsort(ks, n, sizeof(*ks), key_ptr_cmp);
        out->keys = fl_malloc(n * sizeof(*out->keys));
        out->key_lens = fl_malloc(n * sizeof(*out->key_lens));
        for (size_t i = 0; i < n; i++) {
            out->keys[i] = ks[i]->key;
            out->key_lens[i] = ks[i]->key_len;
        }
        out->keys_len = n;
        free(ks);
    }
    return MVCC_OK;
}

void mvcc_lease_info_free(struct mvcc_lease_info *li)
{
    if (!li)
        return;
    free(li->keys);
    free(li->key_lens);
    li->keys = NULL;
    li->key_lens = NULL;
    li->keys_len = 0;
}

size_t mvcc_lease_list(const struct mvcc_store *s, int64_t **ids)
{
    *ids = s->leases_len ? fl_malloc(s->leases_len * sizeof(**ids)) : NULL;
    for (size_t i = 0; i < s->leases_len; i++)
        (*ids)[i] = s->leases[i]->id;
    return s->leases_len;
}

void mvcc_lease_promote(struct mvcc_store *s, int64_t now_ns, int64_t extend_ns)
{
    FL_ASSERT(extend_ns >= 0);
    s->lease_primary = true;
    for (size_t i = 0; i < s->leases_len; i++) {
        s->leases[i]->expiry_ns = now_ns + extend_ns + s->leases[i]->ttl_s * FL_S;
        s->leases[i]->taken_ns = 0;
    }
}

void mvcc_lease_demote(struct mvcc_store *s)
{
    s->lease_primary = false;
    for (size_t i = 0; i < s->leases_len; i++)
        s->leases[i]->expiry_ns = INT64_MAX;
}

bool mvcc_lease_is_primary(const struct mvcc_store *s)
{
    return s->lease_primary;
}

size_t mvcc_lease_expired(const struct mvcc_store *s, int64_t now_ns, int64_t *ids, size_t ids_cap)
{
    size_t n = 0;
    if (!s->lease_primary)
        return 0;
    for (size_t i = 0; i < s->leases_len && n < ids_cap; i++)
        if (s->leases[i]->expiry_ns <= now_ns)
            ids[n++] = s->leases[i]->id;
    return n;
}

size_t mvcc_lease_expired_take(struct mvcc_store *s, int64_t now_ns, int64_t *ids, size_t ids_cap)
{
    size_t n = 0;
    if (!s->lease_primary)
        return 0;
    for (size_t i = 0; i < s->leases_len && n < ids_cap; i++) {
        struct mvcc_lease *l = s->leases[i];
        if (l->expiry_ns > now_ns)
            continue;
        if (l->taken_ns && now_ns - l->taken_ns < MVCC_LEASE_REVOKE_RETRY_NS)
            continue;
        l->taken_ns = now_ns;
        ids[n++] = l->id;
    }
    return n;
}

int64_t mvcc_next_deadline_ns(const struct mvcc_store *s)
{
    int64_t t = INT64_MAX;
    if (!s->lease_primary)
        return t;
    for (size_t i = 0; i < s->leases_len; i++)
        t = FL_MIN(t, s->leases[i]->expiry_ns);
    return t;
}
