# lua_hardening.cmake: issue 12, the scenario runtime's items (owner: lua). Hostile
# scenarios must end with a clear error naming FILE:LINE (exit 2), or with exit 3 for a
# timeout or an interrupt, never with a crash, a hang or a nondeterministic result.
# Every test writes its own database under the build tree.
set(FL_HS ${CMAKE_SOURCE_DIR}/tests/scenario/errors/hardening)
set(FL_LHDB ${CMAKE_BINARY_DIR}/tests/lua-hardening)
file(MAKE_DIRECTORY ${FL_LHDB})

function(fl_hard name timeout)
  fl_test(lua.hardening.${name} "cli;hardening" ${timeout} ${ARGN})
endfunction()
# fl_hard_run(NAME RC REGEX SCENARIO ARGS...): one run, its exit code and stderr checked.
function(fl_hard_run name rc regex scn)
  fl_run_test(lua.hardening.${name} "cli;hardening" 60 ${rc} "${regex}" ${FL_HS}/${scn}
    --db ${FL_LHDB}/${name}.db ${ARGN})
endfunction()

# 1. Finalizers: the sandbox has none (setmetatable refuses __gc, and __mode); with
#    --unsafe-lua a finalizer's API call is refused, during the run and after it.
fl_hard_run(gc_after_run 2 "gc_after_run.lua:6: setmetatable: finalizers \\(__gc\\) are not available"
  gc_after_run.lua --json)
fl_hard_run(gc_after_run_unsafe 0 - gc_after_run.lua --unsafe-lua --json)
fl_hard_run(gc_during_run_unsafe 0 - gc_during_run.lua --unsafe-lua --json)
fl_hard_run(weak_table 2 "weak_table.lua:3: setmetatable: weak tables \\(__mode\\) are not available"
  weak_table.lua)
# 2. An error object whose __tostring raises.
fl_hard_run(tostring_error 2
  "tostring_error.lua:3: \\(error object is a table value whose __tostring failed: .*inner\\)"
  tostring_error.lua --json)
# 3. Protected metatables; a freed snapshot raises.
fl_hard_run(metatable_protected 2 "metatable_protected.lua:9: attempt to index a boolean value"
  metatable_protected.lua)
fl_hard_run(snapshot_freed_unsafe 2 "snapshot_freed.lua:12: this snapshot was freed"
  snapshot_freed.lua --unsafe-lua)
# 5. The Lua memory limit: a script error naming the line, not catchable by pcall; it
#    does not move a digest.
fl_hard_run(mem_grow 2 "mem_grow.lua:4: out of memory: .*limit of 32 MiB \\(--lua-mem-mb\\)"
  mem_grow.lua --lua-mem-mb 32 --json)
fl_hard_run(mem_pcall 2 "mem_pcall.lua:[0-9]+: out of memory: .*limit of 32 MiB" mem_pcall.lua
  --lua-mem-mb 32)
fl_hard(mem_digest 120 ${FL_HS}/same_digest.sh ${FL_BIN} ${FL_LHDB}/mem_digest.db
  ${FL_SCN}/api_client.lua - "--lua-mem-mb 16" "--lua-mem-mb 4096")
fl_hard_run(mem_flag_bad 2 "--lua-mem-mb '0': out of range" loop_before.lua --lua-mem-mb 0)
# 6. --timeout: an endless loop anywhere ends the run ('error', exit 3, the reason in the
#    summary and the runs row); the first SIGINT, SIGTERM or SIGHUP stops a spinning
#    script and names itself in runs.reason; a process
#    stuck inside one C call is ended by the watchdog; `list scenarios` is bounded too;
#    a sweep passes its per-run timeout to its workers.
foreach(s loop_before loop_after loop_spawn loop_pcall)
  fl_hard(${s} 60 ${FL_HS}/timeout_recorded.sh ${FL_BIN} ${FL_HS}/${s}.lua ${FL_LHDB}/${s}.db)
  fl_hard_run(${s}_message 3 "${s}.lua:[0-9]+: timeout: the run took more than 1 s" ${s}.lua
    --timeout 1)
endforeach()
fl_hard_run(loop_c_watchdog 3 "loop_c.lua: timeout: .*ended by the watchdog" loop_c.lua --timeout 1)
fl_hard(sigint 60 ${FL_HS}/sigint_loop.sh ${FL_BIN} ${FL_HS}/loop_after.lua ${FL_LHDB}/sigint.db)
fl_hard(sigterm 60 ${FL_HS}/sigint_loop.sh ${FL_BIN} ${FL_HS}/loop_after.lua ${FL_LHDB}/sigterm.db TERM)
fl_hard(sighup 60 ${FL_HS}/sigint_loop.sh ${FL_BIN} ${FL_HS}/loop_after.lua ${FL_LHDB}/sighup.db HUP)
fl_hard(list_loop 60 ${FL_HS}/list_loop.sh ${FL_BIN} ${FL_LHDB}/list_loop)
fl_hard(sweep_timeout 120 ${FL_HS}/sweep_timeout.sh ${FL_BIN} ${FL_SCN}/api_time.lua
  ${FL_LHDB}/sweep_timeout)
fl_hard_run(timeout_flag_bad 2 "--timeout 'x': expected seconds, a number above 0" loop_before.lua --timeout x)
fl_hard(run_help 30 sh -c "${FL_BIN} run --help | grep -q -- '--timeout S' && ${FL_BIN} run -h | grep -q -- '--lua-mem-mb N'")
# 11. Iteration order: next, pairs and the option checker's messages are the same in
#     every process.
fl_hard(iteration_order 120 ${FL_HS}/same_digest.sh ${FL_BIN} ${FL_LHDB}/iteration.db
  ${FL_HS}/iteration_order.lua - - - -)
fl_hard(options_order 60 ${FL_HS}/repeat.sh 8 ${FL_CHK} 2
  "options_order.lua:5: net: option names must be strings \\(got a number key\\)"
  ${FL_BIN} run ${FL_HS}/options_order.lua --db ${FL_LHDB}/options_order.db)
fl_hard(options_unknown_order 60 ${FL_HS}/repeat.sh 8 ${FL_CHK} 2
  "options_unknown_order.lua:3: unknown option 'k0' in scenario.cluster"
  ${FL_BIN} run ${FL_HS}/options_unknown_order.lua --db ${FL_LHDB}/options_unknown_order.db)
# 12. Durations and times out of range.
fl_hard_run(run_maxint 2 "run_maxint.lua:4: bad argument #1 to 'run': duration out of range"
  run_maxint.lua --json)
fl_hard_run(durations 0 - durations.lua --json)
fl_hard_run(int_option 2 "int_option.lua:2: scenario.cluster.nodes: 9.2233720368548e\\+18 is out of range"
  int_option.lua)
# 13. A script that stops early (an error, an interrupt) never reports its expect
#     check 'pass': the expects after the stop never ran ('unknown', with the reason).
fl_hard(expect_early 60 ${FL_HS}/expect_early.sh ${FL_BIN} ${FL_HS}/expect_early.lua
  ${FL_LHDB}/expect_early.db)
# 19. Control calls refused at once return nil, message.
fl_hard_run(sync_control 0 - sync_control.lua --json)
# 20. Prefix keys of any length.
fl_hard_run(long_prefix 0 - long_prefix.lua --json)
# Messages that name the real problem with a node id.
fl_hard_run(node_args 0 - node_args.lua --json)
# 21. The client cap: 512 clients run, 513 is refused naming the line.
fl_hard_run(clients_512 0 - clients_512.lua --json)
fl_hard_run(clients_513 2 "clients_513.lua:2: scenario.clients.count: 513 is out of range \\[0, 512\\]"
  clients_513.lua)
