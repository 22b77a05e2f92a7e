-- status_alarm.lua: config(n) reflects the knobs a scenario set, and status(n).alarms
-- lists the NOSPACE alarm (raised by the member whose write crossed the quota) on every
-- member until it is disarmed. Must pass.
scenario {
  name = "status-alarm",
  cluster  = { nodes = 3, election_ms = 2000, heartbeat_ms = 200, snapshot_count = 50,
               snapshot_catchup = 20, quota_bytes = 200000, auto_compaction_mode = "periodic",
               auto_compaction_retention = 3600000, prevote = false },
  clients  = { count = 1 },
  workload = { rate = 0 },
  checks   = { "raft_safety" },
}

local cf = config(1)
expect(cf.snapshot_count == 50 and cf.snapshot_catchup_entries == 20 and cf.quota_backend_bytes == 200000
       and cf.auto_compaction_mode == "periodic" and cf.auto_compaction_retention == 3600000
       and cf.election_ms == 2000 and cf.heartbeat_ms == 200 and cf.request_timeout_ms == 9000
       and cf.prevote == false, "config(n): the scenario's knobs", cf)

expect(run_until(function() return leader() ~= nil end, 20*s), "a leader", leader())
local c = client(1)
local err
for i = 1, 200 do
  local r, e = c:put("big/" .. (i % 8), string.rep("x", 4000) .. i)
  if not r and e == "etcdserver: mvcc: database space exceeded" then err = e break end
end
expect(err ~= nil, "the quota is exceeded", err)
run(500*ms)
for _, n in ipairs(nodes()) do
  local a = status(n).alarms
  expect(#a == 1 and a[1].alarm == "NOSPACE" and type(a[1].member_id) == "string" and #a[1].member_id == 16,
         "status(" .. n .. ").alarms: the NOSPACE alarm", a)
  expect(status(n).quota_backend_bytes == 200000, "status: the quota in force", status(n).quota_backend_bytes)
end
local ok, e = alarm_disarm()
expect(ok, "the alarm is disarmed", e)
run(500*ms)
for _, n in ipairs(nodes()) do
  expect(#status(n).alarms == 0, "status(" .. n .. ").alarms: empty once disarmed", status(n).alarms)
end
