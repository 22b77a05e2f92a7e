/*
 * backup.h: a member's db image and the backup file built from it (etcd's
 * `snapshot save` / `etcdutl snapshot restore`). Pure: bytes in, bytes out; the
 * SHA-256 comes from OpenSSL's libcrypto (EVP), as DESIGN §1 asks.
 *
 * The db image ("db file") is what a member keeps on its disk as its backend:
 *   "FLDB" u32 version, u64 cluster_id, u64 applied index, u64 term,
 *   u32 member count, per member (u64 id, u32 node, u32 learner),
 *   u32 alarm count, per alarm (u64 member, u32 type),
 *   bytes mvcc snapshot (nodes/mvcc encoding), then free-page padding (zero bytes)
 *   so that the image is as large as the simulated backend (mvcc size model): a
 *   backup taken before a defrag is larger than one taken after, as in etcd.
 * A backup is "FLBK" u32 version, the db image, then the SHA-256 of everything
 * before it (32 bytes). A raw copy of the db file (copy_db) has no hash: restore
 * accepts it only with skip_hash_check.
 */
#ifndef FL_SERVER_BACKUP_H
#define FL_SERVER_BACKUP_H

#include "harness/common/common.h"

#define SRV_BACKUP_MEMBERS_MAX   16
#define SRV_BACKUP_PAD_MAX_BYTES (64u << 20) /* free pages materialised at most */

struct srv_db_member {
    uint64_t id;
    uint32_t node;
    bool learner;
};

/* A decoded image. mvcc points into the decoded buffer (no copy). */
struct srv_db_image {
    uint64_t cluster_id;
    uint64_t index;
    uint64_t term;
    struct srv_db_member members[SRV_BACKUP_MEMBERS_MAX];
    uint32_t members_count;
    struct {
        uint64_t member;
        uint32_t type;
    } alarms[SRV_BACKUP_MEMBERS_MAX];
    uint32_t alarms_count;
    const uint8_t *mvcc;
    size_t mvcc_len;
};

/* Appends the db image to out, padded with zeros up to size_bytes (capped). */
void srv_db_encode(const struct srv_db_image *img, int64_t size_bytes, struct fl_buf *out);
/* The same in two steps, so the MVCC bytes can be encoded straight into out:
 * _begin writes everything before them (img->mvcc is ignored) and returns a mark;
 * append the MVCC bytes; _end fixes their length and pads. */
size_t srv_db_encode_begin(const struct srv_db_image *img, struct fl_buf *out, size_t *start);
void srv_db_encode_end(struct fl_buf *out, size_t start, size_t mark, int64_t size_bytes);
/* Wraps a db image into a backup with its SHA-256. */
void srv_backup_wrap(const uint8_t *db, size_t db_len, struct fl_buf *out);

enum srv_backup_err {
    SRV_BACKUP_OK = 0,
    SRV_BACKUP_BAD_FORMAT,    /* neither a backup nor a db image, or truncated */
    SRV_BACKUP_HASH_MISMATCH, /* a backup whose SHA-256 does not match */
    SRV_BACKUP_NO_HASH        /* a raw db copy without skip_hash_check */
};
/* etcdutl's text for each error ("" for OK); for a hash mismatch only its start
 * ("expected sha256"): srv_backup_err_format gives the whole text. */
const char *srv_backup_err_text(enum srv_backup_err e);
/* etcdctl/etcdutl snapshot restore's whole error text for e, the judgement of
 * srv_backup_open on (data, len): for a hash mismatch "expected sha256 [..], got [..]",
 * the digest stored in the backup then the one computed, each as Go's %v prints a byte
 * slice (decimal bytes between brackets). Writes at most text_len bytes, NUL included. */
void srv_backup_err_format(enum srv_backup_err e, const uint8_t *data, size_t len, char *text,
                           size_t text_len);

/* Decodes a backup (checks its hash unless skip_hash_check) or, with
 * skip_hash_check, a raw db image. img points into data. */
enum srv_backup_err srv_backup_open(const uint8_t *data, size_t len, bool skip_hash_check,
                                    struct srv_db_image *img);

/* SHA-256 of p[0..n) into out[32]. */
void srv_sha256(const void *p, size_t n, uint8_t out[32]);

#endif
