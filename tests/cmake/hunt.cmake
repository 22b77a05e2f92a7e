# hunt.cmake: tests of `faultline hunt` (owner: lead). hunt_check.py runs a hunt with
# --json and checks its bookkeeping: the first failing seed, the confirmation run with
# the switch off, false alarms, the exit code and the temporary directory's removal.
set(FL_HDB ${CMAKE_BINARY_DIR}/tests/hunt)
file(MAKE_DIRECTORY ${FL_HDB})

foreach(case own not_found false_alarm)
  fl_test(cli.hunt.${case} cli 300
          python3 ${FL_SCN}/hunt_check.py ${FL_BIN} ${FL_HDB}/${case} ${case})
  set_tests_properties(cli.hunt.${case} PROPERTIES ENVIRONMENT "FL_SRC=${CMAKE_SOURCE_DIR}")
endforeach()

# fl_hunt_bad(NAME REGEX ARGS...): cli.hunt.NAME, `faultline hunt ARGS` refused: exit 2,
# stderr matching REGEX.
function(fl_hunt_bad name regex)
  fl_test(cli.hunt.${name} cli 30 ${FL_CHK} 2 "${regex}" ${FL_BIN} hunt ${ARGN})
endfunction()
fl_hunt_bad(own_and_scenario "give a scenario or --own, not both" ${FL_SCN}/shrink/always.lua --own)
fl_hunt_bad(unknown_bug "unknown bug 'no.such'" --bug no.such)
fl_hunt_bad(bug_twice "given twice" --bug mvcc.stale_read --bug mvcc.stale_read)
fl_hunt_bad(bad_seeds "--seeds '3..1'" --seeds 3..1)
fl_hunt_bad(missing_scenario "scenario 'nope.lua'" nope.lua)
