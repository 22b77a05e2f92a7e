/*
 * scn_shrinker.c: `faultline shrink` (DESIGN §3.9). Given a scenario and a seed whose
 * run fails, it searches for a smaller run that fails the same check with the same
 * seed, and writes it as the original script with a shrink{} directive on its first
 * line (scn_directive.c), which a plain `faultline run FILE --seed N` honours.
 *
 * Every candidate is a complete replay in a forked child process (scn_replay.c); the
 * parent never runs a world itself. A child that crashes or outlives a generous
 * wall-clock bound (the only use of a clock here, to survive a hang) counts as "does
 * not fail".
 *
 * The search, each step keeping whatever still fails the target check:
 *   1. faults: delta debugging over the ordinals of the recorded faults: all at once,
 *      then halves, quarters, ... down to one at a time;
 *   2. time: run/sleep/run_until durations scaled to 10, 25, 50 or 75 percent,
 *      everywhere or else from the first fault on;
 *   3. the run: a bisection for the earliest end_at that still fails;
 *   4. the cluster and the workload: nodes (down to 3), clients, rate, keys and
 *      watchers lowered;
 *   5. rounds of single-fault removal and steps 2-4 again, until a round changes
 *      nothing or the replays allowed are spent.
 * "The same check" is a check name (the first failing in DESIGN order, or --check);
 * for `expect` also the message of the first failed claim, for `watch` the guarantee
 * of the first violation.
 */
#include "harness/lua/scn_int.h"
#include "harness/common/text.h"
#include "harness/common/exit_codes.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <unistd.h>

#define SHR_RUNS_DEFAULT     400
#define SHR_TIMEOUT_MIN_MS   120000
#define SHR_END_AT_STEPS_MAX 12

/* SIGINT during the search: stop it and write the best run found so far. */
static volatile sig_atomic_t shr_interrupted;

static void on_sigint(int sig)
{
    (void)sig;
    shr_interrupted = 1;
}

static const char *const check_order[] = {"linearizability", "watch",    "raft_safety",
                                          "converge",        "liveness", "expect"};

struct shr {
    const struct scn_shrink_options *o;
    struct scn_shrink_result *res;
    char dir[256];
    char cand[320], db[320];
    char *body; /* the scenario text after its own shrink{} directive, if any */
    size_t body_len;
    char *message;   /* expect: the claim that must fail again; NULL for other checks */
    char *guarantee; /* watch: the guarantee of the first violation; NULL otherwise */
    int64_t timeout_ms;
    int max_runs;
    bool exhausted;
    struct scn_directive base; /* the scenario's own directive */
    struct scn_directive best;
    json_t *best_sum; /* summary of the best run so far */
    json_t *orig_sum;
};

static void logf_(struct shr *sh, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logf_(struct shr *sh, const char *fmt, ...)
{
    if (!sh->o->log)
        return;
    va_list ap;
    va_start(ap, fmt);
    char *line = NULL;
    int n = vasprintf(&line, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    /* paths and messages are a user's and a script's: no raw control bytes */
    struct fl_buf shown;
    fl_buf_init(&shown);
    fl_term_escape(&shown, line, (size_t)n, FL_TERM_ONE_LINE);
    fprintf(sh->o->log, "shrink: %s\n", fl_buf_cstr(&shown));
    fl_buf_close(&shown);
    free(line);
    fflush(sh->o->log);
}

/* One replay (scn_replay.c), counted. */
static int shr_replay(struct shr *sh, const char *path, json_t **out, char *err, size_t n)
{
    struct scn_replay r = {.seed = sh->o->seed,
                           .db_path = sh->db,
                           .bugs = sh->o->bugs,
                           .bug_count = sh->o->bug_count,
                           .timeout_ms = sh->timeout_ms};
    sh->res->runs++;
    return scn_replay(&r, path, out, err, n);
}

/* --- judging a summary ----------------------------------------------------------------- */

static const char *check_verdict(const json_t *sum, const char *check)
{
    json_t *c = json_object_get(json_object_get(sum, "checks"), check);
    return json_string_value(json_object_get(c, "verdict"));
}

static const char *first_failed_expect(const json_t *sum)
{
    json_t *items =
        json_object_get(json_object_get(json_object_get(sum, "checks"), "expect"), "items");
    for (size_t i = 0; i < json_array_size(items); i++) {
        json_t *it = json_array_get(items, i);
        const char *v = json_string_value(json_object_get(it, "verdict"));
        if (v && !strcmp(v, "fail"))
            return json_string_value(json_object_get(it, "message"));
    }
    return NULL;
}

static bool fails_target(const struct shr *sh, const json_t *sum)
{
    const char *v = json_string_value(json_object_get(sum, "verdict"));
    const char *cv = check_verdict(sum, sh->res->check);
    if (!v || strcmp(v, "fail") || !cv || strcmp(cv, "fail"))
        return false;
    if (sh->guarantee) {
        json_t *g = json_object_get(
            json_object_get(json_object_get(json_object_get(sum, "checks"), "watch"), "guarantees"),
            sh->guarantee);
        const char *gv = json_string_value(json_object_get(g, "verdict"));
        return gv && !strcmp(gv, "fail");
    }
    if (!sh->message)
        return true;
    json_t *items =
        json_object_get(json_object_get(json_object_get(sum, "checks"), "expect"), "items");
    for (size_t i = 0; i < json_array_size(items); i++) {
        json_t *it = json_array_get(items, i);
        const char *iv = json_string_value(json_object_get(it, "verdict"));
        const char *m = json_string_value(json_object_get(it, "message"));
        if (iv && !strcmp(iv, "fail") && m && !strcmp(m, sh->message))
            return true;
    }
    return false;
}

/* Ordinals of the recorded faults, ascending and unique; returns how many. */
static int recorded_ordinals(const json_t *sum, int64_t **out)
{
    json_t *faults = json_object_get(sum, "faults");
    size_t n = json_array_size(faults);
    int64_t *v = fl_malloc(sizeof(int64_t) * (n ? n : 1));
    int k = 0;
    for (size_t i = 0; i < n; i++) {
        json_t *o = json_object_get(json_array_get(faults, i), "ordinal");
        if (!json_is_integer(o))
            continue;
        k = scn_ordinal_add(v, k, (int64_t)json_integer_value(o));
    }
    *out = v;
    return k;
}

static int count_faults(const json_t *sum)
{
    json_t *faults = json_object_get(sum, "faults");
    int n = 0;
    for (size_t i = 0; i < json_array_size(faults); i++)
        n += json_is_integer(json_object_get(json_array_get(faults, i), "ordinal"));
    return n;
}

static int64_t sum_int(const json_t *sum, const char *a, const char *b)
{
    json_t *v = json_object_get(sum, a);
    if (b)
        v = json_object_get(v, b);
    return json_is_integer(v) ? (int64_t)json_integer_value(v) : -1;
}

/* --- candidates ------------------------------------------------------------------------ */

static bool write_file(const char *path, const void *data, size_t len, char *err, size_t n)
{
    FILE *f = fopen(path, "w");
    if (!f || fwrite(data, 1, len, f) != len || fclose(f)) {
        snprintf(err, n, "cannot write '%s': %s", path, strerror(errno));
        if (f)
            fclose(f);
        return false;
    }
    return true;
}

/* Replays directive d over the body. Returns true when it fails the target; then
 * *sum (if given) is its summary, owned by the caller. */
static bool try_cand(struct shr *sh, const struct scn_directive *d, json_t **sum)
{
    if (sh->res->runs >= sh->max_runs || shr_interrupted) {
        sh->exhausted = true;
        return false;
    }
    struct fl_buf text;
    fl_buf_init(&text);
    scn_shrink_text(d, sh->body, sh->body_len, &text);
    char err[512];
    bool ok = write_file(sh->cand, text.data, text.len, err, sizeof err);
    fl_buf_close(&text);
    json_t *ans = NULL;
    if (ok && shr_replay(sh, sh->cand, &ans, err, sizeof err))
        ok = false;
    if (!ok)
        logf_(sh, "candidate rejected: %s", err);
    json_t *s = ans ? json_object_get(ans, "summary") : NULL;
    bool fails = ok && s && fails_target(sh, s);
    if (fails && sum)
        *sum = json_incref(s);
    json_decref(ans);
    return fails;
}

/* Makes d (with its summary) the best so far. */
static void accept(struct shr *sh, const struct scn_directive *d, json_t *sum)
{
    scn_directive_copy(&sh->best, d);
    json_decref(sh->best_sum);
    sh->best_sum = sum;
}

/* Tries best + skipping v[lo..hi); keeps it when it still fails. */
static bool try_skip(struct shr *sh, const int64_t *v, int lo, int hi)
{
    struct scn_directive d;
    scn_directive_init(&d);
    scn_directive_copy(&d, &sh->best);
    scn_directive_skip(&d, v + lo, hi - lo);
    json_t *sum = NULL;
    bool ok = try_cand(sh, &d, &sum);
    if (ok) {
        logf_(sh, "  without %d fault(s) from #%lld: still fails (%d replays)", hi - lo,
              (long long)v[lo], sh->res->runs);
        accept(sh, &d, sum);
    }
    scn_directive_close(&d);
    return ok;
}

/* Delta debugging over the recorded fault ordinals (complements only: dropping a chunk
 * is keeping the rest). single: start at one ordinal per chunk. */
static void phase_faults(struct shr *sh, bool single)
{
    int64_t *v;
    int n = recorded_ordinals(sh->best_sum, &v);
    if (n && !single && try_skip(sh, v, 0, n))
        n = 0;
    int gran = single ? n : 2;
    while (n > 0 && !sh->exhausted) {
        gran = FL_MIN(gran, n);
        bool reduced = false;
        for (int i = 0; i < gran && !reduced; i++) {
            int lo = (int)((int64_t)i * n / gran), hi = (int)((int64_t)(i + 1) * n / gran);
            if (hi > lo && try_skip(sh, v, lo, hi)) {
                memmove(v + lo, v + hi, sizeof(int64_t) * (size_t)(n - hi));
                n -= hi - lo;
                gran = FL_MAX(gran - 1, 2);
                reduced = true;
            }
        }
        if (!reduced) {
            if (gran >= n)
                break;
            gran = FL_MIN(gran * 2, n);
        }
    }
    free(v);
}

/* Tries durations at pct percent from scale_from_ns on; keeps it when the run still
 * fails and ends earlier (a script with no waits is not smaller for it). */
static bool try_scale(struct shr *sh, int pct, int64_t scale_from_ns)
{
    struct scn_directive d;
    scn_directive_init(&d);
    scn_directive_copy(&d, &sh->best);
    d.time_scale_pct = pct;
    d.scale_from_ns = scale_from_ns;
    json_t *sum = NULL;
    bool ok = try_cand(sh, &d, &sum);
    if (ok && sum_int(sum, "script_end_ms", NULL) >= sum_int(sh->best_sum, "script_end_ms", NULL)) {
        ok = false;
        json_decref(sum);
    }
    if (ok) {
        logf_(sh, "  durations at %d%% from %.1fs on: still fails", pct,
              (double)scale_from_ns / 1e9);
        accept(sh, &d, sum);
    }
    scn_directive_close(&d);
    return ok;
}

/* Simulated time of the first recorded fault that has an ordinal; 0 when none. */
static int64_t first_fault_ns(const json_t *sum)
{
    json_t *faults = json_object_get(sum, "faults");
    for (size_t i = 0; i < json_array_size(faults); i++) {
        json_t *f = json_array_get(faults, i);
        if (json_is_integer(json_object_get(f, "ordinal")))
            return sum_int(f, "at_ms", NULL) * FL_MS;
    }
    return 0;
}

/* Shorter waits everywhere; failing that (a warm-up the failure needs, say), shorter
 * waits from the first fault on only. */
static void phase_time_scale(struct shr *sh)
{
    static const int pcts[] = {10, 25, 50, 75};
    int cur = sh->best.time_scale_pct;
    for (size_t i = 0; i < FL_ARRAY_LEN(pcts) && !sh->exhausted; i++) {
        int v = cur * pcts[i] / 100;
        if (v >= 1 && v < cur && try_scale(sh, v, sh->best.scale_from_ns))
            return;
    }
    int64_t from = first_fault_ns(sh->best_sum);
    if (cur != 100 || from <= 0)
        return;
    for (size_t i = 0; i < FL_ARRAY_LEN(pcts) && !sh->exhausted; i++)
        if (try_scale(sh, pcts[i], from))
            return;
}

/* Bisection for the earliest end_at (whole milliseconds) that still fails. */
static void phase_end_at(struct shr *sh)
{
    int64_t hi = sum_int(sh->best_sum, "script_end_ms", NULL), lo = 0;
    if (hi <= 0)
        return;
    int64_t step_ms = FL_MAX(100, hi >> SHR_END_AT_STEPS_MAX);
    while (hi - lo > step_ms && !sh->exhausted) {
        int64_t mid = lo + (hi - lo) / 2;
        struct scn_directive d;
        scn_directive_init(&d);
        scn_directive_copy(&d, &sh->best);
        d.end_at_ns = mid * FL_MS;
        json_t *sum = NULL;
        if (try_cand(sh, &d, &sum)) {
            logf_(sh, "  run cut at %lld ms: still fails", (long long)mid);
            accept(sh, &d, sum);
            hi = mid;
        } else {
            lo = mid;
        }
        scn_directive_close(&d);
    }
}

static void phase_knobs(struct shr *sh)
{
    static const struct {
        const char *name;
        int min;
    } knobs[] = {{"nodes", 3}, {"clients", 1}, {"rate", 0}, {"keys", 1}, {"watchers", 0}};
    for (size_t k = 0; k < FL_ARRAY_LEN(knobs) && !sh->exhausted; k++) {
        int64_t cur = sum_int(sh->best_sum, "workload", knobs[k].name);
        if (cur <= knobs[k].min)
            continue;
        if (k == 3 && sum_int(sh->best_sum, "workload", "rate") == 0)
            continue; /* keys only shape the built-in workload */
        int64_t tries[] = {knobs[k].min, cur / 4, cur / 2, cur * 3 / 4};
        int64_t last = -1;
        for (size_t i = 0; i < FL_ARRAY_LEN(tries) && !sh->exhausted; i++) {
            int64_t v = tries[i];
            if (v < knobs[k].min || v >= cur || v <= last)
                continue;
            last = v;
            struct scn_directive d;
            scn_directive_init(&d);
            scn_directive_copy(&d, &sh->best);
            int *fields[] = {&d.nodes, &d.clients, &d.rate, &d.keys, &d.watchers};
            int *field = fields[k];
            *field = (int)v;
            json_t *sum = NULL;
            bool ok = try_cand(sh, &d, &sum);
            if (ok) {
                logf_(sh, "  %s %lld -> %lld: still fails", knobs[k].name, (long long)cur,
                      (long long)v);
                accept(sh, &d, sum);
            }
            scn_directive_close(&d);
            if (ok)
                break;
        }
    }
}

/* --- the report ------------------------------------------------------------------------ */

/* "#3 kill n2 @6.3s, restart n2 @8.3s" for one ordinal of the original run. */
static void describe_ordinal(const json_t *sum, int64_t ord, struct fl_buf *out)
{
    json_t *faults = json_object_get(sum, "faults");
    fl_buf_printf(out, "#%lld", (long long)ord);
    const char *sep = " ";
    for (size_t i = 0; i < json_array_size(faults); i++) {
        json_t *f = json_array_get(faults, i);
        if (sum_int(f, "ordinal", NULL) != ord)
            continue;
        fl_buf_printf(out, "%s%s %s @%.1fs", sep, json_string_value(json_object_get(f, "kind")),
                      json_string_value(json_object_get(f, "target")),
                      (double)sum_int(f, "at_ms", NULL) / 1000.0);
        sep = ", ";
    }
}

/* What the directive removes relative to the original, as text (no newline). */
static void describe_removed(struct shr *sh, struct fl_buf *out)
{
    const struct scn_directive *b = &sh->base, *d = &sh->best;
    int64_t *rec;
    int n = recorded_ordinals(sh->orig_sum, &rec);
    int dropped = 0;
    for (int i = 0; i < n; i++) {
        bool skip = false;
        for (int j = 0; j < d->n_skip; j++)
            skip = skip || d->skip_faults[j] == rec[i];
        if (!skip)
            continue;
        fl_buf_printf(out, "%s", dropped++ ? "; " : "faults dropped: ");
        describe_ordinal(sh->orig_sum, rec[i], out);
    }
    free(rec);
    if (!dropped)
        fl_buf_printf(out, "no fault dropped");
    if (d->time_scale_pct != b->time_scale_pct)
        fl_buf_printf(out, "; run/sleep durations at %d%%", d->time_scale_pct);
    int64_t orig_end_ms = sum_int(sh->orig_sum, "script_end_ms", NULL);
    if (d->end_at_ns != b->end_at_ns && d->end_at_ns / FL_MS < orig_end_ms)
        fl_buf_printf(out, "; run cut at %.1fs (script ended at %.1fs)", (double)d->end_at_ns / 1e9,
                      (double)orig_end_ms / 1000.0);
    else if (d->end_at_ns != b->end_at_ns) /* dropped faults made the script longer */
        fl_buf_printf(out, "; run cut at %.1fs", (double)d->end_at_ns / 1e9);
    static const char *const names[] = {"nodes", "clients", "rate", "keys", "watchers"};
    const int now[] = {d->nodes, d->clients, d->rate, d->keys, d->watchers};
    const int was[] = {b->nodes, b->clients, b->rate, b->keys, b->watchers};
    for (size_t i = 0; i < FL_ARRAY_LEN(names); i++)
        if (now[i] != was[i])
            fl_buf_printf(out, "; %s %lld -> %d", names[i],
                          (long long)sum_int(sh->orig_sum, "workload", names[i]), now[i]);
}

static void replay_cmd(struct shr *sh, const char *path, struct fl_buf *out)
{
    /* shell-quoted words (harness/common/text.h): the command runs as printed */
    fl_buf_printf(out, "faultline run ");
    fl_shell_word(out, path);
    fl_buf_printf(out, " --seed %llu", (unsigned long long)sh->o->seed);
    for (int i = 0; i < sh->o->bug_count; i++) {
        fl_buf_printf(out, " --bug ");
        fl_shell_word(out, sh->o->bugs[i]);
    }
}

/* The reduced scenario: directive + body + a trailing comment (no line moves). */
static void output_text(struct shr *sh, struct fl_buf *out)
{
    scn_shrink_text(&sh->best, sh->body, sh->body_len, out);
    if (out->len && out->data[out->len - 1] != '\n')
        fl_buf_printf(out, "\n");
    struct fl_buf note;
    fl_buf_init(&note);
    fl_buf_printf(&note, "shrunk by faultline shrink from `");
    replay_cmd(sh, sh->o->path, &note);
    fl_buf_printf(&note, "`, which fails %s", sh->res->check);
    if (sh->message)
        fl_buf_printf(&note, " (\"%s\")", sh->message);
    if (sh->guarantee)
        fl_buf_printf(&note, " (guarantee %s)", sh->guarantee);
    fl_buf_printf(&note, ". The shrink{} directive in front of line 1 replays it smaller: ");
    describe_removed(sh, &note);
    fl_buf_printf(&note, ".");
    /* one comment line per ~90 characters, newlines in messages flattened */
    const char *t = fl_buf_cstr(&note);
    size_t len = strlen(t), col = 0;
    fl_buf_printf(out, "\n-- ");
    for (size_t i = 0; i < len; i++) {
        char c = t[i] == '\n' || t[i] == '\r' ? ' ' : t[i];
        if (c == ' ' && col >= 88) {
            fl_buf_printf(out, "\n-- ");
            col = 0;
            continue;
        }
        fl_buf_append(out, &c, 1);
        col++;
    }
    fl_buf_printf(out, "\n");
    fl_buf_close(&note);
}

/* --- set-up and the whole search ------------------------------------------------------- */

static int fail(struct scn_shrink_result *res, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(struct scn_shrink_result *res, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(res->error, sizeof res->error, fmt, ap);
    va_end(ap);
    return res->exit_code = code;
}

static bool read_text(const char *path, char **text, size_t *len)
{
    *text = NULL;
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return false;
    struct fl_buf b;
    fl_buf_init(&b);
    char chunk[8192];
    size_t r;
    while ((r = fread(chunk, 1, sizeof chunk, f)) > 0)
        fl_buf_append(&b, chunk, r);
    bool ok = !ferror(f);
    fclose(f);
    fl_buf_cstr(&b);
    *text = (char *)b.data;
    *len = b.len;
    if (!*text)
        *text = fl_strdup("");
    return ok;
}

static void default_out(const struct scn_shrink_options *o, char *out, size_t n)
{
    const char *base = strrchr(o->path, '/');
    base = base ? base + 1 : o->path;
    size_t bl = strlen(base);
    if (bl > 4 && !strcmp(base + bl - 4, ".lua"))
        bl -= 4;
    snprintf(out, n, "%.*s-seed%llu.shrunk.lua", (int)bl, base, (unsigned long long)o->seed);
}

/* Replays the original and decides the target; returns 0 to go on, else the exit code. */
static int judge_original(struct shr *sh)
{
    struct scn_shrink_result *res = sh->res;
    const struct scn_shrink_options *o = sh->o;
    json_t *ans = NULL;
    char err[512];
    double t0 = scn_mono_s();
    if (shr_replay(sh, o->path, &ans, err, sizeof err))
        return fail(res, 3, "%s: replaying seed %llu: %s", o->path, (unsigned long long)o->seed,
                    err);
    int64_t wall_ms = (int64_t)((scn_mono_s() - t0) * 1000.0);
    sh->timeout_ms = FL_MAX(SHR_TIMEOUT_MIN_MS, 20 * wall_ms);
    int code = (int)sum_int(ans, "exit_code", NULL);
    json_t *s = json_object_get(ans, "summary");
    sh->orig_sum = s ? json_incref(s) : NULL;
    const char *e = json_string_value(json_object_get(ans, "error"));
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", e ? e : "");
    json_decref(ans);
    if (code == 2 || code == 3 || !s)
        return fail(res, code == 3 ? 3 : 2, "%s", msg[0] ? msg : "the run did not start");
    if (code != 1)
        return fail(res, 2, "seed %llu does not fail%s; nothing to shrink",
                    (unsigned long long)o->seed, code == 4 ? " (a checker gave up: unknown)" : "");
    for (size_t i = 0; i < FL_ARRAY_LEN(check_order) && !res->check[0]; i++) {
        const char *v = check_verdict(s, check_order[i]);
        if ((!o->check || !strcmp(o->check, check_order[i])) && v && !strcmp(v, "fail"))
            snprintf(res->check, sizeof res->check, "%s", check_order[i]);
    }
    if (!res->check[0])
        return fail(res, 2, "seed %llu does not fail check '%s'; nothing to shrink",
                    (unsigned long long)o->seed, o->check);
    if (!strcmp(res->check, "expect")) {
        const char *m = first_failed_expect(s);
        sh->message = fl_strdup(m ? m : "");
    } else if (!strcmp(res->check, "watch")) {
        json_t *w = json_object_get(json_object_get(s, "checks"), "watch");
        const char *g = json_string_value(
            json_object_get(json_array_get(json_object_get(w, "violations"), 0), "guarantee"));
        if (g)
            sh->guarantee = fl_strdup(g);
    }
    res->faults_before = count_faults(s);
    res->script_ms_before = sum_int(s, "script_end_ms", NULL);
    scn_directive_from_json(&sh->base, json_object_get(s, "shrink"));
    scn_directive_copy(&sh->best, &sh->base);
    sh->best_sum = json_incref(s);
    return 0;
}

static bool same_directive(const struct scn_directive *a, const struct scn_directive *b);

/* The phases in order, then rounds of single-fault removal, durations, the cut and
 * the knobs again until a round changes nothing (each reduction can enable another). */
static void search(struct shr *sh)
{
    struct scn_directive before;
    scn_directive_init(&before);
    scn_directive_copy(&before, &sh->best);
    logf_(sh, "dropping faults");
    phase_faults(sh, false);
    logf_(sh, "shortening durations");
    phase_time_scale(sh);
    logf_(sh, "cutting the run");
    phase_end_at(sh);
    logf_(sh, "lowering the cluster and the workload");
    phase_knobs(sh);
    for (int round = 2; !sh->exhausted && !same_directive(&before, &sh->best); round++) {
        scn_directive_copy(&before, &sh->best);
        logf_(sh, "round %d", round);
        phase_faults(sh, true);
        phase_time_scale(sh);
        phase_end_at(sh);
        phase_knobs(sh);
    }
    scn_directive_close(&before);
    if (shr_interrupted)
        logf_(sh, "interrupted: keeping the smallest failing run found so far");
    else if (sh->exhausted)
        logf_(sh, "stopped at the limit of %d replays (--max-runs)", sh->max_runs);
}

/* Writes the result and replays the written file itself. */
static int finish(struct shr *sh)
{
    struct scn_shrink_result *res = sh->res;
    char err[600];
    struct fl_buf text;
    fl_buf_init(&text);
    output_text(sh, &text);
    char tmp[sizeof res->out_path + 8];
    snprintf(tmp, sizeof tmp, "%s.tmp", res->out_path);
    bool ok = write_file(tmp, text.data, text.len, err, sizeof err);
    fl_buf_close(&text);
    if (!ok)
        return fail(res, 2, "%s", err);
    if (rename(tmp, res->out_path)) {
        unlink(tmp);
        return fail(res, 2, "cannot write '%s': %s", res->out_path, strerror(errno));
    }
    json_t *ans = NULL;
    if (shr_replay(sh, res->out_path, &ans, err, sizeof err))
        return fail(res, 3, "%s: the check replay failed: %s", res->out_path, err);
    json_t *s = json_object_get(ans, "summary");
    bool again = s && fails_target(sh, s);
    if (again) {
        res->faults_after = count_faults(s);
        res->script_ms_after = sum_int(s, "script_end_ms", NULL);
    }
    json_decref(ans);
    if (!again)
        return fail(res, 3,
                    "%s: replaying the written file with seed %llu did not fail %s "
                    "again (a determinism bug)",
                    res->out_path, (unsigned long long)sh->o->seed, res->check);
    scn_directive_copy(&res->found, &sh->best);
    return res->exit_code = FL_EXIT_PASS;
}

/* The faults the reduced run still applies, from its own summary. */
static void describe_kept(struct shr *sh, struct fl_buf *out)
{
    int64_t *rec;
    int n = recorded_ordinals(sh->best_sum, &rec);
    for (int i = 0; i < n; i++) {
        fl_buf_printf(out, "%s", i ? "; " : "");
        describe_ordinal(sh->best_sum, rec[i], out);
    }
    if (!n)
        fl_buf_printf(out, "none");
    free(rec);
}

static void report(struct shr *sh)
{
    struct fl_buf b, k, cmd;
    fl_buf_init(&b);
    fl_buf_init(&k);
    fl_buf_init(&cmd);
    describe_removed(sh, &b);
    describe_kept(sh, &k);
    replay_cmd(sh, sh->res->out_path, &cmd);
    logf_(sh, "removed: %s", fl_buf_cstr(&b));
    logf_(sh, "faults kept: %s", fl_buf_cstr(&k));
    logf_(sh, "recorded faults %d -> %d, script end %.1fs -> %.1fs, %d replays",
          sh->res->faults_before, sh->res->faults_after, (double)sh->res->script_ms_before / 1000.0,
          (double)sh->res->script_ms_after / 1000.0, sh->res->runs);
    logf_(sh, "%s still fails %s: %s", sh->res->out_path, sh->res->check, fl_buf_cstr(&cmd));
    fl_buf_close(&b);
    fl_buf_close(&k);
    fl_buf_close(&cmd);
}

static bool same_directive(const struct scn_directive *a, const struct scn_directive *b)
{
    struct fl_buf x, y;
    fl_buf_init(&x);
    fl_buf_init(&y);
    scn_directive_format(a, &x);
    scn_directive_format(b, &y);
    bool same = x.len == y.len && !memcmp(x.data, y.data, x.len);
    fl_buf_close(&x);
    fl_buf_close(&y);
    return same;
}

static int shrink_in(struct shr *sh)
{
    const struct scn_shrink_options *o = sh->o;
    struct scn_shrink_result *res = sh->res;
    char *text;
    size_t len;
    if (!read_text(o->path, &text, &len)) {
        free(text);
        return fail(res, 2, "cannot read scenario '%s': %s", o->path, strerror(errno));
    }
    size_t skip = scn_directive_prefix_len(text, len);
    sh->body = fl_memdup(text + skip, len - skip + 1);
    sh->body_len = len - skip;
    free(text);
    int rc = judge_original(sh);
    if (rc)
        return rc;
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    shr_interrupted = 0;
    sigaction(SIGINT, &sa, &old);
    logf_(sh, "%s seed %llu fails %s%s%s%s%s%s; %d recorded faults, the script ends at %.1fs",
          o->path, (unsigned long long)o->seed, res->check, sh->message ? " (\"" : "",
          sh->message ? sh->message : "", sh->message ? "\")" : "",
          sh->guarantee ? ", guarantee " : "", sh->guarantee ? sh->guarantee : "",
          res->faults_before, (double)res->script_ms_before / 1000.0);
    struct fl_buf sw; /* a swarm's world: drawn again from the seed by every candidate */
    fl_buf_init(&sw);
    run_swarm_brief(json_object_get(sh->orig_sum, "swarm"), &sw);
    if (sw.len)
        logf_(sh, "swarm: %s", fl_buf_cstr(&sw));
    fl_buf_close(&sw);
    search(sh);
    sigaction(SIGINT, &old, NULL); /* from here on Ctrl-C ends it at once */
    if (shr_interrupted && same_directive(&sh->best, &sh->base))
        return fail(res, 3, "interrupted before a smaller failing run was found (%d replays)",
                    res->runs);
    if (same_directive(&sh->best, &sh->base))
        return fail(res, 1,
                    "seed %llu fails %s, but no smaller run found (%d replays) fails it; "
                    "nothing written",
                    (unsigned long long)o->seed, res->check, res->runs);
    rc = finish(sh);
    if (!rc)
        report(sh);
    return rc;
}

int scn_shrink(const struct scn_shrink_options *opts, struct scn_shrink_result *res)
{
    memset(res, 0, sizeof *res);
    scn_directive_init(&res->found);
    struct shr sh;
    memset(&sh, 0, sizeof sh);
    sh.o = opts;
    sh.res = res;
    sh.max_runs = opts->max_runs > 0 ? opts->max_runs : SHR_RUNS_DEFAULT;
    sh.timeout_ms = SHR_TIMEOUT_MIN_MS;
    scn_directive_init(&sh.base);
    scn_directive_init(&sh.best);
    if (opts->out_path)
        snprintf(res->out_path, sizeof res->out_path, "%s", opts->out_path);
    else
        default_out(opts, res->out_path, sizeof res->out_path);
    if (!strcmp(res->out_path, opts->path))
        return fail(res, 2, "the output '%s' would overwrite the scenario", res->out_path);
    /* an unwritable output is bad input: say so before the search, not after it */
    char probe[sizeof res->out_path + 8];
    snprintf(probe, sizeof probe, "%s.tmp", res->out_path);
    FILE *pf = fopen(probe, "w");
    if (!pf)
        return fail(res, 2, "cannot write '%s': %s", probe, strerror(errno));
    fclose(pf);
    unlink(probe);
    const char *tmpdir = getenv("TMPDIR"); /* where to put scratch files, nothing else */
    snprintf(sh.dir, sizeof sh.dir, "%s/faultline-shrink-XXXXXX",
             tmpdir && *tmpdir && strlen(tmpdir) < 200 ? tmpdir : "/tmp");
    if (!mkdtemp(sh.dir))
        return fail(res, 3, "cannot create a scratch directory in %s: %s", sh.dir, strerror(errno));
    snprintf(sh.cand, sizeof sh.cand, "%s/candidate.lua", sh.dir);
    snprintf(sh.db, sizeof sh.db, "%s/replay.db", sh.dir);
    int rc = shrink_in(&sh);
    unlink(sh.cand);
    rmdir(sh.dir);
    free(sh.body);
    free(sh.message);
    free(sh.guarantee);
    json_decref(sh.best_sum);
    json_decref(sh.orig_sum);
    scn_directive_close(&sh.base);
    scn_directive_close(&sh.best);
    return res->exit_code = rc;
}

void scn_shrink_result_close(struct scn_shrink_result *res)
{
    scn_directive_close(&res->found);
}
