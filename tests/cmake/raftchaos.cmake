# raftchaos.cmake: tests of issue 13's three Raft switches in the generic chaos (owner:
# raftchaos). raft_safety's commit_quorum property (every index a leader declares
# committed is held, in their persisted logs, by a quorum of the voters of its
# configuration) shown catching a member broken on purpose: a leader that removes itself
# and counts itself in the new configuration's quorum (raft.removed_leader_counts_self),
# caught at the commit itself rather than by what it breaks later; and the same seeds
# passing without the switch. The checker's unit tests are
# tests/unit/checkers/test_raft_safety_quorum.c (globbed).
set(FL_RC_PROPS ${CMAKE_SOURCE_DIR}/tests/scenario/props)
set(FL_RC_DB ${CMAKE_BINARY_DIR}/tests/raftchaos)
file(MAKE_DIRECTORY ${FL_RC_DB})
set(FL_RC_EXPECT python3 ${FL_RC_PROPS}/expect_run.py ${FL_BIN})

function(fl_rc_test name timeout)
  add_test(NAME ${name} COMMAND ${ARGN})
  set_tests_properties(${name} PROPERTIES LABELS "props;raftchaos" TIMEOUT ${timeout})
endfunction()

fl_rc_test(raftchaos.commit_quorum.removed_leader 300
  ${FL_RC_EXPECT} ${CMAKE_SOURCE_DIR}/scenarios/bugs/removed-leader-counts-self.lua 1..3
  ${FL_RC_DB}/rl --exit 1 --property raft_safety=commit_quorum
  -- --bug raft.removed_leader_counts_self)
fl_rc_test(raftchaos.commit_quorum.removed_leader_off 300
  ${FL_RC_EXPECT} ${CMAKE_SOURCE_DIR}/scenarios/bugs/removed-leader-counts-self.lua 1..3
  ${FL_RC_DB}/rl_off --exit 0)
