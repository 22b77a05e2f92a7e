-- keepalive.lua (etcd target): keepalive by periodic health calls. A member restarted
-- alone (its two peers down) cannot publish itself, so etcd never serves its clients;
-- its bridge then leaves pings unanswered (the member fails its Status polls), as an
-- HTTP/2 ping to a gRPC server that does not serve would be, and a pinned client's
-- keepalive gives up on it. While every member serves, pings are answered.
scenario {
  name = "etcd-keepalive",
  cluster  = { nodes = 3 },
  clients  = { count = 1, balancer = "pinned_blacklist", timeout_ms = 1000 },
  checks   = { },
}
run_until(function() return leader() ~= nil end, 10*s)
local c = client(1)
c:put("k", "v")
local p = c:stats().pinned_node
c:watch("k") -- a stream in flight: the client pings its connection every 2 s
run(2500*ms)
local s0 = c:stats()
expect(s0.pings > 0 and s0.pings_failed == 0, "pings to a serving member are answered",
       { pings = s0.pings, failed = s0.pings_failed })
for _, n in ipairs(others(p)) do kill(n) end
kill(p)
restart(p)
-- calls to it hang (it does not serve): the client pings within 2 s, and the ping is
-- not answered for its 6 s timeout
for _ = 1, 5 do c:get("k", { node = p, timeout = 1800*ms }) end
run(1500*ms) -- (the connection is opened again after the restart, then pinged)
local s1 = c:stats()
expect(s1.pings_failed > 0, "pings to a member that does not serve go unanswered",
       { pinned = p, pings = s1.pings, failed = s1.pings_failed })
