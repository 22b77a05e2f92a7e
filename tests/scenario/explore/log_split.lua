-- log_split.lua: Raft's Figure 8 window made on purpose, for the test of explore's
-- log_term_split signal (tests/cmake/explore_seeds.cmake). The leader, cut off, takes one
-- write of its term that reaches nobody; the other two elect a leader, whose first entry
-- (of the newer term) lands at the same index: two live voters whose logs are equally
-- long and end in different terms. With FAULTLINE_COVERAGE=1 the --json summary lists
-- log_term_split among the risky situations, on the new leader.
scenario {
  name = "explore-log-split",
  cluster  = { nodes = 3, election_ms = 1000, heartbeat_ms = 100 },
  clients  = { count = 1, timeout_ms = 2000 },
  workload = { rate = 0 },
  checks   = { "raft_safety", "converge" },
}

expect(run_until(function() return leader() ~= nil end, 10*s), "a leader is elected", leader())
run(1*s)
local A = leader()
local base = status(A).last_index
isolate(A)
spawn(function() client(1):put("split/1", "x", { node = A, timeout = 1*s }) end)
expect(run_until(function() return status(A).last_index == base + 1 end, 1*s, 1*ms),
       "the cut-off leader appends the write", status(A).last_index)
local B = run_until(function() local l = leader() return l ~= nil and l ~= A end, 10*s) and leader()
expect(B, "the others elect a leader", leader())
expect(status(B).last_index == base + 1, "its first entry is at the same index", status(B).last_index)
run(1*s)
heal()
run(3*s)
