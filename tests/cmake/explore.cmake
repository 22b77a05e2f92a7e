# explore.cmake: tests of `faultline explore` (owner: explore). explore_check.py runs an
# exploration with --json and checks what it finds and writes: a bug found by a mutant
# schedule (an inserted fault) on a scenario without faults, shrunk, written as a Lua file
# that fails with the switch and passes without; the same invocation giving the same
# output with -j 1 and -j 2; a clean exploration without a switch; lane ablation (shrink{
# lanes }, the explorer's ablation children finding a bug); the lane bandit (fresh seeds
# with one lane, the first failure of a switch through one); code edges reaching the
# corpus in an explore build (-DFL_EXPLORE_COVERAGE=ON) and absent in others. Then bad
# arguments.
set(FL_XSCN ${CMAKE_SOURCE_DIR}/tests/scenario)
set(FL_XDB ${CMAKE_BINARY_DIR}/tests/explore)
file(MAKE_DIRECTORY ${FL_XDB})

foreach(case find determinism nobug risky ablate focus)
  add_test(NAME cli.explore.${case}
           COMMAND python3 ${FL_XSCN}/explore_check.py ${FL_BIN} ${FL_XDB}/${case} ${case})
  set_tests_properties(cli.explore.${case} PROPERTIES LABELS cli TIMEOUT 600
                       ENVIRONMENT "FL_SRC=${CMAKE_SOURCE_DIR}")
endforeach()
# edge coverage: present and reaching the corpus in an explore build
# (-DFL_EXPLORE_COVERAGE=ON), absent in any other
if(FL_EXPLORE_COVERAGE)
  set(FL_XCOV ON)
else()
  set(FL_XCOV OFF)
endif()
add_test(NAME cli.explore.edges
         COMMAND python3 ${FL_XSCN}/explore_check.py ${FL_BIN} ${FL_XDB}/edges edges ${FL_XCOV})
set_tests_properties(cli.explore.edges PROPERTIES LABELS cli TIMEOUT 600
                     ENVIRONMENT "FL_SRC=${CMAKE_SOURCE_DIR}")
# about a minute in the plain build, six under the sanitizers: CI's sanitizer pass skips it
set_tests_properties(cli.explore.determinism PROPERTIES LABELS "cli;slow")
# about 70 runs, over a minute under load
set_tests_properties(cli.explore.focus PROPERTIES LABELS "cli;slow")

set(FL_XCHK ${FL_XSCN}/expect_cli.sh)
set(FL_XQ ${FL_XSCN}/explore/quiet.lua)
# The three inputs that are quiet.lua with a shrink{} directive put in front of its first
# line, written here at configure time rather than kept as copies of it.
set(FL_XGEN ${FL_XDB}/scn)
file(READ ${FL_XQ} FL_XQ_TEXT)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${FL_XQ})
file(WRITE ${FL_XGEN}/shrunk.lua "shrink{ skip_faults = {1} }; ${FL_XQ_TEXT}")
file(WRITE ${FL_XGEN}/bad_added.lua
     "shrink{ add_faults = {{kind = \"explode\", node = 1, at = 2*s, len = 1*s}} }; ${FL_XQ_TEXT}")
file(WRITE ${FL_XGEN}/bad_lane.lua "shrink{ lanes = {\"lag\", \"nope\"} }; ${FL_XQ_TEXT}")
file(WRITE ${FL_XGEN}/bad_event.lua
     "shrink{ add_faults = {{kind = \"kill\", node = 1, at = 2*s, len = 1*s, on = \"nap\"}} }; ${FL_XQ_TEXT}")
add_test(NAME cli.explore.help
         COMMAND ${FL_XCHK} 0 - ${FL_BIN} explore --help)
add_test(NAME cli.explore.no_scenario
         COMMAND ${FL_XCHK} 2 "explore: a scenario is needed" ${FL_BIN} explore --runs 3)
add_test(NAME cli.explore.missing_scenario
         COMMAND ${FL_XCHK} 2 "scenario 'nope.lua'" ${FL_BIN} explore nope.lua)
add_test(NAME cli.explore.two_scenarios
         COMMAND ${FL_XCHK} 2 "one scenario at a time" ${FL_BIN} explore ${FL_XQ} ${FL_XQ})
add_test(NAME cli.explore.unknown_bug
         COMMAND ${FL_XCHK} 2 "unknown bug 'no.such'" ${FL_BIN} explore ${FL_XQ} --bug no.such)
add_test(NAME cli.explore.bug_twice
         COMMAND ${FL_XCHK} 2 "given twice"
                 ${FL_BIN} explore ${FL_XQ} --bug mvcc.stale_read --bug mvcc.stale_read)
add_test(NAME cli.explore.zero_runs
         COMMAND ${FL_XCHK} 2 "--runs" ${FL_BIN} explore ${FL_XQ} --runs 0)
add_test(NAME cli.explore.bad_runs
         COMMAND ${FL_XCHK} 2 "--runs" ${FL_BIN} explore ${FL_XQ} --runs 1e3)
add_test(NAME cli.explore.runs_twice
         COMMAND ${FL_XCHK} 2 "--runs" ${FL_BIN} explore ${FL_XQ} --runs 3 --runs 4)
add_test(NAME cli.explore.unknown_option
         COMMAND ${FL_XCHK} 2 "unknown option '--frobnicate'"
                 ${FL_BIN} explore ${FL_XQ} --frobnicate 1)
add_test(NAME cli.explore.needs_value
         COMMAND ${FL_XCHK} 2 "--seed needs a value" ${FL_BIN} explore ${FL_XQ} --seed)
add_test(NAME cli.explore.shrunk_input
         COMMAND ${FL_XCHK} 2 "starts with a shrink\\{\\} directive"
                 ${FL_BIN} explore ${FL_XGEN}/shrunk.lua)
# a schedule's directive with a bad added fault is a script error with FILE:LINE
add_test(NAME cli.explore.bad_added_fault
         COMMAND ${FL_XCHK} 2 "bad_added.lua:1: shrink.add_faults\\[1\\]: unknown kind 'explode'"
                 ${FL_BIN} run ${FL_XGEN}/bad_added.lua --seed 1
                 --db ${FL_XDB}/bad_added.db)
add_test(NAME cli.explore.bad_added_event
         COMMAND ${FL_XCHK} 2 "bad_event.lua:1: shrink.add_faults\\[1\\]: unknown event kind 'nap'"
                 ${FL_BIN} run ${FL_XGEN}/bad_event.lua --seed 1
                 --db ${FL_XDB}/bad_event.db)
add_test(NAME cli.explore.bad_lane
         COMMAND ${FL_XCHK} 2 "bad_lane.lua:1: shrink.lanes\\[2\\]: unknown lane 'nope'"
                 ${FL_BIN} run ${FL_XGEN}/bad_lane.lua --seed 1 --db ${FL_XDB}/bad_lane.db)
set_tests_properties(cli.explore.help cli.explore.no_scenario cli.explore.missing_scenario
                     cli.explore.two_scenarios cli.explore.unknown_bug cli.explore.bug_twice
                     cli.explore.zero_runs cli.explore.bad_runs cli.explore.runs_twice
                     cli.explore.unknown_option cli.explore.needs_value
                     cli.explore.shrunk_input cli.explore.bad_added_fault
                     cli.explore.bad_added_event cli.explore.bad_lane
                     PROPERTIES LABELS cli TIMEOUT 30)
