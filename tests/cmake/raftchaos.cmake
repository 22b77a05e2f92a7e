# raftchaos.cmake: tests of issue 13's three Raft switches in the generic chaos (owner:
# raftchaos). raft_safety's commit_quorum property (every index a leader declares
# committed is held, in their persisted logs, by a quorum of the voters of its
# configuration) shown catching a member broken on purpose: a leader that removes itself
# and counts itself in the new configuration's quorum (raft.removed_leader_counts_self),
# caught at the commit itself rather than by what it breaks later; and the same seeds
# passing without the switch. The checker's unit tests are
# tests/unit/checkers/test_raft_safety_quorum.c (globbed).
set(FL_RC_DB ${CMAKE_BINARY_DIR}/tests/raftchaos)
file(MAKE_DIRECTORY ${FL_RC_DB})

fl_bug_pair(raftchaos.commit_quorum.removed_leader "props;raftchaos" 300
  ${CMAKE_SOURCE_DIR}/scenarios/bugs/removed-leader-counts-self.lua 1..3 ${FL_RC_DB}/rl
  raft.removed_leader_counts_self --property raft_safety=commit_quorum)
