# The live target closer to the simulator (issue 16, helper live3): scenarios on our
# member processes (`faultline run --target live`).
set(FL_LIVE3_WORK ${CMAKE_BINARY_DIR}/live3-tests)

# status(), leader() and node events right after move_leader answers are the members'
# state after it; status().term is the member's Raft term (about 6 s).
add_test(NAME live.member_target.fresh
  COMMAND sh ${CMAKE_SOURCE_DIR}/tests/scenario/live/pass.sh ${FL_BIN}
          ${CMAKE_CURRENT_SOURCE_DIR}/live/fresh_live.lua ${FL_LIVE3_WORK}/fresh)
set_tests_properties(live.member_target.fresh
  PROPERTIES LABELS live SKIP_RETURN_CODE 77 TIMEOUT 60)

# cluster.snapshot_catchup is a member option: a follower cut off past the kept entries
# gets a snapshot (about 10 s).
add_test(NAME live.member_target.catchup
  COMMAND sh ${CMAKE_SOURCE_DIR}/tests/scenario/live/pass.sh ${FL_BIN}
          ${CMAKE_CURRENT_SOURCE_DIR}/live/catchup_live.lua ${FL_LIVE3_WORK}/catchup)
set_tests_properties(live.member_target.catchup
  PROPERTIES LABELS live SKIP_RETURN_CODE 77 TIMEOUT 90)

# A member add whose answer times out while the add commits later: the new member is
# learned from the member list, gets its slot and process, joins and catches up
# (about 30 s).
add_test(NAME live.member_target.lost_add
  COMMAND sh ${CMAKE_SOURCE_DIR}/tests/scenario/live/pass.sh ${FL_BIN}
          ${CMAKE_CURRENT_SOURCE_DIR}/live/lostadd_live.lua ${FL_LIVE3_WORK}/lost_add)
set_tests_properties(live.member_target.lost_add
  PROPERTIES LABELS live SKIP_RETURN_CODE 77 TIMEOUT 120)

# converge is judged on live (HashKV of every member at one revision); raft_safety from
# the members' Raft feeds (about 5 s).
add_test(NAME live.member_target.converge
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/live/converge.sh ${FL_BIN} ${FL_LIVE3_WORK}/converge)
set_tests_properties(live.member_target.converge PROPERTIES LABELS live TIMEOUT 60)

# A member answering queued requests on a connection its client closed while it was
# paused survives the failed write (SIGPIPE ignored in `faultline member`; about 15 s).
add_test(NAME live.member_target.sigpipe
  COMMAND sh ${CMAKE_SOURCE_DIR}/tests/scenario/live/pass.sh ${FL_BIN}
          ${CMAKE_CURRENT_SOURCE_DIR}/live/sigpipe_live.lua ${FL_LIVE3_WORK}/sigpipe)
set_tests_properties(live.member_target.sigpipe
  PROPERTIES LABELS live SKIP_RETURN_CODE 77 TIMEOUT 60)
