/*
 * test_sweep.c: the parts of harness/sweep that need no worker process: seed ranges
 * and shards (every seed of a range in exactly one shard, for many ranges and shard
 * counts), and the merge of per-worker databases (fresh run_ids in source order, every
 * table's rows following their run, error rows for runs that left none).
 */
#include <sqlite3.h>
#include "fl_test.h"
#include "hist_rows.h"
#include "fl_tmpdir.h"

#include "harness/history/history.h"
#include "harness/sweep/sweep.h"

#include <unistd.h>

static void test_parse(void)
{
    uint64_t a = 0, b = 0;
    int k = 0, n = 0;
    CHECK(sweep_parse_seeds("1..100", &a, &b) && a == 1 && b == 100);
    CHECK(sweep_parse_seeds("7", &a, &b) && a == 7 && b == 7);
    CHECK(sweep_parse_seeds("0..0", &a, &b) && a == 0 && b == 0);
    CHECK(sweep_parse_seeds("18446744073709551615..18446744073709551615", &a, &b) &&
          a == UINT64_MAX);
    CHECK(!sweep_parse_seeds("5..1", &a, &b));
    CHECK(!sweep_parse_seeds("1..", &a, &b));
    CHECK(!sweep_parse_seeds("..3", &a, &b));
    CHECK(!sweep_parse_seeds("-1..3", &a, &b));
    CHECK(!sweep_parse_seeds("1..2x", &a, &b));
    CHECK(!sweep_parse_seeds("18446744073709551616", &a, &b));
    CHECK(sweep_parse_shard("1/1", &k, &n) && k == 1 && n == 1);
    CHECK(sweep_parse_shard("3/8", &k, &n) && k == 3 && n == 8);
    CHECK(!sweep_parse_shard("0/3", &k, &n));
    CHECK(!sweep_parse_shard("4/3", &k, &n));
    CHECK(!sweep_parse_shard("1/0", &k, &n));
    CHECK(!sweep_parse_shard("1", &k, &n));
    CHECK(!sweep_parse_shard("a/b", &k, &n));
}

static void test_shards(void)
{
    static const uint64_t firsts[] = {0, 1, 5, 1000};
    static const uint64_t spans[] = {0, 1, 2, 9, 10, 99, 100};
    for (size_t f = 0; f < FL_ARRAY_LEN(firsts); f++) {
        for (size_t s = 0; s < FL_ARRAY_LEN(spans); s++) {
            uint64_t first = firsts[f], last = first + spans[s];
            for (int n = 1; n <= 13; n++) {
                int *seen = calloc(spans[s] + 1, sizeof *seen);
                bool ordered = true, in_shard = true;
                for (int k = 1; k <= n; k++) {
                    size_t c = 0;
                    uint64_t *v = sweep_shard_seeds(first, last, k, n, &c);
                    for (size_t i = 0; i < c; i++) {
                        in_shard &= v[i] >= first && v[i] <= last &&
                                    (v[i] - first) % (uint64_t)n == (uint64_t)(k - 1);
                        ordered &= i == 0 || v[i] > v[i - 1];
                        if (v[i] >= first && v[i] <= last)
                            seen[v[i] - first]++;
                    }
                    free(v);
                }
                bool once = true;
                for (uint64_t i = 0; i <= spans[s]; i++)
                    once &= seen[i] == 1;
                CHECK(once && ordered && in_shard);
                free(seen);
            }
        }
    }
    size_t c = 0;
    uint64_t *v = sweep_shard_seeds(UINT64_MAX - 2, UINT64_MAX, 2, 2, &c);
    CHECK_EQ_INT(c, 1);
    CHECK(v[0] == UINT64_MAX - 1);
    free(v);
}

/* One run with an op, a watch event, a fault, a node event and a check. */
static void record(const char *path, uint64_t seed, int ops)
{
    struct hist_db *db = NULL;
    char err[256];
    CHECK(hist_open(path, HIST_OPEN_WRITE, &db, err, sizeof err) == FL_OK);
    CHECK(hist_run_begin(db, "s.lua", seed, "{\"bugs\":[]}", NULL, NULL) == FL_OK);
    for (int i = 0; i < ops; i++) {
        struct hist_op op = t_op_row(1, "put", "k", NULL, i * 10, i * 10 + 5, HIST_STATUS_OK);
        CHECK(hist_op_add(db, &op, NULL) == FL_OK);
    }
    struct hist_watch w = t_watch_row(1, 1, "k", HIST_NULL, HIST_NULL);
    CHECK(hist_watch_open(db, &w) == FL_OK);
    struct hist_watch_event ev = t_event_row(1, HIST_NULL, "put", "k", NULL);
    CHECK(hist_watch_event_add(db, &ev) == FL_OK);
    CHECK(hist_fault_add(db, 1, "kill", "n1", NULL) == FL_OK);
    CHECK(hist_node_event_add(db, 2, 1, "leader", 2, NULL) == FL_OK);
    CHECK(hist_check_add(db, "linearizability", "pass", 0, "{}") == FL_OK);
    CHECK(hist_run_end(db, 100, 1, "00000000000000ff", "pass") == FL_OK);
    CHECK(hist_close(db) == FL_OK);
}

static int64_t count_ops(struct hist_db *db, int64_t run_id)
{
    struct hist_op_counts c;
    return hist_ops_count(db, run_id, &c) == FL_OK ? c.total : -1;
}

static int count_fault(void *arg, const struct hist_fault *f)
{
    (void)f;
    (*(int *)arg)++;
    return 0;
}
static int count_event(void *arg, const struct hist_watch_event *e)
{
    (void)e;
    (*(int *)arg)++;
    return 0;
}
static int count_check(void *arg, const struct hist_check *c)
{
    (void)c;
    (*(int *)arg)++;
    return 0;
}

static char dir[] = "/tmp/fl-sweep-test-XXXXXX";

static void test_merge(void)
{
    char a[512], b[512], dst[512], err[512];
    snprintf(a, sizeof a, "%s/a.db", dir);
    snprintf(b, sizeof b, "%s/b.db", dir);
    snprintf(dst, sizeof dst, "%s/dst.db", dir);
    record(a, 11, 3);
    record(a, 12, 4);
    record(b, 13, 5);
    int64_t first = 0;
    int count = 0;
    CHECK_EQ_INT(sweep_db_merge(dst, b, &first, &count, err, sizeof err), FL_OK);
    CHECK_EQ_INT(first, 1);
    CHECK_EQ_INT(count, 1);
    CHECK_EQ_INT(sweep_db_merge(dst, a, &first, &count, err, sizeof err), FL_OK);
    CHECK_EQ_INT(first, 2);
    CHECK_EQ_INT(count, 2);
    int64_t eid = 0;
    const char *bugs[] = {"x"};
    CHECK_EQ_INT(sweep_db_add_error(dst, "s.lua", 14, bugs, 1, "hung", &eid, err, sizeof err),
                 FL_OK);
    CHECK_EQ_INT(eid, 4);
    CHECK_EQ_INT(sweep_db_mark_error(dst, 2, "crashed late", err, sizeof err), FL_OK);
    char missing[600];
    snprintf(missing, sizeof missing, "%s/none.db", dir);
    CHECK(sweep_db_merge(dst, missing, NULL, NULL, err, sizeof err) != FL_OK);
    CHECK(access(missing, F_OK) != 0); /* and it was not created */
    /* another application's database is refused by name */
    char foreign[600];
    snprintf(foreign, sizeof foreign, "%s/foreign.db", dir);
    sqlite3 *f = NULL;
    CHECK(sqlite3_open(foreign, &f) == SQLITE_OK);
    CHECK(sqlite3_exec(f, "PRAGMA application_id = 7; CREATE TABLE runs(x)", NULL, NULL, NULL) ==
          SQLITE_OK);
    sqlite3_close(f);
    CHECK_EQ_INT(sweep_db_merge(dst, foreign, NULL, NULL, err, sizeof err), FL_EINVAL);
    CHECK(strstr(err, "not a faultline history (application_id 7)") != NULL);

    struct hist_db *db = NULL;
    CHECK(hist_open(dst, HIST_OPEN_READONLY, &db, err, sizeof err) == FL_OK);
    static const uint64_t seeds[] = {13, 11, 12, 14};
    static const char *const verdicts[] = {"pass", "error", "pass", "error"};
    static const int64_t ops[] = {5, 3, 4, 0};
    for (int i = 0; i < 4; i++) {
        struct hist_run_row r;
        CHECK(hist_run_get(db, i + 1, &r) == FL_OK);
        CHECK(r.seed == seeds[i]);
        CHECK_EQ_STR(r.verdict, verdicts[i]);
        CHECK_EQ_INT(count_ops(db, i + 1), ops[i]);
        int n = 0;
        CHECK(hist_faults_each(db, i + 1, count_fault, &n) == FL_OK);
        CHECK_EQ_INT(n, i < 3 ? 1 : 0);
        n = 0;
        CHECK(hist_watch_events_each(db, i + 1, count_event, &n) == FL_OK);
        CHECK_EQ_INT(n, i < 3 ? 1 : 0);
        n = 0;
        CHECK(hist_checks_each(db, i + 1, count_check, &n) == FL_OK);
        CHECK_EQ_INT(n, i == 1 ? 2 : 1); /* run 2: its own check plus the worker's */
        if (i == 3)
            CHECK(r.options && strstr(r.options, "\"x\"") != NULL);
        hist_run_row_free(&r);
    }
    hist_close(db);
}

static void exec_on(const char *path, const char *sql)
{
    sqlite3 *s = NULL;
    CHECK(sqlite3_open(path, &s) == SQLITE_OK);
    CHECK(sqlite3_exec(s, sql, NULL, NULL, NULL) == SQLITE_OK);
    sqlite3_close(s);
}

/* A history database with no run, and sql run on it. */
static void create_with(const char *path, const char *sql)
{
    struct hist_db *db = NULL;
    char err[256];
    CHECK(hist_open(path, HIST_OPEN_WRITE, &db, err, sizeof err) == FL_OK);
    CHECK(hist_close(db) == FL_OK);
    exec_on(path, sql);
}

/* runs.extra of run 1 in path, "" when the column is missing, NULL when unreadable. */
static char *extra_of(const char *path)
{
    sqlite3 *s = NULL;
    sqlite3_stmt *st = NULL;
    char *v = NULL;
    CHECK(sqlite3_open(path, &s) == SQLITE_OK);
    if (sqlite3_prepare_v2(s, "SELECT extra FROM runs WHERE run_id = 1", -1, &st, NULL) ==
        SQLITE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
            v = strdup((const char *)sqlite3_column_text(st, 0));
    } else {
        v = strdup("");
    }
    sqlite3_finalize(st);
    sqlite3_close(s);
    return v;
}

/* Merges into two databases one after the other in one process, from a source with a
 * column (runs.extra) one of them has and the other has not: the columns copied are
 * those of the database merged into, not those of the one before (the column lists
 * once lived in a global keyed by the connection pointer, which the second database's
 * connection, allocated where the first one's was freed, hit). Both orders. */
static void test_merge_two_targets(void)
{
    char src[512], with[512], without[512], err[512];
    snprintf(src, sizeof src, "%s/extra-src.db", dir);
    record(src, 21, 2);
    exec_on(src, "ALTER TABLE runs ADD COLUMN extra TEXT; UPDATE runs SET extra = 'e'");
    for (int order = 0; order < 2; order++) {
        snprintf(with, sizeof with, "%s/with-%d.db", dir, order);
        snprintf(without, sizeof without, "%s/without-%d.db", dir, order);
        create_with(with, "ALTER TABLE runs ADD COLUMN extra TEXT");
        for (int k = 0; k < 2; k++) {
            const char *dst = (k == 0) == (order == 0) ? with : without;
            int count = 0;
            int rc = sweep_db_merge(dst, src, NULL, &count, err, sizeof err);
            if (rc)
                fprintf(stderr, "merge into %s: %s\n", dst, err);
            CHECK_EQ_INT(rc, FL_OK);
            CHECK_EQ_INT(count, 1);
        }
        char *a = extra_of(with), *b = extra_of(without);
        CHECK(a && !strcmp(a, "e")); /* the column both have was copied */
        CHECK(b && !strcmp(b, ""));  /* and not asked of the one without it */
        free(a);
        free(b);
    }
    /* one context, two sources of different schemas: the lists follow the source */
    char plain[512], dst[512];
    snprintf(plain, sizeof plain, "%s/plain-src.db", dir);
    snprintf(dst, sizeof dst, "%s/two-src.db", dir);
    record(plain, 22, 1);
    create_with(dst, "ALTER TABLE runs ADD COLUMN extra TEXT");
    struct hist_db *db = NULL;
    CHECK(hist_open(dst, HIST_OPEN_WRITE, &db, err, sizeof err) == FL_OK);
    struct sweep_merge *mg = sweep_merge_new(db);
    int64_t first = 0;
    CHECK_EQ_INT(sweep_merge_from(mg, src, &first, NULL, err, sizeof err), FL_OK);
    CHECK_EQ_INT(sweep_merge_from(mg, plain, &first, NULL, err, sizeof err), FL_OK);
    CHECK_EQ_INT(sweep_merge_from(mg, src, &first, NULL, err, sizeof err), FL_OK);
    CHECK_EQ_INT(first, 3);
    sweep_merge_free(mg);
    CHECK(hist_close(db) == FL_OK);
    sqlite3 *s = NULL;
    sqlite3_stmt *st = NULL;
    CHECK(sqlite3_open(dst, &s) == SQLITE_OK);
    CHECK(sqlite3_prepare_v2(s,
                             "SELECT group_concat(ifnull(extra, '-'), ',') FROM "
                             "(SELECT extra FROM runs ORDER BY run_id)",
                             -1, &st, NULL) == SQLITE_OK);
    CHECK(sqlite3_step(st) == SQLITE_ROW);
    CHECK_EQ_STR((const char *)sqlite3_column_text(st, 0), "e,-,e");
    sqlite3_finalize(st);
    sqlite3_close(s);
}

int main(void)
{
    static const struct fl_case cases[] = {FL_CASE(test_parse), FL_CASE(test_shards),
                                           FL_CASE(test_merge), FL_CASE(test_merge_two_targets)};
    return fl_test_main_in(dir, cases, FL_NCASES(cases));
}
