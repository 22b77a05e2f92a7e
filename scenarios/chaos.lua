-- chaos.lua: a random nemesis over a mixed workload, for sweeps over many seeds. The
-- fault phase draws partitions (all Jepsen shapes), kills, pauses and clock skew from
-- the fault stream; heal_all() ends it and the cluster must then converge.
scenario {
  name = "chaos",
  description = "random nemesis (partition/kill/pause/skew) over a mixed workload, 5 nodes",
  cluster  = { nodes = 5 },
  clients  = { count = 6, balancer = "round_robin", timeout_ms = 2000 },
  workload = { rate = 150, keys = 10, mix = { put = 5, get = 4, delete = 1, txn = 2, range = 1 },
               watchers = 3 },
  checks   = { "linearizability", "watch", "raft_safety", "converge" },
}

run_until(function() return leader() ~= nil end, 10*s)
nemesis { kinds = { "partition", "kill", "pause", "skew" }, every = 2*s }
run(20*s)
heal_all()
run(2*s)
expect(leader() ~= nil, "a leader after the fault phase", leader())
