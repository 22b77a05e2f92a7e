/*
 * scn_replay.c: one scenario run in a forked child process, for `faultline shrink`.
 * DESIGN §6: several worlds in one process would have to reset every global (bug
 * switches, libfiu's registry, the SIGINT flag), so each replay gets a fresh copy of
 * the process instead. The child runs scn_run with its stdout and stderr sent to
 * /dev/null and writes one JSON object {"exit_code", "error", "summary"} to a pipe;
 * the parent reads it within a wall-clock bound (a hung world is killed) and removes
 * the replay's database before and after.
 */
#include "harness/history/history.h"
#include "harness/lua/scn_int.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

double scn_mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static _Noreturn void child_main(const struct scn_replay *rp, const char *path, int fd)
{
    int dn = open("/dev/null", O_WRONLY);
    if (dn >= 0) {
        dup2(dn, STDOUT_FILENO);
        dup2(dn, STDERR_FILENO);
        close(dn);
    }
    struct scn_options so = {.path = path,
                             .seed = rp->seed,
                             .db_path = rp->db_path,
                             .bugs = rp->bugs,
                             .bug_count = rp->bug_count,
                             /* the wall-clock bound is the parent's (it kills a hung
                              * child); memory is bounded here as in `faultline run` */
                             .lua_mem_bytes = (size_t)SCN_LUA_MEM_MB_DEFAULT << 20};
    struct scn_result r;
    int code = scn_run(&so, &r);
    json_t *o = json_object();
    json_object_set_new(o, "exit_code", json_integer(code));
    json_object_set_new(o, "error", json_string(r.error));
    if (r.run.summary)
        json_object_set(o, "summary", r.run.summary);
    char *text = json_dumps(o, JSON_COMPACT);
    size_t len = text ? strlen(text) : 0, off = 0;
    while (off < len) {
        ssize_t w = write(fd, text + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            _exit(3);
        off += (size_t)w;
    }
    _exit(0);
}

/* Reads the child's answer until EOF or the deadline; false on timeout. */
static bool read_answer(int fd, double deadline, struct fl_buf *b)
{
    char chunk[65536];
    for (;;) {
        int left_ms = (int)((deadline - scn_mono_s()) * 1000.0);
        if (left_ms <= 0)
            return false;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int pr = poll(&p, 1, left_ms);
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr == 0)
            return false;
        if (pr < 0)
            return true;
        ssize_t r = read(fd, chunk, sizeof chunk);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return true;
        fl_buf_append(b, chunk, (size_t)r);
    }
}

/* Replays path; *out = the child's {"exit_code", "error", "summary"} (caller owns it).
 * Returns FL_OK, or an error with a message in err (crash, timeout, no answer). */
int scn_replay(const struct scn_replay *rp, const char *path, json_t **out, char *err, size_t n)
{
    *out = NULL;
    hist_remove(rp->db_path);
    int fds[2];
    if (pipe(fds)) {
        snprintf(err, n, "pipe: %s", strerror(errno));
        return FL_EIO;
    }
    fflush(NULL);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(err, n, "fork: %s", strerror(errno));
        close(fds[0]);
        close(fds[1]);
        return FL_EIO;
    }
    if (pid == 0) {
        /* A shrink killed outright takes its replay with it, also when it died before
         * the prctl (then the parent is no longer the one we were forked from). */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
            _exit(3);
        signal(SIGINT, SIG_DFL);
        close(fds[0]);
        child_main(rp, path, fds[1]);
    }
    close(fds[1]);
    struct fl_buf b;
    fl_buf_init(&b);
    bool in_time = read_answer(fds[0], scn_mono_s() + (double)rp->timeout_ms / 1000.0, &b);
    close(fds[0]);
    if (!in_time)
        kill(pid, SIGKILL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    int rc = FL_OK;
    if (!in_time) {
        snprintf(err, n, "the replay took longer than %lld s and was killed",
                 (long long)(rp->timeout_ms / 1000));
        rc = FL_ETIMEOUT;
    } else if (WIFSIGNALED(status)) {
        snprintf(err, n, "the replay crashed (signal %d)", WTERMSIG(status));
        rc = FL_EINTERNAL;
    } else if (!(*out = json_loadb((const char *)b.data, b.len, 0, NULL))) {
        snprintf(err, n, "the replay gave no result (exit status %d)",
                 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        rc = FL_EINTERNAL;
    }
    fl_buf_close(&b);
    hist_remove(rp->db_path);
    return rc;
}
