-- api_observe.lua: status(n), node_events{} and restart(n, { prevote }) (the observation
-- calls Raft scenarios assert on). Must pass.
scenario { name = "api-observe", cluster = { nodes = 3 }, workload = { rate = 20 } }

expect(run_until(function() return leader() ~= nil end, 10*s), "a leader", leader())
run(500*ms)
local l = leader()
local st = status(l)
expect(st.node == l and st.alive and st.leader and not st.learner and not st.removed and not st.paused,
       "status: the leader's flags", st)
expect(type(st.member_id) == "string" and #st.member_id == 16 and st.leader_id == st.member_id
       and #st.cluster_id == 16 and status(others(l)[1]).cluster_id == st.cluster_id,
       "status: member_id is 16 hex digits; a leader follows itself", st)
expect(st.term >= 2 and st.commit >= 3 and st.applied <= st.commit and st.last_index >= st.commit
       and st.revision >= 1 and st.leader_node == l and st.leader_contact ~= nil, "status: Raft figures", st)
local ids = {}
for _, n in ipairs(nodes()) do
  local s2 = status(n)
  expect(s2.leader_node == l and s2.term == st.term, "status: every member follows the leader", s2)
  expect(ids[s2.member_id] == nil, "status: member IDs are distinct", s2.member_id)
  ids[s2.member_id] = true
end

local all = node_events{}
local leaders = node_events{ kind = "leader" }
expect(#all > #leaders and #leaders >= 1 and leaders[#leaders].node == l and leaders[#leaders].term == st.term,
       "node_events: kind filter; the last leader event is the leader's", leaders[#leaders])
local prev = 0
for _, e in ipairs(all) do
  expect(e.at >= prev, "node_events: in time order", e)
  prev = e.at
end
local granted = node_events{ kind = "vote_granted" }
expect(#granted >= 1 and granted[1].peer ~= nil and granted[1].peer >= 1 and granted[1].peer <= 3,
       "node_events: the typed peer of a vote", granted[1])
local mine = node_events{ node = l }
for _, e in ipairs(mine) do expect(e.node == l, "node_events: node filter", e) end
expect(#node_events{ since = now() + 1 } == 0, "node_events: since filter", 0)

local f = others(l)[1]
kill(f)
expect(not status(f).alive and status(f).leader_contact == nil, "status: a killed member", status(f))
local t = now()
restart(f, { prevote = false })
expect(#node_events{ node = f, kind = "restart", since = t } == 1, "node_events: the restart", 1)
run_until(function() return status(f).leader_node == l end, 5*s)
run(500*ms)
local applied_term = status(f).raft_term
expect(applied_term == status(f).term, "status: raft_term is the applied entries' term", status(f))
isolate(f)
run(4*s)
-- etcd's Maintenance Status raftTerm is s.Term(), the term of the last applied entry:
-- an isolated member's campaigns raise its Raft term (term) but not raft_term.
expect(status(f).term > applied_term and status(f).raft_term == applied_term,
       "status: campaigns raise term, not raft_term (the last applied entry's term)", status(f))
expect(#node_events{ node = f, kind = "campaign", since = t } >= 1 and
       #node_events{ node = f, kind = "prevote", since = t } == 0,
       "restart{prevote=false}: the member campaigns without pre-vote", status(f).term)
heal_all()
run(3*s)
