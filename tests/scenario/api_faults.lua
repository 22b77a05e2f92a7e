-- api_faults.lua: every fault of the surface, then heal_all and convergence.
scenario { name = "api-faults", description = "node, network, failpoint, bug and nemesis faults",
           cluster = { nodes = 3 }, clients = { count = 2 },
           workload = { rate = 50, keys = 4 },
           checks = { "linearizability", "raft_safety", "converge" } }
run_until(function() return leader() ~= nil end, 10*s)
local l = leader()
expect(#nodes() == 3, "three nodes", nodes())
expect(#others(l) == 2, "others excludes the node", others(l))
expect(#others({1, 2}) == 1, "others of a list", others({1, 2}))
kill(l); run(2*s); restart(l); run(1*s)
local f = others(leader() or 1)[1]
pause(f); run(1*s); resume(f); run(1*s)
skew(f, 1.5); run(1*s); skew(f, 1.0)
partition({1}, {2, 3}); run(1*s); heal()
partition({1}, {2}, { oneway = true }); run(500*ms); heal()
partition({2}); run(500*ms); heal()
isolate(3); run(1*s); heal()
net { drop = 0.01, dup = 0.0, delay_ms = 5 }; run(1*s); net { drop = 0, dup = 0, delay_ms = 0 }
hold(1, 2); run(200*ms); release(1, 2)
hold(); run(100*ms); release()
clog(2, 3); run(200*ms); clog(2, 3, false)
failpoint("raft/before_save", { node = 1, action = "delay", delay_ms = 5, p = 0.5, count = 3 })
run(1*s)
failpoint("raft/before_save", { node = 1, action = "off" })
bug("client.no_failover")
nemesis { kinds = { "partition", "kill", "pause", "skew", "net" }, every = 1*s, duration = 5*s }
run(6*s)
heal_all()
run(2*s)
expect(leader() ~= nil, "a leader after heal_all", leader())
