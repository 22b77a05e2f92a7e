-- add_twice.lua (etcd target): two member_adds at once. Both followers' WALs are slow
-- (raft/before_save delay by strace), so the first add is not applied when the second
-- reaches the leader; etcd's raft drops a second pending conf change ("ignoring conf
-- change ... possible unapplied conf change"), so the second MemberAdd never applies
-- and fails. Which add reaches the leader first is a race of real time (under load the
-- spawned one can come second), so the test asks only that exactly one succeeds. The
-- slot prepared for the other must not count as a member: nodes() lists the three
-- members and the one added, four in all, each with its own member ID.
scenario {
  name = "etcd-add-twice",
  cluster = { nodes = 3 },
  clients = { count = 2 },
  workload = { rate = 20, keys = 4 },
  checks = { "linearizability" },
}
expect(run_until(function() return leader() ~= nil end, 10*s), "a leader is elected", leader())
run(6*s) -- etcd's strict reconfiguration check: every voter connected for 5 s
local l = leader()
for _, n in ipairs(others(l)) do
  failpoint("raft/before_save", { node = n, action = "delay", delay_ms = 600 })
end
local first
spawn(function() first = { member_add{} } end)
sleep(20*ms)
local second, err = member_add{}
run_until(function() return first ~= nil end, 10*s)
local a = first and first[1]
expect((a == nil) ~= (second == nil), "exactly one of the two adds succeeds",
       { first = first, second = second, err = err })
local slot = a or second
expect(slot == 4 or slot == 5, "the add that succeeds gets a new slot", slot)
for _, n in ipairs(others(l)) do failpoint("raft/before_save", { node = n, action = "off" }) end
local ns = nodes()
expect(#ns == 4, "four members: the slot of the failed add is none", ns)
run_until(function() return slot and status(slot).alive and status(slot).leader_node ~= nil end, 10*s)
local ids, distinct = {}, 0
for _, n in ipairs(ns) do
  local id = status(n).member_id
  if id and not ids[id] then ids[id] = true; distinct = distinct + 1 end
end
expect(distinct == 4, "four distinct member IDs", distinct)
