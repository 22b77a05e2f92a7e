-- reconfig-unhealthy.lua: the connectivity half of etcd's strict reconfiguration check
-- (--strict-reconfig-check, on by default; etcd 3.4 mayAddMember / mayRemoveMember).
-- The leader takes a member add (voter or learner) only when it has been connected to
-- every voter for the last 5 s (etcd's HealthInterval), and otherwise answers
-- `etcdserver: unhealthy cluster` — a different refusal from "not enough started
-- members", which counts members that have run at least once. So: right after the
-- cluster starts, with a follower down, and for 5 s after that follower comes back, an
-- add is refused as unhealthy; 5 s later the same add is accepted. A member that is
-- down is outside the active quorum and may always be removed.
-- Asserted on the member_add / member_remove answers (nil and etcd's exact text, or
-- success), on nodes() and on writes acknowledged throughout, under client load.
scenario {
  name = "reconfig-unhealthy",
  description = "member add refused as an unhealthy cluster until every voter has been connected for 5 s; a down member may be removed",
  cluster  = { nodes = 3, election_ms = 1000, heartbeat_ms = 100 },
  clients  = { count = 3, balancer = "round_robin", timeout_ms = 2000 },
  workload = { rate = 50, keys = 16 },
  checks   = { "linearizability", "watch", "raft_safety", "converge" },
}

local UNHEALTHY = "etcdserver: unhealthy cluster"
expect(run_until(function() return leader() ~= nil end, 10*s), "a leader is elected", leader())
local n0, e0 = member_add{ learner = true }
expect(n0 == nil and e0 == UNHEALTHY,
       "right after the start (peers connected for less than 5 s) an add is refused",
       { node = n0, err = e0, at_ms = now() // ms })
run(6*s)
local l = leader()
local f = others(l)[1]
kill(f)
run(1*s)
local n1, e1 = member_add{}
expect(n1 == nil and e1 == UNHEALTHY, "with a follower down, adding a voter is refused",
       { node = n1, err = e1 })
local n2, e2 = member_add{ learner = true }
expect(n2 == nil and e2 == UNHEALTHY, "with a follower down, adding a learner is refused too",
       { node = n2, err = e2 })
restart(f)
run(1*s)
local n3, e3 = member_add{ learner = true }
expect(n3 == nil and e3 == UNHEALTHY,
       "a second after the follower is back (connected for less than 5 s) it is still refused",
       { node = n3, err = e3 })
run(6*s)
local n4, e4 = member_add{ learner = true }
expect(n4 ~= nil, "once every voter has been connected for 5 s the add is accepted", e4)
run(2*s)
local c = client(3)
local w = c:put("ru/1", "1", { node = leader() })
expect(w ~= nil, "writes are acknowledged with the learner added")
if n4 then
  local ok, e = member_remove(n4)
  expect(ok ~= nil, "a learner may always be removed", e)
  run(1*s)
end
-- a member that is down: its removal is accepted at once (it is not part of the active
-- quorum), though the two voters left must then both answer for every write
local g = others(leader())[1]
kill(g)
run(1*s)
local ok5, e5 = member_remove(g)
run(500*ms)
local gone = true
for _, n in ipairs(nodes()) do if n == g then gone = false end end
expect(ok5 ~= nil and gone, "a member that is down may be removed", { ok = ok5, err = e5, nodes = nodes() })
expect(c:put("ru/2", "2", { node = leader() }) ~= nil, "writes are acknowledged by the two voters left")
run(2*s)
