-- leader_event.lua: leader() and node_events{ kind = "leader" } agree. A member's Raft
-- core leads as soon as the last vote arrives; its "leader" node event is recorded once
-- the winning ready (the new term's first entry) is durable, an fsync later. leader()
-- reports a new leader only once that event is recorded, so a scenario that sees a new
-- leader always finds its event, at the same term. Polled every 100 us across eight
-- elections with a 5 ms fsync (the window the two used to disagree in). Must pass.
scenario {
  name = "leader-event",
  cluster  = { nodes = 3, election_ms = 1000, heartbeat_ms = 100, fsync_us = 5000 },
  clients  = { count = 1 },
  workload = { rate = 0 },
  checks   = { "raft_safety" },
}

local checked, bad = 0, {}
local function agree()
  local l = leader()
  if l == nil then return false end
  local term = status(l).term
  local evs = node_events{ kind = "leader", node = l }
  local last = evs[#evs]
  if not (last and last.term == term and last.to_state == "leader") then
    bad[#bad + 1] = { leader = l, term = term, event_term = last and last.term, at = now() }
  end
  checked = checked + 1
  return true
end

expect(run_until(agree, 10*s, 100*us), "a first leader", leader())
for round = 1, 8 do
  local old = leader()
  kill(old)
  local ok = run_until(function() local l = leader(); return l ~= nil and l ~= old and agree() end,
                       15*s, 100*us)
  expect(ok, "round " .. round .. ": a new leader", leader())
  restart(old)
  run(2*s)
end
expect(checked >= 9 and #bad == 0,
       "whenever leader() reports a leader, its leader event of that term is recorded",
       { checked = checked, disagreements = bad })
-- the event itself is typed: candidate -> leader at the term it won, its first index
for _, e in ipairs(node_events{ kind = "leader" }) do
  expect(e.from_state == "candidate" and e.to_state == "leader" and e.index ~= nil and e.index >= 1,
         "a leader event's typed fields", e)
end
