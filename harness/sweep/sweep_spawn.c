/*
 * sweep_spawn.c: starting one worker process of a sweep (sweep_int.h). libuv's
 * uv_spawn cannot run code in the child between fork and exec, and a worker must do
 * two things there that nothing else can do for it:
 *
 *  - ask for SIGKILL when its parent dies (prctl PR_SET_PDEATHSIG; the setting
 *    survives exec). A worker leads its own session so that the sweep can kill its
 *    whole process group on a timeout, which also means no terminal signal reaches
 *    it: without this, a sweep killed with SIGKILL left every worker running to its
 *    end. The parent may already be gone by the time the child asks, so the child
 *    then compares getppid() with the pid it was forked from and exits.
 *  - start from default signal dispositions and an empty mask, as a fresh process
 *    would. The parent blocks every signal across fork so that libuv's handlers (which
 *    write to the parent's loop) can never run in the child before they are reset.
 *
 * Exec failures come back over a close-on-exec pipe (errno as 4 bytes): nothing on it
 * means the exec happened. Only async-signal-safe calls run in the child.
 */
#include "harness/sweep/sweep_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

bool sweep_spawn_transient(int e)
{
    return e == EAGAIN || e == EMFILE || e == ENFILE || e == ENOMEM;
}

static _Noreturn void child_fail(int fd, int e)
{
    ssize_t w = write(fd, &e, sizeof e);
    (void)w;
    _exit(127);
}

/* In the child, after fork: never returns. */
static _Noreturn void child(const char *file, char *const argv[], pid_t parent, int out_w,
                            int err_w, int status_w)
{
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    for (int sig = 1; sig < NSIG; sig++)
        if (sig != SIGKILL && sig != SIGSTOP)
            sigaction(sig, &dfl, NULL); /* EINVAL for the few the C library keeps: fine */
    if (setsid() < 0)
        child_fail(status_w, errno);
#ifdef __linux__
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0)
        child_fail(status_w, errno);
#endif
    if (getppid() != parent) /* the sweep died before the line above: follow it */
        _exit(127);
    int in = open("/dev/null", O_RDONLY);
    if (in < 0 || dup2(in, STDIN_FILENO) < 0 || dup2(out_w, STDOUT_FILENO) < 0 ||
        dup2(err_w, STDERR_FILENO) < 0)
        child_fail(status_w, errno);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    execv(file, argv);
    child_fail(status_w, errno);
}

static void close_all(const int *fds, int n)
{
    for (int i = 0; i < n; i++)
        if (fds[i] >= 0)
            close(fds[i]);
}

/* Waits for the exec (or its failure) of child pid: 0, or the child's errno (the
 * child is reaped then). */
static int exec_status(pid_t pid, int status_r)
{
    int e = 0;
    ssize_t r;
    while ((r = read(status_r, &e, sizeof e)) < 0 && errno == EINTR) {
    }
    if (r != (ssize_t)sizeof e)
        return 0;
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
    }
    return e ? e : EIO;
}

int sweep_spawn(const char *file, char *const argv[], struct sweep_child *c, char *err,
                size_t err_len)
{
    int fds[6] = {-1, -1, -1, -1, -1, -1}; /* out r/w, err r/w, status r/w */
    for (int i = 0; i < 3; i++) {
        if (pipe2(fds + 2 * i, O_CLOEXEC) != 0) {
            int e = errno;
            close_all(fds, 6);
            snprintf(err, err_len, "pipe: %s", strerror(e));
            return e;
        }
    }
    pid_t parent = getpid();
    sigset_t all, old;
    sigfillset(&all);
    sigprocmask(SIG_SETMASK, &all, &old);
    pid_t pid = fork();
    if (pid == 0)
        child(file, argv, parent, fds[1], fds[3], fds[5]);
    int fork_errno = errno;
    sigprocmask(SIG_SETMASK, &old, NULL);
    close(fds[1]);
    close(fds[3]);
    close(fds[5]);
    fds[1] = fds[3] = fds[5] = -1;
    if (pid < 0) {
        close_all(fds, 6);
        snprintf(err, err_len, "fork: %s", strerror(fork_errno));
        return fork_errno;
    }
    int e = exec_status(pid, fds[4]);
    close(fds[4]);
    if (e) {
        close(fds[0]);
        close(fds[2]);
        snprintf(err, err_len, "%s: %s", file, strerror(e));
        return e;
    }
    c->pid = pid;
    c->out_fd = fds[0];
    c->err_fd = fds[2];
    return 0;
}

/* Descriptors open in this process now (the database, libuv's, stdio...). */
static long fds_open(long limit)
{
    DIR *d = opendir("/proc/self/fd");
    long n = 0;
    if (d) {
        while (readdir(d))
            n++;
        closedir(d);
        return n > 3 ? n - 3 : 0; /* ".", ".." and the DIR's own descriptor */
    }
    for (long fd = 0; fd < limit && fd < 65536; fd++)
        n += fcntl((int)fd, F_GETFD) != -1;
    return n;
}

int sweep_jobs_allowed(int jobs, long *limit)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0) {
        *limit = -1;
        return jobs;
    }
    long open_now = fds_open((long)rl.rlim_cur);
    rlim_t need = (rlim_t)open_now + SWEEP_FDS_RESERVE + (rlim_t)jobs * SWEEP_FDS_PER_JOB;
    if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < need) {
        /* ask for what is needed, up to the hard limit (workers inherit it: harmless) */
        struct rlimit up = rl;
        up.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > need ? need : rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &up) == 0)
            rl.rlim_cur = up.rlim_cur;
    }
    *limit = rl.rlim_cur == RLIM_INFINITY ? -1 : (long)rl.rlim_cur;
    if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= need)
        return jobs;
    long spare = (long)rl.rlim_cur - open_now - SWEEP_FDS_RESERVE;
    long allowed = spare / SWEEP_FDS_PER_JOB;
    return allowed < 1 ? 1 : (int)allowed;
}
