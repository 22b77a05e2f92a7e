-- log-retention.lua: etcd's log retention. Every member takes a snapshot of its state
-- every `snapshot_count` applied entries (etcd's default 100000; 100 here) and keeps
-- only the last `snapshot_catchup` entries (5000 by default; 200 here) behind it. A
-- follower cut off while more than the kept entries are written can no longer be sent
-- the entries it misses: the leader sends it the snapshot (InstallSnapshot), the
-- follower installs it and then resumes ordinary replication.
-- Asserted on node events (local `snapshot` events about every snapshot_count entries,
-- `snapshot_sent` by the leader to that follower, `snapshot_applied` on it), on member
-- status (the follower's applied index reaching the leader's commit) and on the values
-- the follower serves afterwards, under client load.
scenario {
  name = "log-retention",
  description = "snapshot_count small: a follower cut off past the kept entries is caught up by a snapshot",
  cluster  = { nodes = 3, election_ms = 1000, heartbeat_ms = 100, snapshot_count = 100,
               snapshot_catchup = 200 },
  clients  = { count = 3, balancer = "round_robin", timeout_ms = 2000 },
  workload = { rate = 50, keys = 8 },
  checks   = { "linearizability", "watch", "raft_safety", "converge" },
}

expect(run_until(function() return leader() ~= nil end, 10*s), "a leader is elected", leader())
run(1*s)
local l = leader()
local f = others(l)[1]
local t0 = now()
isolate(f)
local c = client(3)
local acked = 0
local start_commit = status(l).commit
-- more entries than the 512 appends in flight plus the 200 kept ones
for i = 1, 1000 do
  if c:put("ret/" .. i, "v" .. i, { node = l }) then acked = acked + 1 end
end
local written = status(l).commit - start_commit
expect(acked == 1000 and written > 200 + 512, "the majority commits while the follower is cut off",
       { acked = acked, entries = written })
local snaps = #node_events{ node = l, kind = "snapshot", since = t0 }
expect(snaps >= written // 100 - 1 and snaps <= written // 100 + 1,
       "the leader snapshots about every snapshot_count (100) applied entries",
       { snapshots = snaps, entries = written })
heal()
local caught = run_until(function()
  return status(f).applied >= status(l).commit end, 10*s)
expect(caught, "the follower catches up", { leader_commit = status(l).commit, applied = status(f).applied })
-- each snapshot_sent event names the follower it went to (e.peer)
local sent = 0
for _, e in ipairs(node_events{ node = l, kind = "snapshot_sent", since = t0 }) do
  if e.peer == f then sent = sent + 1 end
end
local applied = #node_events{ node = f, kind = "snapshot_applied", since = t0 }
expect(sent >= 1 and applied >= 1, "the leader sent its snapshot and the follower installed it",
       { sent = sent, applied = applied })
-- ordinary replication resumes after the snapshot
local r = c:put("ret/after", "x", { node = l })
local ok = run_until(function()
  local g = c:get("ret/after", { node = f, serializable = true })
  return g ~= nil and g.value == "x" end, 5*s)
expect(r ~= nil and ok, "a later write reaches the follower by ordinary replication", r ~= nil)
local missing = 0
for i = 1, 1000, 37 do
  local g = c:get("ret/" .. i, { node = f, serializable = true })
  if not (g and g.value == "v" .. i) then missing = missing + 1 end
end
expect(missing == 0, "the follower serves the writes it received through the snapshot", missing)
