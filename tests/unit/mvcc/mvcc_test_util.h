/*
 * mvcc_test_util.h: small helpers shared by the MVCC unit tests (string keys and
 * values, one-line put/get/delete). Test code only.
 */
#ifndef MVCC_TEST_UTIL_H
#define MVCC_TEST_UTIL_H

#include "fl_test.h"
#include "harness/common/bugs.h"
#include "nodes/mvcc/mvcc.h"

#define B(s) (const uint8_t *)(s), strlen(s)

static inline int64_t t_put_lease(struct mvcc_store *s, const char *k, const char *v, int64_t lease,
                                  enum mvcc_err *err)
{
    struct mvcc_put_req r = {0};
    struct mvcc_put_result out;
    r.key = (const uint8_t *)k;
    r.key_len = strlen(k);
    r.value = (const uint8_t *)v;
    r.value_len = strlen(v);
    r.lease = lease;
    *err = mvcc_put(s, &r, &out);
    return out.header_rev;
}

static inline int64_t t_put(struct mvcc_store *s, const char *k, const char *v)
{
    enum mvcc_err e;
    int64_t rev = t_put_lease(s, k, v, 0, &e);
    CHECK_EQ_INT(e, MVCC_OK);
    return rev;
}

/* Sets request r's key to k and its range end to end (NULL: k alone; "": every key
 * from k, etcd's "\0"). */
#define T_KEY_RANGE(r, k, end)                                                                     \
    do {                                                                                           \
        (r).key = (const uint8_t *)(k);                                                            \
        (r).key_len = strlen(k);                                                                   \
        if (end) {                                                                                 \
            (r).range_end = (const uint8_t *)((end)[0] ? (end) : "\0");                            \
            (r).range_end_len = (end)[0] ? strlen(end) : 1;                                        \
        }                                                                                          \
    } while (0)

/* Opens a watch on k (end NULL: k alone; "": every key from k) from revision start
 * (0: now), checked; its id. */
static inline int64_t t_watch(struct mvcc_store *s, const char *k, const char *end, int64_t start,
                              bool prev_kv, bool progress_notify)
{
    struct mvcc_watch_req r = {0};
    T_KEY_RANGE(r, k, end);
    r.start_rev = start;
    r.prev_kv = prev_kv;
    r.progress_notify = progress_notify;
    int64_t id = 0;
    CHECK_EQ_INT(mvcc_watch_create(s, &r, &id, NULL), MVCC_OK);
    return id;
}

static inline int64_t t_del(struct mvcc_store *s, const char *k, const char *end, int64_t *deleted)
{
    struct mvcc_delete_req r = {0};
    struct mvcc_delete_result out;
    r.key = (const uint8_t *)k;
    r.key_len = strlen(k);
    if (end) {
        r.range_end = (const uint8_t *)end;
        r.range_end_len = end[0] ? strlen(end) : 1; /* "" means "\0" */
    }
    CHECK_EQ_INT(mvcc_delete(s, &r, &out), MVCC_OK);
    if (deleted)
        *deleted = out.deleted;
    mvcc_delete_result_free(&out);
    return out.header_rev;
}

/* Gets one key at rev (0 = current). Returns the error; *kv valid on OK and found. */
static inline enum mvcc_err t_get(struct mvcc_store *s, const char *k, int64_t rev, bool *found,
                                  struct mvcc_kv *kv)
{
    struct mvcc_range_req r = {0};
    struct mvcc_range_result out;
    r.key = (const uint8_t *)k;
    r.key_len = strlen(k);
    r.revision = rev;
    enum mvcc_err e = mvcc_range(s, &r, &out);
    *found = e == MVCC_OK && out.kvs_len == 1;
    if (*found && kv)
        *kv = out.kvs[0];
    mvcc_range_result_free(&out);
    return e;
}

/* The value of k at rev as a static string, "<none>" when absent, "<err>" on error. */
static inline const char *t_val(struct mvcc_store *s, const char *k, int64_t rev)
{
    static char buf[256];
    bool found;
    struct mvcc_kv kv;
    if (t_get(s, k, rev, &found, &kv) != MVCC_OK)
        return "<err>";
    if (!found)
        return "<none>";
    snprintf(buf, sizeof(buf), "%.*s", (int)kv.value_len, (const char *)kv.value);
    return buf;
}

static inline bool kv_is(const struct mvcc_kv *kv, const char *k, const char *v)
{
    return kv->key_len == strlen(k) && memcmp(kv->key, k, kv->key_len) == 0 &&
           (!v || (kv->value_len == strlen(v) &&
                   (kv->value_len == 0 || memcmp(kv->value, v, kv->value_len) == 0)));
}

#endif
