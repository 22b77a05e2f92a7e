/*
 * test_load_db.c: a faultline database written with the recorder (history.h) is
 * loaded into the checkers, checked, and the verdicts stored into `checks`:
 *   - request/response JSON in the documented shapes (checkers.h) and the added
 *     columns both work; an unknown put revealed by a watch event is placed;
 *   - a stale read in a second run fails linearizability but not the watch check;
 *   - a database with two runs needs a run id; a wrong one is an error naming runs;
 *   - hist_check_run + hist_checks_store write "linearizability" and "watch" rows.
 */
#include "checkers/checkers.h"
#include "fl_test.h"
#include "hist_rows.h"
#include "harness/history/history.h"
#include "harness/history/load.h"

#include <unistd.h>

static void add_op(struct hist_db *db, int64_t client, const char *kind, const char *key,
                   const char *value, const char *request, const char *response, int64_t call,
                   int64_t ret, enum hist_status st, int64_t rev)
{
    struct hist_op op = t_op_row(client, kind, key, value, call, ret, st);
    op.request = request;
    op.response = response;
    op.revision = rev;
    CHECK_EQ_INT(hist_op_add(db, &op, NULL), FL_OK);
}

static void add_event(struct hist_db *db, int64_t watch, int64_t seq, const char *kind,
                      const char *key, const char *value, int64_t mod, int64_t create,
                      int64_t version)
{
    struct hist_watch_event e = t_event_row(watch, seq, kind, key, value);
    e.mod_rev = mod;
    e.create_rev = create;
    e.version = version;
    e.revision = mod;
    e.delivered_ns = 1000 + seq;
    CHECK_EQ_INT(hist_watch_event_add(db, &e), FL_OK);
}

/* Run 1: linearizable, with an unknown put revealed by the watch. */
static void write_run1(struct hist_db *db)
{
    CHECK_EQ_INT(hist_run_begin(db, "t.lua", 1, NULL, NULL, NULL), FL_OK);
    struct hist_watch w = t_watch_row(1, 9, "k", 1, 10);
    CHECK_EQ_INT(hist_watch_open(db, &w), FL_OK);
    add_op(db, 1, "put", "k", "a", "{\"key\":\"k\",\"value\":\"a\"}",
           "{\"header\":{\"revision\":2}}", 100, 200, HIST_STATUS_OK, 2);
    add_op(db, 2, "get", "k", NULL, "{\"key\":\"k\"}",
           "{\"header\":{\"revision\":2},\"kvs\":[{\"key\":\"k\",\"value\":\"a\","
           "\"create_revision\":2,\"mod_revision\":2,\"version\":1}],\"count\":1}",
           150, 250, HIST_STATUS_OK, 2);
    /* no answer; the watch shows it took effect at revision 3 */
    add_op(db, 1, "put", "k", "b", "{\"key\":\"k\",\"value\":\"b\"}", NULL, 300, HIST_NULL,
           HIST_STATUS_UNKNOWN, HIST_NULL);
    add_op(db, 3, "txn", "k", NULL,
           "{\"compare\":[{\"key\":\"k\",\"target\":\"value\",\"result\":\"=\",\"value\":\"b\"}],"
           "\"success\":[{\"put\":{\"key\":\"k\",\"value\":\"c\"}}],"
           "\"failure\":[{\"range\":{\"key\":\"k\"}}]}",
           "{\"header\":{\"revision\":4},\"succeeded\":true,\"responses\":[{\"put\":{}}]}", 400,
           500, HIST_STATUS_OK, 4);
    add_op(db, 2, "delete", "k", NULL, "{\"key\":\"k\"}",
           "{\"header\":{\"revision\":5},\"deleted\":1}", 600, 700, HIST_STATUS_OK, 5);
    add_op(db, 2, "lease_grant", "", NULL, "{}", "{}", 710, 720, HIST_STATUS_OK, 5);
    add_event(db, 1, 1, "put", "k", "a", 2, 2, 1);
    add_event(db, 1, 2, "put", "k", "b", 3, 2, 2);
    add_event(db, 1, 3, "put", "k", "c", 4, 2, 3);
    add_event(db, 1, 4, "delete", "k", NULL, 5, 0, 0);
    CHECK_EQ_INT(hist_run_end(db, 1000, 1, NULL, "pass"), FL_OK);
}

/* Run 2: a stale read. */
static void write_run2(struct hist_db *db)
{
    CHECK_EQ_INT(hist_run_begin(db, "t.lua", 2, NULL, NULL, NULL), FL_OK);
    add_op(db, 1, "put", "k", "a", "{\"key\":\"k\",\"value\":\"a\"}", "{}", 100, 200,
           HIST_STATUS_OK, 2);
    add_op(db, 1, "put", "k", "b", "{\"key\":\"k\",\"value\":\"b\"}", "{}", 300, 400,
           HIST_STATUS_OK, 3);
    add_op(db, 2, "get", "k", "a", "{\"key\":\"k\"}", "{\"mod_rev\":2}", 500, 600, HIST_STATUS_OK,
           2);
    CHECK_EQ_INT(hist_run_end(db, 1000, 1, NULL, "fail"), FL_OK);
}

static int count_checks(void *arg, const struct hist_check *c)
{
    int *n = arg;
    if (!strcmp(c->checker, "linearizability") || !strcmp(c->checker, "watch"))
        (*n)++;
    CHECK(c->detail && c->detail[0] == '{');
    return 0;
}

int main(void)
{
    char path[] = "/tmp/fl_test_load_db_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);
    unlink(path);
    struct hist_db *db = NULL;
    char err[256];
    CHECK_EQ_INT(hist_open(path, HIST_OPEN_WRITE, &db, err, sizeof(err)), FL_OK);
    write_run1(db);
    write_run2(db);
    CHECK_EQ_INT(hist_flush(db), FL_OK);

    struct fl_buf e;
    fl_buf_init(&e);
    struct chk_history h;
    chk_history_init(&h);
    /* two runs: a run id is needed */
    CHECK_EQ_INT(hist_load_db_path(path, 0, &h, NULL, &e), FL_EINVAL);
    CHECK(strstr(fl_buf_cstr(&e), "--run") != NULL);
    chk_history_close(&h);
    fl_buf_reset(&e);
    chk_history_init(&h);
    CHECK_EQ_INT(hist_load_db_path(path, 99, &h, NULL, &e), FL_EINVAL);
    CHECK(strstr(fl_buf_cstr(&e), "no run 99") != NULL);
    chk_history_close(&h);

    /* run 1 through the format sniffer and the generic loader */
    int fmt = -1;
    CHECK_EQ_INT(hist_format_sniff(path, &fmt, &e), FL_OK);
    CHECK_EQ_INT(fmt, HIST_FMT_DB);
    chk_history_init(&h);
    int64_t rid = 0;
    fl_buf_reset(&e);
    CHECK_EQ_INT(hist_load(path, HIST_FMT_AUTO, 1, &h, &rid, &e), FL_OK);
    CHECK_EQ_INT(rid, 1);
    CHECK_EQ_INT(h.op_count, 5); /* the lease call is skipped */
    CHECK_EQ_INT(h.watch_count, 1);
    CHECK_EQ_INT(h.event_count, 4);
    struct chk_result r;
    CHECK_EQ_INT(chk_check(&h, NULL, &r), FL_OK);
    CHECK_EQ_INT(r.lin.verdict, CHK_PASS);
    CHECK_EQ_INT(r.lin.engine, CHK_ENGINE_REVISION);
    CHECK_EQ_INT(r.lin.revealed, 1);
    CHECK_EQ_INT(r.watch.verdict, CHK_PASS);
    chk_result_close(&r);
    chk_history_close(&h);

    /* run 2: the stale read fails linearizability only; verdicts stored */
    int64_t ms = -1;
    fl_buf_reset(&e);
    CHECK_EQ_INT(hist_check_run(db, 2, NULL, &r, &ms, &e), FL_OK);
    CHECK_EQ_INT(r.lin.verdict, CHK_FAIL);
    CHECK_EQ_INT(r.watch.verdict, CHK_PASS);
    CHECK(ms >= 0);
    json_t *cj = hist_check_result_json(&r);
    CHECK_EQ_STR(
        json_string_value(json_object_get(json_object_get(cj, "linearizability"), "verdict")),
        "fail");
    CHECK(json_object_get(json_object_get(json_object_get(cj, "watch"), "guarantees"),
                          "reliable") != NULL);
    CHECK(json_object_get(json_object_get(cj, "linearizability"), "explanation") != NULL);
    json_decref(cj);
    CHECK_EQ_INT(hist_run_attach(db, 2, NULL), FL_OK);
    CHECK_EQ_INT(hist_checks_store(db, NULL, &r, ms), FL_OK);
    CHECK_EQ_INT(hist_flush(db), FL_OK);
    int n = 0;
    CHECK_EQ_INT(hist_checks_each(db, 2, count_checks, &n), FL_OK);
    CHECK_EQ_INT(n, 2);
    chk_result_close(&r);

    fl_buf_close(&e);
    hist_close(db);
    unlink(path);
    char side[300];
    snprintf(side, sizeof(side), "%s-wal", path);
    unlink(side);
    snprintf(side, sizeof(side), "%s-shm", path);
    unlink(side);
    return fl_test_end();
}
