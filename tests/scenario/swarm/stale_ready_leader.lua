-- stale_ready_leader.lua: a member wins an election while it is paused; by the time its
-- winning ready (the new leader's first entry) is durable it has already stepped down
-- to a later term, in which another member leads. The online Raft safety checker must
-- be told "leader of the term it won", not "leader of the term it is in now": the run
-- must pass raft_safety. (Found by the swarm, chaos seeds 60 and 196: "two leaders in
-- term 7" and "leader of term 11 holds a different entry at committed index 72".)
scenario {
  name = "stale-ready-leader",
  cluster = { nodes = 5, prevote = false, check_quorum = false, election_ms = 1000,
              heartbeat_ms = 100 },
  clients = { count = 1 },
  workload = { rate = 0 },
  checks = { "raft_safety" },
}

expect(run_until(function() return leader() ~= nil end, 10*s), "a first leader")
local l = leader()
local x = others(l)[1]
local paused = false
-- x is paused right after it asked for votes: the votes wait at its door
on("term", function(ev)
  if ev.node == x and not paused and ev.reason == "campaign" then
    paused = true
    pause(x)
  end
end)
kill(l)
skew(x, 5.0)
expect(run_until(function() return paused end, 10*s), "x campaigns and is paused")
-- the three others elect one of them in a later term
expect(run_until(function() local n = leader(); return n ~= nil and n ~= x end, 20*s),
       "another member leads a later term", leader())
run(1*s)
skew(x, 1.0)
resume(x) -- x counts its votes (leader of the old term), then hears of the new one
run(2*s)
local won = 0
for _, e in ipairs(node_events{ node = x, kind = "leader" }) do won = won + 1 end
expect(won >= 1, "x became leader of the term it campaigned in", won)
