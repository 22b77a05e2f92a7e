# shrink.cmake: tests of `faultline shrink` and of the shrink{} directive (owner: shrink).
# A shrink test shrinks a scenario that fails on purpose and checks that the written
# file replays with a plain `faultline run`, fails the same check again and is
# smaller (shrink_check.py); the others check the refusals and exit codes.
set(FL_SHR ${FL_SCN}/shrink)
set(FL_SDB ${CMAKE_BINARY_DIR}/tests/shrink)
file(MAKE_DIRECTORY ${FL_SDB})

# fl_shrink_cli(NAME TIMEOUT RC REGEX ARGS...): cli.shrink.NAME, `faultline shrink ARGS`
# judged by expect_cli.sh (exit RC, stderr matching REGEX).
function(fl_shrink_cli name timeout rc regex)
  fl_test(cli.shrink.${name} cli ${timeout} ${FL_CHK} ${rc} "${regex}" ${FL_BIN} shrink ${ARGN})
endfunction()

# A failed expect that depends on one of six hand-written faults; the result is then
# shrunk again (a shrunk file carries its directive; the new one replaces it).
fl_test(scenario.shrink.expect scenario 300
  python3 ${FL_SCN}/shrink_check.py ${FL_BIN} ${FL_SDB}/expect ${FL_SHR}/leader_kept.lua 1 expect
  --reshrink)
# A bug switch caught by linearizability under a random nemesis: nemesis draws are
# dropped one by one by their ordinals.
fl_test(scenario.shrink.bug_stale_read scenario 600
  python3 ${FL_SCN}/shrink_check.py ${FL_BIN} ${FL_SDB}/stale ${FL_SHR}/stale_nemesis.lua 1
  linearizability --bug mvcc.stale_read)
# Every field of the directive honoured by a plain run.
fl_test(scenario.shrink.directive scenario 120
  python3 ${FL_SCN}/shrink_directive.py ${FL_BIN} ${FL_SHR}/directive.lua ${FL_SDB}/directive.db)

# Refusals: a passing seed, nothing smaller, bad input.
fl_shrink_cli(passing_seed 120 2 "seed 1 does not fail. nothing to shrink"
  ${FL_SHR}/stale_nemesis.lua --seed 1 -o ${FL_SDB}/never.lua)
fl_shrink_cli(nothing_smaller 120 1 "no smaller run found .* nothing written"
  ${FL_SHR}/always.lua --seed 1 -o ${FL_SDB}/never.lua)
fl_shrink_cli(script_error 60 2 "errors/runtime.lua:4: attempt to index a nil value"
  ${FL_SCN}/errors/runtime.lua --seed 1 -o ${FL_SDB}/never.lua)
fl_shrink_cli(missing_seed 30
  2 "seed is required: the seed of the failing run" ${FL_SHR}/always.lua)
fl_shrink_cli(missing_file 30
  2 "cannot read scenario '.*no-such.lua'" ${FL_SHR}/no-such.lua --seed 1)
fl_shrink_cli(unknown_bug 30 2 "unknown bug 'nope'" ${FL_SHR}/always.lua --seed 1 --bug nope)
fl_shrink_cli(unknown_check 30
  2 "unknown check 'speed'" ${FL_SHR}/always.lua --seed 1 --check speed)
fl_shrink_cli(check_not_failing 60 2 "does not fail check 'watch'"
  ${FL_SHR}/always.lua --seed 1 --check watch -o ${FL_SDB}/never.lua)
fl_shrink_cli(overwrite_refused 30 2 "would overwrite the scenario"
  ${FL_SHR}/always.lua --seed 1 -o ${FL_SHR}/always.lua)
# The directive's own errors name file:line.
fl_run_test(cli.lua.shrink_late cli 30 2
  "shrink/late.lua:3: shrink\\{\\} must be called once, before scenario\\{\\}"
  ${FL_SHR}/late.lua --db ${FL_SDB}/e.db)
fl_run_test(cli.lua.shrink_badopt cli 30 2
  "shrink/badopt.lua:1: unknown option 'bogus' in shrink"
  ${FL_SHR}/badopt.lua --db ${FL_SDB}/e.db)
# Every bug scenario of scenarios/bugs/ that fails with its switch on shrinks to a
# smaller file that still fails the same check (skipped while there are none).
fl_test(scenario.shrink.bug_scenarios scenario 1800
  python3 ${FL_SCN}/shrink_bugs.py ${FL_BIN} ${CMAKE_SOURCE_DIR} ${FL_SDB}/bugs)
# It shrinks a dozen scenarios (minutes under ASan): labelled slow so the sanitizer
# pass of .ci/run can leave it out; the plain pass always runs it.
set_tests_properties(scenario.shrink.bug_scenarios PROPERTIES SKIP_RETURN_CODE 77
                     LABELS "scenario;slow")
fl_shrink_cli(unwritable_output 30 2 "cannot write '.*no-such-dir/x.lua.tmp'"
  ${FL_SHR}/leader_kept.lua --seed 1 -o ${FL_SDB}/no-such-dir/x.lua)
# The search is deterministic: the same scenario and seed give the same file.
fl_test(determinism.shrink determinism 300
  sh -c "${FL_BIN} shrink ${FL_SHR}/stale_nemesis.lua --seed 2 --bug mvcc.stale_read --quiet -o ${FL_SDB}/det1.lua && ${FL_BIN} shrink ${FL_SHR}/stale_nemesis.lua --seed 2 --bug mvcc.stale_read --quiet -o ${FL_SDB}/det2.lua && cmp ${FL_SDB}/det1.lua ${FL_SDB}/det2.lua")
# --json: one object on stdout, for a result and for a refusal alike.
fl_test(cli.shrink.json cli 120
  ${FL_CHK} 0 - ${FL_BIN} shrink ${FL_SHR}/leader_kept.lua --seed 1 --quiet --json -o ${FL_SDB}/json.lua)
fl_shrink_cli(json_refused 120
  1 "no smaller run found" ${FL_SHR}/always.lua --seed 1 --quiet --json -o ${FL_SDB}/never.lua)
# Skipping every fault moves none of the workload's draws (separate RNG streams).
fl_test(determinism.shrink_streams determinism 300
  python3 ${FL_SCN}/shrink_streams.py ${FL_BIN} ${FL_SHR}/streams.lua ${FL_SDB}/streams)
