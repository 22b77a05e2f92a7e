/*
 * run_edges.c: the code-edge counter of an explore build (cmake -DFL_EXPLORE_COVERAGE=ON;
 * README "Guided search"). The node code is compiled with -fsanitize-coverage=trace-pc
 * and calls the callback below at every basic block; it is a library of its own
 * (fl_edges), linked to every node library, so that anything that links node code links
 * it, and harness/run/run_coverage.c reads and resets the counts for a run's coverage.
 * Built only in an explore build; it is not instrumented itself.
 */
#include "harness/run/edges/run_edges.h"

uint32_t run_edge_count[RUN_EDGE_CAP];
uint64_t run_edge_prev; /* the previous block's number, shifted (AFL) */

/* The main binary's code (GNU ld's symbols). */
extern const char __executable_start[], etext[];

/* The compiler's callback (SanitizerCoverage trace-pc, which gcc and clang both have)
 * at every basic block of the node code: the block is numbered by its address's offset
 * in the binary (the same in every process of it, whatever the load address), hashed
 * to 16 bits, and the edge from the previous block counted as AFL does (prev >> 1 ^
 * cur; saturating). A block whose call to here is a tail call (gcc makes ~200 of them)
 * reports its caller's address instead, which for node code called back from a shared
 * library lies in that library, loaded elsewhere in each process: every address outside
 * the binary counts as one block, 0 (else 6 of a chaos run's ~4,800 edges differ from
 * one process to the next). */
void __sanitizer_cov_trace_pc(void);
void __sanitizer_cov_trace_pc(void)
{
    uintptr_t ra = (uintptr_t)__builtin_return_address(0);
    uintptr_t lo = (uintptr_t)__executable_start, hi = (uintptr_t)etext;
    uint64_t pc = ra >= lo && ra < hi ? (uint64_t)(ra - lo) : 0;
    uint64_t cur = (pc * UINT64_C(0x9E3779B97F4A7C15)) >> 48;
    uint32_t *c = &run_edge_count[(cur ^ run_edge_prev) & (RUN_EDGE_CAP - 1)];
    *c += *c != UINT32_MAX;
    run_edge_prev = cur >> 1;
}
