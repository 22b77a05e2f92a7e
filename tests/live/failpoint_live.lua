-- failpoint_live.lua (live target, issue 16): the node code's failpoints fire in our
-- member processes (env_uv), set over the member's control channel (DATA/failpoints and
-- SIGUSR2). raft/before_save delayed on both followers holds a write at least as long
-- as the delay (or past the client's timeout: saves queue up behind each other); a crash at raft/before_save ends a follower's process at its next
-- save; with the failpoint off it restarts and catches up. A disk failpoint has no site
-- in a member process and is refused.
scenario {
  name = "live-failpoint",
  description = "live target: raft/before_save delay and crash in member processes",
  cluster  = { nodes = 3, election_ms = 1000, heartbeat_ms = 100 },
  clients  = { count = 1, timeout_ms = 5000 },
  checks   = { "linearizability" },
}

expect(run_until(function() return leader() ~= nil end, 10*s), "a leader is elected", leader())
local l = leader()
local f1, f2 = others(l)[1], others(l)[2]
local c = client(1)
expect(c:put("fp/a", "0", { node = l }) ~= nil, "a put on a healthy cluster")
run(300*ms)
for _, n in ipairs({ f1, f2 }) do
  failpoint("raft/before_save", { node = n, action = "delay", delay_ms = 600 })
end
run(500*ms) -- the members take it at their next status poll
local t0 = now()
local r = c:put("fp/a", "1", { node = l })
local slow = now() - t0
expect(slow >= 500*ms, "a write waits for the followers' delayed saves",
       { ok = r ~= nil, ms = slow / ms })
for _, n in ipairs({ f1, f2 }) do failpoint("raft/before_save", { node = n, action = "off" }) end
run(500*ms)
t0 = now()
r = c:put("fp/a", "2", { node = l })
expect(r ~= nil and now() - t0 < 1000*ms, "writes are fast again with the failpoint off",
       { ok = r ~= nil, ms = (now() - t0) / ms })

failpoint("raft/before_save", { node = f1, action = "crash" })
run(500*ms)
c:put("fp/a", "3", { node = l })
expect(run_until(function() return not status(f1).alive end, 5*s),
       "a crash at raft/before_save ends the follower's process", status(f1))
failpoint("raft/before_save", { node = f1, action = "off" })
restart(f1)
expect(run_until(function()
  local st = status(f1)
  return st.alive and st.applied >= status(leader()).applied end, 10*s),
  "it restarts and catches up with the failpoint off", status(f1))
-- A disk failpoint (disk/fsync_eio) has no site in a member process: refused, and like
-- every refusal on a real target it stops the scenario at its line even under pcall
-- (tests/scenario/live/refuse.sh checks it).
