-- watch-compacted-lost.lua (bug mvcc.watch_compacted_lost): a watcher that fell behind
-- the compaction must be cancelled with the compacted revision, so its client knows
-- it missed events. etcd sends that cancel on the watch stream's buffer (128
-- responses); when the stream is starved and the buffer full, the send fails and the
-- watcher waits for the next sync to try again. With the bug (etcd#17529) the watcher
-- stayed among those being synced and was moved on as if it had caught up: its client
-- silently misses every event up to the compaction. Here every watch stream is starved
-- (watch/before_send delays its sends) while writes fill the buffers, a follower is
-- cut off, the leadership moves to the other follower, which writes on, compacts and
-- snapshots past the cut-off one; that one then catches up from the new leader's
-- snapshot: its watchers are now behind the compaction with full buffers. Caught by the watch checker ("reliable": events missing between the last
-- one delivered and the compaction, without a cancel) and by the expect that no watch
-- jumps over a revision it should have delivered.
scenario {
  name = "watch-compacted-lost",
  description = "starved watch streams on a follower that catches up by snapshot past a compaction (bug: mvcc.watch_compacted_lost)",
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
  for j = 1, 2 do
    local last = 0
    client(i):watch("wc/", { prefix = true, callback = function(ev)
      events = events + 1
      -- every revision writes one wc/ key: a watch that skips one lost an event
      if last > 0 and ev.mod_revision ~= last + 1 then gaps = gaps + 1 end
      last = ev.mod_revision
    end })
  end
end
run(500*ms)
failpoint("watch/before_send", { action = "delay", delay_ms = 300 })
local l = leader()
for i = 1, 150 do c:put("wc/" .. (i % 10), "a" .. i, { node = l }) end
local f, l2 = others(l)[1], others(l)[2]
isolate(f)
-- a new leader, so that nothing but its snapshot reaches f when the partition heals
-- (what the old one sent f waits behind the partition and is delivered then)
local moved = move_leader(l2)
expect(run_until(function() return leader() == l2 end, 5*s), "leadership moves to the other follower",
       { moved = moved, leader = leader() })
local last
for i = 1, 300 do last = c:put("wc/" .. (i % 10), "b" .. i, { node = l2 }) or last end
expect(last ~= nil, "the majority takes writes", last)
local ok, err = compact(last.revision)
expect(ok, "compaction succeeds", err)
-- enough more writes that the leader's next snapshot covers the compaction
for i = 1, 120 do c:put("wc/" .. (i % 10), "c" .. i, { node = l2 }) end
run(500*ms)
heal()
expect(run_until(function() return status(f).applied >= status(l2).applied end, 10*s),
       "the cut-off member catches up", { f = status(f).applied, leader = status(l2).applied })
run(1*s)
failpoint("watch/before_send", { action = "off" })
run(3*s)
heal_all()
run(1*s)
expect(events > 0, "the watches delivered events", events)
expect(gaps == 0, "no watch skips a revision without being cancelled", { gaps = gaps, events = events })
