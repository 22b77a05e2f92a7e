/*
 * hist_rows.h: the ops, watches and watch_events rows that the tests writing a history by
 * hand (test_history, test_load_db, test_report, test_sweep) fill in, made in one call
 * each instead of the init-then-six-fields block each such test wrote out. What a row
 * leaves out keeps hist_*_init's default; a test sets
 * any other field on the returned row before adding it.
 */
#ifndef FL_TEST_HIST_ROWS_H
#define FL_TEST_HIST_ROWS_H

#include <string.h>

#include "harness/history/history.h"

/* Sets a text column to s (and its length) unless s is NULL. */
static inline void t_text(const void **col, size_t *len, const char *s)
{
    if (s) {
        *col = s;
        *len = strlen(s);
    }
}

/* An op of client `client`: `kind` on `key` (NULL: none) with `value` (NULL: none),
 * called at `call_ns`, returned at `return_ns` with status `st`. */
static inline struct hist_op t_op_row(int64_t client, const char *kind, const char *key,
                                      const char *value, int64_t call_ns, int64_t return_ns,
                                      enum hist_status st)
{
    struct hist_op op;
    hist_op_init(&op);
    op.client_id = client;
    op.kind = kind;
    t_text(&op.key, &op.key_len, key);
    t_text(&op.value, &op.value_len, value);
    op.call_ns = call_ns;
    op.return_ns = return_ns;
    op.status = st;
    return op;
}

/* Watch `id` of client `client` on `key`, from `start_rev`, opened at `opened_ns`. */
static inline struct hist_watch t_watch_row(int64_t id, int64_t client, const char *key,
                                            int64_t start_rev, int64_t opened_ns)
{
    struct hist_watch w;
    hist_watch_init(&w);
    w.watch_id = id;
    w.client_id = client;
    t_text(&w.key, &w.key_len, key);
    w.start_rev = start_rev;
    w.opened_ns = opened_ns;
    return w;
}

/* An event of watch `watch`: `kind` on `key` (NULL: none), carrying `value` (NULL:
 * none), numbered `seq` in delivery and response order (HIST_NULL: the default). */
static inline struct hist_watch_event t_event_row(int64_t watch, int64_t seq, const char *kind,
                                                  const char *key, const char *value)
{
    struct hist_watch_event e;
    hist_watch_event_init(&e);
    e.watch_id = watch;
    if (seq != HIST_NULL)
        e.seq = e.response_seq = seq;
    e.kind = kind;
    t_text(&e.key, &e.key_len, key);
    t_text(&e.value, &e.value_len, value);
    return e;
}

#endif
