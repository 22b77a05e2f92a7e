/*
 * exit_codes.h: the process exit codes every faultline command returns (DESIGN §3.9),
 * by name, for the layers below the CLI that decide them (a run's verdict, a
 * scenario's error) as well as for the CLI itself.
 */
#ifndef FL_EXIT_CODES_H
#define FL_EXIT_CODES_H

enum fl_exit_code {
    FL_EXIT_PASS = 0,     /* every check passed */
    FL_EXIT_FAIL = 1,     /* a violation */
    FL_EXIT_USAGE = 2,    /* bad input: arguments, a script, a history */
    FL_EXIT_INTERNAL = 3, /* internal error, timeout or interrupt */
    FL_EXIT_UNKNOWN = 4   /* a checker could not decide */
};

#endif
