# hunt.cmake: tests of `faultline hunt` (owner: lead). hunt_check.py runs a hunt with
# --json and checks its bookkeeping: the first failing seed, the confirmation run with
# the switch off, false alarms, the exit code and the temporary directory's removal.
set(FL_HSCN ${CMAKE_SOURCE_DIR}/tests/scenario)
set(FL_HDB ${CMAKE_BINARY_DIR}/tests/hunt)
file(MAKE_DIRECTORY ${FL_HDB})

foreach(case own not_found false_alarm)
  add_test(NAME cli.hunt.${case}
           COMMAND python3 ${FL_HSCN}/hunt_check.py ${FL_BIN} ${FL_HDB}/${case} ${case})
  set_tests_properties(cli.hunt.${case} PROPERTIES LABELS cli TIMEOUT 300
                       ENVIRONMENT "FL_SRC=${CMAKE_SOURCE_DIR}")
endforeach()

set(FL_HCHK ${FL_HSCN}/expect_cli.sh)
add_test(NAME cli.hunt.own_and_scenario
         COMMAND ${FL_HCHK} 2 "give a scenario or --own, not both"
                 ${FL_BIN} hunt ${FL_HSCN}/shrink/always.lua --own)
add_test(NAME cli.hunt.unknown_bug
         COMMAND ${FL_HCHK} 2 "unknown bug 'no.such'" ${FL_BIN} hunt --bug no.such)
add_test(NAME cli.hunt.bug_twice
         COMMAND ${FL_HCHK} 2 "given twice"
                 ${FL_BIN} hunt --bug mvcc.stale_read --bug mvcc.stale_read)
add_test(NAME cli.hunt.bad_seeds
         COMMAND ${FL_HCHK} 2 "--seeds '3..1'" ${FL_BIN} hunt --seeds 3..1)
add_test(NAME cli.hunt.missing_scenario
         COMMAND ${FL_HCHK} 2 "scenario 'nope.lua'" ${FL_BIN} hunt nope.lua)
set_tests_properties(cli.hunt.own_and_scenario cli.hunt.unknown_bug cli.hunt.bug_twice
                     cli.hunt.bad_seeds cli.hunt.missing_scenario
                     PROPERTIES LABELS cli TIMEOUT 30)
