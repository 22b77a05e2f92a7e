/*
 * run_target_etcd_backup.c: copy_db and restore on the etcd target (a member's db file;
 * `etcdctl snapshot restore` into new data directories, then the members restart on them).
 */
#include "harness/run/run_etcd_int.h"

#include <errno.h>

/* ---- backups, restore, convergence ------------------------------------------------------- */

static bool never_done(void *arg)
{
    (void)arg;
    return false;
}

int run_etcd_copy_db(struct run_world *rw, int node, uint8_t **data, size_t *len)
{
    struct run_etcd *E = rw->etcd;
    *data = NULL;
    *len = 0;
    if (!E || node < 1 || node > E->n)
        return FL_ENOENT;
    /* etcd's backend commits its write batch every 100 ms: what a copy taken now holds
     * of the writes just answered depends on that timer, so the copy waits for one
     * batch interval (and a half) first */
    lv_run_until(&E->loop, never_done, NULL, 150);
    struct fl_buf path, b;
    fl_buf_init(&path);
    fl_buf_init(&b);
    fl_buf_printf(&path, "%s/data/member/snap/db", E->c.m[node - 1].data_dir);
    FILE *f = fopen(fl_buf_cstr(&path), "rb");
    fl_buf_close(&path);
    if (!f)
        return FL_ENOENT;
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        fl_buf_append(&b, chunk, n);
    bool bad = ferror(f) != 0;
    fclose(f);
    if (bad || !b.len) {
        fl_buf_close(&b);
        return FL_ENOENT;
    }
    *data = b.data; /* the buffer's memory, now the caller's */
    *len = b.len;
    return FL_OK;
}

/* etcdctl's error: the text after its last "Error: ", else the last line. */
void run_etcd__etcdctl_error(const char *out, char *err, size_t err_len)
{
    const char *p = NULL, *q = out;
    while ((q = strstr(q, "Error: ")) != NULL) {
        if (q == out || q[-1] == '\n')
            p = q + strlen("Error: ");
        q++;
    }
    if (!p) {
        size_t n = strlen(out);
        while (n && (out[n - 1] == '\n' || out[n - 1] == '\r'))
            n--;
        p = out + n;
        while (p > out && p[-1] != '\n')
            p--;
    }
    snprintf(err, err_len, "%.*s", (int)strcspn(p, "\r\n"), p);
}

/* The member answers Status (its id once restored): waits up to wait_ms. */
static uint64_t wait_member_id(struct run_etcd *E, int slot, int64_t wait_ms)
{
    double t0 = run_target_wall_s();
    while ((run_target_wall_s() - t0) * 1000.0 < (double)wait_ms) {
        struct lv_etcd_status st;
        if (!lv_etcd_status(&E->c.client, E->c.m[slot - 1].direct_url, 500, &st, NULL) &&
            st.member_id)
            return st.member_id;
        lv_run_until(&E->loop, never_done, NULL, 50);
    }
    return 0;
}

/* One restore's names (k: its number in this run): the backup's file, etcdctl's log, the
 * new cluster's token and its --initial-cluster. */
struct restore {
    struct run_etcd *E;
    const int *nodes;
    int n_nodes;
    unsigned k;
    struct fl_buf file, log, token, cluster;
};

static void restore_init(struct restore *r, struct run_etcd *E, const int *nodes, int n_nodes)
{
    static unsigned counter;
    r->E = E;
    r->nodes = nodes;
    r->n_nodes = n_nodes;
    r->k = ++counter;
    fl_buf_init(&r->file);
    fl_buf_init(&r->log);
    fl_buf_init(&r->token);
    fl_buf_init(&r->cluster);
    fl_buf_printf(&r->file, "%s/restore-%u.db", E->wd.path, r->k);
    fl_buf_printf(&r->log, "%s/etcdctl-restore-%u.log", E->wd.path, r->k);
    fl_buf_printf(&r->token, "%s-restore-%u", E->c.token, r->k);
    for (int i = 0; i < n_nodes; i++) {
        const struct lv_etcd_member *m = &E->c.m[nodes[i] - 1];
        fl_buf_printf(&r->cluster, "%s%s=%s", i ? "," : "", m->name, m->peer_url);
    }
}

static void restore_close(struct restore *r)
{
    fl_buf_close(&r->file);
    fl_buf_close(&r->log);
    fl_buf_close(&r->token);
    fl_buf_close(&r->cluster);
}

/* The backup written to its file, then `etcdctl snapshot restore` into a new data
 * directory (data.r<k>) of every member named: a refusal (integrity, missing hash)
 * touches no member. */
static int restore_dirs(struct restore *r, const uint8_t *data, size_t len, bool skip_hash_check,
                        char *err, size_t err_len)
{
    struct run_etcd *E = r->E;
    FILE *f = fopen(fl_buf_cstr(&r->file), "wb");
    bool bad = !f || fwrite(data, 1, len, f) != len;
    if ((f && fclose(f)) || bad) {
        snprintf(err, err_len, "target etcd: cannot write %s", fl_buf_cstr(&r->file));
        return FL_EIO;
    }
    char *ctl = lv_etcdctl_find(E->bin);
    struct fl_buf dir, out;
    fl_buf_init(&dir);
    fl_buf_init(&out);
    int rc = FL_OK;
    for (int i = 0; i < r->n_nodes && !rc; i++) {
        const struct lv_etcd_member *m = &E->c.m[r->nodes[i] - 1];
        fl_buf_reset(&dir);
        fl_buf_printf(&dir, "%s/data.r%u", m->data_dir, r->k);
        const char *argv[] = {ctl,
                              "snapshot",
                              "restore",
                              fl_buf_cstr(&r->file),
                              "--name",
                              m->name,
                              "--initial-cluster",
                              fl_buf_cstr(&r->cluster),
                              "--initial-cluster-token",
                              fl_buf_cstr(&r->token),
                              "--initial-advertise-peer-urls",
                              m->peer_url,
                              "--data-dir",
                              fl_buf_cstr(&dir),
                              skip_hash_check ? "--skip-hash-check" : NULL,
                              NULL};
        fl_buf_reset(&out);
        int st = lv_etcdctl_run(&E->loop, argv, fl_buf_cstr(&r->log), 30000, &out);
        if (st != 0) {
            run_etcd__etcdctl_error(fl_buf_cstr(&out), err, err_len);
            rc = st > 0 && st != 127 ? FL_ECORRUPT : FL_EIO;
        }
    }
    free(ctl);
    fl_buf_close(&dir);
    fl_buf_close(&out);
    return rc;
}

/* Member slot stops (with its bridge) and its data directory becomes the restored one
 * (the old kept as data.old<k>). */
static int restore_switch(struct restore *r, int slot, char *err, size_t err_len)
{
    struct run_etcd *E = r->E;
    struct lv_etcd_member *m = &E->c.m[slot - 1];
    lv_proc_kill(&m->proc);
    if (sim_proc_state(E->rw->w, E->b[slot].proc) != SIM_PROC_DOWN)
        sim_proc_kill(E->rw->w, E->b[slot].proc);
    struct fl_buf from, to, old;
    fl_buf_init(&from);
    fl_buf_init(&to);
    fl_buf_init(&old);
    fl_buf_printf(&from, "%s/data.r%u", m->data_dir, r->k);
    fl_buf_printf(&to, "%s/data", m->data_dir);
    fl_buf_printf(&old, "%s/data.old%u", m->data_dir, r->k);
    int rc = FL_OK;
    if ((rename(fl_buf_cstr(&to), fl_buf_cstr(&old)) && errno != ENOENT) ||
        rename(fl_buf_cstr(&from), fl_buf_cstr(&to))) {
        snprintf(err, err_len, "target etcd: cannot switch %s to the restored data: %s",
                 fl_buf_cstr(&to), strerror(errno));
        rc = FL_EIO;
    }
    fl_buf_close(&from);
    fl_buf_close(&to);
    fl_buf_close(&old);
    return rc;
}

/* The restored members start as the new cluster; their new ids (etcd derives them from
 * the new token) are learnt for the peer proxies' attribution and for status(). */
static int restore_start(struct restore *r, char *err, size_t err_len)
{
    struct run_etcd *E = r->E;
    for (int i = 0; i < r->n_nodes; i++) {
        int slot = r->nodes[i];
        struct lv_etcd_member *m = &E->c.m[slot - 1];
        struct fl_buf perr;
        fl_buf_init(&perr);
        int rc = lv_proc_start(&m->proc, &perr);
        if (rc)
            snprintf(err, err_len, "target etcd: restart of %s: %s", m->name, fl_buf_cstr(&perr));
        fl_buf_close(&perr);
        sim_proc_restart(E->rw->w, E->b[slot].proc);
        E->b[slot].removed = false;
        E->b[slot].st_ok = false;
        E->b[slot].log_term = 0; /* a restored member starts a new cluster at term 1 */
        if (rc)
            return FL_EIO;
    }
    for (int i = 0; i < r->n_nodes; i++) {
        int slot = r->nodes[i];
        uint64_t id = wait_member_id(E, slot, 10000);
        if (!id) {
            snprintf(err, err_len, "target etcd: restored member %s does not answer",
                     E->c.m[slot - 1].name);
            return FL_EIO;
        }
        E->c.m[slot - 1].id = id;
        E->c.ids.id[slot - 1] = id;
    }
    for (int i = 0; i < E->n; i++)
        lv_proxy_reset_unidentified(&E->c.proxy[i]);
    return FL_OK;
}

int run_etcd_restore(struct run_world *rw, const uint8_t *data, size_t len, const int *nodes,
                     int n_nodes, bool skip_hash_check, char *err, size_t err_len)
{
    struct run_etcd *E = rw->etcd;
    err[0] = 0;
    if (n_nodes <= 0 || n_nodes > E->n) {
        snprintf(err, err_len, "restore needs between 1 and %d nodes", E->n);
        return FL_EINVAL;
    }
    for (int i = 0; i < n_nodes; i++)
        if (nodes[i] < 1 || nodes[i] > E->n) {
            snprintf(err, err_len, "restore names a node that does not exist");
            return FL_EINVAL;
        }
    struct restore r;
    restore_init(&r, E, nodes, n_nodes);
    int rc = restore_dirs(&r, data, len, skip_hash_check, err, err_len);
    if (!rc) /* every member named stops and switches, even past a failed switch */
        for (int i = 0; i < n_nodes; i++)
            if (restore_switch(&r, nodes[i], err, err_len))
                rc = FL_EIO;
    if (!rc)
        rc = restore_start(&r, err, err_len);
    restore_close(&r);
    return rc;
}
