/*
 * test_export.c: the JSON-lines writer (harness/export). A history holding every
 * shape the loaders know (flat get/put/delete, ranges with kvs, prev_kv results,
 * txns with compares and both branches, cas, compaction, lease ends with and without
 * keys, failed and unknown ops, non-UTF-8 and NUL bytes, watches with put, delete and
 * progress events) is loaded, exported, re-loaded and exported again: the two exports
 * are the same bytes, the re-loaded history gets the same verdicts, and single-key
 * ops come out flat.
 */
#include "fl_test.h"

#include "harness/export/export.h"
#include "harness/history/load.h"

static const char corpus[] =
    "{\"op\":\"put\",\"client\":1,\"key\":\"a\",\"value\":\"1\",\"call\":10,\"return\":20,"
    "\"rev\":2}\n"
    "{\"op\":\"get\",\"client\":2,\"key\":\"a\",\"call\":30,\"return\":40,\"rev\":2,"
    "\"value\":\"1\",\"mod_rev\":2,\"create_rev\":2,\"version\":1}\n"
    "{\"op\":\"get\",\"client\":2,\"key\":\"zz\",\"call\":41,\"return\":42,\"rev\":2,"
    "\"value\":null,\"serializable\":true}\n"
    "{\"op\":\"range\",\"client\":3,\"key\":\"a\",\"range_end\":\"\\u0000\",\"call\":50,"
    "\"return\":60,\"rev\":2,\"count\":1,\"kvs\":[{\"key\":\"a\",\"value\":\"1\","
    "\"create_revision\":2,\"mod_revision\":2,\"version\":1}]}\n"
    "{\"op\":\"put\",\"client\":1,\"key\":{\"hex\":\"ff00\"},\"value\":\"x\\u0000y\","
    "\"call\":61,\"return\":70,\"rev\":3}\n"
    "{\"op\":\"txn\",\"client\":4,\"call\":71,\"return\":80,\"rev\":4,"
    "\"compare\":[{\"key\":\"a\",\"target\":\"value\",\"result\":\"=\",\"value\":\"1\"},"
    "{\"key\":\"a\",\"target\":\"mod\",\"result\":\"<\",\"mod_revision\":9}],"
    "\"success\":[{\"put\":{\"key\":\"a\",\"value\":\"2\",\"prev_kv\":true}},"
    "{\"range\":{\"key\":\"b\"}}],\"failure\":[{\"delete\":{\"key\":\"a\"}}],"
    "\"succeeded\":true,\"responses\":[{\"put\":{\"prev_kv\":{\"key\":\"a\",\"value\":\"1\","
    "\"create_revision\":2,\"mod_revision\":2,\"version\":1}}},{\"range\":{\"kvs\":[],"
    "\"count\":0}}]}\n"
    "{\"op\":\"cas\",\"client\":5,\"key\":\"b\",\"expect\":null,\"value\":\"7\",\"call\":81,"
    "\"return\":90,\"rev\":5,\"succeeded\":true}\n"
    "{\"op\":\"delete\",\"client\":1,\"key\":\"b\",\"prev_kv\":true,\"call\":91,\"return\":95,"
    "\"rev\":6,\"deleted\":1,\"prev_kvs\":[{\"key\":\"b\",\"value\":\"7\",\"create_revision\":5,"
    "\"mod_revision\":5,\"version\":1}]}\n"
    "{\"op\":\"put\",\"client\":1,\"key\":\"l\",\"value\":\"v\",\"lease\":77,\"call\":96,"
    "\"return\":97,\"rev\":7}\n"
    "{\"op\":\"lease_revoke\",\"client\":0,\"lease_id\":77,\"call\":98,\"return\":99,"
    "\"rev\":8}\n"
    "{\"op\":\"lease_revoke\",\"client\":0,\"lease_id\":78,\"keys\":[],\"call\":98,"
    "\"return\":99,\"rev\":8}\n"
    "{\"op\":\"compact\",\"client\":0,\"revision\":3,\"call\":100,\"return\":101,\"rev\":8}\n"
    "{\"op\":\"get\",\"client\":2,\"key\":\"a\",\"revision\":2,\"call\":102,\"return\":103,"
    "\"status\":\"fail\",\"error\":\"etcdserver: mvcc: required revision has been "
    "compacted\"}\n"
    "{\"op\":\"put\",\"client\":3,\"key\":\"c\",\"value\":\"u\",\"call\":104,\"return\":null,"
    "\"status\":\"unknown\"}\n"
    "{\"op\":\"append\",\"client\":6,\"key\":\"ap\",\"value\":\"q\",\"call\":105,"
    "\"return\":106}\n"
    "{\"type\":\"watch_open\",\"watch\":1,\"client\":7,\"key\":\"a\",\"range_end\":\"b\","
    "\"start_rev\":1,\"prev_kv\":true,\"progress_notify\":true,\"t\":5}\n"
    "{\"type\":\"watch_open\",\"watch\":2,\"client\":7,\"key\":\"a\",\"filters\":\"noput\","
    "\"t\":6}\n"
    "{\"type\":\"watch_event\",\"watch\":1,\"response\":1,\"event\":\"put\",\"key\":\"a\","
    "\"value\":\"1\",\"mod_rev\":2,\"create_rev\":2,\"version\":1,\"t\":21}\n"
    "{\"type\":\"watch_event\",\"watch\":1,\"response\":2,\"event\":\"put\",\"key\":\"a\","
    "\"value\":\"2\",\"prev_value\":\"1\",\"mod_rev\":4,\"create_rev\":2,\"version\":2,"
    "\"t\":81}\n"
    "{\"type\":\"watch_event\",\"watch\":1,\"response\":3,\"event\":\"progress\",\"rev\":4,"
    "\"t\":82}\n"
    "{\"type\":\"watch_event\",\"watch\":2,\"response\":1,\"event\":\"delete\",\"key\":\"a\","
    "\"mod_rev\":9,\"t\":83}\n"
    "{\"type\":\"watch_close\",\"watch\":1,\"t\":200}\n";

/* Loads text as JSON lines into h (initialised here); CHECKs it loads. */
static void load(const char *text, size_t len, struct chk_history *h)
{
    struct fl_buf err;
    fl_buf_init(&err);
    chk_history_init(h);
    int rc = hist_load_jsonl_mem("t.jsonl", text, len, h, &err);
    if (rc)
        fprintf(stderr, "load: %s\n", fl_buf_cstr(&err));
    fl_buf_close(&err);
    CHECK(rc == FL_OK);
}

static void export_is_a_fixpoint(void)
{
    struct chk_history h1, h2;
    struct fl_buf o1, o2;
    fl_buf_init(&o1);
    fl_buf_init(&o2);
    load(corpus, sizeof corpus - 1, &h1);
    CHECK(exp_jsonl_write(&h1, &o1) == FL_OK);
    load((const char *)o1.data, o1.len, &h2);
    CHECK(exp_jsonl_write(&h2, &o2) == FL_OK);
    if (o1.len != o2.len || memcmp(o1.data, o2.data, o1.len))
        fprintf(stderr, "first:\n%s\nsecond:\n%s\n", fl_buf_cstr(&o1), fl_buf_cstr(&o2));
    CHECK(o1.len == o2.len && !memcmp(o1.data, o2.data, o1.len));
    CHECK_EQ_INT(h2.op_count, h1.op_count);
    CHECK_EQ_INT(h2.sub_count, h1.sub_count);
    CHECK_EQ_INT(h2.kv_count, h1.kv_count);
    CHECK_EQ_INT(h2.watch_count, h1.watch_count);
    CHECK_EQ_INT(h2.event_count, h1.event_count);
    CHECK(h2.revisions_complete == h1.revisions_complete);
    CHECK(h2.compactions_known == h1.compactions_known);
    const char *s = fl_buf_cstr(&o1);
    /* flat single-key shapes, keys on every op, bytes that are not UTF-8 as hex */
    CHECK(strstr(s, "\"op\":\"get\",\"id\":2,") != NULL);
    CHECK(strstr(s, "\"key\":\"a\",\"value\":\"1\",\"mod_rev\":2,\"create_rev\":2") != NULL);
    CHECK(strstr(s, "\"key\":\"zz\",\"serializable\":true,\"value\":null") != NULL);
    CHECK(strstr(s, "\"deleted\":1") != NULL);
    CHECK(strstr(s, "{\"hex\":\"ff00\"}") != NULL);
    CHECK(strstr(s, "\"x\\u0000y\"") != NULL);
    CHECK(strstr(s, "\"op\":\"cas\"") != NULL);
    CHECK(strstr(s, "\"event\":\"progress\"") != NULL);
    chk_history_close(&h1);
    chk_history_close(&h2);
    fl_buf_close(&o1);
    fl_buf_close(&o2);
}

/* Verdict of text as JSON lines. */
static int verdict_of(const char *text, size_t len, struct fl_buf *exported)
{
    struct chk_history h;
    load(text, len, &h);
    if (exported)
        CHECK(exp_jsonl_write(&h, exported) == FL_OK);
    struct chk_result r;
    chk_check(&h, NULL, &r);
    int v = r.verdict;
    chk_result_close(&r);
    chk_history_close(&h);
    return v;
}

static void same_verdicts(void)
{
    /* pass: the corpus; fail: a stale read after a put acknowledged before it */
    static const char stale[] =
        "{\"op\":\"put\",\"client\":1,\"key\":\"k\",\"value\":\"1\",\"call\":1,\"return\":2,"
        "\"rev\":2}\n"
        "{\"op\":\"put\",\"client\":1,\"key\":\"k\",\"value\":\"2\",\"call\":3,\"return\":4,"
        "\"rev\":3}\n"
        "{\"op\":\"get\",\"client\":2,\"key\":\"k\",\"call\":5,\"return\":6,\"rev\":3,"
        "\"value\":\"1\",\"mod_rev\":2}\n";
    static const char fresh[] =
        "{\"op\":\"put\",\"client\":1,\"key\":\"k\",\"value\":\"1\",\"call\":1,\"return\":2,"
        "\"rev\":2}\n"
        "{\"op\":\"get\",\"client\":2,\"key\":\"k\",\"call\":5,\"return\":6,\"rev\":2,"
        "\"value\":\"1\",\"mod_rev\":2}\n";
    const struct {
        const char *text;
        size_t len;
    } cases[] = {{corpus, sizeof corpus - 1}, {stale, sizeof stale - 1}, {fresh, sizeof fresh - 1}};
    /* the checkers leave the corpus undecided: unknown must stay unknown */
    int want[] = {CHK_UNKNOWN, CHK_FAIL, CHK_PASS};
    for (size_t i = 0; i < FL_ARRAY_LEN(cases); i++) {
        struct fl_buf out;
        fl_buf_init(&out);
        int v1 = verdict_of(cases[i].text, cases[i].len, &out);
        int v2 = verdict_of((const char *)out.data, out.len, NULL);
        CHECK_EQ_INT(v1, want[i]);
        CHECK_EQ_INT(v2, v1);
        fl_buf_close(&out);
    }
}

int main(void)
{
    FL_TEST(export_is_a_fixpoint);
    FL_TEST(same_verdicts);
    return fl_test_end();
}
