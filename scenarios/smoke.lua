-- smoke.lua: the default scenario of `make run` and the determinism tests. Three
-- members, four clients under a mixed workload with two watchers; the leader is
-- partitioned away from the majority, a new leader must appear, the old one is killed
-- and restarted, and at the end the cluster must converge and the history must be
-- linearizable with complete watches.
scenario {
  name = "smoke",
  description = "3 nodes, 4 clients, leader partition + kill/restart, all checks",
  cluster  = { nodes = 3, election_ms = 1000, heartbeat_ms = 100 },
  clients  = { count = 4, balancer = "round_robin", timeout_ms = 2000 },
  workload = { rate = 100, keys = 8, mix = { put = 5, get = 4, delete = 1, txn = 1, range = 1 },
               watchers = 2 },
  checks   = { "linearizability", "watch", "raft_safety", "converge" },
}

run_until(function() return leader() ~= nil end, 10*s)
local old = leader()
expect(old ~= nil, "a leader is elected at start", old)

-- our own client traffic next to the workload
local c = client(1)
local r, err = c:put("smoke/a", "1")
expect(r ~= nil, "a put succeeds on a healthy cluster", err)

run(2*s)
partition({ old }, others(old))
local moved = run_until(function() local l = leader(); return l ~= nil and l ~= old end, 10*s)
expect(moved, "a new leader is elected in the majority", leader())
run(2*s)
heal()

kill(old)
run(2*s)
restart(old)
run(2*s)

local g = c:get("smoke/a")
expect(g ~= nil and g.value == "1", "the value written before the faults is still there",
       g and g.value)
heal_all()
run(1*s)
