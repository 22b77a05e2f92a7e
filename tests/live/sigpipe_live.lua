-- sigpipe_live.lua (live target, issue 16): a member process survives writing to a
-- connection its peer closed. A follower is paused while a client sends it serializable
-- reads (answered at once, without Raft); the client's keepalive gives up on it and
-- closes the connection; once resumed, the member reads the queued requests before the
-- end of the connection and answers each on it: the second write fails (EPIPE).
-- uv_spawn starts members with SIGPIPE at its default, which ended the process
-- (balancer-pause lost its member 1 that way, signal 13): `faultline member` now
-- ignores it.
scenario {
  name = "live-sigpipe",
  description = "live target: a member answering on a closed connection stays up",
  cluster  = { nodes = 3, election_ms = 1000, heartbeat_ms = 100 },
  clients  = { count = 1, balancer = "round_robin", timeout_ms = 2000 },
  checks   = { "linearizability" },
}

expect(run_until(function() return leader() ~= nil end, 10*s), "a leader is elected", leader())
run(500*ms)
local f = others(leader())[1]
local c = client(1)
local r = c:put("sp/0", "x", { node = f })
expect(r ~= nil, "a put through the follower", r)
pause(f)
local errs = {}
for i = 1, 16 do
  spawn(function()
    local ok, err = c:get("sp/0", { node = f, serializable = true, timeout = 1 * s })
    if not ok then errs[#errs + 1] = tostring(err) end
  end)
  sleep(500 * ms)
end
run(1 * s)
expect(#errs >= 1, "the paused member answers none of them", errs)
local t_resume = now()
resume(f)
run(3 * s)
local st = status(f)
local restarts = #node_events{ node = f, kind = "restart", since = t_resume }
expect(st.alive and restarts == 0, "the member is still up after answering on closed connections",
       { alive = st.alive, restarts = restarts })
local g = c:get("sp/0", { node = f, serializable = true })
expect(g ~= nil and g.value == "x", "and serves a read", g)
