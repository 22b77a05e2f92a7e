-- defrag-stale-consistent-index.lua (bug server.defrag_stale_consistent_index): a
-- member's backend records the index of the last Raft entry applied to it (etcd's
-- consistent index), so a restart replays the WAL exactly from the next entry. A
-- defragmentation rewrites the backend, and must store that index with it. With the
-- bug (etcd#14685) the rewritten backend holds the current data under the index of the
-- previous commit, so a member that restarts before its next commit applies the
-- entries in between a second time: its revision runs ahead of the others' and every
-- later write gets a different revision on it. Here each member in turn is
-- defragmented under a write load and then restarted. Caught by converge (members'
-- revisions and KV hashes differ), linearizability (responses from that member carry
-- revisions the others gave to other writes) and the expect that all members report
-- the same revision once the writes stopped.
scenario {
  name = "defrag-stale-consistent-index",
  description = "defragment a member under writes, then restart it (bug: server.defrag_stale_consistent_index)",
  cluster  = { nodes = 3, election_ms = 1000, heartbeat_ms = 100, snapshot_count = 100 },
  clients  = { count = 3, balancer = "round_robin", timeout_ms = 2000 },
  workload = { rate = 0 },
  checks   = { "linearizability", "watch", "raft_safety", "converge" },
}

expect(run_until(function() return leader() ~= nil end, 10*s), "a leader is elected", leader())
local stop = false
for w = 1, 3 do
  spawn(function()
    local c, i = client(w), 0
    while not stop do
      i = i + 1
      c:put("dc/" .. (i % 8), w .. "-" .. i)
      sleep(20*ms)
    end
  end)
end
run(1*s)
for _, n in ipairs(nodes()) do
  local ok, err = defrag(n)
  expect(ok ~= nil, "defrag of member " .. n .. " succeeds", err)
  run(50*ms)
  kill(n)
  run(100*ms)
  restart(n)
  run(1500*ms)
end
stop = true
heal_all()
run(2*s)
local revs, same = {}, true
for _, n in ipairs(nodes()) do
  revs[#revs + 1] = status(n).revision
  if revs[#revs] ~= revs[1] then same = false end
end
expect(same, "every member reports the same revision", revs)
