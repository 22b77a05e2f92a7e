-- add_serving.lua (etcd target): member_add answers once the new member serves. Our
-- members start at the apply of their addition and are up at once; an etcd process
-- takes a second or more to start and join, and serves (answers Status) only then. So
-- right after member_add returns, the new member is alive, serves and names the leader,
-- for a voter and for a learner.
scenario {
  name = "etcd-add-serving",
  cluster = { nodes = 3 },
  clients = { count = 2 },
  workload = { rate = 20, keys = 4 },
  checks = { "linearizability" },
}
expect(run_until(function() return leader() ~= nil end, 10*s), "a leader is elected", leader())
run(6*s) -- etcd's strict reconfiguration check: every voter connected for 5 s
for _, learner in ipairs({ false, true }) do
  local n, err = member_add{ learner = learner }
  expect(n ~= nil, "member_add (learner " .. tostring(learner) .. ")", err)
  if n then
    local st = status(n)
    expect(st.alive and st.leader_node ~= nil and st.learner == learner,
           "member " .. n .. " serves and names the leader as soon as member_add returns", st)
  end
  run(6*s)
end
