# mstate.cmake: observable member state (issue 14 §3-§4): member_add{start = false} and
# start(n); status(n)'s Maintenance Status fields and config(n); typed node events; leader()
# and node_events{kind = "leader"} agreeing. Each scenario must pass (exit 0) on seeds 1..2.
set(FL_MSTATE_DB ${CMAKE_BINARY_DIR}/tests/mstate)
file(MAKE_DIRECTORY ${FL_MSTATE_DB})
set(FL_MSTATE_SCN member_start status_config status_alarm typed_events leader_event)
foreach(name ${FL_MSTATE_SCN})
  fl_run_seeds(scenario.mstate.${name}.<seed> "1;2" scenario 120 0 - ${FL_SCN}/mstate/${name}.lua
               --seed <seed> --db ${FL_MSTATE_DB}/${name}-<seed>.db)
endforeach()

# The typed columns of node_events: filled, NULL where an event has none, and an older
# database without them still reports and takes new runs.
fl_test(scenario.mstate.node_events_history scenario 120
  python3 ${FL_SCN}/mstate/node_events_history.py ${FL_BIN} ${CMAKE_SOURCE_DIR}
  ${FL_MSTATE_DB}/node_events_history)
