-- churn_figure8.lua: the swarm's leader-churn lane alone on three members (test of
-- RUN_LANE_CHURN). The leader crashes with its newest entries durable on it alone (or
-- is cut off, taking proposals in its minority), the next one or two members to
-- campaign crash at their next save (a winner's first entry never sent), and they come
-- back in a random order: Raft's Figure 8 when the old leader returns first and leads
-- again. With raft.commit_old_term, seed 21 commits an entry of an earlier term while a
-- member with a later-term entry at that index can still be elected (raft_safety
-- commit_electable); with the switch off it passes.
local world = swarm { nodes = { 3 }, lanes = { "churn" } }

scenario {
  name = "churn-figure8",
  description = "leader churn on three members (swarm lane churn)",
  checks = { "linearizability", "raft_safety" },
}

expect(run_until(function() return leader() ~= nil end, 10*s), "a leader is elected", leader())
run(1*s)
nemesis { duration = 12*s }
run(12*s)
heal_all()
local E = world.cluster.election_ms * ms
expect(run_until(function() return leader() ~= nil end, 10*s + 10*E), "a leader after the churn", leader())
run(2*s)
