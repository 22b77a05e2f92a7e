/*
 * live.h: real processes for the live targets (issue 16 §2-3): a supervisor that
 * starts members (our own, or etcd) with libuv, the run's work directory, and local
 * TCP ports that parallel runs never share.
 *
 * Process supervision. lv_proc_start runs argv through uv_spawn, detached (a new
 * session, so its own process group), with stdout and stderr appended to a log file.
 * uv_spawn cannot run code in the child between fork and exec, so the child is first
 * the wrapper `SELF _pdeath-exec PARENT_PID PROGRAM ARGS...`, where SELF is this
 * binary (/proc/self/exe): lv_pdeath_exec_main asks for SIGKILL when its parent
 * dies (PR_SET_PDEATHSIG, kept across exec), exits if the parent already died, then
 * execs PROGRAM. Every program that uses lv_proc must therefore answer `_pdeath-exec`
 * from its main() (faultline does; so do the live unit tests). A process the
 * supervisor started thus dies with the harness even when the harness gets SIGKILL.
 * (A grandchild of the member would not: etcd and our members start none.)
 *
 * kill sends SIGKILL to the process group and waits for the exit; restart is kill then
 * start with the same argv (so the same data directory); pause/resume are SIGSTOP/
 * SIGCONT to the group. The waits run the caller's libuv loop (UV_RUN_ONCE), so
 * proxies and requests on that loop keep going meanwhile. Wall time throughout: a
 * live run is not deterministic and claims no digest.
 *
 * Work directory: lv_workdir_open(NULL) makes a fresh `faultline-live-XXXXXX` under
 * $TMPDIR (else /tmp) and removes it on close unless keep; a directory the user names
 * (--workdir DIR) is created if missing, must be empty (FL_EINVAL otherwise: members
 * started on an earlier run's data would mix two runs in one history) and is never removed.
 *
 * Ports: lv_port_claim finds a loopback TCP port nobody listens on and holds an
 * exclusive flock on $FL_PORT_LOCK_DIR/PORT (default /tmp/faultline-ports) until
 * lv_ports_close or the process's death (the kernel drops the lock), so two runs of a
 * parallel sweep never hand out the same port even before the member binds it. Ports
 * come from 20000-29999 by default (below Linux's ephemeral range, so outgoing
 * connections do not take them); FL_PORT_RANGE=LO-HI changes it. The lock files stay
 * (empty, one per port ever claimed): unlinking one that another process holds would
 * let a third lock a new file of the same name.
 */
#ifndef FL_LIVE_H
#define FL_LIVE_H

#include "harness/common/common.h"

#include <uv.h>

/* ---- processes ------------------------------------------------------------------ */

struct lv_proc {
    uv_loop_t *loop;
    char **argv;    /* owned copy, NULL-terminated */
    char *log_path; /* owned; stdout and stderr are appended here */
    uv_process_t handle;
    int pid; /* of the running process, 0 when none */
    bool running, paused;
    bool handle_open;    /* handle needs a uv_close */
    int64_t exit_status; /* of the last exit */
    int term_signal;     /* of the last exit, 0 when it exited by itself */
    int starts;          /* how many times started */
};

/* Copies argv (argv[0] a path or a name found on PATH) and log_path. Starts nothing. */
void lv_proc_init(struct lv_proc *p, uv_loop_t *loop, const char *const *argv,
                  const char *log_path);
/* Spawns it (see above). FL_EBUSY when it runs already, FL_EIO with a message in err
 * when spawning fails (a program that cannot be executed is seen as an exit 127 of
 * the wrapper, reported by lv_proc_wait_exit). */
int lv_proc_start(struct lv_proc *p, struct fl_buf *err);
/* SIGKILL to the group (a paused process too) and waits for its exit. FL_OK also when
 * it was not running. */
int lv_proc_kill(struct lv_proc *p);
/* kill, then start again with the same arguments. */
int lv_proc_restart(struct lv_proc *p, struct fl_buf *err);
/* SIGSTOP to the group, then waits (at most 2 s) until every thread of the process is
 * stopped: FL_OK, FL_ETIMEOUT when it is not stopped by then, FL_EDOWN when not
 * running. */
int lv_proc_pause(struct lv_proc *p);
int lv_proc_resume(struct lv_proc *p); /* SIGCONT */
/* Runs the loop until the process exits or timeout_ms passes: FL_OK / FL_ETIMEOUT. */
int lv_proc_wait_exit(struct lv_proc *p, int64_t timeout_ms);
/* Kills it if running, closes the handle, frees the copies. */
void lv_proc_close(struct lv_proc *p);

/* The wrapper's main: argv[0] is "_pdeath-exec", argv[1] the parent pid, argv[2...]
 * the program and its arguments. Returns only on failure (exit code 127). */
int lv_pdeath_exec_main(int argc, char **argv);

/* Runs loop (UV_RUN_ONCE, with a timer so it wakes) until done(arg) or timeout_ms:
 * true when done. */
bool lv_run_until(uv_loop_t *loop, bool (*done)(void *arg), void *arg, int64_t timeout_ms);

/* ---- work directory ------------------------------------------------------------- */

struct lv_workdir {
    char *path;  /* owned, absolute or as given */
    bool remove; /* created here and not kept: removed on close */
};

/* dir NULL: a fresh directory under $TMPDIR, removed on close unless keep. Else dir,
 * created if missing (its parent must exist), never removed. FL_EIO with err. */
int lv_workdir_open(struct lv_workdir *w, const char *dir, bool keep, struct fl_buf *err);
/* PATH/name created (mkdir, fine if it exists); returns the path, owned by the caller,
 * or NULL with err. */
char *lv_workdir_sub(struct lv_workdir *w, const char *name, struct fl_buf *err);
void lv_workdir_close(struct lv_workdir *w);

/* ---- ports ---------------------------------------------------------------------- */

struct lv_ports {
    int *fds, *ports; /* lock file descriptors and their ports */
    size_t n, cap;
};

void lv_ports_init(struct lv_ports *ps);
/* Claims one free port into *port (see above). FL_EFULL when the range is exhausted. */
int lv_port_claim(struct lv_ports *ps, int *port, struct fl_buf *err);
void lv_ports_close(struct lv_ports *ps); /* releases every claim */

#endif
