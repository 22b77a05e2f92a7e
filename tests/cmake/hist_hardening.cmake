# hist_hardening.cmake: issue 12's history, checker-summary and report items (engineer
# "hist"): damaged and read-only databases, failed writes, NUL bytes, asked-for checkers
# in the summary, empty histories, garbage in database columns, loose JSON lines,
# expect messages as bytes, 64-bit seeds, report files and planted symlinks. One
# ctest per case of tests/cmake/hist_hardening.py, each in its own work folder.
find_program(HIST_PYTHON python3)
if(HIST_PYTHON)
  foreach(case corrupt_db not_sqlite full_disk running_refused nul_bytes checks_never_vanish
          empty_history db_garbage jsonl_loose readonly_wal expect_bytes seed_u64
          report_symlink)
    add_test(NAME hist.hardening.${case}
             COMMAND ${HIST_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/cmake/hist_hardening.py ${case}
                     ${FL_BIN} ${CMAKE_SOURCE_DIR}
                     ${CMAKE_CURRENT_BINARY_DIR}/hist_hardening/${case})
    set_tests_properties(hist.hardening.${case} PROPERTIES LABELS cli TIMEOUT 300
                         SKIP_RETURN_CODE 77)
  endforeach()
endif()

# Two runs opening one new database at the same time (a user's two shells, or two
# seeds of a test): both pass and both are recorded, never "database is locked".
fl_test(hist.hardening.concurrent_open "history;hardening" 300
  sh ${CMAKE_SOURCE_DIR}/tests/unit/history/concurrent_open.sh ${FL_BIN}
  ${CMAKE_SOURCE_DIR}/scenarios/smoke.lua ${CMAKE_BINARY_DIR}/tests/concurrent-open)
