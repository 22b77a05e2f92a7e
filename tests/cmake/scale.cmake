# scale.cmake: sweeps beyond one machine, issue 17 §3 (owner: lead): `--shard auto` from
# each job runner's environment and `faultline merge` of the shard databases.
fl_test(cli.sweep.shard_auto_merge cli 300
  ${CMAKE_SOURCE_DIR}/tests/scenario/shard_merge.sh ${FL_BIN} ${CMAKE_SOURCE_DIR}
  ${CMAKE_BINARY_DIR}/tests/shard_merge)
fl_test(cli.sweep.examples cli 300
  python3 ${CMAKE_SOURCE_DIR}/tests/scenario/examples_check.py ${FL_BIN}
  ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR}/tests/examples)
