-- catchup_live.lua (live target, issue 16): cluster.snapshot_catchup reaches the
-- member processes (`faultline member --snapshot-catchup N`): with 20 entries kept
-- behind each snapshot, a follower cut off while 600 entries are written (more than
-- the 512 appends in flight and the kept ones) is caught up by a snapshot. With etcd's
-- 5000 kept it would get the entries instead.
scenario {
  name = "live-catchup",
  description = "live target: snapshot_catchup as a member option",
  cluster  = { nodes = 3, election_ms = 1000, heartbeat_ms = 100, snapshot_count = 50,
               snapshot_catchup = 20 },
  clients  = { count = 1, timeout_ms = 2000 },
  checks   = { "linearizability" },
}

expect(run_until(function() return leader() ~= nil end, 10*s), "a leader is elected", leader())
run(500*ms)
local l = leader()
local f = others(l)[1]
local t0 = now()
isolate(f)
local c = client(1)
local acked = 0
for i = 1, 600 do
  if c:put("cu/" .. i, "v" .. i, { node = l }) then acked = acked + 1 end
end
expect(acked == 600, "the majority commits while the follower is cut off", acked)
heal()
local caught = run_until(function() return status(f).applied >= status(l).commit end, 15*s)
expect(caught, "the follower catches up", { leader_commit = status(l).commit, applied = status(f).applied })
local sent = 0
for _, e in ipairs(node_events{ node = l, kind = "snapshot_sent", since = t0 }) do
  if e.peer == f then sent = sent + 1 end
end
local installed = #node_events{ node = f, kind = "snapshot_applied", since = t0 }
expect(sent >= 1 and installed >= 1, "the leader sent a snapshot and the follower installed it",
       { sent = sent, installed = installed })
local g = c:get("cu/600", { node = f, serializable = true })
expect(g ~= nil and g.value == "v600", "the follower serves the last write", g)
