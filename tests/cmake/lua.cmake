# lua.cmake: tests of the scenario language and `faultline run` / `list` (owner: lua).
# Scenario tests run every API function; error tests check message and exit code;
# determinism runs smoke.lua twice per seed. Each run writes its own database in the
# build tree.
set(FL_SCN ${CMAKE_SOURCE_DIR}/tests/scenario)
set(FL_CHK ${FL_SCN}/expect_cli.sh)
set(FL_TDB ${CMAKE_BINARY_DIR}/tests/lua-dbs)
file(MAKE_DIRECTORY ${FL_TDB})

function(fl_lua_test name labels timeout)
  add_test(NAME ${name} COMMAND ${ARGN})
  set_tests_properties(${name} PROPERTIES LABELS "${labels}" TIMEOUT ${timeout})
endfunction()

# Every API function, in four scenarios that must pass.
foreach(s api_time api_faults api_client api_admin api_balancers)
  fl_lua_test(scenario.lua.${s} scenario 120
    ${FL_CHK} 0 - ${FL_BIN} run ${FL_SCN}/${s}.lua --seed 1 --db ${FL_TDB}/${s}.db --json)
endforeach()
foreach(seed 1 2 3)
  fl_lua_test(scenario.smoke.seed${seed} scenario 120
    ${FL_CHK} 0 - ${FL_BIN} run ${CMAKE_SOURCE_DIR}/scenarios/smoke.lua --seed ${seed}
    --db ${FL_TDB}/smoke.db --json)
  fl_lua_test(scenario.chaos.seed${seed} scenario 300
    ${FL_CHK} 0 - ${FL_BIN} run ${CMAKE_SOURCE_DIR}/scenarios/chaos.lua --seed ${seed}
    --db ${FL_TDB}/chaos.db --json)
endforeach()

# Determinism: same seed, same digest; different seeds, different digests.
fl_lua_test(determinism.smoke determinism 300
  ${FL_SCN}/determinism.sh ${FL_BIN} ${CMAKE_SOURCE_DIR}/scenarios/smoke.lua ${FL_TDB}/det)
fl_lua_test(determinism.chaos determinism 600
  ${FL_SCN}/determinism.sh ${FL_BIN} ${CMAKE_SOURCE_DIR}/scenarios/chaos.lua ${FL_TDB}/detc)

# Error paths: message naming file:line (or what is wrong) and exit code 2.
set(E ${FL_SCN}/errors)
fl_lua_test(cli.lua.syntax_error cli 30
  ${FL_CHK} 2 "errors/syntax.lua:2: unexpected symbol" ${FL_BIN} run ${E}/syntax.lua --db ${FL_TDB}/e.db --json)
fl_lua_test(cli.lua.runtime_error cli 30
  ${FL_CHK} 2 "errors/runtime.lua:4: attempt to index a nil value" ${FL_BIN} run ${E}/runtime.lua --db ${FL_TDB}/e.db --json)
fl_lua_test(cli.lua.bad_argument cli 30
  ${FL_CHK} 2 "errors/badarg.lua:2: bad argument #1 to 'kill' \\(node id expected, got string\\)" ${FL_BIN} run ${E}/badarg.lua --db ${FL_TDB}/e.db)
fl_lua_test(cli.lua.unknown_node cli 30
  ${FL_CHK} 2 "errors/badnode.lua:2: .*unknown node id 7" ${FL_BIN} run ${E}/badnode.lua --db ${FL_TDB}/e.db)
fl_lua_test(cli.lua.balancers_count cli 30
  ${FL_CHK} 2 "errors/balancers.lua:1: scenario.clients: count = 3 but 2 balancers" ${FL_BIN} run ${E}/balancers.lua --db ${FL_TDB}/e.db)
fl_lua_test(cli.lua.unknown_option cli 30
  ${FL_CHK} 2 "errors/badopt.lua:1: unknown option 'bogus' in scenario.cluster" ${FL_BIN} run ${E}/badopt.lua --db ${FL_TDB}/e.db)
fl_lua_test(cli.lua.outside_coroutine cli 30
  ${FL_CHK} 2 "errors/outside.lua:2: sleep must be called from the scenario or a spawned coroutine" ${FL_BIN} run ${E}/outside.lua --db ${FL_TDB}/e.db)
fl_lua_test(cli.lua.unknown_bug cli 30
  ${FL_CHK} 2 "errors/badbug.lua:2: unknown bug 'no.such_bug'" ${FL_BIN} run ${E}/badbug.lua --db ${FL_TDB}/e.db)
fl_lua_test(cli.lua.sandbox_io cli 30
  ${FL_CHK} 2 "errors/sandbox.lua:2: attempt to index a nil value \\(global 'io'\\)" ${FL_BIN} run ${E}/sandbox.lua --db ${FL_TDB}/e.db)
# --unsafe-lua lifts the sandbox: the same script runs to its end.
fl_lua_test(cli.lua.unsafe_lua cli 30
  ${FL_CHK} 0 - ${FL_BIN} run ${E}/sandbox.lua --unsafe-lua --db ${FL_TDB}/u.db)
fl_lua_test(cli.lua.unknown_bug_flag cli 30
  ${FL_CHK} 2 "unknown bug 'nope'" ${FL_BIN} run ${E}/syntax.lua --bug nope --db ${FL_TDB}/e.db)
fl_lua_test(cli.lua.missing_file cli 30
  ${FL_CHK} 2 "cannot read scenario '.*no-such.lua'" ${FL_BIN} run ${E}/no-such.lua --db ${FL_TDB}/e.db --json)
fl_lua_test(cli.lua.unwritable_db cli 30
  ${FL_CHK} 2 "no-such-dir" ${FL_BIN} run ${E}/syntax.lua --db ${FL_TDB}/no-such-dir/x.db --json)
fl_lua_test(cli.lua.unknown_cli_option cli 30
  ${FL_CHK} 2 "unknown option '--bogus'" ${FL_BIN} run ${E}/syntax.lua --bogus)
fl_lua_test(cli.lua.missing_scenario cli 30
  ${FL_CHK} 2 "missing scenario" ${FL_BIN} run)
# A failed expect: exit 1, verdict fail, and the run goes on (the later expect is recorded).
fl_lua_test(cli.lua.expect_fail cli 60
  ${FL_CHK} 1 "expect_fail.lua:3: expect failed: one is two" ${FL_BIN} run ${E}/expect_fail.lua --db ${FL_TDB}/expect.db --json)
fl_lua_test(cli.lua.expect_continues cli 60
  ${FL_SCN}/expect_continues.sh ${FL_BIN} ${E}/expect_fail.lua ${FL_TDB}/expect2.db)
# The database records script errors as 'error'.
fl_lua_test(cli.lua.error_recorded cli 60
  ${FL_SCN}/error_recorded.sh ${FL_BIN} ${E}/runtime.lua ${FL_TDB}/err.db)

# faultline list
fl_lua_test(cli.list.api cli 30 sh -c "${FL_BIN} list api | grep -qx 'run_until'")
fl_lua_test(cli.list.bugs cli 30 sh -c "${FL_BIN} list bugs | grep -q '^raft.vote_ignores_log  scenarios/bugs/'")
fl_lua_test(cli.list.balancers cli 30 sh -c "${FL_BIN} list balancers | grep -q '^round_robin '")
fl_lua_test(cli.list.failpoints cli 30 sh -c "${FL_BIN} list failpoints | grep -q '^raft/before_save '")
fl_lua_test(cli.list.scenarios cli 30 sh -c "cd ${CMAKE_SOURCE_DIR} && ${FL_BIN} list scenarios | grep -q '^scenarios/smoke.lua  3 nodes'")
# Every name of `list api` is documented in scenarios/README.md.
fl_lua_test(cli.list.api_documented cli 30
  ${FL_SCN}/api_documented.sh ${FL_BIN} ${CMAKE_SOURCE_DIR}/scenarios/README.md)

# run --report DIR: the report is written from the database; an unwritable directory
# turns a passing run's exit code into 2 with a message.
fl_lua_test(cli.run.report cli 120
  sh -c "rm -rf ${FL_TDB}/report && ${FL_BIN} run ${FL_SCN}/api_time.lua --seed 1 --db ${FL_TDB}/report.db --report ${FL_TDB}/report >/dev/null && test -s ${FL_TDB}/report/index.html && test -s ${FL_TDB}/report/summary.json && test -s ${FL_TDB}/report/junit.xml")
fl_lua_test(cli.run.report_unwritable cli 120
  ${FL_CHK} 2 "--report: .*no-such-dir" ${FL_BIN} run ${FL_SCN}/api_time.lua --seed 1 --db ${FL_TDB}/report.db --report ${FL_TDB}/no-such-dir/sub)

# Every bundled scenario (scenarios/, seeds/, bugs/) runs without a script or internal
# error on this runtime (their own tests judge their verdicts).
fl_lua_test(scenario.lua.bundled_run scenario 600
  ${FL_SCN}/bundled_run.sh ${FL_BIN} ${CMAKE_SOURCE_DIR} ${FL_TDB}/bundled)

# A lease the cluster expires is recorded once as a system op (run driver).
fl_lua_test(scenario.run.lease_expire_recorded scenario 120
  python3 ${FL_SCN}/lease_expire_recorded.py ${FL_BIN} ${FL_SCN}/run/lease_expire.lua ${FL_TDB}/lease_expire.db)
# A compaction made through the control path (compact()) is recorded once as a system op.
fl_lua_test(scenario.run.compact_recorded scenario 120
  sh -c "rm -f ${FL_TDB}/compact.db* && ${FL_BIN} run ${FL_SCN}/api_admin.lua --seed 1 --db ${FL_TDB}/compact.db >/dev/null 2>&1; test \"$(sqlite3 ${FL_TDB}/compact.db \"select count(*) from ops where kind = 'compact' and client_id = 0 and status = 'ok' and revision > 0\")\" = 1")
fl_lua_test(cli.lua.keepalive_option cli 30
  ${FL_CHK} 2 "errors/keepalive_opt.lua:2: unknown option 'bogus' in lease_keepalive options" ${FL_BIN} run ${E}/keepalive_opt.lua --db ${FL_TDB}/e.db)
# One checks row per checker (expect: one per claim), and the checkers' wall time is
# recorded for the history-based ones.
fl_lua_test(scenario.run.checks_rows scenario 120
  sh -c "rm -f ${FL_TDB}/checks.db* && ${FL_BIN} run ${CMAKE_SOURCE_DIR}/scenarios/smoke.lua --seed 3 --db ${FL_TDB}/checks.db >/dev/null 2>&1; test \"$(sqlite3 ${FL_TDB}/checks.db \"select group_concat(checker || '=' || n, ',') from (select checker, count(*) n from checks where checker != 'expect' group by checker order by checker)\")\" = converge=1,linearizability=1,raft_safety=1,watch=1")
