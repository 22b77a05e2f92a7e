/*
 * test_mirror_spot.c: the mirror's per-op cross-check (issue 15 §1), which runs on
 * every RUN_MIRROR_SPOT_EVERY-th op of a run of any size while the ops checked hold
 * at most a share of the text recorded (test_share): an op whose fast-path conversion
 * (from the client's request) differs from what the loader makes of its row's text
 * makes the run an internal error naming the op; an op whose two paths agree passes
 * unnoticed. The rows are handed to run_mirror_op directly, as
 * on_op_done hands them over, with the request text made from another request for
 * the difference.
 */
#include "harness/run/run_int.h"

#include "fl_test.h"
#include "fl_tmpdir.h"
#include "run_fixture.h"

#include <stdlib.h>
#include <unistd.h>

static char dir[] = "/tmp/fl-test-mirror-spot-XXXXXX";

static struct run_world *open_world(const char *db)
{
    struct run_options o = {.scenario = "test_mirror_spot.c", .seed = 4, .db_path = db};
    struct run_world *rw = fx_open(&o);
    struct fx_config x;
    fx_config_default(&x);
    x.k.count = 1;
    x.w.rate = 0;
    fx_setup(rw, &x, RUN_CHECK_LINEARIZABILITY);
    return rw;
}

/* A failed put of key "a" = "1" handed to the mirror as op op_id, its request text made
 * from a put of text_key; the op is the next to be spot-checked. */
static void hand_put(struct run_world *rw, int64_t op_id, const char *text_key)
{
    struct kvc_request req, text_req;
    memset(&req, 0, sizeof req);
    req.method = KVC_PUT;
    req.op.kind = KVC_OP_PUT;
    req.op.key = (struct kvc_bytes){(const uint8_t *)"a", 1};
    req.op.value = (struct kvc_bytes){(const uint8_t *)"1", 1};
    text_req = req;
    text_req.op.key = (struct kvc_bytes){(const uint8_t *)text_key, strlen(text_key)};
    struct kvc_result res;
    memset(&res, 0, sizeof res);
    res.method = KVC_PUT;
    res.status = KVC_FAIL;
    res.error = "etcdserver: request timed out";
    res.call_ns = 10 * op_id;
    res.return_ns = 10 * op_id + 5;
    res.answered = true;
    struct fl_buf text;
    fl_buf_init(&text);
    run_request_text(&text, &text_req);
    struct hist_op row;
    hist_op_init(&row);
    row.client_id = 1;
    row.kind = "put";
    row.key = "a";
    row.key_len = 1;
    row.request = fl_buf_cstr(&text);
    row.call_ns = res.call_ns;
    row.return_ns = res.return_ns;
    row.status = HIST_STATUS_FAIL;
    row.error = res.error;
    row.value = "1";
    row.value_len = 1;
    rw->mirror.ops = 32 * (rw->mirror.ops / 32 + 1); /* the next op is checked */
    run_mirror_op(rw, op_id, &row, &req, &res, false);
    fl_buf_close(&text);
}

static void test_agree(void)
{
    char db[256];
    snprintf(db, sizeof db, "%s/agree.db", dir);
    struct run_world *rw = open_world(db);
    int64_t before = rw->mirror.spot_checks;
    hand_put(rw, 1000001, "a");
    CHECK_EQ_INT(rw->mirror.spot_checks, before + 1);
    CHECK_EQ_STR(rw->mirror.spot_err, "");
    run_world_close(rw);
}

static void test_differ(void)
{
    char db[256];
    snprintf(db, sizeof db, "%s/differ.db", dir);
    struct run_world *rw = open_world(db);
    hand_put(rw, 1000001, "b");
    CHECK(strstr(rw->mirror.spot_err, "op 1000001") != NULL);
    struct run_result res;
    CHECK_EQ_INT(run_world_finish(rw, NULL, &res), FL_EIO);
    CHECK_EQ_INT(res.exit_code, 3);
    CHECK_EQ_INT(res.verdict, RUN_ERROR);
    CHECK(res.error && strstr(res.error, "differs from the loader's") != NULL);
    CHECK(res.error && strstr(res.error, "op 1000001") != NULL);
    run_result_close(&res);
    run_world_close(rw);
}

/* The checks parse again at most 1/RUN_MIRROR_SPOT_SHARE of the text recorded (plus
 * one op): a candidate op beyond that share is not checked, one within it is. */
static void test_share(void)
{
    char db[256];
    snprintf(db, sizeof db, "%s/share.db", dir);
    struct run_world *rw = open_world(db);
    int64_t before = rw->mirror.spot_checks;
    hand_put(rw, 1000001, "a");
    CHECK_EQ_INT(rw->mirror.spot_checks, before + 1);
    CHECK(rw->mirror.spot_bytes > 0 && rw->mirror.spot_bytes == rw->mirror.text_bytes);
    hand_put(rw, 1000002, "a"); /* the share is spent: not checked */
    CHECK_EQ_INT(rw->mirror.spot_checks, before + 1);
    rw->mirror.text_bytes = 256 * rw->mirror.spot_bytes; /* as if much more was recorded */
    hand_put(rw, 1000003, "a");
    CHECK_EQ_INT(rw->mirror.spot_checks, before + 2);
    CHECK_EQ_STR(rw->mirror.spot_err, "");
    run_world_close(rw);
}

int main(void)
{
    static const struct fl_case cases[] = {FL_CASE(test_agree), FL_CASE(test_differ),
                                           FL_CASE(test_share)};
    return fl_test_main_in(dir, cases, FL_NCASES(cases));
}
