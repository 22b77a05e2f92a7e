/*
 * sweep_pool.c: the libuv worker pool of `faultline sweep`. One job is one (scenario,
 * seed); up to opts->jobs workers run at once, each a child process started with
 * uv_spawn in its own process group (so a timeout or a second Ctrl-C can kill
 * everything it started) and recording into its own database in a temporary folder
 * beside the sweep's database. The worker's stdout (the --json summary) and stderr
 * (kept for the error message) come back over pipes.
 *
 * A job ends when its process has exited and both pipes are closed; a worker that
 * exits while something it started still holds a pipe gets a short grace period, then
 * the pipes are closed anyway. A job that outlives opts->timeout_s is killed
 * (SIGKILL to its group) and recorded as 'error'. SIGINT/SIGTERM stop the launching,
 * pass SIGINT on to the running workers (which end their runs cleanly) and the sweep
 * finishes with what it has; a second signal kills the workers.
 *
 * After the loop, the per-job databases are merged into opts->db_path in job order, so
 * run_ids follow (scenario, seed) order whatever order the workers finished in.
 */
#include "harness/sweep/sweep.h"

#include "harness/history/history.h"
#include "reports/report.h"

#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uv.h>

#define SWEEP_GRACE_MS    2000
#define SWEEP_OUT_MAX     (8 << 20) /* stdout kept at most (the JSON summary) */
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
    uv_process_t proc;
    uv_pipe_t out, err;
    uv_timer_t timer;
    int open; /* handles not yet closed: proc, out, err */
    bool exited, timed_out, timer_closing;
    int64_t exit_status;
    int term_signal;
    char *spawn_error;
    struct fl_buf out_buf, err_buf;
    double start_s;
    char rbuf[65536];
};

struct pool {
    const struct sweep_options *o;
    uv_loop_t loop;
    uv_signal_t sig_int, sig_term;
    uv_timer_t progress;
    struct job *jobs;
    size_t n_jobs, next, done;
    struct slot *slots;
    int running;
    bool stopping, interrupted, closing;
    int signals;
    int pass, fail, unknown, error;
    double start_s, last_plain_s;
    size_t last_plain_done;
    char *tmpdir;
    struct hist_db *db; /* the sweep's database, open for the whole sweep */
    size_t merged;      /* jobs[0..merged) are in it */
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

static void classify(struct slot *s)
{
    struct job *j = s->job;
    struct sweep_result *r = &j->res;
    char why[512] = "";
    json_t *sum = parse_summary(&s->out_buf);
    const char *v = json_string_value(json_object_get(sum, "verdict"));
    const char *dg = json_string_value(json_object_get(sum, "digest"));
    r->verdict = SWEEP_ERROR;
    if (s->spawn_error) {
        snprintf(why, sizeof why, "cannot start worker: %s", s->spawn_error);
    } else if (s->timed_out) {
        snprintf(why, sizeof why, "timeout: no result after %.0f s (worker killed)",
                 s->p->o->timeout_s);
    } else if (s->term_signal) {
        snprintf(why, sizeof why, "worker killed by signal %d (%s)", s->term_signal,
                 strsignal(s->term_signal));
    } else if (v) {
        r->verdict = !strcmp(v, "pass")      ? SWEEP_PASS
                     : !strcmp(v, "fail")    ? SWEEP_FAIL
                     : !strcmp(v, "unknown") ? SWEEP_UNKNOWN
                                             : SWEEP_ERROR;
        const char *e = json_string_value(json_object_get(sum, "error"));
        if (r->verdict == SWEEP_ERROR)
            snprintf(why, sizeof why, "%s",
                     e                   ? e
                     : s->p->interrupted ? "interrupted: the sweep passed SIGINT on to the worker"
                                         : "run ended in error");
    } else {
        /* No summary: the last line of stderr usually says why. */
        const char *t = fl_buf_cstr(&s->err_buf);
        size_t n = strlen(t);
        while (n && (t[n - 1] == '\n' || t[n - 1] == '\r'))
            n--;
        size_t b = n;
        while (b && t[b - 1] != '\n')
            b--;
        snprintf(why, sizeof why, "no JSON summary from worker (exit code %lld)%s%.*s",
                 (long long)s->exit_status, n > b ? ": " : "", (int)(n - b), t + b);
    }
    if (dg)
        r->digest = fl_strdup(dg);
    if (why[0])
        r->error = fl_strdup(why);
    json_decref(sum);
}

static void job_done(struct slot *s)
{
    struct pool *p = s->p;
    struct job *j = s->job;
    classify(s);
    j->res.wall_s = now_s() - s->start_s;
    switch (j->res.verdict) {
    case SWEEP_PASS:
        p->pass++;
        break;
    case SWEEP_FAIL:
        p->fail++;
        break;
    case SWEEP_UNKNOWN:
        p->unknown++;
        break;
    case SWEEP_ERROR:
        p->error++;
        break;
    }
    if (p->o->fail_fast && (j->res.verdict == SWEEP_FAIL || j->res.verdict == SWEEP_ERROR))
        p->stopping = true;
    if (s->spawn_error) /* every other seed would fail the same way */
        p->stopping = true;
    if (p->o->progress && j->res.verdict != SWEEP_PASS && p->o->progress_out)
        fprintf(p->o->progress_out, "%ssweep: %s seed %llu: %s%s%s\n",
                p->o->progress == 2 ? "\r\033[K" : "", p->o->scenarios[j->scenario],
                (unsigned long long)j->seed, sweep_verdict_name(j->res.verdict),
                j->res.error ? ": " : "", j->res.error ? j->res.error : "");
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

static void handle_closed(uv_handle_t *h)
{
    struct slot *s = h->data;
    if (--s->open == 0) {
        uv_timer_stop(&s->timer);
        uv_close((uv_handle_t *)&s->timer, on_timer_closed);
    }
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
        if (is_out && b->len + (size_t)n > SWEEP_OUT_MAX)
            return; /* a summary this big is no summary; classify() will say so */
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
    if (s->proc.pid > 0 && !s->exited)
        kill(-s->proc.pid, sig); /* the worker leads its own process group */
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

static void on_exit_cb(uv_process_t *proc, int64_t status, int sig)
{
    struct slot *s = proc->data;
    s->exited = true;
    s->exit_status = status;
    s->term_signal = sig;
    /* Whatever else is still in the group goes too (a hung helper of a killed worker). */
    kill(-proc->pid, SIGKILL);
    uv_close((uv_handle_t *)proc, handle_closed);
    uv_timer_stop(&s->timer);
    uv_timer_start(&s->timer, on_timer, SWEEP_GRACE_MS, 0);
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
    argv[k] = NULL;
}

static void start_job(struct pool *p, struct slot *s, struct job *j)
{
    memset(&s->proc, 0, sizeof s->proc);
    s->job = j;
    s->exited = s->timed_out = false;
    s->exit_status = 0;
    s->term_signal = 0;
    fl_buf_init(&s->out_buf);
    fl_buf_init(&s->err_buf);
    s->start_s = now_s();
    j->attempted = true;
    p->running++;
    uv_pipe_init(&p->loop, &s->out, 0);
    uv_pipe_init(&p->loop, &s->err, 0);
    uv_timer_init(&p->loop, &s->timer);
    s->out.data = s->err.data = s->timer.data = s->proc.data = s;
    s->open = 3;
    char seed[24], timeout[32];
    char **argv = fl_calloc(12 + 2 * (size_t)p->o->bug_count, sizeof *argv);
    build_args(p, j, argv, seed, timeout);
    uv_stdio_container_t stdio[3];
    stdio[0].flags = UV_IGNORE;
    stdio[1].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
    stdio[1].data.stream = (uv_stream_t *)&s->out;
    stdio[2].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
    stdio[2].data.stream = (uv_stream_t *)&s->err;
    uv_process_options_t po;
    memset(&po, 0, sizeof po);
    po.file = p->o->worker;
    po.args = argv;
    po.exit_cb = on_exit_cb;
    po.flags = UV_PROCESS_DETACHED; /* own process group: killable as a whole */
    po.stdio_count = 3;
    po.stdio = stdio;
    int rc = uv_spawn(&p->loop, &s->proc, &po);
    free(argv);
    if (rc) {
        s->spawn_error = fl_strdup(uv_strerror(rc));
        s->exited = true;
        uv_close((uv_handle_t *)&s->proc, handle_closed);
        close_pipe(&s->out);
        close_pipe(&s->err);
        return;
    }
    uv_read_start((uv_stream_t *)&s->out, on_alloc, on_read);
    uv_read_start((uv_stream_t *)&s->err, on_alloc, on_read);
    if (p->o->timeout_s > 0)
        uv_timer_start(&s->timer, on_timer, (uint64_t)(p->o->timeout_s * 1000.0), 0);
}

static void pool_close(struct pool *p)
{
    if (p->closing)
        return;
    p->closing = true;
    uv_close((uv_handle_t *)&p->sig_int, NULL);
    uv_close((uv_handle_t *)&p->sig_term, NULL);
    uv_close((uv_handle_t *)&p->progress, NULL);
}

static void launch_more(struct pool *p)
{
    while (!p->stopping && p->next < p->n_jobs && p->running < p->o->jobs) {
        for (int i = 0; i < p->o->jobs; i++) {
            if (!p->slots[i].job) {
                start_job(p, &p->slots[i], &p->jobs[p->next++]);
                break;
            }
        }
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
                p->o->progress == 2 ? "\n" : "", signum == SIGINT ? "interrupted" : "terminated",
                p->signals > 1 ? "killing" : "stopping", p->running, p->running == 1 ? "" : "s");
    launch_more(p);
}

static void on_progress(uv_timer_t *t)
{
    progress(t->data, false);
}

/* ---- setup, merge, cleanup ----------------------------------------------------- */

static int make_tmpdir(struct pool *p, char *err, size_t err_len)
{
    const char *db = p->o->db_path;
    const char *slash = strrchr(db, '/');
    struct fl_buf t;
    fl_buf_init(&t);
    /* The per-job databases live only until they are merged: in memory (tmpfs) when
     * the machine has one, so neither the workers' fsyncs nor the parent's reads and
     * unlinks touch a disk; else beside the sweep's database. */
    struct stat st;
    if (stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) && access("/dev/shm", W_OK) == 0) {
        fl_buf_printf(&t, "/dev/shm/faultline-sweep.XXXXXX");
        char *shm = fl_strdup(fl_buf_cstr(&t));
        if (mkdtemp(shm)) {
            fl_buf_close(&t);
            p->tmpdir = shm;
            return FL_OK;
        }
        free(shm);
        fl_buf_reset(&t);
    }
    if (slash)
        fl_buf_printf(&t, "%.*s/.%s.sweep.XXXXXX", (int)(slash - db), db, slash + 1);
    else
        fl_buf_printf(&t, ".%s.sweep.XXXXXX", db);
    char *tmpl = fl_strdup(fl_buf_cstr(&t));
    fl_buf_close(&t);
    if (!mkdtemp(tmpl)) {
        snprintf(err, err_len, "sweep: cannot create a work folder beside '%s': %s", db,
                 strerror(errno));
        free(tmpl);
        return FL_EIO;
    }
    p->tmpdir = tmpl;
    return FL_OK;
}

static void remove_job_files(const struct job *j)
{
    static const char *const suffixes[] = {"", "-wal", "-shm", "-journal"};
    for (size_t i = 0; i < FL_ARRAY_LEN(suffixes); i++) {
        struct fl_buf b;
        fl_buf_init(&b);
        fl_buf_printf(&b, "%s%s", j->db, suffixes[i]);
        unlink(fl_buf_cstr(&b));
        fl_buf_close(&b);
    }
}

static void plan(struct pool *p)
{
    const struct sweep_options *o = p->o;
    size_t n_seeds = 0;
    uint64_t *seeds =
        sweep_shard_seeds(o->seed_first, o->seed_last, o->shard_k, o->shard_n, &n_seeds);
    p->n_jobs = n_seeds * (size_t)o->scenario_count;
    p->jobs = fl_calloc(p->n_jobs + 1, sizeof *p->jobs);
    size_t k = 0;
    for (int s = 0; s < o->scenario_count; s++) {
        for (size_t i = 0; i < n_seeds; i++, k++) {
            struct job *j = &p->jobs[k];
            j->scenario = s;
            j->seed = seeds[i];
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
                 ? sweep_db_merge_into(p->db, j->db, &first, &count, err, sizeof err)
                 : FL_ENOENT;
    remove_job_files(j);
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
        if (db && r->run_id)
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

int sweep_run(const struct sweep_options *o, struct sweep_report *rep, char *err, size_t err_len)
{
    memset(rep, 0, sizeof *rep);
    FL_ASSERT(o->jobs >= 1 && o->scenario_count >= 1 && o->db_path && o->worker);
    struct pool p;
    memset(&p, 0, sizeof p);
    p.o = o;
    /* The sweep's database must be writable before any worker starts. */
    int rc = hist_open(o->db_path, HIST_OPEN_WRITE | HIST_OPEN_MERGE_TARGET, &p.db, err, err_len);
    if (rc)
        return rc;
    if ((rc = make_tmpdir(&p, err, err_len))) {
        hist_close(p.db);
        return rc;
    }
    plan(&p);
    rep->planned = (int)p.n_jobs;
    p.slots = fl_calloc((size_t)o->jobs, sizeof *p.slots);
    for (int i = 0; i < o->jobs; i++)
        p.slots[i].p = &p;
    uv_loop_init(&p.loop);
    uv_signal_init(&p.loop, &p.sig_int);
    uv_signal_init(&p.loop, &p.sig_term);
    uv_timer_init(&p.loop, &p.progress);
    p.sig_int.data = p.sig_term.data = p.progress.data = &p;
    uv_signal_start(&p.sig_int, on_signal, SIGINT);
    uv_signal_start(&p.sig_term, on_signal, SIGTERM);
    if (o->progress == 2)
        uv_timer_start(&p.progress, on_progress, SWEEP_PROGRESS_MS, SWEEP_PROGRESS_MS);
    p.start_s = now_s();
    launch_more(&p);
    uv_run(&p.loop, UV_RUN_DEFAULT);
    progress(&p, true);
    uv_loop_close(&p.loop);
    p.stopping = true;
    merge_ready(&p);
    rmdir(p.tmpdir);
    collect(&p, rep);
    if (hist_close(p.db))
        fl_log(FL_LOG_ERROR, "sweep: closing '%s' failed", o->db_path);
    rep->interrupted = p.interrupted;
    rep->wall_s = now_s() - p.start_s;
    for (size_t i = 0; i < p.n_jobs; i++) {
        free(p.jobs[i].db);
        free(p.jobs[i].res.digest);
        free(p.jobs[i].res.error);
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
    }
    free(rep->results);
    memset(rep, 0, sizeof *rep);
}
