-- election-fresh.lua: a brand-new 3-member cluster elects its first leader. Every member
-- starts as a follower with a randomised election timeout in [election, 2*election); the
-- first to time out asks for (pre-)votes and wins a majority, so exactly one leader
-- exists within two election timeouts and the others follow it.
-- Asserted on node events (the first `leader` event, one leader per term, the campaign
-- that preceded it) and on every member's status (term, the leader it follows), under
-- client load that starts at once.
scenario {
  name = "election-fresh",
  description = "a new 3-node cluster elects exactly one leader within two election timeouts",
  cluster  = { nodes = 3, election_ms = 1000, heartbeat_ms = 100 },
  clients  = { count = 2, balancer = "round_robin", timeout_ms = 2000 },
  workload = { rate = 50, keys = 8 },
  checks   = { "linearizability", "watch", "raft_safety", "converge" },
}

local ELECTION = 1000*ms
local t0 = now()
run(2 * ELECTION)
local leaders = node_events{ kind = "leader" }
expect(#leaders >= 1 and leaders[1].at - t0 < 2 * ELECTION,
       "a leader is elected within two election timeouts",
       leaders[1] and { node = leaders[1].node, at_ms = (leaders[1].at - t0) // ms })
local per_term = {}
for _, e in ipairs(leaders) do
  per_term[e.term] = (per_term[e.term] or 0) + 1
end
local dup = 0
for _, n in sorted_pairs(per_term) do if n > 1 then dup = dup + 1 end end
expect(dup == 0, "at most one leader per term", per_term)

local l = leader()
local camp = node_events{ kind = "campaign", node = l }
expect(#camp >= 1 and camp[#camp].term == status(l).term,
       "the leader campaigned for the term it leads", { campaigns = #camp, term = status(l).term })
local n_leading, following = 0, 0
for _, n in ipairs(nodes()) do
  local st = status(n)
  if st.leader then n_leading = n_leading + 1 end
  if st.leader_node == l and st.term == status(l).term then following = following + 1 end
end
expect(n_leading == 1 and following == 3, "exactly one leader; every member follows it in its term",
       { leaders = n_leading, following = following, leader = l })

-- the cluster serves writes through the leader
local r, err = client(1):put("fresh/k", "v")
expect(r ~= nil, "a write is acknowledged by the new cluster", err)
run(1*s)
