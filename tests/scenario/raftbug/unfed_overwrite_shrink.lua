-- unfed_overwrite_shrink.lua: tests/cmake/raftbug.cmake puts this in front of
-- scenarios/chaos.lua (unfed_overwrite.lua in the build folder): chaos narrowed by the
-- shrink{} line below, at seed 8000669169896689. Member n1
-- restarts with (203, term 2); leader n3 (term 4) overwrites it with (203, term 4), the
-- write reaches the disk but n1 is paused (on its append) before its fsync's callback
-- feeds the safety checker, then a power loss kills everyone. n1 comes back with
-- (203, term 4) that the checker never saw, and the entries 204.. it then takes from
-- leader n4 (term 7) were reported as a log_matching failure. The checker now takes a
-- restarted member's recovered log (raft_safety_boot.entries): raft_safety passes.
shrink{ lanes = {"leader_crash"}, add_faults = {{kind = "pause", node = 1, at = 5487*ms, len = 3138*ms, on = "append"}, {kind = "power", node = 0, at = 9212*ms, len = 2259*ms, on = "leader"}} };
