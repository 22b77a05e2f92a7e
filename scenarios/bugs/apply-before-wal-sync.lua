-- apply-before-wal-sync.lua (bug server.apply_before_wal_sync): a member may answer a
-- write only once its entry is durable. In a one-member cluster the leader commits an
-- entry as soon as it appends it, so the ready that asks to save the entry also hands
-- it over to be applied; the member must wait for the WAL fsync before applying it.
-- With the bug (etcd#14370, etcd <= 3.5.4, whose apply loop ran while the WAL was being
-- written) it applies and answers first. The disk here is slow (each WAL write starts
-- 40 ms late) while eight writers keep the member busy; then the process dies and
-- restarts from its disk. Correctly every acknowledged write was synced and survives;
-- with the bug the writes answered during the last, unsynced save are gone. Caught by
-- linearizability (an acknowledged write no later read sees), raft_safety (the member
-- applies a different entry at an index it had applied before the crash) and the
-- read-back of every acknowledged write.
scenario {
  name = "apply-before-wal-sync",
  description = "a one-member cluster on a slow disk dies under writes (bug: server.apply_before_wal_sync)",
  cluster  = { nodes = 1, election_ms = 1000, heartbeat_ms = 100 },
  clients  = { count = 2, balancer = "round_robin", timeout_ms = 2000 },
  workload = { rate = 0 },
  checks   = { "linearizability", "watch", "raft_safety", "converge" },
}

expect(run_until(function() return leader() ~= nil end, 10*s), "the member leads", leader())
local n = nodes()[1]
local acked, stop = {}, false
for w = 1, 8 do
  spawn(function()
    local c, i = client(1 + w % 2), 0
    while not stop do
      i = i + 1
      local k = "aw/" .. w .. "/" .. i
      if c:put(k, "v" .. i) then acked[#acked + 1] = { k, "v" .. i } end
    end
  end)
end
failpoint("raft/before_save", { node = n, action = "delay", delay_ms = 40 })
run(1*s + math.random(0, 40) * ms)
kill(n)
stop = true
run(100*ms)
failpoint("raft/before_save", { action = "off" })
restart(n)
expect(run_until(function() return leader() ~= nil end, 10*s), "the member leads again", leader())
run(500*ms)
local c, lost = client(1), 0
for _, kv in ipairs(acked) do
  local r = c:get(kv[1])
  if not (r and r.value == kv[2]) then lost = lost + 1 end
end
expect(#acked > 10 and lost == 0, "every acknowledged write survives the crash",
       { acked = #acked, lost = lost })
heal_all()
run(1*s)
