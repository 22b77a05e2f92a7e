/*
 * live_dir.c: the run's work directory and the port claims of live.h.
 */
#include "harness/live/live.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

/* True when DIR holds nothing but "." and "..". */
static bool dir_is_empty(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return false;
    bool empty = true;
    for (struct dirent *e; empty && (e = readdir(d));)
        empty = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");
    closedir(d);
    return empty;
}

int lv_workdir_open(struct lv_workdir *w, const char *dir, bool keep, struct fl_buf *err)
{
    memset(w, 0, sizeof *w);
    if (dir) {
        if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
            fl_buf_printf(err, "%s: cannot create the work directory: %s", dir, strerror(errno));
            return FL_EIO;
        }
        struct stat st;
        if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
            fl_buf_printf(err, "%s: not a directory", dir);
            return FL_EIO;
        }
        if (!dir_is_empty(dir)) {
            fl_buf_printf(err,
                          "%s: the work directory is not empty: a live run starts its members on "
                          "fresh data directories, and members started on an earlier run's data "
                          "would mix two runs in one history (remove it or name another)",
                          dir);
            return FL_EINVAL;
        }
        w->path = fl_strdup(dir);
        return FL_OK;
    }
    const char *tmp = getenv("TMPDIR");
    struct fl_buf b;
    fl_buf_init(&b);
    fl_buf_printf(&b, "%s/faultline-live-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    char *path = fl_strdup(fl_buf_cstr(&b));
    fl_buf_close(&b);
    if (!mkdtemp(path)) {
        fl_buf_printf(err, "%s: cannot create a work directory: %s", path, strerror(errno));
        free(path);
        return FL_EIO;
    }
    w->path = path;
    w->remove = !keep;
    return FL_OK;
}

char *lv_workdir_sub(struct lv_workdir *w, const char *name, struct fl_buf *err)
{
    struct fl_buf b;
    fl_buf_init(&b);
    fl_buf_printf(&b, "%s/%s", w->path, name);
    char *p = fl_strdup(fl_buf_cstr(&b));
    fl_buf_close(&b);
    if (mkdir(p, 0755) != 0 && errno != EEXIST) {
        fl_buf_printf(err, "%s: cannot create: %s", p, strerror(errno));
        free(p);
        return NULL;
    }
    return p;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    return flag == FTW_DP ? rmdir(path) : unlink(path);
}

void lv_workdir_close(struct lv_workdir *w)
{
    if (w->path && w->remove)
        nftw(w->path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    free(w->path);
    memset(w, 0, sizeof *w);
}

/* ---- ports ---------------------------------------------------------------------- */

void lv_ports_init(struct lv_ports *ps)
{
    memset(ps, 0, sizeof *ps);
}

static void port_range(int *lo, int *hi)
{
    *lo = 20000;
    *hi = 29999;
    const char *r = getenv("FL_PORT_RANGE");
    int a, b;
    if (r && sscanf(r, "%d-%d", &a, &b) == 2 && a > 0 && b >= a && b < 65536) {
        *lo = a;
        *hi = b;
    }
}

/* Nobody listens on port (a bind with SO_REUSEADDR succeeds, as the member's will). */
static bool port_bindable(int port)
{
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0)
        return false;
    int one = 1;
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bool ok = bind(s, (struct sockaddr *)&a, sizeof a) == 0;
    close(s);
    return ok;
}

/* The lock on PORT, or -1 when another process holds it (or it cannot be made). */
static int port_lock(const char *dir, int port)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%d", dir, port);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0)
        return -1;
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

int lv_port_claim(struct lv_ports *ps, int *port, struct fl_buf *err)
{
    const char *dir = getenv("FL_PORT_LOCK_DIR");
    if (!dir || !*dir)
        dir = "/tmp/faultline-ports";
    if (mkdir(dir, 01777) != 0 && errno != EEXIST) {
        fl_buf_printf(err, "%s: cannot create the port lock directory: %s", dir, strerror(errno));
        return FL_EIO;
    }
    chmod(dir, 01777); /* shared by every user's runs, like /tmp */
    int lo, hi;
    port_range(&lo, &hi);
    int span = hi - lo + 1;
    /* Start where this process's id points, so parallel workers rarely even try the
     * same locks; the flock decides. */
    int start = (int)(((unsigned)getpid() * 7919u + (unsigned)ps->n * 13u) % (unsigned)span);
    for (int i = 0; i < span; i++) {
        int p = lo + (start + i) % span;
        bool mine = false;
        for (size_t k = 0; k < ps->n && !mine; k++)
            mine = ps->ports[k] == p;
        if (mine)
            continue;
        int fd = port_lock(dir, p);
        if (fd < 0)
            continue;
        if (!port_bindable(p)) {
            close(fd);
            continue;
        }
        FL_GROW(ps->fds, ps->cap, ps->n + 1, 8);
        ps->ports = fl_realloc(ps->ports, ps->cap * sizeof *ps->ports);
        ps->fds[ps->n] = fd;
        ps->ports[ps->n++] = p;
        *port = p;
        return FL_OK;
    }
    fl_buf_printf(err, "no free port in %d-%d (locks in %s)", lo, hi, dir);
    return FL_EFULL;
}

void lv_ports_close(struct lv_ports *ps)
{
    for (size_t i = 0; i < ps->n; i++)
        close(ps->fds[i]);
    free(ps->fds);
    free(ps->ports);
    memset(ps, 0, sizeof *ps);
}
