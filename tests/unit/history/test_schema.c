/*
 * test_schema.c: the column lists of hist_schema.h are the history's schema (issue 15
 * §1). A new database has exactly the listed columns, in order, with their types;
 * a row with every column set to a value of its own reads back column for column
 * (so binding and reading cover the whole list, whatever is added to it); a database
 * written before the added columns (since >= 1) reads them as NULL and gains them
 * when opened for writing, keeping its rows.
 */
#include "fl_test.h"
#include "fl_tmpdir.h"

#include "harness/history/hist_schema.h"
#include "harness/history/history.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <unistd.h>

static char tmpdir[] = "/tmp/fl-test-schema-XXXXXX";

static const char *tmp_path(const char *name)
{
    static char buf[512];
    snprintf(buf, sizeof buf, "%s/%s", tmpdir, name);
    return buf;
}

static void test_tables_match_lists(void)
{
    struct hist_db *h = NULL;
    char err[256];
    CHECK_EQ_INT(hist_open(tmp_path("fresh.db"), HIST_OPEN_WRITE, &h, err, sizeof err), FL_OK);
    for (int t = 0; t < HIST_T_COUNT; t++) {
        const struct hist_table *tb = &hist_tables[t];
        char sql[128];
        snprintf(sql, sizeof sql,
                 "SELECT name, type, \"notnull\" FROM pragma_table_info('%s')"
                 " ORDER BY cid",
                 tb->name);
        sqlite3_stmt *st = NULL;
        CHECK_EQ_INT(sqlite3_prepare_v2(hist_sqlite(h), sql, -1, &st, NULL), SQLITE_OK);
        int i = -1; /* run_id first */
        while (sqlite3_step(st) == SQLITE_ROW) {
            const char *name = (const char *)sqlite3_column_text(st, 0);
            const char *type = (const char *)sqlite3_column_text(st, 1);
            if (i < 0) {
                CHECK_EQ_STR(name, "run_id");
            } else if (i < tb->n_cols) {
                CHECK_EQ_STR(name, tb->cols[i].name);
                CHECK(!strncmp(tb->cols[i].sql_type, type, strlen(type)));
            }
            i++;
        }
        sqlite3_finalize(st);
        CHECK_EQ_INT(i, tb->n_cols);
    }
    CHECK_EQ_INT(hist_close(h), FL_OK);
}

/* ---- every column written reads back ------------------------------------------------ */

/* Column i of a row gets a value of its own: integers 1000 + i, texts and blobs "c<i>". */
static char texts[64][8];

#define SET_I64(r, f, i)                             (r)->f = 1000 + (i)
#define SET_ID                                       SET_I64
#define SET_TEXT(r, f, i)                            (r)->f = texts[i]
#define SET_BLOB(r, f, i)                            ((r)->f = texts[i], (r)->f##_len = strlen(texts[i]))
#define SET_STATUS(r, f, i)                          (r)->f = HIST_STATUS_FAIL
#define SET_COL(col, field, kind, role, since, load) SET_##kind(row, field, i++);

#define SAME_I64(a, b, f)  CHECK_EQ_INT((a)->f, (b)->f)
#define SAME_ID            SAME_I64
#define SAME_TEXT(a, b, f) CHECK_EQ_STR((a)->f, (b)->f)
#define SAME_BLOB(a, b, f)                                                                         \
    CHECK((a)->f##_len == (b)->f##_len && !memcmp((a)->f, (b)->f, (a)->f##_len))
#define SAME_STATUS(a, b, f)                          CHECK_EQ_INT((int)(a)->f, (int)(b)->f)
#define SAME_COL(col, field, kind, role, since, load) SAME_##kind(want, got, field);

static struct hist_op want_op;
static struct hist_watch_event want_ev;
static struct hist_node_event want_ne;
static int seen;

static int same_op(void *arg, const struct hist_op *got)
{
    const struct hist_op *want = arg;
    HIST_OPS_COLUMNS(SAME_COL)
    seen++;
    return 0;
}

static int same_ev(void *arg, const struct hist_watch_event *got)
{
    const struct hist_watch_event *want = arg;
    HIST_WATCH_EVENTS_COLUMNS(SAME_COL)
    seen++;
    return 0;
}

static int same_ne(void *arg, const struct hist_node_event *got)
{
    const struct hist_node_event *want = arg;
    HIST_NODE_EVENTS_COLUMNS(SAME_COL)
    seen++;
    return 0;
}

static void test_round_trip(void)
{
    for (int i = 0; i < 64; i++)
        snprintf(texts[i], sizeof texts[i], "c%d", i);
    struct hist_db *h = NULL;
    char err[256];
    CHECK_EQ_INT(hist_open(tmp_path("trip.db"), HIST_OPEN_WRITE, &h, err, sizeof err), FL_OK);
    int64_t run_id = 0;
    CHECK_EQ_INT(hist_run_begin(h, "trip.lua", 1, NULL, NULL, &run_id), FL_OK);
    int i = 0;
    {
        struct hist_op *row = &want_op;
        HIST_OPS_COLUMNS(SET_COL)
    }
    CHECK_EQ_INT(hist_op_add(h, &want_op, NULL), FL_OK);
    i = 0;
    {
        struct hist_watch_event *row = &want_ev;
        HIST_WATCH_EVENTS_COLUMNS(SET_COL)
    }
    CHECK_EQ_INT(hist_watch_event_add(h, &want_ev), FL_OK);
    i = 0;
    {
        struct hist_node_event *row = &want_ne;
        HIST_NODE_EVENTS_COLUMNS(SET_COL)
    }
    want_ne.seq = 1; /* assigned by the recorder */
    CHECK_EQ_INT(hist_node_event_add_typed(h, want_ne.at_ns, want_ne.node_id, want_ne.kind,
                                           want_ne.term, want_ne.detail, &want_ne.f),
                 FL_OK);
    CHECK_EQ_INT(hist_run_end(h, 1, 1, NULL, "pass"), FL_OK);
    seen = 0;
    CHECK_EQ_INT(hist_ops_each(h, run_id, same_op, &want_op), FL_OK);
    CHECK_EQ_INT(hist_watch_events_each(h, run_id, same_ev, &want_ev), FL_OK);
    CHECK_EQ_INT(hist_node_events_each(h, run_id, same_ne, &want_ne), FL_OK);
    CHECK_EQ_INT(seen, 3);
    CHECK_EQ_INT(hist_close(h), FL_OK);
}

/* ---- a database without the added columns ------------------------------------------ */

static void make_old(const char *path)
{
    sqlite3 *s = NULL;
    CHECK_EQ_INT(sqlite3_open(path, &s), SQLITE_OK);
    char sql[2048];
    for (int t = 0; t < HIST_T_COUNT; t++) {
        const struct hist_table *tb = &hist_tables[t];
        int k = snprintf(sql, sizeof sql, "CREATE TABLE %s(run_id INTEGER%s", tb->name,
                         t == HIST_T_runs ? " PRIMARY KEY" : "");
        for (int i = 0; i < tb->n_cols; i++)
            if (tb->cols[i].since == 0)
                k += snprintf(sql + k, sizeof sql - (size_t)k, ", %s %s", tb->cols[i].name,
                              tb->cols[i].sql_type);
        snprintf(sql + k, sizeof sql - (size_t)k, ")");
        CHECK_EQ_INT(sqlite3_exec(s, sql, NULL, NULL, NULL), SQLITE_OK);
    }
    snprintf(sql, sizeof sql,
             "PRAGMA application_id = %d; PRAGMA user_version = 1;"
             "INSERT INTO runs(run_id, scenario, seed, verdict) VALUES(1, 'old.lua', 1, 'pass');"
             "INSERT INTO ops(run_id, op_id, client_id, kind, key, request, call_ns, return_ns,"
             " status) VALUES(1, 1, 1, 'put', X'61', '{\"value\":\"1\"}', 5, 9, 'ok');",
             HIST_APPLICATION_ID);
    CHECK_EQ_INT(sqlite3_exec(s, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(s);
}

static int old_op(void *arg, const struct hist_op *op)
{
    (void)arg;
    CHECK_EQ_INT(op->op_id, 1);
    CHECK(op->key_len == 1 && !memcmp(op->key, "a", 1));
    CHECK(op->value == NULL && op->expect == NULL);
    CHECK_EQ_INT(op->mod_rev, HIST_NULL);
    CHECK_EQ_INT(op->deleted, HIST_NULL);
    seen++;
    return 0;
}

static int count_added(struct hist_db *h)
{
    int n = 0;
    for (int t = 0; t < HIST_T_COUNT; t++) {
        const struct hist_table *tb = &hist_tables[t];
        for (int i = 0; i < tb->n_cols; i++) {
            char sql[160];
            snprintf(sql, sizeof sql,
                     "SELECT count(*) FROM pragma_table_info('%s') WHERE name = '%s'", tb->name,
                     tb->cols[i].name);
            sqlite3_stmt *st = NULL;
            if (tb->cols[i].since > 0 &&
                sqlite3_prepare_v2(hist_sqlite(h), sql, -1, &st, NULL) == SQLITE_OK &&
                sqlite3_step(st) == SQLITE_ROW)
                n += sqlite3_column_int(st, 0);
            sqlite3_finalize(st);
        }
    }
    return n;
}

static void test_old_database(void)
{
    const char *path = tmp_path("old.db");
    make_old(path);
    struct hist_db *h = NULL;
    char err[256];
    CHECK_EQ_INT(hist_open(path, HIST_OPEN_READONLY, &h, err, sizeof err), FL_OK);
    CHECK_EQ_INT(count_added(h), 0);
    seen = 0;
    CHECK_EQ_INT(hist_ops_each(h, 1, old_op, NULL), FL_OK);
    CHECK_EQ_INT(seen, 1);
    CHECK_EQ_INT(hist_close(h), FL_OK);
    /* opened for writing: every added column is there, the old row as it was */
    CHECK_EQ_INT(hist_open(path, HIST_OPEN_WRITE, &h, err, sizeof err), FL_OK);
    int added = 0;
    for (int t = 0; t < HIST_T_COUNT; t++)
        for (int i = 0; i < hist_tables[t].n_cols; i++)
            added += hist_tables[t].cols[i].since > 0;
    CHECK(added > 0);
    CHECK_EQ_INT(count_added(h), added);
    seen = 0;
    CHECK_EQ_INT(hist_ops_each(h, 1, old_op, NULL), FL_OK);
    CHECK_EQ_INT(seen, 1);
    CHECK_EQ_INT(hist_close(h), FL_OK);
}

int main(void)
{
    static const struct fl_case cases[] = {FL_CASE(test_tables_match_lists),
                                           FL_CASE(test_round_trip), FL_CASE(test_old_database)};
    return fl_test_main_in(tmpdir, cases, FL_NCASES(cases));
}
