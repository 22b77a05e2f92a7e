/*
 * live_proc.c: the process supervisor of live.h: uv_spawn through the parent-death
 * wrapper, kill/restart, pause/resume, and waiting on the caller's loop.
 */
#include "harness/live/live.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

static char **argv_copy(const char *const *argv)
{
    size_t n = 0;
    while (argv[n])
        n++;
    char **c = fl_calloc(n + 1, sizeof *c);
    for (size_t i = 0; i < n; i++)
        c[i] = fl_strdup(argv[i]);
    return c;
}

void lv_proc_init(struct lv_proc *p, uv_loop_t *loop, const char *const *argv, const char *log_path)
{
    FL_ASSERT(argv && argv[0]);
    memset(p, 0, sizeof *p);
    p->loop = loop;
    p->argv = argv_copy(argv);
    p->log_path = fl_strdup(log_path ? log_path : "/dev/null");
}

static void on_exit_cb(uv_process_t *h, int64_t status, int sig)
{
    struct lv_proc *p = h->data;
    p->running = false;
    p->paused = false;
    p->pid = 0;
    p->exit_status = status;
    p->term_signal = sig;
    if (sig != SIGKILL && sig != SIGTERM && (sig || status)) /* not one the harness sent */
        fl_log(FL_LOG_WARN, "live: process %s exited by itself: status %lld, signal %d (see %s)",
               p->argv && p->argv[0] ? p->argv[0] : "?", (long long)status, sig, p->log_path);
}

static void on_close(uv_handle_t *h)
{
    struct lv_proc *p = h->data;
    p->handle_open = false;
}

/* Closes the handle of an exited process, so that the next start can reuse it. */
static void handle_release(struct lv_proc *p)
{
    if (!p->handle_open)
        return;
    uv_close((uv_handle_t *)&p->handle, on_close);
    while (p->handle_open)
        uv_run(p->loop, UV_RUN_ONCE);
}

int lv_proc_start(struct lv_proc *p, struct fl_buf *err)
{
    if (p->running)
        return FL_EBUSY;
    handle_release(p);
    char self[4096], ppid[32];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) {
        fl_buf_printf(err, "cannot find this program (/proc/self/exe): %s", strerror(errno));
        return FL_EIO;
    }
    self[n] = 0;
    snprintf(ppid, sizeof ppid, "%d", (int)getpid());
    size_t argc = 0;
    while (p->argv[argc])
        argc++;
    char **args = fl_calloc(argc + 4, sizeof *args);
    args[0] = self;
    args[1] = "_pdeath-exec";
    args[2] = ppid;
    for (size_t i = 0; i < argc; i++)
        args[3 + i] = p->argv[i];
    int log = open(p->log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (log < 0) {
        fl_buf_printf(err, "%s: cannot open the log: %s", p->log_path, strerror(errno));
        free(args);
        return FL_EIO;
    }
    uv_stdio_container_t stdio[3] = {{.flags = UV_IGNORE},
                                     {.flags = UV_INHERIT_FD, .data.fd = log},
                                     {.flags = UV_INHERIT_FD, .data.fd = log}};
    uv_process_options_t o;
    memset(&o, 0, sizeof o);
    o.file = self;
    o.args = args;
    o.exit_cb = on_exit_cb;
    o.flags = UV_PROCESS_DETACHED; /* setsid: its own session and process group */
    o.stdio_count = 3;
    o.stdio = stdio;
    p->handle.data = p;
    int rc = uv_spawn(p->loop, &p->handle, &o);
    close(log);
    free(args);
    if (rc) {
        fl_buf_printf(err, "%s: spawn failed: %s", p->argv[0], uv_strerror(rc));
        uv_close((uv_handle_t *)&p->handle, NULL); /* uv_spawn's documented cleanup */
        uv_run(p->loop, UV_RUN_NOWAIT);
        return FL_EIO;
    }
    p->handle_open = true;
    p->running = true;
    p->paused = false;
    p->pid = p->handle.pid;
    p->starts++;
    return FL_OK;
}

struct wait_timer {
    bool fired;
};

static void on_wait_timer(uv_timer_t *t)
{
    ((struct wait_timer *)t->data)->fired = true;
}

static void on_timer_close(uv_handle_t *h)
{
    (void)h;
}

bool lv_run_until(uv_loop_t *loop, bool (*done)(void *arg), void *arg, int64_t timeout_ms)
{
    struct wait_timer w = {false};
    uv_timer_t t;
    uv_timer_init(loop, &t);
    t.data = &w;
    uv_timer_start(&t, on_wait_timer, (uint64_t)(timeout_ms > 0 ? timeout_ms : 0), 0);
    bool ok;
    while (!(ok = done(arg)) && !w.fired)
        uv_run(loop, UV_RUN_ONCE);
    uv_timer_stop(&t);
    uv_close((uv_handle_t *)&t, on_timer_close);
    uv_run(loop, UV_RUN_NOWAIT); /* lets the close finish: t lives on this stack */
    return ok;
}

static bool exited(void *arg)
{
    return !((struct lv_proc *)arg)->running;
}

int lv_proc_wait_exit(struct lv_proc *p, int64_t timeout_ms)
{
    return lv_run_until(p->loop, exited, p, timeout_ms) ? FL_OK : FL_ETIMEOUT;
}

int lv_proc_kill(struct lv_proc *p)
{
    if (!p->running)
        return FL_OK;
    kill(-p->pid, SIGKILL); /* the group; a stopped process dies of SIGKILL too */
    kill(p->pid, SIGKILL);  /* in case it left its group */
    /* SIGKILL cannot be ignored: the exit comes; a minute bounds a wedged kernel. */
    return lv_proc_wait_exit(p, 60000);
}

int lv_proc_restart(struct lv_proc *p, struct fl_buf *err)
{
    int rc = lv_proc_kill(p);
    return rc ? rc : lv_proc_start(p, err);
}

static int group_signal(struct lv_proc *p, int sig)
{
    if (!p->running)
        return FL_EDOWN;
    if (kill(-p->pid, sig) != 0 && kill(p->pid, sig) != 0)
        return FL_EIO;
    return FL_OK;
}

/* Every thread of pid is stopped ('T' in /proc/PID/task/TID/stat). */
static bool all_threads_stopped(int pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", pid);
    DIR *d = opendir(path);
    if (!d)
        return false;
    bool all = true, any = false;
    struct dirent *e;
    while (all && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char sp[320], buf[512];
        snprintf(sp, sizeof sp, "/proc/%d/task/%s/stat", pid, e->d_name);
        FILE *f = fopen(sp, "r");
        size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
        if (f)
            fclose(f);
        buf[n] = 0;
        const char *rp = strrchr(buf, ')');
        all = rp && rp[1] == ' ' && (rp[2] == 'T' || rp[2] == 't');
        any = true;
    }
    closedir(d);
    return all && any;
}

int lv_proc_pause(struct lv_proc *p)
{
    int rc = group_signal(p, SIGSTOP);
    if (rc)
        return rc;
    p->paused = true;
    /* SIGSTOP takes effect asynchronously, thread by thread: return once the whole
     * process is stopped, so nothing it answers afterwards was answered "while
     * paused" (bounded: 2 s). */
    for (int i = 0; i < 200 && !all_threads_stopped(p->pid); i++) {
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return all_threads_stopped(p->pid) ? FL_OK : FL_ETIMEOUT;
}

int lv_proc_resume(struct lv_proc *p)
{
    int rc = group_signal(p, SIGCONT);
    if (!rc)
        p->paused = false;
    return rc;
}

void lv_proc_close(struct lv_proc *p)
{
    if (!p->argv)
        return;
    lv_proc_kill(p);
    handle_release(p);
    for (size_t i = 0; p->argv[i]; i++)
        free(p->argv[i]);
    free(p->argv);
    free(p->log_path);
    memset(p, 0, sizeof *p);
}

int lv_pdeath_exec_main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "faultline: _pdeath-exec PARENT_PID PROGRAM [ARGS...]\n");
        return 127;
    }
    pid_t parent = (pid_t)atoi(argv[1]);
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) {
        fprintf(stderr, "faultline: _pdeath-exec: prctl: %s\n", strerror(errno));
        return 127;
    }
    if (getppid() != parent) /* the harness died before the prctl: follow it */
        return 127;
    execvp(argv[2], argv + 2);
    fprintf(stderr, "faultline: _pdeath-exec: cannot run %s: %s\n", argv[2], strerror(errno));
    return 127;
}
