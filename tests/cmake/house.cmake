# house (issue 15 §4): the pure Raft core prints nothing; what it notices goes out in
# its ready (events, notes) and the server logs it. The check reads the sources, so it
# fails the moment a print comes back (tests/data/house/pure_sources.cmake).
add_test(NAME build.raft_prints_nothing
  COMMAND ${CMAKE_COMMAND} -DDIR=${CMAKE_SOURCE_DIR}/nodes/raft -DWHAT=nodes/raft
          -P ${CMAKE_SOURCE_DIR}/tests/data/house/pure_sources.cmake)
set_tests_properties(build.raft_prints_nothing PROPERTIES LABELS unit TIMEOUT 60)
# The MVCC store is held to the same rule.
add_test(NAME build.mvcc_prints_nothing
  COMMAND ${CMAKE_COMMAND} -DDIR=${CMAKE_SOURCE_DIR}/nodes/mvcc -DWHAT=nodes/mvcc
          -P ${CMAKE_SOURCE_DIR}/tests/data/house/pure_sources.cmake)
set_tests_properties(build.mvcc_prints_nothing PROPERTIES LABELS unit TIMEOUT 60)
