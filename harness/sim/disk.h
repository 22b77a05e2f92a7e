/*
 * disk.h: one in-memory disk per process (DESIGN §3.2). A disk holds named files;
 * each file has what was written (visible to reads at once) and what is durable.
 * fsync is asynchronous: it completes after a simulated latency (default 1 ms;
 * fsyncs of one disk complete in call order) and only then is the data durable.
 *
 * A crash (sim_proc_kill) keeps only durable data: each file goes back to its
 * content as of its last completed fsync. When tearing is on (disk_set_tear, or
 * the failpoint disk/torn_write fires at the crash), the last unsynced write is
 * torn at 512-byte sector granularity: a random number (disk RNG stream
 * "disk/<proc name>") of its leading sectors survives, the rest is lost; a gap
 * before it reads as zeros. Metadata operations (create, rename, remove,
 * truncate) are durable at once, like a journaled filesystem after the directory
 * fsync etcd does.
 *
 * Failpoints (through the world's fault hook, decided for the disk's process):
 * disk/write_eio (write/append/truncate fail with FL_EIO, nothing written),
 * disk/fsync_eio (the fsync completes with FL_EIO and nothing becomes durable),
 * disk/read_eio (a latent read error: read/view fail with FL_EIO),
 * disk/torn_write (checked at crash: tear the last unsynced write).
 *
 * Every call on the disk of a DOWN process fails with FL_EDOWN. Names are any
 * NUL-terminated strings ("wal/0000.wal"); there are no directories, list()
 * filters by prefix and returns names in byte order.
 */
#ifndef FL_SIM_DISK_H
#define FL_SIM_DISK_H

#include "harness/sim/sim.h"

#define DISK_SECTOR_BYTES 512

/* Writes p[0..n) at off, growing the file (zero-filled gap) and creating it if
 * absent. FL_OK, FL_EIO (failpoint), FL_EDOWN. */
int disk_write(struct sim_world *w, int proc, const char *name, uint64_t off, const void *p,
               size_t n);
int disk_append(struct sim_world *w, int proc, const char *name, const void *p, size_t n);
/* Writes *content as the whole of file `name` (created if absent; when it is not
 * empty this is disk_write at offset 0) without copying: the file takes the buffer
 * and *content is left closed, whatever the result. Faults and stats as disk_write. */
int disk_write_file(struct sim_world *w, int proc, const char *name, struct fl_buf *content);
/* Copies up to n bytes from off into buf; *got = bytes copied (0 at or past the
 * end). FL_ENOENT, FL_EIO (failpoint), FL_EDOWN. */
int disk_read(struct sim_world *w, int proc, const char *name, uint64_t off, void *buf, size_t n,
              size_t *got);
/* Zero-copy read of the whole file: *p valid until the next call that mutates
 * this disk. FL_ENOENT, FL_EIO, FL_EDOWN. */
int disk_view(struct sim_world *w, int proc, const char *name, const uint8_t **p, size_t *len);
int disk_size(struct sim_world *w, int proc, const char *name, uint64_t *size);
bool disk_exists(struct sim_world *w, int proc, const char *name);
/* Creates an empty file if absent (durable at once). */
int disk_create(struct sim_world *w, int proc, const char *name);
int disk_truncate(struct sim_world *w, int proc, const char *name, uint64_t len);
/* Atomically renames (replacing `to` if it exists). FL_ENOENT if from is absent. */
int disk_rename(struct sim_world *w, int proc, const char *from, const char *to);
int disk_remove(struct sim_world *w, int proc, const char *name);
/* Calls fn for every file whose name starts with prefix ("" = all), in byte
 * order of names. fn must not mutate the disk. Returns the count or FL_EDOWN
 * (negative). */
typedef void disk_list_fn(const char *name, uint64_t size, void *ctx);
int disk_list(struct sim_world *w, int proc, const char *prefix, disk_list_fn *fn, void *ctx);

/* Starts an fsync of one file; cb(w, proc, err, ctx) runs in the process's
 * context after the fsync latency (err FL_OK, FL_EIO from disk/fsync_eio, or
 * FL_ENOENT if the file was removed meanwhile). Everything written to the file
 * before the completion is then durable. If the process dies first, cb is
 * never called. Returns FL_OK or FL_EDOWN (cb not called then). */
typedef void disk_fsync_fn(struct sim_world *w, int proc, int err, void *ctx);
int disk_fsync(struct sim_world *w, int proc, const char *name, disk_fsync_fn *cb, void *ctx);

/* Knobs. fsync latency default 1 ms (DESIGN §7). */
void disk_set_fsync_latency(struct sim_world *w, int proc, int64_t latency_ns);
/* Always tear the last unsynced write at a crash (default off; the failpoint
 * disk/torn_write can also decide per crash). */
void disk_set_tear(struct sim_world *w, int proc, bool on);
/* Erases every file (a replaced machine). Works on a DOWN process too. */
void disk_wipe(struct sim_world *w, int proc);

/* Per-file watermarks, for tests and reports: written = size, synced = bytes
 * that are durable from the start of the file (the durable length). */
int disk_watermarks(struct sim_world *w, int proc, const char *name, uint64_t *written,
                    uint64_t *synced);

struct disk_stats {
    uint64_t files;
    uint64_t bytes; /* sum of file sizes */
    uint64_t writes, write_bytes, fsyncs, reads, crashes, torn_writes;
};
void disk_stats_get(struct sim_world *w, int proc, struct disk_stats *out);

#endif
