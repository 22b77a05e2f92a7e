# Run by build.internal_headers (tests/cmake/boundaries.cmake): cmake -DCC= -DSRC= -DFILE= -P this.
execute_process(COMMAND ${CC} -std=c11 -fsyntax-only -I${SRC} ${FILE}
                RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_QUIET)
if(rc EQUAL 0)
  message(FATAL_ERROR "an internal header built from outside its module")
endif()
if(NOT err MATCHES "harness/sim/sim_int.h is internal to harness/sim")
  message(FATAL_ERROR "failed, but not with the boundary's message:\n${err}")
endif()
execute_process(COMMAND ${CC} -std=c11 -fsyntax-only -DFL_INTERNAL_sim -I${SRC} ${FILE}
                RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the white-box declaration did not let it build:\n${err}")
endif()
message(STATUS "internal header refused outside its module, allowed when declared")
