/*
 * test_interrupt.c: a run that never reaches hist_run_end leaves a database that opens,
 * passes PRAGMA integrity_check and shows the run as 'running'. A forked child records
 * ops in small batches and is then stopped: by SIGKILL, by SIGINT with no handler, by
 * an FL_ASSERT abort (a crash of the simulated world), by SIGINT with
 * hist_sigint_install (the run loop sees hist_interrupted, flushes and ends the run as
 * 'error', so every row is kept), and by a second SIGINT when the loop does not react.
 */
#include "fl_test.h"
#include "fl_tmpdir.h"

#include "harness/history/history.h"

#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum mode { M_KILL, M_INT_DEFAULT, M_ABORT, M_INT_HANDLED, M_INT_TWICE };

#define BATCH       50
#define ABORT_AFTER 777

static char tmpdir[256];

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void record_one(struct hist_db *h, int64_t i)
{
    struct hist_op op;
    hist_op_init(&op);
    op.client_id = i % 4;
    op.kind = "put";
    op.key = &i;
    op.key_len = sizeof i;
    op.value = "some value bytes";
    op.value_len = 16;
    op.request = "{\"op\":\"put\"}";
    op.call_ns = i;
    op.return_ns = i + 1;
    op.status = HIST_STATUS_OK;
    op.revision = i;
    if (hist_op_add(h, &op, NULL) != FL_OK)
        _exit(20);
}

/* The child: records until stopped. Tells the parent through fd once a few batches
 * are committed; in M_INT_HANDLED writes the final row count there. */
static _Noreturn void child(const char *path, enum mode m, int fd)
{
    struct hist_db *h = NULL;
    if (m == M_INT_HANDLED || m == M_INT_TWICE)
        hist_sigint_install();
    if (hist_open(path, HIST_OPEN_WRITE, &h, NULL, 0) != FL_OK)
        _exit(10);
    hist_set_batch_rows(h, BATCH);
    if (hist_run_begin(h, "interrupt.lua", 3, NULL, NULL, NULL) != FL_OK)
        _exit(11);
    for (int64_t i = 0; i < 50000000; i++) {
        if (m == M_INT_HANDLED && hist_interrupted()) {
            if (hist_run_end(h, i, 0, NULL, "error") != FL_OK)
                _exit(12);
            hist_close(h);
            if (write(fd, &i, sizeof i) != sizeof i)
                _exit(13);
            _exit(0);
        }
        if (m == M_ABORT && i == ABORT_AFTER)
            FL_ASSERTF(false, "simulated world crash (expected by the test)");
        record_one(h, i);
        if (i == 5 * BATCH) {
            char c = 'r';
            if (write(fd, &c, 1) != 1)
                _exit(14);
        }
    }
    _exit(15);
}

static int64_t q_i64(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st = NULL;
    int64_t v = -1;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

/* Checks what every interrupted run must leave behind; returns the ops count. */
static int64_t check_db(const char *path, const char *want_verdict)
{
    struct hist_db *h = NULL;
    char err[256];
    CHECK_EQ_INT(hist_open(path, HIST_OPEN_WRITE, &h, err, sizeof err), FL_OK);
    if (!h) {
        fprintf(stderr, "%s\n", err);
        return -1;
    }
    sqlite3_stmt *st = NULL;
    sqlite3_prepare_v2(hist_sqlite(h), "PRAGMA integrity_check", -1, &st, NULL);
    CHECK(sqlite3_step(st) == SQLITE_ROW);
    CHECK_EQ_STR((const char *)sqlite3_column_text(st, 0), "ok");
    sqlite3_finalize(st);
    int64_t run_id = 0;
    CHECK_EQ_INT(hist_run_latest(h, &run_id), FL_OK);
    CHECK_EQ_INT(run_id, 1);
    struct hist_run_row row;
    CHECK_EQ_INT(hist_run_get(h, run_id, &row), FL_OK);
    /* Killed before hist_run_end: still 'running' (check refuses it); a handled SIGINT
     * ends it as 'error'. */
    CHECK_EQ_STR(row.verdict, want_verdict);
    CHECK_EQ_STR(row.scenario, "interrupt.lua");
    hist_run_row_free(&row);
    struct hist_op_counts c;
    CHECK_EQ_INT(hist_ops_count(h, run_id, &c), FL_OK);
    /* Rows are whole and contiguous: op_ids 1..n, no torn row. */
    CHECK_EQ_INT(q_i64(hist_sqlite(h), "SELECT max(op_id) FROM ops"), c.total);
    CHECK_EQ_INT(q_i64(hist_sqlite(h), "SELECT count(*) FROM ops WHERE kind IS NULL"
                                       " OR value IS NULL OR status != 'ok'"),
                 0);
    /* A later run in the same database works normally. */
    CHECK_EQ_INT(hist_run_begin(h, "after.lua", 4, NULL, NULL, &run_id), FL_OK);
    CHECK_EQ_INT(hist_run_end(h, 0, 0, NULL, "pass"), FL_OK);
    CHECK_EQ_INT(run_id, 2);
    hist_close(h);
    return c.total;
}

static void run_mode(enum mode m, const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s.db", tmpdir, name);
    int fds[2];
    if (pipe(fds) != 0) {
        CHECK(false);
        return;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        child(path, m, fds[1]);
    }
    close(fds[1]);
    int status = 0;
    char c = 0;
    int64_t final_count = -1;
    if (m != M_ABORT) {
        CHECK(read(fds[0], &c, 1) == 1); /* a few batches are in */
        sleep_ms(20);
    }
    if (m == M_KILL)
        kill(pid, SIGKILL);
    else if (m == M_INT_DEFAULT || m == M_INT_HANDLED)
        kill(pid, SIGINT);
    for (int i = 0; m == M_INT_TWICE && i < 200; i++) {
        kill(pid, SIGINT);
        sleep_ms(10);
        if (waitpid(pid, &status, WNOHANG) == pid) {
            pid = -1;
            break;
        }
    }
    if (m == M_INT_HANDLED)
        CHECK(read(fds[0], &final_count, sizeof final_count) == sizeof final_count);
    if (pid > 0)
        waitpid(pid, &status, 0);
    close(fds[0]);
    if (m == M_KILL)
        CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    if (m == M_INT_DEFAULT || m == M_INT_TWICE)
        CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGINT);
    if (m == M_ABORT)
        CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
    if (m == M_INT_HANDLED)
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    int64_t n = check_db(path, m == M_INT_HANDLED ? "error" : "running");
    if (m == M_ABORT)
        /* Every full batch is kept, the open one lost (a batch open longer than
         * HIST_BATCH_WALL_MS on a stalled machine may commit early). */
        CHECK(n >= ABORT_AFTER / BATCH * BATCH && n <= ABORT_AFTER);
    else if (m == M_INT_HANDLED)
        CHECK_EQ_INT(n, final_count); /* flushed: nothing lost */
    else
        CHECK(n >= 5 * BATCH);
    fprintf(stderr, "%s: %lld ops kept\n", name, (long long)n);
}

int main(void)
{
    const char *base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(tmpdir, sizeof tmpdir, "%s/fl_hint_XXXXXX", base);
    if (!fl_tmpdir_make(tmpdir))
        return 1;
    run_mode(M_KILL, "sigkill");
    run_mode(M_INT_DEFAULT, "sigint_default");
    run_mode(M_ABORT, "assert_abort");
    run_mode(M_INT_HANDLED, "sigint_handled");
    run_mode(M_INT_TWICE, "sigint_twice");
    fl_tmpdir_remove(tmpdir);
    return fl_test_end();
}
