/*
 * cli.h: the faultline subcommands (DESIGN §3.9). Each cmd_NAME takes the arguments
 * after the subcommand name (argv[0] is the subcommand) and returns the process
 * exit code: 0 all checks passed, 1 a violation, 2 bad input, 3 internal error or
 * timeout, 4 a checker gave up.
 */
#ifndef FL_CLI_H
#define FL_CLI_H

enum {
    FL_EXIT_PASS = 0,
    FL_EXIT_FAIL = 1,
    FL_EXIT_USAGE = 2,
    FL_EXIT_INTERNAL = 3,
    FL_EXIT_UNKNOWN = 4
};

int cmd_run(int argc, char **argv);
int cmd_sweep(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_shrink(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_hunt(int argc, char **argv);

/* Prints "faultline: MSG" to stderr and returns FL_EXIT_USAGE. */
int cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
