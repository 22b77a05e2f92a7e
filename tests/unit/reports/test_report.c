/*
 * test_report.c: reports from recorded databases. A run is recorded with the history
 * API (hostile keys and values: markup, NUL and 0xff bytes; a stale read that the
 * linearizability checker rejects; a watch that misses an event; faults; node events;
 * a failed expect), checked with the real checkers, and reported. The page must carry
 * the SVG timeline, escape everything, highlight the violating operations and list the
 * prefix; JUnit, summary.json and summary.md must say the same. check_report.py (run
 * when python3 exists) parses the HTML and the JUnit XML. A 100,000-operation run must
 * switch the timeline to buckets and stay small; several databases merge into one
 * report; errors are refused with a message.
 */
#include "fl_test.h"
#include "hist_rows.h"
#include "fl_tmpdir.h"

#include "harness/history/history.h"
#include "harness/history/load.h"
#include "reports/report.h"

#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char tmp[256];

static char *slurp(const char *dir, const char *name, size_t *len)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    size_t got = fread(s, 1, (size_t)n, f);
    s[got] = '\0';
    fclose(f);
    if (len)
        *len = got;
    return s;
}

static void put(struct hist_db *db, int64_t client, const void *key, size_t klen, const void *val,
                size_t vlen, int64_t call, int64_t ret, int64_t rev, enum hist_status st)
{
    struct hist_op op;
    hist_op_init(&op);
    op.client_id = client;
    op.node_id = 1;
    op.kind = "put";
    op.key = key;
    op.key_len = klen;
    op.value = val;
    op.value_len = vlen;
    json_t *rq = json_object();
    json_object_set_new(rq, "key", hist_json_bytes(key, klen));
    json_object_set_new(rq, "value", hist_json_bytes(val, vlen));
    char *rqs = json_dumps(rq, JSON_COMPACT);
    op.request = rqs;
    op.call_ns = call;
    op.return_ns = ret;
    op.status = st;
    op.revision = st == HIST_STATUS_OK ? rev : HIST_NULL;
    op.response = st == HIST_STATUS_OK ? "{\"header\":{\"revision\":1}}" : NULL;
    op.error = st == HIST_STATUS_FAIL ? "etcdserver: <request timed out>" : NULL;
    CHECK(hist_op_add(db, &op, NULL) == FL_OK);
    free(rqs);
    json_decref(rq);
}

static void get(struct hist_db *db, int64_t client, const char *key, const char *val,
                int64_t mod_rev, int64_t call, int64_t ret, int64_t rev)
{
    struct hist_op op = t_op_row(client, "get", key, val, call, ret, HIST_STATUS_OK);
    op.node_id = 2;
    op.request = "{\"key\":\"k\"}";
    op.revision = rev;
    op.mod_rev = mod_rev;
    op.create_rev = 2;
    op.version = 1;
    CHECK(hist_op_add(db, &op, NULL) == FL_OK);
}

static void watch(struct hist_db *db)
{
    struct hist_watch w = t_watch_row(1, 3, "k", 1, 1 * FL_MS);
    CHECK(hist_watch_open(db, &w) == FL_OK);
    struct hist_watch_event ev = t_event_row(1, 1, "put", "k", "1");
    ev.create_rev = 2;
    ev.mod_rev = 2;
    ev.version = 1;
    ev.revision = 2;
    ev.delivered_ns = 15 * FL_MS;
    CHECK(hist_watch_event_add(db, &ev) == FL_OK);
    /* The put at revision 3 is never delivered, yet the watch reports reaching 3. */
    ev = t_event_row(1, 2, "progress", NULL, NULL);
    ev.revision = 3;
    ev.delivered_ns = 60 * FL_MS;
    CHECK(hist_watch_event_add(db, &ev) == FL_OK);
}

/* Records one failing run with hostile content into path. */
static void record_hostile(const char *path)
{
    struct hist_db *db = NULL;
    char err[256];
    CHECK(hist_open(path, HIST_OPEN_WRITE, &db, err, sizeof err) == FL_OK);
    if (!db)
        return;
    int64_t id = 0;
    CHECK(hist_run_begin(db, "scen<&>'x'.lua", 7, "{\"bugs\":[\"mvcc_x\"],\"unsafe_lua\":false}",
                         NULL, &id) == FL_OK);
    put(db, 1, "k", 1, "1", 1, 10 * FL_MS, 12 * FL_MS, 2, HIST_STATUS_OK);
    put(db, 1, "k", 1, "2", 1, 20 * FL_MS, 22 * FL_MS, 3, HIST_STATUS_OK);
    get(db, 2, "k", "1", 2, 40 * FL_MS, 42 * FL_MS, 3); /* stale: k is "2" since rev 3 */
    static const char evil_key[] = "<script>alert(1)</script>";
    static const uint8_t bin[] = {'a', 0x00, 0xff, '<', 'b', '>', 0xfe};
    put(db, 1, evil_key, strlen(evil_key), bin, sizeof bin, 50 * FL_MS, 55 * FL_MS, 4,
        HIST_STATUS_OK);
    put(db, 2, bin, sizeof bin, "v", 1, 56 * FL_MS, 58 * FL_MS, 5, HIST_STATUS_FAIL);
    put(db, 2, "z", 1, "v", 1, 70 * FL_MS, HIST_NULL, 0, HIST_STATUS_UNKNOWN);
    watch(db);
    CHECK(hist_fault_add(db, 30 * FL_MS, "partition", "n1|n2,n3", "{\"oneway\":false}") == FL_OK);
    CHECK(hist_fault_add(db, 45 * FL_MS, "heal", "*", NULL) == FL_OK);
    CHECK(hist_fault_add(db, 60 * FL_MS, "kill", "n2", NULL) == FL_OK);
    CHECK(hist_fault_add(db, 80 * FL_MS, "restart", "n2", NULL) == FL_OK);
    CHECK(hist_node_event_add(db, 5 * FL_MS, 1, "campaign", 2, "<i>campaign</i>") == FL_OK);
    CHECK(hist_node_event_add(db, 6 * FL_MS, 1, "leader", 2, "elected") == FL_OK);
    CHECK(hist_node_event_add(db, 6 * FL_MS, 3, "term", 2, "term 1 -> 2") == FL_OK);
    CHECK(hist_check_add(db, "expect", "fail", 0,
                         "{\"message\":\"<b>no</b> \\u0000 stall\",\"observed\":{\"x\":1},"
                         "\"at_ns\":70000000,\"line\":12}") == FL_OK);
    CHECK(hist_check_add(db, "expect", "pass", 0, "{\"message\":\"fine\",\"line\":3}") == FL_OK);
    CHECK(hist_flush(db) == FL_OK);
    struct chk_result res;
    struct fl_buf e;
    fl_buf_init(&e);
    int64_t ms = 0;
    CHECK(hist_check_run(db, id, NULL, &res, &ms, &e) == FL_OK);
    CHECK(res.lin.verdict == CHK_FAIL);
    CHECK(res.watch.verdict == CHK_FAIL);
    CHECK(hist_checks_store(db, NULL, &res, ms) == FL_OK);
    chk_result_close(&res);
    fl_buf_close(&e);
    CHECK(hist_run_end(db, 100 * FL_MS, 5, "0123456789abcdef", "fail") == FL_OK);
    CHECK(hist_close(db) == FL_OK);
}

static void test_hostile(const char *db, const char *dir)
{
    char err[512] = "";
    int rc = rpt_write_dir(db, 0, dir, NULL, err, sizeof err);
    CHECK_EQ_INT(rc, FL_OK);
    if (rc)
        fprintf(stderr, "%s\n", err);
    char *html = slurp(dir, "index.html", NULL);
    CHECK(html != NULL);
    if (!html)
        return;
    CHECK(strstr(html, "<svg") != NULL);
    CHECK(strstr(html, "<g id=\"plot\"") != NULL && strstr(html, "clipPath") != NULL);
    CHECK(strstr(html, "<script>alert(1)") == NULL);
    CHECK(strstr(html, "&lt;script&gt;alert(1)&lt;/script&gt;") != NULL);
    CHECK(strstr(html, "a\\x00\\xff&lt;b&gt;\\xfe") != NULL); /* the binary key */
    CHECK(strstr(html, "<b>no</b>") == NULL);                 /* expect message escaped */
    CHECK(strstr(html, "&lt;b&gt;no&lt;/b&gt; \\x00 stall") != NULL);
    CHECK(strstr(html, "<i>campaign") == NULL); /* node event detail */
    CHECK(strstr(html, "scen&lt;&amp;&gt;&#39;x&#39;.lua") != NULL);
    CHECK(strstr(html, "class=\"op ok hl") != NULL); /* violating ops outlined */
    CHECK(strstr(html, "Longest linearizable prefix") != NULL);
    CHECK(strstr(html, "Operations that cannot be ordered") != NULL);
    CHECK(strstr(html, "reliable") != NULL);     /* watch guarantee named */
    CHECK(strstr(html, "--bug mvcc_x") != NULL); /* replay command */
    CHECK(strstr(html, "faultline run ") != NULL);
    CHECK(strstr(html, "class=\"fs\"") != NULL); /* a shaded fault interval */
    CHECK(strstr(html, "class=\"rl\"") != NULL); /* a leader segment */
    CHECK(strstr(html, "class=\"rd\"") != NULL); /* n2 down while killed */
    CHECK(strstr(html, "http://") == NULL || strstr(html, "src=\"http") == NULL);
    free(html);

    char *junit = slurp(dir, "junit.xml", NULL);
    CHECK(junit && strstr(junit, "<failure message=\"") != NULL);
    CHECK(junit && strstr(junit, "classname=\"scen&lt;&amp;&gt;&#39;x&#39;.lua\"") != NULL);
    CHECK(junit && strstr(junit, "name=\"seed 7\"") != NULL);
    free(junit);

    char *sj = slurp(dir, "summary.json", NULL);
    json_t *s = sj ? json_loads(sj, JSON_ALLOW_NUL, NULL) : NULL;
    CHECK(s != NULL);
    CHECK_EQ_STR(json_string_value(json_object_get(s, "verdict")), "fail");
    CHECK_EQ_INT(json_integer_value(json_object_get(s, "seed")), 7);
    CHECK_EQ_INT(json_integer_value(json_object_get(json_object_get(s, "ops"), "total")), 6);
    json_t *checks = json_object_get(s, "checks");
    CHECK_EQ_STR(
        json_string_value(json_object_get(json_object_get(checks, "linearizability"), "verdict")),
        "fail");
    CHECK_EQ_INT(json_integer_value(json_object_get(json_object_get(checks, "expect"), "failed")),
                 1);
    CHECK_EQ_INT(json_array_size(json_object_get(s, "clients")), 2);
    CHECK_EQ_INT(json_array_size(json_object_get(s, "faults")), 4);
    CHECK_EQ_INT(json_array_size(json_object_get(s, "leaders")), 1);
    json_decref(s);
    free(sj);

    char *md = slurp(dir, "summary.md", NULL);
    CHECK(md && strstr(md, "1 fail") != NULL);
    CHECK(md && strstr(md, "expect: ") != NULL); /* the first violation is the failed expect */
    free(md);

    /* The first violation is the earliest failing check row: the expect. */
    struct hist_db *h = NULL;
    char fv[512];
    CHECK(hist_open(db, HIST_OPEN_READONLY, &h, err, sizeof err) == FL_OK);
    CHECK(rpt_first_violation(h, 1, fv, sizeof fv) == FL_OK);
    CHECK(strncmp(fv, "expect: ", 8) == 0);
    hist_close(h);
}

static void test_python(const char *dir)
{
    if (system("python3 -c 'import html.parser, xml.etree.ElementTree' >/dev/null 2>&1") != 0) {
        fprintf(stderr, "python3 missing: HTML/XML parse check skipped\n");
        return;
    }
    const char *src = getenv("FL_SRC");
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "python3 %s/tests/unit/reports/check_report.py %s", src ? src : ".",
             dir);
    CHECK_EQ_INT(system(cmd), 0);
}

/* The timeline's zoom/pan script, under node when it exists. */
static void test_js(const char *dir)
{
    if (system("node --version >/dev/null 2>&1") != 0) {
        fprintf(stderr, "node missing: timeline script check skipped\n");
        return;
    }
    const char *src = getenv("FL_SRC");
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "node %s/tests/unit/reports/check_js.js %s/index.html",
             src ? src : ".", dir);
    CHECK_EQ_INT(system(cmd), 0);
}

static void record_large(const char *path, int n_ops)
{
    struct hist_db *db = NULL;
    char err[256];
    CHECK(hist_open(path, HIST_OPEN_WRITE, &db, err, sizeof err) == FL_OK);
    if (!db)
        return;
    hist_set_batch_rows(db, 50000);
    CHECK(hist_run_begin(db, "big.lua", 1, "{\"bugs\":[]}", NULL, NULL) == FL_OK);
    for (int i = 0; i < n_ops; i++) {
        char key[16];
        snprintf(key, sizeof key, "key%d", i % 1000);
        int64_t call = (int64_t)i * FL_MS / 2;
        put(db, 1 + i % 8, key, strlen(key), "value", 5, call, call + 3 * FL_MS, i + 2,
            i % 97 == 0 ? HIST_STATUS_FAIL : HIST_STATUS_OK);
    }
    CHECK(hist_fault_add(db, 10 * FL_S, "kill", "n1", NULL) == FL_OK);
    CHECK(hist_fault_add(db, 20 * FL_S, "restart", "n1", NULL) == FL_OK);
    CHECK(hist_check_add(db, "linearizability", "pass", 1, "{\"verdict\":\"pass\"}") == FL_OK);
    CHECK(hist_run_end(db, (int64_t)n_ops * FL_MS / 2, 100, "00000000000000aa", "pass") == FL_OK);
    CHECK(hist_close(db) == FL_OK);
}

static void test_large(const char *db, const char *dir)
{
    char err[512] = "";
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    CHECK_EQ_INT(rpt_write_dir(db, 1, dir, NULL, err, sizeof err), FL_OK);
    clock_gettime(CLOCK_MONOTONIC, &b);
    size_t len = 0;
    char *html = slurp(dir, "index.html", &len);
    CHECK(html && strstr(html, "calls per pixel column") != NULL);
    CHECK(len < 8u * 1024 * 1024);
    CHECK(html && strstr(html, "2000 of 100000 operations") != NULL);
    fprintf(stderr, "100000-op report: %zu bytes in %.2f s (not asserted)\n", len,
            (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9);
    free(html);
}

static void test_multi_and_errors(const char *db1, const char *db2)
{
    char err[512] = "", dir[512];
    snprintf(dir, sizeof dir, "%s/multi", tmp);
    const char *both[] = {db1, db2};
    CHECK_EQ_INT(rpt_write_report(both, 2, 0, dir, err, sizeof err), FL_OK);
    char *idx = slurp(dir, "index.html", NULL);
    CHECK(idx && strstr(idx, "href=\"run-1-1.html\"") && strstr(idx, "href=\"run-2-1.html\""));
    free(idx);
    char *p1 = slurp(dir, "run-1-1.html", NULL), *p2 = slurp(dir, "run-2-1.html", NULL);
    CHECK(p1 && p2 && strstr(p1, "all runs") != NULL);
    free(p1);
    free(p2);
    char *sj = slurp(dir, "summary.json", NULL);
    json_t *s = sj ? json_loads(sj, JSON_ALLOW_NUL, NULL) : NULL;
    CHECK_EQ_INT(json_array_size(json_object_get(s, "runs")), 2);
    CHECK_EQ_INT(json_integer_value(json_object_get(json_object_get(s, "totals"), "fail")), 1);
    json_decref(s);
    free(sj);
    char *junit = slurp(dir, "junit.xml", NULL);
    CHECK(junit && strstr(junit, "tests=\"2\" failures=\"1\"") != NULL);
    free(junit);

    CHECK_EQ_INT(rpt_write_report(both, 2, 99, dir, err, sizeof err), FL_ENOENT);
    CHECK(strstr(err, "no run 99") != NULL);
    const char *missing[] = {"/nonexistent/x.db"};
    CHECK(rpt_write_report(missing, 1, 0, dir, err, sizeof err) != FL_OK);
    CHECK(strstr(err, "/nonexistent/x.db") != NULL);
    char notdb[512];
    snprintf(notdb, sizeof notdb, "%s/not.db", tmp);
    FILE *f = fopen(notdb, "w");
    fputs("this is not a database, just text that is long enough to be looked at\n", f);
    fclose(f);
    const char *bad[] = {notdb};
    CHECK(rpt_write_report(bad, 1, 0, dir, err, sizeof err) != FL_OK);
    CHECK(strstr(err, "not.db") != NULL);
    CHECK_EQ_INT(rpt_write_dir(db1, 0, "/dev/null/sub", NULL, err, sizeof err), FL_EIO);
    CHECK(strstr(err, "/dev/null/sub") != NULL);
}

/* run --report: the live summary is written as summary.json and its client figures
 * (balancer, connections) are shown instead of the ones derived from the ops. */
static void test_live(const char *db)
{
    char err[512] = "", dir[512];
    snprintf(dir, sizeof dir, "%s/live", tmp);
    json_t *live = json_loads("{\"scenario\":\"x\",\"seed\":7,\"verdict\":\"fail\","
                              "\"clients\":[{\"id\":1,\"balancer\":\"pick_<first>\","
                              "\"availability\":0.25,\"connections_opened\":3,"
                              "\"failover\":[{\"fault_ns\":30000000,\"failover_ms\":12}]}]}",
                              0, NULL);
    CHECK(live != NULL);
    CHECK_EQ_INT(rpt_write_dir(db, 1, dir, live, err, sizeof err), FL_OK);
    char *html = slurp(dir, "index.html", NULL);
    CHECK(html && strstr(html, "pick_&lt;first&gt;") != NULL);
    CHECK(html && strstr(html, "0.2500") != NULL);
    CHECK(html && strstr(html, "Derived from the recorded operations") == NULL);
    free(html);
    char *sj = slurp(dir, "summary.json", NULL);
    json_t *s = sj ? json_loads(sj, 0, NULL) : NULL;
    CHECK(s && json_equal(s, live));
    json_decref(s);
    free(sj);
    json_decref(live);
}

static void test_escape(void)
{
    struct fl_buf b;
    fl_buf_init(&b);
    rpt_html_escape(&b, "a<&>\"'\\\x01\xc3\xa9\xed\xa0\x80", 13);
    CHECK_EQ_STR(fl_buf_cstr(&b), "a&lt;&amp;&gt;&quot;&#39;\\\\x01\xc3\xa9\\xed\\xa0\\x80");
    fl_buf_reset(&b);
    rpt_xml_escape(&b, "x\ny\x00\xef\xbf\xbf", 7);
    CHECK_EQ_STR(fl_buf_cstr(&b), "x&#10;y\\x00\\xef\\xbf\\xbf");
    fl_buf_reset(&b);
    rpt_bytes_text(&b, "a\\x00\x00", 6);
    CHECK_EQ_STR(fl_buf_cstr(&b), "a\\\\x00\\x00"); /* typed \x00 vs a NUL byte */
    fl_buf_close(&b);
    char *r = rpt_replay_command("my scen.lua", 42, "{\"bugs\":[\"a\",\"b\"]}");
    CHECK_EQ_STR(r, "faultline run 'my scen.lua' --seed 42 --bug a --bug b");
    free(r);
}

int main(void)
{
    snprintf(tmp, sizeof tmp, "/tmp/fl-report-test-XXXXXX");
    if (!fl_tmpdir_make(tmp))
        return 1;
    char db1[512], db2[512], d1[512], d2[512];
    snprintf(db1, sizeof db1, "%s/hostile.db", tmp);
    snprintf(db2, sizeof db2, "%s/big.db", tmp);
    snprintf(d1, sizeof d1, "%s/hostile", tmp);
    snprintf(d2, sizeof d2, "%s/big", tmp);
    FL_TEST(test_escape);
    record_hostile(db1);
    test_hostile(db1, d1);
    test_python(d1);
    test_js(d1);
    test_live(db1);
    record_large(db2, 100000);
    test_large(db2, d2);
    test_python(d2);
    test_multi_and_errors(db1, db2);
    if (fl_test_failed == 0 && !getenv("FL_REPORT_KEEP"))
        fl_tmpdir_remove(tmp);
    return fl_test_end();
}
