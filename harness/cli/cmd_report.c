/* cmd_report.c: placeholder until its issue lands; it refuses to pretend. */
#include "harness/cli/cli.h"
#include "harness/common/common.h"

int cmd_report(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "faultline: 'report' is not implemented yet\n");
    return FL_EXIT_INTERNAL;
}
