/*
 * disk.c: the per-process in-memory disk (see disk.h for the model).
 *
 * Each file keeps its current bytes and a durable length; the durable content is
 * the current bytes up to that length with an undo log applied in reverse: every
 * write that overwrites bytes below the durable length first saves the old bytes.
 * A completed fsync makes the current state durable (durable length = size, undo
 * log cleared); a crash rolls every file back (undo in reverse, cut at the durable
 * length). Append-only files, the common case (WAL), never touch the undo log, so
 * fsync costs nothing per byte.
 *
 * fsync completion is a world-level event so that durability does not wait for a
 * paused process; only the callback is delivered in the process's context.
 */
#include "harness/sim/sim_int.h"

struct disk_undo {
    uint64_t off;
    size_t len;
    uint8_t bytes[];
};

struct disk_file {
    char *name;
    struct fl_buf data;
    uint64_t durable_len;
    struct disk_undo **undo;
    size_t nundo, cap_undo;
};

/* The last unsynced write, for a torn write at a crash. Its bytes at or past the
 * file's durable length stay in the file's buffer through a rollback (which only
 * shortens the length), so only the part that overwrote durable bytes is copied
 * (`below`); appends, the common case, copy nothing. */
struct disk_last_write {
    struct disk_file *file; /* NULL when there is no unsynced last write */
    uint64_t off;
    uint64_t len;
    struct fl_buf below; /* the written bytes that lie below the durable length */
};

struct disk {
    int proc;
    struct disk_file **files; /* sorted by name (byte order) */
    size_t nfiles, cap_files;
    int64_t fsync_latency_ns;
    int64_t fsync_done_ns; /* completion time of the last queued fsync */
    bool tear;
    struct disk_last_write last;
    struct disk_stats st;
    struct sim_rng *rng;
};

/* ---------------------------------------------------------------- files -------*/

static void undo_clear(struct disk_file *f)
{
    for (size_t i = 0; i < f->nundo; i++)
        free(f->undo[i]);
    f->nundo = 0;
}

static void file_free(struct disk_file *f)
{
    undo_clear(f);
    free(f->undo);
    fl_buf_close(&f->data);
    free(f->name);
    free(f);
}

/* Index of name, or of where it would be inserted (*found false). */
static size_t file_search(const struct disk *d, const char *name, bool *found)
{
    size_t lo = 0, hi = d->nfiles;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(d->files[mid]->name, name);
        if (c == 0) {
            *found = true;
            return mid;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = false;
    return lo;
}

static struct disk_file *file_find(const struct disk *d, const char *name)
{
    bool found;
    size_t i = file_search(d, name, &found);
    return found ? d->files[i] : NULL;
}

static void file_insert(struct disk *d, size_t at, struct disk_file *f)
{
    FL_GROW(d->files, d->cap_files, d->nfiles + 1, 16);
    memmove(&d->files[at + 1], &d->files[at], (d->nfiles - at) * sizeof(*d->files));
    d->files[at] = f;
    d->nfiles++;
}

static struct disk_file *file_take(struct disk *d, size_t at)
{
    struct disk_file *f = d->files[at];
    memmove(&d->files[at], &d->files[at + 1], (d->nfiles - at - 1) * sizeof(*d->files));
    d->nfiles--;
    if (d->last.file == f)
        d->last.file = NULL;
    return f;
}

static struct disk_file *file_open(struct disk *d, const char *name, bool create)
{
    bool found;
    size_t i = file_search(d, name, &found);
    if (found)
        return d->files[i];
    if (!create)
        return NULL;
    struct disk_file *f = fl_calloc(1, sizeof(*f));
    f->name = fl_strdup(name);
    fl_buf_init(&f->data);
    file_insert(d, i, f);
    return f;
}

/* ---------------------------------------------------------------- lifecycle ---*/

struct disk *disk__new(struct sim_world *w, int proc)
{
    struct disk *d = fl_calloc(1, sizeof(*d));
    d->proc = proc;
    d->fsync_latency_ns = FL_MS;
    fl_buf_init(&d->last.below);
    struct fl_buf name;
    fl_buf_init(&name);
    fl_buf_printf(&name, "disk/%s", w->procs[proc].name);
    d->rng = sim_rng(w, fl_buf_cstr(&name));
    fl_buf_close(&name);
    return d;
}

static void disk_clear(struct disk *d)
{
    for (size_t i = 0; i < d->nfiles; i++)
        file_free(d->files[i]);
    d->nfiles = 0;
    d->last.file = NULL;
}

void disk__free(struct disk *d)
{
    if (!d)
        return;
    disk_clear(d);
    free(d->files);
    fl_buf_close(&d->last.below);
    free(d);
}

static struct disk *disk_of(struct sim_world *w, int proc)
{
    return sim__proc(w, proc)->disk;
}

/* NULL when the process is down (the caller returns FL_EDOWN). */
static struct disk *disk_live(struct sim_world *w, int proc)
{
    struct sim_proc *p = sim__proc(w, proc);
    return p->state == SIM_PROC_DOWN ? NULL : p->disk;
}

/* Asks the fault hook about a disk failpoint. CRASH kills the process. */
static enum sim_fault disk_fault(struct sim_world *w, int proc, enum flt_point fp,
                                 struct sim_fault_hit *hit)
{
    if (!sim_fault_check(w, proc, fp, hit))
        return SIM_FAULT_NONE;
    if (hit->action == SIM_FAULT_CRASH)
        sim_proc_kill(w, proc);
    return hit->action;
}

/* ---------------------------------------------------------------- crash -------*/

static void file_rollback(struct disk_file *f)
{
    FL_ASSERT(f->data.len >= f->durable_len);
    for (size_t i = f->nundo; i-- > 0;) {
        struct disk_undo *u = f->undo[i];
        if (u->off >= f->durable_len)
            continue;
        size_t n = (size_t)FL_MIN((uint64_t)u->len, f->durable_len - u->off);
        memcpy(f->data.data + u->off, u->bytes, n);
    }
    undo_clear(f);
    f->data.len = (size_t)f->durable_len;
}

/* Writes the surviving leading sectors of the last unsynced write back. Runs after
 * the rollback: bytes below the durable length come from the saved copy, the rest
 * are still in the buffer past its (rolled back) length. */
static void tear_last_write(struct disk *d)
{
    struct disk_file *f = d->last.file;
    uint64_t off = d->last.off, len = d->last.len;
    if (len == 0)
        return;
    uint64_t first = off / DISK_SECTOR_BYTES;
    uint64_t last = (off + len - 1) / DISK_SECTOR_BYTES;
    uint64_t kept_sectors = sim_rng_below(d->rng, last - first + 1);
    uint64_t end = (first + kept_sectors) * DISK_SECTOR_BYTES;
    d->st.torn_writes++;
    if (end <= off)
        return;
    uint64_t keep = FL_MIN(end, off + len) - off;
    FL_ASSERT(off + keep <= f->data.cap);
    if (off > f->data.len) /* the unsynced bytes before the write are lost: zeros */
        memset(f->data.data + f->data.len, 0, (size_t)(off - f->data.len));
    size_t saved = FL_MIN((size_t)keep, d->last.below.len);
    if (saved)
        memcpy(f->data.data + off, d->last.below.data, saved);
    if (off + keep > f->data.len)
        f->data.len = (size_t)(off + keep);
    f->durable_len = f->data.len;
}

void disk__crash(struct sim_world *w, int proc)
{
    struct disk *d = disk_of(w, proc);
    struct sim_fault_hit hit;
    bool tear = d->tear;
    if (d->last.file && !tear && sim_fault_check(w, proc, FLT_DISK_TORN_WRITE, &hit))
        tear = true;
    for (size_t i = 0; i < d->nfiles; i++)
        file_rollback(d->files[i]);
    if (tear && d->last.file)
        tear_last_write(d);
    d->last.file = NULL;
    d->fsync_done_ns = w->now_ns;
    d->st.crashes++;
}

/* ---------------------------------------------------------------- writes ------*/

static void save_undo(struct disk_file *f, uint64_t off, size_t n)
{
    if (off >= f->durable_len)
        return;
    size_t len = (size_t)(FL_MIN(off + n, f->durable_len) - off);
    struct disk_undo *u = fl_malloc(sizeof(*u) + len);
    u->off = off;
    u->len = len;
    memcpy(u->bytes, f->data.data + off, len);
    FL_GROW(f->undo, f->cap_undo, f->nundo + 1, 8);
    f->undo[f->nundo++] = u;
}

static void last_write_set(struct disk *d, struct disk_file *f, uint64_t off, const void *p,
                           size_t n)
{
    d->last.file = f;
    d->last.off = off;
    d->last.len = n;
    fl_buf_reset(&d->last.below);
    if (off < f->durable_len)
        fl_buf_append(&d->last.below, p, (size_t)FL_MIN((uint64_t)n, f->durable_len - off));
}

static void file_write(struct disk *d, struct disk_file *f, uint64_t off, const void *p, size_t n)
{
    save_undo(f, off, n);
    if (off > f->data.len) {
        size_t gap = (size_t)(off - f->data.len);
        fl_buf_reserve(&f->data, gap);
        memset(f->data.data + f->data.len, 0, gap);
        f->data.len += gap;
    }
    if (off + n > f->data.len)
        fl_buf_reserve(&f->data, (size_t)(off + n - f->data.len));
    if (n)
        memcpy(f->data.data + off, p, n);
    if (off + n > f->data.len)
        f->data.len = (size_t)(off + n);
    last_write_set(d, f, off, p, n);
    d->st.writes++;
    d->st.write_bytes += n;
}

/* The latent write error (disk/write_eio): FL_OK, else FL_EIO, or FL_EDOWN when the
 * fault took the process down. */
static int write_fault(struct sim_world *w, int proc)
{
    struct sim_fault_hit hit;
    if (disk_fault(w, proc, FLT_DISK_WRITE_EIO, &hit) != SIM_FAULT_NONE)
        return sim_proc_alive(w, proc) ? FL_EIO : FL_EDOWN;
    return FL_OK;
}

/* What a write does first: proc's live disk (FL_EDOWN without one), then the latent
 * write error. */
static int write_begin(struct sim_world *w, int proc, struct disk **d)
{
    *d = disk_live(w, proc);
    return *d ? write_fault(w, proc) : FL_EDOWN;
}

/* proc's live disk and where its file `name` stands: FL_EDOWN, FL_ENOENT or FL_OK. */
static int file_locate(struct sim_world *w, int proc, const char *name, struct disk **d, size_t *at)
{
    *d = disk_live(w, proc);
    if (!*d)
        return FL_EDOWN;
    bool found;
    *at = file_search(*d, name, &found);
    return found ? FL_OK : FL_ENOENT;
}

int disk_write(struct sim_world *w, int proc, const char *name, uint64_t off, const void *p,
               size_t n)
{
    struct disk *d;
    int rc = write_begin(w, proc, &d);
    if (rc)
        return rc;
    file_write(d, file_open(d, name, true), off, p, n);
    return FL_OK;
}

int disk_write_file(struct sim_world *w, int proc, const char *name, struct fl_buf *content)
{
    struct disk *d;
    int rc = write_begin(w, proc, &d);
    if (rc) {
        fl_buf_close(content);
        return rc;
    }
    struct disk_file *f = file_open(d, name, true);
    if (f->data.len || f->durable_len || f->nundo) {
        file_write(d, f, 0, content->data, content->len); /* not empty: a plain write */
        fl_buf_close(content);
        return FL_OK;
    }
    fl_buf_close(&f->data);
    f->data = *content;
    fl_buf_init(content);
    last_write_set(d, f, 0, f->data.data, f->data.len);
    d->st.writes++;
    d->st.write_bytes += f->data.len;
    return FL_OK;
}

int disk_append(struct sim_world *w, int proc, const char *name, const void *p, size_t n)
{
    struct disk *d;
    int rc = write_begin(w, proc, &d);
    if (rc)
        return rc;
    struct disk_file *f = file_open(d, name, true);
    file_write(d, f, f->data.len, p, n);
    return FL_OK;
}

int disk_create(struct sim_world *w, int proc, const char *name)
{
    struct disk *d = disk_live(w, proc);
    if (!d)
        return FL_EDOWN;
    file_open(d, name, true);
    return FL_OK;
}

int disk_truncate(struct sim_world *w, int proc, const char *name, uint64_t len)
{
    struct disk *d = disk_live(w, proc);
    if (!d)
        return FL_EDOWN;
    struct disk_file *f = file_open(d, name, false);
    if (!f)
        return FL_ENOENT;
    int rc = write_fault(w, proc);
    if (rc)
        return rc;
    if (len > f->data.len) {
        size_t gap = (size_t)(len - f->data.len);
        fl_buf_reserve(&f->data, gap);
        memset(f->data.data + f->data.len, 0, gap);
        f->data.len += gap;
    } else {
        f->data.len = (size_t)len;
        if (f->durable_len > len)
            f->durable_len = len; /* metadata: durable at once */
    }
    if (d->last.file == f)
        d->last.file = NULL;
    return FL_OK;
}

int disk_rename(struct sim_world *w, int proc, const char *from, const char *to)
{
    struct disk *d;
    size_t i;
    int rc = file_locate(w, proc, from, &d, &i);
    if (rc)
        return rc;
    if (strcmp(from, to) == 0)
        return FL_OK;
    struct disk_file *f = d->files[i];
    struct disk_file *last = d->last.file;
    memmove(&d->files[i], &d->files[i + 1], (d->nfiles - i - 1) * sizeof(*d->files));
    d->nfiles--;
    bool found;
    size_t j = file_search(d, to, &found);
    if (found) {
        struct disk_file *old = file_take(d, j);
        file_free(old);
        if (last == old)
            last = NULL;
    }
    free(f->name);
    f->name = fl_strdup(to);
    j = file_search(d, to, &found);
    file_insert(d, j, f);
    d->last.file = last;
    return FL_OK;
}

int disk_remove(struct sim_world *w, int proc, const char *name)
{
    struct disk *d;
    size_t i;
    int rc = file_locate(w, proc, name, &d, &i);
    if (rc)
        return rc;
    file_free(file_take(d, i));
    return FL_OK;
}

void disk_wipe(struct sim_world *w, int proc)
{
    disk_clear(disk_of(w, proc));
}

/* ---------------------------------------------------------------- reads -------*/

/* What every read does first: the live disk, the file, the latent read error
 * (disk/read_eio), the read counter. */
static int read_open(struct sim_world *w, int proc, const char *name, struct disk_file **out)
{
    struct disk *d;
    size_t i;
    int rc = file_locate(w, proc, name, &d, &i);
    if (rc)
        return rc;
    struct disk_file *f = d->files[i];
    struct sim_fault_hit hit;
    if (disk_fault(w, proc, FLT_DISK_READ_EIO, &hit) != SIM_FAULT_NONE)
        return sim_proc_alive(w, proc) ? FL_EIO : FL_EDOWN;
    d->st.reads++;
    *out = f;
    return FL_OK;
}

int disk_read(struct sim_world *w, int proc, const char *name, uint64_t off, void *buf, size_t n,
              size_t *got)
{
    *got = 0;
    struct disk_file *f;
    int rc = read_open(w, proc, name, &f);
    if (rc)
        return rc;
    if (off >= f->data.len)
        return FL_OK;
    size_t k = (size_t)FL_MIN((uint64_t)n, f->data.len - off);
    if (k)
        memcpy(buf, f->data.data + off, k);
    *got = k;
    return FL_OK;
}

int disk_view(struct sim_world *w, int proc, const char *name, const uint8_t **p, size_t *len)
{
    *p = NULL;
    *len = 0;
    struct disk_file *f;
    int rc = read_open(w, proc, name, &f);
    if (rc)
        return rc;
    static const uint8_t empty[1];
    *p = f->data.len ? f->data.data : empty;
    *len = f->data.len;
    return FL_OK;
}

int disk_size(struct sim_world *w, int proc, const char *name, uint64_t *size)
{
    *size = 0;
    struct disk *d;
    size_t i;
    int rc = file_locate(w, proc, name, &d, &i);
    if (rc)
        return rc;
    *size = d->files[i]->data.len;
    return FL_OK;
}

bool disk_exists(struct sim_world *w, int proc, const char *name)
{
    struct disk *d = disk_live(w, proc);
    return d && file_find(d, name) != NULL;
}

int disk_list(struct sim_world *w, int proc, const char *prefix, disk_list_fn *fn, void *ctx)
{
    struct disk *d = disk_live(w, proc);
    if (!d)
        return -FL_EDOWN;
    size_t plen = prefix ? strlen(prefix) : 0;
    int count = 0;
    for (size_t i = 0; i < d->nfiles; i++) {
        const struct disk_file *f = d->files[i];
        if (plen && strncmp(f->name, prefix, plen) != 0)
            continue;
        if (fn)
            fn(f->name, f->data.len, ctx);
        count++;
    }
    return count;
}

int disk_watermarks(struct sim_world *w, int proc, const char *name, uint64_t *written,
                    uint64_t *synced)
{
    struct disk_file *f = file_find(disk_of(w, proc), name);
    if (!f)
        return FL_ENOENT;
    *written = f->data.len;
    *synced = f->durable_len;
    return FL_OK;
}

void disk_stats_get(struct sim_world *w, int proc, struct disk_stats *out)
{
    struct disk *d = disk_of(w, proc);
    *out = d->st;
    out->files = d->nfiles;
    out->bytes = 0;
    for (size_t i = 0; i < d->nfiles; i++)
        out->bytes += d->files[i]->data.len;
}

/* ---------------------------------------------------------------- fsync -------*/

struct fsync_req {
    int proc;
    uint32_t incarnation;
    int err;
    disk_fsync_fn *cb;
    void *ctx;
    char name[];
};

static void fsync_cb(struct sim_world *w, void *ctx)
{
    struct fsync_req *r = ctx;
    r->cb(w, r->proc, r->err, r->ctx);
    free(r);
}

/* World-level: the data becomes durable even if the process is paused; the
 * callback then goes through the process (deferred while paused). */
static void fsync_done(struct sim_world *w, void *ctx)
{
    struct fsync_req *r = ctx;
    struct sim_proc *p = sim__proc(w, r->proc);
    if (p->incarnation != r->incarnation || p->state == SIM_PROC_DOWN) {
        free(r);
        return;
    }
    struct disk *d = p->disk;
    struct disk_file *f = file_find(d, r->name);
    if (!f && r->err == FL_OK)
        r->err = FL_ENOENT;
    if (f && r->err == FL_OK) {
        f->durable_len = f->data.len;
        undo_clear(f);
        if (d->last.file == f)
            d->last.file = NULL;
    }
    sim__run_in_proc(w, r->proc, SIM_EV_DISK, r->proc, r->proc, (uint64_t)r->err, fsync_cb, free,
                     r);
}

int disk_fsync(struct sim_world *w, int proc, const char *name, disk_fsync_fn *cb, void *ctx)
{
    FL_ASSERT(cb != NULL);
    struct disk *d = disk_live(w, proc);
    if (!d)
        return FL_EDOWN;
    struct sim_fault_hit hit;
    int64_t extra_ns = 0;
    int err = FL_OK;
    switch (disk_fault(w, proc, FLT_DISK_FSYNC_EIO, &hit)) {
    case SIM_FAULT_NONE:
        break;
    case SIM_FAULT_CRASH:
        return FL_EDOWN;
    case SIM_FAULT_DELAY:
        extra_ns = hit.delay_ns;
        break;
    default:
        err = FL_EIO;
        break;
    }
    size_t nlen = strlen(name);
    struct fsync_req *r = fl_malloc(sizeof(*r) + nlen + 1);
    r->proc = proc;
    r->incarnation = sim__proc(w, proc)->incarnation;
    r->err = err;
    r->cb = cb;
    r->ctx = ctx;
    memcpy(r->name, name, nlen + 1);
    int64_t start = FL_MAX(w->now_ns, d->fsync_done_ns);
    d->fsync_done_ns = start + d->fsync_latency_ns + extra_ns;
    d->st.fsyncs++;
    sim__schedule(w, d->fsync_done_ns, -1, SIM_EV_DISK, proc, proc, 0, fsync_done, free, r);
    return FL_OK;
}

void disk_set_fsync_latency(struct sim_world *w, int proc, int64_t latency_ns)
{
    FL_ASSERT(latency_ns >= 0);
    disk_of(w, proc)->fsync_latency_ns = latency_ns;
}

void disk_set_tear(struct sim_world *w, int proc, bool on)
{
    disk_of(w, proc)->tear = on;
}
