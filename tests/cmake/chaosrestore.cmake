# chaosrestore.cmake (issue 13): the swarm's restore flow. chaos.lua seed 24 draws it
# (stream swarm/restore: a backup during the fault phase, restored into every member
# when the scenario is over); the run passes with the history cut at the restore, and fails
# raft_safety with server.restore_keeps_ids; seed 3 draws no restore. The cut itself:
# unit.checkers.test_history_cut.
fl_test(scenario.chaosrestore.flow scenario 300
  python3 ${CMAKE_SOURCE_DIR}/tests/scenario/chaosrestore/restore_check.py
  ${FL_BIN} ${CMAKE_SOURCE_DIR}/scenarios/chaos.lua
  ${CMAKE_BINARY_DIR}/tests/chaosrestore 24 3)
