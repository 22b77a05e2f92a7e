-- fresh.lua (etcd target): what a control call changed is seen by the next leader(),
-- status() and node_events() without waiting for the 100 ms Status poll. etcd's
-- MoveLeader answers once the old leader follows the transferee (etcdserver
-- MoveLeader waits for s.Lead() == transferee), so right after move_leader returns
-- the transferee names itself leader in its Status and its campaign is in its log.
-- Four transfers under light traffic; each is checked at once, with no run() between
-- the answer and the reads.
scenario {
  name = "etcd-fresh",
  cluster = { nodes = 3 },
  clients = { count = 2 },
  workload = { rate = 20, keys = 4 },
  checks = { "linearizability" },
}
expect(run_until(function() return leader() ~= nil end, 10*s), "a leader is elected", leader())
run(1*s)
for round = 1, 4 do
  local old = leader()
  local target = others(old)[1]
  local t0 = now()
  local ok, err = move_leader(target)
  expect(ok ~= nil, "round " .. round .. ": move_leader succeeds", err)
  expect(leader() == target, "round " .. round .. ": leader() is the transferee at once",
         { leader = leader(), target = target, old = old })
  expect(status(target).leader and status(old).leader_node == target,
         "round " .. round .. ": status() of both says so at once",
         { target = status(target).leader, old_follows = status(old).leader_node })
  expect(#node_events{ node = target, kind = "leader", since = t0 } == 1,
         "round " .. round .. ": the leader event is recorded at once", target)
  expect(#node_events{ node = target, kind = "campaign", since = t0 } >= 1,
         "round " .. round .. ": its campaign (read from its log) is recorded at once", target)
  run(500*ms)
end
