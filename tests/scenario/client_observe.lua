-- client_observe.lua: client:stats().endpoints and client:attempts() (issue 14 §3).
-- A pinned_blacklist client pinned to a member that is killed: its endpoint list shows
-- the dead member closed and unhealthy for the dial timeout, another pinned; its
-- attempts show the call that failed there with the transport's error and the retry
-- that went elsewhere; round_robin keeps no unhealthy list (nil).
scenario { name = "client-observe", cluster = { nodes = 3 },
           clients = { balancers = { "pinned_blacklist", "round_robin" }, timeout_ms = 3000 },
           checks = { "linearizability", "raft_safety" } }
expect(run_until(function() return leader() ~= nil end, 10*s), "a leader is elected")
local bl, rr = client(1), client(2)
bl:get("k")
rr:get("k")
local st = bl:stats()
expect(#st.endpoints == 3, "one entry per endpoint", #st.endpoints)
local pinned
for _, e in ipairs(st.endpoints) do
  expect(e.state == "ready" or e.state == "idle" or e.state == "connecting",
         "an endpoint's state is a name", e.state)
  expect(type(e.pinned) == "boolean" and e.unhealthy_until_ms ~= nil and e.in_flight == 0,
         "pinned is a boolean, the blacklist's wait a number, nothing in flight", e)
  if e.pinned then pinned = e.member end
end
expect(pinned == st.pinned_node and pinned ~= 0, "the pinned endpoint is the pinned member",
       { pinned = pinned, pinned_node = st.pinned_node })
for _, e in ipairs(rr:stats().endpoints) do
  expect(e.unhealthy_until_ms == nil and e.pinned == false,
         "round_robin keeps no unhealthy list and pins nothing", e)
end
if pinned == leader() then move_leader(others(pinned)[1]); run(2*s) end
-- a read goes out to the pinned member, which dies before it answers
local r, done
spawn(function() r = bl:get("k", { timeout = 3*s }); done = true end)
run_until(function() return bl:stats().endpoints[1].in_flight + bl:stats().endpoints[2].in_flight
                            + bl:stats().endpoints[3].in_flight > 0 end, 1*s, 1*us)
kill(pinned)
local t_kill = now()
run_until(function() return done end, 5*s)
expect(r ~= nil, "the read succeeds elsewhere", r)
st = bl:stats()
local dead
for _, e in ipairs(st.endpoints) do
  if e.member == pinned then dead = e end
end
expect(dead and dead.state == "closed" and not dead.pinned and
       dead.unhealthy_until_ms > t_kill // ms and dead.unhealthy_until_ms <= t_kill // ms + 5100,
       "the killed member: closed, unpinned, unhealthy for the dial timeout", dead)
local a = bl:attempts()
local last = a[#a]
expect(last.outcome == "ok" and last.call == "range" and last.member ~= pinned,
       "the last attempt succeeded on another member", last)
local failed
for _, x in ipairs(a) do
  if x.member == pinned and x.at >= t_kill - 1*s and x.outcome ~= "ok" then failed = x end
end
expect(failed and failed.outcome == "transport" and failed.error ~= nil and failed.call == "range",
       "the attempt lost with the member says so", failed)
expect(last.retry, "the read that succeeded was a retry", last)
expect(#bl:attempts(1) == 1 and bl:attempts(1)[1].at == last.at, "attempts(n): the last n", #a)
expect(a[1].at <= last.at, "oldest first")
restart(pinned)
run(2*s)
