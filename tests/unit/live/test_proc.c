/*
 * test_proc.c: the live process supervisor, work directory and port claims
 * (harness/live/live.h), with real processes: pause/resume seen in /proc, kill and
 * restart, the parent-death wrapper (SIGKILL the parent: the member is gone), a
 * program that cannot run, a fresh work directory removed or kept, and ports that a
 * second process cannot claim while the first holds them.
 */
#include "fl_test.h"

#include "harness/live/live.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The state letter of pid in /proc/PID/stat ('S', 'R', 'T', ...), or 0. */
static char proc_state(int pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *rp = strrchr(buf, ')');
    return rp && rp[1] == ' ' ? rp[2] : 0;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Waits up to 5 s for pid's state to be (or not be, when want is lower case) c. */
static bool state_becomes(int pid, char want)
{
    for (int i = 0; i < 500; i++) {
        if (proc_state(pid) == want)
            return true;
        sleep_ms(10);
    }
    return false;
}

static void kill_pause_restart(void)
{
    uv_loop_t loop;
    uv_loop_init(&loop);
    struct lv_workdir w;
    struct fl_buf err;
    fl_buf_init(&err);
    CHECK(lv_workdir_open(&w, NULL, false, &err) == FL_OK);
    char log[4200];
    snprintf(log, sizeof log, "%s/m.log", w.path);
    const char *argv[] = {"sh", "-c", "echo started; exec sleep 60", NULL};
    struct lv_proc p;
    lv_proc_init(&p, &loop, argv, log);
    CHECK(lv_proc_start(&p, &err) == FL_OK);
    int pid1 = p.pid;
    CHECK(pid1 > 0 && getpgid(pid1) == pid1); /* leads its own process group */
    CHECK(state_becomes(pid1, 'S'));
    CHECK(lv_proc_pause(&p) == FL_OK);
    CHECK(proc_state(pid1) == 'T'); /* pause returns once it is stopped */
    CHECK(lv_proc_resume(&p) == FL_OK);
    CHECK(state_becomes(pid1, 'S'));
    CHECK(lv_proc_pause(&p) == FL_OK); /* kill works on a paused process too */
    CHECK(lv_proc_restart(&p, &err) == FL_OK);
    CHECK_EQ_INT(p.term_signal, SIGKILL);
    CHECK(p.pid != pid1 && p.running && p.starts == 2);
    CHECK(kill(pid1, 0) != 0);
    CHECK(lv_proc_kill(&p) == FL_OK);
    CHECK(!p.running && p.term_signal == SIGKILL);
    CHECK(lv_proc_pause(&p) == FL_EDOWN);
    FILE *f = fopen(log, "r");
    char line[64] = "";
    CHECK(f && fgets(line, sizeof line, f) && !strcmp(line, "started\n"));
    fclose(f);
    lv_proc_close(&p);
    char *path = fl_strdup(w.path);
    lv_workdir_close(&w); /* fresh and not kept: removed */
    struct stat st;
    CHECK(stat(path, &st) != 0);
    free(path);
    fl_buf_close(&err);
    CHECK(uv_loop_close(&loop) == 0);
}

static void program_missing(void)
{
    uv_loop_t loop;
    uv_loop_init(&loop);
    const char *argv[] = {"/nonexistent/member", NULL};
    struct lv_proc p;
    struct fl_buf err;
    fl_buf_init(&err);
    lv_proc_init(&p, &loop, argv, NULL);
    CHECK(lv_proc_start(&p, &err) == FL_OK); /* the wrapper starts, its exec fails */
    CHECK(lv_proc_wait_exit(&p, 10000) == FL_OK);
    CHECK_EQ_INT(p.exit_status, 127);
    lv_proc_close(&p);
    fl_buf_close(&err);
    CHECK(uv_loop_close(&loop) == 0);
}

/* A harness (forked) starts a member and is SIGKILLed: the member dies with it. This
 * process is a subreaper, so the orphan comes back to it and its end can be seen. */
static void parent_death_kills_member(void)
{
    CHECK(prctl(PR_SET_CHILD_SUBREAPER, 1) == 0);
    int fds[2];
    CHECK(pipe(fds) == 0);
    pid_t harness = fork();
    CHECK(harness >= 0);
    if (harness == 0) {
        uv_loop_t loop;
        uv_loop_init(&loop);
        const char *argv[] = {"sleep", "60", NULL};
        struct lv_proc p;
        struct fl_buf err;
        fl_buf_init(&err);
        lv_proc_init(&p, &loop, argv, NULL);
        int pid = lv_proc_start(&p, &err) == FL_OK ? p.pid : -1;
        sleep_ms(200); /* past the wrapper's prctl and exec */
        ssize_t wr = write(fds[1], &pid, sizeof pid);
        (void)wr;
        for (;;)
            pause();
    }
    close(fds[1]);
    int member = -1;
    CHECK(read(fds[0], &member, sizeof member) == (ssize_t)sizeof member);
    close(fds[0]);
    CHECK(member > 0);
    CHECK(state_becomes(member, 'S'));
    kill(harness, SIGKILL);
    int st = 0;
    CHECK(waitpid(harness, &st, 0) == harness);
    bool gone = false;
    for (int i = 0; i < 500 && !gone; i++) {
        pid_t r = waitpid(member, &st, WNOHANG);
        gone = r == member;
        if (!gone)
            sleep_ms(10);
    }
    if (!gone)
        kill(member, SIGKILL);
    CHECK(gone && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
}

static void workdir_named_and_kept(void)
{
    struct lv_workdir w, k;
    struct fl_buf err;
    fl_buf_init(&err);
    CHECK(lv_workdir_open(&k, NULL, true, &err) == FL_OK);
    char named[4200];
    snprintf(named, sizeof named, "%s/run", k.path);
    CHECK(lv_workdir_open(&w, named, false, &err) == FL_OK);
    char *sub = lv_workdir_sub(&w, "m1", &err);
    struct stat st;
    CHECK(sub && stat(sub, &st) == 0 && S_ISDIR(st.st_mode));
    free(sub);
    lv_workdir_close(&w);
    CHECK(stat(named, &st) == 0); /* a named directory stays */
    /* and holds m1 now: a second run there would start on the first run's data */
    fl_buf_reset(&err);
    CHECK(lv_workdir_open(&w, named, false, &err) == FL_EINVAL);
    CHECK(strstr(fl_buf_cstr(&err), "the work directory is not empty") != NULL);
    fl_buf_reset(&err);
    char *kp = fl_strdup(k.path);
    lv_workdir_close(&k);
    CHECK(stat(kp, &st) == 0); /* kept */
    char m1[4300];
    snprintf(m1, sizeof m1, "%s/m1", named);
    rmdir(m1);
    rmdir(named);
    rmdir(kp);
    free(kp);
    CHECK(lv_workdir_open(&w, "/nonexistent/a/b", false, &err) == FL_EIO);
    fl_buf_close(&err);
}

/* Five ports; this process claims three; a second process gets the other two only. */
static void ports_never_shared(void)
{
    struct lv_workdir w;
    struct fl_buf err;
    fl_buf_init(&err);
    CHECK(lv_workdir_open(&w, NULL, false, &err) == FL_OK);
    setenv("FL_PORT_LOCK_DIR", w.path, 1);
    /* outside the default range (20000-29999), which live tests running beside this
     * one claim from without this test's lock directory, and below the ephemeral
     * ports (32768 and up) */
    setenv("FL_PORT_RANGE", "30990-30994", 1);
    struct lv_ports ps;
    lv_ports_init(&ps);
    int mine[3];
    for (int i = 0; i < 3; i++)
        CHECK(lv_port_claim(&ps, &mine[i], &err) == FL_OK);
    CHECK(mine[0] != mine[1] && mine[1] != mine[2] && mine[0] != mine[2]);
    int fds[2];
    CHECK(pipe(fds) == 0);
    pid_t other = fork();
    if (other == 0) {
        struct lv_ports o;
        lv_ports_init(&o);
        int got[3] = {0, 0, 0}, port;
        for (int i = 0; i < 3 && lv_port_claim(&o, &port, &err) == FL_OK; i++)
            got[i] = port;
        ssize_t wr = write(fds[1], got, sizeof got);
        _exit(wr == (ssize_t)sizeof got ? 0 : 1);
    }
    int got[3] = {0, 0, 0}, st;
    CHECK(read(fds[0], got, sizeof got) == (ssize_t)sizeof got);
    CHECK(waitpid(other, &st, 0) == other);
    close(fds[0]);
    close(fds[1]);
    CHECK(got[0] && got[1] && !got[2]); /* two left, then the range is full */
    for (int i = 0; i < 2; i++)
        for (int k = 0; k < 3; k++)
            CHECK(got[i] != mine[k]);
    lv_ports_close(&ps);
    unsetenv("FL_PORT_LOCK_DIR");
    unsetenv("FL_PORT_RANGE");
    lv_workdir_close(&w);
    fl_buf_close(&err);
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "_pdeath-exec"))
        return lv_pdeath_exec_main(argc - 1, argv + 1);
    FL_TEST(kill_pause_restart);
    FL_TEST(program_missing);
    FL_TEST(parent_death_kills_member);
    FL_TEST(workdir_named_and_kept);
    FL_TEST(ports_never_shared);
    return fl_test_end();
}
