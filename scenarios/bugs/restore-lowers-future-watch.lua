-- restore-lowers-future-watch.lua (bug mvcc.restore_lowers_future_watch): a watch may
-- start at a revision the store has not reached yet; it then delivers nothing until
-- that revision and never anything before it. When a member restores a snapshot from
-- the leader, etcd moves all its watchers to the unsynced group to catch them up; with
-- the bug (etcd#20221, "watch on future revision returns old events", fixed by etcd
-- PR 20281) the resync set each of them to the current revision + 1, future watchers
-- included, so those deliver events below their start revision. Here a follower is cut
-- off, watches from a revision 400 ahead are opened through every member, the
-- leadership moves to the other follower (so that only its snapshot reaches the
-- cut-off one when the partition heals), which writes on and snapshots past it; after
-- the heal the writes go beyond the watches' start. Caught by the expect that no event
-- comes before a watch's start revision, and by the watch checker.
scenario {
  name = "restore-lowers-future-watch",
  description = "watches on a future revision on a follower that catches up by snapshot (bug: mvcc.restore_lowers_future_watch)",
  cluster  = { nodes = 3, election_ms = 1000, heartbeat_ms = 100, snapshot_count = 100,
               snapshot_catchup = 20 },
  clients  = { count = 3, balancer = "round_robin", timeout_ms = 2000 },
  workload = { rate = 0 },
  checks   = { "linearizability", "watch", "raft_safety", "converge" },
}

expect(run_until(function() return leader() ~= nil end, 10*s), "a leader is elected", leader())
local c = client(1)
local l = leader()
local p
for i = 1, 20 do p = c:put("fw/" .. (i % 10), "a" .. i, { node = l }) or p end
local f, l2 = others(l)[1], others(l)[2]
isolate(f)
local start = p.revision + 400
local early, events = 0, 0
for i = 1, 3 do
  for j = 1, 3 do
    client(i):watch("fw/", { prefix = true, start_rev = start, callback = function(ev)
      events = events + 1
      if ev.mod_revision < start then early = early + 1 end
    end })
  end
end
local moved = move_leader(l2)
expect(run_until(function() return leader() == l2 end, 5*s), "leadership moves to the other follower",
       { moved = moved, leader = leader() })
for i = 1, 250 do c:put("fw/" .. (i % 10), "b" .. i, { node = l2 }) end
run(500*ms)
heal()
expect(run_until(function() return status(f).applied >= status(l2).applied end, 10*s),
       "the cut-off member catches up", { f = status(f).applied, leader = status(l2).applied })
for i = 1, 200 do c:put("fw/" .. (i % 10), "c" .. i, { node = l2 }) end
run(2*s)
heal_all()
run(1*s)
expect(events > 0, "the watches delivered events from their start revision", events)
expect(early == 0, "no watch delivers an event before its start revision",
       { early = early, events = events, start = start })
