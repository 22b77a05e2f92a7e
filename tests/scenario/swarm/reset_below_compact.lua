-- reset_below_compact.lua (run with --bug mvcc.revision_reset_on_restart): the bug
-- takes a restarted member's revision back to its newest live key; when every key was
-- deleted and the history compacted, that is below the compact revision (etcd#17780's
-- shape, which etcd's bbolt holds), and the member's next local snapshot did not
-- decode at its next restart: the run aborted ("snapshot file does not decode", found
-- by the swarm: chaos seed 158 with the switch ended as an error instead of a
-- finding). The run must end and be judged: the reused revisions fail linearizability
-- and the members do not converge (exit 1), never an abort.
scenario {
  name = "reset-below-compact",
  cluster = { nodes = 3, election_ms = 1000, heartbeat_ms = 100, snapshot_count = 5,
              snapshot_catchup = 5 },
  clients = { count = 1 },
  workload = { rate = 0 },
}

expect(run_until(function() return leader() ~= nil end, 10*s), "a first leader")
local c = client(1)
for i = 1, 5 do c:put("k" .. i, "v") end
local r
for i = 1, 5 do r = c:delete("k" .. i) end
compact(r.revision)
run(500*ms)
local m = others(leader())[1]
kill(m)
restart(m)
run(1*s)
for i = 1, 8 do c:put("x" .. i, "v", { node = m }) end -- a local snapshot on m
run(1*s)
kill(m)
restart(m)
run(2*s)
