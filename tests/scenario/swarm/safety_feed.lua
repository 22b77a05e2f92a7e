-- safety_feed.lua: a follower whose log the new leader overwrites crashes right after
-- the overwriting entries are durable, before it goes on (raft/after_save). The online
-- Raft safety checker must know what is durable at that moment: it was told only after
-- the failpoint, so it kept the deposed leader's entries in its view of the member and,
-- once the member restarted with a shorter log, judged later appends against them (a
-- false "committed_lost", found by the swarm on chaos seed 503).
scenario {
  name = "safety-feed",
  cluster = { nodes = 3, election_ms = 1000, heartbeat_ms = 100 },
  clients = { count = 1 },
  workload = { rate = 0 },
  checks = { "raft_safety" },
}

expect(run_until(function() return leader() ~= nil end, 10*s), "a first leader")
local old = leader()
local c = client(1)
expect(c:put("k", "0", { node = old }), "a first write")
isolate(old)
-- writes only the isolated leader appends (they time out: unknown outcome)
for i = 1, 6 do
  spawn(function() c:put("x" .. i, "v", { node = old, timeout = 500*ms }) end)
end
run(200*ms)
expect(run_until(function() local l = leader(); return l ~= nil and l ~= old end, 10*s),
       "the others elect a new leader")
local new = leader()
expect(c:put("y", "1", { node = new }), "the new leader commits")
local armed = false
on("append", function(ev)
  if ev.node == old and not armed then
    armed = true
    failpoint("raft/after_save", { node = old, action = "crash", count = 1 })
  end
end)
heal()
expect(run_until(function() return armed end, 10*s), "the new leader overwrites the old log")
expect(run_until(function() return not status(old).alive end, 5*s), "it crashed after the save")
run(500*ms)
restart(old)
for i = 1, 10 do
  expect(c:put("z" .. i, "v", { node = new }), "writes after the restart")
end
expect(run_until(function() return status(old).applied >= status(new).commit end, 10*s),
       "the restarted member catches up")
