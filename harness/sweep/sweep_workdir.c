/*
 * sweep_workdir.c: the sweep's work folder, where each worker writes its own database
 * until the sweep merges it (sweep_int.h), and the cleaning of folders left by sweeps
 * that died. A sweep killed with SIGKILL cannot clean up after itself, and its folder
 * in /dev/shm holds memory until something removes it; the next sweep does, but only
 * folders whose owner is surely dead:
 *
 *  - the name carries the owner's pid: faultline-sweep.PID.XXXXXX;
 *  - the owner holds an flock on owner.lock inside for its whole life. The lock file
 *    is created under another name, locked, then renamed into place, so an
 *    owner.lock that exists is either locked by a live owner or free because the
 *    owner is gone (the kernel drops flocks of dead processes, pid reuse or not);
 *  - in the instant between mkdtemp and that rename there is no owner.lock yet; such a
 *    folder is removed only when kill(pid, 0) says the pid no longer exists.
 *
 * Folders of other users, symlinks, names of any other shape (older faultline builds
 * named their folders without a pid: those are never touched) are left alone. The
 * cleaner keeps the dead owner's lock while it removes the files, so two cleaners
 * never work on one folder. Folders hold plain files only; nothing recurses.
 */
#include "harness/sweep/sweep_int.h"

#include "harness/common/text.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define SHM_DIR    "/dev/shm"
#define SHM_PREFIX "faultline-sweep."
#define LOCK_NAME  "owner.lock"

/* The memory folder: $FAULTLINE_SWEEP_TMP when set (a smaller tmpfs, or a private one:
 * tests that kill sweeps use their own, since any sweep on the machine cleans what a
 * dead sweep left in the shared one), else /dev/shm. */
static const char *shm_dir(void)
{
    const char *e = getenv("FAULTLINE_SWEEP_TMP");
    return e && *e ? e : SHM_DIR;
}

/* "DIR/.NAME.sweep." for a database DIR/NAME (or ".NAME.sweep." with no folder). */
static void beside_prefix(const char *db, struct fl_buf *dir, struct fl_buf *prefix)
{
    const char *slash = strrchr(db, '/');
    if (slash)
        fl_buf_printf(dir, "%.*s", (int)(slash - db == 0 ? 1 : slash - db), db);
    else
        fl_buf_printf(dir, ".");
    fl_buf_printf(prefix, ".%s.sweep.", slash ? slash + 1 : db);
}

/* Creates owner.lock in dir, locked, under a temporary name first (see above). */
static int lock_create(const char *dir, int *lock_fd)
{
    struct fl_buf tmp, fin;
    fl_buf_init(&tmp);
    fl_buf_init(&fin);
    fl_buf_printf(&tmp, "%s/%s.new", dir, LOCK_NAME);
    fl_buf_printf(&fin, "%s/%s", dir, LOCK_NAME);
    int fd = open(fl_buf_cstr(&tmp), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    int rc = fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0 &&
                     rename(fl_buf_cstr(&tmp), fl_buf_cstr(&fin)) == 0
                 ? 0
                 : errno;
    if (rc && fd >= 0) {
        unlink(fl_buf_cstr(&tmp));
        close(fd);
    }
    fl_buf_close(&tmp);
    fl_buf_close(&fin);
    *lock_fd = rc ? -1 : fd;
    return rc;
}

static char *try_create(const char *path_prefix, int *lock_fd)
{
    struct fl_buf t;
    fl_buf_init(&t);
    fl_buf_printf(&t, "%s%ld.XXXXXX", path_prefix, (long)getpid());
    char *dir = fl_strdup(fl_buf_cstr(&t));
    fl_buf_close(&t);
    if (!mkdtemp(dir)) {
        free(dir);
        return NULL;
    }
    int e = lock_create(dir, lock_fd);
    if (e) {
        rmdir(dir);
        free(dir);
        errno = e;
        return NULL;
    }
    return dir;
}

int sweep_workdir_create(const char *db_path, char **dir, int *lock_fd, char *err, size_t err_len)
{
    /* The per-job databases live only until they are merged: in memory (tmpfs) when
     * the machine has one, so neither the workers' fsyncs nor the parent's reads and
     * unlinks touch a disk; else beside the sweep's database. */
    struct stat st;
    *dir = NULL;
    struct fl_buf d, prefix, path;
    fl_buf_init(&d);
    fl_buf_init(&prefix);
    fl_buf_init(&path);
    const char *shm = shm_dir();
    if (stat(shm, &st) == 0 && S_ISDIR(st.st_mode) && access(shm, W_OK) == 0) {
        fl_buf_printf(&path, "%s/%s", shm, SHM_PREFIX);
        *dir = try_create(fl_buf_cstr(&path), lock_fd);
        fl_buf_reset(&path);
    }
    if (*dir) {
        fl_buf_close(&path);
        return FL_OK;
    }
    beside_prefix(db_path, &d, &prefix);
    fl_buf_printf(&path, "%s/%s", fl_buf_cstr(&d), fl_buf_cstr(&prefix));
    *dir = try_create(fl_buf_cstr(&path), lock_fd);
    int e = errno;
    fl_buf_close(&d);
    fl_buf_close(&prefix);
    fl_buf_close(&path);
    if (*dir)
        return FL_OK;
    snprintf(err, err_len, "sweep: cannot create a work folder beside '%s': %s", db_path,
             strerror(e));
    return FL_EIO;
}

/* Unlinks every entry of the folder open as dfd (plain files; a stray subfolder is
 * left and makes the rmdir fail, which is harmless). */
static void empty_dir(int dfd)
{
    DIR *d = fdopendir(dfd);
    if (!d) {
        close(dfd);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            unlinkat(dirfd(d), e->d_name, 0);
    closedir(d);
}

static void remove_dir(const char *dir)
{
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd >= 0)
        empty_dir(dfd);
    rmdir(dir);
}

void sweep_workdir_remove(const char *dir, int lock_fd)
{
    remove_dir(dir);
    if (lock_fd >= 0)
        close(lock_fd); /* only now: a cleaner that waits on the lock finds nothing */
}

/* The owner pid of a folder named PREFIX + "PID.XXXXXX", or 0 for any other name. */
static pid_t owner_pid(const char *name, const char *prefix)
{
    size_t pl = strlen(prefix);
    if (strncmp(name, prefix, pl) != 0)
        return 0;
    const char *p = name + pl;
    size_t digits = strspn(p, "0123456789");
    if (digits == 0 || digits > 9 || p[digits] != '.' || strlen(p + digits + 1) != 6)
        return 0;
    for (const char *x = p + digits + 1; *x; x++)
        if (!((*x >= 'a' && *x <= 'z') || (*x >= 'A' && *x <= 'Z') || (*x >= '0' && *x <= '9')))
            return 0;
    long pid = strtol(p, NULL, 10);
    return pid > 0 ? (pid_t)pid : 0;
}

/* When the owner of folder path (pid in its name) is dead, removes the folder and
 * returns true. Takes the owner lock first, and keeps it during the removal. */
static bool clean_if_dead(const char *path, pid_t pid)
{
    struct stat st;
    if (lstat(path, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid())
        return false;
    struct fl_buf lp;
    fl_buf_init(&lp);
    fl_buf_printf(&lp, "%s/%s", path, LOCK_NAME);
    int fd = open(fl_buf_cstr(&lp), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    int open_errno = errno;
    fl_buf_close(&lp);
    bool dead;
    if (fd >= 0)
        dead = flock(fd, LOCK_EX | LOCK_NB) == 0; /* held while the owner lives */
    else
        dead = open_errno == ENOENT && kill(pid, 0) != 0 && errno == ESRCH;
    if (dead)
        remove_dir(path);
    if (fd >= 0)
        close(fd);
    return dead;
}

/* Cleans the dead owners' folders named prefix + "PID.XXXXXX" in folder dir. */
static int clean_in(const char *dir, const char *prefix, FILE *log)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int removed = 0;
    struct dirent *e;
    struct fl_buf path;
    fl_buf_init(&path);
    while ((e = readdir(d))) {
        pid_t pid = owner_pid(e->d_name, prefix);
        if (pid <= 0 || pid == getpid())
            continue;
        fl_buf_reset(&path);
        fl_buf_printf(&path, "%s/%s", dir, e->d_name);
        if (!clean_if_dead(fl_buf_cstr(&path), pid))
            continue;
        removed++;
        if (log) {
            char *shown = fl_term_dup(fl_buf_cstr(&path));
            fprintf(log, "sweep: removed %s, left behind by sweep %ld which is gone\n", shown,
                    (long)pid);
            free(shown);
        }
    }
    fl_buf_close(&path);
    closedir(d);
    return removed;
}

int sweep_workdir_clean_stale(const char *db_path, FILE *log)
{
    int n = clean_in(shm_dir(), SHM_PREFIX, log);
    struct fl_buf d, prefix;
    fl_buf_init(&d);
    fl_buf_init(&prefix);
    beside_prefix(db_path, &d, &prefix);
    n += clean_in(fl_buf_cstr(&d), fl_buf_cstr(&prefix), log);
    fl_buf_close(&d);
    fl_buf_close(&prefix);
    return n;
}
