# The live target's membership, backup/restore and typed events (issue 16, helper
# livemore): scenarios on our member processes (`faultline run --target live`).
set(FL_LIVEMORE_WORK ${CMAKE_BINARY_DIR}/livemore-tests)

# A learner added and started, promoted once in sync; a voter added with start = false,
# then start(n); a founder removed (its process stops); writes and reads go on through
# the new members (about 25 s of wall time).
add_test(NAME live.member_target.membership
  COMMAND sh ${CMAKE_SOURCE_DIR}/tests/scenario/live/pass.sh ${FL_BIN}
          ${CMAKE_CURRENT_SOURCE_DIR}/live/membership_live.lua ${FL_LIVEMORE_WORK}/membership)
set_tests_properties(live.member_target.membership
  PROPERTIES LABELS live SKIP_RETURN_CODE 77 TIMEOUT 120)

# The members' event files carry node events' typed fields (peer, index, from_state,
# to_state, reason, pre): node_events() reads them on live as on sim (about 3 s).
add_test(NAME live.member_target.events
  COMMAND sh ${CMAKE_SOURCE_DIR}/tests/scenario/live/pass.sh ${FL_BIN}
          ${CMAKE_CURRENT_SOURCE_DIR}/live/events_live.lua ${FL_LIVEMORE_WORK}/events)
set_tests_properties(live.member_target.events
  PROPERTIES LABELS live SKIP_RETURN_CODE 77 TIMEOUT 60)

# copy_db (the db image inside snapshot_save's backup), restore's refusals (a corrupted
# backup, a raw copy without skip_hash_check) and a restore of a backup, then of a raw
# copy, into every member's data directory: a new cluster with the backup's data that
# takes writes (about 12 s).
add_test(NAME live.member_target.restore
  COMMAND sh ${CMAKE_SOURCE_DIR}/tests/scenario/live/pass.sh ${FL_BIN}
          ${CMAKE_CURRENT_SOURCE_DIR}/live/restore_live.lua ${FL_LIVEMORE_WORK}/restore)
set_tests_properties(live.member_target.restore
  PROPERTIES LABELS live SKIP_RETURN_CODE 77 TIMEOUT 60)

# failpoint() in the member processes: raft/before_save delay on both followers holds a
# write, off makes writes fast again, crash ends a follower's process, a disk failpoint
# is refused (about 5 s).
add_test(NAME live.member_target.failpoint
  COMMAND sh ${CMAKE_SOURCE_DIR}/tests/scenario/live/pass.sh ${FL_BIN}
          ${CMAKE_CURRENT_SOURCE_DIR}/live/failpoint_live.lua ${FL_LIVEMORE_WORK}/failpoint)
set_tests_properties(live.member_target.failpoint
  PROPERTIES LABELS live SKIP_RETURN_CODE 77 TIMEOUT 60)
