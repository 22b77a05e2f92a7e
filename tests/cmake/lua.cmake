# lua.cmake: tests of the scenario language and `faultline run` / `list` (owner: lua).
# Scenario tests run every API function; error tests check message and exit code;
# determinism runs smoke.lua twice per seed. Each run writes its own database in the
# build tree.
set(FL_TDB ${CMAKE_BINARY_DIR}/tests/lua-dbs)
file(MAKE_DIRECTORY ${FL_TDB})

# Every API function, in four scenarios that must pass.
foreach(s api_time api_faults api_client api_admin api_balancers)
  fl_run_test(scenario.lua.${s} scenario 120
    0 - ${FL_SCN}/${s}.lua --seed 1 --db ${FL_TDB}/${s}.db --json)
endforeach()
foreach(seed 1 2 3)
  fl_run_test(scenario.smoke.seed${seed} scenario 120
    0 - ${CMAKE_SOURCE_DIR}/scenarios/smoke.lua --seed ${seed}
    --db ${FL_TDB}/smoke.db --json)
  fl_run_test(scenario.chaos.seed${seed} scenario 300
    0 - ${CMAKE_SOURCE_DIR}/scenarios/chaos.lua --seed ${seed}
    --db ${FL_TDB}/chaos.db --json)
endforeach()

# Determinism: same seed, same digest; different seeds, different digests.
fl_test(determinism.smoke determinism 300
  ${FL_SCN}/determinism.sh ${FL_BIN} ${CMAKE_SOURCE_DIR}/scenarios/smoke.lua ${FL_TDB}/det)
fl_test(determinism.chaos determinism 600
  ${FL_SCN}/determinism.sh ${FL_BIN} ${CMAKE_SOURCE_DIR}/scenarios/chaos.lua ${FL_TDB}/detc)

# Error paths: message naming file:line (or what is wrong) and exit code 2.
set(E ${FL_SCN}/errors)
# fl_lua_error(NAME SCRIPT REGEX ARGS...): cli.lua.NAME runs tests/scenario/errors/SCRIPT
# (ARGS after its --db) and wants exit 2, stderr matching "errors/SCRIPT:REGEX".
function(fl_lua_error name script regex)
  fl_run_test(cli.lua.${name} cli 30 2 "errors/${script}:${regex}" ${E}/${script}
              --db ${FL_TDB}/e.db ${ARGN})
endfunction()
fl_lua_error(syntax_error syntax.lua "2: unexpected symbol" --json)
fl_lua_error(runtime_error runtime.lua "4: attempt to index a nil value" --json)
fl_lua_error(bad_argument badarg.lua "2: bad argument #1 to 'kill' \\(node id expected, got string\\)")
fl_lua_error(unknown_node badnode.lua "2: .*unknown node id 7")
fl_lua_error(balancers_count balancers.lua "1: scenario.clients: count = 3 but 2 balancers")
fl_lua_error(unknown_option badopt.lua "1: unknown option 'bogus' in scenario.cluster")
fl_lua_error(outside_coroutine outside.lua "2: sleep must be called from the scenario or a spawned coroutine")
fl_lua_error(unknown_bug badbug.lua "2: unknown bug 'no.such_bug'")
fl_lua_error(sandbox_io sandbox.lua "2: attempt to index a nil value \\(global 'io'\\)")
# --unsafe-lua lifts the sandbox: the same script runs to its end.
fl_run_test(cli.lua.unsafe_lua cli 30 0 - ${E}/sandbox.lua --unsafe-lua --db ${FL_TDB}/u.db)
fl_run_test(cli.lua.unknown_bug_flag cli 30
  2 "unknown bug 'nope'" ${E}/syntax.lua --bug nope --db ${FL_TDB}/e.db)
fl_run_test(cli.lua.missing_file cli 30
  2 "cannot read scenario '.*no-such.lua'" ${E}/no-such.lua --db ${FL_TDB}/e.db --json)
fl_run_test(cli.lua.unwritable_db cli 30
  2 "no-such-dir" ${E}/syntax.lua --db ${FL_TDB}/no-such-dir/x.db --json)
fl_run_test(cli.lua.unknown_cli_option cli 30 2 "unknown option '--bogus'" ${E}/syntax.lua --bogus)
fl_test(cli.lua.missing_scenario cli 30
  ${FL_CHK} 2 "missing scenario" ${FL_BIN} run)
# A failed expect: exit 1, verdict fail, and the run goes on (the later expect is recorded).
fl_run_test(cli.lua.expect_fail cli 60
  1 "expect_fail.lua:3: expect failed: one is two" ${E}/expect_fail.lua --db ${FL_TDB}/expect.db --json)
fl_test(cli.lua.expect_continues cli 60
  ${FL_SCN}/expect_continues.sh ${FL_BIN} ${E}/expect_fail.lua ${FL_TDB}/expect2.db)
# The database records script errors as 'error'.
fl_test(cli.lua.error_recorded cli 60
  ${FL_SCN}/error_recorded.sh ${FL_BIN} ${E}/runtime.lua ${FL_TDB}/err.db)

# faultline list
fl_test(cli.list.api cli 30 sh -c "${FL_BIN} list api | grep -qx 'run_until'")
fl_test(cli.list.bugs cli 30 sh -c "${FL_BIN} list bugs | grep -q '^raft.vote_ignores_log  scenarios/bugs/'")
fl_test(cli.list.balancers cli 30 sh -c "${FL_BIN} list balancers | grep -q '^round_robin '")
fl_test(cli.list.failpoints cli 30 sh -c "${FL_BIN} list failpoints | grep -q '^raft/before_save '")
fl_test(cli.list.scenarios cli 30 sh -c "cd ${CMAKE_SOURCE_DIR} && ${FL_BIN} list scenarios | grep -q '^scenarios/smoke.lua  3 nodes'")
# Every name of `list api` is documented in scenarios/README.md.
fl_test(cli.list.api_documented cli 30
  ${FL_SCN}/api_documented.sh ${FL_BIN} ${CMAKE_SOURCE_DIR}/scenarios/README.md)

# run --report DIR: the report is written from the database; an unwritable directory
# turns a passing run's exit code into 2 with a message.
fl_test(cli.run.report cli 120
  sh -c "rm -rf ${FL_TDB}/report && ${FL_BIN} run ${FL_SCN}/api_time.lua --seed 1 --db ${FL_TDB}/report.db --report ${FL_TDB}/report >/dev/null && test -s ${FL_TDB}/report/index.html && test -s ${FL_TDB}/report/summary.json && test -s ${FL_TDB}/report/junit.xml")
fl_run_test(cli.run.report_unwritable cli 120
  2 "--report: .*no-such-dir" ${FL_SCN}/api_time.lua --seed 1 --db ${FL_TDB}/report.db --report ${FL_TDB}/no-such-dir/sub)

# Every bundled scenario (scenarios/, seeds/, bugs/) runs without a script or internal
# error on this runtime (their own tests judge their verdicts).
fl_test(scenario.lua.bundled_run scenario 600
  ${FL_SCN}/bundled_run.sh ${FL_BIN} ${CMAKE_SOURCE_DIR} ${FL_TDB}/bundled)

# A lease the cluster expires is recorded once as a system op (run driver).
fl_test(scenario.run.lease_expire_recorded scenario 120
  python3 ${FL_SCN}/lease_expire_recorded.py ${FL_BIN} ${FL_SCN}/run/lease_expire.lua ${FL_TDB}/lease_expire.db)
# A compaction made through the control path (compact()) is recorded once as a system op.
fl_test(scenario.run.compact_recorded scenario 120
  sh -c "rm -f ${FL_TDB}/compact.db* && ${FL_BIN} run ${FL_SCN}/api_admin.lua --seed 1 --db ${FL_TDB}/compact.db >/dev/null 2>&1; test \"$(sqlite3 ${FL_TDB}/compact.db \"select count(*) from ops where kind = 'compact' and client_id = 0 and status = 'ok' and revision > 0\")\" = 1")
fl_lua_error(keepalive_option keepalive_opt.lua "2: unknown option 'bogus' in lease_keepalive options")
# One checks row per checker (expect: one per claim), and the checkers' wall time is
# recorded for the history-based ones.
fl_test(scenario.run.checks_rows scenario 120
  sh -c "rm -f ${FL_TDB}/checks.db* && ${FL_BIN} run ${CMAKE_SOURCE_DIR}/scenarios/smoke.lua --seed 3 --db ${FL_TDB}/checks.db >/dev/null 2>&1; test \"$(sqlite3 ${FL_TDB}/checks.db \"select group_concat(checker || '=' || n, ',') from (select checker, count(*) n from checks where checker != 'expect' group by checker order by checker)\")\" = converge=1,linearizability=1,raft_safety=1,watch=1")
