-- on_events.lua: on(kind, fn) hears every typed node event kind, with the fields the
-- reference promises, and a fault applied from a handler lands right after the event:
-- a member killed on its "append" event has not made those entries durable (its fsync
-- was in flight), a member killed on "vote_granted" is dead before the candidate hears
-- the vote. The --json summary records the rules ("on") and each firing's faults under
-- ordinal rule * 1000000 + k (checked by swarm_check.py).
scenario {
  name = "on-events",
  cluster = { nodes = 3, election_ms = 1000, heartbeat_ms = 100, snapshot_count = 20,
              snapshot_catchup = 5 },
  clients = { count = 1 },
  workload = { rate = 50, keys = 4 },
  checks = { "linearizability", "raft_safety", "converge" },
}

local kinds = { "vote_granted", "term", "leader", "append", "persisted", "snapshot_sent",
                "snapshot_install", "snapshot_applied", "conf_change", "conf_applied",
                "compact", "defrag", "snapshot" }
local seen, bad = {}, {}
for _, k in ipairs(kinds) do
  seen[k] = 0
  on(k, function(ev)
    seen[k] = seen[k] + 1
    if ev.kind ~= k or type(ev.node) ~= "number" or type(ev.at) ~= "number" or
       type(ev.term) ~= "number" or type(ev.index) ~= "number" or type(ev.pre) ~= "boolean" or
       type(ev.leader) ~= "boolean" or type(ev.detail) ~= "string" then
      bad[#bad + 1] = k
    end
  end)
end

expect(run_until(function() return leader() ~= nil end, 10*s), "a first leader")
run(1*s)

-- a follower killed on its append event: the entries were written, not yet synced
local victim = others(leader())[1]
local killed_at_append
on("append", function(ev)
  if ev.node == victim and not killed_at_append then
    killed_at_append = { index = ev.index, durable = status(ev.node).last_index }
    kill(ev.node)
  end
end)
expect(run_until(function() return killed_at_append ~= nil end, 5*s), "the follower appended")
expect(not status(victim).alive, "killed right at its append event")
run(3*s) -- the others go on and compact their logs: the victim needs a snapshot
restart(victim)
expect(status(victim).last_index < killed_at_append.index,
       "the entries of the append it died at were not durable",
       { appended = killed_at_append.index, recovered = status(victim).last_index })
run(2*s)

-- a member killed right after it granted a real vote
local voter
on("vote_granted", function(ev)
  if not ev.pre and not voter then
    voter = ev.node
    kill(ev.node)
  end
end)
local old = leader()
kill(old)
expect(run_until(function() return voter ~= nil end, 10*s), "a vote was granted", voter)
expect(not status(voter).alive, "the voter died at once")
restart(old)
restart(voter)
expect(run_until(function() return leader() ~= nil end, 10*s), "a leader again")

-- compaction, defragmentation, a learner added and promoted
local c = client(1)
local r = c:put("on/x", "1")
compact(r.revision)
defrag(leader())
run(6*s) -- the strict reconfiguration check: every voter connected for 5 s
local n = member_add { learner = true }
expect(n ~= nil, "a learner joins", n)
run(2*s)
if n then member_promote(n) end
run(2*s)

for _, k in ipairs(kinds) do
  expect(seen[k] > 0, "on(\"" .. k .. "\") heard its events", seen[k])
end
expect(#bad == 0, "every event has the documented fields", bad)
