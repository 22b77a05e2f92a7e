# scale.cmake: sweeps beyond one machine, issue 17 §3 (owner: lead): `--shard auto` from
# each job runner's environment and `faultline merge` of the shard databases.
add_test(NAME cli.sweep.shard_auto_merge
         COMMAND ${CMAKE_SOURCE_DIR}/tests/scenario/shard_merge.sh ${FL_BIN} ${CMAKE_SOURCE_DIR}
                 ${CMAKE_BINARY_DIR}/tests/shard_merge)
set_tests_properties(cli.sweep.shard_auto_merge PROPERTIES LABELS cli TIMEOUT 300)
add_test(NAME cli.sweep.examples
         COMMAND python3 ${CMAKE_SOURCE_DIR}/tests/scenario/examples_check.py ${FL_BIN}
                 ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR}/tests/examples)
set_tests_properties(cli.sweep.examples PROPERTIES LABELS cli TIMEOUT 300)
