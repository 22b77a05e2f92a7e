/*
 * report.h: reports of recorded runs (DESIGN §3.8), built from the history database
 * alone: a self-contained HTML page per run (inline SVG timeline, CSS and a little
 * JS; nothing fetched from the network), summary.json (the `--json` summary rebuilt
 * from the database), junit.xml (one test case per scenario x seed) and summary.md
 * (a short Markdown digest for CI logs).
 *
 * Everything taken from the history is escaped for the context it lands in (HTML
 * text, HTML attribute, XML, Markdown, JSON inside a <script> block). Keys and values
 * are arbitrary bytes: bytes that are not valid UTF-8, and control characters, are
 * shown as \xNN.
 *
 * Large histories stay usable: past RPT_OPS_DETAIL_MAX operations a client lane is
 * drawn as per-pixel-column buckets (counts of ok/fail/unknown) instead of one bar per
 * operation, and the per-operation table lists at most RPT_OPS_TABLE_MAX rows (the
 * operations a violation names are always drawn and listed).
 *
 * Errors: every int function returns FL_OK or an enum fl_err code and writes a
 * one-line message naming the file or run into err (FL_ENOENT: missing database or
 * unknown run id; FL_EINVAL: not a faultline database; FL_EIO: the output cannot be
 * written). The CLI turns any of them into exit code 2.
 *
 * This module reads no clock and no environment; output depends only on the database
 * content (and the live summary, when one is passed).
 */
#ifndef FL_REPORT_H
#define FL_REPORT_H

#include "harness/common/common.h"

#include <jansson.h>

struct hist_db;

/* Per-op bars up to this many ops in a run; buckets beyond. */
#define RPT_OPS_DETAIL_MAX 4000
/* Rows of the per-operation table at most. */
#define RPT_OPS_TABLE_MAX 2000
/* In a report of several runs, pages for at most this many passing runs (every run
 * that did not pass always gets its page; the index lists every run). */
#define RPT_PASS_PAGES_MAX 200

/*
 * Writes the report of one run into dir (created if missing; parents must exist):
 * index.html, summary.json, junit.xml, summary.md. db_path is opened read-only, so the
 * run must be committed (hist_run_end) first. run_id 0 means the latest run.
 * live_summary (may be NULL) is the --json object of the run that just finished; when
 * given it is written as summary.json as is and its per-client balancer figures are
 * shown (the database does not store them: without it they are derived from the ops).
 *
 * For `faultline run --report DIR` (cmd_run.c), after run_world_finish:
 *     char err[512];
 *     if (rpt_write_dir(db_path, res.run_id, dir, res.summary, err, sizeof err))
 *         fprintf(stderr, "faultline: %s\n", err);   // exit code 2
 */
int rpt_write_dir(const char *db_path, int64_t run_id, const char *dir, const json_t *live_summary,
                  char *err, size_t err_len);

/*
 * `faultline report DB... [--run ID] -o DIR`: the runs of all databases in one report.
 * run_id 0: every run of every database; otherwise that run of each database (an
 * unknown id in all of them is FL_ENOENT). One run gives the same output as
 * rpt_write_dir. Several give an index.html listing every run (verdict, seed, digest,
 * first violation, link) and one page per run (run-D-R.html, D = database index from
 * 1, R = run_id; passing runs past the first RPT_PASS_PAGES_MAX get none), a
 * summary.json {"runs":[...], "totals":{...}}, one junit.xml with all of them and a
 * summary.md.
 */
int rpt_write_report(const char *const *db_paths, int db_count, int64_t run_id, const char *dir,
                     char *err, size_t err_len);

/*
 * The --json summary of a recorded run rebuilt from the database (DESIGN §3.9 keys:
 * scenario, seed, digest, verdict, sim_ms, wall_ms, ops, checks, faults, leaders,
 * clients, run_id). Per-client figures come from the ops table (balancer null).
 * Returns a new reference, or NULL with a message in err.
 */
json_t *rpt_summary_from_db(struct hist_db *db, int64_t run_id, char *err, size_t err_len);

/*
 * Writes a JUnit XML file for every run of the databases (run_id 0) or run run_id:
 * one <testcase classname=SCENARIO name="seed N"> per run; a failing run carries a
 * <failure message=FIRST VIOLATION>, an error or unknown run an <error>. Used by
 * `faultline sweep --junit`.
 */
int rpt_write_junit(const char *const *db_paths, int db_count, int64_t run_id, const char *path,
                    char *err, size_t err_len);

/*
 * The report directory (dir, may be NULL) and/or JUnit file (junit_path, may be NULL)
 * of exactly the runs run_ids[0..n) of one database, in that order: what a sweep
 * writes for the runs it made, whatever else the database holds.
 */
int rpt_write_runs(const char *db_path, const int64_t *run_ids, size_t n, const char *dir,
                   const char *junit_path, char *err, size_t err_len);

/*
 * The first violation of a run as one line (e.g. "linearizability: get key1 ... at
 * revision 7: ..."), from its checks rows in order; "" for a passing run. Writes into
 * out (always NUL-terminated). Also the key sweeps group failing seeds by.
 */
int rpt_first_violation(struct hist_db *db, int64_t run_id, char *out, size_t out_len);

/*
 * The replay command of a run: "faultline run SCENARIO --seed N [--bug NAME]..." with
 * the bugs of runs.options; shell-quoted where needed. Caller frees.
 */
char *rpt_replay_command(const char *scenario, uint64_t seed, const char *options_json);

/* ---- escaping helpers (also used by tests) ---------------------------------------- */

/* Appends s (n bytes, arbitrary) as HTML text/attribute content: & < > " ' escaped,
 * invalid UTF-8, NUL and other control bytes (except \n, \t) as \xNN. */
void rpt_html_escape(struct fl_buf *out, const void *s, size_t n);
/* Same rules for XML 1.0 (which cannot carry control characters even as references). */
void rpt_xml_escape(struct fl_buf *out, const void *s, size_t n);
/* Appends bytes as readable text: valid UTF-8 kept, the rest as \xNN (no HTML escaping). */
void rpt_bytes_text(struct fl_buf *out, const void *s, size_t n);

#endif
