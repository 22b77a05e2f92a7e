/*
 * env_uv.c: env.h over libuv (see env_uv.h). A timer is a
 * heap uv_timer_t record named by env_timer.id, closed and freed when it fires or is
 * stopped; an fsync opens the file, runs uv_fs_fsync on the loop's thread pool and
 * reports on the loop. Files are plain POSIX files under the data directory; a name
 * "wal/0001.wal" is the file wal/0001.wal (its directory made on first write).
 */
#include "nodes/env/env_uv.h"

#include "harness/common/rng.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct eu_sock;
struct eu_listen;
struct eu_map;

struct env_uv {
    struct fl_env env; /* first */
    uv_loop_t *loop;
    char *dir;
    struct fl_rng rng;
    int64_t rate_ppm;
    int64_t base_hr_ns, base_local_ns; /* local = base_local + (hr - base_hr) * rate */
    struct fl_buf view;                /* env_file_view's buffer */
    int self;                          /* this process's address (env_uv_map) */
    int fsyncs;                        /* fsyncs on the thread pool (env_uv_fsyncs) */
    struct eu_fp {                     /* env_uv_failpoint_set */
        enum env_fault action;         /* ENV_FAULT_NONE: off */
        int64_t delay_ns;
        uint32_t p_ppm, count, skip, hits, fired;
    } fps[FLT_POINT_COUNT];
    uint32_t incarnation; /* env_uv_count_start */
    struct eu_sock *socks;
    env_sock next_sock;
    struct eu_listen *listens;
    struct eu_map *map;
    size_t n_map, cap_map;
};

static struct env_uv *eu_of(struct fl_env *e)
{
    return (struct env_uv *)e;
}

static int64_t eu_now_ns(struct fl_env *e)
{
    (void)e;
    return (int64_t)uv_hrtime();
}

static int64_t eu_local_ns(struct fl_env *e)
{
    struct env_uv *u = eu_of(e);
    int64_t d = (int64_t)uv_hrtime() - u->base_hr_ns;
    return u->base_local_ns + (int64_t)((__int128)d * u->rate_ppm / 1000000);
}

void env_uv_set_rate(struct fl_env *e, int64_t rate_ppm)
{
    struct env_uv *u = eu_of(e);
    FL_ASSERT(rate_ppm >= 1000 && rate_ppm <= 100000000);
    u->base_local_ns = eu_local_ns(e);
    u->base_hr_ns = (int64_t)uv_hrtime();
    u->rate_ppm = rate_ppm;
}

/* ---------------------------------------------------------------- timers ------ */

struct eu_timer {
    uv_timer_t h;
    struct env_timer *t; /* NULL once stopped */
    uint64_t due_hr;     /* uv_hrtime() at or after which it may fire */
};

static void eu_timer_closed(uv_handle_t *h)
{
    free(h->data);
}

static void eu_timer_fire(uv_timer_t *h)
{
    struct eu_timer *r = h->data;
    struct env_timer *t = r->t;
    /* libuv's loop time is the coarse monotonic clock (a jiffy behind at most), ours the
     * precise one: a timer libuv fires a few ms early by ours waits for the rest, so a
     * delay never ends before it has passed on the environment's clock */
    uint64_t now = uv_hrtime();
    if (t != NULL && now < r->due_hr) {
        uv_timer_start(&r->h, eu_timer_fire, (r->due_hr - now + 999999) / 1000000, 0);
        return;
    }
    uv_close((uv_handle_t *)&r->h, eu_timer_closed);
    if (t == NULL)
        return;
    FL_ASSERT(t->id == (uint64_t)(uintptr_t)r);
    t->id = 0;
    t->fn(t->ctx);
}

static bool eu_timer_start(struct fl_env *e, struct env_timer *t, int64_t delay_ns)
{
    struct env_uv *u = eu_of(e);
    struct eu_timer *r = fl_calloc(1, sizeof *r);
    r->t = t;
    r->h.data = r;
    uv_timer_init(u->loop, &r->h);
    uv_update_time(u->loop); /* the delay counts from now, not from the loop's last tick */
    /* local delay -> real delay, rounded up to whole milliseconds (libuv's unit) */
    int64_t real_ns = (int64_t)((__int128)delay_ns * 1000000 / u->rate_ppm);
    r->due_hr = uv_hrtime() + (uint64_t)FL_MAX(real_ns, 0);
    uv_timer_start(&r->h, eu_timer_fire, (uint64_t)((real_ns + FL_MS - 1) / FL_MS), 0);
    t->id = (uint64_t)(uintptr_t)r;
    return true;
}

static void eu_timer_stop(struct fl_env *e, struct env_timer *t)
{
    (void)e;
    struct eu_timer *r = (struct eu_timer *)(uintptr_t)t->id;
    r->t = NULL;
    uv_timer_stop(&r->h);
    uv_close((uv_handle_t *)&r->h, eu_timer_closed);
}

/* ---------------------------------------------------------------- process ----- */

static uint64_t eu_rand_u64(struct fl_env *e)
{
    return fl_rng_u64(&eu_of(e)->rng);
}

static uint32_t eu_incarnation(struct fl_env *e)
{
    return eu_of(e)->incarnation;
}

static void eu_crash(struct fl_env *e)
{
    (void)e;
    fflush(NULL);
    _exit(70);
}

static bool eu_alive(struct fl_env *e)
{
    (void)e;
    return true;
}

/* As the simulator's flt_check decides for one process: the first skip hits pass,
 * then each fires with probability p_ppm (the environment's random stream) until
 * count fired. A crash ends the process here (as a panic: _exit(70)). */
static enum env_fault eu_failpoint(struct fl_env *e, enum flt_point fp, struct env_fault_hit *hit)
{
    struct env_uv *u = eu_of(e);
    enum env_fault f = ENV_FAULT_NONE;
    struct eu_fp *x = (size_t)fp < FLT_POINT_COUNT ? &u->fps[fp] : NULL;
    if (x && x->action != ENV_FAULT_NONE && ++x->hits > x->skip &&
        (!x->count || x->fired < x->count) &&
        (!x->p_ppm || x->p_ppm >= 1000000 || fl_rng_u64(&u->rng) % 1000000 < x->p_ppm)) {
        x->fired++;
        f = x->action;
    }
    if (f == ENV_FAULT_CRASH)
        eu_crash(e);
    if (hit) {
        hit->action = f;
        hit->delay_ns = f == ENV_FAULT_DELAY ? x->delay_ns : 0;
    }
    return f;
}

void env_uv_failpoint_set(struct fl_env *e, enum flt_point fp, enum env_fault action,
                          int64_t delay_ns, uint32_t p_ppm, uint32_t count, uint32_t skip)
{
    if ((size_t)fp >= FLT_POINT_COUNT)
        return;
    eu_of(e)->fps[fp] = (struct eu_fp){action, delay_ns, p_ppm, count, skip, 0, 0};
}

/* ---------------------------------------------------------------- sockets ----- */
/* Loopback TCP. A frame is a 4-byte little-endian length and the bytes. Sockets are
 * records in a list, named by an increasing id (so a closed one is never found
 * again: FL_EDOWN); a record is freed when libuv has closed its handle. Frames sent
 * before the connection opens wait in the record and leave on open. */

struct eu_sock {
    uv_tcp_t h;
    uv_connect_t conn;
    struct env_uv *u;
    env_sock id;
    const struct env_sock_cb *cb;
    int peer;
    bool open, closed;
    int hello_port; /* accepted, waiting for the dialler's hello frame: on this port; 0 none */
    struct fl_buf in, pending;
    struct eu_sock *next;
};

struct eu_listen {
    uv_tcp_t h;
    struct env_uv *u;
    int port;
    env_accept_fn *fn;
    void *ctx;
    bool closed;
    struct eu_listen *next;
};

struct eu_map {
    int addr, port, tcp_port;
};

static struct eu_sock *eu_sock_find(struct env_uv *u, env_sock id)
{
    for (struct eu_sock *s = u->socks; s; s = s->next)
        if (s->id == id && !s->closed)
            return s;
    return NULL;
}

static int eu_map_get(struct env_uv *u, int addr, int port)
{
    for (size_t i = 0; i < u->n_map; i++)
        if (u->map[i].addr == addr && u->map[i].port == port)
            return u->map[i].tcp_port;
    return -1;
}

void env_uv_map(struct fl_env *e, int addr, int port, int tcp_port)
{
    struct env_uv *u = eu_of(e);
    for (size_t i = 0; i < u->n_map; i++) {
        if (u->map[i].addr == addr && u->map[i].port == port) {
            u->map[i].tcp_port = tcp_port;
            return;
        }
    }
    FL_GROW(u->map, u->cap_map, u->n_map + 1, 8);
    u->map[u->n_map++] = (struct eu_map){addr, port, tcp_port};
}

static void eu_sock_closed(uv_handle_t *h)
{
    struct eu_sock *s = h->data;
    struct env_uv *u = s->u; /* NULL: the environment was freed first */
    for (struct eu_sock **pp = u ? &u->socks : NULL; pp && *pp; pp = &(*pp)->next) {
        if (*pp == s) {
            *pp = s->next;
            break;
        }
    }
    fl_buf_close(&s->in);
    fl_buf_close(&s->pending);
    free(s);
}

/* Closes s without a callback to its owner. */
static void eu_sock_shut(struct eu_sock *s)
{
    if (s->closed)
        return;
    s->closed = true;
    s->open = false;
    uv_close((uv_handle_t *)&s->h, eu_sock_closed);
}

/* The connection broke or the peer closed it: the owner hears once. */
static void eu_sock_lost(struct eu_sock *s, int reason)
{
    if (s->closed)
        return;
    eu_sock_shut(s);
    if (s->cb && s->cb->on_close)
        s->cb->on_close(s->cb->ctx, s->id, reason);
}

static struct eu_sock *eu_sock_new(struct env_uv *u, int peer)
{
    struct eu_sock *s = fl_calloc(1, sizeof *s);
    s->u = u;
    s->id = ++u->next_sock;
    s->peer = peer;
    s->h.data = s;
    s->conn.data = s;
    fl_buf_init(&s->in);
    fl_buf_init(&s->pending);
    uv_tcp_init(u->loop, &s->h);
    uv_tcp_nodelay(&s->h, 1);
    s->next = u->socks;
    u->socks = s;
    return s;
}

static void eu_write_done(uv_write_t *w, int status)
{
    (void)status; /* a failed write shows up as a read error on the same socket */
    free(w);
}

/* Writes bytes already framed. */
static int eu_write_raw(struct eu_sock *s, const uint8_t *p, size_t n)
{
    uv_write_t *w = fl_malloc(sizeof *w + n);
    uint8_t *copy = (uint8_t *)(w + 1);
    memcpy(copy, p, n);
    uv_buf_t b = uv_buf_init((char *)copy, (unsigned int)n);
    if (uv_write(w, (uv_stream_t *)&s->h, &b, 1, eu_write_done) != 0) {
        free(w);
        return FL_EDOWN;
    }
    return FL_OK;
}

static void eu_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    (void)h;
    buf->base = fl_malloc(suggested);
    buf->len = suggested;
}

static void eu_hello_in(struct eu_sock *s, const uint8_t *p, size_t n);

static void eu_read(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf)
{
    struct eu_sock *s = st->data;
    if (nread < 0) {
        free(buf->base);
        eu_sock_lost(s, nread == UV_EOF ? ENV_CLOSE_PEER : ENV_CLOSE_RESET);
        return;
    }
    fl_buf_append(&s->in, buf->base, (size_t)nread);
    free(buf->base);
    size_t off = 0;
    while (!s->closed && s->in.len - off >= 4) {
        const uint8_t *h = s->in.data + off;
        size_t len = (size_t)h[0] | (size_t)h[1] << 8 | (size_t)h[2] << 16 | (size_t)h[3] << 24;
        if (s->in.len - off - 4 < len)
            break;
        off += 4 + len;
        if (s->hello_port)
            eu_hello_in(s, h + 4, len);
        else if (s->cb && s->cb->on_message)
            s->cb->on_message(s->cb->ctx, s->id, h + 4, len);
    }
    if (!s->closed) {
        memmove(s->in.data, s->in.data + off, s->in.len - off);
        s->in.len -= off;
    }
}

static void eu_connected(uv_connect_t *c, int status)
{
    struct eu_sock *s = c->data;
    if (s->closed)
        return;
    if (status < 0) {
        eu_sock_lost(s, ENV_CLOSE_REFUSED);
        return;
    }
    s->open = true;
    uv_read_start((uv_stream_t *)&s->h, eu_alloc, eu_read);
    if (s->pending.len && eu_write_raw(s, s->pending.data, s->pending.len) != FL_OK) {
        eu_sock_lost(s, ENV_CLOSE_RESET);
        return;
    }
    fl_buf_reset(&s->pending);
    if (s->cb && s->cb->on_open)
        s->cb->on_open(s->cb->ctx, s->id);
}

static void eu_listen_closed(uv_handle_t *h)
{
    free(h->data);
}

/* The hello frame: every connection this environment dials starts with one, naming
 * the dialler's address (TCP does not say which member dialled; a proxy in between
 * hides even the source port). "FLHI" and the address, 4 bytes little-endian. */
#define EU_HELLO_LEN ENV_UV_HELLO_LEN

static void eu_hello_put(struct fl_buf *b, int self)
{
    uint32_t a = (uint32_t)self;
    uint8_t f[4 + EU_HELLO_LEN] = {EU_HELLO_LEN};
    memcpy(f + 4, ENV_UV_HELLO_MAGIC, 4);
    for (int i = 0; i < 4; i++)
        f[8 + i] = (uint8_t)(a >> (8 * i));
    fl_buf_append(b, f, sizeof f);
}

/* The first frame of an accepted connection: the acceptor hears of the connection
 * now, with the dialler's address. Anything else than a hello, or a listener gone
 * meanwhile, closes it. */
static void eu_hello_in(struct eu_sock *s, const uint8_t *p, size_t n)
{
    int port = s->hello_port;
    s->hello_port = 0;
    struct eu_listen *l = s->u ? s->u->listens : NULL;
    while (l && (l->closed || l->port != port))
        l = l->next;
    if (!l || n != EU_HELLO_LEN || memcmp(p, ENV_UV_HELLO_MAGIC, 4) != 0) {
        eu_sock_shut(s);
        return;
    }
    s->peer =
        (int)((uint32_t)p[4] | (uint32_t)p[5] << 8 | (uint32_t)p[6] << 16 | (uint32_t)p[7] << 24);
    l->fn(l->ctx, s->id, s->peer);
}

static void eu_on_connection(uv_stream_t *server, int status)
{
    struct eu_listen *l = server->data;
    if (status < 0 || l->closed)
        return;
    struct eu_sock *s = eu_sock_new(l->u, -1); /* known once its hello arrives */
    if (uv_accept(server, (uv_stream_t *)&s->h) != 0) {
        eu_sock_shut(s);
        return;
    }
    s->open = true;
    s->hello_port = l->port;
    uv_read_start((uv_stream_t *)&s->h, eu_alloc, eu_read);
}

static int eu_listen(struct fl_env *e, int port, env_accept_fn *fn, void *ctx)
{
    struct env_uv *u = eu_of(e);
    for (struct eu_listen *l = u->listens; l; l = l->next)
        if (l->port == port && !l->closed)
            return FL_EEXIST;
    int tcp_port = eu_map_get(u, u->self, port);
    if (tcp_port < 0)
        return FL_EINVAL;
    struct eu_listen *l = fl_calloc(1, sizeof *l);
    l->u = u;
    l->port = port;
    l->fn = fn;
    l->ctx = ctx;
    l->h.data = l;
    uv_tcp_init(u->loop, &l->h);
    struct sockaddr_in a;
    uv_ip4_addr("127.0.0.1", tcp_port, &a);
    if (uv_tcp_bind(&l->h, (const struct sockaddr *)&a, 0) != 0 ||
        uv_listen((uv_stream_t *)&l->h, 128, eu_on_connection) != 0) {
        uv_close((uv_handle_t *)&l->h, eu_listen_closed);
        return FL_EIO;
    }
    l->next = u->listens;
    u->listens = l;
    return FL_OK;
}

static int eu_unlisten(struct fl_env *e, int port)
{
    struct env_uv *u = eu_of(e);
    for (struct eu_listen **pp = &u->listens; *pp; pp = &(*pp)->next) {
        struct eu_listen *l = *pp;
        if (l->port == port) {
            *pp = l->next;
            l->closed = true;
            uv_close((uv_handle_t *)&l->h, eu_listen_closed);
            return FL_OK;
        }
    }
    return FL_ENOENT;
}

static env_sock eu_connect(struct fl_env *e, int peer, int port, const struct env_sock_cb *cb)
{
    struct env_uv *u = eu_of(e);
    int tcp_port = eu_map_get(u, peer, port);
    struct sockaddr_in a;
    if (tcp_port < 0 || uv_ip4_addr("127.0.0.1", tcp_port, &a) != 0)
        return 0; /* an address nobody mapped: as for a dead process */
    struct eu_sock *s = eu_sock_new(u, peer);
    s->cb = cb;
    eu_hello_put(&s->pending, u->self);
    if (uv_tcp_connect(&s->conn, &s->h, (const struct sockaddr *)&a, eu_connected) != 0) {
        eu_sock_shut(s);
        return 0;
    }
    return s->id; /* refused or open: later, through cb */
}

static int eu_sock_bind(struct fl_env *e, env_sock id, const struct env_sock_cb *cb)
{
    struct eu_sock *s = eu_sock_find(eu_of(e), id);
    if (!s)
        return FL_EDOWN;
    s->cb = cb;
    return FL_OK;
}

static int eu_send(struct fl_env *e, env_sock id, const void *p, size_t n)
{
    struct eu_sock *s = eu_sock_find(eu_of(e), id);
    if (!s || n > UINT32_MAX)
        return FL_EDOWN;
    uint8_t h[4] = {(uint8_t)n, (uint8_t)(n >> 8), (uint8_t)(n >> 16), (uint8_t)(n >> 24)};
    if (!s->open) {
        fl_buf_append(&s->pending, h, 4);
        fl_buf_append(&s->pending, p, n);
        return FL_OK;
    }
    struct fl_buf b;
    fl_buf_init(&b);
    fl_buf_append(&b, h, 4);
    fl_buf_append(&b, p, n);
    int rc = eu_write_raw(s, b.data, b.len);
    fl_buf_close(&b);
    return rc;
}

static void eu_close(struct fl_env *e, env_sock id)
{
    struct eu_sock *s = eu_sock_find(eu_of(e), id);
    if (s)
        eu_sock_shut(s);
}

static bool eu_sock_open(struct fl_env *e, env_sock id)
{
    struct eu_sock *s = eu_sock_find(eu_of(e), id);
    return s && s->open;
}

static int eu_sock_peer(struct fl_env *e, env_sock id)
{
    struct eu_sock *s = eu_sock_find(eu_of(e), id);
    return s ? s->peer : -1;
}

/* ---------------------------------------------------------------- files ------- */

/* dir/name into out; false when it does not fit. */
static bool eu_path(struct env_uv *u, const char *name, char *out, size_t cap)
{
    int n = snprintf(out, cap, "%s/%s", u->dir, name);
    return n > 0 && (size_t)n < cap;
}

/* Makes the directories of path (not its last component). */
static int eu_mkdirs(char *path)
{
    for (char *s = strchr(path + 1, '/'); s; s = strchr(s + 1, '/')) {
        *s = 0;
        int rc = mkdir(path, 0755);
        *s = '/';
        if (rc != 0 && errno != EEXIST)
            return FL_EIO;
    }
    return FL_OK;
}

static int eu_open(struct env_uv *u, const char *name, int flags, int *fd)
{
    char path[4096];
    if (!eu_path(u, name, path, sizeof path))
        return FL_EINVAL;
    if ((flags & O_CREAT) && eu_mkdirs(path) != FL_OK)
        return FL_EIO;
    *fd = open(path, flags | O_CLOEXEC, 0644);
    if (*fd < 0)
        return errno == ENOENT ? FL_ENOENT : FL_EIO;
    return FL_OK;
}

static int eu_write_all(int fd, const void *p, size_t n, int64_t off)
{
    const uint8_t *b = p;
    while (n > 0) {
        ssize_t w = off >= 0 ? pwrite(fd, b, n, (off_t)off) : write(fd, b, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return FL_EIO;
        b += w;
        n -= (size_t)w;
        if (off >= 0)
            off += w;
    }
    return FL_OK;
}

static int eu_file_write(struct fl_env *e, const char *name, uint64_t off, const void *p, size_t n)
{
    int fd, rc = eu_open(eu_of(e), name, O_WRONLY | O_CREAT, &fd);
    if (rc != FL_OK)
        return rc;
    rc = eu_write_all(fd, p, n, (int64_t)off);
    close(fd);
    return rc;
}

static int eu_file_append(struct fl_env *e, const char *name, const void *p, size_t n)
{
    int fd, rc = eu_open(eu_of(e), name, O_WRONLY | O_CREAT | O_APPEND, &fd);
    if (rc != FL_OK)
        return rc;
    rc = eu_write_all(fd, p, n, -1);
    close(fd);
    return rc;
}

static int eu_file_put(struct fl_env *e, const char *name, struct fl_buf *content)
{
    int fd, rc = eu_open(eu_of(e), name, O_WRONLY | O_CREAT | O_TRUNC, &fd);
    if (rc == FL_OK) {
        rc = eu_write_all(fd, content->data, content->len, 0);
        close(fd);
    }
    fl_buf_close(content);
    return rc;
}

static int eu_file_view(struct fl_env *e, const char *name, const uint8_t **p, size_t *len)
{
    struct env_uv *u = eu_of(e);
    int fd, rc = eu_open(u, name, O_RDONLY, &fd);
    if (rc != FL_OK)
        return rc;
    fl_buf_reset(&u->view);
    uint8_t chunk[65536];
    for (;;) {
        ssize_t r = read(fd, chunk, sizeof chunk);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            close(fd);
            return FL_EIO;
        }
        if (r == 0)
            break;
        fl_buf_append(&u->view, chunk, (size_t)r);
    }
    close(fd);
    fl_buf_reserve(&u->view, 1); /* a valid pointer even for an empty file */
    *p = u->view.data;
    *len = u->view.len;
    return FL_OK;
}

static int eu_file_truncate(struct fl_env *e, const char *name, uint64_t len)
{
    char path[4096];
    if (!eu_path(eu_of(e), name, path, sizeof path))
        return FL_EINVAL;
    if (truncate(path, (off_t)len) != 0)
        return errno == ENOENT ? FL_ENOENT : FL_EIO;
    return FL_OK;
}

static int eu_file_rename(struct fl_env *e, const char *from, const char *to)
{
    char a[4096], b[4096];
    if (!eu_path(eu_of(e), from, a, sizeof a) || !eu_path(eu_of(e), to, b, sizeof b))
        return FL_EINVAL;
    if (eu_mkdirs(b) != FL_OK)
        return FL_EIO;
    if (rename(a, b) != 0)
        return errno == ENOENT ? FL_ENOENT : FL_EIO;
    return FL_OK;
}

static int eu_file_remove(struct fl_env *e, const char *name)
{
    char path[4096];
    if (!eu_path(eu_of(e), name, path, sizeof path))
        return FL_EINVAL;
    if (unlink(path) != 0)
        return errno == ENOENT ? FL_ENOENT : FL_EIO;
    return FL_OK;
}

static int eu_name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The files of one directory level: prefix "wal/" lists dir/wal; "" lists dir. */
static int eu_file_list(struct fl_env *e, const char *prefix, env_list_fn *fn, void *ctx)
{
    struct env_uv *u = eu_of(e);
    const char *slash = strrchr(prefix, '/');
    size_t dlen = slash ? (size_t)(slash - prefix) : 0;
    char path[4096];
    int n = snprintf(path, sizeof path, "%s/%.*s", u->dir, (int)dlen, prefix);
    if (n <= 0 || (size_t)n >= sizeof path)
        return FL_EINVAL;
    DIR *d = opendir(path);
    if (!d)
        return 0;
    char **names = NULL;
    size_t cnt = 0, cap = 0;
    for (struct dirent *de; (de = readdir(d)) != NULL;) {
        char full[4096];
        int m =
            snprintf(full, sizeof full, "%.*s%s%s", (int)dlen, prefix, dlen ? "/" : "", de->d_name);
        if (m <= 0 || (size_t)m >= sizeof full || strncmp(full, prefix, strlen(prefix)) != 0)
            continue;
        char fpath[4096];
        struct stat st;
        if (!eu_path(u, full, fpath, sizeof fpath) || stat(fpath, &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        FL_GROW(names, cap, cnt + 1, 16);
        names[cnt++] = fl_strdup(full);
    }
    closedir(d);
    if (cnt > 1) /* qsort(NULL, 0, ...) is undefined */
        qsort(names, cnt, sizeof *names, eu_name_cmp);
    for (size_t i = 0; i < cnt; i++) {
        char fpath[4096];
        struct stat st;
        uint64_t size = 0;
        if (eu_path(u, names[i], fpath, sizeof fpath) && stat(fpath, &st) == 0)
            size = (uint64_t)st.st_size;
        fn(names[i], size, ctx);
        free(names[i]);
    }
    free(names);
    return (int)cnt;
}

struct eu_fsync {
    uv_fs_t req;
    struct env_uv *u;
    int fd;
    env_fsync_fn *cb;
    void *ctx;
};

static void eu_fsync_done(uv_fs_t *req)
{
    struct eu_fsync *r = req->data;
    int err = req->result < 0 ? FL_EIO : FL_OK;
    uv_fs_req_cleanup(req);
    close(r->fd);
    r->u->fsyncs--;
    r->cb(&r->u->env, r->ctx, err);
    free(r);
}

static int eu_file_fsync(struct fl_env *e, const char *name, env_fsync_fn *cb, void *ctx)
{
    struct env_uv *u = eu_of(e);
    int fd, rc = eu_open(u, name, O_RDONLY, &fd);
    if (rc != FL_OK)
        return rc == FL_ENOENT ? FL_ENOENT : FL_EIO;
    struct eu_fsync *r = fl_calloc(1, sizeof *r);
    r->req.data = r;
    r->u = u;
    r->fd = fd;
    r->cb = cb;
    r->ctx = ctx;
    if (uv_fs_fsync(u->loop, &r->req, fd, eu_fsync_done) != 0) {
        close(fd);
        free(r);
        return FL_EIO;
    }
    u->fsyncs++;
    return FL_OK;
}

static void eu_wipe_fn(const char *name, uint64_t size, void *ctx)
{
    (void)size;
    eu_file_remove(ctx, name);
}

static void eu_files_wipe(struct fl_env *e)
{
    /* the two levels the member uses: the top and its wal/ and snap/ directories */
    eu_file_list(e, "", eu_wipe_fn, e);
    eu_file_list(e, "wal/", eu_wipe_fn, e);
    eu_file_list(e, "snap/", eu_wipe_fn, e);
}

/* ---------------------------------------------------------------- lifecycle --- */

static const struct env_ops eu_ops = {
    .now_ns = eu_now_ns,
    .local_ns = eu_local_ns,
    .timer_start = eu_timer_start,
    .timer_stop = eu_timer_stop,
    .rand_u64 = eu_rand_u64,
    .incarnation = eu_incarnation,
    .crash = eu_crash,
    .alive = eu_alive,
    .failpoint = eu_failpoint,
    .listen = eu_listen,
    .unlisten = eu_unlisten,
    .connect = eu_connect,
    .sock_bind = eu_sock_bind,
    .send = eu_send,
    .close = eu_close,
    .sock_open = eu_sock_open,
    .sock_peer = eu_sock_peer,
    .file_write = eu_file_write,
    .file_append = eu_file_append,
    .file_put = eu_file_put,
    .file_view = eu_file_view,
    .file_truncate = eu_file_truncate,
    .file_rename = eu_file_rename,
    .file_remove = eu_file_remove,
    .file_list = eu_file_list,
    .file_fsync = eu_file_fsync,
    .files_wipe = eu_files_wipe,
};

struct fl_env *env_uv_new(uv_loop_t *loop, int self, const char *dir, uint64_t seed,
                          const char **err)
{
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        *err = "env_uv: cannot make the data directory";
        return NULL;
    }
    struct env_uv *u = fl_calloc(1, sizeof *u);
    u->env.ops = &eu_ops;
    u->loop = loop;
    u->self = self;
    u->dir = fl_strdup(dir);
    fl_rng_seed(&u->rng, seed);
    u->rate_ppm = 1000000;
    u->base_hr_ns = (int64_t)uv_hrtime();
    u->base_local_ns = u->base_hr_ns;
    fl_buf_init(&u->view);
    return &u->env;
}

/* The file "incarnation" holds the number of starts so far, in decimal; it is
 * replaced through a synced temporary file and a rename, so a kill at any moment
 * leaves the old count or the new one. */
int env_uv_count_start(struct fl_env *e, const char **err)
{
    struct env_uv *u = eu_of(e);
    char path[4096], tmp[4096];
    if (!eu_path(u, "incarnation", path, sizeof path) ||
        !eu_path(u, "incarnation.tmp", tmp, sizeof tmp)) {
        *err = "env_uv: data directory path too long";
        return FL_EINVAL;
    }
    unsigned long n = 0;
    FILE *f = fopen(path, "r");
    if (f) {
        if (fscanf(f, "%lu", &n) != 1 || n >= UINT32_MAX) {
            fclose(f);
            *err = "env_uv: the incarnation file does not hold a count";
            return FL_EINVAL;
        }
        fclose(f);
    }
    char text[32];
    int len = snprintf(text, sizeof text, "%lu\n", n + 1);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || eu_write_all(fd, text, (size_t)len, 0) != FL_OK || fsync(fd) != 0 ||
        close(fd) != 0 || rename(tmp, path) != 0) {
        if (fd >= 0)
            close(fd);
        *err = "env_uv: cannot write the incarnation file";
        return FL_EIO;
    }
    int dfd = open(u->dir, O_RDONLY | O_DIRECTORY);
    if (dfd >= 0) {
        fsync(dfd); /* the rename itself is durable */
        close(dfd);
    }
    u->incarnation = (uint32_t)n;
    return FL_OK;
}

int env_uv_fsyncs(struct fl_env *e)
{
    return eu_of(e)->fsyncs;
}

void env_uv_free(struct fl_env *e)
{
    if (e == NULL)
        return;
    struct env_uv *u = eu_of(e);
    /* handles still open close now; their records go when the loop next runs */
    for (struct eu_sock *s = u->socks; s; s = s->next)
        if (!s->closed)
            eu_sock_shut(s);
    while (u->listens)
        eu_unlisten(e, u->listens->port);
    for (struct eu_sock *s = u->socks; s; s = s->next)
        s->u = NULL;
    fl_buf_close(&u->view);
    free(u->map);
    free(u->dir);
    free(u);
}
