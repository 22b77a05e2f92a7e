/*
 * run_target_etcd_converge.c: converge on the etcd target: HashKV of every member at one
 * revision through etcdctl, at the end (run_etcd_converged) and every CHECKPOINT_MS while
 * the run goes (etcd's corruption check, from outside).
 */
#include "harness/run/run_converge_hash.h"
#include "harness/run/run_etcd_int.h"

#include <fcntl.h>
#include <signal.h>

/* etcdctl endpoint hashkv -w json's answer among its log lines: FL_OK with the hash
 * and the compact revision, else FL_EIO. */
static int hashkv_parse(const char *out, uint32_t *hash, int64_t *compact)
{
    /* stdout's one JSON line among stderr's log lines: the one that opens with '[' */
    const char *line = NULL;
    for (const char *q = out; q && *q; q = strchr(q, '\n') ? strchr(q, '\n') + 1 : NULL)
        if (*q == '[')
            line = q;
    /* member and cluster ids pass 2^63: numbers as reals (hash and revisions fit) */
    json_t *a = line ? json_loadb(line, strcspn(line, "\n"), JSON_DECODE_INT_AS_REAL, NULL) : NULL;
    const json_t *h = json_object_get(json_array_get(a, 0), "HashKV");
    int rc = FL_EIO;
    if (json_is_object(h)) {
        *hash = (uint32_t)json_number_value(json_object_get(h, "hash"));
        *compact = (int64_t)json_number_value(json_object_get(h, "compact_revision"));
        rc = FL_OK;
    }
    json_decref(a);
    return rc;
}

/* `etcdctl endpoint hashkv --rev REVS` against one member, as argv (HASHKV_ARGC entries,
 * the last NULL): the same command for the checkpoint that waits for it and for the
 * periodic check that does not. */
#define HASHKV_ARGC 12
static void hashkv_argv(struct run_etcd *E, int slot, char *ctl, char *revs, char **argv)
{
    char *a[HASHKV_ARGC] = {ctl,
                            "--endpoints",
                            E->c.m[slot - 1].direct_url,
                            "--command-timeout",
                            "2s",
                            "endpoint",
                            "hashkv",
                            "--rev",
                            revs,
                            "-w",
                            "json",
                            NULL};
    memcpy(argv, a, sizeof a);
}

/* HashKV of one member at revision rev through etcdctl (gRPC: the 3.4 gateway's
 * /v3/maintenance/hash is Hash, the whole backend's, not HashKV). FL_OK with the hash
 * and compact revision, else etcdctl's error in err. */
static int member_hash_kv(void *ud, int slot, int64_t rev, uint32_t *hash, int64_t *compact,
                          char *err, size_t err_len)
{
    struct run_etcd *E = ud; /* a run_hash_kv_fn (run_converge_hash.h) */
    char *ctl = lv_etcdctl_find(E->bin), revs[32];
    snprintf(revs, sizeof revs, "%lld", (long long)rev);
    struct fl_buf log, out;
    fl_buf_init(&log);
    fl_buf_init(&out);
    fl_buf_printf(&log, "%s/etcdctl-hashkv.log", E->wd.path);
    char *argv[HASHKV_ARGC];
    hashkv_argv(E, slot, ctl, revs, argv);
    int st = lv_etcdctl_run(&E->loop, (const char *const *)argv, fl_buf_cstr(&log), 5000, &out);
    int rc = st == 0 ? hashkv_parse(fl_buf_cstr(&out), hash, compact) : FL_EIO;
    if (st != 0)
        run_etcd__etcdctl_error(fl_buf_cstr(&out), err, err_len);
    else if (rc)
        snprintf(err, err_len, "etcdctl endpoint hashkv: no answer in its output");
    free(ctl);
    fl_buf_close(&log);
    fl_buf_close(&out);
    return rc;
}

/* The members converge counts (running members of the leader's cluster, not removed),
 * each as an object in members; their slots in slots. Returns the revision they all
 * report, or -1 with the reason in d's "why". */
static int64_t converge_members(struct run_etcd *E, int lead, json_t *d, json_t *members,
                                int *slots, int *n)
{
    uint64_t cluster = E->b[lead].cluster_id;
    int64_t rev = -1;
    bool same = true;
    *n = 0;
    for (int i = 1; i <= E->n; i++) {
        const struct lv_etcd_member *m = &E->c.m[i - 1];
        /* removed, or a member of another cluster (the stale one after a restore, by
         * its last Status) does not count */
        if (E->b[i].removed || (E->b[i].cluster_id && E->b[i].cluster_id != cluster))
            continue;
        /* the last polled Status (a member that is not ready, e.g. cut off from its
         * quorum at start, leaves a call hanging: no waiting on it here) */
        const struct lv_etcd_status *st = &E->b[i].st;
        bool up = m->proc.running && !m->proc.paused && E->b[i].st_ok;
        json_t *o = json_object();
        json_object_set_new(o, "node", json_integer(i));
        json_array_append_new(members, o);
        if (!up) {
            json_object_set_new(o, "state", json_string("down or not answering Status"));
            same = false;
            continue;
        }
        json_object_set_new(o, "revision", json_integer((json_int_t)st->revision));
        if (rev >= 0 && (int64_t)st->revision != rev)
            same = false;
        rev = (int64_t)st->revision;
        slots[(*n)++] = i;
    }
    if (!same || !*n) {
        json_object_set_new(
            d, "why", json_string(*n ? "members at different revisions" : "no member answers"));
        return -1;
    }
    return rev;
}

bool run_etcd_converged(struct run_world *rw, json_t **state)
{
    struct run_etcd *E = rw->etcd;
    json_t *d = json_object(), *members = json_array();
    *state = d;
    json_object_set_new(d, "members", members);
    json_object_set_new(d, "how",
                        json_string("etcdctl endpoint hashkv at the revision every "
                                    "member of the leader's cluster reports"));
    int lead = run_etcd_leader(rw);
    if (!lead) {
        json_object_set_new(d, "why", json_string("no leader"));
        return false;
    }
    int slots[LV_NODES_MAX], n;
    int64_t rev = converge_members(E, lead, d, members, slots, &n);
    if (rev < 0)
        return false;
    return run_converge_hash(d, slots, n, rev, member_hash_kv, E, NULL);
}

/* A checkpoint of converge (etcd's corruption check, from outside): the lowest revision
 * every running member of the leader's cluster has reached, if new, hashed by HashKV on
 * each, by etcdctl processes run alongside (uv_spawn: the run does not wait for them;
 * each has its own 2 s command timeout). A member whose HashKV fails there (compacted
 * past it, not answering) is left out of that comparison. */
struct ckpt_job {
    struct ckpt *k;
    uv_process_t proc;
    int slot;
    bool done, ok;
    uint32_t hash;
    int64_t compact;
    char log[4200];
};

struct ckpt {
    struct run_etcd *E;
    int64_t rev;
    int n, running;
    struct ckpt_job job[LV_NODES_MAX];
};

static void ckpt_finish(struct ckpt *k)
{
    struct run_etcd *E = k->E;
    json_t *seen = json_array();
    int compared = 0;
    bool differ = false;
    uint32_t hash0 = 0;
    int64_t compact0 = 0;
    for (int i = 0; i < k->n; i++) {
        struct ckpt_job *j = &k->job[i];
        /* as etcd's own corruption check: hashes compare only at one compact revision
         * (a compaction is applied by each member in its own time) */
        if (!j->ok || (compared && j->compact != compact0))
            continue;
        json_array_append_new(seen,
                              json_pack("{s:i,s:I}", "node", j->slot, "hash", (json_int_t)j->hash));
        if (compared++ == 0) {
            hash0 = j->hash;
            compact0 = j->compact;
        } else if (j->hash != hash0) {
            differ = true;
        }
    }
    if (compared >= 2 && !E->closing)
        E->checkpoints++;
    if (differ && !E->corruption && !E->closing)
        E->corruption = json_pack("{s:I,s:o}", "revision", (json_int_t)k->rev, "members", seen);
    else
        json_decref(seen);
    if (E->ckpt == k)
        E->ckpt = NULL;
    free(k);
}

static void ckpt_closed(uv_handle_t *h)
{
    struct ckpt_job *j = h->data;
    struct ckpt *k = j->k;
    if (--k->running == 0)
        ckpt_finish(k);
}

static void ckpt_exit(uv_process_t *p, int64_t status, int sig)
{
    struct ckpt_job *j = p->data;
    j->done = true;
    if (status == 0 && sig == 0) {
        struct fl_buf out;
        fl_buf_init(&out);
        FILE *f = fopen(j->log, "r");
        char chunk[4096];
        size_t n;
        while (f && (n = fread(chunk, 1, sizeof chunk, f)) > 0)
            fl_buf_append(&out, chunk, n);
        if (f)
            fclose(f);
        j->ok = hashkv_parse(fl_buf_cstr(&out), &j->hash, &j->compact) == FL_OK;
        fl_buf_close(&out);
    }
    uv_close((uv_handle_t *)p, ckpt_closed);
}

void run_etcd__checkpoint(struct run_etcd *E)
{
    int lead = run_etcd_leader(E->rw);
    if (!lead || E->corruption || E->ckpt)
        return;
    uint64_t cluster = E->b[lead].cluster_id;
    struct ckpt *k = fl_calloc(1, sizeof *k);
    k->E = E;
    k->rev = INT64_MAX;
    for (int i = 1; i <= E->n; i++) {
        const struct bridge *b = &E->b[i];
        const struct lv_proc *p = &E->c.m[i - 1].proc;
        if (b->removed || !b->st_ok || !p->running || p->paused || b->cluster_id != cluster)
            continue;
        k->job[k->n++].slot = i;
        k->rev = FL_MIN(k->rev, (int64_t)b->st.revision);
    }
    if (k->n < 2 || k->rev <= E->checkpoint_rev) {
        free(k);
        return;
    }
    E->checkpoint_rev = k->rev;
    char *ctl = lv_etcdctl_find(E->bin), revs[32];
    snprintf(revs, sizeof revs, "%lld", (long long)k->rev);
    for (int i = 0; i < k->n; i++) {
        struct ckpt_job *j = &k->job[i];
        j->k = k;
        snprintf(j->log, sizeof j->log, "%s/etcdctl-checkpoint-%d.log", E->wd.path, j->slot);
        uv_fs_t req;
        int fd = uv_fs_open(NULL, &req, j->log, O_WRONLY | O_CREAT | O_TRUNC, 0644, NULL);
        uv_fs_req_cleanup(&req);
        char *argv[HASHKV_ARGC];
        hashkv_argv(E, j->slot, ctl, revs, argv);
        uv_stdio_container_t io[3] = {
            {.flags = UV_IGNORE},
            {.flags = fd >= 0 ? UV_INHERIT_FD : UV_IGNORE, .data.fd = fd},
            {.flags = fd >= 0 ? UV_INHERIT_FD : UV_IGNORE, .data.fd = fd}};
        uv_process_options_t o = {
            .exit_cb = ckpt_exit, .file = ctl, .args = argv, .stdio_count = 3, .stdio = io};
        j->proc.data = j;
        if (uv_spawn(&E->loop, &j->proc, &o) == 0)
            k->running++;
        else
            j->done = true;
        if (fd >= 0) {
            uv_fs_close(NULL, &req, fd, NULL);
            uv_fs_req_cleanup(&req);
        }
    }
    free(ctl);
    if (k->running == 0)
        ckpt_finish(k);
    else
        E->ckpt = k;
}

/* At close: the checkpoint's etcdctl processes still running are killed, and waited for. */
void run_etcd__checkpoint_stop(struct run_etcd *E)
{
    struct ckpt *k = E->ckpt;
    if (!k)
        return;
    for (int i = 0; i < k->n; i++)
        if (!k->job[i].done && k->job[i].proc.data)
            uv_process_kill(&k->job[i].proc, SIGKILL);
    while (E->ckpt)
        uv_run(&E->loop, UV_RUN_ONCE);
}

int run_etcd_checkpoints(struct run_world *rw, const json_t **corruption)
{
    struct run_etcd *E = rw->etcd;
    *corruption = E ? E->corruption : NULL;
    return E ? E->checkpoints : 0;
}
