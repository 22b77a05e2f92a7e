/*
 * live_member.c: our members as processes under the supervisor, behind the proxies
 * (live_member.h). The identify callback reads only the first bytes of a connection
 * and never consumes them (the proxy forwards them; the member's environment reads
 * the hello itself).
 */
#include "harness/live/live_member.h"

#include "harness/live/live_proxy.h"
#include "nodes/env/env_uv.h"
#include "nodes/server/proc.h"

#include <inttypes.h>

#include <stdio.h>
#include <string.h>

int lv_identify_member_hello(const uint8_t *p, size_t n, void *arg)
{
    (void)arg;
    uint8_t head[8] = {ENV_UV_HELLO_LEN, 0, 0, 0};
    memcpy(head + 4, ENV_UV_HELLO_MAGIC, 4);
    if (memcmp(p, head, n < sizeof head ? n : sizeof head) != 0)
        return LV_EXTERNAL;
    if (n < sizeof head + 4)
        return -1;
    uint32_t a =
        (uint32_t)p[8] | (uint32_t)p[9] << 8 | (uint32_t)p[10] << 16 | (uint32_t)p[11] << 24;
    return a < LV_NODES_MAX ? (int)a : LV_EXTERNAL;
}

/* ---- a cluster of member processes ---------------------------------------------- */

static int member_setup(struct lv_member_cluster *c, int i, struct lv_workdir *wd,
                        struct fl_buf *err)
{
    struct lv_member *m = &c->m[i];
    m->slot = i + 1;
    if (lv_port_claim(&c->ports, &m->peer_port, err) ||
        lv_port_claim(&c->ports, &m->proxy_port, err) ||
        lv_port_claim(&c->ports, &m->client_port, err) ||
        lv_port_claim(&c->ports, &m->client_proxy_port, err))
        return FL_EIO;
    char name[16];
    snprintf(name, sizeof name, "m%d", m->slot);
    m->data_dir = lv_workdir_sub(wd, name, err);
    if (!m->data_dir)
        return FL_EIO;
    struct fl_buf b;
    fl_buf_init(&b);
    fl_buf_printf(&b, "%s/%s.log", wd->path, name);
    m->log_path = fl_strdup(fl_buf_cstr(&b));
    fl_buf_reset(&b);
    fl_buf_printf(&b, "%s/events.jsonl", m->data_dir);
    m->events_path = fl_strdup(fl_buf_cstr(&b));
    fl_buf_close(&b);
    if (lv_proxy_start(&c->proxy[i], &c->net, m->slot, m->proxy_port, m->peer_port, LV_EXTERNAL,
                       lv_identify_member_hello, NULL, err))
        return FL_EIO;
    return lv_proxy_start(&c->client_proxy[i], &c->net, m->slot, m->client_proxy_port,
                          m->client_port, LV_EXTERNAL, NULL, NULL, err);
}

static void member_argv(struct lv_member_cluster *c, int i, const char *program, uint64_t seed,
                        const char *const *extra)
{
    struct lv_member *m = &c->m[i];
    char id[16], pl[32], cl[32], seed_s[32], join[24];
    snprintf(join, sizeof join, "%" PRIx64, m->member_id);
    snprintf(id, sizeof id, "%d", m->slot);
    snprintf(pl, sizeof pl, "127.0.0.1:%d", m->peer_port);
    snprintf(cl, sizeof cl, "127.0.0.1:%d", m->client_port);
    snprintf(seed_s, sizeof seed_s, "%llu", (unsigned long long)seed);
    struct fl_buf peers;
    fl_buf_init(&peers);
    for (int j = 0; j < c->n0; j++) /* the founders (a joiner learns the others) */
        if (j != i)
            fl_buf_printf(&peers, "%s%d=127.0.0.1:%d", peers.len ? "," : "", c->m[j].slot,
                          c->m[j].proxy_port);
    /* clang-format off */
    const char *base[] = {
        program, "member", "--id", id, "--data", m->data_dir, "--peer-listen", pl,
        "--client-listen", cl, "--seed", seed_s, "--events", m->events_path,
        "--directory", c->dir_path, "--raft-feed", c->raft_feed_path};
    /* clang-format on */
    const char *argv[FL_ARRAY_LEN(base) + 4 + LV_MEMBER_EXTRA_MAX + 1];
    size_t n = 0;
    for (size_t k = 0; k < FL_ARRAY_LEN(base); k++)
        argv[n++] = base[k];
    if (peers.len) {
        argv[n++] = "--peers";
        argv[n++] = fl_buf_cstr(&peers);
    }
    if (m->joiner) {
        argv[n++] = "--join";
        argv[n++] = join;
    }
    for (size_t k = 0; extra && extra[k] && k < LV_MEMBER_EXTRA_MAX; k++)
        argv[n++] = extra[k];
    argv[n] = NULL;
    lv_proc_init(&m->proc, c->loop, argv, m->log_path); /* copies argv */
    fl_buf_close(&peers);
}

int lv_member_cluster_start(struct lv_member_cluster *c, uv_loop_t *loop, struct lv_workdir *wd,
                            int n, const char *program, uint64_t seed, const char *const *extra,
                            struct fl_buf *err)
{
    FL_ASSERT(n >= 1 && n <= LV_MEMBERS_MAX);
    memset(c, 0, sizeof *c);
    c->loop = loop;
    c->n = n;
    c->n0 = n;
    struct fl_buf b;
    fl_buf_init(&b);
    fl_buf_printf(&b, "%s/directory", wd->path);
    c->dir_path = fl_strdup(fl_buf_cstr(&b));
    fl_buf_reset(&b);
    fl_buf_printf(&b, "%s/raft_feed.txt", wd->path);
    c->raft_feed_path = fl_strdup(fl_buf_cstr(&b));
    fl_buf_close(&b);
    lv_net_init(&c->net, loop, seed);
    lv_ports_init(&c->ports);
    int rc = FL_OK;
    for (int i = 0; i < n && !rc; i++) {
        c->m[i].member_id = srv_proc_member_id(seed, i + 1);
        rc = member_setup(c, i, wd, err);
    }
    for (int i = 0; i < n && !rc; i++) {
        member_argv(c, i, program, seed, extra);
        rc = lv_proc_start(&c->m[i].proc, err);
        c->m[i].started = true;
    }
    if (!rc)
        rc = lv_member_dir_write(c, err);
    return rc;
}

int lv_member_add(struct lv_member_cluster *c, struct lv_workdir *wd, const char *program,
                  uint64_t seed, const char *const *extra, uint64_t member_id, struct fl_buf *err)
{
    if (c->n >= LV_MEMBERS_MAX || c->n >= SRV_PROC_NODES_MAX) {
        fl_buf_printf(err, "no slot left for a new member (at most %d)",
                      FL_MIN(LV_MEMBERS_MAX, SRV_PROC_NODES_MAX));
        return -1;
    }
    int i = c->n;
    c->m[i].member_id = member_id;
    c->m[i].joiner = true;
    c->n++; /* close() frees what member_setup made, even when it failed half-way */
    if (member_setup(c, i, wd, err))
        return -1;
    member_argv(c, i, program, seed, extra);
    return c->m[i].slot;
}

int lv_member_dir_write(struct lv_member_cluster *c, struct fl_buf *err)
{
    struct fl_buf tmp, b;
    fl_buf_init(&tmp);
    fl_buf_init(&b);
    fl_buf_printf(&tmp, "%s.tmp", c->dir_path);
    for (int i = 0; i < c->n; i++)
        fl_buf_printf(&b, "%d %" PRIx64 " %d %d\n", c->m[i].slot, c->m[i].member_id,
                      c->m[i].proxy_port, c->m[i].started ? 1 : 0);
    FILE *f = fopen(fl_buf_cstr(&tmp), "w");
    bool ok = f && fwrite(b.data ? (const void *)b.data : "", 1, b.len, f) == b.len;
    if (f && fclose(f))
        ok = false;
    if (ok && rename(fl_buf_cstr(&tmp), c->dir_path) != 0)
        ok = false;
    if (!ok)
        fl_buf_printf(err, "cannot write %s", c->dir_path);
    fl_buf_close(&tmp);
    fl_buf_close(&b);
    return ok ? FL_OK : FL_EIO;
}

void lv_member_cluster_isolate(struct lv_member_cluster *c, int i, bool on)
{
    for (int j = 0; j < c->n; j++)
        if (j != i)
            lv_net_cut(&c->net, c->m[i].slot, c->m[j].slot, true, on);
    lv_net_update(&c->net);
}

int lv_member_events_poll(struct lv_member_cluster *c, lv_member_event_fn *fn, void *arg)
{
    int n = 0;
    char line[8192];
    for (int i = 0; i < c->n; i++) {
        struct lv_member *m = &c->m[i];
        FILE *f = fopen(m->events_path, "r");
        if (!f)
            continue; /* not started yet */
        if (fseeko(f, (off_t)m->events_off, SEEK_SET) != 0) {
            fclose(f);
            continue;
        }
        while (fgets(line, sizeof line, f)) {
            size_t len = strlen(line);
            if (len == 0 || line[len - 1] != '\n')
                break; /* half written (or longer than a line can be): next poll */
            m->events_off += len;
            json_t *ev = json_loads(line, 0, NULL);
            if (json_is_object(ev)) {
                fn(arg, m->slot, ev);
                n++;
            }
            json_decref(ev);
        }
        fclose(f);
    }
    return n;
}

void lv_member_cluster_close(struct lv_member_cluster *c)
{
    for (int i = 0; i < c->n; i++) {
        struct lv_member *m = &c->m[i];
        lv_proc_close(&m->proc);
        if (c->proxy[i].net)
            lv_proxy_close(&c->proxy[i]);
        if (c->client_proxy[i].net)
            lv_proxy_close(&c->client_proxy[i]);
        free(m->data_dir);
        free(m->log_path);
        free(m->events_path);
    }
    lv_ports_close(&c->ports);
    free(c->dir_path);
    free(c->raft_feed_path);
    memset(c, 0, sizeof *c);
}
