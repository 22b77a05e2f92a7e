-- ctl_crash.lua: control calls and disk callbacks when a member dies in the middle.
-- (1) A defragmentation whose member crashes at server/defrag_before_copy must answer
-- the control call ("etcdserver: server stopped"): it never answered, and the caller
-- waited forever (the swarm's quota lane leaked the call: chaos seeds 31 and 59 under
-- LeakSanitizer). (2) A member killed while the fsync of the snapshot file a defrag
-- wrote is in flight: the fsync's callback never runs, and the memory it was handed
-- leaked (chaos seed 16 under LeakSanitizer); run this under the sanitizer build to see
-- it.
scenario {
  name = "ctl-crash",
  cluster = { nodes = 3, election_ms = 1000, heartbeat_ms = 100, fsync_us = 50000 },
  clients = { count = 1 },
  workload = { rate = 0 },
  checks = { "raft_safety", "converge" },
}

expect(run_until(function() return leader() ~= nil end, 10*s), "a first leader")
client(1):put("a", "1")
local n = others(leader())[1]
failpoint("server/defrag_before_copy", { node = n, action = "crash", count = 1 })
local ok, err = defrag(n)
expect(ok == nil and err ~= nil and err:find("stopped", 1, true) ~= nil,
       "a defrag that crashed its member answers", err)
expect(not status(n).alive, "the member crashed")
restart(n)
run(2*s)

local m = others(leader())[1]
defrag(m) -- writes the snapshot file; its fsync takes 50 ms
kill(m)
run(1*s)
restart(m)
run(2*s)
expect(status(m).alive, "the member restarted")
