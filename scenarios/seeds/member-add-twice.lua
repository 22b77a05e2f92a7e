-- member-add-twice.lua: at most one uncommitted configuration change at a time. Both
-- followers' disks are made slow, so the leader's first `member add` (a fourth voter)
-- stays uncommitted for a while; a second `member add` sent in that window is refused
-- (etcd-raft drops a second pending configuration entry, so etcd's request never
-- applies and times out). The first add then commits, its member joins and catches up,
-- and the cluster ends with exactly four members.
-- Asserted on node events (the first conf entry appended on the leader only, before the
-- second request), on the two member_add answers (a new slot; nil and etcd's error), on
-- nodes() and member status at the end, under client load.
scenario {
  name = "member-add-twice",
  description = "a second membership change while the first is uncommitted is refused",
  cluster  = { nodes = 3, election_ms = 1000, heartbeat_ms = 100 },
  clients  = { count = 3, balancer = "round_robin", timeout_ms = 2000 },
  workload = { rate = 50, keys = 8 },
  checks   = { "linearizability", "watch", "raft_safety", "converge" },
}

expect(run_until(function() return leader() ~= nil end, 10*s), "a leader is elected", leader())
-- etcd's strict reconfiguration check refuses a change ("etcdserver: unhealthy
-- cluster") until the leader has been connected to every voter for 5 s.
run(5*s)
run(1*s)
local l = leader()
for _, n in ipairs(others(l)) do
  failpoint("raft/before_save", { node = n, action = "delay", delay_ms = 600 })
end
local t0 = now()
local first
spawn(function() first = { member_add{} } end)
sleep(20*ms)
local appended_on = {}
for _, e in ipairs(node_events{ kind = "conf_change", since = t0 }) do
  appended_on[#appended_on + 1] = e.node
end
expect(#appended_on == 1 and appended_on[1] == l,
       "the first change is appended by the leader and not yet committed (no follower has it)",
       appended_on)
local second, err = member_add{}
expect(second == nil and err ~= nil, "a second change while the first is uncommitted is refused",
       { second = second, err = err })
run_until(function() return first ~= nil end, 10*s)
expect(first and first[1] ~= nil, "the first change commits and its member is added",
       first and { node = first[1], err = first[2] })
for _, n in ipairs(others(l)) do failpoint("raft/before_save", { node = n, action = "off" }) end
local n4 = first and first[1]
if n4 then
  local caught = run_until(function()
    local l2 = leader()
    return l2 ~= nil and status(n4).applied >= status(l2).commit end, 10*s)
  expect(caught, "the added member catches up", status(n4))
end
local ns = nodes()
expect(#ns == 4, "the cluster has exactly four members", ns)
local ids, distinct = {}, 0
for _, n in ipairs(ns) do
  local id = status(n).member_id
  if id and not ids[id] then ids[id] = true; distinct = distinct + 1 end
end
expect(distinct == 4, "four distinct member IDs", distinct)
run(1*s)
