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

set(FL_SCNS ${CMAKE_SOURCE_DIR}/scenarios)

# --paranoid changes no event and no digest (and checks events): with and without.
fl_test(props.paranoid.same_digest props 300
  ${FL_EXPECT_RUN} ${FL_SCNS}/smoke.lua 3..4 ${FL_PDB}/same --exit 0 --same-digest-paranoid)
fl_test(props.paranoid.same_digest_chaos props 300
  ${FL_EXPECT_RUN} ${FL_SCNS}/chaos.lua 2..2 ${FL_PDB}/same_chaos --exit 0 --same-digest-paranoid)
# sweep --paranoid passes --paranoid to every worker.
fl_test(props.paranoid.sweep props 120
  sh -c "rm -f ${FL_PDB}/args.log ${FL_PDB}/sweep.db* && FL_ARGS_LOG=${FL_PDB}/args.log FL_REAL_BIN=${FL_BIN} ${FL_BIN} sweep ${FL_SCNS}/smoke.lua --seeds 1..2 -j 2 --paranoid --worker ${FL_PROPS}/args_worker.sh --db ${FL_PDB}/sweep.db >/dev/null 2>&1 && test \"$(grep -c -- ' --paranoid' ${FL_PDB}/args.log)\" = 2")

# raft_safety: a member broken on purpose in the simulator, caught by a new property.
# raft.learner_votes (new switch): a leader elected with a learner's vote.
fl_bug_pair(props.raft.learner_votes props 300 ${FL_SCNS}/bugs/learner-votes.lua 1..3
  ${FL_PDB}/learner raft.learner_votes --property raft_safety=learner_vote)
# raft.ack_before_fsync: a follower acknowledges entries before they are durable, a crash
# drops them, and a committed entry is lost (or the member comes back below the term or
# commit index it had promised; or, first, the leader counts acknowledgements of entries
# not persisted yet: commit_quorum).
fl_test(props.raft.ack_before_fsync props 300
  ${FL_EXPECT_RUN} ${FL_SCNS}/bugs/ack-before-fsync.lua 1..3 ${FL_PDB}/ack --exit 1
  --property "raft_safety=commit_quorum|committed_lost|term_durability|vote_durability|commit_durability"
  -- --bug raft.ack_before_fsync)
# raft.commit_old_term (Raft's Figure 8): the leader commits an entry of an earlier term by
# counting its replicas while a member holding a later-term entry at that index could
# still be elected by a quorum: caught at that commit (commit_electable), not only when
# the entry is overwritten later.
fl_test(props.raft.commit_old_term props 300
  ${FL_EXPECT_RUN} ${FL_SCNS}/bugs/commit-old-term.lua 1..3 ${FL_PDB}/cot --exit 1
  --property raft_safety=commit_electable -- --bug raft.commit_old_term)
# The swarm's churn lane (swarm { lanes = { "churn" } }; chaos.lua draws it apart) makes
# Figure 8 on its own: a chain of leader crashes, the old leader mostly back first.
fl_bug_pair(props.swarm.churn_figure8 props 300 ${FL_SCN}/churn_figure8.lua 21..21
  ${FL_PDB}/churn raft.commit_old_term --property raft_safety=commit_electable)
# server.restore_keeps_ids: the restored member reuses an identity with a lower term.
fl_test(props.raft.restore_keeps_ids props 300
  ${FL_EXPECT_RUN} ${FL_SCNS}/bugs/restore-keeps-ids.lua 1..2 ${FL_PDB}/restore --exit 1
  --property raft_safety=term_durability -- --bug server.restore_keeps_ids)

# converge: mvcc.revision_reset_on_restart makes a restarted member's store differ from
# the others' at a revision they share (etcd's corruption check, online).
fl_test(props.converge.corruption props 300
  ${FL_EXPECT_RUN} ${FL_SCNS}/bugs/revision-reset-on-restart.lua 1..3 ${FL_PDB}/reset --exit 1
  --verdict converge=fail --property converge=corruption -- --bug mvcc.revision_reset_on_restart)
fl_test(props.converge.no_corruption props 300
  ${FL_EXPECT_RUN} ${FL_SCNS}/bugs/revision-reset-on-restart.lua 1..2 ${FL_PDB}/reset_off --exit 0
  --verdict converge=pass --contains "converge=\"corruption\": null")

# liveness: every policy fails over and recovers; client.no_failover does not.
fl_test(props.liveness.failover props 300
  ${FL_EXPECT_RUN} ${FL_PROPS}/liveness-failover.lua 1..3 ${FL_PDB}/live --exit 0
  --verdict liveness=pass --contains "liveness=\"rule\": \"after_heal\", \"result\": \"pass\"")
fl_test(props.liveness.no_failover props 300
  ${FL_EXPECT_RUN} ${FL_PROPS}/liveness-failover.lua 1..3 ${FL_PDB}/live_bug --exit 1
  --property liveness=failover --contains "liveness=no call made after the fault succeeded"
  -- --bug client.no_failover)
fl_test(props.liveness.never_heals props 300
  ${FL_EXPECT_RUN} ${FL_PROPS}/liveness-never-heals.lua 1..2 ${FL_PDB}/live_never --exit 0
  --verdict liveness=pass --contains "liveness=nothing to judge")
# health_aware keeps serving through the etcd#8673 partition (judged, not skipped).
fl_test(props.liveness.health_aware_8673 props 300
  ${FL_EXPECT_RUN} ${FL_SCNS}/seeds/balancer-partition-8673.lua 1..2 ${FL_PDB}/live_8673 --exit 0
  --verdict liveness=pass
  --contains "liveness=\"rule\": \"health_aware\", \"result\": \"pass\"")
