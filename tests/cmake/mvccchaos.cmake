# mvccchaos.cmake (issue 13: chaos finds mvcc.watch_compacted_lost): a watcher notified
# on a full watch stream buffer becomes a victim and catches up as an unsynced one, so a
# compaction while its stream is starved reaches it with no snapshot install (etcd's
# own Issue17529 regression: one member, a sleep before each watch send, compactions).
# With a buffer of 4 (cluster.watch_buffer) the bug switch fails the scenario (watch
# checker and expect), without it the run passes; a bad buffer size is bad input.
set(FL_MVC_DB ${CMAKE_BINARY_DIR}/tests/mvccchaos)
file(MAKE_DIRECTORY ${FL_MVC_DB})
set(FL_MVC_VICTIM ${FL_SCN}/mvccchaos/victim_compacted.lua)
fl_run_seeds(scenario.mvccchaos.victim_compacted.on.<seed> "1;2;3" scenario 120
  1 "reliable|no watch skips" ${FL_MVC_VICTIM} --seed <seed> --bug mvcc.watch_compacted_lost
  --db ${FL_MVC_DB}/victim-on-<seed>.db)
fl_run_seeds(scenario.mvccchaos.victim_compacted.off.<seed> "1;2;3" scenario 120 0 -
  ${FL_MVC_VICTIM} --seed <seed> --db ${FL_MVC_DB}/victim-off-<seed>.db)
file(WRITE ${FL_MVC_DB}/bad_buffer.lua
  "scenario { name = \"bad\", cluster = { nodes = 1, watch_buffer = -1 } }\n")
fl_run_test(cli.mvccchaos.watch_buffer_bad cli 60 2 "bad_buffer.lua:1:.*watch_buffer"
  ${FL_MVC_DB}/bad_buffer.lua --db ${FL_MVC_DB}/bad.db)
