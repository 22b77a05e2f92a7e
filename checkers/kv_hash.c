/*
 * kv_hash.c: the online corruption check (see kv_hash.h). A table indexed by revision
 * from a trimmed base holds the first (hash, member, time) reported at each revision;
 * every later report of that revision must carry the same hash. Members are found by
 * a linear scan (a cluster has a handful). Pure: no I/O.
 */
#include "checkers/kv_hash.h"

#include <inttypes.h>

#define KVH_TRIM_SLACK 4096

struct kvh_rec {
    uint64_t hash;
    uint64_t member; /* 0: no report yet */
    int64_t at_ns;
};

struct kvh_member {
    uint64_t id;
    int64_t rev; /* last revision reported */
    bool gone;
};

struct kvhash {
    struct kvh_rec *recs; /* recs[rev - base] */
    int64_t base;
    size_t count, cap;
    struct kvh_member *members;
    size_t n_members, cap_members;
    uint64_t compared, revisions, below_floor, feeds;
    bool failed;
    struct fl_buf violation;
};

struct kvhash *kvhash_new(void)
{
    struct kvhash *k = fl_calloc(1, sizeof *k);
    k->base = 1;
    fl_buf_init(&k->violation);
    return k;
}

void kvhash_free(struct kvhash *k)
{
    if (!k)
        return;
    free(k->recs);
    free(k->members);
    fl_buf_close(&k->violation);
    free(k);
}

static struct kvh_member *member_get(struct kvhash *k, uint64_t id)
{
    for (size_t i = 0; i < k->n_members; i++)
        if (k->members[i].id == id)
            return &k->members[i];
    FL_GROW_ZERO(k->members, k->n_members, k->cap_members, k->n_members + 1, 8);
    struct kvh_member *m = &k->members[k->n_members - 1];
    m->id = id;
    return m;
}

/* The record of rev, growing the table; NULL below the trimmed base. */
static struct kvh_rec *rec_get(struct kvhash *k, int64_t rev)
{
    if (rev < k->base)
        return NULL;
    size_t at = (size_t)(rev - k->base);
    FL_GROW_ZERO(k->recs, k->count, k->cap, at + 1, 1024);
    FL_ASSERT(at < k->count && k->count <= k->cap);
    return &k->recs[at];
}

/* Drops records below the lowest revision a live member reported last (minus slack). */
static void trim(struct kvhash *k)
{
    int64_t floor = INT64_MAX;
    for (size_t i = 0; i < k->n_members; i++)
        if (!k->members[i].gone)
            floor = FL_MIN(floor, k->members[i].rev);
    if (floor == INT64_MAX || floor - KVH_TRIM_SLACK <= k->base + KVH_TRIM_SLACK)
        return;
    size_t drop = FL_MIN((size_t)(floor - KVH_TRIM_SLACK - k->base), k->count);
    memmove(k->recs, k->recs + drop, (k->count - drop) * sizeof(k->recs[0]));
    k->count -= drop;
    k->base += (int64_t)drop;
    /* every revision a live member may still report again (down to its last one, less
     * the slack) keeps its record */
    FL_ASSERT(k->base >= 1 && k->base <= floor - KVH_TRIM_SLACK);
}

static void mismatch(struct kvhash *k, int64_t rev, uint64_t member, uint64_t hash, int64_t at_ns,
                     const struct kvh_rec *r)
{
    k->failed = true;
    fl_buf_reset(&k->violation);
    fl_buf_printf(&k->violation,
                  "{\"revision\":%" PRId64 ",\"member\":%" PRIu64 ",\"hash\":\"%016" PRIx64
                  "\",\"at_ns\":%" PRId64 ",\"other_member\":%" PRIu64
                  ",\"other_hash\":\"%016" PRIx64 "\",\"other_at_ns\":%" PRId64 "}",
                  rev, member, hash, at_ns, r->member, r->hash, r->at_ns);
}

bool kvhash_feed(struct kvhash *k, uint64_t member, int64_t rev, uint64_t hash, int64_t at_ns)
{
    FL_ASSERT(k != NULL && member != 0 && rev >= 1);
    struct kvh_member *m = member_get(k, member);
    m->rev = rev;
    m->gone = false;
    struct kvh_rec *r = rec_get(k, rev);
    if (!r) {
        k->below_floor++;
        return !k->failed;
    }
    if (!r->member) {
        *r = (struct kvh_rec){hash, member, at_ns};
        k->revisions++;
    } else {
        k->compared++;
        if (r->hash != hash && !k->failed)
            mismatch(k, rev, member, hash, at_ns, r);
    }
    if ((++k->feeds & 1023) == 0 && k->count > 4 * KVH_TRIM_SLACK)
        trim(k);
    return !k->failed;
}

void kvhash_forget(struct kvhash *k, uint64_t member)
{
    member_get(k, member)->gone = true;
}

bool kvhash_failed(const struct kvhash *k)
{
    return k->failed;
}

uint64_t kvhash_compared(const struct kvhash *k)
{
    return k->compared;
}

const char *kvhash_violation_json(const struct kvhash *k)
{
    return k->failed ? fl_buf_cstr((struct fl_buf *)&k->violation) : "null";
}

void kvhash_summary_json(const struct kvhash *k, struct fl_buf *out)
{
    fl_buf_reset(out);
    fl_buf_printf(
        out, "{\"compared\":%" PRIu64 ",\"revisions\":%" PRIu64 ",\"below_floor\":%" PRIu64 "}",
        k->compared, k->revisions, k->below_floor);
}
