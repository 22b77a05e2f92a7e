/*
 * test_backup.c: db image and backup format: round trip, SHA-256 check, corruption
 * refused unless skip_hash_check, a raw db copy needs skip_hash_check, free-page
 * padding makes a pre-defrag backup larger.
 */
#include "fl_test.h"
#include "nodes/server/backup.h"

static void make_image(struct srv_db_image *img, const char *mvcc)
{
    memset(img, 0, sizeof *img);
    img->cluster_id = 0xabc;
    img->index = 42;
    img->term = 3;
    img->members_count = 2;
    img->members[0].id = 7;
    img->members[0].node = 1;
    img->members[1].id = 9;
    img->members[1].node = 2;
    img->members[1].learner = true;
    img->alarms_count = 1;
    img->alarms[0].member = 7;
    img->alarms[0].type = 1;
    img->mvcc = (const uint8_t *)mvcc;
    img->mvcc_len = strlen(mvcc);
}

int main(void)
{
    struct srv_db_image img, out;
    make_image(&img, "mvcc-bytes");
    struct fl_buf db, bk;
    fl_buf_init(&db);
    fl_buf_init(&bk);
    srv_db_encode(&img, 0, &db);
    srv_backup_wrap(db.data, db.len, &bk);
    CHECK_EQ_INT(bk.len, db.len + 8 + 32);

    CHECK_EQ_INT(srv_backup_open(bk.data, bk.len, false, &out), SRV_BACKUP_OK);
    CHECK_EQ_INT(out.cluster_id, 0xabc);
    CHECK_EQ_INT(out.index, 42);
    CHECK_EQ_INT(out.members_count, 2);
    CHECK(out.members[1].learner && out.members[1].node == 2);
    CHECK_EQ_INT(out.alarms_count, 1);
    CHECK(out.mvcc_len == 10 && memcmp(out.mvcc, "mvcc-bytes", 10) == 0);

    /* One flipped byte anywhere in the body: refused by the hash. */
    int refused = 0;
    for (size_t i = 0; i < bk.len - 32; i++) {
        bk.data[i] ^= 1;
        refused += srv_backup_open(bk.data, bk.len, false, &out) != SRV_BACKUP_OK;
        bk.data[i] ^= 1;
    }
    CHECK_EQ_INT(refused, (long long)(bk.len - 32));
    bk.data[20] ^= 1;
    CHECK_EQ_INT(srv_backup_open(bk.data, bk.len, false, &out), SRV_BACKUP_HASH_MISMATCH);
    /* skip_hash_check accepts what still decodes */
    CHECK_EQ_INT(srv_backup_open(bk.data, bk.len, true, &out), SRV_BACKUP_OK);
    /* etcdctl's text: the stored digest, then the computed one, as Go prints []byte */
    char text[320];
    srv_backup_err_format(SRV_BACKUP_HASH_MISMATCH, bk.data, bk.len, text, sizeof text);
    uint8_t got[32];
    srv_sha256(bk.data, bk.len - 32, got);
    struct fl_buf want;
    fl_buf_init(&want);
    fl_buf_printf(&want, "expected sha256 [");
    for (size_t i = 0; i < 32; i++)
        fl_buf_printf(&want, "%s%u", i ? " " : "", (unsigned)bk.data[bk.len - 32 + i]);
    fl_buf_printf(&want, "], got [");
    for (size_t i = 0; i < 32; i++)
        fl_buf_printf(&want, "%s%u", i ? " " : "", (unsigned)got[i]);
    fl_buf_printf(&want, "]");
    CHECK_EQ_STR(text, fl_buf_cstr(&want));
    fl_buf_close(&want);
    bk.data[20] ^= 1;
    CHECK_EQ_STR(srv_backup_err_text(SRV_BACKUP_NO_HASH),
                 "snapshot missing hash but --skip-hash-check=false");

    /* A raw db copy has no hash. */
    CHECK_EQ_INT(srv_backup_open(db.data, db.len, false, &out), SRV_BACKUP_NO_HASH);
    CHECK_EQ_INT(srv_backup_open(db.data, db.len, true, &out), SRV_BACKUP_OK);
    CHECK_EQ_INT(out.term, 3);
    /* Garbage */
    CHECK_EQ_INT(srv_backup_open((const uint8_t *)"hello world", 11, true, &out),
                 SRV_BACKUP_BAD_FORMAT);
    CHECK_EQ_INT(srv_backup_open(bk.data, 30, false, &out), SRV_BACKUP_BAD_FORMAT);

    /* Padding to the backend size: before defrag (large file) vs after. */
    struct fl_buf big, small;
    fl_buf_init(&big);
    fl_buf_init(&small);
    srv_db_encode(&img, 100000, &big);
    srv_db_encode(&img, 10, &small);
    CHECK_EQ_INT(big.len, 100000);
    CHECK_EQ_INT(small.len, db.len);
    CHECK_EQ_INT(srv_backup_open(big.data, big.len, true, &out), SRV_BACKUP_OK);

    /* SHA-256 of "abc" (FIPS 180-2 example). */
    uint8_t sha[32];
    srv_sha256("abc", 3, sha);
    CHECK(sha[0] == 0xba && sha[1] == 0x78 && sha[31] == 0xad);

    fl_buf_close(&db);
    fl_buf_close(&bk);
    fl_buf_close(&big);
    fl_buf_close(&small);
    return fl_test_end();
}
