/*
 * load_int.h: internals shared by the history loaders (load*.c): turning one
 * operation's request/response JSON into checker operations, bytes in JSON, and
 * reading whole files. Not a public interface.
 */
#ifndef FL_HISTORY_LOAD_INT_H
#define FL_HISTORY_LOAD_INT_H

/* Internal to harness/history: compiled only into fl_history (which defines FL_INTERNAL_history)
 * and into the white-box tests that declare it (tests/CMakeLists.txt). */
#ifndef FL_INTERNAL_history
#error "harness/history/load_int.h is internal to harness/history: include its public header instead"
#endif

#include "harness/history/load.h"

#include <jansson.h>

/* Bytes in JSON: a string, or {"hex":"..."}; null sets *is_null. FL_EINVAL otherwise. */
int ld_bytes(const json_t *j, struct fl_buf *out, bool *is_null);

/* An operation described by JSON, as the DB row or a JSON line gives it. req and resp
 * may be the same object (JSON lines) and may be NULL. */
struct ld_op {
    const char *kind;
    int32_t client;
    int64_t op_id;
    uint32_t line;
    int64_t call_ns, return_ns; /* CHK_NEVER when none */
    int status;                 /* enum chk_status */
    const char *error;          /* may be NULL */
    int64_t rev;                /* CHK_NO_REV when none */
    json_t *req, *resp;
    bool lenient; /* a kind the checkers do not model is skipped, not an error */
};

/* Appends the op to h. Returns 0 on success, 1 when the kind is not a key-value
 * operation the checkers model (lease calls, defragment, member calls: skipped),
 * -1 with a message in err on bad input. */
int ld_build_op(struct chk_history *h, const struct ld_op *o, char *err, size_t err_size);

/* enum chk_err from etcd's error text. */
int ld_error_kind(const char *error);

/* chk_history_finish with its message turned into "NAME:LINE: message". */
int ld_finish(const char *name, struct chk_history *h, struct fl_buf *err);

/* Reads a whole regular file (NUL-terminated; *len excludes the NUL). Errors name the
 * path: not found / is a directory / unreadable. */
int ld_read_file(const char *path, char **data, size_t *len, struct fl_buf *err);

#endif
