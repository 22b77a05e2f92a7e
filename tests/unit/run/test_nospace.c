/*
 * test_nospace.c: "etcdserver: mvcc: database space exceeded" (etcd-facts §B.3) comes
 * from the quota check before proposing and from the capped applier under an armed
 * alarm, where nothing applied, but also from the quota applier, which applies a write
 * that crossed the quota and answers it with that error. A client cannot tell them
 * apart: a mutating call answered so is 'unknown'. A put-only workload fills a small
 * backend quota; every recorded op with that error must be 'unknown', at least one of
 * them applied (the crossing put: its value is in the store), and the history judged.
 */
#include "harness/history/history.h"
#include "harness/run/run.h"

#include "fl_test.h"
#include "fl_tmpdir.h"

#include <stdlib.h>
#include <unistd.h>

#define NOSPACE "etcdserver: mvcc: database space exceeded"

struct tally {
    int nospace, nospace_unknown, nospace_other, ok;
};

static int count_op(void *arg, const struct hist_op *op)
{
    struct tally *t = arg;
    if (op->status == HIST_STATUS_OK)
        t->ok++;
    if (op->error && !strcmp(op->error, NOSPACE)) {
        t->nospace++;
        if (op->status == HIST_STATUS_UNKNOWN)
            t->nospace_unknown++;
        else
            t->nospace_other++;
    }
    return 0;
}

int main(void)
{
    char dir[] = "/tmp/fl-test-nospace-XXXXXX";
    if (!fl_tmpdir_make(dir))
        return 1;
    char db[256];
    snprintf(db, sizeof db, "%s/nospace.db", dir);
    struct run_options o = {.scenario = "test_nospace.c", .seed = 5, .db_path = db};
    struct run_world *rw = NULL;
    char err[256] = "";
    CHECK_EQ_INT(run_world_open(&rw, &o, err, sizeof err), FL_OK);
    if (!rw)
        return fl_test_end();
    struct run_cluster_config c;
    struct run_clients_config k;
    struct run_workload_config w;
    run_cluster_config_default(&c);
    run_clients_config_default(&k);
    run_workload_config_default(&w);
    c.quota_bytes = 40000;
    k.count = 16; /* puts in flight together: some pass the check and cross at apply */
    w.rate = 3000;
    w.keys = 50;
    w.value_size = 200;
    w.mix_put = 1;
    w.mix_get = w.mix_delete = w.mix_txn = w.mix_range = 0;
    CHECK_EQ_INT(run_world_setup(rw, &c, &k, &w, RUN_CHECK_LINEARIZABILITY, err, sizeof err),
                 FL_OK);
    run_advance(rw, 6 * FL_S);
    struct run_node_status st;
    CHECK_EQ_INT(run_node_status(rw, 1, &st), FL_OK);
    struct run_result res;
    CHECK_EQ_INT(run_world_finish(rw, NULL, &res), FL_OK);
    struct tally t = {0};
    struct hist_db *h = NULL;
    CHECK_EQ_INT(hist_open(db, HIST_OPEN_READONLY, &h, err, sizeof err), FL_OK);
    if (h) {
        CHECK_EQ_INT(hist_ops_each(h, res.run_id, count_op, &t), FL_OK);
        hist_close(h);
    }
    CHECK(t.nospace > 10); /* the quota was reached and many puts refused */
    CHECK_EQ_INT(t.nospace_other, 0);
    CHECK_EQ_INT(t.nospace_unknown, t.nospace);
    /* puts that crossed the quota applied though answered with the error: the store
     * holds more revisions than the acknowledged puts made (revision 1 is the start) */
    CHECK(st.revision - 1 > t.ok);
    CHECK(st.db_size > c.quota_bytes);
    /* and the history, judged with them unknown, is linearizable */
    const char *lin = json_string_value(json_object_get(
        json_object_get(json_object_get(res.summary, "checks"), "linearizability"), "verdict"));
    CHECK(lin && !strcmp(lin, "pass"));
    run_result_close(&res);
    run_world_close(rw);
    fl_tmpdir_remove(dir);
    return fl_test_end();
}
