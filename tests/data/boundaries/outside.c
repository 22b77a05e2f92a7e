/* Compiled by the test build.internal_headers (tests/cmake/boundaries.cmake): a file
 * outside harness/sim that includes the simulator's internal header must not build
 * unless it declares itself a white-box user of the module (-DFL_INTERNAL_sim). */
#include "harness/sim/sim_int.h"

int outside_probe(void);
int outside_probe(void) { return 0; }
