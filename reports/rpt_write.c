/*
 * rpt_write.c: the public entry points of reports/: open the databases read-only, pick
 * the runs, write one page per run as it is loaded (so one run's operations at a time
 * are in memory), then the index, summary.json, junit.xml and summary.md. Every error
 * is one line naming the database, run or file.
 */
#include "reports/rpt_int.h"

#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

int rpt_dir_make(const char *dir, char *err, size_t err_len)
{
    struct stat st;
    if (stat(dir, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return FL_OK;
        snprintf(err, err_len, "report directory '%s': exists and is not a directory", dir);
        return FL_EIO;
    }
    if (mkdir(dir, 0777) != 0) {
        snprintf(err, err_len, "report directory '%s': %s", dir, strerror(errno));
        return FL_EIO;
    }
    return FL_OK;
}

/* Writes b into dir/name without ever following what is already there: the bytes go
 * into a new temporary file of dir (mkstemp: O_EXCL, so not through a planted symlink)
 * that is then renamed over dir/name (rename replaces a symlink, never its target). */
int rpt_file_write(const char *dir, const char *name, struct fl_buf *b, char *err, size_t err_len)
{
    struct fl_buf path, tmp;
    fl_buf_init(&path);
    fl_buf_init(&tmp);
    fl_buf_printf(&path, "%s/%s", dir, name);
    fl_buf_printf(&tmp, "%s/.%s.XXXXXX", dir, name);
    int rc = FL_OK;
    char *tp = (char *)fl_buf_cstr(&tmp);
    int fd = mkstemp(tp);
    if (fd < 0) {
        snprintf(err, err_len, "report file '%s': %s", fl_buf_cstr(&path), strerror(errno));
        rc = FL_EIO;
        goto out;
    }
    mode_t mask = umask(0); /* mkstemp's 0600, widened to what a plain create would give */
    umask(mask);
    size_t off = 0;
    while (!rc && off < b->len) {
        ssize_t w = write(fd, b->data + off, b->len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            rc = FL_EIO;
        else
            off += (size_t)w;
    }
    if (!rc && fchmod(fd, 0666 & ~mask) != 0)
        rc = FL_EIO;
    if (close(fd) != 0 && !rc)
        rc = FL_EIO;
    if (!rc && rename(tp, fl_buf_cstr(&path)) != 0)
        rc = FL_EIO;
    if (rc) {
        snprintf(err, err_len, "report file '%s': %s", fl_buf_cstr(&path), strerror(errno));
        unlink(tp);
    }
out:
    fl_buf_close(&tmp);
    fl_buf_close(&path);
    return rc;
}

static int write_json(const char *dir, const char *name, const json_t *j, char *err, size_t err_len)
{
    char *s = json_dumps(j, JSON_INDENT(2) | JSON_ENCODE_ANY);
    struct fl_buf b;
    fl_buf_init(&b);
    fl_buf_printf(&b, "%s\n", s ? s : "null");
    free(s);
    int rc = rpt_file_write(dir, name, &b, err, err_len);
    fl_buf_close(&b);
    return rc;
}

/* One run of the report: which database, which run_id. */
struct pick {
    int db;
    int64_t run_id;
};

static int pick_runs(struct hist_db **dbs, const char *const *paths, int n_db, int64_t run_id,
                     struct pick **out, size_t *count, char *err, size_t err_len)
{
    *out = NULL;
    *count = 0;
    for (int d = 0; d < n_db; d++) {
        int64_t *ids = NULL;
        size_t n = 0;
        int rc = hist_runs_list(dbs[d], &ids, &n);
        if (rc) {
            snprintf(err, err_len, "%s", hist_errmsg(dbs[d]));
            free(*out);
            *out = NULL;
            return rc;
        }
        for (size_t i = 0; i < n; i++) {
            if (run_id && ids[i] != run_id)
                continue;
            *out = fl_realloc(*out, (*count + 1) * sizeof **out);
            (*out)[(*count)++] = (struct pick){d, ids[i]};
        }
        free(ids);
    }
    if (*count)
        return FL_OK;
    if (run_id)
        snprintf(err, err_len, "no run %lld in %s%s", (long long)run_id, paths[0],
                 n_db > 1 ? " (nor in the other databases)" : "");
    else
        snprintf(err, err_len, "history database '%s' holds no runs", paths[0]);
    return FL_ENOENT;
}

static int open_all(const char *const *paths, int n, struct hist_db ***dbs, char *err,
                    size_t err_len)
{
    *dbs = fl_calloc((size_t)n + 1, sizeof **dbs);
    for (int i = 0; i < n; i++) {
        int rc = hist_open(paths[i], HIST_OPEN_READONLY, &(*dbs)[i], err, err_len);
        if (rc) {
            for (int k = 0; k < i; k++)
                hist_close((*dbs)[k]);
            free(*dbs);
            *dbs = NULL;
            return rc;
        }
    }
    return FL_OK;
}

static void close_all(struct hist_db **dbs, int n)
{
    for (int i = 0; dbs && i < n; i++)
        hist_close(dbs[i]);
    free(dbs);
}

/* Loads every picked run in turn, writes its page, keeps its brief and summary. */
static int write_pages(struct hist_db **dbs, const struct pick *p, size_t n, const char *dir,
                       const json_t *live, struct rpt_brief *briefs, json_t *summaries, char *err,
                       size_t err_len)
{
    size_t pass_pages = 0;
    for (size_t i = 0; i < n; i++) {
        struct rpt_run r;
        int rc = rpt_run_load(dbs[p[i].db], p[i].run_id, dir != NULL, &r, err, err_len);
        if (rc)
            return rc;
        r.db_index = p[i].db + 1;
        if (live)
            r.live = json_deep_copy(live);
        char page[64];
        if (n == 1)
            snprintf(page, sizeof page, "index.html");
        else
            snprintf(page, sizeof page, "run-%d-%lld.html", r.db_index, (long long)p[i].run_id);
        bool passed = r.row.verdict && !strcmp(r.row.verdict, "pass");
        bool want = dir && (n == 1 || !passed || pass_pages < RPT_PASS_PAGES_MAX);
        pass_pages += want && passed;
        if (want) {
            struct fl_buf html;
            fl_buf_init(&html);
            rpt_html_run(&html, &r, n == 1 ? NULL : "index.html");
            rc = rpt_file_write(dir, page, &html, err, err_len);
            fl_buf_close(&html);
        }
        if (summaries)
            json_array_append_new(summaries, live ? json_deep_copy(live) : rpt_summary_json(&r));
        rpt_brief_from(&briefs[i], &r, want ? page : NULL);
        rpt_run_close(&r);
        if (rc)
            return rc;
    }
    return FL_OK;
}

static json_t *totals(const struct rpt_brief *b, size_t n)
{
    json_t *t = json_object();
    static const char *const names[] = {"pass", "fail", "unknown", "error"};
    json_object_set_new(t, "runs", json_integer((json_int_t)n));
    for (size_t k = 0; k < 4; k++) {
        size_t c = 0;
        for (size_t i = 0; i < n; i++)
            c += !strcmp(b[i].verdict, names[k]);
        json_object_set_new(t, names[k], json_integer((json_int_t)c));
    }
    return t;
}

static int write_lists(const char *dir, const struct rpt_brief *briefs, size_t n, json_t *summaries,
                       char *err, size_t err_len)
{
    struct fl_buf b;
    fl_buf_init(&b);
    int rc = FL_OK;
    if (n > 1) {
        rpt_index_html(&b, briefs, n);
        rc = rpt_file_write(dir, "index.html", &b, err, err_len);
        json_t *all = json_object();
        json_object_set(all, "runs", summaries);
        json_object_set_new(all, "totals", totals(briefs, n));
        if (!rc)
            rc = write_json(dir, "summary.json", all, err, err_len);
        json_decref(all);
    } else if (!rc) {
        rc = write_json(dir, "summary.json", json_array_get(summaries, 0), err, err_len);
    }
    fl_buf_reset(&b);
    rpt_junit(&b, briefs, n);
    if (!rc)
        rc = rpt_file_write(dir, "junit.xml", &b, err, err_len);
    fl_buf_reset(&b);
    rpt_markdown(&b, briefs, n);
    if (!rc)
        rc = rpt_file_write(dir, "summary.md", &b, err, err_len);
    fl_buf_close(&b);
    return rc;
}

static int write_junit_file(const char *path, const struct rpt_brief *briefs, size_t n, char *err,
                            size_t err_len)
{
    struct fl_buf b;
    fl_buf_init(&b);
    rpt_junit(&b, briefs, n);
    int rc = FL_OK;
    FILE *f = fopen(path, "wb");
    bool ok = f && fwrite(b.data, 1, b.len, f) == b.len;
    if (f)
        ok = fclose(f) == 0 && ok;
    if (!ok) {
        snprintf(err, err_len, "JUnit file '%s': %s", path, strerror(errno));
        rc = FL_EIO;
    }
    fl_buf_close(&b);
    return rc;
}

/* Writes the report directory (dir non-NULL) and/or a JUnit file for the picked runs. */
static int emit(struct hist_db **dbs, const struct pick *picks, size_t n, const char *dir,
                const char *junit, const json_t *live, char *err, size_t err_len)
{
    struct rpt_brief *briefs = fl_calloc(n + 1, sizeof *briefs);
    json_t *summaries = json_array();
    int rc = dir ? rpt_dir_make(dir, err, err_len) : FL_OK;
    if (!rc)
        rc = write_pages(dbs, picks, n, dir, live, briefs, dir ? summaries : NULL, err, err_len);
    if (!rc && dir)
        rc = write_lists(dir, briefs, n, summaries, err, err_len);
    if (!rc && junit)
        rc = write_junit_file(junit, briefs, n, err, err_len);
    for (size_t i = 0; i < n; i++)
        rpt_brief_close(&briefs[i]);
    free(briefs);
    json_decref(summaries);
    return rc;
}

static int report(const char *const *paths, int n_db, int64_t run_id, bool latest, const char *dir,
                  const char *junit, const json_t *live, char *err, size_t err_len)
{
    struct hist_db **dbs = NULL;
    struct pick *picks = NULL;
    size_t n = 0;
    int rc = open_all(paths, n_db, &dbs, err, err_len);
    if (rc)
        goto out;
    if (latest && (rc = hist_run_latest(dbs[0], &run_id)) != FL_OK) {
        snprintf(err, err_len, "%s", hist_errmsg(dbs[0]));
        goto out;
    }
    if (latest && run_id == 0) {
        snprintf(err, err_len, "history database '%s' holds no runs", paths[0]);
        rc = FL_ENOENT;
        goto out;
    }
    if (!(rc = pick_runs(dbs, paths, n_db, run_id, &picks, &n, err, err_len)))
        rc = emit(dbs, picks, n, dir, junit, live, err, err_len);
out:
    free(picks);
    close_all(dbs, n_db);
    return rc;
}

int rpt_write_dir(const char *db_path, int64_t run_id, const char *dir, const json_t *live_summary,
                  char *err, size_t err_len)
{
    return report(&db_path, 1, run_id, run_id == 0, dir, NULL, live_summary, err, err_len);
}

int rpt_write_report(const char *const *db_paths, int db_count, int64_t run_id, const char *dir,
                     char *err, size_t err_len)
{
    FL_ASSERT(db_count >= 1);
    return report(db_paths, db_count, run_id, false, dir, NULL, NULL, err, err_len);
}

int rpt_write_junit(const char *const *db_paths, int db_count, int64_t run_id, const char *path,
                    char *err, size_t err_len)
{
    FL_ASSERT(db_count >= 1);
    return report(db_paths, db_count, run_id, false, NULL, path, NULL, err, err_len);
}

int rpt_write_runs(const char *db_path, const int64_t *run_ids, size_t n, const char *dir,
                   const char *junit_path, char *err, size_t err_len)
{
    struct hist_db **dbs = NULL;
    int rc = open_all(&db_path, 1, &dbs, err, err_len);
    if (rc)
        return rc;
    struct pick *picks = fl_calloc(n + 1, sizeof *picks);
    for (size_t i = 0; i < n; i++)
        picks[i] = (struct pick){0, run_ids[i]};
    if (n == 0) {
        snprintf(err, err_len, "history database '%s': no runs to report", db_path);
        rc = FL_ENOENT;
    } else {
        rc = emit(dbs, picks, n, dir, junit_path, NULL, err, err_len);
    }
    free(picks);
    close_all(dbs, 1);
    return rc;
}

json_t *rpt_summary_from_db(struct hist_db *db, int64_t run_id, char *err, size_t err_len)
{
    struct rpt_run r;
    if (rpt_run_load(db, run_id, true, &r, err, err_len))
        return NULL;
    json_t *s = rpt_summary_json(&r);
    rpt_run_close(&r);
    return s;
}

int rpt_first_violation(struct hist_db *db, int64_t run_id, char *out, size_t out_len)
{
    char err[256];
    struct rpt_run r;
    out[0] = '\0';
    int rc = rpt_run_load(db, run_id, false, &r, err, sizeof err);
    if (rc)
        return rc;
    snprintf(out, out_len, "%s", r.first_violation);
    rpt_run_close(&r);
    return FL_OK;
}
