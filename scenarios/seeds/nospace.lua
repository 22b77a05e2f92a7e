-- nospace.lua: etcd's backend quota. When a write would take the backend past
-- quota_backend_bytes the member raises the NOSPACE alarm for the whole cluster; from
-- then on Put, Txn with writes and LeaseGrant fail with "etcdserver: mvcc: database
-- space exceeded" on every member, while reads, read-only txns and deletes still work.
-- Compaction alone does not give the space back (the file does not shrink), nor does
-- defragmentation while the alarm is armed: writes resume only after compact + defrag
-- + alarm disarm. Asserted on the error texts, the values read back and the db file
-- sizes (copy_db) under a small workload, plus all four checkers.
scenario {
  name = "nospace",
  description = "quota exceeded: NOSPACE alarm, writes refused, reads served, recovery after compact + defrag + disarm",
  cluster  = { nodes = 3, election_ms = 1000, heartbeat_ms = 100, quota_bytes = 300000 },
  clients  = { count = 3, balancer = "round_robin", timeout_ms = 2000 },
  workload = { rate = 20, keys = 4, mix = { put = 2, get = 4, delete = 0, txn = 1, range = 1 } },
  checks   = { "linearizability", "watch", "raft_safety", "converge" },
}

local NOSPACE = "etcdserver: mvcc: database space exceeded"
run_until(function() return leader() ~= nil end, 10*s)
local c = client(1)
local big = string.rep("x", 4000)

-- fill the backend until the quota refuses a write
local err, value = nil, {}
for i = 1, 400 do
  local r, e = c:put("big/" .. (i % 8), big .. i)
  if r then value["big/" .. (i % 8)] = big .. i
  elseif e == NOSPACE then err = e break end
end
expect(err == NOSPACE, "a write past the quota fails with etcd's text", err)
run(500*ms)

-- the alarm is cluster-wide: every client, whichever member it reaches, is refused
local refused = 0
for i = 1, 3 do
  for j = 1, 3 do
    local r, e = client(i):put("small/" .. i, "y")
    if e == NOSPACE then refused = refused + 1 end
  end
end
expect(refused == 9, "every put on every member is refused while the alarm is armed", refused)
local t, te = c:txn { success = {{ put = { key = "small/t", value = "1" } }} }
expect(t == nil and te == NOSPACE, "a txn with a write is refused", te)
local lg, le = c:lease_grant(30)
expect(lg == nil and le == NOSPACE, "a lease grant is refused", le)

-- reads and deletes still work
local g = c:get("big/1")
expect(g and g.value == value["big/1"], "reads are served under the alarm: the last value written",
       g and #g.value)
local ro = c:txn { success = {{ get = { key = "big/1" } }} }
expect(ro ~= nil and ro.succeeded, "a read-only txn is served", ro)
local d = c:delete("big/", { prefix = true })
expect(d and d.deleted == 8, "deletes are served under the alarm", d and d.deleted)

-- compaction alone, then defrag while armed, do not lift the alarm
local before = copy_db(leader()):size()
local ok, cerr = compact(d.revision)
expect(ok, "compaction is allowed under the alarm", cerr)
local p = c:put("small/1", "y")
expect(p == nil, "still refused after compaction alone", p)
expect(copy_db(leader()):size() >= before, "compaction does not shrink the db file",
       { before = before, after = copy_db(leader()):size() })
for _, n in ipairs(nodes()) do defrag(n) end
local after = copy_db(leader()):size()
expect(after < before / 2, "defragmentation shrinks the db file", { before = before, after = after })
local p2, p2e = c:put("small/1", "y")
expect(p2 == nil and p2e == NOSPACE, "still refused until the alarm is disarmed", p2e)

-- disarm: writes resume on every member
local dis, derr = alarm_disarm()
expect(dis, "the alarm is disarmed", derr)
run(500*ms) -- every member applied the disarm (a lagging follower still refuses until then)
local okw = 0
for i = 1, 3 do
  for j = 1, 3 do
    if client(i):put("small/" .. i, "z" .. j) then okw = okw + 1 end
  end
end
expect(okw == 9, "writes resume after compact + defrag + disarm", okw)
local lg2 = c:lease_grant(30)
expect(lg2 ~= nil, "lease grants resume", lg2)
heal_all()
run(1*s)
