-- progress-before-events.lua (bug mvcc.progress_before_events): a watch progress
-- notification at revision R promises that every event up to R was delivered; etcd
-- sends one only to a watcher that is synced and has nothing queued. With the bug
-- (etcd#15220) the notification is put ahead of events still waiting to be sent, so a
-- client hears "you are at R" and afterwards receives events at or below R. The watch
-- streams are slowed down (failpoint watch/before_send, action delay) around the
-- 10-minute progress-notify tick while writes continue, so events are queued when the
-- periodic notification is due. The watch checker's "bookmarkable" guarantee catches
-- the overtaking notification; every watch must also stay complete and ordered.
scenario {
  name = "progress-before-events",
  description = "slow watch streams at the 10-minute progress tick; no notification overtakes events (bug: mvcc.progress_before_events)",
  cluster  = { nodes = 3, election_ms = 1000, heartbeat_ms = 100 },
  clients  = { count = 3, balancer = "round_robin", timeout_ms = 2000 },
  workload = { rate = 4, keys = 4, watchers = 2 },
  checks   = { "linearizability", "watch", "raft_safety", "converge" },
}

run_until(function() return leader() ~= nil end, 10*s)
local got = 0
for i = 1, 3 do
  client(i):watch("key", { prefix = true, progress_notify = true, callback = function(ev) got = got + 1 end })
end
-- etcd's progress notify interval is 10 minutes from the member's start
run(597*s - now())
failpoint("watch/before_send", { action = "delay", delay_ms = 400 })
local written = 0
spawn(function()
  local c = client(1)
  while now() < 603*s do
    if c:put("key" .. (written % 4), "w" .. written) then written = written + 1 end
    sleep(20*ms)
  end
end)
run(604*s - now())
failpoint("watch/before_send", { action = "off" })
run(3*s)
expect(written > 100, "writes went on around the progress tick", written)
expect(got >= 3 * written, "every watch received the writes around the tick", { events = got, writes = written })
heal_all()
run(1*s)
