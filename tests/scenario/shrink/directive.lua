shrink{ skip_faults = {2, 4}, end_at = 2500*ms, time_scale = 50, clients = 1, keys = 2, rate = 20, watchers = 0, nodes = 5 }; -- line 1 keeps its text
-- shrink/directive.lua: every field of shrink{} at work (shrink_directive.py reads the
-- --json summary). Ordinals: pause #1, pause #2 (skipped), resume #3, resume #4
-- (skipped), nemesis #5; the run would last 2 + 4 s but durations are halved and the
-- script is cut at 2.5 s.
scenario {
  name = "shrink-directive",
  clients  = { count = 3 },
  workload = { rate = 100, keys = 8, watchers = 2 },
  checks   = { "raft_safety" },
}
local t0 = now()
pause(2)
pause(3)
run(2*s)
expect(now() - t0 == 1*s, "run(2*s) takes 1 s at time_scale 50", now() - t0)
resume(2)
resume(3)
nemesis { kinds = { "kill" }, every = 200*ms }
run(4*s)
expect(false, "never reached: end_at stops the script first")
