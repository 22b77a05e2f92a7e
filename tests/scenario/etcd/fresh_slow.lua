-- fresh_slow.lua (etcd target): the term of a leader seen right after move_leader to a
-- member whose WAL is slow (raft/before_save delay by strace). etcd's Status raftTerm
-- is the term of the member's last applied entry; a new leader applies the first entry
-- of its term only after its WAL save of it (500 ms here), while move_leader answers
-- once the old leader follows it. leader(), the `leader` node event and status().term
-- must give the Raft term it won (the term its log names), old term + 1.
scenario {
  name = "etcd-fresh-slow",
  cluster = { nodes = 3 },
  clients = { count = 2 },
  workload = { rate = 20, keys = 4 },
  checks = { "linearizability" },
}
expect(run_until(function() return leader() ~= nil end, 10*s), "a leader is elected", leader())
run(1*s)
for round = 1, 2 do
  local old = leader()
  local term = status(old).term
  local target = others(old)[1]
  failpoint("raft/before_save", { node = target, action = "delay", delay_ms = 500 })
  run(500*ms)
  local t0 = now()
  local ok, err = move_leader(target)
  expect(ok ~= nil, "round " .. round .. ": move_leader succeeds", err)
  local won = node_events{ node = target, kind = "leader", since = t0 }
  expect(leader() == target and #won == 1 and won[1].term == term + 1,
         "round " .. round .. ": the leader event names the term it won",
         { leader = leader(), events = #won, term = won[1] and won[1].term, old_term = term })
  expect(status(target).term == term + 1, "round " .. round .. ": status().term is that term",
         { term = status(target).term, old_term = term })
  failpoint("raft/before_save", { node = target, action = "off" })
  run(1*s)
end
