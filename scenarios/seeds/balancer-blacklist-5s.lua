-- balancer-blacklist-5s: clientv3 on grpc 1.7 (pinned_blacklist) keeps a failed
-- endpoint on its unhealthy list for a fixed wait (the dial timeout, 5 s) even when
-- the member comes back right away; clientv3 on grpc 1.23 (round_robin) has no such
-- list and redials it after gRPC's reconnect backoff (1 s).
-- Four clients, one per policy, read with serializable gets (served by any live
-- member, even without a leader) with a 10 s timeout, so no request timeout marks
-- anything unhealthy. Node A, the member pinned_blacklist is pinned to, is killed at
-- t0 and restarted 300 ms later. At t0 + 2.5 s the member pinned_blacklist moved to
-- is killed and the third one is paused (a gray failure that does not mark it
-- unhealthy at once), so A is the only member that can answer.
-- Asserted on observed data (the member that answered each read):
--   * round_robin is served by A again within 2 s of A's restart;
--   * pinned_blacklist does not use A during A's fixed wait: it never pins A in the
--     5 s after A was marked unhealthy (it pins the paused member instead), and its
--     first read answered by A comes at least 5 s after A was marked (in fact once
--     the paused member's keepalive fails).
scenario {
  name = "balancer-blacklist-5s",
  description = "an endpoint back right after being marked unhealthy: grpc1.7 waits the fixed 5 s, round robin uses it at once",
  cluster = { nodes = 3, election_ms = 1000, heartbeat_ms = 100 },
  clients = { balancers = { "pinned_random", "pinned_blacklist", "round_robin", "health_aware" },
              timeout_ms = 10000 },
  checks = { "linearizability", "raft_safety", "converge", "liveness" },
}

expect(run_until(function() return leader() ~= nil end, 10 * s), "a leader is elected")
for i = 1, 4 do client(i):put("k" .. i, "v" .. i) end

local A, t0 = nil, nil
local first_by_a = {} -- per client: ms after t0 of the first read A answered after restart
local stop = false
local function loop(i)
  local c = client(i)
  while not stop do
    local r = c:get("k" .. i, { serializable = true, timeout = 10 * s })
    if r and A and t0 and r.node == A and now() > t0 + 300 * ms and not first_by_a[i] then
      first_by_a[i] = (now() - t0) // ms
    end
    sleep(20 * ms)
  end
end
for i = 1, 4 do spawn(loop, i) end
run(3 * s)

A = client(2):stats().pinned_node
expect(A ~= 0, "pinned_blacklist has pinned a member", A)
kill(A)
t0 = now()
-- Watch pinned_blacklist's pin during A's wait.
-- (from the moment it has left A: the kill reaches the client a moment later)
local pinned_a_during_wait = false
spawn(function()
  local left = false
  while now() < t0 + 4900 * ms do
    local p = client(2):stats().pinned_node
    if p ~= A then left = true end
    if left and p == A then pinned_a_during_wait = (now() - t0) // ms end
    sleep(10 * ms)
  end
end)
run(300 * ms)
restart(A)
run(2200 * ms)
local X = client(2):stats().pinned_node
expect(X ~= 0 and X ~= A, "pinned_blacklist moved to another member", X)
local Y = others({ A, X })[1]
kill(X)
pause(Y)
run(12 * s)
stop = true
heal_all()
run(3 * s)

local names = { "pinned_random", "pinned_blacklist", "round_robin", "health_aware" }
print("A", A, "X", X, "Y", Y)
for i = 1, 4 do
  print(names[i], "first read answered by A after its restart, ms after it was killed:",
        first_by_a[i] or "never")
end
expect(first_by_a[3] ~= nil and first_by_a[3] <= 2300,
       "round_robin: uses the member again within 2 s of its restart", first_by_a[3])
expect(not pinned_a_during_wait,
       "pinned_blacklist: never pins the member during its wait, though it is back and reachable",
       pinned_a_during_wait)
expect(first_by_a[2] ~= nil and first_by_a[2] >= 5000,
       "pinned_blacklist: does not use the member during its fixed 5 s unhealthy wait",
       first_by_a[2])
