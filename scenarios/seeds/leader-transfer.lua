-- leader-transfer.lua: etcd's move-leader (Raft thesis §3.10). The leader stops accepting
-- proposals, brings the chosen member's log up to date, then tells it to campaign at
-- once (TimeoutNow, skipping pre-vote and the followers' leader lease); it wins the
-- next term and the old leader follows it. Done twice under client load, the second time
-- to a member whose disk is slow (so its log is behind when the transfer starts).
-- Asserted on the move_leader answers, on leader(), on node events (the target's
-- campaign and `leader` event at the next term, the old leader's step-down) and on
-- member status (terms, the leader each member follows), plus writes afterwards.
scenario {
  name = "leader-transfer",
  description = "move_leader: leadership moves to the chosen member",
  cluster  = { nodes = 3, election_ms = 1000, heartbeat_ms = 100 },
  clients  = { count = 3, balancer = "round_robin", timeout_ms = 2000 },
  workload = { rate = 100, keys = 16 },
  checks   = { "linearizability", "watch", "raft_safety", "converge" },
}

expect(run_until(function() return leader() ~= nil end, 10*s), "a leader is elected", leader())
run(1*s)

local function transfer(tag, target)
  local old = leader()
  local term = status(old).term
  local t0 = now()
  local ok, err = move_leader(target)
  expect(ok ~= nil, tag .. ": move_leader succeeds", err)
  expect(leader() == target, tag .. ": the chosen member leads", { leader = leader(), target = target })
  local won = node_events{ node = target, kind = "leader", since = t0 }
  expect(#won == 1 and won[1].term == term + 1, tag .. ": it won the next term",
         { events = #won, term = won[1] and won[1].term, old_term = term })
  local camp = node_events{ node = target, kind = "campaign", since = t0 }
  local pre = node_events{ node = target, kind = "prevote", since = t0 }
  expect(#camp == 1 and #pre == 0, tag .. ": it campaigned at once, without pre-vote",
         { campaigns = #camp, prevotes = #pre })
  local down = node_events{ node = old, kind = "step_down", since = t0 }
  expect(#down >= 1, tag .. ": the old leader stepped down", #down)
  run(300*ms)
  local following = 0
  for _, n in ipairs(nodes()) do
    if status(n).leader_node == target and status(n).term == term + 1 then following = following + 1 end
  end
  expect(following == 3, tag .. ": every member follows the new leader in the new term", following)
  local r = client(3):put("mv/" .. tag, "x")
  expect(r ~= nil, tag .. ": writes are acknowledged after the transfer", r)
end

transfer("first", others(leader())[1])
run(1*s)
local target = others(leader())[2]
failpoint("raft/before_save", { node = target, action = "delay", delay_ms = 200 })
run(1*s)
transfer("second (to a member with a slow disk)", target)
failpoint("raft/before_save", { node = target, action = "off" })
run(1*s)
