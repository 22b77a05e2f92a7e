/*
 * test_mirror_verify.c: when the history the run kept in memory and the one its
 * database holds differ at the end (a bug of ours, or a database changed under the
 * run), the run is an internal error: exit 3, verdict 'error' in the summary and in
 * the runs row with the reason, never an abort that leaves the row 'running' (issue
 * 12 item 4). The difference is made by changing one ops row behind the run's back.
 */
#include "harness/history/load.h"
#include "harness/run/run_int.h"

#include "fl_test.h"
#include "fl_tmpdir.h"
#include "run_fixture.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <unistd.h>

static char dir[] = "/tmp/fl-test-mirror-verify-XXXXXX";

static struct run_world *open_world(const char *db)
{
    struct run_options o = {
        .scenario = "test_mirror_verify.c", .seed = 3, .db_path = db, .verify_history = true};
    struct run_world *rw = fx_open(&o);
    struct fx_config x;
    fx_config_default(&x);
    x.k.count = 2;
    x.w.rate = 40;
    x.w.keys = 4;
    fx_setup(rw, &x, RUN_CHECK_LINEARIZABILITY | RUN_CHECK_WATCH);
    return rw;
}

static void tamper(const char *db, const char *sql)
{
    sqlite3 *s = NULL;
    CHECK_EQ_INT(sqlite3_open(db, &s), SQLITE_OK);
    sqlite3_busy_timeout(s, 10000);
    CHECK_EQ_INT(sqlite3_exec(s, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(s);
}

static void test_difference(const char *sql, const char *want_reason)
{
    static int n;
    char db[256];
    snprintf(db, sizeof db, "%s/v%d.db", dir, ++n);
    struct run_world *rw = open_world(db);
    run_advance(rw, 3 * FL_S);
    CHECK_EQ_INT(hist_flush(rw->db), FL_OK);
    tamper(db, sql);
    struct run_result res;
    CHECK_EQ_INT(run_world_finish(rw, NULL, &res), FL_EIO);
    CHECK_EQ_INT(res.exit_code, 3);
    CHECK_EQ_INT(res.verdict, RUN_ERROR);
    CHECK(strstr(res.error, want_reason) != NULL);
    const char *v = json_string_value(json_object_get(res.summary, "verdict"));
    CHECK(v && !strcmp(v, "error"));
    const char *e = json_string_value(json_object_get(res.summary, "error"));
    CHECK(e && strstr(e, want_reason));
    json_t *lin = json_object_get(json_object_get(res.summary, "checks"), "linearizability");
    CHECK(lin && !strcmp(json_string_value(json_object_get(lin, "verdict")), "unknown"));
    int64_t run_id = res.run_id;
    run_result_close(&res);
    run_world_close(rw);
    struct hist_db *h = NULL;
    CHECK_EQ_INT(hist_open(db, HIST_OPEN_READONLY, &h, NULL, 0), FL_OK);
    struct hist_run_row row;
    CHECK_EQ_INT(hist_run_get(h, run_id, &row), FL_OK);
    CHECK_EQ_STR(row.verdict, "error");
    CHECK(row.reason && strstr(row.reason, want_reason));
    hist_run_row_free(&row);
    hist_close(h);
    /* `faultline check` refuses the run, naming the reason. */
    struct chk_history ch;
    struct fl_buf err;
    chk_history_init(&ch);
    fl_buf_init(&err);
    CHECK_EQ_INT(hist_load_db_path(db, run_id, &ch, NULL, &err), FL_EINVAL);
    CHECK(strstr(fl_buf_cstr(&err), "ended in error") != NULL);
    chk_history_close(&ch);
    fl_buf_close(&err);
}

int main(void)
{
    if (!fl_tmpdir_make(dir))
        return 1;
    /* Still a valid history, but not the one recorded. */
    test_difference("UPDATE ops SET client_id = client_id + 7 WHERE op_id = 2",
                    "differs from the database's");
    /* One the loader refuses: the run cannot verify what it recorded. */
    test_difference("UPDATE ops SET call_ns = 'abc' WHERE op_id = 2", "cannot be read back");
    fl_tmpdir_remove(dir);
    return fl_test_end();
}
