-- remove-below-quorum.lua: etcd's strict reconfiguration check (--strict-reconfig-check,
-- on by default), as etcd 3.4 makes it. Besides counting started members, the leader
-- refuses to remove a live voter unless a quorum of the voters left would still be
-- connected to it (connected for the last 5 s), answering `etcdserver: unhealthy
-- cluster`; a member that is down is not part of the active quorum and may always be
-- removed. A 5-member cluster with one member down accepts the removal of two live
-- followers (5 voters with 4 connected, then 4 with 3), refuses the next (3 voters
-- with only 2 connected) with etcd's text, then accepts the removal of the down member
-- itself; the cluster keeps serving writes throughout and the refused member stays.
-- Asserted on the member_remove answers (success, then the exact text), on nodes() after
-- each step and on our own writes, under client load.
scenario {
  name = "remove-below-quorum",
  description = "removals accepted until the next would leave fewer connected members than quorum; then etcd's refusal; a down member may always be removed",
  cluster  = { nodes = 5, election_ms = 1000, heartbeat_ms = 100 },
  clients  = { count = 3, balancer = "round_robin", timeout_ms = 2000 },
  workload = { rate = 50, keys = 16 },
  checks   = { "linearizability", "watch", "raft_safety", "converge" },
}

local UNHEALTHY = "etcdserver: unhealthy cluster"
expect(run_until(function() return leader() ~= nil end, 10*s), "a leader is elected", leader())
-- etcd's strict reconfiguration check refuses a change ("etcdserver: unhealthy
-- cluster") until the leader has been connected to every voter for 5 s.
run(5*s)
run(1*s)
local l = leader()
local f = others(l)
local down = f[1]
kill(down)
run(2*s)
local c = client(3)
local function write_ok(tag)
  local r = c:put("rbq/" .. tag, tag, { node = leader() or l })
  return r ~= nil
end

local ok1, e1 = member_remove(f[2])
run(500*ms)
expect(ok1 ~= nil and #nodes() == 4, "removing a live follower (5 voters, 4 connected) is accepted",
       { ok = ok1, err = e1, nodes = nodes() })
expect(write_ok("1"), "writes are acknowledged with 4 voters")
local ok2, e2 = member_remove(f[3])
run(500*ms)
expect(ok2 ~= nil and #nodes() == 3, "removing another (4 voters, 3 connected) is accepted",
       { ok = ok2, err = e2, nodes = nodes() })
expect(write_ok("2"), "writes are acknowledged with 3 voters")
local ok3, e3 = member_remove(f[4])
expect(ok3 == nil and e3 == UNHEALTHY,
       "the next removal (3 voters, 2 connected) is refused with etcd's text", { ok = ok3, err = e3 })
run(500*ms)
local still = false
for _, n in ipairs(nodes()) do if n == f[4] then still = true end end
expect(still and #nodes() == 3, "the refused member is still a member", nodes())
expect(write_ok("3"), "writes are still acknowledged after the refusal")
local ok4, e4 = member_remove(down)
run(500*ms)
local gone = true
for _, n in ipairs(nodes()) do if n == down then gone = false end end
expect(ok4 ~= nil and gone and #nodes() == 2,
       "the member that is down may always be removed", { ok = ok4, err = e4, nodes = nodes() })
expect(write_ok("4"), "writes are acknowledged by the two voters left")
