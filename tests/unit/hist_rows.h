/*
 * hist_rows.h: the watches and watch_events rows that the tests writing a history by
 * hand (test_history, test_load_db, test_report, test_sweep) fill in, made in one call
 * each instead of the init-then-six-fields block each such test wrote out. What a row
 * leaves out keeps hist_watch_init's or hist_watch_event_init's default; a test sets
 * any other field on the returned row before adding it.
 */
#ifndef FL_TEST_HIST_ROWS_H
#define FL_TEST_HIST_ROWS_H

#include <string.h>

#include "harness/history/history.h"

/* Watch `id` of client `client` on `key`, from `start_rev`, opened at `opened_ns`. */
static inline struct hist_watch t_watch_row(int64_t id, int64_t client, const char *key,
                                            int64_t start_rev, int64_t opened_ns)
{
    struct hist_watch w;
    hist_watch_init(&w);
    w.watch_id = id;
    w.client_id = client;
    w.key = key;
    w.key_len = strlen(key);
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
    if (key) {
        e.key = key;
        e.key_len = strlen(key);
    }
    if (value) {
        e.value = value;
        e.value_len = strlen(value);
    }
    return e;
}

#endif
