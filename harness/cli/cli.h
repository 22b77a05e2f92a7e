/*
 * cli.h: the faultline subcommands (DESIGN §3.9). Each cmd_NAME takes the arguments
 * after the subcommand name (argv[0] is the subcommand) and returns the process
 * exit code: 0 all checks passed, 1 a violation, 2 bad input, 3 internal error or
 * timeout, 4 a checker gave up.
 */
#ifndef FL_CLI_H
#define FL_CLI_H

#include <stdbool.h>
#include <stdint.h>

#include "harness/common/exit_codes.h"

int cmd_run(int argc, char **argv);
int cmd_sweep(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_shrink(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_hunt(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_explore(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_member(int argc, char **argv);

/* Each subcommand's usage text (its --help, and the tail of an unknown-option error). */
extern const char cmd_run_usage[], cmd_sweep_usage[], cmd_shrink_usage[], cmd_bench_usage[],
    cmd_list_usage[], cmd_hunt_usage[], cmd_merge_usage[], cmd_explore_usage[], cmd_export_usage[],
    cmd_diff_usage[], cmd_member_usage[];
/* The usage text of subcommand cmd ("run", ...; "faultline" for the top level), NULL
 * for an unknown one. */
const char *cli_usage(const char *cmd);

/* ---- argument rules shared by the subcommands (cli_args.c) -------------------- */

/* Prints "faultline: MSG" to stderr (control bytes escaped) and returns
 * FL_EXIT_USAGE. */
int cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "faultline: CMD: unknown option 'OPT'" and CMD's usage on stderr; FL_EXIT_USAGE. */
int cli_unknown_option(const char *cmd, const char *opt);
/* A value option's first checks: a value follows (else "CMD: OPT needs WHAT") and it
 * was not given before (cli_once). 0, or FL_EXIT_USAGE after the message. */
int cli_value_once(const char *cmd, const char *opt, bool has_val, const char *what, bool *seen);
/* A word after the subcommand that no option took: an unknown option if it starts with
 * '-' (and is not "-" alone), else the scenario, which may be given once. 0 (*scenario
 * set), or FL_EXIT_USAGE after the message. */
int cli_scenario_arg(const char *cmd, const char *arg, const char **scenario);
/* "faultline: CMD: WHAT" (a required argument is missing) and CMD's usage on stderr;
 * FL_EXIT_USAGE. */
int cli_missing(const char *cmd, const char *what);
/* Plain decimal digits only (no sign, space or base prefix), within uint64_t. */
bool cli_parse_u64(const char *s, uint64_t *out);
/* The value v of option opt as a number in [min, max]: 0, or FL_EXIT_USAGE after a
 * message naming cmd, opt and v. */
int cli_u64_arg(const char *cmd, const char *opt, const char *v, uint64_t min, uint64_t max,
                uint64_t *out);
/* Seconds as digits with an optional fraction, above 0 and at most max_s. */
int cli_seconds_arg(const char *cmd, const char *opt, const char *v, double max_s, double *out);
/* A value option may be given once: FL_EXIT_USAGE the second time. */
int cli_once(const char *cmd, const char *opt, bool *seen);
/* A --bug NAME: a known switch (faultline list bugs), not given before, and room for
 * it (max names); appended to bugs[*count]. 0, or FL_EXIT_USAGE after a message. */
int cli_bug_arg(const char *cmd, const char *name, const char **bugs, int *count, int max);
/* A history database given on the command line must be a file: "", ":memory:" and
 * SQLite URIs ("file:...", in memory or not) are refused with FL_EXIT_USAGE. */
int cli_db_arg(const char *cmd, const char *opt, const char *v);
/* An output path (is_dir: a folder created if missing, else a file): not empty, its
 * parent folder exists and is writable, and it is not the other kind of thing. */
int cli_output_arg(const char *cmd, const char *opt, const char *v, bool is_dir);
/* True when an argument after the subcommand name is --help or -h. */
bool cli_wants_help(int argc, char **argv);

#endif
