/*
 * test_history.c: the history recorder and reader: schema of DESIGN §3.6 with every
 * column, batching (many rows, all present after the run ends, even with small
 * batches), the digest (equal rows equal, any changed column different, wall-clock
 * columns ignored), BLOB keys with NUL bytes, several runs in one database, the read
 * API's ordering, and clear errors for bad paths.
 */
#include "fl_test.h"
#include "hist_rows.h"
#include "fl_tmpdir.h"

#include "harness/history/history.h"

#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmpdir[256];

static const char *tmp_path(const char *name)
{
    static char buf[4][512];
    static int slot;
    slot = (slot + 1) % 4;
    snprintf(buf[slot], sizeof buf[slot], "%s/%s", tmpdir, name);
    return buf[slot];
}

static bool has_column(sqlite3 *db, const char *table, const char *col)
{
    char sql[128];
    snprintf(sql, sizeof sql, "PRAGMA table_info(%s)", table);
    sqlite3_stmt *st = NULL;
    bool found = false;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return false;
    while (sqlite3_step(st) == SQLITE_ROW)
        if (!strcmp((const char *)sqlite3_column_text(st, 1), col))
            found = true;
    sqlite3_finalize(st);
    return found;
}

static int64_t query_i64(struct hist_db *h, const char *sql)
{
    sqlite3_stmt *st = NULL;
    int64_t v = -999;
    if (sqlite3_prepare_v2(hist_sqlite(h), sql, -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

static void test_schema(void)
{
    static const char *const cols[][16] = {
        {"runs", "run_id", "scenario", "seed", "options", "started_at", "sim_end_ns", "wall_ms",
         "digest", "verdict"},
        {"ops", "run_id", "op_id", "client_id", "node_id", "kind", "key", "range_end", "request",
         "call_ns", "return_ns", "status", "error", "revision", "response"},
        {"watches", "run_id", "watch_id", "client_id", "key", "range_end", "start_rev", "opened_ns",
         "closed_ns", "close_reason"},
        {"watch_events", "run_id", "watch_id", "seq", "response_seq", "kind", "key", "value",
         "create_rev", "mod_rev", "version", "prev_value", "delivered_ns"},
        {"faults", "run_id", "at_ns", "kind", "target", "detail"},
        {"node_events", "run_id", "at_ns", "node_id", "kind", "term", "detail"},
        {"checks", "run_id", "checker", "verdict", "elapsed_ms", "detail"},
    };
    struct hist_db *h = NULL;
    char err[256];
    CHECK_EQ_INT(hist_open(tmp_path("schema.db"), HIST_OPEN_WRITE, &h, err, sizeof err), FL_OK);
    if (!h)
        return;
    for (size_t t = 0; t < FL_ARRAY_LEN(cols); t++)
        for (size_t c = 1; c < 16 && cols[t][c]; c++)
            if (!has_column(hist_sqlite(h), cols[t][0], cols[t][c])) {
                fprintf(stderr, "missing %s.%s\n", cols[t][0], cols[t][c]);
                CHECK(false);
            }
    CHECK(has_column(hist_sqlite(h), "ops", "value"));
    CHECK(has_column(hist_sqlite(h), "watch_events", "prev_kv"));
    CHECK_EQ_INT(query_i64(h, "PRAGMA user_version"), HIST_SCHEMA_VERSION);
    sqlite3_stmt *st = NULL;
    sqlite3_prepare_v2(hist_sqlite(h), "PRAGMA journal_mode", -1, &st, NULL);
    CHECK(sqlite3_step(st) == SQLITE_ROW);
    CHECK_EQ_STR((const char *)sqlite3_column_text(st, 0), "wal");
    sqlite3_finalize(st);
    CHECK_EQ_INT(hist_close(h), FL_OK);
    /* Reopening an existing history keeps it (CREATE ... IF NOT EXISTS). */
    CHECK_EQ_INT(hist_open(tmp_path("schema.db"), HIST_OPEN_WRITE, &h, err, sizeof err), FL_OK);
    hist_close(h);
    CHECK_EQ_INT(hist_open(tmp_path("schema.db"), HIST_OPEN_READONLY, &h, err, sizeof err), FL_OK);
    hist_close(h);
}

/* Records one of everything into the current run of h, with a variation knob. */
static void record_sample(struct hist_db *h, int variant, int64_t elapsed_ms)
{
    static const char key[] = {'k', 0, 'x'};
    struct hist_op op;
    hist_op_init(&op);
    op.client_id = 1;
    op.node_id = 2;
    op.kind = "put";
    op.key = key;
    op.key_len = sizeof key;
    op.value = "v1";
    op.value_len = 2;
    op.request = "{\"op\":\"put\"}";
    op.call_ns = 100;
    op.return_ns = variant == 1 ? 251 : 250;
    op.status = HIST_STATUS_OK;
    op.revision = 5;
    CHECK_EQ_INT(hist_op_add(h, &op, NULL), FL_OK);
    op.kind = "get";
    op.key = variant == 2 ? "k\0y" : key;
    op.value = NULL;
    op.return_ns = HIST_NULL;
    op.status = HIST_STATUS_UNKNOWN;
    CHECK_EQ_INT(hist_op_add(h, &op, NULL), FL_OK);

    struct hist_watch w = t_watch_row(1, 3, "a", 1, 10);
    w.range_end = "b";
    w.range_end_len = 1;
    w.prev_kv = 1;
    CHECK_EQ_INT(hist_watch_open(h, &w), FL_OK);
    struct hist_watch_event ev = t_event_row(1, HIST_NULL, "put", "a", "1");
    ev.response_seq = 1;
    ev.mod_rev = ev.create_rev = 5;
    ev.version = 1;
    ev.prev_kv = variant == 3 ? 1 : 0;
    ev.delivered_ns = 260;
    CHECK_EQ_INT(hist_watch_event_add(h, &ev), FL_OK);
    CHECK_EQ_INT(hist_watch_close(h, 1, 900, "run_end"), FL_OK);
    CHECK_EQ_INT(hist_fault_add(h, 50, "partition", "n1|n2,n3", variant == 4 ? "{}" : NULL), FL_OK);
    CHECK_EQ_INT(hist_node_event_add(h, 20, 1, "leader", variant == 5 ? 3 : 2, NULL), FL_OK);
    CHECK_EQ_INT(hist_check_add(h, "linearizability", variant == 6 ? "fail" : "pass", elapsed_ms,
                                "{\"ops\":2}"),
                 FL_OK);
}

static uint64_t digest_of(const char *name, int variant, int64_t elapsed_ms)
{
    struct hist_db *h = NULL;
    struct fl_digest d;
    char err[256];
    fl_digest_init(&d);
    CHECK_EQ_INT(hist_open(tmp_path(name), HIST_OPEN_WRITE, &h, err, sizeof err), FL_OK);
    CHECK_EQ_INT(hist_run_begin(h, "digest.lua", 7, NULL, &d, NULL), FL_OK);
    record_sample(h, variant, elapsed_ms);
    uint64_t v = fl_digest_value(&d);
    char hex[17];
    fl_digest_hex(v, hex);
    CHECK_EQ_INT(hist_run_end(h, 1000, elapsed_ms, hex, "pass"), FL_OK);
    CHECK_EQ_INT(hist_close(h), FL_OK);
    fl_digest_close(&d);
    return v;
}

static void test_digest(void)
{
    /* Same rows: same digest, in another database that already holds runs, and with
     * different wall-clock fields. */
    uint64_t base = digest_of("digest_a.db", 0, 10);
    CHECK(base == digest_of("digest_a.db", 0, 99));
    CHECK(base == digest_of("digest_b.db", 0, 10));
    for (int variant = 1; variant <= 6; variant++) {
        char name[32];
        snprintf(name, sizeof name, "digest_v%d.db", variant);
        uint64_t v = digest_of(name, variant, 10);
        if (v == base)
            fprintf(stderr, "variant %d did not change the digest\n", variant);
        CHECK(v != base);
    }
}

struct seen {
    int watches, events, faults, checks;
    bool ok;
};

static int see_watch(void *arg, const struct hist_watch *w)
{
    struct seen *s = arg;
    s->watches++;
    s->ok &= w->watch_id == 1 && w->client_id == 3 && w->key_len == 1 && w->range_end_len == 1 &&
             w->start_rev == 1 && w->opened_ns == 10 && w->closed_ns == 900 && w->close_reason &&
             !strcmp(w->close_reason, "run_end") && w->prev_kv == 1 && w->node_id == HIST_NULL &&
             w->filters == NULL;
    return 0;
}

static int see_event(void *arg, const struct hist_watch_event *ev)
{
    struct seen *s = arg;
    s->events++;
    s->ok &= ev->watch_id == 1 && ev->seq == 1 && ev->response_seq == 1 && ev->kind &&
             !strcmp(ev->kind, "put") && ev->value_len == 1 && ev->mod_rev == 5 &&
             ev->create_rev == 5 && ev->version == 1 && ev->prev_kv == 0 &&
             ev->prev_value == NULL && ev->delivered_ns == 260 && ev->revision == HIST_NULL;
    return 0;
}

static int see_fault(void *arg, const struct hist_fault *f)
{
    struct seen *s = arg;
    s->faults++;
    s->ok &= f->at_ns == 50 && f->seq == 1 && !strcmp(f->kind, "partition") &&
             !strcmp(f->target, "n1|n2,n3") && f->detail == NULL;
    return 0;
}

static int see_check(void *arg, const struct hist_check *c)
{
    struct seen *s = arg;
    s->checks++;
    s->ok &= c->seq == 1 && c->elapsed_ms == 10 && !strcmp(c->checker, "linearizability") &&
             !strcmp(c->verdict, "pass") && !strcmp(c->detail, "{\"ops\":2}");
    return 0;
}

/* Every table reads back what was written, NULLs included. */
static void test_roundtrip(void)
{
    struct hist_db *h = NULL;
    char err[256];
    int64_t run_id = 0;
    CHECK_EQ_INT(hist_open(tmp_path("round.db"), HIST_OPEN_WRITE, &h, err, sizeof err), FL_OK);
    CHECK_EQ_INT(hist_run_begin(h, "round.lua", 1, NULL, NULL, &run_id), FL_OK);
    record_sample(h, 0, 10);
    CHECK_EQ_INT(hist_check_add(h, "watch", "maybe", 0, NULL), FL_EINVAL);
    CHECK_EQ_INT(hist_run_end(h, 1, 1, NULL, "pass"), FL_OK);
    hist_close(h);
    CHECK_EQ_INT(hist_open(tmp_path("round.db"), HIST_OPEN_READONLY, &h, err, sizeof err), FL_OK);
    struct seen s = {.ok = true};
    CHECK_EQ_INT(hist_watches_each(h, run_id, see_watch, &s), FL_OK);
    CHECK_EQ_INT(hist_watch_events_each(h, run_id, see_event, &s), FL_OK);
    CHECK_EQ_INT(hist_faults_each(h, run_id, see_fault, &s), FL_OK);
    CHECK_EQ_INT(hist_checks_each(h, run_id, see_check, &s), FL_OK);
    CHECK(s.ok);
    CHECK(s.watches == 1 && s.events == 1 && s.faults == 1 && s.checks == 1);
    struct hist_op_counts c;
    CHECK_EQ_INT(hist_ops_count(h, run_id, &c), FL_OK);
    CHECK(c.total == 2 && c.ok == 1 && c.unknown == 1 && c.fail == 0);
    hist_close(h);
}

struct collect {
    int count;
    int64_t last;
    bool ordered;
    size_t key_len;
    char key[16];
};

static int count_op(void *arg, const struct hist_op *op)
{
    struct collect *c = arg;
    if (op->op_id <= c->last)
        c->ordered = false;
    c->last = op->op_id;
    c->count++;
    return 0;
}

static void test_batching(void)
{
    struct hist_db *h = NULL;
    char err[256];
    const int n = 20000;
    CHECK_EQ_INT(hist_open(tmp_path("batch.db"), HIST_OPEN_WRITE, &h, err, sizeof err), FL_OK);
    hist_set_batch_rows(h, 333); /* not a divisor of n: the last batch is partial */
    int64_t run_id = 0;
    CHECK_EQ_INT(hist_run_begin(h, "batch.lua", 1, "{\"x\":1}", NULL, &run_id), FL_OK);
    int bad = 0;
    for (int i = 0; i < n; i++) {
        struct hist_op op;
        hist_op_init(&op);
        op.client_id = i % 8;
        op.kind = i % 3 ? "put" : "get";
        op.key = &i;
        op.key_len = sizeof i;
        op.call_ns = i * 10;
        op.return_ns = i % 5 ? i * 10 + 7 : HIST_NULL;
        op.status = i % 5 ? (i % 7 ? HIST_STATUS_OK : HIST_STATUS_FAIL) : HIST_STATUS_UNKNOWN;
        int64_t id = 0;
        bad += hist_op_add(h, &op, &id) != FL_OK || id != i + 1;
    }
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(hist_run_end(h, 123, 4, "0123456789abcdef", "pass"), FL_OK);
    CHECK_EQ_INT(hist_close(h), FL_OK);

    CHECK_EQ_INT(hist_open(tmp_path("batch.db"), HIST_OPEN_READONLY, &h, err, sizeof err), FL_OK);
    struct hist_op_counts counts;
    CHECK_EQ_INT(hist_ops_count(h, run_id, &counts), FL_OK);
    int ok = 0, fail = 0, unknown = 0;
    for (int i = 0; i < n; i++)
        i % 5 ? (i % 7 ? ok++ : fail++) : unknown++;
    CHECK_EQ_INT(counts.total, n);
    CHECK_EQ_INT(counts.ok, ok);
    CHECK_EQ_INT(counts.fail, fail);
    CHECK_EQ_INT(counts.unknown, unknown);
    struct collect c = {.ordered = true};
    CHECK_EQ_INT(hist_ops_each(h, run_id, count_op, &c), FL_OK);
    CHECK_EQ_INT(c.count, n);
    CHECK(c.ordered);
    struct hist_run_row row;
    CHECK_EQ_INT(hist_run_get(h, run_id, &row), FL_OK);
    CHECK_EQ_STR(row.verdict, "pass");
    CHECK_EQ_STR(row.digest, "0123456789abcdef");
    CHECK_EQ_STR(row.options, "{\"x\":1}");
    CHECK_EQ_INT(row.sim_end_ns, 123);
    CHECK(row.started_at && strlen(row.started_at) == 20);
    hist_run_row_free(&row);
    hist_close(h);
}

static int first_key(void *arg, const struct hist_op *op)
{
    struct collect *c = arg;
    c->count++;
    if (op->key && op->key_len <= sizeof c->key) {
        memcpy(c->key, op->key, op->key_len);
        c->key_len = op->key_len;
    }
    c->last = op->range_end == NULL ? -1 : (int64_t)op->range_end_len;
    return 1; /* stop after the first */
}

static int wev_blob(void *arg, const struct hist_watch_event *ev)
{
    struct collect *c = arg;
    c->count++;
    if (ev->prev_value && ev->prev_value_len == 0 && ev->value == NULL && ev->prev_kv == 1)
        c->ordered = true;
    return 0;
}

static void test_blobs(void)
{
    struct hist_db *h = NULL;
    char err[256];
    CHECK_EQ_INT(hist_open(tmp_path("blob.db"), HIST_OPEN_WRITE, &h, err, sizeof err), FL_OK);
    int64_t run_id = 0;
    CHECK_EQ_INT(hist_run_begin(h, "blob.lua", UINT64_MAX, NULL, NULL, &run_id), FL_OK);
    static const char key[] = {0, 'a', 0, 0, (char)0xff};
    struct hist_op op;
    hist_op_init(&op);
    op.kind = "range";
    op.key = key;
    op.key_len = sizeof key;
    op.range_end = ""; /* empty range_end, distinct from NULL */
    op.range_end_len = 0;
    CHECK_EQ_INT(hist_op_add(h, &op, NULL), FL_OK);
    /* A repeated op_id is refused, and only that row: the run goes on. */
    op.op_id = 1;
    CHECK_EQ_INT(hist_op_add(h, &op, NULL), FL_EEXIST);
    CHECK_EQ_INT(hist_error(h), FL_OK);
    struct hist_watch_event ev;
    hist_watch_event_init(&ev);
    ev.watch_id = 9;
    ev.kind = "delete";
    ev.prev_kv = 1;
    ev.prev_value = "";
    ev.prev_value_len = 0;
    CHECK_EQ_INT(hist_watch_event_add(h, &ev), FL_OK);
    CHECK_EQ_INT(hist_run_end(h, 0, 0, NULL, "unknown"), FL_OK);
    struct collect c = {0};
    CHECK_EQ_INT(hist_ops_each(h, run_id, first_key, &c), 1);
    CHECK_EQ_INT(c.key_len, sizeof key);
    CHECK(memcmp(c.key, key, sizeof key) == 0);
    CHECK_EQ_INT(c.last, 0);
    c = (struct collect){0};
    CHECK_EQ_INT(hist_watch_events_each(h, run_id, wev_blob, &c), FL_OK);
    CHECK_EQ_INT(c.count, 1);
    CHECK(c.ordered);
    struct hist_run_row row;
    CHECK_EQ_INT(hist_run_get(h, run_id, &row), FL_OK);
    CHECK(row.seed == UINT64_MAX);
    CHECK(row.digest == NULL);
    hist_run_row_free(&row);

    /* Bytes in JSON: valid UTF-8 (with NUL) stays a string, other bytes go hex. */
    struct fl_buf buf;
    bool is_null = false;
    fl_buf_init(&buf);
    json_t *j = hist_json_bytes(key, sizeof key);
    CHECK(json_is_object(j));
    CHECK_EQ_INT(hist_json_bytes_get(j, &buf, &is_null), FL_OK);
    CHECK(buf.len == sizeof key && memcmp(buf.data, key, sizeof key) == 0);
    json_decref(j);
    j = hist_json_bytes("a\0b", 3);
    CHECK(json_is_string(j));
    CHECK_EQ_INT(hist_json_bytes_get(j, &buf, &is_null), FL_OK);
    CHECK(buf.len == 3 && memcmp(buf.data, "a\0b", 3) == 0);
    json_decref(j);
    j = hist_json_bytes(NULL, 0);
    CHECK_EQ_INT(hist_json_bytes_get(j, &buf, &is_null), FL_OK);
    CHECK(is_null);
    json_decref(j);
    fl_buf_close(&buf);
    hist_close(h);
}

struct order {
    int n;
    int64_t at[8];
    const char *first_kind;
};

static int node_ev(void *arg, const struct hist_node_event *e)
{
    struct order *o = arg;
    if (o->n < 8)
        o->at[o->n] = e->at_ns * 10 + e->seq;
    o->n++;
    return 0;
}

static void test_runs_and_order(void)
{
    struct hist_db *h = NULL;
    char err[256];
    CHECK_EQ_INT(hist_open(tmp_path("runs.db"), HIST_OPEN_WRITE, &h, err, sizeof err), FL_OK);
    int64_t r1 = 0, r2 = 0;
    CHECK_EQ_INT(hist_run_begin(h, "a.lua", 1, NULL, NULL, &r1), FL_OK);
    CHECK_EQ_INT(hist_run_begin(h, "b.lua", 2, NULL, NULL, &r2), FL_EBUSY);
    /* Recorded out of time order; read back ordered by (at_ns, seq). */
    hist_node_event_add(h, 30, 1, "crash", HIST_NULL, NULL);
    hist_node_event_add(h, 10, 2, "leader", 1, NULL);
    hist_node_event_add(h, 30, 1, "restart", HIST_NULL, NULL);
    CHECK_EQ_INT(hist_run_end(h, 40, 1, NULL, "fail"), FL_OK);
    CHECK_EQ_INT(hist_run_begin(h, "b.lua", 2, NULL, NULL, &r2), FL_OK);
    hist_node_event_add(h, 5, 3, "leader", 1, NULL);
    CHECK_EQ_INT(hist_run_end(h, 40, 1, NULL, "bogus"), FL_EINVAL);
    CHECK_EQ_INT(hist_run_end(h, 40, 1, "ABC", "pass"), FL_EINVAL);
    CHECK_EQ_INT(hist_run_end(h, 40, 1, NULL, "pass"), FL_OK);
    CHECK(r2 > r1);
    struct order o = {0};
    CHECK_EQ_INT(hist_node_events_each(h, r1, node_ev, &o), FL_OK);
    CHECK_EQ_INT(o.n, 3);
    CHECK(o.at[0] == 102 && o.at[1] == 301 && o.at[2] == 303);
    int64_t *ids = NULL;
    size_t n = 0;
    CHECK_EQ_INT(hist_runs_list(h, &ids, &n), FL_OK);
    CHECK(n == 2 && ids[0] == r1 && ids[1] == r2);
    free(ids);
    int64_t latest = 0;
    CHECK_EQ_INT(hist_run_latest(h, &latest), FL_OK);
    CHECK_EQ_INT(latest, r2);
    struct hist_run_row row;
    CHECK_EQ_INT(hist_run_get(h, 9999, &row), FL_ENOENT);
    /* attach: add a check to the first run afterwards */
    CHECK_EQ_INT(hist_run_attach(h, 9999, NULL), FL_ENOENT);
    CHECK_EQ_INT(hist_run_attach(h, r1, NULL), FL_OK);
    CHECK_EQ_INT(hist_node_event_add(h, 30, 1, "late", HIST_NULL, NULL), FL_OK);
    CHECK_EQ_INT(hist_watch_close(h, 77, 5, "x"), FL_ENOENT);
    CHECK_EQ_INT(hist_run_end(h, 40, 1, NULL, "pass"), FL_OK);
    o = (struct order){0};
    CHECK_EQ_INT(hist_node_events_each(h, r1, node_ev, &o), FL_OK);
    CHECK_EQ_INT(o.n, 4);
    CHECK_EQ_INT(o.at[3], 304);
    CHECK_EQ_INT(hist_close(h), FL_OK);
}

static void test_bad_paths(void)
{
    struct hist_db *h = NULL;
    char err[512];
    /* missing directory */
    err[0] = 0;
    CHECK(hist_open(tmp_path("nodir/x.db"), HIST_OPEN_WRITE, &h, err, sizeof err) != FL_OK);
    CHECK(h == NULL);
    CHECK(strstr(err, "nodir/x.db") != NULL);
    CHECK(strstr(err, "does not exist") != NULL);
    /* a directory */
    CHECK(hist_open(tmpdir, HIST_OPEN_WRITE, &h, err, sizeof err) != FL_OK);
    CHECK(strstr(err, tmpdir) != NULL);
    /* not a database */
    FILE *f = fopen(tmp_path("junk.db"), "w");
    fputs("this is not an SQLite database, not even close, but long enough to look like one"
          " to a careless reader..............................................",
          f);
    fclose(f);
    err[0] = 0;
    CHECK(hist_open(tmp_path("junk.db"), HIST_OPEN_WRITE, &h, err, sizeof err) != FL_OK);
    CHECK(strstr(err, "junk.db") != NULL);
    CHECK(strstr(err, "not a database") != NULL);
    CHECK(hist_open(tmp_path("junk.db"), HIST_OPEN_READONLY, &h, err, sizeof err) != FL_OK);
    /* a foreign SQLite database */
    sqlite3 *raw = NULL;
    sqlite3_open(tmp_path("foreign.db"), &raw);
    sqlite3_exec(raw, "CREATE TABLE runs(x)", NULL, NULL, NULL);
    sqlite3_close(raw);
    CHECK_EQ_INT(hist_open(tmp_path("foreign.db"), HIST_OPEN_WRITE, &h, err, sizeof err),
                 FL_EINVAL);
    CHECK(strstr(err, "not a faultline history") != NULL);
    /* missing file, read-only */
    CHECK_EQ_INT(hist_open(tmp_path("absent.db"), HIST_OPEN_READONLY, &h, err, sizeof err),
                 FL_ENOENT);
    /* read-only file (root ignores permission bits, so only check when it matters) */
    CHECK_EQ_INT(hist_open(tmp_path("ro.db"), HIST_OPEN_WRITE, &h, err, sizeof err), FL_OK);
    hist_close(h);
    chmod(tmp_path("ro.db"), 0444);
    if (geteuid() != 0) {
        CHECK_EQ_INT(hist_open(tmp_path("ro.db"), HIST_OPEN_WRITE, &h, err, sizeof err), FL_EIO);
        CHECK(strstr(err, "read-only") != NULL);
    }
    CHECK_EQ_INT(hist_open(tmp_path("ro.db"), HIST_OPEN_READONLY, &h, err, sizeof err), FL_OK);
    hist_close(h);
}

static bool master_has(struct hist_db *h, const char *type, const char *name, const char *text)
{
    char sql[256];
    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM sqlite_master WHERE type = '%s' AND name = '%s'"
             " AND instr(upper(sql), upper('%s')) > 0",
             type, name, text);
    return query_i64(h, sql) == 1;
}

static int64_t one_op(struct hist_db *h, int64_t op_id)
{
    struct hist_op op;
    hist_op_init(&op);
    op.op_id = op_id;
    op.client_id = 1;
    op.kind = "get";
    op.key = "k";
    op.key_len = 1;
    op.call_ns = 10;
    op.status = HIST_STATUS_UNKNOWN;
    return hist_op_add(h, &op, NULL);
}

/* New databases: ops and watch_events are rowid tables keyed by unique indexes, with
 * 4 KiB pages; a repeated key is still refused. A database with the first layout
 * (WITHOUT ROWID tables) keeps it and is appended to as before. */
static void test_layout(void)
{
    struct hist_db *h = NULL;
    char err[256];
    CHECK_EQ_INT(hist_open(tmp_path("layout.db"), HIST_OPEN_WRITE, &h, err, sizeof err), FL_OK);
    if (!h)
        return;
    CHECK(!master_has(h, "table", "ops", "WITHOUT ROWID"));
    CHECK(!master_has(h, "table", "watch_events", "WITHOUT ROWID"));
    CHECK(master_has(h, "index", "ops_by_run", "UNIQUE INDEX"));
    CHECK(master_has(h, "index", "ops_by_run", "(run_id, op_id)"));
    CHECK(master_has(h, "index", "watch_events_by_run", "(run_id, watch_id, seq)"));
    CHECK_EQ_INT(query_i64(h, "PRAGMA page_size"), 4096);
    CHECK_EQ_INT(hist_run_begin(h, "layout", 1, NULL, NULL, NULL), FL_OK);
    CHECK_EQ_INT(one_op(h, 7), FL_OK);
    CHECK_EQ_INT(one_op(h, 7), FL_EEXIST);
    CHECK_EQ_INT(one_op(h, 8), FL_OK);
    CHECK_EQ_INT(hist_run_end(h, 100, 0, NULL, "pass"), FL_OK);
    CHECK_EQ_INT(query_i64(h, "SELECT count(*) FROM ops"), 2);
    hist_close(h);

    const char *src = getenv("FL_SRC");
    if (!src)
        return;
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "cp '%s/tests/data/history/schema-v1.db' '%s'", src,
             tmp_path("v1.db"));
    CHECK_EQ_INT(system(cmd), 0);
    CHECK_EQ_INT(hist_open(tmp_path("v1.db"), HIST_OPEN_WRITE, &h, err, sizeof err), FL_OK);
    if (!h)
        return;
    CHECK(master_has(h, "table", "ops", "WITHOUT ROWID"));
    CHECK_EQ_INT(query_i64(h, "SELECT count(*) FROM sqlite_master WHERE name = 'ops_by_run'"), 0);
    int64_t before = query_i64(h, "SELECT count(*) FROM ops");
    CHECK_EQ_INT(hist_run_begin(h, "layout", 1, NULL, NULL, NULL), FL_OK);
    CHECK_EQ_INT(one_op(h, 1), FL_OK);
    CHECK_EQ_INT(one_op(h, 1), FL_EEXIST);
    CHECK_EQ_INT(hist_run_end(h, 100, 0, NULL, "pass"), FL_OK);
    CHECK_EQ_INT(query_i64(h, "SELECT count(*) FROM ops"), before + 1);
    hist_close(h);
}

static bool exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0;
}

/* hist_remove: the database and each side file SQLite may leave, those that exist;
 * a missing one is no error, one that cannot be removed is FL_EIO. */
static void test_remove(void)
{
    static const char *const sides[] = {"", "-wal", "-shm", "-journal"};
    const char *db = tmp_path("gone.db");
    char p[600];
    for (size_t i = 0; i < FL_ARRAY_LEN(sides); i++) {
        snprintf(p, sizeof p, "%s%s", db, sides[i]);
        FILE *f = fopen(p, "w");
        CHECK(f != NULL);
        if (f)
            fclose(f);
    }
    CHECK_EQ_INT(hist_remove(db), FL_OK);
    for (size_t i = 0; i < FL_ARRAY_LEN(sides); i++) {
        snprintf(p, sizeof p, "%s%s", db, sides[i]);
        CHECK(!exists(p));
    }
    CHECK_EQ_INT(hist_remove(db), FL_OK); /* nothing left: still fine */
    /* a real database closed in WAL mode: nothing of it stays */
    struct hist_db *h = NULL;
    char err[256];
    CHECK_EQ_INT(hist_open(db, HIST_OPEN_WRITE, &h, err, sizeof err), FL_OK);
    CHECK_EQ_INT(hist_close(h), FL_OK);
    CHECK(exists(db));
    CHECK_EQ_INT(hist_remove(db), FL_OK);
    CHECK(!exists(db));
    /* a -wal that is a folder with a file in it cannot be unlinked */
    snprintf(p, sizeof p, "%s-wal", db);
    CHECK_EQ_INT(mkdir(p, 0700), 0);
    char inner[700];
    snprintf(inner, sizeof inner, "%s/x", p);
    FILE *f = fopen(inner, "w");
    CHECK(f != NULL);
    if (f)
        fclose(f);
    CHECK_EQ_INT(hist_remove(db), FL_EIO);
    unlink(inner);
    rmdir(p);
}

int main(void)
{
    const char *base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(tmpdir, sizeof tmpdir, "%s/fl_hist_XXXXXX", base);
    static const struct fl_case cases[] = {
        FL_CASE(test_schema),    FL_CASE(test_digest), FL_CASE(test_batching),
        FL_CASE(test_roundtrip), FL_CASE(test_blobs),  FL_CASE(test_runs_and_order),
        FL_CASE(test_bad_paths), FL_CASE(test_layout), FL_CASE(test_remove)};
    return fl_test_main_in(tmpdir, cases, FL_NCASES(cases));
}
