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
  expect(type(st.fault_ms) == "table" and type(st.failover_ms) == "table",
         "stats.fault_ms and stats.failover_ms are lists", st)
end
expect(client(1):stats().pinned_node >= 1, "a pinned policy names its node")
expect(client(3):stats().pinned_node == 0, "round_robin pins nothing")
kill(client(1):stats().pinned_node)
run(3*s)
client(1):put("after", "kill")
local st = client(1):stats()
expect(#st.fault_ms >= 1 and #st.failover_ms == #st.fault_ms and st.failover_ms[1] >= 0,
       "the kill is a fault for the failover clock, and the client failed over",
       { st.fault_ms, st.failover_ms })
heal_all()
run(1*s)
