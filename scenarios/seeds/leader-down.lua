-- leader-down.lua: Raft's election restriction (§5.4.1) when a leader dies. After some
-- writes the leader is killed while one follower (the "stale" one) was down and so holds
-- a shorter log; it comes back with its timers running fast, so it times out first. Its
-- (pre-)vote request is refused by the up-to-date follower because its log is less up to
-- date (last term, then last index); the up-to-date follower wins the election; the old
-- leader returns as a follower and catches up; no acknowledged write is lost. With
-- check-quorum the up-to-date follower ignores every request for one election timeout
-- after it last heard the leader and only then answers on the log, so a round in which
-- its own timeout came first shows nothing: the scenario repeats the round (up to 5) until
-- the stale follower's request was answered on the log.
-- Asserted on node events (vote_rejected with reason, leader), member status (terms, log
-- indexes, the leader each member follows) and the values read back, under client load.
scenario {
  name = "leader-down",
  description = "the leader dies: a staler follower is refused for its log, the up-to-date one wins, the old leader rejoins as follower",
  cluster  = { nodes = 3, election_ms = 1000, heartbeat_ms = 100 },
  clients  = { count = 3, balancer = "round_robin", timeout_ms = 2000 },
  workload = { rate = 100, keys = 8 },
  checks   = { "linearizability", "watch", "raft_safety", "converge", "liveness" },
}

-- our own writes: every acknowledged one must be readable at the end
local acked, stop_writer = {}, false
spawn(function()
  local c, i = client(3), 0
  while not stop_writer do
    i = i + 1
    local k, v = "ld/" .. i, "v" .. i
    if c:put(k, v) then acked[#acked + 1] = { k, v } end
    sleep(50*ms)
  end
end)

-- a refusal is a vote_rejected event naming the candidate (e.peer) and why (e.reason)

expect(run_until(function() return leader() ~= nil end, 10*s), "a first leader is elected", leader())
run(1*s)
local shown = false
for round = 1, 5 do
  local old = leader()
  local old_term = status(old).term
  local stale, fresh = others(old)[1], others(old)[2]
  kill(stale)                -- misses the next writes
  run(1500*ms)
  local t0 = now()
  kill(old)                  -- the leader dies
  restart(stale)
  skew(stale, 10.0)          -- the stale follower's timers run fast: it times out first
  local elected = run_until(function()
    local l = leader(); return l ~= nil and l ~= old and status(l).term > old_term end, 15*s)
  expect(elected, "round " .. round .. ": a new leader is elected after the leader died", leader())
  local new = leader()
  local refused = 0
  for _, e in ipairs(node_events{ since = t0, kind = "vote_rejected", node = fresh }) do
    if e.peer == stale and e.reason == "log_not_up_to_date" then refused = refused + 1 end
  end
  -- the stale follower never wins: whoever leads has the longer log
  expect(new ~= stale, "round " .. round .. ": the stale follower does not become leader",
         { leader = new, stale = stale })
  skew(stale, 1.0)
  restart(old)
  local back = run_until(function()
    local st, l = status(old), leader()
    return l ~= nil and st.alive and st.leader_node == l and st.applied >= status(l).commit - 5
  end, 10*s)
  expect(back, "round " .. round .. ": the old leader returns as a follower of the new leader and catches up",
         { old = old, leader = leader(), old_status = status(old) })
  local led_again = #node_events{ since = t0, kind = "leader", node = old }
  expect(led_again == 0, "round " .. round .. ": the old leader did not lead again", led_again)
  if refused > 0 then
    local ev = node_events{ since = t0, kind = "leader" }
    expect(ev[1] and ev[1].node == fresh,
           "the up-to-date follower won the election the stale one could not",
           { winner = ev[1] and ev[1].node, fresh = fresh, stale = stale, refusals = refused })
    shown = true
    break
  end
  run(1*s)
end
expect(shown, "a stale follower's vote request was refused for its log (in one of 5 rounds)")

stop_writer = true
run(1*s)
local c, lost = client(1), {}
for _, kv in ipairs(acked) do
  local r = c:get(kv[1])
  if not (r and r.value == kv[2]) then lost[#lost + 1] = kv[1] end
end
expect(#acked > 20 and #lost == 0, "no acknowledged write is lost", { acked = #acked, lost = lost })
