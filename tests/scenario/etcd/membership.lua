-- membership.lua (etcd target): runtime reconfiguration of a real etcd cluster through
-- the scenario API: a member added (a new etcd process joining with
-- --initial-cluster-state existing, a bridge at slot 4, an endpoint of every client),
-- a put through it, a learner added and promoted, a member removed; traffic throughout,
-- linearizability and watch pass. etcd refuses a change within 5 s of the last one
-- ("etcdserver: unhealthy cluster": its members must have been connected that long),
-- so each change is retried on that refusal only, every 250 ms for up to 10 s.
scenario {
  name = "etcd-membership",
  cluster = { nodes = 3 },
  clients = { count = 2 },
  workload = { rate = 20, keys = 4, watchers = 1 },
  checks = { "linearizability", "watch" },
}
local function retried(f, ...)
  local t0 = now()
  while true do
    local r, e = f(...)
    if r ~= nil or not tostring(e):find("unhealthy cluster", 1, true) or now() - t0 >= 10*s then
      return r, e
    end
    run(250*ms)
  end
end
run_until(function() return leader() ~= nil end, 10*s)
local n, err = retried(member_add)
expect(n == 4, "member_add gives slot 4", n or err)
run_until(function() return status(4).alive and status(4).leader_node ~= nil end, 10*s)
expect(#nodes() == 4, "four members", #nodes())
local r, e = client(1):put("x", "1", { node = 4 })
expect(r ~= nil, "a put through the new member", e)
local l, e2 = retried(member_add, { learner = true })
expect(l == 5, "a learner at slot 5", l or e2)
run_until(function() return status(5).alive and status(5).learner end, 10*s)
expect(status(5).learner, "slot 5 is a learner", status(5).learner)
run(2*s)
local ok, e3 = retried(member_promote, 5)
expect(ok ~= nil, "the learner is promoted", e3)
local ok2, e4 = retried(member_remove, 4)
expect(ok2 ~= nil, "member 4 is removed", e4)
run(1*s)
