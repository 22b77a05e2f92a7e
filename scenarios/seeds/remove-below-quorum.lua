-- remove-below-quorum.lua: etcd's strict reconfiguration check (--strict-reconfig-check,
-- on by default). A removal is accepted only if the members still started afterwards are
-- at least a quorum of the remaining voters. A 5-member cluster with one member down
-- accepts the removal of two live followers (4 voters with 3 started, then 3 voters with
-- 2 started) and refuses the next one (2 voters with only 1 started) with etcd's text
-- `etcdserver: re-configuration failed due to not enough started members`; the cluster
-- keeps serving writes and the refused member stays.
-- Asserted on the member_remove answers (success, then the exact text), on nodes() after
-- each step and on our own writes, under client load.
scenario {
  name = "remove-below-quorum",
  description = "removals accepted until the next would leave fewer started members than quorum; then etcd's refusal",
  cluster  = { nodes = 5, election_ms = 1000, heartbeat_ms = 100 },
  clients  = { count = 3, balancer = "round_robin", timeout_ms = 2000 },
  workload = { rate = 50, keys = 16 },
  checks   = { "linearizability", "watch", "raft_safety", "converge" },
}

local NOT_ENOUGH = "etcdserver: re-configuration failed due to not enough started members"
expect(run_until(function() return leader() ~= nil end, 10*s), "a leader is elected", leader())
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
expect(ok1 ~= nil and #nodes() == 4, "removing a live follower (4 voters, 3 started) is accepted",
       { ok = ok1, err = e1, nodes = nodes() })
expect(write_ok("1"), "writes are acknowledged with 4 voters")
local ok2, e2 = member_remove(f[3])
run(500*ms)
expect(ok2 ~= nil and #nodes() == 3, "removing another (3 voters, 2 started) is accepted",
       { ok = ok2, err = e2, nodes = nodes() })
expect(write_ok("2"), "writes are acknowledged with 3 voters")
local ok3, e3 = member_remove(f[4])
expect(ok3 == nil and e3 == NOT_ENOUGH,
       "the next removal (2 voters, 1 started) is refused with etcd's text", { ok = ok3, err = e3 })
run(500*ms)
local still = false
for _, n in ipairs(nodes()) do if n == f[4] then still = true end end
expect(still and #nodes() == 3, "the refused member is still a member", nodes())
expect(write_ok("3"), "writes are still acknowledged after the refusal")
restart(down)
run(2*s)
