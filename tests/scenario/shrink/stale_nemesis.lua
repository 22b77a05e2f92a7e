-- shrink/stale_nemesis.lua: a random nemesis over a small workload, for `faultline
-- shrink` tests with a bug switch (--bug mvcc.stale_read makes it fail linearizability
-- on some seeds; without the bug it passes). The nemesis draws many faults; usually
-- one partition is what exposes the stale read.
scenario {
  name = "shrink-stale-nemesis",
  description = "nemesis over a small workload; fails under --bug mvcc.stale_read (shrink test)",
  cluster  = { nodes = 3 },
  clients  = { count = 3, timeout_ms = 1000 },
  workload = { rate = 100, keys = 4, mix = { put = 4, get = 4, delete = 1, txn = 1, range = 1 },
               watchers = 1 },
  checks   = { "linearizability", "watch", "raft_safety", "converge" },
}

run_until(function() return leader() ~= nil end, 10*s)
nemesis { kinds = { "partition", "kill", "pause" }, every = 1*s }
run(12*s)
heal_all()
run(1*s)
