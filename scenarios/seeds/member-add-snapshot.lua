-- member-add-snapshot.lua: a member added to a cluster with history starts with an
-- empty log. The leader has long compacted the entries it would need (snapshot every
-- `snapshot_count` applied entries, `snapshot_catchup` entries kept), so it sends the
-- newcomer its snapshot (InstallSnapshot); the newcomer installs it, then takes the rest
-- of the log by ordinary replication and becomes a full voting member.
-- Asserted on the member_add answer (a new slot, a new member ID), on node events
-- (`conf_change`, `snapshot_sent` to the new member, `snapshot_applied` on it), on member
-- status (the new member follows the leader, applies up to the commit index, is no
-- learner) and on values written before it joined, read back from it, under client load.
scenario {
  name = "member-add-snapshot",
  description = "a fourth member joins a cluster with history and catches up by snapshot",
  cluster  = { nodes = 3, election_ms = 1000, heartbeat_ms = 100, snapshot_count = 100,
               snapshot_catchup = 50 },
  clients  = { count = 3, balancer = "round_robin", timeout_ms = 2000 },
  workload = { rate = 50, keys = 8 },
  checks   = { "linearizability", "watch", "raft_safety", "converge" },
}

expect(run_until(function() return leader() ~= nil end, 10*s), "a leader is elected", leader())
-- etcd's strict reconfiguration check refuses a change ("etcdserver: unhealthy
-- cluster") until the leader has been connected to every voter for 5 s.
run(5*s)
local c = client(3)
for i = 1, 400 do c:put("hist/" .. i, "v" .. i) end
local l = leader()
expect(status(l).commit > 300, "the cluster has a history longer than the kept entries", status(l).commit)
local ids = {}
for _, n in ipairs(nodes()) do ids[status(n).member_id] = n end
local t0 = now()
local n4, err = member_add{}
expect(n4 ~= nil, "the fourth member is added", err)
if not n4 then return end
local id4 = status(n4).member_id
expect(id4 ~= nil and ids[id4] == nil, "the new member has a new member ID", id4)
local caught = run_until(function()
  local l2 = leader()
  return l2 ~= nil and status(n4).applied >= status(l2).commit and status(n4).leader_node == l2
end, 10*s)
expect(caught, "the new member catches up and follows the leader",
       { applied = status(n4).applied, leader = leader(), commit = leader() and status(leader()).commit })
local sent = 0
for _, e in ipairs(node_events{ kind = "snapshot_sent", since = t0 }) do
  if e.peer == n4 then sent = sent + 1 end
end
local installed = node_events{ node = n4, kind = "snapshot_applied", since = t0 }
expect(sent >= 1 and #installed >= 1, "it caught up by snapshot (sent by the leader, installed by it)",
       { sent = sent, installed = #installed })
expect(#nodes() == 4 and not status(n4).learner, "the cluster has four voting members",
       { nodes = nodes(), learner = status(n4).learner })
local missing = 0
for i = 1, 400, 13 do
  local g = c:get("hist/" .. i, { node = n4, serializable = true })
  if not (g and g.value == "v" .. i) then missing = missing + 1 end
end
expect(missing == 0, "the new member serves the history written before it joined", missing)
local r = c:put("after/join", "x")
expect(r ~= nil, "the 4-member cluster accepts writes", r)
run(1*s)
