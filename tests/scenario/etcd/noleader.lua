-- noleader.lua (etcd target): require_leader reaches etcd as the gRPC metadata
-- hasleader=true (the gateway forwards the Grpc-Metadata-hasleader header), so a
-- member cut off from its peers answers etcd's own "etcdserver: no leader" at once,
-- while the same put without it waits for a leader until the call times out. Pre-vote
-- is off, so the cut-off member campaigns: its Raft term (status().term, the highest
-- term its log named) rises while Status raftTerm (status().raft_term, etcd's s.Term():
-- the last applied entry's term) stays.
scenario {
  name = "etcd-noleader",
  cluster  = { nodes = 3, prevote = false },
  clients  = { count = 1, timeout_ms = 2000 },
  checks   = { "linearizability" },
}
run_until(function() return leader() ~= nil end, 10*s)
local f = leader() % 3 + 1 -- a follower
local t0 = now()
partition({ f }, others(f))
run(3*s) -- its election timeout (500 ms) passes many times: it has no leader
local sf = status(f)
expect(sf.term > sf.raft_term and #node_events{ node = f, kind = "campaign", since = t0 } >= 1,
       "its campaigns raise its Raft term, not Status raftTerm (the applied entries' term)",
       { term = sf.term, raft_term = sf.raft_term })
local c = client(1)
local g, err = c:get("k", { node = f, require_leader = true, timeout = 1500*ms })
expect(g == nil and tostring(err):find("etcdserver: no leader", 1, true) ~= nil,
       "a read with require_leader: etcd's no leader (retried until the deadline)", err)
local p, perr = c:put("k", "v", { node = f, require_leader = true, timeout = 1500*ms })
expect(p == nil and perr == "etcdserver: no leader", "a put with require_leader: no leader", perr)
local p2, perr2 = c:put("k", "w", { node = f, timeout = 1500*ms })
expect(p2 == nil and not tostring(perr2):find("no leader", 1, true),
       "a put without it waits for a leader until its deadline", perr2)
-- 7 s into the cut: etcd's peers redialled (stream read timeout 5 s), some on
-- connections their prober opened without X-Server-From; the cut holds on them too
run(1*s)
local st = status(f)
expect((st.leader_node or 0) == 0, "the cut-off member still has no leader (no peer connection leaks past the cut)",
       { at_ms = (now() - t0) // ms, leader = st.leader_node })
heal()
run_until(function() return leader() ~= nil end, 10*s)
