/*
 * storage.c: a member's files on its simulated disk: WAL segments ("wal/<seq>.wal",
 * records of wal.h, rotated after each local snapshot so old segments can go) and
 * snapshot files ("snap/<index>.snap": [u32 len][u32 CRC32C][index, term,
 * configuration, image], written under a temporary name and renamed once durable).
 * Recovery reads them back; the restore tool writes a fresh data dir.
 */
#include "nodes/server/srv_int.h"

#include <inttypes.h>

/* ---- WAL files ---------------------------------------------------------------- */

void srv_wal_segment_name(char *out, size_t cap, uint64_t seq)
{
    snprintf(out, cap, "wal/%016" PRIx64 ".wal", seq);
}

struct name_list {
    char **names;
    size_t n;
};

static void collect_name(const char *name, uint64_t size, void *ctx)
{
    (void)size;
    struct name_list *l = ctx;
    l->names = fl_realloc(l->names, (l->n + 1) * sizeof *l->names);
    l->names[l->n++] = fl_strdup(name);
}

static void name_list_free(struct name_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->names[i]);
    free(l->names);
}

/* The fsync callbacks below get what they need in the context pointer itself (a
 * segment's sequence number, a snapshot's index), not in memory of their own: a
 * callback never runs when the process dies first, and its memory would leak. */

/* The new segment is durable: segments older than it (not older than the current
 * one, which may be newer and not yet durable) can go. ctx: its sequence number. */
static void on_rotate_synced(struct fl_env *env, void *ctx, int err)
{
    char name[48]; /* the segment whose fsync completed */
    srv_wal_segment_name(name, sizeof name, (uint64_t)(uintptr_t)ctx);
    if (!err) {
        struct name_list l = {0};
        env_file_list(env, "wal/", collect_name, &l);
        for (size_t i = 0; i < l.n; i++)
            if (strcmp(l.names[i], name) < 0)
                env_file_remove(env, l.names[i]);
        name_list_free(&l);
    }
}

void srv_wal_rotate(struct srv_member *m)
{
    struct fl_buf b;
    fl_buf_init(&b);
    fl_buf_reserve(&b, SRV_WAL_SEGMENT_BYTES);
    srv_wal_put_meta(&b, m->id, m->cluster_id);
    if (m->disk.log.snap_index)
        srv_wal_put_snapshot(&b, m->disk.log.snap_index, m->disk.log.snap_term, false);
    srv_wal_put_hardstate(&b, m->disk.log.term, m->disk.log.vote, m->disk.log.commit);
    /* The mirror keeps no bytes (see srv_wal_state.no_data): they come from the Raft
     * log, where an entry with the same index and term is the same entry. Should the
     * log no longer hold one as persisted, this rotation waits for the next one. */
    for (size_t i = 0; i < m->disk.log.n_entries; i++) {
        const struct srv_wal_entry *e = &m->disk.log.entries[i];
        const void *data = e->data;
        if (!data && e->len) {
            const struct raft_entry *re = raft_entry_get(m->raft, e->index);
            if (!re || re->term != e->term || re->len != e->len) {
                fl_buf_close(&b);
                return;
            }
            data = re->data;
        }
        srv_wal_put_entry(&b, e->term, e->index, e->type, data, e->len);
    }
    m->disk.wal_seq++;
    srv_wal_segment_name(m->disk.wal_name, sizeof m->disk.wal_name, m->disk.wal_seq);
    env_file_put(m->env, m->disk.wal_name, &b); /* takes b, capacity and all */
    env_file_fsync(m->env, m->disk.wal_name, on_rotate_synced, (void *)(uintptr_t)m->disk.wal_seq);
}

/* ---- snapshot files ----------------------------------------------------------- */

static void conf_put(struct fl_buf *b, const struct raft_conf_state *c)
{
    srv_put_u32(b, c->voters_count);
    for (uint32_t i = 0; i < c->voters_count; i++)
        srv_put_u64(b, c->voters[i]);
    srv_put_u32(b, c->learners_count);
    for (uint32_t i = 0; i < c->learners_count; i++)
        srv_put_u64(b, c->learners[i]);
}

static bool conf_get(struct srv_reader *r, struct raft_conf_state *c)
{
    memset(c, 0, sizeof *c);
    c->voters_count = srv_get_u32(r);
    if (c->voters_count > RAFT_NODES_MAX)
        return false;
    for (uint32_t i = 0; i < c->voters_count; i++)
        c->voters[i] = srv_get_u64(r);
    c->learners_count = srv_get_u32(r);
    if (c->learners_count > RAFT_NODES_MAX)
        return false;
    for (uint32_t i = 0; i < c->learners_count; i++)
        c->learners[i] = srv_get_u64(r);
    return !r->bad;
}

/* Completion of an fsync whose durability a later fsync of the same disk covers. */
void srv_fsync_ignore(struct fl_env *env, void *ctx, int err)
{
    (void)env;
    (void)err;
    (void)ctx;
}

static void snap_names(uint64_t index, char *name, size_t name_cap, char *tmp, size_t tmp_cap)
{
    snprintf(name, name_cap, "snap/%016" PRIx64 ".snap", index);
    snprintf(tmp, tmp_cap, "%s.tmp", name);
}

static void snap_prune(struct fl_env *env)
{
    struct name_list l = {0};
    env_file_list(env, "snap/", collect_name, &l);
    size_t finals = 0;
    for (size_t i = 0; i < l.n; i++)
        finals += strstr(l.names[i], ".tmp") == NULL;
    for (size_t i = 0; i < l.n && finals > 2; i++) {
        if (strstr(l.names[i], ".tmp"))
            continue;
        env_file_remove(env, l.names[i]);
        finals--;
    }
    name_list_free(&l);
}

/* The snapshot file is durable: give it its name (an atomic rename, like etcd's
 * snapshotter and its defrag's "rename the new db file over the old one"). */
static void on_snap_synced(struct fl_env *env, void *ctx, int err)
{
    char name[48], tmp[56]; /* ctx: the snapshot's index */
    snap_names((uint64_t)(uintptr_t)ctx, name, sizeof name, tmp, sizeof tmp);
    if (!err) {
        struct env_fault_hit hit;
        if (env_failpoint(env, FLT_SERVER_DEFRAG_BEFORE_RENAME, &hit) != ENV_FAULT_CRASH) {
            env_file_rename(env, tmp, name);
            if (env_failpoint(env, FLT_RAFT_AFTER_SAVE_SNAP, &hit) != ENV_FAULT_CRASH)
                snap_prune(env);
        }
    }
}

size_t srv_snap_file_begin(struct fl_buf *f, uint64_t index, uint64_t term,
                           const struct raft_conf_state *conf)
{
    srv_put_u32(f, 0); /* payload length and CRC, fixed by _finish */
    srv_put_u32(f, 0);
    srv_put_u64(f, index);
    srv_put_u64(f, term);
    conf_put(f, conf);
    srv_put_u32(f, 0); /* data length, fixed by _finish */
    return f->len;
}

void srv_snap_file_finish(struct fl_env *env, uint64_t index, struct fl_buf *f, size_t data_off,
                          bool atomic)
{
    size_t dlen = f->len - data_off;
    FL_ASSERT(dlen <= UINT32_MAX);
    for (int i = 0; i < 4; i++)
        f->data[data_off - 4 + (size_t)i] = (uint8_t)(dlen >> (8 * i));
    uint32_t plen = (uint32_t)(f->len - 8), crc = fl_crc32c(0, f->data + 8, f->len - 8);
    for (int i = 0; i < 4; i++) {
        f->data[i] = (uint8_t)(plen >> (8 * i));
        f->data[4 + i] = (uint8_t)(crc >> (8 * i));
    }
    char name[48], tmp[56];
    snap_names(index, name, sizeof name, tmp, sizeof tmp);
    if (atomic) {
        env_file_remove(env, tmp);
        env_file_put(env, tmp, f);
        env_file_fsync(env, tmp, on_snap_synced, (void *)(uintptr_t)index);
    } else {
        env_file_remove(env, name);
        env_file_put(env, name, f);
        env_file_fsync(env, name, srv_fsync_ignore, NULL);
    }
    fl_buf_close(f);
}

void srv_snap_file_write(struct fl_env *env, uint64_t index, uint64_t term,
                         const struct raft_conf_state *conf, const uint8_t *data, size_t len,
                         bool atomic)
{
    struct fl_buf f;
    fl_buf_init(&f);
    fl_buf_reserve(&f, 8 + 16 + 8 + 16 * RAFT_NODES_MAX + 4 + len);
    size_t off = srv_snap_file_begin(&f, index, term, conf);
    fl_buf_append(&f, data, len);
    srv_snap_file_finish(env, index, &f, off, atomic);
}

/* Parses snapshot file bytes p[0..n): CRC, index, term, configuration and a view of
 * the data inside p. False when it does not pass. */
static bool snap_parse(const uint8_t *p, size_t n, uint64_t *index, uint64_t *term,
                       struct raft_conf_state *conf, const uint8_t **data, size_t *len)
{
    if (n < 8)
        return false;
    struct srv_reader h = {p, n, 0, false};
    uint32_t plen = srv_get_u32(&h), crc = srv_get_u32(&h);
    if (n - 8 < plen || fl_crc32c(0, p + 8, plen) != crc)
        return false;
    struct srv_reader r = {p + 8, plen, 0, false};
    *index = srv_get_u64(&r);
    *term = srv_get_u64(&r);
    if (!conf_get(&r, conf))
        return false;
    *len = srv_get_bytes(&r, data);
    if (!*data)
        *data = (const uint8_t *)"";
    return !r.bad;
}

/* Reads the newest snapshot file that passes its CRC. Returns false when none.
 * *data is malloc'd (caller frees). */
bool srv_snap_file_read(struct fl_env *env, uint64_t *index, uint64_t *term,
                        struct raft_conf_state *conf, uint8_t **data, size_t *len)
{
    struct name_list l = {0};
    bool found = false;
    env_file_list(env, "snap/", collect_name, &l);
    for (size_t k = l.n; k-- > 0 && !found;) {
        const uint8_t *p, *d;
        size_t n;
        if (strstr(l.names[k], ".tmp"))
            continue; /* never renamed: its fsync did not complete */
        if (env_file_view(env, l.names[k], &p, &n) != FL_OK ||
            !snap_parse(p, n, index, term, conf, &d, len))
            continue;
        *data = fl_memdup(d, *len ? *len : 1);
        found = true;
    }
    name_list_free(&l);
    return found;
}

bool srv_snap_file_view(struct fl_env *env, uint64_t index, const uint8_t **data, size_t *len)
{
    char name[48], tmp[56];
    snprintf(name, sizeof name, "snap/%016" PRIx64 ".snap", index);
    snprintf(tmp, sizeof tmp, "%s.tmp", name);
    const char *names[2] = {name, tmp};
    for (int i = 0; i < 2; i++) {
        const uint8_t *p;
        size_t n;
        uint64_t fi, ft;
        struct raft_conf_state conf;
        if (env_file_view(env, names[i], &p, &n) == FL_OK &&
            snap_parse(p, n, &fi, &ft, &conf, data, len) && fi == index)
            return true;
    }
    return false;
}

void srv_wal_replay_disk(struct fl_env *env, struct srv_wal_state *st, uint64_t *seq, char *name,
                         size_t name_cap)
{
    struct name_list l = {0};
    env_file_list(env, "wal/", collect_name, &l);
    *seq = 0;
    for (size_t i = 0; i < l.n; i++) {
        const uint8_t *p;
        size_t n;
        if (env_file_view(env, l.names[i], &p, &n) != FL_OK)
            continue;
        srv_wal_replay(st, p, n);
        if (st->torn)
            env_file_truncate(env, l.names[i], st->valid_bytes); /* drop the torn tail */
        uint64_t s = strtoull(l.names[i] + 4, NULL, 16);
        if (s >= *seq) {
            *seq = s;
            snprintf(name, name_cap, "%s", l.names[i]);
        }
    }
    name_list_free(&l);
}

int srv_disk_write_restored(struct fl_env *env, uint64_t member_id, uint64_t cluster_id,
                            const struct srv_db_image *img, const struct raft_conf_state *conf,
                            uint64_t index)
{
    env_files_wipe(env);
    struct fl_buf db;
    fl_buf_init(&db);
    struct srv_db_image copy = *img;
    copy.cluster_id = cluster_id;
    copy.index = index;
    copy.term = 1;
    copy.members_count = 0;
    srv_db_encode(&copy, 0, &db);
    srv_snap_file_write(env, index, 1, conf, db.data, db.len, false);
    fl_buf_close(&db);
    struct fl_buf b;
    fl_buf_init(&b);
    srv_wal_put_meta(&b, member_id, cluster_id);
    srv_wal_put_snapshot(&b, index, 1, true);
    srv_wal_put_hardstate(&b, 1, 0, index);
    char name[48];
    srv_wal_segment_name(name, sizeof name, 1);
    int err = env_file_write(env, name, 0, b.data, b.len);
    fl_buf_close(&b);
    return err;
}
