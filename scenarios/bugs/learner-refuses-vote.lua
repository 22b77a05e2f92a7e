-- learner-refuses-vote.lua (bug raft.learner_refuses_vote): a learner must answer vote
-- requests (etcd#10998). A promotion commits on the voters without waiting for the
-- learner, so the learner may still believe it is one after the cluster counts it as
-- a voter. Here a learner L joins a 3-member cluster {A, B, C}, catches up, and is
-- promoted while A's messages to it are held: {A, B, C, L} is in force on A, B and C,
-- and L still sees itself as a learner. Then the leader A dies. B and C need a third
-- vote among four voters, and only L can give it. Correctly L votes and one of B, C
-- becomes leader. With the bug L ignores vote requests, as etcd's raft did before that
-- fix, and no leader can be elected until A returns. Caught by the expect that a
-- leader is elected within five election timeouts after A died, and that writes go
-- through meanwhile.
scenario {
  name = "learner-refuses-vote",
  description = "a promoted learner that has not seen its promotion is asked to vote (bug: raft.learner_refuses_vote)",
  cluster  = { nodes = 3, election_ms = 1000, heartbeat_ms = 100 },
  clients  = { count = 2, balancer = "round_robin", timeout_ms = 2000 },
  workload = { rate = 0 },
  checks   = { "linearizability", "watch", "raft_safety", "converge" },
}

expect(run_until(function() return leader() ~= nil end, 10*s), "a leader is elected", leader())
local c = client(1)
for i = 1, 5 do c:put("lv/a" .. i, "v" .. i) end
run(5*s) -- etcd's strict reconfiguration check: every voter connected for 5 s
local A = leader()
local L, err = member_add { learner = true }
expect(L ~= nil, "the learner is added", err)
if not L then return end
expect(run_until(function() return status(L).last_index == status(A).last_index end, 10*s),
       "the learner catches up", { learner = status(L).last_index, leader = status(A).last_index })
hold(A, L) -- the promotion will not reach L
local ok, perr = member_promote(L)
expect(ok ~= nil, "the learner is promoted", perr)
run(200*ms)
expect(status(L).learner, "L has not seen its promotion yet", status(L).learner)
kill(A)
local t0 = now()
run_until(function() return leader() ~= nil end, 30*s)
local took = now() - t0
expect(leader() ~= nil and took < 5*s, "a leader is elected within five election timeouts after A died",
       { leader = leader(), took_ms = took // ms })
local w = c:put("lv/after", "x", { timeout = 5*s })
expect(w ~= nil, "a write goes through while A is down", now() - t0)
heal_all()
run(3*s)
