-- lostadd_live.lua (live target, issue 16): a member add whose answer is lost (the
-- call fails: request timed out) but which commits later is learned from the member
-- list, as a clientv3 user learns it: the harness gives the new member its slot and
-- process, it joins and catches up. Both followers' disks are slow (every save takes
-- 12 s), so the add's entry commits some 12 s after it was proposed, past the call's
-- time limit.
scenario {
  name = "live-lost-add",
  description = "live target: a member add that times out but commits later is adopted",
  cluster  = { nodes = 3, election_ms = 1000, heartbeat_ms = 100 },
  clients  = { count = 1, timeout_ms = 2000 },
  checks   = { "linearizability" },
}

expect(run_until(function() return leader() ~= nil end, 10*s), "a leader is elected", leader())
run(5500*ms) -- strict reconfiguration check: 5 s connected to every voter
local l = leader()
local r = client(1):put("la/before", "x", { node = l })
expect(r ~= nil, "a write before the change", r)
for _, n in ipairs(others(l)) do
  failpoint("raft/before_save", { node = n, action = "delay", delay_ms = 12000 })
end
local t0 = now()
local n4, err = member_add{}
expect(n4 == nil and err ~= nil, "the add's answer does not come in time", { node = n4, err = err })
for _, n in ipairs(others(l)) do failpoint("raft/before_save", { node = n, action = "off" }) end
local added = run_until(function() return #nodes() == 4 end, 30*s)
expect(added, "the member the add put in the configuration gets its slot (learned from the member list)",
       nodes())
local joined = run_until(function()
  return #node_events{ node = 4, kind = "restart", since = t0 } >= 1 end, 10*s)
expect(joined, "its process starts and joins", node_events{ node = 4, since = t0 })
local caught = run_until(function()
  local l2 = leader()
  return l2 ~= nil and status(4).applied > 0 and status(4).applied >= status(l2).commit end, 15*s)
expect(caught, "it catches up", status(4))
local ok, perr = client(1):put("la/after", "y", { node = 4 })
expect(ok ~= nil, "it serves a write", { ok = ok, err = perr })
