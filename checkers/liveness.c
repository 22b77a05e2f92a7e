/*
 * liveness.c: the `liveness` check (see liveness.h for the rules). Each segment of the
 * fault timeline is a window, from its start to the next segment's (or the end of the
 * run); a window is judged by the rules that apply to its state, and every judgment —
 * passed, failed or not judged and why — is listed in the detail (up to
 * LIVE_LIST_MAX windows; the counts cover all). Operations are scanned linearly per
 * window and client: histories of a run are small enough, and the cost is paid once at
 * the end of a run. Pure: no I/O.
 */
#include "checkers/liveness.h"

#include <inttypes.h>
#include <stdarg.h>

#define LIVE_LIST_MAX      64
#define LIVE_JITTER_NS     (500 * FL_MS) /* balancer-kill's "an election with its jitter" */
#define LIVE_HA_SETTLE_NS  (2 * FL_S)    /* health_aware drops a member silent for 2 s */
#define LIVE_HA_MIN_OK_PPM 990000        /* 99% */

struct judge {
    const struct liveness_input *in;
    struct fl_buf *out;
    int judged, not_judged, listed;
    bool failed, cut; /* cut: a window the end of the run cut before its bound */
    char first[300];
};

static const char *state_name(enum liveness_state s)
{
    return s == LIVENESS_HEALED ? "healed" : s == LIVENESS_MINORITY ? "minority" : "other";
}

/* One window's judgment; result "pass", "fail" or "not_judged". */
static void record(struct judge *j, int64_t from, int64_t to, enum liveness_state st,
                   const char *rule, const char *result, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));
static void record(struct judge *j, int64_t from, int64_t to, enum liveness_state st,
                   const char *rule, const char *result, const char *fmt, ...)
{
    char why[240];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    bool fail = !strcmp(result, "fail");
    FL_ASSERTF(fail || !strcmp(result, "pass") || !strcmp(result, "not_judged"), "result %s",
               result);
    FL_ASSERT(from <= to);
    if (!strcmp(result, "not_judged"))
        j->not_judged++;
    else
        j->judged++;
    if (fail && !j->failed)
        snprintf(j->first, sizeof j->first, "%s at %" PRId64 " ms: %s", rule, from / FL_MS, why);
    j->failed = j->failed || fail;
    if (j->listed++ >= LIVE_LIST_MAX)
        return;
    fl_buf_printf(j->out,
                  "%s{\"from_ms\":%" PRId64 ",\"to_ms\":%" PRId64
                  ",\"state\":\"%s\",\"rule\":\"%s\",\"result\":\"%s\",\"why\":\"",
                  j->listed > 1 ? "," : "", from / FL_MS, to / FL_MS, state_name(st), rule, result);
    for (const char *p = why; *p; p++) /* our own ASCII text: escape quotes only */
        fl_buf_printf(j->out, *p == '"' || *p == '\\' ? "\\%c" : "%c", *p);
    fl_buf_printf(j->out, "\"}");
}

static bool leader_between(const struct liveness_input *in, int64_t from, int64_t to)
{
    for (size_t i = 0; i < in->n_leaders; i++)
        if (in->leaders_ns[i] >= from && in->leaders_ns[i] <= to)
            return true;
    return false;
}

/* The first success (return time) in [from, to] of client (0: any) among writes only
 * or all calls, counting only calls made at or after call_from. -1 when none. */
static int64_t first_ok(const struct liveness_input *in, int client, bool writes, int64_t call_from,
                        int64_t from, int64_t to)
{
    int64_t best = -1;
    for (size_t i = 0; i < in->n_ops; i++) {
        const struct liveness_op *o = &in->ops[i];
        if (o->client <= 0 || (client && o->client != client) || (writes && !o->write) || !o->ok ||
            o->call_ns < call_from || o->return_ns < from || o->return_ns > to)
            continue;
        if (best < 0 || o->return_ns < best)
            best = o->return_ns;
    }
    FL_ASSERT(best == -1 || (best >= from && best <= to));
    return best;
}

/* Whether client (0: any) had a call (a write, if writes) made in [from, to) or still
 * outstanding at from. */
static bool attempted(const struct liveness_input *in, int client, bool writes, int64_t from,
                      int64_t to, bool outstanding_counts)
{
    for (size_t i = 0; i < in->n_ops; i++) {
        const struct liveness_op *o = &in->ops[i];
        if (o->client <= 0 || (client && o->client != client) || (writes && !o->write))
            continue;
        if (o->call_ns >= from && o->call_ns < to)
            return true;
        if (outstanding_counts && o->call_ns < from && (o->return_ns < 0 || o->return_ns >= from))
            return true;
    }
    return false;
}

static int64_t heal_bound(const struct liveness_input *in)
{
    int64_t b =
        in->heal_bound_ns > 0 ? in->heal_bound_ns : LIVENESS_HEAL_ELECTIONS * in->election_ns;
    FL_ASSERT(b > 0);
    return b;
}

/* Whether every client is pinned_random (none fails over from a paused member). */
static bool all_pinned(const struct liveness_input *in)
{
    for (size_t c = 0; c < in->n_clients; c++)
        if (strcmp(in->clients[c].policy, "pinned_random"))
            return false;
    return in->n_clients > 0;
}

/* A leader and a write within the bound after the window [h, e) began (rule: after_heal
 * for a heal, quorum_up for a minority window in cluster_only). A write that succeeded
 * proves a leader: with cluster_only the leader events are not needed. */
static void judge_write(struct judge *j, const struct liveness_segment *sg, int64_t e,
                        const char *rule)
{
    const struct liveness_input *in = j->in;
    int64_t h = sg->at_ns, bound = heal_bound(in);
    int64_t lim = FL_MIN(e, h + bound);
    bool leader = in->cluster_only || sg->leader || leader_between(in, h, lim);
    const char *since = strcmp(rule, "after_heal") ? "the fault began" : "the heal";
    int64_t w = first_ok(in, 0, true, INT64_MIN, h, lim);
    if (leader && w >= 0) {
        record(j, h, e, sg->state, rule, "pass",
               "a leader, and a write succeeded %" PRId64 " ms after %s", (w - h) / FL_MS, since);
    } else if (e < h + bound && !attempted(in, 0, true, h, lim, true)) {
        record(j, h, e, sg->state, rule, "not_judged",
               "the window lasted %" PRId64 " ms, less than the bound (%" PRId64
               " ms), and no write was attempted",
               (e - h) / FL_MS, bound / FL_MS);
    } else if (e < h + bound) {
        bool cut = e >= in->end_ns; /* a write was tried: the end of the run cut it short */
        j->cut = j->cut || cut;
        record(j, h, e, sg->state, rule, "not_judged",
               "the window lasted %" PRId64 " ms, less than the bound (%" PRId64 " ms)%s",
               (e - h) / FL_MS, bound / FL_MS, cut ? ": the run ended (unknown)" : "");
    } else if (!attempted(in, 0, true, h, lim, true)) {
        record(j, h, e, sg->state, rule, "not_judged", "no write was attempted");
    } else if (!leader) {
        record(j, h, e, sg->state, rule, "fail", "no leader within %" PRId64 " ms after %s",
               bound / FL_MS, since);
    } else {
        record(j, h, e, sg->state, rule, "fail",
               "no write succeeded within %" PRId64 " ms after %s", bound / FL_MS, since);
    }
}

/* after_heal and client_heal for the healed window [h, e). */
static void judge_heal(struct judge *j, const struct liveness_segment *sg, int64_t e)
{
    const struct liveness_input *in = j->in;
    int64_t h = sg->at_ns, bound = heal_bound(in);
    int64_t lim = FL_MIN(e, h + bound);
    judge_write(j, sg, e, "after_heal");
    for (size_t c = 0; c < in->n_clients && !in->cluster_only; c++) {
        int id = in->clients[c].id;
        if (!attempted(in, id, false, h, lim, false) ||
            first_ok(in, id, false, INT64_MIN, h, lim) >= 0)
            continue;
        if (e < h + bound)
            record(j, h, e, sg->state, "client_heal", "not_judged",
                   "client %d (%s): no success yet when the window ended", id,
                   in->clients[c].policy);
        else
            record(j, h, e, sg->state, "client_heal", "fail",
                   "client %d (%s): no call succeeded within %" PRId64 " ms after the heal", id,
                   in->clients[c].policy, bound / FL_MS);
    }
}

/* quorum_up (cluster_only) for the minority window [s, e). */
static void judge_quorum_up(struct judge *j, const struct liveness_segment *sg, int64_t e)
{
    if (sg->gray && all_pinned(j->in)) {
        record(j, sg->at_ns, e, sg->state, "quorum_up", "not_judged",
               "every client is pinned_random and a faulty member is paused or cut off");
        return;
    }
    judge_write(j, sg, e, "quorum_up");
}

/* failover for every client, in the minority window [s, e). */
static void judge_failover(struct judge *j, const struct liveness_segment *sg, int64_t e)
{
    const struct liveness_input *in = j->in;
    int64_t s = sg->at_ns, bound = in->client_timeout_ns + 2 * in->election_ns + LIVE_JITTER_NS;
    int64_t lim = FL_MIN(e, s + bound);
    for (size_t c = 0; c < in->n_clients; c++) {
        int id = in->clients[c].id;
        if (!attempted(in, id, false, s, lim, false))
            continue;
        if (sg->gray && !strcmp(in->clients[c].policy, "pinned_random")) {
            record(j, s, e, sg->state, "failover", "not_judged",
                   "client %d (pinned_random): grpc 1.0 stays on a member whose connection "
                   "stays open (paused or cut off)",
                   id);
            continue;
        }
        int64_t ok = first_ok(in, id, false, s, s, lim);
        if (ok >= 0)
            record(j, s, e, sg->state, "failover", "pass",
                   "client %d (%s) failed over in %" PRId64 " ms", id, in->clients[c].policy,
                   (ok - s) / FL_MS);
        else if (e < s + bound)
            record(j, s, e, sg->state, "failover", "not_judged",
                   "client %d (%s): the window lasted %" PRId64 " ms, less than the bound (%" PRId64
                   " ms)",
                   id, in->clients[c].policy, (e - s) / FL_MS, bound / FL_MS);
        else
            record(j, s, e, sg->state, "failover", "fail",
                   "client %d (%s): no call made after the fault succeeded within %" PRId64 " ms",
                   id, in->clients[c].policy, bound / FL_MS);
    }
}

/* health_aware keeps serving in the minority window [s, e) when the leader stands. */
static void judge_health_aware(struct judge *j, const struct liveness_segment *sg, int64_t e)
{
    const struct liveness_input *in = j->in;
    if (sg->leader_affected)
        return;
    int64_t from = sg->at_ns + in->election_ns + LIVE_HA_SETTLE_NS, to = e - in->client_timeout_ns;
    for (size_t c = 0; c < in->n_clients; c++) {
        if (strcmp(in->clients[c].policy, "health_aware"))
            continue;
        int id = in->clients[c].id;
        int64_t calls = 0, ok = 0;
        for (size_t i = 0; i < in->n_ops && from < to; i++) {
            const struct liveness_op *o = &in->ops[i];
            if (o->client != id || o->call_ns < from || o->call_ns >= to)
                continue;
            calls++;
            ok += o->ok;
        }
        if (calls < LIVENESS_HA_MIN_CALLS) {
            if (calls)
                record(j, sg->at_ns, e, sg->state, "health_aware", "not_judged",
                       "client %d: %" PRId64 " calls in the settled window, fewer than %d", id,
                       calls, LIVENESS_HA_MIN_CALLS);
            continue;
        }
        FL_ASSERT(ok <= calls);
        bool pass = ok * 1000000 >= calls * LIVE_HA_MIN_OK_PPM;
        record(j, sg->at_ns, e, sg->state, "health_aware", pass ? "pass" : "fail",
               "client %d: %" PRId64 " of %" PRId64 " calls succeeded (at least 99%% wanted)", id,
               ok, calls);
    }
}

static bool alarmed_at(const struct liveness_input *in, int64_t t)
{
    for (size_t a = 0; a < in->n_alarms; a++) {
        int64_t from = in->alarms_ns[2 * a], to = in->alarms_ns[2 * a + 1];
        if (t >= from && (to < 0 || t < to))
            return true;
    }
    return false;
}

/* The segments with the alarm intervals laid over them: "other" while an alarm is
 * active, split at every alarm boundary (a segment that starts at an alarm's end has
 * no leader known at its start). Returns a new array of *n segments. */
static struct liveness_segment *overlay_alarms(const struct liveness_input *in, size_t *n)
{
    size_t cap = in->n_segments + 2 * in->n_alarms + 1, k = 0;
    struct liveness_segment *out = fl_calloc(cap, sizeof *out);
    size_t si = 0, ai = 0; /* next segment start; next alarm boundary (2 per alarm) */
    for (;;) {
        int64_t ts = si < in->n_segments ? in->segments[si].at_ns : INT64_MAX;
        int64_t ta = INT64_MAX;
        while (ai < 2 * in->n_alarms && in->alarms_ns[ai] < 0)
            ai++; /* an open interval has no end */
        if (ai < 2 * in->n_alarms)
            ta = in->alarms_ns[ai];
        int64_t t = FL_MIN(ts, ta);
        if (t == INT64_MAX)
            break;
        struct liveness_segment sg = {.at_ns = t, .state = LIVENESS_OTHER};
        if (t == ts)
            sg = in->segments[si];
        else if (si > 0)
            sg = (struct liveness_segment){.at_ns = t,
                                           .state = in->segments[si - 1].state,
                                           .leader_affected = in->segments[si - 1].leader_affected,
                                           .gray = in->segments[si - 1].gray};
        if (alarmed_at(in, t))
            sg.state = LIVENESS_OTHER;
        si += t == ts;
        ai += t == ta;
        FL_ASSERT(!k || out[k - 1].at_ns <= t); /* both inputs ascending */
        if (k && out[k - 1].at_ns == t) {
            out[k - 1] = sg;
        } else if (!k || out[k - 1].state != sg.state || out[k - 1].gray != sg.gray ||
                   out[k - 1].leader_affected != sg.leader_affected) {
            FL_ASSERT(k < cap); /* one segment at most per boundary: cap counts them all */
            out[k++] = sg;
        }
    }
    *n = k;
    return out;
}

/* What liveness.h promises the caller gives: arrays where counted, segments, leaders and
 * alarm intervals ascending, only the last alarm interval open. */
static void check_input(const struct liveness_input *in)
{
    FL_ASSERT(!in->n_segments || in->segments);
    FL_ASSERT(!in->n_leaders || in->leaders_ns);
    FL_ASSERT(!in->n_clients || in->clients);
    FL_ASSERT(!in->n_ops || in->ops);
    FL_ASSERT(!in->n_alarms || in->alarms_ns);
    for (size_t i = 1; i < in->n_segments; i++)
        FL_ASSERTF(in->segments[i - 1].at_ns <= in->segments[i].at_ns,
                   "segment %zu at %" PRId64 " ns before segment %zu at %" PRId64 " ns", i,
                   in->segments[i].at_ns, i - 1, in->segments[i - 1].at_ns);
    for (size_t i = 1; i < in->n_leaders; i++)
        FL_ASSERT(in->leaders_ns[i - 1] <= in->leaders_ns[i]);
    for (size_t a = 0; a < in->n_alarms; a++) {
        int64_t from = in->alarms_ns[2 * a], to = in->alarms_ns[2 * a + 1];
        FL_ASSERTF(from >= 0 && (to < 0 ? a + 1 == in->n_alarms : from <= to),
                   "alarm interval %zu [%" PRId64 ", %" PRId64 ")", a, from, to);
        FL_ASSERT(a == 0 || in->alarms_ns[2 * a - 1] <= from);
    }
}

enum liveness_verdict liveness_judge(const struct liveness_input *in, struct fl_buf *out)
{
    FL_ASSERT(in != NULL && out != NULL && in->election_ns > 0 && in->client_timeout_ns >= 0);
    check_input(in);
    struct liveness_input laid = *in;
    struct liveness_segment *segs = NULL;
    if (in->n_alarms) {
        segs = overlay_alarms(in, &laid.n_segments);
        laid.segments = segs;
        in = &laid;
    }
    struct judge j = {.in = in, .out = out};
    fl_buf_reset(out);
    fl_buf_printf(out, "{\"windows\":[");
    bool healed_once = false;
    for (size_t i = 0; i < in->n_segments; i++) {
        const struct liveness_segment *sg = &in->segments[i];
        int64_t e = i + 1 < in->n_segments ? in->segments[i + 1].at_ns : in->end_ns;
        e = FL_MIN(e, in->end_ns);
        if (sg->at_ns >= in->end_ns)
            break;
        /* A heal is a healed segment after a faulty one (the start of a run is not). */
        if (sg->state == LIVENESS_HEALED && i > 0 && in->segments[i - 1].state != LIVENESS_HEALED) {
            healed_once = true;
            judge_heal(&j, sg, e);
        } else if (sg->state == LIVENESS_MINORITY && in->cluster_only) {
            judge_quorum_up(&j, sg, e);
        } else if (sg->state == LIVENESS_MINORITY) {
            judge_failover(&j, sg, e);
            judge_health_aware(&j, sg, e);
        }
    }
    fl_buf_printf(out,
                  "],\"judged\":%d,\"not_judged\":%d,\"listed\":%d,\"first_failure\":", j.judged,
                  j.not_judged, FL_MIN(j.listed, LIVE_LIST_MAX));
    if (j.failed)
        fl_buf_printf(out, "\"%s\"", j.first); /* our text: no quotes in it */
    else
        fl_buf_printf(out, "null");
    if (!healed_once)
        fl_buf_printf(out, ",\"note\":\"nothing to judge after a heal: the run never healed "
                           "(no fault ended with every fault off)\"");
    if (j.cut && !j.failed)
        fl_buf_printf(out, ",\"unknown\":\"the run ended before a window's bound elapsed\"");
    fl_buf_printf(out, "}");
    FL_ASSERT(j.listed == j.judged + j.not_judged);
    FL_ASSERT(!j.failed || j.judged > 0);
    free(segs);
    return j.failed ? LIVENESS_FAIL : j.cut ? LIVENESS_UNKNOWN : LIVENESS_PASS;
}
