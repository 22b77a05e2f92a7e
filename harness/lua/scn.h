/*
 * scn.h: the Lua scenario runtime (DESIGN §4). scn_run loads a scenario file into a
 * sandboxed Lua state, runs it as a coroutine driven by the simulator of a run_world
 * (harness/run), and ends the run: checkers, verdict, digest and the --json summary.
 *
 * The script sees the API listed by scn_api_names (`faultline list api`); every name
 * there is documented with an example in scenarios/README.md. A script error, a bad
 * argument, an unknown node id or option, or a call that must block made outside a
 * coroutine stops the run with "SCENARIO:LINE: message" and exit code 2; the database
 * still records the run, as 'error'.
 */
#ifndef FL_SCN_H
#define FL_SCN_H

#include "harness/run/run.h"

struct scn_options {
    const char *path; /* scenario file */
    uint64_t seed;
    const char *db_path;     /* NULL: no database */
    const char *const *bugs; /* --bug names (validated by the caller) */
    int bug_count;
    bool unsafe_lua; /* lifts the sandbox: standard libraries, native pairs */
};

struct scn_result {
    struct run_result run; /* verdict, digest, summary (NULL when the run never started) */
    int exit_code;         /* DESIGN §3.9 */
    char error[1024];      /* "SCENARIO:LINE: message" on exit 2 or 3, else "" */
};

/* Runs one scenario to its end. Always fills res (the caller closes it with
 * scn_result_close) and returns res->exit_code. */
int scn_run(const struct scn_options *opts, struct scn_result *res);
void scn_result_close(struct scn_result *res);

/* Reads a scenario's scenario{ name=..., description=... } without running it: the
 * script runs until its scenario{} call, which stops it. Copies into name/desc ("" when
 * absent). Returns 0, or FL_ENOENT / FL_EINVAL with a message in desc. */
int scn_describe(const char *path, char *name, size_t name_len, char *desc, size_t desc_len);

/* Every function of the scenario surface, one name each (methods as "client:put"),
 * NULL-terminated; what `faultline list api` prints. */
extern const char *const scn_api_names[];

#endif
