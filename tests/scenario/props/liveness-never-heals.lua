-- liveness-never-heals.lua (tests/cmake/props.cmake): a member is killed and never
-- comes back before the scenario ends, so no heal happens (the converge check's own
-- heal at the end is not part of the scenario): the liveness check has nothing to
-- judge after a heal and says so, passing; the minority fault is still judged
-- (every client fails over).
scenario {
  name = "liveness-never-heals",
  description = "a member down to the end: nothing to judge after a heal",
  cluster = { nodes = 3 },
  clients = { count = 2, balancer = "round_robin" },
  workload = { rate = 50, keys = 8 },
  checks = { "linearizability", "raft_safety", "converge", "liveness" },
}

expect(run_until(function() return leader() ~= nil end, 10 * s), "a leader is elected")
run(1 * s)
kill(3)
run(8 * s)
