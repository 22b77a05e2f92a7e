/*
 * sweep_merge.c: one database out of many. Each worker of a sweep records into its own
 * database (no lock contention, and a crashed worker cannot damage the others); at the
 * end their runs are copied into the sweep's database with ATTACH + INSERT ... SELECT,
 * each run under a fresh run_id, its rows in every history table following it.
 * Columns are matched by name (the intersection of both schemas), so databases of a
 * schema with added columns still merge.
 *
 * This is the one place outside harness/history that speaks SQL: the history module
 * has no bulk copy, and row-by-row re-recording through its API would lose started_at
 * and cost a hundred times more. It goes through hist_sqlite() on a handle the history
 * module opened (and so validated), and only ever reads the tables DESIGN §3.6 fixes.
 */
#include "harness/sweep/sweep.h"

#include "harness/history/history.h"

#include <sqlite3.h>
#include <unistd.h>
#include <errno.h>

static const char *const tables[] = {"ops",         "watches", "watch_events", "faults",
                                     "node_events", "checks",  "clients"};

static int sql_fail(sqlite3 *s, const char *what, const char *src, char *err, size_t err_len)
{
    snprintf(err, err_len, "merging '%s': %s: %s", src, what, sqlite3_errmsg(s));
    return FL_EIO;
}

static int64_t src_pragma(sqlite3 *s, const char *sql, bool *ok)
{
    sqlite3_stmt *st = NULL;
    int64_t v = 0;
    *ok = sqlite3_prepare_v2(s, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW;
    if (*ok)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

/* The attached src is a faultline history of a schema this build reads: what
 * hist_open checks, without opening the file a second time. */
static int src_identity(sqlite3 *s, const char *src, char *err, size_t err_len)
{
    bool ok1, ok2;
    int64_t app = src_pragma(s, "PRAGMA src.application_id", &ok1);
    int64_t ver = src_pragma(s, "PRAGMA src.user_version", &ok2);
    if (!ok1 || !ok2)
        return sql_fail(s, "reading its identity", src, err, err_len);
    char why[128];
    int rc = hist_identity_check(app, ver, why, sizeof why);
    if (rc)
        snprintf(err, err_len, "merging '%s': %s", src, why);
    return rc;
}

/* "a, b, c": columns of table in both main and src, except run_id. */
static int common_columns(sqlite3 *s, const char *table, struct fl_buf *cols)
{
    fl_buf_reset(cols);
    char *q = sqlite3_mprintf("SELECT m.name FROM pragma_table_info(%Q, 'main') AS m "
                              "JOIN pragma_table_info(%Q, 'src') AS s ON s.name = m.name "
                              "WHERE m.name <> 'run_id' ORDER BY m.cid",
                              table, table);
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(s, q, -1, &st, NULL);
    sqlite3_free(q);
    if (rc != SQLITE_OK)
        return FL_EIO;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        char *quoted = sqlite3_mprintf("%s\"%w\"", cols->len ? ", " : "",
                                       (const char *)sqlite3_column_text(st, 0));
        fl_buf_append(cols, quoted, strlen(quoted));
        sqlite3_free(quoted);
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? FL_OK : FL_EIO;
}

/* A merge into one open database. It keeps the column lists of the last source it
 * read, reused while the next source has the same schema (every job of a sweep): seven
 * catalogue joins fewer per run. The key is the src tables' CREATE statements; the
 * main side cannot change under it, the context lives no longer than db's handle. */
struct sweep_merge {
    struct hist_db *db;
    char *schema;                                 /* of the src the lists are for; NULL: none */
    struct fl_buf cols[1 + FL_ARRAY_LEN(tables)]; /* runs, then tables[] */
};

struct sweep_merge *sweep_merge_new(struct hist_db *db)
{
    FL_ASSERT(db != NULL);
    struct sweep_merge *mg = fl_calloc(1, sizeof *mg);
    mg->db = db;
    for (size_t t = 0; t < FL_ARRAY_LEN(mg->cols); t++)
        fl_buf_init(&mg->cols[t]);
    return mg;
}

void sweep_merge_free(struct sweep_merge *mg)
{
    if (!mg)
        return;
    for (size_t t = 0; t < FL_ARRAY_LEN(mg->cols); t++)
        fl_buf_close(&mg->cols[t]);
    free(mg->schema);
    free(mg);
}

static char *src_schema(sqlite3 *s)
{
    sqlite3_stmt *st = NULL;
    char *out = NULL;
    if (sqlite3_prepare_v2(s,
                           "SELECT group_concat(sql, ';') FROM (SELECT sql FROM src.sqlite_master "
                           "WHERE type = 'table' ORDER BY name)",
                           -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
        out = fl_strdup((const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return out;
}

/* Fills mg's column lists for the attached src (FL_OK), recomputing when its schema is
 * not the one they are for. */
static int columns_for(struct sweep_merge *mg, sqlite3 *s)
{
    char *schema = src_schema(s);
    if (!schema)
        return FL_EIO;
    if (mg->schema && !strcmp(mg->schema, schema)) {
        free(schema);
        return FL_OK;
    }
    free(mg->schema);
    mg->schema = NULL;
    for (size_t t = 0; t <= FL_ARRAY_LEN(tables); t++)
        if (common_columns(s, t ? tables[t - 1] : "runs", &mg->cols[t])) {
            free(schema);
            return FL_EIO;
        }
    mg->schema = schema;
    return FL_OK;
}

static int exec_bind2(sqlite3 *s, const char *sql, int64_t a, int64_t b)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(s, sql, -1, &st, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, a);
        sqlite3_bind_int64(st, 2, b);
        rc = sqlite3_step(st);
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? FL_OK : FL_EIO;
}

/* Copies run old_id of src into main; *new_id receives its id there. */
static int copy_run(struct sweep_merge *mg, sqlite3 *s, int64_t old_id, int64_t *new_id,
                    struct fl_buf *sql)
{
    struct fl_buf *cols = &mg->cols[0];
    fl_buf_reset(sql);
    fl_buf_printf(sql, "INSERT INTO main.runs(%s) SELECT %s FROM src.runs WHERE run_id = ?1",
                  fl_buf_cstr(cols), fl_buf_cstr(cols));
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(s, fl_buf_cstr(sql), -1, &st, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, old_id);
        rc = sqlite3_step(st);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return FL_EIO;
    *new_id = sqlite3_last_insert_rowid(s);
    for (size_t t = 0; t < FL_ARRAY_LEN(tables); t++) {
        cols = &mg->cols[1 + t];
        if (!cols->len)
            continue; /* the table is missing in src */
        fl_buf_reset(sql);
        fl_buf_printf(sql,
                      "INSERT INTO main.\"%s\"(run_id, %s) SELECT ?1, %s FROM src.\"%s\" "
                      "WHERE run_id = ?2",
                      tables[t], fl_buf_cstr(cols), fl_buf_cstr(cols), tables[t]);
        if (exec_bind2(s, fl_buf_cstr(sql), *new_id, old_id))
            return FL_EIO;
    }
    return FL_OK;
}

static int merge_runs(struct sweep_merge *mg, sqlite3 *s, const char *src, int64_t *first_id,
                      int *count, char *err, size_t err_len)
{
    struct fl_buf sql;
    fl_buf_init(&sql);
    sqlite3_stmt *ids = NULL;
    int rc = FL_OK, n = 0;
    if (sqlite3_exec(s, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
        rc = sql_fail(s, "begin", src, err, err_len);
        goto out;
    }
    if (columns_for(mg, s)) {
        rc = sql_fail(s, "read its columns", src, err, err_len);
        goto rollback;
    }
    if (sqlite3_prepare_v2(s, "SELECT run_id FROM src.runs ORDER BY run_id", -1, &ids, NULL) !=
        SQLITE_OK) {
        rc = sql_fail(s, "list runs", src, err, err_len);
        goto rollback;
    }
    int step;
    while ((step = sqlite3_step(ids)) == SQLITE_ROW) {
        int64_t new_id = 0;
        if (copy_run(mg, s, sqlite3_column_int64(ids, 0), &new_id, &sql)) {
            rc = sql_fail(s, "copy run", src, err, err_len);
            goto rollback;
        }
        if (n++ == 0 && first_id)
            *first_id = new_id;
    }
    if (step != SQLITE_DONE) {
        rc = sql_fail(s, "list runs", src, err, err_len);
        goto rollback;
    }
    sqlite3_finalize(ids);
    ids = NULL;
    if (sqlite3_exec(s, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        rc = sql_fail(s, "commit", src, err, err_len);
        goto rollback;
    }
    if (count)
        *count = n;
    goto out;
rollback:
    sqlite3_finalize(ids);
    sqlite3_exec(s, "ROLLBACK", NULL, NULL, NULL);
out:
    fl_buf_close(&sql);
    return rc;
}

int sweep_merge_from(struct sweep_merge *mg, const char *src, int64_t *first_id, int *count,
                     char *err, size_t err_len)
{
    struct hist_db *db = mg->db;
    if (first_id)
        *first_id = 0;
    if (count)
        *count = 0;
    int rc;
    if (access(src, R_OK) != 0) { /* ATTACH would create it */
        snprintf(err, err_len, "merging '%s': %s", src, strerror(errno));
        return errno == ENOENT ? FL_ENOENT : FL_EIO;
    }
    if ((rc = hist_flush(db))) {
        snprintf(err, err_len, "%s", hist_errmsg(db));
        return rc;
    }
    sqlite3 *s = hist_sqlite(db);
    char *attach = sqlite3_mprintf("ATTACH DATABASE %Q AS src", src);
    if (sqlite3_exec(s, attach, NULL, NULL, NULL) != SQLITE_OK) {
        rc = sql_fail(s, "attach", src, err, err_len);
    } else {
        rc = src_identity(s, src, err, err_len);
        if (!rc)
            rc = merge_runs(mg, s, src, first_id, count, err, err_len);
        sqlite3_exec(s, "DETACH DATABASE src", NULL, NULL, NULL);
    }
    sqlite3_free(attach);
    return rc;
}

int sweep_db_merge(const char *dst, const char *src, int64_t *first_id, int *count, char *err,
                   size_t err_len)
{
    struct hist_db *db = NULL;
    int rc = hist_open(dst, HIST_OPEN_WRITE, &db, err, err_len);
    if (rc)
        return rc;
    struct sweep_merge *mg = sweep_merge_new(db);
    rc = sweep_merge_from(mg, src, first_id, count, err, err_len);
    sweep_merge_free(mg);
    int crc = hist_close(db);
    if (!rc && crc) {
        snprintf(err, err_len, "merging into '%s': close failed", dst);
        rc = crc;
    }
    return rc;
}

static void json_bugs(struct fl_buf *b, const char *const *bugs, int bug_count)
{
    json_t *o = json_object(), *arr = json_array();
    for (int i = 0; i < bug_count; i++)
        json_array_append_new(arr, json_string(bugs[i]));
    json_object_set_new(o, "bugs", arr);
    json_object_set_new(o, "unsafe_lua", json_false());
    char *s = json_dumps(o, JSON_COMPACT);
    fl_buf_printf(b, "%s", s ? s : "{}");
    free(s);
    json_decref(o);
}

static char *reason_json(const char *why)
{
    json_t *d = json_object();
    json_object_set_new(d, "reason", json_string(why ? why : "worker failed"));
    char *detail = json_dumps(d, JSON_COMPACT);
    json_decref(d);
    return detail;
}

int sweep_db_add_error_into(struct hist_db *db, const char *scenario, uint64_t seed,
                            const char *const *bugs, int bug_count, const char *why,
                            int64_t *run_id_out, char *err, size_t err_len)
{
    struct fl_buf opts;
    fl_buf_init(&opts);
    json_bugs(&opts, bugs, bug_count);
    char *detail = reason_json(why);
    int64_t id = 0;
    int rc = hist_run_begin(db, scenario, seed, fl_buf_cstr(&opts), NULL, &id);
    if (!rc)
        rc = hist_check_add(db, "worker", "error", 0, detail);
    if (!rc)
        rc = hist_run_end(db, HIST_NULL, HIST_NULL, NULL, "error");
    if (rc)
        snprintf(err, err_len, "%s", hist_errmsg(db));
    else if (run_id_out)
        *run_id_out = id;
    free(detail);
    fl_buf_close(&opts);
    return rc;
}

int sweep_db_add_error(const char *db_path, const char *scenario, uint64_t seed,
                       const char *const *bugs, int bug_count, const char *why, int64_t *run_id_out,
                       char *err, size_t err_len)
{
    struct hist_db *db = NULL;
    int rc = hist_open(db_path, HIST_OPEN_WRITE, &db, err, err_len);
    if (rc)
        return rc;
    rc =
        sweep_db_add_error_into(db, scenario, seed, bugs, bug_count, why, run_id_out, err, err_len);
    int crc = hist_close(db);
    return rc ? rc : crc;
}

int sweep_db_mark_error_into(struct hist_db *db, int64_t run_id, const char *why, char *err,
                             size_t err_len)
{
    char *detail = reason_json(why);
    int rc = hist_run_attach(db, run_id, NULL);
    if (!rc)
        rc = hist_check_add(db, "worker", "error", 0, detail);
    /* Leave the run again: hist_run_end keeps the row's columns but sets the verdict. */
    if (!rc) {
        struct hist_run_row row;
        rc = hist_run_get(db, run_id, &row);
        if (!rc) {
            rc = hist_run_end(db, row.sim_end_ns, row.wall_ms, row.digest, "error");
            hist_run_row_free(&row);
        }
    }
    if (rc)
        snprintf(err, err_len, "marking run %lld of '%s': %s", (long long)run_id, hist_path(db),
                 hist_errmsg(db));
    free(detail);
    return rc;
}

int sweep_db_mark_error(const char *db_path, int64_t run_id, const char *why, char *err,
                        size_t err_len)
{
    struct hist_db *db = NULL;
    int rc = hist_open(db_path, HIST_OPEN_WRITE, &db, err, err_len);
    if (rc)
        return rc;
    rc = sweep_db_mark_error_into(db, run_id, why, err, err_len);
    int crc = hist_close(db);
    return rc ? rc : crc;
}
