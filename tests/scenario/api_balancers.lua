-- api_balancers.lua: clients.balancers (one balancer per client) and every field of
-- client:stats().
scenario {
  name = "api-balancers",
  clients = { balancers = { "pinned_random", "pinned_blacklist", "round_robin", "health_aware" },
              timeout_ms = 1000 },
  checks = { "linearizability", "raft_safety" },
}
run_until(function() return leader() ~= nil end, 10*s)
local want = { "pinned_random", "pinned_blacklist", "round_robin", "health_aware" }
for i = 1, 4 do
  local c = client(i)
  expect(c:put("b" .. i, "v") ~= nil, "client " .. i .. " writes")
  local st = c:stats()
  expect(st.balancer == want[i], "client " .. i .. " has its own balancer", st.balancer)
  expect(st.id == i and st.ok >= 1 and st.availability == 1.0, "stats counters", st)
  expect(st.last_node >= 1 and st.attempts >= 1 and st.dials >= 1, "stats per node", st)
  expect(type(st.failover) == "table", "stats.failover is a list", st.failover)
end
expect(client(1):stats().pinned_node >= 1, "a pinned policy names its node")
expect(client(3):stats().pinned_node == 0, "round_robin pins nothing")
kill(client(1):stats().pinned_node)
run(3*s)
local f = client(1):stats().failover
expect(#f >= 1 and f[1].fault_ms >= 0, "the kill is a fault for the failover clock", f)
heal_all()
run(1*s)
