/*
 * test_model.c: differential test of the store against a naive reference model
 * (a flat list of every write). Random puts, deletes, range deletes, txns with
 * compares, lease grants and revokes, compactions and snapshot restores; after every
 * step the invariants are checked and random reads at random revisions must match
 * the model exactly (value, create/mod revision, version, lease, errors). Watchers
 * opened at random start revisions must deliver exactly the model's events of their
 * range, in revision order, one revision per response never split. Integer LCG only.
 */
#include "mvcc_test_util.h"

#define NKEYS     8
#define NOPS      2500
#define MAX_RECS  (NOPS * NKEYS + 16)
#define MAX_WATCH 6

struct mrec {
    int64_t rev;
    int key;
    bool tomb;
    int64_t lease;
    char val[12];
};

static struct mrec recs[MAX_RECS];
static int nrecs;
static int64_t m_rev, m_compact;
static bool m_compacted_once;
static int64_t m_leases[64];
static int m_nleases;
static uint64_t rng;

static uint64_t rnd(uint64_t n)
{
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return (rng >> 33) % n;
}

static const char *key_name(int k)
{
    static const char *names[NKEYS] = {"a", "b", "b0", "c", "ca", "d", "e", "f"};
    return names[k];
}

/* The model's view of key k at rev: returns false when absent. */
static bool m_get(int k, int64_t rev, struct mrec *out, int64_t *create, int64_t *version)
{
    const struct mrec *last = NULL;
    int64_t c = 0, v = 0;
    for (int i = 0; i < nrecs && recs[i].rev <= rev; i++) {
        if (recs[i].key != k)
            continue;
        last = &recs[i];
        if (recs[i].tomb) {
            c = v = 0;
        } else {
            if (v == 0)
                c = recs[i].rev;
            v++;
        }
    }
    if (!last || last->tomb)
        return false;
    *out = *last;
    *create = c;
    *version = v;
    return true;
}

static int64_t m_lease_of(int k)
{
    struct mrec r;
    int64_t c, v;
    return m_get(k, m_rev, &r, &c, &v) ? r.lease : 0;
}

static void m_write(int k, bool tomb, const char *val, int64_t lease)
{
    FL_ASSERT(nrecs < MAX_RECS);
    struct mrec *r = &recs[nrecs++];
    r->rev = m_rev + 1;
    r->key = k;
    r->tomb = tomb;
    r->lease = lease;
    snprintf(r->val, sizeof(r->val), "%s", val ? val : "");
}

static bool m_exists(int k)
{
    struct mrec r;
    int64_t c, v;
    return m_get(k, m_rev, &r, &c, &v);
}

/* ---------------------------------------------------------------- checks */

static void check_read(struct mvcc_store *s, int k, int64_t rev)
{
    bool found;
    struct mvcc_kv kv = {0};
    enum mvcc_err e = t_get(s, key_name(k), rev, &found, &kv);
    int64_t at = rev ? rev : m_rev;
    if (rev > m_rev) {
        CHECK_EQ_INT(e, MVCC_ERR_FUTURE_REV);
        return;
    }
    if (rev && rev < m_compact) {
        CHECK_EQ_INT(e, MVCC_ERR_COMPACTED);
        return;
    }
    CHECK_EQ_INT(e, MVCC_OK);
    struct mrec r;
    int64_t c, v;
    bool want = m_get(k, at, &r, &c, &v);
    CHECK_EQ_INT(found, want);
    if (!found || !want)
        return;
    CHECK(kv.value_len == strlen(r.val) && memcmp(kv.value, r.val, kv.value_len) == 0);
    CHECK_EQ_INT(kv.mod_revision, r.rev);
    CHECK_EQ_INT(kv.create_revision, c);
    CHECK_EQ_INT(kv.version, v);
    CHECK_EQ_INT(kv.lease, r.lease);
}

static void check_prefix_count(struct mvcc_store *s, int64_t rev)
{
    /* [b, c) holds b and b0 */
    struct mvcc_range_req q = {0};
    struct mvcc_range_result out;
    q.key = (const uint8_t *)"b";
    q.key_len = 1;
    q.range_end = (const uint8_t *)"c";
    q.range_end_len = 1;
    q.revision = rev;
    if (mvcc_range(s, &q, &out) != MVCC_OK)
        return;
    int64_t want = 0, at = rev ? rev : m_rev;
    struct mrec r;
    int64_t c, v;
    want += m_get(1, at, &r, &c, &v);
    want += m_get(2, at, &r, &c, &v);
    CHECK_EQ_INT(out.count, want);
    mvcc_range_result_free(&out);
}

/* ---------------------------------------------------------------- watchers */

struct mwatch {
    int64_t id;
    int k_lo, k_hi; /* keys [k_lo, k_hi] by index */
    int64_t start;
    int64_t last_rev; /* last event revision seen */
    int next_rec;     /* next model record expected */
    bool canceled;
};
static struct mwatch watches[MAX_WATCH];
static long stat_events, stat_canceled, stat_compactions;
static int nwatches;

static bool mw_wants(const struct mwatch *w, int k)
{
    return k >= w->k_lo && k <= w->k_hi;
}

static void watch_open(struct mvcc_store *s)
{
    if (nwatches == MAX_WATCH)
        return;
    struct mwatch *w = &watches[nwatches];
    memset(w, 0, sizeof(*w));
    w->k_lo = (int)rnd(NKEYS);
    w->k_hi = w->k_lo + (int)rnd((uint64_t)(NKEYS - w->k_lo));
    int64_t lo = m_compact > 1 ? m_compact : 1;
    w->start = rnd(3) == 0 ? 0 : lo + (int64_t)rnd((uint64_t)(m_rev - lo + 2));
    struct mvcc_watch_req r = {0};
    r.key = (const uint8_t *)key_name(w->k_lo);
    r.key_len = strlen(key_name(w->k_lo));
    /* range end: the key right after k_hi, or "\0" (to the end) for the last */
    r.range_end =
        w->k_hi + 1 < NKEYS ? (const uint8_t *)key_name(w->k_hi + 1) : (const uint8_t *)"\0";
    r.range_end_len = w->k_hi + 1 < NKEYS ? strlen(key_name(w->k_hi + 1)) : 1;
    r.start_rev = w->start;
    r.prev_kv = true;
    CHECK_EQ_INT(mvcc_watch_create(s, &r, &w->id, NULL), MVCC_OK);
    int64_t first = w->start ? w->start : m_rev + 1;
    w->next_rec = 0;
    while (w->next_rec < nrecs && recs[w->next_rec].rev < first)
        w->next_rec++;
    nwatches++;
}

static void watch_drain(struct mvcc_store *s)
{
    struct mvcc_watch_resp r;
    while (mvcc_watch_pop(s, &r)) {
        struct mwatch *w = NULL;
        for (int i = 0; i < nwatches; i++)
            if (watches[i].id == r.watch_id)
                w = &watches[i];
        FL_ASSERT(w);
        if (r.canceled) {
            CHECK(r.compact_rev > (w->start ? w->start : 0));
            w->canceled = true;
            stat_canceled++;
            mvcc_watch_resp_free(&r);
            continue;
        }
        /* never split a revision: the first event is past the last one seen */
        if (r.events_len)
            CHECK(r.events[0].kv.mod_revision > w->last_rev);
        for (size_t i = 0; i < r.events_len; i++) {
            const struct mvcc_event *e = &r.events[i];
            while (w->next_rec < nrecs && !mw_wants(w, recs[w->next_rec].key))
                w->next_rec++;
            CHECK(w->next_rec < nrecs);
            if (w->next_rec >= nrecs)
                break;
            const struct mrec *m = &recs[w->next_rec++];
            CHECK_EQ_INT(e->kv.mod_revision, m->rev);
            CHECK(kv_is(&e->kv, key_name(m->key), NULL));
            CHECK_EQ_INT(e->type == MVCC_EVENT_DELETE, m->tomb);
            if (!m->tomb)
                CHECK(e->kv.value_len == strlen(m->val) &&
                      memcmp(e->kv.value, m->val, e->kv.value_len) == 0);
            w->last_rev = e->kv.mod_revision;
            stat_events++;
        }
        mvcc_watch_resp_free(&r);
    }
}

static void watch_final_check(void)
{
    for (int i = 0; i < nwatches; i++) {
        struct mwatch *w = &watches[i];
        if (w->canceled)
            continue;
        while (w->next_rec < nrecs && !mw_wants(w, recs[w->next_rec].key))
            w->next_rec++;
        CHECK_EQ_INT(w->next_rec, nrecs); /* nothing missed (reliable) */
    }
}

/* ---------------------------------------------------------------- steps */

static void step_put(struct mvcc_store *s)
{
    int k = (int)rnd(NKEYS);
    char val[12];
    snprintf(val, sizeof(val), "v%llu", (unsigned long long)rnd(1000));
    int64_t lease = 0;
    if (m_nleases && rnd(4) == 0)
        lease = m_leases[rnd((uint64_t)m_nleases)];
    enum mvcc_err e;
    int64_t hdr = t_put_lease(s, key_name(k), val, lease, &e);
    CHECK_EQ_INT(e, MVCC_OK);
    m_write(k, false, val, lease);
    m_rev++;
    CHECK_EQ_INT(hdr, m_rev);
}

static void step_delete(struct mvcc_store *s)
{
    int lo = (int)rnd(NKEYS);
    int hi = rnd(2) ? lo : lo + (int)rnd((uint64_t)(NKEYS - lo));
    int64_t n = 0, want = 0;
    const char *end = NULL;
    if (hi > lo)
        end = hi + 1 < NKEYS ? key_name(hi + 1) : "";
    for (int k = lo; k <= hi; k++)
        if (m_exists(k)) {
            m_write(k, true, NULL, 0);
            want++;
        }
    int64_t hdr = t_del(s, key_name(lo), end, &n);
    CHECK_EQ_INT(n, want);
    if (want)
        m_rev++;
    CHECK_EQ_INT(hdr, m_rev);
}

static void step_txn(struct mvcc_store *s)
{
    int ck = (int)rnd(NKEYS);
    struct mrec r;
    int64_t c = 0, v = 0;
    bool ex = m_get(ck, m_rev, &r, &c, &v);
    struct mvcc_compare cmp = {0};
    cmp.key = (const uint8_t *)key_name(ck);
    cmp.key_len = strlen(key_name(ck));
    cmp.target = rnd(2) ? MVCC_CMP_VERSION : MVCC_CMP_MOD;
    cmp.op = (enum mvcc_cmp_op)rnd(4);
    cmp.number = (int64_t)rnd(4) + (cmp.target == MVCC_CMP_MOD ? m_rev - 3 : 0);
    int64_t have = cmp.target == MVCC_CMP_VERSION ? (ex ? v : 0) : (ex ? r.rev : 0);
    bool ok = cmp.op == MVCC_CMP_EQUAL       ? have == cmp.number
              : cmp.op == MVCC_CMP_NOT_EQUAL ? have != cmp.number
              : cmp.op == MVCC_CMP_GREATER   ? have > cmp.number
                                             : have < cmp.number;
    /* then: put two distinct keys; else: delete one key */
    int k1 = (int)rnd(NKEYS), k2 = (k1 + 1 + (int)rnd(NKEYS - 1)) % NKEYS;
    struct mvcc_op then[2] = {0}, els = {0};
    then[0].kind = then[1].kind = MVCC_OP_PUT;
    then[0].u.put.key = (const uint8_t *)key_name(k1);
    then[0].u.put.key_len = strlen(key_name(k1));
    then[0].u.put.value = (const uint8_t *)"t1";
    then[0].u.put.value_len = 2;
    then[1].u.put.key = (const uint8_t *)key_name(k2);
    then[1].u.put.key_len = strlen(key_name(k2));
    then[1].u.put.value = (const uint8_t *)"t2";
    then[1].u.put.value_len = 2;
    els.kind = MVCC_OP_DELETE;
    els.u.del.key = (const uint8_t *)key_name(k1);
    els.u.del.key_len = strlen(key_name(k1));
    struct mvcc_txn_req t = {&cmp, 1, then, 2, &els, 1};
    struct mvcc_txn_result res;
    CHECK_EQ_INT(mvcc_txn(s, &t, &res), MVCC_OK);
    CHECK_EQ_INT(res.succeeded, ok);
    mvcc_txn_result_free(&res);
    if (ok) {
        m_write(k1, false, "t1", 0);
        m_write(k2, false, "t2", 0);
        m_rev++;
    } else if (m_exists(k1)) {
        m_write(k1, true, NULL, 0);
        m_rev++;
    }
    CHECK_EQ_INT(mvcc_current_rev(s), m_rev);
}

static void step_lease(struct mvcc_store *s)
{
    if (m_nleases < 64 && (m_nleases == 0 || rnd(2))) {
        int64_t id = 100 + (int64_t)rnd(1000000);
        enum mvcc_err e = mvcc_lease_grant(s, id, 10, 0, NULL);
        bool dup = false;
        for (int i = 0; i < m_nleases; i++)
            dup |= m_leases[i] == id;
        CHECK_EQ_INT(e, dup ? MVCC_ERR_LEASE_EXISTS : MVCC_OK);
        if (!dup)
            m_leases[m_nleases++] = id;
        return;
    }
    int i = (int)rnd((uint64_t)m_nleases);
    int64_t id = m_leases[i];
    int64_t deleted = 0, want = 0;
    for (int k = 0; k < NKEYS; k++)
        if (m_lease_of(k) == id) {
            m_write(k, true, NULL, 0);
            want++;
        }
    CHECK_EQ_INT(mvcc_lease_revoke(s, id, &deleted, NULL), MVCC_OK);
    CHECK_EQ_INT(deleted, want);
    if (want)
        m_rev++;
    m_leases[i] = m_leases[--m_nleases];
}

static void step_compact(struct mvcc_store *s)
{
    int64_t lo = m_compact;
    int64_t rev = lo + (int64_t)rnd((uint64_t)(m_rev - lo + 3));
    enum mvcc_err e = mvcc_compact(s, rev, NULL);
    if (m_compacted_once && rev <= m_compact) {
        CHECK_EQ_INT(e, MVCC_ERR_COMPACTED);
    } else if (rev > m_rev) {
        CHECK_EQ_INT(e, MVCC_ERR_FUTURE_REV);
    } else {
        CHECK_EQ_INT(e, MVCC_OK);
        m_compact = rev;
        m_compacted_once = true;
        stat_compactions++;
    }
    CHECK_EQ_INT(mvcc_compact_rev(s), m_compact);
}

static void step_restore(struct mvcc_store *s)
{
    struct mvcc_hashkv before, after;
    CHECK_EQ_INT(mvcc_hash_kv(s, 0, &before), MVCC_OK);
    struct fl_buf b;
    fl_buf_init(&b);
    mvcc_snapshot_encode(s, &b);
    CHECK_EQ_INT(mvcc_snapshot_restore(s, b.data, b.len, MVCC_RESTORE_RAFT_SNAPSHOT), MVCC_OK);
    fl_buf_close(&b);
    CHECK_EQ_INT(mvcc_hash_kv(s, 0, &after), MVCC_OK);
    CHECK(before.hash == after.hash);
}

static void run_seed(uint64_t seed)
{
    rng = seed;
    nrecs = 0;
    m_rev = 1;
    m_compact = 0;
    m_compacted_once = false;
    m_nleases = 0;
    nwatches = 0;
    /* odd seeds: slow catch-up in small batches, so compactions race with it */
    struct mvcc_config cfg;
    mvcc_config_default(&cfg);
    if (seed % 2) {
        cfg.watch_sync_events_max = 3;
        cfg.watch_batch_events_max = 2;
    }
    struct mvcc_store *s = mvcc_open(&cfg);
    for (int op = 0; op < NOPS; op++) {
        uint64_t x = rnd(100);
        if (x < 40)
            step_put(s);
        else if (x < 55)
            step_delete(s);
        else if (x < 75)
            step_txn(s);
        else if (x < 83)
            step_lease(s);
        else if (x < 88)
            step_compact(s);
        else if (x < 90)
            step_restore(s);
        else if (x < 93)
            watch_open(s);
        if (rnd(seed % 2 ? 8 : 2) == 0)
            mvcc_watch_sync(s);
        watch_drain(s);
        mvcc_check_invariants(s);
        int64_t lo = m_compact > 1 ? m_compact - 1 : 0;
        check_read(s, (int)rnd(NKEYS), 0);
        check_read(s, (int)rnd(NKEYS), lo + (int64_t)rnd((uint64_t)(m_rev - lo + 2)));
        check_prefix_count(s, 0);
    }
    while (mvcc_watch_sync(s) > 0)
        watch_drain(s);
    watch_drain(s);
    watch_final_check();
    mvcc_close(s);
}

int main(void)
{
    /* FL_TEST_SEED=N runs that seed alone (the totals below are then not judged). */
    if (getenv("FL_TEST_SEED")) {
        run_seed(fl_test_seed(1));
        return fl_test_end();
    }
    for (uint64_t seed = 1; seed <= 6; seed++)
        run_seed(seed);
    printf("watch events checked %ld, watchers canceled %ld, compactions %ld\n", stat_events,
           stat_canceled, stat_compactions);
    /* the run must really have exercised watches and compaction */
    CHECK(stat_events > 1000 && stat_compactions > 100 && stat_canceled > 0);
    return fl_test_end();
}
