/*
 * sweep_int.h: what the files of harness/sweep share and nothing else sees: starting
 * a worker process that cannot outlive the sweep (sweep_spawn.c), the sweep's work
 * folder with its owner lock and the cleaning of folders that sweeps which died left
 * behind (sweep_workdir.c), and the file-descriptor budget of the worker pool.
 */
#ifndef FL_SWEEP_INT_H
#define FL_SWEEP_INT_H

/* Internal to harness/sweep: compiled only into fl_sweep (which defines FL_INTERNAL_sweep)
 * and into the white-box tests that declare it (tests/CMakeLists.txt). */
#ifndef FL_INTERNAL_sweep
#error "harness/sweep/sweep_int.h is internal to harness/sweep: include its public header instead"
#endif

#include "harness/sweep/sweep.h"

#include <sys/types.h>

/* A started worker: its pid (the leader of its own session and process group) and the
 * parent's ends of its stdout and stderr pipes (close-on-exec, owned by the caller). */
struct sweep_child {
    pid_t pid;
    int out_fd, err_fd;
};

/*
 * Starts file with argv (argv[0] first, NULL-terminated) in a new session, stdin from
 * /dev/null, stdout and stderr on fresh pipes. The child asks the kernel for SIGKILL
 * when the sweep dies (PR_SET_PDEATHSIG) and exits at once if the sweep died before
 * it could ask. Returns 0, or an errno value (with a message in err): EAGAIN, EMFILE,
 * ENFILE and ENOMEM say the system is out of processes or descriptors for now,
 * anything else (ENOENT, EACCES from exec) that the worker cannot be started at all.
 */
int sweep_spawn(const char *file, char *const argv[], struct sweep_child *c, char *err,
                size_t err_len);

/* True for a sweep_spawn error that a later attempt may not meet (a resource that
 * another worker will give back when it ends). */
bool sweep_spawn_transient(int e);

/*
 * The work folder of a sweep: /dev/shm/faultline-sweep.PID.XXXXXX when there is a
 * writable /dev/shm, else .DBNAME.sweep.PID.XXXXXX beside the database, holding an
 * owner.lock that this process keeps locked (flock) until sweep_workdir_remove. The
 * folder's name carries the owner's pid and the lock says whether the owner lives, so
 * a later sweep can tell a dead sweep's leftovers from a live one's.
 * Returns FL_OK with *dir (fl_malloc'ed) and *lock_fd, or FL_EIO with a message.
 */
int sweep_workdir_create(const char *db_path, char **dir, int *lock_fd, char *err, size_t err_len);
/* Removes the folder, whatever files are still in it, and releases the lock. */
void sweep_workdir_remove(const char *dir, int lock_fd);

/*
 * Removes the work folders that sweeps which died (SIGKILL, a crash, a power cut of
 * the process) left in /dev/shm and beside db_path: only folders of this user whose
 * owner is dead, told by the owner lock being free (or, in the instant before the
 * lock exists, by the owner's pid being gone). A live sweep's folder is never
 * touched. Each removal is one line on log (may be NULL). Returns how many it removed.
 */
int sweep_workdir_clean_stale(const char *db_path, FILE *log);

/* Descriptors the parent holds per running worker (its two pipe ends), and what it
 * keeps free for itself (the database and its WAL, a merged job database, libuv,
 * the pipes of the one worker being started). */
#define SWEEP_FDS_PER_JOB 2
#define SWEEP_FDS_RESERVE 32

/*
 * How many workers the descriptor limit lets run at once: raises the soft
 * RLIMIT_NOFILE towards the hard one when jobs need more, and otherwise returns fewer
 * than jobs (at least 1). *limit receives the soft limit in force.
 */
int sweep_jobs_allowed(int jobs, long *limit);

#endif
