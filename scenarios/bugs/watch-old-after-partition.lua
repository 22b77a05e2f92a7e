-- watch-old-after-partition.lua (bug mvcc.watch_old_after_partition): a watch never
-- goes back in time; events come in strictly increasing revision order, each once,
-- even when the member serving the watch was cut off from the cluster for a while and
-- catches up after the partition heals. With the bug (etcd#15271) a member that
-- rejoins after a partition resends revisions its watches already delivered. Watches
-- are opened from every client so that every member serves some; each follower in
-- turn is isolated for longer than an election timeout under a write load, then
-- healed. Asserts, on the events delivered, that no watch ever receives a revision at
-- or below one it already received; the watch checker judges every watch (ordered,
-- unique, reliable, ...) and the other checkers the rest.
scenario {
  name = "watch-old-after-partition",
  description = "followers isolated and healed under load; watches never go back (bug: mvcc.watch_old_after_partition)",
  cluster  = { nodes = 3, election_ms = 1000, heartbeat_ms = 100 },
  clients  = { count = 3, balancer = "round_robin", timeout_ms = 2000 },
  workload = { rate = 100, keys = 8, watchers = 2 },
  checks   = { "linearizability", "watch", "raft_safety", "converge" },
}

run_until(function() return leader() ~= nil end, 10*s)
local went_back, events = 0, 0
local function watcher(i, j)
  local last = 0
  client(i):watch("key", { prefix = true, prev_kv = true, callback = function(ev)
    events = events + 1
    if ev.mod_revision < last then went_back = went_back + 1 end
    last = ev.mod_revision
  end })
end
-- three watches per client: round robin spreads them over the members
for i = 1, 3 do for j = 1, 3 do watcher(i, j) end end
run(2*s)

for round = 1, 2 do
  local l = leader()
  for _, n in ipairs(others(l)) do
    isolate(n)
    run(3*s)
    heal()
    run(2*s)
  end
end
heal_all()
run(2*s)
expect(events > 0, "the watches delivered events", events)
expect(went_back == 0, "no watch delivers a revision older than one it already delivered",
       { went_back = went_back, events = events })
