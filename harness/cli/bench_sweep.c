/* bench_sweep.c: figures for faultline bench from the sweep side; owned by that module.
 * Sets nothing until it measures something real. */
#include "harness/cli/bench.h"

void bench_sweep(const struct bench_ctx *ctx, json_t *out)
{
    (void)ctx;
    (void)out;
}
