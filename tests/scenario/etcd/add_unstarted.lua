-- add_unstarted.lua (etcd target): a member added while an earlier added member has
-- not started yet. The fourth (a learner, so the strict reconfiguration check does not
-- wait for it) is paused as soon as its add answered, before it publishes its name, so
-- MemberAdd lists it with the name "" when the fifth is added. The fifth's
-- --initial-cluster must still list it (etcd checks the count, "member count is
-- unequal", and exits): the fifth starts, serves and follows a leader.
scenario {
  name = "etcd-add-unstarted",
  cluster = { nodes = 3 },
  clients = { count = 1 },
  workload = { rate = 10, keys = 4 },
  checks = { "linearizability" },
}
expect(run_until(function() return leader() ~= nil end, 10*s), "a leader is elected", leader())
run(6*s) -- etcd's strict reconfiguration check: every voter connected for 5 s
local n4, e4 = member_add{ learner = true }
expect(n4 ~= nil, "the fourth member is added (a learner)", e4)
if not n4 then return end
pause(n4)
local n5, e5 = member_add{}
expect(n5 ~= nil, "the fifth member is added", e5)
if not n5 then return end
expect(status(n4).leader_node == nil, "the fourth had not started serving (not published) then",
       status(n4))
local up = run_until(function()
  local st = status(n5); return st.alive and st.leader_node ~= nil end, 20*s)
expect(up, "the fifth member starts, serves and follows a leader", status(n5))
resume(n4)
expect(#nodes() == 5, "five members", nodes())
