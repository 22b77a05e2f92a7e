/* cmd_check.c: placeholder until its issue lands; it refuses to pretend. */
#include "harness/cli/cli.h"
#include "harness/common/common.h"

int cmd_check(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "faultline: 'check' is not implemented yet\n");
    return FL_EXIT_INTERNAL;
}
