shrink{ add_faults = {{kind = "kill", node = 1, at = 2*s, len = 1*s, on = "nap"}} }; -- quiet.lua: a 3-member cluster under a steady workload and no fault at all, for the
-- tests of `faultline explore` (tests/cmake/explore.cmake). A bug that only a crash
-- brings out (mvcc.revision_reset_on_restart) never fails a plain run of it, so an
-- exploration that finds it found it through a fault it inserted itself.
scenario {
  name = "explore-quiet",
  cluster  = { nodes = 3, election_ms = 1000, heartbeat_ms = 100 },
  clients  = { count = 3, balancer = "round_robin", timeout_ms = 2000 },
  workload = { rate = 100, keys = 5, watchers = 1 },
  checks   = { "linearizability", "watch", "raft_safety", "converge" },
}

expect(run_until(function() return leader() ~= nil end, 10*s), "a leader is elected", leader())
run(10*s)
