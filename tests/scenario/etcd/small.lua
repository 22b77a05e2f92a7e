-- small.lua (etcd target): one put and get through each of two clients, on three
-- members; both targets must agree (faultline diff's agreeing case).
scenario {
  name = "etcd-small",
  cluster = { nodes = 3 },
  clients = { balancers = { "round_robin", "pinned_blacklist" } },
  workload = { rate = 20, keys = 4 },
  checks = { "linearizability", "watch" },
}
run_until(function() return leader() ~= nil end, 10*s)
-- generous timeouts: on etcd the calls are real ones, on a machine that may be busy
for i = 1, 2 do
  local r = client(i):put("k" .. i, "v" .. i, { timeout = 10*s })
  expect(r ~= nil, "put through client " .. i)
  local g = client(i):get("k" .. i, { timeout = 10*s })
  expect(g ~= nil and g.value == "v" .. i, "read back through client " .. i, g and g.value)
end
run(1*s)
