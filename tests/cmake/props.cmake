# props.cmake: tests of issue 13 §3 "more properties, checked always" (owner: props):
# --paranoid (the Raft and MVCC cores' invariants after every simulated event), the new
# raft_safety properties, converge's online KV hash comparison and the liveness check,
# each shown catching a member broken on purpose. The unit tests of the checkers are
# tests/unit/checkers/test_raft_safety_props.c and test_kv_hash.c (globbed).
#
# --paranoid is on for the whole plain pass: every test of the suite gets
# FAULTLINE_PARANOID=1 in its environment (faultline run reads it as the default of
# --paranoid; sweep workers inherit it). The call is deferred to the end of
# tests/CMakeLists.txt so that it reaches the tests every tests/cmake/*.cmake file
# adds, whatever their order. The sanitizer build (FL_SANITIZE) leaves it off to stay
# within CI's time (its paranoid tests below pass --paranoid explicitly), and so does
# -DFL_PARANOID_TESTS=OFF.
set(FL_PROPS ${CMAKE_SOURCE_DIR}/tests/scenario/props)
set(FL_PDB ${CMAKE_BINARY_DIR}/tests/props)
file(MAKE_DIRECTORY ${FL_PDB})

function(fl_props_paranoid_everywhere)
  get_property(all DIRECTORY PROPERTY TESTS)
  foreach(t ${all})
    set_property(TEST ${t} APPEND PROPERTY ENVIRONMENT FAULTLINE_PARANOID=1)
  endforeach()
endfunction()
option(FL_PARANOID_TESTS "run the test suite with FAULTLINE_PARANOID=1 (off: faster)" ON)
if(FL_PARANOID_TESTS AND NOT FL_SANITIZE)
  cmake_language(DEFER CALL fl_props_paranoid_everywhere)
endif()

function(fl_props_test name timeout)
  add_test(NAME ${name} COMMAND ${ARGN})
  set_tests_properties(${name} PROPERTIES LABELS props TIMEOUT ${timeout})
endfunction()
