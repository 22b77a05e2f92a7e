/*
 * test_load_formats.c: the JSON-lines, Jepsen and porcupine-kv loaders, and the etcd
 * semantics of the model through small hand-written histories: txn compares on
 * value/version/create/mod with then/else branches, delete counts, range counts and
 * limits, historical reads, compaction errors, unknown outcomes, bytes as {"hex"}.
 * Each history is judged by both engines where both apply, and they must agree.
 * Error lines must come back as NAME:LINE: message.
 */
#include "checkers/checkers.h"
#include "fl_test.h"
#include "harness/history/load.h"

/* Loads text as JSON lines and returns the linearizability verdict (both engines
 * when the history has revisions; they must agree), or -1 on a load error. */
static int lin(const char *text)
{
    struct chk_history h;
    chk_history_init(&h);
    struct fl_buf e;
    fl_buf_init(&e);
    int v = -1;
    if (hist_load_jsonl_mem("t.jsonl", text, strlen(text), &h, &e) == FL_OK) {
        struct chk_lin_result r;
        chk_lin_check(&h, NULL, &r);
        v = r.verdict;
        if (h.has_revs) {
            struct chk_limits lim = {0};
            lim.engine = CHK_ENGINE_SEARCH;
            struct chk_lin_result r2;
            chk_lin_check(&h, &lim, &r2);
            if (r2.verdict != v)
                fprintf(stderr, "engines disagree on:\n%s(revision %s: %s; search %s)\n", text,
                        chk_verdict_name(v), r.reason, chk_verdict_name(r2.verdict));
            CHECK_EQ_INT(r2.verdict, v);
            chk_lin_result_close(&r2);
        }
        chk_lin_result_close(&r);
    } else {
        fprintf(stderr, "load: %s\n", fl_buf_cstr(&e));
    }
    fl_buf_close(&e);
    chk_history_close(&h);
    return v;
}

static void load_error(const char *text, const char *want)
{
    struct chk_history h;
    chk_history_init(&h);
    struct fl_buf e;
    fl_buf_init(&e);
    int rc = hist_load_jsonl_mem("t.jsonl", text, strlen(text), &h, &e);
    CHECK_EQ_INT(rc, FL_EINVAL);
    if (!strstr(fl_buf_cstr(&e), want))
        fprintf(stderr, "got \"%s\", want \"%s\"\n", fl_buf_cstr(&e), want);
    CHECK(strstr(fl_buf_cstr(&e), want) != NULL);
    fl_buf_close(&e);
    chk_history_close(&h);
}

#define PUT(c, k, v, t0, t1, rev)                                                                  \
    "{\"client\":" #c ",\"op\":\"put\",\"key\":\"" k "\",\"value\":\"" v "\",\"call\":" #t0        \
    ",\"return\":" #t1 ",\"rev\":" #rev "}\n"

static void test_txn(void)
{
    const char *base = PUT(1, "a", "x", 10, 20, 2);
    char buf[2048];
    /* version compare true -> then branch put; response says succeeded */
    snprintf(buf, sizeof(buf),
             "%s{\"client\":2,\"op\":\"txn\",\"call\":30,\"return\":40,\"rev\":3,"
             "\"compare\":[{\"key\":\"a\",\"target\":\"version\",\"result\":\"=\",\"version\":1},"
             "{\"key\":\"a\",\"target\":\"create\",\"result\":\"=\",\"create_revision\":2},"
             "{\"key\":\"a\",\"target\":\"mod\",\"result\":\"<\",\"mod_revision\":3}],"
             "\"success\":[{\"put\":{\"key\":\"b\",\"value\":\"y\"}}],"
             "\"failure\":[{\"range\":{\"key\":\"a\"}}],\"succeeded\":true,"
             "\"responses\":[{\"put\":{}}]}\n",
             base);
    CHECK_EQ_INT(lin(buf), CHK_PASS);
    /* the same txn claiming the else branch is illegal */
    snprintf(buf, sizeof(buf),
             "%s{\"client\":2,\"op\":\"txn\",\"call\":30,\"return\":40,\"rev\":2,"
             "\"compare\":[{\"key\":\"a\",\"target\":\"version\",\"result\":\"=\",\"version\":1}],"
             "\"success\":[{\"put\":{\"key\":\"b\",\"value\":\"y\"}}],"
             "\"failure\":[{\"range\":{\"key\":\"a\"}}],\"succeeded\":false,"
             "\"responses\":[{\"range\":{\"kvs\":[{\"key\":\"a\",\"value\":\"x\"}],"
             "\"count\":1}}]}\n",
             base);
    CHECK_EQ_INT(lin(buf), CHK_FAIL);
    /* value compare on a missing key is false: else branch reads nothing */
    snprintf(
        buf, sizeof(buf),
        "%s{\"client\":2,\"op\":\"txn\",\"call\":30,\"return\":40,\"rev\":2,"
        "\"compare\":[{\"key\":\"zz\",\"target\":\"value\",\"result\":\"!=\",\"value\":\"q\"}],"
        "\"success\":[{\"put\":{\"key\":\"b\",\"value\":\"y\"}}],"
        "\"failure\":[{\"range\":{\"key\":\"zz\"}}],\"succeeded\":false,"
        "\"responses\":[{\"range\":{\"kvs\":[],\"count\":0}}]}\n",
        base);
    CHECK_EQ_INT(lin(buf), CHK_PASS);
}

static void test_delete_range(void)
{
    const char *base =
        PUT(1, "a", "1", 10, 20, 2) PUT(1, "b", "2", 30, 40, 3) PUT(1, "c", "3", 50, 60, 4);
    char buf[2048];
    snprintf(buf, sizeof(buf),
             "%s{\"client\":2,\"op\":\"range\",\"key\":\"a\",\"range_end\":\"c\",\"call\":70,"
             "\"return\":80,\"rev\":4,\"count\":2,\"kvs\":[{\"key\":\"a\",\"value\":\"1\","
             "\"mod_revision\":2,\"version\":1}]}\n",
             base);
    CHECK_EQ_INT(lin(buf), CHK_FAIL); /* 2 keys, but only one kv without a limit */
    snprintf(buf, sizeof(buf),
             "%s{\"client\":2,\"op\":\"range\",\"key\":\"a\",\"range_end\":\"c\",\"limit\":1,"
             "\"call\":70,\"return\":80,\"rev\":4,\"count\":2,\"kvs\":[{\"key\":\"a\","
             "\"value\":\"1\",\"mod_revision\":2,\"version\":1}]}\n",
             base);
    CHECK_EQ_INT(lin(buf), CHK_PASS);
    /* chk_sub.limit is 32-bit: a limit above that saturates (it limits nothing a store
     * holds), never wraps (2^32 + 1 cut to 32 bits would be a limit of 1) */
    snprintf(buf, sizeof(buf),
             "%s{\"client\":2,\"op\":\"range\",\"key\":\"a\",\"range_end\":\"c\","
             "\"limit\":4294967297,\"call\":70,\"return\":80,\"rev\":4,\"count\":2,\"kvs\":["
             "{\"key\":\"a\",\"value\":\"1\",\"mod_revision\":2,\"version\":1},"
             "{\"key\":\"b\",\"value\":\"2\",\"mod_revision\":3,\"version\":1}]}\n",
             base);
    CHECK_EQ_INT(lin(buf), CHK_PASS);
    /* delete a range: deleted 3 at revision 5; deleting again deletes 0, rev stays */
    snprintf(buf, sizeof(buf),
             "%s{\"client\":2,\"op\":\"delete\",\"key\":\"a\",\"range_end\":{\"hex\":\"00\"},"
             "\"call\":70,\"return\":80,\"rev\":5,\"deleted\":3}\n"
             "{\"client\":2,\"op\":\"delete\",\"key\":\"b\",\"call\":90,\"return\":95,\"rev\":5,"
             "\"deleted\":0}\n",
             base);
    CHECK_EQ_INT(lin(buf), CHK_PASS);
    snprintf(buf, sizeof(buf),
             "%s{\"client\":2,\"op\":\"delete\",\"key\":\"b\",\"call\":70,\"return\":80,\"rev\":5,"
             "\"deleted\":2}\n",
             base);
    CHECK_EQ_INT(lin(buf), CHK_FAIL);
}

static void test_compaction(void)
{
    const char *base = PUT(1, "a", "1", 10, 20, 2) PUT(1, "a", "2", 30, 40, 3);
    char buf[2048];
    /* historical read, then a compaction; a later read of revision 2 must fail */
    snprintf(buf, sizeof(buf),
             "%s{\"client\":2,\"op\":\"get\",\"key\":\"a\",\"revision\":2,\"call\":50,"
             "\"return\":60,\"rev\":3,\"value\":\"1\",\"mod_rev\":2}\n"
             "{\"client\":2,\"op\":\"compact\",\"revision\":3,\"call\":70,\"return\":80,"
             "\"rev\":3}\n"
             "{\"client\":2,\"op\":\"get\",\"key\":\"a\",\"revision\":2,\"call\":90,"
             "\"return\":95,\"status\":\"fail\",\"error\":\"etcdserver: mvcc: required "
             "revision has been compacted\"}\n",
             base);
    CHECK_EQ_INT(lin(buf), CHK_PASS);
    /* a historical read returning the wrong value (engine 1 checks it exactly) */
    snprintf(buf, sizeof(buf),
             "%s{\"client\":2,\"op\":\"get\",\"key\":\"a\",\"revision\":2,\"call\":50,"
             "\"return\":60,\"rev\":3,\"value\":\"2\",\"mod_rev\":3}\n",
             base);
    struct chk_history h;
    chk_history_init(&h);
    struct fl_buf e;
    fl_buf_init(&e);
    CHECK_EQ_INT(hist_load_jsonl_mem("t", buf, strlen(buf), &h, &e), FL_OK);
    struct chk_lin_result r;
    chk_lin_check(&h, NULL, &r);
    CHECK_EQ_INT(r.verdict, CHK_FAIL);
    chk_lin_result_close(&r);
    chk_history_close(&h);
    fl_buf_close(&e);
    /* a compacted error the recorded compactions do not reach is a lie */
    snprintf(buf, sizeof(buf),
             "%s{\"client\":2,\"op\":\"compact\",\"revision\":1,\"call\":70,\"return\":80,"
             "\"rev\":3}\n"
             "{\"client\":2,\"op\":\"get\",\"key\":\"a\",\"revision\":2,\"call\":90,"
             "\"return\":95,\"status\":\"fail\",\"error\":\"etcdserver: mvcc: required "
             "revision has been compacted\"}\n",
             base);
    CHECK_EQ_INT(lin(buf), CHK_FAIL);
    /* a history that records no compaction at all (auto-compaction, an operator's)
     * cannot refute one */
    snprintf(buf, sizeof(buf),
             "%s{\"client\":2,\"op\":\"get\",\"key\":\"a\",\"revision\":2,\"call\":90,"
             "\"return\":95,\"status\":\"fail\",\"error\":\"etcdserver: mvcc: required "
             "revision has been compacted\"}\n",
             base);
    CHECK_EQ_INT(lin(buf), CHK_PASS);
}

static void test_unknown(void)
{
    /* an unknown put that nobody observed: may have happened or not */
    const char *a = PUT(
        1, "a", "1", 10, 20,
        2) "{\"client\":2,\"op\":\"put\",\"key\":\"a\",\"value\":\"9\",\"call\":25,\"return\":null}"
           "\n"
           "{\"client\":3,\"op\":\"get\",\"key\":\"a\",\"call\":40,\"return\":50,\"value\":\"1\","
           "\"mod_rev\":2,\"rev\":2}\n";
    CHECK_EQ_INT(lin(a), CHK_PASS);
    /* revealed by a later read: placed at revision 3 */
    const char *b = PUT(
        1, "a", "1", 10, 20,
        2) "{\"client\":2,\"op\":\"put\",\"key\":\"a\",\"value\":\"9\",\"call\":25,\"return\":null}"
           "\n"
           "{\"client\":3,\"op\":\"get\",\"key\":\"a\",\"call\":40,\"return\":50,\"value\":\"9\","
           "\"mod_rev\":3,\"rev\":3}\n";
    CHECK_EQ_INT(lin(b), CHK_PASS);
    /* but it cannot take effect before it was called */
    const char *c = PUT(
        1, "a", "1", 10, 20,
        2) "{\"client\":3,\"op\":\"get\",\"key\":\"a\",\"call\":21,\"return\":24,\"value\":\"9\","
           "\"mod_rev\":3,\"rev\":3}\n"
           "{\"client\":2,\"op\":\"put\",\"key\":\"a\",\"value\":\"9\",\"call\":25,\"return\":null}"
           "\n";
    CHECK_EQ_INT(lin(c), CHK_FAIL);
    /* a failed write surely did not happen */
    const char *d = PUT(
        1, "a", "1", 10, 20,
        2) "{\"client\":2,\"op\":\"put\",\"key\":\"a\",\"value\":\"9\",\"call\":25,\"return\":30,"
           "\"status\":\"fail\",\"error\":\"etcdserver: too many requests\"}\n"
           "{\"client\":3,\"op\":\"get\",\"key\":\"a\",\"call\":40,\"return\":50,\"value\":\"9\","
           "\"mod_rev\":3,\"rev\":3}\n";
    CHECK_EQ_INT(lin(d), CHK_FAIL);
    /* without revisions: plain key-value semantics, search engine */
    const char *e =
        "{\"client\":1,\"op\":\"put\",\"key\":\"a\",\"value\":\"1\",\"call\":1,\"return\":2}\n"
        "{\"client\":2,\"op\":\"get\",\"key\":\"a\",\"call\":3,\"return\":4,\"value\":null}\n";
    CHECK_EQ_INT(lin(e), CHK_FAIL);
}

/* A watch event that contradicts the reads may not turn into a linearizability
 * failure: judged without it, the history is linearizable. */
static void test_watch_cannot_fail_lin(void)
{
    const char *a = PUT(
        1, "a", "1", 10, 20,
        2) "{\"client\":2,\"op\":\"put\",\"key\":\"a\",\"value\":\"9\",\"call\":25,\"return\":null}"
           "\n"
           "{\"client\":4,\"op\":\"put\",\"key\":\"b\",\"value\":\"5\",\"call\":26,\"return\":null}"
           "\n"
           "{\"client\":3,\"op\":\"get\",\"key\":\"a\",\"call\":40,\"return\":50,\"value\":\"1\","
           "\"mod_rev\":2,\"rev\":3}\n"
           "{\"type\":\"watch_open\",\"watch\":1,\"key\":\"a\",\"start_rev\":1}\n"
           "{\"type\":\"watch_event\",\"watch\":1,\"event\":\"put\",\"key\":\"a\",\"value\":\"9\","
           "\"mod_rev\":3}\n";
    CHECK_EQ_INT(lin(a), CHK_PASS);
}

/* A revision nothing explains: an outside writer by default, a violation when the
 * history is complete; both engines reason the same way on the same flag. */
static void test_phantom_revision(void)
{
    const char *a = PUT(
        1, "a", "1", 10, 20,
        2) "{\"client\":3,\"op\":\"get\",\"key\":\"a\",\"call\":40,\"return\":50,\"value\":\"1\","
           "\"mod_rev\":2,\"rev\":3}\n";
    struct chk_history h;
    struct fl_buf e;
    fl_buf_init(&e);
    for (int complete = 0; complete < 2; complete++) {
        chk_history_init(&h);
        CHECK_EQ_INT(hist_load_jsonl_mem("t", a, strlen(a), &h, &e), FL_OK);
        h.revisions_complete = complete;
        struct chk_limits lim = {0};
        lim.engine = CHK_ENGINE_REVISION;
        struct chk_lin_result r;
        chk_lin_check(&h, &lim, &r);
        CHECK_EQ_INT(r.verdict, complete ? CHK_FAIL : CHK_PASS);
        if (complete)
            CHECK(strstr(r.reason, "no recorded operation") != NULL);
        chk_lin_result_close(&r);
        lim.engine = CHK_ENGINE_SEARCH;
        chk_lin_check(&h, &lim, &r);
        CHECK_EQ_INT(r.verdict, complete ? CHK_FAIL : CHK_PASS);
        chk_lin_result_close(&r);
        chk_history_close(&h);
    }
    fl_buf_close(&e);
}

static void test_serializable(void)
{
    /* a serializable read may be stale (etcd serves it locally) ... */
    const char *a = PUT(1, "a", "1", 10, 20, 2)
        PUT(1, "a", "2", 30, 40,
            3) "{\"client\":2,\"op\":\"get\",\"key\":\"a\",\"serializable\":true,\"call\":50,"
               "\"return\":60,\"value\":\"1\",\"mod_rev\":2,\"rev\":2}\n";
    struct chk_history h;
    struct fl_buf e;
    fl_buf_init(&e);
    chk_history_init(&h);
    CHECK_EQ_INT(hist_load_jsonl_mem("t", a, strlen(a), &h, &e), FL_OK);
    CHECK(h.ops[2].flags & CHK_OPF_SERIALIZABLE);
    struct chk_lin_result r;
    chk_lin_check(&h, NULL, &r);
    CHECK_EQ_INT(r.verdict, CHK_PASS);
    chk_lin_result_close(&r);
    chk_history_close(&h);
    /* ... but must match the state at its own revision */
    const char *b = PUT(1, "a", "1", 10, 20, 2)
        PUT(1, "a", "2", 30, 40,
            3) "{\"client\":2,\"op\":\"get\",\"key\":\"a\",\"serializable\":true,\"call\":50,"
               "\"return\":60,\"value\":\"2\",\"mod_rev\":3,\"rev\":2}\n";
    chk_history_init(&h);
    CHECK_EQ_INT(hist_load_jsonl_mem("t", b, strlen(b), &h, &e), FL_OK);
    chk_lin_check(&h, NULL, &r);
    CHECK_EQ_INT(r.verdict, CHK_FAIL);
    chk_lin_result_close(&r);
    chk_history_close(&h);
    fl_buf_close(&e);
}

static void test_errors(void)
{
    load_error(
        "{\"op\":\"put\",\"key\":\"a\",\"value\":\"1\",\"call\":1,\"return\":2}\n\nnot json\n",
        "t.jsonl:3: malformed JSON");
    load_error("{\"op\":\"put\",\"key\":\"a\",\"value\":\"1\",\"call\":5,\"return\":2}\n",
               "t.jsonl:1: return (2) before call (5)");
    load_error("{\"op\":\"zap\",\"key\":\"a\",\"call\":1,\"return\":2}\n", "t.jsonl:1: unknown op");
    load_error("{\"op\":\"put\",\"key\":\"a\",\"value\":\"1\",\"return\":2}\n",
               "t.jsonl:1: operation without an integer \"call\"");
    load_error(
        "{\"type\":\"watch_event\",\"watch\":3,\"event\":\"put\",\"key\":\"a\",\"mod_rev\":2}\n",
        "t.jsonl:1: event of watch 3 that was never opened");
    load_error("{\"type\":\"nope\"}\n", "t.jsonl:1: unknown type");
    /* chk_wevent.seq is 32-bit: a larger seq is refused, never cut */
    load_error("{\"type\":\"watch_event\",\"watch\":3,\"event\":\"put\",\"key\":\"a\","
               "\"mod_rev\":2,\"seq\":2147483648}\n",
               "t.jsonl:1: \"seq\" 2147483648 is out of range (want 0..2147483647)");
    /* chk_sub.count is 32-bit: a count or deleted count above it is refused, never cut */
    load_error("{\"op\":\"range\",\"key\":\"a\",\"call\":1,\"return\":2,\"rev\":1,"
               "\"count\":4294967296,\"kvs\":[]}\n",
               "t.jsonl:1: \"count\" 4294967296 is out of range (want -2147483648..2147483647)");
    load_error("{\"op\":\"delete\",\"key\":\"a\",\"call\":1,\"return\":2,\"rev\":1,"
               "\"deleted\":4294967296}\n",
               "t.jsonl:1: \"deleted\" 4294967296 is out of range (want -2147483648..2147483647)");
    load_error(
        "{\"op\":\"put\",\"key\":{\"hex\":\"zz\"},\"value\":\"1\",\"call\":1,\"return\":2}\n",
        "t.jsonl:1: bad bytes");
    /* history.h's bytes rule: {"hex": ...} and nothing else in the object */
    load_error("{\"op\":\"put\",\"key\":{\"hex\":\"00\",\"x\":1},\"value\":\"1\",\"call\":1,"
               "\"return\":2}\n",
               "t.jsonl:1: bad bytes");

    struct chk_history h;
    struct fl_buf e;
    fl_buf_init(&e);
    /* hex digits of either case */
    chk_history_init(&h);
    const char *u = "{\"op\":\"put\",\"key\":{\"hex\":\"0A\"},\"value\":\"1\",\"call\":1,"
                    "\"return\":2}\n";
    CHECK_EQ_INT(hist_load_jsonl_mem("u.jsonl", u, strlen(u), &h, &e), 0);
    chk_history_close(&h);
    fl_buf_reset(&e);
    chk_history_init(&h);
    const char *j = "INFO  jepsen.util - 0\t:invoke\t:cas\t[1 2]\n"
                    "INFO  jepsen.util - 0\t:ok\t:cas\t[1 2]\n"
                    "INFO  jepsen.util - 1\t:invoke\t:frob\t1\n";
    CHECK_EQ_INT(hist_load_jepsen_mem("j.log", j, strlen(j), &h, &e), FL_EINVAL);
    CHECK(strstr(fl_buf_cstr(&e), "j.log:3: unknown op") != NULL);
    chk_history_close(&h);
    fl_buf_reset(&e);
    chk_history_init(&h);
    const char *k = "{:process 0, :type :invoke, :f :get, :key \"1\", :value nil}\n"
                    "{:process 0, :type :invoke, :f :get, :key \"1\", :value nil}\n";
    CHECK_EQ_INT(hist_load_porcupine_kv_mem("k.txt", k, strlen(k), &h, &e), FL_EINVAL);
    CHECK(strstr(fl_buf_cstr(&e), "k.txt:2: process 0 invokes while") != NULL);
    chk_history_close(&h);
    fl_buf_close(&e);
}

static void test_jepsen_kv_semantics(void)
{
    struct chk_history h;
    struct fl_buf e;
    fl_buf_init(&e);
    /* cas on an absent register fails; :info write stays in flight */
    const char *j = "INFO  jepsen.util - 0\t:invoke\t:cas\t[1 2]\n"
                    "INFO  jepsen.util - 0\t:fail\t:cas\t[1 2]\n"
                    "INFO  jepsen.util - 1\t:invoke\t:write\t1\n"
                    "INFO  jepsen.util - 1\t:info\t:write\t:timed-out\n"
                    "INFO  jepsen.util - 2\t:invoke\t:read\tnil\n"
                    "INFO  jepsen.util - 2\t:ok\t:read\t1\n";
    chk_history_init(&h);
    CHECK_EQ_INT(hist_load_jepsen_mem("j.log", j, strlen(j), &h, &e), FL_OK);
    struct chk_lin_result r;
    chk_lin_check(&h, NULL, &r);
    CHECK_EQ_INT(r.verdict, CHK_PASS);
    chk_lin_result_close(&r);
    chk_history_close(&h);
    /* kv: append concatenates, get of a fresh key is "" */
    const char *k = "{:process 0, :type :invoke, :f :get, :key \"1\", :value nil}\n"
                    "{:process 0, :type :ok, :f :get, :key \"1\", :value \"\"}\n"
                    "{:process 1, :type :invoke, :f :append, :key \"1\", :value \"x 1 0 y\"}\n"
                    "{:process 1, :type :ok, :f :append, :key \"1\", :value \"x 1 0 y\"}\n"
                    "{:process 1, :type :invoke, :f :append, :key \"1\", :value \"x 1 1 y\"}\n"
                    "{:process 1, :type :ok, :f :append, :key \"1\", :value \"x 1 1 y\"}\n"
                    "{:process 0, :type :invoke, :f :get, :key \"1\", :value nil}\n"
                    "{:process 0, :type :ok, :f :get, :key \"1\", :value \"x 1 0 yx 1 1 y\"}\n";
    chk_history_init(&h);
    CHECK_EQ_INT(hist_load_porcupine_kv_mem("k.txt", k, strlen(k), &h, &e), FL_OK);
    chk_lin_check(&h, NULL, &r);
    CHECK_EQ_INT(r.verdict, CHK_PASS);
    chk_lin_result_close(&r);
    chk_history_close(&h);
    fl_buf_close(&e);
}

int main(void)
{
    FL_TEST(test_txn);
    FL_TEST(test_delete_range);
    FL_TEST(test_compaction);
    FL_TEST(test_unknown);
    FL_TEST(test_serializable);
    FL_TEST(test_watch_cannot_fail_lin);
    FL_TEST(test_phantom_revision);
    FL_TEST(test_errors);
    FL_TEST(test_jepsen_kv_semantics);
    CHECK_EQ_INT(lin(""), CHK_PASS); /* an empty history is linearizable */
    return fl_test_end();
}
