/*
 * live_etcd_cluster.c: n real etcd members under the supervisor (live_etcd.h), each
 * behind a proxy on its peer port, for the live etcd target and its tests.
 *
 * Member i: client listener C_i (etcd listens; direct_url, for the harness's own
 * polls), client URL http://127.0.0.1:Y_i (client proxy i, forwards to C_i; etcd
 * advertises it), peer listener P_i (etcd listens), advertised peer URL
 * http://127.0.0.1:X_i (peer proxy i listens, forwards to P_i). Every port is a claim of
 * lv_port_claim. The cluster token carries this process's id and a counter, so member ids differ
 * between runs. Election timeouts are short (heartbeat 50 ms, election 500 ms: faster start and
 * failover on loopback).
 */
#include "harness/live/live_etcd.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

/* $env_name when set (NULL when it cannot be run), else name on PATH. */
static char *find_program(const char *env_name, const char *name)
{
    const char *env = getenv(env_name);
    if (env && *env)
        return access(env, X_OK) == 0 ? fl_strdup(env) : NULL;
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/bin:/bin";
    char *copy = fl_strdup(path), *save = NULL, *found = NULL;
    for (char *d = strtok_r(copy, ":", &save); d && !found; d = strtok_r(NULL, ":", &save)) {
        struct fl_buf b;
        fl_buf_init(&b);
        fl_buf_printf(&b, "%s/%s", d, name);
        if (access(fl_buf_cstr(&b), X_OK) == 0)
            found = fl_strdup(fl_buf_cstr(&b));
        fl_buf_close(&b);
    }
    free(copy);
    return found;
}

char *lv_etcd_find(void)
{
    return find_program("FL_ETCD", "etcd");
}

char *lv_strace_find(void)
{
    return find_program("FL_STRACE", "strace");
}

/* The inode of the TCP socket bound to 127.0.0.1:port (/proc/net/tcp), 0 none. */
static unsigned long loopback_socket_inode(int port)
{
    FILE *f = fopen("/proc/net/tcp", "r");
    char line[512];
    unsigned long inode = 0;
    if (f && !fgets(line, sizeof line, f)) /* the header */
        line[0] = 0;
    while (f && !inode && fgets(line, sizeof line, f)) {
        /* "  sl: local:port remote:port st tx:rx tr:when retrnsmt uid timeout inode" */
        unsigned addr, lport;
        unsigned long ino;
        if (sscanf(line, " %*d: %8X:%4X %*8X:%*4X %*X %*X:%*X %*X:%*X %*X %*u %*u %lu", &addr,
                   &lport, &ino) == 3 &&
            (int)lport == port && addr == 0x0100007FU)
            inode = ino;
    }
    if (f)
        fclose(f);
    return inode;
}

/* The member whose process holds the socket connecting from 127.0.0.1:port: a peer
 * proxy's sender for a connection without X-Server-From (etcd's lease renewals a
 * follower forwards to the leader, POST /leases, and its prober), so that a cut
 * between two members holds on them too. -1 when no member's. */
static int member_of_port(int port, void *arg)
{
    const struct lv_etcd_cluster *c = arg;
    unsigned long inode = loopback_socket_inode(port);
    if (!inode)
        return -1;
    char want[64];
    snprintf(want, sizeof want, "socket:[%lu]", inode);
    for (int i = 0; i < c->n; i++) {
        if (!c->m[i].proc.running || c->m[i].proc.pid <= 0)
            continue;
        char dir[64];
        snprintf(dir, sizeof dir, "/proc/%d/fd", c->m[i].proc.pid);
        DIR *d = opendir(dir);
        struct dirent *e;
        bool found = false;
        while (d && !found && (e = readdir(d)) != NULL) {
            char path[512], link[64];
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            ssize_t n = readlink(path, link, sizeof link - 1);
            if (n > 0) {
                link[n] = 0;
                found = !strcmp(link, want);
            }
        }
        if (d)
            closedir(d);
        if (found)
            return i;
    }
    return -1;
}

static int member_setup(struct lv_etcd_cluster *c, int i, struct lv_workdir *wd, struct fl_buf *err)
{
    struct lv_etcd_member *m = &c->m[i];
    snprintf(m->name, sizeof m->name, "m%d", i);
    if (lv_port_claim(&c->ports, &m->client_port, err) ||
        lv_port_claim(&c->ports, &m->peer_port, err) ||
        lv_port_claim(&c->ports, &m->proxy_port, err) ||
        lv_port_claim(&c->ports, &m->client_proxy_port, err))
        return FL_EIO;
    snprintf(m->direct_url, sizeof m->direct_url, "http://127.0.0.1:%d", m->client_port);
    snprintf(m->client_url, sizeof m->client_url, "http://127.0.0.1:%d", m->client_proxy_port);
    snprintf(m->peer_url, sizeof m->peer_url, "http://127.0.0.1:%d", m->proxy_port);
    m->data_dir = lv_workdir_sub(wd, m->name, err);
    if (!m->data_dir)
        return FL_EIO;
    struct fl_buf b;
    fl_buf_init(&b);
    fl_buf_printf(&b, "%s/%s.log", wd->path, m->name);
    m->log_path = fl_strdup(fl_buf_cstr(&b));
    fl_buf_close(&b);
    if (lv_proxy_start(&c->proxy[i], &c->net, i, m->proxy_port, m->peer_port, LV_EXTERNAL,
                       lv_identify_etcd_peer, &c->ids, err))
        return FL_EIO;
    c->proxy[i].identify_port = member_of_port;
    c->proxy[i].identify_port_arg = c;
    return lv_proxy_start(&c->client_proxy[i], &c->net, i, m->client_proxy_port, m->client_port,
                          LV_EXTERNAL, NULL, NULL, err);
}

static void member_argv(struct lv_etcd_cluster *c, int i, const char *bin, const char *cluster,
                        const char *state, const char *const *extra)
{
    struct lv_etcd_member *m = &c->m[i];
    char listen_peer[64], data[4200];
    snprintf(listen_peer, sizeof listen_peer, "http://127.0.0.1:%d", m->peer_port);
    snprintf(data, sizeof data, "%s/data", m->data_dir);
    /* clang-format off */
    const char *base[] = {
        bin, "--name", m->name, "--data-dir", data,
        "--listen-client-urls", m->direct_url, "--advertise-client-urls", m->client_url,
        "--listen-peer-urls", listen_peer, "--initial-advertise-peer-urls", m->peer_url,
        "--initial-cluster", cluster, "--initial-cluster-token", c->token,
        "--initial-cluster-state", state,
        "--heartbeat-interval", "50", "--election-timeout", "500", "--logger", "zap"};
    /* clang-format on */
    /* extra flags come last: etcd takes the last of a repeated flag */
    const char *argv[FL_ARRAY_LEN(base) + LV_ETCD_EXTRA_MAX + 1];
    size_t n = 0;
    for (size_t k = 0; k < FL_ARRAY_LEN(base); k++)
        argv[n++] = base[k];
    for (size_t k = 0; extra && extra[k] && k < LV_ETCD_EXTRA_MAX; k++)
        argv[n++] = extra[k];
    argv[n] = NULL;
    lv_proc_init(&m->proc, c->loop, argv, m->log_path);
}

/* Every member answers Status and names the same leader: its index, else -1. */
int lv_etcd_cluster_leader(struct lv_etcd_cluster *c, int64_t timeout_ms)
{
    uint64_t leader = 0;
    for (int i = 0; i < c->n; i++) {
        struct lv_etcd_status st;
        if (lv_etcd_status(&c->client, c->m[i].direct_url, timeout_ms, &st, NULL) || !st.leader)
            return -1;
        if (leader && st.leader != leader)
            return -1;
        leader = st.leader;
        c->m[i].id = st.member_id;
    }
    for (int i = 0; i < c->n; i++)
        if (c->m[i].id == leader)
            return i;
    return -1;
}

static void sleep_loop(uv_loop_t *loop, int64_t ms);

int lv_etcd_cluster_wait_leader(struct lv_etcd_cluster *c, int64_t wait_ms)
{
    int64_t t0 = (int64_t)uv_now(c->loop);
    int l;
    while ((l = lv_etcd_cluster_leader(c, 1000)) < 0 && (int64_t)uv_now(c->loop) - t0 < wait_ms)
        sleep_loop(c->loop, 50);
    return l;
}

int lv_etcd_cluster_start(struct lv_etcd_cluster *c, uv_loop_t *loop, struct lv_workdir *wd, int n,
                          const char *etcd_bin, int64_t timeout_ms, struct fl_buf *err)
{
    return lv_etcd_cluster_start_args(c, loop, wd, n, etcd_bin, NULL, timeout_ms, err);
}

int lv_etcd_cluster_start_args(struct lv_etcd_cluster *c, uv_loop_t *loop, struct lv_workdir *wd,
                               int n, const char *etcd_bin, const char *const *extra,
                               int64_t timeout_ms, struct fl_buf *err)
{
    static unsigned counter;
    FL_ASSERT(n >= 1 && n <= LV_NODES_MAX);
    /* The proxies write with write(2) (libuv): a write on a connection a member just
     * closed (killed, stopped after its removal, shut down at the end) is an error of
     * that write (EPIPE), not the end of the process. A --target etcd run died of it
     * (exit 141) under load, with two runs at once. */
    signal(SIGPIPE, SIG_IGN);
    memset(c, 0, sizeof *c);
    c->loop = loop;
    c->n = n;
    lv_net_init(&c->net, loop, 1);
    lv_ports_init(&c->ports);
    lv_etcd_init(&c->client, loop);
    snprintf(c->token, sizeof c->token, "faultline-%d-%u", (int)getpid(), counter++);
    struct fl_buf cluster;
    fl_buf_init(&cluster);
    int rc = FL_OK;
    for (int i = 0; i < n && !rc; i++) {
        rc = member_setup(c, i, wd, err);
        if (!rc)
            fl_buf_printf(&cluster, "%s%s=%s", i ? "," : "", c->m[i].name, c->m[i].peer_url);
    }
    for (int i = 0; i < n && !rc; i++) {
        member_argv(c, i, etcd_bin, fl_buf_cstr(&cluster), "new", extra);
        rc = lv_proc_start(&c->m[i].proc, err);
    }
    fl_buf_close(&cluster);
    if (rc)
        return rc;
    int64_t t0 = (int64_t)uv_now(loop);
    while (lv_etcd_cluster_leader(c, 1000) < 0) {
        for (int i = 0; i < n; i++) {
            if (!c->m[i].proc.running) {
                fl_buf_printf(err, "etcd member %s exited (status %lld); see %s", c->m[i].name,
                              (long long)c->m[i].proc.exit_status, c->m[i].log_path);
                return FL_EIO;
            }
        }
        if ((int64_t)uv_now(loop) - t0 > timeout_ms) {
            fl_buf_printf(err, "etcd cluster of %d: no agreed leader in %lld ms", n,
                          (long long)timeout_ms);
            return FL_ETIMEOUT;
        }
        sleep_loop(loop, 50);
    }
    c->ids.n = n;
    for (int i = 0; i < n; i++) {
        c->ids.id[i] = c->m[i].id;
        lv_proxy_reset_unidentified(&c->proxy[i]); /* reconnect: now attributed */
    }
    return FL_OK;
}

int lv_etcd_cluster_member_prepare(struct lv_etcd_cluster *c, struct lv_workdir *wd, int *idx,
                                   struct fl_buf *err)
{
    if (c->n >= LV_NODES_MAX) {
        fl_buf_printf(err, "at most %d etcd members", LV_NODES_MAX);
        return FL_EFULL;
    }
    *idx = c->n++;
    return member_setup(c, *idx, wd, err) ? FL_EIO : FL_OK;
}

int lv_etcd_cluster_member_start(struct lv_etcd_cluster *c, int idx, const char *etcd_bin,
                                 uint64_t id, const char *initial_cluster, const char *const *extra,
                                 struct fl_buf *err)
{
    FL_ASSERT(idx >= 0 && idx < c->n && !c->m[idx].proc.argv);
    c->m[idx].id = id;
    c->ids.id[idx] = id;
    c->ids.n = FL_MAX(c->ids.n, idx + 1);
    member_argv(c, idx, etcd_bin, initial_cluster, "existing", extra);
    return lv_proc_start(&c->m[idx].proc, err);
}

void lv_etcd_cluster_member_unprepare(struct lv_etcd_cluster *c, int idx)
{
    FL_ASSERT(idx == c->n - 1 && !c->m[idx].proc.argv);
    struct lv_etcd_member *m = &c->m[idx];
    if (c->proxy[idx].net)
        lv_proxy_close(&c->proxy[idx]);
    if (c->client_proxy[idx].net)
        lv_proxy_close(&c->client_proxy[idx]);
    free(m->data_dir);
    free(m->log_path);
    memset(m, 0, sizeof *m);
    c->n--;
}

static bool never(void *arg)
{
    (void)arg;
    return false;
}

static void sleep_loop(uv_loop_t *loop, int64_t ms)
{
    lv_run_until(loop, never, NULL, ms);
}

void lv_etcd_cluster_isolate(struct lv_etcd_cluster *c, int i, bool on)
{
    for (int j = 0; j < c->n; j++)
        if (j != i)
            lv_net_cut(&c->net, i, j, true, on);
    lv_net_update(&c->net);
}

void lv_etcd_cluster_close(struct lv_etcd_cluster *c)
{
    /* The client first: killing a member runs the loop until it exits, and a call still
     * in flight would answer then, into a caller that is closing (and reading paths
     * freed for the members closed before). */
    lv_etcd_close(&c->client);
    for (int i = 0; i < c->n; i++) {
        struct lv_etcd_member *m = &c->m[i];
        lv_etcd_wal_fault_off(c, i);
        lv_proc_close(&m->proc);
        if (c->proxy[i].net)
            lv_proxy_close(&c->proxy[i]);
        if (c->client_proxy[i].net)
            lv_proxy_close(&c->client_proxy[i]);
        free(m->data_dir);
        free(m->log_path);
        m->data_dir = m->log_path = NULL;
    }
    lv_ports_close(&c->ports);
    memset(c, 0, sizeof *c);
}

char *lv_etcdctl_find(const char *etcd_bin)
{
    const char *env = getenv("FL_ETCDCTL");
    if (env && *env)
        return access(env, X_OK) == 0 ? fl_strdup(env) : NULL;
    const char *slash = etcd_bin ? strrchr(etcd_bin, '/') : NULL;
    if (slash) {
        struct fl_buf b;
        fl_buf_init(&b);
        fl_buf_printf(&b, "%.*setcdctl", (int)(slash - etcd_bin + 1), etcd_bin);
        char *found = access(fl_buf_cstr(&b), X_OK) == 0 ? fl_strdup(fl_buf_cstr(&b)) : NULL;
        fl_buf_close(&b);
        if (found)
            return found;
    }
    return fl_strdup("etcdctl"); /* lv_proc finds it on PATH, or the run reports exit 127 */
}

int lv_etcdctl_run(uv_loop_t *loop, const char *const *argv, const char *log_path,
                   int64_t timeout_ms, struct fl_buf *out)
{
    FILE *f = fopen(log_path, "w"); /* lv_proc appends: start from an empty file */
    if (f)
        fclose(f);
    struct lv_proc p;
    struct fl_buf err;
    fl_buf_init(&err);
    lv_proc_init(&p, loop, argv, log_path);
    int rc = lv_proc_start(&p, &err);
    if (!rc && lv_proc_wait_exit(&p, timeout_ms)) {
        fl_buf_printf(out, "%s: no exit in %lld ms", argv[0], (long long)timeout_ms);
        rc = -1;
    } else if (!rc) {
        f = fopen(log_path, "r");
        char chunk[4096];
        size_t n;
        while (f && (n = fread(chunk, 1, sizeof chunk, f)) > 0)
            fl_buf_append(out, chunk, n);
        if (f)
            fclose(f);
        rc = p.term_signal ? -1 : (int)p.exit_status;
    } else {
        fl_buf_printf(out, "%s", fl_buf_cstr(&err));
        rc = -1;
    }
    lv_proc_close(&p);
    fl_buf_close(&err);
    return rc;
}

/* ---- WAL faults: strace's syscall injection on a member ------------------------------ */

/* Whether every thread of pid has a tracer (strace -f attached to all of them). */
struct traced_wait {
    int pid;
    const struct lv_proc *tracer;
};

static bool all_threads_traced(void *arg)
{
    const struct traced_wait *t = arg;
    if (!t->tracer->running)
        return true; /* strace gave up: the caller reports it */
    char dir[64];
    snprintf(dir, sizeof dir, "/proc/%d/task", t->pid);
    DIR *d = opendir(dir);
    if (!d)
        return true; /* the member is gone */
    bool all = true;
    struct dirent *e;
    while (all && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[512], line[256];
        snprintf(path, sizeof path, "%s/%s/status", dir, e->d_name);
        FILE *f = fopen(path, "r"); /* NULL: the thread exited meanwhile */
        while (f && fgets(line, sizeof line, f))
            if (!strncmp(line, "TracerPid:", 10)) {
                all = atoi(line + 10) != 0;
                break;
            }
        if (f)
            fclose(f);
    }
    closedir(d);
    return all;
}

struct wal_wait {
    const char *dir;
    const struct lv_proc *member;
};

/* Whether the member's WAL directory has a segment (or the member is gone). */
static bool wal_exists(void *arg)
{
    const struct wal_wait *w = arg;
    if (!w->member->running)
        return true;
    DIR *d = opendir(w->dir);
    bool found = false;
    struct dirent *e;
    while (d && !found && (e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        found = n > 4 && !strcmp(e->d_name + n - 4, ".wal");
    }
    if (d)
        closedir(d);
    return found;
}

int lv_etcd_wal_fault_on(struct lv_etcd_cluster *c, int idx, const char *strace, int delay_ms,
                         enum lv_wal_crash crash, struct fl_buf *err)
{
    struct lv_etcd_member *m = &c->m[idx];
    lv_etcd_wal_fault_off(c, idx);
    if (!m->proc.running || m->proc.pid <= 0) {
        fl_buf_printf(err, "member %s is not running", m->name);
        return FL_EIO;
    }
    /* The WAL's files as they are now: its segments and the pre-allocated next one
     * (N.tmp, renamed into a segment when the WAL is cut, which keeps its fd). */
    struct fl_buf dir;
    fl_buf_init(&dir);
    const char *data = NULL; /* the --data-dir it runs on (a restore gives it a new one) */
    for (size_t i = 0; m->proc.argv[i] && m->proc.argv[i + 1]; i++)
        if (!strcmp(m->proc.argv[i], "--data-dir"))
            data = m->proc.argv[i + 1];
    fl_buf_printf(&dir, "%s/member/wal", data ? data : m->data_dir);
    /* a member that has just joined writes its WAL once it has the cluster's state */
    struct wal_wait w = {fl_buf_cstr(&dir), &m->proc};
    lv_run_until(c->loop, wal_exists, &w, 10000);
    DIR *d = opendir(fl_buf_cstr(&dir));
    if (!d) {
        fl_buf_printf(err, "%s: %s", fl_buf_cstr(&dir), strerror(errno));
        fl_buf_close(&dir);
        return FL_EIO;
    }
    const char *call = crash == LV_WAL_CRASH_AT_WRITE ? "write" : "fdatasync";
    char pid[32], trace[64], inject[96];
    snprintf(pid, sizeof pid, "%d", m->proc.pid);
    snprintf(trace, sizeof trace, "trace=%s", call);
    if (crash != LV_WAL_CRASH_NONE)
        snprintf(inject, sizeof inject, "inject=%s:signal=SIGKILL", call);
    else
        snprintf(inject, sizeof inject, "inject=%s:delay_enter=%lld", call,
                 (long long)delay_ms * 1000);
    size_t cap = 16, argc = 0;
    char **argv = fl_calloc(cap, sizeof *argv);
    const char *fixed[] = {strace,      "-p", pid,   "-f", "-qq", "-o",
                           "/dev/null", "-e", trace, "-e", inject};
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++)
        argv[argc++] = fl_strdup(fixed[i]);
    size_t files = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        if (!(n > 4 && (!strcmp(e->d_name + n - 4, ".wal") || !strcmp(e->d_name + n - 4, ".tmp"))))
            continue;
        if (argc + 3 >= cap) {
            cap *= 2;
            argv = fl_realloc(argv, cap * sizeof *argv);
        }
        argv[argc++] = fl_strdup("-P");
        struct fl_buf f;
        fl_buf_init(&f);
        fl_buf_printf(&f, "%s/%s", fl_buf_cstr(&dir), e->d_name);
        argv[argc++] = fl_strdup(fl_buf_cstr(&f));
        fl_buf_close(&f);
        files++;
    }
    closedir(d);
    argv[argc] = NULL;
    int rc = FL_OK;
    if (files == 0) {
        fl_buf_printf(err, "%s: no WAL file", fl_buf_cstr(&dir));
        rc = FL_EIO;
    } else {
        struct fl_buf log;
        fl_buf_init(&log);
        fl_buf_printf(&log, "%s.strace", m->log_path);
        lv_proc_init(&m->tracer, c->loop, (const char *const *)argv, fl_buf_cstr(&log));
        m->tracer_init = true;
        fl_buf_close(&log);
        rc = lv_proc_start(&m->tracer, err);
        struct traced_wait t = {m->proc.pid, &m->tracer};
        if (!rc && (!lv_run_until(c->loop, all_threads_traced, &t, 5000) || !m->tracer.running)) {
            fl_buf_printf(err, "strace did not attach to %s (pid %d) within 5 s: see %s", m->name,
                          m->proc.pid, m->tracer.log_path);
            rc = FL_EIO;
        }
        if (rc)
            lv_etcd_wal_fault_off(c, idx);
    }
    for (size_t i = 0; i < argc; i++)
        free(argv[i]);
    free(argv);
    fl_buf_close(&dir);
    return rc;
}

void lv_etcd_wal_fault_off(struct lv_etcd_cluster *c, int idx)
{
    struct lv_etcd_member *m = &c->m[idx];
    if (!m->tracer_init)
        return;
    /* SIGKILL: the kernel detaches the tracees (threads held in a delayed call go on) */
    lv_proc_close(&m->tracer);
    m->tracer_init = false;
}
