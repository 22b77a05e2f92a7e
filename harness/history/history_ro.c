/*
 * history_ro.c: opening a history database for reading wherever it lies, and telling a
 * damaged database from one that is merely not ours.
 *
 * A database in WAL mode needs its -shm file to be read; in a read-only folder SQLite
 * cannot create it and every query fails as if the file held nothing. When that
 * happens and there is no write-ahead log with content beside the file (nothing
 * committed is missing from the main file), the database is opened again with
 * `immutable=1`, which reads the main file alone. With a non-empty -wal that cannot
 * be read the message says so instead of "not a faultline history".
 *
 * A damaged database (flipped pages under a valid header) is bad input, never a crash
 * or a silently wrong answer: PRAGMA quick_check runs on open where it is cheap (files
 * up to HIST_QUICK_CHECK_BYTES_MAX), and every SQLITE_CORRUPT / SQLITE_NOTADB a later
 * query meets maps to FL_ECORRUPT with a message that says the database is corrupt.
 *
 * Never writes anything; reads no clock.
 */
#include "harness/history/history_int.h"

#include <errno.h>
#include <sys/stat.h>

bool hist__has_column(sqlite3 *db, const char *table, const char *col)
{
    char sql[160];
    snprintf(sql, sizeof sql, "SELECT 1 FROM pragma_table_info('%s') WHERE name = ?1", table);
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        sqlite3_finalize(st);
        return false;
    }
    sqlite3_bind_text(st, 1, col, -1, SQLITE_STATIC);
    bool has = sqlite3_step(st) == SQLITE_ROW;
    sqlite3_finalize(st);
    return has;
}

bool hist__is_corrupt(int rc)
{
    return (rc & 0xff) == SQLITE_CORRUPT || (rc & 0xff) == SQLITE_NOTADB;
}

/* The size of path + suffix in bytes, -1 when it does not exist. */
static int64_t file_size(const char *path, const char *suffix)
{
    char p[4096];
    if ((size_t)snprintf(p, sizeof p, "%s%s", path, suffix) >= sizeof p)
        return -1;
    struct stat sb;
    return stat(p, &sb) == 0 ? (int64_t)sb.st_size : -1;
}

/* Whether path begins with SQLite's 16-byte header: a file without it is not a
 * database at all, one with it that SQLite cannot read is a damaged database. */
static bool sqlite_header(const char *path)
{
    FILE *f = fopen(path, "rb");
    char h[16] = {0};
    bool ok = f && fread(h, 1, sizeof h, f) == sizeof h && !memcmp(h, "SQLite format 3", 16);
    if (f)
        fclose(f);
    return ok;
}

int hist__corrupt_why(const char *path, const char *detail, char *why, size_t why_len)
{
    if (!sqlite_header(path)) {
        snprintf(why, why_len, "not a SQLite database (%s)", detail);
        return FL_EINVAL;
    }
    snprintf(why, why_len, "the database is corrupt (%s)", detail);
    return FL_ECORRUPT;
}

/* "file:" + path with the characters a URI gives meaning to escaped, + "?immutable=1". */
static char *immutable_uri(const char *path)
{
    struct fl_buf b;
    fl_buf_init(&b);
    fl_buf_printf(&b, "file:");
    for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
        if (*p == '%' || *p == '?' || *p == '#' || *p < 0x20 || *p >= 0x7f)
            fl_buf_printf(&b, "%%%02X", *p);
        else
            fl_buf_append(&b, p, 1);
    }
    fl_buf_printf(&b, "?immutable=1");
    char *s = fl_strdup(fl_buf_cstr(&b));
    fl_buf_close(&b);
    return s;
}

/* Whether the connection can read the schema: the first read is where a WAL database
 * in a read-only folder fails. */
static int probe(sqlite3 *db)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, "SELECT count(*) FROM sqlite_master", -1, &st, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_ROW ? SQLITE_OK : rc;
}

int hist__open_ro(const char *path, sqlite3 **out, char *why, size_t why_len)
{
    *out = NULL;
    sqlite3 *db = NULL;
    int rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_busy_timeout(db, 60000);
        rc = probe(db);
    }
    if (rc == SQLITE_OK) {
        *out = db;
        return FL_OK;
    }
    if (hist__is_corrupt(rc)) {
        sqlite3_close(db);
        return hist__corrupt_why(path, sqlite3_errstr(rc), why, why_len);
    }
    int prim = rc & 0xff;
    if (prim != SQLITE_CANTOPEN && prim != SQLITE_READONLY && prim != SQLITE_IOERR) {
        snprintf(why, why_len, "cannot read: %s", db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
        sqlite3_close(db);
        return FL_EIO;
    }
    sqlite3_close(db);
    db = NULL;
    /* Typically a WAL database whose -shm cannot be created (read-only folder). Without
     * log content the main file holds everything committed: read it alone. */
    int64_t wal = file_size(path, "-wal");
    if (wal > 0) {
        snprintf(why, why_len,
                 "cannot read: the database is in WAL mode and its write-ahead log '%s-wal' "
                 "needs a writable folder (SQLite: %s); copy the database with its -wal file "
                 "somewhere writable",
                 path, sqlite3_errstr(rc));
        return FL_EIO;
    }
    char *uri = immutable_uri(path);
    int rc2 = sqlite3_open_v2(uri, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL);
    free(uri);
    if (rc2 == SQLITE_OK)
        rc2 = probe(db);
    if (rc2 == SQLITE_OK) {
        *out = db;
        return FL_OK;
    }
    int code = FL_EIO;
    if (hist__is_corrupt(rc2))
        code = hist__corrupt_why(path, sqlite3_errstr(rc2), why, why_len);
    else
        snprintf(why, why_len, "cannot read: %s (%s)",
                 db ? sqlite3_errmsg(db) : sqlite3_errstr(rc2), strerror(errno));
    sqlite3_close(db);
    return code;
}

int hist__quick_check(sqlite3 *db, const char *path, char *why, size_t why_len)
{
    int64_t size = file_size(path, "");
    if (size < 0 || size > HIST_QUICK_CHECK_BYTES_MAX)
        return FL_OK; /* too large to check on every open: queries still report corruption */
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, "PRAGMA quick_check(1)", -1, &st, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    int out = FL_OK;
    if (rc == SQLITE_ROW) {
        const char *res = (const char *)sqlite3_column_text(st, 0);
        if (!res || strcmp(res, "ok")) {
            snprintf(why, why_len, "the database is corrupt (PRAGMA quick_check: %s)",
                     res ? res : "no answer");
            for (char *c = why; *c; c++)
                if (*c == '\n')
                    *c = ' '; /* SQLite's report spans lines: the message is one */
            out = FL_ECORRUPT;
        }
    } else if (hist__is_corrupt(rc)) {
        out = hist__corrupt_why(path, sqlite3_errmsg(db), why, why_len);
    } else if (rc != SQLITE_DONE) {
        snprintf(why, why_len, "cannot check the database: %s", sqlite3_errmsg(db));
        out = hist__code(rc) ? hist__code(rc) : FL_EIO;
    }
    sqlite3_finalize(st);
    return out;
}
