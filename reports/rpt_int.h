/*
 * rpt_int.h: what the files of reports/ share: the in-memory model of one recorded
 * run (rpt_model.c loads it from the history database), and the writers that turn it
 * into HTML (rpt_html.c, rpt_svg.c), JSON (rpt_summary.c), JUnit and Markdown
 * (rpt_out.c). Nothing here is visible outside the module.
 */
#ifndef FL_RPT_INT_H
#define FL_RPT_INT_H

/* Internal to reports: compiled only into fl_reports (which defines FL_INTERNAL_reports)
 * and into the white-box tests that declare it (tests/CMakeLists.txt). */
#ifndef FL_INTERNAL_reports
#error "reports/rpt_int.h is internal to reports: include its public header instead"
#endif

#include "harness/history/history.h"
#include "reports/report.h"

/* One operation as the timeline and the table need it. Text fields are NULL unless the
 * op is in the table or highlighted (keeps 100,000-op runs small). */
struct rpt_op {
    int64_t op_id, client_id, node_id, call_ns, return_ns, revision;
    int status; /* enum hist_status */
    bool highlighted;
    char *kind;
    char *key;      /* readable bytes (rpt_bytes_text), capped */
    char *request;  /* capped */
    char *response; /* capped */
    char *error;
};

struct rpt_node_event {
    int64_t at_ns, node_id, term;
    char *kind, *detail;
};

struct rpt_fault {
    int64_t at_ns;
    char *kind, *target;
    json_t *detail; /* parsed, or a JSON string when not JSON, or null */
};

/* One check row, deduplicated per checker (the last row of a checker wins; every
 * 'expect' row is kept). */
struct rpt_check {
    char *checker, *verdict;
    int64_t elapsed_ms;
    json_t *detail; /* parsed detail, or a JSON string when not JSON */
};

struct rpt_run {
    int db_index; /* 1-based index of the database in a multi-database report */
    const char *db_path;
    struct hist_run_row row;
    struct hist_op_counts counts;
    struct rpt_op *ops;
    size_t op_count;
    int64_t end_ns; /* timeline end: max(sim_end_ns, last time seen), > 0 */
    struct rpt_node_event *nev;
    size_t nev_count;
    struct rpt_fault *faults;
    size_t fault_count;
    struct rpt_check *checks;
    size_t check_count;
    int64_t *hl_ids; /* op ids named by a violation, ascending */
    size_t hl_count;
    json_t *live;    /* live summary (borrowed reference taken), or NULL */
    json_t *clients; /* the history's clients rows: array of stats objects, each with its
                      * "last_attempts"; NULL for a database older than the table */
    char first_violation[512];
    char *replay;
};

/* Loads run run_id of db into r (zeroed first). On failure r holds nothing. With
 * full false only the runs row, op counts and checks are read (JUnit, Markdown). */
int rpt_run_load(struct hist_db *db, int64_t run_id, bool full, struct rpt_run *r, char *err,
                 size_t err_len);
void rpt_run_close(struct rpt_run *r);

/* rpt_summary.c */
json_t *rpt_summary_json(const struct rpt_run *r);
/* The per-client objects of the summary: the history's clients rows, else derived from
 * the ops (a database older than that table). New reference. */
json_t *rpt_clients_json(const struct rpt_run *r);
/* Per-client figures derived from the ops (array of objects). */
json_t *rpt_clients_from_ops(const struct rpt_run *r);
void rpt_first_violation_of(const struct rpt_run *r, char *out, size_t out_len);
/* The check's detail, e.g. the 'linearizability' row; NULL when absent. */
const struct rpt_check *rpt_check_find(const struct rpt_run *r, const char *checker);

/* rpt_html.c / rpt_svg.c: the page of one run. nav_back: link to an index or NULL. */
void rpt_html_run(struct fl_buf *out, const struct rpt_run *r, const char *nav_back);
void rpt_svg_timeline(struct fl_buf *out, const struct rpt_run *r);
void rpt_html_head(struct fl_buf *out, const char *title);
void rpt_html_escape_str(struct fl_buf *out, const char *s);

/* What the index, JUnit and Markdown need of a run (owned strings). */
struct rpt_brief {
    int db_index;
    int64_t run_id, wall_ms, sim_end_ns;
    uint64_t seed;
    char *scenario, *verdict, *digest, *first_violation, *replay, *page;
    struct hist_op_counts counts;
};
void rpt_brief_from(struct rpt_brief *b, const struct rpt_run *r, const char *page);
void rpt_brief_close(struct rpt_brief *b);

/* rpt_out.c */
void rpt_junit(struct fl_buf *out, const struct rpt_brief *runs, size_t n);
void rpt_markdown(struct fl_buf *out, const struct rpt_brief *runs, size_t n);
void rpt_index_html(struct fl_buf *out, const struct rpt_brief *runs, size_t n);
int rpt_file_write(const char *dir, const char *name, struct fl_buf *b, char *err, size_t err_len);
int rpt_dir_make(const char *dir, char *err, size_t err_len);

/* rpt_esc.c */
void rpt_md_escape(struct fl_buf *out, const char *s);
/* Shortens s to at most max bytes at a UTF-8 boundary, appending "…" (new string). */
char *rpt_text_cap(const char *s, size_t max);
/* "1.234 s" style time from ns into buf. */
const char *rpt_fmt_ns(int64_t ns, char *buf, size_t n);

#endif
