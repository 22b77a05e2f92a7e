# thinsw.cmake (issue 13, owner: thinsw): switches the generic chaos sweep found on one
# or two seeds of 1..200, now found on more through later swarm draws (run_swarm.c
# draw_later: swarm/lag, swarm/split), and what the checkers say about a watch event a
# member dropped for a write of unknown outcome.
set(TS_SCN ${CMAKE_SOURCE_DIR}/tests/scenario)
set(TS_EXP python3 ${TS_SCN}/props/expect_run.py ${FL_BIN})
set(TS_CHAOS ${CMAKE_SOURCE_DIR}/scenarios/chaos.lua)
set(TS_WDB ${CMAKE_BINARY_DIR}/tests/thinsw)
file(MAKE_DIRECTORY ${TS_WDB})

function(ts_test name labels timeout)
  add_test(NAME ${name} COMMAND ${ARGN})
  set_tests_properties(${name} PROPERTIES LABELS "${labels}" TIMEOUT ${timeout})
endfunction()

# raft.multiple_conf_changes: chaos seed 56 draws the split change (swarm/split): the
# leader and one follower cut off, the follower's answers held, all of the other voters
# but one removed at once, the answers released while the sides are apart. With the
# switch the leader takes every removal and commits with the follower alone, beside the
# majority side's commits (committed_lost); without it the second removal is refused.
# Before the draw seed 56 passed with the switch (1 seed of 200 failed, 91).
ts_test(scenario.swarm.chaos_split_change "swarm;slow" 300
  ${TS_EXP} ${TS_CHAOS} 56..56 ${TS_WDB}/split --exit 1
  --property raft_safety=committed_lost -- --bug raft.multiple_conf_changes)
ts_test(scenario.swarm.chaos_split_change_off "swarm;slow" 300
  ${TS_EXP} ${TS_CHAOS} 56..56 ${TS_WDB}/split_off --exit 0)

# mvcc.watch_compacted_lost (etcd#17529): chaos seed 114 has the lag lane, which the lag
# focus (swarm/lag) runs without the lanes that kill, pause or cut members off, with
# streams of 8 responses and 200 ops/s: a starved watcher on the lagging member is behind
# the compaction with a full stream when it catches up by the leader's snapshot. With the
# switch it skips to the compaction ("reliable": missing events); without it, it is
# cancelled as compacted. Before the draw seed 114 passed with the switch.
ts_test(scenario.swarm.chaos_lag_compacted "swarm;slow" 300
  ${TS_EXP} ${TS_CHAOS} 114..114 ${TS_WDB}/lagc --exit 1
  --verdict watch=fail --contains "watch=missing event" -- --bug mvcc.watch_compacted_lost)
ts_test(scenario.swarm.chaos_lag_compacted_off "swarm;slow" 300
  ${TS_EXP} ${TS_CHAOS} 114..114 ${TS_WDB}/lagc_off --exit 0)

# mvcc.restore_lowers_future_watch (etcd#20221): chaos seed 97 has the lag focus: watches
# churn every 300 ms, some on the lagging member from a revision it has not reached; it
# catches up by a snapshot that ends below their start. With the switch the resync moves
# them down to the snapshot's revision + 1 and they deliver events below their start;
# without it they stay where they started. Before the draws seed 97 passed with the
# switch (1 seed of 200 failed, 156).
ts_test(scenario.swarm.chaos_lag_future_watch "swarm;slow" 300
  ${TS_EXP} ${TS_CHAOS} 97..97 ${TS_WDB}/lagf --exit 1
  --verdict watch=fail -- --bug mvcc.restore_lowers_future_watch)
ts_test(scenario.swarm.chaos_lag_future_watch_off "swarm;slow" 300
  ${TS_EXP} ${TS_CHAOS} 97..97 ${TS_WDB}/lagf_off --exit 0)

