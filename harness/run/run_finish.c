/*
 * run_finish.c: the end of a run (DESIGN §2 step 5, §3.9). Safety then liveness, as
 * VOPR does: the workload and the nemesis stop; when `converge` is asked for, every
 * fault is healed and the world runs in 100 ms steps until every live member has the
 * same revision and KV hash, within a bound; outstanding calls drain; the clients
 * close (calls still pending are recorded as unknown); then the checkers judge the
 * history, the one kept in memory as it was recorded (run_mirror.c: exactly what
 * reading it back from SQLite gives, which it does when the mirror could not follow),
 * and their verdicts go into `checks`. The digest folds the
 * simulator's event digest and the digest of every history row; it is computed after
 * the last row and stored with the verdict.
 */
#include "harness/run/run_int.h"
#include "harness/common/exit_codes.h"

#include "harness/history/load.h"

#define RUN_CONVERGE_BOUND_NS (30 * FL_S)
#define RUN_DRAIN_BOUND_NS    (10 * FL_S)

const char *run_verdict_name(enum run_verdict v)
{
    static const char *const names[] = {
        [RUN_PASS] = "pass", [RUN_FAIL] = "fail", [RUN_UNKNOWN] = "unknown", [RUN_ERROR] = "error"};
    return FL_ENUM_NAME(names, v, "error");
}

void run_expect(struct run_world *rw, bool ok, const char *message, size_t message_len,
                const char *observed_json, int line)
{
    json_t *observed =
        observed_json ? json_loads(observed_json, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL) : NULL;
    json_t *d = json_object();
    json_object_set_new(d, "message",
                        hist_json_bytes(message ? message : "", message ? message_len : 0));
    json_object_set_new(d, "observed", observed ? observed : json_null());
    json_object_set_new(d, "at_ns", json_integer(sim_now_ns(rw->w)));
    json_object_set_new(d, "line", json_integer(line));
    char *text = json_dumps(d, JSON_COMPACT | JSON_ENSURE_ASCII);
    if (rw->db)
        hist_check_add(rw->db, "expect", ok ? "pass" : "fail", 0, text);
    else
        sim_digest_str(rw->w, text);
    free(text);
    json_object_set_new(d, "verdict", json_string(ok ? "pass" : "fail"));
    json_array_append_new(rw->sum.expects, d);
    rw->sum.expect_total++;
    rw->sum.expect_failed += !ok;
}

#define ENDED_EARLY_REASON                                                                         \
    "the scenario stopped before its end: nothing wrong in the history recorded until then, "      \
    "and the rest was never recorded"

/* A run that stopped early (rw->ended_early) judged only what it recorded: a check that
 * found nothing wrong there is 'unknown', never 'pass'. True when it downgraded *v. */
static bool early_unknown(const struct run_world *rw, int *v)
{
    if (!rw->ended_early || *v != CHK_PASS)
        return false;
    *v = CHK_UNKNOWN;
    return true;
}

static void add_check(struct run_world *rw, json_t *checks, const char *name, int verdict,
                      json_t *detail)
{
    if (early_unknown(rw, &verdict))
        json_object_set_new(detail, "reason", json_string(ENDED_EARLY_REASON));
    char *text = json_dumps(detail, JSON_COMPACT | JSON_ENSURE_ASCII);
    if (rw->db)
        hist_check_add(rw->db, name, chk_verdict_name(verdict), 0, text);
    free(text);
    json_object_set_new(detail, "verdict", json_string(chk_verdict_name(verdict)));
    json_object_set_new(checks, name, detail);
}

/* One look at the members: converged? *state (replaced) says where each stands: on the
 * simulated cluster each node's revision and KV hash; on etcd run_etcd_converged's. */
static bool converged_now(struct run_world *rw, json_t **state)
{
    json_decref(*state);
    *state = NULL;
    if (rw->tgt)
        return rw->tgt->converged(rw, state);
    const char *detail = "";
    bool ok = srv_cluster_converged(rw->cl, &detail);
    *state = json_string(detail ? detail : "");
    return ok;
}

/* etcd's corruption check, online: the members' KV hashes at every shared revision
 * (on etcd HashKV of every member of the leader's cluster at one revision). Into d;
 * true when they differ. */
static bool corruption(struct run_world *rw, json_t *d)
{
    if (rw->tgt) {
        const json_t *corrupt;
        int compared = rw->tgt->checkpoints(rw, &corrupt);
        json_object_set_new(d, "corruption", corrupt ? json_deep_copy(corrupt) : json_null());
        json_object_set_new(d, "hash_compared", json_integer(compared));
        return corrupt != NULL;
    }
    const char *corrupt = srv_cluster_corruption(rw->cl);
    json_object_set_new(d, "corruption", corrupt ? json_string(corrupt) : json_null());
    json_object_set_new(d, "hash_compared",
                        json_integer((json_int_t)srv_cluster_kv_compared(rw->cl)));
    return corrupt != NULL;
}

static int converge_phase(struct run_world *rw, json_t *checks)
{
    run_heal_all(rw);
    int64_t start = sim_now_ns(rw->w);
    json_t *state = rw->tgt ? NULL : json_string(""); /* a run stopped before a look */
    bool ok = false;
    while (!run_world_stopped(rw)) {
        ok = converged_now(rw, &state);
        if (ok || sim_now_ns(rw->w) - start >= RUN_CONVERGE_BOUND_NS)
            break;
        run_advance(rw, sim_now_ns(rw->w) + 100 * FL_MS);
    }
    json_t *d = json_object();
    json_object_set_new(d, "converged", json_boolean(ok));
    json_object_set_new(d, "after_ms", json_integer((sim_now_ns(rw->w) - start) / FL_MS));
    json_object_set_new(d, "bound_ms", json_integer(RUN_CONVERGE_BOUND_NS / FL_MS));
    json_object_set_new(d, "state", state ? state : json_null());
    ok = !corruption(rw, d) && ok;
    add_check(rw, checks, "converge", ok ? CHK_PASS : CHK_FAIL, d);
    return ok ? CHK_PASS : CHK_FAIL;
}

static void drain_and_close(struct run_world *rw, json_t *clients)
{
    int64_t until = sim_now_ns(rw->w) + RUN_DRAIN_BOUND_NS;
    while (rw->wl.outstanding > 0 && sim_now_ns(rw->w) < until && !run_world_stopped(rw))
        if (!run_sim_step(rw))
            break;
    for (int i = 0; i < rw->n_clients; i++) {
        struct run_client *c = &rw->clients[i];
        if (!c->c)
            continue;
        kvc_client_finish(c->c);
        kvc_client_close(c->c);
        c->closed = true;
        kvc_client_stats(c->c, &c->stats);
        json_array_append_new(clients, kvc_stats_json(&c->stats));
    }
}

/* Each client's own figures and its last attempts into the history (`clients`): what
 * the ops rows cannot tell (connections, endpoints, retries, failovers). */
static int record_clients(struct run_world *rw, json_t *clients)
{
    for (int i = 0, k = 0; i < rw->n_clients; i++) {
        struct run_client *c = &rw->clients[i];
        if (!c->c)
            continue;
        char *stats =
            json_dumps(json_array_get(clients, (size_t)k++), JSON_COMPACT | JSON_ENSURE_ASCII);
        json_t *a = kvc_attempts_json(c->c, 0);
        char *attempts = json_dumps(a, JSON_COMPACT | JSON_ENSURE_ASCII);
        json_decref(a);
        int rc = rw->db ? hist_client_add(rw->db, kvc_client_id(c->c), c->stats.balancer, stats,
                                          attempts)
                        : FL_OK;
        free(stats);
        free(attempts);
        if (rc)
            return rc;
    }
    return FL_OK;
}

/* The run cannot vouch for its history (a write failed, it could not be read back or
 * verified): it ends 'error' with this reason. The first one counts. */
static void run_fatal(struct run_world *rw, int code, const char *reason)
{
    if (rw->fatal_code)
        return;
    rw->fatal_code = code;
    snprintf(rw->fatal, sizeof rw->fatal, "%s", reason);
}

/* An asked-for checker that could not judge: 'unknown' with the reason, never absent. */
static void unknown_check(struct run_world *rw, json_t *checks, const char *name, const char *why)
{
    json_t *d = json_object();
    json_object_set_new(d, "reason", json_string(why));
    add_check(rw, checks, name, CHK_UNKNOWN, d);
}

static const struct {
    const char *name;
    unsigned bit;
} kv_parts[] = {{"linearizability", RUN_CHECK_LINEARIZABILITY}, {"watch", RUN_CHECK_WATCH}};

static void kv_unknown(struct run_world *rw, json_t *checks, int *worst, const char *why)
{
    for (size_t i = 0; i < FL_ARRAY_LEN(kv_parts); i++)
        if (rw->checks & kv_parts[i].bit)
            unknown_check(rw, checks, kv_parts[i].name, why);
    *worst = FL_MAX(*worst, 1); /* 0 pass, 1 unknown, 2 fail (not CHK_* values) */
}

/* The verdicts of a checked history into checks (and the checks table). */
static void kv_store(struct run_world *rw, json_t *checks, int *worst, const struct chk_history *h,
                     const struct chk_result *res, int64_t elapsed_ms)
{
    struct chk_result early = *res; /* shallow: only verdicts and reasons change */
    const struct chk_result *r = &early;
    bool down[2] = {early_unknown(rw, &early.lin.verdict), early_unknown(rw, &early.watch.verdict)};
    if (down[0])
        snprintf(early.lin.reason, sizeof early.lin.reason, "%s", ENDED_EARLY_REASON);
    if (down[1])
        snprintf(early.watch.reason, sizeof early.watch.reason, "%s", ENDED_EARLY_REASON);
    hist_checks_store(rw->db, h, r, elapsed_ms);
    json_t *all = chk_result_json(h, r);
    for (size_t i = 0; i < FL_ARRAY_LEN(kv_parts); i++) {
        if (!(rw->checks & kv_parts[i].bit))
            continue;
        json_t *o = json_object_get(all, kv_parts[i].name);
        int v = i == 0 ? r->lin.verdict : r->watch.verdict;
        *worst = FL_MAX(*worst, v == CHK_FAIL ? 2 : v == CHK_UNKNOWN ? 1 : 0);
        o = o ? json_incref(o) : json_object();
        /* Nothing to judge is a pass that says so (the note is the summary's only: the
         * checks row, and the digest, stay as they were). */
        if (i == 0 && h->op_count == 0)
            json_object_set_new(o, "note", json_string("no operations to judge"));
        if (i == 1 && h->watch_count == 0)
            json_object_set_new(o, "note", json_string("no watches to judge"));
        if (down[i]) /* the watch JSON carries a reason only when undecided */
            json_object_set_new(o, "reason", json_string(ENDED_EARLY_REASON));
        json_object_set_new(checks, kv_parts[i].name, o);
    }
    json_decref(all);
}

static int kv_checks(struct run_world *rw, json_t *checks, int *worst)
{
    struct chk_history h;
    struct chk_result r;
    struct fl_buf err;
    json_t *cut = NULL; /* run_restore_cut's note: what a restore left unjudged */
    chk_history_init(&h);
    fl_buf_init(&err);
    memset(&r, 0, sizeof r);
    int rc = hist_flush(rw->db);
    if (rc) {
        fl_buf_printf(&err, "a write to the history failed: %s", hist_errmsg(rw->db));
        run_fatal(rw, rc, fl_buf_cstr(&err));
        fl_buf_reset(&err);
        fl_buf_printf(&err, "not judged: the history is incomplete (%s)", rw->fatal);
        kv_unknown(rw, checks, worst, fl_buf_cstr(&err));
        goto out;
    }
    double t0 = run_wall_now_s(); /* checks.elapsed_ms only: never folded, never decides */
    rc = run_mirror_take(rw, &h, &err);
    if (rc == FL_ECORRUPT || rc == FL_EINTERNAL) {
        run_fatal(rw, rc, fl_buf_cstr(&err));
        kv_unknown(rw, checks, worst, rw->fatal);
        goto out;
    }
    if (!rc && (rw->checks & RUN_CHECK_LIVENESS)) {
        int v = CHK_PASS;
        json_t *d = run_liveness_judge(rw, &h, &v);
        add_check(rw, checks, "liveness", v, d);
        *worst = FL_MAX(*worst, v == CHK_FAIL ? 2 : v == CHK_UNKNOWN ? 1 : 0);
    }
    if (!(rw->checks & (RUN_CHECK_LINEARIZABILITY | RUN_CHECK_WATCH)))
        goto out; /* liveness only (a liveness left unjudged: asked_unjudged) */
    if (!rc)
        rc = run_restore_cut(rw, &h, &cut, &err);
    if (!rc)
        rc = chk_check(&h, NULL, &r);
    int64_t elapsed_ms = (int64_t)((run_wall_now_s() - t0) * 1000.0);
    if (rc) {
        kv_unknown(rw, checks, worst, err.len ? fl_buf_cstr(&err) : fl_strerror(rc));
        goto out;
    }
    kv_store(rw, checks, worst, &h, &r, elapsed_ms);
    for (size_t i = 0; cut && i < FL_ARRAY_LEN(kv_parts); i++) {
        json_t *o = json_object_get(checks, kv_parts[i].name);
        if (o)
            json_object_set(o, "restore_cut", cut); /* what the rewind left unjudged */
    }
    chk_result_close(&r);
out:
    json_decref(cut);
    chk_history_close(&h);
    fl_buf_close(&err);
    return FL_OK;
}

/* Every checker the scenario asked for appears in the summary: one the run never got
 * to (a script error, an interrupt before the end) is 'unknown' with the reason. */
static void asked_unjudged(struct run_world *rw, json_t *checks, const char *script_error,
                           int *worst)
{
    static const struct {
        const char *name;
        unsigned bit;
    } all[] = {{"linearizability", RUN_CHECK_LINEARIZABILITY},
               {"watch", RUN_CHECK_WATCH},
               {"raft_safety", RUN_CHECK_RAFT_SAFETY},
               {"converge", RUN_CHECK_CONVERGE},
               {"liveness", RUN_CHECK_LIVENESS}};
    const char *why = script_error      ? "not judged: the scenario failed before the end"
                      : rw->interrupted ? "not judged: the run was interrupted"
                      : !rw->db         ? "not judged: the run keeps no history"
                                        : "not judged";
    for (size_t i = 0; i < FL_ARRAY_LEN(all); i++) {
        if ((rw->checks & all[i].bit) && !json_object_get(checks, all[i].name)) {
            bool tgt_why = !script_error && !rw->interrupted && rw->tgt &&
                           rw->tgt->raft_safety_unknown && all[i].bit == RUN_CHECK_RAFT_SAFETY;
            unknown_check(rw, checks, all[i].name, tgt_why ? rw->tgt->raft_safety_unknown : why);
            *worst = FL_MAX(*worst, 1);
        }
    }
}

/* worst: 0 pass, 1 unknown, 2 fail. rw->ended_early: the script did not reach its end (a
 * script error or an interrupt), so the expects it never reached are not judged. */
static int judge(struct run_world *rw, json_t *checks)
{
    int worst = 0;
    bool paranoid_raft = rw->par.violation && rw->par.raft;
    if (rw->cl && ((rw->checks & RUN_CHECK_RAFT_SAFETY) || paranoid_raft)) {
        const char *v = srv_cluster_safety_violation(rw->cl);
        if (!v && paranoid_raft)
            v = rw->par.violation; /* a Raft core's invariant (--paranoid) */
        json_t *d = json_object();
        json_object_set_new(d, "violation", v ? json_string(v) : json_null());
        struct fl_buf sb;
        fl_buf_init(&sb);
        srv_cluster_safety_summary(rw->cl, &sb);
        json_t *sj = json_loads(fl_buf_cstr(&sb), 0, NULL);
        if (sj)
            json_object_set_new(d, "checked", sj); /* per cluster ID: what was fed */
        fl_buf_close(&sb);
        add_check(rw, checks, "raft_safety", v ? CHK_FAIL : CHK_PASS, d);
        worst = v ? 2 : worst;
    }
    if (rw->tgt && rw->tgt->raft_safety && (rw->checks & RUN_CHECK_RAFT_SAFETY)) {
        json_t *d = NULL; /* the live target replays its members' feeds */
        int v = rw->tgt->raft_safety(rw, &d);
        add_check(rw, checks, "raft_safety", v, d);
        worst = FL_MAX(worst, v == CHK_FAIL ? 2 : v == CHK_UNKNOWN ? 1 : 0);
    }
    if (rw->par.violation && !rw->par.raft) {
        /* An MVCC store's invariant (--paranoid) stopped the run before convergence. */
        json_t *d = json_object();
        json_object_set_new(d, "invariant", json_string(rw->par.violation));
        add_check(rw, checks, "converge", CHK_FAIL, d);
        worst = 2;
    }
    if (rw->db && (rw->checks & (RUN_CHECK_LINEARIZABILITY | RUN_CHECK_WATCH | RUN_CHECK_LIVENESS)))
        kv_checks(rw, checks, &worst);
    json_t *e = json_object();
    const char *ev = rw->sum.expect_failed ? "fail" : rw->ended_early ? "unknown" : "pass";
    json_object_set_new(e, "verdict", json_string(ev));
    if (!rw->sum.expect_failed && rw->ended_early)
        json_object_set_new(e, "reason",
                            json_string("the scenario stopped before its end: the expects "
                                        "after that line never ran"));
    json_object_set_new(e, "total", json_integer(rw->sum.expect_total));
    json_object_set_new(e, "failed", json_integer(rw->sum.expect_failed));
    json_object_set(e, "items", rw->sum.expects);
    json_object_set_new(checks, "expect", e);
    if (rw->sum.expect_failed)
        worst = 2;
    return worst;
}

static json_t *summary(struct run_world *rw, const struct run_result *res, json_t *checks,
                       json_t *clients, const char *script_error, int64_t wall_ms)
{
    json_t *s = json_object(), *ops = json_object();
    json_object_set_new(s, "scenario", json_string(rw->scenario));
    json_object_set_new(s, "seed", hist_seed_json(rw->seed));
    json_object_set_new(s, "digest", res->digest[0] ? json_string(res->digest) : json_null());
    if (rw->target.kind != RUN_TARGET_SIM) {
        json_object_set_new(s, "target", json_string(run_target_name(rw->target.kind)));
        if (rw->target.kind == RUN_TARGET_ETCD)
            json_object_set_new(s, "etcd_version", json_string(rw->tgt->version(rw)));
        else
            json_object_set_new(s, "member_version", json_string(rw->tgt->version(rw)));
    }
    json_object_set_new(s, "verdict", json_string(run_verdict_name(res->verdict)));
    json_object_set_new(s, "sim_ms", json_integer(sim_now_ns(rw->w) / FL_MS));
    json_object_set_new(s, "wall_ms", json_integer(wall_ms));
    json_object_set_new(ops, "total", json_integer(rw->sum.ops_total));
    json_object_set_new(ops, "ok", json_integer(rw->sum.ops_ok));
    json_object_set_new(ops, "fail", json_integer(rw->sum.ops_fail));
    json_object_set_new(ops, "unknown", json_integer(rw->sum.ops_unknown));
    json_object_set_new(s, "ops", ops);
    json_object_set_new(s, "checks", checks);
    json_object_set(s, "faults", rw->sum.faults);
    json_object_set(s, "leaders", rw->sum.leaders);
    json_object_set_new(s, "clients", clients);
    json_object_set_new(s, "fault_ordinals", json_integer(rw->ord.n));
    json_t *cov = run_coverage_json(rw);
    if (cov)
        json_object_set_new(s, "coverage", cov);
    if (rw->setup) {
        json_t *wl = json_object();
        json_object_set_new(wl, "clients", json_integer(rw->n_clients));
        json_object_set_new(wl, "rate", json_integer(rw->wcfg.rate));
        json_object_set_new(wl, "keys", json_integer(rw->wcfg.keys));
        json_object_set_new(wl, "watchers", json_integer(rw->wcfg.watchers));
        json_object_set_new(wl, "nodes", json_integer(rw->ccfg.nodes ? rw->ccfg.nodes : 3));
        json_object_set_new(s, "workload", wl);
    }
    if (rw->run_id)
        json_object_set_new(s, "run_id", json_integer(rw->run_id));
    json_t *paranoid = run_paranoid_json(rw);
    if (paranoid)
        json_object_set_new(s, "paranoid", paranoid);
    if (rw->sum.extra)
        json_object_update_missing(s, rw->sum.extra);
    if (script_error)
        json_object_set_new(s, "error", json_string(script_error));
    else if (rw->fatal_code)
        json_object_set_new(s, "error", json_string(rw->fatal));
    return s;
}

/* The verdict and exit code (DESIGN §3.9) from the worst check and how the run ended. */
static void decide(struct run_world *rw, const char *script_error, int worst,
                   struct run_result *res)
{
    bool interrupted = rw->interrupted;
    if (script_error || interrupted || rw->fatal_code)
        res->verdict = RUN_ERROR;
    else
        res->verdict = worst == 2 ? RUN_FAIL : worst == 1 ? RUN_UNKNOWN : RUN_PASS;
    res->exit_code = res->verdict == RUN_PASS      ? FL_EXIT_PASS
                     : res->verdict == RUN_FAIL    ? FL_EXIT_FAIL
                     : res->verdict == RUN_UNKNOWN ? FL_EXIT_UNKNOWN
                     : rw->fatal_code
                         ? (rw->fatal_code == FL_ECORRUPT ? FL_EXIT_USAGE : FL_EXIT_INTERNAL)
                     : interrupted ? FL_EXIT_INTERNAL
                                   : FL_EXIT_USAGE;
    if (rw->fatal_code)
        snprintf(res->error, sizeof res->error, "%s", rw->fatal);
}

/* runs.reason for an 'error' run (a write error of the run takes precedence). */
static void set_reason(struct run_world *rw, const char *script_error)
{
    if (!rw->db)
        return;
    if (rw->fatal_code)
        hist_run_reason(rw->db, rw->fatal);
    else if (script_error)
        hist_run_reason(rw->db, script_error);
    else if (rw->interrupted) {
        const char *sig = hist_interrupt_name();
        char msg[64];
        snprintf(msg, sizeof msg, "interrupted by %s", sig ? sig : "a signal");
        hist_run_reason(rw->db, msg);
    }
}

int run_world_finish(struct run_world *rw, const char *script_error, struct run_result *res)
{
    memset(res, 0, sizeof *res);
    json_t *checks = json_object(), *clients = json_array();
    int worst = 0;
    rw->live.end_ns = sim_now_ns(rw->w); /* liveness judges what the scenario ran */
    if (rw->cl || rw->tgt)
        run_liveness_update(rw);
    if (rw->setup && (rw->cl || rw->tgt)) {
        run_workload_stop(rw);
        run_nemesis_stop(rw);
        if (!script_error)
            run_restore_finish(rw); /* the swarm's restore flow, when drawn */
        if (!script_error && !run_world_stopped(rw) && (rw->checks & RUN_CHECK_CONVERGE))
            worst = converge_phase(rw, checks) == CHK_FAIL ? 2 : 0;
        drain_and_close(rw, clients);
        /* a failed write is sticky: hist_run_end fails and the run ends 'error' */
        record_clients(rw, clients);
    }
    rw->ended_early = script_error || rw->interrupted;
    int judged = judge(rw, checks);
    /* once: FL_MAX evaluates its arguments twice */
    worst = FL_MAX(worst, judged);
    asked_unjudged(rw, checks, script_error, &worst);
    decide(rw, script_error, worst, res);
    struct fl_digest d;
    fl_digest_init(&d);
    fl_digest_u64(&d, sim_digest_value(rw->w));
    fl_digest_u64(&d, fl_digest_value(&rw->hdigest));
    fl_digest_hex(fl_digest_value(&d), res->digest);
    fl_digest_close(&d);
    if (rw->target.kind != RUN_TARGET_SIM)
        res->digest[0] = '\0'; /* a live run has none (summary: null) */
    int64_t wall_ms = (int64_t)((run_wall_now_s() - rw->wall_start_s) * 1000.0);
    int rc = FL_OK;
    if (rw->db) {
        set_reason(rw, script_error);
        rc = hist_run_end(rw->db, sim_now_ns(rw->w), wall_ms, res->digest[0] ? res->digest : NULL,
                          run_verdict_name(res->verdict));
        if (rc) {
            /* The row says 'error' (or, if even that write failed, 'running'): so must
             * the summary and the exit code. */
            fl_log(FL_LOG_ERROR, "%s", hist_errmsg(rw->db));
            if (!rw->fatal_code)
                run_fatal(rw, rc, hist_errmsg(rw->db));
            decide(rw, script_error, worst, res);
        }
    }
    res->run_id = rw->run_id;
    res->summary = summary(rw, res, checks, clients, script_error, wall_ms);
    return rw->fatal_code ? FL_EIO : FL_OK;
}

void run_result_close(struct run_result *res)
{
    json_decref(res->summary);
    res->summary = NULL;
}
