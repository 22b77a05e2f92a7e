-- typed_events.lua: node events carry typed fields (peer, index, from_state, to_state,
-- reason, pre) beside their unchanged detail text, in node_events{} and in on()
-- callbacks, so no scenario reads facts out of the text. Must pass.
scenario {
  name = "typed-events",
  cluster  = { nodes = 3, election_ms = 1000, heartbeat_ms = 100, snapshot_count = 50 },
  clients  = { count = 1 },
  workload = { rate = 20, keys = 4 },
  checks   = { "raft_safety" },
}

local on_terms = {}
on("term", function(ev) on_terms[#on_terms + 1] = ev.reason or "none" end)

expect(run_until(function() return leader() ~= nil end, 10*s), "a leader", leader())
run(6*s)
local l = leader()
local function count(list, pred)
  local n = 0
  for _, e in ipairs(list) do if pred(e) then n = n + 1 end end
  return n
end

local pv = node_events{ kind = "prevote" }
expect(#pv >= 1 and count(pv, function(e) return e.to_state == "pre_candidate" and e.from_state == "follower" end) == #pv,
       "prevote: follower -> pre_candidate", pv[1])
local camp = node_events{ kind = "campaign" }
expect(#camp >= 1 and count(camp, function(e) return e.to_state == "candidate" and e.from_state == "pre_candidate" end) == #camp,
       "campaign: pre_candidate -> candidate (pre-vote on)", camp[1])
local terms = node_events{ kind = "term" }
expect(count(terms, function(e) return e.reason == "campaign" end) == #camp,
       "term: one 'campaign' term change per campaign", { terms = #terms, campaigns = #camp })
expect(count(terms, function(e) return e.reason == "campaign" or e.reason == "higher_term" end) == #terms,
       "term: every term change says why", terms)
local votes = node_events{ kind = "vote_granted" }
expect(count(votes, function(e) return e.pre == true end) >= 1 and count(votes, function(e) return e.pre == false end) >= 1
       and count(votes, function(e) return e.peer ~= nil and e.peer ~= e.node end) == #votes,
       "vote_granted: the candidate as peer, pre-votes and votes told apart", votes)
expect(node_events{ kind = "leader" }[1].detail:find("^elected leader at term") ~= nil,
       "detail texts are unchanged", node_events{ kind = "leader" }[1].detail)
local snaps = node_events{ kind = "snapshot", node = l }
expect(#snaps >= 1 and snaps[1].index ~= nil and snaps[1].index >= 50, "snapshot: its index", snaps[1])
expect(#on_terms >= 1 and on_terms[1] == "campaign", "on('term'): ev.reason", on_terms)

-- membership: the conf_change entries name the member and the change
local t0 = now()
local n4, err = member_add{ learner = true }
expect(n4 ~= nil, "a learner is added", err)
run(1*s)
local cc = node_events{ kind = "conf_change", since = t0 }
expect(#cc >= 3 and count(cc, function(e) return e.reason == "add_learner" and e.peer == n4 and e.index ~= nil end) >= 3,
       "conf_change: add_learner of the new member at its index, on every member", cc)
local ok, rerr = member_remove(n4)
expect(ok, "the learner is removed", rerr)
run(1*s)
expect(count(node_events{ kind = "conf_change", since = t0 }, function(e) return e.reason == "remove" and e.peer == n4 end) >= 3,
       "conf_change: remove", node_events{ kind = "conf_change", since = t0 })

-- the leader cut off: check-quorum steps it down
local t1 = now()
isolate(l)
run(3*s)
local sd = node_events{ kind = "step_down", node = l, since = t1 }
expect(#sd >= 1 and sd[1].reason == "check_quorum" and sd[1].from_state == "leader" and sd[1].to_state == "follower",
       "step_down: leader -> follower, check_quorum", sd[1])
heal()
run(3*s)
local rej = node_events{ kind = "vote_rejected" }
for _, e in ipairs(rej) do
  expect(e.reason ~= nil and e.peer ~= nil and type(e.pre) == "boolean", "vote_rejected: reason, peer, pre", e)
end
