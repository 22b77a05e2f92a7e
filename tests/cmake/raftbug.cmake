# raftbug.cmake (owner: raftbug): a raft_safety log_matching failure with no bug switch on
# (chaos, seed 8000669169896689) that was the checker's: a restarted member's disk held
# an overwrite it had written but never fed (paused before its fsync's callback, then a
# power loss). The run must pass raft_safety now. The checker's unit test is
# test_recovered_unfed_entries in tests/unit/checkers/test_raft_safety_props.c.
set(FL_RB_DB ${CMAKE_BINARY_DIR}/tests/raftbug)
file(MAKE_DIRECTORY ${FL_RB_DB})
# The scenario is chaos.lua with the shrink{} line in front, written here rather than kept
# as a copy (a later chaos.lua may no longer reach the window at this seed: the unit tests
# above are the lasting guard).
set(FL_RB_PARTS ${CMAKE_SOURCE_DIR}/tests/scenario/raftbug/unfed_overwrite_shrink.lua
                ${CMAKE_SOURCE_DIR}/scenarios/chaos.lua)
set(FL_RB_TEXT "")
foreach(part ${FL_RB_PARTS})
  file(READ ${part} FL_RB_PART)
  string(APPEND FL_RB_TEXT "${FL_RB_PART}")
endforeach()
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${FL_RB_PARTS})
file(WRITE ${FL_RB_DB}/unfed_overwrite.lua "${FL_RB_TEXT}")
add_test(NAME raftbug.unfed_overwrite
         COMMAND python3 ${FL_VERDICT} 0 raft_safety ${FL_BIN} run
                 ${FL_RB_DB}/unfed_overwrite.lua
                 --seed 8000669169896689 --db ${FL_RB_DB}/unfed_overwrite.db --json)
set_tests_properties(raftbug.unfed_overwrite PROPERTIES LABELS scenario TIMEOUT 120)
