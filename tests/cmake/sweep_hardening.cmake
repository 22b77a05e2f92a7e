# sweep_hardening.cmake: issue 12's regression tests of `faultline sweep` and the CLI
# (owner: sweep). Each mode of tests/unit/sweep/sweep_hardening.sh works in its own
# folder under the build tree; the script's header says what each mode asserts.
set(FL_SWEEP_HARD_SH ${CMAKE_SOURCE_DIR}/tests/unit/sweep/sweep_hardening.sh)
set(FL_SWEEP_HARD_WORK ${CMAKE_BINARY_DIR}/tests/sweep-hardening-work)
foreach(mode sigkill stale shrinkkill signals bigsummary fdlimit badargs help quoting)
  fl_test(cli.sweep_hardening.${mode} cli 300
    sh ${FL_SWEEP_HARD_SH} ${mode} ${FL_BIN} ${CMAKE_SOURCE_DIR} ${FL_SWEEP_HARD_WORK}/${mode})
endforeach()
# two runs of 100,000 expects each: minutes under ASan on a busy machine
set_tests_properties(cli.sweep_hardening.bigsummary PROPERTIES TIMEOUT 900)
