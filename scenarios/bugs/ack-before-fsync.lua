-- ack-before-fsync.lua (bug raft.ack_before_fsync): a member must make entries durable
-- (written AND fsynced) before it acknowledges them, because the leader counts that
-- acknowledgement toward commit. Here the followers' disks are slow (every WAL write +
-- fsync takes 300 ms more) while eight writers keep the leader busy (the client load;
-- no background workload, so the checker judges every write), then every member loses
-- power at once and restarts from its disk. Correctly, whatever the leader committed was on a majority
-- of disks and survives. With the bug the followers acknowledge appends before they are
-- durable, so entries the leader committed (and clients saw acknowledged) are missing
-- from every disk but the leader's after the restart, and a new leader elected from the
-- followers overwrites them. Caught by raft_safety (committed entries lost), by
-- linearizability, and by reading back every acknowledged write.
scenario {
  name = "ack-before-fsync",
  description = "slow follower disks, power loss of every member (bug: raft.ack_before_fsync)",
  cluster  = { nodes = 3, election_ms = 1000, heartbeat_ms = 100 },
  clients  = { count = 4, balancer = "round_robin", timeout_ms = 2000 },
  workload = { rate = 0 },
  checks   = { "linearizability", "watch", "raft_safety", "converge" },
}

expect(run_until(function() return leader() ~= nil end, 10*s), "a leader is elected", leader())
local l = leader()
local acked, stop = {}, false
for w = 1, 8 do
  spawn(function()
    local c, i = client(1 + w % 4), 0
    while not stop do
      i = i + 1
      local k = "ab/" .. w .. "/" .. i
      if c:put(k, "v" .. i, { node = l }) then acked[#acked + 1] = { k, "v" .. i } end
    end
  end)
end
for _, n in ipairs(others(l)) do
  failpoint("raft/before_save", { node = n, action = "delay", delay_ms = 300 })
end
run(2*s)
-- power loss everywhere: only what each disk synced survives
for _, n in ipairs(nodes()) do kill(n) end
stop = true
run(100*ms)
-- the leader's machine comes back last: the followers elect one of them first
for _, n in ipairs(others(l)) do restart(n) end
failpoint("raft/before_save", { action = "off" })
expect(run_until(function() return leader() ~= nil end, 10*s), "a leader is elected after the restart", leader())
restart(l)
run(2*s)
heal_all()
run(2*s)
local c, lost = client(1), 0
for _, kv in ipairs(acked) do
  local r = c:get(kv[1])
  if not (r and r.value == kv[2]) then lost = lost + 1 end
end
expect(#acked > 10 and lost == 0, "every acknowledged write survives the power loss",
       { acked = #acked, lost = lost })
