/* cmd_bench.c: placeholder until its issue lands; it refuses to pretend. */
#include "harness/cli/cli.h"
#include "harness/common/common.h"

int cmd_bench(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "faultline: 'bench' is not implemented yet\n");
    return FL_EXIT_INTERNAL;
}
