# fidelity.cmake: scenario tests of issue 14's fidelity points (owner: lead). Each
# scenario asserts its behaviour with expect and must pass (exit 0) for seeds 1..3.
set(FL_FDB ${CMAKE_BINARY_DIR}/tests/fidelity)
file(MAKE_DIRECTORY ${FL_FDB})

foreach(s pinned_node_error client_observe)
  fl_run_seeds(scenario.fidelity.${s}.<seed> "1;2;3" scenario 120 0 - ${FL_SCN}/${s}.lua
               --seed <seed> --db ${FL_FDB}/${s}-<seed>.db --json)
endforeach()

fl_test(cli.history.clients cli 300
  python3 ${FL_SCN}/clients_history.py ${FL_BIN} ${CMAKE_SOURCE_DIR} ${FL_FDB}/clients_history)
