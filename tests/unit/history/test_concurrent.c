/*
 * test_concurrent.c: several processes recording into one database at once (a sweep
 * with -j N and one --db): each gets its own run_id, every row of every run is
 * present afterwards, and each run's digest equals that of the same rows recorded
 * alone (the run_id never enters a digest).
 */
#include "fl_test.h"
#include "fl_tmpdir.h"

#include "harness/history/history.h"

#include <sys/wait.h>
#include <unistd.h>

#define WRITERS 3
#define OPS     6000

static uint64_t record_run(const char *path, int writer)
{
    struct hist_db *h = NULL;
    struct fl_digest d;
    fl_digest_init(&d);
    if (hist_open(path, HIST_OPEN_WRITE, &h, NULL, 0) != FL_OK)
        _exit(10);
    hist_set_batch_rows(h, 97);
    if (hist_run_begin(h, "concurrent.lua", (uint64_t)writer, NULL, &d, NULL) != FL_OK)
        _exit(11);
    for (int64_t i = 0; i < OPS; i++) {
        struct hist_op op;
        hist_op_init(&op);
        op.client_id = writer;
        op.kind = "put";
        op.key = &i;
        op.key_len = sizeof i;
        op.call_ns = i;
        op.status = HIST_STATUS_OK;
        if (hist_op_add(h, &op, NULL) != FL_OK) {
            fprintf(stderr, "%s\n", hist_errmsg(h));
            _exit(12);
        }
        if (i % 1000 == 0 && hist_node_event_add(h, i, writer, "leader", 1, NULL) != FL_OK)
            _exit(13);
    }
    uint64_t v = fl_digest_value(&d);
    char hex[17];
    fl_digest_hex(v, hex);
    if (hist_run_end(h, OPS, 0, hex, "pass") != FL_OK || hist_close(h) != FL_OK)
        _exit(14);
    fl_digest_close(&d);
    return v;
}

int main(void)
{
    char dir[256], path[300], alone[300];
    const char *base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(dir, sizeof dir, "%s/fl_hcon_XXXXXX", base);
    if (!fl_tmpdir_make(dir))
        return 1;
    snprintf(path, sizeof path, "%s/shared.db", dir);
    snprintf(alone, sizeof alone, "%s/alone.db", dir);
    /* Create the schema first so the writers race on rows, not on creation too. */
    struct hist_db *h = NULL;
    CHECK_EQ_INT(hist_open(path, HIST_OPEN_WRITE, &h, NULL, 0), FL_OK);
    hist_close(h);
    fflush(NULL);
    pid_t pids[WRITERS];
    for (int w = 0; w < WRITERS; w++) {
        pids[w] = fork();
        if (pids[w] == 0) {
            record_run(path, w);
            _exit(0);
        }
    }
    for (int w = 0; w < WRITERS; w++) {
        int status = 0;
        waitpid(pids[w], &status, 0);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    CHECK_EQ_INT(hist_open(path, HIST_OPEN_READONLY, &h, NULL, 0), FL_OK);
    int64_t *ids = NULL;
    size_t n = 0;
    CHECK_EQ_INT(hist_runs_list(h, &ids, &n), FL_OK);
    CHECK_EQ_INT(n, WRITERS);
    for (size_t i = 0; i < n; i++) {
        struct hist_run_row row;
        struct hist_op_counts c;
        CHECK_EQ_INT(hist_run_get(h, ids[i], &row), FL_OK);
        CHECK_EQ_INT(hist_ops_count(h, ids[i], &c), FL_OK);
        CHECK_EQ_INT(c.total, OPS);
        CHECK_EQ_STR(row.verdict, "pass");
        /* The same rows recorded alone give the same digest. */
        snprintf(alone, sizeof alone, "%s/alone%zu.db", dir, i);
        char hex[17];
        fl_digest_hex(record_run(alone, (int)row.seed), hex);
        CHECK_EQ_STR(row.digest, hex);
        hist_run_row_free(&row);
    }
    free(ids);
    hist_close(h);
    fl_tmpdir_remove(dir);
    return fl_test_end();
}
