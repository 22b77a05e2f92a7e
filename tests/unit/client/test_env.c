/*
 * test_env.c: the client on its own, over a fake node environment written here (no
 * simulator): the test owns the clocks, fires the timers, opens and breaks the
 * connections and plays the server by decoding the client's frames and encoding
 * answers. It shows what nodes/env/env.h promises the node code: every timer,
 * socket and random draw of the client goes through the environment (after free
 * no timer is left), timers run on the process's own clock while what the client
 * records is in the reference clock, and a broken connection is redialled.
 */
#include "fl_test.h"

#include "nodes/client/client_int.h"
#include "nodes/proto/codec.h"
#include "nodes/server/server.h"

#define FAKE_TIMERS_MAX 256
#define FAKE_SOCKS_MAX  16
#define FAKE_FRAMES_MAX 64

struct fake_sock {
    env_sock id;
    const struct env_sock_cb *cb;
    int peer, port;
    bool open; /* not closed by either side */
};

struct fake_frame {
    env_sock sock;
    uint8_t *p;
    size_t n;
};

struct fake_env {
    struct fl_env env; /* first */
    int64_t now_ns;    /* the reference clock */
    int64_t local_ns;  /* the process's own clock */
    int64_t rate;      /* local ns per reference ns (an integer skew, enough here) */
    struct {
        struct env_timer *t;
        int64_t due_local_ns;
        uint64_t seq;
    } timers[FAKE_TIMERS_MAX];
    size_t n_timers;
    uint64_t next_id, seq, draws;
    struct fake_sock socks[FAKE_SOCKS_MAX];
    size_t n_socks;
    struct fake_frame frames[FAKE_FRAMES_MAX]; /* sent, not yet taken by the test */
    size_t n_frames;
};

static struct fake_env *fe_of(struct fl_env *e)
{
    return (struct fake_env *)e;
}

static int64_t fe_now_ns(struct fl_env *e)
{
    return fe_of(e)->now_ns;
}

static int64_t fe_local_ns(struct fl_env *e)
{
    return fe_of(e)->local_ns;
}

static bool fe_timer_start(struct fl_env *e, struct env_timer *t, int64_t delay_ns)
{
    struct fake_env *f = fe_of(e);
    FL_ASSERT(f->n_timers < FAKE_TIMERS_MAX);
    FL_ASSERT(delay_ns >= 0);
    t->id = ++f->next_id;
    f->timers[f->n_timers].t = t;
    f->timers[f->n_timers].due_local_ns = f->local_ns + delay_ns;
    f->timers[f->n_timers].seq = ++f->seq;
    f->n_timers++;
    return true;
}

static void fe_timer_remove(struct fake_env *f, size_t i)
{
    f->timers[i] = f->timers[--f->n_timers];
}

static void fe_timer_stop(struct fl_env *e, struct env_timer *t)
{
    struct fake_env *f = fe_of(e);
    for (size_t i = 0; i < f->n_timers; i++) {
        if (f->timers[i].t == t && t->id != 0) {
            fe_timer_remove(f, i);
            return;
        }
    }
    FL_ASSERT(!"stopping a timer the environment does not hold");
}

static uint64_t fe_rand_u64(struct fl_env *e)
{
    return 0x9e3779b97f4a7c15ULL * ++fe_of(e)->draws;
}

static uint32_t fe_incarnation(struct fl_env *e)
{
    (void)e;
    return 0;
}

static void fe_crash(struct fl_env *e)
{
    (void)e;
    FL_ASSERT(!"the client never crashes itself");
}

static bool fe_alive(struct fl_env *e)
{
    (void)e;
    return true;
}

static enum env_fault fe_failpoint(struct fl_env *e, enum flt_point fp, struct env_fault_hit *hit)
{
    (void)e;
    (void)fp;
    if (hit) {
        hit->action = ENV_FAULT_NONE;
        hit->delay_ns = 0;
    }
    return ENV_FAULT_NONE;
}

static struct fake_sock *fe_sock(struct fake_env *f, env_sock s)
{
    for (size_t i = 0; i < f->n_socks; i++)
        if (f->socks[i].id == s)
            return &f->socks[i];
    return NULL;
}

static env_sock fe_connect(struct fl_env *e, int peer, int port, const struct env_sock_cb *cb)
{
    struct fake_env *f = fe_of(e);
    FL_ASSERT(f->n_socks < FAKE_SOCKS_MAX);
    struct fake_sock *s = &f->socks[f->n_socks++];
    s->id = (env_sock)(100 + f->n_socks);
    s->cb = cb;
    s->peer = peer;
    s->port = port;
    s->open = true;
    return s->id;
}

static int fe_send(struct fl_env *e, env_sock s, const void *p, size_t n)
{
    struct fake_env *f = fe_of(e);
    struct fake_sock *fs = fe_sock(f, s);
    if (!fs || !fs->open)
        return FL_EDOWN;
    FL_ASSERT(f->n_frames < FAKE_FRAMES_MAX);
    struct fake_frame *fr = &f->frames[f->n_frames++];
    fr->sock = s;
    fr->p = fl_malloc(n + 1);
    memcpy(fr->p, p, n);
    fr->n = n;
    return FL_OK;
}

static void fe_close(struct fl_env *e, env_sock s)
{
    struct fake_sock *fs = fe_sock(fe_of(e), s);
    if (fs)
        fs->open = false;
}

static bool fe_sock_open(struct fl_env *e, env_sock s)
{
    struct fake_sock *fs = fe_sock(fe_of(e), s);
    return fs && fs->open;
}

static int fe_sock_peer(struct fl_env *e, env_sock s)
{
    struct fake_sock *fs = fe_sock(fe_of(e), s);
    return fs ? fs->peer : -1;
}

/* What a client never does: listen, or touch files. */
static int fe_listen(struct fl_env *e, int port, env_accept_fn *fn, void *ctx)
{
    (void)e, (void)port, (void)fn, (void)ctx;
    FL_ASSERT(!"a client does not listen");
    return FL_EINVAL;
}
static int fe_unlisten(struct fl_env *e, int port)
{
    (void)e, (void)port;
    return FL_ENOENT;
}
static int fe_sock_bind(struct fl_env *e, env_sock s, const struct env_sock_cb *cb)
{
    struct fake_sock *fs = fe_sock(fe_of(e), s);
    if (!fs)
        return FL_EDOWN;
    fs->cb = cb;
    return FL_OK;
}
static int fe_file_write(struct fl_env *e, const char *name, uint64_t off, const void *p, size_t n)
{
    (void)e, (void)name, (void)off, (void)p, (void)n;
    FL_ASSERT(!"a client has no files");
    return FL_EIO;
}
static int fe_file_append(struct fl_env *e, const char *name, const void *p, size_t n)
{
    return fe_file_write(e, name, 0, p, n);
}
static int fe_file_put(struct fl_env *e, const char *name, struct fl_buf *content)
{
    fl_buf_close(content);
    return fe_file_write(e, name, 0, NULL, 0);
}
static int fe_file_view(struct fl_env *e, const char *name, const uint8_t **p, size_t *len)
{
    (void)p, (void)len;
    return fe_file_write(e, name, 0, NULL, 0);
}
static int fe_file_truncate(struct fl_env *e, const char *name, uint64_t len)
{
    return fe_file_write(e, name, len, NULL, 0);
}
static int fe_file_rename(struct fl_env *e, const char *from, const char *to)
{
    (void)to;
    return fe_file_write(e, from, 0, NULL, 0);
}
static int fe_file_remove(struct fl_env *e, const char *name)
{
    return fe_file_write(e, name, 0, NULL, 0);
}
static int fe_file_list(struct fl_env *e, const char *prefix, env_list_fn *fn, void *ctx)
{
    (void)fn, (void)ctx;
    return fe_file_write(e, prefix, 0, NULL, 0);
}
static int fe_file_fsync(struct fl_env *e, const char *name, env_fsync_fn *cb, void *ctx)
{
    (void)cb, (void)ctx;
    return fe_file_write(e, name, 0, NULL, 0);
}
static void fe_files_wipe(struct fl_env *e)
{
    fe_file_write(e, "", 0, NULL, 0);
}

static const struct env_ops fake_ops = {
    .now_ns = fe_now_ns,
    .local_ns = fe_local_ns,
    .timer_start = fe_timer_start,
    .timer_stop = fe_timer_stop,
    .rand_u64 = fe_rand_u64,
    .incarnation = fe_incarnation,
    .crash = fe_crash,
    .alive = fe_alive,
    .failpoint = fe_failpoint,
    .listen = fe_listen,
    .unlisten = fe_unlisten,
    .connect = fe_connect,
    .sock_bind = fe_sock_bind,
    .send = fe_send,
    .close = fe_close,
    .sock_open = fe_sock_open,
    .sock_peer = fe_sock_peer,
    .file_write = fe_file_write,
    .file_append = fe_file_append,
    .file_put = fe_file_put,
    .file_view = fe_file_view,
    .file_truncate = fe_file_truncate,
    .file_rename = fe_file_rename,
    .file_remove = fe_file_remove,
    .file_list = fe_file_list,
    .file_fsync = fe_file_fsync,
    .files_wipe = fe_files_wipe,
};

static void fake_init(struct fake_env *f, int64_t rate)
{
    memset(f, 0, sizeof *f);
    f->env.ops = &fake_ops;
    f->now_ns = 1000 * FL_MS; /* the clocks need not start at 0, nor agree */
    f->local_ns = 77 * FL_MS;
    f->rate = rate;
}

static void fake_close(struct fake_env *f)
{
    for (size_t i = 0; i < f->n_frames; i++)
        free(f->frames[i].p);
}

/* Fires every timer due by reference time until_ns, earliest (then first started)
 * first, moving both clocks; then sets the reference clock to until_ns. */
static void fake_run_until(struct fake_env *f, int64_t until_ns)
{
    for (;;) {
        size_t best = SIZE_MAX;
        for (size_t i = 0; i < f->n_timers; i++) {
            if (best == SIZE_MAX || f->timers[i].due_local_ns < f->timers[best].due_local_ns ||
                (f->timers[i].due_local_ns == f->timers[best].due_local_ns &&
                 f->timers[i].seq < f->timers[best].seq))
                best = i;
        }
        if (best == SIZE_MAX)
            break;
        int64_t due = f->timers[best].due_local_ns;
        int64_t at = f->now_ns + (due - f->local_ns + f->rate - 1) / f->rate;
        if (due > f->local_ns && at > until_ns)
            break;
        if (due > f->local_ns) {
            f->now_ns = at;
            f->local_ns = due;
        }
        struct env_timer *t = f->timers[best].t;
        fe_timer_remove(f, best);
        t->id = 0;
        t->fn(t->ctx);
    }
    if (until_ns > f->now_ns) {
        f->local_ns += (until_ns - f->now_ns) * f->rate;
        f->now_ns = until_ns;
    }
}

/* Takes the oldest frame the client sent; false when none. */
static bool fake_take(struct fake_env *f, struct fake_frame *out)
{
    if (f->n_frames == 0)
        return false;
    *out = f->frames[0];
    memmove(&f->frames[0], &f->frames[1], (f->n_frames - 1) * sizeof f->frames[0]);
    f->n_frames--;
    return true;
}

/* The server's side: answers call_id on socket s. */
static void fake_answer_put(struct fake_env *f, env_sock s, uint64_t call_id, int64_t revision)
{
    Rpc__ResponseHeader h = RPC__RESPONSE_HEADER__INIT;
    h.cluster_id = 5;
    h.member_id = 9;
    h.revision = revision;
    h.raft_term = 2;
    Rpc__PutResponse pr = RPC__PUT_RESPONSE__INIT;
    Rpc__ServerMsg m = RPC__SERVER_MSG__INIT;
    m.call_id = call_id;
    m.method = RPC__METHOD__METHOD_PUT;
    m.header = &h;
    m.resp_case = RPC__SERVER_MSG__RESP_PUT;
    m.put = &pr;
    struct fl_buf b;
    fl_buf_init(&b);
    size_t n = rpc_server_msg_encode(&m, &b);
    struct fake_sock *fs = fe_sock(f, s);
    fs->cb->on_message(fs->cb->ctx, s, b.data, n);
    fl_buf_close(&b);
}

struct done_rec {
    int calls;
    struct kvc_result r; /* scalars only: pointers die with the callback */
};

static void on_done(void *ud, const struct kvc_result *r)
{
    struct done_rec *d = ud;
    d->calls++;
    d->r = *r;
    d->r.error = NULL;
}

static struct kvc_client *fake_client(struct fake_env *f)
{
    static const struct kvc_endpoint eps[] = {{1, 7}};
    struct kvc_config cfg;
    kvc_config_default(&cfg);
    cfg.endpoints = eps;
    cfg.endpoint_count = 1;
    struct kvc_client *c = NULL;
    const char *err = NULL;
    CHECK_EQ_INT(kvc_client_new_env(&f->env, 42, &cfg, &c, &err), FL_OK);
    CHECK_EQ_INT(kvc_client_proc(c), 42);
    return c;
}

/* A put: dial, open, the request on the wire as a ClientMsg, the answer decoded. */
static void test_put_roundtrip(void)
{
    struct fake_env f;
    fake_init(&f, 1);
    struct kvc_client *c = fake_client(&f);
    CHECK_EQ_INT((int)f.n_socks, 1); /* the balancer dialled at once */
    CHECK_EQ_INT(f.socks[0].peer, 7);
    CHECK_EQ_INT(f.socks[0].port, SRV_CLIENT_PORT);
    CHECK(f.draws >= 1); /* the balancer's seed came from the environment's stream */
    f.socks[0].cb->on_open(f.socks[0].cb->ctx, f.socks[0].id);

    struct done_rec d = {0};
    struct kvc_bytes k = {(const uint8_t *)"key", 3}, v = {(const uint8_t *)"val", 3};
    int64_t call_ns = f.now_ns;
    kvc_put(c, k, v, 0, NULL, on_done, &d);
    CHECK_EQ_INT((int)f.n_frames, 0); /* never from inside the call: a zero-delay timer */
    fake_run_until(&f, f.now_ns);
    struct fake_frame fr = {0};
    CHECK(fake_take(&f, &fr));
    Rpc__ClientMsg *m = rpc_client_msg_decode(NULL, fr.n, fr.p);
    CHECK(m != NULL);
    CHECK_EQ_INT(m->method, RPC__METHOD__METHOD_PUT);
    CHECK_EQ_INT(m->req_case, RPC__CLIENT_MSG__REQ_PUT);
    CHECK(m->put->key.len == 3 && memcmp(m->put->key.data, "key", 3) == 0);
    CHECK(m->put->value.len == 3 && memcmp(m->put->value.data, "val", 3) == 0);
    uint64_t call_id = m->call_id;
    rpc__client_msg__free_unpacked(m, NULL);
    free(fr.p);

    f.now_ns += 3 * FL_MS;
    f.local_ns += 3 * FL_MS;
    fake_answer_put(&f, fr.sock, call_id, 42);
    CHECK_EQ_INT(d.calls, 1);
    CHECK_EQ_INT(d.r.status, KVC_OK);
    CHECK_EQ_INT(d.r.header.revision, 42);
    CHECK_EQ_INT(d.r.attempts, 1);
    CHECK_EQ_INT(d.r.node, 1);
    CHECK(d.r.call_ns == call_ns);               /* the reference clock, */
    CHECK(d.r.return_ns == call_ns + 3 * FL_MS); /* not the process's own */

    kvc_client_free(c);
    CHECK_EQ_INT((int)f.n_timers, 0); /* every timer it started went through the env */
    CHECK(!f.socks[0].open);          /* and it closed its connection */
    fake_close(&f);
}

/* The process's clock runs 4x the reference clock: a 1 s call deadline ends after
 * 250 ms of reference time, and the call's times are reported in reference time. */
static void test_deadline_on_local_clock(void)
{
    struct fake_env f;
    fake_init(&f, 4);
    struct kvc_client *c = fake_client(&f);
    f.socks[0].cb->on_open(f.socks[0].cb->ctx, f.socks[0].id);
    struct done_rec d = {0};
    struct kvc_bytes k = {(const uint8_t *)"key", 3};
    struct kvc_call_opts o = {.timeout_ms = 1000};
    int64_t call_ns = f.now_ns;
    kvc_get(c, k, (struct kvc_bytes){NULL, 0}, &o, on_done, &d);
    fake_run_until(&f, call_ns + 249 * FL_MS);
    CHECK_EQ_INT(d.calls, 0);
    CHECK(f.n_frames >= 1); /* it left, unanswered */
    fake_run_until(&f, call_ns + 251 * FL_MS);
    CHECK_EQ_INT(d.calls, 1);
    CHECK(d.r.status != KVC_OK);
    CHECK_EQ_INT(d.r.code, RPC_CODE_DEADLINE_EXCEEDED);
    CHECK(d.r.return_ns - d.r.call_ns == 250 * FL_MS);
    kvc_client_free(c);
    CHECK_EQ_INT((int)f.n_timers, 0);
    fake_close(&f);
}

/* A connection reset by the peer: the put in flight there ends without an answer
 * (sent, so unknown, or retried and then answered), and the client dials again. */
static void test_reset_redials(void)
{
    struct fake_env f;
    fake_init(&f, 1);
    struct kvc_client *c = fake_client(&f);
    f.socks[0].cb->on_open(f.socks[0].cb->ctx, f.socks[0].id);
    struct done_rec d = {0};
    struct kvc_bytes k = {(const uint8_t *)"key", 3}, v = {(const uint8_t *)"v", 1};
    kvc_put(c, k, v, 0, NULL, on_done, &d);
    fake_run_until(&f, f.now_ns);
    CHECK_EQ_INT((int)f.n_frames, 1);
    f.socks[0].open = false;
    f.socks[0].cb->on_close(f.socks[0].cb->ctx, f.socks[0].id, ENV_CLOSE_RESET);
    fake_run_until(&f, f.now_ns + 2000 * FL_MS);
    CHECK(f.n_socks >= 2); /* redialled */
    CHECK_EQ_INT(f.socks[1].peer, 7);
    kvc_client_free(c);
    CHECK_EQ_INT(d.calls, 1); /* completed exactly once, at the latest by the free */
    CHECK(d.r.status != KVC_OK);
    CHECK_EQ_INT((int)f.n_timers, 0);
    fake_close(&f);
}

int main(void)
{
    FL_TEST(test_put_roundtrip);
    FL_TEST(test_deadline_on_local_clock);
    FL_TEST(test_reset_redials);
    return fl_test_end();
}
