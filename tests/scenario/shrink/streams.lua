-- shrink/streams.lua: a workload with faults in the middle, for shrink_streams.py,
-- which runs it with and without its faults (shrink{ skip_faults }) and checks that
-- every client's workload draws (operation kind, key, value) do not move.
scenario {
  name = "shrink-streams",
  cluster  = { nodes = 3 },
  clients  = { count = 3, timeout_ms = 1000 },
  workload = { rate = 150, keys = 5 },
  checks   = { "raft_safety" },
}
run_until(function() return leader() ~= nil end, 10*s)
run(1*s)
local l = leader()
isolate(l)
run(2*s)
heal()
kill(others(l)[1])
nemesis { kinds = { "partition", "pause" }, every = 500*ms }
run(3*s)
heal_all()
run(1*s)
