/*
 * run_edges.h: the code-edge map of an explore build (run_edges.c): AFL's 64 K hit
 * counters, indexed by (previous block >> 1) ^ block, and the previous block.
 * run_coverage.c zeroes both when a run's coverage starts and reports the counts.
 */
#ifndef FL_RUN_EDGES_H
#define FL_RUN_EDGES_H

#include <stdint.h>

#define RUN_EDGE_CAP 65536 /* the edge map: AFL's 64 K counters */

extern uint32_t run_edge_count[RUN_EDGE_CAP];
extern uint64_t run_edge_prev;

#endif
