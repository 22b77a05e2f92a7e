-- learner-votes.lua (bug raft.learner_votes): a learner receives the log but has no
-- vote: a candidate needs the votes of a quorum of the voters of its configuration.
-- Counting a non-voter's vote is a known class of Raft bugs (a removed member's vote
-- still counted, tikv/raft-rs#221; learners requesting and casting votes,
-- redpanda#8495). Here a learner joins a 3-voter cluster and catches up; then one
-- follower and the learner are cut off together from the other two voters (which keep
-- their leader and go on committing). Correctly the cut-off follower can never win an
-- election: it asks only the two voters it cannot reach. With the bug it asks the
-- learner too, gets its vote and leads a term with one voter's vote — a leader without
-- a quorum, next to the real one. Caught by raft_safety (learner_vote: the election's
-- votes are checked against the leader's configuration), and once the partition heals
-- the minority leader's log clashes with what the majority committed.
scenario {
  name = "learner-votes",
  description = "a follower cut off with a learner: no election without a voter quorum (bug: raft.learner_votes)",
  cluster  = { nodes = 3, election_ms = 1000, heartbeat_ms = 100 },
  clients  = { count = 2, balancer = "round_robin", timeout_ms = 2000 },
  workload = { rate = 40, keys = 8 },
  checks   = { "linearizability", "watch", "raft_safety", "converge" },
}

expect(run_until(function() return leader() ~= nil end, 10*s), "a leader is elected", leader())
-- (etcd adds a member only once the peers have been connected for 5 s)
run(6*s)
local learner, err = member_add{ learner = true }
expect(learner ~= nil, "the learner is added", err)
if not learner then return end
local caught = run_until(function()
  local l = leader(); return l ~= nil and status(learner).applied >= status(l).commit end, 10*s)
expect(caught, "the learner catches up", status(learner))
local l = leader()
local follower = others({ l, learner })[1]
local peer = others({ follower, learner })
-- the follower and the learner on one side, the leader and the other voter on the other
partition({ follower, learner }, peer)
run(8*s)
local minority_leader = status(follower).leader and status(follower).term or nil
print("leader", l, "follower", follower, "learner", learner, "minority leader term", minority_leader)
heal()
run(4*s)
heal_all()
run(2*s)
expect(leader() ~= nil, "a leader after the heal", leader())
