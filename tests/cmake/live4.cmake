# raft_safety on --target live (issue 16, helper live4): the member processes append
# their Raft safety feeds to one file of the run directory, replayed into the checker at
# the end (harness/run/run_target_live_safety.c; the replay of a damaged file is
# tests/unit/run/test_live_feed.c, the feed format tests/unit/checkers/
# test_raft_safety_feed.c).
set(FL_LIVE4_WORK ${CMAKE_BINARY_DIR}/live4-tests)

# The bundled smoke scenario on member processes: raft_safety passes, having checked
# elections, votes, appends, commits, applies and the killed leader's restart (~15 s).
add_test(NAME live.member_target.raft_safety_pass
  COMMAND sh ${CMAKE_SOURCE_DIR}/tests/live/live_check.sh ${FL_BIN} raft_safety pass
          ${CMAKE_SOURCE_DIR}/scenarios/smoke.lua ${FL_LIVE4_WORK}/pass)
# The bundled vote-ignores-log scenario with its bug switch, which the member processes
# take from `run --bug`: the stale member wins and overwrites committed entries, and
# raft_safety fails on the replayed feeds as on the simulator (~1-2 min: the scenario
# reads back every acknowledged write, lost ones time out).
add_test(NAME live.member_target.raft_safety_bug
  COMMAND sh ${CMAKE_SOURCE_DIR}/tests/live/live_check.sh ${FL_BIN} raft_safety fail
          ${CMAKE_SOURCE_DIR}/scenarios/bugs/vote-ignores-log.lua ${FL_LIVE4_WORK}/bug
          raft.vote_ignores_log)
set_tests_properties(live.member_target.raft_safety_pass PROPERTIES LABELS live
  SKIP_RETURN_CODE 77 TIMEOUT 120)
set_tests_properties(live.member_target.raft_safety_bug PROPERTIES LABELS live
  SKIP_RETURN_CODE 77 TIMEOUT 300)

# `faultline member`: --bug takes a bug switch's name, an unknown one is a usage error;
# --bug stays refused on etcd (its members are not ours).
set(FL_LIVE4_BAD
  "member_bug=member --id 1 --data /tmp/x --peer-listen 1 --client-listen 2 --bug no.such=no bug switch is named 'no.such'"
  "etcd_bug=run x.lua --target etcd --bug raft.vote_ignores_log=--bug: not available on --target etcd")
fl_cli_bad(cli.live4 ${FL_LIVE4_BAD})

# liveness on --target live: a member process dies for 8 s under load, one client per
# balancer policy; every policy fails over and recovers (pass), and with the client bug
# client.no_failover the failover rule fails (~25 s each).
add_test(NAME live.member_target.liveness_pass
  COMMAND sh ${CMAKE_SOURCE_DIR}/tests/live/live_check.sh ${FL_BIN} liveness pass
          ${CMAKE_SOURCE_DIR}/tests/scenario/props/liveness-failover.lua ${FL_LIVE4_WORK}/lv_pass)
add_test(NAME live.member_target.liveness_bug
  COMMAND sh ${CMAKE_SOURCE_DIR}/tests/live/live_check.sh ${FL_BIN} liveness fail
          ${CMAKE_SOURCE_DIR}/tests/scenario/props/liveness-failover.lua ${FL_LIVE4_WORK}/lv_bug
          client.no_failover)
set_tests_properties(live.member_target.liveness_pass live.member_target.liveness_bug
  PROPERTIES LABELS live SKIP_RETURN_CODE 77 TIMEOUT 120)
