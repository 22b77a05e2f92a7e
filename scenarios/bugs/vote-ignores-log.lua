-- vote-ignores-log.lua (bug raft.vote_ignores_log): Raft's election restriction. A
-- member grants its vote only to a candidate whose log is at least as up to date as its
-- own (higher last term, or the same last term and at least its last index); that is
-- what keeps every committed entry in every future leader's log. Here one follower
-- misses writes while down; then the leader dies and the stale follower comes back with
-- fast timers, so it asks for votes first. Correctly the up-to-date follower refuses it
-- and wins itself. With the bug it grants the vote: the stale member becomes leader and
-- overwrites committed entries on the others. The round repeats (up to 6 times, with the
-- old leader back each time) until the stale member's request met the other follower
-- outside its leader lease. Caught by raft_safety (committed entries lost), by the
-- expect that the stale member never leads, and by the read-back of acknowledged writes.
scenario {
  name = "vote-ignores-log",
  description = "a stale follower asks for votes first (bug: raft.vote_ignores_log grants them)",
  cluster  = { nodes = 3, election_ms = 1000, heartbeat_ms = 100 },
  clients  = { count = 3, balancer = "round_robin", timeout_ms = 2000 },
  workload = { rate = 100, keys = 8 },
  checks   = { "linearizability", "watch", "raft_safety", "converge" },
}

local acked, stop_writer = {}, false
spawn(function()
  local c, i = client(3), 0
  while not stop_writer do
    i = i + 1
    if c:put("vl/" .. i, "v" .. i) then acked[#acked + 1] = i end
    sleep(50*ms)
  end
end)

expect(run_until(function() return leader() ~= nil end, 10*s), "a first leader is elected", leader())
run(1*s)
local stale_led = 0
for round = 1, 6 do
  local old = leader()
  if not old then break end
  local old_term = status(old).term
  local stale, fresh = others(old)[1], others(old)[2]
  kill(stale)
  run(1500*ms)
  local t0 = now()
  kill(old)
  restart(stale)
  skew(stale, 10.0)
  local elected = run_until(function()
    local l = leader(); return l ~= nil and l ~= old and status(l).term > old_term end, 15*s)
  expect(elected, "round " .. round .. ": a new leader is elected", leader())
  if leader() == stale then stale_led = stale_led + 1 end
  local answered = 0
  for _, e in ipairs(node_events{ since = t0, node = fresh }) do
    if e.peer == stale and (e.kind == "vote_granted" or e.reason == "log_not_up_to_date") then
      answered = answered + 1
    end
  end
  skew(stale, 1.0)
  restart(old)
  run(3*s)
  if answered > 0 or stale_led > 0 then break end
end
expect(stale_led == 0, "a member with a stale log never becomes leader", stale_led)
stop_writer = true
heal_all()
run(2*s)
local c, lost = client(1), 0
for _, i in ipairs(acked) do
  local r = c:get("vl/" .. i)
  if not (r and r.value == "v" .. i) then lost = lost + 1 end
end
expect(lost == 0, "no acknowledged write is lost", { acked = #acked, lost = lost })
