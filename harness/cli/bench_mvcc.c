/* bench_mvcc.c: figures for faultline bench from the mvcc side; owned by that module.
 * Sets nothing until it measures something real. */
#include "harness/cli/bench.h"

void bench_mvcc(const struct bench_ctx *ctx, json_t *out)
{
    (void)ctx;
    (void)out;
}
