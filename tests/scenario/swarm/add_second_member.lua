-- add_second_member.lua: a voter added to a one-member cluster (etcd's strict check lets
-- it, the cluster-recovery path). A change is in force here from its append, so the
-- entry adding the second voter commits only once the new member holds it: the new
-- member must be running before the change applies. Started at the apply only, as for
-- any other add, it never was, and the lone member stepped down (check-quorum) and
-- campaigned alone for ever (swarm worlds with one member and the membership lane, chaos
-- reseed 91, seeds 5002 and 5006).
scenario {
  name = "add-second-member",
  cluster = { nodes = 1, election_ms = 1000, heartbeat_ms = 100 },
  clients = { count = 1, timeout_ms = 2000 },
  workload = { rate = 0 },
  checks = { "linearizability", "raft_safety", "converge" },
}

expect(run_until(function() return leader() ~= nil end, 10*s), "a first leader")
local c = client(1)
expect(c:put("before", "1"), "a write to the one-member cluster")
local n2, err = member_add{}
expect(n2 ~= nil, "the second member is added (member add returns)", err)
if not n2 then return end
local joined = run_until(function()
  local l = leader()
  return l ~= nil and status(n2).leader_node == l and status(n2).applied >= status(l).commit
end, 10*s)
expect(joined, "the second member follows the leader and catches up",
       { leader = leader(), applied = status(n2).applied })
expect(#nodes() == 2 and not status(n2).learner, "two voting members", nodes())
expect(c:put("after", "2"), "the two-member cluster accepts writes")
local g = c:get("before", { node = n2, serializable = true })
expect(g ~= nil and g.value == "1", "the new member serves what was written before it joined", g)
run(1*s)
