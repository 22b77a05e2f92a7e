-- auto-compaction-periodic.lua: etcd's auto-compaction in "periodic" mode, with the
-- etcd 3.3 semantics the design document describes: the leader samples the revision
-- every min(retention, 1h)/10; one retention after it started it compacts to the
-- revision it sampled one retention earlier, and then again every min(retention, 1h).
-- The design document's figures: retention 8h gives one compaction every hour, each
-- removing the oldest hour's revisions. Our writes make exactly 100 revisions per hour
-- (one every 36 s, away from the sampling instants; the workload only reads), so the
-- k-th hour ends at revision 1 + 100k. Asserted on observed data: nothing is compacted
-- before hour 9 (hour 8 compacts to revision 1), then at hours 9, 10, 11 the compacted
-- revision (a read just below fails with etcd's text, a read at it works) is 101, 201,
-- 301 — 8 hours back, 100 revisions (one hour) each time — and the compactions come one
-- hour apart (polled every second); plus all four checkers.
scenario {
  name = "auto-compaction-periodic",
  description = "periodic mode, retention 8h: a compaction every hour, of the oldest hour's revisions",
  cluster  = { nodes = 3, election_ms = 1000, heartbeat_ms = 100,
               auto_compaction_mode = "periodic", auto_compaction_retention = 8 * 3600 * 1000 },
  clients  = { count = 2, balancer = "round_robin", timeout_ms = 2000 },
  workload = { rate = 1, keys = 4, mix = { put = 0, get = 3, delete = 0, txn = 0, range = 1 } },
  checks   = { "linearizability", "watch", "raft_safety", "converge" },
}

local COMPACTED = "etcdserver: mvcc: required revision has been compacted"
local HOUR = 3600 * s
run_until(function() return leader() ~= nil end, 10*s)
local t0 = now() -- the leader's compactor started about now (samples at t0 + k * 6 min)
local c = client(1)

local function compacted(rev)
  local _, e = c:get("pc/k0", { revision = rev })
  return e == COMPACTED
end

-- one write every 36 s, 18 s off the 6-minute sampling grid: 100 revisions an hour
local writes = 0
spawn(function()
  local c2 = client(2)
  while true do
    sleep(t0 + 18*s + writes * 36*s - now())
    c2:put("pc/k" .. (writes % 10), tostring(writes))
    writes = writes + 1
  end
end)

run(t0 + 8 * HOUR + 30*s - now())
expect(writes == 801 and not compacted(1), "8 hours in: nothing older than the first sample is compacted",
       { writes = writes })
local seen, at = {}, {}
for h = 9, 11 do
  local want = 1 + 100 * (h - 8)
  run(t0 + h * HOUR - 60*s - now())
  local early = compacted(want - 1)
  run_until(function() return compacted(want - 1) end, 3 * 60*s, 1*s)
  at[h] = now()
  local exact = compacted(want - 1) and not compacted(want)
  seen[h] = exact and want or -1
  expect(not early and exact, "hour " .. h .. ": compacted to the revision of 8 hours before (" .. want .. ")",
         { early = early, exact = exact, at_s = (now() - t0) // s })
end
expect(seen[10] - seen[9] == 100 and seen[11] - seen[10] == 100,
       "each hourly compaction removes one hour of revisions", seen)
for h = 10, 11 do
  local gap = at[h] - at[h - 1]
  expect(gap >= HOUR - 2*s and gap <= HOUR + 2*s, "compactions come one hour apart", gap // ms)
end
heal_all()
run(1*s)
