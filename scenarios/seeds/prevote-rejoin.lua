-- prevote-rejoin.lua: what pre-vote is for. A follower cut off from the others for many
-- election timeouts keeps timing out. With pre-vote (etcd >= 3.5's default) it first asks
-- whether it could win; nobody answers yes, so it never raises its term, and when it
-- rejoins the leader keeps its leadership and its term. Without pre-vote (etcd 3.4's
-- default; --pre-vote is a per-member flag, so the same member is restarted with it off)
-- every timeout starts a real election at a higher term; on rejoin that higher term
-- reaches the leader, which steps down, and a new election follows: the rejoin disrupts
-- the cluster. Both are shown in one run, on the same member.
-- Asserted on member status (the isolated member's term, the leader and its term before
-- and after), on node events (pre-votes vs campaigns while isolated, the leader's
-- step-down and its reason, leader events), under client load.
scenario {
  name = "prevote-rejoin",
  description = "an isolated follower rejoins: with pre-vote the leader keeps its term; without, it is disrupted",
  cluster  = { nodes = 3, election_ms = 1000, heartbeat_ms = 100, prevote = true },
  clients  = { count = 3, balancer = "round_robin", timeout_ms = 2000 },
  workload = { rate = 50, keys = 16 },
  checks   = { "linearizability", "watch", "raft_safety", "converge", "liveness" },
}

local ISOLATION = 10*s -- ten election timeouts
expect(run_until(function() return leader() ~= nil end, 10*s), "a leader is elected", leader())
run(1*s)

-- 1. pre-vote on
local l = leader()
local f = others(l)[1]
local term, f_term = status(l).term, status(f).term
local t0 = now()
isolate(f)
run(ISOLATION)
local pre = #node_events{ node = f, kind = "prevote", since = t0 }
local camp = #node_events{ node = f, kind = "campaign", since = t0 }
expect(pre >= 5 and camp == 0 and status(f).term == f_term,
       "pre-vote on: the isolated member keeps timing out but never raises its term",
       { prevotes = pre, campaigns = camp, term_before = f_term, term_now = status(f).term })
heal()
run(3*s)
expect(leader() == l and status(l).term == term, "pre-vote on: after the rejoin the leader keeps its leadership and term",
       { leader = leader(), term = status(leader() or l).term, before = { leader = l, term = term } })
local down = #node_events{ node = l, kind = "step_down", since = t0 }
local elected = #node_events{ kind = "leader", since = t0 }
expect(down == 0 and elected == 0, "pre-vote on: no step-down, no election", { step_downs = down, leaders = elected })
expect(status(f).leader_node == l and status(f).term == term, "pre-vote on: the member rejoins as a follower",
       status(f))

-- 2. the same member restarted with pre-vote off
kill(f)
restart(f, { prevote = false })
run_until(function() return status(f).leader_node == l end, 10*s)
run(1*s)
l = leader()
term = status(l).term
f_term = status(f).term
local t1 = now()
isolate(f)
run(ISOLATION)
camp = #node_events{ node = f, kind = "campaign", since = t1 }
expect(camp >= 5 and status(f).term >= f_term + 5,
       "pre-vote off: each timeout of the isolated member is a real election at a higher term",
       { campaigns = camp, term_before = f_term, term_now = status(f).term })
local f_high = status(f).term
heal()
-- the rejoined member, behind in the log, cannot win; its elections keep resetting the
-- others' timers until one of them wins a term above its own
run_until(function()
  local nl = leader(); return nl ~= nil and status(nl).term >= f_high end, 30*s)
local sd = node_events{ node = l, kind = "step_down", since = t1 + ISOLATION }
expect(#sd >= 1, "pre-vote off: the rejoin makes the leader step down", sd[1] and sd[1].detail)
local nl = leader()
expect(nl ~= nil and status(nl).term >= f_high and status(nl).term > term,
       "pre-vote off: a new election follows, at a term at least the isolated member's",
       { leader = nl, term = nl and status(nl).term, old_term = term, isolated_term = f_high })
local r = client(1):put("pv/after", "x", { node = nl or 1 })
expect(r ~= nil, "the cluster serves writes again", r)
