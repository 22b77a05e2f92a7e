-- shrink/leader_kept.lua: a scenario that fails on purpose, for `faultline shrink` tests.
-- Of its six hand-written faults only the isolation of the first leader makes the
-- final expect fail (the leader changes); the pause, the skew, the net burst and the
-- kill/restart of a follower are noise the shrinker must drop.
scenario {
  name = "shrink-leader-kept",
  description = "fails on purpose: one of several faults moves the leader (shrink test)",
  cluster  = { nodes = 3 },
  clients  = { count = 4, timeout_ms = 1000 },
  workload = { rate = 80, keys = 6, watchers = 1 },
  checks   = { "linearizability", "watch", "raft_safety", "converge" },
}

run_until(function() return leader() ~= nil end, 10*s)
local first = leader()
local f1, f2 = others(first)[1], others(first)[2]

run(1*s)
pause(f1)
run(1*s)
resume(f1)
skew(f2, 1.1)
run(1*s)
net { delay_ms = 5 }
run(1*s)
net { delay_ms = 0 }
isolate(first)
run(4*s)
heal()
kill(f2)
run(2*s)
restart(f2)
run(3*s)
expect(leader() == first, "the first leader keeps its leadership", leader())
heal_all()
run(1*s)
