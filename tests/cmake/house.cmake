# house (issue 15 §4): the pure Raft core prints nothing; what it notices goes out in
# its ready (events, notes) and the server logs it. The check reads the sources, so it
# fails the moment a print comes back (tests/data/house/pure_sources.cmake).
fl_test(build.raft_prints_nothing unit 60
  ${CMAKE_COMMAND} -DDIR=${CMAKE_SOURCE_DIR}/nodes/raft -DWHAT=nodes/raft
  -P ${CMAKE_SOURCE_DIR}/tests/data/house/pure_sources.cmake)
# The MVCC store is held to the same rule.
fl_test(build.mvcc_prints_nothing unit 60
  ${CMAKE_COMMAND} -DDIR=${CMAKE_SOURCE_DIR}/nodes/mvcc -DWHAT=nodes/mvcc
  -P ${CMAKE_SOURCE_DIR}/tests/data/house/pure_sources.cmake)
