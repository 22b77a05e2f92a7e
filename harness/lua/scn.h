/*
 * scn.h: the Lua scenario runtime (DESIGN §4). scn_run loads a scenario file into a
 * sandboxed Lua state, runs it as a coroutine driven by the simulator of a run_world
 * (harness/run), and ends the run: checkers, verdict, digest and the --json summary.
 *
 * The script sees the API listed by scn_api_names (`faultline list api`); every name
 * there is documented with an example in scenarios/README.md. A script error, a bad
 * argument, an unknown node id or option, or a call that must block made outside a
 * coroutine stops the run with "SCENARIO:LINE: message" and exit code 2; the database
 * still records the run, as 'error'. A run past its --timeout ends the same way with
 * exit code 3; one whose Lua state reaches --lua-mem-mb with exit code 2.
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
    bool paranoid;   /* run_options.paranoid: core invariants after every event */
    /* Wall-clock limit of the whole run (--timeout); <= 0: none. Past it the script is
     * stopped (at its next Lua instructions, or between two simulator events), the run
     * ends 'error' with the reason and exit code 3. */
    double timeout_s;
    /* Bytes the Lua state may hold (--lua-mem-mb); 0: none. Reaching it is a script
     * error (exit 2). What counts is the sizes Lua asks its allocator for, the same in
     * every build, so the limit cannot move a digest. */
    size_t lua_mem_bytes;
    /* run_options.target, .workdir, .keep: where the scenario runs (--target) */
    int target;
    const char *workdir;
    bool keep;
};

#define SCN_TIMEOUT_S_DEFAULT  600.0
#define SCN_LUA_MEM_MB_DEFAULT 1024
#define SCN_DESCRIBE_TIMEOUT_S 10.0 /* `faultline list scenarios` reads each file */

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

/* --- shrinking (faultline shrink) ----------------------------------------------------- */

/* A shrink{} directive (scn_shrink.c documents what each field does). */
struct scn_directive {
    int64_t *skip_faults; /* ascending, no duplicates; owned */
    int n_skip;
    int64_t end_at_ns;  /* 0: none */
    int time_scale_pct; /* 100: none */
    int64_t scale_from_ns;
    int clients, keys, rate, watchers; /* -1: keep the scenario's */
    int nodes;                         /* cluster.nodes; -1: keep the scenario's */
    struct run_added_fault *add;       /* add_faults, in order; owned */
    int n_add;
    bool reseeded; /* reseed = N: the swarm's fault draws from N */
    uint64_t reseed;
    unsigned lanes; /* lanes = {...}: RUN_LANE_* bits the swarm keeps; 0: every one */
};
void scn_directive_init(struct scn_directive *d);
void scn_directive_close(struct scn_directive *d);
void scn_directive_copy(struct scn_directive *dst, const struct scn_directive *src);
/* Adds ordinals to the skip set (kept ascending and unique). */
void scn_directive_skip(struct scn_directive *d, const int64_t *ordinals, int n);
/* Appends one fault to add_faults (faultline explore's insertions). */
void scn_directive_add(struct scn_directive *d, const struct run_added_fault *f);
/* True when d asks for nothing (a plain run). */
bool scn_directive_empty(const struct scn_directive *d);
/* Appends "shrink{ ... }" (the fields that differ from a plain run) to out. */
void scn_directive_format(const struct scn_directive *d, struct fl_buf *out);
/* Fills d from the "shrink" object of a --json summary (NULL: a plain run). */
void scn_directive_from_json(struct scn_directive *d, const json_t *shrink);
/* Length of the shrink{...} directive (and the "; " after it) that text starts with,
 * as scn_shrink_text writes it; 0 when it starts with none. */
size_t scn_directive_prefix_len(const char *text, size_t len);
/* out = directive + body with body's line numbers unchanged: the directive goes in
 * front of the first line ("shrink{...}; " + line 1), or replaces a first line that
 * starts with '#' (which Lua would skip) by "shrink{...}; --" + that line. */
void scn_shrink_text(const struct scn_directive *d, const char *body, size_t len,
                     struct fl_buf *out);

struct scn_shrink_options {
    const char *path; /* the failing scenario */
    uint64_t seed;
    const char *const *bugs; /* --bug names (validated by the caller) */
    int bug_count;
    const char *check;    /* the check to keep failing; NULL: the first failing one */
    const char *out_path; /* NULL: NAME-seedN.shrunk.lua in the current directory */
    int max_runs;         /* replays allowed; 0: 400 */
    FILE *log;            /* progress and the removal report; NULL: silent */
};

struct scn_shrink_result {
    int exit_code;       /* 0 written, 1 nothing smaller fails, 2 bad input or passes, 3 internal */
    char error[1024];    /* why, when exit_code is 2 or 3 */
    char check[32];      /* the check kept failing */
    char out_path[4096]; /* written file (exit 0) */
    int runs;            /* replays made, the original's and the final check's included */
    int faults_before, faults_after;           /* recorded faults that have an ordinal */
    int64_t script_ms_before, script_ms_after; /* when the script ended */
    struct scn_directive found;                /* the directive written */
};

/* Shrinks a failing run (DESIGN §3.9): every candidate is a full replay in a forked
 * child. Writes the reduced scenario and replays that file once more to check that it
 * still fails the same check. Always fills res (closed with scn_shrink_result_close)
 * and returns res->exit_code. */
int scn_shrink(const struct scn_shrink_options *opts, struct scn_shrink_result *res);
void scn_shrink_result_close(struct scn_shrink_result *res);

/* Every function of the scenario surface, one name each (methods as "client:put"),
 * NULL-terminated; what `faultline list api` prints. */
extern const char *const scn_api_names[];

#endif
