-- auto-compaction-revision.lua: etcd's auto-compaction in "revision" mode: every 5
-- minutes the leader compacts to (current revision - retention) when that is positive
-- and new. The design document's figures: with retention 1000 and 500 new revisions
-- every 5 minutes, each run compacts the 500 oldest revisions still kept. Writes of
-- our own make exactly 500 revisions per 5-minute period (the workload only reads).
-- Asserted on observed data: after each period the compacted revision, found by reads
-- at revisions (a read just below it fails with etcd's text, a read at it works), is
-- current - 1000, it advances by exactly 500 per period, and the time it moved (polled
-- every second) is 5 minutes after the previous move; plus all four checkers.
scenario {
  name = "auto-compaction-revision",
  description = "revision mode, retention 1000, 500 revisions per 5 minutes: 500 revisions compacted every 5 minutes",
  cluster  = { nodes = 3, election_ms = 1000, heartbeat_ms = 100,
               auto_compaction_mode = "revision", auto_compaction_retention = 1000 },
  clients  = { count = 2, balancer = "round_robin", timeout_ms = 2000 },
  workload = { rate = 4, keys = 4, mix = { put = 0, get = 3, delete = 0, txn = 0, range = 1 } },
  checks   = { "linearizability", "watch", "raft_safety", "converge" },
}

local COMPACTED = "etcdserver: mvcc: required revision has been compacted"
local PERIOD = 5 * 60 * s
run_until(function() return leader() ~= nil end, 10*s)
local t0 = now() -- the leader's compactor starts about now
local c = client(1)

-- true when a read at rev is refused as compacted
local function compacted(rev)
  if rev < 1 then return false end
  local _, e = c:get("ac/k0", { revision = rev })
  return e == COMPACTED
end
-- the compacted revision: the lowest revision still readable (binary search)
local function compact_rev(hi)
  local lo = 1
  while lo < hi do
    local mid = (lo + hi) // 2
    if compacted(mid) then lo = mid + 1 else hi = mid end
  end
  return lo
end

local cur = 1
local function write_500()
  for i = 1, 500 do
    local r = c:put("ac/k" .. (i % 10), tostring(i))
    if r then cur = r.revision end
  end
end

local revs, moved_at = {}, {}
for k = 1, 5 do
  write_500()
  -- wait for the k-th tick of the compactor, polling the revision it should compact to
  local target = cur - 1000
  if target >= 2 then
    run_until(function() return compacted(target - 1) end, t0 + k * PERIOD + 20*s - now(), 1*s)
    moved_at[k] = now()
  else
    run(t0 + k * PERIOD + 20*s - now())
  end
  revs[k] = compact_rev(cur)
end
print("compacted revisions", table.concat(revs, " "))
expect(revs[1] == 1 and revs[2] <= 1, "nothing to compact while fewer than 1000 revisions exist",
       { revs[1], revs[2] })
for k = 3, 5 do
  expect(revs[k] == 500 * k - 999, "period " .. k .. ": compacted to current - retention",
         { got = revs[k], want = 500 * k - 999 })
end
expect(revs[4] - revs[3] == 500 and revs[5] - revs[4] == 500, "each period compacts 500 revisions",
       { revs[4] - revs[3], revs[5] - revs[4] })
for k = 4, 5 do
  local gap = moved_at[k] and moved_at[k - 1] and moved_at[k] - moved_at[k - 1]
  expect(gap and gap >= PERIOD - 2*s and gap <= PERIOD + 2*s, "compactions come 5 minutes apart",
         gap and gap // ms)
end
-- A new leader keeps its own compactor's phase: etcd runs the compactor from the
-- member's start and only pauses it while the member is not the leader. The leader
-- dies 40 s into the sixth period; its successor (started with the cluster, at 0)
-- compacts at the sixth tick, not 5 minutes after its election.
run_until(function() return now() >= t0 + 5 * PERIOD + 40*s end, PERIOD)
local old = leader()
kill(old)
expect(run_until(function() local l = leader(); return l ~= nil and l ~= old end, 10*s),
       "a new leader is elected", leader())
local elected = now()
write_500()
local target = cur - 1000
local moved = run_until(function() return compacted(target - 1) end, 6 * PERIOD + 20*s - now(), 1*s)
local tick = now()
print("new leader elected at", elected // ms, "ms; compacted at", tick // ms, "ms")
expect(moved and tick <= t0 + 6 * PERIOD + 2*s and tick < elected + PERIOD - 10*s,
       "the new leader compacts at the compactor's own 5-minute tick, not 5 minutes after its election",
       { elected_ms = elected // ms, compacted_ms = tick // ms })
restart(old)
heal_all()
run(1*s)
