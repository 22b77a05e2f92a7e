-- no-failover: the bug switch client.no_failover makes every balancer policy stay on
-- its first endpoint (node 1) whatever happens to it. Node 1 is killed for 8 s under
-- a workload; all four policies run side by side. A working balancer moves to a live
-- member within about one request timeout (the first endpoint's connection breaks
-- at once); with the bug every client waits for node 1 to come back.
-- Asserted on each client's observed figures: availability stays >= 0.99 (with the
-- bug it falls to 0.89-0.98: the workload keeps one call out per client, so each
-- client loses one call per timeout), the longest stall with a call outstanding
-- stays below 5 s, and the failover time (the first success of a call made after
-- the kill) below two request timeouts.
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
  expect(st.availability >= 0.99, st.balancer .. ": availability >= 0.99", st.availability)
  expect(st.max_stall_ms < 5000, st.balancer .. ": no stall of 5 s", st.max_stall_ms)
  expect(fo >= 0 and fo < 4000, st.balancer .. ": fails over within two request timeouts", fo)
end
