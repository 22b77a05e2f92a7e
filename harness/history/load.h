/*
 * load.h: filling a struct chk_history (checkers/checkers.h) from a history on disk,
 * and storing checker verdicts back into a faultline database.
 *
 * Formats: a faultline SQLite database (DESIGN §3.6), JSON lines (DESIGN §3.7),
 * Jepsen etcd logs and porcupine kv logs (corpus/porcupine/README.md). Every loader
 * leaves a finished history (chk_history_finish done) on success. On bad input it
 * returns FL_EINVAL (FL_ENOENT/FL_EIO for a file that cannot be read) and writes one
 * line "FILE:LINE: message" (or "FILE: message") into err; the CLI prints it and
 * exits 2. The history is then left initialised but partial; close it.
 *
 * This file does I/O and belongs to the harness; checkers/ stays pure.
 */
#ifndef FL_HISTORY_LOAD_H
#define FL_HISTORY_LOAD_H

#include "checkers/checkers.h"
#include "harness/common/common.h"

enum hist_format {
    HIST_FMT_AUTO = 0,
    HIST_FMT_DB,
    HIST_FMT_JSONL,
    HIST_FMT_JEPSEN,
    HIST_FMT_PORCUPINE_KV
};
/* "auto" | "db" | "jsonl" | "jepsen" | "porcupine-kv"; false when unknown. */
bool hist_format_parse(const char *s, int *out);
const char *hist_format_name(int fmt);
/* Sniffs the file's first bytes: SQLite header, '{' + ":process" (kv), '{' (jsonl),
 * "INFO" (jepsen), after a UTF-8 BOM and white space. FL_EINVAL with a message when
 * nothing fits or the file is empty ("no operations"). */
int hist_format_sniff(const char *path, int *fmt_out, struct fl_buf *err);

/*
 * Loads path in format fmt (HIST_FMT_AUTO sniffs) into h, which the caller has
 * initialised with chk_history_init. run_id selects the run of a database holding
 * several (0: the only run; several runs without run_id is an error naming them).
 * *run_id_out (may be NULL) receives the run that was loaded (0 for other formats).
 */
int hist_load(const char *path, int fmt, int64_t run_id, struct chk_history *h, int64_t *run_id_out,
              struct fl_buf *err);
/* hist_load that reads the file once (a pipe or /proc file works: sizes the OS reports
 * are not trusted) and says which format it found (*fmt in: the asked one or
 * HIST_FMT_AUTO; out: the one loaded). A UTF-8 BOM at the start of a text history is
 * skipped. A history with no operation, watch or watch event (an empty or
 * whitespace-only file, an empty run) is FL_EINVAL "FILE: no operations ...". */
int hist_load_fmt(const char *path, int *fmt, int64_t run_id, struct chk_history *h,
                  int64_t *run_id_out, struct fl_buf *err);

int hist_load_jsonl(const char *path, struct chk_history *h, struct fl_buf *err);
int hist_load_jepsen(const char *path, struct chk_history *h, struct fl_buf *err);
int hist_load_porcupine_kv(const char *path, struct chk_history *h, struct fl_buf *err);
/* In-memory variants (name is used in messages). */
int hist_load_jsonl_mem(const char *name, const char *text, size_t len, struct chk_history *h,
                        struct fl_buf *err);
int hist_load_jepsen_mem(const char *name, const char *text, size_t len, struct chk_history *h,
                         struct fl_buf *err);
int hist_load_porcupine_kv_mem(const char *name, const char *text, size_t len,
                               struct chk_history *h, struct fl_buf *err);

struct hist_db; /* history.h */
/* Loads one run from an open database (the run driver's handle). */
int hist_load_db(struct hist_db *db, int64_t run_id, struct chk_history *h, struct fl_buf *err);
/*
 * One ops row as the recorder hands it to hist_op_add (history.h), appended to h
 * exactly as hist_load_db would load that row back from the database (the same JSON
 * parsing, column filling and messages, name standing for the database path): the run
 * driver keeps the history it records in memory and checks it without reading it
 * back. Returns FL_OK, or FL_EINVAL with the loader's message in err. Call
 * chk_history_finish (or hist_load_finish) after the last row.
 */
struct hist_op; /* history.h */
int hist_load_op(struct chk_history *h, const char *name, int64_t op_id, const struct hist_op *op,
                 struct fl_buf *err);
/* The loaders' enum chk_err for an etcd error text (NULL or "": CHK_ERR_NONE). */
int hist_load_error_kind(const char *error);
struct hist_watch;
struct hist_watch_event;

/* One watches row into h (after the watches before it in watch_id order): what the
 * database load does with it once its columns are checked, and what the run's mirror
 * does with the rows it kept. */
void hist_load_watch(struct chk_history *h, const struct hist_watch *w);
/* One watch_events row of kind (enum chk_ev_kind) into h, likewise; the prev value
 * counts as given when ev->prev_kv is 1. */
void hist_load_watch_event(struct chk_history *h, const struct hist_watch_event *ev, int kind);
/* chk_history_finish with the loaders' message format ("NAME:LINE: message"). */
int hist_load_finish(const char *name, struct chk_history *h, struct fl_buf *err);
/* Opens path read-only, loads, closes. */
int hist_load_db_path(const char *path, int64_t run_id, struct chk_history *h, int64_t *run_id_out,
                      struct fl_buf *err);

/*
 * The run driver's one call at the end of a run: loads run_id from db (flush first),
 * checks it (lim may be NULL), fills out (release with chk_result_close) and
 * *elapsed_ms (wall time of load + check; may be NULL). Does not write anything.
 * The history is gone afterwards, so out->lin.detail and out->watch.detail are
 * replaced by the complete, self-contained check objects (chk_lin_json /
 * chk_watch_json): use them, or hist_check_result_json, for reports and --json.
 * Typical use:
 *     hist_flush(db);
 *     hist_check_run(db, run_id, NULL, &res, &ms, &err);
 *     hist_checks_store(db, NULL, &res, ms);            // rows into checks
 *     json_t *checks = hist_check_result_json(&res);    // {"linearizability","watch"}
 *     ... res.verdict (CHK_PASS/CHK_FAIL/CHK_UNKNOWN) ...; chk_result_close(&res);
 */
int hist_check_run(struct hist_db *db, int64_t run_id, const struct chk_limits *lim,
                   struct chk_result *out, int64_t *elapsed_ms, struct fl_buf *err);

/*
 * Appends the checks rows of a result to the CURRENT run of db (hist_run_begin or
 * hist_run_attach): "linearizability" and "watch", each with its verdict, elapsed_ms
 * and the detail JSON (compact, keys in a fixed order). h: the checked history, or
 * NULL after hist_check_run (the details in r are used as they are).
 */
int hist_checks_store(struct hist_db *db, const struct chk_history *h, const struct chk_result *r,
                      int64_t elapsed_ms);

/* {"linearizability":{...},"watch":{...}} from a hist_check_run result (new
 * reference), for the "checks" object of --json. */
json_t *hist_check_result_json(const struct chk_result *r);

#endif
