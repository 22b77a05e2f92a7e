-- balancer-kill: a member dies under load. Four clients, one per balancer policy
-- (pinned_random = clientv3 on grpc 1.0, pinned_blacklist = grpc 1.7,
-- round_robin = grpc 1.23 / etcd 3.4+, health_aware = ours), run the same workload
-- and watches on the same cluster; the member pinned_blacklist is pinned to (which
-- may be the leader) is killed for 8 s, then restarted.
-- Asserted on each client's observed figures: every policy recovers — its failover
-- time (the first success of a call made after the kill) stays below a request
-- timeout plus an election, it succeeds again after the kill, its watch stall stays
-- below that bound too; and there is no retry storm against the dead member (a
-- dead member refuses connections, so retries sent to it stay at a handful;
-- health_aware's near zero). Failover times per policy are printed and recorded in
-- the run summary (`clients[].failover`).
scenario {
  name = "balancer-kill",
  description = "a member dies: every balancer policy fails over; failover time per policy",
  cluster = { nodes = 3, election_ms = 1000, heartbeat_ms = 100 },
  clients = { balancers = { "pinned_random", "pinned_blacklist", "round_robin", "health_aware" },
              timeout_ms = 2000 },
  workload = { rate = 200, keys = 8, watchers = 4 },
  checks = { "linearizability", "watch", "raft_safety", "converge", "liveness" },
}

local BOUND = 2000 + 2 * 1000 + 500 -- request timeout + an election (with its jitter)

expect(run_until(function() return leader() ~= nil end, 10 * s), "a leader is elected")
run(3 * s)
local target = client(2):stats().pinned_node
expect(target ~= 0, "pinned_blacklist has pinned a member", target)
local before = {}
for i = 1, 4 do before[i] = client(i):stats() end
local was_leader = leader() == target
kill(target)
run(8 * s)
local after = {}
for i = 1, 4 do after[i] = client(i):stats() end
restart(target)
run(4 * s)

print("killed node", target, was_leader and "(the leader)" or "(a follower)")
for i = 1, 4 do
  local a, b = after[i], before[i]
  local fo = a.failover_ms[#b.failover_ms + 1]
  print(a.balancer, "failover_ms", fo, "ok", a.ok - b.ok, "lost", (a.fail - b.fail) + (a.unknown - b.unknown),
        "watch_max_stall_ms", a.watch_max_stall_ms, "retries", a.retries - b.retries,
        "retries_to_bad", a.retries_to_bad - b.retries_to_bad)
  expect(fo ~= nil and fo >= 0 and fo < BOUND, a.balancer .. ": fails over after the kill", fo)
  expect(a.ok - b.ok > 100, a.balancer .. ": keeps succeeding with the member dead", a.ok - b.ok)
  expect(a.watch_max_stall_ms < BOUND, a.balancer .. ": its watch resumes on a live member",
         a.watch_max_stall_ms)
  local bad = a.retries_to_bad - b.retries_to_bad
  expect(bad <= (a.balancer == "health_aware" and 1 or 5),
         a.balancer .. ": no retry storm against the dead member", bad)
end
