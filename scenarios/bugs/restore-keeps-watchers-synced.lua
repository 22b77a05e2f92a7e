-- restore-keeps-watchers-synced.lua (bug mvcc.restore_keeps_watchers_synced): when a
-- member replaces its store with a snapshot from the leader, its watchers must catch up
-- on every revision the snapshot brought before they hear of new ones. With the bug
-- (etcd#8411, fixed by moving synced watchers to the unsynced group on restore) they
-- stay synced: they hear only of revisions applied after the restore, and what came in
-- the snapshot is never delivered. Here watches are opened through every member; one
-- follower is cut off, the leadership moves to the other follower (so that nothing
-- but its snapshot reaches the cut-off one when the partition heals: what the old
-- leader sent waits behind the partition), which writes on and snapshots past the
-- cut-off follower's log. Caught by the watch checker ("reliable": events missing)
-- and by the expect that no watch skips a revision (every revision writes a key that
-- every watch matches).
scenario {
  name = "restore-keeps-watchers-synced",
  description = "a follower with watches catches up from the leader's snapshot (bug: mvcc.restore_keeps_watchers_synced)",
  cluster  = { nodes = 3, election_ms = 1000, heartbeat_ms = 100, snapshot_count = 100,
               snapshot_catchup = 20 },
  clients  = { count = 3, balancer = "round_robin", timeout_ms = 2000 },
  workload = { rate = 0 },
  checks   = { "linearizability", "watch", "raft_safety", "converge" },
}

expect(run_until(function() return leader() ~= nil end, 10*s), "a leader is elected", leader())
local c = client(1)
local gaps, events = 0, 0
for i = 1, 3 do
  for j = 1, 3 do
    local last = 0
    client(i):watch("rs/", { prefix = true, callback = function(ev)
      events = events + 1
      if last > 0 and ev.mod_revision ~= last + 1 then gaps = gaps + 1 end
      last = ev.mod_revision
    end })
  end
end
run(500*ms)
local l = leader()
for i = 1, 20 do c:put("rs/" .. (i % 10), "a" .. i, { node = l }) end
local f, l2 = others(l)[1], others(l)[2]
isolate(f)
local moved = move_leader(l2)
expect(run_until(function() return leader() == l2 end, 5*s), "leadership moves to the other follower",
       { moved = moved, leader = leader() })
for i = 1, 250 do c:put("rs/" .. (i % 10), "b" .. i, { node = l2 }) end
run(500*ms)
heal()
expect(run_until(function() return status(f).applied >= status(l2).applied end, 10*s),
       "the cut-off member catches up", { f = status(f).applied, leader = status(l2).applied })
local snaps = node_events { node = f, kind = "snapshot_applied" }
expect(#snaps > 0, "it caught up from the leader's snapshot", #snaps)
for i = 1, 20 do c:put("rs/" .. (i % 10), "c" .. i, { node = l2 }) end
run(2*s)
heal_all()
run(1*s)
expect(events > 0, "the watches delivered events", events)
expect(gaps == 0, "no watch skips a revision", { gaps = gaps, events = events })
