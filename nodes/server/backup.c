/*
 * backup.c: db image and backup encoding, decoding and SHA-256 integrity (see
 * backup.h).
 */
#include "nodes/server/backup.h"
#include "nodes/server/wal.h"

#include <openssl/evp.h>

#define DB_MAGIC       "FLDB"
#define BK_MAGIC       "FLBK"
#define FORMAT_VERSION 1u

void srv_sha256(const void *p, size_t n, uint8_t out[32])
{
    unsigned int outlen = 0;
    int ok = EVP_Digest(p, n, out, &outlen, EVP_sha256(), NULL);
    FL_ASSERT(ok == 1 && outlen == 32);
}

size_t srv_db_encode_begin(const struct srv_db_image *img, struct fl_buf *out, size_t *start)
{
    FL_ASSERT(img->members_count <= SRV_BACKUP_MEMBERS_MAX);
    FL_ASSERT(img->alarms_count <= SRV_BACKUP_MEMBERS_MAX);
    *start = out->len;
    fl_buf_append(out, DB_MAGIC, 4);
    srv_put_u32(out, FORMAT_VERSION);
    srv_put_u64(out, img->cluster_id);
    srv_put_u64(out, img->index);
    srv_put_u64(out, img->term);
    srv_put_u32(out, img->members_count);
    for (uint32_t i = 0; i < img->members_count; i++) {
        srv_put_u64(out, img->members[i].id);
        srv_put_u32(out, img->members[i].node);
        srv_put_u32(out, img->members[i].learner ? 1u : 0u);
    }
    srv_put_u32(out, img->alarms_count);
    for (uint32_t i = 0; i < img->alarms_count; i++) {
        srv_put_u64(out, img->alarms[i].member);
        srv_put_u32(out, img->alarms[i].type);
    }
    srv_put_u32(out, 0); /* MVCC length, fixed by _end */
    return out->len;
}

void srv_db_encode_end(struct fl_buf *out, size_t start, size_t mark, int64_t size_bytes)
{
    size_t n = out->len - mark;
    FL_ASSERT(n <= UINT32_MAX);
    for (int i = 0; i < 4; i++)
        out->data[mark - 4 + (size_t)i] = (uint8_t)(n >> (8 * i));
    /* Free pages: the file is as large as the backend the size model says. */
    size_t used = out->len - start;
    if (size_bytes > 0 && (uint64_t)size_bytes > used) {
        size_t pad = (size_t)size_bytes - used;
        if (pad > SRV_BACKUP_PAD_MAX_BYTES)
            pad = SRV_BACKUP_PAD_MAX_BYTES;
        fl_buf_reserve(out, pad);
        memset(out->data + out->len, 0, pad);
        out->len += pad;
    }
}

void srv_db_encode(const struct srv_db_image *img, int64_t size_bytes, struct fl_buf *out)
{
    size_t start;
    size_t mark = srv_db_encode_begin(img, out, &start);
    if (img->mvcc_len)
        fl_buf_append(out, img->mvcc, img->mvcc_len);
    srv_db_encode_end(out, start, mark, size_bytes);
}

void srv_backup_wrap(const uint8_t *db, size_t db_len, struct fl_buf *out)
{
    size_t start = out->len;
    fl_buf_append(out, BK_MAGIC, 4);
    srv_put_u32(out, FORMAT_VERSION);
    fl_buf_append(out, db, db_len);
    uint8_t sha[32];
    srv_sha256(out->data + start, out->len - start, sha);
    fl_buf_append(out, sha, sizeof sha);
}

const char *srv_backup_err_text(enum srv_backup_err e)
{
    static const char *const names[] = {
        [SRV_BACKUP_OK] = "",
        [SRV_BACKUP_BAD_FORMAT] = "snapshot file is not a valid snapshot",
        [SRV_BACKUP_HASH_MISMATCH] = "expected sha256",
        [SRV_BACKUP_NO_HASH] = "snapshot missing hash but --skip-hash-check=false"};
    return FL_ENUM_NAME(names, e, "unknown backup error");
}

/* Go's fmt %v of a []byte: "[1 22 255]". */
static void go_bytes(struct fl_buf *b, const uint8_t *p, size_t n)
{
    fl_buf_printf(b, "[");
    for (size_t i = 0; i < n; i++)
        fl_buf_printf(b, i ? " %u" : "%u", (unsigned)p[i]);
    fl_buf_printf(b, "]");
}

void srv_backup_err_format(enum srv_backup_err e, const uint8_t *data, size_t len, char *text,
                           size_t text_len)
{
    FL_ASSERT(text != NULL && text_len > 0);
    if (e != SRV_BACKUP_HASH_MISMATCH || len < 8 + 32) {
        snprintf(text, text_len, "%s", srv_backup_err_text(e));
        return;
    }
    /* clientv3/snapshot (3.4) and etcdutl/snapshot (3.5+) v3_snapshot.go:
     * fmt.Errorf("expected sha256 %v, got %v", sha, dbsha) */
    uint8_t got[32];
    srv_sha256(data, len - 32, got);
    struct fl_buf b;
    fl_buf_init(&b);
    fl_buf_printf(&b, "expected sha256 ");
    go_bytes(&b, data + len - 32, 32);
    fl_buf_printf(&b, ", got ");
    go_bytes(&b, got, 32);
    snprintf(text, text_len, "%s", fl_buf_cstr(&b));
    fl_buf_close(&b);
}

static enum srv_backup_err db_decode(const uint8_t *p, size_t n, struct srv_db_image *img)
{
    memset(img, 0, sizeof *img);
    if (n < 8 || memcmp(p, DB_MAGIC, 4))
        return SRV_BACKUP_BAD_FORMAT;
    struct srv_reader r = {p, n, 4, false};
    if (srv_get_u32(&r) != FORMAT_VERSION)
        return SRV_BACKUP_BAD_FORMAT;
    img->cluster_id = srv_get_u64(&r);
    img->index = srv_get_u64(&r);
    img->term = srv_get_u64(&r);
    img->members_count = srv_get_u32(&r);
    if (img->members_count > SRV_BACKUP_MEMBERS_MAX)
        return SRV_BACKUP_BAD_FORMAT;
    for (uint32_t i = 0; i < img->members_count; i++) {
        img->members[i].id = srv_get_u64(&r);
        img->members[i].node = srv_get_u32(&r);
        img->members[i].learner = srv_get_u32(&r) != 0;
    }
    img->alarms_count = srv_get_u32(&r);
    if (img->alarms_count > SRV_BACKUP_MEMBERS_MAX)
        return SRV_BACKUP_BAD_FORMAT;
    for (uint32_t i = 0; i < img->alarms_count; i++) {
        img->alarms[i].member = srv_get_u64(&r);
        img->alarms[i].type = srv_get_u32(&r);
    }
    img->mvcc_len = srv_get_bytes(&r, &img->mvcc);
    return r.bad ? SRV_BACKUP_BAD_FORMAT : SRV_BACKUP_OK;
}

enum srv_backup_err srv_backup_open(const uint8_t *data, size_t len, bool skip_hash_check,
                                    struct srv_db_image *img)
{
    memset(img, 0, sizeof *img);
    if (len >= 4 && !memcmp(data, DB_MAGIC, 4)) {
        if (!skip_hash_check)
            return SRV_BACKUP_NO_HASH;
        return db_decode(data, len, img);
    }
    if (len < 8 + 32 || memcmp(data, BK_MAGIC, 4))
        return SRV_BACKUP_BAD_FORMAT;
    if (!skip_hash_check) {
        uint8_t sha[32];
        srv_sha256(data, len - 32, sha);
        if (memcmp(sha, data + len - 32, 32))
            return SRV_BACKUP_HASH_MISMATCH;
    }
    return db_decode(data + 8, len - 8 - 32, img);
}
