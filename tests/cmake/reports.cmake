# reports.cmake: CLI tests of `faultline sweep` and `faultline report` (owner: reports).
# Each mode of tests/unit/sweep/sweep_cli_test.sh works in its own folder under the
# build tree: a sweep with a crashing, a hanging and a late-crashing worker (through
# --worker tests/unit/sweep/faulty_worker.sh), sharding that covers every seed exactly
# once plus the merged report of the shards, SIGINT in the middle of a sweep, and the
# error paths (exit code 2, one line). The unit tests in tests/unit/reports and
# tests/unit/sweep are registered by tests/CMakeLists.txt.
set(FL_SWEEP_SH ${CMAKE_SOURCE_DIR}/tests/unit/sweep/sweep_cli_test.sh)
set(FL_SWEEP_WORK ${CMAKE_BINARY_DIR}/tests/reports-work)
foreach(mode faulty shard failfast sigint errors)
  fl_test(cli.sweep.${mode} cli 120
    sh ${FL_SWEEP_SH} ${mode} ${FL_BIN} ${CMAKE_SOURCE_DIR} ${FL_SWEEP_WORK}/${mode})
endforeach()
