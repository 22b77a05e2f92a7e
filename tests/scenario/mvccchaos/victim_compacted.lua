-- victim_compacted.lua: etcd#17529 the way etcd's own Issue17529 regression reaches it:
-- one member, no snapshot, a starved watch stream and a compaction. The stream buffer
-- is 4 responses (cluster.watch_buffer): the watcher is a victim after the fifth
-- write, catches up as an unsynced watcher, and the compaction passes it while its
-- buffer is still full. Fixed: it is cancelled with the compacted revision once the
-- buffer has room (no gap). With the bug
-- (mvcc.watch_compacted_lost) it skips to the compaction: the watch checker's
-- "reliable" and the expect below fail.
scenario {
  name = "victim-compacted",
  description = "one member, starved watch stream, compaction past its victim watcher",
  cluster  = { nodes = 1, watch_buffer = 4 },
  clients  = { count = 1, timeout_ms = 2000 },
  workload = { rate = 0 },
  checks   = { "linearizability", "watch", "raft_safety", "converge" },
}

expect(run_until(function() return leader() ~= nil end, 10*s), "a leader is elected", leader())
local c = client(1)
local gaps, last = 0, 0
c:watch("v/", { prefix = true, callback = function(ev)
  if last > 0 and ev.mod_revision ~= last + 1 then gaps = gaps + 1 end
  last = ev.mod_revision
end })
run(200*ms)
failpoint("watch/before_send", { action = "delay", delay_ms = 200 })
local r
for i = 1, 30 do r = c:put("v/" .. (i % 3), "x" .. i) or r end
expect(r ~= nil, "the writes succeed", r)
local ok, err = compact(r.revision - 5)
expect(ok, "compaction succeeds", err)
run(1*s)
failpoint("watch/before_send", { action = "off" })
run(2*s)
expect(gaps == 0, "no watch skips a revision without being cancelled", { gaps = gaps, last = last })
