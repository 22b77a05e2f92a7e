# mvccchaos.cmake (issue 13: chaos finds mvcc.watch_compacted_lost): a watcher notified
# on a full watch stream buffer becomes a victim and catches up as an unsynced one, so a
# compaction while its stream is starved reaches it with no snapshot install (etcd's
# own Issue17529 regression: one member, a sleep before each watch send, compactions).
# With a buffer of 4 (cluster.watch_buffer) the bug switch fails the scenario (watch
# checker and expect), without it the run passes; a bad buffer size is bad input.
set(FL_MVC_DB ${CMAKE_BINARY_DIR}/tests/mvccchaos)
file(MAKE_DIRECTORY ${FL_MVC_DB})
set(FL_MVC_CLI ${CMAKE_SOURCE_DIR}/tests/scenario/expect_cli.sh)
set(FL_MVC_SCN ${CMAKE_SOURCE_DIR}/tests/scenario/mvccchaos)
foreach(seed 1 2 3)
  add_test(NAME scenario.mvccchaos.victim_compacted.on.${seed}
    COMMAND ${FL_MVC_CLI} 1 "reliable|no watch skips" ${FL_BIN} run
            ${FL_MVC_SCN}/victim_compacted.lua --seed ${seed} --bug mvcc.watch_compacted_lost
            --db ${FL_MVC_DB}/victim-on-${seed}.db)
  add_test(NAME scenario.mvccchaos.victim_compacted.off.${seed}
    COMMAND ${FL_MVC_CLI} 0 - ${FL_BIN} run ${FL_MVC_SCN}/victim_compacted.lua --seed ${seed}
            --db ${FL_MVC_DB}/victim-off-${seed}.db)
  set_tests_properties(scenario.mvccchaos.victim_compacted.on.${seed}
    scenario.mvccchaos.victim_compacted.off.${seed} PROPERTIES LABELS scenario TIMEOUT 120)
endforeach()
file(WRITE ${FL_MVC_DB}/bad_buffer.lua
  "scenario { name = \"bad\", cluster = { nodes = 1, watch_buffer = -1 } }\n")
add_test(NAME cli.mvccchaos.watch_buffer_bad
  COMMAND ${FL_MVC_CLI} 2 "bad_buffer.lua:1:.*watch_buffer" ${FL_BIN} run
          ${FL_MVC_DB}/bad_buffer.lua --db ${FL_MVC_DB}/bad.db)
set_tests_properties(cli.mvccchaos.watch_buffer_bad PROPERTIES LABELS cli TIMEOUT 60)
