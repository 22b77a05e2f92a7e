-- alarm.lua (etcd target): alarm_disarm lifts etcd's NOSPACE alarm. etcd deactivates
-- an alarm per (member, alarm): the target lists the alarms first and deactivates each,
-- as `etcdctl alarm disarm` does, so writes resume after compact + defrag + disarm.
scenario {
  name = "etcd-alarm",
  cluster  = { nodes = 3, quota_bytes = 300000 },
  clients  = { count = 1, timeout_ms = 2000 },
  checks   = { "converge" },
}
local NOSPACE = "etcdserver: mvcc: database space exceeded"
run_until(function() return leader() ~= nil end, 10*s)
local c = client(1)
local big = string.rep("x", 4000)
local err
for i = 1, 400 do
  local r, e = c:put("big/" .. (i % 8), big .. i)
  if not r and e == NOSPACE then err = e break end
end
expect(err == NOSPACE, "the quota refuses a write", err)
local d = c:delete("big/", { prefix = true })
expect(d ~= nil, "deletes are served under the alarm", d)
expect(compact(d.revision), "compaction")
for _, n in ipairs(nodes()) do defrag(n) end
local p, pe = c:put("small", "y")
expect(p == nil and pe == NOSPACE, "still refused while armed", pe)
local ok, derr = alarm_disarm()
expect(ok, "the alarm is disarmed", derr)
run(500*ms)
-- etcd applies a compaction in batches, after answering it: a defragmentation that ran
-- before the last batch left a file still over the quota, and the next write arms the
-- alarm again (1 run in 6 here). An operator then defragments and disarms again, as the
-- chaos scenario's NOSPACE recovery does: up to five rounds.
local w = 0
for round = 1, 5 do
  w = 0
  for i = 1, 3 do if c:put("small", "z" .. i, { node = i }) then w = w + 1 end end
  if w == 3 then break end
  run(1*s)
  for _, n in ipairs(nodes()) do defrag(n) end
  alarm_disarm()
  run(500*ms)
end
expect(w == 3, "writes resume on every member after the disarm", w)
