/*
 * sweep_pool.c: the libuv worker pool of `faultline sweep`. One job is one (scenario,
 * seed); up to opts->jobs workers run at once, each a child process started by
 * sweep_spawn (sweep_spawn.c) in its own session and process group (so a timeout or a
 * second Ctrl-C can kill everything it started), with a parent-death signal so that
 * it cannot outlive a sweep that is killed outright, and recording into its own
 * database in the sweep's work folder (sweep_workdir.c). The worker's stdout (the
 * --json summary) and stderr (kept for the error message) come back over pipes; its
 * exit is seen through SIGCHLD.
 *
 * A job ends when its process has exited and both pipes are closed; a worker that
 * exits while something it started still holds a pipe gets a short grace period, then
 * the pipes are closed anyway. A job that outlives opts->timeout_s is killed
 * (SIGKILL to its group) and recorded as 'error'. SIGINT/SIGTERM/SIGHUP stop the
 * launching, pass SIGINT on to the running workers (which end their runs cleanly) and
 * the sweep finishes with what it has; a second signal kills the workers.
 *
 * Resources: the pool is no bigger than the descriptor limit allows (the soft limit
 * is raised towards the hard one first; what is left is said on stderr), and a worker
 * that cannot be started for want of processes or descriptors while others run waits
 * for one of them to end instead of failing its seed. A summary too large to keep
 * (a run with 100,000 expects prints megabytes) is not an error: the verdict and the
 * digest are then read from the worker's database, which holds everything.
 *
 * Finished jobs are merged into opts->db_path in job order, so run_ids follow
 * (scenario, seed) order whatever order the workers finished in.
 */
#include "harness/sweep/sweep_int.h"

#include "harness/common/text.h"
#include "harness/history/history.h"
#include "reports/report.h"

#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <uv.h>

/* How long past its own --timeout a worker may take before the sweep kills it. */
#define SWEEP_KILL_GRACE_MS 10000

#define SWEEP_GRACE_MS    2000
#define SWEEP_OUT_MAX     (1 << 20) /* stdout kept at most (the JSON summary) */
#define SWEEP_ERR_KEEP    4096      /* tail of stderr kept for messages */
#define SWEEP_PROGRESS_MS 500

struct job {
    int scenario; /* index into opts->scenarios */
    uint64_t seed;
    char *db;       /* per-job database path */
    bool attempted; /* a worker was started (or failed to start) for it */
    bool finished;  /* its worker is gone and its result classified */
    struct sweep_result res;
};

struct pool;

struct slot {
    struct pool *p;
    struct job *job;
    pid_t pid; /* the worker, leader of its process group; 0 when none started */
    uv_pipe_t out, err;
    uv_timer_t timer;
    int open; /* pipes not yet closed */
    bool exited, timed_out, timer_closing;
    bool out_truncated; /* stdout passed SWEEP_OUT_MAX: the rest was read and dropped */
    int64_t exit_status;
    int term_signal;
    char *spawn_error;
    struct fl_buf out_buf, err_buf;
    size_t out_bytes; /* all of stdout, kept or not */
    double start_s;
    char rbuf[65536];
};

struct pool {
    const struct sweep_options *o;
    uv_loop_t loop;
    uv_signal_t sig_int, sig_term, sig_hup, sig_chld;
    uv_timer_t progress;
    struct job *jobs;
    size_t n_jobs, next, done;
    struct slot *slots;
    int running;
    int jobs_max; /* workers at once: opts->jobs, or fewer when resources are short */
    bool stopping, interrupted, closing;
    int signals;
    int pass, fail, unknown, error;
    double start_s, last_plain_s;
    size_t last_plain_done;
    char *tmpdir;
    int lock_fd;               /* the work folder's owner lock, held for the whole sweep */
    struct hist_db *db;        /* the sweep's database, open for the whole sweep */
    struct sweep_merge *merge; /* the merges into db */
    size_t merged;             /* jobs[0..merged) are in it */
};

static double now_s(void)
{
    return (double)uv_hrtime() / 1e9;
}

static void progress(struct pool *p, bool final)
{
    const struct sweep_options *o = p->o;
    if (!o->progress || !o->progress_out)
        return;
    double el = now_s() - p->start_s, rate = el > 0 ? (double)p->done / el : 0;
    if (o->progress == 1 && !final && now_s() - p->last_plain_s < 2.0)
        return;
    if (o->progress == 1 && final && p->last_plain_done == p->done && p->done)
        return;
    p->last_plain_s = now_s();
    p->last_plain_done = p->done;
    char eta[32] = "-";
    if (rate > 0 && p->done < p->n_jobs)
        snprintf(eta, sizeof eta, "%.0f s", (double)(p->n_jobs - p->done) / rate);
    fprintf(o->progress_out,
            "%ssweep: %zu/%zu done, %d failed, %d errors, %d unknown, %.2f runs/s, ETA %s, "
            "%d running%s%s",
            o->progress == 2 ? "\r" : "", p->done, p->n_jobs, p->fail, p->error, p->unknown, rate,
            eta, p->running, p->interrupted ? " (interrupted)" : "",
            o->progress == 2 ? "\033[K" : "\n");
    if (o->progress == 2 && final)
        fputc('\n', o->progress_out);
    fflush(o->progress_out);
}

static void launch_more(struct pool *p);
static void merge_ready(struct pool *p);

/* The worker's stdout is one JSON object; should anything else have slipped in before
 * it, the object starting at the last line that opens with '{' is taken. */
static json_t *parse_summary(const struct fl_buf *b)
{
    if (!b->len)
        return NULL;
    const char *t = (const char *)b->data;
    json_t *j = json_loadb(t, b->len, JSON_ALLOW_NUL, NULL);
    for (size_t i = b->len; !json_is_object(j) && i-- > 0;) {
        if (t[i] == '{' && (i == 0 || t[i - 1] == '\n')) {
            json_decref(j);
            j = json_loadb(t + i, b->len - i, JSON_ALLOW_NUL, NULL);
        }
    }
    if (!json_is_object(j)) {
        json_decref(j);
        return NULL;
    }
    return j;
}

static enum sweep_verdict verdict_of(const char *v)
{
    return !v                      ? SWEEP_ERROR
           : !strcmp(v, "pass")    ? SWEEP_PASS
           : !strcmp(v, "fail")    ? SWEEP_FAIL
           : !strcmp(v, "unknown") ? SWEEP_UNKNOWN
                                   : SWEEP_ERROR;
}

/* The exit code `faultline run` gives each verdict (cli.h). */
static int64_t exit_code_of(enum sweep_verdict v)
{
    return v == SWEEP_PASS ? 0 : v == SWEEP_FAIL ? 1 : v == SWEEP_UNKNOWN ? 4 : 3;
}

/* The worker's stdout was too large to keep: its verdict and digest come from the
 * database it wrote (which has everything), checked against its exit code. */
static void result_from_db(struct slot *s, struct sweep_result *r, struct fl_buf *why)
{
    struct hist_db *db = NULL;
    struct hist_run_row row;
    memset(&row, 0, sizeof row);
    char err[512] = "";
    int64_t id = 0;
    if (hist_open(s->job->db, HIST_OPEN_READONLY, &db, err, sizeof err) ||
        hist_run_latest(db, &id) || id <= 0 || hist_run_get(db, id, &row)) {
        fl_buf_printf(why,
                      "its summary (%zu bytes) was too large to keep and its database has no "
                      "run%s%s",
                      s->out_bytes, err[0] ? ": " : "", err);
    } else {
        enum sweep_verdict v = verdict_of(row.verdict);
        if (v != SWEEP_ERROR && exit_code_of(v) == s->exit_status) {
            r->verdict = v;
            r->digest = row.digest ? fl_strdup(row.digest) : NULL;
        } else {
            fl_buf_printf(why, "worker exited with code %lld and its database says '%s'",
                          (long long)s->exit_status, row.verdict ? row.verdict : "");
        }
    }
    hist_run_row_free(&row);
    hist_close(db);
}

/* No summary: the last line of stderr usually says why. */
static void no_summary(struct slot *s, struct fl_buf *why)
{
    const char *t = fl_buf_cstr(&s->err_buf);
    size_t n = strlen(t);
    while (n && (t[n - 1] == '\n' || t[n - 1] == '\r'))
        n--;
    size_t b = n;
    while (b && t[b - 1] != '\n')
        b--;
    fl_buf_printf(why, "no JSON summary from worker (exit code %lld)%s%.*s",
                  (long long)s->exit_status, n > b ? ": " : "", (int)(n - b), t + b);
}

static void classify(struct slot *s)
{
    struct job *j = s->job;
    struct sweep_result *r = &j->res;
    struct fl_buf why;
    fl_buf_init(&why);
    json_t *sum = s->out_truncated ? NULL : parse_summary(&s->out_buf);
    const char *v = json_string_value(json_object_get(sum, "verdict"));
    const char *dg = json_string_value(json_object_get(sum, "digest"));
    r->verdict = SWEEP_ERROR;
    if (s->spawn_error) {
        fl_buf_printf(&why, "cannot start worker: %s", s->spawn_error);
    } else if (s->timed_out) {
        fl_buf_printf(&why, "timeout: no result after %.0f s (worker killed)",
                      s->p->o->timeout_s + SWEEP_KILL_GRACE_MS / 1000.0);
    } else if (s->term_signal) {
        fl_buf_printf(&why, "worker killed by signal %d (%s)", s->term_signal,
                      strsignal(s->term_signal));
    } else if (s->out_truncated) {
        result_from_db(s, r, &why);
    } else if (v) {
        r->verdict = verdict_of(v);
        const char *e = json_string_value(json_object_get(sum, "error"));
        if (r->verdict == SWEEP_ERROR)
            fl_buf_printf(&why, "%s",
                          e                   ? e
                          : s->p->interrupted ? "interrupted: the sweep passed SIGINT on to the "
                                                "worker"
                                              : "run ended in error");
    } else {
        no_summary(s, &why);
    }
    if (dg && !r->digest)
        r->digest = fl_strdup(dg);
    if (sum && s->p->o->keep_summaries && !r->summary)
        r->summary = json_incref(sum);
    if (why.len)
        r->error = fl_strdup(fl_buf_cstr(&why));
    fl_buf_close(&why);
    json_decref(sum);
}

static void job_done(struct slot *s)
{
    struct pool *p = s->p;
    struct job *j = s->job;
    classify(s);
    j->res.wall_s = now_s() - s->start_s;
    p->pass += j->res.verdict == SWEEP_PASS;
    p->fail += j->res.verdict == SWEEP_FAIL;
    p->unknown += j->res.verdict == SWEEP_UNKNOWN;
    p->error += j->res.verdict == SWEEP_ERROR;
    if (p->o->fail_fast && (j->res.verdict == SWEEP_FAIL || j->res.verdict == SWEEP_ERROR))
        p->stopping = true;
    if (s->spawn_error) /* every other seed would fail the same way */
        p->stopping = true;
    if (p->o->progress && j->res.verdict != SWEEP_PASS && p->o->progress_out) {
        /* the reason may be a script's error text: no raw control bytes */
        char *scn = fl_term_dup(p->o->scenarios[j->scenario]), *e = fl_term_dup(j->res.error);
        fprintf(p->o->progress_out, "%ssweep: %s seed %llu: %s%s%s\n",
                p->o->progress == 2 ? "\r\033[K" : "", scn, (unsigned long long)j->seed,
                sweep_verdict_name(j->res.verdict), e[0] ? ": " : "", e);
        free(scn);
        free(e);
    }
    free(s->spawn_error);
    s->spawn_error = NULL;
    fl_buf_close(&s->out_buf);
    fl_buf_close(&s->err_buf);
    s->job = NULL;
    j->finished = true;
    p->running--;
    p->done++;
    launch_more(p);
    progress(p, false);
    merge_ready(p);
}

static void on_timer_closed(uv_handle_t *h)
{
    job_done(h->data);
}

/* Both pipes are closed and the worker is reaped: the job is over once its timer is
 * closed too (job_done runs from that callback). */
static void finish_slot(struct slot *s)
{
    if (s->timer_closing)
        return;
    s->timer_closing = true;
    uv_timer_stop(&s->timer);
    uv_close((uv_handle_t *)&s->timer, on_timer_closed);
}

static void handle_closed(uv_handle_t *h)
{
    struct slot *s = h->data;
    if (--s->open == 0 && s->exited)
        finish_slot(s);
}

static void close_pipe(uv_pipe_t *pp)
{
    if (!uv_is_closing((uv_handle_t *)pp))
        uv_close((uv_handle_t *)pp, handle_closed);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    (void)suggested;
    struct slot *s = h->data;
    *buf = uv_buf_init(s->rbuf, sizeof s->rbuf);
}

static void on_read(uv_stream_t *st, ssize_t n, const uv_buf_t *buf)
{
    struct slot *s = st->data;
    bool is_out = st == (uv_stream_t *)&s->out;
    if (n > 0) {
        struct fl_buf *b = is_out ? &s->out_buf : &s->err_buf;
        if (is_out) {
            /* Read on to the end whatever the size (a worker blocked on a full pipe
             * would never exit), keep at most SWEEP_OUT_MAX. */
            s->out_bytes += (size_t)n;
            if (s->out_truncated || b->len + (size_t)n > SWEEP_OUT_MAX) {
                s->out_truncated = true;
                fl_buf_close(b);
                return;
            }
        }
        fl_buf_append(b, buf->base, (size_t)n);
        if (!is_out && b->len > 2 * SWEEP_ERR_KEEP) {
            memmove(b->data, b->data + b->len - SWEEP_ERR_KEEP, SWEEP_ERR_KEEP);
            b->len = SWEEP_ERR_KEEP;
        }
        return;
    }
    if (n < 0) /* UV_EOF or an error: either way this pipe is done */
        close_pipe(is_out ? &s->out : &s->err);
}

static void kill_group(struct slot *s, int sig)
{
    if (s->pid > 0 && !s->exited)
        kill(-s->pid, sig); /* the worker leads its own process group */
}

static void on_timer(uv_timer_t *t)
{
    struct slot *s = t->data;
    if (!s->exited) {
        s->timed_out = true;
        kill_group(s, SIGKILL);
        return;
    }
    /* Grace period over: something the worker started still holds a pipe. */
    close_pipe(&s->out);
    close_pipe(&s->err);
}

/* The worker s has exited (a zombie still: its pid, and so its process group id,
 * cannot have been reused yet). Kills what else is in its group, then reaps it. */
static void worker_exited(struct slot *s, const siginfo_t *si)
{
    kill(-s->pid, SIGKILL); /* a hung helper of a killed worker goes too */
    while (waitpid(s->pid, NULL, 0) < 0 && errno == EINTR) {
    }
    s->exited = true;
    if (si->si_code == CLD_EXITED)
        s->exit_status = si->si_status;
    else
        s->term_signal = si->si_status;
    if (s->open == 0) {
        finish_slot(s);
        return;
    }
    uv_timer_stop(&s->timer);
    uv_timer_start(&s->timer, on_timer, SWEEP_GRACE_MS, 0);
}

/* SIGCHLD: any number of workers may have exited since the last one. */
static void on_sigchld(uv_signal_t *h, int signum)
{
    (void)signum;
    struct pool *p = h->data;
    for (int i = 0; i < p->o->jobs; i++) {
        struct slot *s = &p->slots[i];
        if (!s->job || s->pid <= 0 || s->exited)
            continue;
        siginfo_t si;
        memset(&si, 0, sizeof si);
        if (waitid(P_PID, (id_t)s->pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid)
            worker_exited(s, &si);
    }
}

static void build_args(const struct pool *p, const struct job *j, char **argv, char *seed,
                       char *timeout)
{
    const struct sweep_options *o = p->o;
    int k = 0;
    snprintf(seed, 24, "%llu", (unsigned long long)j->seed);
    snprintf(timeout, 32, "%.17g", o->timeout_s);
    argv[k++] = (char *)o->worker;
    argv[k++] = "run";
    argv[k++] = (char *)o->scenarios[j->scenario];
    argv[k++] = "--seed";
    argv[k++] = seed;
    argv[k++] = "--json";
    argv[k++] = "--db";
    argv[k++] = j->db;
    if (o->timeout_s > 0) { /* the worker ends its own run in time, recorded as 'error' */
        argv[k++] = "--timeout";
        argv[k++] = timeout;
    }
    for (int i = 0; i < o->bug_count; i++) {
        argv[k++] = "--bug";
        argv[k++] = (char *)o->bugs[i];
    }
    if (o->paranoid)
        argv[k++] = "--paranoid";
    argv[k] = NULL;
}

/* Short of processes or descriptors while other workers run: the pool shrinks to
 * what runs now and the remaining seeds wait their turn. Said once on stderr. */
static void shrink_pool(struct pool *p, const char *why)
{
    if (p->o->progress_out)
        fprintf(p->o->progress_out,
                "%ssweep: cannot start more than %d workers at once (%s); the other seeds "
                "wait for a free one\n",
                p->o->progress == 2 ? "\r\033[K" : "", p->running, why);
    p->jobs_max = p->running;
}

static void slot_reset(struct slot *s, struct job *j)
{
    s->job = j;
    s->pid = 0;
    s->open = 0;
    s->exited = s->timed_out = s->timer_closing = s->out_truncated = false;
    s->exit_status = 0;
    s->term_signal = 0;
    s->out_bytes = 0;
    fl_buf_init(&s->out_buf);
    fl_buf_init(&s->err_buf);
    s->start_s = now_s();
}

/* Starts job j in slot s. False when the system is short of processes or descriptors
 * and other workers run: nothing was started, j waits. */
static bool start_job(struct pool *p, struct slot *s, struct job *j)
{
    char seed[24], timeout[32], why[512];
    char **argv = fl_calloc(13 + 2 * (size_t)p->o->bug_count, sizeof *argv);
    build_args(p, j, argv, seed, timeout);
    struct sweep_child c;
    int e = sweep_spawn(p->o->worker, argv, &c, why, sizeof why);
    free(argv);
    if (e && sweep_spawn_transient(e) && p->running > 0) {
        shrink_pool(p, why);
        return false;
    }
    slot_reset(s, j);
    j->attempted = true;
    p->running++;
    uv_timer_init(&p->loop, &s->timer);
    s->timer.data = s;
    if (e) {
        s->spawn_error = fl_strdup(why);
        s->exited = true;
        finish_slot(s);
        return true;
    }
    s->pid = c.pid;
    uv_pipe_init(&p->loop, &s->out, 0);
    uv_pipe_init(&p->loop, &s->err, 0);
    s->out.data = s->err.data = s;
    uv_pipe_open(&s->out, c.out_fd);
    uv_pipe_open(&s->err, c.err_fd);
    s->open = 2;
    uv_read_start((uv_stream_t *)&s->out, on_alloc, on_read);
    uv_read_start((uv_stream_t *)&s->err, on_alloc, on_read);
    /* The worker ends its own run at timeout_s (recorded 'error' with its reason, its
     * watchdog 5 s later); the sweep kills only a worker that outlives both. */
    if (p->o->timeout_s > 0)
        uv_timer_start(&s->timer, on_timer,
                       (uint64_t)(p->o->timeout_s * 1000.0) + SWEEP_KILL_GRACE_MS, 0);
    return true;
}

static void pool_close(struct pool *p)
{
    if (p->closing)
        return;
    p->closing = true;
    uv_close((uv_handle_t *)&p->sig_int, NULL);
    uv_close((uv_handle_t *)&p->sig_term, NULL);
    uv_close((uv_handle_t *)&p->sig_hup, NULL);
    uv_close((uv_handle_t *)&p->sig_chld, NULL);
    uv_close((uv_handle_t *)&p->progress, NULL);
}

static void launch_more(struct pool *p)
{
    while (!p->stopping && p->next < p->n_jobs && p->running < p->jobs_max) {
        struct slot *free_slot = NULL;
        for (int i = 0; i < p->o->jobs && !free_slot; i++)
            if (!p->slots[i].job)
                free_slot = &p->slots[i];
        FL_ASSERT(free_slot != NULL);
        if (!start_job(p, free_slot, &p->jobs[p->next]))
            break; /* short of resources: the next job ending launches it */
        p->next++;
    }
    if (p->running == 0 && (p->stopping || p->next >= p->n_jobs))
        pool_close(p);
}

static void on_signal(uv_signal_t *h, int signum)
{
    struct pool *p = h->data;
    p->signals++;
    p->stopping = true;
    p->interrupted = true;
    for (int i = 0; i < p->o->jobs; i++)
        if (p->slots[i].job)
            kill_group(&p->slots[i], p->signals > 1 ? SIGKILL : SIGINT);
    if (p->o->progress_out)
        fprintf(p->o->progress_out, "%ssweep: %s, %s %d running worker%s; partial results follow\n",
                p->o->progress == 2 ? "\n" : "",
                signum == SIGINT   ? "interrupted"
                : signum == SIGHUP ? "hung up"
                                   : "terminated",
                p->signals > 1 ? "killing" : "stopping", p->running, p->running == 1 ? "" : "s");
    launch_more(p);
}

static void on_progress(uv_timer_t *t)
{
    progress(t->data, false);
}

/* ---- setup, merge, cleanup ----------------------------------------------------- */

static void plan(struct pool *p)
{
    const struct sweep_options *o = p->o;
    size_t n_seeds = 0;
    uint64_t *seeds = o->job_seeds ? NULL
                                   : sweep_shard_seeds(o->seed_first, o->seed_last, o->shard_k,
                                                       o->shard_n, &n_seeds);
    if (o->job_seeds) /* one job per scenario, each with its own seed */
        n_seeds = 1;
    p->n_jobs = n_seeds * (size_t)o->scenario_count;
    p->jobs = fl_calloc(p->n_jobs + 1, sizeof *p->jobs);
    size_t k = 0;
    for (int s = 0; s < o->scenario_count; s++) {
        for (size_t i = 0; i < n_seeds; i++, k++) {
            struct job *j = &p->jobs[k];
            j->scenario = s;
            j->seed = o->job_seeds ? o->job_seeds[s] : seeds[i];
            struct fl_buf b;
            fl_buf_init(&b);
            fl_buf_printf(&b, "%s/job-%zu.db", p->tmpdir, k);
            j->db = fl_strdup(fl_buf_cstr(&b));
            fl_buf_close(&b);
        }
    }
    free(seeds);
}

/* Moves one finished job into the sweep's database and deletes its files. */
static void merge_job(struct pool *p, struct job *j)
{
    const struct sweep_options *o = p->o;
    struct sweep_result *r = &j->res;
    char err[1024] = "";
    struct stat st;
    int64_t first = 0;
    int count = 0;
    int rc = stat(j->db, &st) == 0
                 ? sweep_merge_from(p->merge, j->db, &first, &count, err, sizeof err)
                 : FL_ENOENT;
    hist_remove(j->db);
    if (!rc && count >= 1) {
        r->run_id = first;
        if (r->verdict == SWEEP_ERROR && r->error &&
            sweep_db_mark_error_into(p->db, first, r->error, err, sizeof err))
            fl_log(FL_LOG_ERROR, "%s", err);
        return;
    }
    if (r->verdict != SWEEP_ERROR) {
        /* A summary without its database: say so rather than lose the run. */
        struct fl_buf b;
        fl_buf_init(&b);
        fl_buf_printf(&b, "worker said '%s' but its database could not be merged%s%s",
                      sweep_verdict_name(r->verdict), err[0] ? ": " : "", err);
        free(r->error);
        r->error = fl_strdup(fl_buf_cstr(&b));
        fl_buf_close(&b);
        r->verdict = SWEEP_ERROR;
    }
    if (sweep_db_add_error_into(p->db, o->scenarios[j->scenario], j->seed, o->bugs, o->bug_count,
                                r->error, &r->run_id, err, sizeof err))
        fl_log(FL_LOG_ERROR, "%s", err);
}

/* Merges finished jobs in job order, so run_ids follow (scenario, seed) order whatever
 * order the workers finish in, while later workers are still running. Jobs that were
 * never started (fail-fast, interrupt) are skipped once nothing more will start. */
static void merge_ready(struct pool *p)
{
    bool no_more = p->stopping || p->next >= p->n_jobs;
    while (p->merged < p->n_jobs) {
        struct job *j = &p->jobs[p->merged];
        if (j->attempted && !j->finished)
            break;
        if (!j->attempted && !no_more)
            break;
        if (j->attempted)
            merge_job(p, j);
        p->merged++;
    }
}

static void collect(struct pool *p, struct sweep_report *rep)
{
    const struct sweep_options *o = p->o;
    rep->results = fl_calloc(p->n_jobs + 1, sizeof *rep->results);
    struct hist_db *db = p->db;
    hist_flush(db);
    for (size_t i = 0; i < p->n_jobs; i++) {
        struct job *j = &p->jobs[i];
        if (!j->attempted)
            continue;
        struct sweep_result *r = &rep->results[rep->count++];
        *r = j->res;
        memset(&j->res, 0, sizeof j->res);
        r->scenario = fl_strdup(o->scenarios[j->scenario]);
        r->seed = j->seed;
        char fv[512] = "";
        if (db && r->run_id && r->verdict != SWEEP_PASS) /* a pass has none: skip the load */
            rpt_first_violation(db, r->run_id, fv, sizeof fv);
        if (!fv[0] && r->verdict != SWEEP_PASS)
            snprintf(fv, sizeof fv, "%s: %s", sweep_verdict_name(r->verdict),
                     r->error ? r->error : "no check failed");
        r->first_violation = fl_strdup(fv);
        rep->pass += r->verdict == SWEEP_PASS;
        rep->fail += r->verdict == SWEEP_FAIL;
        rep->unknown += r->verdict == SWEEP_UNKNOWN;
        rep->error += r->verdict == SWEEP_ERROR;
    }
}

/* The pool no bigger than the descriptor limit allows; said on stderr when smaller
 * than asked. */
static void size_pool(struct pool *p)
{
    const struct sweep_options *o = p->o;
    long limit = -1;
    p->jobs_max = sweep_jobs_allowed(o->jobs, &limit);
    if (p->jobs_max < o->jobs && o->progress_out)
        fprintf(o->progress_out,
                "sweep: -j %d capped to %d workers at once: the limit of open files is %ld "
                "(ulimit -n); the other seeds wait for a free worker\n",
                o->jobs, p->jobs_max, limit);
}

static void loop_start(struct pool *p)
{
    uv_loop_init(&p->loop);
    uv_signal_t *sigs[] = {&p->sig_int, &p->sig_term, &p->sig_hup, &p->sig_chld};
    for (size_t i = 0; i < FL_ARRAY_LEN(sigs); i++) {
        uv_signal_init(&p->loop, sigs[i]);
        sigs[i]->data = p;
    }
    uv_timer_init(&p->loop, &p->progress);
    p->progress.data = p;
    /* SIGCHLD is watched before the first worker starts, so no exit goes unseen */
    uv_signal_start(&p->sig_chld, on_sigchld, SIGCHLD);
    uv_signal_start(&p->sig_int, on_signal, SIGINT);
    uv_signal_start(&p->sig_term, on_signal, SIGTERM);
    uv_signal_start(&p->sig_hup, on_signal, SIGHUP);
    if (p->o->progress == 2)
        uv_timer_start(&p->progress, on_progress, SWEEP_PROGRESS_MS, SWEEP_PROGRESS_MS);
}

int sweep_run(const struct sweep_options *o, struct sweep_report *rep, char *err, size_t err_len)
{
    memset(rep, 0, sizeof *rep);
    FL_ASSERT(o->jobs >= 1 && o->scenario_count >= 1 && o->db_path && o->worker);
    struct pool p;
    memset(&p, 0, sizeof p);
    p.o = o;
    p.lock_fd = -1;
    /* The sweep's database must be writable before any worker starts. */
    int rc = hist_open(o->db_path, HIST_OPEN_WRITE | HIST_OPEN_MERGE_TARGET, &p.db, err, err_len);
    if (rc)
        return rc;
    sweep_workdir_clean_stale(o->db_path, o->progress_out);
    if ((rc = sweep_workdir_create(o->db_path, &p.tmpdir, &p.lock_fd, err, err_len))) {
        hist_close(p.db);
        return rc;
    }
    p.merge = sweep_merge_new(p.db);
    plan(&p);
    rep->planned = (int)p.n_jobs;
    p.slots = fl_calloc((size_t)o->jobs, sizeof *p.slots);
    for (int i = 0; i < o->jobs; i++)
        p.slots[i].p = &p;
    size_pool(&p);
    loop_start(&p);
    p.start_s = now_s();
    launch_more(&p);
    uv_run(&p.loop, UV_RUN_DEFAULT);
    progress(&p, true);
    uv_loop_close(&p.loop);
    p.stopping = true;
    merge_ready(&p);
    sweep_workdir_remove(p.tmpdir, p.lock_fd);
    collect(&p, rep);
    sweep_merge_free(p.merge);
    if (hist_close(p.db))
        fl_log(FL_LOG_ERROR, "sweep: closing '%s' failed", o->db_path);
    rep->interrupted = p.interrupted;
    rep->wall_s = now_s() - p.start_s;
    for (size_t i = 0; i < p.n_jobs; i++) {
        free(p.jobs[i].db);
        free(p.jobs[i].res.digest);
        free(p.jobs[i].res.error);
        json_decref(p.jobs[i].res.summary);
    }
    free(p.jobs);
    free(p.slots);
    free(p.tmpdir);
    return FL_OK;
}

void sweep_report_close(struct sweep_report *rep)
{
    for (int i = 0; i < rep->count; i++) {
        free(rep->results[i].scenario);
        free(rep->results[i].digest);
        free(rep->results[i].error);
        free(rep->results[i].first_violation);
        json_decref(rep->results[i].summary);
    }
    free(rep->results);
    memset(rep, 0, sizeof *rep);
}
