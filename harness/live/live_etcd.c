/*
 * live_etcd.c: the etcd v3 JSON gateway transport of live_etcd.h: libcurl's multi
 * interface driven by the caller's libuv loop (curl tells which sockets to poll and
 * when to wake; libuv tells curl what happened), unary calls and streamed watches.
 */
#include "harness/live/live_etcd.h"
#include "harness/common/list.h"

#include <curl/curl.h>
#include <openssl/evp.h>

struct lv_etcd_sock {
    uv_poll_t poll;
    curl_socket_t fd;
    struct lv_etcd *e;
    struct lv_etcd_sock *next;
};

struct lv_etcd_req {
    struct lv_etcd *e;
    CURL *easy;
    struct curl_slist *hdrs;
    char *body;
    struct fl_buf in;
    size_t scanned; /* watch: bytes of in already delivered */
    lv_etcd_cb cb;
    lv_etcd_watch_cb wcb;
    void *arg;
    bool require_leader; /* etcd's "hasleader" metadata */
    char errbuf[CURL_ERROR_SIZE];
    struct lv_etcd_req *next, *prev;
};

struct lv_etcd_watch {
    struct lv_etcd_req r;
};

static void req_unlink(struct lv_etcd_req *r)
{
    FL_LIST_REMOVE(r->e->reqs, r, prev, next);
}

static void req_free(struct lv_etcd_req *r)
{
    req_unlink(r);
    curl_multi_remove_handle(r->e->multi, r->easy);
    curl_easy_cleanup(r->easy);
    curl_slist_free_all(r->hdrs);
    free(r->body);
    fl_buf_close(&r->in);
    free(r);
}

/* Hands every complete JSON value in r->in beyond scanned to the watch callback. */
static void watch_deliver(struct lv_etcd_req *r)
{
    while (r->scanned < r->in.len) {
        const char *p = (const char *)r->in.data + r->scanned;
        size_t n = r->in.len - r->scanned, skip = 0;
        while (skip < n && (p[skip] == '\n' || p[skip] == '\r' || p[skip] == ' '))
            skip++;
        if (skip == n) {
            r->scanned = r->in.len;
            return;
        }
        json_error_t je;
        json_t *m = json_loadb(p + skip, n - skip, JSON_DISABLE_EOF_CHECK, &je);
        if (!m)
            return; /* incomplete: wait for more bytes */
        r->scanned += skip + (size_t)je.position;
        r->wcb(m, NULL, r->arg);
        json_decref(m);
    }
}

static size_t on_body(char *p, size_t size, size_t nmemb, void *arg)
{
    struct lv_etcd_req *r = arg;
    fl_buf_append(&r->in, p, size * nmemb);
    if (r->wcb)
        watch_deliver(r);
    return size * nmemb;
}

/* etcd's error text: a unary call's {"error": TEXT, "code": N, "message": TEXT}, or a
 * streaming call's (a lease keep-alive's) {"error": {"grpc_code": N, "message": TEXT,
 * ...}}, which the gateway also answers with its HTTP status (503 for Unavailable). */
static const char *etcd_error(json_t *resp)
{
    const json_t *e = json_object_get(resp, "error");
    if (json_is_object(e))
        return json_string_value(json_object_get(e, "message"));
    const char *m = json_string_value(e);
    return m ? m : json_string_value(json_object_get(resp, "message"));
}

static void req_done(struct lv_etcd_req *r, CURLcode code)
{
    long status = 0;
    curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &status);
    struct lv_etcd_reply rep = {(int)status, code == CURLE_OPERATION_TIMEDOUT, NULL, ""};
    if (!r->wcb && r->in.len)
        rep.resp = json_loadb((const char *)r->in.data, r->in.len, 0, NULL);
    if (code != CURLE_OK)
        rep.error = r->errbuf[0] ? r->errbuf : curl_easy_strerror(code);
    else if (status != 200)
        rep.error = rep.resp && etcd_error(rep.resp) ? etcd_error(rep.resp) : "HTTP error";
    if (r->wcb)
        r->wcb(NULL, &rep, r->arg);
    else
        r->cb(&rep, r->arg);
    json_decref(rep.resp);
    req_free(r);
}

static void check_done(struct lv_etcd *e)
{
    CURLMsg *msg;
    int left;
    while ((msg = curl_multi_info_read(e->multi, &left))) {
        if (msg->msg != CURLMSG_DONE)
            continue;
        struct lv_etcd_req *r = NULL;
        curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&r);
        req_done(r, msg->data.result);
    }
}

static void on_poll(uv_poll_t *h, int status, int events)
{
    struct lv_etcd_sock *s = h->data;
    int flags = status < 0 ? CURL_CSELECT_ERR : 0;
    if (events & UV_READABLE)
        flags |= CURL_CSELECT_IN;
    if (events & UV_WRITABLE)
        flags |= CURL_CSELECT_OUT;
    int running;
    struct lv_etcd *e = s->e;
    curl_multi_socket_action(e->multi, s->fd, flags, &running);
    check_done(e);
}

static void on_sock_closed(uv_handle_t *h)
{
    free(h->data);
}

static void sock_drop(struct lv_etcd *e, struct lv_etcd_sock *s)
{
    for (struct lv_etcd_sock **q = &e->socks; *q; q = &(*q)->next) {
        if (*q == s) {
            *q = s->next;
            break;
        }
    }
    uv_poll_stop(&s->poll);
    uv_close((uv_handle_t *)&s->poll, on_sock_closed);
}

static int on_socket(CURL *easy, curl_socket_t fd, int what, void *userp, void *socketp)
{
    (void)easy;
    struct lv_etcd *e = userp;
    struct lv_etcd_sock *s = socketp;
    if (what == CURL_POLL_REMOVE) {
        if (s) {
            curl_multi_assign(e->multi, fd, NULL);
            sock_drop(e, s);
        }
        return 0;
    }
    if (!s) {
        s = fl_calloc(1, sizeof *s);
        s->fd = fd;
        s->e = e;
        if (uv_poll_init_socket(e->loop, &s->poll, fd) != 0) {
            free(s);
            return -1;
        }
        s->poll.data = s;
        s->next = e->socks;
        e->socks = s;
        curl_multi_assign(e->multi, fd, s);
    }
    int ev = (what & CURL_POLL_IN ? UV_READABLE : 0) | (what & CURL_POLL_OUT ? UV_WRITABLE : 0);
    uv_poll_start(&s->poll, ev, on_poll);
    return 0;
}

static void on_timeout(uv_timer_t *t)
{
    struct lv_etcd *e = t->data;
    int running;
    curl_multi_socket_action(e->multi, CURL_SOCKET_TIMEOUT, 0, &running);
    check_done(e);
}

static int on_timer(CURLM *multi, long timeout_ms, void *userp)
{
    (void)multi;
    struct lv_etcd *e = userp;
    if (timeout_ms < 0)
        uv_timer_stop(&e->timer);
    else /* 0: as soon as the loop turns (never call curl from inside curl) */
        uv_timer_start(&e->timer, on_timeout, (uint64_t)timeout_ms, 0);
    return 0;
}

int lv_etcd_init(struct lv_etcd *e, uv_loop_t *loop)
{
    static bool global;
    if (!global) {
        curl_global_init(CURL_GLOBAL_DEFAULT);
        global = true;
    }
    memset(e, 0, sizeof *e);
    e->loop = loop;
    e->multi = curl_multi_init();
    if (!e->multi)
        return FL_ENOMEM;
    uv_timer_init(loop, &e->timer);
    e->timer.data = e;
    e->timer_open = true;
    curl_multi_setopt(e->multi, CURLMOPT_SOCKETFUNCTION, on_socket);
    curl_multi_setopt(e->multi, CURLMOPT_SOCKETDATA, e);
    curl_multi_setopt(e->multi, CURLMOPT_TIMERFUNCTION, on_timer);
    curl_multi_setopt(e->multi, CURLMOPT_TIMERDATA, e);
    return FL_OK;
}

static void on_timer_closed(uv_handle_t *h)
{
    ((struct lv_etcd *)h->data)->timer_open = false;
}

void lv_etcd_close(struct lv_etcd *e)
{
    if (!e->multi)
        return;
    while (e->reqs)
        req_free(e->reqs);
    while (e->socks)
        sock_drop(e, e->socks);
    curl_multi_cleanup(e->multi);
    e->multi = NULL;
    uv_close((uv_handle_t *)&e->timer, on_timer_closed);
    while (e->timer_open)
        uv_run(e->loop, UV_RUN_ONCE);
}

static struct lv_etcd_req *req_start(struct lv_etcd *e, struct lv_etcd_req *r, const char *endpoint,
                                     const char *path, json_t *body, int64_t timeout_ms)
{
    r->e = e;
    fl_buf_init(&r->in);
    r->body = json_dumps(body, JSON_COMPACT);
    json_decref(body);
    r->easy = curl_easy_init();
    FL_ASSERT(r->easy && r->body);
    struct fl_buf url;
    fl_buf_init(&url);
    fl_buf_printf(&url, "%s%s", endpoint, path);
    curl_easy_setopt(r->easy, CURLOPT_URL, fl_buf_cstr(&url));
    fl_buf_close(&url);
    r->hdrs = curl_slist_append(NULL, "Content-Type: application/json");
    if (r->require_leader) /* the gateway passes Grpc-Metadata-* on as gRPC metadata */
        r->hdrs = curl_slist_append(r->hdrs, "Grpc-Metadata-hasleader: true");
    curl_easy_setopt(r->easy, CURLOPT_HTTPHEADER, r->hdrs);
    curl_easy_setopt(r->easy, CURLOPT_POSTFIELDS, r->body);
    curl_easy_setopt(r->easy, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(r->easy, CURLOPT_WRITEDATA, r);
    curl_easy_setopt(r->easy, CURLOPT_PRIVATE, r);
    curl_easy_setopt(r->easy, CURLOPT_ERRORBUFFER, r->errbuf);
    curl_easy_setopt(r->easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(r->easy, CURLOPT_NOPROXY, "*"); /* never an http_proxy from the env */
    curl_easy_setopt(r->easy, CURLOPT_TIMEOUT_MS, (long)(timeout_ms > 0 ? timeout_ms : 0));
    curl_easy_setopt(r->easy, CURLOPT_CONNECTTIMEOUT_MS,
                     (long)(timeout_ms > 0 && timeout_ms < 5000 ? timeout_ms : 5000));
    FL_LIST_INSERT_HEAD(e->reqs, r, prev, next);
    curl_multi_add_handle(e->multi, r->easy);
    return r;
}

void lv_etcd_call(struct lv_etcd *e, const char *endpoint, const char *path, json_t *body,
                  int64_t timeout_ms, lv_etcd_cb cb, void *arg)
{
    lv_etcd_call_rl(e, endpoint, path, body, timeout_ms, false, cb, arg);
}

void lv_etcd_call_rl(struct lv_etcd *e, const char *endpoint, const char *path, json_t *body,
                     int64_t timeout_ms, bool require_leader, lv_etcd_cb cb, void *arg)
{
    struct lv_etcd_req *r = fl_calloc(1, sizeof *r);
    r->cb = cb;
    r->arg = arg;
    r->require_leader = require_leader;
    req_start(e, r, endpoint, path, body, timeout_ms);
}

struct sync_wait {
    bool done;
    int rc;
    json_t *resp;
    struct fl_buf *err;
};

static void on_sync(const struct lv_etcd_reply *r, void *arg)
{
    struct sync_wait *w = arg;
    w->done = true;
    if (r->http_status == 200 && r->resp) {
        w->rc = FL_OK;
        w->resp = json_incref(r->resp);
        return;
    }
    w->rc = r->timed_out ? FL_ETIMEOUT : r->http_status ? FL_EINVAL : FL_EDOWN;
    if (w->err)
        fl_buf_printf(w->err, "%s", r->error);
}

static bool sync_done(void *arg)
{
    return ((struct sync_wait *)arg)->done;
}

int lv_etcd_call_sync(struct lv_etcd *e, const char *endpoint, const char *path, json_t *body,
                      int64_t timeout_ms, json_t **resp, struct fl_buf *err)
{
    struct sync_wait w = {false, FL_ETIMEOUT, NULL, err};
    lv_etcd_call(e, endpoint, path, body, timeout_ms, on_sync, &w);
    /* curl enforces timeout_ms; the extra second only bounds a loop that stalls */
    if (!lv_run_until(e->loop, sync_done, &w, timeout_ms + 1000)) {
        for (struct lv_etcd_req *r = e->reqs; r; r = r->next)
            if (r->arg == &w && r->cb == on_sync) {
                req_free(r);
                break;
            }
        if (err)
            fl_buf_printf(err, "%s%s: no answer in %lld ms", endpoint, path, (long long)timeout_ms);
        return FL_ETIMEOUT;
    }
    if (resp)
        *resp = w.resp;
    else
        json_decref(w.resp);
    return w.rc;
}

struct lv_etcd_watch *lv_etcd_stream_open(struct lv_etcd *e, const char *endpoint, const char *path,
                                          json_t *body, int64_t timeout_ms, lv_etcd_watch_cb cb,
                                          void *arg)
{
    struct lv_etcd_watch *w = fl_calloc(1, sizeof *w);
    w->r.wcb = cb;
    w->r.arg = arg;
    req_start(e, &w->r, endpoint, path, body, timeout_ms);
    return w;
}

struct lv_etcd_watch *lv_etcd_watch_open(struct lv_etcd *e, const char *endpoint, json_t *create,
                                         lv_etcd_watch_cb cb, void *arg)
{
    return lv_etcd_watch_open_rl(e, endpoint, create, false, cb, arg);
}

struct lv_etcd_watch *lv_etcd_watch_open_rl(struct lv_etcd *e, const char *endpoint, json_t *create,
                                            bool require_leader, lv_etcd_watch_cb cb, void *arg)
{
    json_t *body = json_object();
    json_object_set_new(body, "create_request", create);
    struct lv_etcd_watch *w = fl_calloc(1, sizeof *w);
    w->r.wcb = cb;
    w->r.arg = arg;
    w->r.require_leader = require_leader;
    req_start(e, &w->r, endpoint, "/v3/watch", body, 0);
    return w;
}

void lv_etcd_watch_cancel(struct lv_etcd_watch *w)
{
    req_free(&w->r);
}

/* ---- JSON helpers ------------------------------------------------------------------ */

json_t *lv_b64(const void *p, size_t n)
{
    char *out = fl_malloc(4 * ((n + 2) / 3) + 1);
    int len = EVP_EncodeBlock((unsigned char *)out, p, (int)n);
    json_t *s = json_stringn(out, (size_t)len);
    free(out);
    return s;
}

bool lv_b64_decode(const json_t *s, struct fl_buf *out)
{
    fl_buf_reset(out);
    if (!s || json_is_null(s))
        return true;
    const char *in = json_string_value(s);
    size_t n = json_string_length(s);
    if (!in || n % 4)
        return false;
    if (!n)
        return true;
    fl_buf_reserve(out, n);
    int len = EVP_DecodeBlock(out->data, (const unsigned char *)in, (int)n);
    if (len < 0)
        return false;
    len -= (in[n - 1] == '=') + (in[n - 2] == '='); /* DecodeBlock counts the padding */
    out->len = (size_t)len;
    return true;
}

uint64_t lv_json_u64(const json_t *o, const char *name)
{
    const json_t *j = json_object_get(o, name);
    if (json_is_integer(j))
        return (uint64_t)json_integer_value(j);
    const char *s = json_string_value(j);
    uint64_t v = 0;
    if (s && !fl_parse_u64(s, strlen(s), &v))
        v = 0;
    return v;
}

json_t *lv_etcd_body_put(const char *key, const char *value, int64_t lease)
{
    json_t *b = json_object();
    json_object_set_new(b, "key", lv_b64(key, strlen(key)));
    if (value)
        json_object_set_new(b, "value", lv_b64(value, strlen(value)));
    if (lease)
        json_object_set_new(b, "lease", json_integer(lease));
    return b;
}

json_t *lv_etcd_body_range(const char *key, const char *range_end, int64_t revision)
{
    json_t *b = json_object();
    json_object_set_new(b, "key", lv_b64(key, strlen(key)));
    if (range_end)
        json_object_set_new(b, "range_end", lv_b64(range_end, strlen(range_end)));
    if (revision)
        json_object_set_new(b, "revision", json_integer(revision));
    return b;
}

static uint64_t u64_either(const json_t *o, const char *a, const char *b)
{
    return json_object_get(o, a) ? lv_json_u64(o, a) : lv_json_u64(o, b);
}

int lv_etcd_status(struct lv_etcd *e, const char *endpoint, int64_t timeout_ms,
                   struct lv_etcd_status *st, struct fl_buf *err)
{
    json_t *r = NULL;
    memset(st, 0, sizeof *st);
    int rc = lv_etcd_call_sync(e, endpoint, "/v3/maintenance/status", json_object(), timeout_ms, &r,
                               err);
    if (rc)
        return rc;
    const json_t *h = json_object_get(r, "header");
    st->member_id = lv_json_u64(h, "member_id");
    st->revision = lv_json_u64(h, "revision");
    /* etcd 3.4's gateway spells StatusResponse's fields in camelCase (its protos'
     * json names) but the header's in snake_case: read either spelling. */
    st->leader = lv_json_u64(r, "leader");
    st->raft_term = u64_either(r, "raftTerm", "raft_term");
    st->raft_index = u64_either(r, "raftIndex", "raft_index");
    st->raft_applied_index = u64_either(r, "raftAppliedIndex", "raft_applied_index");
    st->db_size = u64_either(r, "dbSize", "db_size");
    st->db_size_in_use = u64_either(r, "dbSizeInUse", "db_size_in_use");
    st->is_learner = json_is_true(json_object_get(r, "isLearner")) ||
                     json_is_true(json_object_get(r, "is_learner"));
    const char *v = json_string_value(json_object_get(r, "version"));
    snprintf(st->version, sizeof st->version, "%s", v ? v : "");
    json_decref(r);
    return FL_OK;
}
