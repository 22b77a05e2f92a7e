-- fresh_live.lua (live target, issue 16): what the scenario reads right after a call
-- is the members' state after it, not a poll up to 100 ms old. After move_leader
-- answers: the events the members wrote before the answer are in node_events()
-- already (the new leader's `leader` event, the old leader's step-down), leader() is
-- the target and status() of every member names it, in the new term. status(n).term
-- is the member's Raft term (as on sim), not the applied entry's term that etcd's
-- Status RPC reports: an isolated member campaigning without pre-vote raises it.
scenario {
  name = "live-fresh",
  description = "live target: status(), leader() and node events fresh after a call",
  cluster  = { nodes = 3, election_ms = 500, heartbeat_ms = 50, prevote = false },
  clients  = { count = 1 },
  checks   = { "linearizability" },
}

expect(run_until(function() return leader() ~= nil end, 10*s), "a leader is elected", leader())
run(500*ms)
for round = 1, 3 do
  local old = leader()
  local target = others(old)[1]
  local term = status(old).term
  local t0 = now()
  local ok, err = move_leader(target)
  expect(ok ~= nil, "move_leader succeeds", err)
  -- node events first: nothing has asked the members anything since the answer
  local won = node_events{ node = target, kind = "leader", since = t0 }
  local down = node_events{ node = old, kind = "step_down", since = t0 }
  expect(#won == 1 and won[1].term == term + 1 and #down >= 1,
         "round " .. round .. ": the target's leader event and the old leader's step-down are in",
         { won = #won, won_term = won[1] and won[1].term, term = term, step_downs = #down })
  expect(leader() == target, "round " .. round .. ": leader() is the target at once",
         { leader = leader(), target = target })
  local st = status(target)
  expect(st.leader and st.term == term + 1, "round " .. round .. ": status(target) leads in the next term",
         { leader = st.leader, term = st.term, old_term = term })
  run(300*ms)
end

local f = others(leader())[1]
local before = status(f).term
isolate(f)
run(3*s)
local camp = #node_events{ node = f, kind = "campaign" }
local after = status(f).term
expect(camp >= 2 and after >= before + 2,
       "an isolated member's status term rises with its campaigns (its Raft term)",
       { campaigns = camp, before = before, after = after })
heal()
run(2*s)
