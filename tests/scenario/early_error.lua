-- early_error.lua: traffic for 2 s, then a script error. The run ends `error` (exit 2), and
-- no check may say `pass` over the history recorded until then (cli.run.early_checks_unknown).
scenario {
  name = "early",
  cluster  = { nodes = 3 },
  clients  = { count = 2, timeout_ms = 2000 },
  workload = { rate = 50, keys = 4, watchers = 1 },
  checks   = { "linearizability", "watch", "raft_safety", "converge" },
}
run(2*s)
error("stop here")
