-- liveness-failover.lua (tests/cmake/props.cmake): the liveness check on a member that
-- dies for 8 s under load, one client per balancer policy. Every policy fails over
-- within its request timeout plus two election timeouts (liveness: failover), and the
-- cluster serves writes and every client again after the restart (after_heal,
-- client_heal). With client.no_failover the clients stay on node 1: the failover rule
-- fails, naming the client.
scenario {
  name = "liveness-failover",
  description = "a member dies for 8 s: every balancer policy fails over (liveness)",
  cluster = { nodes = 3, election_ms = 1000, heartbeat_ms = 100 },
  clients = { balancers = { "pinned_random", "pinned_blacklist", "round_robin", "health_aware" },
              timeout_ms = 2000 },
  workload = { rate = 100, keys = 8 },
  checks = { "linearizability", "raft_safety", "liveness" },
}

expect(run_until(function() return leader() ~= nil end, 10 * s), "a leader is elected")
run(2 * s)
kill(1)
run(8 * s)
restart(1)
run(12 * s)
