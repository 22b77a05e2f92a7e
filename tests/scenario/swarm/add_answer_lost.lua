-- add_answer_lost.lua: a member add whose answer is lost. The one member appends the
-- change adding a second voter and is killed at once, so member_add gets no answer; the
-- change still commits once the member is back. An operator then learns the new member
-- (`etcdctl member list`) and gives it to the clients: so does the harness. Before, the
-- clients knew only the members whose add was answered, and once the first member was
-- removed they had no member left to talk to: every call timed out for the rest of the
-- run (explore: a one-member world that added n2, lost the answer and removed n1).
scenario {
  name = "add-answer-lost",
  cluster = { nodes = 1, election_ms = 1000, heartbeat_ms = 100 },
  clients = { count = 2, timeout_ms = 1000 },
  workload = { rate = 0 },
  checks = { "linearizability", "raft_safety", "converge" },
}

expect(run_until(function() return leader() ~= nil end, 10*s), "a first leader")
local c = client(1)
expect(c:put("before", "1"), "a write to the one-member cluster")
local fired = false
on("conf_change", function(ev)
  if not fired and ev.node == 1 then fired = true; kill(1) end
end)
local n2, err = member_add{}
expect(n2 == nil, "member_add gets no answer: its member was killed", err)
restart(1)
local two = run_until(function()
  local l = leader()
  return l ~= nil and #nodes() == 2
end, 20*s)
expect(two, "the change committed: two members and a leader", nodes())
if not two then return end
local new = nodes()[1] == 1 and nodes()[2] or nodes()[1]
-- etcd's strict check refuses a removal until the leader saw every voter for 5 s
run(6*s)
local rm, rerr = member_remove(1)
expect(rm, "the first member is removed", rerr)
run_until(function() return leader() == new end, 10*s)
expect(c:put("after", "2"), "a write through the member the clients learned")
expect(client(2):get("after"), "the other client reads through it too")
run(1*s)
