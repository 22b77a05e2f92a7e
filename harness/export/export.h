/*
 * export.h: a loaded history written back out as JSON lines (DESIGN §3.7), the format
 * `faultline check --format jsonl` reads, so that any history a faultline database
 * holds (simulated, live or etcd) can go to other tools and come back to the same
 * verdicts (`faultline export`, issue 16 §4).
 *
 * The writer works on the checkers' struct chk_history (what the loaders of load.h
 * produce), not on database rows, so it needs nothing of the schema beyond the
 * loader API. Every op carries its key(s). An op with a single sub-operation and no
 * compares is written flat (get: "key", "value", "mod_rev", "create_rev",
 * "version", "count"; put: "key", "value"; delete: "key", "deleted"); txns, cas and
 * compactions in the request/response shapes of checkers.h, lease ends as
 * "lease_revoke". Watches follow the ops: every watch_open, then every watch_event
 * in the order the history holds them, then every watch_close, so that re-loading
 * builds the same arrays. Keys and values are JSON strings, or {"hex":...} when
 * they are not UTF-8.
 *
 * Re-loading the output with hist_load_jsonl and exporting again gives the same
 * bytes (tests/unit/export), and the same verdicts as the source (tests/cmake/live.cmake).
 * One corner changes the in-memory form, not the verdicts: a plain put that asked for
 * prev_kv and has its result is written as a one-put txn (a flat line cannot carry
 * both the request's "prev_kv":true and the response's prev_kv), which re-loads with
 * the txn's "succeeded" flags set.
 */
#ifndef FL_EXPORT_H
#define FL_EXPORT_H

#include "checkers/checkers.h"

#include <stdio.h>

/* Appends h (finished or not) as JSON lines to out, one object per line, each ending
 * in '\n'. Returns FL_OK, or FL_ENOMEM when jansson cannot build a line. */
int exp_jsonl_write(const struct chk_history *h, struct fl_buf *out);

/* The same, written to f; FL_EIO when a write fails. */
int exp_jsonl_file(const struct chk_history *h, FILE *f);

#endif
