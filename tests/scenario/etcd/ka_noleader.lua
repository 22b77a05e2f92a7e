-- ka_noleader.lua (etcd target): a require_leader lease keep-alive on a member without
-- a leader. The gateway answers that keep-alive call as a stream ends: HTTP 503 with
-- {"error": {"grpc_code": 14, "message": "etcdserver: no leader"}}; the bridge passes
-- etcd's text and gRPC code (Unavailable) on, so the client counts it as "no leader"
-- and moves its keep-alive to another member, where the lease stays alive (before,
-- the bridge answered "HTTP error" with code Unknown and the keep-alive ended).
scenario {
  name = "etcd-ka-noleader",
  cluster  = { nodes = 3, election_ms = 1000, heartbeat_ms = 100 },
  clients  = { count = 1, balancer = "pinned_blacklist", timeout_ms = 2000 },
  checks   = { "linearizability" },
}
expect(run_until(function() return leader() ~= nil end, 10*s), "a leader is elected")
local c = client(1)
local g, err = c:lease_grant(10)
expect(g ~= nil, "a lease is granted", err)
c:put("held", "v", { lease = g.id })
c:lease_keepalive(g.id, { require_leader = true })
run(1*s)
local f = c:stats().last_stream_node
if leader() == f then
  for _ = 1, 25 do if move_leader(others(f)[1]) then break end run(200*ms) end
end
expect(run_until(function() local l = leader(); return l ~= nil and l ~= f end, 10*s),
       "the keep-alive's member is a follower", { f = f, leader = leader() })
isolate(f)
expect(run_until(function() return c:stats().streams_no_leader >= 1 end, 8*s),
       "the keep-alive on the cut-off member ends with 'etcdserver: no leader'", c:stats())
local a0 = c:stats().keepalive_acks
expect(run_until(function() return c:stats().keepalive_acks > a0 end, 8*s),
       "the keep-alive is answered again on another member", c:stats())
local st = c:stats()
expect(st.keepalive_ended == 0 and st.last_stream_node ~= f,
       "the keep-alive did not end; it moved", { ended = st.keepalive_ended, node = st.last_stream_node })
run(4*s)
local r = c:get("held", { node = others(f)[1] })
expect(r ~= nil and r.count == 1, "the lease's key is still there", r)
heal()
