-- converge_live.lua (live target, issue 16): the converge check runs on live (every
-- member of the leader's cluster reaches one revision with one HashKV there, after a
-- follower was cut off during writes and the run healed), and raft_safety, asked for,
-- is judged from the member processes' Raft feeds.
scenario {
  name = "live-converge",
  description = "live target: converge judged by HashKV; raft_safety from the members' feeds",
  cluster  = { nodes = 3, election_ms = 1000, heartbeat_ms = 100 },
  clients  = { count = 2, timeout_ms = 2000 },
  workload = { rate = 50, keys = 8 },
  checks   = { "linearizability", "converge", "raft_safety" },
}

expect(run_until(function() return leader() ~= nil end, 10*s), "a leader is elected", leader())
run(500*ms)
local f = others(leader())[1]
isolate(f)
run(1500*ms)
-- the run heals itself before converge looks
