-- stale-read.lua (bug mvcc.stale_read): a linearizable read must go through ReadIndex,
-- so a member cut off from the leader never answers it from its own, possibly stale,
-- store (it fails or waits instead). With the bug a member serves linearizable reads
-- locally, as etcd 2 did with quorum=false: a follower isolated before a write keeps
-- answering the old value after the write was acknowledged. Asserts, on every read
-- issued after the second write returned, that the value read back is the new one (or
-- that the read failed), and the linearizability checker judges the whole history.
scenario {
  name = "stale-read",
  description = "linearizable reads on an isolated follower: never the old value (bug: mvcc.stale_read)",
  cluster  = { nodes = 3, election_ms = 1000, heartbeat_ms = 100 },
  clients  = { count = 3, balancer = "round_robin", timeout_ms = 1500 },
  workload = { rate = 30, keys = 4 },
  checks   = { "linearizability", "watch", "raft_safety", "converge" },
}

run_until(function() return leader() ~= nil end, 10*s)
local c = client(1)
local w1, e1 = c:put("stale/k", "old")
expect(w1 ~= nil, "the first write is acknowledged", e1)
run(500*ms) -- every member applied it
local f = others(leader())[1]
isolate(f)
-- the second write commits on the majority while f still holds "old"
local w2
for i = 1, 5 do
  w2 = c:put("stale/k", "new")
  if w2 then break end
end
expect(w2 ~= nil, "the second write is acknowledged by the majority", w2)

-- linearizable reads through every client (round robin: some go to f)
local stale, served, on_f = 0, 0, 0
for round = 1, 6 do
  for i = 1, 3 do
    local r, err = client(i):get("stale/k")
    if r then
      served = served + 1
      if r.node == f then on_f = on_f + 1 end
      if r.value ~= "new" then stale = stale + 1 end
    end
  end
end
expect(stale == 0, "no linearizable read returns the value overwritten before it began",
       { stale = stale, served = served, served_by_isolated = on_f })
heal_all()
run(2*s)
