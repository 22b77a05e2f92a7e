-- events_live.lua (live target, issue 16): the members' event files carry the typed
-- fields of node events (peer, index, from_state, to_state, reason, pre), so that
-- node_events() reads them on live as on the simulator: the first election's leader,
-- vote_granted and term events. (seeds/leader-down.lua reads vote_rejected's peer and
-- reason the same way.)
scenario {
  name = "live-events",
  description = "live target: typed fields of the members' node events",
  cluster  = { nodes = 3, election_ms = 1000, heartbeat_ms = 100 },
  clients  = { count = 1 },
  checks   = { "linearizability" },
}

expect(run_until(function() return leader() ~= nil end, 10*s), "a leader is elected", leader())
run(300*ms)
local l = leader()
local won = 0
for _, e in ipairs(node_events{ kind = "leader", node = l }) do
  if e.from_state == "candidate" and e.to_state == "leader" and e.index ~= nil then won = won + 1 end
end
expect(won >= 1, "the leader event says candidate -> leader with its first index",
       node_events{ kind = "leader", node = l })
local votes = 0
for _, e in ipairs(node_events{ kind = "vote_granted" }) do
  if e.peer ~= nil and e.pre ~= nil then votes = votes + 1 end
end
expect(votes >= 1, "vote_granted names the candidate (peer) and the kind (pre)",
       node_events{ kind = "vote_granted" })

local why = {}
for _, e in ipairs(node_events{ kind = "term" }) do
  if e.reason ~= nil then why[e.reason] = (why[e.reason] or 0) + 1 end
end
expect(why.campaign ~= nil and why.higher_term ~= nil,
       "term events say why: the candidate's campaign, the others' higher term", why)
