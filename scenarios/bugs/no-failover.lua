-- no-failover: the bug switch client.no_failover makes every balancer policy stay on
-- its first endpoint (node 1) whatever happens to it. Node 1 is killed for 8 s under
-- a workload; all four policies run side by side. A working balancer moves to a live
-- member within about one request timeout (the first endpoint's connection breaks
-- at once); with the bug every client waits for node 1 to come back.
-- Asserted on each client's observed figures: the failover time (the first success
-- of a call made after the kill) stays below two request timeouts, and availability
-- stays >= 0.95. (max_stall_ms does not show the bug: the workload's calls time out
-- one by one and each stall period ends when the last outstanding call fails.)
scenario {
  name = "no-failover",
  description = "client.no_failover: the balancer never leaves its first endpoint",
  cluster = { nodes = 3 },
  clients = { balancers = { "pinned_random", "pinned_blacklist", "round_robin", "health_aware" },
              timeout_ms = 2000 },
  workload = { rate = 100, keys = 8, watchers = 4 },
  checks = { "linearizability", "watch", "raft_safety", "converge" },
}

expect(run_until(function() return leader() ~= nil end, 10 * s), "a leader is elected")
run(2 * s)
kill(1)
run(8 * s)
restart(1)
run(4 * s)
for i = 1, 4 do
  local st = client(i):stats()
  print(st.balancer, "availability", st.availability, "max_stall_ms", st.max_stall_ms,
        "failover_ms", st.failover_ms[1])
  local fo = st.failover_ms[1]
  expect(fo >= 0 and fo < 4000, st.balancer .. ": fails over within two request timeouts", fo)
  expect(st.availability >= 0.95, st.balancer .. ": availability >= 0.95", st.availability)
end
