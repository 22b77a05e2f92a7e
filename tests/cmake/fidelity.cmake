# fidelity.cmake: scenario tests of issue 14's fidelity points (owner: lead). Each
# scenario asserts its behaviour with expect and must pass (exit 0) for seeds 1..3.
set(FL_FSCN ${CMAKE_SOURCE_DIR}/tests/scenario)
set(FL_FDB ${CMAKE_BINARY_DIR}/tests/fidelity)
file(MAKE_DIRECTORY ${FL_FDB})

foreach(s pinned_node_error client_observe)
  foreach(seed 1 2 3)
    add_test(NAME scenario.fidelity.${s}.${seed}
             COMMAND ${FL_FSCN}/expect_cli.sh 0 - ${FL_BIN} run ${FL_FSCN}/${s}.lua
                     --seed ${seed} --db ${FL_FDB}/${s}-${seed}.db --json)
    set_tests_properties(scenario.fidelity.${s}.${seed} PROPERTIES LABELS scenario TIMEOUT 120)
  endforeach()
endforeach()

add_test(NAME cli.history.clients
         COMMAND python3 ${FL_FSCN}/clients_history.py ${FL_BIN} ${CMAKE_SOURCE_DIR}
                 ${FL_FDB}/clients_history)
set_tests_properties(cli.history.clients PROPERTIES LABELS cli TIMEOUT 300)
