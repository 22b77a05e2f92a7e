# The live target of `faultline run` (issue 16 §2, helper liverun): a scenario on our
# own members, each its own OS process (`faultline member`), clients bridged over real
# loopback TCP through the client proxies.
set(FL_LIVE_SCN ${CMAKE_SOURCE_DIR}/tests/scenario/live)
set(FL_LIVE_WORK ${CMAKE_BINARY_DIR}/live-target-tests)

# The live smoke: 3 member processes, a partition, a kill and restart, a pause, a skew,
# four balancers, traffic and watches; linearizability and watch pass, the summary and
# the runs row say live with no digest (about 6 s of wall time). pdeath: faultline
# killed with SIGKILL in the middle of a live run, its member processes die too.
fl_target_smoke(live member_target ${FL_LIVE_SCN}/smoke.lua ${FL_LIVE_WORK})
# What the live target cannot do stops the scenario naming the function and the target
# (exit 2); the summary says live and no digest.
add_test(NAME live.member_target.refuse
  COMMAND sh ${FL_LIVE_SCN}/refuse.sh ${FL_BIN} ${FL_LIVE_WORK}/refuse)
# net (delay), clog and a one-way partition between member processes go through the
# peer proxies; snapshot_save, alarm_disarm and move_leader reach the processes (about 8 s).
add_test(NAME live.member_target.net
  COMMAND sh ${FL_LIVE_SCN}/pass.sh ${FL_BIN} ${FL_LIVE_SCN}/net.lua ${FL_LIVE_WORK}/net)
set_tests_properties(live.member_target.refuse live.member_target.net
  PROPERTIES LABELS live SKIP_RETURN_CODE 77 TIMEOUT 120)
